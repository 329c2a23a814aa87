/* apply.h - rendered files -> disk, safely: diff, validate, journal, atomic install, reload,
 * check, record a generation; roll back on any failure. Rollback to any kept generation. */
#ifndef NASTUNE_APPLY_H
#define NASTUNE_APPLY_H

#include <stdbool.h>

#include "model.h"
#include "netif.h"
#include "render.h"
#include "served.h"

struct apply_opts {
	const char *root; /* "" for the real system */
	bool dry_run;
	bool no_reload;
	bool if_changed;
	int lock_timeout_s; /* how long to wait for a concurrent apply */
	const char *reason; /* recorded with the generation: "apply", "tune" */
	/* A tune trial: install and reload like an apply, but record no generation and keep
	 * the journal naming the generation before the trials, so that the next trial, an
	 * interrupted tune's next run, or apply_end_trials puts it back first. No MTU. */
	bool trial;
};

enum apply_act { APPLY_CREATED, APPLY_UPDATED, APPLY_REMOVED };

struct apply_change {
	char *path; /* installed path, without the root (owned) */
	char *abs;  /* with the root (owned) */
	enum apply_act act;
	const char *data; /* the new contents, in the rendered set; NULL when removed */
	size_t len;
};

/* What an apply did, or (dry run) would do. Release with apply_result_clear. */
struct apply_result {
	long generation; /* recorded by this apply; -1: none */
	long prev;	 /* the one to roll back to; -1: none */
	struct apply_change *changes;
	size_t nchanges;
	unsigned changed;		  /* (1 << SVC_*): services whose files change */
	unsigned needs_restart;		  /* of those, the ones a change needs restarted */
	char restart_why[SVC_COUNT][256]; /* the parameters that call for it */
	unsigned reloaded;		  /* reloaded by this apply (1 << SVC_*) */
	unsigned restarted;		  /* restarted by this apply */
	bool mtu_ran;			  /* network.mtu ran: mtu holds its report */
	struct netif_mtu_report mtu;
	struct served_proof *proofs; /* each share over each protocol, after the reload */
	size_t nproofs;
	bool rolled_back; /* a failure after the install put generation prev back */
	char msg[2048];	  /* on failure: the step, file and cause */
};

void apply_result_clear(struct apply_result *res);

/* Applies the rendered set r of model m; res (may be NULL) receives what was done. A dry run
 * fills res and changes nothing. After the reload each share is asked for over each protocol
 * whose daemon this apply reloaded and that listens (served.h); one not served rolls the
 * apply back. Returns 0 (also for "nothing to do"); -EINVAL when the configuration is refused
 * before anything changed (a VFS module not installed, a share's directory missing: a usage
 * error); another -errno after restoring the previous files, with res->msg naming the step,
 * file and cause. */
int apply_run(const struct model *m, const struct rendered *r, const struct apply_opts *o,
	      struct apply_result *res);

/* Restores generation id (-1: the one before the newest) and reloads what changed.
 * Returns 0, -ENOENT for an unknown generation (none recorded yet included), or -errno after
 * logging. */
int apply_rollback(const struct model *m, long id, const struct apply_opts *o);

/* Ends a series of trials: restores the generation the journal names (the configuration in
 * force before them) and reloads, or restarts where a trial's restart-class values must go,
 * then checks the services as apply does. Returns 0 (also when there were none) or -errno
 * after logging. */
int apply_end_trials(const struct model *m, const struct apply_opts *o);

/* Number of generations kept besides generation 0. */
#define APPLY_KEEP_GENERATIONS 10

/* What a tune's trial keys testparm's verdict on an smb.conf by (apply.c): the SHA-256 of its
 * text and of every file its "include =" lines name, as testparm would read them. */
void apply_testparm_key(const struct rfile *f, char out[65]);

#endif
