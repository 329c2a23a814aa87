/* cmd_report.c - report, history: the stored benchmark runs and tunes, as text, HTML or
 * JSON. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "buf.h"
#include "cli.h"
#include "esc.h"
#include "fsutil.h"
#include "log.h"
#include "state.h"
#include "tune.h"

/* Opens the state database only when it exists (report and history never create it). */
static int
open_existing(const struct ctx *ctx, struct state **st, const char *cmd)
{
	char err[512];
	int rc = state_open_existing(ctx->root, st, err, sizeof(err));

	if (rc == -ENOENT)
		fprintf(stderr, "nastune %s: no benchmark runs yet (%s) — run `nastune bench`\n",
			cmd, err);
	else if (rc < 0)
		fprintf(stderr, "nastune %s: %s\n", cmd, err);
	return rc;
}

/* Run id (the newest when id < 0), or with tune the tune id, into run. Returns EXIT_OK, or
 * the exit status after saying why not. */
static int
read_run(struct state *st, long id, bool tune, struct state_bench_run *run)
{
	long tid;
	char *hw = NULL, *text = NULL;
	int rc;

	if (tune) {
		if ((rc = state_get_tune(st, id, &tid, &hw, &text)) < 0) {
			fprintf(stderr,
				rc == -ENOENT ? (id >= 0 ? "nastune report: no tune %ld\n"
							 : "nastune report: no tune yet — run "
							   "`nastune tune`\n")
					      : "nastune report: cannot read the state database\n",
				id);
			return rc == -ENOENT && id >= 0 ? EXIT_USAGE : EXIT_FAIL;
		}
		run->id = tid;
		run->json = text;
		free(hw);
		return EXIT_OK;
	}
	if ((rc = state_get_bench_run(st, id, run)) < 0) {
		if (rc == -ENOENT && id >= 0)
			fprintf(stderr, "nastune report: no run %ld — see `nastune history`\n", id);
		else if (rc == -ENOENT)
			fprintf(stderr,
				"nastune report: no benchmark runs yet — run `nastune bench`\n");
		else
			fprintf(stderr, "nastune report: cannot read the state database\n");
		return rc == -ENOENT && id >= 0 ? EXIT_USAGE : EXIT_FAIL;
	}
	return EXIT_OK;
}

int
cmd_report(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "html", required_argument, NULL, 'H' },
		{ "run", required_argument, NULL, 'r' },
		{ "tune", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct state_bench_run run = { 0 };
	bool tune = false;
	const char *html = NULL;
	struct state *st = NULL;
	json_t *doc = NULL;
	json_error_t jerr;
	char err[512], *out = NULL, *end;
	long id = -1;
	int c, rc, status = EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'H':
			html = optarg;
			break;
		case 'r':
			id = strtol(optarg, &end, 10);
			if (*end || id < 1) {
				fprintf(stderr,
					"nastune report: --run '%s' is not a run number — see "
					"`nastune history`\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 't':
			tune = true;
			break;
		case 'h':
			printf("usage: nastune report [--tune] [--html FILE] [--run ID]\n");
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nastune report: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (open_existing(ctx, &st, "report") < 0)
		return EXIT_FAIL;
	if ((status = read_run(st, id, tune, &run)) != EXIT_OK)
		goto out;
	status = EXIT_FAIL;
	if (!(doc = json_loads(run.json, 0, &jerr))) {
		fprintf(stderr, "nastune report: run %ld is not valid JSON: %s\n", run.id,
			jerr.text);
		goto out;
	}
	if (ctx->json && !html) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		status = EXIT_OK;
		goto out;
	}
	if (tune)
		out = html ? tune_report_html(doc, err, sizeof(err))
			   : tune_report_text(doc, err, sizeof(err));
	else
		out = html ? bench_report_html(doc, err, sizeof(err))
			   : bench_report_text(doc, err, sizeof(err));
	if (!out) {
		fprintf(stderr, "nastune report: run %ld: %s\n", run.id, err);
		goto out;
	}
	if (html) {
		if ((rc = fs_write_atomic(html, out, strlen(out), 0644, 0)) < 0) {
			fprintf(stderr, "nastune report: cannot write %s: %s\n", html,
				strerror(-rc));
			goto out;
		}
		log_info("report: run %ld written to %s", run.id, html);
	} else {
		fputs(out, stdout);
	}
	status = EXIT_OK;
out:
	free(out);
	json_decref(doc);
	state_bench_run_clear(&run);
	state_close(st);
	return status;
}

int
cmd_history(struct ctx *ctx, int argc, char **argv)
{
	struct state_bench_run *runs = NULL;
	struct state *st = NULL;
	json_t *list = json_array();
	size_t n = 0, i;
	int status = EXIT_FAIL;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: nastune history\n");
		json_decref(list);
		return strcmp(argv[1], "--help") == 0 ? EXIT_OK : EXIT_USAGE;
	}
	if (open_existing(ctx, &st, "history") < 0) {
		json_decref(list);
		return EXIT_FAIL;
	}
	if (state_list_bench_runs(st, &runs, &n) < 0) {
		fprintf(stderr, "nastune history: cannot read the state database\n");
		goto out;
	}
	if (!ctx->json)
		printf("%5s  %-20s  %4s  %-12s  %7s  %6s  %s\n", "run", "created", "gen",
		       "hardware", "results", "errors", "targets");
	for (i = 0; i < n; i++) {
		json_t *doc = json_loads(runs[i].json, 0, NULL), *targets = json_array(), *v;
		const json_t *res = json_object_get(doc, "results");
		size_t k, nres = json_array_size(res), nerr;
		struct buf tl;

		nerr = json_array_size(json_object_get(doc, "errors"));
		buf_init(&tl);
		json_array_foreach(res, k, v)
		{
			const char *t = json_string_value(json_object_get(v, "target"));
			size_t j;
			json_t *x;
			bool seen = false;

			json_array_foreach(targets, j, x) seen |=
				t && strcmp(json_string_value(x), t) == 0;
			if (t && !seen) {
				json_array_append_new(targets, json_string(t));
				char *e = esc_term(t);

				buf_printf(&tl, "%s%s", tl.len ? " " : "", e);
				free(e);
			}
		}
		if (ctx->json) {
			json_array_append_new(list,
					      json_pack("{s:I, s:s, s:o, s:s, s:I, s:I, s:o}",
							"run", (json_int_t)runs[i].id, "created",
							runs[i].created, "generation",
							runs[i].gen >= 0 ? json_integer(runs[i].gen)
									 : json_null(),
							"hw_hash", runs[i].hw_hash, "results",
							(json_int_t)nres, "errors",
							(json_int_t)nerr, "targets", targets));
		} else {
			char gen[16];

			snprintf(gen, sizeof(gen), "%ld", runs[i].gen);
			printf("%5ld  %-20s  %4s  %-12.12s  %7zu  %6zu  %s\n", runs[i].id,
			       runs[i].created, runs[i].gen >= 0 ? gen : "-", runs[i].hw_hash, nres,
			       nerr, tl.data ? tl.data : "");
			json_decref(targets);
		}
		buf_clear(&tl);
		json_decref(doc);
	}
	if (ctx->json) {
		json_t *o = json_pack("{s:o}", "runs", list);

		list = NULL;
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	}
	status = EXIT_OK;
out:
	for (i = 0; i < n; i++)
		state_bench_run_clear(&runs[i]);
	free(runs);
	json_decref(list);
	state_close(st);
	return status;
}
