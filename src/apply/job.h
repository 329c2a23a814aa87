/* job.h - inside src/apply/: the job one apply, rollback or repair carries through its steps
 * (the files it changes, the services they touch, its result), and the calls the steps make
 * across apply's files: the network MTU (netmtu.c), the lock (lock.c), generations on disk
 * (generation.c), restarts (restart.c), the journal and its recovery (journal.c), validation
 * (validate.c), reloads (reload.c) and the apply itself (apply.c). */
#ifndef NASTUNE_APPLY_JOB_H
#define NASTUNE_APPLY_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "apply.h"
#include "model.h"
#include "netif.h"
#include "service.h"
#include "state.h"

#define FILE_MAX (64u << 20)

struct change {
	const struct rfile *f; /* NULL for a stale file to remove */
	char *path;	       /* installed path without root */
	char *abs;	       /* with root */
	bool exists;
};

struct job {
	const struct model *m;
	const struct apply_opts *o;
	char *sdir; /* <root>/var/lib/nastune */
	struct state *st;
	int lockfd;
	struct change *ch;
	size_t nch;
	unsigned svc_mask;     /* services whose files change */
	unsigned restart_mask; /* of those, the ones a change needs restarted */
	unsigned touched_mask; /* services a restart of this job stopped or tried to */
	unsigned owed_mask;    /* restarts a journal recovery's restore calls for */
	unsigned force_mask;   /* restarts an interrupted run began: start even if stopped */
	char restart_why[SVC_COUNT][256]; /* the params that changed: "RPC_Ioq_ThrdMax" */
	bool listening[SVC_COUNT];
	unsigned reloaded_mask;	     /* reloaded (and checked) by reload_and_check */
	unsigned restarted_mask;     /* of those, restarted */
	struct netif_mtu_report mtu; /* network.mtu's outcome when it ran */
	bool mtu_ran;
	struct apply_result *res; /* apply_run's: what it did, and the message */
	bool repair;		  /* apply_repair: journal_recover() records what it restored */
	long repaired_as;	  /* the generation it recorded; -1 none */
};

/* Test hook: debug_crash(step) (log.h). */
void apply_crash_point(const char *step);

/* Sets the result's message; returns rc. */
int apply_fail(struct job *j, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Whether nastune manages the MTU: an interface named and network.mtu not "keep". */
bool netmtu_managed(const struct model *m);

/* The link's MTU is no longer what the last generation recorded (changed by hand, or a new
 * NIC): --if-changed must not skip then. */
bool netmtu_drifted(const struct model *m, const struct generation *last);

/* Puts the MTU recorded with generation g back when it differs from the link's. Returns 0, or
 * -errno after logging. */
int netmtu_restore(const struct generation *g);

/* Restores generation prev for every changed file and reloads; the result's message names
 * the step, what and the cause. Returns -EIO. */
int apply_undo(struct job *j, long prev, const char *step, const char *what, const char *cause);

/* network.mtu after the files. Returns 0, 1 when nothing at all changed, or -errno. */
int netmtu_step(struct job *j, const struct generation *last, long prev);

/* Returns 0, or -errno with err: -EBUSY when another apply holds it past the timeout. */
int lock_acquire(struct job *j, char *err, size_t errlen);

/* Takes the trials lock for a tune (once; held until the process ends or apply_end_trials). */
void lock_trials_hold(struct job *j);

void lock_trials_release(void);

/* Whether a live process holds the lock file p (shared: the test itself never stops the
 * holder). */
bool lock_held(const char *p);

int gen_mkparent(const char *path);

/* Stores g (its metadata filled in; g->id < 0: the next id) with a copy of each installed
 * file of paths; clears g. */
int gen_store(struct job *j, struct generation *g, char **paths, size_t npaths, long *out_id);

int gen_record(struct job *j, long id, const char *reason, const char *inputs_hash,
	       const struct hwinfo *hw, char **paths, size_t npaths, long *out_id);

/* A file nastune is about to write for the first time after generation 0 (AFP enabled
 * later: the distro's afp.conf) joins generation 0 as it is now, so that `rollback 0` puts
 * it back rather than deleting it. "For the first time": no generation lists it. Returns 0
 * or -errno. */
int gen_extend_originals(struct job *j);

void gen_rm_tree(const char *path);

void gen_prune(struct job *j);

/* Writes the stored copy at copy to abs (atomically, with mode and owner) once its content
 * has the SHA-256 sha. Returns 0 or -errno (-EBADMSG: the copy is not what was stored). */
int gen_put_copy(const char *abs, const char *copy, const char *sha, unsigned mode, unsigned uid,
		 unsigned gid);

/* Puts path back as generation g had it. Returns 0 or -errno. */
int gen_restore_file(struct job *j, const struct generation *g, const char *path);

enum svc gen_svc_of_path(const char *path);

void gen_inputs_hash(const struct model *m, const struct rendered *r, char out[65]);

/* Notes whether replacing cur (NULL: absent) by next at path changes a restart-class value,
 * and which. A file that goes away (next NULL) is no restart: nastune stops managing it and
 * the daemon keeps what it runs, as with a reload. */
void restart_note(struct job *j, const char *path, const char *cur, size_t curlen, const char *next,
		  size_t nextlen);

/* The installed file at path, or NULL when absent or unreadable; the caller frees it. */
char *restart_read_installed(const struct job *j, const char *path, size_t *len);

/* restore_file (or, for a file the journal text kept, restore_kept), noting whether what it
 * puts back needs the service restarted. */
int restart_restore_noting(struct job *j, const struct generation *g, const char *journal,
			   const char *path);

int journal_restore_kept(struct job *j, const char *journal, const char *path);

/* The journal: the generation to restore (prev), and every file this apply writes (with the
 * SHA-256 of what it writes, "-" for a removal). Written durably before the first file is
 * installed (fs_write_atomic: the file, then its directory), so a power cut anywhere after
 * leaves a journal that names every file it may have changed. A file
 * that is not as prev recorded it (prev does not list it, or it was edited since) has its
 * state now (absent, or a copy under pending.keep) kept with the journal, and undoing puts
 * that back: undoing is "as before this apply", which restoring prev is not for such a file.
 * Restoring prev deleted a file it did not list: a dry-run tune's trials deleted a tuned.conf
 * written by hand and not applied yet (its trials write tuned.conf, and the last generation
 * had none), and a failed apply that enabled AFP deleted the distribution's afp.conf; and it
 * undid an edit made by hand since prev (a tuned.conf edited, then a dry-run tune). */
int journal_write(struct job *j, const struct generation *prev);

int journal_restore_kept(struct job *j, const char *journal, const char *path);

/* Notes in the journal that service i is about to be stopped and started again: should the
 * process die in between, recovery starts it (the daemon would otherwise stay down). */
void journal_note_restart(struct job *j, int i);

/* The restart of service i came back: its note has done its work. Left in the journal, every
 * later trial's recovery would restart the service again (and note it again), though its
 * files say nothing new: a tune's windows restarted Ganesha and afpd at every switch once one
 * trial had restarted them. A failure here only costs one needless restart. */
void journal_forget_restart(struct job *j, int i);

/* Dropped durably only after what ends the apply is (its generation, or the restored files):
 * a journal that a power cut brings back would otherwise undo a finished apply at the next
 * repair. */
void journal_drop(struct job *j);

/* Restores the journal's generation for the journal's files, then reloads them (j->repair:
 * records that as a generation before dropping the journal). A journal whose apply recorded
 * a generation after it was written belongs to an apply that finished and died before
 * dropping it: it is only dropped. */
int journal_recover(struct job *j);

/* Frees what j holds, closes its state (stamped for the next --if-changed) and its lock. */
void apply_job_release(struct job *j);

/* What the configuration needs from this host, before anything (the lock and the state
 * directory included) is written. Returns 0, -EINVAL (refused), -errno. */
int validate_precheck(struct job *j, const struct rendered *r);

/* Validates every changed file with its checker. Returns 0 or -EIO with the message. */
int validate_all(struct job *j);

/* Reloads each service in mask, restarting where j's changes need it; undoing (files put
 * back): restarts only those this job stopped or owes, and does not check they listen. */
void reload_services(struct job *j, unsigned mask, bool undoing);

/* Reloads (or restarts) and checks each affected service. Returns 0 or -1 with what failed
 * in err. */
int reload_check(struct job *j, char *err, size_t errlen);

/* Which of the services in svc_mask listen now: they must listen again after the change. */
void reload_note_listening(struct job *j);

#endif
