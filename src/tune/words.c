/* tune/words.c - the words a screen's reasons are made of: one candidate's screened effect
 * ("16K: no effect beyond +-4.2% here (...)"), and the workloads a knob moves. */
#include <math.h>
#include <stdio.h>

#include "bench.h"
#include "search.h"

/* "seq-read" or "seq-write and copy-in-share": the workloads of wl (WL_* bits). */
const char *
ts_wl_names(unsigned wl, char *buf, size_t len)
{
	size_t n = 0, left = (size_t)__builtin_popcount(wl);

	buf[0] = 0;
	for (int w = 0; w < BENCH_NWORKLOADS && n < len; w++)
		if (wl & (1u << w)) {
			left--;
			n += (size_t)snprintf(buf + n, len - n, "%s%s", bench_workload_name(w),
					      !left	  ? ""
					      : left == 1 ? " and "
							  : ", ");
		}
	return buf;
}

static void
pctf(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%+.1f%%", 100 * v);
}

/* "16K: no effect beyond +-4.2% (+1.1% [-2.0%, +4.2%], 48 pairs)" and the like. */
size_t
ts_cand_words(char *buf, size_t len, const char *v, const struct tune_effect *e)
{
	char lo[16], hi[16], est[16];

	if (e->verdict == TUNE_NOT_REACHED)
		return (size_t)snprintf(buf, len, "%s: not reached (no replicate tried it)", v);
	pctf(lo, sizeof(lo), e->lo);
	pctf(hi, sizeof(hi), e->hi);
	pctf(est, sizeof(est), e->est);
	switch (e->verdict) {
	case TUNE_WORSE:
		return (size_t)snprintf(buf, len, "%s: %.0f%% slower here (%s [%s, %s], %zu pairs)",
					v, -100 * e->est, est, lo, hi, e->n);
	case TUNE_BETTER:
		return (size_t)snprintf(buf, len,
					"%s: %.0f%% faster in the screen (%s [%s, %s], %zu pairs)",
					v, 100 * e->est, est, lo, hi, e->n);
	case TUNE_SAME:
		return (size_t)snprintf(buf, len,
					"%s: the same within +-%.1f%% (%s [%s, %s], %zu pairs)", v,
					100 * e->delta, est, lo, hi, e->n);
	case TUNE_BOUNDED:
		return (size_t)snprintf(
			buf, len, "%s: no effect beyond +-%.1f%% here (%s [%s, %s], %zu pairs)", v,
			100 * e->delta, est, lo, hi, e->n);
	default:
		if (!isfinite(e->lo) || !isfinite(e->hi))
			return (size_t)snprintf(
				buf, len,
				"%s: undecided (%s, %zu pairs: too few for an "
				"interval; about %zu more runs, %.0fs, would bound it "
				"to +-5%%)",
				v, est, e->n, e->more_runs, e->more_s);
		return (size_t)snprintf(
			buf, len,
			"%s: undecided (%s [%s, %s], %zu pairs; about %zu more runs, "
			"%.0fs, would bound it to +-5%%)",
			v, est, lo, hi, e->n, e->more_runs, e->more_s);
	}
}
