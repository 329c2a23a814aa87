/* afp_conn.c - the AFP driver's connection: TCP with timeouts, the DSI session, the server's
 * status, login and the volume opened; and their teardown. */
#include <errno.h>
#include <netdb.h>
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

#include "afp.h"
#include "xmalloc.h"

static int
tcp_connect(struct bench_conn *c)
{
	const struct bench_target *t = c->t;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	struct timeval tv = { .tv_sec = AFP_TIMEOUT_S };
	char port[8];
	int rc, e = ECONNREFUSED, one = 1;

	snprintf(port, sizeof(port), "%d", t->port ? t->port : AFP_PORT);
	rc = getaddrinfo(t->host, port, &hints, &res);
	if (rc)
		return afpc_fail(c, EHOSTUNREACH, "connect", NULL, "%s", gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		c->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (c->fd < 0) {
			e = errno;
			continue;
		}
		/* Bounds connect() too, and every later recv/send. */
		setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			c->last_send = time(NULL); /* no tickle before the session */
			break;
		}
		e = errno == EINPROGRESS ? ETIMEDOUT : errno;
		close(c->fd);
		c->fd = -1;
	}
	freeaddrinfo(res);
	if (c->fd < 0)
		return afpc_fail(c, e, "connect", NULL, "%s%s", strerror(e),
				 e == ECONNREFUSED ? " (is afpd running?)" : "");
	return 0;
}

static int
open_session(struct bench_conn *c)
{
	uint8_t opt[6] = { 0x01, 4 }; /* attention quantum: 1024 */
	int32_t code;
	uint32_t p = 0;

	put32(opt + 2, 1024);
	code = dsi_call(c, DSI_OPEN, opt, sizeof(opt), NULL, 0, 0, "DSIOpenSession");
	if (code == DSI_BROKEN)
		return -c->dead_err;
	if (code)
		return afpc_fail(c, EIO, "DSIOpenSession", NULL, "refused (error %d)", code);
	c->quantum = 0;
	while (p + 2 <= c->rlen && p + 2u + c->rbuf[p + 1] <= c->rlen) {
		if (c->rbuf[p] == 0x00 && c->rbuf[p + 1] == 4) /* server request quantum */
			c->quantum = get32(c->rbuf + p + 2);
		p += 2u + c->rbuf[p + 1];
	}
	if (c->quantum < AFP_MIN_QUANTUM)
		c->quantum = 128 * 1024; /* DSI's documented minimum default */
	if (c->quantum > AFP_MAX_QUANTUM)
		c->quantum = AFP_MAX_QUANTUM;
	return 0;
}

/* DSIGetStatus on its own connection (afpd closes it after answering): AFP versions and
 * login methods. */
static int
get_status(struct bench_conn *c, char *vers, size_t vlen, char *uams, size_t ulen)
{
	int32_t code;
	int rc = tcp_connect(c);

	if (rc < 0)
		return rc;
	code = dsi_call(c, DSI_STATUS, NULL, 0, NULL, 0, 0, "DSIGetStatus");
	close(c->fd);
	c->fd = -1;
	if (code == DSI_BROKEN)
		return -c->dead_err;
	c->dead = false;
	if (code || c->rlen < 10 ||
	    !afp_status_list(c->rbuf, c->rlen, get16(c->rbuf + 2), vers, vlen) ||
	    !afp_status_list(c->rbuf, c->rlen, get16(c->rbuf + 4), uams, ulen))
		return afpc_fail(c, EPROTO, "DSIGetStatus", NULL, "malformed server status");
	return 0;
}

void
afp_disconnect(struct bench_conn *c)
{
	struct msg m;

	if (!c)
		return;
	if (c->fd >= 0 && !c->dead) {
		if (c->vol_open) {
			afp_msg_start(&m, FP_CLOSEVOL, 0);
			afp_msg_u16(&m, c->vid);
			afp_msg(c, &m, "FPCloseVol", NULL);
		}
		if (c->logged_in && !c->dead) {
			afp_msg_start(&m, FP_LOGOUT, 0);
			afp_msg(c, &m, "FPLogout", NULL);
		}
		if (!c->dead) {
			/* DSICloseSession has no reply. */
			uint8_t h[16] = { 0, DSI_CLOSE };
			struct iovec iov = { h, sizeof(h) };
			put16(h + 2, ++c->reqid);
			dsi_send_iov(c, &iov, 1);
		}
	}
	if (c->fd >= 0)
		close(c->fd);
	free(c->rbuf);
	free(c);
}

int
afp_connect(const struct bench_target *t, struct bench_conn **out, char *err, size_t errlen)
{
	struct bench_conn *c = xcalloc(1, sizeof(*c));
	static const char *const versions[] = { "AFP3.4", "AFP3.3", "AFP3.2", "AFP3.1" };
	char vers[256], uams[512];
	const char *ver = NULL;
	struct msg m;
	size_t i;
	int rc, code;

	*out = NULL;
	c->t = t;
	c->fd = -1;
	c->rbuf = xmalloc(AFP_MAX_REPLY);
	rc = get_status(c, vers, sizeof(vers), uams, sizeof(uams));
	if (rc < 0)
		goto fail;
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]) && !ver; i++)
		if (afp_has_item(vers, versions[i]))
			ver = versions[i];
	if (!ver) {
		rc = afpc_fail(c, EPROTONOSUPPORT, "connect", NULL,
			       "the server speaks no AFP 3.x (offers %s)", vers);
		goto fail;
	}
	if ((rc = tcp_connect(c)) < 0 || (rc = open_session(c)) < 0 ||
	    (rc = afp_login(c, ver, uams)) < 0)
		goto fail;
	c->logged_in = true;

	afp_msg_start(&m, FP_OPENVOL, 0);
	afp_msg_u16(&m, VOLBIT_ATTR | VOLBIT_VID);
	afp_msg_pstr(&m, t->share);
	code = afp_msg(c, &m, "open volume", NULL);
	if (code == AFPERR_NOOBJ) {
		rc = afpc_fail(c, ENODEV, "open volume", NULL,
			       "no volume \"%s\" on %s for %s (afpd lists only "
			       "the volumes a user may open)",
			       t->share, t->host, afp_who(c));
		goto fail;
	}
	if (code == -5000 || code == -5023) {
		rc = afpc_fail(c, EACCES, "open volume", NULL,
			       "access denied for %s (not a valid user of the volume?)",
			       afp_who(c));
		goto fail;
	}
	if (code) {
		rc = IS_ERRNO(code) ? code : afpc_fail_code(c, code, "open volume", NULL);
		goto fail;
	}
	/* bitmap, then the parameters in bit order: attributes, volume id */
	if (c->rlen < 6) {
		rc = afpc_fail(c, EPROTO, "open volume", NULL, "malformed reply");
		goto fail;
	}
	c->file_ids = get16(c->rbuf + 2) & VOLATTR_FILEIDS;
	c->vid = get16(c->rbuf + 4);
	c->vol_open = true;

	if (*t->subdir) { /* prove the subdirectory now, not at the first workload */
		struct bench_stat st;
		rc = afp_stat(c, "", &st);
		if (rc == 0 && !st.is_dir)
			rc = afpc_fail(c, ENOTDIR, "connect", NULL, "not a directory");
		if (rc < 0)
			goto fail;
	}
	*out = c;
	return 0;
fail:
	snprintf(err, errlen, "%s", c->err);
	afp_disconnect(c);
	return rc;
}

const char *
afp_error(struct bench_conn *c)
{
	return c->err[0] ? c->err : "no error";
}
