/* benchrun.c - the benchmark's plan, run loop and record (benchrun.h). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agentctl.h"
#include "cluster.h"
#include "bench.h"
#include "benchrun.h"
#include "fsutil.h"
#include "log.h"
#include "model.h"
#include "runrec.h"
#include "state.h"
#include "units.h"
#include "xmalloc.h"

void
benchrun_init(struct benchrun *b)
{
	memset(b, 0, sizeof(*b));
	b->o.warmup = 1;
	b->o.cache = geteuid() == 0 ? BENCH_CACHE_COLD : BENCH_CACHE_HOT;
	b->baselines = json_array();
	b->errors = json_array();
	b->agents = json_array();
}

void
benchrun_clear(struct benchrun *b)
{
	size_t i;

	for (i = 0; i < b->ntg; i++) {
		bench_target_clear(&b->tg[i].t);
		free(b->tg[i].local);
	}
	free(b->tg);
	b->tg = NULL;
	b->ntg = 0;
	bench_results_clear(&b->all);
	json_decref(b->baselines);
	json_decref(b->errors);
	json_decref(b->agents);
	b->baselines = b->errors = b->agents = NULL;
}

static void
push(struct benchrun *b, const struct benchrun_target *t)
{
	b->tg = xreallocarray(b->tg, b->ntg + 1, sizeof(*b->tg));
	b->tg[b->ntg++] = *t;
}

/* A Time Machine or read-only share of the configuration that t points at, or NULL. */
static const struct share *
tm_share_of(const char *root, const struct model *m, const struct bench_target *t)
{
	size_t i;

	for (i = 0; m && i < m->n_shares; i++) {
		const struct share *s = &m->shares[i];
		char *p;
		size_t len;
		bool hit = false;

		if (!s->tm_enabled && !s->read_only)
			continue;
		if (strcmp(t->scheme, "file") == 0) {
			p = fs_rooted(root, s->path);
			len = strlen(p);
			hit = strncmp(t->share, p, len) == 0 &&
			      (!t->share[len] || t->share[len] == '/');
			free(p);
		} else if (strcmp(t->scheme, "nfs") == 0) {
			hit = strcmp(t->share, s->path) == 0;
		} else if (t->share) {
			hit = strcasecmp(t->share, s->name) == 0;
		}
		if (hit)
			return s;
	}
	return NULL;
}

int
benchrun_add_url(struct benchrun *b, const struct model *m, const char *root, const char *url,
		 const char *protos, char *err, size_t errlen)
{
	struct benchrun_target t = { 0 };
	const struct share *tm;

	if (bench_target_parse(url, &t.t, err, errlen) < 0)
		return -EINVAL;
	if (!(t.d = bench_driver_for_scheme(t.t.scheme))) {
		log_warnx("bench: no %s driver in this build; %s skipped", t.t.scheme, t.t.url);
		bench_target_clear(&t.t);
		return 1;
	}
	if (!units_in_list(protos, t.d->name)) {
		snprintf(err, errlen, "--target %s is %s, not in --protocol %s", t.t.url, t.d->name,
			 protos);
		bench_target_clear(&t.t);
		return -EINVAL;
	}
	if (!b->o.force && (tm = tm_share_of(root, m, &t.t))) {
		snprintf(err, errlen,
			 "%s is the %s share %s; refusing to benchmark it (%s) — add --force to do "
			 "it anyway",
			 t.t.url, tm->tm_enabled ? "Time Machine" : "read-only", tm->name,
			 tm->tm_enabled ? "it would disturb backups"
					: "nothing may be written to it");
		bench_target_clear(&t.t);
		return -EPERM;
	}
	if (strcmp(t.t.scheme, "file") == 0)
		t.local = *t.t.subdir ? xasprintf("%s/%s", t.t.share, t.t.subdir)
				      : xstrdup(t.t.share);
	push(b, &t);
	return 0;
}

/* Adds url measured with driver d; shown names the target in results and reports when the
 * URL the driver opens is not what the user wrote (a share path under --root). */
static void
add_derived(struct benchrun *b, const char *url, const char *shown, const struct bench_driver *d,
	    const char *local)
{
	struct benchrun_target t = { .d = d };
	char err[512];

	if (bench_target_parse(url, &t.t, err, sizeof(err)) < 0) {
		log_warnx("bench: %s; skipped", err);
		return;
	}
	if (shown) {
		free(t.t.url);
		t.t.url = xstrdup(shown);
	}
	t.local = local ? xstrdup(local) : NULL;
	push(b, &t);
}

void
benchrun_derive_targets(struct benchrun *b, const struct model *m, const char *root,
			const char *protos)
{
	static const struct {
		const char *name;
		unsigned bit;
	} ps[] = { { "smb", PROTO_SMB }, { "nfs", PROTO_NFS }, { "afp", PROTO_AFP } };
	bool warned[3] = { false, false, false };
	char host[64] = "127.0.0.1";
	size_t i, k;

	/* A cluster node is measured as clients reach it: through a public address it holds. */
	if (m->cluster.enabled && cluster_local_public(m, host, sizeof(host)) < 0)
		log_warnx("bench: this node holds no public address now; measuring over loopback");
	for (i = 0; i < m->n_shares; i++) {
		const struct share *s = &m->shares[i];
		char *local = fs_rooted(root, s->path), *esc, *url, *shown;

		if (s->tm_enabled || s->read_only) {
			log_info("bench: share %s skipped (%s)", s->name,
				 s->tm_enabled ? "Time Machine" : "read-only");
			free(local);
			continue;
		}
		for (k = 0; k < 3; k++) {
			const struct bench_driver *d;
			bool enabled = k == 0	? m->smb.enabled
				       : k == 1 ? m->nfs.enabled
						: m->afp.enabled;

			if (!(s->protocols & ps[k].bit) || !enabled ||
			    !units_in_list(protos, ps[k].name))
				continue;
			if (k == 1 && !m->cluster.enabled && !model_nfs_loopback_ok(s)) {
				log_info("bench: NFS export %s skipped: its clients do not include "
					 "this "
					 "host's loopback (measure it from a client: --client)",
					 s->path);
				continue;
			}
			if (!(d = bench_driver_find(ps[k].name))) {
				if (!warned[k])
					log_warnx("bench: no %s driver in this build; %s skipped",
						  ps[k].name, ps[k].name);
				warned[k] = true;
				continue;
			}
			esc = bench_url_escape(k == 1 ? s->path : s->name);
			url = xasprintf("%s://%s%s%s", ps[k].name, host, k == 1 ? "" : "/", esc);
			add_derived(b, url, NULL, d, local);
			free(esc);
			free(url);
		}
		if (units_in_list(protos, "posix")) {
			esc = bench_url_escape(local);
			url = xasprintf("file://%s", esc);
			free(esc);
			esc = bench_url_escape(s->path);
			shown = xasprintf("file://%s", esc);
			add_derived(b, url, strcmp(url, shown) ? shown : NULL, &bench_drv_posix,
				    local);
			free(esc);
			free(url);
			free(shown);
		}
		free(local);
	}
}

int
benchrun_credentials(struct benchrun *b, const char *creds, char *err, size_t errlen)
{
	size_t i;
	int rc;

	for (i = 0; i < b->ntg; i++) {
		struct bench_target *t = &b->tg[i].t;

		if (!t->host) /* file://, null://: no login */
			continue;
		if (creds && (rc = bench_target_credentials(t, creds, err, errlen)) < 0)
			return rc;
		if (bench_target_prompt(t) == -ENOTTY)
			log_info("bench: no terminal to ask for %s's password", t->user);
	}
	return 0;
}

static size_t
nvideo(const struct benchrun *b)
{
	return b->nvideo ? b->nvideo : 1;
}

unsigned
benchrun_total_runs(const struct benchrun *b)
{
	unsigned total = 0,
		 per = b->o.warmup + (b->o.repeats ? b->o.repeats : BENCH_DEFAULT_REPEATS);
	size_t i;

	for (i = 0; i < BENCH_NWORKLOADS; i++)
		if (b->wl[i])
			total += (unsigned)b->ntg * per *
				 (i == BENCH_VIDEO ? (unsigned)nvideo(b) : 1);
	return total;
}

bool
benchrun_any_workload(const struct benchrun *b)
{
	size_t i;

	for (i = 0; i < BENCH_NWORKLOADS; i++)
		if (b->wl[i])
			return true;
	return false;
}

static bool
is_loopback(const char *host)
{
	return host && (strcmp(host, "127.0.0.1") == 0 || strcmp(host, "localhost") == 0 ||
			strcmp(host, "::1") == 0);
}

static void
add_baseline(json_t *a, const char *name, double v, const char *where, const char *method)
{
	if (v > 0)
		json_array_append_new(a, json_pack("{s:s, s:s, s:f, s:s, s:s}", "name", name,
						   "unit", "MB/s", "value", v, "where", where,
						   "method", method));
}

static void
baselines(struct benchrun *b, const struct benchrun_target *t, bool network,
	  struct bench_baseline *bl)
{
	uint64_t size = b->o.size ? b->o.size : BENCH_DEFAULT_SIZE;
	char err[512];

	/* The baseline runs the workloads' own refusals (Time Machine, free space) first. */
	if (t->local && bench_baseline_disk(t->local, &b->o, bl, err, sizeof(err)) < 0)
		log_warnx("bench: raw disk baseline of %s: %s", t->local, err);
	if (network && is_loopback(t->t.host))
		bench_baseline_tcp_loopback(size, bl);
	else if (network && t->t.host)
		bench_baseline_iperf3(t->t.host, bl);
	add_baseline(b->baselines, "disk-write", bl->disk_write, t->local ? t->local : "",
		     bl->disk_method);
	add_baseline(b->baselines, "disk-read", bl->disk_read, t->local ? t->local : "",
		     bl->disk_method);
	add_baseline(b->baselines, "tcp", bl->tcp, t->t.host ? t->t.host : "", bl->tcp_method);
}

static bool
stopped(const struct benchrun *b)
{
	return b->o.stop && *b->o.stop;
}

/* Every selected workload on one target. Returns 0 or -EIO when any failed. */
static int
run_target(struct benchrun *b, const struct benchrun_target *t)
{
	static const struct benchrun_video dflt = { NULL, 0 };
	char err[1024];
	size_t k;
	int w, rc, status = 0;

	for (w = 0; w < BENCH_NWORKLOADS && !stopped(b); w++) {
		if (!b->wl[w])
			continue;
		for (k = 0; k < (w == BENCH_VIDEO ? nvideo(b) : 1) && !stopped(b); k++) {
			const struct benchrun_video *v = b->nvideo ? &b->videos[k] : &dflt;

			b->o.video = v->fmt ? v->fmt : bench_video_formats()[0];
			b->o.video_fps = v->fmt ? v->fps : 30;
			rc = bench_run(t->d, &t->t, (enum bench_workload)w, &b->o, &b->all, err,
				       sizeof(err));
			if (b->workload_done)
				b->workload_done(b->workload_arg);
			if (rc < 0) {
				log_warnx("bench: %s %s: %s", t->t.url, bench_workload_name(w),
					  err);
				json_array_append_new(b->errors,
						      json_pack("{s:s, s:s, s:s, s:s}", "target",
								t->t.url, "protocol", t->d->name,
								"workload", bench_workload_name(w),
								"message", err));
				status = -EIO;
			}
		}
	}
	return status;
}

int
benchrun_run(struct benchrun *b)
{
	size_t i, k;
	int status = 0;

	for (i = 0; i < b->ntg && !stopped(b) && benchrun_any_workload(b); i++) {
		const struct benchrun_target *t = &b->tg[i];
		struct bench_baseline bl = { 0 };
		bool network = strcmp(t->t.scheme, "file") != 0 && strcmp(t->t.scheme, "null") != 0;
		size_t first = b->all.n;

		/* "cold" only where the dropped cache is the server's too. */
		b->o.drop_reaches_server = bench_target_on_this_host(&t->t);
		if (!b->no_baseline)
			baselines(b, t, network, &bl);
		if (run_target(b, t) < 0)
			status = -EIO;
		for (k = first; k < b->all.n; k++)
			bench_attribute(&b->all.v[k], &bl, network);
	}
	return stopped(b) ? -EINTR : status;
}

int
benchrun_drop_caches(void *arg)
{
	FILE *fp;
	int rc = 0;

	(void)arg;
	sync();
	if (!(fp = fopen("/proc/sys/vm/drop_caches", "w")))
		return -errno;
	if (fputs("3\n", fp) < 0)
		rc = -EIO;
	if (fclose(fp) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

static json_t *
run_doc(struct benchrun *b, const struct runrec *r)
{
	json_t *doc = json_object();

	json_object_set_new(doc, "run", json_null());
	json_object_set_new(doc, "created", json_string(r->created));
	json_object_set_new(doc, "nastune", json_string(NASTUNE_VERSION));
	json_object_set_new(doc, "results", bench_results_to_json(&b->all));
	json_object_set_new(doc, "baselines", b->baselines);
	json_object_set_new(doc, "errors", b->errors);
	json_object_set_new(doc, "agents", b->agents);
	b->baselines = json_array();
	b->errors = json_array();
	b->agents = json_array();
	json_object_set_new(doc, "hw_hash", json_string(r->hw_hash));
	json_object_set_new(doc, "hw", json_string(r->hw));
	json_object_set_new(doc, "options",
			    json_pack("{s:I, s:i, s:i, s:s}", "size",
				      (json_int_t)(b->o.size ? b->o.size : BENCH_DEFAULT_SIZE),
				      "repeat", b->o.repeats ? b->o.repeats : BENCH_DEFAULT_REPEATS,
				      "warmup", b->o.warmup, "cache",
				      b->o.drop_caches ? "cold" : "hot"));
	json_object_set_new(doc, "generation",
			    r->generation >= 0 ? json_integer(r->generation) : json_null());
	return doc;
}

int
benchrun_store(struct benchrun *b, const char *root, json_t **doc, long *run_id, char *err,
	       size_t errlen)
{
	struct state *st = NULL;
	struct runrec r;
	char *text;
	int rc;

	*run_id = -1;
	if ((rc = state_open(root, &st, err, errlen)) < 0)
		st = NULL;
	if (runrec_read(&r, st) < 0)
		log_warnx("bench: cannot read the hardware fingerprint");
	*doc = run_doc(b, &r);
	if (!st) {
		runrec_clear(&r);
		return rc;
	}
	text = json_dumps(*doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	rc = state_add_bench_run(st, r.created, r.generation, r.hw_hash, text, run_id);
	free(text);
	if (rc == 0) {
		json_object_set_new(*doc, "run", json_integer(*run_id));
		text = json_dumps(*doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
		rc = state_set_bench_run_json(st, *run_id, text);
		free(text);
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot store the run in the state database");
		*run_id = -1;
	}
	runrec_clear(&r);
	state_close(st);
	return rc;
}

int
benchrun_select(struct benchrun *b, const char *protos, const char *wls, const char *videos,
		char *err, size_t errlen)
{
	char *copy, *save = NULL, *tok;
	size_t i;
	int rc = 0, w;

	copy = xstrdup(protos ? protos : "");
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
		if (!units_in_list("null,posix,smb,nfs,afp", tok)) {
			snprintf(err, errlen, "unknown protocol '%s' (null, posix, smb, nfs, afp)",
				 tok);
			rc = -EINVAL;
		}
	free(copy);
	for (i = 0; i < BENCH_NWORKLOADS; i++)
		b->wl[i] = !wls;
	copy = xstrdup(wls ? wls : "");
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		if ((w = bench_workload_parse(tok)) < 0) {
			snprintf(err, errlen, "unknown workload '%s' — see `nastune bench --help`",
				 tok);
			rc = -EINVAL;
		} else {
			b->wl[w] = true;
		}
	}
	free(copy);
	copy = xstrdup(videos ? videos : "");
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		struct benchrun_video *v = &b->videos[b->nvideo];

		if (b->nvideo == BENCHRUN_MAX_VIDEO ||
		    bench_video_parse(tok, &v->fmt, &v->fps) < 0) {
			snprintf(err, errlen,
				 "--video '%s' is not FORMAT@FPS with a known format (see --help) "
				 "and 1-240 fps",
				 tok);
			rc = -EINVAL;
		} else {
			b->nvideo++;
		}
	}
	free(copy);
	return rc;
}

int
benchrun_clients(struct benchrun *b, const char *root, const struct model *m, char *const *clients,
		 size_t nclients, const char *token, const char *protos)
{
	struct agent_errors errors = { 0 };
	struct agent_factset agents = { 0 };
	int rc = agentctl_bench(root, m, clients, nclients, token, protos, b->wl, &b->o, &b->all,
				&errors, &agents);

	agent_errors_json(&errors, b->errors);
	agent_factset_json(&agents, b->agents);
	agent_errors_clear(&errors);
	agent_factset_clear(&agents);
	return rc;
}
