/* tune.h - the pure part of self-tuning: which workloads a goal measures, one score per
 * measured run, the paired test and the steadiness check the search decides with (tune/search.c),
 * the report and the protocol choice. No I/O. */
#ifndef NASTUNE_TUNE_H
#define NASTUNE_TUNE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench.h"
#include "model.h"

/* The false-positive budget of one tune (nastune-tune(7)), and the smallest effect a verdict
 * names: a change must gain at least TUNE_MIN_GAIN, a loss costs at least as much, and two
 * values within it of each other are the same. */
#define TUNE_ALPHA 0.05
#define TUNE_MIN_GAIN 0.03
/* The pairs at which a comparison looks (tune_looks[]): it stops at the first look that
 * decides, and its error budget is split evenly over the looks. */
#define TUNE_NLOOKS 5
extern const unsigned tune_looks[TUNE_NLOOKS];
/* The default most pairs a comparison measures (--repeat N sets it; at least 8). */
#define TUNE_PAIRS 128

/* Marks in wl[BENCH_NWORKLOADS] the workloads goal g measures; returns the knob workload mask
 * (WL_*) for matching knobs. */
unsigned tune_goal_workloads(enum tune_goal g, bool *wl);

/* One score per measured run: the geometric mean, over the results rs->v[from..] with a
 * "higher is better" unit (MB/s, files/s, fps), of run i's value. Runs are aligned by index;
 * n is the smallest run count. *scores is malloc'd (caller frees). Returns 0, or -ENOENT when
 * no result has such a unit. */
int tune_scores(const struct bench_results *rs, size_t from, double **scores, size_t *n);

/* ---- the one comparison every decision makes ----
 * A candidate and the incumbent measured in alternation (A B B A, one run each), pair by pair:
 * the pairs' log-ratios d = log(candidate / incumbent), their Hodges-Lehmann estimate (the
 * median of the Walsh averages) and its distribution-free interval from the signed-rank test.
 * A drift between pairs cancels within each pair; an outlier pair moves the estimate little. */
enum tune_verdict {
	TUNE_UNDECIDED, /* the interval spans more than one verdict */
	TUNE_BETTER,	/* lower bound above 0 and the estimate at least +TUNE_MIN_GAIN */
	TUNE_WORSE,	/* upper bound below 0 and the estimate at most -TUNE_MIN_GAIN */
	TUNE_SAME,	/* the "same" interval within +-TUNE_MIN_GAIN */
};

struct tune_effect {
	enum tune_verdict verdict;
	double est;    /* candidate / incumbent - 1 */
	double lo, hi; /* the interval at the tune's level (ratios - 1; +-INFINITY: too few) */
	size_t n;      /* pairs */
	size_t more;   /* undecided: about how many more pairs would decide; SIZE_MAX: unknown */
};

/* log(cand / inc), with both clamped above 0. */
double tune_log_ratio(double inc, double cand);

/* The effect of the log-ratios d[0..n): the interval's bounds each at one-sided level alpha
 * (better, worse), and "same" judged on the wider interval at alpha_same. */
void tune_effect_of(const double *d, size_t n, double alpha, double alpha_same,
		    struct tune_effect *out);

/* "undecided", "better", "worse", "same". */
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
