/* apply.h - rendered files -> disk, safely: diff, validate, journal, atomic install, reload,
 * check, record a generation; roll back on any failure. Rollback to any kept generation. */
#ifndef NASTUNE_APPLY_H
#define NASTUNE_APPLY_H

#include <stdbool.h>

#include "model.h"
#include "render.h"

struct apply_opts {
	const char *root;	/* "" for the real system */
	bool dry_run;
	bool no_reload;
	bool if_changed;
	bool json;
	int lock_timeout_s;	/* how long to wait for a concurrent apply */
	const char *reason;	/* recorded with the generation: "apply", "tune" */
	/* A tune trial: install and reload like an apply, but record no generation and keep
	 * the journal naming the generation before the trials, so that the next trial, an
	 * interrupted tune's next run, or apply_end_trials puts it back first. No MTU. */
	bool trial;
};

/* Applies the rendered set r of model m. Returns EXIT_OK (also for "nothing to do"),
 * EXIT_FAIL after restoring the previous files and naming the step, file and cause. */
int apply_run(const struct model *m, const struct rendered *r, const struct apply_opts *o);

/* Restores generation id (-1: the one before the newest) and reloads what changed.
 * Returns EXIT_OK, EXIT_FAIL, or EXIT_USAGE for an unknown generation. */
int apply_rollback(const struct model *m, long id, const struct apply_opts *o);

/* Ends a series of trials: restores the generation the journal names (the configuration in
 * force before them) and reloads, or restarts where a trial's restart-class values must go,
 * then checks the services as apply does. Returns EXIT_OK (also when there were none) or
 * EXIT_FAIL. */
int apply_end_trials(const struct model *m, const struct apply_opts *o);

/* Number of generations kept besides generation 0. */
#define APPLY_KEEP_GENERATIONS 10

#endif
