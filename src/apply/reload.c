/* reload.c - the services whose files changed reloaded, or restarted where a change needs it,
 * through their backend (service.c), and each checked to listen again afterwards. */
#include <stdio.h>
#include <string.h>

#include "adopt.h"
#include "apply.h"
#include "buf.h"
#include "fsutil.h"
#include "hash.h"
#include "hwinfo.h"
#include "import.h"
#include "job.h"
#include "knobs.h"
#include "log.h"
#include "netif.h"
#include "paths.h"
#include "proc.h"
#include "profile.h"
#include "runrec.h"
#include "served.h"
#include "service.h"
#include "smbmod.h"
#include "state.h"
#include "timeutil.h"

/* Reloads service i, or restarts it when a change needs that (restart_mask). A backend that
 * needs a start command and has none reloads instead; warn: say so when the daemon is running
 * (it may keep the old values). force: start it even when it is not running (undoing this
 * job's restart). Sets *restarted. Returns as the backend: 0, 1 (not running), -errno. */
static int
reload_or_restart(struct job *j, int i, bool force, bool warn, bool *restarted, char *err,
		  size_t errlen)
{
	const struct service_backend *be = service_backend(j->m, j->o->root, i);
	const struct service_desc *d = service_desc(j->m, i);
	const char *pidfile = service_pidfile(j->m, i), *start = service_start(j->m, i);
	int rc;

	*restarted = false;
	if (j->force_mask & (1u << i)) {
		/* An interrupted restart: whatever else changed, it must run again. */
		force = true;
		if (!(j->restart_mask & (1u << i)))
			snprintf(j->restart_why[i], sizeof(j->restart_why[i]),
				 "an interrupted "
				 "restart");
		j->restart_mask |= 1u << i;
	}
	if (!(j->restart_mask & (1u << i)))
		return be->reload(j->o->root, d, pidfile, err, errlen);
	if (be->needs_start && !start) {
		rc = be->reload(j->o->root, d, pidfile, err, errlen);
		if (rc == 0 && warn)
			log_warnx("%s: %s changed, which only a restart picks up, and services.%s."
				  "start is not set: reloaded instead, so the running %s may keep "
				  "the old value — set services.%s.start = \"...\" (the command "
				  "that starts %s) or restart %s yourself",
				  d->daemon, j->restart_why[i], svc_name(i), d->daemon, svc_name(i),
				  d->daemon, d->daemon);
		return rc;
	}
	journal_note_restart(j, i);
	rc = be->restart(j->o->root, d, pidfile, start, force, err, errlen);
	if (rc != 1)
		j->touched_mask |= 1u << i;
	*restarted = rc == 0;
	if (rc == 0)
		journal_forget_restart(j, i);
	return rc;
}

void
reload_services(struct job *j, unsigned mask, bool undoing)
{
	unsigned touched = j->touched_mask;
	int i;

	if (undoing)
		j->restart_mask &= touched | j->owed_mask;
	for (i = 0; i < SVC_COUNT; i++) {
		const struct service_backend *be;
		const struct service_desc *d;
		char err[512] = "";
		bool restarted;

		if (!(mask & (1u << i)))
			continue;
		be = service_backend(j->m, j->o->root, i);
		d = service_desc(j->m, i);
		if (!be || strcmp(d->action, "none") == 0)
			continue;
		reload_or_restart(j, i, undoing && (touched & (1u << i)), !undoing, &restarted, err,
				  sizeof(err));
		if (restarted)
			log_info("%s: restarted (%s backend): %s changed", d->daemon, be->name,
				 j->restart_why[i]);
	}
}

int
reload_check(struct job *j, char *err, size_t errlen)
{
	/* A tune switches trials hundreds of times: a line each only with -v. */
	void (*say)(const char *, ...) __attribute__((format(printf, 1, 2))) =
		j->o->trial ? log_debug : log_info;
	int i;

	for (i = 0; i < SVC_COUNT; i++) {
		const struct service_backend *be;
		const struct service_desc *d;
		const char *pidfile;
		bool restarted;
		int rc;

		if (!(j->svc_mask & (1u << i)))
			continue;
		be = service_backend(j->m, j->o->root, i);
		d = service_desc(j->m, i);
		if (strcmp(d->action, "none") == 0)
			continue; /* tuned.conf: read by nastune itself, next run */
		pidfile = service_pidfile(j->m, i);
		apply_crash_point("reload");
		rc = reload_or_restart(j, i, false, true, &restarted, err, errlen);
		if (rc == 1 && i == SVC_MDNS) {
			log_warnx("avahi-daemon is not running: the Bonjour records are written to "
				  "%s/etc/avahi/services and will be published when it starts",
				  j->o->root);
			continue;
		}
		if (rc == 1 && strcmp(d->action, "sysctl") == 0) {
			/* A tune's trials install dozens of times: once a tune is enough. */
			static bool told;

			if (j->o->trial && told)
				continue;
			told = told || j->o->trial;
			log_info("sysctl: %s not loaded into the kernel (%s); it takes effect at "
				 "boot",
				 RENDER_SYSCTL_PATH,
				 *j->o->root ? "--root is a staging "
					       "root"
					     : "none backend");
			continue;
		}
		if (rc == 1) {
			log_info("%s: not running (%s backend); its new files take effect when it "
				 "starts",
				 d->daemon, be->name);
			continue;
		}
		if (rc < 0)
			return -1;
		if ((rc = be->check(
			     j->o->root, d, pidfile, j->listening[i],
			     restarted ? (j->o->trial ? SVC_CHECK_TRIAL_RESTART : SVC_CHECK_RESTART)
			     : j->o->trial ? SVC_CHECK_TRIAL
					   : SVC_CHECK_RELOAD,
			     err, errlen)) < 0)
			return -1;
		/* The port listens before Ganesha serves MOUNT and NFS: a prove or a tune's run
		 * right after would be refused ("Program not available"). */
		if (restarted && i == SVC_NFS && j->m->nfs.server == NFS_SERVER_GANESHA &&
		    j->listening[i] && service_rpc_ready(j->m->nfs.v3, 30000, err, errlen) < 0)
			return -1;
		j->reloaded_mask |= 1u << i;
		if (restarted) {
			j->restarted_mask |= 1u << i;
			say("%s: restarted (%s backend): %s changed", d->daemon, be->name,
			    j->restart_why[i]);
		} else {
			say("%s: reloaded (%s backend)", d->daemon, be->name);
		}
	}
	return 0;
}

void
reload_note_listening(struct job *j)
{
	int i;

	for (i = 0; i < SVC_COUNT; i++)
		if (j->svc_mask & (1u << i))
			j->listening[i] = service_desc(j->m, i)->port &&
					  service_port_listening(service_desc(j->m, i)->port);
}
