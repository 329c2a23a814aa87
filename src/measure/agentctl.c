/* agentctl.c - the controller's side of client-assisted benchmarks: find agents (mDNS or
 * named), authenticate, hand them jobs against this NAS's shares, merge their results. */
#include <errno.h>
#include <pwd.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent.h"
#include "agentctl.h"
#include "bench.h"
#include "fsutil.h"
#include "log.h"
#include "mdns.h"
#include "model.h"
#include "paths.h"
#include "units.h"
#include "xmalloc.h"

struct peer {
	char *host;
	int port;
	char *label; /* how it was found */
};

static void
add_peer(struct peer **v, size_t *n, const char *host, int port, const char *label)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i].host, host) == 0 && (*v)[i].port == port)
			return;
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[*n].host = xstrdup(host);
	(*v)[*n].port = port;
	(*v)[*n].label = xstrdup(label);
	(*n)++;
}

/* "auto": every _nastune._tcp with role=agent on the network (IPv4). */
static int
discover(struct peer **v, size_t *n)
{
	static const char *const types[] = { "_nastune._tcp", NULL };
	struct mdns_service *s = NULL;
	size_t ns = 0, i, k;
	char err[512];
	int found = 0;

	if (mdns_browse(types, 4, true, 3000, &s, &ns, err, sizeof(err)) < 0) {
		log_warnx("bench: cannot look for agents: %s", err);
		return -ENOENT;
	}
	for (i = 0; i < ns; i++) {
		bool agent = false;

		for (k = 0; k < s[i].ntxt; k++)
			agent |= strcmp(s[i].txt[k], "role=agent") == 0;
		if (!agent || !s[i].address || s[i].local)
			continue;
		add_peer(v, n, s[i].address, s[i].port, s[i].name);
		found++;
	}
	mdns_services_free(s, ns);
	log_info("bench: %d agent(s) found over mDNS", found);
	return found;
}

/* A failure into errors: a job's (url, proto, workload), or an agent not reached (NULL). */
static void
add_error(struct agent_errors *errors, const char *client, const char *url, const char *proto,
	  const char *workload, const char *message, bool busy)
{
	errors->v = xreallocarray(errors->v, errors->n + 1, sizeof(*errors->v));
	errors->v[errors->n++] = (struct agent_error){
		.client = xstrdup(client),
		.target = url ? xstrdup(url) : NULL,
		.protocol = proto ? xstrdup(proto) : NULL,
		.workload = workload ? xstrdup(workload) : NULL,
		.message = xstrdup(message),
		.busy = busy,
	};
}

static void
job_progress(json_t *msg, void *arg)
{
	const char *who = arg;

	log_debug("bench: %s: %s run %lld/%lld%s", who,
		  json_string_value(json_object_get(msg, "workload")),
		  (long long)json_integer_value(json_object_get(msg, "run")),
		  (long long)json_integer_value(json_object_get(msg, "runs")),
		  json_is_true(json_object_get(msg, "warmup")) ? " (warm-up)" : "");
}

/* Wall time one client job may take, whatever the agent sends meanwhile: 30 minutes, or
 * NASTUNE_AGENT_JOB_TIMEOUT seconds (1 to 86400; the tests set a short one). */
static int
job_timeout_ms(void)
{
	const char *e = getenv("NASTUNE_AGENT_JOB_TIMEOUT");
	char *end;
	long v;

	if (e && *e) {
		errno = 0;
		v = strtol(e, &end, 10);
		if (!errno && !*end && v >= 1 && v <= 86400)
			return (int)(v * 1000);
		log_warnx("bench: NASTUNE_AGENT_JOB_TIMEOUT=%s is not 1 to 86400 seconds; "
			  "using 1800",
			  e);
	}
	return 30 * 60 * 1000;
}

static const struct {
	const char *name;
	unsigned bit;
} ctl_protos[] = { { "smb", PROTO_SMB }, { "nfs", PROTO_NFS }, { "afp", PROTO_AFP } };

/* The URL of share sh over protocol k (ctl_protos) as the agent of c reaches this NAS: our
 * address as the agent reached it (the one it can mount from; IPv6 in brackets, or its
 * colons read as a port). NFS jobs go as one of the share's users (or its owner): the client
 * does not know our users by name, and exports squash root. Caller frees. */
static char *
ctl_job_url(const char *root, const struct share *sh, size_t k, struct agent_conn *c)
{
	const char *la = agent_conn_local_addr(c);
	bool v6 = strchr(la, ':') != NULL;
	char *part = bench_url_escape(k == 1 ? sh->path : sh->name), *url, *local, *u2;
	struct passwd *pw;
	struct stat sb;
	bool st;

	url = xasprintf("%s://%s%s%s%s%s", ctl_protos[k].name, v6 ? "[" : "", la, v6 ? "]" : "",
			k == 1 ? "" : "/", part);
	free(part);
	if (k != 1)
		return url;
	local = fs_rooted(root, sh->path);
	pw = sh->valid_users.n ? getpwnam(sh->valid_users.v[0]) : NULL;
	st = stat(local, &sb) == 0;
	/* The share's group: AUTH_SYS carries one gid here. */
	if (pw)
		u2 = xasprintf("%s?version=3&uid=%u&gid=%u", url, (unsigned)pw->pw_uid,
			       (unsigned)(st ? sb.st_gid : pw->pw_gid));
	else if (st && sb.st_uid != 0)
		u2 = xasprintf("%s?version=3&uid=%u&gid=%u", url, (unsigned)sb.st_uid,
			       (unsigned)sb.st_gid);
	else
		u2 = xasprintf("%s?version=3", url);
	free(local);
	free(url);
	return u2;
}

/* Every selected workload (video excepted) of one share over one protocol on the agent of c;
 * results labelled with the agent into all. Sets *gone when the agent takes no more jobs.
 * Returns the number of failed jobs. */
static int
ctl_run_jobs(struct agent_conn *c, const char *url, const char *proto, const bool *wl,
	     const struct bench_opts *o, struct bench_results *all, struct agent_errors *errors,
	     bool *gone)
{
	char err[1024];
	int w, rc, failures = 0;

	for (w = 0; w < BENCH_NWORKLOADS && !*gone; w++) {
		json_t *job;
		size_t before = all->n;

		if (!wl[w] || w == BENCH_VIDEO)
			continue;
		/* No "force": agents refuse it from the network. */
		job = json_pack("{s:s, s:s, s:s, s:{s:I, s:i, s:i, s:i, s:i, s:i}}", "workload",
				bench_workload_name(w), "protocol", proto, "target", url, "options",
				"size", (json_int_t)(o->size ? o->size : BENCH_DEFAULT_SIZE),
				"repeats", o->repeats ? (int)o->repeats : 5, "warmup",
				(int)o->warmup, "small_files", (int)o->small_files, "entries",
				(int)o->meta_entries, "tree_files", (int)o->tree_files);
		(o->quiet ? log_debug : log_info)("bench: %s: %s over %s on %s", agent_conn_peer(c),
						  bench_workload_name(w), proto, url);
		rc = agent_conn_job(c, job, job_timeout_ms(), job_progress,
				    (void *)agent_conn_peer(c), all, err, sizeof(err));
		json_decref(job);
		if (rc < 0) {
			log_warnx("bench: %s", err);
			add_error(errors, agent_conn_peer(c), url, proto, bench_workload_name(w),
				  err, rc == -EBUSY);
			failures++;
			/* A vanished, stalled or busy agent, or a connection with a frame that
			 * failed its check, takes no more jobs; the others go on. */
			*gone = rc == -ECONNRESET || rc == -ETIMEDOUT || rc == -EBADMSG ||
				rc == -EINTR || rc == -EBUSY;
			continue;
		}
		for (; before < all->n; before++) {
			free(all->v[before].client);
			all->v[before].client = xstrdup(agent_conn_peer(c));
		}
	}
	return failures;
}

/* One agent: connect, authenticate, its facts into agents, then every share's jobs. Returns
 * the number of failures. */
static int
ctl_bench_peer(const char *root, const struct model *m, const struct peer *p, const uint8_t *key,
	       const char *protos, const bool *wl, const struct bench_opts *o,
	       struct bench_results *all, struct agent_errors *errors, struct agent_factset *agents)
{
	struct agent_conn *c = NULL;
	const struct agent_facts *facts = NULL;
	char err[1024];
	bool gone = false;
	size_t s, k;
	int rc, failures = 0;

	rc = agent_connect(p->host, p->port, key, 5000, &c, err, sizeof(err));
	if (rc == 0)
		rc = agent_conn_facts(c, &facts, err, sizeof(err));
	if (rc < 0) {
		log_warnx("bench: %s", err);
		add_error(errors, p->host, NULL, NULL, NULL, err, rc == -EBUSY);
		agent_close(c);
		return 1;
	}
	if (agents) {
		agents->v = xreallocarray(agents->v, agents->n + 1, sizeof(*agents->v));
		agent_facts_copy(&agents->v[agents->n++], facts);
	}
	(o->quiet ? log_debug : log_info)("bench: agent %s: %s %s, NIC %s MTU %lld at %lld Mb/s",
					  agent_conn_peer(c), facts->os, facts->os_version,
					  facts->nic, facts->mtu, facts->speed_mbps);
	for (s = 0; s < m->n_shares && !gone; s++) {
		const struct share *sh = &m->shares[s];

		if (sh->tm_enabled || sh->read_only)
			continue;
		for (k = 0; k < 3 && !gone; k++) {
			bool enabled = k == 0	? m->smb.enabled
				       : k == 1 ? m->nfs.enabled
						: m->afp.enabled;
			char *url;

			if (!(sh->protocols & ctl_protos[k].bit) || !enabled ||
			    !units_in_list(protos, ctl_protos[k].name))
				continue;
			url = ctl_job_url(root, sh, k, c);
			failures +=
				ctl_run_jobs(c, url, ctl_protos[k].name, wl, o, all, errors, &gone);
			free(url);
		}
	}
	agent_close(c);
	return failures;
}

int
agentctl_bench(const char *root, const struct model *m, char *const *clients, size_t nclients,
	       const char *token_file, const char *protos, const bool *wl,
	       const struct bench_opts *o, struct bench_results *all, struct agent_errors *errors,
	       struct agent_factset *agents)
{
	uint8_t key[AGENT_KEY_LEN];
	struct peer *peers = NULL;
	char err[1024], *keyfile;
	size_t npeers = 0, i;
	int rc, failures = 0;

	keyfile = token_file ? xstrdup(token_file) : paths_agent_key(root);
	if ((rc = agent_key_load(keyfile, key, err, sizeof(err))) < 0) {
		log_warnx("bench: %s", err);
		free(keyfile);
		return rc;
	}
	free(keyfile);
	for (i = 0; i < nclients; i++) {
		if (strcmp(clients[i], "auto") == 0) {
			discover(&peers, &npeers);
		} else {
			char host[256];
			int port = AGENT_DEFAULT_PORT;

			if (agent_parse_listen(clients[i], host, sizeof(host), &port) < 0) {
				log_warnx("bench: --client '%s' is not HOST[:PORT]", clients[i]);
				failures++;
				continue;
			}
			add_peer(&peers, &npeers, host, port, clients[i]);
		}
	}
	if (!npeers)
		log_warnx("bench: no agent to run client jobs on");
	if (o->force && npeers)
		log_warnx("bench: --force applies to this host's runs only: agents never take it "
			  "from the network");
	for (i = 0; i < npeers && !(o->stop && *o->stop); i++)
		failures +=
			ctl_bench_peer(root, m, &peers[i], key, protos, wl, o, all, errors, agents);
	for (i = 0; i < npeers; i++) {
		free(peers[i].host);
		free(peers[i].label);
	}
	free(peers);
	memset(key, 0, sizeof(key));
	return failures ? -EIO : 0;
}

size_t
agentctl_resolve(char *const *clients, size_t nclients, char ***out)
{
	struct peer *peers = NULL;
	size_t npeers = 0, i;

	for (i = 0; i < nclients; i++) {
		char host[256];
		int port = AGENT_DEFAULT_PORT;

		if (strcmp(clients[i], "auto") == 0)
			discover(&peers, &npeers);
		else if (agent_parse_listen(clients[i], host, sizeof(host), &port) == 0)
			add_peer(&peers, &npeers, host, port, clients[i]);
	}
	*out = xcalloc(npeers + 1, sizeof(**out));
	for (i = 0; i < npeers; i++) {
		bool v6 = strchr(peers[i].host, ':') != NULL;

		(*out)[i] = xasprintf("%s%s%s:%d", v6 ? "[" : "", peers[i].host, v6 ? "]" : "",
				      peers[i].port);
		free(peers[i].host);
		free(peers[i].label);
	}
	free(peers);
	return npeers;
}
