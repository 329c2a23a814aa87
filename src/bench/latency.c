/* latency.c - request latencies as fio reports completion latency ("clat_ns"): every request
 * counted in a log-linear histogram of nanoseconds (exact below 128 ns, then 64 buckets per
 * power of two: a percentile is within 0.8% of the request it stands for), with the exact
 * minimum, maximum, mean and standard deviation beside it, and the time the requests took
 * for IOPS. Memory is fixed (19 KiB) however many requests and runs are pooled. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "xmalloc.h"

#define SUB 64					 /* buckets per power of two */
#define MAX_EXP 42				 /* 2^42 ns, 73 minutes: longer counts as that */
#define NBUCKETS (2 * SUB + (MAX_EXP - 6) * SUB) /* 128 exact, then 64 per octave */

const double bench_lat_pcts[BENCH_LAT_NPCT] = { 50.0, 90.0, 99.0, 99.9 };

struct bench_lathist {
	uint64_t count[NBUCKETS];
	uint64_t n;
	double min, max, sum, sumsq; /* ns */
	double secs;		     /* wall time the requests took (bench_lathist_span) */
};

struct bench_lathist *
bench_lathist_new(void)
{
	return xcalloc(1, sizeof(struct bench_lathist));
}

void
bench_lathist_free(struct bench_lathist *h)
{
	free(h);
}

static size_t
bucket_of(uint64_t ns)
{
	unsigned e;

	if (ns < 2 * SUB)
		return (size_t)ns;
	e = 63 - (unsigned)__builtin_clzll(ns); /* 7.. */
	if (e >= MAX_EXP)
		return NBUCKETS - 1;
	return 2 * SUB + (size_t)(e - 7) * SUB + (size_t)((ns >> (e - 6)) - SUB);
}

/* The middle of bucket i, in ns. */
static double
bucket_value(size_t i)
{
	size_t k, e;
	double lo, width;

	if (i < 2 * SUB)
		return (double)i;
	k = i - 2 * SUB;
	e = 7 + k / SUB;
	width = ldexp(1.0, (int)e - 6);
	lo = (double)(SUB + k % SUB) * width;
	return lo + width / 2;
}

void
bench_lathist_add(struct bench_lathist *h, double secs)
{
	double ns = secs > 0 ? secs * 1e9 : 0;

	h->count[bucket_of(ns >= 0x1p62 ? (uint64_t)1 << 62 : (uint64_t)llround(ns))]++;
	if (h->n == 0 || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->sum += ns;
	h->sumsq += ns * ns;
	h->n++;
}

void
bench_lathist_span(struct bench_lathist *h, double secs)
{
	if (secs > 0)
		h->secs += secs;
}

void
bench_lathist_summary(const struct bench_lathist *h, struct bench_latency *out)
{
	memset(out, 0, sizeof(*out));
	if (!h || h->n == 0)
		return;
	out->n = h->n;
	out->min_ns = h->min;
	out->max_ns = h->max;
	out->mean_ns = h->sum / (double)h->n;
	out->stddev_ns =
		h->n > 1 ? sqrt(fmax(0, (h->sumsq - h->sum * out->mean_ns) / (double)(h->n - 1)))
			 : 0;
	out->iops = h->secs > 0 ? (double)h->n / h->secs : 0;
	for (size_t p = 0; p < BENCH_LAT_NPCT; p++) {
		/* fio's rank: the request at ceil(p% of n), counted from the fastest */
		uint64_t rank = (uint64_t)ceil(bench_lat_pcts[p] / 100.0 * (double)h->n), seen = 0;
		size_t i;

		if (rank < 1)
			rank = 1;
		for (i = 0; i < NBUCKETS; i++) {
			seen += h->count[i];
			if (seen >= rank)
				break;
		}
		out->pct_ns[p] =
			fmin(fmax(bucket_value(i < NBUCKETS ? i : NBUCKETS - 1), h->min), h->max);
	}
}
