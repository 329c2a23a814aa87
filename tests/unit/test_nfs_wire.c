/* test_nfs_wire.c - the NFS driver's data path against a scripted NFSv3 server (a child
 * process on a loopback socket): data in place both ways, replies out of order and in
 * fragments, end of file, short replies continued, server errors, a reply it cannot read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/nfs_wire.h"

enum { REVERSE = 1, FRAG = 2, SHORT = 4, NOSPC = 8, GARBAGE = 16 };
#define FILE_SIZE 300000u

static unsigned char
pat(uint64_t at)
{
	return (unsigned char)(at * 7 + (at >> 9));
}

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static size_t
put(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
	return 4;
}

static int
readn(int fd, void *b, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)b + got, n - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static void
writen(int fd, const void *b, size_t n)
{
	if (write(fd, b, n) != (ssize_t)n)
		_exit(3);
}

/* Sends body (without record mark) as one fragment, or split in two with FRAG. */
static void
send_reply(int fd, int mode, const unsigned char *body, size_t n)
{
	unsigned char rm[4];
	size_t half = (mode & FRAG) ? n / 2 : n;

	put(rm, (half == n ? 0x80000000u : 0) | (uint32_t)half);
	writen(fd, rm, 4);
	writen(fd, body, half);
	if (half < n) {
		put(rm, 0x80000000u | (uint32_t)(n - half));
		writen(fd, rm, 4);
		writen(fd, body + half, n - half);
	}
}

/* One call in, its reply built in out (returns its length). */
static size_t
serve_call(unsigned char *c, size_t clen, int mode, unsigned char *out)
{
	uint32_t xid = be32(c), proc = be32(c + 20), st = 0;
	size_t p = 24, n = 0;

	p += 8 + be32(c + p + 4);	    /* credential */
	p += 8 + be32(c + p + 4);	    /* verifier */
	p += 4 + ((be32(c + p) + 3) & ~3u); /* file handle */
	n += put(out + n, xid);
	n += put(out + n, (mode & GARBAGE) ? 0 : 1);
	n += put(out + n, 0), n += put(out + n, 0), n += put(out + n, 0), n += put(out + n, 0);
	if (proc == 1) {
		n += put(out + n, 0);
		memset(out + n, 0, 84);
		return n + 84;
	}
	uint64_t off = (uint64_t)be32(c + p) << 32 | be32(c + p + 4);
	uint32_t count = be32(c + p + 8);
	if (proc == 7) {
		for (uint32_t i = 0; i < count && st == 0; i++)
			if (p + 20 + i >= clen || c[p + 20 + i] != pat(off + i))
				st = 5; /* NFS3ERR_IO: the bytes are not the ones sent */
		if ((mode & NOSPC) && off >= 65536)
			st = 28;
		n += put(out + n, st), n += put(out + n, 0), n += put(out + n, 0);
		if (st == 0) {
			n += put(out + n, (mode & SHORT) && count > 1 ? count / 2 : count);
			n += put(out + n, 0), n += put(out + n, 0), n += put(out + n, 0);
		}
		return n;
	}
	uint32_t give = off >= FILE_SIZE
				? 0
				: (uint32_t)(FILE_SIZE - off < count ? FILE_SIZE - off : count);
	if ((mode & SHORT) && give > 1)
		give /= 2;
	n += put(out + n, 0), n += put(out + n, 0);
	n += put(out + n, give), n += put(out + n, off + give >= FILE_SIZE);
	n += put(out + n, give);
	for (uint32_t i = 0; i < give; i++)
		out[n++] = pat(off + i);
	while (n & 3)
		out[n++] = 0;
	return n;
}

/* The server: answers every call on one connection; REVERSE holds a call while another
 * follows at once, and answers that one first. */
static void
serve(int lfd, int mode)
{
	int fd = accept(lfd, NULL, NULL);
	unsigned char *call = malloc(1 << 20), *held = malloc(1 << 20), *out = malloc(1 << 20);
	size_t heldn = 0;

	if (fd < 0 || !call || !held || !out)
		_exit(2);
	for (;;) {
		unsigned char rm[4];
		if (readn(fd, rm, 4) < 0)
			break;
		size_t clen = be32(rm) & 0x7fffffffu;
		if (clen > (1 << 20) || readn(fd, call, clen) < 0)
			_exit(2);
		size_t n = serve_call(call, clen, mode, out);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if ((mode & REVERSE) && be32(call + 20) != 1 && !heldn && poll(&pfd, 1, 30) == 1) {
			memcpy(held, out, n);
			heldn = n;
			continue;
		}
		send_reply(fd, mode, out, n);
		if (heldn) {
			send_reply(fd, mode, held, heldn);
			heldn = 0;
		}
	}
	_exit(0);
}

static pid_t child;

static struct nfs_wire *
start(int mode)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	char err[200] = "";
	struct nfs_wire *w;

	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		serve(lfd, mode);
	close(lfd);
	w = nfs_wire_open((struct sockaddr *)&sa, sl, 1000, 1000, 5000, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(nfs_wire_getattr(w, "fh", 2, err, sizeof(err)), 0);
	return w;
}

static void
stop(struct nfs_wire *w)
{
	int status;

	nfs_wire_close(w);
	waitpid(child, &status, 0);
}

static void
check_read(int mode, size_t len, uint64_t off, ssize_t want)
{
	struct nfs_wire *w = start(mode);
	char *buf = calloc(1, len), err[200] = "";

	assert_int_equal(
		nfs_wire_transfer(w, "fh", 2, false, buf, len, off, 65536, 4, err, sizeof(err)),
		want);
	for (ssize_t i = 0; i < want; i++)
		if ((unsigned char)buf[i] != pat(off + (uint64_t)i))
			fail_msg("byte %zd of the read differs", i);
	free(buf);
	stop(w);
}

static void
test_read(void **state)
{
	(void)state;
	check_read(0, 200000, 1000, 200000);
	check_read(REVERSE | FRAG, 200000, 0, 200000);
	check_read(SHORT, 150000, 3, 150000);	     /* each reply half: the rest asked again */
	check_read(REVERSE, 262144, 100000, 200000); /* stops at end of file */
	check_read(0, 4096, FILE_SIZE, 0);
}

static void
test_write(void **state)
{
	char *buf = malloc(250000), err[200] = "";
	struct nfs_wire *w;

	(void)state;
	for (int m = 0; m < 3; m++) {
		int mode = (int[]){ 0, REVERSE | FRAG, SHORT }[m];

		for (size_t i = 0; i < 250000; i++)
			buf[i] = (char)pat(7 + i);
		w = start(mode);
		assert_int_equal(nfs_wire_transfer(w, "fh", 2, true, buf, 250000, 7, 65536, 3, err,
						   sizeof(err)),
				 250000);
		stop(w);
	}
	/* a server error fails the transfer, named, and leaves the connection usable */
	w = start(NOSPC);
	assert_int_equal(
		nfs_wire_transfer(w, "fh", 2, true, buf, 250000, 7, 65536, 3, err, sizeof(err)),
		-ENOSPC);
	assert_non_null(strstr(err, "NFS3ERR_NOSPC"));
	assert_false(nfs_wire_broken(w));
	assert_int_equal(
		nfs_wire_transfer(w, "fh", 2, true, buf, 1000, 7, 65536, 3, err, sizeof(err)),
		1000);
	stop(w);
	free(buf);
}

static void
test_garbage(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), status;
	char buf[100], err[200] = "";
	struct nfs_wire *w;

	(void)state;
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	child = fork();
	if (child == 0)
		serve(lfd, GARBAGE);
	close(lfd);
	w = nfs_wire_open((struct sockaddr *)&sa, sl, 0, 0, 5000, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(nfs_wire_transfer(w, "fh", 2, false, buf, sizeof(buf), 0, 65536, 2, err,
					   sizeof(err)),
			 -EPROTO);
	assert_true(nfs_wire_broken(w));
	assert_int_equal(nfs_wire_transfer(w, "fh", 2, false, buf, sizeof(buf), 0, 65536, 2, err,
					   sizeof(err)),
			 -EIO);
	nfs_wire_close(w);
	waitpid(child, &status, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_garbage),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
