/* agentctl.h - the controller's side of client-assisted benchmarks: the connection to one
 * agent, and the runs that find agents and hand them the shares' jobs. */
#ifndef NASTUNE_AGENTCTL_H
#define NASTUNE_AGENTCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_proto.h"
#include "bench.h"
#include "model.h"

struct json_t;

/* An agent's facts, read once off the wire: its strings as sent (NULL when absent or not a
 * string), its NIC's numbers (0 when absent or not an integer), and the message itself,
 * which the run's document records as the agent sent it (what another version adds too). */
struct agent_facts {
	char *hostname, *os, *os_version;
	char *nic;			     /* nic.name */
	char *address;			     /* nic.address: its own address on the way to us */
	long long mtu, path_mtu, speed_mbps; /* nic.mtu, nic.path_mtu, nic.speed_mbps */
	struct json_t *sent;
};

/* The agents a run reached, in order. */
struct agent_factset {
	struct agent_facts *v;
	size_t n;
};

/* A client job that failed, or an agent not reached (target, protocol and workload NULL). */
struct agent_error {
	char *client, *target, *protocol, *workload, *message;
	bool busy; /* the agent was running another controller's job */
};

struct agent_errors {
	struct agent_error *v;
	size_t n;
};

/* Runs the selected workloads (video excepted) for every share of m on every agent
 * (HOST[:PORT] or "auto" through mDNS) with the agents' key (token_file, or
 * <root>/var/lib/nastune/agent.key), appending results labelled with the agent to all,
 * failures to errors and each agent's facts to agents (NULL: not kept). Returns 0, or
 * -errno when any agent or job failed (the rest still ran). */
int agentctl_bench(const char *root, const struct model *m, char *const *clients, size_t nclients,
		   const char *token_file, const char *protos, const bool *wl,
		   const struct bench_opts *o, struct bench_results *all,
		   struct agent_errors *errors, struct agent_factset *agents);

/* The facts of msg (an agent's "facts" message) into f; release with agent_facts_clear. */
void agent_facts_parse(const struct json_t *msg, struct agent_facts *f);
void agent_facts_copy(struct agent_facts *dst, const struct agent_facts *src);
void agent_facts_clear(struct agent_facts *f);
void agent_factset_clear(struct agent_factset *a);
void agent_errors_clear(struct agent_errors *e);

/* The JSON edge, for the documents that store a run: each agent's facts as it sent them, and
 * each error as {"client", "target"?, "protocol"?, "workload"?, "message", "busy"}, appended
 * to the array out. */
void agent_factset_json(const struct agent_factset *a, struct json_t *out);
void agent_errors_json(const struct agent_errors *e, struct json_t *out);

/* The agents that clients names (HOST[:PORT], or "auto": every agent found through mDNS now)
 * as "HOST:PORT" strings, so that a caller measuring them many times looks them up once.
 * *out is a NULL-terminated array (caller frees each string and the array). Returns how
 * many. */
size_t agentctl_resolve(char *const *clients, size_t nclients, char ***out);

/* The connection to one agent (agentctl_conn.c). */
struct agent_conn;

/* Connects to host:port, authenticates with key (both ways). Returns 0 and *c, -EACCES when
 * the key is refused or wrong, -ECONNREFUSED/-ETIMEDOUT/..., with err. */
int agent_connect(const char *host, int port, const uint8_t key[AGENT_KEY_LEN], int timeout_ms,
		  struct agent_conn **c, char *err, size_t errlen);
/* The agent's facts (borrowed, valid until agent_close). Asks once. */
int agent_conn_facts(struct agent_conn *c, const struct agent_facts **facts, char *err,
		     size_t errlen);
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

/* Whether spec names agents for --client: HOST, HOST:PORT, [V6]:PORT or "auto". */
bool agent_client_spec_ok(const char *spec);

#endif
