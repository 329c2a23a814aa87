/* workload_meta.c - the metadata workloads: metadata (create, list and stat a directory of
 * empty entries, hot and after the page cache was dropped), big-dir (lookups, creates and a
 * listing in one directory of --entries files) and source-tree (`make -n`'s stats over a
 * tree of --tree-files files, cold and hot). */
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

/* ---- big-dir: one directory of --entries files ---- */

/* How many of each operation a big-dir run times: enough for stable percentiles, few enough
 * that a run of a 50,000-entry directory stays in seconds where lookups are O(n); a tune asks
 * for fewer (dir_ops) to time-box its calls. */
static unsigned
bigdir_ops(const struct run *r)
{
	unsigned n = r->o.dir_ops ? r->o.dir_ops : BENCH_DIR_OPS;

	return r->o.meta_entries < n ? r->o.meta_entries : n;
}

/* The big directory: in a kept scratch directory one per entry count, made once and kept
 * (a tune measures it in dozens of calls: 2000 creates over SMB take seconds), else "big". */
static void
bigdir_name(const struct run *r, char *name, size_t len)
{
	if (r->o.keep_scratch)
		snprintf(name, len, KEPT_BIG_DIR, r->o.meta_entries);
	else
		snprintf(name, len, "big");
}

int
wl_bigdir_setup(struct run *r)
{
	struct bench_file *f;
	struct bench_stat st;
	char p[256], q[256], name[32];
	unsigned i;
	int rc;

	bigdir_name(r, name, sizeof(name));
	run_path(r, q, sizeof(q), "%s", name);
	if (r->o.keep_scratch && r->d->stat(r->c, q, &st) == 0 && st.is_dir)
		return 0;
	/* Made under a name the end of the run removes, kept only once whole. */
	run_path(r, p, sizeof(p), "big");
	if ((rc = r->d->mkdir(r->c, p)) < 0)
		return run_fail(r, r->c, rc, "mkdir", p, r->err);
	for (i = 0; i < r->o.meta_entries; i++) {
		run_path(r, p, sizeof(p), "big/f%06u.dat", i);
		if ((rc = run_check_stop(r, r->err)) < 0)
			return rc;
		if ((rc = r->d->open(r->c, p, BENCH_WR | BENCH_CREATE, &f)) < 0)
			return run_fail(r, r->c, rc, "create", p, r->err);
		r->d->close(r->c, f);
	}
	run_path(r, p, sizeof(p), "big");
	if (r->o.keep_scratch && (rc = r->d->rename(r->c, p, q)) < 0)
		return run_fail(r, r->c, rc, "rename", p, r->err);
	return 0;
}

/* One timed loop of n operations on the big directory: kind 0 looks up missing names, 1
 * existing ones (spread over the directory), 2 creates new ones, 3 removes them again. */
static int
bigdir_loop(struct run *r, int kind, unsigned n, double *lat, double *span)
{
	char dir[32];
	static const char *const what[] = { "lookup of a missing name", "lookup", "create",
					    "unlink" };
	struct bench_stat st;
	struct bench_file *f;
	unsigned i, step = n ? r->o.meta_entries / n : 1;
	double t0 = timeutil_mono(), t1;
	char p[256];
	int rc = 0;

	bigdir_name(r, dir, sizeof(dir));
	for (i = 0; i < n; i++) {
		if (kind == 0) /* a name there in no case: a case-insensitive server scans */
			run_path(r, p, sizeof(p), "%s/x%06u.dat", dir, i);
		else if (kind == 1)
			run_path(r, p, sizeof(p), "%s/f%06u.dat", dir, i * step);
		else
			run_path(r, p, sizeof(p), "%s/n%06u.dat", dir, i);
		if ((rc = run_check_stop(r, r->err)) < 0)
			return rc;
		t1 = timeutil_mono();
		if (kind == 0 || kind == 1)
			rc = r->d->stat(r->c, p, &st);
		else if (kind == 2 && (rc = r->d->open(r->c, p, BENCH_WR | BENCH_CREATE, &f)) == 0)
			r->d->close(r->c, f);
		else if (kind == 3)
			rc = r->d->unlink(r->c, p);
		lat[i] = (timeutil_mono() - t1) * 1e6;
		if (kind == 0 && rc == -ENOENT)
			rc = 0;
		else if (kind == 0 && rc == 0)
			rc = -EEXIST;
		if (rc < 0)
			return run_fail(r, r->c, rc, what[kind], p, r->err);
	}
	*span = since(t0);
	return 0;
}

/* A kept big directory a failed run may have left with other entries goes: renamed to the
 * name the end of the run removes, so that the next run makes it anew. */
static void
bigdir_drop(struct run *r)
{
	char p[256], q[256], name[32];

	bigdir_name(r, name, sizeof(name));
	run_path(r, q, sizeof(q), "%s", name);
	run_path(r, p, sizeof(p), "big");
	(void)r->d->rename(r->c, q, p);
}

int
wl_bigdir_run(struct run *r)
{
	static const char *const names[] = { "lookup-miss", "lookup-hit", "create" };
	unsigned n = bigdir_ops(r), seen = 0, want = r->o.meta_entries + n;
	double *lat = xcalloc(n ? n : 1, sizeof(*lat)), span, t0;
	char p[256], dir[32];
	int k, rc = 0;

	for (k = 0; k < 3 && rc == 0; k++) {
		if ((rc = bigdir_loop(r, k, n, lat, &span)) == 0) {
			run_record(r, names[k], "ops/s", n / span, r->cold);
			run_lat_pool(r, names[k], "", 0, lat, n, span);
		}
	}
	if (rc == 0) {
		/* The listing holds the creates too: a client lists what is there. */
		bigdir_name(r, dir, sizeof(dir));
		run_path(r, p, sizeof(p), "%s", dir);
		t0 = timeutil_mono();
		if ((rc = r->d->list(r->c, p, count_entry, &seen)) < 0) {
			rc = run_fail(r, r->c, rc, "list", p, r->err);
		} else if (seen != want) {
			snprintf(r->err, sizeof(r->err),
				 "big-dir: listing %s gave %u entries, not %u", p, seen, want);
			rc = -EIO;
		} else {
			span = since(t0);
			lat[0] = span * 1e6;
			run_record(r, "list", "ops/s", want / span, r->cold);
			run_lat_pool(r, "list", "", 0, lat, 1, span);
		}
	}
	/* The next run starts from the same directory. */
	if (rc == 0)
		rc = bigdir_loop(r, 3, n, lat, &span);
	if (rc < 0 && rc != -EINTR && r->o.keep_scratch)
		bigdir_drop(r);
	free(lat);
	snprintf(r->note, sizeof(r->note),
		 "%u entries in one directory; %u lookups of missing and of existing names, %u "
		 "creates; list = entries listed per second",
		 r->o.meta_entries, n, n);
	return rc;
}

/* ---- source-tree: `make -n` over a tree of --tree-files files ---- */

#define TREE_FANOUT 16 /* files per directory, directories per directory */

/* The path of file i of the tree (suffix "c" for a source, "o" for its missing object). */
static void
tree_path(const struct run *r, char *p, size_t len, unsigned i, const char *suffix)
{
	unsigned leaf = i / TREE_FANOUT;

	run_path(r, p, len, "tree/d%02u/e%02u/f%02u.%s", leaf / TREE_FANOUT, leaf % TREE_FANOUT,
		 i % TREE_FANOUT, suffix);
}

int
wl_tree_setup(struct run *r)
{
	unsigned n = r->o.tree_files, i, leaves = (n + TREE_FANOUT - 1) / TREE_FANOUT;
	struct bench_file *f;
	char p[256];
	int rc;

	run_path(r, p, sizeof(p), "tree");
	if ((rc = r->d->mkdir(r->c, p)) < 0)
		return run_fail(r, r->c, rc, "mkdir", p, r->err);
	for (i = 0; i < leaves; i++) {
		if (i % TREE_FANOUT == 0) {
			run_path(r, p, sizeof(p), "tree/d%02u", i / TREE_FANOUT);
			if ((rc = r->d->mkdir(r->c, p)) < 0)
				return run_fail(r, r->c, rc, "mkdir", p, r->err);
		}
		run_path(r, p, sizeof(p), "tree/d%02u/e%02u", i / TREE_FANOUT, i % TREE_FANOUT);
		if ((rc = r->d->mkdir(r->c, p)) < 0)
			return run_fail(r, r->c, rc, "mkdir", p, r->err);
	}
	for (i = 0; i < n; i++) {
		tree_path(r, p, sizeof(p), i, "c");
		if ((rc = run_check_stop(r, r->err)) < 0)
			return rc;
		if ((rc = r->d->open(r->c, p, BENCH_WR | BENCH_CREATE, &f)) < 0)
			return run_fail(r, r->c, rc, "create", p, r->err);
		r->d->close(r->c, f);
	}
	return 0;
}

/* One walk as `make -n` does it: each source stat'ed, and its object looked for (missing). */
static int
tree_pass(struct run *r, struct bench_conn *c, bool cold)
{
	const char *name = cold ? "stat-cold" : "stat-hot";
	unsigned n = r->o.tree_files, i;
	double *lat = xcalloc(2 * (size_t)n, sizeof(*lat)), t0 = timeutil_mono(), t1;
	struct bench_stat st;
	char p[256];
	int rc = 0;

	for (i = 0; i < 2 * n; i++) {
		tree_path(r, p, sizeof(p), i / 2, i % 2 ? "o" : "c");
		if ((rc = run_check_stop(r, r->err)) < 0)
			goto out;
		t1 = timeutil_mono();
		rc = r->d->stat(c, p, &st);
		lat[i] = (timeutil_mono() - t1) * 1e6;
		if (i % 2 && rc == -ENOENT)
			rc = 0;
		else if (i % 2 && rc == 0)
			rc = -EEXIST;
		if (rc < 0) {
			rc = run_fail(r, c, rc, i % 2 ? "stat of a missing object" : "stat", p,
				      r->err);
			goto out;
		}
	}
	run_record(r, name, "ops/s", 2 * n / since(t0), cold);
	run_lat_pool(r, name, "", 0, lat, 2 * (size_t)n, since(t0));
out:
	free(lat);
	return rc;
}

int
wl_tree_run(struct run *r)
{
	struct bench_conn *c;
	int rc;

	/* Cold: a new connection (no client-side caches) after the caller dropped the page cache
	 * when it could; hot: the same walk again at once, as a second `make -n`. */
	if ((rc = r->d->connect(r->t, &c, r->err, sizeof(r->err))) < 0)
		return rc;
	rc = tree_pass(r, c, true);
	if (rc == 0)
		rc = tree_pass(r, c, false);
	r->d->disconnect(c);
	snprintf(r->note, sizeof(r->note),
		 "%u files in %u directories; each file stat'ed and its .o looked for (missing); "
		 "cold = a new connection%s",
		 r->o.tree_files, (r->o.tree_files + TREE_FANOUT - 1) / TREE_FANOUT,
		 !r->cold ? " (page cache not dropped)" : "");
	return rc;
}
