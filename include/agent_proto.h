/* agent_proto.h - the wire between nastune (the controller, on the NAS) and its agents (on
 * client machines): length-prefixed JSON messages and mutual HMAC-SHA256 authentication.
 *
 * Framing: a 4-byte big-endian length, then that many bytes of one JSON object, at most
 * AGENT_MSG_MAX. Every message has "v" (AGENT_PROTO_VERSION) and "type".
 *
 * Handshake (the key K is 32 random bytes both sides hold; nothing but "hello" is answered
 * before it completes):
 *   agent -> controller  {"type":"hello", "nonce": Na, "key_id": id(K), "version": ...}
 *   controller -> agent  {"type":"auth", "nonce": Nc, "mac": HMAC(K, "nastune-agent-1 controller" Na Nc)}
 *   agent -> controller  {"type":"auth_ok", "mac": HMAC(K, "nastune-agent-1 agent" Nc Na)}
 *                        or {"type":"error", "error": "authentication failed"} and close
 * Nonces are 32 fresh random bytes each, hex; MACs are compared in constant time. Each side
 * proves it holds K over the other's fresh nonce, so neither a replay nor a reflected MAC
 * passes.
 *
 * Portable POSIX C with jansson and libcrypto only: the agent builds on macOS. */
#ifndef NASTUNE_AGENT_PROTO_H
#define NASTUNE_AGENT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_PROTO_VERSION 1
#define AGENT_MSG_MAX (1u << 20)	/* bytes of one message */
#define AGENT_KEY_LEN 32
#define AGENT_NONCE_LEN 32
#define AGENT_DEFAULT_PORT 7048

struct json_t;

/* Reads one message from fd within timeout_ms (for the whole message). Returns 0 and *msg (a
 * JSON object with integer "v" and string "type"; the caller json_decrefs it), -EMSGSIZE for
 * a length above AGENT_MSG_MAX (nothing more is read: close the connection), -EBADMSG for
 * bytes that are not such an object, -ECONNRESET on end of stream, -ETIMEDOUT, or -errno.
 * err gets one sentence. */
int agent_recv(int fd, int timeout_ms, struct json_t **msg, char *err, size_t errlen);

/* Parses one message body (no length prefix): the part agent_recv and the fuzzer share. */
int agent_parse(const void *data, size_t len, struct json_t **msg, char *err, size_t errlen);

/* Writes msg (adding "v") with its length prefix. Returns 0 or -errno; -EMSGSIZE when the
 * encoding exceeds AGENT_MSG_MAX. */
int agent_send(int fd, struct json_t *msg);

/* The message's "type", or "" when absent (after agent_parse it never is). */
const char *agent_type(struct json_t *msg);

/* Keys: 64 hex digits in a file of mode 0600 (or stricter) owned by the reader. */
int agent_key_load(const char *path, uint8_t key[AGENT_KEY_LEN], char *err, size_t errlen);
/* Creates a new random key at path (mode 0600, atomically; refuses to overwrite unless
 * force). Returns 0 or -errno with err. */
int agent_key_create(const char *path, bool force, uint8_t key[AGENT_KEY_LEN], char *err,
		     size_t errlen);
/* The key's public id: the first 16 hex digits of SHA-256(key). */
void agent_key_id(const uint8_t key[AGENT_KEY_LEN], char out[17]);

/* Fresh nonce, hex (2 * AGENT_NONCE_LEN + 1 bytes). Aborts when the system has no randomness. */
void agent_nonce(char out[2 * AGENT_NONCE_LEN + 1]);
/* HMAC-SHA256(key, label || a || b), hex (65 bytes). */
void agent_mac(const uint8_t key[AGENT_KEY_LEN], const char *label, const char *a,
	       const char *b, char out[65]);
/* Constant-time comparison of two hex MACs; false when either is not 64 characters. */
bool agent_mac_equal(const char *a, const char *b);

/* Controller side of the handshake on a connected socket: reads hello, sends auth, checks
 * auth_ok. Returns 0 (and *hello, which the caller json_decrefs, when hello is not NULL),
 * -EACCES when the agent refuses the key or proves the wrong one (err says which), or the
 * agent_recv errors. */
int agent_client_handshake(int fd, const uint8_t key[AGENT_KEY_LEN], int timeout_ms,
			   struct json_t **hello, char *err, size_t errlen);

/* Agent side: sends hello, reads auth, answers auth_ok or an error. Returns 0, -EACCES after
 * refusing (the caller closes), or the agent_recv errors. */
int agent_server_handshake(int fd, const uint8_t key[AGENT_KEY_LEN], int timeout_ms,
			   const char *agent_version, char *err, size_t errlen);

#endif
