/* cmd_bench.c - `nastune bench`: options in, progress on stderr, the run (benchrun.c) printed
 * as a table or JSON. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "benchrun.h"
#include "cli.h"
#include "esc.h"
#include "log.h"
#include "model.h"
#include "sigstop.h"
#include "timeutil.h"
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
		    "                     [--files N] [--entries N] [--tree-files N] "
		    "[--video FORMAT@FPS,...]\n"
		    "                     "
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

/* One option of how to measure (--repeat ... --video-seconds) into o. Returns 0, -1 after
 * saying what is wrong, or 1 when c is not one of them. */
static int
parse_measure_opt(struct bench_opts *o, int c, const char *arg)
{
	char *end;

	switch (c) {
	case 'n':
		return parse_uint("--repeat", arg, 1, BENCH_MAX_REPEATS, &o->repeats);
	case 'W':
		return parse_uint("--warmup", arg, 0, BENCH_MAX_WARMUP, &o->warmup);
	case 'F':
		return parse_uint("--files", arg, 1, BENCH_MAX_FILES, &o->small_files);
	case 'E':
		return parse_uint("--entries", arg, 1, BENCH_MAX_ENTRIES, &o->meta_entries);
	case 'D':
		return parse_uint("--tree-files", arg, 1, BENCH_MAX_TREE_FILES, &o->tree_files);
	case 's':
		if (units_parse_size(arg, &o->size) < 0 || o->size < 4096 ||
		    o->size > BENCH_MAX_SIZE) {
			fprintf(stderr,
				"nastune bench: --size '%s' is not a size from 4K to 16T (e.g. "
				"64M, 1G)\n",
				arg);
			return -1;
		}
		return 0;
	case 'k':
		if (strcmp(arg, "hot") == 0)
			o->cache = BENCH_CACHE_HOT;
		else if (strcmp(arg, "cold") == 0)
			o->cache = BENCH_CACHE_COLD;
		else if (strcmp(arg, "auto") != 0) {
			fprintf(stderr, "nastune bench: --cache must be hot, cold or auto\n");
			return -1;
		}
		return 0;
	case 'S':
		o->video_seconds = strtod(arg, &end);
		if (*end || !(o->video_seconds >= 0.1 && o->video_seconds <= 3600)) {
			fprintf(stderr, "nastune bench: --video-seconds '%s' must be 0.1 to 3600\n",
				arg);
			return -1;
		}
		return 0;
	case 'f':
		o->force = true;
		return 0;
	}
	return 1;
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
		{ "tree-files", required_argument, NULL, 'D' },
		{ "video", required_argument, NULL, 'V' },
		{ "video-seconds", required_argument, NULL, 'S' },
		{ "no-baseline", no_argument, NULL, 'B' },
		{ "client", required_argument, NULL, 'c' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "clients-only", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *wls = NULL, *video_arg = NULL;
	char err[256];
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if ((rc = parse_measure_opt(&b->o, c, optarg)) <= 0) {
			if (rc < 0)
				return -1;
			continue;
		}
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
		case 'C':
			a->creds = optarg;
			break;
		case 'V':
			video_arg = optarg;
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
	if (benchrun_select(b, a->protos, wls, video_arg, err, sizeof(err)) < 0) {
		fprintf(stderr, "nastune bench: %s\n", err);
		return -1;
	}
	return 0;
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
	    benchrun_clients(b, ctx->root, m, a->clients, a->nclients, a->token, a->protos) < 0)
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
