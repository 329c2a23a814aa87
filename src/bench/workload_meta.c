/* workload_meta.c - the metadata workload: create, list and stat a directory of empty
 * entries, hot and after the page cache was dropped. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "workloads.h"
#include "xmalloc.h"

int
wl_meta_setup(struct run *r)
{
	struct bench_file *f;
	char p[256];
	unsigned i;
	int rc;

	run_path(r, p, sizeof(p), "meta");
	if ((rc = r->d->mkdir(r->c, p)) < 0)
		return run_fail(r, r->c, rc, "mkdir", p, r->err);
	for (i = 0; i < r->o.meta_entries; i++) {
		run_path(r, p, sizeof(p), "meta/m%05u", i);
		if ((rc = run_check_stop(r, r->err)) < 0)
			return rc;
		if ((rc = r->d->open(r->c, p, BENCH_WR | BENCH_CREATE, &f)) < 0)
			return run_fail(r, r->c, rc, "create", p, r->err);
		r->d->close(r->c, f);
	}
	return 0;
}

static int
count_entry(const char *name, const struct bench_stat *st, void *arg)
{
	(void)name;
	(void)st;
	(*(unsigned *)arg)++;
	return 0;
}

static int
meta_pass(struct run *r, struct bench_conn *c, bool cold)
{
	static const char *const names[2][3] = {
		{ "stat-hit-hot", "stat-miss-hot", "list-hot" },
		{ "stat-hit-cold", "stat-miss-cold", "list-cold" },
	};
	struct bench_stat st;
	unsigned n = r->o.meta_entries, i, seen = 0;
	char p[256];
	double t0, t1, *lat = xcalloc(n ? n : 1, sizeof(*lat));
	int rc = 0;

	t0 = timeutil_mono();
	for (i = 0; i < n; i++) {
		run_path(r, p, sizeof(p), "meta/m%05u", i);
		if ((rc = run_check_stop(r, r->err)) < 0)
			goto out;
		t1 = timeutil_mono();
		if ((rc = r->d->stat(c, p, &st)) < 0) {
			rc = run_fail(r, c, rc, "stat", p, r->err);
			goto out;
		}
		lat[i] = (timeutil_mono() - t1) * 1e6;
	}
	run_record(r, names[cold][0], "us", since(t0) * 1e6 / n, cold);
	run_lat_pool(r, names[cold][0], "", 0, lat, n, since(t0));
	t0 = timeutil_mono();
	for (i = 0; i < n; i++) {
		run_path(r, p, sizeof(p), "meta/x%05u", i);
		if ((rc = run_check_stop(r, r->err)) < 0)
			goto out;
		t1 = timeutil_mono();
		rc = r->d->stat(c, p, &st);
		lat[i] = (timeutil_mono() - t1) * 1e6;
		if (rc != -ENOENT) {
			rc = run_fail(r, c, rc < 0 ? rc : -EEXIST, "stat of a missing name", p,
				      r->err);
			goto out;
		}
	}
	rc = 0;
	run_record(r, names[cold][1], "us", since(t0) * 1e6 / n, cold);
	run_lat_pool(r, names[cold][1], "", 0, lat, n, since(t0));
	run_path(r, p, sizeof(p), "meta");
	t0 = timeutil_mono();
	if ((rc = r->d->list(c, p, count_entry, &seen)) < 0) {
		rc = run_fail(r, c, rc, "list", p, r->err);
		goto out;
	}
	lat[0] = since(t0) * 1e6;
	run_record(r, names[cold][2], "us", lat[0], cold);
	run_lat_pool(r, names[cold][2], "", 0, lat, 1, lat[0] / 1e6);
	if (seen != n) {
		snprintf(r->err, sizeof(r->err), "metadata: listing %s gave %u entries, not %u", p,
			 seen, n);
		rc = -EIO;
	}
out:
	free(lat);
	return rc;
}

int
wl_meta_run(struct run *r)
{
	struct bench_conn *c;
	int rc;

	/* Cold: a new connection (no client-side caches), after the caller dropped the page
	 * cache when it could; hot: the same names again at once. */
	if ((rc = r->d->connect(r->t, &c, r->err, sizeof(r->err))) < 0)
		return rc;
	rc = meta_pass(r, c, true);
	if (rc == 0)
		rc = meta_pass(r, c, false);
	r->d->disconnect(c);
	snprintf(r->note, sizeof(r->note), "%u entries; cold = a new connection%s",
		 r->o.meta_entries,
		 !r->cold		   ? " (page cache not dropped)"
		 : server_cache_dropped(r) ? " after dropping the page cache"
					   : " after dropping this client's page cache "
					     "(not the server's)");
	return rc;
}
