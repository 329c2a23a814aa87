/* main.c - global options and the subcommand table. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log.h"

static const struct {
	const char *name;
	int (*fn)(struct ctx *, int, char **);
	const char *args;
	const char *help;
} commands[] = {
	{ "check", cmd_check, "", "validate the configuration; exit 0, or 2 with file:line errors" },
	{ "render", cmd_render, "[-o DIR] [--only smb|nfs|afp|mdns]",
	  "print the generated files, or write them under DIR" },
	{ "diff", cmd_diff, "", "generated vs installed files; exit 0 same, 1 differs" },
	{ "apply", cmd_apply, "[--dry-run] [--no-reload] [--if-changed]",
	  "validate, install atomically, reload, record a generation" },
	{ "rollback", cmd_rollback, "[GENERATION]", "restore a kept generation (0: the originals)" },
	{ "status", cmd_status, "", "generation, services, hardware fingerprint and its changes" },
	{ "mtu", cmd_mtu, "show [IFACE] | set IFACE N | probe PEER... | auto IFACE --peer PEER...",
	  "show, set, probe or prove-and-set the MTU (commit-confirm)" },
	{ "mdns", cmd_mdns, "publish [--name N] [--type T] [--port P] | withdraw | browse",
	  "live Bonjour records, and what the network advertises" },
	{ "bench", cmd_bench, "[--protocol L] [--workload L] [--target URL] [--repeat N] [--size S]",
	  "benchmark the shares (or URLs); results stored, see report" },
	{ "report", cmd_report, "[--html FILE] [--run ID]", "a stored benchmark run as text or HTML" },
	{ "history", cmd_history, "", "list the stored benchmark runs" },
	{ "pair", cmd_pair, "[--force] [--token-file FILE]",
	  "new key for the agents; prints the command to start one" },
	{ "agent", cmd_agent, "[--listen ADDR:PORT] [--token-file F] [--mount PROTO=PATH]",
	  "run on a client: benchmark jobs for the NAS, over mDNS" },
	{ "tune", cmd_tune, "[--budget T] [--goal G] [--clients auto|HOST] [--dry-run] [--if-changed]",
	  "measure the knobs, apply the fastest safe settings, explain" },
	{ "knobs", cmd_knobs, "[--json] [NAME...]",
	  "every tunable: value and source, candidates, safety, what tune may try" },
};

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
	log_init(ctx.verbosity);
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[optind], commands[i].name) == 0) {
			argv += optind;
			argc -= optind;
			optind = 0;	/* reset getopt for the command's own parsing */
			return flush_stdout(commands[i].fn(&ctx, argc, argv));
		}
	}
	fprintf(stderr, "nastune: unknown command '%s' — run 'nastune --help' for the list\n",
		argv[optind]);
	return EXIT_USAGE;
}
