/* test_agent_proto.c - framing bounds, parse errors, keys, the mutual handshake over a
 * socketpair with the right key, a wrong key, a replayed proof and a peer that skips it, and
 * the authenticated session after it: altered, replayed, reflected and cross-session frames
 * refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_proto.h"

static void
test_parse(void **state)
{
	char err[256];
	json_t *m;

	(void)state;
	assert_int_equal(agent_parse("{\"v\":2,\"type\":\"hello\"}", 22, &m, err, sizeof(err)), 0);
	assert_string_equal(agent_type(m), "hello");
	json_decref(m);
	assert_int_equal(agent_parse("{\"v\":2,", 7, &m, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "malformed"));
	assert_int_equal(agent_parse("[1,2]", 5, &m, err, sizeof(err)), -EBADMSG);
	assert_int_equal(agent_parse("{\"type\":\"x\"}", 12, &m, err, sizeof(err)), -EBADMSG);
	assert_int_equal(agent_parse("{\"v\":2,\"type\":\"\"}", 17, &m, err, sizeof(err)),
			 -EBADMSG);
	assert_int_equal(
		agent_parse("{\"v\":2,\"type\":\"a\",\"type\":\"b\"}", 29, &m, err, sizeof(err)),
		-EBADMSG);
	/* Version 1 had no authenticated session: refused, naming both versions. */
	assert_int_equal(agent_parse("{\"v\":1,\"type\":\"hello\"}", 22, &m, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "version 1"));
	assert_null(m);
}

static void
test_framing(void **state)
{
	char err[256];
	json_t *m, *in;
	uint32_t big = htonl(AGENT_MSG_MAX + 1), zero = 0;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	in = json_pack("{s:s, s:i}", "type", "job", "id", 7);
	assert_int_equal(agent_send(sv[0], in), 0);
	json_decref(in);
	assert_int_equal(agent_recv(sv[1], 1000, &m, err, sizeof(err)), 0);
	assert_string_equal(agent_type(m), "job");
	assert_int_equal(json_integer_value(json_object_get(m, "id")), 7);
	json_decref(m);

	/* An oversized length is refused before anything is allocated or read. */
	assert_int_equal(write(sv[0], &big, 4), 4);
	assert_int_equal(agent_recv(sv[1], 1000, &m, err, sizeof(err)), -EMSGSIZE);
	assert_int_equal(write(sv[0], &zero, 4), 4);
	assert_int_equal(agent_recv(sv[1], 1000, &m, err, sizeof(err)), -EMSGSIZE);
	/* A length with too few bytes behind it times out, bounded. */
	big = htonl(100);
	assert_int_equal(write(sv[0], &big, 4), 4);
	assert_int_equal(write(sv[0], "{\"v\":1", 6), 6);
	assert_int_equal(agent_recv(sv[1], 200, &m, err, sizeof(err)), -ETIMEDOUT);
	close(sv[0]);
	assert_int_equal(agent_recv(sv[1], 1000, &m, err, sizeof(err)), -ECONNRESET);
	close(sv[1]);
}

static void
test_keys(void **state)
{
	char dir[] = "/tmp/nastune-key.XXXXXX", path[64], err[256], id1[17], id2[17];
	uint8_t k1[AGENT_KEY_LEN], k2[AGENT_KEY_LEN];
	struct stat sb;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/agent.key", dir);
	assert_int_equal(agent_key_create(path, false, k1, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(agent_key_create(path, false, k2, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "--force"));
	assert_int_equal(agent_key_load(path, k2, err, sizeof(err)), 0);
	assert_memory_equal(k1, k2, AGENT_KEY_LEN);
	agent_key_id(k1, id1);
	assert_int_equal(strlen(id1), 16);
	assert_int_equal(agent_key_create(path, true, k2, err, sizeof(err)), 0);
	agent_key_id(k2, id2);
	assert_string_not_equal(id1, id2);
	chmod(path, 0644);
	assert_int_equal(agent_key_load(path, k2, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "chmod 600"));
	chmod(path, 0600);
	/* Another user's file, even 0600: that user could replace the key. */
	if (geteuid() == 0 && chown(path, 4242, 4242) == 0) {
		assert_int_equal(agent_key_load(path, k2, err, sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "owned by uid 4242"));
	}
	/* 64 characters that are not all hex digits (sscanf's %2x alone takes "+f" and " f"). */
	{
		FILE *fp;

		unlink(path);
		fp = fopen(path, "w");
		assert_non_null(fp);
		fprintf(fp, "+f%062d\n", 0);
		fclose(fp);
		chmod(path, 0600);
		assert_int_equal(agent_key_load(path, k2, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "hex digits"));
	}
	unlink(path);
	assert_int_equal(agent_key_load(path, k2, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "nastune pair"));
	rmdir(dir);
}

static void
test_mac(void **state)
{
	uint8_t k[AGENT_KEY_LEN] = { 1, 2, 3 };
	char a[65], b[65], n1[65], n2[65];

	(void)state;
	agent_mac(k, "L", "x", "yz", a);
	agent_mac(k, "L", "xy", "z", b);
	assert_false(agent_mac_equal(a, b)); /* the separator keeps the pairs apart */
	agent_mac(k, "L", "x", "yz", b);
	assert_true(agent_mac_equal(a, b));
	assert_false(agent_mac_equal(a, "00"));
	assert_false(agent_mac_equal(NULL, b));
	agent_nonce(n1);
	agent_nonce(n2);
	assert_int_equal(strlen(n1), 64);
	assert_string_not_equal(n1, n2);
	/* Known value, computed independently (Python hmac): key 32 x 0x0b, "a\nb\nc". */
	memset(k, 0x0b, sizeof(k));
	agent_mac(k, "a", "b", "c", a);
	assert_string_equal(a, "18fa230747f141b5038072afcb984de438eada13132c43870b1cd47bb616e0f7");
}

struct srv_arg {
	int fd;
	uint8_t key[AGENT_KEY_LEN];
	int rc;
	char err[256];
	const char *peer;
	char nas[AGENT_ADDR_MAX];
	struct agent_session ss;
};

static void *
srv_thread(void *p)
{
	struct srv_arg *a = p;

	a->rc = agent_server_handshake(a->fd, a->key, 2000, "test", a->peer, &a->ss, a->nas, a->err,
				       sizeof(a->err));
	return NULL;
}

static int
handshake(const uint8_t *ckey, const uint8_t *skey, int *src, char *cerr, char *serr)
{
	struct srv_arg a = { 0 };
	struct agent_session cs;
	pthread_t t;
	json_t *hello = NULL;
	int sv[2], rc;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	a.fd = sv[1];
	memcpy(a.key, skey, AGENT_KEY_LEN);
	pthread_create(&t, NULL, srv_thread, &a);
	rc = agent_client_handshake(sv[0], ckey, "192.0.2.1", 2000, &hello, &cs, cerr, 256);
	pthread_join(t, NULL);
	if (rc == 0)
		assert_string_equal(json_string_value(json_object_get(hello, "version")), "test");
	json_decref(hello);
	close(sv[0]);
	close(sv[1]);
	*src = a.rc;
	strcpy(serr, a.err);
	return rc;
}

static void
test_handshake(void **state)
{
	uint8_t k1[AGENT_KEY_LEN], k2[AGENT_KEY_LEN];
	char cerr[256] = "", serr[256] = "";
	int src;

	(void)state;
	memset(k1, 0x11, sizeof(k1));
	memset(k2, 0x22, sizeof(k2));
	assert_int_equal(handshake(k1, k1, &src, cerr, serr), 0);
	assert_int_equal(src, 0);

	assert_int_equal(handshake(k2, k1, &src, cerr, serr), -EACCES);
	assert_int_equal(src, -EACCES);
	assert_non_null(strstr(serr, "does not hold this agent's key"));
	assert_non_null(strstr(cerr, "refused"));
}

/* Before the key is proven, a frame above AGENT_HANDSHAKE_MAX is refused from its length
 * alone, on both sides: no buffer of up to AGENT_MSG_MAX for a stranger, no wait for it. */
static void
test_handshake_bound(void **state)
{
	uint8_t k[AGENT_KEY_LEN];
	struct srv_arg a = { 0 };
	struct agent_session cs;
	uint32_t big = htonl(AGENT_HANDSHAKE_MAX + 1);
	char cerr[256] = "";
	pthread_t t;
	int sv[2];

	(void)state;
	memset(k, 0x11, sizeof(k));
	/* Agent side: the "auth" from the would-be controller announces 4097 bytes. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	a.fd = sv[1];
	memcpy(a.key, k, AGENT_KEY_LEN);
	pthread_create(&t, NULL, srv_thread, &a);
	assert_int_equal(write(sv[0], &big, 4), 4);
	pthread_join(t, NULL);
	assert_int_equal(a.rc, -EMSGSIZE);
	close(sv[0]);
	close(sv[1]);
	/* Controller side: a would-be agent (anyone can advertise one) announces a big hello. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], &big, 4), 4);
	assert_int_equal(
		agent_client_handshake(sv[0], k, "192.0.2.1", 2000, NULL, &cs, cerr, sizeof(cerr)),
		-EMSGSIZE);
	close(sv[0]);
	close(sv[1]);
}

/* A peer that asks for work before authenticating, or replays an old proof, gets nothing. */
static void
test_no_work_before_auth(void **state)
{
	struct srv_arg a = { 0 };
	char err[256];
	json_t *m, *hello;
	pthread_t t;
	int sv[2];

	(void)state;
	memset(a.key, 0x33, sizeof(a.key));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	a.fd = sv[1];
	pthread_create(&t, NULL, srv_thread, &a);
	assert_int_equal(agent_recv(sv[0], 2000, &hello, err, sizeof(err)), 0);
	m = json_pack("{s:s, s:s}", "type", "job", "workload", "seq-read");
	agent_send(sv[0], m);
	json_decref(m);
	pthread_join(t, NULL);
	assert_int_equal(a.rc, -EACCES);
	assert_non_null(strstr(a.err, "\"job\" message before authentication"));
	assert_int_equal(agent_recv(sv[0], 2000, &m, err, sizeof(err)), 0);
	assert_string_equal(agent_type(m), "error");
	json_decref(m);
	json_decref(hello);
	close(sv[0]);
	close(sv[1]);

	/* Replay: a MAC computed over another session's nonce. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	a.fd = sv[1];
	pthread_create(&t, NULL, srv_thread, &a);
	assert_int_equal(agent_recv(sv[0], 2000, &hello, err, sizeof(err)), 0);
	{
		char old[65], nc[65], mac[65];

		agent_nonce(old);
		agent_nonce(nc);
		char b[128];

		snprintf(b, sizeof(b), "%s\n127.0.0.1", nc);
		agent_mac(a.key, "nastune-agent-2 controller", old, b, mac);
		m = json_pack("{s:s, s:s, s:s, s:s}", "type", "auth", "nonce", nc, "nas",
			      "127.0.0.1", "mac", mac);
	}
	agent_send(sv[0], m);
	json_decref(m);
	pthread_join(t, NULL);
	assert_int_equal(a.rc, -EACCES);
	json_decref(hello);
	close(sv[0]);
	close(sv[1]);
}

/* A full handshake over a socketpair; returns both sessions. */
static void
pair_up(uint8_t key, const char *peer, const char *nas, int *crc, struct srv_arg *a,
	struct agent_session *cs, int sv[2])
{
	uint8_t k[AGENT_KEY_LEN];
	char cerr[256];
	pthread_t t;

	memset(k, key, sizeof(k));
	memset(a, 0, sizeof(*a));
	memcpy(a->key, k, sizeof(k));
	a->peer = peer;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	a->fd = sv[1];
	pthread_create(&t, NULL, srv_thread, a);
	*crc = agent_client_handshake(sv[0], k, nas, 2000, NULL, cs, cerr, sizeof(cerr));
	pthread_join(t, NULL);
}

static json_t *
recv_ok(struct agent_session *s)
{
	char err[256];
	json_t *m = NULL;

	assert_int_equal(agent_session_recv(s, 1000, &m, err, sizeof(err)), 0);
	return m;
}

static void
test_session(void **state)
{
	struct srv_arg a;
	struct agent_session cs, old;
	uint8_t *f, *g;
	size_t len, glen;
	char err[256];
	json_t *m;
	int sv[2], crc;

	(void)state;
	pair_up(0x44, NULL, "192.0.2.7", &crc, &a, &cs, sv);
	assert_int_equal(crc, 0);
	assert_int_equal(a.rc, 0);
	assert_string_equal(a.nas, "192.0.2.7");

	/* Both directions work, in order. */
	m = json_pack("{s:s, s:i}", "type", "job", "id", 1);
	assert_int_equal(agent_session_send(&cs, m), 0);
	json_decref(m);
	m = recv_ok(&a.ss);
	assert_string_equal(agent_type(m), "job");
	json_decref(m);
	m = json_pack("{s:s}", "type", "result");
	assert_int_equal(agent_session_send(&a.ss, m), 0);
	json_decref(m);
	m = recv_ok(&cs);
	assert_string_equal(agent_type(m), "result");
	json_decref(m);

	/* A replayed frame: authentic, but its sequence number is spent. */
	m = json_pack("{s:s, s:i}", "type", "job", "id", 2);
	f = agent_session_seal(&cs, m, &len);
	json_decref(m);
	assert_int_equal(write(sv[0], f, len), (ssize_t)len);
	m = recv_ok(&a.ss);
	json_decref(m);
	assert_int_equal(write(sv[0], f, len), (ssize_t)len);
	assert_int_equal(agent_session_recv(&a.ss, 1000, &m, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "replayed or reordered"));
	/* ... and the session is dead even for a good frame after it. */
	m = json_pack("{s:s}", "type", "facts");
	assert_int_equal(agent_session_send(&cs, m), 0);
	json_decref(m);
	assert_int_equal(agent_session_recv(&a.ss, 1000, &m, err, sizeof(err)), -EBADMSG);
	free(f);
	old = cs;
	close(sv[0]);
	close(sv[1]);

	/* A flipped byte anywhere (sequence, JSON, MAC) fails the MAC. */
	for (size_t at = 4; at < 200; at += 7) {
		pair_up(0x44, NULL, "192.0.2.7", &crc, &a, &cs, sv);
		m = json_pack("{s:s, s:s}", "type", "job", "target", "smb://192.0.2.7/Data");
		f = agent_session_seal(&cs, m, &len);
		json_decref(m);
		if (at >= len) {
			free(f);
			close(sv[0]);
			close(sv[1]);
			break;
		}
		f[at] ^= 0x20;
		assert_int_equal(write(sv[0], f, len), (ssize_t)len);
		assert_int_not_equal(agent_session_recv(&a.ss, 1000, &m, err, sizeof(err)), 0);
		assert_null(m);
		free(f);
		close(sv[0]);
		close(sv[1]);
	}

	/* A frame of an earlier session, at the right sequence number: other keys. */
	pair_up(0x44, NULL, "192.0.2.7", &crc, &a, &cs, sv);
	m = json_pack("{s:s}", "type", "job");
	old.seq_send = 0;
	g = agent_session_seal(&old, m, &glen);
	json_decref(m);
	assert_int_equal(write(sv[0], g, glen), (ssize_t)glen);
	assert_int_equal(agent_session_recv(&a.ss, 1000, &m, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "failed authentication"));
	free(g);
	close(sv[0]);
	close(sv[1]);

	/* Sequence numbers never wrap: a frame numbered 0 again would be a replay. */
	pair_up(0x44, NULL, "192.0.2.7", &crc, &a, &cs, sv);
	cs.seq_send = UINT64_MAX;
	m = json_pack("{s:s}", "type", "facts");
	assert_null(agent_session_seal(&cs, m, &len));
	json_decref(m);
	assert_true(cs.seq_send == UINT64_MAX);
	close(sv[0]);
	close(sv[1]);

	/* Reflection: the agent's own frame sent back to it fails (keys per direction). */
	pair_up(0x44, NULL, "192.0.2.7", &crc, &a, &cs, sv);
	m = json_pack("{s:s}", "type", "progress");
	f = agent_session_seal(&a.ss, m, &len);
	json_decref(m);
	assert_int_equal(write(sv[0], f, len), (ssize_t)len);
	assert_int_equal(agent_session_recv(&a.ss, 1000, &m, err, sizeof(err)), -EBADMSG);
	free(f);
	close(sv[0]);
	close(sv[1]);
}

/* The controller names its address; the agent takes it only from that address. */
static void
test_nas_address(void **state)
{
	struct srv_arg a;
	struct agent_session cs;
	int sv[2], crc;

	(void)state;
	pair_up(0x55, "198.18.0.1", "198.18.0.1", &crc, &a, &cs, sv);
	assert_int_equal(crc, 0);
	assert_int_equal(a.rc, 0);
	close(sv[0]);
	close(sv[1]);
	pair_up(0x55, "::ffff:198.18.0.1", "198.18.0.1", &crc, &a, &cs, sv);
	assert_int_equal(a.rc, 0);
	close(sv[0]);
	close(sv[1]);
	pair_up(0x55, "198.18.0.9", "198.18.0.1", &crc, &a, &cs, sv);
	assert_int_equal(a.rc, -EACCES);
	assert_int_equal(crc, -EACCES);
	assert_non_null(strstr(a.err, "names itself 198.18.0.1"));
	close(sv[0]);
	close(sv[1]);
	assert_true(agent_addr_equal("fe80::1%lab0", "[fe80::1]"));
	assert_false(agent_addr_equal("nas.local", "nas.local"));
	assert_false(agent_addr_equal("10.0.0.1", "10.0.0.2"));
}

/* Unauthenticated connections are bounded per peer: one machine's IPv6 addresses (its /64)
 * are one peer, and IPv4 counts alike plain or mapped. */
static void
test_addr_bucket(void **state)
{
	char a[64], b[64];

	(void)state;
	agent_addr_bucket("2001:db8:1:2::1", a, sizeof(a));
	agent_addr_bucket("2001:db8:1:2:dead:beef:1:99", b, sizeof(b));
	assert_string_equal(a, b);
	assert_string_equal(a, "2001:db8:1:2::/64");
	agent_addr_bucket("2001:db8:1:3::1", b, sizeof(b));
	assert_string_not_equal(a, b);
	agent_addr_bucket("fe80::1%lab0", a, sizeof(a));
	agent_addr_bucket("fe80::2", b, sizeof(b));
	assert_string_equal(a, b);
	agent_addr_bucket("::ffff:198.18.0.1", a, sizeof(a));
	agent_addr_bucket("198.18.0.1", b, sizeof(b));
	assert_string_equal(a, "198.18.0.1");
	assert_string_equal(b, "198.18.0.1");
	agent_addr_bucket("198.18.0.2", b, sizeof(b));
	assert_string_not_equal(a, b);
	agent_addr_bucket("?", a, sizeof(a));
	assert_string_equal(a, "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_mac),
		cmocka_unit_test(test_handshake),
		cmocka_unit_test(test_handshake_bound),
		cmocka_unit_test(test_no_work_before_auth),
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_nas_address),
		cmocka_unit_test(test_addr_bucket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
