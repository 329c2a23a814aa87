/* tune_machine.h - the real machine behind `nastune tune`: the loopback targets, trial
 * installs and bench runs, the agents, the NIC MTU, the state store (resume and recording),
 * given to the search (src/tune/search_api.h) as its callbacks; the winner applied as a
 * generation. The command (src/cmd/cmd_tune.c) only parses options, calls tune_machine_run
 * and prints. */
#ifndef NASTUNE_TUNE_MACHINE_H
#define NASTUNE_TUNE_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "knobs.h"
#include "model.h"

struct json_t;
struct render_templates;

struct tune_machine_opts {
	const char *root;		     /* --root ("" for the real system) */
	const struct render_templates *tmpl; /* what trial configurations render with */
	enum tune_goal goal;
	unsigned budget_s;
	const char *creds;    /* --credentials FILE for shares with valid users, or NULL */
	char *const *clients; /* --clients (HOST[:PORT] or "auto"), nclients of them */
	size_t nclients;
	const char *token; /* --token-file, or NULL: the paired key under root */
	const bool *sel;   /* KNOB_COUNT flags (--knobs), or NULL: every knob */
	bool exhaustive, dry_run, if_changed;
	uint64_t size;	  /* bench file size */
	unsigned repeats; /* pairs per window */
	/* big-dir's directory (--entries) and source-tree's files (--tree-files); 0: sized
	 * to the budget (tune_machine.c) */
	unsigned entries, tree_files;
	double alpha; /* --false-positives (0: the configuration's, else TUNE_ALPHA) */
};

enum tune_machine_rc {
	TUNE_MACHINE_DONE,	   /* tuned (or dry run): *doc is the finished document */
	TUNE_MACHINE_NOTHING,	   /* --if-changed: the hardware is unchanged; no *doc */
	TUNE_MACHINE_APPLY_FAILED, /* tuned, but the winner could not be applied: *doc */
	TUNE_MACHINE_ERROR,	   /* nothing to measure, interrupted, or a measurement failed:
				    * the configuration before the tune is in force; no *doc */
};

/* Tunes m (the configuration in force, loaded by the caller; its knob values are the
 * starting point and, on return, the chosen ones). SIGINT and SIGTERM stop the tune while it
 * runs (sigstop.h), which then restores the configuration in force before it. Logs progress;
 * prints nothing. *doc (caller decrefs) is the tune document
 * as `tune --json` prints it, set for DONE and FAILED. */
enum tune_machine_rc tune_machine_run(struct model *m, const struct tune_machine_opts *o,
				      struct json_t **doc);

#endif
