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
	mb = tune_median(base, nb);
	mc = tune_median(cand, nc);
	out->effect = mb > 0 ? mc / mb - 1 : 0;
	if (bench_mann_whitney(cand, nc, base, nb, &u) == 0)
		out->p = u.p;
	if (out->p < TUNE_ALPHA && out->effect >= TUNE_MIN_GAIN)
		out->verdict = TUNE_BETTER;
	else if (out->p < TUNE_ALPHA && out->effect <= -TUNE_MIN_GAIN)
		out->verdict = TUNE_WORSE;
}

/* ---- side by side: paired log-ratios, the signed-rank test, steadiness ---- */

static int
cmp_abs(const void *a, const void *b)
{
	double x = fabs(*(const double *)a), y = fabs(*(const double *)b);

	return x < y ? -1 : x > y;
}

double
tune_signed_rank_p(const double *d, size_t n)
{
	double *v = xmalloc((n ? n : 1) * sizeof(*v)), *cnt, total, tail = 0;
	unsigned *rank2 = xmalloc((n ? n : 1) * sizeof(*rank2));
	size_t m = 0, i, j, maxs, w = 0, s;

	for (i = 0; i < n; i++)
		if (fabs(d[i]) > 1e-12)
			v[m++] = d[i];
	if (!m) {
		free(v);
		free(rank2);
		return 1;
	}
	qsort(v, m, sizeof(*v), cmp_abs);
	/* Doubled ranks keep tied averages integral, so the exact null distribution (every sign
	 * equally likely) is one subset-sum count. */
	for (i = 0; i < m; i = j) {
		for (j = i + 1; j < m && fabs(fabs(v[j]) - fabs(v[i])) <= 1e-12; j++)
			;
		for (size_t k = i; k < j; k++)
			rank2[k] = (unsigned)(i + 1 + j);
	}
	maxs = m * (m + 1);
	cnt = xcalloc(maxs + 1, sizeof(*cnt));
	cnt[0] = 1;
	for (i = 0; i < m; i++)
		for (s = maxs; s + 1 > rank2[i]; s--)
			cnt[s] += cnt[s - rank2[i]];
	for (i = 0; i < m; i++)
		if (v[i] > 0)
			w += rank2[i];
	total = ldexp(1.0, (int)m);
	for (s = w; s <= maxs; s++)
		tail += cnt[s];
	free(cnt);
	free(v);
	free(rank2);
	return tail / total > 1 ? 1 : tail / total;
}

void
tune_compare_pairs(const double *inc, const double *cand, size_t n, struct tune_pairs *out)
{
	double *lr = xmalloc((n ? n : 1) * sizeof(*lr)), *neg = xmalloc((n ? n : 1) * sizeof(*neg));
	size_t i;

	memset(out, 0, sizeof(*out));
	out->p_better = out->p_worse = 1;
	out->n = n;
	for (i = 0; i < n; i++) {
		lr[i] = log(cand[i] > 1e-9 ? cand[i] : 1e-9) - log(inc[i] > 1e-9 ? inc[i] : 1e-9);
		neg[i] = -lr[i];
	}
	if (n) {
		out->effect = expm1(tune_median(lr, n));
		out->p_better = tune_signed_rank_p(lr, n);
		out->p_worse = tune_signed_rank_p(neg, n);
	}
	free(lr);
	free(neg);
}

static double
log_median(const double *v, size_t n)
{
	double *l = xmalloc(n * sizeof(*l)), m;

	for (size_t i = 0; i < n; i++)
		l[i] = log(v[i] > 1e-9 ? v[i] : 1e-9);
	m = tune_median(l, n);
	free(l);
	return m;
}

/* Robust spread of the log scores from successive differences (1.4826 x their median
 * absolute value / sqrt 2), pooled over the series a and b (b may be empty): a step between
 * two runs moves one difference only, so it does not widen the spread it is judged against. */
static double
log_spread2(const double *a, size_t na, const double *b, size_t nb)
{
	double *d = xmalloc((na + nb + 1) * sizeof(*d)), s;
	size_t n = 0;

	for (int part = 0; part < 2; part++) {
		const double *v = part ? b : a;
		size_t nv = part ? nb : na;

		for (size_t i = 1; i < nv; i++)
			d[n++] = fabs(log(v[i] > 1e-9 ? v[i] : 1e-9) -
				      log(v[i - 1] > 1e-9 ? v[i - 1] : 1e-9));
	}
	s = n ? 1.4826 * tune_median(d, n) / sqrt(2) : 0;
	free(d);
	return s;
}

static double
log_spread(const double *v, size_t n)
{
	return log_spread2(v, n, NULL, 0);
}

bool
tune_steady(const double *prev, size_t np, const double *cur, size_t nc, struct tune_steady *out)
{
	double bar;
	size_t h = nc / 2;

	memset(out, 0, sizeof(*out));
	out->steady = true;
	if (nc < 2)
		return true;
	out->spread = log_spread(cur, nc);
	bar = TUNE_STEADY_K * out->spread > TUNE_STEADY_FLOOR ? TUNE_STEADY_K * out->spread
							      : TUNE_STEADY_FLOOR;
	/* Within the window: its first half against its second. */
	if (h >= 2) {
		double a = log_median(cur, h), b = log_median(cur + nc - h, h);

		if (fabs(b - a) > bar) {
			out->steady = false;
			out->within = true;
			out->before = exp(a);
			out->now = exp(b);
			out->shift = expm1(b - a);
			return false;
		}
	}
	/* Against the incumbent's runs in the window before. */
	if (np >= 2) {
		double a = log_median(prev, np), b = log_median(cur, nc);

		out->spread = log_spread2(prev, np, cur, nc);
		bar = TUNE_STEADY_K * out->spread > TUNE_STEADY_FLOOR ? TUNE_STEADY_K * out->spread
								      : TUNE_STEADY_FLOOR;
		out->before = exp(a);
		out->now = exp(b);
		out->shift = expm1(b - a);
		if (fabs(b - a) > bar)
			out->steady = false;
	}
	return out->steady;
}
