/* cli_cluster.c - the cluster's part of apply and status (cli.h): a configuration made the
 * cluster's and followed by every node, or rolled back; each node's state. The `cluster`
 * command itself, which the nodes run, is cmd_cluster.c. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "cli.h"
#include "cluster.h"
#include "esc.h"
#include "fsutil.h"
#include "log.h"
#include "model.h"
#include "render.h"
#include "state.h"
#include "timeutil.h"
#include "xmalloc.h"

struct node_outcome {
	enum { NO_FOLLOWED, NO_FAILED, NO_AWAY, NO_SILENT } what;
};

/* Waits until every node ctdb counts as connected has followed generation gen (or failed
 * it), up to wait_s. Fills out[i] per node; returns the number failed or silent. */
static int
wait_nodes(struct cluster_rec *rec, const struct model *m, long gen, int self, int wait_s,
	   struct node_outcome *out, struct cluster_node_rec **recs_out)
{
	long long end = timeutil_mono_ms() + (long long)wait_s * 1000;
	struct cluster_node_rec *recs = NULL;
	size_t i, n = m->cluster.nodes.n;
	int bad;

	for (;;) {
		struct cluster_view v;
		bool pending = false;

		cluster_view_read(m, &v);
		free(recs);
		cluster_read_nodes(m, rec, &recs);
		bad = 0;
		for (i = 0; i < n; i++) {
			bool connected =
				(int)i == self || v.state[i] == CN_OK || v.state[i] == CN_UNHEALTHY;

			if (recs[i].followed == gen && !recs[i].alone)
				out[i].what = recs[i].ok ? NO_FOLLOWED : NO_FAILED;
			else if (!connected)
				out[i].what = NO_AWAY;
			else {
				out[i].what = NO_SILENT;
				pending = true;
			}
			bad += out[i].what == NO_FAILED || out[i].what == NO_SILENT;
		}
		cluster_view_clear(m, &v);
		if (!pending || timeutil_mono_ms() >= end)
			break;
		usleep(250 * 1000);
	}
	*recs_out = recs;
	return bad;
}

/* Runs `cluster follow` in this process: the cluster's desired configuration onto this
 * node. */
static int
follow_here(struct ctx *ctx)
{
	char *argv[] = { "cluster", "follow", NULL };

	return cmd_cluster(ctx, 2, argv);
}

/* Each node's outcome, into nodes (JSON) and, when not applied, the log. */
static void
report_nodes(const struct node_outcome *out, const struct cluster_node_rec *recs, size_t n,
	     const char *id, int wait_s, json_t *nodes)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *what = out[i].what == NO_FOLLOWED ? "applied"
				   : out[i].what == NO_FAILED ? "failed"
				   : out[i].what == NO_AWAY   ? "away"
							      : "no answer";
		char *e = esc_term(*recs[i].refused ? recs[i].refused : recs[i].error);

		json_array_append_new(nodes, json_pack("{s:s, s:s, s:s}", "address", recs[i].addr,
						       "result", what, "error", e));
		if (out[i].what == NO_FAILED)
			log_warnx("cluster: node %s did not apply configuration %s: %s",
				  recs[i].addr, id, e);
		else if (out[i].what == NO_SILENT)
			log_warnx("cluster: node %s did not answer within %d s", recs[i].addr,
				  wait_s);
		else if (out[i].what == NO_AWAY)
			log_warnx("cluster: node %s is not connected: it follows configuration %s "
				  "when it rejoins",
				  recs[i].addr, id);
		free(e);
	}
}

/* Whether ctdbd answers here; when not, says the other nodes follow when theirs runs their
 * event scripts, and sets *summary. */
static bool
ctdb_answers(const struct model *m, const struct cluster_desired *want, json_t **summary)
{
	struct cluster_view v;
	bool up;

	cluster_view_read(m, &v);
	up = v.reachable;
	cluster_view_clear(m, &v);
	if (up)
		return true;
	log_info("cluster: configuration %s is the cluster's (generation %ld); ctdbd does not "
		 "answer here, so the other nodes follow when their ctdbd runs its event scripts",
		 want->id, want->generation);
	*summary = json_pack("{s:s, s:I, s:b}", "id", want->id, "generation",
			     (json_int_t)want->generation, "ctdb", 0);
	return false;
}

/* Every node back to the cluster's configuration before want, when there was one, and only
 * while want is still the cluster's (another node's apply since is not undone). */
static void
roll_back(struct ctx *ctx, const struct model *m, struct cluster_rec *rec,
	  const struct cluster_desired *want, int self, int wait_s, struct node_outcome *out,
	  struct cluster_node_rec **recs)
{
	struct cluster_desired back;
	int rc;

	if (!*want->prev) {
		log_warnx("cluster: no earlier cluster configuration to go back to: fix the nodes "
			  "named above and apply again");
	} else if ((rc = cluster_republish(m, rec, want, want->prev, m->cluster.nodes.v[self],
					   &back)) == 0) {
		log_warnx("cluster: rolling every node back to configuration %s", want->prev);
		follow_here(ctx);
		cluster_nudge();
		free(*recs);
		wait_nodes(rec, m, back.generation, self, wait_s, out, recs);
	} else {
		log_warnx("cluster: not rolling back to configuration %s: %s", want->prev,
			  rc == -EAGAIN ? rec->err : strerror(-rc));
	}
}

/* Once every node has the configuration's public_addresses: ctdbd serves the old ones until
 * told, so it is told, and the new ones are proven held (up to a minute). */
static int
take_public(const struct model *m)
{
	long long end = timeutil_mono_ms() + 60 * 1000;
	struct cluster_view v;
	bool held;
	size_t i;
	int rc;

	cluster_view_read(m, &v);
	held = cluster_public_held(m, &v);
	cluster_view_clear(m, &v);
	if (held)
		return 0;
	if ((rc = cluster_reloadips()) < 0)
		log_warnx("cluster: ctdb reloadips failed: %s", strerror(-rc));
	for (;;) {
		cluster_view_read(m, &v);
		if ((held = cluster_public_held(m, &v)) || timeutil_mono_ms() >= end)
			break;
		cluster_view_clear(m, &v);
		usleep(500 * 1000);
	}
	for (i = 0; !held && i < m->cluster.public_addresses.n; i++)
		if (!v.holder[i])
			log_warnx("cluster: public address %s is held by no node a minute after "
				  "ctdb reloadips",
				  m->cluster.public_addresses.v[i]);
	if (!held && v.n_ips != m->cluster.public_addresses.n)
		log_warnx("cluster: ctdbd serves %zu public addresses, the configuration %zu",
			  v.n_ips, m->cluster.public_addresses.n);
	if (held)
		log_info("cluster: every public address is held");
	cluster_view_clear(m, &v);
	return held ? 0 : -ETIMEDOUT;
}

int
cli_cluster_prepare(const struct ctx *ctx, const struct model *m, struct cluster_desired *base)
{
	struct cluster_rec rec;
	int rc = cluster_rec_open(m, ctx->root, true, &rec);

	if (rc < 0) {
		log_warnx("cluster: %s; nothing was changed", rec.err);
		cluster_rec_close(&rec);
		return EXIT_FAIL;
	}
	rc = cluster_read_desired(&rec, base);
	if (rc == -EBADMSG) {
		char *e = esc_term(rec.err);

		log_warnx("cluster: %s — this apply publishes its configuration over it", e);
		free(e);
	} else if (rc < 0 && rc != -ENOENT) {
		log_warnx("cluster: cannot read the record: %s; nothing was changed",
			  strerror(-rc));
		cluster_rec_close(&rec);
		return EXIT_FAIL;
	}
	cluster_rec_close(&rec);
	return EXIT_OK;
}

/* Another node published since base: this node follows it, and says so. */
static int
lost(struct ctx *ctx, struct cluster_rec *rec, json_t **summary)
{
	char *e = esc_term(rec->err);

	log_warnx("cluster: %s; this node follows it — apply again to make this "
		  "configuration the cluster's",
		  e);
	*summary = json_pack("{s:s}", "lost_to", e);
	free(e);
	follow_here(ctx);
	return EXIT_FAIL;
}

int
cli_cluster_apply(struct ctx *ctx, const struct model *m, const struct rendered *r,
		  const struct apply_result *res, const struct cluster_desired *base,
		  bool this_node, int wait_s, json_t **summary)
{
	struct cluster_desired want;
	struct cluster_rec rec;
	struct cluster_node_rec *recs = NULL, me;
	struct node_outcome *out;
	char *cpath = cli_config_path(ctx), *conf = NULL, *def;
	const char *tuned = NULL;
	size_t clen = 0, tlen = 0, i, n = m->cluster.nodes.n;
	int self = cluster_this_node(m), rc, bad, status = EXIT_OK;
	json_t *nodes = json_array();

	*summary = NULL;
	for (i = 0; i < r->n; i++)
		if (strcmp(r->f[i].path, RENDER_TUNED_PATH) == 0) {
			tuned = r->f[i].data;
			tlen = r->f[i].len;
		}
	if ((rc = fs_read_file(cpath, 1 << 20, &conf, &clen)) < 0) {
		log_warnx("cluster: cannot read %s: %s", cpath, strerror(-rc));
		free(cpath);
		json_decref(nodes);
		return EXIT_FAIL;
	}
	if (cluster_rec_open(m, ctx->root, true, &rec) < 0) {
		log_warnx("cluster: %s", rec.err);
		status = EXIT_FAIL;
		goto out;
	}
	cluster_read_nodes(m, &rec, &recs);
	me = recs[self];
	*me.refused = '\0';
	cluster_config_id(conf, clen, tuned, tlen, me.id);
	me.ok = true;
	me.error[0] = '\0';
	me.local_generation = res->generation >= 0 ? res->generation : me.local_generation;
	cluster_node_stamp(&me);
	/* This node's nastune.conf is the cluster's (its event hook reads it). */
	def = fs_rooted(ctx->root, "/etc/nastune/nastune.conf");
	if (strcmp(def, cpath) != 0 && (rc = fs_write_atomic(def, conf, clen, 0644, 1)) < 0)
		log_warnx("cluster: writing %s: %s", def, strerror(-rc));
	free(def);
	if (this_node) {
		me.alone = true;
		cluster_write_node(&rec, &me);
		log_warnx("cluster: applied on this node only (configuration %s): the others "
			  "name it inconsistent until the next cluster-wide apply",
			  me.id);
		*summary = json_pack("{s:s, s:b}", "id", me.id, "this_node_only", 1);
		goto out;
	}
	rc = cluster_publish(m, &rec, base, conf, clen, tuned, tlen, m->cluster.nodes.v[self],
			     &want);
	if (rc == -EAGAIN) {
		status = lost(ctx, &rec, summary);
		goto out;
	}
	if (rc < 0) {
		log_warnx("cluster: cannot publish the cluster's configuration: %s",
			  *rec.err ? rec.err : strerror(-rc));
		status = EXIT_FAIL;
		goto out;
	}
	me.alone = false;
	me.followed = want.generation;
	cluster_write_node(&rec, &me);
	if (!ctdb_answers(m, &want, summary))
		goto out;
	cluster_nudge();
	out = xcalloc(n + 1, sizeof(*out));
	free(recs);
	bad = wait_nodes(&rec, m, want.generation, self, wait_s, out, &recs);
	report_nodes(out, recs, n, want.id, wait_s, nodes);
	/* Every node runs it, but clients reach it only through addresses held. */
	if (bad == 0 && take_public(m) < 0)
		status = EXIT_FAIL;
	if (bad == 0) {
		log_info("cluster: every connected node runs configuration %s (cluster "
			 "generation %ld)",
			 want.id, want.generation);
		*summary = json_pack("{s:s, s:I, s:o}", "id", want.id, "generation",
				     (json_int_t)want.generation, "nodes", nodes);
		nodes = NULL;
		free(out);
		goto out;
	}
	status = EXIT_FAIL;
	roll_back(ctx, m, &rec, &want, self, wait_s, out, &recs);
	*summary =
		json_pack("{s:s, s:I, s:o, s:s}", "id", want.id, "generation",
			  (json_int_t)want.generation, "nodes", nodes, "rolled_back_to", want.prev);
	nodes = NULL;
	free(out);
out:
	cluster_rec_close(&rec);
	json_decref(nodes);
	free(recs);
	free(conf);
	free(cpath);
	return status;
}

int
cli_cluster_spread(struct ctx *ctx)
{
	struct apply_result res = { .generation = -1, .prev = -1 };
	struct rendered r;
	struct model *m;
	json_t *cj = NULL;
	int status = EXIT_OK;

	if (!(m = cli_load_model(ctx, &status)))
		return status;
	if (m->cluster.enabled && (status = cli_render(ctx, m, 0, &r)) == EXIT_OK) {
		struct state *st = NULL;
		char err[256];
		struct generation g = { 0 };

		/* The tune's winner is this node's newest generation: its record says so. */
		if (state_open(ctx->root, &st, err, sizeof(err)) == 0 &&
		    state_last_generation(st, &g) == 0)
			res.generation = g.id;
		generation_clear(&g);
		state_close(st);
		struct cluster_desired base = { 0 };

		if ((status = cli_cluster_prepare(ctx, m, &base)) == EXIT_OK)
			status = cli_cluster_apply(ctx, m, &r, &res, &base, false, 60, &cj);
		json_decref(cj);
		render_clear(&r);
	}
	model_free(m);
	return status;
}
