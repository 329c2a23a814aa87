/* cmd_bench.c - bench, report, history: options in, progress on stderr, the run (benchrun.c)
 * printed as a table or JSON. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentctl.h"
#include "bench.h"
#include "esc.h"
#include "benchrun.h"
#include "buf.h"
#include "cli.h"
#include "fsutil.h"
#include "log.h"
#include "model.h"
#include "paths.h"
#include "sigstop.h"
#include "state.h"
#include "timeutil.h"
#include "tune.h"
#include "units.h"
#include "xmalloc.h"

struct progress {
	bool tty, quiet;
	unsigned done, total;
	double t0;
};

static void
show_progress(const struct bench_progress *p, void *arg)
{
	struct progress *pr = arg;
	double el = timeutil_mono() - pr->t0, eta;
	unsigned pct, i, fill;
	char *tg, *wl;

	if (pr->done < pr->total)
		pr->done++;
	if (pr->quiet)
		return;
	tg = esc_term(p->target); /* an agent's frames name them */
	wl = esc_term(p->workload);
	if (!pr->tty) {
		fprintf(stderr, "nastune: bench: %s %s: run %u of %u%s\n", tg, wl, p->run, p->runs,
			p->warmup ? " (warm-up)" : "");
		goto out;
	}
	pct = pr->total ? pr->done * 100 / pr->total : 0;
	fill = pct * 20 / 100;
	eta = pr->done > 1 ? el / (pr->done - 1) * (pr->total - pr->done + 1) : 0;
	fputs("\r\033[K[", stderr);
	for (i = 0; i < 20; i++)
		fputc(i < fill ? '#' : '.', stderr);
	fprintf(stderr, "] %3u%% %s %s %u/%u", pct, tg, wl, p->run, p->runs);
	if (pr->done > 1)
		fprintf(stderr, " ETA %um%02us", (unsigned)eta / 60, (unsigned)eta % 60);
	fflush(stderr);
out:
	free(tg);
	free(wl);
}

/* After each workload: the progress bar's line is cleared for what comes next. */
static void
end_progress_line(void *arg)
{
	struct progress *pr = arg;

	if (pr->tty && !pr->quiet)
		fputs("\r\033[K", stderr);
}

static void
cmd_bench_usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: nastune bench [--protocol LIST] [--workload LIST] [--target URL]... "
		    "[--repeat N] [--warmup N]\n"
		    "                     [--size SIZE] [--credentials FILE] [--force] "
		    "[--cache hot|cold|auto]\n"
		    "                     [--files N] [--entries N] [--video FORMAT@FPS,...] "
		    "[--video-seconds S] [--no-baseline]\n"
		    "                     [--client HOST[:PORT]|auto]... [--token-file FILE] "
		    "[--clients-only]\n"
		    "workloads:");
	for (i = 0; i < BENCH_NWORKLOADS; i++)
		fprintf(fp, " %s", bench_workload_name(i));
	fprintf(fp, "\nprotocols: null posix smb nfs afp (those with a driver in this build:");
	for (i = 0; bench_drivers()[i]; i++)
		fprintf(fp, " %s", bench_drivers()[i]->name);
	fprintf(fp, ")\nvideo formats:");
	for (i = 0; bench_video_formats()[i]; i++)
		fprintf(fp, " %s", bench_video_formats()[i]->name);
	fprintf(fp, "\ntargets: file:///path, smb://[user@]host/share[/dir], "
		    "nfs://host/export[?version=3|4], afp://[user@]host/volume, null://name\n");
}

static int
parse_uint(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v < lo || v > hi) {
		fprintf(stderr, "nastune bench: %s '%s' must be a number from %u to %u\n", opt, s,
			lo, hi);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

struct bench_args {
	const char *protos, *creds, *token;
	char **urls, **clients;
	size_t nurls, nclients;
	bool clients_only;
};

/* Checks --protocol and --workload and parses --video into b. Returns 0, or -1 after saying
 * what is wrong. */
static int
parse_lists(struct benchrun *b, const char *protos, const char *wls, const char *video_arg)
{
	char *copy, *save = NULL, *tok;
	size_t i;
	int rc = 0, w;

	copy = xstrdup(protos ? protos : "");
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
		if (!units_in_list("null,posix,smb,nfs,afp", tok)) {
			fprintf(stderr,
				"nastune bench: unknown protocol '%s' (null, posix, smb, nfs, "
				"afp)\n",
				tok);
			rc = -1;
		}
	free(copy);
	for (i = 0; i < BENCH_NWORKLOADS; i++)
		b->wl[i] = !wls;
	copy = xstrdup(wls ? wls : "");
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		if ((w = bench_workload_parse(tok)) < 0) {
			fprintf(stderr,
				"nastune bench: unknown workload '%s' — see `nastune bench "
				"--help`\n",
				tok);
			rc = -1;
		} else {
			b->wl[w] = true;
		}
	}
	free(copy);
	copy = xstrdup(video_arg ? video_arg : "");
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		struct benchrun_video *v = &b->videos[b->nvideo];

		if (b->nvideo == BENCHRUN_MAX_VIDEO ||
		    bench_video_parse(tok, &v->fmt, &v->fps) < 0) {
			fprintf(stderr,
				"nastune bench: --video '%s' is not FORMAT@FPS with a known "
				"format (see --help) and 1-240 fps\n",
				tok);
			rc = -1;
		} else {
			b->nvideo++;
		}
	}
	free(copy);
	return rc;
}

/* The options into b and a. Returns 0, 1 after printing the help, or -1 (usage). */
static int
parse_args(struct benchrun *b, struct bench_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "protocol", required_argument, NULL, 'p' },
		{ "workload", required_argument, NULL, 'w' },
		{ "target", required_argument, NULL, 't' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "size", required_argument, NULL, 's' },
		{ "credentials", required_argument, NULL, 'C' },
		{ "force", no_argument, NULL, 'f' },
		{ "cache", required_argument, NULL, 'k' },
		{ "files", required_argument, NULL, 'F' },
		{ "entries", required_argument, NULL, 'E' },
		{ "video", required_argument, NULL, 'V' },
		{ "video-seconds", required_argument, NULL, 'S' },
		{ "no-baseline", no_argument, NULL, 'B' },
		{ "client", required_argument, NULL, 'c' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "clients-only", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_opts *o = &b->o;
	const char *wls = NULL, *video_arg = NULL;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			a->protos = optarg;
			break;
		case 'w':
			wls = optarg;
			break;
		case 't':
			a->urls = xreallocarray(a->urls, a->nurls + 1, sizeof(*a->urls));
			a->urls[a->nurls++] = optarg;
			break;
		case 'n':
			if (parse_uint("--repeat", optarg, 1, BENCH_MAX_REPEATS, &o->repeats) < 0)
				return -1;
			break;
		case 'W':
			if (parse_uint("--warmup", optarg, 0, BENCH_MAX_WARMUP, &o->warmup) < 0)
				return -1;
			break;
		case 's':
			if (units_parse_size(optarg, &o->size) < 0 || o->size < 4096 ||
			    o->size > BENCH_MAX_SIZE) {
				fprintf(stderr,
					"nastune bench: --size '%s' is not a size from 4K to "
					"16T (e.g. 64M, 1G)\n",
					optarg);
				return -1;
			}
			break;
		case 'C':
			a->creds = optarg;
			break;
		case 'f':
			o->force = true;
			break;
		case 'k':
			if (strcmp(optarg, "hot") == 0)
				o->cache = BENCH_CACHE_HOT;
			else if (strcmp(optarg, "cold") == 0)
				o->cache = BENCH_CACHE_COLD;
			else if (strcmp(optarg, "auto") != 0) {
				fprintf(stderr,
					"nastune bench: --cache must be hot, cold or auto\n");
				return -1;
			}
			break;
		case 'F':
			if (parse_uint("--files", optarg, 1, BENCH_MAX_FILES, &o->small_files) < 0)
				return -1;
			break;
		case 'E':
			if (parse_uint("--entries", optarg, 1, BENCH_MAX_ENTRIES,
				       &o->meta_entries) < 0)
				return -1;
			break;
		case 'V':
			video_arg = optarg;
			break;
		case 'S':
			o->video_seconds = strtod(optarg, &end);
			if (*end || !(o->video_seconds >= 0.1 && o->video_seconds <= 3600)) {
				fprintf(stderr,
					"nastune bench: --video-seconds '%s' must be 0.1 to "
					"3600\n",
					optarg);
				return -1;
			}
			break;
		case 'B':
			b->no_baseline = true;
			break;
		case 'c':
			if (!cli_client_spec_ok(optarg))
				return -1;
			a->clients =
				xreallocarray(a->clients, a->nclients + 1, sizeof(*a->clients));
			a->clients[a->nclients++] = optarg;
			break;
		case 'T':
			a->token = optarg;
			break;
		case 'O':
			a->clients_only = true;
			break;
		case 'h':
			cmd_bench_usage(stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nastune bench: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return parse_lists(b, a->protos, wls, video_arg);
}

/* The targets: the configuration (required to derive them; with --target, read when present
 * to recognise Time Machine shares), then each --target or the derived ones. Returns
 * EXIT_OK with *m (NULL when not read), or the exit status after saying why. */
static int
plan(const struct ctx *ctx, struct benchrun *b, const struct bench_args *a, struct model **m)
{
	char *path = cli_config_path(ctx), err[1024];
	struct stat sb;
	size_t i;
	int status = EXIT_OK;

	if (!a->nurls || stat(path, &sb) == 0)
		*m = cli_load_model(ctx, &status); /* an invalid file is never ignored */
	free(path);
	if (status != EXIT_OK)
		return status;
	for (i = 0; i < a->nurls; i++)
		if (benchrun_add_url(b, *m, ctx->root, a->urls[i], a->protos, err, sizeof(err)) <
		    0) {
			fprintf(stderr, "nastune bench: %s\n", err);
			return EXIT_USAGE;
		}
	if (a->clients_only && !a->nclients) {
		fprintf(stderr,
			"nastune bench: --clients-only needs --client HOST or --client auto\n");
		return EXIT_USAGE;
	}
	if (a->nclients && !*m) {
		fprintf(stderr, "nastune bench: --client needs the configuration (its shares are "
				"what the agents benchmark)\n");
		return EXIT_USAGE;
	}
	if (!a->nurls && !a->clients_only)
		benchrun_derive_targets(b, *m, ctx->root, a->protos);
	if (benchrun_credentials(b, a->creds, err, sizeof(err)) < 0) {
		fprintf(stderr, "nastune bench: %s\n", err);
		return EXIT_USAGE;
	}
	if (!b->ntg && !a->nclients) {
		log_warnx("bench: nothing to benchmark (no target with a driver in this build)");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* Runs the plan here, then on the agents; returns the exit status so far. */
static int
run(const struct ctx *ctx, struct benchrun *b, const struct bench_args *a, const struct model *m)
{
	struct progress pr = { 0 };
	struct sigaction old[2];
	int status = EXIT_OK;

	/* A server or agent that hangs up must give an error, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	sigstop_catch(old);
	pr.tty = isatty(STDERR_FILENO);
	pr.quiet = log_verbosity() < 0;
	pr.t0 = timeutil_mono();
	pr.total = benchrun_total_runs(b);
	b->o.progress = show_progress;
	b->o.progress_arg = &pr;
	b->workload_done = end_progress_line;
	b->workload_arg = &pr;
	b->o.stop = &sigstop_caught;
	if (b->o.cache == BENCH_CACHE_COLD && geteuid() == 0)
		b->o.drop_caches = benchrun_drop_caches;

	if (benchrun_run(b) < 0)
		status = EXIT_FAIL;
	/* Client-assisted: the same workloads from the agents' machines. */
	if (a->nclients && !sigstop_caught && benchrun_any_workload(b) &&
	    agentctl_bench(ctx->root, m, a->clients, a->nclients, a->token, a->protos, b->wl, &b->o,
			   &b->all, b->errors, b->agents) < 0)
		status = EXIT_FAIL;
	sigstop_restore(old);
	if (sigstop_caught) {
		log_warnx("bench: interrupted by %s; scratch directories removed",
			  sigstop_caught == SIGINT ? "SIGINT" : "SIGTERM");
		status = EXIT_FAIL;
	}
	return status;
}

int
cmd_bench(struct ctx *ctx, int argc, char **argv)
{
	struct benchrun b;
	struct bench_args a = { 0 };
	struct model *m = NULL;
	json_t *doc = NULL;
	char err[1024];
	long run_id;
	int rc, status;

	benchrun_init(&b);
	if ((rc = parse_args(&b, &a, argc, argv)) != 0) {
		status = rc > 0 ? EXIT_OK : EXIT_USAGE;
		goto out;
	}
	if ((status = plan(ctx, &b, &a, &m)) != EXIT_OK)
		goto out;
	status = run(ctx, &b, &a, m);

	/* Stored with the generation in force and the hardware fingerprint. */
	if (benchrun_store(&b, ctx->root, &doc, &run_id, err, sizeof(err)) < 0) {
		log_warnx("bench: cannot store the run: %s", err);
		status = EXIT_FAIL;
	} else {
		log_info("bench: stored as run %ld (`nastune report --run %ld`)", run_id, run_id);
	}
	if (ctx->json) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else {
		char *text = bench_report_text(doc, err, sizeof(err));

		if (text)
			fputs(text, stdout);
		free(text);
	}
out:
	free(a.urls);
	free(a.clients);
	json_decref(doc);
	benchrun_clear(&b);
	model_free(m);
	return status;
}

/* Opens the state database only when it exists (report and history never create it). */
static int
open_existing(const struct ctx *ctx, struct state **st, const char *cmd)
{
	char *db = paths_state_db(ctx->root), err[512];
	struct stat sb;
	int rc;

	if (stat(db, &sb) < 0) {
		fprintf(stderr, "nastune %s: no benchmark runs yet (no %s) — run `nastune bench`\n",
			cmd, db);
		free(db);
		return -ENOENT;
	}
	free(db);
	if ((rc = state_open(ctx->root, st, err, sizeof(err))) < 0)
		fprintf(stderr, "nastune %s: %s\n", cmd, err);
	return rc;
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
	if (tune) {
		long tid;
		char *hw = NULL, *text = NULL;

		if ((rc = state_get_tune(st, id, &tid, &hw, &text)) < 0) {
			fprintf(stderr,
				rc == -ENOENT ? (id >= 0 ? "nastune report: no tune %ld\n"
							 : "nastune report: no tune yet — run "
							   "`nastune tune`\n")
					      : "nastune report: cannot read the state database\n",
				id);
			state_close(st);
			return rc == -ENOENT && id >= 0 ? EXIT_USAGE : EXIT_FAIL;
		}
		run.id = tid;
		run.json = text;
		free(hw);
	} else if ((rc = state_get_bench_run(st, id, &run)) < 0) {
		if (rc == -ENOENT && id >= 0)
			fprintf(stderr, "nastune report: no run %ld — see `nastune history`\n", id);
		else if (rc == -ENOENT)
			fprintf(stderr,
				"nastune report: no benchmark runs yet — run `nastune bench`\n");
		else
			fprintf(stderr, "nastune report: cannot read the state database\n");
		status = rc == -ENOENT && id >= 0 ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
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
