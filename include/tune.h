/* tune.h - the pure part of self-tuning: which workloads a goal measures, one score per
 * measured run, the paired test and the steadiness check the search decides with (tune/search.c),
 * the report and the protocol choice. No I/O. */
#ifndef NASTUNE_TUNE_H
#define NASTUNE_TUNE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench.h"
#include "model.h"

/* The significance level (before the correction for the candidates tried, tuner.c) and the
 * smallest gain a change must show. tune_compare (unpaired, two-sided Mann-Whitney U) decides
 * nothing in a tune any more: every decision is paired (below); test_tuner runs it as the old
 * rule, to show the simulator's tests fail on it. */
#define TUNE_ALPHA 0.05
#define TUNE_MIN_GAIN 0.03
/* Pairs per window unless --repeat says otherwise: with 8, a real +10% against 5% noise per run
 * was accepted in 167 of 200 simulated tunes; with 10, in 190 (test_tuner test_real_effect). */
#define TUNE_PAIRS 10

/* Marks in wl[BENCH_NWORKLOADS] the workloads goal g measures; returns the knob workload mask
 * (WL_*) for matching knobs. */
unsigned tune_goal_workloads(enum tune_goal g, bool *wl);

/* One score per measured run: the geometric mean, over the results rs->v[from..] with a
 * "higher is better" unit (MB/s, files/s, fps), of run i's value. Runs are aligned by index;
 * n is the smallest run count. *scores is malloc'd (caller frees). Returns 0, or -ENOENT when
 * no result has such a unit. */
int tune_scores(const struct bench_results *rs, size_t from, double **scores, size_t *n);

enum tune_verdict { TUNE_BETTER, TUNE_NO_EFFECT, TUNE_WORSE };

struct tune_cmp {
	enum tune_verdict verdict;
	double effect; /* median(cand) / median(base) - 1 */
	double p;      /* two-sided Mann-Whitney U p-value */
};

/* Compares candidate scores with the base's: BETTER when significantly higher by at least
 * TUNE_MIN_GAIN, WORSE when significantly lower by as much, else NO_EFFECT. */
void tune_compare(const double *base, size_t nb, const double *cand, size_t nc,
		  struct tune_cmp *out);

/* ---- side by side ----
 * Every decision compares the incumbent and a candidate measured in alternation in the same
 * window, pair by pair (ABBA order, so a linear drift cancels). */

/* One-sided exact Wilcoxon signed-rank p-value for "the differences d[0..n) tend to be
 * positive": zeros dropped, ties given average ranks. 1 when no difference is non-zero. */
double tune_signed_rank_p(const double *d, size_t n);

struct tune_pairs {
	double effect;	 /* exp(median of log(cand/inc)) - 1 */
	double p_better; /* one-sided signed-rank p on the log-ratios, cand > inc */
	double p_worse;	 /* the same, cand < inc */
	size_t n;
};

/* Compares n pairs (inc[i], cand[i]) measured side by side. */
void tune_compare_pairs(const double *inc, const double *cand, size_t n, struct tune_pairs *out);

/* The median of v[0..n) (n > 0). */
double tune_median(const double *v, size_t n);

/* A window is not steady when the incumbent's median moved (log scale) by more than
 * TUNE_STEADY_K times its own robust spread, and by at least TUNE_STEADY_FLOOR: between its
 * first and second half, or against the window before. */
#define TUNE_STEADY_K 4
#define TUNE_STEADY_FLOOR 0.10

struct tune_steady {
	bool steady;
	bool within;	    /* the move was inside the window */
	double before, now; /* the incumbent's medians compared */
	double shift;	    /* now / before - 1 */
	double spread;	    /* robust spread of the runs (log scale, ~relative) */
};

/* Whether the incumbent's runs cur[0..nc) (in run order) are steady, within themselves and
 * against prev[0..np) (the same configuration in the previous window; np 0: none). */
bool tune_steady(const double *prev, size_t np, const double *cur, size_t nc,
		 struct tune_steady *out);

struct json_t;
/* A stored tune document (what `tune --json` prints) as text / one self-contained HTML page
 * with an SVG chart (score before and after with intervals), the knob decisions, the results
 * with their bottleneck and the client advice. Caller frees; NULL with err when doc is not a
 * finished tune. */
char *tune_report_text(const struct json_t *doc, char *err, size_t errlen);
char *tune_report_html(const struct json_t *doc, char *err, size_t errlen);

/* Which protocol each client should use: from client results (bench_results JSON, each
 * labelled with its client) and the agents' facts, the fastest protocol by the goal's score
 * that the client can use (never AFP for macOS 27 and later, whose AFP client is gone, nor
 * for anything but macOS). shares (JSON [{"name", "protocols": [...], "time_machine"}], may be
 * NULL) gives a choice per share among the protocols it offers: Time Machine shares are SMB
 * for macOS; a protocol not measured from the client is chosen only when the share has no
 * measured one, and says so. Like with like: where a client's write metric was measured
 * "unflushed" over one protocol (SMB: libsmbclient cannot flush) and "flushed" over another
 * (NFS COMMIT), the flushed one counts with its "unflushed_median" and its flushed score
 * stays beside in "scores_flushed". Returns a new JSON array of {"client", "os", "class"
 * ("macOS 27+", "macOS (Darwin 24)", "Linux", "Windows", ...), "protocol", "why", "scores":
 * {proto: score}, "writes" ("unflushed" when so compared, else "as measured"),
 * "scores_flushed"?, "shares": [{"share", "protocol", "why"}]}. */
struct json_t *tune_protocol_choice(const struct json_t *results, const struct json_t *agents,
				    const struct json_t *shares);

struct model;
/* Advice for each agent's client (facts: "hostname", "os", "os_version", "nic.address"): only
 * what this NAS serves to that client. NFS when enabled and a share is exported to the
 * client (its nfs.clients admits the address, or the host name as a wildcard; netgroups are
 * not checked), with the versions served (protocols.nfs.versions narrowed by the nfs.versions
 * knob) and rsize/wsize from MaxRead/MaxWrite; SMB with the signing, encryption and
 * multichannel in force (knob, else configuration, else Samba's default); AFP only to macOS
 * before 27. choice (tune_protocol_choice's array, may be NULL) gives the figures measured
 * from each client. Returns a new array of {"client", "os", "address", "advice" (one line),
 * "use" (the fastest measured among those offered, else the OS's own; absent when nothing
 * is), "protocols": [{"protocol", "versions", "how", "shares", "measured_mbs"?}], "not_offered":
 * [{"protocol", "why"}], "knobs": {name: {"value", "from"}}}; without agents, one entry for
 * "all" saying client results are missing. */
struct json_t *tune_advice(const struct model *m, const struct json_t *agents,
			   const struct json_t *choice);

/* The smallest MTU the agents use themselves towards the NAS, from their facts (nic.path_mtu,
 * else nic.mtu): the NIC's MTU auto is never raised above it, whatever slack a probe finds
 * (veth and many NICs receive a few bytes over their MTU). from (may be NULL) gets the
 * agent's host name. Returns 0 when no agent reports one. */
int tune_mtu_ceiling(const struct json_t *agents, char *from, size_t fromlen);

#endif
