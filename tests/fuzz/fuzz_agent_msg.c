/* fuzz_agent_msg.c - libFuzzer harness for everything an agent or a controller reads from the
 * network: any bytes as a handshake message body and as a framed stream through agent_recv;
 * the same bytes as an authenticated frame (seq || JSON || MAC) and a stream of them through
 * agent_session_recv, which must refuse them (no MAC); and as the JSON of a frame sealed with
 * the session's real key, so the parser and the job checker (agent_job_parse: target host,
 * --mount paths, force, bounds) see arbitrary authentic messages, and one flipped bit of that
 * frame, which must be refused. Knocks (the key holder's way past full handshake places)
 * never pass without the key. */
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "agent_proto.h"
#include "bench_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char NA[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
static const char NC[] = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

static void
sessions(struct agent_session *ctrl, struct agent_session *agent, int fd)
{
	uint8_t key[AGENT_KEY_LEN];

	memset(key, 0x5a, sizeof(key));
	agent_session_init(ctrl, fd, key, NA, NC, true);
	agent_session_init(agent, fd, key, NA, NC, false);
}

/* What a controller at 198.18.0.1 may ask of an agent with two --mount paths. */
static void
check_job(json_t *msg)
{
	static const struct agent_mount mounts[] = { { "smb", "/mnt/media" },
						     { "afp", "/Volumes/Old" } };
	struct agent_opts o = { .mounts = mounts, .nmounts = 2 };
	struct agent_job j;
	char err[512];

	if (agent_job_parse(&o, "198.18.0.1", msg, &j, err, sizeof(err)) == 0) {
		/* Whatever passed is on the NAS or on a --mount path, and never forced. */
		if (!j.mount && !agent_addr_equal(j.target->host, "198.18.0.1"))
			abort();
		if (json_is_true(json_object_get(json_object_get(msg, "options"), "force")))
			abort();
		agent_job_clear(&j);
	}
}

/* data as the JSON of a frame sealed with the controller's real key. */
static void
sealed(const uint8_t *data, size_t size, uint8_t flip)
{
	struct agent_session c, a;
	uint8_t *body;
	unsigned int n = 0;
	char err[256];
	json_t *msg = NULL;
	size_t len = AGENT_SEQ_LEN + size + AGENT_MAC_LEN;

	if (len > AGENT_MSG_MAX)
		return;
	sessions(&c, &a, -1);
	body = malloc(len);
	memset(body, 0, AGENT_SEQ_LEN); /* sequence number 0 */
	memcpy(body + AGENT_SEQ_LEN, data, size);
	HMAC(EVP_sha256(), c.k_send, AGENT_MAC_LEN, body, AGENT_SEQ_LEN + size,
	     body + AGENT_SEQ_LEN + size, &n);
	if (agent_session_open(&a, body, len, &msg, err, sizeof(err)) == 0) {
		if (strcmp(agent_type(msg), "job") == 0)
			check_job(msg);
		json_decref(msg);
	}
	/* The same frame with one bit flipped never passes. */
	sessions(&c, &a, -1);
	body[(size_t)flip * len / 256] ^= (uint8_t)(1u << (flip & 7));
	if (agent_session_open(&a, body, len, &msg, err, sizeof(err)) == 0)
		abort();
	free(body);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_session c, a;
	uint8_t key[AGENT_KEY_LEN];
	char err[256], nk[2 * AGENT_NONCE_LEN + 1];
	json_t *msg = NULL;
	int p[2];

	if (agent_parse(data, size, &msg, err, sizeof(err)) == 0) {
		(void)agent_type(msg);
		if (strcmp(agent_type(msg), "job") == 0)
			check_job(msg);
		/* A knock from the network: none the fuzzer makes proves the key (the seeds
		 * hold no knock made with it). */
		memset(key, 0x5a, sizeof(key));
		if (agent_knock_ok(key, msg, nk))
			abort();
		json_decref(msg);
	}
	/* The same bytes as a stream: length prefix and body as they come. */
	if (size <= 65536 && pipe(p) == 0) {
		if (write(p[1], data, size) == (ssize_t)size) {
			close(p[1]);
			while (agent_recv(p[0], 50, &msg, err, sizeof(err)) == 0)
				json_decref(msg);
		} else {
			close(p[1]);
		}
		close(p[0]);
	}
	/* As authenticated frames from someone without the key: all refused. */
	sessions(&c, &a, -1);
	if (agent_session_open(&a, data, size, &msg, err, sizeof(err)) == 0)
		abort();
	if (size <= 65536 && pipe(p) == 0) {
		sessions(&c, &a, p[0]);
		if (write(p[1], data, size) == (ssize_t)size) {
			close(p[1]);
			if (agent_session_recv(&a, 50, &msg, err, sizeof(err)) == 0)
				abort();
		} else {
			close(p[1]);
		}
		close(p[0]);
	}
	if (size > 0)
		sealed(data + 1, size - 1, data[0]);
	return 0;
}
