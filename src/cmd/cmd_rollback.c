/* cmd_rollback.c - rollback, repair: a generation put back, chosen by the user or left by an
 * interrupted apply. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "cli.h"
#include "log.h"
#include "model.h"

int
cmd_rollback(struct ctx *ctx, int argc, char **argv)
{
	struct apply_opts o = { .root = ctx->root, .lock_timeout_s = 60 };
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
			fprintf(stderr,
				"nastune rollback: '%s' is not a generation number — see "
				"`nastune status`\n",
				argv[1]);
			return EXIT_USAGE;
		}
	}
	if (!(m = cli_load_model_recovered(ctx, &status)))
		return status;
	status = apply_rollback(m, id, &o);
	status = status == 0 ? EXIT_OK : status == -ENOENT ? EXIT_USAGE : EXIT_FAIL;
	model_free(m);
	return status;
}

int
cmd_repair(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "boot", no_argument, NULL, 'b' },
		{ "no-reload", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct apply_opts o = { .root = ctx->root, .lock_timeout_s = 60 };
	struct apply_interruption ai;
	struct model *m;
	long recorded = -1;
	int c, status = EXIT_OK, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			o.boot = true;
			break;
		case 'R':
			o.no_reload = true;
			break;
		case 'h':
			printf("usage: nastune repair [--boot] [--no-reload]\n");
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nastune repair: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (apply_interrupted(ctx->root, &ai) == 0) {
		if (ctx->json)
			printf("{\n  \"repaired\": false\n}\n");
		else
			log_info("nothing to repair: no apply was interrupted");
		apply_interruption_clear(&ai);
		return EXIT_OK;
	}
	cli_warn_interrupted(ctx, &ai, true);
	if (!(m = cli_load_model_as(ctx, &status, CLI_PENDING_QUIET))) {
		if (!o.boot)
			goto out;
		/* At boot the repair must not wait for a configuration edited since: the service
		 * backends' defaults serve (only the sysctl file is loaded). */
		log_warnx("repair: the configuration does not load; repairing with the defaults");
		m = model_new();
		status = EXIT_OK;
	}
	rc = apply_repair(m, &o, &recorded);
	if (rc < 0) {
		status = EXIT_FAIL;
	} else if (rc == 1 && recorded >= 0) {
		log_info("repaired: generation %ld is back in force, recorded as generation %ld",
			 ai.prev, recorded);
	} else if (rc == 1) {
		log_info("repaired: generation %ld is in force; its journal is dropped",
			 ai.recorded);
	}
	if (ctx->json) {
		json_t *j = json_pack("{s:b, s:o, s:o}", "repaired", rc == 1, "interrupted_apply",
				      cli_interrupted_json(ctx, &ai), "generation",
				      recorded >= 0 ? json_integer(recorded) : json_null());

		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(j);
	}
	model_free(m);
out:
	apply_interruption_clear(&ai);
	return status;
}
