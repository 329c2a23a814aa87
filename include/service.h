/* service.h - reloading the daemons whose files changed, through a backend chosen by name:
 * systemd (systemctl reload-or-restart), pidfile (signal the pid in a pidfile), none. */
#ifndef NASTUNE_SERVICE_H
#define NASTUNE_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* What a service is and how it takes a change; one row per service (service.c). */
struct service_desc {
	enum svc svc;
	const char *daemon;	/* "smbd", "ganesha.nfsd", "exportfs", "afpd", "avahi-daemon",
				 * "sysctl", "nastune" */
	const char *unit;	/* systemd unit, or NULL */
	const char *pidfile;	/* default pidfile (without root), or NULL */
	int port;		/* TCP port to find listening after the change; 0: none */
	const char *action;	/* "reload" (SIGHUP / reload-or-restart), "exportfs" (exportfs -ra),
				 * "sysctl" (sysctl -p the nastune file; both only without --root),
				 * "none" (a file only nastune reads: tuned.conf) */
};

struct service_backend {
	const char *name;
	/* Changes the running service so it reads its new files. Returns 0; 1 when the service
	 * is not running (nothing to do); -errno with a message in err. */
	int (*reload)(const char *root, const struct service_desc *d, const char *pidfile,
		      char *err, size_t errlen);
	/* After a reload: 0 when it came back (alive; listening if it listened before), else
	 * -errno with a message. */
	int (*check)(const char *root, const struct service_desc *d, const char *pidfile,
		     bool was_listening, char *err, size_t errlen);
};

/* The row for svc under this model (NFS depends on kernel or ganesha). */
const struct service_desc *service_desc(const struct model *m, enum svc svc);
/* Backend for svc: the per-service override, else services.backend; "auto" picks systemd
 * when <root>/run/systemd/system exists, else pidfile. NULL for an unknown name. */
const struct service_backend *service_backend(const struct model *m, const char *root,
					      enum svc svc);
/* The pidfile in force for svc: the configured override or the row's default; NULL if none. */
const char *service_pidfile(const struct model *m, enum svc svc);
/* true when something listens on TCP port (IPv4 or IPv6) in this network namespace. */
bool service_port_listening(int port);

#endif
