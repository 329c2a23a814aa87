/* cmd_status.c - `nastune status`: what status_collect() found (status.c), as text or JSON,
 * with the cluster's view when this host is a node. */
#include <jansson.h>
#include <stdio.h>

#include "apply.h"
#include "buf.h"
#include "cli.h"
#include "log.h"
#include "mdns.h"
#include "model.h"
#include "status.h"

/* status --json: one object; "hardware" is null when its text is not valid UTF-8. */
static void
print_status_json(const struct ctx *ctx, const struct status *st, json_t *cluster)
{
	json_t *o = json_object(), *svcs = json_array(), *gens = json_array(), *h;
	json_error_t jerr;
	size_t i;
	int s;

	json_object_set_new(o, "interrupted_apply",
			    st->interrupted ? cli_interrupted_json(ctx, &st->pending)
					    : json_null());
	if (st->has_generation)
		json_object_set_new(o, "generation",
				    json_pack("{s:I, s:s, s:s, s:s, s:s, s:i}", "id",
					      (json_int_t)st->gen.id, "created", st->gen.created,
					      "reason", st->gen.reason, "version", st->gen.version,
					      "mtu_interface", st->gen.mtu_iface, "mtu",
					      st->gen.mtu));
	else
		json_object_set_new(o, "generation", json_null());
	for (i = 0; i < st->ngen_ids; i++)
		json_array_append_new(gens, json_integer(st->gen_ids[i]));
	json_object_set_new(o, "generations", gens);
	for (s = 0; s < SVC_DAEMONS; s++)
		json_array_append_new(svcs, json_pack("{s:s, s:s, s:s, s:b}", "service",
						      svc_name(s), "daemon", st->services[s].daemon,
						      "backend", st->services[s].backend,
						      "listening", st->services[s].listening));
	json_object_set_new(o, "services", svcs);
	h = json_pack_ex(&jerr, 0, "{s:s, s:s, s:s, s:b}", "hash", st->hw_hash, "text",
			 st->hw_text ? st->hw_text : "", "changed_since_apply",
			 st->hw_changes ? st->hw_changes : "", "retune_due", status_retune_due(st));
	if (!h)
		log_warnx("status: %s", jerr.text);
	json_object_set_new(o, "hardware", h ? h : json_null());
	json_object_set_new(o, "bonjour",
			    json_pack("{s:b, s:s?, s:o}", "available", st->mdns_rc == 0, "error",
				      st->mdns_rc ? st->mdns_err : NULL, "services",
				      mdns_services_json(st->seen, st->nseen)));
	if (cluster)
		json_object_set(o, "cluster", cluster);
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
}

static void
print_status_text(const struct ctx *ctx, const struct status *st)
{
	const struct generation *g = &st->gen;
	size_t i;
	int s;

	if (st->interrupted) {
		struct buf b;

		buf_init(&b);
		cli_interrupted_text(ctx, &st->pending, false, &b);
		printf("INTERRUPTED: %s", b.data);
		buf_clear(&b);
	}
	if (st->has_generation)
		printf("generation %ld, %s (%s, nastune %s); kept:", g->id, g->created, g->reason,
		       g->version);
	else
		printf("no generation applied yet (run `nastune apply`)");
	for (i = 0; i < st->ngen_ids; i++)
		printf(" %ld", st->gen_ids[i]);
	if (st->has_generation && g->mtu)
		printf("\nMTU of %s with this generation: %d", g->mtu_iface, g->mtu);
	printf("\nservices:\n");
	for (s = 0; s < SVC_DAEMONS; s++) {
		const struct status_service *v = &st->services[s];

		printf("  %-5s %-13s backend %-8s %s\n", svc_name(s), v->daemon, v->backend,
		       !v->has_port   ? ""
		       : v->listening ? "listening"
				      : "not listening");
	}
	printf("knobs: %u pinned in nastune.conf, %u from tuned.conf, the rest at the daemons' "
	       "defaults (nastune knobs)\n",
	       st->knobs_pinned, st->knobs_tuned);
	printf("hardware %.16s…:\n%s", st->hw_hash, st->hw_text);
	if (status_retune_due(st))
		printf("changed since the last apply (a re-tune is due):\n%s", st->hw_changes);
	else if (st->has_generation)
		printf("unchanged since the last apply\n");
	if (st->mdns_rc < 0) {
		printf("Bonjour: cannot browse: %s\n", st->mdns_err);
		return;
	}
	printf("Bonjour, as clients see it (IPv4):\n");
	for (i = 0; i < st->nseen; i++)
		printf("  %-18s %-24s %s:%d%s\n", st->seen[i].type, st->seen[i].name,
		       st->seen[i].address ? st->seen[i].address : "?", st->seen[i].port,
		       st->seen[i].local ? " (this host)" : "");
	if (st->nseen == 0)
		printf("  nothing advertised\n");
}

int
cmd_status(struct ctx *ctx, int argc, char **argv)
{
	struct status st;
	struct model *m;
	json_t *cj;
	int status = EXIT_OK;
	bool inconsistent;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: nastune status\n");
		return EXIT_USAGE;
	}
	if (!(m = cli_load_model_as(ctx, &status, CLI_PENDING_QUIET))) {
		struct apply_interruption ai;

		/* Named even so: the files may be of two generations. */
		if (apply_interrupted(ctx->root, &ai) == 1)
			cli_warn_interrupted(ctx, &ai, false);
		apply_interruption_clear(&ai);
		return status;
	}
	status_collect(m, ctx->root, &st);
	if (st.hw_unread)
		log_warnx("status: cannot read the hardware fingerprint");
	/* A cluster: every node's state and configuration first (ctdb and the record). */
	cj = m->cluster.enabled ? cli_cluster_status(ctx, m, !ctx->json) : NULL;
	/* A cluster whose nodes disagree, or whose record is refused, is not in order. */
	inconsistent = cj && json_is_false(json_object_get(cj, "consistent"));
	if (ctx->json)
		print_status_json(ctx, &st, cj);
	else
		print_status_text(ctx, &st);
	json_decref(cj);
	/* Until it is repaired the NAS may serve files of two generations. */
	status = st.interrupted || inconsistent ? EXIT_FAIL : EXIT_OK;
	status_release(&st);
	model_free(m);
	return status;
}
