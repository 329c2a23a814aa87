/* test_tune_fit.c - the screen's estimate (tune/fit.c) on folded designs from tune/design.c:
 * effects recovered from pair differences, a drift absorbed by the intercept, intervals that
 * cover at their level, Huber's fit against outliers where least squares is thrown, the null
 * check, and Student's t. Seeded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "tune/design.h"
#include "tune/fit.h"

static double
uni(uint64_t *rng)
{
	return ((double)(bench_rand(rng) >> 11) + 0.5) / 9007199254740992.0;
}

static double
gauss(uint64_t *rng)
{
	return sqrt(-2 * log(uni(rng))) * cos(2 * M_PI * uni(rng));
}

static void
test_t(void **state)
{
	(void)state;
	assert_true(fabs(tfit_t_quantile(0.975, 10) - 2.228139) < 1e-5);
	assert_true(fabs(tfit_t_quantile(0.95, 5) - 2.015048) < 1e-5);
	assert_true(fabs(tfit_t_quantile(0.975, 1) - 12.7062) < 1e-3);
	assert_true(fabs(tfit_t_quantile(0.975, 1e6) - 1.959966) < 1e-4);
	assert_true(fabs(tfit_t_quantile(0.025, 10) + 2.228139) < 1e-5);
	assert_true(fabs(tfit_t_cdf(0, 7) - 0.5) < 1e-12);
}

/* A simulated screen: k factors, R replicates of a folded array, effects eff[] (log), noise
 * sigma per run, a linear drift per run, and with probability outlier a run off by a factor
 * of 2 either way. Fills x (intercept then one column a factor), y, and the null contrasts. */
static size_t
screen(size_t k, const double *eff, unsigned reps, double sigma, double drift, double outlier,
       uint64_t *rng, double *x, double *y, signed char *nulls, size_t *nnull)
{
	unsigned nc[64];
	struct tdesign d;
	struct tdesign_pair p[64];
	size_t rows = 0, nn = 0, total;
	double t = 0;

	for (size_t f = 0; f < k; f++)
		nc[f] = 1;
	assert_int_equal(tdesign_init(&d, k, nc, NULL, 0, bench_rand(rng)), 0);
	total = (size_t)reps * d.order;
	memset(nulls, 0, (total * (d.order - k)) * reps * sizeof(*nulls));
	for (unsigned r = 0; r < reps; r++) {
		size_t n = tdesign_replicate(&d, p);

		for (size_t i = 0; i < n; i++, rows++) {
			double a = 0, b = 0;

			for (int run = 0; run < 2; run++) {
				const unsigned char *lv = run ? p[i].second : p[i].first;
				double v = drift * t++ + sigma * gauss(rng);

				for (size_t f = 0; f < k; f++)
					v += lv[f] ? eff[f] : 0;
				if (uni(rng) < outlier)
					v += uni(rng) < 0.5 ? log(2) : -log(2);
				*(run ? &b : &a) = v;
			}
			y[rows] = a - b;
			x[rows * (k + 1)] = 1;
			for (size_t f = 0; f < k; f++)
				x[rows * (k + 1) + 1 + f] =
					(p[i].first[f] == 1) - (p[i].second[f] == 1);
			for (size_t u = 0; u < p[i].nnull; u++)
				nulls[(nn + u) * total + rows] = p[i].null[u];
		}
		nn += p[0].nnull;
	}
	*nnull = nn;
	return rows;
}

static void
test_recovers(void **state)
{
	double eff[6] = { log(1.1), log(0.7), 0, 0, log(1.02), 0 };
	static double x[4 * 8 * 7], y[4 * 8];
	static signed char nulls[4 * 8 * 8 * 4];
	uint64_t rng = 3;
	size_t nn, n = screen(6, eff, 4, 0.0, 0.01, 0, &rng, x, y, nulls, &nn);
	struct tfit f;

	(void)state;
	/* no noise: exact, the drift all in the intercept (later run higher: first - second
	 * is -drift every pair) */
	assert_int_equal(tfit_fit(x, y, n, 7, true, &f), 0);
	assert_true(f.ok);
	assert_int_equal(f.df, n - 7);
	assert_true(fabs(f.b[0] + 0.01) < 1e-9);
	for (size_t j = 0; j < 6; j++)
		assert_true(fabs(f.b[1 + j] - eff[j]) < 1e-9);
	tfit_release(&f);
}

/* Over 300 seeded screens, the 90% interval (5% each side) of each effect covers it 85-95%
 * of the time, under a drift as large as the effects. */
static void
test_coverage(void **state)
{
	double eff[10] = { log(1.1), log(0.7), 0, 0, log(1.05), 0, 0, 0, 0, log(0.95) };
	static double x[4 * 12 * 11], y[4 * 12];
	static signed char nulls[4 * 12 * 12 * 4];
	uint64_t rng = 5;
	size_t cover = 0, total = 0;
	double ratio = 0;
	size_t flagged = 0;

	(void)state;
	for (int sim = 0; sim < 300; sim++) {
		struct tfit_null nc;
		size_t nn, n = screen(10, eff, 4, 0.137, 0.002, 0, &rng, x, y, nulls, &nn);
		struct tfit f;

		assert_int_equal(tfit_fit(x, y, n, 11, true, &f), 0);
		for (size_t j = 0; j < 10; j++) {
			double lo, hi;

			tfit_interval(&f, 1 + j, 0.05, &lo, &hi);
			assert_true(isfinite(lo) && isfinite(hi));
			cover += lo <= eff[j] && eff[j] <= hi;
			total++;
		}
		tfit_null_check(&f, nulls, nn, &nc);
		assert_int_equal(nc.q, nn);
		ratio += nc.mean_sq;
		flagged += !nc.ok;
		tfit_release(&f);
	}
	assert_true(cover > total * 85 / 100);
	assert_true(cover < total * 95 / 100);
	/* the null check: about 1 when the model holds */
	ratio /= 300;
	assert_true(ratio > 0.8 && ratio < 1.2);
	assert_true(flagged <= 9); /* 1% of 300, with room */
}

/* At three residual degrees of freedom (eight factors in one 12-run replicate), one run in
 * sixteen an outlier: a column without an effect is called a gain or a cost at most about as
 * often as the 90% interval says (5% each side). The residuals' MAD alone put 20% of them
 * outside. */
static void
test_coverage_few_df(void **state)
{
	double eff[8] = { 0 };
	static double x[12 * 9], y[12];
	static signed char nulls[12 * 12];
	uint64_t rng = 11;
	size_t gain = 0, cost = 0, total = 0;

	(void)state;
	for (int sim = 0; sim < 2000; sim++) {
		size_t nn, n = screen(8, eff, 1, 0.137, 0, 1.0 / 16, &rng, x, y, nulls, &nn);
		struct tfit f;

		assert_int_equal(n, 12);
		/* a replicate whose random pair orders make the intercept a sum of columns
		 * (about one in fifty) has no fit; the next replicate gives one */
		if (tfit_fit(x, y, n, 9, true, &f) < 0)
			continue;
		assert_int_equal(f.df, 3);
		for (size_t j = 1; j < 9; j++) {
			double lo, hi;

			tfit_interval(&f, j, 0.05, &lo, &hi);
			gain += lo > 0;
			cost += hi < 0;
			total++;
		}
		tfit_release(&f);
	}
	print_message("# 3 df: %.1f%% of null columns a gain, %.1f%% a cost (5%% each)\n",
		      100.0 * (double)gain / (double)total, 100.0 * (double)cost / (double)total);
	assert_true(gain <= total * 7 / 100);
	assert_true(cost <= total * 7 / 100);
}

/* One pair in eight an outlier: Huber's estimates stay closer to the truth than least
 * squares', and its intervals are narrower. */
static void
test_outliers(void **state)
{
	double eff[10] = { log(1.1), log(0.7), 0, 0, 0, 0, 0, 0, 0, 0 };
	static double x[8 * 12 * 11], y[8 * 12];
	static signed char nulls[8 * 12 * 12 * 8];
	uint64_t rng = 8;
	double err_h = 0, err_ls = 0, w_h = 0, w_ls = 0;

	(void)state;
	for (int sim = 0; sim < 200; sim++) {
		size_t nn, n = screen(10, eff, 8, 0.05, 0, 1.0 / 16, &rng, x, y, nulls, &nn);
		struct tfit h, ls;

		assert_int_equal(tfit_fit(x, y, n, 11, true, &h), 0);
		assert_int_equal(tfit_fit(x, y, n, 11, false, &ls), 0);
		for (size_t j = 0; j < 10; j++) {
			err_h += (h.b[1 + j] - eff[j]) * (h.b[1 + j] - eff[j]);
			err_ls += (ls.b[1 + j] - eff[j]) * (ls.b[1 + j] - eff[j]);
			w_h += h.se[1 + j];
			w_ls += ls.se[1 + j];
		}
		tfit_release(&h);
		tfit_release(&ls);
	}
	assert_true(err_h < 0.6 * err_ls);
	assert_true(w_h < 0.8 * w_ls);
}

/* An effect the fit does not model (an interaction sitting in a null column) shows in the
 * null check. */
static void
test_null_check(void **state)
{
	/* four factors: an array of 8 (three would take one of 4, with a single null column) */
	static double x[4 * 8 * 5], y[4 * 8];
	unsigned nc[4] = { 1, 1, 1, 1 };
	struct tdesign d;
	struct tdesign_pair p[8];
	static signed char nulls[4 * 4 * 32];
	uint64_t rng = 12;
	size_t rows = 0;
	struct tfit f;
	struct tfit_null chk;

	(void)state;
	assert_int_equal(tdesign_init(&d, 4, nc, NULL, 0, 99), 0);
	for (int r = 0; r < 4; r++) {
		assert_int_equal(tdesign_replicate(&d, p), 8);
		for (size_t i = 0; i < 8; i++, rows++) {
			/* an effect the model lacks, in one replicate's first null column */
			y[rows] = 0.05 * gauss(&rng) + (r == 2 ? 0.3 * p[i].null[0] : 0);
			x[rows * 5] = 1;
			for (size_t f2 = 0; f2 < 4; f2++)
				x[rows * 5 + 1 + f2] =
					(p[i].first[f2] == 1) - (p[i].second[f2] == 1);
			for (size_t u = 0; u < 4; u++)
				nulls[(r * 4 + u) * 32 + rows] = p[i].null[u];
		}
	}
	assert_int_equal(tfit_fit(x, y, 32, 5, true, &f), 0);
	tfit_null_check(&f, nulls, 16, &chk);
	assert_int_equal(chk.q, 16);
	assert_false(chk.ok);
	tfit_release(&f);
	/* without it, the check passes */
	for (size_t i = 64; i < 96; i++)
		y[i - 64] = 0.05 * gauss(&rng);
	assert_int_equal(tfit_fit(x, y, 32, 5, true, &f), 0);
	tfit_null_check(&f, nulls, 16, &chk);
	assert_true(chk.ok);
	tfit_release(&f);
}

static void
test_unreached_column(void **state)
{
	/* column 2 never set: no estimate, an infinite interval, the others fitted */
	double x[12 * 3], y[12], lo, hi;
	uint64_t rng = 1;
	struct tfit f;

	(void)state;
	for (size_t i = 0; i < 12; i++) {
		x[i * 3] = 1;
		x[i * 3 + 1] = i % 2 ? 1 : -1;
		x[i * 3 + 2] = 0;
		y[i] = 0.1 * x[i * 3 + 1] + 0.01 * gauss(&rng);
	}
	assert_int_equal(tfit_fit(x, y, 12, 3, true, &f), 0);
	assert_true(fabs(f.b[1] - 0.1) < 0.02);
	assert_true(isinf(f.se[2]));
	tfit_interval(&f, 2, 0.05, &lo, &hi);
	assert_true(isinf(lo) && isinf(hi));
	tfit_release(&f);
	assert_int_equal(tfit_fit(x, y, 2, 3, true, &f), -EINVAL);
	assert_false(f.ok);
	tfit_release(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_t),
		cmocka_unit_test(test_recovers),
		cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_outliers),
		cmocka_unit_test(test_null_check),
		cmocka_unit_test(test_unreached_column),
		cmocka_unit_test(test_coverage_few_df),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
