/* drvtool.c - exercises one benchmark driver without the engine: every vtable call from the
 * command line, with timings for the sequential transfers. Built as build/tests/drvtool.
 *
 * usage: drvtool [--credentials FILE] [--block SIZE] [--no-flush] URL COMMAND [ARGS]
 * --block: the size of each transfer; by default the engine's for the driver: its
 * read_block or write_block when it has them, else 1 MiB.
 * put and seqwrite end with flush() (SMB: none in libsmbclient; NFS COMMIT; FPFlushFork)
 * unless --no-flush; then their time ends with the last write, before close(), which over
 * NFS COMMITs (as libnfs and the kernel's client do) and would put the disk in the figure.
 * Exit: 0 ok; 1 the driver failed (its error() sentence on stderr); 2 usage. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_driver.h"
#include "xmalloc.h"

static const struct bench_driver *drv;
static struct bench_conn *conn;
static size_t block;	   /* --block; 0: as the engine does (1 MiB; reads: read_block) */
static bool block_forced;
static bool no_flush;
static bool quiet; /* mput, mget: one line for all the files, not one each */

static void
usage(void)
{
	fprintf(stderr,
		"usage: drvtool [--credentials FILE] [--block SIZE] [--no-flush] URL COMMAND [ARGS]\n"
		"commands: put LOCAL REMOTE | get REMOTE LOCAL | mkdir P | rmdir P | rm P |\n"
		"          mv FROM TO | stat P | ls [P] | copy FROM TO | space [P] |\n"
		"          seqwrite P SIZE_MB | seqread P | info |\n"
		"          mput LOCALDIR DIR | mget DIR LOCALDIR | mstat DIR\n");
	exit(2);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
fail(const char *what)
{
	fprintf(stderr, "drvtool: %s: %s\n", what, drv->error(conn));
	return 1;
}

static void
report(const char *what, uint64_t bytes, double secs)
{
	if (quiet)
		return;
	if (secs <= 0)
		secs = 1e-9;
	printf("%s: %llu bytes in %.3f s = %.1f MB/s\n", what, (unsigned long long)bytes, secs,
	       (double)bytes / 1e6 / secs);
}

/* Page-aligned: the kernel's copies into and out of a buffer (rep movsb) run slower when
 * its start is not cache-line aligned, as malloc's large blocks are not (16 bytes past). */
static char *
block_alloc(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, block) != 0) {
		perror("drvtool: posix_memalign");
		exit(1);
	}
	return p;
}

/* The buffer of a transfer without the local thread: one for every file of mput and mget
 * (a fresh 8 MiB block a 66 KB file costs its page faults each time), else its own. */
static char *small_buf;

static char *
buf_get(void)
{
	if (!quiet)
		return block_alloc();
	if (!small_buf)
		small_buf = block_alloc();
	return small_buf;
}

static void
buf_put(char *buf)
{
	if (buf != small_buf)
		free(buf);
}

static int
open_for_write(const char *path, struct bench_file **f)
{
	int rc = drv->open(conn, path, BENCH_WR | BENCH_CREATE | BENCH_TRUNC, f);

	if (rc == -EEXIST)
		rc = drv->open(conn, path, BENCH_WR | BENCH_TRUNC, f);
	return rc;
}

/* The local side of put and get runs in its own thread on two buffers (but for NFS, see
 * local_thread), so that reading or writing the local file overlaps the driver's transfer
 * of the other buffer, as smbclient's own I/O loop does. Only the main thread calls the driver (libsmbclient keeps
 * per-thread state). A slot is full (n >= 0 bytes, n == 0 at end) or empty (n == -1). */
struct pipe2 {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *buf[2];
	ssize_t n[2];
	int fd;
	bool failed;		/* local I/O failed, or the driver side gave up */
	bool to_local;		/* get: the thread writes slots to fd; put: it fills them */
};

static void *
local_side(void *arg)
{
	struct pipe2 *p = arg;

	for (unsigned i = 0;; i ^= 1) {
		pthread_mutex_lock(&p->mu);
		/* put: wait for slot i to be empty; get: wait for it to be full */
		while (!p->failed && (p->to_local ? p->n[i] < 0 : p->n[i] >= 0))
			pthread_cond_wait(&p->cv, &p->mu);
		bool stop = p->failed;
		ssize_t len = p->n[i];
		pthread_mutex_unlock(&p->mu);
		if (stop)
			return NULL;
		ssize_t got;
		if (p->to_local) {
			got = len > 0 && write(p->fd, p->buf[i], (size_t)len) != len ? -1 : 0;
		} else {
			got = 0;
			while (got < (ssize_t)block) {	/* full blocks but the last */
				ssize_t r = read(p->fd, p->buf[i] + got, block - (size_t)got);
				if (r < 0) {
					got = -1;
					break;
				}
				if (r == 0)
					break;
				got += r;
			}
		}
		pthread_mutex_lock(&p->mu);
		if (got < 0) {
			perror("drvtool: local file");
			p->failed = true;
		} else {
			p->n[i] = p->to_local ? -1 : got;
		}
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (got < 0 || len == 0 || (!p->to_local && got == 0))
			return NULL;
	}
}

static void
pipe2_start(struct pipe2 *p, pthread_t *th, int fd, bool to_local)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->buf[0] = block_alloc();
	p->buf[1] = block_alloc();
	p->n[0] = p->n[1] = -1;
	p->fd = fd;
	p->to_local = to_local;
	if (pthread_create(th, NULL, local_side, p) != 0) {
		perror("drvtool: pthread_create");
		exit(1);
	}
}

/* The driver side: waits until slot i is full (put) or empty (get). False when the local
 * side failed. */
static bool
pipe2_wait(struct pipe2 *p, unsigned i)
{
	bool ok;

	pthread_mutex_lock(&p->mu);
	while (!p->failed && (p->to_local ? p->n[i] >= 0 : p->n[i] < 0))
		pthread_cond_wait(&p->cv, &p->mu);
	ok = !p->failed;
	pthread_mutex_unlock(&p->mu);
	return ok;
}

/* Hands slot i over: put marks it empty, get marks it full with n bytes. */
static void
pipe2_post(struct pipe2 *p, unsigned i, ssize_t n)
{
	pthread_mutex_lock(&p->mu);
	p->n[i] = n;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* Ends the pipe; fail: the driver side gave up. Returns false when the local side failed. */
static bool
pipe2_end(struct pipe2 *p, pthread_t th, bool fail)
{
	bool ok;

	if (fail) {
		pthread_mutex_lock(&p->mu);
		p->failed = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	pthread_join(th, NULL);
	ok = fail || !p->failed;
	free(p->buf[0]);
	free(p->buf[1]);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	return ok;
}

/* Whether the local side of put and get gets its thread. Not for NFS: nfs-cp's loop is
 * synchronous (read, then send; receive, then write), and on the 2-core lab the thread's
 * buffers crossing cores cost the NFS driver more CPU than the overlap gained. */
static bool
local_thread(int fd)
{
	/* small files (mput, mget): a thread a file costs more than the overlap gains */
	return fd >= 0 && strcmp(drv->name, "nfs") != 0 && !quiet;
}

/* Full blocks from fd but the last (a pipe or a slow file returns less). */
static ssize_t
read_full(int fd, char *buf)
{
	size_t got = 0;

	while (got < block) {
		ssize_t r = read(fd, buf + got, block - got);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Writes from fd (or, fd < 0, total bytes of a fixed pattern) to the remote path. */
static int
do_write(const char *path, int fd, uint64_t total, const char *label)
{
	struct bench_file *f;
	struct pipe2 p;
	pthread_t th;
	char *buf = NULL;
	uint64_t off = 0;
	double t0, t1 = 0;
	int rc = 1;
	bool thread = local_thread(fd);

	if (!thread)
		buf = buf_get();
	if (fd < 0) {
		for (size_t i = 0; i < block; i++)	/* not all zeroes: nothing may compress it */
			buf[i] = (char)(i * 2654435761u >> 13);
	}
	t0 = now();
	if (open_for_write(path, &f) < 0) {
		buf_put(buf);
		return fail("open");
	}
	if (thread)
		pipe2_start(&p, &th, fd, false);
	for (unsigned i = 0;; i ^= 1) {
		const char *src = buf;
		ssize_t n;

		if (thread) {
			if (!pipe2_wait(&p, i))
				goto out;
			n = p.n[i];
			src = p.buf[i];
		} else if (fd >= 0) {
			n = read_full(fd, buf);
			if (n < 0) {
				perror("drvtool: local file");
				goto out;
			}
		} else {
			n = (ssize_t)(total - off < block ? total - off : block);
		}
		if (n == 0)
			break;
		ssize_t w = drv->pwrite(conn, f, src, (size_t)n, off);
		if (w != n) {
			fail("write");
			goto out;
		}
		off += (uint64_t)n;
		if (thread)
			pipe2_post(&p, i, -1);
	}
	if (!no_flush && drv->flush(conn, f) < 0) {
		fail("flush");
		goto out;
	}
	if (no_flush)
		t1 = now(); /* unflushed: not close()'s COMMIT either */
	rc = 0;
out:
	if (thread && !pipe2_end(&p, th, rc != 0))
		rc = 1;
	if (drv->close(conn, f) < 0 && rc == 0)
		rc = fail("close");
	if (rc == 0)
		report(label, off, (t1 > 0 ? t1 : now()) - t0);
	buf_put(buf);
	return rc;
}

/* Reads the remote path to fd (or, fd < 0, discards it). */
static int
do_read(const char *path, int fd, const char *label)
{
	struct bench_file *f;
	struct pipe2 p;
	pthread_t th;
	char *buf = NULL;
	uint64_t off = 0;
	double t0 = now();
	int rc = 1;
	bool thread = local_thread(fd);

	if (drv->open(conn, path, BENCH_RD, &f) < 0)
		return fail("open");
	if (thread)
		pipe2_start(&p, &th, fd, true);
	else
		buf = buf_get();
	for (unsigned i = 0;; i ^= 1) {
		char *dst = buf;

		if (thread) {
			if (!pipe2_wait(&p, i))
				goto out;
			dst = p.buf[i];
		}
		ssize_t n = drv->pread(conn, f, dst, block, off);
		if (n < 0) {
			fail("read");
			goto out;
		}
		if (thread)
			pipe2_post(&p, i, n);
		else if (fd >= 0 && n > 0 && write(fd, buf, (size_t)n) != n) {
			perror("drvtool: local file");
			goto out;
		}
		if (n == 0)
			break;
		off += (uint64_t)n;
	}
	rc = 0;
out:
	if (thread && !pipe2_end(&p, th, rc != 0))
		rc = 1;
	drv->close(conn, f);
	if (rc == 0)
		report(label, off, now() - t0);
	buf_put(buf);
	return rc;
}

static int
print_entry(const char *name, const struct bench_stat *st, void *arg)
{
	(void)arg;
	printf("%s%s\t%llu\n", name, st->is_dir ? "/" : "", (unsigned long long)st->size);
	return 0;
}

/* The names of the files in a remote directory, as list() gives them. */
struct names {
	char **v;
	size_t n;
};

static int
add_name(const char *name, const struct bench_stat *st, void *arg)
{
	struct names *nm = arg;

	if (!st->is_dir) {
		nm->v = xreallocarray(nm->v, nm->n + 1, sizeof(*nm->v));
		nm->v[nm->n++] = xstrdup(name);
	}
	return 0;
}

static void
names_free(struct names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->v[i]);
	free(nm->v);
}

static void
report_files(const char *what, size_t files, uint64_t bytes, double secs)
{
	printf("%s: %zu files, %llu bytes in %.3f s = %.1f files/s\n", what, files,
	       (unsigned long long)bytes, secs, (double)files / (secs > 0 ? secs : 1e-9));
}

/* mput: every regular file of the local dir into the remote one (made when missing), one
 * connection, as smbclient's "prompt off; mput *" does. */
static int
do_mput(const char *dir, const char *rdir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t files = 0;
	uint64_t bytes = 0;
	double t0 = now();
	int rc = 0;

	if (!d) {
		perror(dir);
		return 1;
	}
	if ((rc = drv->mkdir(conn, rdir)) < 0 && rc != -EEXIST) {
		closedir(d);
		return fail("mkdir");
	}
	rc = 0;
	quiet = true;
	while (rc == 0 && (e = readdir(d))) {
		char *lp = xasprintf("%s/%s", dir, e->d_name), *rp;
		struct stat st;
		int fd = open(lp, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &st) < 0) {
			perror(lp); /* a file it cannot read fails the run, never shrinks it */
			if (fd >= 0)
				close(fd);
			free(lp);
			rc = 1;
			break;
		}
		if (!S_ISREG(st.st_mode)) { /* ".", "..", a subdirectory */
			close(fd);
			free(lp);
			continue;
		}
		rp = xasprintf("%s/%s", rdir, e->d_name);
		rc = do_write(rp, fd, 0, "put");
		close(fd);
		files++, bytes += (uint64_t)st.st_size;
		free(rp);
		free(lp);
	}
	quiet = false;
	closedir(d);
	if (rc == 0)
		report_files("mput", files, bytes, now() - t0);
	return rc;
}

/* mget: every file of the remote dir into the local one; mstat: a stat of each. */
static int
do_mget(const char *rdir, const char *dir)
{
	struct names nm = { 0 };
	uint64_t bytes = 0;
	double t0 = now();
	int rc = 0;

	if (drv->list(conn, rdir, add_name, &nm) < 0) {
		names_free(&nm);
		return fail("ls");
	}
	quiet = true;
	for (size_t i = 0; rc == 0 && i < nm.n; i++) {
		char *rp = xasprintf("%s/%s", rdir, nm.v[i]), *lp = NULL;
		struct bench_stat st;
		int fd = -1;

		if (!dir) {
			if (drv->stat(conn, rp, &st) < 0)
				rc = fail("stat");
			else
				bytes += st.size;
		} else {
			lp = xasprintf("%s/%s", dir, nm.v[i]);
			fd = open(lp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0) {
				perror(lp);
				rc = 1;
			} else {
				rc = do_read(rp, fd, "get");
				bytes += (uint64_t)lseek(fd, 0, SEEK_CUR);
				if (close(fd) < 0)
					rc = 1;
			}
		}
		free(lp);
		free(rp);
	}
	quiet = false;
	if (rc == 0)
		report_files(dir ? "mget" : "mstat", nm.n, bytes, now() - t0);
	names_free(&nm);
	return rc;
}

static size_t
parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || v == 0 || v > (64ull << 20))
		usage();
	return (size_t)v;
}

static int
run(const char *cmd, int argc, char **argv)
{
	struct bench_stat st;
	uint64_t bytes;
	int fd, rc;

#define NARGS(n) do { if (argc != (n)) usage(); } while (0)
	if (strcmp(cmd, "put") == 0) {
		NARGS(2);
		fd = open(argv[0], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(argv[0]);
			return 1;
		}
		rc = do_write(argv[1], fd, 0, "put");
		close(fd);
		return rc;
	}
	if (!block_forced && drv->read_block &&
	    (strcmp(cmd, "get") == 0 || strcmp(cmd, "seqread") == 0))
		block = drv->read_block;
	if (!block_forced && drv->write_block &&
	    (strcmp(cmd, "put") == 0 || strcmp(cmd, "seqwrite") == 0))
		block = drv->write_block;
	if (strcmp(cmd, "get") == 0) {
		NARGS(2);
		if (strcmp(argv[1], "/dev/null") == 0)	/* as smbclient's get: nothing to write */
			return do_read(argv[0], -1, "get");
		fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		rc = do_read(argv[0], fd, "get");
		if (close(fd) < 0)
			rc = 1;
		return rc;
	}
	if (strcmp(cmd, "seqwrite") == 0) {
		NARGS(2);
		return do_write(argv[0], -1, (uint64_t)strtoull(argv[1], NULL, 10) << 20,
				"seqwrite");
	}
	if (strcmp(cmd, "seqread") == 0) {
		NARGS(1);
		return do_read(argv[0], -1, "seqread");
	}
	if (strcmp(cmd, "mkdir") == 0) {
		NARGS(1);
		return drv->mkdir(conn, argv[0]) < 0 ? fail("mkdir") : 0;
	}
	if (strcmp(cmd, "rmdir") == 0) {
		NARGS(1);
		return drv->rmdir(conn, argv[0]) < 0 ? fail("rmdir") : 0;
	}
	if (strcmp(cmd, "rm") == 0) {
		NARGS(1);
		return drv->unlink(conn, argv[0]) < 0 ? fail("rm") : 0;
	}
	if (strcmp(cmd, "mv") == 0) {
		NARGS(2);
		return drv->rename(conn, argv[0], argv[1]) < 0 ? fail("mv") : 0;
	}
	if (strcmp(cmd, "stat") == 0) {
		NARGS(1);
		rc = drv->stat(conn, argv[0], &st);
		if (rc == -ENOENT) {
			printf("missing\n");
			return 1;
		}
		if (rc < 0)
			return fail("stat");
		printf("%s %llu\n", st.is_dir ? "dir" : "file", (unsigned long long)st.size);
		return 0;
	}
	if (strcmp(cmd, "ls") == 0) {
		if (argc > 1)
			usage();
		rc = drv->list(conn, argc ? argv[0] : "", print_entry, NULL);
		return rc < 0 ? fail("ls") : 0;
	}
	if (strcmp(cmd, "space") == 0) {
		if (argc > 1)
			usage();
		if (drv->space(conn, argc ? argv[0] : "", &bytes) < 0)
			return fail("space");
		printf("%llu bytes free\n", (unsigned long long)bytes);
		return 0;
	}
	if (strcmp(cmd, "copy") == 0) {
		NARGS(2);
		double t0 = now();
		rc = drv->copy ? drv->copy(conn, argv[0], argv[1]) : -EOPNOTSUPP;
		if (rc == -EOPNOTSUPP) {
			printf("copy: no server-side copy in the %s driver\n", drv->name);
			return 3;
		}
		if (rc < 0)
			return fail("copy");
		printf("copy: server-side (%s) in %.3f s\n", drv->copy_method, now() - t0);
		return 0;
	}
	if (strcmp(cmd, "mput") == 0) {
		NARGS(2);
		return do_mput(argv[0], argv[1]);
	}
	if (strcmp(cmd, "mget") == 0) {
		NARGS(2);
		return do_mget(argv[0], argv[1]);
	}
	if (strcmp(cmd, "mstat") == 0) {
		NARGS(1);
		return do_mget(argv[0], NULL);
	}
	if (strcmp(cmd, "info") == 0) {
		NARGS(0);
		printf("driver %s, copy %s, concurrent %s\n", drv->name,
		       drv->copy ? drv->copy_method : "none", drv->concurrent ? "yes" : "no");
		return 0;
	}
	usage();
	return 2;
#undef NARGS
}

int
main(int argc, char **argv)
{
	struct bench_target t;
	const char *creds = NULL;
	char err[512];
	int i = 1, rc;

	/* A server that dies mid-write must be an error return, not a fatal signal. */
	signal(SIGPIPE, SIG_IGN);
	while (i < argc && strncmp(argv[i], "--", 2) == 0) {
		if (strcmp(argv[i], "--credentials") == 0 && i + 1 < argc)
			creds = argv[i + 1], i += 2;
		else if (strcmp(argv[i], "--no-flush") == 0)
			no_flush = true, i++;
		else if (strcmp(argv[i], "--block") == 0 && i + 1 < argc)
			block = parse_size(argv[i + 1]), i += 2;
		else
			usage();
	}
	if (argc - i < 2)
		usage();
	if (bench_target_parse(argv[i], &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "drvtool: %s\n", err);
		return 2;
	}
#ifdef DRVTOOL_ONLY
	/* A single-driver build (drvtool-nfs...): nothing else linked in. */
	drv = strcmp(t.scheme, DRVTOOL_ONLY.scheme) == 0 ? &DRVTOOL_ONLY : NULL;
#else
	drv = bench_driver_for_scheme(t.scheme);
#endif
	if (!drv) {
		fprintf(stderr, "drvtool: no driver for %s://\n", t.scheme);
		bench_target_clear(&t);
		return 2;
	}
	if (!block) /* 1 MiB, or the driver's read/write size (run()) */
		block = 1 << 20;
	else
		block_forced = true;
	if (creds && bench_target_credentials(&t, creds, err, sizeof(err)) < 0) {
		fprintf(stderr, "drvtool: %s\n", err);
		bench_target_clear(&t);
		return 2;
	}
	if (t.user && !t.password && bench_target_prompt(&t) < 0) {
		fprintf(stderr, "drvtool: no password for %s: use --credentials FILE\n", t.user);
		bench_target_clear(&t);
		return 2;
	}
	if (drv->connect(&t, &conn, err, sizeof(err)) < 0) {
		fprintf(stderr, "drvtool: %s\n", err);
		bench_target_clear(&t);
		return 1;
	}
	rc = run(argv[i + 1], argc - i - 2, argv + i + 2);
	drv->disconnect(conn);
	bench_target_clear(&t);
	return rc;
}
