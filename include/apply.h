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
	/* apply_repair at boot, before the file servers start: restore the files and load the
	 * sysctl file, but reload or start no daemon (each starts on the restored files, and a
	 * systemctl call would wait for the units waiting for this one) and leave the MTU to the
	 * network's own configuration. */
	bool boot;
	/* Accept that shares the installed files serve, which the configuration lacks and no
	 * generation of nastune's installed, stop being served (adopt.h). Never from a hook. */
	bool drop_unmanaged;
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
 * before anything changed (a VFS module not installed, a share's directory missing, a share
 * served today that it would drop unless o->drop_unmanaged: a usage error); another -errno after
 * restoring the previous files, with res->msg naming the step, file and cause. */
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

/* What an apply (or a tune's trial) left when it died between its journal and its record
 * (a power cut, kill -9): its files may be of two generations. */
enum apply_file_gen {
	APPLY_FILE_PREV,  /* as before the interrupted apply: generation prev (or as it was) */
	APPLY_FILE_NEW,	  /* as the interrupted apply wrote it */
	APPLY_FILE_OTHER, /* neither: changed since */
};

struct apply_pending_file {
	char *path; /* installed path without the root (owned) */
	enum apply_file_gen gen;
};

struct apply_interruption {
	long prev;     /* the generation the repair puts back; -1 when the journal names none */
	long recorded; /* >= 0: the apply had recorded this generation; only its journal was left */
	bool trial;    /* a tune's trial, not an apply */
	char when[32]; /* when the journal was last written, UTC ISO 8601 */
	struct apply_pending_file *files;
	size_t nfiles;
	unsigned restarts; /* (1 << SVC_*): restarts it began: the daemon may be stopped */
	char why[512];	   /* non-empty: the journal cannot be used, and why (repair by hand) */
};

/* Whether an apply or a tune's trial was interrupted: its journal (<root>/var/lib/nastune/
 * pending) is there and no nastune process holds it (an apply running now, or a tune between
 * its trials, is not interrupted). Reads only. Returns 1 with ai filled, or 0 (ai empty);
 * clear ai with apply_interruption_clear either way. */
int apply_interrupted(const char *root, struct apply_interruption *ai);
void apply_interruption_clear(struct apply_interruption *ai);

/* Repairs an interrupted apply: puts the generation its journal names back (or, when the
 * apply had recorded its generation and died before dropping the journal, only drops it),
 * reloads what changed (o->boot: see apply_opts), records the repair as a new generation and
 * then drops the journal. Returns 1 repaired, with *recorded the new generation (-1: none
 * needed); 0 when nothing is interrupted (also while a tune runs); -errno after logging. */
int apply_repair(const struct model *m, const struct apply_opts *o, long *recorded);

/* Number of generations kept besides generation 0. */
#define APPLY_KEEP_GENERATIONS 10

/* What a tune's trial keys testparm's verdict on an smb.conf by (apply.c): the SHA-256 of its
 * text and of every file its "include =" lines name, as testparm would read them. */
void apply_testparm_key(const struct rfile *f, char out[65]);

#endif
