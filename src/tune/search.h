/* tune/search.h - private to the tuner's search (the files of tune/): its state, the comparison's
 * structs, and what its files share. Not a public header: search_api.h is the search's API. */
#ifndef NASTUNE_TUNE_SEARCH_H
#define NASTUNE_TUNE_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "search_api.h"

#define NMASK 16 /* PROTO_* masks (SMB 1, NFS 2, AFP 4) and TUNER_CLIENTS */
#define ALL_PROTOS (PROTO_SMB | PROTO_NFS | PROTO_AFP)
#define MAX_GRID 64

struct snap {
	char *v[KNOB_COUNT];
	enum knob_src src[KNOB_COUNT];
};

struct tstate {
	struct model *m;
	const struct tuner_opts *o;
	const struct tuner_ops *ops;
	struct tuner_result *r;
	double t0;
	/* What measuring costs, learned as the tune goes, each as an average and the last: a run
	 * on a protos mask (a measure call's time a run, its install not counted), and a switch
	 * by what it changed (PROTO_* bits, TUNER_CLIENTS for the host's knobs): a reload of
	 * smbd alone costs a tenth of a switch that restarts Ganesha and afpd too. */
	double run_cost[NMASK], run_last[NMASK];
	double sw_cost[NMASK], sw_last[NMASK];
	unsigned dirty;		 /* what the model's changes since the last install touch */
	unsigned gen, installed; /* the model's generation, and the one installed */
	size_t family;		 /* the candidates the false-positive budget is shared by */
	unsigned looks[TUNE_NLOOKS + 1], nlooks;
	double alpha_look, alpha_same;
	double alpha_conf; /* the confirmations' share, split among the gains they confirm */
	double alpha_cost; /* "worse": each comparison's own level, its looks sharing it */
	/* The first look able to reach half a budget spends that half (a large effect is
	 * decided there); alpha_look and alpha_cost are the later looks' shares. */
	double look_first, cost_first;
	unsigned look_first_n, cost_first_n; /* its pairs (0: one level for every look) */
	unsigned changed_protos;	     /* the protocols the changes made so far touch */
	double client_pass;		     /* seconds the clients' pass at the start took */
	uint64_t rng; /* the pools' orders (fixed seed: a tune is reproducible) */
	char err[512];
};

/* One comparison: the incumbent (side 0) and up to TUNER_MAX_CANDS candidates (sides 1..nc)
 * measured in rounds, one run a measure call: incumbent, candidates, then the same backwards,
 * so each candidate's run and the incumbent's it pairs with swap order from round to round
 * and a steady drift cancels. put() puts a side in force. */
struct cand {
	double *d; /* the pairs' log-ratios */
	double *r; /* with cmp.part: the pairs' log-ratios of the rest of the score */
	size_t n;
	unsigned look; /* the next look (index into tstate.looks) */
	struct tune_effect e;
	bool done;
	bool futile; /* stopped as cmp.futile_n says: e is the interval at the "same" level */
};

struct cmp {
	void (*put)(struct tstate *s, struct cmp *c, size_t side);
	const struct knob *k;		      /* a knob's values, or NULL */
	const char *val[1 + TUNER_MAX_CANDS]; /* a knob's: [0] the incumbent (owned) */
	enum knob_src src0;
	int mtu[1 + TUNER_MAX_CANDS];  /* the MTU step's */
	const struct snap *snaps[2];   /* the after-score's: start, chosen */
	struct bench_results *keep[2]; /* the after-score's results, by side */
	unsigned protos;	       /* what a measure call measures */
	unsigned part; /* the workloads (WL_* bits) its pairs score, the others held at 1 (the
			* rest of the score kept in cand.r); 0: the whole score */
	double alpha_better, alpha_worse; /* one-sided levels of the interval's bounds */
	bool front_better, front_worse;	  /* ... the tune's, its first look spending more */
	size_t nc;
	struct cand c[TUNER_MAX_CANDS];
	unsigned rounds;
	size_t max_pairs; /* this comparison's most pairs */
	/* A confirmation's: from this many pairs on, a look stops it once the gain's upper
	 * bound at the "same" level lies below +TUNE_MIN_GAIN (0: never). */
	size_t futile_n;
	/* Measured in the context of another comparison's candidate (signing while encryption
	 * seals: with encryption's candidate ctx_j in force on both sides), or NULL. Its runs
	 * pair with that candidate's run of the same round, not with the incumbent's. */
	struct cmp *ctx;
	size_t ctx_j;
	struct cmp *dep; /* the comparison measured in this one's context, or NULL */
	double until;	 /* no round starts that would end after this (0: none) */
	bool out_of_time;
};

/* compare.c */
size_t ts_active(const struct cmp *c);
void ts_cmp_release(struct cmp *c);
void ts_cmp_unlink(struct tstate *s, struct cmp *c);
void ts_conclude(struct tstate *s, struct cmp *c);
void ts_finish(struct tstate *s, struct cmp *c, struct tuner_decision *d);
struct cmp *ts_knob_cmp(struct tstate *s, const struct knob *k, struct tuner_decision *d);
double ts_need(struct tstate *s, const struct cmp *c);
int ts_pool_level(struct tstate *s, struct cmp **cs, const struct knob *const *order,
		  const double *key, size_t n, unsigned lv);
void ts_put_mtu(struct tstate *s, struct cmp *c, size_t side);
void ts_put_snap(struct tstate *s, struct cmp *c, size_t side);
int ts_round_once(struct tstate *s, struct cmp *c);
void ts_verdict_words(char *buf, size_t len, const char *v, const struct tune_effect *e,
		      bool out_of_time);

/* cputier.c */
bool ts_is_leader(const struct knob *k);
int ts_leaders_first(struct tstate *s, struct cmp **cs, bool again, double until_again);
/* Whether an open comparison of the CPU tier leans to a large gain (its estimate at least
 * TUNE_BOUND_MAX): what the tier is first for. */
bool ts_cpu_leaning(struct cmp **cs);
bool ts_sealed(const struct tstate *s);

/* ends.c */
int ts_final_pairing(struct tstate *s, struct snap *start, struct snap *chosen);
int ts_measure_start(struct tstate *s);
void ts_merge_results(struct bench_results *dst, const struct bench_results *src);

/* grid.c */
void ts_grid_entry_release(struct tuner_grid_entry *e);
int ts_grid_run(struct tstate *s, char *err, size_t errlen);

/* consent.c */
/* Whether v of k changes what clients see and m's configuration does not consent to it. */
bool ts_needs_consent(const struct model *m, const struct knob *k, const char *v);
/* d, measured better with v (measured: how), withheld: not applied, with what v would change
 * for the clients and the effect in its reason. */
void ts_withhold(struct tuner_decision *d, const char *v, const char *measured);
/* Every value in force that needs a consent not given put back to its start, withheld. */
void ts_withhold_left(struct tstate *s);

/* confirm.c */
int ts_confirm(struct tstate *s, const unsigned *gains, char *vals[][1 + TUNER_MAX_CANDS]);
unsigned ts_confirm_min_pairs(const struct tstate *s, size_t m);
bool ts_gate(struct tstate *s);

/* screen.c: the screens, run in rounds, a confirmation between two (search.c's knobs_all) */
struct screens;
struct screens *ts_screens_begin(struct tstate *s, char *vals[][1 + TUNER_MAX_CANDS]);
int ts_screens_run(struct tstate *s, struct screens *x, double until, const bool *final,
		   double hold, size_t *ran);
void ts_screens_decide(struct tstate *s, struct screens *x, const bool *final, unsigned *gains);
void ts_screens_end(struct screens *x);

/* mtustep.c */
int ts_mtu_step(struct tstate *s);

/* search.c */
size_t ts_candidates(const struct model *m, const struct knob *k, const char **out);
void ts_decided(struct tstate *s, const struct tuner_decision *d);
void ts_snap_take(struct snap *sn, const struct model *m);
void ts_snap_release(struct snap *sn);
double ts_look_level(const struct tstate *s, double budget, unsigned from);
bool ts_eligible(struct tstate *s, const struct knob *k, struct tuner_decision *d);
bool ts_fits(struct tstate *s, double cost);
/* The budget's seconds left for the knobs: what the after-score and the clients' last pass
 * need kept back. */
double ts_left(struct tstate *s);
unsigned ts_knob_protos(const struct tstate *s, const struct knob *k);
int ts_measure(struct tstate *s, unsigned protos, unsigned runs, unsigned warmup, double *scores,
	       struct bench_results *keep);
bool ts_mtu_wanted(const struct tstate *s);
double ts_now(struct tstate *s);
bool ts_on_path(const struct knob *k);
const char *ts_same_as(const struct model *m, const struct knob *k, const char *cur,
		       const char *const *tried, size_t n, const char *v, char *why, size_t whylen);
void ts_say(struct tstate *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ts_setk(struct tstate *s, enum knob_id id, const char *v, enum knob_src src);
double ts_slot_cost(const struct tstate *s, unsigned protos);
double ts_run_cost(const struct tstate *s, unsigned protos);
double ts_switch_cost(const struct tstate *s, unsigned mask);
unsigned ts_own_switch(unsigned protos);
/* words.c: one candidate's screened effect in words (its length, as snprintf's), and the
 * workloads of a WL_* mask ("seq-write and copy-in-share") into buf. */
size_t ts_cand_words(char *buf, size_t len, const char *v, const struct tune_effect *e);
const char *ts_wl_names(unsigned wl, char *buf, size_t len);
void ts_snap_put(struct tstate *s, const struct snap *sn);
bool ts_stopped(struct tstate *s);

#endif
