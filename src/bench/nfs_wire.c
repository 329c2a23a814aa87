/* nfs_wire.c - NFSv3 READ and WRITE straight between a socket and the caller's buffer (see
 * nfs_wire.h). ONC RPC over TCP (RFC 5531, record marking), NFSv3 (RFC 1813). A WRITE goes
 * out as one sendmsg() of the call header and the caller's bytes; a READ reply's header is
 * read first, then its data lands in place: no user-space copy of the payload either way. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "nfs_wire.h"
#include "xmalloc.h"

#define RPC_CALL 0u
#define RPC_REPLY 1u
#define NFS_PROGRAM 100003u
#define NFS_V3 3u
#define PROC_GETATTR 1u
#define PROC_READ 6u
#define PROC_WRITE 7u
#define FH_MAX 64	/* NFS3_FHSIZE */
#define FATTR3_LEN 84	/* type mode nlink uid gid, size used rdev fsid fileid, 3 times */
#define WCC_ATTR_LEN 24 /* size, mtime, ctime */
#define DEPTH_MAX 64
#define CRED_MAX 64
#define HDR_MAX (4 + 6 * 4 + CRED_MAX + 8 + 4 + FH_MAX + 8 + 4 + 4 + 4)

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* SO_NOSIGPIPE instead (BSD, macOS) */
#endif

struct nfs_wire {
	int fd;
	uint32_t xid;
	bool broken;
	size_t credlen;
	unsigned char cred[CRED_MAX]; /* flavor, length, AUTH_UNIX body */
	uint32_t frag_left;	      /* bytes left in the reply fragment being read */
	bool frag_last;		      /* that fragment is the reply's last */
};

struct slot {
	bool used;
	uint32_t xid;
	size_t boff; /* offset in the caller's buffer */
	size_t len;
};

static size_t
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
	return 4;
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int
sock_err(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
}

/* Exactly n bytes from the socket (SO_RCVTIMEO bounds each wait). */
static int
recv_all(struct nfs_wire *w, void *dst, size_t n)
{
	char *p = dst;

	while (n > 0) {
		ssize_t r = recv(w->fd, p, n, MSG_WAITALL);

		if (r > 0) {
			p += r;
			n -= (size_t)r;
		} else if (r == 0) {
			return -ECONNRESET;
		} else if (errno != EINTR) {
			return sock_err();
		}
	}
	return 0;
}

/* n bytes of the current reply, across its fragments; dst NULL discards them. */
static int
rd(struct nfs_wire *w, void *dst, size_t n)
{
	unsigned char scratch[512];

	while (n > 0) {
		if (w->frag_left == 0) {
			unsigned char rm[4];
			int rc;

			if (w->frag_last)
				return -EPROTO; /* the reply is shorter than its contents */
			rc = recv_all(w, rm, 4);
			if (rc)
				return rc;
			w->frag_last = rm[0] & 0x80;
			w->frag_left = get32(rm) & 0x7fffffffu;
			continue;
		}
		size_t k = n < w->frag_left ? n : w->frag_left;

		if (!dst && k > sizeof(scratch))
			k = sizeof(scratch);
		int rc = recv_all(w, dst ? dst : scratch, k);

		if (rc)
			return rc;
		if (dst)
			dst = (char *)dst + k;
		n -= k;
		w->frag_left -= (uint32_t)k;
	}
	return 0;
}

static int
rd32(struct nfs_wire *w, uint32_t *v)
{
	unsigned char b[4];
	int rc = rd(w, b, 4);

	*v = get32(b);
	return rc;
}

/* Skips what is left of the current reply; the stream is then at the next one. */
static int
reply_end(struct nfs_wire *w)
{
	while (!(w->frag_last && w->frag_left == 0)) {
		int rc = rd(w, NULL, w->frag_left ? w->frag_left : 0);

		if (rc)
			return rc;
		if (w->frag_left == 0 && !w->frag_last) {
			unsigned char rm[4];

			rc = recv_all(w, rm, 4);
			if (rc)
				return rc;
			w->frag_last = rm[0] & 0x80;
			w->frag_left = get32(rm) & 0x7fffffffu;
		}
	}
	w->frag_left = 0;
	w->frag_last = false;
	return 0;
}

static int
send_all(struct nfs_wire *w, struct iovec *iov, int cnt)
{
	while (cnt > 0) {
		struct msghdr m;
		ssize_t r;

		memset(&m, 0, sizeof(m));
		m.msg_iov = iov;
		m.msg_iovlen = cnt;
		r = sendmsg(w->fd, &m, MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return sock_err();
		}
		while (cnt > 0 && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (char *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

/* The call header up to and including the file handle; h[0..3] is the record mark, set
 * by the caller once the length is known. */
static size_t
call_header(struct nfs_wire *w, unsigned char *h, uint32_t xid, uint32_t proc, const void *fh,
	    size_t fhlen)
{
	size_t n = 4;

	n += put32(h + n, xid);
	n += put32(h + n, RPC_CALL);
	n += put32(h + n, 2); /* RPC version */
	n += put32(h + n, NFS_PROGRAM);
	n += put32(h + n, NFS_V3);
	n += put32(h + n, proc);
	memcpy(h + n, w->cred, w->credlen);
	n += w->credlen;
	n += put32(h + n, 0); /* verifier: AUTH_NONE, empty */
	n += put32(h + n, 0);
	n += put32(h + n, (uint32_t)fhlen);
	memcpy(h + n, fh, fhlen);
	n += fhlen;
	while (n & 3)
		h[n++] = 0;
	return n;
}

static int
send_call(struct nfs_wire *w, struct slot *s, uint32_t proc, const void *fh, size_t fhlen,
	  char *buf, uint64_t off)
{
	static const unsigned char zero[4];
	unsigned char h[HDR_MAX];
	struct iovec iov[3];
	size_t n, total;
	int cnt = 1;

	s->xid = ++w->xid;
	n = call_header(w, h, s->xid, proc, fh, fhlen);
	if (proc != PROC_GETATTR) {
		n += put32(h + n, (uint32_t)(off >> 32));
		n += put32(h + n, (uint32_t)off);
		n += put32(h + n, (uint32_t)s->len);
	}
	total = n;
	iov[0].iov_base = h;
	if (proc == PROC_WRITE) {
		n += put32(h + n, 0); /* UNSTABLE: COMMIT is flush() */
		n += put32(h + n, (uint32_t)s->len);
		iov[1].iov_base = buf + s->boff;
		iov[1].iov_len = s->len;
		iov[2].iov_base = (void *)(uintptr_t)zero;
		iov[2].iov_len = (4 - (s->len & 3)) & 3;
		total = n + s->len + iov[2].iov_len;
		cnt = 3;
	}
	iov[0].iov_len = n;
	put32(h, 0x80000000u | (uint32_t)(total - 4));
	return send_all(w, iov, cnt);
}

static int
nfs3_errno(uint32_t st, const char **name)
{
	static const struct {
		uint32_t st;
		int e;
		const char *name;
	} map[] = {
		{ 1, EPERM, "NFS3ERR_PERM" },
		{ 2, ENOENT, "NFS3ERR_NOENT" },
		{ 5, EIO, "NFS3ERR_IO" },
		{ 6, ENXIO, "NFS3ERR_NXIO" },
		{ 13, EACCES, "NFS3ERR_ACCES" },
		{ 21, EISDIR, "NFS3ERR_ISDIR" },
		{ 22, EINVAL, "NFS3ERR_INVAL" },
		{ 27, EFBIG, "NFS3ERR_FBIG" },
		{ 28, ENOSPC, "NFS3ERR_NOSPC" },
		{ 30, EROFS, "NFS3ERR_ROFS" },
		{ 69, EDQUOT, "NFS3ERR_DQUOT" },
		{ 70, ESTALE, "NFS3ERR_STALE" },
		{ 10001, EINVAL, "NFS3ERR_BADHANDLE" },
		{ 10008, EAGAIN, "NFS3ERR_JUKEBOX" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].st == st) {
			*name = map[i].name;
			return map[i].e;
		}
	*name = "NFS3ERR_SERVERFAULT or another";
	return EIO;
}

/* Reads one reply's RPC header: its xid, and 0 when the call was accepted and executed,
 * else -errno with a message in err (the rest of the reply is then skipped). */
static int
reply_head(struct nfs_wire *w, uint32_t *xid, char *err, size_t errlen)
{
	unsigned char b[20];
	uint32_t v, vlen;
	int rc;

	w->frag_left = 0;
	w->frag_last = false;
	rc = rd(w, b, sizeof(b)); /* xid, REPLY, reply_stat, then two words either way */
	if (rc)
		return rc;
	*xid = get32(b);
	if (get32(b + 4) != RPC_REPLY) {
		snprintf(err, errlen, "a message from the server that is not a reply");
		return -EPROTO;
	}
	if (get32(b + 8) != 0) { /* MSG_DENIED: RPC_MISMATCH or AUTH_ERROR */
		snprintf(err, errlen, "the server denied the call (%s %u)",
			 get32(b + 12) == 1 ? "auth_stat" : "rpc_mismatch", get32(b + 16));
		rc = reply_end(w);
		return rc ? rc : -EACCES;
	}
	vlen = get32(b + 16);
	if (vlen > 400) {
		snprintf(err, errlen, "a reply verifier of %u bytes", vlen);
		return -EPROTO;
	}
	rc = rd(w, NULL, (vlen + 3) & ~3u);
	if (!rc)
		rc = rd32(w, &v);
	if (rc)
		return rc;
	if (v != 0) { /* PROG_UNAVAIL, PROG_MISMATCH, PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR */
		snprintf(err, errlen, "the server did not execute the call (accept_stat %u)", v);
		rc = reply_end(w);
		return rc ? rc : -EIO;
	}
	return 0;
}

static int
skip_attr(struct nfs_wire *w, size_t len)
{
	uint32_t follows;
	int rc = rd32(w, &follows);

	return rc ? rc : follows ? rd(w, NULL, len) : 0;
}

struct nfs_wire *
nfs_wire_open(const struct sockaddr *sa, socklen_t salen, uint32_t uid, uint32_t gid,
	      int timeout_ms, char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	struct linger lng = { .l_onoff = 1, .l_linger = 0 };
	int one = 1, fd = socket(sa->sa_family, SOCK_STREAM, 0);
	struct nfs_wire *w;
	unsigned char *c;
	size_t n = 0;

	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return NULL;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* As libnfs: no TIME_WAIT left behind on a reserved port. */
	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lng, sizeof(lng));
#ifdef SO_NOSIGPIPE
	(void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
	/* A reserved source port when the process may bind one (servers exporting with
	 * "secure" want it), as libnfs does; EACCES: it may not, no use trying others. */
	if (sa->sa_family == AF_INET || sa->sa_family == AF_INET6) {
		unsigned start = (unsigned)getpid() % 512;

		for (unsigned i = 0; i < 512; i++) {
			struct sockaddr_storage ss;
			uint16_t port = htons((uint16_t)(512 + (start + i) % 512));
			socklen_t len;

			memset(&ss, 0, sizeof(ss));
			if (sa->sa_family == AF_INET) {
				struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
				s4->sin_family = AF_INET;
				s4->sin_port = port;
				len = sizeof(*s4);
			} else {
				struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
				s6->sin6_family = AF_INET6;
				s6->sin6_port = port;
				len = sizeof(*s6);
			}
			if (bind(fd, (struct sockaddr *)&ss, len) == 0 || errno != EADDRINUSE)
				break;
		}
	}
	if (connect(fd, sa, salen) != 0) {
		snprintf(err, errlen, "connect: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->xid = (uint32_t)getpid() << 16 ^ (uint32_t)time(NULL);
	/* AUTH_UNIX: stamp, machine name, uid, gid, no supplementary groups */
	c = w->cred;
	n += put32(c + n, 1);
	n += put32(c + n, 28);
	n += put32(c + n, 0);
	n += put32(c + n, 7);
	memcpy(c + n, "nastune", 8); /* with its padding byte */
	n += 8;
	n += put32(c + n, uid);
	n += put32(c + n, gid);
	n += put32(c + n, 0);
	w->credlen = n;
	return w;
}

void
nfs_wire_close(struct nfs_wire *w)
{
	if (!w)
		return;
	close(w->fd);
	free(w);
}

bool
nfs_wire_broken(const struct nfs_wire *w)
{
	return w->broken;
}

int
nfs_wire_getattr(struct nfs_wire *w, const void *fh, size_t fhlen, char *err, size_t errlen)
{
	struct slot s = { .used = true };
	uint32_t xid, st;
	const char *name;
	int rc, e = 0;

	if (w->broken || fhlen > FH_MAX) {
		snprintf(err, errlen, "unusable connection or file handle");
		return -EINVAL;
	}
	rc = send_call(w, &s, PROC_GETATTR, fh, fhlen, NULL, 0);
	if (!rc)
		rc = reply_head(w, &xid, err, errlen);
	if (rc == -EACCES || rc == -EIO)
		return rc; /* denied or not executed: the reply is consumed */
	if (!rc && xid != s.xid)
		rc = -EPROTO;
	if (!rc)
		rc = rd32(w, &st);
	if (!rc && st != 0) {
		e = -nfs3_errno(st, &name);
		snprintf(err, errlen, "GETATTR failed with %s(%u)", name, st);
	}
	if (!rc)
		rc = reply_end(w);
	if (rc) {
		w->broken = true;
		snprintf(err, errlen, "%s",
			 rc == -EPROTO ? "a reply the client cannot read" : strerror(-rc));
		return rc;
	}
	return e;
}

/* One transfer's state: its calls in flight, where reads hit end of file, the first error
 * the server reported (no new calls after it, only the replies still owed). */
struct xfer {
	struct nfs_wire *w;
	const void *fh;
	size_t fhlen;
	bool write;
	char *buf;
	uint64_t off;
	int depth, inflight;
	size_t short_at;
	int nfs_err;
	char *err;
	size_t errlen;
	struct slot s[DEPTH_MAX];
};

/* Records the server's error e unless one came first; true: say what it was. */
static bool
first_err(struct xfer *x, int e)
{
	if (x->nfs_err)
		return false;
	x->nfs_err = -e;
	return true;
}

/* Reads the next reply and settles its call: done, short (end of file, or the rest sent as
 * a call of its own) or failed. 0, or -errno when the connection is unusable. */
static int
take_reply(struct xfer *x)
{
	struct nfs_wire *w = x->w;
	uint32_t xid, st, count = 0, eof = 0, dlen;
	const char *name;
	struct slot *k = NULL;
	char msg[160];
	int rc = reply_head(w, &xid, msg, sizeof(msg));

	if (rc && rc != -EACCES && rc != -EIO) /* denied or not executed: the stream is fine */
		return rc;
	for (int i = 0; i < x->depth; i++)
		if (x->s[i].used && x->s[i].xid == xid)
			k = &x->s[i];
	if (!k)
		return -EPROTO;
	if (rc) {
		if (first_err(x, -rc))
			snprintf(x->err, x->errlen, "%s", msg);
		goto done;
	}
	rc = rd32(w, &st);
	if (!rc && x->write)
		rc = skip_attr(w, WCC_ATTR_LEN);
	if (!rc)
		rc = skip_attr(w, FATTR3_LEN);
	if (!rc && st == 0)
		rc = rd32(w, &count); /* WRITE: then committed and the verifier, skipped */
	if (!rc && st == 0 && !x->write) {
		rc = rd32(w, &eof);
		if (!rc)
			rc = rd32(w, &dlen);
		if (!rc && (dlen != count || count > k->len))
			rc = -EPROTO;
		if (!rc)
			rc = rd(w, x->buf + k->boff, count); /* in place */
	}
	if (!rc)
		rc = reply_end(w);
	if (rc)
		return rc;
	if (st != 0) {
		if (first_err(x, nfs3_errno(st, &name)))
			snprintf(x->err, x->errlen, "%s failed with %s(%u)",
				 x->write ? "WRITE" : "READ", name, st);
	} else if (count > k->len) {
		return -EPROTO;
	} else if (count < k->len && !x->write && eof) {
		if (k->boff + count < x->short_at)
			x->short_at = k->boff + count;
	} else if (count == 0) {
		if (first_err(x, EIO))
			snprintf(x->err, x->errlen, "%s",
				 x->write ? "WRITE moved no bytes (out of space or quota?)"
					  : "READ moved no bytes before end of file");
	} else if (count < k->len && !x->nfs_err) {
		k->boff += count;
		k->len -= count;
		return send_call(w, k, x->write ? PROC_WRITE : PROC_READ, x->fh, x->fhlen, x->buf,
				 x->off + k->boff);
	}
done:
	k->used = false;
	x->inflight--;
	return 0;
}

ssize_t
nfs_wire_transfer(struct nfs_wire *w, const void *fh, size_t fhlen, bool write, char *buf,
		  size_t len, uint64_t off, size_t chunk, int depth, char *err, size_t errlen)
{
	struct xfer *x;
	size_t next = 0;
	ssize_t ret;
	int rc = 0;

	if (w->broken) {
		snprintf(err, errlen, "an earlier transfer on this connection failed");
		return -EIO;
	}
	if (fhlen > FH_MAX || chunk == 0) {
		snprintf(err, errlen, "a file handle of %zu bytes", fhlen);
		return -EINVAL;
	}
	x = xcalloc(1, sizeof(*x));
	*x = (struct xfer){ .w = w,
			    .fh = fh,
			    .fhlen = fhlen,
			    .write = write,
			    .buf = buf,
			    .off = off,
			    .short_at = len,
			    .err = err,
			    .errlen = errlen };
	x->depth = depth < 1 ? 1 : depth > DEPTH_MAX ? DEPTH_MAX : depth;
	while (rc == 0 && (next < len || x->inflight > 0)) {
		/* Reads stop issuing past end of file. */
		while (!x->nfs_err && next < len && x->inflight < x->depth &&
		       (write || next < x->short_at)) {
			struct slot *k = x->s;

			while (k->used)
				k++;
			k->used = true;
			k->boff = next;
			k->len = len - next < chunk ? len - next : chunk;
			rc = send_call(w, k, write ? PROC_WRITE : PROC_READ, fh, fhlen, buf,
				       off + next);
			if (rc)
				break;
			x->inflight++;
			next += k->len;
		}
		if (rc == 0 && x->inflight > 0)
			rc = take_reply(x);
		else if (x->inflight == 0)
			break;
	}
	if (rc) {
		w->broken = true;
		snprintf(err, errlen, "%s",
			 rc == -EPROTO ? "a reply the client cannot read" : strerror(-rc));
		ret = rc;
	} else if (x->nfs_err) {
		ret = x->nfs_err;
	} else {
		ret = (ssize_t)(write ? len : (x->short_at < len ? x->short_at : len));
	}
	free(x);
	return ret;
}
