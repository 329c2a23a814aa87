/* cli.h - what every subcommand receives, and the subcommands themselves. */
#ifndef NASTUNE_CLI_H
#define NASTUNE_CLI_H

#include <stdbool.h>
#include <stddef.h>

/* Exit statuses (DESIGN.md). */
#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

struct ctx {
	const char *config;  /* -c FILE; NULL: <root>/etc/nastune/nastune.conf */
	const char *root;    /* --root DIR; "" for the real system */
	const char *datadir; /* --datadir DIR; NULL: search the defaults */
	bool json;
	int verbosity; /* -1 quiet, 0, 1 verbose */
};

struct model;
struct rendered;

/* Loads and validates the configuration; prints diagnostics. Returns the model (caller frees
 * with model_free) or NULL after printing every error, and sets *status to EXIT_USAGE. */
struct model *cli_load_model(const struct ctx *ctx, int *status);
/* cli_load_model, but first puts back what an interrupted apply or tune left installed (its
 * journal), since tuned.conf, read as part of the configuration, may be one of those files. */
struct model *cli_load_model_recovered(const struct ctx *ctx, int *status);
/* The configuration path in force (ctx->config or the default under the root); caller frees. */
char *cli_config_path(const struct ctx *ctx);
/* Directory list for templates and profiles, searched in order; caller frees each entry. */
char **cli_search_dirs(const struct ctx *ctx, const char *sub, int *n);

/* Renders m with the templates found for ctx; (1 << SVC_*) mask or 0 for all. Returns EXIT_OK,
 * or EXIT_FAIL after logging. The caller frees out with render_clear. */
int cli_render(const struct ctx *ctx, const struct model *m, unsigned only, struct rendered *out);

/* diff -u between the installed file and data, on stdout. */
void cli_show_diff(const char *installed, const char *label, const char *data, size_t len);

struct bench_opts;
struct bench_results;
struct json_t;

/* agent_client_spec_ok, saying why not on stderr (for --client and --clients). */
bool cli_client_spec_ok(const char *spec);

int cmd_check(struct ctx *ctx, int argc, char **argv);
int cmd_render(struct ctx *ctx, int argc, char **argv);
int cmd_diff(struct ctx *ctx, int argc, char **argv);
int cmd_apply(struct ctx *ctx, int argc, char **argv);
int cmd_rollback(struct ctx *ctx, int argc, char **argv);
int cmd_status(struct ctx *ctx, int argc, char **argv);
int cmd_mtu(struct ctx *ctx, int argc, char **argv);
int cmd_mdns(struct ctx *ctx, int argc, char **argv);
int cmd_agent(struct ctx *ctx, int argc, char **argv);
int cmd_pair(struct ctx *ctx, int argc, char **argv);
int cmd_bench(struct ctx *ctx, int argc, char **argv);
int cmd_report(struct ctx *ctx, int argc, char **argv);
int cmd_history(struct ctx *ctx, int argc, char **argv);
int cmd_knobs(struct ctx *ctx, int argc, char **argv);
int cmd_tune(struct ctx *ctx, int argc, char **argv);

#endif
