/* cmd_apply.c - apply, rollback, status. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apply.h"
#include "cli.h"
#include "fsutil.h"
#include "hwinfo.h"
#include "knobs.h"
#include "log.h"
#include "mdns.h"
#include "model.h"
#include "render.h"
#include "runrec.h"
#include "service.h"
#include "state.h"

int
cmd_apply(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "no-reload", no_argument, NULL, 'R' },
		{ "if-changed", no_argument, NULL, 'i' },
		{ "lock-timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct apply_opts o = { .root = ctx->root, .json = ctx->json, .lock_timeout_s = 60 };
	struct rendered r;
	struct model *m;
	int c, status = EXIT_OK;
	char *end;

	while ((c = getopt_long(argc, argv, "nh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o.dry_run = true;
			break;
		case 'R':
			o.no_reload = true;
			break;
		case 'i':
			o.if_changed = true;
			break;
		case 't':
			o.lock_timeout_s = (int)strtol(optarg, &end, 10);
			if (*end || o.lock_timeout_s < 0 || o.lock_timeout_s > 3600) {
				fprintf(stderr, "nastune apply: --lock-timeout '%s' must be 0 to 3600 "
						"seconds\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			printf("usage: nastune apply [--dry-run] [--no-reload] [--if-changed] "
			       "[--lock-timeout SECONDS]\n");
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nastune apply: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!(m = o.dry_run ? cli_load_model(ctx, &status) : cli_load_model_recovered(ctx, &status)))
		return status;
	if ((status = cli_render(ctx, m, 0, &r)) == EXIT_OK) {
		status = apply_run(m, &r, &o);
		render_free(&r);
	}
	model_free(m);
	return status;
}

int
cmd_rollback(struct ctx *ctx, int argc, char **argv)
{
	struct apply_opts o = { .root = ctx->root, .json = ctx->json, .lock_timeout_s = 60 };
	struct model *m;
	long id = -1;
	int status = EXIT_OK;
	char *end;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: nastune rollback [GENERATION]\n");
		return EXIT_OK;
	}
	if (argc > 2) {
		fprintf(stderr, "nastune rollback: takes at most one generation number\n");
		return EXIT_USAGE;
	}
	if (argc == 2) {
		id = strtol(argv[1], &end, 10);
		if (*end || id < 0) {
			fprintf(stderr, "nastune rollback: '%s' is not a generation number — see "
					"`nastune status`\n", argv[1]);
			return EXIT_USAGE;
		}
	}
	if (!(m = cli_load_model(ctx, &status)))
		return status;
	status = apply_rollback(m, id, &o);
	model_free(m);
	return status;
}

int
cmd_status(struct ctx *ctx, int argc, char **argv)
{
	struct generation g = { 0 };
	struct state *st = NULL;
	struct hwinfo hw = { 0 };
	struct model *m;
	char err[512], hash[65], *text = NULL, *changes = NULL, *db;
	json_t *o = json_object(), *svcs = json_array(), *gens = json_array();
	struct mdns_service *seen = NULL;
	size_t nseen = 0;
	char merr[512] = "";
	int mrc;
	long *ids = NULL;
	size_t nids = 0, i;
	int status = EXIT_OK, s;
	struct stat sb;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: nastune status\n");
		json_decref(o);
		json_decref(svcs);
		json_decref(gens);
		return EXIT_USAGE;
	}
	if (!(m = cli_load_model(ctx, &status))) {
		json_decref(o);
		json_decref(svcs);
		json_decref(gens);
		return status;
	}
	if (runrec_read_hw(&hw) < 0)
		log_warnx("status: cannot read the hardware fingerprint");
	hwinfo_hash(&hw, hash);
	text = hwinfo_text(&hw);
	db = fs_rooted(ctx->root, "/var/lib/nastune/state.db");
	if (stat(db, &sb) == 0 && state_open(ctx->root, &st, err, sizeof(err)) == 0 &&
	    state_last_generation(st, &g) == 0) {
		state_generation_ids(st, &ids, &nids);
		changes = hwinfo_diff(g.hw_text, text);
		json_object_set_new(o, "generation", json_pack("{s:I, s:s, s:s, s:s, s:s, s:i}", "id",
							       (json_int_t)g.id, "created", g.created,
							       "reason", g.reason, "version", g.version,
							       "mtu_interface", g.mtu_iface, "mtu",
							       g.mtu));
	} else {
		json_object_set_new(o, "generation", json_null());
	}
	free(db);
	for (i = 0; i < nids; i++)
		json_array_append_new(gens, json_integer(ids[i]));
	json_object_set_new(o, "generations", gens);
	/* The daemons; the sysctl file and tuned.conf show up as knobs (nastune knobs). */
	for (s = 0; s < SVC_DAEMONS; s++) {
		const struct service_backend *be = service_backend(m, ctx->root, s);
		const struct service_desc *d = service_desc(m, s);

		json_array_append_new(svcs, json_pack("{s:s, s:s, s:s, s:b}", "service",
						      svc_name(s), "daemon", d->daemon, "backend",
						      be ? be->name : "?", "listening",
						      d->port && service_port_listening(d->port)));
	}
	json_object_set_new(o, "services", svcs);
	{
		json_error_t jerr;
		json_t *h = json_pack_ex(&jerr, 0, "{s:s, s:s, s:s, s:b}", "hash", hash, "text",
					 text ? text : "", "changed_since_apply",
					 changes ? changes : "", "retune_due", changes && *changes);

		if (!h)
			log_warnx("status: %s", jerr.text);
		json_object_set_new(o, "hardware", h ? h : json_null());
	}
	/* What clients see: the records on the network, as this host's avahi-daemon knows them. */
	mrc = mdns_browse(NULL, 4, true, 1500, &seen, &nseen, merr, sizeof(merr));
	json_object_set_new(o, "bonjour", json_pack("{s:b, s:s?, s:o}", "available", mrc == 0,
						    "error", mrc ? merr : NULL, "services",
						    mdns_services_json(seen, nseen)));
	if (ctx->json) {
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else {
		if (g.created)
			printf("generation %ld, %s (%s, nastune %s); kept:", g.id, g.created,
			       g.reason, g.version);
		else
			printf("no generation applied yet (run `nastune apply`)");
		for (i = 0; i < nids; i++)
			printf(" %ld", ids[i]);
		if (g.created && g.mtu)
			printf("\nMTU of %s with this generation: %d", g.mtu_iface, g.mtu);
		printf("\nservices:\n");
		for (s = 0; s < SVC_DAEMONS; s++) {
			const struct service_backend *be = service_backend(m, ctx->root, s);
			const struct service_desc *d = service_desc(m, s);

			printf("  %-5s %-13s backend %-8s %s\n", svc_name(s), d->daemon,
			       be ? be->name : "?", d->port ? (service_port_listening(d->port) ?
						"listening" : "not listening") : "");
		}
		{
			const struct knob *k;
			unsigned pinned = 0, tuned = 0;

			for (k = knob_first(); k; k = knob_next(k)) {
				pinned += knob_source(m, k->id) == KNOB_CONFIG;
				tuned += knob_source(m, k->id) == KNOB_TUNED;
			}
			printf("knobs: %u pinned in nastune.conf, %u from tuned.conf, the rest at "
			       "the daemons' defaults (nastune knobs)\n", pinned, tuned);
		}
		printf("hardware %.16s…:\n%s", hash, text);
		if (changes && *changes)
			printf("changed since the last apply (a re-tune is due):\n%s", changes);
		else if (g.created)
			printf("unchanged since the last apply\n");
		if (mrc < 0) {
			printf("Bonjour: cannot browse: %s\n", merr);
		} else {
			printf("Bonjour, as clients see it (IPv4):\n");
			for (i = 0; i < nseen; i++)
				printf("  %-18s %-24s %s:%d%s\n", seen[i].type, seen[i].name,
				       seen[i].address ? seen[i].address : "?", seen[i].port,
				       seen[i].local ? " (this host)" : "");
			if (nseen == 0)
				printf("  nothing advertised\n");
		}
	}
	mdns_services_free(seen, nseen);
	json_decref(o);
	free(ids);
	free(text);
	free(changes);
	generation_clear(&g);
	hwinfo_free(&hw);
	state_close(st);
	model_free(m);
	return EXIT_OK;
}
