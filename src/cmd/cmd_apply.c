/* cmd_apply.c - `nastune apply`: options in; the plan (a dry run), or what was done, out. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "buf.h"
#include "cli.h"
#include "cluster.h"
#include "log.h"
#include "netif.h"
#include "served.h"
#include "model.h"
#include "render.h"
#include "service.h"

/* The dry run's plan: a diff per file, then what would be reloaded or restarted, and the MTU. */
static void
show_dry_run(const struct ctx *ctx, const struct model *m, const struct apply_result *res,
	     bool no_reload)
{
	bool mtu = m->network.interface && m->network.mtu_mode != MTU_KEEP;
	size_t i;
	int s;

	if (res->nchanges == 0 && !mtu) {
		printf("nothing to do: the installed files match the configuration\n");
		return;
	}
	for (i = 0; i < res->nchanges; i++) {
		const struct apply_change *c = &res->changes[i];

		if (c->act == APPLY_REMOVED)
			printf("would remove %s\n", c->abs);
		else
			cli_show_diff(c->act == APPLY_UPDATED ? c->abs : "/dev/null", c->path,
				      c->data, c->len);
	}
	for (s = 0; s < SVC_COUNT; s++) {
		const struct service_backend *be;
		const struct service_desc *d = service_desc(m, s);

		if (!(res->changed & (1u << s)) || strcmp(d->action, "none") == 0)
			continue;
		be = service_backend(m, ctx->root, s);
		if (!(res->needs_restart & (1u << s)))
			printf("would %s %s (%s backend)\n", no_reload ? "not reload" : "reload",
			       d->daemon, be ? be->name : "?");
		else if (be && be->needs_start && !service_start(m, s))
			printf("would %s %s (%s backend; %s changed, which only a restart picks "
			       "up: set services.%s.start)\n",
			       no_reload ? "not reload" : "reload", d->daemon, be->name,
			       res->restart_why[s], svc_name(s));
		else
			printf("would %s %s (%s backend): %s changed\n",
			       no_reload ? "not restart" : "restart", d->daemon,
			       be ? be->name : "?", res->restart_why[s]);
	}
	if (mtu) {
		int cur = 0;

		netif_get_mtu(m->network.interface, &cur);
		if (m->network.mtu_mode == MTU_AUTO)
			printf("would choose the largest MTU of %s that every peer receives and "
			       "sends "
			       "with itself (now %d)\n",
			       m->network.interface, cur);
		else
			printf("would set the MTU of %s to %d%s (now %d)\n", m->network.interface,
			       m->network.mtu, m->network.peers.n ? " and prove it" : "", cur);
	}
}

/* The daemons of the services in mask, as a JSON array. */
static json_t *
daemons_json(const struct model *m, unsigned mask)
{
	json_t *a = json_array();
	int s;

	for (s = 0; s < SVC_COUNT; s++)
		if (mask & (1u << s))
			json_array_append_new(a, json_string(service_desc(m, s)->daemon));
	return a;
}

static json_t *
proofs_json(const struct apply_result *res)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < res->nproofs; i++) {
		const struct served_proof *p = &res->proofs[i];

		json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:s, s:s}", "share", p->share,
						   "protocol", p->proto, "served",
						   p->state == SERVED_SKIPPED
							   ? json_null()
							   : json_boolean(p->state == SERVED_YES),
						   "state", served_state_name(p->state), "answer",
						   p->answer));
	}
	return a;
}

/* The services that have something to reload ("none": tuned.conf, read by nastune). */
static unsigned
actionable(const struct model *m)
{
	unsigned mask = 0;
	int s;

	for (s = 0; s < SVC_COUNT; s++)
		if (strcmp(service_desc(m, s)->action, "none") != 0)
			mask |= 1u << s;
	return mask;
}

static void
print_json(const struct model *m, const struct apply_result *res, int rc, bool dry_run,
	   json_t *cluster)
{
	json_t *o = json_object(), *ch = json_array();
	size_t i;

	if (dry_run) {
		json_object_set_new(o, "dry_run", json_true());
		for (i = 0; i < res->nchanges; i++)
			json_array_append_new(ch, json_string(res->changes[i].path));
		json_object_set_new(o, "changed", ch);
		json_object_set_new(
			o, "would_reload",
			daemons_json(m, res->changed & ~res->needs_restart & actionable(m)));
		json_object_set_new(o, "would_restart",
				    daemons_json(m, res->needs_restart & actionable(m)));
		if (rc < 0)
			json_object_set_new(o, "error", json_string(res->msg));
		goto out;
	}
	json_object_set_new(o, "generation",
			    res->generation >= 0 ? json_integer(res->generation) : json_null());
	json_object_set_new(o, "previous", res->prev >= 0 ? json_integer(res->prev) : json_null());
	for (i = 0; i < res->nchanges; i++)
		json_array_append_new(ch, json_string(res->changes[i].path));
	json_object_set_new(o, "changed", ch);
	json_object_set_new(o, "reloaded", daemons_json(m, res->reloaded & ~res->restarted));
	json_object_set_new(o, "restarted", daemons_json(m, res->restarted));
	if (res->mtu_ran) {
		json_t *peers = json_array();

		for (i = 0; i < res->mtu.npeers; i++)
			json_array_append_new(
				peers, json_pack("{s:s, s:i, s:i}", "peer", res->mtu.peers[i].addr,
						 "largest", res->mtu.peers[i].largest, "peer_mtu",
						 res->mtu.peers[i].peer_mtu));
		json_object_set_new(o, "mtu",
				    json_pack("{s:s, s:i, s:i, s:i, s:b, s:o, s:i}", "interface",
					      m->network.interface, "old", res->mtu.old_mtu,
					      "final", res->mtu.final_mtu, "tried",
					      res->mtu.tried_mtu, "changed", res->mtu.changed,
					      "peers", peers, "peers_mtu", res->mtu.peers_mtu));
	}
	json_object_set_new(o, "proofs", proofs_json(res));
	if (cluster)
		json_object_set(o, "cluster", cluster);
	if (rc < 0) {
		json_object_set_new(o, "error", json_string(res->msg));
		json_object_set_new(o, "rolled_back", json_boolean(res->rolled_back));
	}
out:
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
}

/* One line per protocol for the shares proven served, one per reason for those not proven
 * (the daemon was not reloaded: one reason for all its shares), one per share not served;
 * each proof's answer with -v. */
static void
print_proofs(const struct apply_result *res)
{
	static const char *const protos[] = { "smb", "nfs", "afp" };
	size_t i, k, p;

	for (i = 0; i < res->nproofs; i++)
		log_debug("%s over %s: %s — %s", res->proofs[i].share, res->proofs[i].proto,
			  served_state_name(res->proofs[i].state), res->proofs[i].answer);
	for (p = 0; p < 3; p++) {
		struct buf b;
		unsigned n = 0;

		buf_init(&b);
		for (i = 0; i < res->nproofs; i++)
			if (res->proofs[i].state == SERVED_YES &&
			    strcmp(res->proofs[i].proto, protos[p]) == 0)
				buf_printf(&b, "%s%s", n++ ? ", " : "", res->proofs[i].share);
		if (n)
			log_info("served over %s, proven from this host: %s", protos[p], b.data);
		buf_clear(&b);
	}
	for (i = 0; i < res->nproofs; i++) {
		const struct served_proof *q = &res->proofs[i];
		struct buf b;
		bool first = true;

		if (q->state != SERVED_SKIPPED)
			continue;
		for (k = 0; k < i; k++) /* grouped with an earlier one */
			if (res->proofs[k].state == SERVED_SKIPPED &&
			    strcmp(res->proofs[k].proto, q->proto) == 0 &&
			    strcmp(res->proofs[k].answer, q->answer) == 0)
				break;
		if (k < i)
			continue;
		buf_init(&b);
		for (k = i; k < res->nproofs; k++)
			if (res->proofs[k].state == SERVED_SKIPPED &&
			    strcmp(res->proofs[k].proto, q->proto) == 0 &&
			    strcmp(res->proofs[k].answer, q->answer) == 0) {
				buf_printf(&b, "%s%s", first ? "" : ", ", res->proofs[k].share);
				first = false;
			}
		log_info("not proven over %s: %s — %s", q->proto, b.data, q->answer);
		buf_clear(&b);
	}
	for (i = 0; i < res->nproofs; i++)
		if (res->proofs[i].state == SERVED_NO)
			log_warnx("%s over %s: NOT served — %s", res->proofs[i].share,
				  res->proofs[i].proto, res->proofs[i].answer);
}

static void
print_text(const struct model *m, const struct apply_result *res)
{
	size_t i;

	print_proofs(res);
	if (res->generation < 0)
		return;
	for (i = 0; i < res->nchanges; i++)
		log_info("%s %s",
			 res->changes[i].act == APPLY_REMOVED	? "removed"
			 : res->changes[i].act == APPLY_UPDATED ? "updated"
								: "created",
			 res->changes[i].abs);
	if (res->mtu_ran)
		log_info("MTU of %s: %d%s%d%s", m->network.interface, res->mtu.old_mtu,
			 res->mtu.changed ? " -> " : " kept (tried ",
			 res->mtu.changed ? res->mtu.final_mtu : res->mtu.tried_mtu,
			 res->mtu.changed ? (res->mtu.npeers ? ", proven to every peer" : "")
					  : ")");
	log_info("applied as generation %ld (rollback: nastune rollback %ld)", res->generation,
		 res->prev);
}

/* Seconds from 0 to 3600 for option opt, or -1 after saying why not. */
static int
parse_seconds(const char *opt, const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || v < 0 || v > 3600) {
		fprintf(stderr, "nastune apply: %s '%s' must be 0 to 3600 seconds\n", opt, arg);
		return -1;
	}
	return (int)v;
}

struct apply_args {
	bool this_node;
	int wait_s;
};

/* The options into o and a. Returns EXIT_OK, or 100 after the help, or EXIT_USAGE. */
static int
parse_apply_args(int argc, char **argv, struct apply_opts *o, struct apply_args *a)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "no-reload", no_argument, NULL, 'R' },
		{ "if-changed", no_argument, NULL, 'i' },
		{ "lock-timeout", required_argument, NULL, 't' },
		{ "this-node", no_argument, NULL, 'T' },
		{ "cluster-wait", required_argument, NULL, 'W' },
		{ "drop-unmanaged", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "nh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->dry_run = true;
			break;
		case 'R':
			o->no_reload = true;
			break;
		case 'i':
			o->if_changed = true;
			break;
		case 't':
			if ((o->lock_timeout_s = parse_seconds("--lock-timeout", optarg)) < 0)
				return EXIT_USAGE;
			break;
		case 'D':
			o->drop_unmanaged = true;
			break;
		case 'T':
			a->this_node = true;
			break;
		case 'W':
			if ((a->wait_s = parse_seconds("--cluster-wait", optarg)) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			printf("usage: nastune apply [--dry-run] [--no-reload] [--if-changed] "
			       "[--lock-timeout SECONDS] [--drop-unmanaged] [--this-node] "
			       "[--cluster-wait SECONDS]\n");
			return 100;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nastune apply: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int
cmd_apply(struct ctx *ctx, int argc, char **argv)
{
	struct apply_opts o = { .root = ctx->root, .lock_timeout_s = 60 };
	struct apply_args a = { .wait_s = 60 };
	struct cluster_desired base = { 0 };
	struct apply_result res;
	struct rendered r;
	struct model *m;
	int status, rc;
	json_t *cj = NULL;

	if ((status = parse_apply_args(argc, argv, &o, &a)) != EXIT_OK)
		return status == 100 ? EXIT_OK : status;
	if (!(m = o.dry_run ? cli_load_model(ctx, &status)
			    : cli_load_model_recovered(ctx, &status)))
		return status;
	if ((status = cli_cluster_host(m)) != EXIT_OK) {
		model_free(m);
		return status;
	}
	if (a.this_node && !m->cluster.enabled) {
		fprintf(stderr, "nastune apply: --this-node is for a cluster (no cluster group)\n");
		model_free(m);
		return EXIT_USAGE;
	}
	if ((status = cli_check_host(m)) == EXIT_OK &&
	    (o.dry_run || !m->cluster.enabled ||
	     (status = cli_cluster_prepare(ctx, m, &base)) == EXIT_OK) &&
	    (status = cli_render(ctx, m, 0, &r)) == EXIT_OK) {
		rc = apply_run(m, &r, &o, &res);
		if (rc < 0) {
			/* Every line of a refusal (each missing directory) on its own line. */
			char *line, *save = NULL;

			for (line = strtok_r(res.msg, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save))
				log_warnx("%s", line);
			status = rc == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
		}
		/* A cluster: the other nodes follow what this one applied (or it stays alone). */
		if (rc == 0 && !o.dry_run && m->cluster.enabled)
			status = cli_cluster_apply(ctx, m, &r, &res, &base, a.this_node, a.wait_s,
						   &cj);
		if (ctx->json)
			print_json(m, &res, rc, o.dry_run, cj);
		else if (o.dry_run && rc == 0)
			show_dry_run(ctx, m, &res, o.no_reload);
		else
			print_text(m, &res);
		json_decref(cj);
		apply_result_clear(&res);
		render_clear(&r);
	}
	model_free(m);
	return status;
}
