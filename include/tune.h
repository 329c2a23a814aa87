/* tune.h - the pure part of self-tuning: which workloads a goal measures, one score per
 * measured run, the paired test and the steadiness check the search decides with (tune/search.c),
 * the report, the protocol choice and the client advice. No I/O. */
#ifndef NASTUNE_TUNE_H
#define NASTUNE_TUNE_H

#include <stdbool.h>
#include <stddef.h>

#include "agentctl.h"
#include "bench.h"
#include "model.h"

/* The false-positive budget of one tune (nastune-tune(7)), and the smallest effect a verdict
 * names: a change must gain at least TUNE_MIN_GAIN, a loss costs at least as much, and two
 * values within it of each other are the same. */
#define TUNE_ALPHA 0.05
#define TUNE_MIN_GAIN 0.03
/* The pairs at which a comparison looks (tune_looks[]): it stops at the first look that
 * decides, and its error budget is split evenly over the looks. */
#define TUNE_NLOOKS 6
extern const unsigned tune_looks[TUNE_NLOOKS];
/* The default most pairs a comparison measures (--repeat N sets it; at least 8). */
#define TUNE_PAIRS 400

/* Marks in wl[BENCH_NWORKLOADS] the workloads goal g measures; returns the knob workload mask
 * (WL_*) for matching knobs. */
unsigned tune_goal_workloads(enum tune_goal g, bool *wl);

/* One score per measured run: the geometric mean, over the results rs->v[from..] with a
 * "higher is better" unit (MB/s, files/s, fps, ops/s), of run i's value; the metadata
 * workload's times per operation (us) count as their rates. Each workload of a target and
 * client weighs the same: its metrics share its weight. Runs are aligned by index;
 * n is the smallest run count. *scores is malloc'd (caller frees). Returns 0, or -ENOENT when
 * no result has such a unit. */
int tune_scores(const struct bench_results *rs, size_t from, double **scores, size_t *n);
/* The part of those scores that wlmask's workloads (WL_* bits) make: each other workload's
 * share held at 1, so a knob that moves only those workloads moves it as much as the whole
 * score, without the others' noise. The whole score when none of them was measured. */
int tune_scores_part(const struct bench_results *rs, size_t from, unsigned wlmask, double **scores,
		     size_t *n);

/* ---- the one comparison every decision makes ----
 * A candidate and the incumbent measured in alternation (A B B A, one run each), pair by pair:
 * the pairs' log-ratios d = log(candidate / incumbent), their Hodges-Lehmann estimate (the
 * median of the Walsh averages) and its distribution-free interval from the signed-rank test.
 * A drift between pairs cancels within each pair; an outlier pair moves the estimate little. */
enum tune_verdict {
	TUNE_UNDECIDED,	  /* the interval spans more than one verdict */
	TUNE_BETTER,	  /* lower bound above 0 and the estimate at least +TUNE_MIN_GAIN */
	TUNE_WORSE,	  /* upper bound below 0 and the estimate at most -TUNE_MIN_GAIN */
	TUNE_SAME,	  /* the "same" interval within +-TUNE_MIN_GAIN */
	TUNE_BOUNDED,	  /* no effect beyond +-delta (the interval's reach, at most
			   * TUNE_BOUND_MAX): neither better nor worse */
	TUNE_NOT_REACHED, /* no run measured it */
};

/* A screened candidate's interval reaching no further than this is "no effect beyond
 * +-delta"; wider, "undecided" with the runs that would bound it to TUNE_BOUND_GOAL. */
#define TUNE_BOUND_MAX 0.10
#define TUNE_BOUND_GOAL 0.05

struct tune_effect {
	enum tune_verdict verdict;
	double est;	  /* candidate / incumbent - 1 */
	double lo, hi;	  /* the interval at the tune's level (ratios - 1; +-INFINITY: too few) */
	size_t n;	  /* pairs */
	size_t more;	  /* undecided: about how many more pairs would decide; SIZE_MAX: unknown */
	double delta;	  /* the interval's reach, max(|lo|, |hi|) (screens; 0: not set) */
	size_t runs;	  /* the runs it rests on (screens: every run of its screen) */
	size_t more_runs; /* undecided in a screen: runs that would bound it to +-5% */
	double more_s;	  /* ... and their seconds */
};

/* log(cand / inc), with both clamped above 0. */
double tune_log_ratio(double inc, double cand);

/* The effect of the log-ratios d[0..n): the interval's bounds each at one-sided level alpha
 * (better, worse), and "same" judged on the wider interval at alpha_same. */
void tune_effect_of(const double *d, size_t n, double alpha, double alpha_same,
		    struct tune_effect *out);

/* "undecided", "better", "worse", "same", "no effect beyond", "not reached". */
const char *tune_verdict_name(enum tune_verdict v);

/* The median of v[0..n) (n > 0). */
double tune_median(const double *v, size_t n);

struct json_t;
/* A stored tune document (what `tune --json` prints) as text / one self-contained HTML page
 * with an SVG chart (score before and after with intervals), the knob decisions, the results
 * with their bottleneck and the client advice. Caller frees; NULL with err when doc is not a
 * finished tune. */
char *tune_report_text(const struct json_t *doc, char *err, size_t errlen);
char *tune_report_html(const struct json_t *doc, char *err, size_t errlen);

/* ---- the clients: which protocol each should use, and what it should mount ----
 * Typed in and out: the agents' facts as agentctl read them off the wire; tune/doc.c writes
 * the results into the tune document. */

/* The agents' facts the choice and the advice go by (struct agent_factset's, not owned). */
struct tune_agents {
	const struct agent_facts *v;
	size_t n;
};

/* A share as the protocol choice sees it: the enabled protocols it is served over
 * (PROTO_*) and whether it is a Time Machine destination. */
struct tune_share {
	const char *name;
	unsigned protocols;
	bool time_machine;
};

/* The model's shares as above (*out malloc'd, caller frees); returns how many. */
size_t tune_shares_of(const struct model *m, struct tune_share **out);

/* One protocol measured from one client: the geometric mean of its MB/s medians, like for
 * like, and as measured when an unflushed figure replaced a flushed one. */
struct tune_score {
	char *protocol;
	double score, flushed;
	bool replaced;
};

struct tune_share_choice {
	char *share;
	const char *protocol;
	char why[256];
};

struct tune_choice {
	char *client, *os; /* os: the agent's, "?" when unknown */
	char cls[64];	   /* "macOS 27+", "macOS (Darwin 24)", "Linux", ... */
	const char *protocol;
	char why[512];
	struct tune_score *scores; /* by protocol, in the order first measured */
	size_t nscores;
	bool unflushed; /* writes compared unflushed (some score replaced) */
	struct tune_share_choice *shares;
	size_t nshares;
};

struct tune_choices {
	struct tune_choice *v;
	size_t n;
};

/* Which protocol each client should use: from client results (each labelled with its
 * client) and the agents' facts (may be NULL), the fastest protocol by the goal's score that
 * the client can use (never AFP for macOS 27 and later, whose AFP client is gone, nor for
 * anything but macOS). shares (may be NULL) gives a choice per share among the protocols it
 * offers: Time Machine shares are SMB for macOS; a protocol not measured from the client is
 * chosen only when the share has no measured one, and says so. Like with like: where a
 * client's write metric was measured "unflushed" over one protocol (SMB: libsmbclient cannot
 * flush) and "flushed" over another (NFS COMMIT), the flushed one counts with its unflushed
 * median and its flushed score stays beside. Fills out (tune_choices_clear frees it). */
void tune_protocol_choice(const struct bench_results *results, const struct tune_agents *agents,
			  const struct tune_share *shares, size_t nshares,
			  struct tune_choices *out);
void tune_choices_clear(struct tune_choices *c);

struct tune_offer {
	const char *protocol, *versions;
	char how[512];
	char **shares;
	size_t nshares;
	double measured_mbs; /* < 0: not measured from this client */
};

struct tune_refusal {
	const char *protocol;
	char why[256];
};

/* A knob in force: its value and where the value comes from ("tuned", "pinned",
 * "configured", "Samba's default"). */
struct tune_knob_use {
	const char *name, *from;
	char *value;
};

struct tune_client_advice {
	char *client, *os; /* "?" when unknown */
	char *address;	   /* NULL when unknown */
	char *advice;	   /* one line */
	const char *use;   /* the protocol to use; NULL: none */
	struct tune_offer offered[3];
	size_t noffered;
	struct tune_refusal refused[3];
	size_t nrefused;
	struct tune_knob_use knobs[3];
	size_t nknobs;
	bool placeholder; /* no agents: only client ("all") and advice */
};

struct tune_advices {
	struct tune_client_advice *v;
	size_t n;
};

/* Advice for each agent's client: only what this NAS serves to that client. NFS when
 * enabled and a share is exported to the client (its nfs.clients admits the address, or the
 * host name as a wildcard; netgroups are not checked), with the versions served
 * (protocols.nfs.versions narrowed by the nfs.versions knob) and rsize/wsize from
 * MaxRead/MaxWrite; SMB with the signing, encryption and multichannel in force (knob, else
 * configuration, else Samba's default); AFP only to macOS before 27. choice (may be NULL)
 * gives the figures measured from each client; "use" is the fastest measured among those
 * offered, else the OS's own. Without agents (NULL or none), one placeholder entry for "all"
 * saying client results are missing. Fills out (tune_advices_clear frees it). */
void tune_advice(const struct model *m, const struct tune_agents *agents,
		 const struct tune_choices *choice, struct tune_advices *out);
void tune_advices_clear(struct tune_advices *a);
/* Small work's client-side advice appended to each client's (out, from tune_advice): for each
 * protocol it is offered, the attribute and directory caches of its OS's client (NFS
 * actimeo and nocto, cifs actimeo and cache=, macOS nsmb.conf dir_cache_max and
 * dir_cache_min), each after the figure from rs that supports it: a second pass of stats or
 * listings against the first, measured from that client over that protocol. Nothing where
 * no such figure was measured. */
void tune_advice_small_work(struct tune_advices *out, const struct bench_results *rs);

/* The smallest MTU the agents use themselves towards the NAS, from their facts (path_mtu,
 * else mtu): the NIC's MTU auto is never raised above it, whatever slack a probe finds
 * (veth and many NICs receive a few bytes over their MTU). from (may be NULL) gets the
 * agent's host name. Returns 0 when no agent reports one. */
int tune_mtu_ceiling(const struct tune_agents *agents, char *from, size_t fromlen);

#endif
