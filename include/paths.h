/* paths.h - where nastune keeps its own files: the one owner of their names. Every path is
 * under the root prefix (--root; NULL or "" for the host's) and malloc'd (caller frees).
 *
 *	<root>/var/lib/nastune/		state: state.db and its head stamp (head), the apply
 *					and trials locks, an apply's journal (pending),
 *					generations/<id>/, agent.key
 *	<root>/run/nastune/		pidfiles of nastune's own long-running commands
 */
#ifndef NASTUNE_PATHS_H
#define NASTUNE_PATHS_H

/* <root>/var/lib/nastune */
char *paths_state_dir(const char *root);
/* <root>/var/lib/nastune/<fmt...>: a file of the state directory a module keeps to itself
 * (apply's candidate-smb.conf, pending.keep/...). */
char *paths_state(const char *root, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The SQLite state database (state.h). */
char *paths_state_db(const char *root);
/* The lock apply, rollback and tune hold while they change installed files. */
char *paths_lock(const char *root);
/* The lock a tune holds from its first trial to its end: its journal is then no interrupted
 * apply. */
char *paths_trials_lock(const char *root);
/* The journal of an apply (or a tune's trials) in progress: present after an interruption. */
char *paths_pending(const char *root);
/* Generation id's copies of the files it installed. */
char *paths_generation(const char *root, long id);
/* The agent token this host uses (agent.h). */
char *paths_agent_key(const char *root);
/* The kernel's own values of the sysctls nastune set: the host's, never under a root
 * (sysctls are applied only without one). */
char *paths_sysctl_orig(void);
/* <root>/run/nastune/<name> */
char *paths_run(const char *root, const char *name);

#endif
