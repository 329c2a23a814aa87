/* tune/machine.c - the real machine behind `nastune tune` (tune_machine.h): the loopback
 * targets, trial installs and bench runs, the agents and the NIC MTU given to the search
 * (tune/search.c) as its callbacks; the resume lookup, the recording in the state store, and
 * the winner applied as a generation. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cluster.h"
#include "agentctl.h"
#include "apply.h"
#include "bench.h"
#include "fsutil.h"
#include "hwinfo.h"
#include "knobs.h"
#include "log.h"
#include "model.h"
#include "netif.h"
#include "render.h"
#include "runrec.h"
#include "search_api.h"
#include "service.h"
#include "sigstop.h"
#include "state.h"
#include "timeutil.h"
#include "tune.h"
#include "tune_machine.h"
#include "xmalloc.h"

/* Runs of each workload when the clients are measured at the start and at the end: for the
 * protocol choice and the report, not for a decision. */
#define CLIENT_RUNS 2
/* A run the tune compares is time-boxed to about this many seconds: the first run on a
 * target sizes the files of all the later ones (never below RUN_MIN_SIZE), so that a slow or
 * loaded machine still measures enough pairs for a verdict. */
#define RUN_BOX_S 0.3
#define RUN_MIN_SIZE (8ull << 20)
#define RUN_MIN_FILES 20
/* metadata's entries in the first run (time-boxed from there, like small-files' count) */
#define META_ENTRIES 200

struct ttarget {
	struct bench_target t;
	const struct bench_driver *d;
	/* The scratch directory the tune's loopback runs keep on this target (seq-read's file
	 * is written once, not in every short call); removed when the tune ends. */
	char keep[192];
	bool used; /* a run was started on it: keep may exist */
	/* Its runs' file size and small-files count, fixed by its first run of the tune. */
	uint64_t size;
	unsigned small_files, meta_entries, tree_files, dir_ops;
	bool sized;
};

struct tuner {
	const struct tune_machine_opts *o;
	struct model *m;
	struct ttarget *tg;
	size_t ntg;
	bool wl[BENCH_NWORKLOADS];
	unsigned wlmask;
	struct bench_opts bo;
	struct apply_opts ao;
	json_t *doc; /* the tune document being built */
	struct state *st;
	long id;
	/* The clients (agents), for the clients and MTU steps. */
	char *const *clients;
	size_t nclients;
	const char *token;
	struct bench_results cl_before;
	struct agent_factset agents; /* each agent's facts, as the clients step found them */
	struct agent_errors errors;  /* every client job that failed, and every agent not reached */
	struct tuner_kept *resume;   /* an interrupted tune's decisions (KNOB_COUNT), or NULL */
	struct bench_baseline bl;    /* the bottlenecks' baselines, measured after the search */
	char **resolved;	     /* the clients as HOST:PORT, looked up once ("auto": mDNS) */
};

/* ---- targets: one writable, non-Time-Machine share per enabled protocol, over loopback ---- */

static void
pick_targets(struct tuner *t, const char *creds)
{
	static const struct {
		const char *name;
		unsigned bit;
	} ps[] = { { "smb", PROTO_SMB }, { "nfs", PROTO_NFS }, { "afp", PROTO_AFP } };
	const struct model *m = t->m;
	char host[64] = "127.0.0.1";
	size_t k, i;

	/* A cluster node is measured as clients reach it: through a public address it holds
	 * (a trial is installed on this node only, so that is where it is measured). */
	if (m->cluster.enabled && cluster_local_public(m, host, sizeof(host)) < 0)
		log_warnx("tune: this node holds no public address now; measuring over loopback");

	for (k = 0; k < 3; k++) {
		bool enabled = k == 0 ? m->smb.enabled : k == 1 ? m->nfs.enabled : m->afp.enabled;
		const struct bench_driver *d = bench_driver_find(ps[k].name);

		if (!enabled || !d)
			continue;
		/* NFS: guest exports first (their clients include us). SMB and AFP: with a login,
		 * a share that needs it first (what users do), else a guest share. */
		for (size_t pass = 0, found = 0; pass < 2 && !found; pass++)
			for (i = 0; i < m->n_shares && !found; i++) {
				const struct share *s = &m->shares[i];
				char err[512], *esc, *url;
				struct ttarget tt = { .d = d };
				bool guest_first = k == 1 || !creds;

				if (!(s->protocols & ps[k].bit) || s->tm_enabled || s->read_only ||
				    s->guest != (guest_first ? pass == 0 : pass == 1) ||
				    (k == 1 && !model_nfs_loopback_ok(s)))
					continue;
				if (!s->guest && !creds && k != 1)
					continue; /* needs a login we do not have */
				esc = bench_url_escape(k == 1 ? s->path : s->name);
				if (k == 1) {
					/* As the share's owner: non-guest exports squash root. */
					char *local = fs_rooted(t->o->root, s->path);
					struct stat sb;

					if (stat(local, &sb) == 0)
						url = xasprintf(
							"nfs://%s%s?version=3&uid=%u&gid=%u", host,
							esc, (unsigned)sb.st_uid,
							(unsigned)sb.st_gid);
					else
						url = xasprintf("nfs://%s%s?version=3", host, esc);
					free(local);
				} else {
					url = xasprintf("%s://%s/%s", ps[k].name, host, esc);
				}
				free(esc);
				if (bench_target_parse(url, &tt.t, err, sizeof(err)) < 0) {
					log_warnx("tune: %s", err);
					free(url);
					continue;
				}
				free(url);
				if (!s->guest && creds &&
				    bench_target_credentials(&tt.t, creds, err, sizeof(err)) < 0) {
					log_warnx("tune: %s", err);
					bench_target_clear(&tt.t);
					continue;
				}
				bench_scratch_name(tt.keep, sizeof(tt.keep), "tune");
				t->tg = xreallocarray(t->tg, t->ntg + 1, sizeof(*t->tg));
				t->tg[t->ntg++] = tt;
				t->m->shares[i].trial_semantics = true; /* measured, not applied */
				found = 1;
			}
	}
}

/* ---- measuring ---- */

static unsigned
target_proto(const struct ttarget *tt)
{
	return model_proto_bit(tt->d->name);
}

/* A count n whose run took took seconds, scaled to per seconds (never below least, nor
 * above n). */
static unsigned
boxed(unsigned n, unsigned least, bool measured, double took, double per)
{
	unsigned v = measured && took > per ? (unsigned)((double)n * per / took) : n;

	return v >= least ? v : n < least ? n : least;
}

/* The seconds big-dir's timed operations took in the results from `from` on (its first call
 * also made the directory, which later calls keep): each kind's count over its rate, the
 * unlinks (untimed) as long as the creates. */
static double
bigdir_timed(const struct bench_results *rs, size_t from, unsigned entries)
{
	unsigned n = entries < BENCH_DIR_OPS ? entries : BENCH_DIR_OPS;
	double s = 0;

	for (size_t i = from; i < rs->n; i++) {
		const struct bench_result *r = &rs->v[i];
		bool list = strcmp(r->metric, "list") == 0;

		if (!r->workload || strcmp(r->workload, "big-dir") != 0 ||
		    strcmp(r->unit, "ops/s") != 0 || !r->nruns || !(r->runs[0] > 0))
			continue;
		s += (list ? entries + n : n) / r->runs[0] * (strcmp(r->metric, "create") ? 1 : 2);
	}
	return s;
}

/* Fixes tt's runs from its first one (o, and what each workload took): the call should last
 * about RUN_BOX_S, shared by its workloads; the bulk ones scale their file size (never below
 * RUN_MIN_SIZE), small-files its count (never below RUN_MIN_FILES), big-dir its operations
 * (never below RUN_MIN_FILES) but not its directory, whose size is what it measures. */
static void
time_box(struct ttarget *tt, const struct bench_opts *o, const bool *wl, const double *took)
{
	unsigned nwl = 0, nseq = wl[BENCH_SEQ_WRITE] + wl[BENCH_SEQ_READ];
	double seq = took[BENCH_SEQ_WRITE] + took[BENCH_SEQ_READ], per;
	uint64_t size = o->size;
	unsigned files, ops = o->meta_entries && o->meta_entries < BENCH_DIR_OPS ? o->meta_entries
										 : BENCH_DIR_OPS;

	for (int w = 0; w < BENCH_NWORKLOADS; w++)
		nwl += wl[w];
	per = RUN_BOX_S / (nwl ? nwl : 1);
	if (nseq && seq > per * nseq)
		size = (uint64_t)((double)o->size * per * nseq / seq) & ~((1ull << 20) - 1);
	if (size < RUN_MIN_SIZE)
		size = o->size < RUN_MIN_SIZE ? o->size : RUN_MIN_SIZE;
	files = boxed(o->small_files, RUN_MIN_FILES, wl[BENCH_SMALL_FILES], took[BENCH_SMALL_FILES],
		      per);
	tt->dir_ops = boxed(ops, RUN_MIN_FILES, wl[BENCH_BIG_DIR], took[BENCH_BIG_DIR], per);
	tt->meta_entries =
		boxed(META_ENTRIES, RUN_MIN_FILES, wl[BENCH_METADATA], took[BENCH_METADATA], per);
	tt->tree_files = boxed(o->tree_files, RUN_MIN_FILES, wl[BENCH_SOURCE_TREE],
			       took[BENCH_SOURCE_TREE], per);
	tt->size = size;
	tt->small_files = files;
	tt->sized = true;
	if (size < o->size || files < o->small_files)
		log_info(
			"tune: runs on %s time-boxed to %llu MiB and %u files (a first run of %llu "
			"MiB and %u files took %.1fs)",
			tt->t.url, (unsigned long long)(size >> 20), files,
			(unsigned long long)(o->size >> 20), o->small_files,
			seq + took[BENCH_SMALL_FILES]);
	if (wl[BENCH_BIG_DIR] && tt->dir_ops < ops)
		log_info("tune: big-dir on %s times %u operations of each kind in %u entries (%u "
			 "took %.1fs)",
			 tt->t.url, tt->dir_ops, o->meta_entries, ops, took[BENCH_BIG_DIR]);
}

/* Measures the configuration in force: every goal workload on every target of protos. Returns
 * 0 with the per-run scores (caller frees) and the results appended to out, or -errno. */
static int
measure(struct tuner *t, unsigned protos, double **scores, size_t *n, struct bench_results *out,
	char *err, size_t errlen)
{
	struct bench_results rs = { 0 };
	size_t i;
	int w, rc = 0;

	/* One connection per target for every workload of the call, a new one at each call: a
	 * switch may change what a session negotiates (signing, encryption), and calls are the
	 * units the windows pair (tune/search.c). */
	for (i = 0; i < t->ntg && rc == 0; i++) {
		struct bench_session *bs = NULL;
		double took[BENCH_NWORKLOADS] = { 0 };
		size_t from;

		if (!(target_proto(&t->tg[i]) & protos))
			continue;
		for (w = 0; w < BENCH_NWORKLOADS && rc == 0; w++) {
			struct bench_opts bo = t->bo;
			double t0 = timeutil_mono();

			if (!t->wl[w])
				continue;
			if (t->tg[i].sized) {
				bo.size = t->tg[i].size;
				bo.small_files = t->tg[i].small_files;
				bo.tree_files = t->tg[i].tree_files;
				bo.dir_ops = t->tg[i].dir_ops;
			}
			if (w == BENCH_METADATA) /* big-dir's --entries are not its */
				bo.meta_entries =
					t->tg[i].sized ? t->tg[i].meta_entries : META_ENTRIES;
			bo.keep_scratch = t->tg[i].keep;
			t->tg[i].used = true;
			from = rs.n;
			if (sigstop_caught)
				rc = -EINTR;
			else if (bs || (rc = bench_session_open(t->tg[i].d, &t->tg[i].t, &bs, err,
								errlen)) == 0)
				rc = bench_session_run(bs, (enum bench_workload)w, &bo, &rs, err,
						       errlen);
			took[w] = w == BENCH_BIG_DIR && rc == 0
					  ? bigdir_timed(&rs, from, bo.meta_entries)
					  : timeutil_mono() - t0;
		}
		bench_session_close(bs);
		if (rc == 0 && !t->tg[i].sized && t->bo.repeats == 1 && !t->bo.warmup)
			time_box(&t->tg[i], &t->bo, t->wl, took);
	}
	if (rc == 0 && (rc = tune_scores(&rs, 0, scores, n)) < 0)
		snprintf(err, errlen, "no throughput result to score");
	if (rc == 0 && out)
		for (i = 0; i < rs.n; i++)
			bench_results_add(out, &rs.v[i]);
	bench_results_clear(&rs);
	return rc;
}

/* The workloads measured through the clients: the goal's bulk transfers when it has any
 * (the network path carries those, and the protocol choice compares MB/s), else the goal's. */
static void
client_workloads(const struct tuner *t, bool *wl)
{
	memcpy(wl, t->wl, BENCH_NWORKLOADS * sizeof(*wl));
	if (wl[BENCH_SEQ_WRITE] || wl[BENCH_SEQ_READ])
		for (int w = 0; w < BENCH_NWORKLOADS; w++)
			wl[w] = wl[w] && (w == BENCH_SEQ_WRITE || w == BENCH_SEQ_READ);
}

/* ---- the tuner's callbacks: the real machine ---- */

static int measure_clients(struct tuner *t, unsigned protos, unsigned runs, unsigned warmup,
			   double **sc, size_t *n, struct bench_results *keep, char *err,
			   size_t errlen);

static int
cb_measure(void *arg, unsigned protos, unsigned runs, unsigned warmup, double *scores,
	   struct bench_results *keep, char *err, size_t errlen)
{
	struct tuner *t = arg;
	unsigned full = t->bo.repeats;
	double *sc = NULL;
	size_t n = 0;
	int rc;

	/* The tuner says how many warm-up runs: none in a window's blocks, where both sides of
	 * every pair hold the same place in their blocks (search_api.h). */
	t->bo.repeats = runs;
	t->bo.warmup = warmup;
	if (protos & TUNER_CLIENTS)
		rc = measure_clients(t, protos & ~TUNER_CLIENTS, runs, warmup, &sc, &n, keep, err,
				     errlen);
	else
		rc = measure(t, protos, &sc, &n, keep, err, errlen);
	t->bo.repeats = full;
	t->bo.warmup = 1;
	if (rc == 0 && n < runs) {
		snprintf(err, errlen, "%zu of %u runs could be scored", n, runs);
		rc = -EIO;
	}
	if (rc == 0)
		memcpy(scores, sc, runs * sizeof(*scores));
	free(sc);
	return rc;
}

/* Renders m with the tune's templates. Returns 0, or -1 after logging. */
static int
render_model(const struct tuner *t, const struct model *m, struct rendered *r)
{
	char err[512];

	if (render_all(m, t->o->tmpl, 0, r, err, sizeof(err)) < 0) {
		log_warnx("rendering failed: %s — fix the template", err);
		return -1;
	}
	return 0;
}

static int
cb_install(void *arg, const struct model *m, char *err, size_t errlen)
{
	struct tuner *t = arg;
	struct rendered r = { 0 };
	struct apply_result res = { 0 };
	unsigned daemons = (1u << SVC_SMB) | (1u << SVC_NFS) | (1u << SVC_AFP) | (1u << SVC_MDNS);
	int rc;

	if (render_model(t, m, &r) < 0) {
		snprintf(err, errlen, "cannot render the trial configuration");
		return -EINVAL;
	}
	rc = apply_run(m, &r, &t->ao, &res) == 0 ? 0 : -EIO;
	render_clear(&r);
	if (rc < 0)
		snprintf(err, errlen, "the trial configuration could not be installed (see above)");
	/* Every switch ends with the same pause, whatever it wrote: an install that slept in
	 * I/O (fsync) earned the next runs more CPU against a busy machine (+12.5% for the
	 * candidate's first run after its install, +5% for the incumbent's, in loaded traces);
	 * after the pause both sides start from the same state. A switch that reloaded a
	 * daemon has had it already: both sides waited for the daemon in its check. */
	else if (!((res.reloaded | res.restarted) & daemons))
		usleep(50000);
	apply_result_clear(&res);
	return rc;
}

static double
cb_clock(void *arg)
{
	(void)arg;
	return timeutil_mono();
}

static void
cb_progress(void *arg, const char *line)
{
	(void)arg;
	log_info("%s", line);
}

static bool
cb_stopped(void *arg)
{
	(void)arg;
	return sigstop_caught != 0;
}

/* The document as it is now into the state store. */
static void
save(struct tuner *t)
{
	char *text;

	if (!t->st || t->id < 0)
		return;
	text = json_dumps(t->doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (state_set_tune(t->st, t->id, text) < 0)
		log_warnx("tune: cannot save progress in the state database");
	free(text);
}

/* The search's result so far into the document, kept (resume after an interruption). */
static void
cb_save(void *arg, const struct tuner_result *r)
{
	struct tuner *t = arg;

	tuner_result_json(r, t->doc);
	save(t);
}

static void
cb_clients(void *arg)
{
	struct tuner *t = arg;
	struct bench_opts cbo = t->bo;
	bool wl[BENCH_NWORKLOADS];

	cbo.repeats = CLIENT_RUNS;
	cbo.stop = &sigstop_caught;
	client_workloads(t, wl);
	if (agentctl_bench(t->o->root, t->m, t->clients, t->nclients, t->token, NULL, wl, &cbo,
			   &t->cl_before, &t->errors, &t->agents) < 0)
		log_warnx("tune: some client measurements failed (see errors)");
}

/* The loopback NFS target mounts NFSv3 (libnfs, one version per target): a versions value
 * without 3 cannot be measured with it. */
static bool
cb_measurable(void *arg, const struct knob *k, const char *v, char *why, size_t whylen)
{
	struct tuner *t = arg;

	if (k->id != KNOB_NFS_VERSIONS || (v && strchr(v, '3')))
		return true;
	for (size_t i = 0; i < t->ntg; i++)
		if (target_proto(&t->tg[i]) == PROTO_NFS) {
			snprintf(why, whylen,
				 "the tune's loopback NFS target mounts NFSv3, which "
				 "nfs.versions = %s does not serve (set it in nastune.conf to "
				 "use it)",
				 v ? v : "(default)");
			return false;
		}
	return true;
}

/* ---- the MTU step's machine: the probe, the NIC, the clients ---- */

/* The MTU step's probe (search_api.h): the largest MTU up to 9216 that every peer (network.peers
 * and the agents) receives with don't-fragment set and uses itself (the agents' facts), as
 * network.mtu "auto" finds it; the MTU in force is put back. */
static int
cb_mtu_probe(void *arg, int *cur, int *next, char *why, size_t whylen)
{
	struct tuner *t = arg;
	const struct model *m = t->m;
	struct netif_mtu_report rep = { 0 };
	const char **peers = NULL;
	char err[768], from[256];
	double *b = NULL;
	size_t nb = 0, np = 0, i;
	const struct tune_agents ag = { t->agents.v, t->agents.n };
	int rc = -EINVAL, ceiling;

	*cur = *next = 0;
	if (!m->network.interface || m->network.mtu_mode == MTU_FIXED) {
		snprintf(why, whylen, "%s",
			 m->network.interface ? "network.mtu is fixed in nastune.conf"
					      : "network.interface is not set");
		return -EINVAL;
	}
	if (netif_get_mtu(m->network.interface, cur) < 0)
		*cur = 0;
	*next = *cur;
	if (tune_scores(&t->cl_before, 0, &b, &nb) < 0) {
		snprintf(why, whylen, "no client result at the current MTU to compare with");
		return -ENOENT;
	}
	free(b);
	for (i = 0; i < m->network.peers.n; i++) {
		peers = xreallocarray(peers, np + 1, sizeof(*peers));
		peers[np++] = m->network.peers.v[i];
	}
	for (i = 0; i < ag.n; i++) {
		const char *a = ag.v[i].address;

		if (a && *a) { /* the agent's own address on the way to us (its facts) */
			peers = xreallocarray(peers, np + 1, sizeof(*peers));
			peers[np++] = a;
		}
	}
	if (!np) {
		snprintf(why, whylen, "no peer to prove an MTU against");
		goto out;
	}
	/* Never above what the clients send with themselves (their facts). */
	ceiling = tune_mtu_ceiling(&ag, from, sizeof(from));
	log_info("tune: probing the largest MTU every peer receives on %s", m->network.interface);
	rc = netif_mtu_ensure(m->network.interface, NETIF_MTU_AUTO, ceiling, peers, np, &rep, err,
			      sizeof(err));
	if (rep.old_mtu > 0)
		*cur = rep.old_mtu;
	if (rc < 0) {
		snprintf(why, whylen, "%.300s", err);
		goto out;
	}
	*next = rep.final_mtu;
	if (rep.changed && netif_set_mtu(m->network.interface, rep.old_mtu, err, sizeof(err)) < 0)
		log_warnx("tune: MTU %d: %s", rep.old_mtu, err);
	if (!rep.changed && rep.peers_mtu)
		snprintf(why, whylen, "%d kept: the peers use MTU %d themselves (%.64s)%s",
			 rep.old_mtu, rep.peers_mtu,
			 strcmp(rep.peers_mtu_from, "their facts") ? rep.peers_mtu_from : from,
			 rep.tried_mtu ? ", whatever more their NICs receive" : "");
	else if (!rep.changed)
		snprintf(why, whylen, "no larger MTU reaches every peer (tried %d)", rep.tried_mtu);
out:
	netif_mtu_report_clear(&rep);
	free(peers);
	return rc;
}

static int
cb_mtu_set(void *arg, int mtu, char *err, size_t errlen)
{
	struct tuner *t = arg;

	return netif_set_mtu(t->m->network.interface, mtu, err, errlen);
}

/* One measure call through the clients: the goal's workloads on one share over the first of
 * protos it serves (the tune's first target's share and protocol when protos names none),
 * `runs` runs on every agent. */
static int
measure_clients(struct tuner *t, unsigned protos, unsigned runs, unsigned warmup, double **sc,
		size_t *n, struct bench_results *keep, char *err, size_t errlen)
{
	static const char *const names[] = { "smb", "nfs", "afp" };
	struct model one = *t->m;
	struct bench_opts bo = t->bo;
	struct bench_results cl = { 0 };
	const char *proto = NULL;
	bool wl[BENCH_NWORKLOADS];
	int rc;

	for (size_t i = 0; i < t->ntg && !proto; i++)
		if (target_proto(&t->tg[i]) & (protos ? protos : ~0u))
			proto = names[__builtin_ctz(target_proto(&t->tg[i]))];
	one.n_shares = 0;
	for (size_t i = 0; i < t->m->n_shares && proto && !one.n_shares; i++) {
		const struct share *s = &t->m->shares[i];

		if (!s->tm_enabled && !s->read_only && (s->protocols & model_proto_bit(proto))) {
			one.shares = &t->m->shares[i];
			one.n_shares = 1;
		}
	}
	client_workloads(t, wl);
	bo.repeats = runs;
	bo.warmup = warmup;
	bo.stop = &sigstop_caught;
	bo.quiet = true; /* the trials' progress is the tune's own lines */
	(void)agentctl_bench(t->o->root, &one, t->clients, t->nclients, t->token, proto, wl, &bo,
			     &cl, &t->errors, NULL);
	rc = tune_scores(&cl, 0, sc, n);
	if (rc < 0)
		snprintf(err, errlen, "no client result over %s (see errors)", proto ? proto : "?");
	for (size_t i = 0; rc == 0 && keep && i < cl.n; i++)
		bench_results_add(keep, &cl.v[i]);
	bench_results_clear(&cl);
	return sigstop_caught ? -EINTR : rc;
}

/* ---- advice for client classes ---- */

static void attribute(const struct tuner *t, struct bench_results *rs);
static void baselines(struct tuner *t, uint64_t size);

/* The tune itself and the winner applied. Returns 0, 1 when the winner could not be applied
 * (the previous configuration is in force), or -1 when the tune must be undone (interrupted,
 * or a measurement failed). */
static int
run_tune(struct tuner *t, struct tuner_opts *o, struct tuner_result *res,
	 struct bench_results *cl_after, bool dry_run)
{
	struct tuner_ops ops = { .arg = t,
				 .install = cb_install,
				 .measure = cb_measure,
				 .clock = cb_clock,
				 .progress = cb_progress,
				 .stopped = cb_stopped,
				 .save = cb_save,
				 .clients = t->nclients ? cb_clients : NULL,
				 .mtu_probe = t->nclients ? cb_mtu_probe : NULL,
				 .mtu_set = cb_mtu_set,
				 .measurable = cb_measurable };
	char err[1024];
	int rc;

	for (size_t i = 0; i < t->ntg; i++)
		o->protos |= target_proto(&t->tg[i]);
	rc = tuner_run(t->m, o, &ops, res, err, sizeof(err));
	for (size_t i = 0; i < t->m->n_shares; i++)
		t->m->shares[i].trial_semantics = false; /* what is applied has a consent */
	tuner_result_json(res, t->doc);
	if (rc == -EINTR || sigstop_caught) {
		log_warnx("tune: interrupted by %s",
			  sigstop_caught == SIGINT ? "SIGINT" : "SIGTERM");
		return -1;
	}
	if (rc < 0) {
		log_warnx("tune: %s", err);
		return -1;
	}
	baselines(t, t->o->size);
	attribute(t, &res->after);
	/* The winner: back to the configuration before the trials, then apply it for real. */
	if (apply_end_trials(t->m, &t->ao) != 0)
		return -1;
	/* The MTU needs no after-score over loopback (only clients cross the NIC), but its
	 * generation records it. */
	if ((res->changed || res->dec[KNOB_NET_MTU].applied) && !dry_run) {
		struct rendered r = { 0 };
		struct apply_opts ao = { .root = t->o->root,
					 .reason = "tune",
					 .lock_timeout_s = 60 };

		if (render_model(t, t->m, &r) < 0 || apply_run(t->m, &r, &ao, NULL) != 0) {
			render_clear(&r);
			log_warnx(
				"tune: the chosen configuration could not be applied; the previous "
				"one is in force");
			return 1;
		}
		render_clear(&r);
	} else if (!res->changed && !res->dec[KNOB_NET_MTU].applied) {
		log_info("tune: no candidate was measured better; the configuration is "
			 "unchanged");
	}
	/* What clients get now (the core kept time for it). */
	if (t->nclients && !dry_run && !res->clients_after) {
		log_warnx("tune: the clients are not measured again: no time left in the budget");
		json_object_set_new(t->doc, "clients_after_skipped",
				    json_string("no time left in the budget"));
	} else if (t->nclients && !dry_run) {
		struct bench_opts cbo = t->bo;
		bool wl[BENCH_NWORKLOADS];

		cbo.repeats = CLIENT_RUNS;
		client_workloads(t, wl);
		agentctl_bench(t->o->root, t->m, t->clients, t->nclients, t->token, NULL, wl, &cbo,
			       cl_after, &t->errors, NULL);
	}
	return 0;
}

/* The bottlenecks' baselines: raw disk of the first share, TCP over loopback, in the time kept
 * after the search (tune_body), so at most BASELINE_MAX: O_DIRECT needs no more to name the
 * disk's speed, and three passes at the run size (512 MiB) took a 45 s tune to 49 s. */
#define BASELINE_MAX (128ull << 20)
static void
baselines(struct tuner *t, uint64_t size)
{
	struct bench_opts bo = { .size = size && size < BASELINE_MAX ? size : BASELINE_MAX,
				 .stop = &sigstop_caught };
	char *local = NULL, berr[512];

	for (size_t i = 0; i < t->m->n_shares && !local; i++)
		if (!t->m->shares[i].tm_enabled && !t->m->shares[i].read_only)
			local = fs_rooted(t->o->root, t->m->shares[i].path);
	if (local && bench_baseline_disk(local, &bo, &t->bl, berr, sizeof(berr)) < 0)
		log_warnx("tune: raw disk baseline of %s: %s", local, berr);
	bench_baseline_tcp_loopback(bo.size, &t->bl);
	free(local);
}

/* The bottleneck of each result, against the baselines. */
static void
attribute(const struct tuner *t, struct bench_results *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		bench_attribute(&rs->v[i], &t->bl, true);
}

static void
record(struct tuner *t, const struct tuner_result *res, const struct bench_results *cl_after,
       const char *status, double elapsed)
{
	const struct bench_results *cr = cl_after->n ? cl_after : &t->cl_before;
	const struct tune_agents ag = { t->agents.v, t->agents.n };
	struct tune_share *sh = NULL;
	size_t nsh = tune_shares_of(t->m, &sh);
	struct tune_choices choice;
	struct tune_advices adv;

	json_object_set_new(t->doc, "status", json_string(status));
	json_object_set_new(t->doc, "elapsed_s", json_real(elapsed));
	json_object_set_new(t->doc, "results_before", bench_results_to_json(&res->before));
	json_object_set_new(t->doc, "results", bench_results_to_json(&res->after));
	json_object_set_new(t->doc, "clients_before", bench_results_to_json(&t->cl_before));
	json_object_set_new(t->doc, "clients_after", bench_results_to_json(cl_after));
	json_object_set_new(t->doc, "agents", json_array());
	agent_factset_json(&t->agents, json_object_get(t->doc, "agents"));
	json_object_set_new(t->doc, "errors", json_array());
	agent_errors_json(&t->errors, json_object_get(t->doc, "errors"));
	/* What each client should use and mount: only what this NAS serves it. */
	tune_protocol_choice(cr, &ag, sh, nsh, &choice);
	tune_advice(t->m, &ag, &choice, &adv);
	tune_advice_small_work(&adv, cr);
	json_object_set_new(t->doc, "advice", tune_advices_json(&adv));
	json_object_set_new(t->doc, "protocol_choice", tune_choices_json(&choice));
	tune_advices_clear(&adv);
	tune_choices_clear(&choice);
	free(sh);
	save(t);
}

/* The last tune: 1 when --if-changed finds nothing to do; else 0, with *resume the decisions
 * of an interrupted tune of the same hardware and goal (only decisions: measurements from
 * another window never decide). */
static int
previous_tune(struct tuner *t, const char *hwhash, enum tune_goal goal, bool if_changed,
	      struct tuner_kept **resume)
{
	long lid;
	char *lhw = NULL, *ljson = NULL;
	json_t *ld;
	const char *lst, *lgoal;
	int rc = 0;

	if (state_get_tune(t->st, -1, &lid, &lhw, &ljson) != 0)
		return 0;
	ld = json_loads(ljson, 0, NULL);
	lst = json_string_value(json_object_get(ld, "status"));
	lgoal = json_string_value(json_object_get(ld, "goal"));
	if (if_changed && lst && strcmp(lst, "done") == 0 && strcmp(lhw, hwhash) == 0) {
		log_info("nothing to do: the hardware is unchanged since tune %ld", lid);
		rc = 1;
	} else if (lst && strcmp(lst, "running") == 0 && strcmp(lhw, hwhash) == 0 &&
		   json_is_object(json_object_get(ld, "decided")) && lgoal &&
		   strcmp(lgoal, goal_name(goal)) == 0) {
		*resume = xcalloc(KNOB_COUNT, sizeof(**resume));
		tuner_resume_from_json(json_object_get(ld, "decided"), *resume);
		log_info("tune: resuming tune %ld (%zu decision(s) kept; nothing measured then is "
			 "reused)",
			 lid, json_object_size(json_object_get(ld, "decided")));
	}
	json_decref(ld);
	free(lhw);
	free(ljson);
	return rc;
}

/* The tune document, recorded as running. */
static void
start_doc(struct tuner *t, enum tune_goal goal, bool dry_run, bool exhaustive, unsigned budget,
	  const char *hwhash)
{
	time_t now = time(NULL);
	struct tm tm;
	json_t *tj = json_array();
	char created[32], *text;

	gmtime_r(&now, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	for (size_t i = 0; i < t->ntg; i++)
		json_array_append_new(tj, json_string(t->tg[i].t.url));
	t->doc = json_pack("{s:n, s:s, s:s, s:s, s:b, s:b, s:i, s:o}", "tune", "created", created,
			   "status", "running", "goal", goal_name(goal), "dry_run", dry_run,
			   "exhaustive", exhaustive, "budget_s", (int)budget, "targets", tj);
	text = json_dumps(t->doc, JSON_COMPACT);
	if (state_add_tune(t->st, created, -1, hwhash, text, &t->id) < 0)
		log_warnx("tune: cannot record the tune in the state database");
	free(text);
	json_object_set_new(t->doc, "tune", json_integer(t->id));
}

/* Undoes the trials after an interruption or a failed measurement. */
static void
restore(struct tuner *t)
{
	log_warnx("tune: aborted; restoring the configuration in force before the tune");
	if (apply_end_trials(t->m, &t->ao) != 0)
		log_warnx("tune: could not restore it now; the next apply or tune will");
	json_object_set_new(t->doc, "status", json_string("aborted"));
	save(t);
}

/* Removes the scratch directories the tune kept and frees the targets. */
static void
targets_release(struct tuner *t)
{
	for (size_t i = 0; i < t->ntg; i++) {
		char e[512];

		if (t->tg[i].used &&
		    bench_scratch_remove(t->tg[i].d, &t->tg[i].t, t->tg[i].keep, e, sizeof(e)) < 0)
			log_warnx("tune: %s", e);
	}
	for (size_t i = 0; i < t->ntg; i++)
		bench_target_clear(&t->tg[i].t);
	free(t->tg);
	t->tg = NULL;
	t->ntg = 0;
}

/* The tune from its first trial to the recorded document: what is left of the budget goes to
 * the search, less time for what follows it (the winner applied or the trials ended, the
 * bottlenecks' baselines, the report): 5%, from 1 to 10 s. */
static enum tune_machine_rc
tune_body(struct tuner *t, const struct tune_machine_opts *mo, double t0)
{
	const struct tune_machine_opts *o = mo;
	double after = o->budget_s * 0.05 < 1	 ? 1
		       : o->budget_s * 0.05 > 10 ? 10
						 : o->budget_s * 0.05;
	struct tuner_opts to = { .wlmask = t->wlmask,
				 .goal = goal_name(o->goal),
				 .pairs = o->repeats,
				 .budget_s = o->budget_s - (timeutil_mono() - t0) - after,
				 .sel = o->sel,
				 .exhaustive = o->exhaustive,
				 .clients_after = t->nclients && !o->dry_run,
				 .clients_decide = t->nclients > 0,
				 .clients_none = o->nclients && !t->nclients,
				 .sysctl_inert = !service_sysctl_live(t->m, o->root),
				 .resume = t->resume,
				 .alpha = o->alpha };
	struct tuner_result res = { 0 };
	struct bench_results cl_after = { 0 };
	enum tune_machine_rc status = TUNE_MACHINE_ERROR;
	int rc;

	/* Whatever an interrupted tune left installed goes first. */
	if (apply_end_trials(t->m, &t->ao) != 0) {
		restore(t);
		goto out;
	}
	rc = run_tune(t, &to, &res, &cl_after, o->dry_run);
	if (rc < 0) {
		restore(t);
		goto out;
	}
	status = rc == 0 ? TUNE_MACHINE_DONE : TUNE_MACHINE_APPLY_FAILED;
	record(t, &res, &cl_after,
	       status == TUNE_MACHINE_DONE ? (o->dry_run ? "dry-run" : "done") : "failed",
	       timeutil_mono() - t0);
out:
	tuner_result_release(&res);
	bench_results_clear(&cl_after);
	return status;
}

/* big-dir's directory and source-tree's files unless given: a 2000-entry directory took 8 s
 * to make and measure over SMB in the lab, 6000 took 22 s; a demo-sized budget gets a
 * quarter. balanced gets a quarter too: its bulk transfers share the budget. */
static unsigned
sized(unsigned given, unsigned full, unsigned budget_s)
{
	return given ? given : budget_s < 300 ? full / 4 : full;
}

enum tune_machine_rc
tune_machine_run(struct model *m, const struct tune_machine_opts *o, json_t **doc)
{
	struct tuner t = { .o = o, .m = m, .id = -1 };
	struct hwinfo hw = { 0 };
	struct sigaction old_sig[2];
	enum tune_machine_rc status = TUNE_MACHINE_ERROR;
	char err[1024], hwhash[65];
	double t0;

	*doc = NULL;
	if (runrec_read_hw(&hw) < 0)
		log_warnx("tune: cannot read the hardware fingerprint");
	hwinfo_hash(&hw, hwhash);
	if (state_open(o->root, &t.st, err, sizeof(err)) < 0) {
		log_warnx("tune: %s", err);
		goto out;
	}
	/* A previous tune: --if-changed compares fingerprints; a tune that was interrupted with
	 * the same configuration and hardware resumes from its decisions. */
	if (previous_tune(&t, hwhash, o->goal, o->if_changed, &t.resume) > 0) {
		status = TUNE_MACHINE_NOTHING;
		goto out;
	}
	t.wlmask = tune_goal_workloads(o->goal, t.wl);
	pick_targets(&t, o->creds);
	if (!t.ntg) {
		log_warnx(
			"tune: nothing to measure: no enabled protocol has a writable share this "
			"host can log in to (give --credentials FILE for shares with valid users)");
		goto out;
	}
	/* clang-format off */
	t.bo = (struct bench_opts){ .size = o->size, .repeats = o->repeats, .warmup = 1,
				    .cache = BENCH_CACHE_HOT, .small_files = 200,
				    .video_seconds = 3, .stop = &sigstop_caught,
				    .meta_entries = sized(o->entries,
							  o->goal == GOAL_BALANCED ? 1000 : 4000,
							  o->budget_s),
				    .tree_files = sized(o->tree_files, 1000, o->budget_s) };
	/* clang-format on */
	t.ao = (struct apply_opts){ .root = o->root, .trial = true, .lock_timeout_s = 60 };
	t.clients = o->clients, t.nclients = o->nclients, t.token = o->token;
	/* The agents are measured dozens of times: "auto" is browsed for once. */
	if (o->nclients) {
		size_t n = agentctl_resolve(o->clients, o->nclients, &t.resolved);

		if (n)
			t.clients = t.resolved, t.nclients = n;
		else { /* every client screen would fail, each knob on the path "failed" */
			log_warnx("tune: no client agent answered (--clients): the knobs on the "
				  "network path are not tried");
			t.nclients = 0;
		}
	}

	sigstop_catch(old_sig);
	signal(SIGPIPE, SIG_IGN);
	t0 = timeutil_mono();
	start_doc(&t, o->goal, o->dry_run, o->exhaustive, o->budget_s, hwhash);
	status = tune_body(&t, o, t0);
	targets_release(&t);
	sigstop_restore(old_sig);
	if (status == TUNE_MACHINE_DONE || status == TUNE_MACHINE_APPLY_FAILED)
		*doc = json_incref(t.doc);
out:
	targets_release(&t);
	bench_results_clear(&t.cl_before);
	agent_factset_clear(&t.agents);
	agent_errors_clear(&t.errors);
	tuner_resume_release(t.resume);
	free(t.resume);
	json_decref(t.doc);
	for (size_t i = 0; t.resolved && t.resolved[i]; i++)
		free(t.resolved[i]);
	free(t.resolved);
	hwinfo_clear(&hw);
	state_close(t.st);
	return status;
}
