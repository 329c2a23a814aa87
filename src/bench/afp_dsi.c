/* afp_dsi.c - the AFP driver's wire: DSI framing (every message behind a 16-byte header, AFP
 * calls in DSICommand, file data in DSIWrite), receives and sends bounded by a timeout, the
 * server's tickles answered, AFP requests built and sent, and AFP result codes as -errno with
 * a sentence. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "afp.h"
#include "xmalloc.h"

static const struct {
	int code;
	int err;
	const char *what;
} afp_errors[] = {
	{ -5000, EACCES, "access denied" },
	{ -5002, EPROTONOSUPPORT, "the login method is not offered" },
	{ -5003, EPROTONOSUPPORT, "AFP version not supported" },
	{ -5004, EINVAL, "bitmap error" },
	{ -5005, EINVAL, "cannot move a directory into itself" },
	{ -5006, EBUSY, "open-mode conflict (deny conflict)" },
	{ -5007, ENOTEMPTY, "directory not empty" },
	{ -5008, ENOSPC, "disk full" },
	{ -5009, 0, "end of file" },
	{ -5010, EBUSY, "file busy" },
	{ -5012, ENOENT, "item not found" },
	{ -5014, EIO, "miscellaneous server error" },
	{ -5017, EEXIST, "object exists" },
	{ -5018, ENOENT, "object not found" },
	{ -5019, EINVAL, "parameter error" },
	{ -5022, ECONNRESET, "session closed" },
	{ -5023, EPERM, "user not authorized" },
	{ -5024, EOPNOTSUPP, "call not supported" },
	{ -5025, EISDIR, "object type error" },
	{ -5026, EMFILE, "too many files open" },
	{ -5027, ESHUTDOWN, "server going down" },
	{ -5028, EINVAL, "cannot rename" },
	{ -5029, ENOENT, "directory not found" },
	{ -5031, EROFS, "volume is read-only" },
	{ -5032, EBUSY, "object locked" },
	{ -5038, EINVAL, "same object" },
	{ -5047, EDQUOT, "disk quota exceeded" },
};

static int
afp_errno(int code, const char **what)
{
	size_t i;

	for (i = 0; i < sizeof(afp_errors) / sizeof(afp_errors[0]); i++)
		if (afp_errors[i].code == code) {
			*what = afp_errors[i].what;
			return afp_errors[i].err;
		}
	*what = "unknown AFP error";
	return EIO;
}

const char *
afp_who(const struct bench_conn *c)
{
	return c->t->user ? c->t->user : "guest";
}

int
afpc_fail(struct bench_conn *c, int err, const char *op, const char *path, const char *fmt, ...)
{
	const struct bench_target *t = c->t;
	char why[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(c->err, sizeof(c->err), "%s/%s%s%s%s%s: %s: %s", t->host, t->share,
		 *t->subdir ? "/" : "", t->subdir, path && *path ? "/" : "", path ? path : "", op,
		 why);
	return -(err ? err : EIO);
}

int
afpc_fail_code(struct bench_conn *c, int code, const char *op, const char *path)
{
	const char *what;
	int e = afp_errno(code, &what);

	if (code == -5000)
		return afpc_fail(c, e, op, path, "access denied for %s (AFP error %d)", afp_who(c),
				 code);
	return afpc_fail(c, e ? e : EIO, op, path, "%s (AFP error %d)", what, code);
}

int
dsi_fail(struct bench_conn *c, int e, const char *op)
{
	c->dead = true;
	c->dead_err = e == EAGAIN || e == EWOULDBLOCK	? ETIMEDOUT
		      : e == EPIPE || e == ECONNABORTED ? ECONNRESET
							: e;
	if (e == EAGAIN || e == EWOULDBLOCK || e == ETIMEDOUT)
		return afpc_fail(c, ETIMEDOUT, op, NULL, "the server did not answer within %d s",
				 AFP_TIMEOUT_S);
	if (e == ECONNRESET || e == EPIPE || e == ECONNABORTED)
		return afpc_fail(c, ECONNRESET, op, NULL,
				 "the server closed the connection (afpd stopped?)");
	if (e == EPROTO)
		return afpc_fail(c, EPROTO, op, NULL, "malformed DSI reply from the server");
	return afpc_fail(c, e, op, NULL, "%s", strerror(e));
}

static int
dsi_recv_all(struct bench_conn *c, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = recv(c->fd, p, len, 0);

		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
dsi_send_iov(struct bench_conn *c, struct iovec *iov, int iovcnt)
{
	while (iovcnt > 0) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)iovcnt };
		ssize_t n = sendmsg(c->fd, &m, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			iovcnt--;
		}
		if (iovcnt > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	c->last_send = time(NULL);
	return 0;
}

int
dsi_send(struct bench_conn *c, uint8_t cmd, const void *a, size_t alen, const void *b, size_t blen,
	 uint32_t write_off)
{
	uint8_t h[16] = { 0 };
	struct iovec iov[3];
	uint16_t id = ++c->reqid;
	int rc;

	h[1] = cmd;
	put16(h + 2, id);
	put32(h + 4, write_off);
	put32(h + 8, (uint32_t)(alen + blen));
	iov[0] = (struct iovec){ h, 16 };
	iov[1] = (struct iovec){ (void *)(uintptr_t)a, alen };
	iov[2] = (struct iovec){ (void *)(uintptr_t)b, blen };
	rc = dsi_send_iov(c, iov, blen ? 3 : alen ? 2 : 1);
	return rc < 0 ? rc : id;
}

int
dsi_next_reply(struct bench_conn *c, struct pending *pend, int npend, uint16_t *id, int32_t *code,
	       uint32_t *len)
{
	for (;;) {
		uint8_t h[16];
		int rc = dsi_recv_all(c, h, sizeof(h)), slot = -1, i;
		uint32_t n;

		if (rc < 0)
			return rc;
		n = get32(h + 8);
		if (h[0] == 0) { /* a request from the server */
			if (n > 1024)
				return -EPROTO;
			uint8_t junk[1024];
			if (n && (rc = dsi_recv_all(c, junk, n)) < 0)
				return rc;
			if (h[1] == DSI_TICKLE) {
				uint8_t r[16] = { 0, DSI_TICKLE };
				struct iovec iov = { r, sizeof(r) };
				memcpy(r + 2, h + 2, 2);
				if ((rc = dsi_send_iov(c, &iov, 1)) < 0)
					return rc;
			} else if (h[1] == DSI_CLOSE) {
				return -ECONNRESET;
			}
			continue; /* attentions carry nothing the driver needs */
		}
		if (h[0] != 1)
			return -EPROTO;
		*id = get16(h + 2);
		*code = (int32_t)get32(h + 4);
		*len = n;
		for (i = 0; i < npend; i++)
			if (pend[i].used && pend[i].id == *id)
				slot = i;
		if (slot >= 0 && pend[slot].dst) {
			if (n > pend[slot].want)
				return -EPROTO;
			if (n && (rc = dsi_recv_all(c, pend[slot].dst, n)) < 0)
				return rc;
			return slot;
		}
		if (n > AFP_MAX_REPLY)
			return -EPROTO;
		if (n && (rc = dsi_recv_all(c, c->rbuf, n)) < 0)
			return rc;
		c->rlen = n;
		return slot;
	}
}

int32_t
dsi_call(struct bench_conn *c, uint8_t cmd, const void *a, size_t alen, const void *b, size_t blen,
	 uint32_t write_off, const char *op)
{
	struct pending p = { .used = true };
	uint16_t id;
	int32_t code;
	uint32_t len;
	int rc;

	if (c->dead)
		return DSI_BROKEN;
	if (cmd != DSI_TICKLE && time(NULL) - c->last_send > AFP_TICKLE_S) {
		uint8_t r[16] = { 0, DSI_TICKLE };
		struct iovec iov = { r, sizeof(r) };
		put16(r + 2, ++c->reqid);
		if ((rc = dsi_send_iov(c, &iov, 1)) < 0)
			goto broken;
	}
	rc = dsi_send(c, cmd, a, alen, b, blen, write_off);
	if (rc < 0)
		goto broken;
	p.id = (uint16_t)rc;
	do {
		rc = dsi_next_reply(c, &p, 1, &id, &code, &len);
		if (rc < 0)
			goto broken;
	} while (id != p.id); /* a late tickle reply or the like */
	return code;
broken:
	dsi_fail(c, -rc, op);
	return DSI_BROKEN;
}

static int32_t
afp_call(struct bench_conn *c, const void *req, size_t len, const char *op)
{
	return dsi_call(c, DSI_COMMAND, req, len, NULL, 0, 0, op);
}

void
afp_msg_u8(struct msg *m, uint8_t v)
{
	if (m->n + 1 > sizeof(m->b)) {
		m->over = true;
		return;
	}
	m->b[m->n++] = v;
}

void
afp_msg_u16(struct msg *m, uint16_t v)
{
	afp_msg_u8(m, (uint8_t)(v >> 8));
	afp_msg_u8(m, (uint8_t)v);
}

void
afp_msg_u32(struct msg *m, uint32_t v)
{
	afp_msg_u16(m, (uint16_t)(v >> 16));
	afp_msg_u16(m, (uint16_t)v);
}

void
afp_msg_u64(struct msg *m, uint64_t v)
{
	afp_msg_u32(m, (uint32_t)(v >> 32));
	afp_msg_u32(m, (uint32_t)v);
}

void
afp_msg_bytes(struct msg *m, const void *p, size_t n)
{
	if (m->n + n > sizeof(m->b)) {
		m->over = true;
		return;
	}
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

void
afp_msg_pstr(struct msg *m, const char *s)
{
	size_t n = strlen(s);

	if (n > 255) {
		m->over = true;
		return;
	}
	afp_msg_u8(m, (uint8_t)n);
	afp_msg_bytes(m, s, n);
}

void
afp_msg_path(struct msg *m, struct bench_conn *c, const char *path)
{
	const char *sub = c->t->subdir;
	char *full = xasprintf("%s%s%s", sub, *sub && *path ? "/" : "", path);
	size_t n = strlen(full), i;

	for (i = 0; i < n; i++)
		if (full[i] == '/')
			full[i] = '\0';
	afp_msg_u8(m, PATH_UTF8);
	afp_msg_u32(m, 0x08000103); /* kTextEncodingUTF8 hint, as Macs send it */
	if (n > 0xffff)
		m->over = true;
	else {
		afp_msg_u16(m, (uint16_t)n);
		afp_msg_bytes(m, full, n);
	}
	free(full);
}

void
afp_msg_start(struct msg *m, uint8_t cmd, uint8_t flag)
{
	m->n = 0;
	m->over = false;
	afp_msg_u8(m, cmd);
	afp_msg_u8(m, flag);
}

int
afp_msg(struct bench_conn *c, struct msg *m, const char *op, const char *path)
{
	int32_t code;

	if (m->over)
		return afpc_fail(c, ENAMETOOLONG, op, path, "name too long for AFP");
	code = afp_call(c, m->b, m->n, op);
	if (code == DSI_BROKEN)
		return -c->dead_err; /* c->err says what */
	return code;
}

int
afp_do(struct bench_conn *c, struct msg *m, const char *op, const char *path)
{
	int code = afp_msg(c, m, op, path);

	if (IS_ERRNO(code))
		return code;
	return code ? afpc_fail_code(c, code, op, path) : 0;
}
