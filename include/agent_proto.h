/* agent_proto.h - the wire between nastune (the controller, on the NAS) and its agents (on
 * client machines): length-prefixed JSON messages, a mutual HMAC-SHA256 handshake, then
 * every message in both directions authenticated with per-direction session keys and
 * sequence numbers.
 *
 * Handshake frames: a 4-byte big-endian length, then that many bytes of one JSON object, at
 * most AGENT_HANDSHAKE_MAX. Every message has "v" (AGENT_PROTO_VERSION) and "type". The key K is
 * 32 random bytes both sides hold; nothing but "hello" is answered before the handshake
 * completes:
 *   agent -> controller  {"type":"hello", "nonce": Na, "key_id": id(K), "version": ...}
 *   controller -> agent  {"type":"auth", "nonce": Nc, "nas": A,
 *                         "mac": HMAC(K, "nastune-agent-2 controller\n" Na "\n" Nc "\n" A)}
 *   agent -> controller  {"type":"auth_ok", "mac": HMAC(K, "nastune-agent-2 agent\n" Nc "\n" Na)}
 *                        or {"type":"error", "error": "..."} and close
 * Nonces are 32 fresh random bytes each, hex; MACs are compared in constant time. Each side
 * proves it holds K over the other's fresh nonce, so neither a replay nor a reflected MAC
 * passes. A is the controller's own address on this connection (the one it names in job
 * targets); the agent refuses a controller whose A is not the address it connects from.
 *
 * Session (every message after auth_ok, both directions):
 *   length(4, big-endian) || seq(8, big-endian) || JSON || HMAC-SHA256(k_dir, seq || JSON)
 * k_dir = HKDF-SHA256(ikm K, salt Na || Nc as bytes, info "nastune-agent-2 controller to
 * agent" or "nastune-agent-2 agent to controller"): a key per connection and per direction,
 * so a frame replayed from another connection, reflected back, or altered fails its MAC.
 * seq counts from 0 in each direction; a frame with any other number (replayed, dropped or
 * reordered) is refused. After one refused frame the session is dead: the receiver closes.
 *
 * Portable POSIX C with jansson and libcrypto only: the agent builds on macOS. */
#ifndef NASTUNE_AGENT_PROTO_H
#define NASTUNE_AGENT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_PROTO_VERSION 2
#define AGENT_MSG_MAX (1u << 20) /* bytes of one message */
/* Bytes of one handshake message (hello, auth, auth_ok: a few hundred): a peer that has not
 * proven the key gets no 1 MiB buffer per connection out of either side. */
#define AGENT_HANDSHAKE_MAX 4096u
#define AGENT_KEY_LEN 32
#define AGENT_NONCE_LEN 32
#define AGENT_DEFAULT_PORT 7048
#define AGENT_SEQ_LEN 8
#define AGENT_MAC_LEN 32
#define AGENT_ADDR_MAX 64 /* an address as text, with room for IPv6 and a scope */

/* Every wait on a peer polls in slices this long and gives up with -EINTR once a stop was
 * asked (sigstop_caught): SIGINT or SIGTERM ends a stalled exchange within a second. */
#define AGENT_STOP_SLICE_MS 250
/* How long a peer that stops reading may hold a send. */
#define AGENT_WRITE_MS 60000

/* Waits until fd is ready for events (POLLIN, POLLOUT) or the deadline (a CLOCK_MONOTONIC
 * time in ms) passes. Returns 0, -ETIMEDOUT, -EINTR when a stop was asked, or -errno. */
int agent_wait_fd(int fd, short events, long deadline);
/* CLOCK_MONOTONIC in ms, for agent_wait_fd's deadlines. */
long agent_mono_ms(void);

/* One authenticated connection (after the handshake). Plain data: no allocation inside. */
struct agent_session {
	int fd;
	uint8_t k_send[AGENT_MAC_LEN], k_recv[AGENT_MAC_LEN];
	uint64_t seq_send, seq_recv;
	bool dead; /* a frame was refused: nothing more is trusted on this connection */
};

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
void agent_mac(const uint8_t key[AGENT_KEY_LEN], const char *label, const char *a, const char *b,
	       char out[65]);
/* Constant-time comparison of two hex MACs; false when either is not 64 characters. */
bool agent_mac_equal(const char *a, const char *b);

/* Controller side of the handshake on a connected socket: reads hello, sends auth naming
 * nas (our address on this connection), checks auth_ok. Returns 0 with *s ready (and *hello,
 * which the caller json_decrefs, when hello is not NULL), -EACCES when the agent refuses us
 * or proves the wrong key (err says which), or the agent_recv errors (-EMSGSIZE above
 * AGENT_HANDSHAKE_MAX). */
int agent_client_handshake(int fd, const uint8_t key[AGENT_KEY_LEN], const char *nas,
			   int timeout_ms, struct json_t **hello, struct agent_session *s,
			   char *err, size_t errlen);

/* The knock: a controller whose first connection was closed before any hello (an agent
 * whose handshake places are all held, by idle sockets say) connects again and speaks first:
 *   controller -> agent  {"type":"knock", "nonce": Nk,
 *                         "mac": HMAC(K, "nastune-agent-2 knock\n" Nk "\n")}
 * An agent admits such a connection on a few places kept apart from everyone else's,
 * whatever its address, once the MAC checks and Nk was not seen before; the handshake then
 * goes on as above (an agent that finds a knock where it expects auth skips it). */
int agent_send_knock(int fd, const uint8_t key[AGENT_KEY_LEN]);
/* Whether msg is a knock proving key; its nonce goes to nonce (for the replay check). */
bool agent_knock_ok(const uint8_t key[AGENT_KEY_LEN], struct json_t *msg,
		    char nonce[2 * AGENT_NONCE_LEN + 1]);

/* Agent side: sends hello, reads auth, answers auth_ok or an error. peer is the address the
 * controller connects from (NULL: not checked, e.g. a socketpair); a controller naming
 * another address is refused. Returns 0 with *s ready and the controller's address in nas,
 * -EACCES after refusing (the caller closes), or the agent_recv errors (-EMSGSIZE above
 * AGENT_HANDSHAKE_MAX). */
int agent_server_handshake(int fd, const uint8_t key[AGENT_KEY_LEN], int timeout_ms,
			   const char *agent_version, const char *peer, struct agent_session *s,
			   char nas[AGENT_ADDR_MAX], char *err, size_t errlen);

/* Sets up a session from the handshake's nonces (hex): the keys of both directions,
 * sequence numbers at 0. controller says which side this is. */
void agent_session_init(struct agent_session *s, int fd, const uint8_t key[AGENT_KEY_LEN],
			const char *na, const char *nc, bool controller);
/* Forgets the keys. */
void agent_session_clear(struct agent_session *s);

/* Seals msg (adding "v") as one frame with its length prefix. Returns the frame (the caller
 * frees it) and its length in *len, or NULL when the encoding exceeds AGENT_MSG_MAX or the
 * sequence numbers are used up (2^64 - 1 frames: never wraps). Uses and advances the sending
 * sequence number. */
uint8_t *agent_session_seal(struct agent_session *s, struct json_t *msg, size_t *len);
/* Checks one frame body (after the length prefix: seq || JSON || MAC) against the receiving
 * key and sequence number, then parses it. Returns 0 and *msg, or -EBADMSG (altered,
 * replayed, reordered or truncated: err says which; the session is dead from then on), or
 * the agent_parse errors. */
int agent_session_open(struct agent_session *s, const uint8_t *body, size_t len,
		       struct json_t **msg, char *err, size_t errlen);
/* agent_send and agent_recv through the session. */
int agent_session_send(struct agent_session *s, struct json_t *msg);
int agent_session_recv(struct agent_session *s, int timeout_ms, struct json_t **msg, char *err,
		       size_t errlen);

/* Whether two numeric addresses are the same host (IPv4-mapped IPv6 equals IPv4). */
bool agent_addr_equal(const char *a, const char *b);

/* The peer a numeric address counts as for the bound on unauthenticated connections, as text
 * in out: an IPv4 address (also arriving IPv4-mapped on a dual-stack socket), or an IPv6
 * address's /64 ("2001:db8:1:2::/64"): one machine on a LAN holds the whole /64 (SLAAC and
 * privacy addresses), so counting single IPv6 addresses would not bound it. Anything else is
 * returned as given (truncated to len). */
void agent_addr_bucket(const char *addr, char *out, size_t len);

#endif
