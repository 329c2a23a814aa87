/* workload_small.c - the request-sized workloads: small-files (many 66 KB files), small-io
 * (1 KiB requests, their latencies) and random-io (random offsets in a large file, by request
 * size). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "workloads.h"
#include "xmalloc.h"

int
wl_small_files_setup(struct run *r)
{
	char p[256];
	int rc;

	run_path(r, p, sizeof(p), "sf");
	if ((rc = r->d->mkdir(r->c, p)) < 0)
		return run_fail(r, r->c, rc, "mkdir", p, r->err);
	return 0;
}

int
wl_small_files_run(struct run *r)
{
	unsigned n = r->o.small_files, i;
	struct bench_file *f;
	char p[256], q[256];
	double t0;
	int rc;

	t0 = timeutil_mono();
	for (i = 0; i < n; i++) {
		run_path(r, p, sizeof(p), "sf/e%05u", i);
		if ((rc = run_check_stop(r, r->err)) < 0)
			return rc;
		if ((rc = r->d->open(r->c, p, BENCH_WR | BENCH_CREATE, &f)) < 0)
			return run_fail(r, r->c, rc, "create", p, r->err);
		if ((rc = r->d->close(r->c, f)) < 0)
			return run_fail(r, r->c, rc, "close", p, r->err);
	}
	run_record(r, "create", "files/s", n / since(t0), r->cold);
	t0 = timeutil_mono();
	for (i = 0; i < n; i++) {
		run_path(r, p, sizeof(p), "sf/f%05u", i);
		if ((rc = run_write_file(r, r->c, p, SMALL_FILE, SMALL_FILE, false, NULL, r->err)) <
		    0)
			return rc;
	}
	run_record(r, "copy-in", "files/s", n / since(t0), r->cold);
	run_durable(r, "copy-in", false, 0); /* as a Finder copy: no flush per file */
	t0 = timeutil_mono();
	for (i = 0; i < n; i++) {
		uint64_t got;

		run_path(r, p, sizeof(p), "sf/f%05u", i);
		if ((rc = run_read_file(r, r->c, p, READ_BLOCK(r), &got, r->err)) < 0)
			return rc;
		if (got != SMALL_FILE) {
			snprintf(r->err, sizeof(r->err), "small-files: %s has %llu bytes, not %u",
				 p, (unsigned long long)got, SMALL_FILE);
			return -EIO;
		}
	}
	run_record(r, "copy-out", "files/s", n / since(t0), r->cold);
	t0 = timeutil_mono();
	for (i = 0; i < n; i++) {
		run_path(r, p, sizeof(p), "sf/f%05u", i);
		run_path(r, q, sizeof(q), "sf/g%05u", i);
		if ((rc = run_check_stop(r, r->err)) < 0)
			return rc;
		if ((rc = r->d->rename(r->c, p, q)) < 0)
			return run_fail(r, r->c, rc, "rename", p, r->err);
	}
	run_record(r, "rename", "files/s", n / since(t0), r->cold);
	t0 = timeutil_mono();
	for (i = 0; i < n; i++) {
		run_path(r, q, sizeof(q), "sf/g%05u", i);
		if ((rc = run_check_stop(r, r->err)) < 0)
			return rc;
		if ((rc = r->d->unlink(r->c, q)) < 0)
			return run_fail(r, r->c, rc, "delete", q, r->err);
	}
	run_record(r, "delete", "files/s", n / since(t0), r->cold);
	for (i = 0; i < n; i++) {
		run_path(r, p, sizeof(p), "sf/e%05u", i);
		if ((rc = r->d->unlink(r->c, p)) < 0)
			return run_fail(r, r->c, rc, "unlink", p, r->err);
	}
	return 0;
}

int
wl_small_io_setup(struct run *r)
{
	char p[256];

	run_path(r, p, sizeof(p), "smallio-r.dat");
	return run_write_file(r, r->c, p, r->o.small_io_read, WRITE_BLOCK(r), true, NULL, r->err);
}

int
wl_small_io_run(struct run *r)
{
	uint64_t nw = (r->o.small_io_write + 1023) / 1024, nr = (r->o.small_io_read + 1023) / 1024;
	double *lat = xcalloc(nw > nr ? nw : nr, sizeof(*lat)), t0, t1, p99, tf = 0, t, span;
	struct bench_file *f;
	char p[256];
	uint64_t i;
	int rc;

	run_path(r, p, sizeof(p), "smallio-w.dat");
	if ((rc = r->d->open(r->c, p, BENCH_WR | BENCH_CREATE, &f)) < 0) {
		rc = run_fail(r, r->c, rc, "open", p, r->err);
		goto out;
	}
	t0 = timeutil_mono();
	for (i = 0; i < nw && rc == 0; i++) {
		ssize_t n;

		if ((rc = run_check_stop(r, r->err)) < 0)
			break;
		t1 = timeutil_mono();
		n = r->d->pwrite(r->c, f, r->buf + (i % 4096) * 1024, 1024, i * 1024);
		lat[i] = (timeutil_mono() - t1) * 1e6;
		if (n != 1024)
			rc = run_fail(r, r->c, n < 0 ? (int)n : -EIO, "write", p, r->err);
	}
	t1 = timeutil_mono();
	span = t1 - t0;
	if (rc == 0 && (rc = r->d->flush(r->c, f)) < 0)
		rc = run_fail(r, r->c, rc, "flush", p, r->err);
	tf = timeutil_mono() - t1;
	r->d->close(r->c, f);
	if (rc < 0)
		goto out;
	t = since(t0);
	run_record(r, "write-1k", "MB/s", mbps(nw * 1024, t), r->cold);
	run_durable(r, "write-1k", true, mbps(nw * 1024, t - tf));
	run_lat_pool(r, "write-1k", "write", 1024, lat, nw, span);
	run_record(r, "write-1k-p99", "us", 0, r->cold);
	run_durable(r, "write-1k-p99", false, 0); /* each write's own latency */
	p99 = run_latency_summary(r, "write-1k-p99", lat, nw);
	if (r->measuring)
		run_metric(r, "write-1k-p99")->v[run_metric(r, "write-1k-p99")->n - 1] = p99;
	if ((rc = r->d->unlink(r->c, p)) < 0) {
		rc = run_fail(r, r->c, rc, "unlink", p, r->err);
		goto out;
	}

	run_path(r, p, sizeof(p), "smallio-r.dat");
	if ((rc = r->d->open(r->c, p, BENCH_RD, &f)) < 0) {
		rc = run_fail(r, r->c, rc, "open", p, r->err);
		goto out;
	}
	t0 = timeutil_mono();
	for (i = 0; i < nr && rc == 0; i++) {
		ssize_t n;

		if ((rc = run_check_stop(r, r->err)) < 0)
			break;
		t1 = timeutil_mono();
		n = r->d->pread(r->c, f, r->rbuf, 1024, i * 1024);
		lat[i] = (timeutil_mono() - t1) * 1e6;
		if (n < 0)
			rc = run_fail(r, r->c, (int)n, "read", p, r->err);
	}
	span = since(t0);
	r->d->close(r->c, f);
	if (rc < 0)
		goto out;
	run_record(r, "read-1k", "MB/s", mbps(nr * 1024, span), r->cold);
	run_lat_pool(r, "read-1k", "read", 1024, lat, nr, span);
	run_record(r, "read-1k-p99", "us", 0, r->cold);
	p99 = run_latency_summary(r, "read-1k-p99", lat, nr);
	if (r->measuring)
		run_metric(r, "read-1k-p99")->v[run_metric(r, "read-1k-p99")->n - 1] = p99;
out:
	free(lat);
	return rc;
}

static const struct {
	size_t rec;
	const char *rd, *wr;
} records[] = {
	{ 4096, "read-4k", "write-4k" },
	{ 512u << 10, "read-512k", "write-512k" },
	{ 16u << 20, "read-16m", "write-16m" },
};

uint64_t
wl_random_file_size(const struct bench_opts *o)
{
	uint64_t sz = o->size > (16u << 20) ? o->size : (16u << 20);

	if (sz > UINT64_MAX - (16u << 20))
		return UINT64_MAX;
	return (sz + (16u << 20) - 1) / (16u << 20) * (16u << 20);
}

int
wl_random_setup(struct run *r)
{
	char p[256];

	run_path(r, p, sizeof(p), "random.dat");
	return run_write_file(r, r->c, p, wl_random_file_size(&r->o), WRITE_BLOCK(r), true, NULL,
			      r->err);
}

int
wl_random_run(struct run *r)
{
	uint64_t fsize = wl_random_file_size(&r->o);
	uint64_t volume = r->o.size < (256u << 20) ? r->o.size : (256u << 20);
	double *lat = NULL, span;
	struct bench_file *f;
	char p[256];
	size_t k;
	int rc;

	run_path(r, p, sizeof(p), "random.dat");
	if ((rc = r->d->open(r->c, p, BENCH_RD | BENCH_WR, &f)) < 0)
		return run_fail(r, r->c, rc, "open", p, r->err);
	for (k = 0; k < sizeof(records) / sizeof(records[0]) && rc == 0; k++) {
		uint64_t nops = volume / records[k].rec, slots = fsize / records[k].rec, i;
		double t0, tf, t;
		int dir;

		if (nops < 4)
			nops = 4;
		lat = xreallocarray(lat, nops, sizeof(*lat));
		for (dir = 0; dir < 2 && rc == 0; dir++) {
			t0 = timeutil_mono();
			for (i = 0; i < nops; i++) {
				uint64_t off = (bench_rand(&r->rng) % slots) * records[k].rec;
				double t1 = timeutil_mono();
				ssize_t n;

				if ((rc = run_check_stop(r, r->err)) < 0)
					break;
				n = dir == 0 ? r->d->pread(r->c, f, r->rbuf, records[k].rec, off)
					     : r->d->pwrite(r->c, f, r->buf, records[k].rec, off);
				lat[i] = (timeutil_mono() - t1) * 1e6;
				if (n != (ssize_t)records[k].rec) {
					rc = run_fail(r, r->c, n < 0 ? (int)n : -EIO,
						      dir ? "write" : "read", p, r->err);
					break;
				}
			}
			tf = timeutil_mono();
			span = tf - t0;
			if (rc == 0 && dir == 1 && (rc = r->d->flush(r->c, f)) < 0)
				rc = run_fail(r, r->c, rc, "flush", p, r->err);
			tf = timeutil_mono() - tf;
			t = since(t0);
			if (rc == 0) {
				run_record(r, dir ? records[k].wr : records[k].rd, "MB/s",
					   mbps(nops * records[k].rec, t), r->cold);
				run_lat_pool(r, dir ? records[k].wr : records[k].rd,
					     dir ? "randwrite" : "randread", records[k].rec, lat,
					     nops, span);
			}
			if (rc == 0 && dir == 1)
				run_durable(r, records[k].wr, true,
					    mbps(nops * records[k].rec, t - tf));
		}
	}
	r->d->close(r->c, f);
	free(lat);
	return rc;
}
