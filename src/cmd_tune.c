/* cmd_tune.c - `nastune tune`: baseline, then a budget-bounded coordinate descent over the knob
 * table with real measurements (each candidate installed as an unrecorded trial), the winner
 * applied as a generation, every decision explained. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "buf.h"
#include "bench.h"
#include "cli.h"
#include "fsutil.h"
#include "hash.h"
#include "hwinfo.h"
#include "knobs.h"
#include "log.h"
#include "model.h"
#include "netif.h"
#include "render.h"
#include "runrec.h"
#include "sigstop.h"
#include "state.h"
#include "timeutil.h"
#include "tune.h"
#include "units.h"
#include "xmalloc.h"

#define TUNE_USAGE "usage: nastune tune [--budget TIME] [--goal G] [--clients auto|HOST]... " \
	"[--token-file F] [--credentials F]\n" \
	"                    [--knobs LIST] [--exhaustive] [--dry-run] [--if-changed] " \
	"[--size S] [--repeat N]\n"
#define MAX_GRID 64

struct ttarget {
	struct bench_target t;
	const struct bench_driver *d;
};

struct decision {
	const struct knob *k;
	char *before, *after;	/* values; NULL: the daemon's default */
	bool applied, tried;
	char reason[256];
	double effect, p;
};

struct tuner {
	const struct ctx *ctx;
	struct model *m;
	struct ttarget *tg;
	size_t ntg;
	bool wl[BENCH_NWORKLOADS];
	unsigned wlmask;
	struct bench_opts bo;
	struct apply_opts ao;
	json_t *cache;		/* trial key -> [scores] (resume) */
	json_t *doc;		/* the tune document being built */
	struct state *st;
	long id;
	unsigned trials;
	struct bench_results *keep;	/* where measure() also puts its results; NULL */
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
	size_t k, i;

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
				continue;	/* needs a login we do not have */
			esc = bench_url_escape(k == 1 ? s->path : s->name);
			if (k == 1) {
				/* As the share's owner: non-guest exports squash root. */
				char *local = fs_rooted(t->ctx->root, s->path);
				struct stat sb;

				if (stat(local, &sb) == 0)
					url = xasprintf("nfs://127.0.0.1%s?version=3&uid=%u&gid=%u", esc,
							(unsigned)sb.st_uid, (unsigned)sb.st_gid);
				else
					url = xasprintf("nfs://127.0.0.1%s?version=3", esc);
				free(local);
			} else {
				url = xasprintf("%s://127.0.0.1/%s", ps[k].name, esc);
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
			t->tg = xreallocarray(t->tg, t->ntg + 1, sizeof(*t->tg));
			t->tg[t->ntg++] = tt;
			found = 1;
		}
	}
}

/* ---- measuring ---- */

/* Measures the configuration in force: every goal workload on every target. Returns 0 with
 * the per-run scores (caller frees) and the results appended to out, or -errno. */
static unsigned
target_proto(const struct ttarget *tt)
{
	return strcmp(tt->d->name, "smb") == 0 ? PROTO_SMB :
	       strcmp(tt->d->name, "nfs") == 0 ? PROTO_NFS : PROTO_AFP;
}

static int
measure(struct tuner *t, unsigned protos, double **scores, size_t *n, struct bench_results *out,
	char *err, size_t errlen)
{
	struct bench_results rs = { 0 };
	size_t i;
	int w, rc = 0;

	for (i = 0; i < t->ntg && rc == 0; i++)
		for (w = 0; w < BENCH_NWORKLOADS && rc == 0; w++) {
			if (!t->wl[w] || !(target_proto(&t->tg[i]) & protos))
				continue;
			if (sigstop_caught)
				rc = -EINTR;
			else
				rc = bench_run(t->tg[i].d, &t->tg[i].t, (enum bench_workload)w, &t->bo,
					       &rs, err, errlen);
		}
	if (rc == 0 && (rc = tune_scores(&rs, 0, scores, n)) < 0)
		snprintf(err, errlen, "no throughput result to score");
	if (rc == 0 && out)
		for (i = 0; i < rs.n; i++)
			bench_results_add(out, &rs.v[i]);
	bench_results_clear(&rs);
	return rc;
}

/* The key a trial is cached under: every tuned knob's value. */
static char *
trial_key(const struct model *m)
{
	const struct knob *k;
	struct buf b;

	buf_init(&b);
	for (k = knob_first(); k; k = knob_next(k)) {
		const char *v = knob_value(m, k->id);

		if (v && knob_source(m, k->id) == KNOB_TUNED)
			buf_printf(&b, "%s%s=%s", b.len ? "," : "", k->name, v);
	}
	return buf_steal(&b, NULL);
}

static void
save(struct tuner *t)
{
	char *text;

	if (!t->st || t->id < 0)
		return;
	json_object_set(t->doc, "trials", t->cache);
	text = json_dumps(t->doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (state_set_tune(t->st, t->id, text) < 0)
		log_warnx("tune: cannot save progress in the state database");
	free(text);
}

/* Installs the model's current knob values as a trial. */
static int
install(struct tuner *t, char *err, size_t errlen)
{
	struct rendered r = { 0 };
	int rc;

	if (cli_render(t->ctx, t->m, 0, &r) != EXIT_OK) {
		snprintf(err, errlen, "cannot render the trial configuration");
		return -EINVAL;
	}
	rc = apply_run(t->m, &r, &t->ao, NULL) == 0 ? 0 : -EIO;
	render_free(&r);
	if (rc < 0)
		snprintf(err, errlen, "the trial configuration could not be installed (see above)");
	return rc;
}

/* Installs the model's current knob values as a trial and measures it (or takes the
 * measurement an interrupted run of the same tune already made). With inc (the incumbent's
 * scores), a candidate is measured in two rounds and stops after the first when it can no
 * longer be accepted (tune_futile): *stopped is then set and *n is below the repeats. */
static int
trial(struct tuner *t, unsigned protos, const double *inc, size_t ninc, double **scores,
      size_t *n, bool *stopped, char *err, size_t errlen)
{
	char *assign = trial_key(t->m), *key = xasprintf("%u:%s", protos, assign);
	json_t *cached = json_object_get(t->cache, key), *arr;
	unsigned full = t->bo.repeats;
	bool installed = false;
	size_t i;
	int rc = 0;

	*scores = NULL;
	*n = 0;
	if (stopped)
		*stopped = false;
	if (json_is_array(cached) && json_array_size(cached) > 0) {
		*n = json_array_size(cached);
		*scores = xcalloc(*n, sizeof(**scores));
		for (i = 0; i < *n; i++)
			(*scores)[i] = json_real_value(json_array_get(cached, i));
		log_info("tune: %s: already measured (in this run or an interrupted one); reused", *assign ?
			 assign : "the starting configuration");
	}
	while (rc == 0 && *n < full) {
		double *more = NULL;
		size_t nmore = 0;

		if (inc && *n && tune_futile(inc, ninc, *scores, *n, full)) {
			log_info("tune: %s: stopped after %zu of %u runs: it can no longer be %.0f%% "
				 "better", *assign ? assign : "the starting configuration", *n, full,
				 100 * TUNE_MIN_GAIN);
			if (stopped)
				*stopped = true;
			break;
		}
		if (!installed && (rc = install(t, err, errlen)) < 0)
			break;
		installed = true;
		t->bo.repeats = !inc || *n ? full - (unsigned)*n : (unsigned)tune_first_round(full);
		rc = measure(t, protos, &more, &nmore, *n ? NULL : t->keep, err, errlen);
		t->bo.repeats = full;
		if (rc < 0)
			break;
		*scores = xreallocarray(*scores, *n + nmore, sizeof(**scores));
		memcpy(*scores + *n, more, nmore * sizeof(*more));
		*n += nmore;
		free(more);
		arr = json_array();
		for (i = 0; i < *n; i++)
			json_array_append_new(arr, json_real((*scores)[i]));
		json_object_set_new(t->cache, key, arr);
		if (*n == nmore)
			t->trials++;	/* a configuration, not a round */
		save(t);
		if (nmore == 0)
			break;	/* no runs to score: nothing more will come */
	}
	if (rc < 0) {
		free(*scores);
		*scores = NULL;
		*n = 0;
	}
	free(assign);
	free(key);
	return rc;
}

static void
set_knob(struct model *m, enum knob_id id, const char *value, enum knob_src src)
{
	char *copy = value ? xstrdup(value) : NULL;	/* value may be the string freed below */

	free(m->knobs[id].value);
	m->knobs[id].value = copy;
	m->knobs[id].src = value ? src : KNOB_UNSET;
}

static json_t *
score_json(const double *v, size_t n)
{
	struct bench_stats s;
	json_t *runs = json_array();
	size_t i;

	bench_stats_compute(v, n, 1, &s);
	for (i = 0; i < n; i++)
		json_array_append_new(runs, json_real(v[i]));
	return json_pack("{s:f, s:f, s:f, s:o}", "median", s.median, "ci95_low", s.ci95_low,
			 "ci95_high", s.ci95_high, "runs", runs);
}

/* ---- advice for client classes ---- */

/* The shares as tune_protocol_choice takes them. */
static json_t *
shares_json(const struct model *m)
{
	const struct { unsigned bit; const char *name; bool on; } protos[] = {
		{ PROTO_SMB, "smb", m->smb.enabled }, { PROTO_NFS, "nfs", m->nfs.enabled },
		{ PROTO_AFP, "afp", m->afp.enabled },
	};
	json_t *a = json_array();

	for (size_t i = 0; i < m->n_shares; i++) {
		const struct share *s = &m->shares[i];
		json_t *p = json_array();

		for (size_t j = 0; j < sizeof(protos) / sizeof(protos[0]); j++)
			if ((s->protocols & protos[j].bit) && protos[j].on)
				json_array_append_new(p, json_string(protos[j].name));
		json_array_append_new(a, json_pack("{s:s, s:o, s:b}", "name", s->name, "protocols",
						   p, "time_machine", s->tm_enabled));
	}
	return a;
}

/* What each client should mount: only what this NAS serves it (tune_advice). */
static json_t *
advice(const struct model *m, json_t *agents, const json_t *choice)
{
	return tune_advice(m, agents, choice);
}

/* ---- the command ---- */

static void
decision_json(json_t *arr, const struct decision *d)
{
	json_array_append_new(arr, json_pack("{s:s, s:s, s:s?, s:s?, s:b, s:s, s:f, s:f}", "name",
					     d->k->name, "safety", knob_safety_name(d->k->safety),
					     "before", d->before, "after", d->after, "applied",
					     d->applied, "reason", d->reason, "effect", d->effect,
					     "p", d->p));
}

static int
parse_knob_list(const char *list, bool *sel)
{
	char *copy = xstrdup(list), *tok, *save = NULL;
	int rc = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct knob *k = knob_find(tok);

		if (!k) {
			fprintf(stderr, "nastune tune: unknown knob '%s' — see `nastune knobs`\n", tok);
			rc = -EINVAL;
			break;
		}
		sel[k->id] = true;
	}
	free(copy);
	return rc;
}

/* --exhaustive: every combination of the selected knobs' allowed values (the current value
 * included) is measured; the best median wins. For validating the descent. */
static int
grid(struct tuner *t, const bool *sel, struct decision *dec, size_t *ndec, double **best,
     size_t *nbest, char *err, size_t errlen)
{
	const struct knob *ks[KNOB_COUNT];
	const char *vals[KNOB_COUNT][16];
	size_t nv[KNOB_COUNT], nk = 0, idx[KNOB_COUNT] = { 0 }, total = 1, g, i, j;
	char *orig[KNOB_COUNT];
	enum knob_src osrc[KNOB_COUNT];
	size_t bestg = (size_t)-1;
	double bestmed = -1;
	unsigned protos = 0;
	json_t *gj = json_array();
	char why[256];
	int rc = 0;

	for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
		const char *cur = knob_value(t->m, k->id);
		struct decision *d = &dec[(*ndec)++];

		d->k = k;
		d->before = cur ? xstrdup(cur) : NULL;
		if (!sel[k->id]) {
			snprintf(d->reason, sizeof(d->reason), "not selected (--knobs)");
			continue;
		}
		if (!knob_applicable(t->m, k, why, sizeof(why)) ||
		    knob_source(t->m, k->id) == KNOB_CONFIG || k->id == KNOB_NET_MTU) {
			snprintf(d->reason, sizeof(d->reason), "not in the grid: %.200s",
				 knob_source(t->m, k->id) == KNOB_CONFIG ? "pinned in nastune.conf" :
				 k->id == KNOB_NET_MTU ? "the MTU is network.mtu's" : why);
			continue;
		}
		ks[nk] = k;
		nv[nk] = 0;
		/* A copy: set_knob frees the model's string. */
		orig[nk] = cur ? xstrdup(cur) : NULL;
		vals[nk][nv[nk]++] = orig[nk] ? orig[nk] : k->dflt;	/* NULL: unset */
		for (const char *const *v = k->candidates; *v && nv[nk] < 16; v++) {
			if ((cur && strcmp(cur, *v) == 0) || (!cur && k->dflt && strcmp(k->dflt, *v) == 0))
				continue;
			if (knob_allowed(t->m, k, *v, why, sizeof(why)))
				vals[nk][nv[nk]++] = *v;
		}
		osrc[nk] = knob_source(t->m, k->id);
		protos |= k->proto ? k->proto : PROTO_SMB | PROTO_NFS | PROTO_AFP;
		total *= nv[nk];
		nk++;
	}
	if (!nk || total > MAX_GRID) {
		snprintf(err, errlen, !nk ? "--exhaustive: none of --knobs can be "
			 "tried under this configuration" : "--exhaustive: %zu combinations, more "
			 "than %d — select fewer knobs", total, MAX_GRID);
		for (i = 0; i < nk; i++)
			free(orig[i]);
		json_decref(gj);
		return -EINVAL;
	}
	log_info("tune: exhaustive grid of %zu combination(s) over %zu knob(s)", total, nk);
	for (g = 0; g < total && rc == 0; g++) {
		double *sc = NULL;
		size_t nsc = 0;
		json_t *assign = json_object();

		for (i = 0, j = g; i < nk; i++) {
			idx[i] = j % nv[i];
			j /= nv[i];
			set_knob(t->m, ks[i]->id, vals[i][idx[i]], idx[i] == 0 ? osrc[i] : KNOB_TUNED);
			json_object_set_new(assign, ks[i]->name, vals[i][idx[i]] ?
					    json_string(vals[i][idx[i]]) : json_null());
		}
		rc = trial(t, protos, NULL, 0, &sc, &nsc, NULL, err, errlen);
		if (rc == 0) {
			json_t *e = score_json(sc, nsc);
			double med = json_real_value(json_object_get(e, "median"));

			json_object_set_new(e, "assign", assign);
			json_array_append_new(gj, e);
			if (med > bestmed) {
				bestmed = med;
				bestg = g;
				free(*best);
				*best = sc;
				*nbest = nsc;
				sc = NULL;
			}
		} else {
			json_decref(assign);
		}
		free(sc);
	}
	json_object_set_new(t->doc, "grid", gj);
	for (i = 0, j = bestg; i < nk; i++) {
		struct decision *d;
		size_t bi = bestg == (size_t)-1 ? 0 : j % nv[i];
		const char *v = vals[i][bi];

		j = bestg == (size_t)-1 ? 0 : j / nv[i];
		set_knob(t->m, ks[i]->id, v, bi == 0 ? osrc[i] : KNOB_TUNED);
		for (d = dec; d->k != ks[i]; d++)
			;
		d->tried = true;
		d->applied = bi != 0;
		d->after = d->applied ? xstrdup(v) : (d->before ? xstrdup(d->before) : NULL);
		snprintf(d->reason, sizeof(d->reason), "exhaustive: best of %zu combination(s)%s",
			 total, d->applied ? "" : " keeps the current value");
		free(orig[i]);
	}
	return rc;
}

/* net.mtu with agents: network.mtu "auto" semantics (the largest MTU up to 9216 that every
 * peer - network.peers and the agents - receives with don't-fragment set), measured through
 * the agents against their results at the old MTU. Kept only when significantly better; the
 * final apply then records it (network.mtu fixed to it in the model) so rollback restores. */
static void
tune_mtu(struct tuner *t, char **clients, size_t nclients, const char *token,
	 const struct bench_results *cl_before, json_t *agents, json_t *errors,
	 struct decision *dec, size_t ndec)
{
	struct model *m = t->m;
	struct decision *d = NULL;
	struct netif_mtu_report rep = { 0 };
	struct bench_results cl = { 0 };
	const char **peers = NULL;
	double *b = NULL, *c = NULL;
	size_t nb = 0, nc = 0, np = 0, i;
	struct tune_cmp cmp;
	json_t *f, *scratch = json_array();
	char err[768], from[256];
	int rc, ceiling;

	for (i = 0; i < ndec; i++)
		if (dec[i].k->id == KNOB_NET_MTU)
			d = &dec[i];
	if (!d)
		goto out;
	if (!m->network.interface || m->network.mtu_mode == MTU_FIXED) {
		snprintf(d->reason, sizeof(d->reason), "not tried: %s",
			 m->network.interface ? "network.mtu is fixed in nastune.conf" :
						"network.interface is not set");
		goto out;
	}
	if (tune_scores(cl_before, 0, &b, &nb) < 0) {
		snprintf(d->reason, sizeof(d->reason), "not tried: no client result at the "
			 "current MTU to compare with");
		goto out;
	}
	for (i = 0; i < m->network.peers.n; i++) {
		peers = xreallocarray(peers, np + 1, sizeof(*peers));
		peers[np++] = m->network.peers.v[i];
	}
	json_array_foreach(agents, i, f) {
		const char *a = json_string_value(json_object_get(json_object_get(f, "nic"),
								  "address"));

		/* The agent's own address on the way to us (its facts). */
		if (a && *a) {
			peers = xreallocarray(peers, np + 1, sizeof(*peers));
			peers[np++] = a;
		}
	}
	if (!np) {
		snprintf(d->reason, sizeof(d->reason), "not tried: no peer to prove an MTU against");
		goto out;
	}
	/* Never above what the clients send with themselves (their facts). */
	ceiling = tune_mtu_ceiling(agents, from, sizeof(from));
	log_info("tune: trying the largest MTU every peer receives on %s", m->network.interface);
	rc = netif_mtu_ensure(m->network.interface, NETIF_MTU_AUTO, ceiling, peers, np, &rep, err,
			      sizeof(err));
	d->before = xasprintf("%d", rep.old_mtu);
	if (rc < 0) {
		snprintf(d->reason, sizeof(d->reason), "not tried: %.200s", err);
		goto out;
	}
	if (!rep.changed) {
		if (rep.peers_mtu)
			snprintf(d->reason, sizeof(d->reason), "%d kept: the peers use MTU %d "
				 "themselves (%.64s)%s", rep.old_mtu, rep.peers_mtu,
				 strcmp(rep.peers_mtu_from, "their facts") ? rep.peers_mtu_from : from,
				 rep.tried_mtu ? ", whatever more their NICs receive" : "");
		else
			snprintf(d->reason, sizeof(d->reason), "no larger MTU reaches every peer "
				 "(tried %d)", rep.tried_mtu);
		goto out;
	}
	d->tried = true;
	rc = cli_bench_clients(t->ctx, m, clients, nclients, token, NULL, t->wl, &t->bo, &cl,
			       errors, scratch);
	if (tune_scores(&cl, 0, &c, &nc) < 0) {
		char e2[512];

		netif_set_mtu(m->network.interface, rep.old_mtu, e2, sizeof(e2));
		snprintf(d->reason, sizeof(d->reason), "MTU %d: the clients could not be measured; "
			 "%d restored", rep.final_mtu, rep.old_mtu);
		goto out;
	}
	(void)rc;
	tune_compare(b, nb, c, nc, &cmp);
	d->effect = cmp.effect;
	d->p = cmp.p;
	if (cmp.verdict == TUNE_BETTER) {
		d->applied = true;
		d->after = xasprintf("%d", rep.final_mtu);
		m->network.mtu_mode = MTU_FIXED;
		m->network.mtu = rep.final_mtu;
		snprintf(d->reason, sizeof(d->reason), "better: MTU %d %+.1f%% for the clients "
			 "(p=%.3f), proven to every peer", rep.final_mtu, 100 * cmp.effect, cmp.p);
	} else {
		char e2[512];

		netif_set_mtu(m->network.interface, rep.old_mtu, e2, sizeof(e2));
		snprintf(d->reason, sizeof(d->reason), "no significant effect (MTU %d: %+.1f%%, "
			 "p=%.3f); %d kept", rep.final_mtu, 100 * cmp.effect, cmp.p, rep.old_mtu);
	}
out:
	netif_mtu_report_free(&rep);
	bench_results_clear(&cl);
	json_decref(scratch);
	free(peers);
	free(b);
	free(c);
}

/* The value (cur, or one of the n measured in tried) that v behaves like under m, or NULL;
 * why says how. cur NULL is the daemon's default. */
static const char *
same_as(const struct model *m, const struct knob *k, const char *cur, const char *const *tried,
	size_t n, const char *v, char *why, size_t whylen)
{
	if (knob_same(m, k, cur, v, why, whylen))
		return cur ? cur : k->dflt;
	for (size_t i = 0; i < n; i++)
		if (knob_same(m, k, tried[i], v, why, whylen))
			return tried[i];
	return NULL;
}

/* Accepted changes per protocol (SMB, NFS, AFP) and for the host (index 3). A knob's verdict
 * can change only when something on its protocol's path changed: its own protocol, or the
 * host; a host knob sees every change. */
static unsigned
epoch_now(const unsigned *e, const struct knob *k)
{
	size_t pi = k->proto == PROTO_SMB ? 0 : k->proto == PROTO_NFS ? 1 :
		    k->proto == PROTO_AFP ? 2 : 3;

	return pi == 3 ? e[0] + e[1] + e[2] + e[3] : e[pi] + e[3];
}

static void
bump_epoch(unsigned *e, const struct knob *k)
{
	e[k->proto == PROTO_SMB ? 0 : k->proto == PROTO_NFS ? 1 : k->proto == PROTO_AFP ? 2 : 3]++;
}

int
cmd_tune(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "goal", required_argument, NULL, 'g' },
		{ "clients", required_argument, NULL, 'c' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "credentials", required_argument, NULL, 'C' },
		{ "knobs", required_argument, NULL, 'k' },
		{ "exhaustive", no_argument, NULL, 'x' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "if-changed", no_argument, NULL, 'i' },
		{ "size", required_argument, NULL, 's' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tuner t = { .ctx = ctx, .id = -1 };
	struct bench_results before_res = { 0 }, after_res = { 0 }, cl_before = { 0 },
			      cl_after = { 0 };
	struct decision *dec = NULL;
	struct hwinfo hw = { 0 };
	struct sigaction sa = { .sa_handler = sigstop_handler }, old_int, old_term;
	const char *goal_arg = NULL, *creds = NULL, *token = NULL, *knob_list = NULL;
	char **clients = NULL, err[1024], hwhash[65], created[32], *end;
	bool sel[KNOB_COUNT] = { false }, exhaustive = false, dry_run = false, if_changed = false;
	bool handlers = false;
	enum knob_src src0[KNOB_COUNT];
	unsigned acc_epoch[4] = { 0 }, tried_epoch[KNOB_COUNT] = { 0 };
	/* Each candidate's effect when it was last measured and not accepted (successive
	 * halving across passes: a clear loser is not measured again). */
	double lost[KNOB_COUNT][16] = { { 0 } };
	size_t pass;
	double *best = NULL, *first = NULL, *pbest[4] = { NULL }, t0, trial_cost;
	size_t nfirst = 0, npbest[4] = { 0 };
	size_t nbest = 0, nclients = 0, ndec = 0, i;
	unsigned budget = 0, repeats = 5;
	uint64_t size = 128ull << 20;
	json_t *agents = json_array(), *errors = json_array(), *knobs_json = json_array();
	int c, rc, status = EXIT_FAIL;
	enum tune_goal goal;

	optind = 0;
	while ((c = getopt_long(argc, argv, "b:g:c:T:C:k:xnis:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (units_parse_duration(optarg, &budget) < 0 || budget < 10) {
				fprintf(stderr, "nastune tune: --budget '%s' is not a duration of at "
						"least 10s (e.g. 90s, 10m, 1h)\n", optarg);
				goto usage;
			}
			break;
		case 'g':
			goal_arg = optarg;
			break;
		case 'c':
			if (!cli_client_spec_ok(optarg))
				goto usage;
			clients = xreallocarray(clients, nclients + 1, sizeof(*clients));
			clients[nclients++] = optarg;
			break;
		case 'T':
			token = optarg;
			break;
		case 'C':
			creds = optarg;
			break;
		case 'k':
			knob_list = optarg;
			break;
		case 'x':
			exhaustive = true;
			break;
		case 'n':
			dry_run = true;
			break;
		case 'i':
			if_changed = true;
			break;
		case 's':
			if (units_parse_size(optarg, &size) < 0 || size < (1u << 20) ||
			    size > BENCH_MAX_SIZE) {
				fprintf(stderr, "nastune tune: --size '%s' is not a size from 1M to "
						"16T\n", optarg);
				goto usage;
			}
			break;
		case 'r':
			repeats = (unsigned)strtoul(optarg, &end, 10);
			if (*end || repeats < 4 || repeats > 100) {
				fprintf(stderr, "nastune tune: --repeat must be 4 to 100 (with fewer "
						"runs no difference can be significant at p < 0.05)\n");
				goto usage;
			}
			break;
		case 'h':
			fputs(TUNE_USAGE, stdout);
			status = EXIT_OK;
			goto out;
		default:
			goto usage;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "nastune tune: unexpected argument '%s'\n", argv[optind]);
		goto usage;
	}
	if (knob_list && parse_knob_list(knob_list, sel) < 0)
		goto usage;
	if (exhaustive && !knob_list) {
		fprintf(stderr, "nastune tune: --exhaustive needs --knobs LIST (the grid of every "
				"knob would never end)\n");
		goto usage;
	}
	if (!(t.m = cli_load_model_recovered(ctx, &status)))
		goto out;
	goal = t.m->tuning.goal;
	if (goal_arg) {
		if (strcmp(goal_arg, "throughput") == 0)
			goal = GOAL_THROUGHPUT;
		else if (strcmp(goal_arg, "small-files") == 0)
			goal = GOAL_SMALL_FILES;
		else if (strcmp(goal_arg, "video") == 0)
			goal = GOAL_VIDEO;
		else if (strcmp(goal_arg, "balanced") == 0)
			goal = GOAL_BALANCED;
		else {
			fprintf(stderr, "nastune tune: --goal must be throughput, small-files, video "
					"or balanced\n");
			goto usage;
		}
	}
	if (!budget)
		budget = t.m->tuning.budget_s;

	if (runrec_read_hw(&hw) < 0)
		log_warnx("tune: cannot read the hardware fingerprint");
	hwinfo_hash(&hw, hwhash);
	if ((rc = state_open(ctx->root, &t.st, err, sizeof(err))) < 0) {
		log_warnx("tune: %s", err);
		goto out;
	}
	/* A previous tune: --if-changed compares fingerprints; a tune that was interrupted with
	 * the same configuration and hardware resumes from its measurements. */
	{
		long lid;
		char *lhw = NULL, *ljson = NULL;

		t.cache = json_object();
		if (state_get_tune(t.st, -1, &lid, &lhw, &ljson) == 0) {
			json_t *ld = json_loads(ljson, 0, NULL);
			const char *lst = json_string_value(json_object_get(ld, "status"));

			if (if_changed && lst && strcmp(lst, "done") == 0 && strcmp(lhw, hwhash) == 0) {
				log_info("nothing to do: the hardware is unchanged since tune %ld", lid);
				json_decref(ld);
				free(lhw);
				free(ljson);
				status = EXIT_OK;
				goto out;
			}
			if (lst && strcmp(lst, "running") == 0 && strcmp(lhw, hwhash) == 0 &&
			    json_is_object(json_object_get(ld, "trials")) &&
			    json_string_value(json_object_get(ld, "goal")) &&
			    strcmp(json_string_value(json_object_get(ld, "goal")), goal_name(goal)) ==
				    0) {
				json_decref(t.cache);
				t.cache = json_incref(json_object_get(ld, "trials"));
				log_info("tune: resuming tune %ld (%zu measurement(s) kept)", lid,
					 json_object_size(t.cache));
			}
			json_decref(ld);
		}
		free(lhw);
		free(ljson);
	}

	t.wlmask = tune_goal_workloads(goal, t.wl);
	pick_targets(&t, creds);
	if (!t.ntg) {
		log_warnx("tune: nothing to measure: no enabled protocol has a writable share this "
			  "host can log in to (give --credentials FILE for shares with valid users)");
		goto out;
	}
	t.bo = (struct bench_opts){ .size = size, .repeats = repeats, .warmup = 1,
				    .cache = BENCH_CACHE_HOT, .small_files = 200,
				    .video_seconds = 3, .stop = &sigstop_caught };
	t.ao = (struct apply_opts){ .root = ctx->root, .trial = true, .lock_timeout_s = 60 };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	handlers = true;
	signal(SIGPIPE, SIG_IGN);
	sigstop_caught = 0;
	t0 = timeutil_mono();

	{
		time_t now = time(NULL);
		struct tm tm;
		json_t *tj = json_array();

		gmtime_r(&now, &tm);
		strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
		for (i = 0; i < t.ntg; i++)
			json_array_append_new(tj, json_string(t.tg[i].t.url));
		t.doc = json_pack("{s:n, s:s, s:s, s:s, s:b, s:b, s:i, s:o}", "tune", "created",
				  created, "status", "running", "goal", goal_name(goal), "dry_run",
				  dry_run, "exhaustive", exhaustive, "budget_s", (int)budget,
				  "targets", tj);
		{
			char *text = json_dumps(t.doc, JSON_COMPACT);

			if (state_add_tune(t.st, created, -1, hwhash, text, &t.id) < 0)
				log_warnx("tune: cannot record the tune in the state database");
			free(text);
		}
		json_object_set_new(t.doc, "tune", json_integer(t.id));
	}

	/* Whatever an interrupted tune left installed goes first. */
	if (apply_end_trials(t.m, &t.ao) != EXIT_OK)
		goto restore;

	/* Baseline: the configuration in force, measured the same way as every candidate. */
	log_info("tune: measuring the current configuration (%s goal, %zu target(s))",
		 goal_name(goal), t.ntg);
	t.keep = &before_res;
	rc = trial(&t, PROTO_SMB | PROTO_NFS | PROTO_AFP, NULL, 0, &best, &nbest, NULL, err,
		   sizeof(err));
	t.keep = NULL;
	if (rc < 0) {
		log_warnx("tune: the baseline measurement failed: %s", err);
		goto restore;
	}
	json_object_set_new(t.doc, "before", score_json(best, nbest));
	first = best;
	nfirst = nbest;
	best = NULL;
	nbest = 0;
	/* Each protocol's own score at the start comes from the same baseline runs: no second
	 * measurement before its first knob. */
	for (i = 0; i < 3; i++) {
		static const char *const names[] = { "smb", "nfs", "afp" };
		struct bench_results one = { 0 };

		for (size_t r = 0; r < before_res.n; r++)
			if (strcmp(before_res.v[r].protocol, names[i]) == 0)
				bench_results_add(&one, &before_res.v[r]);
		if (one.n && tune_scores(&one, 0, &pbest[i], &npbest[i]) < 0)
			pbest[i] = NULL;
		bench_results_clear(&one);
	}
	if (nclients) {
		struct bench_opts cbo = t.bo;

		cbo.stop = &sigstop_caught;
		if (cli_bench_clients(ctx, t.m, clients, nclients, token, NULL, t.wl, &cbo,
				      &cl_before, errors, agents) < 0)
			log_warnx("tune: some client measurements failed (see errors)");
	}
	trial_cost = timeutil_mono() - t0 + 2;

	dec = xcalloc(KNOB_COUNT, sizeof(*dec));
	if (exhaustive) {
		rc = grid(&t, sel, dec, &ndec, &best, &nbest, err, sizeof(err));
		if (rc == -EINTR || sigstop_caught)
			goto restore;
		if (rc < 0) {
			log_warnx("tune: %s", err);
			goto restore;
		}
	}
	/* Decisions for every knob, in table order (coordinate descent). */
	/* Passes until one changes nothing (at most three): a knob whose effect an earlier
	 * one hid (signing behind required encryption) gets its chance again. */
	for (pass = 0; pass < 3 && !exhaustive && !sigstop_caught; pass++) {
	bool accepted = false;

	for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
		struct decision *d = &dec[k->id];
		const char *cur = knob_value(t.m, k->id);
		char why[256] = "";
		const char *const *v;
		const char *tried_v[16];
		size_t tried_n;
		unsigned kp;
		size_t pi;
		char other[64] = "";
		bool any = false;

		if (pass > 0 && !d->tried)
			continue;	/* not eligible, or the budget ran out: as decided */
		/* Again only when a later change of its protocol (or of the host) could have
		 * changed its verdict. */
		if (pass > 0 && epoch_now(acc_epoch, k) == tried_epoch[k->id])
			continue;
		if (pass == 0) {
			d->k = k;
			d->before = cur ? xstrdup(cur) : NULL;
			src0[k->id] = knob_source(t.m, k->id);
		}
		if (knob_list && !sel[k->id]) {
			snprintf(d->reason, sizeof(d->reason), "not selected (--knobs)");
			continue;
		}
		if (!(k->workloads & t.wlmask)) {
			snprintf(d->reason, sizeof(d->reason), "no effect on the %s goal's workloads",
				 goal_name(goal));
			continue;
		}
		if (!knob_applicable(t.m, k, why, sizeof(why))) {
			snprintf(d->reason, sizeof(d->reason), "%s%s",
				 strncmp(why, "not applicable", 14) ? "not applicable: " : "", why);
			continue;
		}
		if (knob_source(t.m, k->id) == KNOB_CONFIG) {
			snprintf(d->reason, sizeof(d->reason), "not allowed: pinned in %s:%d",
				 t.m->knobs[k->id].loc.file ? t.m->knobs[k->id].loc.file :
							       "nastune.conf",
				 t.m->knobs[k->id].loc.line);
			continue;
		}
		if (k->id == KNOB_NET_MTU) {
			snprintf(d->reason, sizeof(d->reason), "not tried: only clients cross the NIC "
				 "(tune --clients); network.mtu otherwise");
			continue;
		}
		kp = k->proto ? k->proto : PROTO_SMB | PROTO_NFS | PROTO_AFP;
		/* The knob's own protocol measured at the best configuration so far. */
		pi = k->proto == PROTO_SMB ? 0 : k->proto == PROTO_NFS ? 1 : k->proto == PROTO_AFP ? 2 : 3;
		free(best);
		best = NULL;
		nbest = 0;
		if (pbest[pi]) {
			best = xmalloc(npbest[pi] * sizeof(*best));
			memcpy(best, pbest[pi], npbest[pi] * sizeof(*best));
			nbest = npbest[pi];
		}
		tried_n = 0;
		for (v = k->candidates; *v; v++) {
			const char *twin;
			struct tune_cmp cmp;
			double *sc = NULL;
			size_t nsc = 0;
			bool stopped = false;

			const char *now = d->after ? d->after : d->before;

			/* (d->before/after are copies: set_knob frees the model's strings.) */
			if ((now && strcmp(now, *v) == 0) ||
			    (!now && k->dflt && strcmp(k->dflt, *v) == 0))
				continue;
			/* A value the daemon documents as behaving like the current one, or like
			 * one measured already, would only measure noise. */
			if ((twin = same_as(t.m, k, now, tried_v, tried_n, *v, why, sizeof(why)))) {
				log_info("tune: %s = %s: not measured: the same as %s here: %s",
					 k->name, *v, twin, why);
				continue;
			}
			if (pass > 0 && v - k->candidates < 16 &&
			    !tune_worth_retry(lost[k->id][v - k->candidates])) {
				log_info("tune: %s = %s: not measured again: %+.0f%% on an earlier pass",
					 k->name, *v, 100 * lost[k->id][v - k->candidates]);
				continue;
			}
			if (!knob_allowed(t.m, k, *v, why, sizeof(why))) {
				if (!any && !d->reason[0])
					snprintf(d->reason, sizeof(d->reason), "not tried: %s", why);
				continue;
			}
			if (sigstop_caught)
				break;
			if (!exhaustive && timeutil_mono() - t0 + 2 * trial_cost > budget) {
				/* Room for this trial and the final measurement. */
				snprintf(d->reason, sizeof(d->reason), "not tried: budget exhausted "
					 "(%us)", budget);
				any = true;
				break;
			}
			if (!best) {
				if ((rc = trial(&t, kp, NULL, 0, &best, &nbest, NULL, err,
						 sizeof(err))) < 0) {
					snprintf(d->reason, sizeof(d->reason), "not tried: measuring "
						 "the current value failed: %.180s", err);
					any = true;
					if (rc == -EINTR)
						break;
					continue;
				}
			}
			set_knob(t.m, k->id, *v, KNOB_TUNED);
			log_info("tune: trying %s = %s", k->name, *v);
			rc = trial(&t, kp, best, nbest, &sc, &nsc, &stopped, err, sizeof(err));
			if (rc == 0)
				tune_compare(best, nbest, sc, nsc, &cmp);
			if (rc == 0 && cmp.verdict == TUNE_BETTER) {
				free(best);
				best = sc;
				nbest = nsc;
				free(d->after);
				d->after = xstrdup(*v);
				d->effect = cmp.effect;
				d->p = cmp.p;
				snprintf(d->reason, sizeof(d->reason), "better: %s %+.1f%% (p=%.3f)%s",
					 *v, 100 * cmp.effect, cmp.p, pass ? " on a later pass" : "");
				any = d->tried = accepted = true;
				bump_epoch(acc_epoch, k);
				continue;
			}
			/* Not better: the simpler value in force before stays. */
			set_knob(t.m, k->id, d->after ? d->after : d->before,
				 d->after ? KNOB_TUNED : src0[k->id]);
			free(sc);
			if (rc < 0) {
				log_warnx("tune: %s = %s: %s", k->name, *v, err);
				if (rc == -EINTR)
					break;
				if (!d->after)
					snprintf(d->reason, sizeof(d->reason), "%s failed: %.200s", *v,
						 err);
				any = true;
				continue;
			}
			any = d->tried = true;
			if (v - k->candidates < 16)
				lost[k->id][v - k->candidates] = cmp.effect;
			if (tried_n < sizeof(tried_v) / sizeof(tried_v[0]))
				tried_v[tried_n++] = *v;
			if (!d->after && (!other[0] || fabs(cmp.effect) > fabs(d->effect))) {
				d->effect = cmp.effect;
				d->p = cmp.p;
				snprintf(other, sizeof(other), "%s", *v);
				snprintf(d->reason, sizeof(d->reason),
					 cmp.verdict == TUNE_WORSE ? "worse: %s %+.1f%% (p=%.3f%s); kept" :
					 "no significant effect (largest: %s %+.1f%%, p=%.3f%s); kept",
					 other, 100 * d->effect, d->p,
					 stopped ? ", stopped early" : "");
			}
		}
		d->applied = d->after != NULL;
		if (best) {
			/* What this protocol scores now; a host knob changes every protocol. */
			if (d->applied)
				for (size_t q = 0; q < 4; q++)
					if (q == pi || pi == 3 || q == 3) {
						free(pbest[q]);
						pbest[q] = NULL;
					}
			if (!pbest[pi]) {
				pbest[pi] = xmalloc(nbest * sizeof(*best));
				memcpy(pbest[pi], best, nbest * sizeof(*best));
				npbest[pi] = nbest;
			}
		}
		if (!d->reason[0])
			snprintf(d->reason, sizeof(d->reason), "no candidate other than the current "
				 "value");
		tried_epoch[k->id] = epoch_now(acc_epoch, k);
		if (sigstop_caught)
			break;
	}
	if (!accepted)
		break;
	}
	if (!exhaustive)
		ndec = KNOB_COUNT;
	/* Decisions for the knobs the loop did not reach (interrupted). */
	for (i = 0; i < KNOB_COUNT; i++)
		if (!dec[i].k) {
			dec[i].k = knob_get((enum knob_id)i);
			snprintf(dec[i].reason, sizeof(dec[i].reason), "not reached");
		}
	ndec = KNOB_COUNT;
	if (sigstop_caught) {
		log_warnx("tune: interrupted by %s", sigstop_caught == SIGINT ? "SIGINT" : "SIGTERM");
		goto restore;
	}

	/* The NIC MTU: only clients cross the NIC, so only with agents; only MTUs every peer is
	 * proven to receive (netif's commit-confirm), kept when the clients get faster. */
	if (nclients && (!knob_list || sel[KNOB_NET_MTU]) && !sigstop_caught)
		tune_mtu(&t, clients, nclients, token, &cl_before, agents, errors, dec, ndec);

	/* After: the chosen configuration, measured like the baseline. Protocols no accepted
	 * change touched keep their baseline runs (same configuration, already measured). */
	free(best);
	best = NULL;
	{
		unsigned changed = 0, all = PROTO_SMB | PROTO_NFS | PROTO_AFP;
		static const char *const names[] = { "smb", "nfs", "afp" };

		for (i = 0; i < ndec; i++)
			if (dec[i].applied)
				changed |= dec[i].k->proto ? dec[i].k->proto : all;
		if (!before_res.n)
			changed = all;	/* resumed: no baseline runs at hand */
		t.keep = &after_res;
		rc = changed ? trial(&t, changed, NULL, 0, &best, &nbest, NULL, err, sizeof(err)) : 0;
		t.keep = NULL;
		if (rc == 0 && changed != all) {
			for (size_t r = 0; r < before_res.n; r++)
				for (size_t q = 0; q < 3; q++)
					if (!(changed & (1u << q)) &&
					    strcmp(before_res.v[r].protocol, names[q]) == 0)
						bench_results_add(&after_res, &before_res.v[r]);
			free(best);
			best = NULL;
			rc = tune_scores(&after_res, 0, &best, &nbest);
			if (rc < 0)
				snprintf(err, sizeof(err), "no result to score");
		}
	}
	if (rc == 0 && after_res.n) {
		/* The bottleneck of each result: raw disk of the first share, TCP over loopback. */
		struct bench_baseline bl = { 0 };
		struct bench_opts bo = { .size = size };
		char *local = NULL, berr[512];

		for (i = 0; i < t.m->n_shares && !local; i++)
			if (!t.m->shares[i].tm_enabled && !t.m->shares[i].read_only)
				local = fs_rooted(ctx->root, t.m->shares[i].path);
		if (local && bench_baseline_disk(local, &bo, &bl, berr, sizeof(berr)) < 0)
			log_warnx("tune: raw disk baseline of %s: %s", local, berr);
		bench_baseline_tcp_loopback(size, &bl);
		for (i = 0; i < after_res.n; i++)
			bench_attribute(&after_res.v[i], &bl, true);
		free(local);
	}
	if (rc < 0) {
		log_warnx("tune: measuring the chosen configuration failed: %s", err);
		goto restore;
	}
	/* The winner: back to the configuration before the trials, then apply it for real. */
	if (apply_end_trials(t.m, &t.ao) != EXIT_OK)
		goto restore;
	json_object_set_new(t.doc, "after", score_json(best, nbest));
	{
		struct tune_cmp all;

		tune_compare(first, nfirst, best, nbest, &all);
		json_object_set_new(t.doc, "improvement", json_real(all.effect));
		json_object_set_new(t.doc, "improvement_p", json_real(all.p));
	}
	for (i = 0; i < ndec; i++)
		decision_json(knobs_json, &dec[i]);
	json_object_set_new(t.doc, "knobs", knobs_json);
	knobs_json = NULL;
	{
		bool changed = false;

		for (i = 0; i < ndec; i++)
			changed |= dec[i].applied;
		if (changed && !dry_run) {
			struct rendered r = { 0 };
			struct apply_opts ao = { .root = ctx->root, .reason = "tune",
						 .lock_timeout_s = 60 };

			if (cli_render(ctx, t.m, 0, &r) != EXIT_OK ||
			    apply_run(t.m, &r, &ao, NULL) != 0) {
				render_free(&r);
				log_warnx("tune: the chosen configuration could not be applied; the "
					  "previous one is in force");
				goto record;
			}
			render_free(&r);
		} else if (!changed) {
			log_info("tune: no knob made a significant difference; the configuration is "
				 "unchanged");
		}
	}
	/* What clients get now. */
	if (nclients && !dry_run) {
		struct bench_opts cbo = t.bo;

		cli_bench_clients(ctx, t.m, clients, nclients, token, NULL, t.wl, &cbo, &cl_after,
				  errors, json_array());
	}
	status = EXIT_OK;
	goto record;

restore:
	log_warnx("tune: aborted; restoring the configuration in force before the tune");
	if (apply_end_trials(t.m, &t.ao) != EXIT_OK)
		log_warnx("tune: could not restore it now; the next apply or tune will");
	json_object_set_new(t.doc, "status", json_string("aborted"));
	save(&t);
	status = EXIT_FAIL;
	goto out;

record:
	json_object_set_new(t.doc, "status", json_string(status == EXIT_OK ?
							 (dry_run ? "dry-run" : "done") : "failed"));
	json_object_set_new(t.doc, "elapsed_s", json_real(timeutil_mono() - t0));
	json_object_set_new(t.doc, "results_before", bench_results_to_json(&before_res));
	json_object_set_new(t.doc, "results", bench_results_to_json(&after_res));
	json_object_set_new(t.doc, "clients_before", bench_results_to_json(&cl_before));
	json_object_set_new(t.doc, "clients_after", bench_results_to_json(&cl_after));
	json_object_set(t.doc, "agents", agents);
	json_object_set(t.doc, "errors", errors);
	{
		json_t *cr = bench_results_to_json(cl_after.n ? &cl_after : &cl_before);

		json_t *sh = shares_json(t.m);
		json_t *choice = tune_protocol_choice(cr, agents, sh);

		json_object_set_new(t.doc, "advice", advice(t.m, agents, choice));
		json_object_set_new(t.doc, "protocol_choice", choice);
		json_decref(sh);
		json_decref(cr);
	}
	save(&t);
	if (ctx->json) {
		json_object_del(t.doc, "trials");
		json_dumpf(t.doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else {
		char *text = tune_report_text(t.doc, err, sizeof(err));

		if (text)
			fputs(text, stdout);
		else
			log_warnx("tune: %s", err);
		free(text);
	}
	goto out;
usage:
	status = EXIT_USAGE;
out:
	if (handlers) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	for (i = 0; i < ndec; i++) {
		free(dec[i].before);
		free(dec[i].after);
	}
	free(dec);
	for (i = 0; i < t.ntg; i++)
		bench_target_clear(&t.tg[i].t);
	free(t.tg);
	free(best);
	free(first);
	for (i = 0; i < 4; i++)
		free(pbest[i]);
	free(clients);
	bench_results_clear(&before_res);
	bench_results_clear(&after_res);
	bench_results_clear(&cl_before);
	bench_results_clear(&cl_after);
	json_decref(agents);
	json_decref(errors);
	json_decref(knobs_json);
	json_decref(t.cache);
	json_decref(t.doc);
	hwinfo_free(&hw);
	state_close(t.st);
	model_free(t.m);
	return status;
}
