/* agent.h - the nastune agent (client machines); the controller's side is agentctl.h.
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
struct bench_target;

/* --mount PROTO=PATH: run PROTO's jobs with the posix driver on the OS's own mount. */
struct agent_mount {
	char proto[8];
	char *path;
};

struct agent_opts {
	const char *listen; /* "ADDR:PORT", "ADDR" or ":PORT"; NULL: 0.0.0.0:AGENT_DEFAULT_PORT */
	uint8_t key[AGENT_KEY_LEN];
	const struct agent_mount *mounts;
	size_t nmounts;
	const char *credentials; /* smbclient-style file for logins the jobs need; NULL */
	const char *scratch_dir; /* for the client disk baseline; NULL: /var/tmp */
	unsigned max_conns; /* authenticated connections at once; 0: 4 (more are told "busy") */
	unsigned max_queue; /* jobs waiting behind the running one; 0: 2 */
	/* Discovery hook (the Linux build advertises _nastune._tcp through mdns.c). Called once
	 * listening; returns a handle for unadvertise, or NULL. */
	void *(*advertise)(const char *name, int port, const char *const *txt, size_t ntxt);
	void (*unadvertise)(void *handle);
	const volatile sig_atomic_t *stop; /* set by a signal handler to stop serving */
};

/* Unauthenticated connections (still in the handshake, which ends AGENT_HANDSHAKE_MS after
 * the connection is accepted) from one address, and from everyone: more are closed at once,
 * so idle sockets cannot keep the NAS from authenticating. */
#define AGENT_UNAUTH_PER_PEER 4
#define AGENT_UNAUTH_MAX 64
#define AGENT_HANDSHAKE_MS 5000
/* Past those limits a connection waits AGENT_KNOCK_WAIT_MS for a knock (agent_proto.h) in
 * one of AGENT_PENDING_MAX places (the oldest gives way); a knock that proves the key gets
 * one of AGENT_RESERVED_MAX handshakes kept for the NAS, whatever its address. The last
 * AGENT_KNOCKS_SEEN knocks are remembered, so a replayed one gets nothing. */
#define AGENT_PENDING_MAX 16
#define AGENT_KNOCK_WAIT_MS 300
#define AGENT_RESERVED_MAX 4
#define AGENT_KNOCKS_SEEN 256

/* Results one job may return: a workload's metrics (the engine makes at most 16). */
#define AGENT_JOB_RESULTS_MAX 16

/* One job from the network, checked (agent_job_parse) before anything runs. */
struct agent_job {
	long long id;
	int workload;	   /* enum bench_workload */
	char proto[17];	   /* as asked: smb, nfs or afp */
	const char *mount; /* --mount path it runs on (the OS's client), or NULL */
	uint64_t size, repeats, warmup, files, entries, tree_files;
	struct bench_target *target; /* parsed target (the NAS's share); owned */
};

/* Checks a job message against what this agent allows: a known workload; a target on the
 * NAS that authenticated (its address nas; host names are refused) over the job's protocol,
 * or a file:// target that is exactly one of the --mount paths; never "force"; options within
 * their bounds. Pure (no I/O). Returns 0 and *j (release with agent_job_clear), or -EINVAL
 * / -EPERM with err. */
int agent_job_parse(const struct agent_opts *o, const char *nas, struct json_t *msg,
		    struct agent_job *j, char *err, size_t errlen);
void agent_job_clear(struct agent_job *j);

/* Serves until *o->stop. Returns 0, or -errno with err when it cannot listen. */
int agent_serve(const struct agent_opts *o, char *err, size_t errlen);

/* Parses "ADDR:PORT", "ADDR", ":PORT" or "[V6]:PORT" into a sockaddr string pair. Returns 0
 * or -EINVAL. */
int agent_parse_listen(const char *spec, char *addr, size_t addrlen, int *port);

#endif
