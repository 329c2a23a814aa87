/* tune.c - scores and decisions for the tuner; pure functions over plain data. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "tune.h"
#include "xmalloc.h"

unsigned
tune_goal_workloads(enum tune_goal g, bool *wl)
{
	unsigned mask = 0;

	memset(wl, 0, BENCH_NWORKLOADS * sizeof(*wl));
	switch (g) {
	case GOAL_THROUGHPUT:
		wl[BENCH_SEQ_WRITE] = wl[BENCH_SEQ_READ] = true;
		mask = WL_SEQ_WRITE | WL_SEQ_READ;
		break;
	case GOAL_SMALL_FILES:
		wl[BENCH_SMALL_FILES] = wl[BENCH_METADATA] = true;
		mask = WL_SMALL_FILES | WL_METADATA;
		break;
	case GOAL_VIDEO:
		wl[BENCH_VIDEO] = wl[BENCH_SEQ_WRITE] = true;
		mask = WL_VIDEO_FRAMES | WL_SEQ_WRITE;
		break;
	case GOAL_BALANCED:
	default:
		wl[BENCH_SEQ_WRITE] = wl[BENCH_SEQ_READ] = wl[BENCH_SMALL_FILES] = true;
		mask = WL_SEQ_WRITE | WL_SEQ_READ | WL_SMALL_FILES;
		break;
	}
	return mask;
}

static bool
higher_is_better(const char *unit)
{
	return strcmp(unit, "MB/s") == 0 || strcmp(unit, "files/s") == 0 ||
	       strcmp(unit, "fps") == 0;
}

int
tune_scores(const struct bench_results *rs, size_t from, double **scores, size_t *n)
{
	size_t i, k, runs = (size_t)-1, used = 0;
	double *logsum;

	for (i = from; i < rs->n; i++)
		if (higher_is_better(rs->v[i].unit) && rs->v[i].nruns < runs)
			runs = rs->v[i].nruns;
	if (runs == (size_t)-1 || runs == 0)
		return -ENOENT;
	logsum = xcalloc(runs, sizeof(*logsum));
	for (i = from; i < rs->n; i++) {
		if (!higher_is_better(rs->v[i].unit))
			continue;
		for (k = 0; k < runs; k++)
			logsum[k] += log(rs->v[i].runs[k] > 1e-9 ? rs->v[i].runs[k] : 1e-9);
		used++;
	}
	for (k = 0; k < runs; k++)
		logsum[k] = exp(logsum[k] / (double)used);
	*scores = logsum;
	*n = runs;
	return 0;
}

static double
median(const double *v, size_t n)
{
	double *c = xmalloc(n * sizeof(*c)), m;
	size_t i, j;

	memcpy(c, v, n * sizeof(*c));
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && c[j - 1] > c[j]; j--) {
			double t = c[j];

			c[j] = c[j - 1];
			c[j - 1] = t;
		}
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

void
tune_compare(const double *base, size_t nb, const double *cand, size_t nc, struct tune_cmp *out)
{
	struct bench_mwu u = { .p = 1 };
	double mb, mc;

	memset(out, 0, sizeof(*out));
	out->p = 1;
	out->verdict = TUNE_NO_EFFECT;
	if (!nb || !nc)
		return;
	mb = median(base, nb);
	mc = median(cand, nc);
	out->effect = mb > 0 ? mc / mb - 1 : 0;
	if (bench_mann_whitney(cand, nc, base, nb, &u) == 0)
		out->p = u.p;
	if (out->p < TUNE_ALPHA && out->effect >= TUNE_MIN_GAIN)
		out->verdict = TUNE_BETTER;
	else if (out->p < TUNE_ALPHA && out->effect <= -TUNE_MIN_GAIN)
		out->verdict = TUNE_WORSE;
}

size_t
tune_first_round(size_t full)
{
	return full / 2 + 1 < full ? full / 2 + 1 : full;
}

bool
tune_worth_retry(double last_effect)
{
	return last_effect > -TUNE_DROP;
}

bool
tune_futile(const double *base, size_t nb, const double *cand, size_t nc, size_t full)
{
	double bar;
	size_t below = 0, i;

	if (!nb || nc >= full)
		return false;	/* nothing to compare with, or already complete */
	bar = (1 + TUNE_MIN_GAIN) * median(base, nb);
	for (i = 0; i < nc; i++)
		if (cand[i] < bar)
			below++;
	return below >= full / 2 + 1;
}
