/* run.c - what every workload does through its run: paths inside the scratch directory,
 * driver failures and interruptions, the metrics recorded, whole-file writes and reads, and
 * the latency histograms of request-sized metrics. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "xmalloc.h"

void
run_path(const struct run *r, char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(out, len, "%s/", r->scratch);

	va_start(ap, fmt);
	vsnprintf(out + n, len - (size_t)n, fmt, ap);
	va_end(ap);
}

int
run_fail(const struct run *r, struct bench_conn *c, int rc, const char *what, const char *path,
	 char *err)
{
	if (stopped(r)) {
		snprintf(err, 512, "interrupted");
		return -EINTR;
	}
	snprintf(err, 512, "%s: %s %s: %s", bench_workload_name(r->w), what, path,
		 c ? r->d->error(c) : strerror(-rc));
	return rc < 0 ? rc : -EIO;
}

int
run_check_stop(const struct run *r, char *err)
{
	if (!stopped(r))
		return 0;
	snprintf(err, 512, "interrupted");
	return -EINTR;
}

void
run_record(struct run *r, const char *name, const char *unit, double v, bool cold)
{
	struct metric *m = NULL;
	size_t i;

	if (!r->measuring)
		return;
	for (i = 0; i < r->nm; i++)
		if (strcmp(r->m[i].name, name) == 0)
			m = &r->m[i];
	if (!m) {
		if (r->nm == MAX_METRICS)
			return;
		m = &r->m[r->nm++];
		m->name = name;
		m->unit = unit;
		m->pass = -1;
		m->cold = cold;
	}
	m->v = xreallocarray(m->v, m->n + 1, sizeof(*m->v));
	m->v[m->n++] = v;
}

struct metric *
run_metric(struct run *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nm; i++)
		if (strcmp(r->m[i].name, name) == 0)
			return &r->m[i];
	return NULL;
}

void
run_durable(struct run *r, const char *name, bool flush_timed, double unflushed)
{
	struct metric *m = run_metric(r, name);
	bool flushed = flush_timed && !r->d->flush_noop;

	if (!m || !r->measuring)
		return;
	m->durability = flushed ? "flushed" : "unflushed";
	if (flushed) {
		m->uf = xreallocarray(m->uf, m->nuf + 1, sizeof(*m->uf));
		m->uf[m->nuf++] = unflushed;
	}
}

int
run_write_file(const struct run *r, struct bench_conn *c, const char *path, uint64_t size,
	       size_t blk, bool flush, double *fsecs, char *err)
{
	struct bench_file *f;
	uint64_t off;
	double tf = 0;
	int rc, rc2;

	if (fsecs)
		*fsecs = 0;

	if ((rc = r->d->open(c, path, BENCH_WR | BENCH_CREATE, &f)) < 0)
		return run_fail(r, c, rc, "open", path, err);
	for (off = 0; off < size; off += blk) {
		size_t n = size - off < blk ? (size_t)(size - off) : blk;
		ssize_t w;

		if ((rc = run_check_stop(r, err)) < 0)
			break;
		w = r->d->pwrite(c, f, r->buf + (off % (BUFSZ - blk + 1)), n, off);
		if (w < 0 || (size_t)w != n) {
			rc = run_fail(r, c, w < 0 ? (int)w : -EIO, "write", path, err);
			break;
		}
	}
	if (rc == 0 && flush) {
		tf = timeutil_mono();
		if ((rc = r->d->flush(c, f)) < 0)
			rc = run_fail(r, c, rc, "flush", path, err);
		if (fsecs)
			*fsecs = timeutil_mono() - tf;
	}
	rc2 = r->d->close(c, f);
	if (rc == 0 && rc2 < 0)
		rc = run_fail(r, c, rc2, "close", path, err);
	return rc;
}

int
run_read_file(const struct run *r, struct bench_conn *c, const char *path, size_t blk,
	      uint64_t *bytes, char *err)
{
	struct bench_file *f;
	uint64_t off = 0;
	int rc, rc2;

	if ((rc = r->d->open(c, path, BENCH_RD, &f)) < 0)
		return run_fail(r, c, rc, "open", path, err);
	for (;;) {
		ssize_t n;

		if ((rc = run_check_stop(r, err)) < 0)
			break;
		n = r->d->pread(c, f, r->rbuf, blk, off);
		if (n < 0) {
			rc = run_fail(r, c, (int)n, "read", path, err);
			break;
		}
		off += (uint64_t)n;
		if ((size_t)n < blk)
			break;
	}
	rc2 = r->d->close(c, f);
	if (rc == 0 && rc2 < 0)
		rc = run_fail(r, c, rc2, "close", path, err);
	*bytes = off;
	return rc;
}

int
run_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
run_latency_summary(struct run *r, const char *name, double *lat, size_t n)
{
	struct metric *m = run_metric(r, name);
	size_t i;

	qsort(lat, n, sizeof(*lat), run_cmp_double);
	if (m && r->measuring) {
		if (!m->hist)
			m->hist = xcalloc(BENCH_HIST_BUCKETS, sizeof(*m->hist));
		for (i = 0; i < n; i++) {
			unsigned b = 0;

			while (b < BENCH_HIST_BUCKETS - 1 && lat[i] >= (double)(1u << b))
				b++;
			m->hist[b]++;
		}
	}
	return bench_quantile(lat, n, 0.99);
}

void
run_lat_pool(struct run *r, const char *name, const char *rw, uint64_t bs, const double *us,
	     size_t n, double span)
{
	struct metric *m = run_metric(r, name);
	size_t i;

	if (!m || !r->measuring)
		return;
	if (!m->lh)
		m->lh = bench_lathist_new();
	m->rw = rw;
	m->bs = bs;
	for (i = 0; i < n; i++)
		bench_lathist_add(m->lh, us[i] / 1e6);
	bench_lathist_span(m->lh, span);
}
