/* test_bench_engine.c - every workload on the null driver: operation counts, results,
 * scratch cleanup, free-space and Time Machine refusals, stale scratch, a driver failing
 * mid-run, interruption, cold runs, JSON round trip and reports. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "bench/drv_null.h"
#include "bench/scratch.h"
#include "fsutil.h"
#include "unit.h"
#include "xmalloc.h"

/* Parses url and holds a connection to its store so its tree can be inspected. */
struct held {
	struct bench_target t;
	struct bench_conn *c;
};

static void
hold(struct held *h, const char *url)
{
	char err[256];

	assert_int_equal(bench_target_parse(url, &h->t, err, sizeof(err)), 0);
	assert_int_equal(bench_drv_null.connect(&h->t, &h->c, err, sizeof(err)), 0);
}

static void
release(struct held *h)
{
	bench_drv_null.disconnect(h->c);
	bench_target_clear(&h->t);
}

static struct bench_opts
small_opts(void)
{
	struct bench_opts o = {
		.size = 4u << 20,
		.repeats = 3,
		.warmup = 1,
		.small_files = 10,
		.small_io_write = 64 * 1024,
		.small_io_read = 128 * 1024,
		.meta_entries = 50,
		.video_fps = 24,
		.video_seconds = 0.25,
	};

	return o;
}

static const struct bench_result *
find(const struct bench_results *rs, const char *workload, const char *metric)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (strcmp(rs->v[i].workload, workload) == 0 &&
		    strcmp(rs->v[i].metric, metric) == 0)
			return &rs->v[i];
	return NULL;
}

static void
run_ok(struct held *h, enum bench_workload w, const struct bench_opts *o, struct bench_results *rs)
{
	char err[512] = "";
	int rc = bench_run(&bench_drv_null, &h->t, w, o, rs, err, sizeof(err));

	if (rc != 0)
		fail_msg("%s: %s", bench_workload_name(w), err);
	assert_int_equal(bench_null_entries("eng"), 0); /* scratch removed */
}

static void
test_names(void **state)
{
	const struct bench_video_format *f;
	double fps;
	int i;

	(void)state;
	for (i = 0; i < BENCH_NWORKLOADS; i++)
		assert_int_equal(bench_workload_parse(bench_workload_name(i)), i);
	assert_string_equal(bench_workload_name(BENCH_COPY), "copy-in-share");
	assert_int_equal(bench_workload_parse("seq"), -EINVAL);
	assert_null(bench_workload_name(BENCH_NWORKLOADS));
	assert_int_equal(bench_video_parse("v210-1080p@60", &f, &fps), 0);
	assert_int_equal(f->frame_bytes, 5529600);
	assert_float_equal(fps, 60, 0);
	assert_int_equal(bench_video_parse("prores422hq-2160p@24", &f, &fps), 0);
	assert_int_equal(bench_video_parse("prores422hq-1080p@0", &f, &fps), -EINVAL);
	assert_int_equal(bench_video_parse("h264@30", &f, &fps), -EINVAL);
	assert_int_equal(bench_video_parse("v210-1080p", &f, &fps), -EINVAL);
	assert_ptr_equal(bench_driver_find("null"), &bench_drv_null);
	assert_ptr_equal(bench_driver_for_scheme("file"), &bench_drv_posix);
	assert_string_equal(bench_drivers()[0]->name, "null");
	assert_string_equal(bench_drivers()[1]->name, "posix");
}

static void
test_sequential(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct bench_null_counts n;
	const struct bench_result *r;
	struct held h;

	(void)state;
	hold(&h, "null://eng");
	bench_null_reset();
	run_ok(&h, BENCH_SEQ_WRITE, &o, &rs);
	bench_null_counts(&n);
	/* 4 runs (1 warm-up + 3) of 4 x 1 MiB, flushed, then deleted */
	assert_int_equal(n.ops[BNULL_PWRITE], 16);
	assert_int_equal(n.bytes_written, 16u << 20);
	assert_int_equal(n.ops[BNULL_FLUSH], 4);
	assert_int_equal(n.ops[BNULL_MKDIR], 1);
	assert_int_equal(n.ops[BNULL_RMDIR], 1);
	assert_int_equal(rs.n, 1);
	r = find(&rs, "seq-write", "write");
	assert_non_null(r);
	assert_string_equal(r->unit, "MB/s");
	assert_string_equal(r->protocol, "null");
	assert_string_equal(r->client, "loopback");
	assert_string_equal(r->cache, "hot");
	assert_string_equal(r->target, "null://eng");
	assert_int_equal(r->nruns, 3);
	assert_int_equal(r->st.n, 3);
	assert_true(r->st.median > 0);
	assert_true(r->st.ci95_low <= r->st.median && r->st.median <= r->st.ci95_high);

	bench_null_reset();
	run_ok(&h, BENCH_SEQ_READ, &o, &rs);
	bench_null_counts(&n);
	assert_int_equal(n.bytes_written, 4u << 20); /* setup, once */
	assert_int_equal(n.bytes_read, 16u << 20);
	assert_int_equal(n.ops[BNULL_PREAD], 4 * 5); /* 4 blocks + the short read at EOF */
	assert_non_null(find(&rs, "seq-read", "read"));
	bench_results_clear(&rs);
	release(&h);
}

static void
test_copy(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct bench_null_counts n;
	const struct bench_result *r;
	struct held h;
	char err[512];

	(void)state;
	hold(&h, "null://eng");
	bench_null_reset();
	run_ok(&h, BENCH_COPY, &o, &rs);
	bench_null_counts(&n);
	assert_int_equal(n.ops[BNULL_COPY], 4);
	r = find(&rs, "copy-in-share", "copy");
	assert_non_null(r);
	assert_string_equal(r->note, "server-side copy (null copy)");
	bench_results_clear(&rs);
	release(&h);

	/* The protocol refuses: read+write, said so. */
	hold(&h, "null://eng?copy=0");
	run_ok(&h, BENCH_COPY, &o, &rs);
	r = find(&rs, "copy-in-share", "copy");
	assert_non_null(strstr(r->note, "read+write (server-side null copy refused"));
	bench_results_clear(&rs);

	/* No copy in the driver at all. */
	assert_int_equal(
		bench_run(&bench_drv_null_serial, &h.t, BENCH_COPY, &o, &rs, err, sizeof(err)), 0);
	assert_string_equal(rs.v[0].note, "read+write (the null driver has no server-side copy)");
	bench_results_clear(&rs);
	release(&h);
}

static void
test_mixed(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct bench_null_counts n;
	struct held h;
	char err[512];

	(void)state;
	hold(&h, "null://eng?delay_us=2000");
	bench_null_reset();
	run_ok(&h, BENCH_MIXED_RW, &o, &rs);
	bench_null_counts(&n);
	/* held + main + second connection */
	assert_true(n.max_concurrent >= 3);
	assert_non_null(find(&rs, "mixed-rw", "read"));
	assert_non_null(find(&rs, "mixed-rw", "write"));
	assert_non_null(find(&rs, "mixed-rw", "total"));
	assert_string_equal(rs.v[0].note, "one reader and one writer at once, two connections");
	bench_results_clear(&rs);

	bench_null_reset();
	assert_int_equal(
		bench_run(&bench_drv_null_serial, &h.t, BENCH_MIXED_RW, &o, &rs, err, sizeof(err)),
		0);
	bench_null_counts(&n);
	assert_int_equal(n.max_concurrent, 2); /* held + one */
	assert_non_null(strstr(rs.v[0].note, "sequential"));
	bench_results_clear(&rs);
	release(&h);
}

static void
test_small(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct bench_null_counts n;
	const struct bench_result *r;
	static const char *const sf[] = { "create", "copy-in", "copy-out", "rename", "delete" };
	uint64_t tot = 0;
	struct held h;
	size_t i;

	(void)state;
	hold(&h, "null://eng");
	bench_null_reset();
	run_ok(&h, BENCH_SMALL_FILES, &o, &rs);
	bench_null_counts(&n);
	/* and the scratch directory renamed to a private name for its removal */
	assert_int_equal(n.ops[BNULL_RENAME], 4 * 10 + 1);
	assert_int_equal(n.ops[BNULL_UNLINK], 4 * 20);
	assert_int_equal(n.ops[BNULL_OPEN], 4 * 30);
	assert_int_equal(n.bytes_written, 4 * 10 * 66000);
	assert_int_equal(n.bytes_read, 4 * 10 * 66000);
	for (i = 0; i < 5; i++) {
		r = find(&rs, "small-files", sf[i]);
		assert_non_null(r);
		assert_string_equal(r->unit, "files/s");
	}
	bench_results_clear(&rs);

	bench_null_reset();
	run_ok(&h, BENCH_SMALL_IO, &o, &rs);
	bench_null_counts(&n);
	/* setup: 128 KiB in one block; runs: 64 writes and 128 reads of 1 KiB each */
	assert_int_equal(n.ops[BNULL_PWRITE], 1 + 4 * 64);
	assert_int_equal(n.ops[BNULL_PREAD], 4 * 128);
	r = find(&rs, "small-io", "write-1k-p99");
	assert_non_null(r);
	assert_string_equal(r->unit, "us");
	assert_non_null(r->hist);
	for (i = 0; i < BENCH_HIST_BUCKETS; i++)
		tot += r->hist[i];
	assert_int_equal(tot, 3 * 64); /* measured runs only */
	assert_non_null(find(&rs, "small-io", "read-1k"));
	assert_non_null(find(&rs, "small-io", "read-1k-p99"));
	assert_null(find(&rs, "small-io", "read-1k")->hist);
	bench_results_clear(&rs);
	release(&h);
}

static void
test_random_meta(void **state)
{
	static const char *const rm[] = { "read-4k",	"write-4k", "read-512k",
					  "write-512k", "read-16m", "write-16m" };
	static const char *const mm[] = { "stat-hit-cold", "stat-miss-cold", "list-cold",
					  "stat-hit-hot",  "stat-miss-hot",  "list-hot" };
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct bench_null_counts n;
	struct held h;
	size_t i;

	(void)state;
	hold(&h, "null://eng");
	bench_null_reset();
	run_ok(&h, BENCH_RANDOM_IO, &o, &rs);
	bench_null_counts(&n);
	/* 16 MiB file; per run 1024 x 4k, 8 x 512k, 4 x 16M (at least 4) each way */
	assert_int_equal(n.ops[BNULL_PREAD], 4 * (1024 + 8 + 4));
	assert_int_equal(n.ops[BNULL_PWRITE], 16 + 4 * (1024 + 8 + 4));
	for (i = 0; i < 6; i++)
		assert_non_null(find(&rs, "random-io", rm[i]));
	bench_results_clear(&rs);

	bench_null_reset();
	run_ok(&h, BENCH_METADATA, &o, &rs);
	bench_null_counts(&n);
	/* 50 hits + 50 misses, cold + hot; and the scratch directory as made, before removal and
	 * once renamed for it */
	assert_int_equal(n.ops[BNULL_STAT], 4 * 2 * 100 + 3);
	assert_int_equal(n.ops[BNULL_CONNECT], 1 + 4); /* a new connection per run */
	for (i = 0; i < 6; i++) {
		const struct bench_result *r = find(&rs, "metadata", mm[i]);

		assert_non_null(r);
		assert_string_equal(r->unit, "us");
		assert_string_equal(r->cache, i < 3 ? "cold" : "hot");
	}
	bench_results_clear(&rs);
	release(&h);
}

/* big-dir and source-tree: their operation counts per run, their metrics in ops/s with
 * latencies, the big directory back at its size after every run, and a failure mid-run. */
static void
test_bigdir_tree(void **state)
{
	static const char *const bm[] = { "lookup-miss", "lookup-hit", "create", "list" };
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct bench_null_counts n;
	const struct bench_result *r;
	struct held h;
	char err[512] = "";
	size_t i;

	(void)state;
	o.meta_entries = 600; /* above the 500 operations a run times */
	o.tree_files = 40;
	hold(&h, "null://eng");
	bench_null_reset();
	run_ok(&h, BENCH_BIG_DIR, &o, &rs);
	bench_null_counts(&n);
	/* 4 runs (1 warm-up) of 500 misses + 500 hits, and the scratch stat'ed three times (made,
	 * before removal, renamed for it) */
	assert_int_equal(n.ops[BNULL_STAT], 4 * 1000 + 3);
	/* 600 made once, then 500 created and removed again by each run; the 600 go with the
	 * scratch */
	assert_int_equal(n.ops[BNULL_OPEN], 600 + 4 * 500);
	assert_int_equal(n.ops[BNULL_UNLINK], 4 * 500 + 600);
	for (i = 0; i < 4; i++) {
		r = find(&rs, "big-dir", bm[i]);
		assert_non_null(r);
		assert_string_equal(r->unit, "ops/s");
		assert_int_equal(r->nruns, 3);
		assert_true(r->st.median > 0);
		assert_non_null(r->lat);
		assert_int_equal(r->lat->n, i < 3 ? 3 * 500 : 3);
	}
	assert_non_null(strstr(find(&rs, "big-dir", "list")->note, "600 entries in one directory"));
	bench_results_clear(&rs);

	bench_null_reset();
	run_ok(&h, BENCH_SOURCE_TREE, &o, &rs);
	bench_null_counts(&n);
	/* 40 files in 3 leaf directories under one: each run stats 40 sources and 40 missing
	 * objects, cold on a new connection and hot on it again */
	assert_int_equal(n.ops[BNULL_MKDIR], 1 + 1 + 1 + 3);
	assert_int_equal(n.ops[BNULL_OPEN], 40);
	assert_int_equal(n.ops[BNULL_STAT],
			 4 * 2 * 80 + 3); /* + the scratch: made, checked, renamed */
	assert_int_equal(n.ops[BNULL_CONNECT], 1 + 4);
	r = find(&rs, "source-tree", "stat-cold");
	assert_non_null(r);
	assert_string_equal(r->cache, "cold");
	assert_string_equal(r->unit, "ops/s");
	assert_int_equal(r->lat->n, 3 * 80);
	r = find(&rs, "source-tree", "stat-hot");
	assert_non_null(r);
	assert_string_equal(r->cache, "hot");
	bench_results_clear(&rs);
	release(&h);

	/* a failing stat surfaces, and the scratch goes */
	hold(&h, "null://eng?fail=stat:700");
	assert_int_equal(bench_run(&bench_drv_null, &h.t, BENCH_BIG_DIR, &o, &rs, err, sizeof(err)),
			 -EIO);
	assert_non_null(strstr(err, "injected failure"));
	assert_int_equal(bench_null_entries("eng"), 0);
	assert_int_equal(rs.n, 0);
	release(&h);
	/* past the limits */
	o.tree_files = BENCH_MAX_TREE_FILES + 1;
	assert_int_equal(bench_opts_check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "source-tree files"));
}

static void
test_video(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	const struct bench_result *r;
	struct held h;

	(void)state;
	o.repeats = 1;
	o.warmup = 0;
	/* 8 fps: a frame is dropped only 125 ms late, which a loaded machine's scheduler does
	 * not reach; at 24 fps (42 ms) a busy 2-core box dropped frames now and then. */
	o.video_fps = 8;
	o.video_seconds = 0.5;
	hold(&h, "null://eng");
	run_ok(&h, BENCH_VIDEO, &o, &rs);
	r = find(&rs, "video-frames", "write-fps");
	assert_non_null(r);
	assert_int_equal(r->pass, 1);
	assert_true(r->st.median > 6.5 && r->st.median <= 8.01);
	assert_float_equal(find(&rs, "video-frames", "write-dropped")->st.median, 0, 0);
	assert_int_equal(find(&rs, "video-frames", "read-fps")->pass, 1);
	assert_int_equal(find(&rs, "video-frames", "read-p99")->pass, -1);
	assert_non_null(strstr(r->note, "1080p ProRes 422 HQ at 8 fps"));
	bench_results_clear(&rs);

	/* 20 ms per frame at 60 fps (16.7 ms): frames are dropped, and it fails. */
	release(&h);
	hold(&h, "null://eng?delay_us=20000");
	o.video_fps = 60;
	run_ok(&h, BENCH_VIDEO, &o, &rs);
	r = find(&rs, "video-frames", "write-fps");
	assert_int_equal(r->pass, 0);
	assert_true(find(&rs, "video-frames", "write-dropped")->st.median > 0);
	assert_true(r->st.median < 60);
	bench_results_clear(&rs);
	release(&h);
}

static void
test_refusals(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct bench_null_counts n;
	struct held h;
	char err[512] = "";

	(void)state;
	hold(&h, "null://tiny?free=1000000");
	bench_null_reset();
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_WRITE, &o, &rs, err, sizeof(err)),
		-ENOSPC);
	assert_non_null(strstr(err, "not enough free space on null://tiny?free=1000000"));
	assert_non_null(strstr(err, "1.0 MB free"));
	bench_null_counts(&n);
	assert_int_equal(n.ops[BNULL_MKDIR], 0); /* nothing written */
	assert_int_equal(rs.n, 0);
	release(&h);

	/* Exactly enough: 2 x 4 MiB + the margin. */
	{
		char url[128];

		snprintf(url, sizeof(url), "null://exact?free=%llu",
			 (unsigned long long)(2 * (4ull << 20) + BENCH_SPACE_MARGIN));
		hold(&h, url);
		assert_int_equal(bench_run(&bench_drv_null, &h.t, BENCH_SEQ_WRITE, &o, &rs, err,
					   sizeof(err)),
				 0);
		bench_results_clear(&rs);
		release(&h);
	}

	hold(&h, "null://eng");
	assert_int_equal(bench_drv_null.mkdir(h.c, "Mac.sparsebundle"), 0);
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_WRITE, &o, &rs, err, sizeof(err)),
		-EPERM);
	assert_non_null(strstr(err, "Time Machine"));
	assert_non_null(strstr(err, "--force"));
	assert_int_equal(bench_null_entries("eng"), 1);
	o.force = true;
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_WRITE, &o, &rs, err, sizeof(err)), 0);
	assert_int_equal(bench_null_entries("eng"), 1); /* the sparsebundle only */
	bench_results_clear(&rs);
	release(&h);
}

static void
test_failure_mid_run(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct held h;
	char err[512] = "";
	enum bench_workload w;

	(void)state;
	/* The 7th write fails: in the second run of seq-write. */
	hold(&h, "null://eng?fail=pwrite:7");
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_WRITE, &o, &rs, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "seq-write: write .nastune-bench-"));
	assert_non_null(strstr(err, "injected failure of pwrite call 7"));
	assert_int_equal(rs.n, 0);
	assert_int_equal(bench_null_entries("eng"), 0);
	release(&h);

	/* A failing stat in metadata, a failing rename in small-files, a failing read in
	 * mixed-rw's reader thread: each surfaces and the scratch goes. */
	for (w = BENCH_MIXED_RW; w <= BENCH_METADATA; w++) {
		const char *url = w == BENCH_METADATA	   ? "null://eng?fail=stat:30"
				  : w == BENCH_SMALL_FILES ? "null://eng?fail=rename:15"
				  : w == BENCH_MIXED_RW	   ? "null://eng?fail=pread:3"
							   : "null://eng?fail=pread:2";

		hold(&h, url);
		err[0] = '\0';
		assert_int_equal(bench_run(&bench_drv_null, &h.t, w, &o, &rs, err, sizeof(err)),
				 -EIO);
		assert_non_null(strstr(err, "injected failure"));
		assert_int_equal(bench_null_entries("eng"), 0);
		release(&h);
	}
	assert_int_equal(rs.n, 0);

	/* Failing to remove the scratch is an error too. */
	hold(&h, "null://eng?fail=rmdir:1");
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_WRITE, &o, &rs, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "cannot remove the scratch directory"));
	release(&h);
}

/* A session: the workloads of one call share one connection and one preflight; a workload
 * with a larger footprint, or without the force the first was given, is checked anew; every
 * workload removes its scratch as bench_run does; the results are bench_run's. */
static void
test_session(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 }, one = { 0 };
	struct bench_null_counts n;
	struct bench_session *s;
	struct held h;
	char err[512] = "";

	(void)state;
	hold(&h, "null://eng");
	bench_null_reset();
	assert_int_equal(bench_session_open(&bench_drv_null, &h.t, &s, err, sizeof(err)), 0);
	assert_int_equal(bench_session_run(s, BENCH_SEQ_WRITE, &o, &rs, err, sizeof(err)), 0);
	assert_int_equal(bench_null_entries("eng"), 0);
	assert_int_equal(bench_session_run(s, BENCH_SEQ_READ, &o, &rs, err, sizeof(err)), 0);
	assert_int_equal(bench_null_entries("eng"), 0);
	bench_null_counts(&n);
	assert_int_equal(n.ops[BNULL_CONNECT], 1);
	assert_int_equal(n.ops[BNULL_SPACE], 1); /* seq-read needs no more than seq-write */
	/* copy-in-share holds twice the size: checked again. */
	assert_int_equal(bench_session_run(s, BENCH_COPY, &o, &rs, err, sizeof(err)), 0);
	bench_null_counts(&n);
	assert_int_equal(n.ops[BNULL_SPACE], 2);
	assert_int_equal(n.ops[BNULL_CONNECT], 1);
	bench_session_close(s);
	run_ok(&h, BENCH_SEQ_WRITE, &o, &one);
	assert_non_null(find(&rs, "seq-write", "write"));
	assert_non_null(find(&rs, "seq-read", "read"));
	assert_int_equal(find(&rs, "seq-write", "write")->nruns,
			 find(&one, "seq-write", "write")->nruns);
	bench_results_clear(&rs);
	bench_results_clear(&one);
	release(&h);

	/* Room for seq-write, not for copy-in-share's twice as much: the second is refused,
	 * nothing of it written. */
	{
		char url[128];

		snprintf(url, sizeof(url), "null://eng?free=%llu",
			 (unsigned long long)(2 * (4ull << 20) + BENCH_SPACE_MARGIN));
		hold(&h, url);
		assert_int_equal(bench_session_open(&bench_drv_null, &h.t, &s, err, sizeof(err)),
				 0);
		assert_int_equal(bench_session_run(s, BENCH_SEQ_WRITE, &o, &rs, err, sizeof(err)),
				 0);
		bench_null_reset();
		assert_int_equal(bench_session_run(s, BENCH_COPY, &o, &rs, err, sizeof(err)),
				 -ENOSPC);
		bench_null_counts(&n);
		assert_int_equal(n.ops[BNULL_MKDIR], 0);
		bench_session_close(s);
		bench_results_clear(&rs);
		release(&h);
	}

	/* A kept scratch directory is made once; each workload checks that what has its name is
	 * still that directory (its identity) as it starts and before it removes its files;
	 * seq-read's file is looked for as ever. */
	{
		char keep[128];

		hold(&h, "null://eng");
		bench_scratch_name(keep, sizeof(keep), "tune");
		o.keep_scratch = keep;
		assert_int_equal(bench_session_open(&bench_drv_null, &h.t, &s, err, sizeof(err)),
				 0);
		bench_null_reset();
		assert_int_equal(bench_session_run(s, BENCH_SEQ_WRITE, &o, &rs, err, sizeof(err)),
				 0);
		assert_int_equal(bench_session_run(s, BENCH_SEQ_READ, &o, &rs, err, sizeof(err)),
				 0);
		bench_null_counts(&n);
		assert_int_equal(n.ops[BNULL_MKDIR], 1);
		/* made: looked for, then its identity; each workload: checked at start and end;
		 * and seq-read's file */
		assert_int_equal(n.ops[BNULL_STAT], 6);
		bench_session_close(s);
		assert_int_equal(bench_null_entries("eng"), 2); /* the kept directory and file */
		assert_int_equal(
			bench_scratch_remove(&bench_drv_null, &h.t, keep, err, sizeof(err)), 0);
		assert_int_equal(bench_null_entries("eng"), 0);
		o.keep_scratch = NULL;
		bench_results_clear(&rs);
		release(&h);
	}

	/* A preflight passed with --force does not stand for one without: a Time Machine root
	 * refuses the unforced workload even after a forced one ran on the session. */
	hold(&h, "null://eng");
	assert_int_equal(bench_drv_null.mkdir(h.c, "Mac.sparsebundle"), 0);
	assert_int_equal(bench_session_open(&bench_drv_null, &h.t, &s, err, sizeof(err)), 0);
	o.force = true;
	assert_int_equal(bench_session_run(s, BENCH_SEQ_WRITE, &o, &rs, err, sizeof(err)), 0);
	o.force = false;
	assert_int_equal(bench_session_run(s, BENCH_SEQ_READ, &o, &rs, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "Time Machine"));
	bench_session_close(s);
	bench_session_close(NULL);
	bench_results_clear(&rs);
	release(&h);
}

static volatile sig_atomic_t stop;

static void
stop_at_third(const struct bench_progress *p, void *arg)
{
	(void)arg;
	if (p->run == 3)
		stop = 1;
}

static int drops;

static int
count_drop(void *arg)
{
	(void)arg;
	drops++;
	return 0;
}

static void
test_stop_and_cold(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct held h;
	char err[512] = "";

	(void)state;
	hold(&h, "null://eng");
	o.stop = &stop;
	o.progress = stop_at_third;
	stop = 0;
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SMALL_FILES, &o, &rs, err, sizeof(err)),
		-EINTR);
	assert_string_equal(err, "interrupted");
	assert_int_equal(bench_null_entries("eng"), 0);
	assert_int_equal(rs.n, 0);

	stop = 0;
	o.progress = NULL;
	o.cache = BENCH_CACHE_COLD;
	o.drop_caches = count_drop;
	run_ok(&h, BENCH_SEQ_READ, &o, &rs);
	assert_int_equal(drops, 3); /* before each measured run, not the warm-up */
	assert_string_equal(rs.v[0].cache, "cold");
	bench_results_clear(&rs);
	o.drop_caches = NULL; /* cannot drop: labelled hot */
	run_ok(&h, BENCH_SEQ_READ, &o, &rs);
	assert_string_equal(rs.v[0].cache, "hot");
	bench_results_clear(&rs);

	/* A target on another host: dropping this machine's cache leaves the server's, so the
	 * run is only client-cold, and the metadata note says whose cache was dropped. */
	h.t.host = strdup("nas.example");
	o.drop_caches = count_drop;
	run_ok(&h, BENCH_SEQ_READ, &o, &rs);
	assert_string_equal(rs.v[0].cache, "client-cold");
	bench_results_clear(&rs);
	run_ok(&h, BENCH_METADATA, &o, &rs);
	assert_string_equal(find(&rs, "metadata", "stat-hit-cold")->cache, "client-cold");
	assert_string_equal(find(&rs, "metadata", "list-hot")->cache, "hot");
	assert_non_null(strstr(find(&rs, "metadata", "list-cold")->note, "(not the server's)"));
	bench_results_clear(&rs);
	o.drop_reaches_server = true; /* its server runs on this kernel */
	run_ok(&h, BENCH_SEQ_READ, &o, &rs);
	assert_string_equal(rs.v[0].cache, "cold");
	bench_results_clear(&rs);
	release(&h);
}

/* What a crashed run left is known by its record (identity, host, pid), never by its name:
 * its directory goes, while a look-alike name a share user made, another host's entry, and
 * a recorded name that now holds another directory (renamed in by someone) stay. */
static void
test_stale(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct bench_stat st;
	char host[128], reg[] = "/tmp/nastune-reg.XXXXXX", look[256], mine[256], swapped[256];
	char err[512], *text;
	struct held h;
	struct dirent *de;
	DIR *dp;
	pid_t pid;

	(void)state;
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0); /* a pid that is surely gone */
	assert_non_null(mkdtemp(reg));
	bench_scratch_registry(reg);
	gethostname(host, sizeof(host));
	hold(&h, "null://eng");
	/* Two directories "made" by the dead process: recorded, then the records rewritten to
	 * its pid, as a crash leaves them. */
	snprintf(mine, sizeof(mine), ".nastune-bench-%s-%ld-1-0123456789abcdef", host, (long)pid);
	snprintf(swapped, sizeof(swapped), ".nastune-bench-%s-%ld-2-0123456789abcdef", host,
		 (long)pid);
	assert_int_equal(bench_drv_null.mkdir(h.c, mine), 0);
	snprintf(err, sizeof(err), "%s/sub", mine);
	assert_int_equal(bench_drv_null.mkdir(h.c, err), 0);
	assert_int_equal(bench_drv_null.mkdir(h.c, swapped), 0);
	assert_int_equal(scratch_made(&bench_drv_null, h.c, h.t.url, mine), 0);
	assert_int_equal(scratch_made(&bench_drv_null, h.c, h.t.url, swapped), 0);
	unit_crash_records(reg, pid);
	/* This process forgets them (the files stay: the dead one's records). */
	text = xasprintf("%s", reg);
	bench_scratch_registry(NULL);
	scratch_forget(h.t.url, mine);
	scratch_forget(h.t.url, swapped);
	bench_scratch_registry(text);
	free(text);
	/* Someone renames another directory to the second name. */
	assert_int_equal(bench_drv_null.rmdir(h.c, swapped), 0);
	assert_int_equal(bench_drv_null.mkdir(h.c, swapped), 0);
	snprintf(err, sizeof(err), "%s/private", swapped);
	assert_int_equal(bench_drv_null.mkdir(h.c, err), 0);
	/* Never recorded: a look-alike of this host's dead pid, another host's. */
	snprintf(look, sizeof(look), ".nastune-bench-%s-%ld-3-0123456789abcdef", host, (long)pid);
	assert_int_equal(bench_drv_null.mkdir(h.c, look), 0);
	assert_int_equal(bench_drv_null.mkdir(h.c, ".nastune-bench-otherhost-1-1"), 0);
	assert_int_equal(bench_drv_null.mkdir(h.c, "user-data"), 0);

	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_WRITE, &o, &rs, err, sizeof(err)), 0);
	assert_int_equal(bench_drv_null.stat(h.c, mine, &st), -ENOENT);
	assert_int_equal(bench_drv_null.stat(h.c, swapped, &st), 0);
	snprintf(err, sizeof(err), "%s/private", swapped);
	assert_int_equal(bench_drv_null.stat(h.c, err, &st), 0);
	assert_int_equal(bench_drv_null.stat(h.c, look, &st), 0);
	assert_int_equal(bench_drv_null.stat(h.c, ".nastune-bench-otherhost-1-1", &st), 0);
	assert_int_equal(bench_drv_null.stat(h.c, "user-data", &st), 0);
	assert_int_equal(bench_null_entries("eng"), 5);
	/* Both records are gone: the next run does not look at the swapped name again. */
	assert_non_null(dp = opendir(reg));
	while ((de = readdir(dp)))
		assert_true(de->d_name[0] == '.');
	closedir(dp);
	rmdir(reg);
	bench_scratch_registry(NULL);
	snprintf(err, sizeof(err), "%s/private", swapped);
	bench_drv_null.rmdir(h.c, err);
	bench_drv_null.rmdir(h.c, swapped);
	bench_drv_null.rmdir(h.c, look);
	bench_drv_null.rmdir(h.c, ".nastune-bench-otherhost-1-1");
	bench_drv_null.rmdir(h.c, "user-data");
	bench_results_clear(&rs);
	release(&h);
}

/* A kept scratch directory (a tune's): seq-read's file is written by the first run only and
 * read again by the next ones; the directory stays with only that file in it; a run of
 * another size writes it anew; what another workload made in it is gone at its end;
 * bench_scratch_remove takes it away (and a missing one is no error); a name that is not a
 * scratch name, or a file where the directory should be, is refused. */
static void
test_kept_scratch(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct bench_null_counts n;
	struct bench_stat st;
	char keep[192], err[512], p[256];
	struct held h;

	(void)state;
	hold(&h, "null://eng");
	bench_scratch_name(keep, sizeof(keep), "tune");
	o.keep_scratch = keep;
	bench_null_reset();
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_READ, &o, &rs, err, sizeof(err)), 0);
	bench_null_counts(&n);
	assert_int_equal(n.bytes_written, 4u << 20); /* the file, once */
	assert_int_equal(n.ops[BNULL_MKDIR], 1);
	assert_int_equal(bench_drv_null.stat(h.c, keep, &st), 0);
	assert_true(st.is_dir);
	assert_int_equal(bench_null_entries("eng"), 2); /* the directory and its file */
	bench_null_reset();
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_READ, &o, &rs, err, sizeof(err)), 0);
	bench_null_counts(&n);
	assert_int_equal(n.bytes_written, 0); /* read again, not written */
	assert_int_equal(n.ops[BNULL_MKDIR], 0);
	assert_int_equal(n.bytes_read, 16u << 20);
	/* another size: written anew */
	o.size = 2u << 20;
	bench_null_reset();
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_READ, &o, &rs, err, sizeof(err)), 0);
	bench_null_counts(&n);
	assert_int_equal(n.bytes_written, 2u << 20);
	/* another workload's files go at its end; seq-read's stays */
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SMALL_FILES, &o, &rs, err, sizeof(err)), 0);
	assert_int_equal(bench_null_entries("eng"), 2);
	assert_int_equal(bench_scratch_remove(&bench_drv_null, &h.t, keep, err, sizeof(err)), 0);
	assert_int_equal(bench_drv_null.stat(h.c, keep, &st), -ENOENT);
	assert_int_equal(bench_null_entries("eng"), 0);
	assert_int_equal(bench_scratch_remove(&bench_drv_null, &h.t, keep, err, sizeof(err)), 0);
	/* Swapped between calls for another directory of that name (what a symlink to a
	 * sibling looks like over SMB, whose server follows it): the next call refuses it and
	 * changes nothing in it, and so does the final removal. */
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_READ, &o, &rs, err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/kept-seq-read.dat", keep);
	assert_int_equal(bench_drv_null.unlink(h.c, p), 0);
	assert_int_equal(bench_drv_null.rmdir(h.c, keep), 0);
	assert_int_equal(bench_drv_null.mkdir(h.c, keep), 0);
	{
		struct bench_file *f;

		snprintf(p, sizeof(p), "%s/victim", keep);
		assert_int_equal(bench_drv_null.open(h.c, p, BENCH_WR | BENCH_CREATE, &f), 0);
		bench_drv_null.close(h.c, f);
	}
	bench_null_reset();
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SMALL_FILES, &o, &rs, err, sizeof(err)),
		-ESTALE);
	assert_non_null(strstr(err, "is no longer the scratch directory made there"));
	bench_null_counts(&n);
	assert_int_equal(n.ops[BNULL_MKDIR] + n.ops[BNULL_UNLINK] + n.ops[BNULL_RMDIR], 0);
	assert_int_equal(bench_scratch_remove(&bench_drv_null, &h.t, keep, err, sizeof(err)),
			 -ESTALE);
	assert_int_equal(bench_drv_null.stat(h.c, p, &st), 0);
	assert_int_equal(bench_null_entries("eng"), 2);
	assert_int_equal(bench_drv_null.unlink(h.c, p), 0);
	assert_int_equal(bench_drv_null.rmdir(h.c, keep), 0);
	bench_scratch_name(keep, sizeof(keep), "tune"); /* the next tune's */
	/* refusals */
	o.keep_scratch = "user-data";
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_READ, &o, &rs, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "bad kept scratch directory name"));
	{
		struct bench_file *f;

		assert_int_equal(bench_drv_null.open(h.c, keep, BENCH_WR | BENCH_CREATE, &f), 0);
		bench_drv_null.close(h.c, f);
	}
	o.keep_scratch = keep;
	assert_int_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_SEQ_READ, &o, &rs, err, sizeof(err)),
		-ENODATA);
	assert_non_null(strstr(err, "was not made by this process; left alone"));
	assert_int_equal(bench_scratch_remove(&bench_drv_null, &h.t, keep, err, sizeof(err)),
			 -ENODATA);
	snprintf(p, sizeof(p), "%s", keep);
	assert_int_equal(bench_drv_null.unlink(h.c, p), 0);
	assert_int_equal(bench_null_entries("eng"), 0);
	bench_results_clear(&rs);
	release(&h);
}

/* big-dir in a kept scratch directory (a tune's dozens of calls): the first run makes the
 * directory of --entries files, the next ones find it and make none; another entry count
 * gets its own; a run that fails drops it, so the next one makes it anew. */
static void
test_kept_bigdir(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	struct bench_null_counts n;
	char keep[192], err[512], p[256];
	struct held h;

	(void)state;
	hold(&h, "null://eng");
	bench_scratch_name(keep, sizeof(keep), "tune");
	o.keep_scratch = keep;
	o.repeats = 1;
	o.warmup = 0;
	bench_null_reset();
	assert_int_equal(bench_run(&bench_drv_null, &h.t, BENCH_BIG_DIR, &o, &rs, err, sizeof(err)),
			 0);
	bench_null_counts(&n);
	assert_int_equal(n.ops[BNULL_OPEN], 50 + 50); /* the directory's files, the creates */
	assert_int_equal(bench_null_entries("eng"), 1 + 1 + 50);
	bench_null_reset();
	assert_int_equal(bench_run(&bench_drv_null, &h.t, BENCH_BIG_DIR, &o, &rs, err, sizeof(err)),
			 0);
	bench_null_counts(&n);
	assert_int_equal(n.ops[BNULL_OPEN], 50); /* only the timed creates */
	assert_int_equal(bench_null_entries("eng"), 1 + 1 + 50);
	o.meta_entries = 20;
	assert_int_equal(bench_run(&bench_drv_null, &h.t, BENCH_BIG_DIR, &o, &rs, err, sizeof(err)),
			 0);
	assert_int_equal(bench_null_entries("eng"), 1 + 2 + 50 + 20);
	/* a stray entry: the run's listing fails, and the directory goes */
	snprintf(p, sizeof(p), "%s/kept-big-20/stray", keep);
	assert_int_equal(bench_drv_null.mkdir(h.c, p), 0);
	assert_int_not_equal(
		bench_run(&bench_drv_null, &h.t, BENCH_BIG_DIR, &o, &rs, err, sizeof(err)), 0);
	assert_int_equal(bench_null_entries("eng"), 1 + 1 + 50);
	bench_null_reset();
	assert_int_equal(bench_run(&bench_drv_null, &h.t, BENCH_BIG_DIR, &o, &rs, err, sizeof(err)),
			 0);
	bench_null_counts(&n);
	assert_int_equal(n.ops[BNULL_OPEN], 20 + 20);
	assert_int_equal(bench_scratch_remove(&bench_drv_null, &h.t, keep, err, sizeof(err)), 0);
	assert_int_equal(bench_null_entries("eng"), 0);
	bench_results_clear(&rs);
	release(&h);
}

/* The percentile of the histogram against a known sample: 1 to 1000 us, one each. */
static void
test_lathist(void **state)
{
	static const double want_us[BENCH_LAT_NPCT] = { 500, 900, 990, 999 };
	struct bench_lathist *lh = bench_lathist_new();
	struct bench_latency l;
	size_t i;

	(void)state;
	for (i = 1000; i >= 1; i--) /* order does not matter */
		bench_lathist_add(lh, (double)i * 1e-6);
	bench_lathist_span(lh, 2.0);
	bench_lathist_summary(lh, &l);
	assert_int_equal(l.n, 1000);
	assert_float_equal(l.min_ns, 1000, 1e-6);
	assert_float_equal(l.max_ns, 1e6, 1e-3);
	assert_float_equal(l.mean_ns, 500500, 1e-3);
	assert_float_equal(l.iops, 500, 1e-9);
	for (i = 0; i < BENCH_LAT_NPCT; i++)
		if (fabs(l.pct_ns[i] / (want_us[i] * 1000) - 1) > 0.008)
			fail_msg("p%g: %.0f ns, want %.0f us within 0.8%%", bench_lat_pcts[i],
				 l.pct_ns[i], want_us[i]);
	bench_lathist_free(lh);
}

/* A workload of known latencies (the null driver: every request 200 us, every 50th 20 ms):
 * 2% are slow, so p50 and p90 are fast requests and p99 and p99.9 slow ones, in the text
 * table, the JSON (fio's clat_ns and iops) and the HTML page; IOPS is no more than one over
 * the mean latency. random-io and metadata carry them too. */
static void
test_latency_known(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 };
	static const char *const mm[] = { "write-1k", "read-1k" };
	struct held h;
	json_t *a, *doc;
	char err[512], *text, *html;
	size_t i, k;

	(void)state;
	o.repeats = 1;
	o.warmup = 0;
	o.small_io_write = 100 * 1024;
	o.small_io_read = 200 * 1024;
	/* the setup's one write is request 1: the writes are 2..101 (50 and 100 slow), the
	 * reads 102..301 (150, 200, 250, 300 slow) */
	hold(&h, "null://eng?delay_us=200&slow_us=20000&slow_every=50");
	run_ok(&h, BENCH_SMALL_IO, &o, &rs);
	for (i = 0; i < 2; i++) {
		const struct bench_result *r = find(&rs, "small-io", mm[i]);
		const struct bench_latency *l;

		assert_non_null(r);
		assert_non_null(l = r->lat);
		assert_int_equal(l->n, i ? 200 : 100);
		assert_string_equal(l->rw, i ? "read" : "write");
		assert_int_equal(l->bs, 1024);
		for (k = 0; k < 2; k++) /* p50, p90: a 200 us request */
			if (l->pct_ns[k] < 200e3 * 0.99 || l->pct_ns[k] > 10e6)
				fail_msg("%s p%g = %.0f ns, not a 200 us request", mm[i],
					 bench_lat_pcts[k], l->pct_ns[k]);
		for (k = 2; k < 4; k++) /* p99, p99.9: a 20 ms one */
			if (l->pct_ns[k] < 20e6 * 0.99)
				fail_msg("%s p%g = %.0f ns, not a 20 ms request", mm[i],
					 bench_lat_pcts[k], l->pct_ns[k]);
		assert_true(l->min_ns >= 200e3 && l->max_ns >= 20e6);
		assert_true(l->mean_ns >= 0.98 * 200e3 + 0.02 * 20e6);
		assert_true(l->iops > 0 && l->iops <= 1e9 / l->mean_ns * 1.001);
	}
	release(&h);
	hold(&h, "null://eng");
	run_ok(&h, BENCH_RANDOM_IO, &o, &rs);
	o.meta_entries = 20;
	run_ok(&h, BENCH_METADATA, &o, &rs);
	release(&h);
	assert_string_equal(find(&rs, "random-io", "read-4k")->lat->rw, "randread");
	assert_int_equal(find(&rs, "random-io", "write-512k")->lat->bs, 512 * 1024);
	assert_int_equal(find(&rs, "metadata", "stat-miss-hot")->lat->n, 20);
	assert_string_equal(find(&rs, "metadata", "stat-hit-cold")->lat->rw, "");
	assert_null(find(&rs, "small-io", "write-1k-p99")->lat);

	a = bench_results_to_json(&rs);
	{
		const json_t *j = json_array_get(a, 0), *c = json_object_get(j, "clat_ns");
		struct bench_results back = { 0 };

		assert_string_equal(json_string_value(json_object_get(j, "metric")), "write-1k");
		assert_true(json_is_number(json_object_get(j, "iops")));
		assert_int_equal(json_integer_value(json_object_get(c, "N")), 100);
		assert_true(json_integer_value(json_object_get(json_object_get(c, "percentile"),
							       "99.900000")) >= 19800000);
		assert_string_equal(
			json_string_value(json_object_get(json_object_get(j, "job options"), "rw")),
			"write");
		assert_int_equal(bench_results_from_json(a, &back, err, sizeof(err)), 0);
		for (i = 0; i < rs.n; i++) {
			assert_int_equal(!!back.v[i].lat, !!rs.v[i].lat);
			for (k = 0; rs.v[i].lat && k < BENCH_LAT_NPCT; k++) /* whole ns, as fio */
				assert_float_equal(back.v[i].lat->pct_ns[k], rs.v[i].lat->pct_ns[k],
						   0.5);
		}
		bench_results_clear(&back);
	}
	doc = json_pack("{s:i, s:s, s:o, s:[], s:[]}", "run", 8, "created", "2026-01-01T00:00:00Z",
			"results", a, "baselines", "errors");
	text = bench_report_text(doc, err, sizeof(err));
	assert_non_null(text);
	/* The sleeps are lower bounds only: a loaded machine stretches them, so the text is
	 * held to the units and the floor, not to one printed figure. */
	{
		const char *p50 = strstr(text, "IOPS    clat p50 "), *p999 = strstr(text, "p99.9 ");
		double v50, v999;
		char u50[3], u999[3];

		assert_non_null(p50);
		assert_non_null(p999);
		assert_int_equal(sscanf(p50 + strlen("IOPS    clat p50 "), "%lf %2s", &v50, u50),
				 2);
		assert_int_equal(sscanf(p999 + strlen("p99.9 "), "%lf %2s", &v999, u999), 2);
		assert_true((!strcmp(u50, "us") && v50 >= 198) || !strcmp(u50, "ms"));
		assert_true(!strcmp(u999, "ms") && v999 >= 19.8);
	}
	html = bench_report_html(doc, err, sizeof(err));
	assert_non_null(html);
	assert_non_null(strstr(html, "completion latency (fio's clat percentiles)"));
	assert_non_null(strstr(html, "<th>p99.9</th>"));
	free(text);
	free(html);
	json_decref(doc);
	bench_results_clear(&rs);
}

static void
test_json_and_reports(void **state)
{
	struct bench_opts o = small_opts();
	struct bench_results rs = { 0 }, back = { 0 };
	struct held h;
	json_t *a, *doc;
	char err[512], *text, *html;
	size_t i;

	(void)state;
	o.repeats = 2;
	hold(&h, "null://eng");
	run_ok(&h, BENCH_SEQ_WRITE, &o, &rs);
	run_ok(&h, BENCH_SMALL_IO, &o, &rs);
	o.repeats = 1;
	o.warmup = 0;
	run_ok(&h, BENCH_VIDEO, &o, &rs);
	release(&h);
	rs.v[0].bottleneck = strdup("disk-bound (97% of raw disk)");
	a = bench_results_to_json(&rs);
	assert_int_equal(json_array_size(a), rs.n);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "client")),
			    "loopback");
	assert_int_equal(bench_results_from_json(a, &back, err, sizeof(err)), 0);
	assert_int_equal(back.n, rs.n);
	for (i = 0; i < rs.n; i++) {
		assert_string_equal(back.v[i].metric, rs.v[i].metric);
		assert_string_equal(back.v[i].unit, rs.v[i].unit);
		assert_int_equal(back.v[i].nruns, rs.v[i].nruns);
		assert_memory_equal(back.v[i].runs, rs.v[i].runs, rs.v[i].nruns * sizeof(double));
		assert_float_equal(back.v[i].st.median, rs.v[i].st.median, 1e-9);
		assert_float_equal(back.v[i].st.ci95_high, rs.v[i].st.ci95_high, 1e-9);
		assert_int_equal(back.v[i].pass, rs.v[i].pass);
		assert_int_equal(!!back.v[i].hist, !!rs.v[i].hist);
	}
	assert_string_equal(back.v[0].bottleneck, "disk-bound (97% of raw disk)");
	{
		json_t *bad = json_pack("[{s:s}]", "target", "x");

		assert_int_equal(bench_results_from_json(bad, &back, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "\"protocol\" is missing"));
		json_decref(bad);
	}
	doc = json_pack("{s:i, s:s, s:o, s:[], s:[]}", "run", 7, "created", "2026-01-01T00:00:00Z",
			"results", a, "baselines", "errors");
	text = bench_report_text(doc, err, sizeof(err));
	assert_non_null(text);
	assert_non_null(strstr(text, "run 7"));
	assert_non_null(strstr(text, "seq-write"));
	assert_non_null(strstr(text, "PASS"));
	html = bench_report_html(doc, err, sizeof(err));
	assert_non_null(html);
	assert_non_null(strstr(html, "<svg"));
	assert_non_null(strstr(html, "Throughput by protocol and workload"));
	assert_non_null(strstr(html, ">PASS<"));
	assert_null(strstr(html, "<script"));
	free(text);
	free(html);
	json_decref(doc);
	doc = json_object();
	assert_null(bench_report_text(doc, err, sizeof(err)));
	json_decref(doc);
	bench_results_clear(&rs);
	bench_results_clear(&back);
}

/* A null driver whose flush takes time (as a real COMMIT does), and one whose flush is a
 * no-op it admits to (libsmbclient's). */
static int
slow_flush(struct bench_conn *c, struct bench_file *f)
{
	usleep(20000);
	return bench_drv_null.flush(c, f);
}

static void
durability_run(const struct bench_driver *d, const char *url, enum bench_workload w,
	       struct bench_results *rs)
{
	struct bench_opts o = small_opts();
	struct bench_target t;
	char err[512] = "";

	assert_int_equal(bench_target_parse(url, &t, err, sizeof(err)), 0);
	if (bench_run(d, &t, w, &o, rs, err, sizeof(err)) != 0)
		fail_msg("%s: %s", bench_workload_name(w), err);
	bench_target_clear(&t);
}

static void
assert_flushed(const struct bench_result *r)
{
	assert_non_null(r);
	assert_string_equal(r->durability, "flushed");
	assert_non_null(r->unflushed);
	for (size_t i = 0; i < r->nruns; i++)
		assert_true(r->unflushed[i] > r->runs[i]); /* the 20 ms flush left out */
}

/* Every write result says whether its timing includes a flush the driver really makes:
 * SMB and NFS figures are compared like with like (tune_protocol_choice). */
static void
test_durability(void **state)
{
	struct bench_driver slow = bench_drv_null, noop = bench_drv_null;
	struct bench_results rs = { 0 }, back = { 0 };
	const struct bench_result *r;
	json_t *j;
	char err[256];

	(void)state;
	slow.flush = slow_flush;
	noop.flush_noop = true;
	durability_run(&slow, "null://dur?copy=0", BENCH_SEQ_WRITE, &rs);
	durability_run(&slow, "null://dur?copy=0", BENCH_SEQ_READ, &rs);
	durability_run(&slow, "null://dur?copy=0", BENCH_COPY, &rs);
	durability_run(&slow, "null://dur?copy=0", BENCH_MIXED_RW, &rs);
	durability_run(&slow, "null://dur?copy=0", BENCH_RANDOM_IO, &rs);
	durability_run(&slow, "null://dur?copy=0", BENCH_SMALL_IO, &rs);
	durability_run(&slow, "null://dur?copy=0", BENCH_SMALL_FILES, &rs);
	durability_run(&slow, "null://dur?copy=0", BENCH_VIDEO, &rs);
	assert_flushed(find(&rs, "seq-write", "write"));
	assert_flushed(find(&rs, "copy-in-share", "copy")); /* read+write, then flush */
	assert_flushed(find(&rs, "mixed-rw", "write"));
	assert_flushed(find(&rs, "mixed-rw", "total"));
	assert_flushed(find(&rs, "random-io", "write-4k"));
	assert_flushed(find(&rs, "small-io", "write-1k"));
	assert_null(find(&rs, "seq-read", "read")->durability);
	assert_null(find(&rs, "random-io", "read-4k")->durability);
	assert_null(find(&rs, "mixed-rw", "read")->durability);
	assert_string_equal(find(&rs, "small-files", "copy-in")->durability, "unflushed");
	assert_null(find(&rs, "small-files", "copy-in")->unflushed);
	assert_string_equal(find(&rs, "video-frames", "write-fps")->durability, "unflushed");
	assert_string_equal(find(&rs, "small-io", "write-1k-p99")->durability, "unflushed");
	/* JSON keeps both figures. */
	j = bench_results_to_json(&rs);
	assert_int_equal(bench_results_from_json(j, &back, err, sizeof(err)), 0);
	r = find(&back, "seq-write", "write");
	assert_flushed(r);
	assert_true(json_real_value(json_object_get(json_array_get(j, 0), "unflushed_median")) >
		    json_real_value(json_object_get(json_array_get(j, 0), "median")));
	assert_null(json_object_get(json_array_get(j, 1), "unflushed_runs")); /* a read */
	json_decref(j);
	bench_results_clear(&back);
	bench_results_clear(&rs);
	/* A driver that cannot flush: unflushed, and no second figure. */
	durability_run(&noop, "null://dur", BENCH_SEQ_WRITE, &rs);
	durability_run(&noop, "null://dur", BENCH_RANDOM_IO, &rs);
	durability_run(&slow, "null://dur", BENCH_COPY, &rs); /* server-side copy */
	assert_string_equal(find(&rs, "seq-write", "write")->durability, "unflushed");
	assert_null(find(&rs, "seq-write", "write")->unflushed);
	assert_string_equal(find(&rs, "random-io", "write-16m")->durability, "unflushed");
	assert_string_equal(find(&rs, "copy-in-share", "copy")->durability, "unflushed");
	assert_null(find(&rs, "copy-in-share", "copy")->unflushed);
	bench_results_clear(&rs);
	/* The SMB driver is the one that cannot. */
	assert_true(bench_drv_smb.flush_noop);
	assert_false(bench_drv_nfs.flush_noop);
}

static void
test_attribute(void **state)
{
	struct bench_baseline b = { .disk_write = 500, .disk_read = 600, .tcp = 118 };
	struct bench_result r = { .metric = "read", .unit = "MB/s" };

	(void)state;
	r.st.median = 114.5;
	bench_attribute(&r, &b, true);
	assert_string_equal(r.bottleneck, "network-bound (97% of TCP)");
	r.st.median = 76.7;
	bench_attribute(&r, &b, true);
	assert_string_equal(r.bottleneck, "protocol overhead 35% (ceiling: TCP 118 MB/s)");
	r.st.median = 590;
	bench_attribute(&r, &b, false);
	assert_string_equal(r.bottleneck, "disk-bound (98% of raw disk)");
	r.st.median = 1200;
	bench_attribute(&r, &b, false);
	assert_string_equal(r.bottleneck, "page cache (200% of raw disk: served from RAM)");
	r.unit = "us";
	bench_attribute(&r, &b, false);
	assert_null(r.bottleneck);

	/* The own TCP stream test over loopback gives a number and says how. */
	memset(&b, 0, sizeof(b));
	assert_int_equal(bench_baseline_tcp_loopback(64u << 20, &b), 0);
	assert_true(b.tcp > 10);
	assert_string_equal(b.tcp_method, "tcp stream (loopback)");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),	      cmocka_unit_test(test_sequential),
		cmocka_unit_test(test_copy),	      cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_small),	      cmocka_unit_test(test_random_meta),
		cmocka_unit_test(test_bigdir_tree),   cmocka_unit_test(test_video),
		cmocka_unit_test(test_refusals),      cmocka_unit_test(test_failure_mid_run),
		cmocka_unit_test(test_session),	      cmocka_unit_test(test_stop_and_cold),
		cmocka_unit_test(test_stale),	      cmocka_unit_test(test_kept_scratch),
		cmocka_unit_test(test_kept_bigdir),   cmocka_unit_test(test_lathist),
		cmocka_unit_test(test_latency_known), cmocka_unit_test(test_json_and_reports),
		cmocka_unit_test(test_attribute),     cmocka_unit_test(test_durability),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
