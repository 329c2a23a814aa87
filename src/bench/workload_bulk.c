/* workload_bulk.c - the bulk-transfer workloads: seq-write, seq-read, copy-in-share (a
 * server-side copy where the driver has one) and mixed-rw (a reader and a writer at once, the
 * writer in a child process for drivers that cannot share a connection). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "run.h"
#include "workloads.h"
#include "xmalloc.h"

int
wl_seq_write(struct run *r)
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

int
wl_seq_read_setup(struct run *r)
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

int
wl_seq_read(struct run *r)
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

int
wl_copy_setup(struct run *r)
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

int
wl_copy_run(struct run *r)
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

int
wl_mixed_setup(struct run *r)
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

int
wl_mixed_run(struct run *r)
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
