/* drvtool.c - exercises one benchmark driver without the engine: every vtable call from the
 * command line, with timings for the sequential transfers. Built as build/tests/drvtool.
 *
 * usage: drvtool [--credentials FILE] [--block SIZE (16M)] [--no-flush] URL COMMAND [ARGS]
 * put and seqwrite end with flush() (SMB: none in libsmbclient; NFS COMMIT; FPFlushFork)
 * unless --no-flush.
 * Exit: 0 ok; 1 the driver failed (its error() sentence on stderr); 2 usage. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_driver.h"
#include "xmalloc.h"

static const struct bench_driver *drv;
static struct bench_conn *conn;
static size_t block = 16 << 20;	/* the engine's largest block */
static bool no_flush;

static void
usage(void)
{
	fprintf(stderr,
		"usage: drvtool [--credentials FILE] [--block SIZE] [--no-flush] URL COMMAND [ARGS]\n"
		"commands: put LOCAL REMOTE | get REMOTE LOCAL | mkdir P | rmdir P | rm P |\n"
		"          mv FROM TO | stat P | ls [P] | copy FROM TO | space [P] |\n"
		"          seqwrite P SIZE_MB | seqread P | info\n");
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
	if (secs <= 0)
		secs = 1e-9;
	printf("%s: %llu bytes in %.3f s = %.1f MB/s\n", what, (unsigned long long)bytes, secs,
	       (double)bytes / 1e6 / secs);
}

static int
open_for_write(const char *path, struct bench_file **f)
{
	int rc = drv->open(conn, path, BENCH_WR | BENCH_CREATE | BENCH_TRUNC, f);

	if (rc == -EEXIST)
		rc = drv->open(conn, path, BENCH_WR | BENCH_TRUNC, f);
	return rc;
}

/* Writes from fd (or, fd < 0, total bytes of a fixed pattern) to the remote path. */
static int
do_write(const char *path, int fd, uint64_t total, const char *label)
{
	struct bench_file *f;
	char *buf = xmalloc(block);
	uint64_t off = 0;
	double t0;
	int rc = 1;

	if (fd < 0)
		for (size_t i = 0; i < block; i++)	/* not all zeroes: nothing may compress it */
			buf[i] = (char)(i * 2654435761u >> 13);
	t0 = now();
	if (open_for_write(path, &f) < 0) {
		free(buf);
		return fail("open");
	}
	for (;;) {
		ssize_t n;

		if (fd >= 0) {
			n = read(fd, buf, block);
			if (n < 0) {
				perror("drvtool: read");
				goto out;
			}
		} else {
			n = (ssize_t)(total - off < block ? total - off : block);
		}
		if (n == 0)
			break;
		ssize_t w = drv->pwrite(conn, f, buf, (size_t)n, off);
		if (w != n) {
			fail("write");
			goto out;
		}
		off += (uint64_t)n;
	}
	if (!no_flush && drv->flush(conn, f) < 0) {
		fail("flush");
		goto out;
	}
	rc = 0;
out:
	if (drv->close(conn, f) < 0 && rc == 0)
		rc = fail("close");
	if (rc == 0)
		report(label, off, now() - t0);
	free(buf);
	return rc;
}

/* Reads the remote path to fd (or, fd < 0, discards it). */
static int
do_read(const char *path, int fd, const char *label)
{
	struct bench_file *f;
	char *buf = xmalloc(block);
	uint64_t off = 0;
	double t0 = now();
	int rc = 1;

	if (drv->open(conn, path, BENCH_RD, &f) < 0) {
		free(buf);
		return fail("open");
	}
	for (;;) {
		ssize_t n = drv->pread(conn, f, buf, block, off);

		if (n < 0) {
			fail("read");
			goto out;
		}
		if (n == 0)
			break;
		if (fd >= 0 && write(fd, buf, (size_t)n) != n) {
			perror("drvtool: write");
			goto out;
		}
		off += (uint64_t)n;
	}
	rc = 0;
out:
	drv->close(conn, f);
	if (rc == 0)
		report(label, off, now() - t0);
	free(buf);
	return rc;
}

static int
print_entry(const char *name, const struct bench_stat *st, void *arg)
{
	(void)arg;
	printf("%s%s\t%llu\n", name, st->is_dir ? "/" : "", (unsigned long long)st->size);
	return 0;
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
	if (strcmp(cmd, "get") == 0) {
		NARGS(2);
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
	drv = bench_driver_for_scheme(t.scheme);
	if (!drv) {
		fprintf(stderr, "drvtool: no driver for %s://\n", t.scheme);
		bench_target_clear(&t);
		return 2;
	}
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
