/* drv_afp.c - the AFP benchmark driver: a small AFP-over-DSI client of its own (no maintained
 * C AFP library exists), enough for the engine's calls against netatalk 3/4.
 *
 * DSI frames every message with a 16-byte header; AFP calls ride in DSICommand, file data
 * in DSIWrite. Objects are named by the volume's root directory (ID 2) plus a UTF-8 path
 * (type 3) whose components are separated by NUL bytes, so nested paths need no directory-ID
 * lookups. Large reads and writes keep AFP_DEPTH requests of at most the server's quantum
 * outstanding. Every length read off the wire is bounded, every receive and send has a
 * timeout (a silent or dead server fails the call), and the server's tickles are answered.
 * Logins: "No User Authent" (guest), "Cleartxt Passwrd", or DHX2 (what Macs use: DH key
 * agreement and CAST5-CBC, from OpenSSL's legacy provider in a private library context). */
#include <arpa/inet.h>
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
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "bench_driver.h"
#include "xmalloc.h"

#define AFP_PORT 548
#define AFP_TIMEOUT_S 20	   /* per receive/send: a silent server fails the call */
#define AFP_TICKLE_S 30		   /* send our own tickle before a call after this much quiet */
#define AFP_DEPTH 4		   /* reads/writes in flight */
#define AFP_MAX_REPLY (256 * 1024) /* bound on any non-data reply */
#define AFP_MAX_QUANTUM (8 * 1024 * 1024)
#define AFP_MIN_QUANTUM 4096

enum {
	DSI_CLOSE = 1,
	DSI_COMMAND = 2,
	DSI_STATUS = 3,
	DSI_OPEN = 4,
	DSI_TICKLE = 5,
	DSI_WRITE = 6,
	DSI_ATTN = 8,
};

enum {
	FP_CLOSEVOL = 2,
	FP_CLOSEFORK = 4,
	FP_COPYFILE = 5,
	FP_CREATEDIR = 6,
	FP_CREATEFILE = 7,
	FP_DELETE = 8,
	FP_FLUSHFORK = 11,
	FP_GETVOLPARMS = 17,
	FP_LOGIN = 18,
	FP_LOGINCONT = 19,
	FP_LOGOUT = 20,
	FP_MOVEANDRENAME = 23,
	FP_OPENVOL = 24,
	FP_OPENFORK = 26,
	FP_SETFORKPARMS = 31,
	FP_GETFILEDIRPARMS = 34,
	FP_READEXT = 60,
	FP_WRITEEXT = 61,
	FP_ENUMERATEEXT2 = 68,
};

/* AFP result codes are -5000 and below; anything between is a -errno of ours. */
#define IS_ERRNO(code) ((code) < 0 && (code) > -5000)
#define AFPERR_AUTHCONT (-5001)
#define AFPERR_EOF (-5009)
#define AFPERR_NOOBJ (-5018)
#define AFPERR_EXIST (-5017)

#define ROOT_DID 2
#define PATH_UTF8 3
#define FILBIT_EXTDFLEN 0x0800
#define FILBIT_UTF8NAME 0x2000
#define DIRBIT_NODEID 0x0100
#define DIRBIT_UTF8NAME 0x2000
#define VOLBIT_ATTR 0x0001
#define VOLATTR_FILEIDS 0x0004 /* afpd: only with a persistent CNID scheme (dbd) */
#define VOLBIT_VID 0x0020
#define VOLBIT_XBFREE 0x0200

struct bench_conn {
	const struct bench_target *t;
	int fd;
	uint16_t reqid;
	uint16_t vid;
	bool file_ids; /* the volume's CNIDs are persistent (kSupportsFileIDs) */
	bool vol_open, logged_in, dead;
	int dead_err;	  /* why it is dead, errno */
	uint32_t quantum; /* the server's request quantum: bound on one request */
	time_t last_send;
	char err[512];
	uint8_t *rbuf; /* the last non-data reply */
	uint32_t rlen;
};

struct bench_file {
	uint16_t fork;
	char *path;
};

/* A request waiting for its reply during a pipelined transfer. */
struct pending {
	bool used;
	uint16_t id;
	uint8_t *dst; /* reads: where the data goes; NULL: into rbuf */
	size_t want;  /* reads: bytes asked for */
	uint64_t off; /* offset in the file */
};

static int afp_stat(struct bench_conn *c, const char *path, struct bench_stat *st);

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

static const char *
who(const struct bench_conn *c)
{
	return c->t->user ? c->t->user : "guest";
}

/* Records "host/volume/path: op: reason" and returns -err. */
static int afpc_fail(struct bench_conn *c, int err, const char *op, const char *path,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
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

/* An AFP result code as -errno with a sentence. */
static int
afpc_fail_code(struct bench_conn *c, int code, const char *op, const char *path)
{
	const char *what;
	int e = afp_errno(code, &what);

	if (code == -5000)
		return afpc_fail(c, e, op, path, "access denied for %s (AFP error %d)", who(c),
				 code);
	return afpc_fail(c, e ? e : EIO, op, path, "%s (AFP error %d)", what, code);
}

/* A transport failure: the connection is unusable from now on. */
static int
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

static int
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

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* Sends one DSI request (header, then up to two payload parts); returns its id or -errno. */
static int
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

/* Answers what the server asks in between (tickles, attentions) and reads the next reply:
 * its header into *id, *code and *len; the payload into a matching pending read's buffer,
 * else into c->rbuf. Returns the pending slot (or -1 when none matched), or -errno. */
static int
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

/* One request and its reply. Returns the AFP result code (0, or negative AFP codes like
 * -5018) with the reply in c->rbuf/c->rlen, or a DSI transport failure as -errno below
 * -100000 is impossible, so: transport failures set c->dead and return INT32_MIN. */
#define DSI_BROKEN INT32_MIN
static int32_t
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

/* A request under construction. */
struct msg {
	uint8_t b[1024];
	size_t n;
	bool over;
};

static void
m_u8(struct msg *m, uint8_t v)
{
	if (m->n + 1 > sizeof(m->b)) {
		m->over = true;
		return;
	}
	m->b[m->n++] = v;
}

static void
m_u16(struct msg *m, uint16_t v)
{
	m_u8(m, (uint8_t)(v >> 8));
	m_u8(m, (uint8_t)v);
}

static void
m_u32(struct msg *m, uint32_t v)
{
	m_u16(m, (uint16_t)(v >> 16));
	m_u16(m, (uint16_t)v);
}

static void
m_u64(struct msg *m, uint64_t v)
{
	m_u32(m, (uint32_t)(v >> 32));
	m_u32(m, (uint32_t)v);
}

static void
m_bytes(struct msg *m, const void *p, size_t n)
{
	if (m->n + n > sizeof(m->b)) {
		m->over = true;
		return;
	}
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* A Pascal string: length byte, bytes (at most 255). */
static void
m_pstr(struct msg *m, const char *s)
{
	size_t n = strlen(s);

	if (n > 255) {
		m->over = true;
		return;
	}
	m_u8(m, (uint8_t)n);
	m_bytes(m, s, n);
}

/* A type-3 (UTF-8) AFP path: hint, length, components separated by NUL bytes. The
 * target's subdirectory comes first; "" names the volume's root directory itself. */
static void
m_path(struct msg *m, struct bench_conn *c, const char *path)
{
	const char *sub = c->t->subdir;
	char *full = xasprintf("%s%s%s", sub, *sub && *path ? "/" : "", path);
	size_t n = strlen(full), i;

	for (i = 0; i < n; i++)
		if (full[i] == '/')
			full[i] = '\0';
	m_u8(m, PATH_UTF8);
	m_u32(m, 0x08000103); /* kTextEncodingUTF8 hint, as Macs send it */
	if (n > 0xffff)
		m->over = true;
	else {
		m_u16(m, (uint16_t)n);
		m_bytes(m, full, n);
	}
	free(full);
}

static void
m_start(struct msg *m, uint8_t cmd, uint8_t flag)
{
	m->n = 0;
	m->over = false;
	m_u8(m, cmd);
	m_u8(m, flag);
}

/* Sends m as an AFP command; returns the AFP code, or -errno with the error recorded. */
static int
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

/* Like afp_msg, but any AFP error becomes -errno with a sentence. */
static int
afp_do(struct bench_conn *c, struct msg *m, const char *op, const char *path)
{
	int code = afp_msg(c, m, op, path);

	if (IS_ERRNO(code))
		return code;
	return code ? afpc_fail_code(c, code, op, path) : 0;
}

/* --- status and login ------------------------------------------------------------ */

/* Reads a counted list of Pascal strings at off of the status block into out (a
 * comma-separated string). */
static bool
status_list(const uint8_t *d, uint32_t len, uint16_t off, char *out, size_t outlen)
{
	uint32_t p = off;
	unsigned i, n;

	out[0] = '\0';
	if (off == 0 || off >= len)
		return false;
	n = d[p++];
	for (i = 0; i < n; i++) {
		if (p >= len || p + 1 + d[p] > len)
			return false;
		snprintf(out + strlen(out), outlen - strlen(out), "%s%.*s", i ? "," : "", d[p],
			 (const char *)d + p + 1);
		p += 1 + d[p];
	}
	return true;
}

static bool
has_item(const char *list, const char *item)
{
	size_t n = strlen(item);
	const char *p = list;

	while ((p = strstr(p, item))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

static void
inc128(uint8_t *n)
{
	int i;

	for (i = 15; i >= 0; i--)
		if (++n[i])
			break;
}

/* CAST5-CBC without padding, as DHX2 uses it; in a private OpenSSL library context so the
 * legacy provider is not loaded for the rest of the process. */
static int
cast5_cbc(const uint8_t key[16], const char *iv, const uint8_t *in, int len, uint8_t *out, int enc)
{
	OSSL_LIB_CTX *lib = OSSL_LIB_CTX_new();
	OSSL_PROVIDER *legacy = NULL, *dflt = NULL;
	EVP_CIPHER *ciph = NULL;
	EVP_CIPHER_CTX *cx = NULL;
	int n = 0, m = 0, rc = -1;

	if (!lib)
		return -1;
	legacy = OSSL_PROVIDER_load(lib, "legacy");
	dflt = OSSL_PROVIDER_load(lib, "default");
	ciph = EVP_CIPHER_fetch(lib, "CAST5-CBC", NULL);
	cx = EVP_CIPHER_CTX_new();
	if (!legacy || !ciph || !cx)
		goto out;
	if (EVP_CipherInit_ex2(cx, ciph, key, (const uint8_t *)iv, enc, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_padding(cx, 0) != 1 || EVP_CipherUpdate(cx, out, &n, in, len) != 1 ||
	    EVP_CipherFinal_ex(cx, out + n, &m) != 1 || n + m != len)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(cx);
	EVP_CIPHER_free(ciph);
	if (legacy)
		OSSL_PROVIDER_unload(legacy);
	if (dflt)
		OSSL_PROVIDER_unload(dflt);
	OSSL_LIB_CTX_free(lib);
	return rc;
}

/* FPLogin's common start: command, AFP version, UAM, user, padded to even length. */
static void
login_start(struct msg *m, const char *ver, const char *uam, const char *user)
{
	m_start(m, FP_LOGIN, 0);
	m->n = 1; /* FPLogin has no pad byte */
	m_pstr(m, ver);
	m_pstr(m, uam);
	if (user) {
		m_pstr(m, user);
		if (m->n % 2)
			m_u8(m, 0);
	}
}

static int
login_failed(struct bench_conn *c, int code)
{
	if (IS_ERRNO(code))
		return code;
	if (code == -5023 || code == -5000)
		return afpc_fail(
			c, EPERM, "login", NULL, "logon failure for %s (%s) (AFP error %d)", who(c),
			c->t->user ? "wrong password?" : "guest access not allowed?", code);
	return afpc_fail_code(c, code, "login", NULL);
}

static int
login_dhx2(struct bench_conn *c, const char *ver)
{
	const struct bench_target *t = c->t;
	const char *pw = t->password ? t->password : "";
	BN_CTX *bx = BN_CTX_new();
	BIGNUM *p = BN_new(), *g = BN_new(), *ma = BN_new(), *rb = BN_new(), *mb = BN_new(),
	       *k = BN_new(), *pm2 = BN_new();
	uint8_t *kbuf = NULL, *mbbuf = NULL, key[16], nonce[16], enc[272], plain[272];
	unsigned int keylen = 0;
	struct msg *m = xmalloc(sizeof(*m));
	uint16_t sid, plen;
	int code, rc = -EIO;

	if (!bx || !p || !g || !ma || !rb || !mb || !k || !pm2)
		goto crypto;
	login_start(m, ver, "DHX2", t->user);
	code = afp_msg(c, m, "login", NULL);
	if (code != AFPERR_AUTHCONT) {
		rc = code ? login_failed(c, code)
			  : afpc_fail(c, EPROTO, "login", NULL, "DHX2: unexpected success");
		goto out;
	}
	/* ID(2) g(4) len(2) p(len) Ma(len) */
	if (c->rlen < 8)
		goto proto;
	sid = get16(c->rbuf);
	plen = get16(c->rbuf + 6);
	if (plen < 16 || plen > 512 || c->rlen < 8u + 2u * plen)
		goto proto;
	BN_set_word(g, get32(c->rbuf + 2));
	BN_bin2bn(c->rbuf + 8, plen, p);
	BN_bin2bn(c->rbuf + 8 + plen, plen, ma);
	/* rb in [1, p-2] */
	if (!BN_copy(pm2, p) || !BN_sub_word(pm2, 2) || !BN_rand_range(rb, pm2) ||
	    !BN_add_word(rb, 1) || !BN_mod_exp(mb, g, rb, p, bx) || !BN_mod_exp(k, ma, rb, p, bx))
		goto crypto;
	kbuf = xmalloc(plen);
	mbbuf = xmalloc(plen);
	if (BN_bn2binpad(k, kbuf, plen) < 0 || BN_bn2binpad(mb, mbbuf, plen) < 0 ||
	    EVP_Digest(kbuf, plen, key, &keylen, EVP_md5(), NULL) != 1 ||
	    RAND_bytes(nonce, sizeof(nonce)) != 1)
		goto crypto;
	if (cast5_cbc(key, "LWallace", nonce, 16, enc, 1) < 0)
		goto crypto;
	m_start(m, FP_LOGINCONT, 0);
	m_u16(m, sid);
	m_bytes(m, mbbuf, plen);
	m_bytes(m, enc, 16);
	code = afp_msg(c, m, "login", NULL);
	if (code != AFPERR_AUTHCONT) {
		rc = code ? login_failed(c, code)
			  : afpc_fail(c, EPROTO, "login", NULL, "DHX2: unexpected success");
		goto out;
	}
	/* ID(2), then CAST(cnonce+1 | snonce) */
	if (c->rlen < 34 || cast5_cbc(key, "CJalbert", c->rbuf + 2, 32, plain, 0) < 0)
		goto proto;
	inc128(nonce);
	if (memcmp(plain, nonce, 16) != 0) {
		rc = afpc_fail(c, EPERM, "login", NULL,
			       "DHX2: the server did not prove the shared key");
		goto out;
	}
	memcpy(plain, plain + 16, 16);
	inc128(plain);
	memset(plain + 16, 0, 256);
	memcpy(plain + 16, pw, strlen(pw) > 255 ? 255 : strlen(pw));
	if (cast5_cbc(key, "LWallace", plain, 272, enc, 1) < 0)
		goto crypto;
	m_start(m, FP_LOGINCONT, 0);
	m_u16(m, (uint16_t)(sid + 1));
	m_bytes(m, enc, 272);
	code = afp_msg(c, m, "login", NULL);
	rc = code ? login_failed(c, code) : 0;
	goto out;
proto:
	rc = afpc_fail(c, EPROTO, "login", NULL, "DHX2: malformed reply from the server");
	goto out;
crypto:
	rc = afpc_fail(c, EIO, "login", NULL,
		       "DHX2: OpenSSL failed (is CAST5 available from the legacy provider?)");
out:
	explicit_bzero(plain, sizeof(plain));
	explicit_bzero(key, sizeof(key));
	explicit_bzero(m, sizeof(*m));
	free(m);
	free(kbuf);
	free(mbbuf);
	BN_free(p);
	BN_free(g);
	BN_free(ma);
	BN_clear_free(rb);
	BN_free(mb);
	BN_clear_free(k);
	BN_free(pm2);
	BN_CTX_free(bx);
	return rc;
}

static int
afp_login(struct bench_conn *c, const char *ver, const char *uams)
{
	const struct bench_target *t = c->t;
	struct msg m;
	int code;

	if (!t->user) {
		if (!has_item(uams, "No User Authent"))
			return afpc_fail(c, EACCES, "login", NULL,
					 "the server offers no guest login (UAMs: %s)", uams);
		login_start(&m, ver, "No User Authent", NULL);
		code = afp_msg(c, &m, "login", NULL);
		return code ? login_failed(c, code) : 0;
	}
	if (has_item(uams, "DHX2"))
		return login_dhx2(c, ver);
	if (has_item(uams, "Cleartxt Passwrd")) {
		char pw[8] = { 0 };
		const char *s = t->password ? t->password : "";
		memcpy(pw, s, strlen(s) > 8 ? 8 : strlen(s));
		login_start(&m, ver, "Cleartxt Passwrd", t->user);
		m_bytes(&m, pw, 8);
		explicit_bzero(pw, sizeof(pw));
		code = afp_msg(c, &m, "login", NULL);
		explicit_bzero(&m, sizeof(m));
		return code ? login_failed(c, code) : 0;
	}
	return afpc_fail(c, EPROTONOSUPPORT, "login", NULL,
			 "no login method for a user that this client speaks (server offers: %s; "
			 "need DHX2 or Cleartxt Passwrd)",
			 uams);
}

/* --- connection ------------------------------------------------------------------ */

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
	    !status_list(c->rbuf, c->rlen, get16(c->rbuf + 2), vers, vlen) ||
	    !status_list(c->rbuf, c->rlen, get16(c->rbuf + 4), uams, ulen))
		return afpc_fail(c, EPROTO, "DSIGetStatus", NULL, "malformed server status");
	return 0;
}

static void
afp_disconnect(struct bench_conn *c)
{
	struct msg m;

	if (!c)
		return;
	if (c->fd >= 0 && !c->dead) {
		if (c->vol_open) {
			m_start(&m, FP_CLOSEVOL, 0);
			m_u16(&m, c->vid);
			afp_msg(c, &m, "FPCloseVol", NULL);
		}
		if (c->logged_in && !c->dead) {
			m_start(&m, FP_LOGOUT, 0);
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

static int
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
		if (has_item(vers, versions[i]))
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

	m_start(&m, FP_OPENVOL, 0);
	m_u16(&m, VOLBIT_ATTR | VOLBIT_VID);
	m_pstr(&m, t->share);
	code = afp_msg(c, &m, "open volume", NULL);
	if (code == AFPERR_NOOBJ) {
		rc = afpc_fail(c, ENODEV, "open volume", NULL,
			       "no volume \"%s\" on %s for %s (afpd lists only "
			       "the volumes a user may open)",
			       t->share, t->host, who(c));
		goto fail;
	}
	if (code == -5000 || code == -5023) {
		rc = afpc_fail(c, EACCES, "open volume", NULL,
			       "access denied for %s (not a valid user of the volume?)", who(c));
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

static const char *
afp_error(struct bench_conn *c)
{
	return c->err[0] ? c->err : "no error";
}

/* --- namespace calls -------------------------------------------------------------- */

/* Splits path into its parent and its last component (both into bufs). */
static void
split(const char *path, char *parent, size_t plen, char *name, size_t nlen)
{
	const char *slash = strrchr(path, '/');

	if (slash) {
		snprintf(parent, plen, "%.*s", (int)(slash - path), path);
		snprintf(name, nlen, "%s", slash + 1);
	} else {
		parent[0] = '\0';
		snprintf(name, nlen, "%s", path);
	}
}

static void
m_utf8name(struct msg *m, const char *name)
{
	size_t n = strlen(name);

	m_u8(m, PATH_UTF8);
	m_u32(m, 0x08000103);
	m_u16(m, (uint16_t)(n > 0xffff ? 0xffff : n));
	m_bytes(m, name, n);
}

static int
afp_mkdir(struct bench_conn *c, const char *path)
{
	struct msg m;

	m_start(&m, FP_CREATEDIR, 0);
	m_u16(&m, c->vid);
	m_u32(&m, ROOT_DID);
	m_path(&m, c, path);
	return afp_do(c, &m, "mkdir", path);
}

static int
afp_delete(struct bench_conn *c, const char *path, const char *op)
{
	struct msg m;

	m_start(&m, FP_DELETE, 0);
	m_u16(&m, c->vid);
	m_u32(&m, ROOT_DID);
	m_path(&m, c, path);
	return afp_do(c, &m, op, path);
}

/* FPDelete removes files and empty directories alike; rmdir and unlink check the type so
 * each keeps its POSIX meaning. */
static int
afp_rmdir(struct bench_conn *c, const char *path)
{
	struct bench_stat st;
	int rc = afp_stat(c, path, &st);

	if (rc < 0)
		return rc;
	if (!st.is_dir)
		return afpc_fail(c, ENOTDIR, "rmdir", path, "not a directory");
	return afp_delete(c, path, "rmdir");
}

static int
afp_unlink(struct bench_conn *c, const char *path)
{
	struct bench_stat st;
	int rc = afp_stat(c, path, &st);

	if (rc < 0)
		return rc;
	if (st.is_dir)
		return afpc_fail(c, EISDIR, "delete", path, "is a directory");
	return afp_delete(c, path, "delete");
}

static int
afp_rename(struct bench_conn *c, const char *from, const char *to)
{
	char parent[1024], name[256];
	struct msg m;
	int code;

	split(to, parent, sizeof(parent), name, sizeof(name));
	m_start(&m, FP_MOVEANDRENAME, 0);
	m_u16(&m, c->vid);
	m_u32(&m, ROOT_DID);
	m_u32(&m, ROOT_DID);
	m_path(&m, c, from);
	m_path(&m, c, parent);
	m_utf8name(&m, name);
	code = afp_msg(c, &m, "rename", from);
	if (code == AFPERR_EXIST) {
		/* POSIX rename replaces the target; AFP refuses. Replace a file only. */
		struct bench_stat st;
		if (afp_stat(c, to, &st) == 0 && !st.is_dir && afp_delete(c, to, "rename") == 0)
			code = afp_msg(c, &m, "rename", from);
	}
	if (IS_ERRNO(code))
		return code;
	return code ? afpc_fail_code(c, code, "rename", from) : 0;
}

/* Parameters of a FPGetFileDirParms/FPEnumerateExt2 entry: size (files) and UTF-8 name. */
static int
parse_params(const uint8_t *p, size_t len, bool is_dir, uint64_t *size, char *name, size_t namelen)
{
	size_t q = 0;
	uint16_t noff, n;

	*size = 0;
	if (is_dir) {
		/* DirBitmap NodeID | UTF8Name: node id(4), name offset(2), pad(4) */
		if (len < 10)
			return -EPROTO;
		noff = get16(p + 4);
	} else {
		/* FileBitmap ExtDataForkLen | UTF8Name: size(8), name offset(2), pad(4) */
		if (len < 14)
			return -EPROTO;
		*size = get64(p);
		noff = get16(p + 8);
	}
	if (!name)
		return 0;
	q = noff;
	if (q + 6 > len)
		return -EPROTO;
	n = get16(p + q + 4);
	if (q + 6 + n > len || n >= namelen)
		return -EPROTO;
	memcpy(name, p + q + 6, n);
	name[n] = '\0';
	return 0;
}

static int
afp_stat(struct bench_conn *c, const char *path, struct bench_stat *st)
{
	struct msg m;
	int code;

	m_start(&m, FP_GETFILEDIRPARMS, 0);
	m_u16(&m, c->vid);
	m_u32(&m, ROOT_DID);
	m_u16(&m, FILBIT_EXTDFLEN | FILBIT_UTF8NAME);
	m_u16(&m, DIRBIT_NODEID | DIRBIT_UTF8NAME);
	m_path(&m, c, path);
	code = afp_do(c, &m, "stat", path);
	if (code < 0)
		return code;
	/* FileBitmap(2) DirBitmap(2) flags(1) pad(1) params */
	if (c->rlen < 6)
		return afpc_fail(c, EPROTO, "stat", path, "malformed reply");
	memset(st, 0, sizeof(*st));
	st->uid = -1;
	st->is_dir = c->rbuf[4] & 0x80;
	if (parse_params(c->rbuf + 6, c->rlen - 6, st->is_dir, &st->size, NULL, 0) < 0)
		return afpc_fail(c, EPROTO, "stat", path, "malformed reply");
	/* A directory's node id is its CNID, the volume's own name for it: an identity only
	 * where the CNIDs persist (with "cnid scheme = last" they are handed out anew). */
	if (st->is_dir && c->file_ids && c->rlen >= 10) {
		st->has_id = true;
		st->dev = c->vid;
		st->ino = get32(c->rbuf + 6);
	}
	return 0;
}

static int
afp_list(struct bench_conn *c, const char *path,
	 int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	uint32_t start = 1;
	struct msg m;

	for (;;) {
		int code;
		uint16_t count, i;
		size_t p = 6;

		m_start(&m, FP_ENUMERATEEXT2, 0);
		m_u16(&m, c->vid);
		m_u32(&m, ROOT_DID);
		m_u16(&m, FILBIT_EXTDFLEN | FILBIT_UTF8NAME);
		m_u16(&m, DIRBIT_NODEID | DIRBIT_UTF8NAME);
		m_u16(&m, 200);
		m_u32(&m, start);
		m_u32(&m, AFP_MAX_REPLY / 2);
		m_path(&m, c, path);
		code = afp_msg(c, &m, "list", path);
		if (code == AFPERR_NOOBJ) {
			/* No (more) entries; at the start, an empty directory or none at all. */
			struct bench_stat st;
			int rc = start > 1 ? 0 : afp_stat(c, path, &st);
			if (rc == 0 && start == 1 && !st.is_dir)
				rc = afpc_fail(c, ENOTDIR, "list", path, "not a directory");
			return rc;
		}
		if (IS_ERRNO(code))
			return code;
		if (code)
			return afpc_fail_code(c, code, "list", path);
		if (c->rlen < 6)
			return afpc_fail(c, EPROTO, "list", path, "malformed reply");
		count = get16(c->rbuf + 4);
		if (count == 0)
			return 0;
		/* Copy out: fn may call the driver, which reuses rbuf. */
		uint8_t *d = xmalloc(c->rlen);
		uint32_t dlen = c->rlen;
		memcpy(d, c->rbuf, dlen);
		for (i = 0; i < count; i++) {
			struct bench_stat st = { .uid = -1 };
			char name[1024];
			uint16_t len;
			int rc;

			if (p + 4 > dlen || (len = get16(d + p)) < 4 || p + len > dlen) {
				free(d);
				return afpc_fail(c, EPROTO, "list", path, "malformed entry");
			}
			st.is_dir = d[p + 2] & 0x80;
			if (parse_params(d + p + 4, len - 4, st.is_dir, &st.size, name,
					 sizeof(name)) < 0) {
				free(d);
				return afpc_fail(c, EPROTO, "list", path, "malformed entry");
			}
			rc = fn(name, &st, arg);
			if (rc) {
				free(d);
				return rc;
			}
			p += len;
		}
		free(d);
		start += count;
	}
}

static int
afp_space(struct bench_conn *c, const char *path, uint64_t *free_bytes)
{
	struct msg m;
	int code;

	m_start(&m, FP_GETVOLPARMS, 0);
	m_u16(&m, c->vid);
	m_u16(&m, VOLBIT_XBFREE);
	code = afp_do(c, &m, "free space", path);
	if (code < 0)
		return code;
	if (c->rlen < 10)
		return afpc_fail(c, EPROTO, "free space", path, "malformed reply");
	*free_bytes = get64(c->rbuf + 2);
	return 0;
}

/* --- files ---------------------------------------------------------------------------- */

static int
afp_open(struct bench_conn *c, const char *path, int flags, struct bench_file **out)
{
	struct msg m;
	uint16_t access = 0;
	int code;

	if (flags & BENCH_CREATE) {
		m_start(&m, FP_CREATEFILE, 0); /* soft create: fails when it exists */
		m_u16(&m, c->vid);
		m_u32(&m, ROOT_DID);
		m_path(&m, c, path);
		code = afp_do(c, &m, "create", path);
		if (code < 0)
			return code;
	}
	if (flags & BENCH_RD)
		access |= 0x01;
	if (flags & (BENCH_WR | BENCH_TRUNC))
		access |= 0x02;
	if (!access)
		access = 0x01;
	m_start(&m, FP_OPENFORK, 0); /* data fork */
	m_u16(&m, c->vid);
	m_u32(&m, ROOT_DID);
	m_u16(&m, 0);
	m_u16(&m, access);
	m_path(&m, c, path);
	code = afp_do(c, &m, "open", path);
	if (code < 0)
		return code;
	if (c->rlen < 4)
		return afpc_fail(c, EPROTO, "open", path, "malformed reply");
	*out = xcalloc(1, sizeof(**out));
	(*out)->fork = get16(c->rbuf + 2);
	(*out)->path = xstrdup(path);
	if ((flags & BENCH_TRUNC) && !(flags & BENCH_CREATE)) {
		m_start(&m, FP_SETFORKPARMS, 0);
		m_u16(&m, (*out)->fork);
		m_u16(&m, FILBIT_EXTDFLEN);
		m_u64(&m, 0);
		code = afp_do(c, &m, "truncate", path);
		if (code < 0) {
			struct msg cm;
			m_start(&cm, FP_CLOSEFORK, 0);
			m_u16(&cm, (*out)->fork);
			afp_msg(c, &cm, "close", path);
			free((*out)->path);
			free(*out);
			*out = NULL;
			return code;
		}
	}
	return 0;
}

/* Pipelined FPReadExt/FPWriteExt: up to AFP_DEPTH requests of at most one quantum each. */
static ssize_t
transfer(struct bench_conn *c, struct bench_file *f, uint8_t *buf, size_t len, uint64_t off,
	 bool write)
{
	struct pending pend[AFP_DEPTH] = { 0 };
	const char *op = write ? "write" : "read";
	size_t chunk = c->quantum, next = 0, done_to = len;
	int inflight = 0, i, rc;
	bool eof = false;
	int err = 0;

	if (c->dead)
		return -c->dead_err;
	/* Whole MiBs keep the server's disk I/O aligned; the quantum bounds each request. */
	if (chunk > (1u << 20))
		chunk = (chunk / (1u << 20)) * (1u << 20);
	while ((next < len && !eof && !err) || inflight > 0) {
		while (next < len && !eof && !err && inflight < AFP_DEPTH) {
			size_t n = len - next < chunk ? len - next : chunk;
			uint8_t h[20];

			for (i = 0; pend[i].used; i++)
				;
			h[0] = write ? FP_WRITEEXT : FP_READEXT;
			h[1] = 0;
			put16(h + 2, f->fork);
			put64(h + 4, off + next);
			put64(h + 12, n);
			rc = write ? dsi_send(c, DSI_WRITE, h, 20, buf + next, n, 20)
				   : dsi_send(c, DSI_COMMAND, h, 20, NULL, 0, 0);
			if (rc < 0)
				return dsi_fail(c, -rc, op);
			pend[i] = (struct pending){ .used = true,
						    .id = (uint16_t)rc,
						    .dst = write ? NULL : buf + next,
						    .want = n,
						    .off = next };
			inflight++;
			next += n;
		}
		uint16_t id;
		int32_t code;
		uint32_t rlen;
		int slot = dsi_next_reply(c, pend, AFP_DEPTH, &id, &code, &rlen);

		if (slot < -1)
			return dsi_fail(c, -slot, op);
		if (slot == -1)
			continue; /* not ours (a tickle's echo) */
		pend[slot].used = false;
		inflight--;
		if (write) {
			if (code && !err)
				err = code;
			continue;
		}
		if (code == AFPERR_EOF || (code == 0 && rlen < pend[slot].want)) {
			/* Short: end of file (netatalk answers EOF with what it read). A short
			 * non-EOF read is re-asked for the rest by a later call of ours. */
			if (pend[slot].off + rlen < done_to)
				done_to = pend[slot].off + rlen;
			if (code == AFPERR_EOF)
				eof = true;
		} else if (code && !err) {
			err = code;
		}
	}
	if (err)
		return afpc_fail_code(c, err, op, f->path);
	return (ssize_t)(write ? len : done_to);
}

static ssize_t
afp_pread(struct bench_conn *c, struct bench_file *f, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	/* A short non-EOF answer is asked again for the rest; a short EOF one ends it. */
	while (got < len) {
		ssize_t n = transfer(c, f, (uint8_t *)buf + got, len - got, off + got, false);

		if (n < 0)
			return n;
		if (n == 0)
			break;
		got += (size_t)n; /* short: ask again; 0 bytes then means end of file */
	}
	return (ssize_t)got;
}

static ssize_t
afp_pwrite(struct bench_conn *c, struct bench_file *f, const void *buf, size_t len, uint64_t off)
{
	return transfer(c, f, (uint8_t *)(uintptr_t)buf, len, off, true);
}

static int
afp_flush(struct bench_conn *c, struct bench_file *f)
{
	struct msg m;

	m_start(&m, FP_FLUSHFORK, 0);
	m_u16(&m, f->fork);
	return afp_do(c, &m, "flush", f->path);
}

static int
afp_close(struct bench_conn *c, struct bench_file *f)
{
	struct msg m;
	int rc;

	if (!f)
		return 0;
	m_start(&m, FP_CLOSEFORK, 0);
	m_u16(&m, f->fork);
	rc = afp_do(c, &m, "close", f->path);
	free(f->path);
	free(f);
	return rc;
}

static int
afp_copy(struct bench_conn *c, const char *from, const char *to)
{
	char parent[1024], name[256];
	struct msg m;

	split(to, parent, sizeof(parent), name, sizeof(name));
	m_start(&m, FP_COPYFILE, 0);
	m_u16(&m, c->vid);
	m_u32(&m, ROOT_DID);
	m_u16(&m, c->vid);
	m_u32(&m, ROOT_DID);
	m_path(&m, c, from);
	m_path(&m, c, parent);
	m_utf8name(&m, name);
	return afp_do(c, &m, "server-side copy (FPCopyFile)", from);
}

const struct bench_driver bench_drv_afp = {
	.name = "afp",
	.scheme = "afp",
	.connect = afp_connect,
	.disconnect = afp_disconnect,
	.error = afp_error,
	.mkdir = afp_mkdir,
	.rmdir = afp_rmdir,
	.unlink = afp_unlink,
	.rename = afp_rename,
	.stat = afp_stat,
	.list = afp_list,
	.space = afp_space,
	.open = afp_open,
	.pread = afp_pread,
	.pwrite = afp_pwrite,
	.flush = afp_flush,
	.close = afp_close,
	.copy = afp_copy,
	.copy_method = "FPCopyFile",
	.concurrent = true,
};
