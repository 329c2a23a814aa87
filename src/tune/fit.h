/* tune/fit.h - the screen's estimate: a robust linear fit of the mirror pairs' log-score
 * differences on the design's columns (Huber's M-estimate by iteratively reweighted least
 * squares), with standard errors and Student-t intervals from the residuals, and the null
 * check of the unused columns. Pure: no I/O. */
#ifndef NASTUNE_TUNE_FIT_H
#define NASTUNE_TUNE_FIT_H

#include <stdbool.h>
#include <stddef.h>

/* The most parameters one fit takes. */
#define TFIT_MAXP 96
/* Huber's tuning constant: 95% efficiency under normal noise. */
#define TFIT_HUBER_C 1.345

struct tfit {
	size_t n, p, df;      /* rows, parameters, n - p */
	double b[TFIT_MAXP];  /* the estimates */
	double se[TFIT_MAXP]; /* their standard errors */
	double scale;	      /* the residuals' robust scale (MAD) */
	double sigma;	      /* the noise per row the standard errors assume */
	double *resid;	      /* n residuals (malloc'd; tfit_release frees) */
	double *w;	      /* n final weights in [0, 1] (1: not down-weighted) */
	bool ok;	      /* false: too few rows, or a column with no information */
};

/* Fits y[0..n) = x[n * p] (row-major) b + e robustly into out. A column that is zero on every
 * row (a candidate no run tried) gets b 0 and se INFINITY without failing the rest. With
 * huber false: ordinary least squares (for comparison). Returns 0, or -EINVAL (p 0 or above
 * TFIT_MAXP, or n <= p: no residual to estimate the noise from) with out->ok false. */
int tfit_fit(const double *x, const double *y, size_t n, size_t p, bool huber, struct tfit *out);
void tfit_release(struct tfit *f);

/* The bounds of b[j] each at one-sided level alpha (the interval's coverage 1 - 2 alpha);
 * lo/hi infinite when the fit has no estimate of j. */
void tfit_interval(const struct tfit *f, size_t j, double alpha, double *lo, double *hi);

/* Student's t distribution: P(T <= t) with df degrees of freedom, and its quantile q with
 * P(T <= q) = p (0 < p < 1). */
double tfit_t_cdf(double t, double df);
double tfit_t_quantile(double p, double df);

/* The null check: z[q * n] holds q contrasts over the fit's rows (one unused design column
 * each, zero off its replicate), each orthogonal to the fitted columns. Each contrast of the
 * residuals as the fit weighs them (clipped at Huber's c), scaled by their spread, is about
 * N(0, 1) when the noise model holds and the design's columns carry every effect. */
struct tfit_null {
	size_t q;	/* contrasts used */
	double mean_sq; /* the mean of their squares: about 1 */
	double max_sq;	/* the largest square */
	bool ok;	/* max_sq within the chi-square(1) quantile at 1% over q contrasts */
};
void tfit_null_check(const struct tfit *f, const signed char *z, size_t q, struct tfit_null *out);

#endif
