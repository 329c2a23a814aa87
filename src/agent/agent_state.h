/* agent_state.h - inside src/agent/: the state one agent_serve() shares across its connection
 * threads, and what agent.c calls in facts.c (what this client is) and job.c (a job parsed
 * and run). */
#ifndef NASTUNE_AGENT_STATE_H
#define NASTUNE_AGENT_STATE_H

#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>

#include "agent.h"

/* A connection over the handshake limits, waiting AGENT_KNOCK_WAIT_MS for a knock. Only the
 * accept loop touches these. */
struct pending {
	int fd;
	long deadline;
	char peer[INET6_ADDRSTRLEN + 8];
};

struct conn_arg;

struct agent {
	const struct agent_opts *o;
	pthread_mutex_t lock;		 /* jobs, one at a time */
	pthread_mutex_t state;		 /* the counters, the lists and the cache below */
	unsigned conns, authed, waiting; /* threads; authenticated; jobs queued */
	unsigned reserved;		 /* handshakes admitted by a knock */
	char unauth[AGENT_UNAUTH_MAX][INET6_ADDRSTRLEN + 8]; /* peers in the handshake */
	struct conn_arg *sessions;			     /* authenticated, newest first */
	struct pending pend[AGENT_PENDING_MAX];
	size_t npend;
	char knocks[AGENT_KNOCKS_SEEN][2 * AGENT_NONCE_LEN + 1]; /* replay check */
	size_t nknocks;
	json_t *disk; /* client disk baseline, measured once */
	char hostname[256];
};

/* The facts message: what this client is, with the NIC that carries fd. */
json_t *agent_facts(struct agent *a, int fd);

/* Runs one job message from the controller at nas; returns the reply (result or error). */
json_t *agent_run_job(struct agent *a, struct agent_session *ss, const char *nas, json_t *msg);

#endif
