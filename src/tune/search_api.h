/* tune/search_api.h - the tuner's search as its callers see it (search.c runs it, doc.c
 * writes its result as JSON): the starting point, the MTU step, the CPU tier (encryption,
 * then signing in its context) compared one at a time with the incumbent, then one folded
 * two-level orthogonal screen per protocol and per network path over every other knob, its
 * apparent gains confirmed on fresh runs (the proposal against it without each), and the
 * chosen configuration paired with the start at the end (the gate), all within a time budget.
 * It reaches the world only through struct tuner_ops, so unit tests drive it with a simulated
 * machine (tests/unit/test_tuner.c); tune/machine.c gives it the real one. */
#ifndef NASTUNE_TUNE_SEARCH_API_H
#define NASTUNE_TUNE_SEARCH_API_H

#include <stdbool.h>
#include <stddef.h>

#include "bench.h"
#include "knobs.h"
#include "model.h"
#include "tune.h"

struct json_t;
struct tuner_result;

/* In a measure call's protocol mask: measure through the clients (the agents) instead of over
 * loopback. */
#define TUNER_CLIENTS (1u << 3)
/* Candidates of one knob measured side by side at most. */
#define TUNER_MAX_CANDS 8

/* One candidate's verdict. */
struct tuner_verdict {
	char value[64]; /* the value tried ("9000" for the MTU) */
	struct tune_effect e;
};

/* One knob's decision, as the tune document reports it. */
struct tuner_decision {
	const struct knob *k;
	char *before, *after; /* values; NULL: the daemon's default */
	bool applied, tried;
	enum tune_verdict verdict; /* the knob's: better (applied), worse (every candidate
				    * worse), same, or undecided */
	char reason[512];
	struct tune_effect e;	/* the applied value's effect, else the most telling one */
	bool by_clients;	/* decided on the clients' measurements, not loopback */
	char design[192];	/* the screen that measured it ("SMB screen: 12-run array, folded,
				 * 3 replicates"), or "" (compared one at a time) */
	char confirmed[224];	/* the confirmation that decided it, or "" */
	unsigned part;		/* the workloads (WL_* bits) its screen fitted it on, and so its
				 * confirmation measures; 0: the whole score */
	double rest_b, rest_se; /* with part: the screen's estimate of its gain's effect on the
				 * rest of the score (log) and its standard error (0: none) */
	/* Measured better but not applied: the value changes what clients see and the
	 * configuration does not consent (knob_consent_given). What it would change for
	 * them (knob_client_change), and the value; NULL and "" otherwise. */
	const char *withheld;
	char withheld_value[64];
	struct tuner_verdict cand[TUNER_MAX_CANDS];
	size_t ncand;
};

struct tuner_ops {
	void *arg;
	/* Installs m's knob values as a trial. 0, or -errno with one sentence in err. */
	int (*install)(void *arg, const struct model *m, char *err, size_t errlen);
	/* Measures the configuration installed last: `warmup` runs made and discarded, then
	 * `runs` runs of the goal's workloads on the targets of protos (PROTO_* mask; with
	 * TUNER_CLIENTS, through the clients), one score per run into scores[0..runs) (higher is
	 * better); with keep, the results are appended to it. Each call is a fresh start (a new
	 * connection). 0, or -errno (-EINTR: stopped). */
	int (*measure)(void *arg, unsigned protos, unsigned runs, unsigned warmup, double *scores,
		       struct bench_results *keep, char *err, size_t errlen);
	/* Seconds on a monotonic clock. */
	double (*clock)(void *arg);
	/* One line of progress for the log; NULL: none. */
	void (*progress)(void *arg, const char *line);
	/* Whether to stop now (a signal); NULL: never. */
	bool (*stopped)(void *arg);
	/* Called with the result so far after every decision (resume after an interruption). */
	void (*save)(void *arg, const struct tuner_result *r);
	/* Measures the clients at the configuration in force (the starting one); NULL: none. */
	void (*clients)(void *arg);
	/* The MTU step's probe: the NIC's MTU in force (*cur) and the largest MTU every peer
	 * receives with don't-fragment set, proven by probes of the full size (*next; *cur when
	 * there is none larger, with why). The MTU in force is left as it was. 0, or -errno with
	 * why. NULL: no MTU step (no clients cross the NIC). */
	int (*mtu_probe)(void *arg, int *cur, int *next, char *why, size_t whylen);
	/* Sets the NIC's MTU. 0, or -errno with err. */
	int (*mtu_set)(void *arg, int mtu, char *err, size_t errlen);
	/* Whether k = v can be measured with the targets at hand (false: why in why, e.g. a
	 * version the loopback target does not mount); NULL: always. */
	bool (*measurable)(void *arg, const struct knob *k, const char *v, char *why,
			   size_t whylen);
};

struct tuner_opts {
	unsigned protos;     /* PROTO_* with a target to measure */
	unsigned wlmask;     /* the goal's WL_* workloads (tune_goal_workloads) */
	const char *goal;    /* its name, for reasons */
	unsigned pairs;	     /* the most pairs a comparison measures (>= 8) */
	double budget_s;     /* the whole tune, start to the after-score */
	const bool *sel;     /* KNOB_COUNT flags (--knobs), or NULL: every knob */
	bool exhaustive;     /* every combination of the selected knobs instead (validation) */
	bool clients_after;  /* reserve time for measuring the clients again at the end */
	bool clients_decide; /* knobs on the network path are measured through the clients */
	bool clients_none;   /* clients were asked for and none answered (--clients auto) */
	bool sysctl_inert;   /* the sysctl file never reaches the kernel (service_sysctl_live) */
	/* Decisions of an interrupted tune of the same configuration, KNOB_COUNT of them by
	 * knob id (k NULL: none), or NULL. Kept as they were; their measurements are not
	 * reused. */
	const struct tuner_kept *resume;
	double alpha; /* the false-positive budget shared by every change (0: TUNE_ALPHA) */
};

/* The plan: the candidates the false-positive budget is shared by, the levels, the looks. */
struct tuner_plan {
	size_t candidates;
	double alpha, alpha_look, alpha_same, alpha_cost, min_gain;
	double alpha_confirm; /* the confirmations' share (0: nothing screened) */
	/* the first look's levels (better, worse) and its pairs (0: every look at one level) */
	double look_first, cost_first;
	unsigned look_first_n, cost_first_n;
	unsigned looks[TUNE_NLOOKS + 1], nlooks;
};

/* One configuration's scores, one a run (higher is better; tune_scores). n 0: none. */
struct tuner_score {
	double *v;
	size_t n;
};

/* One combination of --exhaustive's grid: each knob's value (NULL: the default), its runs. */
struct tuner_grid_entry {
	struct tuner_score score;
	const struct knob **k;
	char **value;
	size_t nk;
};

/* A decision as it was when made: what an interrupted tune resumes from. */
struct tuner_kept {
	const struct knob *k;
	char *after; /* NULL: the default */
	bool applied, tried;
	enum tune_verdict verdict;
	char *reason;
};

struct tuner_result {
	struct tuner_decision dec[KNOB_COUNT];
	struct bench_results start;  /* the starting configuration, measured first */
	struct bench_results before; /* the final pairing: the starting configuration ... */
	struct bench_results after;  /* ... and the chosen one (start again when unchanged) */
	bool changed;		     /* some knob's value changed */
	bool clients_after;	     /* time is left to measure the clients again */

	/* What the tune document reports, in the order the search reaches it. */
	bool planned;
	struct tuner_plan plan;
	bool started;			/* the starting configuration was measured */
	struct tuner_score start_score; /* its scores */
	struct tuner_grid_entry *grid;	/* --exhaustive: every combination measured */
	size_t ngrid;
	bool has_grid;
	bool paired;			 /* the after-score was reached: */
	unsigned after_protos;		 /* the protocols it measured (PROTO_*) */
	unsigned unchanged_protos;	 /* those no change touched */
	size_t after_pairs;		 /* its pairs (0: none) */
	struct tune_effect improvement;	 /* the chosen over the start, with after_pairs */
	struct tuner_score before_score; /* the after-score's sides, n 0: none */
	struct tuner_score after_score;
	struct tuner_kept kept[KNOB_COUNT]; /* the decisions in the order made */
	size_t nkept;
	const struct knob *untried[KNOB_COUNT]; /* not tried: no time for a round */
	size_t nuntried;
	bool done;	/* the search returned */
	double tuner_s; /* seconds it took */
};

/* Runs the tune on m (its knob values are the starting configuration; on return they are the
 * chosen ones, network.mtu fixed to the MTU the step raised). Returns 0, -EINTR when
 * ops->stopped said so, or -errno with err (the measurement of the starting point or of the
 * after-score failed). r is filled in every case; release it with tuner_result_release. */
int tuner_run(struct model *m, const struct tuner_opts *o, const struct tuner_ops *ops,
	      struct tuner_result *r, char *err, size_t errlen);
void tuner_result_release(struct tuner_result *r);

/* ---- the tune document (tune/doc.c): the JSON edge ---- */

/* Writes r into doc (an object): "plan", "before", "after", "improvement", "grid",
 * "after_protocols", "unchanged_protocols", "after_pairs", "improvement_interval",
 * "improvement_verdict", "decided", "not_tried_budget", "knobs", "tuner_s", each once the
 * search reached it. A key doc holds keeps its place, so writing the result again as the
 * search goes on (ops->save) orders the keys as the search reached them. */
void tuner_result_json(const struct tuner_result *r, struct json_t *doc);

/* The "decided" object of a stored document into out[KNOB_COUNT] by knob id (unknown names
 * and entries that are not objects are skipped). Release with tuner_resume_release. */
void tuner_resume_from_json(const struct json_t *decided, struct tuner_kept *out);
void tuner_resume_release(struct tuner_kept *kept);

/* The document's "protocol_choice": [{"client", "os", "class", "protocol", "why", "scores":
 * {proto: score}, "shares": [{"share", "protocol", "why"}], "writes" ("unflushed" or "as
 * measured"), "scores_flushed"?: {proto: score}}]. */
struct json_t *tune_choices_json(const struct tune_choices *c);

/* The document's "advice": [{"client", "os", "address"?, "advice", "use"?, "protocols":
 * [{"protocol", "versions", "how", "shares", "measured_mbs"?}], "not_offered": [{"protocol",
 * "why"}], "knobs": {name: {"value", "from"}}}], or [{"client": "all", "advice"}] without
 * agents. */
struct json_t *tune_advices_json(const struct tune_advices *a);

/* Sets a knob's value in m (a copy; NULL: unset) with its source. */
void tuner_set_knob(struct model *m, enum knob_id id, const char *value, enum knob_src src);

#endif
