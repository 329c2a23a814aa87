/* main.c - global options and the subcommand table. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "fsutil.h"
#include "log.h"

static const struct {
	const char *name;
	int (*fn)(struct ctx *, int, char **);
	const char *args;
	const char *help;
} commands[] = {
	{ "check", cmd_check, "",
	  "validate the configuration; exit 0, or 2 with file:line errors" },
	{ "render", cmd_render, "[-o DIR] [--only smb|nfs|afp|mdns]",
	  "print the generated files, or write them under DIR" },
	{ "diff", cmd_diff, "", "generated vs installed files; exit 0 same, 1 differs" },
	{ "import", cmd_import, "[-o FILE] [--force] [--check]",
	  "what this box serves today as a nastune.conf; --check: what applying loses" },
	{ "apply", cmd_apply, "[--dry-run] [--no-reload] [--if-changed] [--drop-unmanaged]",
	  "validate, install atomically, reload, record a generation" },
	{ "rollback", cmd_rollback, "[GENERATION]",
	  "restore a kept generation (0: the originals)" },
	{ "repair", cmd_repair, "[--boot] [--no-reload]",
	  "put back the generation an interrupted apply (a power cut) left mixed" },
	{ "status", cmd_status, "",
	  "generation, an interrupted apply, services, hardware fingerprint and its changes" },
	{ "mtu", cmd_mtu, "show [IFACE] | set IFACE N | probe PEER... | auto IFACE --peer PEER...",
	  "show, set, probe or prove-and-set the MTU (commit-confirm)" },
	{ "mdns", cmd_mdns, "publish [--name N] [--type T] [--port P] | withdraw | browse",
	  "live Bonjour records, and what the network advertises" },
	{ "bench", cmd_bench,
	  "[--protocol L] [--workload L] [--target URL] [--repeat N] [--size S]",
	  "benchmark the shares (or URLs); results stored, see report" },
	{ "report", cmd_report, "[--html FILE] [--run ID]",
	  "a stored benchmark run as text or HTML" },
	{ "history", cmd_history, "", "list the stored benchmark runs" },
	{ "pair", cmd_pair, "[--force] [--token-file FILE]",
	  "new key for the agents; prints the command to start one" },
	{ "agent", cmd_agent, "[--listen ADDR:PORT] [--token-file F] [--mount PROTO=PATH]",
	  "run on a client: benchmark jobs for the NAS, over mDNS" },
	{ "tune", cmd_tune,
	  "[--budget T] [--goal G] [--clients auto|HOST] [--dry-run] [--if-changed]",
	  "measure the knobs, apply the fastest safe settings, explain" },
	{ "knobs", cmd_knobs, "[--json] [NAME...]",
	  "every tunable: value and source, candidates, safety, what tune may try" },
	{ "cluster", cmd_cluster, "event EVENT [ARGS] | follow",
	  "a CTDB cluster node: ctdb's event hook, follow the cluster's configuration" },
};

/* Short options a command defines itself, which after its name are its own, not the global
 * one of the same letter (tune -c is --clients). */
static const char *
own_short(const char *cmd)
{
	return strcmp(cmd, "tune") == 0 ? "c" : "";
}

static void
usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: nastune [-c FILE] [--root DIR] [--datadir DIR] [--json] [-q|-v] "
		    "COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(fp, "  %-8s %-40s %s\n", commands[i].name, commands[i].args,
			commands[i].help);
	fprintf(fp, "\nexit status: 0 success, 1 runtime failure, 2 usage or invalid "
		    "configuration.\nSee nastune(8) and nastune.conf(5).\n");
}

/* Output that never reached its reader (a full disk, a closed pipe with SIGPIPE ignored) is
 * a failure: a script must not take a truncated report or JSON for a result. */
static int
flush_stdout(int status)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	fprintf(stderr, "nastune: cannot write the output: %s\n", strerror(errno));
	return status == EXIT_OK ? EXIT_FAIL : status;
}

/* The global option arg names, after the command: its kind ('c', 'r', 'd', 'j', 'q', 'v') and
 * *val, the option's own value (--root=DIR), or NULL when it is the next argument. Returns
 * 0 when arg is not one (or is a short option the command owns). */
static int
global_opt(const char *arg, const char *own, const char **val)
{
	static const struct {
		const char *name;
		int kind;
		bool has_arg;
	} g[] = {
		{ "--config", 'c', true },  { "-c", 'c', true },	 { "--root", 'r', true },
		{ "--datadir", 'd', true }, { "--json", 'j', false },	 { "--quiet", 'q', false },
		{ "-q", 'q', false },	    { "--verbose", 'v', false }, { "-v", 'v', false },
	};
	size_t i, len;

	*val = NULL;
	for (i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		len = strlen(g[i].name);
		if (strncmp(arg, g[i].name, len) != 0)
			continue;
		if (g[i].name[1] != '-' && strchr(own, g[i].name[1]))
			return 0;
		if (!arg[len])
			return g[i].kind;
		if (g[i].has_arg && (arg[len] == '=' || g[i].name[1] != '-')) {
			*val = arg + len + (arg[len] == '=');
			return g[i].kind;
		}
	}
	return 0;
}

static void
set_global(struct ctx *ctx, int kind, const char *val)
{
	switch (kind) {
	case 'c':
		ctx->config = val;
		break;
	case 'r':
		ctx->root = val;
		break;
	case 'd':
		ctx->datadir = val;
		break;
	case 'j':
		ctx->json = true;
		break;
	case 'q':
		ctx->verbosity = -1;
		break;
	case 'v':
		ctx->verbosity++;
		break;
	}
}

/* Takes the global options out of the command's arguments (argv[1..], up to "--"), as users
 * type them after the command too (`nastune bench --json`); the rest keep their order.
 * Returns the new argc, or -1 after saying which option lacks its value. */
static int
take_globals(struct ctx *ctx, int argc, char **argv, const char *own)
{
	const char *val;
	int i, n = 1, kind;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[n++] = argv[i++];
			break;
		}
		if (!(kind = global_opt(argv[i], own, &val))) {
			argv[n++] = argv[i];
			continue;
		}
		if (!val && strchr("crd", kind)) {
			if (i + 1 >= argc) {
				fprintf(stderr, "nastune: option '%s' needs a value\n", argv[i]);
				return -1;
			}
			val = argv[++i];
		}
		set_global(ctx, kind, val);
	}
	argv[n] = NULL;
	return n;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "root", required_argument, NULL, 'r' },
		{ "datadir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctx ctx = { .root = "" };
	char *scratch;
	size_t i;
	int c;

	/* '+': stop at the command name so each command parses its own options. */
	while ((c = getopt_long(argc, argv, "+c:qvh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			ctx.config = optarg;
			break;
		case 'r':
			ctx.root = optarg;
			break;
		case 'd':
			ctx.datadir = optarg;
			break;
		case 'j':
			ctx.json = true;
			break;
		case 'q':
			ctx.verbosity = -1;
			break;
		case 'v':
			ctx.verbosity++;
			break;
		case 'h':
			usage(stdout);
			return flush_stdout(EXIT_OK);
		case 'V':
			printf("nastune %s\n", NASTUNE_VERSION);
			return flush_stdout(EXIT_OK);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[optind], commands[i].name) == 0) {
			argv += optind;
			argc = take_globals(&ctx, argc - optind, argv, own_short(commands[i].name));
			if (argc < 0)
				return EXIT_USAGE;
			log_init(ctx.verbosity);
			/* Scratch directories are recorded (by what they are) where a later run
			 * finds them after a crash; nothing is written until one is made. */
			scratch = fs_rooted(ctx.root, "/var/lib/nastune/scratch");
			bench_scratch_registry(scratch);
			free(scratch);
			optind = 0; /* reset getopt for the command's own parsing */
			return flush_stdout(commands[i].fn(&ctx, argc, argv));
		}
	}
	log_init(ctx.verbosity);
	fprintf(stderr, "nastune: unknown command '%s' — run 'nastune --help' for the list\n",
		argv[optind]);
	return EXIT_USAGE;
}
