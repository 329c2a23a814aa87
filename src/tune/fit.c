/* tune/fit.c - the screen's estimate (fit.h): weighted least squares by Cholesky, Huber's
 * reweighting with a MAD scale, Huber's covariance correction, Student-t quantiles. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "xmalloc.h"

#define IRLS_ITER 50

/* Cholesky factor of a[p * p] in place (lower); false when not positive definite. */
static bool
cholesky(double *a, size_t p)
{
	for (size_t j = 0; j < p; j++) {
		double s = a[j * p + j];

		for (size_t k = 0; k < j; k++)
			s -= a[j * p + k] * a[j * p + k];
		if (!(s > 1e-12))
			return false;
		a[j * p + j] = sqrt(s);
		for (size_t i = j + 1; i < p; i++) {
			double t = a[i * p + j];

			for (size_t k = 0; k < j; k++)
				t -= a[i * p + k] * a[j * p + k];
			a[i * p + j] = t / a[j * p + j];
		}
	}
	return true;
}

/* Solves L L' v = v in place. */
static void
chol_solve(const double *l, size_t p, double *v)
{
	for (size_t i = 0; i < p; i++) {
		for (size_t k = 0; k < i; k++)
			v[i] -= l[i * p + k] * v[k];
		v[i] /= l[i * p + i];
	}
	for (size_t i = p; i-- > 0;) {
		for (size_t k = i + 1; k < p; k++)
			v[i] -= l[k * p + i] * v[k];
		v[i] /= l[i * p + i];
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median absolute residual over 0.6745: a standard deviation an outlier barely moves. */
static double
mad_scale(const double *r, size_t n)
{
	double *a = xmalloc(n * sizeof(*a)), m;

	for (size_t i = 0; i < n; i++)
		a[i] = fabs(r[i]);
	qsort(a, n, sizeof(*a), cmp_double);
	m = n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
	free(a);
	return m / 0.6745;
}

/* Weighted least squares over the used columns (use[]) into b; the factor of X'WX in l. */
static bool
wls(const double *x, const double *y, const double *w, size_t n, size_t p, const bool *use,
    double *l, double *b)
{
	memset(l, 0, p * p * sizeof(*l));
	memset(b, 0, p * sizeof(*b));
	for (size_t i = 0; i < n; i++) {
		const double *xi = x + i * p;

		for (size_t j = 0; j < p; j++) {
			if (!use[j] || !xi[j])
				continue;
			b[j] += w[i] * xi[j] * y[i];
			for (size_t k = 0; k <= j; k++)
				if (use[k])
					l[j * p + k] += w[i] * xi[j] * xi[k];
		}
	}
	for (size_t j = 0; j < p; j++) {
		for (size_t k = 0; k < j; k++)
			l[k * p + j] = l[j * p + k];
		if (!use[j]) { /* an identity row keeps the factor regular */
			for (size_t k = 0; k < p; k++)
				l[j * p + k] = l[k * p + j] = 0;
			l[j * p + j] = 1;
		}
	}
	if (!cholesky(l, p))
		return false;
	chol_solve(l, p, b);
	return true;
}

static void
residuals(const double *x, const double *y, const double *b, size_t n, size_t p, double *r)
{
	for (size_t i = 0; i < n; i++) {
		double f = 0;

		for (size_t j = 0; j < p; j++)
			f += x[i * p + j] * b[j];
		r[i] = y[i] - f;
	}
}

/* Huber's covariance, K^2 (sum psi^2 / (n - p)) / mean(psi')^2 s^2 (X'X)^-1: returns K, with
 * sum psi^2 in *psi2 and mean psi' in *m; 0 when no residual is inside c. */
static double
huber_factor(const double *r, size_t n, size_t pu, double s, bool huber, double *psi2, double *m)
{
	double v = 0;

	*psi2 = *m = 0;
	for (size_t i = 0; i < n; i++) {
		double u = r[i] / s, ps = huber ? fmax(-TFIT_HUBER_C, fmin(TFIT_HUBER_C, u)) : u;

		*psi2 += ps * ps;
		*m += !huber || fabs(u) <= TFIT_HUBER_C;
	}
	*m /= (double)n;
	for (size_t i = 0; i < n; i++) {
		double d = !huber || fabs(r[i] / s) <= TFIT_HUBER_C;

		v += (d - *m) * (d - *m);
	}
	v /= (double)n;
	if (!(*m > 0))
		return 0;
	return 1 + (double)pu / (double)n * v / (*m * *m);
}

int
tfit_fit(const double *x, const double *y, size_t n, size_t p, bool huber, struct tfit *out)
{
	double *l = NULL, *w, b[TFIT_MAXP], s, m = 0, psi2 = 0, k, unit[TFIT_MAXP];
	bool use[TFIT_MAXP];
	size_t pu = 0;

	memset(out, 0, sizeof(*out));
	out->n = n;
	out->p = p;
	if (!p || p > TFIT_MAXP)
		return -EINVAL;
	for (size_t j = 0; j < p; j++) {
		use[j] = false;
		for (size_t i = 0; i < n && !use[j]; i++)
			use[j] = x[i * p + j] != 0;
		pu += use[j];
		out->se[j] = INFINITY;
	}
	if (n <= pu)
		return -EINVAL;
	out->df = n - pu;
	out->resid = xcalloc(n, sizeof(*out->resid));
	out->w = w = xmalloc(n * sizeof(*w));
	l = xmalloc(p * p * sizeof(*l));
	for (size_t i = 0; i < n; i++)
		w[i] = 1;
	if (!wls(x, y, w, n, p, use, l, b))
		goto fail;
	residuals(x, y, b, n, p, out->resid);
	s = mad_scale(out->resid, n);
	for (int it = 0; huber && it < IRLS_ITER && s > 0; it++) {
		double prev[TFIT_MAXP], moved = 0;

		for (size_t i = 0; i < n; i++) {
			double u = fabs(out->resid[i]) / s;

			w[i] = u <= TFIT_HUBER_C ? 1 : TFIT_HUBER_C / u;
		}
		memcpy(prev, b, p * sizeof(*b));
		if (!wls(x, y, w, n, p, use, l, b))
			goto fail;
		residuals(x, y, b, n, p, out->resid);
		s = mad_scale(out->resid, n);
		for (size_t j = 0; j < p; j++)
			moved = fmax(moved, fabs(b[j] - prev[j]));
		if (moved < 1e-10 * fmax(s, 1e-12))
			break;
	}
	/* The noise scale: the robust one for Huber's, the residual mean square for least
	 * squares; either falls back on the other when the residuals are mostly 0. */
	{
		double rss = 0;

		for (size_t i = 0; i < n; i++)
			rss += out->resid[i] * out->resid[i];
		rss = sqrt(rss / (double)out->df);
		/* While the degrees of freedom are few (under twice the columns), never below the
		 * root mean square over them: the residuals' MAD (the fit pulls them towards 0)
		 * understates the noise, and 90% intervals at 3 df excluded 0 in 20% of columns
		 * without an effect. */
		if (!huber || !(s > 0) || (rss > s && out->df < 2 * pu))
			s = rss;
	}
	if (!(s > 0))
		s = 1e-12;
	if ((k = huber_factor(out->resid, n, pu, s, huber, &psi2, &m)) <= 0)
		goto fail;
	for (size_t i = 0; i < n; i++)
		w[i] = 1;
	if (!wls(x, y, w, n, p, use, l, unit)) /* the factor of X'X */
		goto fail;
	for (size_t i = 0; huber && i < n; i++) {
		double u = fabs(out->resid[i]) / s;

		w[i] = u <= TFIT_HUBER_C ? 1 : TFIT_HUBER_C / u;
	}
	out->sigma = k * s * sqrt(psi2 / (double)out->df) / m;
	for (size_t j = 0; j < p; j++) {
		if (!use[j]) {
			b[j] = 0;
			continue;
		}
		memset(unit, 0, p * sizeof(*unit));
		unit[j] = 1;
		chol_solve(l, p, unit);
		out->se[j] = out->sigma * sqrt(unit[j]);
	}
	memcpy(out->b, b, p * sizeof(*b));
	out->scale = s;
	out->ok = true;
	free(l);
	return 0;
fail:
	free(l);
	tfit_release(out); /* a failed fit holds nothing */
	out->ok = false;
	return -EINVAL;
}

void
tfit_release(struct tfit *f)
{
	free(f->resid);
	free(f->w);
	f->resid = f->w = NULL;
}

/* The continued fraction of the regularized incomplete beta function (Lentz). */
static double
betacf(double a, double b, double x)
{
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	d = 1 / (fabs(d) < 1e-300 ? 1e-300 : d);
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2)), del;

		d = 1 + aa * d;
		d = 1 / (fabs(d) < 1e-300 ? 1e-300 : d);
		c = 1 + aa / c;
		c = fabs(c) < 1e-300 ? 1e-300 : c;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + aa * d;
		d = 1 / (fabs(d) < 1e-300 ? 1e-300 : d);
		c = 1 + aa / c;
		c = fabs(c) < 1e-300 ? 1e-300 : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-14)
			break;
	}
	return h;
}

/* I_x(a, b). */
static double
ibeta(double a, double b, double x)
{
	double lb;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lb = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lb) * betacf(a, b, x) / a;
	return 1 - exp(lb) * betacf(b, a, 1 - x) / b;
}

double
tfit_t_cdf(double t, double df)
{
	double tail = 0.5 * ibeta(df / 2, 0.5, df / (df + t * t));

	return t >= 0 ? 1 - tail : tail;
}

double
tfit_t_quantile(double p, double df)
{
	double lo = -1e3, hi = 1e3;

	if (p == 0.5)
		return 0;
	for (int i = 0; i < 200 && hi - lo > 1e-12; i++) {
		double mid = (lo + hi) / 2;

		if (tfit_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

void
tfit_interval(const struct tfit *f, size_t j, double alpha, double *lo, double *hi)
{
	double q;

	if (!f->ok || j >= f->p || !isfinite(f->se[j]) || !f->df) {
		*lo = -INFINITY;
		*hi = INFINITY;
		return;
	}
	q = tfit_t_quantile(1 - alpha, (double)f->df);
	*lo = f->b[j] - q * f->se[j];
	*hi = f->b[j] + q * f->se[j];
}

void
tfit_null_check(const struct tfit *f, const signed char *z, size_t q, struct tfit_null *out)
{
	double psi2 = 0, sigma, lim, *psi;

	memset(out, 0, sizeof(*out));
	out->ok = true;
	if (!f->ok || !(f->scale > 0) || !f->df)
		return;
	/* The residuals as the fit weighs them (clipped at Huber's c): an outlier the fit
	 * discounted must not fail the check either. */
	psi = xmalloc(f->n * sizeof(*psi));
	for (size_t i = 0; i < f->n; i++) {
		double u = f->resid[i] / f->scale;

		psi[i] = u > TFIT_HUBER_C ? TFIT_HUBER_C : u < -TFIT_HUBER_C ? -TFIT_HUBER_C : u;
		psi2 += psi[i] * psi[i];
	}
	sigma = sqrt(psi2 / (double)f->df);
	for (size_t u = 0; u < q; u++) {
		double c = 0, nn = 0, sq;

		for (size_t i = 0; i < f->n; i++) {
			c += z[u * f->n + i] * psi[i];
			nn += z[u * f->n + i] * z[u * f->n + i];
		}
		if (!(nn > 0) || !(sigma > 0))
			continue;
		sq = c * c / (nn * sigma * sigma);
		out->mean_sq += sq;
		out->max_sq = fmax(out->max_sq, sq);
		out->q++;
	}
	free(psi);
	if (!out->q)
		return;
	out->mean_sq /= (double)out->q;
	/* chi-square(1) at 1% shared by q: the square of t's two-sided quantile at df */
	lim = tfit_t_quantile(1 - 0.005 / (double)out->q, (double)f->df);
	out->ok = out->max_sq <= lim * lim;
}
