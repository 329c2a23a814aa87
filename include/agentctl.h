/* agentctl.h - the controller's side of client-assisted benchmarks. */
#ifndef NASTUNE_AGENTCTL_H
#define NASTUNE_AGENTCTL_H

#include <stdbool.h>
#include <stddef.h>

#include "bench.h"
#include "model.h"

struct json_t;
/* Runs the selected workloads (video excepted) for every share of m on every agent
 * (HOST[:PORT] or "auto" through mDNS) with the agents' key (token_file, or
 * <root>/var/lib/nastune/agent.key), appending results labelled with the agent to all,
 * failures to errors and each agent's facts to agents. Returns 0, or -errno when any agent
 * or job failed (the rest still ran). */
int agentctl_bench(const char *root, const struct model *m, char *const *clients, size_t nclients,
		   const char *token_file, const char *protos, const bool *wl,
		   const struct bench_opts *o, struct bench_results *all, struct json_t *errors,
		   struct json_t *agents);

/* The agents that clients names (HOST[:PORT], or "auto": every agent found through mDNS now)
 * as "HOST:PORT" strings, so that a caller measuring them many times looks them up once.
 * *out is a NULL-terminated array (caller frees each string and the array). Returns how
 * many. */
size_t agentctl_resolve(char *const *clients, size_t nclients, char ***out);

#endif
