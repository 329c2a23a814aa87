/* service.h - reloading (or restarting) the daemons whose files changed, through a backend
 * chosen by name: systemd (systemctl reload-or-restart / restart), pidfile (signal the pid in
 * a pidfile; a restart stops it and runs services.<svc>.start), none. */
#ifndef NASTUNE_SERVICE_H
#define NASTUNE_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "model.h"

/* What a service is and how it takes a change; one row per service (service.c). */
struct service_desc {
	enum svc svc;
	const char *daemon;  /* "smbd", "ganesha.nfsd", "exportfs", "afpd", "avahi-daemon",
			      * "sysctl", "nastune" */
	const char *unit;    /* systemd unit, or NULL */
	const char *pidfile; /* default pidfile (without root), or NULL */
	int port;	     /* TCP port to find listening after the change; 0: none */
	const char *action;  /* "reload" (SIGHUP / reload-or-restart), "exportfs" (exportfs -ra),
			      * "sysctl" (sysctl -p the nastune file; both only without --root),
			      * "none" (a file only nastune reads: tuned.conf) */
};

/* What a check follows: a reload, a tune trial's reload (whose next step measures the
 * daemon, so a shorter wait for it to survive suffices), a restart, or a tune trial's
 * restart (the same: only the look at once, then the port). */
enum svc_check { SVC_CHECK_RELOAD, SVC_CHECK_TRIAL, SVC_CHECK_RESTART, SVC_CHECK_TRIAL_RESTART };

struct service_backend {
	const char *name;
	/* Changes the running service so it reads its new files. Returns 0; 1 when the service
	 * is not running (nothing to do); -errno with a message in err. */
	int (*reload)(const char *root, const struct service_desc *d, const char *pidfile,
		      char *err, size_t errlen);
	/* Stops the service and starts it again, for what only a start reads (knobs with
	 * effect KNOB_RESTART). start is services.<svc>.start, the shell command line that
	 * starts it: the pidfile backend needs it (needs_start), the others ignore it. force:
	 * start it even when it is not running (a failed restart's undo). Returns 0; 1 when it
	 * is not running and !force (its files take effect when it starts); -errno with a
	 * message in err (nothing was stopped when the start command cannot run). */
	int (*restart)(const char *root, const struct service_desc *d, const char *pidfile,
		       const char *start, bool force, char *err, size_t errlen);
	/* After a reload or restart (kind): 0 when it came back (alive; listening if it
	 * listened before), else -errno with a message. */
	int (*check)(const char *root, const struct service_desc *d, const char *pidfile,
		     bool was_listening, enum svc_check kind, char *err, size_t errlen);
	bool needs_start; /* restart needs services.<svc>.start */
};

/* The row for svc under this model (NFS depends on kernel or ganesha). */
const struct service_desc *service_desc(const struct model *m, enum svc svc);
/* Backend for svc: the per-service override, else services.backend; "auto" picks systemd
 * when <root>/run/systemd/system exists, else pidfile. NULL for an unknown name. */
const struct service_backend *service_backend(const struct model *m, const char *root,
					      enum svc svc);
/* Whether a change to the sysctl file reaches this kernel: never under a staging root (its
 * file is not this kernel's) or with the none backend; it takes effect at boot then. */
bool service_sysctl_live(const struct model *m, const char *root);
/* The pidfile in force for svc: the configured override or the row's default; NULL if none. */
const char *service_pidfile(const struct model *m, enum svc svc);
/* services.<svc>.start, or NULL when not configured. */
const char *service_start(const struct model *m, enum svc svc);
/* Pidfiles: the pidfile backend's, and those of nastune's own long-running commands. */
/* The pid in <root><pidfile>; *path gets that rooted path (caller frees, also on error).
 * Returns 0, -ENOENT, -EINVAL (no pid above 1 in it) or -errno. */
int service_pid_read(const char *root, const char *pidfile, pid_t *pid, char **path);
/* pid is alive, and not a zombie waiting for its parent. */
bool service_pid_alive(pid_t pid);
/* Writes this process's pid into path, creating its directory. Returns 0 or -errno. */
int service_pidfile_claim(const char *path);
/* Removes path when it still holds this process's pid (a newer process may have replaced
 * it since). */
void service_pidfile_release(const char *path);

/* true when something listens on TCP port (IPv4 or IPv6) in this network namespace. */
bool service_port_listening(int port);

/* Waits up to timeout_ms for a restarted Ganesha on this host to answer: MOUNT v3 through
 * rpcbind when v3 is served, else NFS on port 2049. 0, or -ETIMEDOUT with the last failure in
 * err (apply/rpcready.c). */
int service_rpc_ready(bool v3, int timeout_ms, char *err, size_t errlen);

#endif
