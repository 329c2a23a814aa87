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

/* What loading the configuration does about an interrupted apply (apply_interrupted). */
enum cli_pending {
	CLI_PENDING_NAME,   /* names it first on stderr: what is mixed, the command that repairs */
	CLI_PENDING_REPAIR, /* names it, then puts its generation back (apply, tune, rollback) */
	CLI_PENDING_QUIET,  /* the command shows it itself (status, repair) */
};

/* Loads and validates the configuration; prints diagnostics, and first names an interrupted
 * apply. Returns the model (caller frees with model_free) or NULL after printing every error,
 * and sets *status to EXIT_USAGE. */
struct model *cli_load_model(const struct ctx *ctx, int *status);
/* cli_load_model, but first puts back what an interrupted apply or tune left installed (its
 * journal), since tuned.conf, read as part of the configuration, may be one of those files;
 * *status is EXIT_FAIL when that fails. */
struct model *cli_load_model_recovered(const struct ctx *ctx, int *status);
struct model *cli_load_model_as(const struct ctx *ctx, int *status, enum cli_pending how);

struct apply_interruption;
struct buf;
/* The command that repairs an interrupted apply, with this run's --root and -c. */
void cli_repair_command(const struct ctx *ctx, char *out, size_t len);
/* An interrupted apply in words, one line each: what it left (each file's generation), the
 * restarts it broke off, and unless repairing, the command that repairs it. */
void cli_interrupted_text(const struct ctx *ctx, const struct apply_interruption *ai,
			  bool repairing, struct buf *out);
/* cli_interrupted_text on stderr, a warning per line. */
void cli_warn_interrupted(const struct ctx *ctx, const struct apply_interruption *ai,
			  bool repairing);
/* The same as status --json's "interrupted_apply" (caller owns the reference). */
struct json_t *cli_interrupted_json(const struct ctx *ctx, const struct apply_interruption *ai);
/* Fills m->host (what the knob table cannot know: whether smbd and the kernel here can run
 * vfs_io_uring) for the commands that offer or try knobs; runs `smbd -b` once. */
void cli_host_facts(struct model *m);
/* A knob value m sets that this host cannot run (smb.io_uring = "yes" without io_uring):
 * prints file:line, the reason and the fix, and returns EXIT_USAGE; else EXIT_OK. Asks the
 * host only when such a value is set. */
int cli_check_host(struct model *m);
/* The configuration path in force (ctx->config or the default under the root); caller frees. */
char *cli_config_path(const struct ctx *ctx);
/* Directory list for templates and profiles, searched in order; caller frees each entry. */
char **cli_search_dirs(const struct ctx *ctx, const char *sub, int *n);

/* Renders m with the templates found for ctx; (1 << SVC_*) mask or 0 for all. Returns EXIT_OK,
 * or EXIT_FAIL after logging. The caller frees out with render_clear. */
int cli_render(const struct ctx *ctx, const struct model *m, unsigned only, struct rendered *out);

/* On a cluster, that this host is one of cluster.nodes: EXIT_OK, or EXIT_USAGE after printing
 * the file:line error. */
int cli_cluster_host(const struct model *m);

/* diff -u between the installed file and data, on stdout. */
void cli_show_diff(const char *installed, const char *label, const char *data, size_t len);

/* agent_client_spec_ok, saying why not on stderr (for --client and --clients). */
bool cli_client_spec_ok(const char *spec);

int cmd_check(struct ctx *ctx, int argc, char **argv);
int cmd_render(struct ctx *ctx, int argc, char **argv);
int cmd_diff(struct ctx *ctx, int argc, char **argv);
int cmd_import(struct ctx *ctx, int argc, char **argv);
int cmd_apply(struct ctx *ctx, int argc, char **argv);
int cmd_rollback(struct ctx *ctx, int argc, char **argv);
int cmd_repair(struct ctx *ctx, int argc, char **argv);
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
int cmd_cluster(struct ctx *ctx, int argc, char **argv);

struct apply_result;
struct cluster_desired;
/* Before an apply on a cluster (nothing applied yet): proves the record root's and this
 * node's key present, and reads the cluster's desired configuration into base. EXIT_OK, or
 * EXIT_FAIL after saying why. */
int cli_cluster_prepare(const struct ctx *ctx, const struct model *m, struct cluster_desired *base);
/* After apply installed r on this node of a cluster: makes it the cluster's configuration
 * when desired is still base (another node's apply since wins: this node follows it and
 * EXIT_FAIL names it)
 * (or, this_node, records that this node alone runs it), asks the other nodes to follow
 * and waits up to wait_s for them; a node that fails or does not answer is named and every
 * node goes back to the cluster's previous configuration. *summary gets a JSON object (or
 * NULL). Returns EXIT_OK or EXIT_FAIL. */
int cli_cluster_apply(struct ctx *ctx, const struct model *m, const struct rendered *r,
		      const struct apply_result *res, const struct cluster_desired *base,
		      bool this_node, int wait_s, struct json_t **summary);
/* What this node runs now (its nastune.conf and tuned.conf, as a tune left them) made the
 * cluster's, as cli_cluster_apply does after an apply. EXIT_OK (also off a cluster), or
 * EXIT_FAIL / EXIT_USAGE. */
int cli_cluster_spread(struct ctx *ctx);
/* The cluster's part of `status`: ctdb's view of the nodes and public addresses, and
 * whether every node runs the cluster's configuration (printed as text when print). A new
 * JSON reference. */
struct json_t *cli_cluster_status(const struct ctx *ctx, const struct model *m, bool print);

#endif
