/* agent_proto.c - framing, keys, the mutual HMAC handshake between controller and agent, and
 * the authenticated session after it. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent_proto.h"
#include "log.h"
#include "sigstop.h"
#include "xmalloc.h"

#define LABEL_CONTROLLER "nastune-agent-2 controller"
#define LABEL_AGENT "nastune-agent-2 agent"
#define INFO_TO_AGENT "nastune-agent-2 controller to agent"
#define INFO_TO_CONTROLLER "nastune-agent-2 agent to controller"
#define LABEL_KNOCK "nastune-agent-2 knock"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

long
agent_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int
agent_wait_fd(int fd, short events, long deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		long left = deadline - agent_mono_ms();
		int r;

		/* The stop flag is looked at every slice, not only on EINTR: a signal that lands
		 * between two polls interrupts nothing. */
		if (sigstop_caught)
			return -EINTR;
		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)(left < AGENT_STOP_SLICE_MS ? left : AGENT_STOP_SLICE_MS));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0)
			return 0;
	}
}

/* Reads exactly len bytes before the deadline. */
static int
read_full(int fd, void *buf, size_t len, long deadline)
{
	size_t got = 0;
	int rc;

	while (got < len) {
		ssize_t n;

		if ((rc = agent_wait_fd(fd, POLLIN, deadline)) < 0)
			return rc;
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		got += (size_t)n;
	}
	return 0;
}

/* Writes all of buf: a peer that stops reading holds us AGENT_WRITE_MS at most, and a stop
 * request ends the wait. */
static int
write_full(int fd, const void *buf, size_t len)
{
	long deadline = agent_mono_ms() + AGENT_WRITE_MS;
	size_t put = 0;
	int rc;

	while (put < len) {
		ssize_t n;

		if ((rc = agent_wait_fd(fd, POLLOUT, deadline)) < 0)
			return rc;
		n = send(fd, (const char *)buf + put, len - put, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK) /* the key file */
			n = write(fd, (const char *)buf + put, len - put);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n < 0)
			return -errno;
		put += (size_t)n;
	}
	return 0;
}

int
agent_parse(const void *data, size_t len, json_t **msg, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *o, *v, *t;

	*msg = NULL;
	if (len > AGENT_MSG_MAX) {
		snprintf(err, errlen, "message of %zu bytes exceeds the limit of %u", len,
			 AGENT_MSG_MAX);
		return -EMSGSIZE;
	}
	/* Depth and size are bounded by jansson (2048 levels) and by len. */
	o = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o) {
		snprintf(err, errlen, "malformed message: %s at byte %d", jerr.text, jerr.position);
		return -EBADMSG;
	}
	v = json_object_get(o, "v");
	t = json_object_get(o, "type");
	if (!json_is_object(o) || !json_is_integer(v) || !json_is_string(t) ||
	    json_string_length(t) == 0 || json_string_length(t) > 32) {
		snprintf(err, errlen, "malformed message: not an object with \"v\" and \"type\"");
		json_decref(o);
		return -EBADMSG;
	}
	if (json_integer_value(v) != AGENT_PROTO_VERSION) {
		snprintf(err, errlen,
			 "protocol version %lld, this side speaks %d — run the same "
			 "nastune version on both",
			 (long long)json_integer_value(v), AGENT_PROTO_VERSION);
		json_decref(o);
		return -EPROTO;
	}
	*msg = o;
	return 0;
}

/* Reads one length-prefixed frame of 1..max bytes; *buf is the caller's to free. */
static int
recv_frame(int fd, int timeout_ms, size_t max, uint8_t **buf, size_t *len, char *err, size_t errlen)
{
	long deadline = agent_mono_ms() + timeout_ms;
	uint32_t nlen;
	int rc;

	*buf = NULL;
	if ((rc = read_full(fd, &nlen, sizeof(nlen), deadline)) < 0) {
		snprintf(err, errlen, "%s",
			 rc == -ECONNRESET  ? "connection closed by the peer"
			 : rc == -ETIMEDOUT ? "no message from the peer in time"
			 : rc == -EINTR	    ? "interrupted"
					    : strerror(-rc));
		return rc;
	}
	*len = ntohl(nlen);
	if (*len > max || *len == 0) {
		snprintf(err, errlen, "message length %zu is outside 1..%zu", *len, max);
		return -EMSGSIZE;
	}
	*buf = xmalloc(*len);
	if ((rc = read_full(fd, *buf, *len, deadline)) < 0) {
		snprintf(err, errlen, "%s",
			 rc == -ECONNRESET  ? "connection closed mid-message"
			 : rc == -ETIMEDOUT ? "message not complete in time"
					    : strerror(-rc));
		free(*buf);
		*buf = NULL;
		return rc;
	}
	return 0;
}

/* One message of at most max bytes. */
static int
recv_msg(int fd, int timeout_ms, size_t max, json_t **msg, char *err, size_t errlen)
{
	uint8_t *buf;
	size_t len;
	int rc;

	*msg = NULL;
	if ((rc = recv_frame(fd, timeout_ms, max, &buf, &len, err, errlen)) < 0)
		return rc;
	rc = agent_parse(buf, len, msg, err, errlen);
	free(buf);
	return rc;
}

int
agent_recv(int fd, int timeout_ms, json_t **msg, char *err, size_t errlen)
{
	return recv_msg(fd, timeout_ms, AGENT_MSG_MAX, msg, err, errlen);
}

int
agent_send(int fd, json_t *msg)
{
	uint32_t nlen;
	char *s;
	size_t len;
	int rc;

	json_object_set_new(msg, "v", json_integer(AGENT_PROTO_VERSION));
	s = json_dumps(msg, JSON_COMPACT);
	if (!s)
		return -ENOMEM;
	len = strlen(s);
	if (len > AGENT_MSG_MAX) {
		free(s);
		return -EMSGSIZE;
	}
	nlen = htonl((uint32_t)len);
	rc = write_full(fd, &nlen, sizeof(nlen));
	if (rc == 0)
		rc = write_full(fd, s, len);
	free(s);
	return rc;
}

const char *
agent_type(json_t *msg)
{
	const char *t = json_string_value(json_object_get(msg, "type"));

	return t ? t : "";
}

/* ---- keys ---- */

static void
hex(const uint8_t *in, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = d[in[i] >> 4];
		out[2 * i + 1] = d[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static int
unhex(const char *s, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned v;

		/* Hex digits only: %2x alone also takes " f", "+f" and "-f". */
		if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]) ||
		    sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

int
agent_key_load(const char *path, uint8_t key[AGENT_KEY_LEN], char *err, size_t errlen)
{
	char buf[2 * AGENT_KEY_LEN + 8] = "";
	struct stat sb;
	ssize_t n;
	size_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: %s%s", path, strerror(e),
			 e == ENOENT ? " — create one with `nastune pair` on the NAS" : "");
		return -e;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	/* Whoever owns the file can replace the key (and so talk to our agents, or be one). */
	if (sb.st_uid != geteuid()) {
		snprintf(err, errlen,
			 "%s: owned by uid %u, not by this user (uid %u), who could "
			 "replace the key — chown %u %s",
			 path, (unsigned)sb.st_uid, (unsigned)geteuid(), (unsigned)geteuid(), path);
		close(fd);
		return -EPERM;
	}
	if (sb.st_mode & 077) {
		snprintf(err, errlen, "%s: readable by others (mode %03o) — chmod 600 %s", path,
			 (unsigned)(sb.st_mode & 0777), path);
		close(fd);
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	len = n > 0 ? (size_t)n : 0;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
		len--;
	buf[len] = '\0';
	if (len != 2 * AGENT_KEY_LEN || unhex(buf, key, AGENT_KEY_LEN) < 0) {
		snprintf(err, errlen, "%s: expected %d hex digits (a key from `nastune pair`)",
			 path, 2 * AGENT_KEY_LEN);
		OPENSSL_cleanse(buf, sizeof(buf));
		return -EINVAL;
	}
	OPENSSL_cleanse(buf, sizeof(buf));
	return 0;
}

int
agent_key_create(const char *path, bool force, uint8_t key[AGENT_KEY_LEN], char *err, size_t errlen)
{
	char text[2 * AGENT_KEY_LEN + 2], *tmp;
	int fd, rc = 0;

	if (!force && access(path, F_OK) == 0) {
		snprintf(err, errlen,
			 "%s exists — agents started with it would stop working; use "
			 "--force to replace it",
			 path);
		return -EEXIST;
	}
	if (RAND_bytes(key, AGENT_KEY_LEN) != 1)
		fatalx("no randomness for a key");
	hex(key, AGENT_KEY_LEN, text);
	strcat(text, "\n");
	tmp = xasprintf("%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
		free(tmp);
		return rc;
	}
	if (fchmod(fd, 0600) < 0 || write_full(fd, text, strlen(text)) < 0 || fsync(fd) < 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		unlink(tmp);
	}
	OPENSSL_cleanse(text, sizeof(text));
	free(tmp);
	return rc;
}

void
agent_key_id(const uint8_t key[AGENT_KEY_LEN], char out[17])
{
	uint8_t md[32];
	unsigned int n = sizeof(md);

	EVP_Digest(key, AGENT_KEY_LEN, md, &n, EVP_sha256(), NULL);
	hex(md, 8, out);
}

void
agent_nonce(char out[2 * AGENT_NONCE_LEN + 1])
{
	uint8_t n[AGENT_NONCE_LEN];

	if (RAND_bytes(n, sizeof(n)) != 1)
		fatalx("no randomness for a nonce");
	hex(n, sizeof(n), out);
}

void
agent_mac(const uint8_t key[AGENT_KEY_LEN], const char *label, const char *a, const char *b,
	  char out[65])
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	size_t la = strlen(label), lx = strlen(a), ly = strlen(b);
	char *msg = xmalloc(la + lx + ly + 3);

	/* Separators keep (a, b) pairs unambiguous. */
	memcpy(msg, label, la);
	msg[la] = '\n';
	memcpy(msg + la + 1, a, lx);
	msg[la + 1 + lx] = '\n';
	memcpy(msg + la + 2 + lx, b, ly);
	if (!HMAC(EVP_sha256(), key, AGENT_KEY_LEN, (const uint8_t *)msg, la + lx + ly + 2, md, &n))
		fatalx("HMAC-SHA256 failed");
	free(msg);
	hex(md, 32, out);
}

bool
agent_mac_equal(const char *a, const char *b)
{
	if (!a || !b || strlen(a) != 64 || strlen(b) != 64)
		return false;
	return CRYPTO_memcmp(a, b, 64) == 0;
}

static bool
valid_nonce(const char *s)
{
	size_t i;

	if (!s || strlen(s) != 2 * AGENT_NONCE_LEN)
		return false;
	for (i = 0; s[i]; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

/* ---- addresses ---- */

/* Parses a numeric address (IPv6 possibly in brackets or with a %scope) into 16 bytes,
 * IPv4 as IPv4-mapped IPv6. */
static bool
addr_bytes(const char *s, uint8_t out[16])
{
	char buf[AGENT_ADDR_MAX];
	struct in_addr v4;
	size_t n;

	if (!s)
		return false;
	if (*s == '[')
		s++;
	n = strcspn(s, "]%");
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, &v4) == 1) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &v4, 4);
		return true;
	}
	return inet_pton(AF_INET6, buf, out) == 1;
}

bool
agent_addr_equal(const char *a, const char *b)
{
	uint8_t x[16], y[16];

	return addr_bytes(a, x) && addr_bytes(b, y) && memcmp(x, y, 16) == 0;
}

void
agent_addr_bucket(const char *addr, char *out, size_t len)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char text[INET6_ADDRSTRLEN];
	uint8_t b[16];

	if (!addr_bytes(addr, b)) {
		snprintf(out, len, "%s", addr ? addr : "");
		return;
	}
	if (memcmp(b, mapped, sizeof(mapped)) == 0) {
		inet_ntop(AF_INET, b + 12, text, sizeof(text));
		snprintf(out, len, "%s", text);
		return;
	}
	memset(b + 8, 0, 8);
	inet_ntop(AF_INET6, b, text, sizeof(text));
	snprintf(out, len, "%s/64", text);
}

/* ---- session ---- */

static void
hkdf(const uint8_t key[AGENT_KEY_LEN], const uint8_t *salt, size_t saltlen, const char *info,
     uint8_t out[AGENT_MAC_LEN])
{
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	size_t outlen = AGENT_MAC_LEN;

	if (!pc || EVP_PKEY_derive_init(pc) <= 0 ||
	    EVP_PKEY_CTX_set_hkdf_md(pc, EVP_sha256()) <= 0 ||
	    EVP_PKEY_CTX_set1_hkdf_salt(pc, salt, (int)saltlen) <= 0 ||
	    EVP_PKEY_CTX_set1_hkdf_key(pc, key, AGENT_KEY_LEN) <= 0 ||
	    EVP_PKEY_CTX_add1_hkdf_info(pc, (const unsigned char *)info, (int)strlen(info)) <= 0 ||
	    EVP_PKEY_derive(pc, out, &outlen) <= 0 || outlen != AGENT_MAC_LEN)
		fatalx("HKDF-SHA256 failed");
	EVP_PKEY_CTX_free(pc);
}

void
agent_session_init(struct agent_session *s, int fd, const uint8_t key[AGENT_KEY_LEN],
		   const char *na, const char *nc, bool controller)
{
	uint8_t salt[2 * AGENT_NONCE_LEN], to_agent[AGENT_MAC_LEN], to_ctrl[AGENT_MAC_LEN];

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	/* Nonces were checked as 64 hex digits by the handshake; the fuzzer passes its own. */
	if (unhex(na, salt, AGENT_NONCE_LEN) < 0 ||
	    unhex(nc, salt + AGENT_NONCE_LEN, AGENT_NONCE_LEN) < 0)
		fatalx("agent session: nonces are not hex");
	hkdf(key, salt, sizeof(salt), INFO_TO_AGENT, to_agent);
	hkdf(key, salt, sizeof(salt), INFO_TO_CONTROLLER, to_ctrl);
	memcpy(s->k_send, controller ? to_agent : to_ctrl, AGENT_MAC_LEN);
	memcpy(s->k_recv, controller ? to_ctrl : to_agent, AGENT_MAC_LEN);
	OPENSSL_cleanse(to_agent, sizeof(to_agent));
	OPENSSL_cleanse(to_ctrl, sizeof(to_ctrl));
}

void
agent_session_clear(struct agent_session *s)
{
	OPENSSL_cleanse(s, sizeof(*s));
	s->fd = -1;
	s->dead = true;
}

static void
put_be64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t
get_be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void
frame_mac(const uint8_t key[AGENT_MAC_LEN], const uint8_t *data, size_t len,
	  uint8_t out[AGENT_MAC_LEN])
{
	unsigned int n = 0;

	if (!HMAC(EVP_sha256(), key, AGENT_MAC_LEN, data, len, out, &n) || n != AGENT_MAC_LEN)
		fatalx("HMAC-SHA256 failed");
}

uint8_t *
agent_session_seal(struct agent_session *s, json_t *msg, size_t *len)
{
	size_t jlen, body;
	uint8_t *f;
	char *j;

	/* The last number is never used: after it the count would wrap to 0 and the
	 * connection's first frames would pass again as replays. */
	if (s->seq_send == UINT64_MAX)
		return NULL;
	json_object_set_new(msg, "v", json_integer(AGENT_PROTO_VERSION));
	j = json_dumps(msg, JSON_COMPACT);
	if (!j)
		return NULL;
	jlen = strlen(j);
	body = AGENT_SEQ_LEN + jlen + AGENT_MAC_LEN;
	if (body > AGENT_MSG_MAX) {
		free(j);
		return NULL;
	}
	f = xmalloc(4 + body);
	f[0] = (uint8_t)(body >> 24);
	f[1] = (uint8_t)(body >> 16);
	f[2] = (uint8_t)(body >> 8);
	f[3] = (uint8_t)body;
	put_be64(f + 4, s->seq_send++);
	memcpy(f + 4 + AGENT_SEQ_LEN, j, jlen);
	frame_mac(s->k_send, f + 4, AGENT_SEQ_LEN + jlen, f + 4 + AGENT_SEQ_LEN + jlen);
	free(j);
	*len = 4 + body;
	return f;
}

int
agent_session_open(struct agent_session *s, const uint8_t *body, size_t len, json_t **msg,
		   char *err, size_t errlen)
{
	uint8_t want[AGENT_MAC_LEN];
	uint64_t seq;

	*msg = NULL;
	if (s->dead) {
		snprintf(err, errlen,
			 "an earlier message on this connection was refused; nothing "
			 "more is trusted on it");
		return -EBADMSG;
	}
	if (len < AGENT_SEQ_LEN + AGENT_MAC_LEN + 2) {
		s->dead = true;
		snprintf(err, errlen, "message of %zu bytes is too short to be authenticated", len);
		return -EBADMSG;
	}
	seq = get_be64(body);
	frame_mac(s->k_recv, body, len - AGENT_MAC_LEN, want);
	if (CRYPTO_memcmp(want, body + len - AGENT_MAC_LEN, AGENT_MAC_LEN) != 0) {
		s->dead = true;
		snprintf(err, errlen,
			 "message %llu failed authentication (altered in flight, or "
			 "not from this session's peer); refused",
			 (unsigned long long)seq);
		return -EBADMSG;
	}
	/* Authentic but out of place: sent earlier on this connection and replayed, or
	 * reordered (TCP itself never reorders). */
	if (seq != s->seq_recv || seq == UINT64_MAX) {
		s->dead = true;
		snprintf(err, errlen,
			 "message with sequence number %llu where %llu was due "
			 "(replayed or reordered); refused",
			 (unsigned long long)seq, (unsigned long long)s->seq_recv);
		return -EBADMSG;
	}
	s->seq_recv++;
	return agent_parse(body + AGENT_SEQ_LEN, len - AGENT_SEQ_LEN - AGENT_MAC_LEN, msg, err,
			   errlen);
}

int
agent_session_send(struct agent_session *s, json_t *msg)
{
	size_t len;
	uint8_t *f = agent_session_seal(s, msg, &len);
	int rc;

	if (!f)
		return -EMSGSIZE;
	rc = write_full(s->fd, f, len);
	free(f);
	return rc;
}

int
agent_session_recv(struct agent_session *s, int timeout_ms, json_t **msg, char *err, size_t errlen)
{
	uint8_t *buf;
	size_t len;
	int rc;

	*msg = NULL;
	if ((rc = recv_frame(s->fd, timeout_ms, AGENT_MSG_MAX, &buf, &len, err, errlen)) < 0)
		return rc;
	rc = agent_session_open(s, buf, len, msg, err, errlen);
	free(buf);
	return rc;
}

/* ---- handshake ---- */

/* The controller's proof covers both nonces and the address it names: Nc "\n" A. */
static void
controller_mac(const uint8_t key[AGENT_KEY_LEN], const char *na, const char *nc, const char *nas,
	       char out[65])
{
	char *b = xasprintf("%s\n%s", nc, nas);

	agent_mac(key, LABEL_CONTROLLER, na, b, out);
	free(b);
}

static bool
valid_addr_text(const char *s)
{
	uint8_t b[16];

	return s && strlen(s) < AGENT_ADDR_MAX && addr_bytes(s, b);
}

int
agent_client_handshake(int fd, const uint8_t key[AGENT_KEY_LEN], const char *nas, int timeout_ms,
		       json_t **hello_out, struct agent_session *s, char *err, size_t errlen)
{
	char nc[2 * AGENT_NONCE_LEN + 1], mac[65], want[65], kid[17];
	json_t *hello = NULL, *reply = NULL;
	const char *na, *their_kid;
	int rc;

	if (hello_out)
		*hello_out = NULL;
	if ((rc = recv_msg(fd, timeout_ms, AGENT_HANDSHAKE_MAX, &hello, err, errlen)) < 0)
		return rc;
	na = json_string_value(json_object_get(hello, "nonce"));
	if (strcmp(agent_type(hello), "hello") != 0 || !valid_nonce(na)) {
		snprintf(err, errlen, "the peer did not start with a valid hello");
		rc = -EBADMSG;
		goto out;
	}
	agent_key_id(key, kid);
	their_kid = json_string_value(json_object_get(hello, "key_id"));
	if (their_kid && strcmp(their_kid, kid) != 0)
		log_debug("agent: key id %s, ours %s: expect a refusal", their_kid, kid);
	agent_nonce(nc);
	controller_mac(key, na, nc, nas, mac);
	{
		json_t *auth = json_pack("{s:s, s:s, s:s, s:s}", "type", "auth", "nonce", nc, "nas",
					 nas, "mac", mac);

		rc = agent_send(fd, auth);
		json_decref(auth);
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot send: %s", strerror(-rc));
		goto out;
	}
	if ((rc = recv_msg(fd, timeout_ms, AGENT_HANDSHAKE_MAX, &reply, err, errlen)) < 0)
		goto out;
	if (strcmp(agent_type(reply), "error") == 0) {
		const char *e = json_string_value(json_object_get(reply, "error"));

		snprintf(err, errlen,
			 "the agent refused us: %.200s (key id here %s, agent's %.16s)",
			 e ? e : "no reason given", kid, their_kid ? their_kid : "?");
		rc = -EACCES;
		goto out;
	}
	if (strcmp(agent_type(reply), "auth_ok") != 0) {
		snprintf(err, errlen,
			 "the agent sent \"%.32s\" instead of its proof — not "
			 "trusting it",
			 agent_type(reply));
		rc = -EACCES;
		goto out;
	}
	agent_mac(key, LABEL_AGENT, nc, na, want);
	if (!agent_mac_equal(json_string_value(json_object_get(reply, "mac")), want)) {
		snprintf(err, errlen,
			 "the agent does not hold our key (its proof is wrong) — not "
			 "trusting it");
		rc = -EACCES;
		goto out;
	}
	agent_session_init(s, fd, key, na, nc, true);
	rc = 0;
	if (hello_out) {
		*hello_out = hello;
		hello = NULL;
	}
out:
	json_decref(hello);
	json_decref(reply);
	return rc;
}

int
agent_send_knock(int fd, const uint8_t key[AGENT_KEY_LEN])
{
	char nk[2 * AGENT_NONCE_LEN + 1], mac[65];
	json_t *m;
	int rc;

	agent_nonce(nk);
	agent_mac(key, LABEL_KNOCK, nk, "", mac);
	m = json_pack("{s:s, s:s, s:s}", "type", "knock", "nonce", nk, "mac", mac);
	rc = agent_send(fd, m);
	json_decref(m);
	return rc;
}

bool
agent_knock_ok(const uint8_t key[AGENT_KEY_LEN], json_t *msg, char nonce[2 * AGENT_NONCE_LEN + 1])
{
	const char *nk = json_string_value(json_object_get(msg, "nonce"));
	char want[65];

	if (strcmp(agent_type(msg), "knock") != 0 || !valid_nonce(nk))
		return false;
	agent_mac(key, LABEL_KNOCK, nk, "", want);
	if (!agent_mac_equal(json_string_value(json_object_get(msg, "mac")), want))
		return false;
	snprintf(nonce, 2 * AGENT_NONCE_LEN + 1, "%s", nk);
	return true;
}

static void
refuse(int fd, const char *why)
{
	json_t *m = json_pack("{s:s, s:s}", "type", "error", "error", why);

	agent_send(fd, m);
	json_decref(m);
}

int
agent_server_handshake(int fd, const uint8_t key[AGENT_KEY_LEN], int timeout_ms,
		       const char *agent_version, const char *peer, struct agent_session *s,
		       char nas_out[AGENT_ADDR_MAX], char *err, size_t errlen)
{
	char na[2 * AGENT_NONCE_LEN + 1], kid[17], want[65] = "", mac[65];
	long t0 = agent_mono_ms();
	json_t *msg = NULL, *m;
	const char *nc, *nas, *type;
	int rc;

	agent_nonce(na);
	agent_key_id(key, kid);
	m = json_pack("{s:s, s:s, s:s, s:s}", "type", "hello", "nonce", na, "key_id", kid,
		      "version", agent_version);
	rc = agent_send(fd, m);
	json_decref(m);
	if (rc < 0) {
		snprintf(err, errlen, "cannot send hello: %s", strerror(-rc));
		return rc;
	}
	if ((rc = recv_msg(fd, timeout_ms, AGENT_HANDSHAKE_MAX, &msg, err, errlen)) < 0)
		return rc;
	/* A knock from a controller that found us full before: auth follows it. */
	if (strcmp(agent_type(msg), "knock") == 0) {
		long left = t0 + timeout_ms - agent_mono_ms();

		json_decref(msg);
		if ((rc = recv_msg(fd, left > 0 ? (int)left : 0, AGENT_HANDSHAKE_MAX, &msg, err,
				   errlen)) < 0)
			return rc;
	}
	type = agent_type(msg);
	nc = json_string_value(json_object_get(msg, "nonce"));
	nas = json_string_value(json_object_get(msg, "nas"));
	if (strcmp(type, "auth") != 0) {
		snprintf(err, errlen, "a \"%.32s\" message before authentication", type);
		goto refused;
	}
	if (valid_nonce(nc) && valid_addr_text(nas))
		controller_mac(key, na, nc, nas, want);
	if (!valid_nonce(nc) || strcmp(nc, na) == 0 || !valid_addr_text(nas) ||
	    !agent_mac_equal(json_string_value(json_object_get(msg, "mac")), want)) {
		snprintf(err, errlen,
			 "authentication failed: the controller does not hold this "
			 "agent's key (key id %s)",
			 kid);
		goto refused;
	}
	if (peer && !agent_addr_equal(peer, nas)) {
		/* It holds the key, but would send us to benchmark another host than itself. */
		snprintf(err, errlen,
			 "the controller connecting from %s names itself %s (a relay "
			 "or NAT between them?); jobs go only to the controller's own address",
			 peer, nas);
		refuse(fd, "refused: you connect from another address than you name");
		json_decref(msg);
		return -EACCES;
	}
	snprintf(nas_out, AGENT_ADDR_MAX, "%s", nas);
	agent_session_init(s, fd, key, na, nc, false);
	agent_mac(key, LABEL_AGENT, nc, na, mac);
	m = json_pack("{s:s, s:s}", "type", "auth_ok", "mac", mac);
	rc = agent_send(fd, m);
	json_decref(m);
	json_decref(msg);
	if (rc < 0)
		snprintf(err, errlen, "cannot send: %s", strerror(-rc));
	return rc;
refused:
	refuse(fd, "authentication failed");
	json_decref(msg);
	return -EACCES;
}
