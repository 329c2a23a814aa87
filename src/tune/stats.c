/* tune/stats.c - scores and decisions for the tuner; pure functions over plain data. */
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
		/* Small work as the field meets it: small files, stats, a big directory's
		 * lookups and listing, a source tree's `make -n`. */
		wl[BENCH_SMALL_FILES] = wl[BENCH_METADATA] = true;
		wl[BENCH_BIG_DIR] = wl[BENCH_SOURCE_TREE] = true;
		mask = WL_SMALL_FILES | WL_METADATA | WL_BIG_DIR | WL_SOURCE_TREE;
		break;
	case GOAL_VIDEO:
		wl[BENCH_VIDEO] = wl[BENCH_SEQ_WRITE] = true;
		mask = WL_VIDEO_FRAMES | WL_SEQ_WRITE;
		break;
	case GOAL_BALANCED:
	default:
		/* Bulk and small work: stats and a big directory show the small-work knobs (case,
		 * stat cache, DOS attributes), which small-files' few files in a fresh directory
		 * cannot. Their calls are time-boxed and the directory smaller (tune/machine.c);
		 * source-tree's stats add little to metadata's. */
		wl[BENCH_SEQ_WRITE] = wl[BENCH_SEQ_READ] = wl[BENCH_SMALL_FILES] = true;
		wl[BENCH_METADATA] = wl[BENCH_BIG_DIR] = true;
		mask = WL_SEQ_WRITE | WL_SEQ_READ | WL_SMALL_FILES | WL_METADATA | WL_BIG_DIR;
		break;
	}
	return mask;
}

/* Whether r scores: throughputs and operation rates, and the metadata workload's mean time
 * per operation (as the operations it makes a second). Percentiles (p99) never score. */
static bool
scores(const struct bench_result *r)
{
	static const char *const rates[] = { "MB/s", "files/s", "fps", "ops/s" };

	for (size_t k = 0; k < sizeof(rates) / sizeof(*rates); k++)
		if (strcmp(r->unit, rates[k]) == 0)
			return true;
	return strcmp(r->unit, "us") == 0 && r->workload && strcmp(r->workload, "metadata") == 0;
}

/* Run i's value of a scoring r as a rate: higher is better. */
static double
score_value(const struct bench_result *r, size_t i)
{
	if (strcmp(r->unit, "us") == 0)
		return r->runs[i] > 1e-9 ? 1e6 / r->runs[i] : 1e15;
	return r->runs[i];
}

static bool
eq(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

static bool
same_workload(const struct bench_result *a, const struct bench_result *b)
{
	return a == b || (a->workload && eq(a->workload, b->workload) && eq(a->target, b->target) &&
			  eq(a->client, b->client));
}

/* Each workload (on each target, from each client) weighs the same whatever its number of
 * metrics: the geometric mean of its metrics' geometric means. Counted per metric, small-files'
 * five rates, metadata's six and big-dir's four would drown seq-write and seq-read in balanced
 * (+20% on both bulk transfers would score +2%). */
int
tune_scores(const struct bench_results *rs, size_t from, double **scores_out, size_t *n)
{
	return tune_scores_part(rs, from, ~0u, scores_out, n);
}

/* Whether r's workload is one of wlmask's (WL_* bits: 1 << its bench_workload). */
static bool
in_mask(const struct bench_result *r, unsigned wlmask)
{
	int w = r->workload ? bench_workload_parse(r->workload) : -1;

	return wlmask == ~0u || (w >= 0 && w < 32 && (wlmask >> w) & 1u);
}

int
tune_scores_part(const struct bench_results *rs, size_t from, unsigned wlmask, double **scores_out,
		 size_t *n)
{
	size_t i, j, k, runs = (size_t)-1, groups = 0, part = 0;
	double *logsum, *wlsum;

	for (i = from; i < rs->n; i++)
		if (scores(&rs->v[i]) && rs->v[i].nruns < runs)
			runs = rs->v[i].nruns;
	if (runs == (size_t)-1 || runs == 0)
		return -ENOENT;
	logsum = xcalloc(runs, sizeof(*logsum));
	wlsum = xcalloc(runs, sizeof(*wlsum));
	for (i = from; i < rs->n; i++) {
		size_t used = 0;

		if (!scores(&rs->v[i]))
			continue;
		for (j = from; j < i; j++)
			if (scores(&rs->v[j]) && same_workload(&rs->v[j], &rs->v[i]))
				break;
		if (j < i)
			continue; /* its workload was summed with an earlier result */
		memset(wlsum, 0, runs * sizeof(*wlsum));
		for (j = i; j < rs->n; j++) {
			if (!scores(&rs->v[j]) || !same_workload(&rs->v[j], &rs->v[i]))
				continue;
			for (k = 0; k < runs; k++) {
				double v = score_value(&rs->v[j], k);

				wlsum[k] += log(v > 1e-9 ? v : 1e-9);
			}
			used++;
		}
		groups++;
		if (!in_mask(&rs->v[i], wlmask))
			continue; /* its share of the score is held at 1 */
		for (k = 0; k < runs; k++)
			logsum[k] += wlsum[k] / (double)used;
		part++;
	}
	if (!part) { /* none of wlmask's workloads measured: the whole score */
		free(wlsum);
		free(logsum);
		return tune_scores_part(rs, from, ~0u, scores_out, n);
	}
	for (k = 0; k < runs; k++)
		logsum[k] = exp(logsum[k] / (double)groups);
	free(wlsum);
	*scores_out = logsum;
	*n = runs;
	return 0;
}

double
tune_median(const double *v, size_t n)
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

/* ---- the one comparison: paired log-ratios, their Hodges-Lehmann effect and interval ---- */

const unsigned tune_looks[TUNE_NLOOKS] = { 8, 12, 16, 32, 64, 128 };

double
tune_log_ratio(double inc, double cand)
{
	return log(cand > 1e-9 ? cand : 1e-9) - log(inc > 1e-9 ? inc : 1e-9);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The standard normal's alpha quantile, by bisection on erfc (alpha in (0, 1/2]). */
static double
norm_quantile(double alpha)
{
	double lo = -40, hi = 0;

	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (0.5 * erfc(-mid / sqrt(2)) < alpha)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* Exact up to this many pairs; beyond it the normal approximation, close in the tails by then. */
#define WSR_EXACT 60

/* The largest c with P(W <= c) <= alpha for W the Wilcoxon signed-rank statistic of n pairs
 * with a median of 0; -1 when even W = 0 is likelier than alpha. */
static long
wsr_crit(size_t n, double alpha)
{
	size_t top = n * (n + 1) / 2;
	double cum = 0;
	long c = -1;

	if (n > WSR_EXACT) {
		/* Normal with continuity correction: solve P(W <= c) = alpha for c. */
		double mu = (double)top / 2, sd = sqrt((double)n * (n + 1) * (2 * n + 1) / 24.0);
		double z = norm_quantile(alpha);

		c = (long)floor(mu + z * sd - 0.5);
		return c < 0 ? -1 : c;
	}
	/* f[s]: the share of the 2^n sign patterns whose positive ranks sum to s. */
	double *f = xcalloc(top + 1, sizeof(*f));

	f[0] = 1;
	for (size_t r = 1; r <= n; r++)
		for (size_t s = r * (r + 1) / 2;; s--) {
			f[s] = 0.5 * (f[s] + (s >= r ? f[s - r] : 0));
			if (s == 0)
				break;
		}
	for (size_t s = 0; s <= top; s++) {
		cum += f[s];
		if (cum > alpha)
			break;
		c = (long)s;
	}
	free(f);
	return c;
}
/* Pairs that would likely take an interval half as wide as h at n pairs below need (the
 * width shrinks as 1/sqrt(n)). */
static size_t
pairs_for(double h, size_t n, double need)
{
	double want;

	if (!(need > 0) || !isfinite(h))
		return SIZE_MAX;
	want = ceil((double)n * (h / need) * (h / need));
	return want > 1e6 ? SIZE_MAX : (size_t)want;
}

/* The Walsh averages (d[i] + d[j]) / 2, i <= j, of d[0..n), sorted; n(n+1)/2 of them. */
static double *
walsh(const double *d, size_t n, size_t *nw)
{
	double *w = xmalloc(n * (n + 1) / 2 * sizeof(*w));
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			w[k++] = (d[i] + d[j]) / 2;
	qsort(w, k, sizeof(*w), cmp_double);
	*nw = k;
	return w;
}

/* The (1 - 2 alpha) interval of the pairs' centre: the Walsh averages w(c+1) and w(N-c), c
 * the signed-rank test's critical value. Infinite where n pairs cannot reach alpha. */
static void
hl_interval(const double *w, size_t nw, size_t n, double alpha, double *lo, double *hi)
{
	long c = wsr_crit(n, alpha);

	if (c < 0 || (size_t)c >= (nw + 1) / 2) {
		*lo = -INFINITY;
		*hi = INFINITY;
		return;
	}
	*lo = w[c];
	*hi = w[nw - 1 - (size_t)c];
}

void
tune_effect_of(const double *d, size_t n, double alpha, double alpha_same, struct tune_effect *out)
{
	size_t need = SIZE_MAX, p, nw;
	double *w, est, lo, hi, slo, shi, g = log1p(TUNE_MIN_GAIN);

	memset(out, 0, sizeof(*out));
	out->n = n;
	out->lo = -INFINITY;
	out->hi = INFINITY;
	out->more = SIZE_MAX;
	if (!n)
		return;
	w = walsh(d, n, &nw);
	est = nw % 2 ? w[nw / 2] : (w[nw / 2 - 1] + w[nw / 2]) / 2;
	hl_interval(w, nw, n, alpha, &lo, &hi);
	hl_interval(w, nw, n, alpha_same, &slo, &shi);
	free(w);
	out->est = expm1(est);
	out->lo = isinf(lo) ? -INFINITY : expm1(lo);
	out->hi = isinf(hi) ? INFINITY : expm1(hi);
	if (lo > 0 && est >= g)
		out->verdict = TUNE_BETTER;
	else if (hi < 0 && est <= -g)
		out->verdict = TUNE_WORSE;
	else if (slo >= -g && shi <= g) {
		/* The interval shown is the one judged: a "same" printed with bounds at the
		 * tune's level (wider than +-3%) read as a contradiction. */
		out->verdict = TUNE_SAME;
		out->lo = expm1(slo);
		out->hi = expm1(shi);
	}
	if (out->verdict != TUNE_UNDECIDED)
		return;
	/* Undecided: the nearest verdict the estimate points to, at the interval's width. */
	if (est >= g)
		need = pairs_for(est - lo, n, est);
	else if (est <= -g)
		need = pairs_for(hi - est, n, -est);
	if ((p = pairs_for((shi - slo) / 2, n, g - fabs(est))) < need)
		need = p;
	if (need != SIZE_MAX && need > n && need - n <= 1000)
		out->more = need - n;
}

const char *
tune_verdict_name(enum tune_verdict v)
{
	static const char *const names[] = { "undecided", "better",	      "worse",
					     "same",	  "no effect beyond", "not reached" };

	return names[v];
}
