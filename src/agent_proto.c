/* agent_proto.c - framing, keys and the mutual HMAC handshake between controller and agent. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent_proto.h"
#include "log.h"
#include "xmalloc.h"

#define LABEL_CONTROLLER "nastune-agent-1 controller"
#define LABEL_AGENT "nastune-agent-1 agent"

static long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Reads exactly len bytes before the deadline. */
static int
read_full(int fd, void *buf, size_t len, long deadline)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = deadline - mono_ms();
		ssize_t n;
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
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

static int
write_full(int fd, const void *buf, size_t len)
{
	size_t put = 0;

	while (put < len) {
		ssize_t n = write(fd, (const char *)buf + put, len - put);

		if (n < 0 && errno == EINTR)
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
		snprintf(err, errlen, "protocol version %lld, this side speaks %d — run the same "
			 "nastune version on both", (long long)json_integer_value(v),
			 AGENT_PROTO_VERSION);
		json_decref(o);
		return -EPROTO;
	}
	*msg = o;
	return 0;
}

int
agent_recv(int fd, int timeout_ms, json_t **msg, char *err, size_t errlen)
{
	long deadline = mono_ms() + timeout_ms;
	uint32_t nlen;
	size_t len;
	char *buf;
	int rc;

	*msg = NULL;
	if ((rc = read_full(fd, &nlen, sizeof(nlen), deadline)) < 0) {
		snprintf(err, errlen, "%s", rc == -ECONNRESET ? "connection closed by the peer" :
			 rc == -ETIMEDOUT ? "no message from the peer in time" : strerror(-rc));
		return rc;
	}
	len = ntohl(nlen);
	if (len > AGENT_MSG_MAX || len == 0) {
		snprintf(err, errlen, "message length %zu is outside 1..%u", len, AGENT_MSG_MAX);
		return -EMSGSIZE;
	}
	buf = xmalloc(len);
	if ((rc = read_full(fd, buf, len, deadline)) < 0) {
		snprintf(err, errlen, "%s", rc == -ECONNRESET ? "connection closed mid-message" :
			 rc == -ETIMEDOUT ? "message not complete in time" : strerror(-rc));
		free(buf);
		return rc;
	}
	rc = agent_parse(buf, len, msg, err, errlen);
	free(buf);
	return rc;
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

		if (sscanf(s + 2 * i, "%2x", &v) != 1 || !s[2 * i + 1])
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
		snprintf(err, errlen, "%s: expected %d hex digits (a key from `nastune pair`)", path,
			 2 * AGENT_KEY_LEN);
		OPENSSL_cleanse(buf, sizeof(buf));
		return -EINVAL;
	}
	OPENSSL_cleanse(buf, sizeof(buf));
	return 0;
}

int
agent_key_create(const char *path, bool force, uint8_t key[AGENT_KEY_LEN], char *err,
		 size_t errlen)
{
	char text[2 * AGENT_KEY_LEN + 2], *tmp;
	int fd, rc = 0;

	if (!force && access(path, F_OK) == 0) {
		snprintf(err, errlen, "%s exists — agents started with it would stop working; use "
			 "--force to replace it", path);
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
	if (!HMAC(EVP_sha256(), key, AGENT_KEY_LEN, (const uint8_t *)msg, la + lx + ly + 2, md,
		  &n))
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

/* ---- handshake ---- */

int
agent_client_handshake(int fd, const uint8_t key[AGENT_KEY_LEN], int timeout_ms,
		       json_t **hello_out, char *err, size_t errlen)
{
	char nc[2 * AGENT_NONCE_LEN + 1], mac[65], want[65], kid[17];
	json_t *hello = NULL, *reply = NULL;
	const char *na, *their_kid;
	int rc;

	if (hello_out)
		*hello_out = NULL;
	if ((rc = agent_recv(fd, timeout_ms, &hello, err, errlen)) < 0)
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
	agent_mac(key, LABEL_CONTROLLER, na, nc, mac);
	{
		json_t *auth = json_pack("{s:s, s:s, s:s}", "type", "auth", "nonce", nc, "mac", mac);

		rc = agent_send(fd, auth);
		json_decref(auth);
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot send: %s", strerror(-rc));
		goto out;
	}
	if ((rc = agent_recv(fd, timeout_ms, &reply, err, errlen)) < 0)
		goto out;
	if (strcmp(agent_type(reply), "auth_ok") != 0) {
		const char *e = json_string_value(json_object_get(reply, "error"));

		snprintf(err, errlen, "the agent refused us: %s (key id here %s, agent's %s)",
			 e ? e : agent_type(reply), kid, their_kid ? their_kid : "?");
		rc = -EACCES;
		goto out;
	}
	agent_mac(key, LABEL_AGENT, nc, na, want);
	if (!agent_mac_equal(json_string_value(json_object_get(reply, "mac")), want)) {
		snprintf(err, errlen, "the agent does not hold our key (its proof is wrong) — not "
			 "trusting it");
		rc = -EACCES;
		goto out;
	}
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
agent_server_handshake(int fd, const uint8_t key[AGENT_KEY_LEN], int timeout_ms,
		       const char *agent_version, char *err, size_t errlen)
{
	char na[2 * AGENT_NONCE_LEN + 1], kid[17], want[65], mac[65];
	json_t *msg = NULL, *m;
	const char *nc;
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
	if ((rc = agent_recv(fd, timeout_ms, &msg, err, errlen)) < 0)
		return rc;
	nc = json_string_value(json_object_get(msg, "nonce"));
	agent_mac(key, LABEL_CONTROLLER, na, nc ? nc : "", want);
	if (strcmp(agent_type(msg), "auth") != 0 || !valid_nonce(nc) || strcmp(nc, na) == 0 ||
	    !agent_mac_equal(json_string_value(json_object_get(msg, "mac")), want)) {
		snprintf(err, errlen, strcmp(agent_type(msg), "auth") != 0 ?
			 "a \"%s\" message before authentication" :
			 "authentication failed: the controller does not hold this agent's key "
			 "(key id %s)", strcmp(agent_type(msg), "auth") != 0 ? agent_type(msg) : kid);
		m = json_pack("{s:s, s:s}", "type", "error", "error", "authentication failed");
		agent_send(fd, m);
		json_decref(m);
		json_decref(msg);
		return -EACCES;
	}
	agent_mac(key, LABEL_AGENT, nc, na, mac);
	m = json_pack("{s:s, s:s}", "type", "auth_ok", "mac", mac);
	rc = agent_send(fd, m);
	json_decref(m);
	json_decref(msg);
	if (rc < 0)
		snprintf(err, errlen, "cannot send: %s", strerror(-rc));
	return rc;
}
