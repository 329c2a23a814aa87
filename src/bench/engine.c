/* engine.c - runs one workload through a driver: scratch directory, space check, warm-up,
 * repeats, statistics. Every path handed to the driver is built by run_path(), inside scratch. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/random.h>
#endif
#include <unistd.h>

#include "bench.h"
#include "run.h"
#include "bench_scratch.h"
#include "proc.h"
#include "timeutil.h"
#include "units.h"
#include "xmalloc.h"

static const char *const workload_names[BENCH_NWORKLOADS] = {
	"seq-write", "seq-read",  "copy-in-share", "mixed-rw",	   "small-files",
	"small-io",  "random-io", "metadata",	   "video-frames",
};

/* ProRes 422 HQ frames are its target bit rate over the frame rate (Apple's ProRes white
 * paper: 220 Mb/s for 1920x1080 and 884 Mb/s for 3840x2160 at 29.97 fps); v210 packs six
 * 10-bit 4:2:2 pixels in 16 bytes: 1920 / 6 * 16 = 5120 bytes a line. */
static const struct bench_video_format fmt_prores_1080 = {
	"prores422hq-1080p",
	"1080p ProRes 422 HQ",
	917584,
};
static const struct bench_video_format fmt_prores_2160 = {
	"prores422hq-2160p",
	"4K UHD ProRes 422 HQ",
	3687020,
};
static const struct bench_video_format fmt_v210_1080 = {
	"v210-1080p",
	"uncompressed 10-bit 1080p (v210)",
	5120u * 1080u,
};
static const struct bench_video_format *const video_formats[] = {
	&fmt_prores_1080,
	&fmt_prores_2160,
	&fmt_v210_1080,
	NULL,
};

const char *
bench_workload_name(enum bench_workload w)
{
	return (unsigned)w < BENCH_NWORKLOADS ? workload_names[w] : NULL;
}

int
bench_workload_parse(const char *name)
{
	int i;

	for (i = 0; i < BENCH_NWORKLOADS; i++)
		if (strcmp(workload_names[i], name) == 0)
			return i;
	return -EINVAL;
}

const struct bench_video_format *const *
bench_video_formats(void)
{
	return video_formats;
}

int
bench_video_parse(const char *spec, const struct bench_video_format **fmt, double *fps)
{
	const char *at = strchr(spec, '@');
	char *end;
	size_t i;

	if (!at)
		return -EINVAL;
	*fps = strtod(at + 1, &end);
	if (*end || end == at + 1 || !(*fps >= 1 && *fps <= 240))
		return -EINVAL;
	for (i = 0; video_formats[i]; i++)
		if (strlen(video_formats[i]->name) == (size_t)(at - spec) &&
		    strncmp(video_formats[i]->name, spec, at - spec) == 0) {
			*fmt = video_formats[i];
			return 0;
		}
	return -EINVAL;
}

/* ---- workloads: setup once, then one run each call ---- */

static int
seq_write(struct run *r)
{
	char p[256];
	double t0, t, fs;
	int rc;

	run_path(r, p, sizeof(p), "seq.dat");
	t0 = timeutil_mono();
	if ((rc = run_write_file(r, r->c, p, r->o.size, WRITE_BLOCK(r), true, &fs, r->err)) < 0)
		return rc;
	t = since(t0);
	run_record(r, "write", "MB/s", mbps(r->o.size, t), r->cold);
	run_durable(r, "write", true, mbps(r->o.size, t - fs));
	if ((rc = r->d->unlink(r->c, p)) < 0)
		return run_fail(r, r->c, rc, "unlink", p, r->err);
	return 0;
}

/* seq-read's file: in a kept scratch directory its own name, which a run leaves in place at
 * its end (rm_tree's keep), and written only when a file of that size is not there yet. */
#define KEPT_SEQ_READ "kept-seq-read.dat"

static int
seq_read_setup(struct run *r)
{
	struct bench_stat st;
	char p[256];

	run_path(r, p, sizeof(p), r->o.keep_scratch ? KEPT_SEQ_READ : "seq.dat");
	if (r->o.keep_scratch && r->d->stat(r->c, p, &st) == 0) {
		int rc;

		if (!st.is_dir && st.size == r->o.size)
			return 0;
		/* Another size (files are created exclusively): written anew. */
		if ((rc = st.is_dir ? -EISDIR : r->d->unlink(r->c, p)) < 0)
			return run_fail(r, r->c, rc, "unlink", p, r->err);
	}
	return run_write_file(r, r->c, p, r->o.size, WRITE_BLOCK(r), true, NULL, r->err);
}

static int
seq_read(struct run *r)
{
	uint64_t got;
	char p[256];
	double t0;
	int rc;

	run_path(r, p, sizeof(p), r->o.keep_scratch ? KEPT_SEQ_READ : "seq.dat");
	t0 = timeutil_mono();
	if ((rc = run_read_file(r, r->c, p, READ_BLOCK(r), &got, r->err)) < 0)
		return rc;
	if (got != r->o.size) {
		snprintf(r->err, sizeof(r->err), "seq-read: read %llu of %llu bytes of %s",
			 (unsigned long long)got, (unsigned long long)r->o.size, p);
		return -EIO;
	}
	run_record(r, "read", "MB/s", mbps(got, since(t0)), r->cold);
	return 0;
}

static int
copy_setup(struct run *r)
{
	char p[256];

	run_path(r, p, sizeof(p), "copy-src.dat");
	return run_write_file(r, r->c, p, r->o.size, WRITE_BLOCK(r), true, NULL, r->err);
}

static int
copy_rw(struct run *r, const char *src, const char *dst, double *fsecs)
{
	struct bench_file *in, *out;
	uint64_t off = 0;
	double tf;
	int rc, rc2;

	if ((rc = r->d->open(r->c, src, BENCH_RD, &in)) < 0)
		return run_fail(r, r->c, rc, "open", src, r->err);
	if ((rc = r->d->open(r->c, dst, BENCH_WR | BENCH_CREATE, &out)) < 0) {
		r->d->close(r->c, in);
		return run_fail(r, r->c, rc, "open", dst, r->err);
	}
	for (;;) {
		ssize_t n, w;

		if ((rc = run_check_stop(r, r->err)) < 0)
			break;
		if ((n = r->d->pread(r->c, in, r->rbuf, BLOCK, off)) < 0) {
			rc = run_fail(r, r->c, (int)n, "read", src, r->err);
			break;
		}
		if (n == 0)
			break;
		w = r->d->pwrite(r->c, out, r->rbuf, (size_t)n, off);
		if (w != n) {
			rc = run_fail(r, r->c, w < 0 ? (int)w : -EIO, "write", dst, r->err);
			break;
		}
		off += (uint64_t)n;
	}
	tf = timeutil_mono();
	if (rc == 0 && (rc = r->d->flush(r->c, out)) < 0)
		rc = run_fail(r, r->c, rc, "flush", dst, r->err);
	*fsecs = timeutil_mono() - tf;
	rc2 = r->d->close(r->c, out);
	if (rc == 0 && rc2 < 0)
		rc = run_fail(r, r->c, rc2, "close", dst, r->err);
	r->d->close(r->c, in);
	return rc;
}

static int
copy_run(struct run *r)
{
	char src[256], dst[256];
	double t0, t, fs = 0;
	bool rw = false;
	int rc = -EOPNOTSUPP;

	run_path(r, src, sizeof(src), "copy-src.dat");
	run_path(r, dst, sizeof(dst), "copy-dst.dat");
	t0 = timeutil_mono();
	if (r->d->copy && !r->copy_fallback) {
		rc = r->d->copy(r->c, src, dst);
		if (rc == -EOPNOTSUPP) {
			r->copy_fallback = true;
			snprintf(r->note, sizeof(r->note),
				 "read+write (server-side %s refused: %s)",
				 r->d->copy_method ? r->d->copy_method : "copy", r->d->error(r->c));
			t0 = timeutil_mono();
		} else if (rc < 0) {
			return run_fail(r, r->c, rc, "copy", src, r->err);
		} else {
			snprintf(r->note, sizeof(r->note), "server-side copy (%s)",
				 r->d->copy_method ? r->d->copy_method : "copy");
		}
	} else if (!r->copy_fallback) {
		snprintf(r->note, sizeof(r->note),
			 "read+write (the %s driver has no server-side "
			 "copy)",
			 r->d->name);
	}
	if (rc == -EOPNOTSUPP) {
		if ((rc = copy_rw(r, src, dst, &fs)) < 0)
			return rc;
		rw = true;
	}
	t = since(t0);
	run_record(r, "copy", "MB/s", mbps(r->o.size, t), r->cold);
	/* A server-side copy lands in the server's cache: nothing flushes it. */
	run_durable(r, "copy", rw, mbps(r->o.size, t - fs));
	if ((rc = r->d->unlink(r->c, dst)) < 0)
		return run_fail(r, r->c, rc, "unlink", dst, r->err);
	return 0;
}

struct rw_job {
	const struct run *r;
	struct bench_conn *c;
	char path[256];
	bool write;
	uint64_t bytes;
	double secs;
	double fsecs; /* of secs, the writer's flush */
	int rc;
	char err[512];
};

static void *
rw_job_run(void *arg)
{
	struct rw_job *j = arg;
	double t0 = timeutil_mono();

	if (j->write) {
		j->rc = run_write_file(j->r, j->c, j->path, j->r->o.size, WRITE_BLOCK(j->r), true,
				       &j->fsecs, j->err);
		j->bytes = j->r->o.size;
	} else {
		j->rc = run_read_file(j->r, j->c, j->path, READ_BLOCK(j->r), &j->bytes, j->err);
	}
	j->secs = since(t0);
	return NULL;
}

static int
mixed_setup(struct run *r)
{
	char p[256];
	int rc;

	run_path(r, p, sizeof(p), "mixed-src.dat");
	if ((rc = run_write_file(r, r->c, p, r->o.size, WRITE_BLOCK(r), true, NULL, r->err)) < 0)
		return rc;
	if (r->d->concurrent && r->d->no_threads) {
		snprintf(r->note, sizeof(r->note),
			 "one reader and one writer at once, two "
			 "connections (the writer in a child process: the %s library is not "
			 "thread-safe)",
			 r->d->name);
	} else if (r->d->concurrent) {
		if ((rc = r->d->connect(r->t, &r->c2, r->err, sizeof(r->err))) < 0)
			return rc;
		snprintf(r->note, sizeof(r->note),
			 "one reader and one writer at once, two "
			 "connections");
	} else {
		snprintf(r->note, sizeof(r->note),
			 "sequential: the %s driver cannot run two "
			 "connections at once, so read then write on one",
			 r->d->name);
	}
	return 0;
}

/* The writer of mixed-rw in a child process with its own connection, for drivers whose
 * library cannot serve two threads. The child reports through a pipe. */
struct rw_report {
	int rc;
	uint64_t bytes;
	double secs, fsecs;
	char err[512];
};

static int
rw_job_fork(struct rw_job *wr, pid_t *pid, int *fd)
{
	int p[2];

	if (pipe(p) < 0)
		return -errno;
	*pid = fork();
	if (*pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (*pid == 0) {
		struct rw_report rep = { 0 };
		ssize_t n;

		close(p[0]);
		rep.rc = wr->r->d->connect(wr->r->t, &wr->c, rep.err, sizeof(rep.err));
		if (rep.rc == 0) {
			rw_job_run(wr);
			rep.rc = wr->rc;
			rep.bytes = wr->bytes;
			rep.secs = wr->secs;
			rep.fsecs = wr->fsecs;
			memcpy(rep.err, wr->err, sizeof(rep.err));
			wr->r->d->disconnect(wr->c);
		}
		n = write(p[1], &rep, sizeof(rep));
		_exit(n == (ssize_t)sizeof(rep) ? 0 : 1);
	}
	close(p[1]);
	*fd = p[0];
	return 0;
}

static void
rw_job_reap(struct rw_job *wr, pid_t pid, int fd)
{
	struct rw_report rep;
	ssize_t n;
	int st;

	do
		n = read(fd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	close(fd);
	(void)proc_wait(pid, &st);
	if (n != (ssize_t)sizeof(rep)) {
		wr->rc = -EIO;
		snprintf(wr->err, sizeof(wr->err), "mixed-rw: the writer process died");
		return;
	}
	wr->rc = rep.rc;
	wr->bytes = rep.bytes;
	wr->secs = rep.secs;
	wr->fsecs = rep.fsecs;
	memcpy(wr->err, rep.err, sizeof(wr->err));
}

static int
mixed_run(struct run *r)
{
	struct rw_job rd = { .r = r, .c = r->c }, wr = { .r = r, .write = true };
	pthread_t th;
	double t0 = timeutil_mono(), total;
	int rc;

	run_path(r, rd.path, sizeof(rd.path), "mixed-src.dat");
	run_path(r, wr.path, sizeof(wr.path), "mixed-dst.dat");
	if (r->d->concurrent && r->d->no_threads) {
		pid_t pid = -1;
		int fd = -1;

		if ((rc = rw_job_fork(&wr, &pid, &fd)) < 0) {
			snprintf(r->err, sizeof(r->err), "mixed-rw: cannot start the writer: %s",
				 strerror(-rc));
			return rc;
		}
		rw_job_run(&rd);
		rw_job_reap(&wr, pid, fd);
	} else if (r->c2) {
		wr.c = r->c2;
		if ((rc = pthread_create(&th, NULL, rw_job_run, &wr)) != 0) {
			snprintf(r->err, sizeof(r->err), "mixed-rw: cannot start a thread: %s",
				 strerror(rc));
			return -rc;
		}
		rw_job_run(&rd);
		pthread_join(th, NULL);
	} else {
		wr.c = r->c;
		rw_job_run(&rd);
		if (rd.rc == 0)
			rw_job_run(&wr);
	}
	total = since(t0);
	if (rd.rc < 0 || wr.rc < 0) {
		snprintf(r->err, sizeof(r->err), "%s", rd.rc < 0 ? rd.err : wr.err);
		return rd.rc < 0 ? rd.rc : wr.rc;
	}
	run_record(r, "read", "MB/s", mbps(rd.bytes, rd.secs), r->cold);
	run_record(r, "write", "MB/s", mbps(wr.bytes, wr.secs), r->cold);
	run_durable(r, "write", true, mbps(wr.bytes, wr.secs - wr.fsecs));
	run_record(r, "total", "MB/s", mbps(rd.bytes + wr.bytes, total), r->cold);
	/* Without the flush both ends finish when the later of the two does. */
	run_durable(r, "total", true,
		    mbps(rd.bytes + wr.bytes,
			 rd.secs > wr.secs - wr.fsecs ? rd.secs : wr.secs - wr.fsecs));
	if ((rc = r->d->unlink(r->c, wr.path)) < 0)
		return run_fail(r, r->c, rc, "unlink", wr.path, r->err);
	return 0;
}

static int
small_files_setup(struct run *r)
{
	char p[256];
	int rc;

	run_path(r, p, sizeof(p), "sf");
	if ((rc = r->d->mkdir(r->c, p)) < 0)
		return run_fail(r, r->c, rc, "mkdir", p, r->err);
	return 0;
}

static int
small_files_run(struct run *r)
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

static int
small_io_setup(struct run *r)
{
	char p[256];

	run_path(r, p, sizeof(p), "smallio-r.dat");
	return run_write_file(r, r->c, p, r->o.small_io_read, WRITE_BLOCK(r), true, NULL, r->err);
}

static int
small_io_run(struct run *r)
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

static uint64_t
random_file_size(const struct bench_opts *o)
{
	uint64_t sz = o->size > (16u << 20) ? o->size : (16u << 20);

	if (sz > UINT64_MAX - (16u << 20))
		return UINT64_MAX;
	return (sz + (16u << 20) - 1) / (16u << 20) * (16u << 20);
}

static int
random_setup(struct run *r)
{
	char p[256];

	run_path(r, p, sizeof(p), "random.dat");
	return run_write_file(r, r->c, p, random_file_size(&r->o), WRITE_BLOCK(r), true, NULL,
			      r->err);
}

static int
random_run(struct run *r)
{
	uint64_t fsize = random_file_size(&r->o);
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

static int
meta_setup(struct run *r)
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

static int
meta_run(struct run *r)
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

static void
sleep_until(const struct run *r, double t)
{
	double d;

	while (!stopped(r) && (d = t - timeutil_mono()) > 0) {
		struct timespec ts = { (time_t)d, (long)((d - floor(d)) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

/* Paced frames: frame i is due at t0 + i / fps; a frame that cannot start within one frame
 * time of its due time is dropped, as a capture device with a one-frame buffer would. */
static int
video_pass(struct run *r, bool write, uint64_t frames_on_disk, uint64_t *written)
{
	const struct bench_video_format *fmt = r->o.video;
	uint64_t n = (uint64_t)ceil(r->o.video_fps * r->o.video_seconds), i, done = 0, dropped = 0;
	double period = 1.0 / r->o.video_fps, *lat = xcalloc(n ? n : 1, sizeof(*lat));
	double t0, t_end, p99;
	struct bench_file *f;
	char p[256];
	int rc;

	run_path(r, p, sizeof(p), "video.dat");
	rc = r->d->open(r->c, p, write ? BENCH_WR | BENCH_CREATE : BENCH_RD, &f);
	if (rc < 0) {
		free(lat);
		return run_fail(r, r->c, rc, "open", p, r->err);
	}
	t0 = timeutil_mono();
	t_end = t0;
	for (i = 0; i < n; i++) {
		double due = t0 + (double)i * period, t1;
		uint64_t slot = write ? done : (frames_on_disk ? i % frames_on_disk : 0);
		ssize_t got;

		sleep_until(r, due);
		if ((rc = run_check_stop(r, r->err)) < 0)
			break;
		t1 = timeutil_mono();
		if (t1 > due + period) {
			dropped++;
			continue;
		}
		got = write ? r->d->pwrite(r->c, f, r->buf, fmt->frame_bytes,
					   slot * fmt->frame_bytes)
			    : r->d->pread(r->c, f, r->rbuf, fmt->frame_bytes,
					  slot * fmt->frame_bytes);
		if (got != (ssize_t)fmt->frame_bytes) {
			rc = run_fail(r, r->c, got < 0 ? (int)got : -EIO, write ? "write" : "read",
				      p, r->err);
			break;
		}
		t_end = timeutil_mono();
		lat[done++] = (t_end - t1) * 1e6;
	}
	if (rc == 0 && write && (rc = r->d->flush(r->c, f)) < 0)
		rc = run_fail(r, r->c, rc, "flush", p, r->err);
	r->d->close(r->c, f);
	if (rc == 0) {
		double secs = t_end - t0 > (double)n * period ? t_end - t0 : (double)n * period;
		const char *fps = write ? "write-fps" : "read-fps";
		struct metric *m;

		run_record(r, fps, "fps", (double)done / secs, r->cold);
		run_record(r, write ? "write-dropped" : "read-dropped", "frames", (double)dropped,
			   r->cold);
		qsort(lat, done, sizeof(*lat), run_cmp_double);
		p99 = bench_quantile(lat, done, 0.99);
		run_record(r, write ? "write-p99" : "read-p99", "us", p99, r->cold);
		if (write) {
			/* Frames are timed as they are written; the flush after them is not. */
			run_durable(r, "write-fps", false, 0);
			run_durable(r, "write-dropped", false, 0);
			run_durable(r, "write-p99", false, 0);
		}
		if ((m = run_metric(r, fps)) && r->measuring) {
			int ok = dropped == 0 && done > 0 && p99 <= 0.9 * period * 1e6;

			m->pass = m->pass < 0 ? ok : (m->pass && ok);
		}
	}
	*written = done;
	free(lat);
	return rc;
}

static int
video_run(struct run *r)
{
	uint64_t written = 0, ignored;
	char p[256];
	int rc;

	snprintf(r->note, sizeof(r->note),
		 "%s at %g fps for %g s: pass needs no dropped frame "
		 "and p99 frame time <= %.1f ms (90%% of the %.1f ms frame time)",
		 r->o.video->label, r->o.video_fps, r->o.video_seconds, 900.0 / r->o.video_fps,
		 1000.0 / r->o.video_fps);
	if ((rc = video_pass(r, true, 0, &written)) < 0)
		return rc;
	if ((rc = video_pass(r, false, written, &ignored)) < 0)
		return rc;
	run_path(r, p, sizeof(p), "video.dat");
	if ((rc = r->d->unlink(r->c, p)) < 0)
		return run_fail(r, r->c, rc, "unlink", p, r->err);
	return 0;
}

static const struct {
	int (*setup)(struct run *r);
	int (*run)(struct run *r);
} workloads[BENCH_NWORKLOADS] = {
	[BENCH_SEQ_WRITE] = { NULL, seq_write },
	[BENCH_SEQ_READ] = { seq_read_setup, seq_read },
	[BENCH_COPY] = { copy_setup, copy_run },
	[BENCH_MIXED_RW] = { mixed_setup, mixed_run },
	[BENCH_SMALL_FILES] = { small_files_setup, small_files_run },
	[BENCH_SMALL_IO] = { small_io_setup, small_io_run },
	[BENCH_RANDOM_IO] = { random_setup, random_run },
	[BENCH_METADATA] = { meta_setup, meta_run },
	[BENCH_VIDEO] = { NULL, video_run },
};

static void
normalize(struct bench_opts *o)
{
	if (!o->size)
		o->size = BENCH_DEFAULT_SIZE;
	if (!o->repeats)
		o->repeats = BENCH_DEFAULT_REPEATS;
	if (!o->small_files)
		o->small_files = 100;
	if (!o->small_io_write)
		o->small_io_write = o->size < 10000000 ? o->size : 10000000;
	if (!o->small_io_read)
		o->small_io_read = o->size < 100000000 ? o->size : 100000000;
	if (!o->meta_entries)
		o->meta_entries = 1000;
	if (!o->video)
		o->video = &fmt_prores_1080;
	if (!(o->video_fps > 0))
		o->video_fps = 30;
	if (!(o->video_seconds > 0))
		o->video_seconds = 10;
	if (!o->seed)
		o->seed = 0x6e617374756e65ull; /* "nastune" */
}

uint64_t
bench_footprint(enum bench_workload w, const struct bench_opts *opts)
{
	struct bench_opts o = *opts;
	double frames;

	normalize(&o);
	switch (w) {
	case BENCH_SEQ_WRITE:
	case BENCH_SEQ_READ:
		return o.size;
	case BENCH_COPY:
	case BENCH_MIXED_RW:
		return units_mul_sat(2, o.size);
	case BENCH_SMALL_FILES:
		return units_mul_sat(o.small_files, SMALL_FILE + 8192);
	case BENCH_SMALL_IO:
		return units_add_sat(o.small_io_read, o.small_io_write);
	case BENCH_RANDOM_IO:
		return random_file_size(&o);
	case BENCH_METADATA:
		return units_mul_sat(o.meta_entries, 4096);
	case BENCH_VIDEO:
		/* Converting a double beyond 2^64 to an integer is undefined: saturate first. */
		frames = ceil(o.video_fps * o.video_seconds);
		if (!(frames >= 0 && frames < 1e18))
			return UINT64_MAX;
		return units_mul_sat(o.video->frame_bytes, (uint64_t)frames);
	default:
		return 0;
	}
}

int
bench_opts_check(const struct bench_opts *o, char *err, size_t errlen)
{
	if (o->size > BENCH_MAX_SIZE)
		snprintf(err, errlen, "size %llu is above the limit of %llu bytes (16T)",
			 (unsigned long long)o->size, (unsigned long long)BENCH_MAX_SIZE);
	else if (o->small_io_write > BENCH_MAX_SIZE || o->small_io_read > BENCH_MAX_SIZE)
		snprintf(err, errlen, "small-io volume %llu is above the limit of %llu bytes (16T)",
			 (unsigned long long)(o->small_io_write > o->small_io_read
						      ? o->small_io_write
						      : o->small_io_read),
			 (unsigned long long)BENCH_MAX_SIZE);
	else if (o->repeats > BENCH_MAX_REPEATS || o->warmup > BENCH_MAX_WARMUP)
		snprintf(err, errlen, "%u repeats and %u warm-up runs: at most %u and %u",
			 o->repeats, o->warmup, BENCH_MAX_REPEATS, BENCH_MAX_WARMUP);
	else if (o->small_files > BENCH_MAX_FILES)
		snprintf(err, errlen, "%u small files is above the limit of %u", o->small_files,
			 BENCH_MAX_FILES);
	else if (o->meta_entries > BENCH_MAX_ENTRIES)
		snprintf(err, errlen, "%u metadata entries is above the limit of %u",
			 o->meta_entries, BENCH_MAX_ENTRIES);
	else if (o->video_fps < 0 || o->video_fps > 240 || o->video_fps != o->video_fps)
		snprintf(err, errlen, "video frame rate %g is outside 1 to 240", o->video_fps);
	else if (o->video_seconds < 0 || o->video_seconds > 3600 ||
		 o->video_seconds != o->video_seconds)
		snprintf(err, errlen, "video seconds %g is outside 0.1 to 3600", o->video_seconds);
	else
		return 0;
	return -EINVAL;
}

/* One connection to a target and what the workloads run on it share: the buffer reads land
 * in, the preflight that passed on it, and the kept scratch directory found. */
struct bench_session {
	const struct bench_driver *d;
	const struct bench_target *t;
	struct bench_conn *c;
	unsigned char *rbuf; /* BUFSZ, where reads land */
	unsigned char *own;  /* a pattern of the session's own, for a seed not cached */
	uint64_t own_seed, own_rng;
	uint64_t checked; /* the largest footprint a preflight passed on c; 0 none yet */
	bool forced;	  /* that preflight was told to pass a Time Machine root */
	char kept[192];	  /* the kept scratch directory this session found or made */
};

/* The preflight of r's workload, unless one on this connection already passed with room for
 * it: a session's workloads run one after another, each removing its files before the next
 * starts, and the list of a large share's root would otherwise be read at every workload. */
static int
preflight(struct run *r, struct bench_session *s)
{
	uint64_t need = bench_footprint(r->w, &r->o);
	int rc;

	if (s->checked && need <= s->checked && (!s->forced || r->o.force))
		return 0;
	if ((rc = bench_preflight(r->d, r->c, r->t->url, workload_names[r->w], need, r->o.force,
				  r->err, sizeof(r->err))) < 0)
		return rc;
	s->checked = need ? need : 1;
	s->forced = r->o.force;
	return 0;
}

static int
prepare(struct run *r, struct bench_session *sess)
{
	static unsigned seq;
	char tag[16], why[512];
	int rc;

	if ((rc = preflight(r, sess)) < 0)
		return rc;
	if (r->o.keep_scratch) {
		if (strncmp(r->o.keep_scratch, BENCH_SCRATCH_PREFIX,
			    strlen(BENCH_SCRATCH_PREFIX)) ||
		    strchr(r->o.keep_scratch, '/') ||
		    strlen(r->o.keep_scratch) >= sizeof(r->scratch)) {
			snprintf(r->err, sizeof(r->err), "bad kept scratch directory name \"%s\"",
				 r->o.keep_scratch);
			return -EINVAL;
		}
		snprintf(r->scratch, sizeof(r->scratch), "%s", r->o.keep_scratch);
		/* Reused only while it is the directory this process made (its identity, as
		 * the protocol gives it): a link or another directory swapped in between calls
		 * is left alone, and so is whatever a share user named so in advance. */
		rc = scratch_check(r->d, r->c, r->t->url, r->scratch, why, sizeof(why));
		if (rc == 0) {
			snprintf(sess->kept, sizeof(sess->kept), "%s", r->scratch);
			return 0;
		}
		if (rc != -ENOENT) {
			snprintf(r->err, sizeof(r->err), "%s", why);
			r->scratch[0] = '\0';
			return rc;
		}
	} else {
		snprintf(tag, sizeof(tag), "%u", __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST));
		bench_scratch_name(r->scratch, sizeof(r->scratch), tag);
	}
	if ((rc = r->d->mkdir(r->c, r->scratch)) < 0) {
		snprintf(r->err, sizeof(r->err), "cannot create the scratch directory in %s: %s",
			 r->t->url, r->d->error(r->c));
		r->scratch[0] = '\0';
		return rc;
	}
	if ((rc = scratch_made(r->d, r->c, r->t->url, r->scratch)) < 0) {
		snprintf(r->err, sizeof(r->err), "the scratch directory %s in %s: %s", r->scratch,
			 r->t->url,
			 rc == -ENOTDIR ? "no directory right after mkdir" : strerror(-rc));
		r->scratch[0] = '\0';
		return rc;
	}
	/* No identity to know it again by in the next call (AFP without persistent CNIDs):
	 * this run removes it whole, and each call makes its own. */
	if (rc == 1)
		r->o.keep_scratch = NULL;
	if (r->o.keep_scratch)
		snprintf(sess->kept, sizeof(sess->kept), "%s", r->scratch);
	return 0;
}

/* "cold" only when the drop reached the cache the server reads from: a remote server still
 * holds the file in its RAM, and its results are about that cache, not the disk. */
static const char *
cache_label(const struct run *r, const struct metric *m)
{
	if (!m->cold)
		return "hot";
	return server_cache_dropped(r) ? "cold" : "client-cold";
}

static void
to_results(struct run *r, struct bench_results *out)
{
	size_t i;

	for (i = 0; i < r->nm; i++) {
		struct metric *m = &r->m[i];
		struct bench_result res = {
			.target = r->t->url,
			.protocol = (char *)r->d->name,
			.workload = (char *)workload_names[r->w],
			.metric = (char *)m->name,
			.unit = (char *)m->unit,
			.client = "loopback",
			.cache = (char *)cache_label(r, m),
			.note = r->note[0] ? r->note : NULL,
			.runs = m->v,
			.nruns = m->n,
			.pass = m->pass,
			.hist = m->hist,
			.durability = (char *)m->durability,
			.unflushed = m->nuf == m->n ? m->uf : NULL,
		};
		struct bench_latency lat;
		uint64_t seed = r->o.seed;
		const char *s;

		for (s = m->name; *s; s++)
			seed = seed * 31 + (unsigned char)*s;
		bench_stats_compute(m->v, m->n, seed, &res.st);
		if (m->lh) {
			bench_lathist_summary(m->lh, &lat);
			snprintf(lat.rw, sizeof(lat.rw), "%s", m->rw ? m->rw : "");
			lat.bs = m->bs;
			res.lat = &lat;
		}
		bench_results_add(out, &res);
	}
}

int
bench_session_open(const struct bench_driver *d, const struct bench_target *t,
		   struct bench_session **out, char *err, size_t errlen)
{
	struct bench_session *s;
	int rc;

	*out = NULL;
	if (!d || !t) {
		snprintf(err, errlen, "bench_session_open: bad arguments");
		return -EINVAL;
	}
	s = xcalloc(1, sizeof(*s));
	s->d = d;
	s->t = t;
	if ((rc = d->connect(t, &s->c, err, errlen)) < 0) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void
bench_session_close(struct bench_session *s)
{
	if (!s)
		return;
	s->d->disconnect(s->c);
	free(s->rbuf);
	free(s->own);
	free(s);
}

/* BUFSZ bytes from splitmix64 seeded with seed into buf; returns the generator's state. */
static uint64_t
fill_pattern(unsigned char *buf, uint64_t seed)
{
	uint64_t st = seed;

	for (size_t k = 0; k < BUFSZ / 8; k++) {
		uint64_t v = bench_rand(&st);

		memcpy(buf + k * 8, &v, 8);
	}
	return st;
}

/* What writes send: BUFSZ seeded random bytes (no server can compress or deduplicate them),
 * made once per process for the first seed asked (filling 16 MiB takes about 3 ms, and a
 * tune measures in a hundred short calls) and read-only after; another seed gets the
 * session's own. *rng gets the generator's state after the fill. */
static const unsigned char *
pattern(struct bench_session *s, uint64_t seed, uint64_t *rng)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static unsigned char *buf;
	static uint64_t buf_seed, buf_rng;
	const unsigned char *out = NULL;

	pthread_mutex_lock(&mu);
	if (!buf) {
		buf = xmalloc(BUFSZ);
		buf_rng = fill_pattern(buf, seed);
		buf_seed = seed;
	}
	if (buf_seed == seed) {
		*rng = buf_rng;
		out = buf;
	}
	pthread_mutex_unlock(&mu);
	if (out)
		return out;
	if (!s->own || s->own_seed != seed) {
		if (!s->own)
			s->own = xmalloc(BUFSZ);
		s->own_rng = fill_pattern(s->own, seed);
		s->own_seed = seed;
	}
	*rng = s->own_rng;
	return s->own;
}

int
bench_session_run(struct bench_session *s, enum bench_workload w, const struct bench_opts *opts,
		  struct bench_results *out, char *err, size_t errlen)
{
	const struct bench_driver *d;
	const struct bench_target *t;
	struct run *r;
	char e2[512];
	unsigned i, total;
	size_t k;
	int rc, rc2;

	if ((unsigned)w >= BENCH_NWORKLOADS || !s) {
		snprintf(err, errlen, "bench_session_run: bad arguments");
		return -EINVAL;
	}
	d = s->d;
	t = s->t;
	r = xcalloc(1, sizeof(*r));
	r->d = d;
	r->t = t;
	r->c = s->c;
	r->o = *opts;
	r->w = w;
	normalize(&r->o);
	/* Locally every run gets a new directory: the posix driver's guarantees for root (paths
	 * resolved from the descriptors of directories it made itself) stay whole. */
	if (strcmp(d->name, "posix") == 0)
		r->o.keep_scratch = NULL;
	if ((rc = bench_opts_check(&r->o, r->err, sizeof(r->err))) < 0)
		goto out;
	if ((rc = prepare(r, s)) < 0)
		goto out;
	r->buf = pattern(s, r->o.seed, &r->rng);
	if (!s->rbuf)
		s->rbuf = xmalloc(BUFSZ);
	r->rbuf = s->rbuf;
	if (workloads[w].setup && (rc = workloads[w].setup(r)) < 0)
		goto out;
	total = r->o.warmup + r->o.repeats;
	for (i = 0; i < total; i++) {
		if ((rc = run_check_stop(r, r->err)) < 0)
			goto out;
		if (r->o.progress) {
			struct bench_progress p = { t->url, workload_names[w], i + 1, total,
						    i < r->o.warmup };

			r->o.progress(&p, r->o.progress_arg);
		}
		r->measuring = i >= r->o.warmup;
		r->cold = false;
		if (r->measuring && r->o.cache == BENCH_CACHE_COLD && r->o.drop_caches)
			r->cold = r->o.drop_caches(r->o.drop_arg) == 0;
		if ((rc = workloads[w].run(r)) < 0)
			goto out;
	}
out:
	if (r->c2)
		d->disconnect(r->c2);
	if (r->scratch[0] &&
	    (rc2 = scratch_remove(d, r->c, t->url, r->scratch,
				  r->o.keep_scratch ? KEPT_SEQ_READ : NULL, e2, sizeof(e2))) < 0 &&
	    rc == 0) {
		snprintf(r->err, sizeof(r->err), "%s", e2);
		rc = rc2;
	}
	if (rc == 0)
		to_results(r, out);
	else
		snprintf(err, errlen, "%s", r->err[0] ? r->err : strerror(-rc));
	for (k = 0; k < r->nm; k++) {
		free(r->m[k].v);
		free(r->m[k].hist);
		bench_lathist_free(r->m[k].lh);
		free(r->m[k].uf);
	}
	free(r);
	return rc;
}

int
bench_run(const struct bench_driver *d, const struct bench_target *t, enum bench_workload w,
	  const struct bench_opts *opts, struct bench_results *out, char *err, size_t errlen)
{
	struct bench_session *s;
	int rc;

	if ((unsigned)w >= BENCH_NWORKLOADS || !d || !t) {
		snprintf(err, errlen, "bench_run: bad arguments");
		return -EINVAL;
	}
	if ((rc = bench_opts_check(opts, err, errlen)) < 0)
		return rc;
	if ((rc = bench_session_open(d, t, &s, err, errlen)) < 0)
		return rc;
	rc = bench_session_run(s, w, opts, out, err, errlen);
	bench_session_close(s);
	return rc;
}
