/* cmd_tune.c - `nastune tune`: options in, the tune's report out. The tune itself, with the
 * real machine (trial installs, bench runs over loopback, the agents, the NIC MTU, the state
 * store), is tune_machine_run (tune/machine.c). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "knobs.h"
#include "log.h"
#include "model.h"
#include "render.h"
#include "templates.h"
#include "tune.h"
#include "tune_machine.h"
#include "units.h"
#include "xmalloc.h"

#define TUNE_USAGE                                                                                 \
	"usage: nastune tune [--budget TIME] [--goal G] [--clients auto|HOST]... "                 \
	"[--token-file F] [--credentials F]\n"                                                     \
	"                    [--knobs LIST] [--exhaustive] [--dry-run] [--if-changed] "            \
	"[--size S] [--repeat N]\n"                                                                \
	"                    [--entries N] [--tree-files N] [--false-positives P]\n"

static int
parse_knob_list(const char *list, bool *sel)
{
	char *copy = xstrdup(list), *tok, *save = NULL;
	int rc = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct knob *k = knob_find(tok);

		if (!k) {
			fprintf(stderr, "nastune tune: unknown knob '%s' — see `nastune knobs`\n",
				tok);
			rc = -EINVAL;
			break;
		}
		sel[k->id] = true;
	}
	free(copy);
	return rc;
}

static void
print_doc(const struct ctx *ctx, json_t *doc)
{
	char err[512];

	if (ctx->json) {
		json_object_del(doc, "decided");
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else {
		char *text = tune_report_text(doc, err, sizeof(err));

		if (text)
			fputs(text, stdout);
		else
			log_warnx("tune: %s", err);
		free(text);
	}
}

static int
parse_goal(const char *arg, enum tune_goal *goal)
{
	static const struct {
		const char *name;
		enum tune_goal g;
	} goals[] = {
		{ "throughput", GOAL_THROUGHPUT },
		{ "small-files", GOAL_SMALL_FILES },
		{ "video", GOAL_VIDEO },
		{ "balanced", GOAL_BALANCED },
	};

	for (size_t i = 0; i < sizeof(goals) / sizeof(goals[0]); i++)
		if (strcmp(arg, goals[i].name) == 0) {
			*goal = goals[i].g;
			return 0;
		}
	fprintf(stderr,
		"nastune tune: --goal must be throughput, small-files, video or balanced\n");
	return -EINVAL;
}

struct targs {
	unsigned *budget;
	const char **goal_arg;
	char ***clients;
	size_t *nclients;
	const char **token, **creds, **knob_list;
	bool *exhaustive, *dry_run, *if_changed;
	uint64_t *size;
	unsigned *repeats;
	double *alpha;
	unsigned *entries, *tree_files;
};

/* One option of tune (getopt's c and optarg) into a. Returns 0, or -EINVAL (said why). */
static int
parse_opt(int c, char *arg, struct targs *a)
{
	char *end;

	switch (c) {
	case 'b':
		if (units_parse_duration(arg, a->budget) < 0 || *a->budget < 10) {
			fprintf(stderr,
				"nastune tune: --budget '%s' is not a duration of at least "
				"10s (e.g. 90s, 10m, 1h)\n",
				arg);
			return -EINVAL;
		}
		return 0;
	case 'g':
		*a->goal_arg = arg;
		return 0;
	case 'c':
		if (!cli_client_spec_ok(arg))
			return -EINVAL;
		*a->clients = xreallocarray(*a->clients, *a->nclients + 1, sizeof(**a->clients));
		(*a->clients)[(*a->nclients)++] = arg;
		return 0;
	case 'T':
		*a->token = arg;
		return 0;
	case 'C':
		*a->creds = arg;
		return 0;
	case 'k':
		*a->knob_list = arg;
		return 0;
	case 'x':
		*a->exhaustive = true;
		return 0;
	case 'n':
		*a->dry_run = true;
		return 0;
	case 'i':
		*a->if_changed = true;
		return 0;
	case 's':
		if (units_parse_size(arg, a->size) < 0 || *a->size < (1u << 20) ||
		    *a->size > BENCH_MAX_SIZE) {
			fprintf(stderr, "nastune tune: --size '%s' is not a size from 1M to 16T\n",
				arg);
			return -EINVAL;
		}
		return 0;
	case 'a':
		*a->alpha = strtod(arg, &end);
		if (end == arg || *end || !(*a->alpha >= TUNE_ALPHA_MIN) ||
		    *a->alpha > TUNE_ALPHA_MAX) {
			fprintf(stderr,
				"nastune tune: --false-positives must be a probability from %g to "
				"%g (e.g. 0.01: one tune in a hundred may apply a change that does "
				"nothing; the default is tuning.false_positives, else %g)\n",
				TUNE_ALPHA_MIN, TUNE_ALPHA_MAX, TUNE_ALPHA);
			return -EINVAL;
		}
		return 0;
	case 'e':
	case 't': {
		unsigned long v = strtoul(arg, &end, 10),
			      hi = c == 'e' ? BENCH_MAX_ENTRIES : BENCH_MAX_TREE_FILES;

		if (!*arg || *end || v < 1 || v > hi) {
			fprintf(stderr, "nastune tune: %s '%s' must be a number from 1 to %lu\n",
				c == 'e' ? "--entries" : "--tree-files", arg, hi);
			return -EINVAL;
		}
		*(c == 'e' ? a->entries : a->tree_files) = (unsigned)v;
		return 0;
	}
	case 'r':
		*a->repeats = (unsigned)strtoul(arg, &end, 10);
		if (*end || *a->repeats < 8 || *a->repeats > 400) {
			fprintf(stderr,
				"nastune tune: --repeat must be 8 to 400 (the most pairs of runs "
				"side by side a comparison measures; with fewer none can be "
				"decided)\n");
			return -EINVAL;
		}
		return 0;
	default:
		return -EINVAL;
	}
}

static int
check_args(int argc, char **argv, const char *knob_list, bool *sel, bool exhaustive)
{
	if (optind != argc) {
		fprintf(stderr, "nastune tune: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (knob_list && parse_knob_list(knob_list, sel) < 0)
		return -EINVAL;
	if (exhaustive && !knob_list) {
		fprintf(stderr, "nastune tune: --exhaustive needs --knobs LIST (the grid of every "
				"knob would never end)\n");
		return -EINVAL;
	}
	return 0;
}

/* The templates trial configurations render with (cli_render's). */
static int
load_templates(const struct ctx *ctx, struct render_templates *t)
{
	char **dirs, err[512];
	int n, rc;

	dirs = cli_search_dirs(ctx, "templates", &n);
	rc = templates_load((const char *const *)dirs, (size_t)n, t, err, sizeof(err));
	for (int i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	if (rc < 0)
		log_warnx("%s", err);
	return rc;
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
		{ "false-positives", required_argument, NULL, 'a' },
		{ "entries", required_argument, NULL, 'e' },
		{ "tree-files", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tune_machine_opts mo = { .root = ctx->root,
					.repeats = TUNE_PAIRS,
					.size = 128ull << 20 };
	struct render_templates tmpl;
	const char *goal_arg = NULL, *knob_list = NULL;
	char **clients = NULL;
	bool sel[KNOB_COUNT] = { false }, have_tmpl = false;
	struct model *m = NULL;
	json_t *doc = NULL;
	int c, status = EXIT_FAIL;

	optind = 0;
	while ((c = getopt_long(argc, argv, "b:g:c:T:C:k:xnis:r:a:e:t:h", opts, NULL)) != -1) {
		struct targs ta = { &mo.budget_s, &goal_arg,	  &clients,	 &mo.nclients,
				    &mo.token,	  &mo.creds,	  &knob_list,	 &mo.exhaustive,
				    &mo.dry_run,  &mo.if_changed, &mo.size,	 &mo.repeats,
				    &mo.alpha,	  &mo.entries,	  &mo.tree_files };

		if (c == 'h') {
			fputs(TUNE_USAGE, stdout);
			status = EXIT_OK;
			goto out;
		}
		if (parse_opt(c, optarg, &ta) < 0)
			goto usage;
	}
	if (check_args(argc, argv, knob_list, sel, mo.exhaustive) < 0)
		goto usage;
	if (!(m = cli_load_model_recovered(ctx, &status)))
		goto out;
	cli_host_facts(m); /* smb.io_uring is offered only where it can run */
	mo.goal = m->tuning.goal;
	if (goal_arg && parse_goal(goal_arg, &mo.goal) < 0)
		goto usage;
	if (!mo.budget_s)
		mo.budget_s = m->tuning.budget_s;
	if (!mo.alpha)
		mo.alpha = m->tuning.false_positives;
	if (load_templates(ctx, &tmpl) < 0)
		goto out;
	have_tmpl = true;
	mo.tmpl = &tmpl;
	mo.clients = clients;
	mo.sel = knob_list ? sel : NULL;
	switch (tune_machine_run(m, &mo, &doc)) {
	case TUNE_MACHINE_NOTHING:
		status = EXIT_OK;
		break;
	case TUNE_MACHINE_DONE:
		status = EXIT_OK;
		print_doc(ctx, doc);
		/* On a cluster the choice is every node's: the same cluster-wide apply. */
		if (m->cluster.enabled && !mo.dry_run)
			status = cli_cluster_spread(ctx);
		break;
	case TUNE_MACHINE_APPLY_FAILED:
		print_doc(ctx, doc);
		/* fall through */
	default:
		status = EXIT_FAIL;
		break;
	}
	goto out;
usage:
	status = EXIT_USAGE;
out:
	if (have_tmpl)
		templates_clear(&tmpl);
	free(clients);
	json_decref(doc);
	model_free(m);
	return status;
}
