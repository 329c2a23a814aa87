/* test_bench_stats.c - summaries, bootstrap and Mann-Whitney U against values computed
 * independently: R's documented wilcox.test example (W = 35, one-sided p = 0.1272, so
 * two-sided 0.2544), exact enumeration of all C(n1+n2, n1) arrangements, and the normal
 * approximation with tie and continuity correction written out by hand in Python. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>

#include "bench.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void
test_quantiles(void **state)
{
	const double even[] = { 4, 1, 3, 2 }, odd[] = { 3, 1, 2 };
	const double sd_set[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct bench_stats s;

	(void)state;
	assert_int_equal(bench_stats_compute(even, N(even), 1, &s), 0);
	assert_int_equal(s.n, 4);
	assert_float_equal(s.median, 2.5, 1e-12);
	assert_float_equal(s.q1, 1.75, 1e-12); /* R: quantile(1:4, .25), type 7 */
	assert_float_equal(s.q3, 3.25, 1e-12);
	assert_float_equal(s.iqr, 1.5, 1e-12);
	assert_float_equal(s.min, 1, 0);
	assert_float_equal(s.max, 4, 0);
	assert_int_equal(bench_stats_compute(odd, N(odd), 1, &s), 0);
	assert_float_equal(s.median, 2, 1e-12);
	assert_int_equal(bench_stats_compute(sd_set, N(sd_set), 1, &s), 0);
	assert_float_equal(s.mean, 5, 1e-12);
	assert_float_equal(s.sd, sqrt(32.0 / 7.0), 1e-12); /* sample sd, n - 1 */
	assert_float_equal(s.cv, sqrt(32.0 / 7.0) / 5, 1e-12);
	assert_int_equal(bench_stats_compute(NULL, 0, 1, &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(bench_stats_compute(NULL, 3, 1, &s), -EINVAL);
}

static void
test_bootstrap(void **state)
{
	const double v[] = { 1, 2, 3, 4, 5 }, c[] = { 7, 7, 7, 7 }, one[] = { 42 };
	const double skew[] = { 10, 11, 12, 13, 14, 15, 100 };
	struct bench_stats a, b;
	double lo, hi;

	(void)state;
	/* The median of a resample of 1..5 is 1 with probability 0.0579 (at least three of
	 * five draws equal 1) and likewise 5: so the 2.5% and 97.5% points are 1 and 5. */
	bench_bootstrap_ci(v, N(v), 2000, 1234, &lo, &hi);
	assert_float_equal(lo, 1, 0);
	assert_float_equal(hi, 5, 0);
	bench_bootstrap_ci(c, N(c), 0, 1, &lo, &hi);
	assert_float_equal(lo, 7, 0);
	assert_float_equal(hi, 7, 0);
	bench_bootstrap_ci(one, 1, 0, 1, &lo, &hi);
	assert_float_equal(lo, 42, 0);
	assert_float_equal(hi, 42, 0);
	/* Reproducible with a seed; the interval holds the median and stays in the data. */
	bench_stats_compute(skew, N(skew), 99, &a);
	bench_stats_compute(skew, N(skew), 99, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_true(a.ci95_low <= a.median && a.median <= a.ci95_high);
	assert_true(a.ci95_low >= 10 && a.ci95_high <= 100);
	assert_true(a.ci95_high < 100); /* the median is robust to the one outlier */
}

static void
test_rand(void **state)
{
	uint64_t s = 0;

	(void)state;
	/* splitmix64's published first outputs for seed 0. */
	assert_true(bench_rand(&s) == 0xe220a8397b1dcdafull);
	assert_true(bench_rand(&s) == 0x6e789e6aa1b965f4ull);
}

static void
test_mwu_exact(void **state)
{
	const double x[] = { 0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46 };
	const double y[] = { 1.15, 0.88, 0.90, 0.74, 1.21 };
	const double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
	const double m1[] = { 1.1, 2.5, 3.3, 4.7 }, m2[] = { 2.0, 3.9, 5.1, 6.2, 7.0 };
	struct bench_mwu t;

	(void)state;
	assert_int_equal(bench_mann_whitney(x, N(x), y, N(y), &t), 0);
	assert_true(t.exact);
	assert_float_equal(t.u, 35, 1e-12);
	assert_float_equal(t.p, 0.2544122544122544, 1e-12);
	assert_int_equal(bench_mann_whitney(a, 3, b, 3, &t), 0);
	assert_float_equal(t.u, 0, 0);
	assert_float_equal(t.p, 0.1, 1e-12); /* 2 x 1/20 */
	assert_int_equal(bench_mann_whitney(b, 3, a, 3, &t), 0);
	assert_float_equal(t.u, 9, 0);
	assert_float_equal(t.p, 0.1, 1e-12);
	assert_int_equal(bench_mann_whitney(m1, N(m1), m2, N(m2), &t), 0);
	assert_float_equal(t.u, 4, 0);
	assert_float_equal(t.p, 0.19047619047619047, 1e-12); /* 24 of 126 arrangements x 2 */
}

static void
test_mwu_normal(void **state)
{
	const double a[] = { 1, 2, 2, 3, 4, 5, 5, 6, 7, 8 };
	const double b[] = { 3, 4, 4, 5, 6, 7, 8, 9, 9, 10, 11 };
	const double same[] = { 5, 5, 5 };
	double big_a[30], big_b[30];
	struct bench_mwu t;
	int i;

	(void)state;
	assert_int_equal(bench_mann_whitney(a, N(a), b, N(b), &t), 0);
	assert_false(t.exact); /* ties */
	assert_float_equal(t.u, 26, 1e-12);
	assert_float_equal(fabs(t.z), 2.0160945408548483, 1e-9);
	assert_float_equal(t.p, 0.0437900908004599, 1e-9);
	for (i = 0; i < 30; i++) {
		big_a[i] = i;
		big_b[i] = i + 15.5;
	}
	assert_int_equal(bench_mann_whitney(big_a, 30, big_b, 30, &t), 0);
	assert_false(t.exact); /* n > 50 */
	assert_float_equal(t.u, 105, 1e-12);
	assert_float_equal(t.p, 3.5200576260680214e-07, 1e-12);
	assert_true(bench_differs(big_a, 30, big_b, 30, 0.05, 0.03));
	assert_false(bench_differs(big_a, 30, big_a, 30, 0.05, 0.03));
	assert_int_equal(bench_mann_whitney(same, 3, same, 3, &t), 0);
	assert_float_equal(t.p, 1, 0);
	assert_int_equal(bench_mann_whitney(same, 0, same, 3, &t), -EINVAL);
	{
		const double l[] = { 1, 2, 3 }, h[] = { 4, 5, 6 };

		assert_false(bench_differs(l, 3, h, 3, 0.05, 0.03)); /* p = 0.1 */
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantiles),  cmocka_unit_test(test_bootstrap),
		cmocka_unit_test(test_rand),	   cmocka_unit_test(test_mwu_exact),
		cmocka_unit_test(test_mwu_normal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
