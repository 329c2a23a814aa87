/* agent.h - the nastune agent (client machines) and the controller's side of its protocol.
 *
 * The agent listens on TCP, authenticates every controller (agent_proto.h), reports client
 * facts, and runs benchmark jobs one at a time through the same engine as the server
 * (bench.h), streaming progress and returning results. Portable POSIX C: with libcrypto and
 * jansson only (discovery is a hook), so it builds on macOS too. */
#ifndef NASTUNE_AGENT_H
#define NASTUNE_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_proto.h"

struct bench_results;

/* --mount PROTO=PATH: run PROTO's jobs with the posix driver on the OS's own mount. */
struct agent_mount {
	char proto[8];
	char *path;
};

struct agent_opts {
	const char *listen;	/* "ADDR:PORT", "ADDR" or ":PORT"; NULL: 0.0.0.0:AGENT_DEFAULT_PORT */
	uint8_t key[AGENT_KEY_LEN];
	const struct agent_mount *mounts;
	size_t nmounts;
	const char *credentials;	/* smbclient-style file for logins the jobs need; NULL */
	const char *scratch_dir;	/* for the client disk baseline; NULL: /var/tmp */
	unsigned max_conns;	/* connections served at once; 0: 4 (more are told "busy") */
	unsigned max_queue;	/* jobs waiting behind the running one; 0: 2 */
	/* Discovery hook (the Linux build advertises _nastune._tcp through mdns.c). Called once
	 * listening; returns a handle for unadvertise, or NULL. */
	void *(*advertise)(const char *name, int port, const char *const *txt, size_t ntxt);
	void (*unadvertise)(void *handle);
	const volatile sig_atomic_t *stop;	/* set by a signal handler to stop serving */
};

/* Serves until *o->stop. Returns 0, or -errno with err when it cannot listen. */
int agent_serve(const struct agent_opts *o, char *err, size_t errlen);

/* Parses "ADDR:PORT", "ADDR", ":PORT" or "[V6]:PORT" into a sockaddr string pair. Returns 0
 * or -EINVAL. */
int agent_parse_listen(const char *spec, char *addr, size_t addrlen, int *port);

/* ---- controller side ---- */

struct agent_conn;

/* Connects to host:port, authenticates with key (both ways). Returns 0 and *c, -EACCES when
 * the key is refused or wrong, -ECONNREFUSED/-ETIMEDOUT/..., with err. */
int agent_connect(const char *host, int port, const uint8_t key[AGENT_KEY_LEN], int timeout_ms,
		  struct agent_conn **c, char *err, size_t errlen);
/* The agent's facts (a JSON object; borrowed, valid until agent_close). Asks once. */
int agent_conn_facts(struct agent_conn *c, struct json_t **facts, char *err, size_t errlen);
/* Our own address on this connection: the NAS address the agent can reach. */
const char *agent_conn_local_addr(struct agent_conn *c);
/* The agent's address and its host name (from its facts; the address until then). */
const char *agent_conn_peer(struct agent_conn *c);

/* Runs one job ({"workload", "protocol", "target", "options": {...}}; "type" and "id" are
 * added) and appends its results to out. progress (may be NULL) sees each progress message.
 * Returns 0; -ECONNRESET when the agent vanished mid-job; -EIO with the agent's error in
 * err; or the agent_recv errors. The job waits at most job_timeout_ms. */
int agent_conn_job(struct agent_conn *c, struct json_t *job, int job_timeout_ms,
		   void (*progress)(struct json_t *msg, void *arg), void *arg,
		   struct bench_results *out, char *err, size_t errlen);
void agent_close(struct agent_conn *c);

/* The agents' key's default place: <root>/var/lib/nastune/agent.key (root "" for the real
 * system). Caller frees. */
char *agent_key_path(const char *root);
/* Whether spec names agents for --client: HOST, HOST:PORT, [V6]:PORT or "auto". */
bool agent_client_spec_ok(const char *spec);

#endif
