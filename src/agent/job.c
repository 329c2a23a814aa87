/* job.c - one job from the controller: parsed and checked against what the agent allows
 * (targets at the controller's own address or its --mount paths, bounded sizes, never force),
 * run through the engine with progress sent back, and its results or error as the reply. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_state.h"
#include "bench.h"
#include "fsutil.h"
#include "log.h"
#include "xmalloc.h"

/* The bounds on what a job may ask. */
#define MAX_SIZE (64ull << 30)
#define MAX_REPEATS 100

struct job_ctx {
	struct agent_session *ss;
	json_int_t id;
	volatile sig_atomic_t stop; /* the controller went away */
	const volatile sig_atomic_t *global_stop;
};

static void
job_progress(const struct bench_progress *p, void *arg)
{
	struct job_ctx *j = arg;
	json_t *m = json_pack("{s:s, s:I, s:s, s:i, s:i, s:b}", "type", "progress", "id", j->id,
			      "workload", p->workload, "run", (int)p->run, "runs", (int)p->runs,
			      "warmup", p->warmup);

	/* A controller that is gone makes the send fail: stop the job, scratch is removed. */
	if (agent_session_send(j->ss, m) < 0)
		j->stop = 1;
	if (j->global_stop && *j->global_stop)
		j->stop = 1;
	json_decref(m);
}

static int
opt_u64(json_t *opts, const char *key, uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(opts, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max) {
		snprintf(err, errlen, "options.%s must be an integer from 0 to %llu", key,
			 (unsigned long long)max);
		return -EINVAL;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

void
agent_job_clear(struct agent_job *j)
{
	if (j->target) {
		bench_target_clear(j->target);
		free(j->target);
	}
	memset(j, 0, sizeof(*j));
}

int
agent_job_parse(const struct agent_opts *ao, const char *nas, json_t *msg, struct agent_job *j,
		char *err, size_t errlen)
{
	const char *wname = json_string_value(json_object_get(msg, "workload"));
	const char *proto = json_string_value(json_object_get(msg, "protocol"));
	const char *url = json_string_value(json_object_get(msg, "target"));
	json_t *opts = json_object_get(msg, "options");
	size_t i;

	memset(j, 0, sizeof(*j));
	j->id = json_integer_value(json_object_get(msg, "id"));
	j->warmup = 1;
	if (!wname || (j->workload = bench_workload_parse(wname)) < 0) {
		snprintf(err, errlen, "unknown workload \"%.64s\"", wname ? wname : "");
		return -EINVAL;
	}
	if (!proto || !url || strlen(url) > 1024 || strlen(proto) >= sizeof(j->proto)) {
		snprintf(err, errlen, "a job needs \"protocol\" and \"target\"");
		return -EINVAL;
	}
	snprintf(j->proto, sizeof(j->proto), "%s", proto);
	if (opts && !json_is_object(opts)) {
		snprintf(err, errlen, "\"options\" must be an object");
		return -EINVAL;
	}
	if (opt_u64(opts, "size", MAX_SIZE, &j->size, err, errlen) < 0 ||
	    opt_u64(opts, "repeats", MAX_REPEATS, &j->repeats, err, errlen) < 0 ||
	    opt_u64(opts, "warmup", 10, &j->warmup, err, errlen) < 0 ||
	    opt_u64(opts, "small_files", 100000, &j->files, err, errlen) < 0 ||
	    opt_u64(opts, "entries", BENCH_MAX_ENTRIES, &j->entries, err, errlen) < 0 ||
	    opt_u64(opts, "tree_files", BENCH_MAX_TREE_FILES, &j->tree_files, err, errlen) < 0)
		return -EINVAL;
	/* --force overrides the Time Machine refusal: only for whoever runs bench on this
	 * machine, never for a message from the network. */
	if (json_object_get(opts, "force") && !json_is_false(json_object_get(opts, "force"))) {
		snprintf(err, errlen, "\"force\" is never accepted from the network");
		return -EPERM;
	}
	j->target = xcalloc(1, sizeof(*j->target));
	if (bench_target_parse(url, j->target, err, errlen) < 0) {
		agent_job_clear(j);
		return -EINVAL;
	}
	if (strcmp(j->target->scheme, "file") == 0) {
		/* A local target only where this machine's owner said (--mount). */
		for (i = 0; i < ao->nmounts && !j->mount; i++)
			if (strcmp(ao->mounts[i].path, j->target->share) == 0 &&
			    strcmp(ao->mounts[i].proto, proto) == 0)
				j->mount = ao->mounts[i].path;
		if (!j->mount) {
			snprintf(err, errlen,
				 "file:// targets are accepted only for this agent's "
				 "--mount paths, with their protocol");
			agent_job_clear(j);
			return -EPERM;
		}
		return 0;
	}
	if (strcmp(j->target->scheme, "null") == 0 || strcmp(j->target->scheme, proto) != 0) {
		snprintf(err, errlen, "this agent has no %.16s driver for %.16s", proto,
			 j->target->scheme);
		agent_job_clear(j);
		return -EINVAL;
	}
	if (!nas || !agent_addr_equal(j->target->host, nas)) {
		snprintf(err, errlen,
			 "target host %.80s is not the NAS that authenticated (%.64s): "
			 "jobs run only against it",
			 j->target->host, nas ? nas : "none");
		agent_job_clear(j);
		return -EPERM;
	}
	/* --mount PROTO=PATH: the OS's own client, through the posix driver. */
	for (i = 0; i < ao->nmounts; i++)
		if (strcmp(ao->mounts[i].proto, proto) == 0)
			j->mount = ao->mounts[i].path;
	return 0;
}

json_t *
agent_run_job(struct agent *a, struct agent_session *ss, const char *nas, json_t *msg)
{
	struct job_ctx jc = { .ss = ss, .global_stop = a->o->stop };
	struct bench_opts o = { .progress = job_progress, .progress_arg = &jc, .stop = &jc.stop };
	struct bench_results rs = { 0 };
	struct bench_target mt = { 0 }, *t;
	const struct bench_driver *d = NULL;
	struct agent_job j;
	char err[512] = "", *mount_url = NULL;
	json_t *reply;
	size_t i;
	int rc;

	jc.id = json_integer_value(json_object_get(msg, "id"));
	if (agent_job_parse(a->o, nas, msg, &j, err, sizeof(err)) < 0)
		goto fail;
	o.size = j.size;
	o.repeats = (unsigned)j.repeats;
	o.warmup = (unsigned)j.warmup;
	o.small_files = (unsigned)j.files;
	o.meta_entries = (unsigned)j.entries;
	o.tree_files = (unsigned)j.tree_files;
	o.cache = BENCH_CACHE_HOT;
	o.force = false;
	t = j.target;
	if (j.mount) {
		mount_url = xasprintf("file://%s", j.mount);
		if (bench_target_parse(mount_url, &mt, err, sizeof(err)) < 0)
			goto fail;
		t = &mt;
	}
	d = j.mount ? bench_driver_find("posix") : bench_driver_for_scheme(t->scheme);
	if (!d) {
		snprintf(err, sizeof(err), "this agent has no %s driver for %s", j.proto,
			 t->scheme);
		goto fail;
	}
	/* Logins are for SMB and AFP; NFS (AUTH_SYS) goes by the uid/gid in the URL. */
	if (!j.mount && a->o->credentials && strcmp(t->scheme, "nfs") != 0 &&
	    bench_target_credentials(t, a->o->credentials, err, sizeof(err)) < 0)
		goto fail;
	if (t->user && !t->password) {
		snprintf(err, sizeof(err),
			 "no password for %s on this agent: start it with "
			 "--credentials FILE",
			 t->user);
		goto fail;
	}
	log_info("agent: job %lld: %s over %s on %s", (long long)j.id,
		 bench_workload_name(j.workload), d->name, mount_url ? mount_url : t->url);
	rc = bench_run(d, t, (enum bench_workload)j.workload, &o, &rs, err, sizeof(err));
	if (rc < 0)
		goto fail;
	for (i = 0; i < rs.n; i++) {
		free(rs.v[i].client);
		rs.v[i].client = xstrdup(a->hostname);
		if (j.mount) {
			/* Say that the OS's client was measured, and which protocol it spoke. */
			free(rs.v[i].protocol);
			rs.v[i].protocol = xasprintf("%s (os mount)", j.proto);
		}
	}
	reply = json_pack("{s:s, s:I, s:o}", "type", "result", "id", (json_int_t)jc.id, "results",
			  bench_results_to_json(&rs));
	bench_results_clear(&rs);
	bench_target_clear(&mt);
	agent_job_clear(&j);
	free(mount_url);
	log_info("agent: job %lld done", (long long)jc.id);
	return reply;
fail:
	log_warnx("agent: job %lld refused or failed: %s", (long long)jc.id, err);
	bench_results_clear(&rs);
	bench_target_clear(&mt);
	agent_job_clear(&j);
	free(mount_url);
	return json_pack("{s:s, s:I, s:s}", "type", "error", "id", (json_int_t)jc.id, "error", err);
}
