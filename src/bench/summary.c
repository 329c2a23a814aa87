/* summary.c - summaries, bootstrap intervals and the Mann-Whitney U test. Pure: no I/O, no
 * clock; the PRNG is seeded by the caller so every number is reproducible. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "xmalloc.h"

#define BOOT_RESAMPLES 2000
#define EXACT_MAX_N 50

uint64_t
bench_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
bench_quantile(const double *sorted, size_t n, double p)
{
	double h;
	size_t lo;

	if (n == 0)
		return 0;
	if (p <= 0)
		return sorted[0];
	if (p >= 1)
		return sorted[n - 1];
	h = (double)(n - 1) * p;
	lo = (size_t)floor(h);
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

void
bench_bootstrap_ci(const double *v, size_t n, unsigned resamples, uint64_t seed, double *lo,
		   double *hi)
{
	double *meds, *tmp;
	uint64_t rng = seed;
	unsigned b;
	size_t i;

	if (n == 0) {
		*lo = *hi = 0;
		return;
	}
	if (n == 1) {
		*lo = *hi = v[0];
		return;
	}
	if (resamples == 0)
		resamples = BOOT_RESAMPLES;
	meds = xcalloc(resamples, sizeof(*meds));
	tmp = xcalloc(n, sizeof(*tmp));
	for (b = 0; b < resamples; b++) {
		for (i = 0; i < n; i++)
			tmp[i] = v[bench_rand(&rng) % n];
		qsort(tmp, n, sizeof(*tmp), cmp_double);
		meds[b] = bench_quantile(tmp, n, 0.5);
	}
	qsort(meds, resamples, sizeof(*meds), cmp_double);
	*lo = bench_quantile(meds, resamples, 0.025);
	*hi = bench_quantile(meds, resamples, 0.975);
	free(meds);
	free(tmp);
}

int
bench_stats_summary(const double *v, size_t n, struct bench_stats *s)
{
	double *sorted, sum = 0, ss = 0;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (n == 0)
		return 0;
	if (!v)
		return -EINVAL;
	sorted = xcalloc(n, sizeof(*sorted));
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	s->n = n;
	s->min = sorted[0];
	s->max = sorted[n - 1];
	s->median = bench_quantile(sorted, n, 0.5);
	s->q1 = bench_quantile(sorted, n, 0.25);
	s->q3 = bench_quantile(sorted, n, 0.75);
	s->iqr = s->q3 - s->q1;
	for (i = 0; i < n; i++)
		sum += v[i];
	s->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		ss += (v[i] - s->mean) * (v[i] - s->mean);
	s->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	s->cv = s->mean != 0 ? s->sd / fabs(s->mean) : 0;
	free(sorted);
	return 0;
}

int
bench_stats_compute(const double *v, size_t n, uint64_t seed, struct bench_stats *s)
{
	int rc = bench_stats_summary(v, n, s);

	if (rc == 0 && n)
		bench_bootstrap_ci(v, n, BOOT_RESAMPLES, seed, &s->ci95_low, &s->ci95_high);
	return rc;
}

/* Number of arrangements giving each U for sizes m, n without ties: the coefficients of the
 * Gaussian binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i). Integers up
 * to C(50,25) ~ 1.3e14, exact in a double. Caller frees; length m*n+1. */
static double *
u_counts(size_t m, size_t n)
{
	size_t len = m * n + 1, i, k;
	double *c = xcalloc(len, sizeof(*c));

	c[0] = 1;
	for (i = 1; i <= m; i++) {
		/* multiply by (1 - q^(n+i)) */
		for (k = len; k-- > n + i;)
			c[k] -= c[k - (n + i)];
		/* divide by (1 - q^i): c'[k] = c[k] + c'[k-i] */
		for (k = i; k < len; k++)
			c[k] += c[k - i];
	}
	return c;
}

int
bench_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct bench_mwu *out)
{
	struct item {
		double v;
		int from_a;
	} * all;
	size_t n = na + nb, i, j;
	double ranksum = 0, tie_term = 0;
	bool ties = false;

	memset(out, 0, sizeof(*out));
	if (na == 0 || nb == 0)
		return -EINVAL;
	all = xcalloc(n, sizeof(*all));
	for (i = 0; i < na; i++)
		all[i] = (struct item){ a[i], 1 };
	for (i = 0; i < nb; i++)
		all[na + i] = (struct item){ b[i], 0 };
	qsort(all, n, sizeof(*all), cmp_double); /* v is the first member */
	for (i = 0; i < n; i = j) {
		double rank, t;

		for (j = i + 1; j < n && all[j].v == all[i].v; j++)
			;
		rank = ((double)(i + 1) + (double)j) / 2.0; /* mean of ranks i+1..j */
		t = (double)(j - i);
		if (t > 1) {
			ties = true;
			tie_term += t * t * t - t;
		}
		for (size_t k = i; k < j; k++)
			if (all[k].from_a)
				ranksum += rank;
	}
	free(all);
	out->u = ranksum - (double)na * (double)(na + 1) / 2.0;

	if (!ties && n <= EXACT_MAX_N) {
		double *c = u_counts(na, nb), total = 0, le = 0, ge = 0;
		size_t u = (size_t)llround(out->u), k, len = na * nb + 1;

		for (k = 0; k < len; k++) {
			total += c[k];
			if (k <= u)
				le += c[k];
			if (k >= u)
				ge += c[k];
		}
		free(c);
		out->exact = true;
		out->p = fmin(1.0, 2.0 * fmin(le, ge) / total);
		return 0;
	}
	{
		double nn = (double)n, mu = (double)na * (double)nb / 2.0;
		double var =
			(double)na * (double)nb / 12.0 * ((nn + 1) - tie_term / (nn * (nn - 1)));
		double d = fabs(out->u - mu) - 0.5;

		if (var <= 0) {
			out->p = 1;
			return 0;
		}
		if (d < 0)
			d = 0;
		out->z = d / sqrt(var) * (out->u < mu ? -1 : 1);
		out->p = fmin(1.0, erfc(fabs(out->z) / sqrt(2.0)));
	}
	return 0;
}

bool
bench_differs(const double *a, size_t na, const double *b, size_t nb, double alpha, double min_rel)
{
	struct bench_stats sa, sb;
	struct bench_mwu t;

	if (bench_mann_whitney(a, na, b, nb, &t) < 0 || t.p >= alpha)
		return false;
	bench_stats_compute(a, na, 1, &sa);
	bench_stats_compute(b, nb, 1, &sb);
	if (sa.median == 0 && sb.median == 0)
		return false;
	return fabs(sa.median - sb.median) / fmax(fabs(sa.median), fabs(sb.median)) > min_rel;
}
