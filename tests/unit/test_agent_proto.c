/* test_agent_proto.c - framing bounds, parse errors, keys, and the mutual handshake over a
 * socketpair with the right key, a wrong key, a replayed proof and a peer that skips it. */
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
	assert_int_equal(agent_parse("{\"v\":1,\"type\":\"hello\"}", 22, &m, err, sizeof(err)), 0);
	assert_string_equal(agent_type(m), "hello");
	json_decref(m);
	assert_int_equal(agent_parse("{\"v\":1,", 7, &m, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "malformed"));
	assert_int_equal(agent_parse("[1,2]", 5, &m, err, sizeof(err)), -EBADMSG);
	assert_int_equal(agent_parse("{\"type\":\"x\"}", 12, &m, err, sizeof(err)), -EBADMSG);
	assert_int_equal(agent_parse("{\"v\":1,\"type\":\"\"}", 17, &m, err, sizeof(err)), -EBADMSG);
	assert_int_equal(agent_parse("{\"v\":1,\"type\":\"a\",\"type\":\"b\"}", 29, &m, err,
				     sizeof(err)), -EBADMSG);
	assert_int_equal(agent_parse("{\"v\":2,\"type\":\"hello\"}", 22, &m, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "version 2"));
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
	assert_false(agent_mac_equal(a, b));	/* the separator keeps the pairs apart */
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
};

static void *
srv_thread(void *p)
{
	struct srv_arg *a = p;

	a->rc = agent_server_handshake(a->fd, a->key, 2000, "test", a->err, sizeof(a->err));
	return NULL;
}

static int
handshake(const uint8_t *ckey, const uint8_t *skey, int *src, char *cerr, char *serr)
{
	struct srv_arg a = { 0 };
	pthread_t t;
	json_t *hello = NULL;
	int sv[2], rc;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	a.fd = sv[1];
	memcpy(a.key, skey, AGENT_KEY_LEN);
	pthread_create(&t, NULL, srv_thread, &a);
	rc = agent_client_handshake(sv[0], ckey, 2000, &hello, cerr, 256);
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
		agent_mac(a.key, "nastune-agent-1 controller", old, nc, mac);
		m = json_pack("{s:s, s:s, s:s}", "type", "auth", "nonce", nc, "mac", mac);
	}
	agent_send(sv[0], m);
	json_decref(m);
	pthread_join(t, NULL);
	assert_int_equal(a.rc, -EACCES);
	json_decref(hello);
	close(sv[0]);
	close(sv[1]);
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
		cmocka_unit_test(test_no_work_before_auth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
