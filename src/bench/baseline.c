/* baseline.c - references measured in the same run (raw disk, raw TCP) and the bottleneck
 * each result is attributed to. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_driver.h"
#include "proc.h"
#include "scratch.h"
#include "timeutil.h"
#include "xmalloc.h"

#define DISK_BLOCK (4u << 20)

/* Not everywhere the agent builds (macOS): there, plain sockets and SIGPIPE ignored by the
 * caller do. */
#ifndef SOCK_CLOEXEC
#define SOCK_CLOEXEC 0
#endif
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

static double
median3(double a, double b, double c)
{
	if (a > b) {
		double t = a;
		a = b;
		b = t;
	}
	return c < a ? a : (c > b ? b : c);
}

/* One write+read pass over the file "disk" in the scratch directory dfd (ours, mode 0700):
 * created O_EXCL|O_NOFOLLOW and unlinked at the end, so every pass creates it anew. direct
 * says whether O_DIRECT is used (cleared where the filesystem refuses it). */
static int
disk_pass(int dfd, uint64_t size, void *buf, bool *direct, const volatile sig_atomic_t *stop,
	  double *wr, double *rd)
{
	const int cflags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	uint64_t off;
	double t0;
	int fd, rc = 0;

	fd = -1;
#ifdef O_DIRECT
	if (*direct) {
		fd = openat(dfd, "disk", cflags | O_DIRECT, 0600);
		if (fd < 0 && errno == EINVAL)
			*direct = false;
	}
#else
	*direct = false;
#endif
	if (fd < 0 && !*direct)
		fd = openat(dfd, "disk", cflags, 0600);
	if (fd < 0)
		return -errno;
	t0 = timeutil_mono();
	for (off = 0; off < size && rc == 0; off += DISK_BLOCK)
		if (stop && *stop)
			rc = -EINTR;
		else if (pwrite(fd, buf, DISK_BLOCK, (off_t)off) != DISK_BLOCK)
			rc = errno ? -errno : -EIO;
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	*wr = (double)size / 1e6 / (timeutil_mono() - t0);
	close(fd);
	if (rc < 0)
		goto out;
#ifdef O_DIRECT
	fd = openat(dfd, "disk", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (*direct ? O_DIRECT : 0));
#else
	fd = openat(dfd, "disk", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
#endif
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
#ifdef POSIX_FADV_DONTNEED
	if (!*direct)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
#endif
	t0 = timeutil_mono();
	for (off = 0; off < size && rc == 0; off += DISK_BLOCK)
		if (stop && *stop)
			rc = -EINTR;
		else if (pread(fd, buf, DISK_BLOCK, (off_t)off) != DISK_BLOCK)
			rc = errno ? -errno : -EIO;
	*rd = (double)size / 1e6 / (timeutil_mono() - t0);
	close(fd);
out:
	if (unlinkat(dfd, "disk", 0) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int
bench_baseline_disk(const char *dir, const struct bench_opts *o, struct bench_baseline *b,
		    char *err, size_t errlen)
{
	const struct bench_driver *d = &bench_drv_posix;
	struct bench_target t = {
		.url = (char *)dir, .scheme = "file", .share = (char *)dir, .subdir = ""
	};
	uint64_t size = o->size ? o->size : BENCH_DEFAULT_SIZE;
	double w[3] = { 0 }, r[3] = { 0 };
	struct bench_conn *c = NULL;
	bool direct = true, made = false;
	char name[192];
	void *buf = NULL;
	int i, dfd = -1, rc;

	if (size > (1ull << 30))
		size = 1ull << 30;
	if (size < (4u << 20))
		size = 4u << 20;
	size = (size + DISK_BLOCK - 1) / DISK_BLOCK * DISK_BLOCK;
	if ((rc = d->connect(&t, &c, err, errlen)) < 0)
		return rc;
	/* The same refusals as every workload, before the first byte. */
	if ((rc = bench_preflight(d, c, dir, "the raw disk baseline", size, o->force, err,
				  errlen)) < 0)
		goto out;
	bench_scratch_name(name, sizeof(name), "disk");
	if ((rc = d->mkdir(c, name)) < 0 ||
	    (made = true, scratch_made(d, c, dir, name), dfd = bench_posix_dirfd(c, name)) < 0) {
		rc = rc < 0 ? rc : dfd;
		snprintf(err, errlen, "%s", d->error(c));
		goto out;
	}
	if (posix_memalign(&buf, 4096, DISK_BLOCK) != 0) {
		buf = NULL;
		rc = -ENOMEM;
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto out;
	}
	memset(buf, 0x5a, DISK_BLOCK);
	for (i = 0; i < 3 && rc == 0; i++)
		rc = disk_pass(dfd, size, buf, &direct, o->stop, &w[i], &r[i]);
	if (rc < 0)
		snprintf(err, errlen, "%s/%s: %s", dir, name,
			 rc == -EINTR ? "interrupted" : strerror(-rc));
out:
	if (dfd >= 0)
		close(dfd);
	if (made && d->rmdir(c, name) == 0)
		scratch_forget(dir, name);
	else if (made && rc == 0) {
		snprintf(err, errlen, "%s", d->error(c));
		rc = -EIO;
	}
	d->disconnect(c);
	free(buf);
	if (rc < 0)
		return rc;
	b->disk_write = median3(w[0], w[1], w[2]);
	b->disk_read = median3(r[0], r[1], r[2]);
	snprintf(b->disk_method, sizeof(b->disk_method), "%s",
		 direct ? "O_DIRECT" : "buffered+fsync (no O_DIRECT here)");
	return 0;
}

struct tcp_rx {
	int fd;
	uint64_t got;
	int rc;
};

static void *
tcp_receive(void *arg)
{
	struct tcp_rx *rx = arg;
	char *buf = xmalloc(1 << 20);
	int c = accept(rx->fd, NULL, NULL);
	ssize_t n;

	if (c < 0) {
		rx->rc = -errno;
		free(buf);
		return NULL;
	}
	while ((n = recv(c, buf, 1 << 20, 0)) > 0)
		rx->got += (uint64_t)n;
	if (n < 0)
		rx->rc = -errno;
	close(c);
	free(buf);
	return NULL;
}

int
bench_baseline_tcp_loopback(uint64_t bytes, struct bench_baseline *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	struct tcp_rx rx = { .fd = -1 };
	pthread_t th;
	uint64_t sent = 0;
	char *buf;
	double t0;
	int s = -1, rc = 0;

	if (bytes > (4ull << 30))
		bytes = 4ull << 30;
	if (bytes < (64u << 20))
		bytes = 64u << 20;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rx.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (rx.fd < 0)
		return -errno;
	if (bind(rx.fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(rx.fd, 1) < 0 ||
	    getsockname(rx.fd, (struct sockaddr *)&sa, &len) < 0) {
		rc = -errno;
		close(rx.fd);
		return rc;
	}
	if ((rc = pthread_create(&th, NULL, tcp_receive, &rx)) != 0) {
		close(rx.fd);
		return -rc;
	}
	buf = xmalloc(1 << 20);
	memset(buf, 0xa5, 1 << 20);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	t0 = timeutil_mono();
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
	} else {
		while (sent < bytes) {
			ssize_t n = send(s, buf, 1 << 20, MSG_NOSIGNAL);

			if (n < 0) {
				rc = -errno;
				break;
			}
			sent += (uint64_t)n;
		}
	}
	if (s >= 0)
		close(s);
	else
		shutdown(rx.fd, SHUT_RDWR); /* wakes accept() */
	pthread_join(th, NULL);
	close(rx.fd);
	free(buf);
	if (rc == 0 && rx.rc < 0)
		rc = rx.rc;
	if (rc < 0)
		return rc;
	b->tcp = (double)rx.got / 1e6 / (timeutil_mono() - t0);
	snprintf(b->tcp_method, sizeof(b->tcp_method), "tcp stream (loopback)");
	return 0;
}

int
bench_baseline_iperf3(const char *host, struct bench_baseline *b)
{
	char *argv[] = { "iperf3", "-c", (char *)host, "-t", "3", "-J", NULL };
	struct proc p = PROC_INIT(argv);
	double bps = 0;
	char *out, *k;
	const char *h;
	size_t len;
	int st;

	if (access("/usr/bin/iperf3", X_OK) != 0 && access("/usr/local/bin/iperf3", X_OK) != 0)
		return -ENOENT;
	for (h = host; *h; h++) /* a host name or address, nothing else */
		if (!((*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z') ||
		      (*h >= '0' && *h <= '9') || *h == '.' || *h == '-' || *h == ':'))
			return -EINVAL;
	p.err = PROC_NULL;
	st = proc_capture(&p, 4u << 20, &out, &len);
	/* -J ends with "sum_received": {... "bits_per_second": N ...}: the last one wins. */
	for (k = out; k && (k = strstr(k, "\"bits_per_second\":")); k += 18)
		bps = strtod(k + 18, NULL);
	free(out);
	if (st != 0 || bps <= 0)
		return -EIO;
	b->tcp = bps / 8 / 1e6;
	snprintf(b->tcp_method, sizeof(b->tcp_method), "iperf3");
	return 0;
}

void
bench_attribute(struct bench_result *r, const struct bench_baseline *b, bool network)
{
	bool rd = strstr(r->metric, "read") != NULL, wr = strstr(r->metric, "write") != NULL;
	double disk = 0, ceiling, v = r->st.median;
	const char *what;
	char buf[160];

	free(r->bottleneck);
	r->bottleneck = NULL;
	if (!r->unit || strcmp(r->unit, "MB/s") != 0 || v <= 0)
		return;
	if (rd && !wr)
		disk = b->disk_read;
	else if (wr && !rd)
		disk = b->disk_write;
	else if (b->disk_read > 0 && b->disk_write > 0) /* copy, mixed: both at once */
		disk = 1.0 / (1.0 / b->disk_read + 1.0 / b->disk_write);
	if (disk <= 0 && (!network || b->tcp <= 0)) {
		r->bottleneck = xstrdup("unknown (no baseline)");
		return;
	}
	/* Faster than the disk itself: RAM served or absorbed it (whatever the network baseline
	 * says; above both, the cache is still the only explanation). */
	if (disk > 0 && v > 1.1 * disk) {
		snprintf(buf, sizeof(buf), "page cache (%.0f%% of raw disk: %s RAM)",
			 100 * v / disk, rd && !wr ? "served from" : "absorbed by");
		r->bottleneck = xstrdup(buf);
		return;
	}
	if (network && b->tcp > 0 && (disk <= 0 || b->tcp < disk)) {
		ceiling = b->tcp;
		what = "network-bound";
	} else {
		ceiling = disk;
		what = "disk-bound";
	}
	if (v >= 0.85 * ceiling)
		snprintf(buf, sizeof(buf), "%s (%.0f%% of %s)", what, 100 * v / ceiling,
			 ceiling == b->tcp && network ? "TCP" : "raw disk");
	else
		snprintf(buf, sizeof(buf), "protocol overhead %.0f%% (ceiling: %s %.0f MB/s)",
			 100 * (1 - v / ceiling), ceiling == b->tcp && network ? "TCP" : "raw disk",
			 ceiling);
	r->bottleneck = xstrdup(buf);
}
