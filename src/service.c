/* service.c - service backends: systemd, pidfile, none. */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "knobs.h"
#include "render.h"
#include "service.h"
#include "xmalloc.h"

extern char **environ;

static const struct service_desc rows[] = {
	{ SVC_SMB, "smbd", "smbd.service", "/run/samba/smbd.pid", 445, "reload" },
	{ SVC_NFS, "ganesha.nfsd", "nfs-ganesha.service", "/run/ganesha/ganesha.pid", 2049,
	  "reload" },
	{ SVC_NFS, "exportfs", "nfs-server.service", NULL, 2049, "exportfs" },
	{ SVC_AFP, "afpd", "netatalk.service", "/run/netatalk/afpd.pid", 548, "reload" },
	{ SVC_MDNS, "avahi-daemon", "avahi-daemon.service", "/run/avahi-daemon/pid", 0,
	  "reload" },
	{ SVC_SYS, "sysctl", "systemd-sysctl.service", NULL, 0, "sysctl" },
	{ SVC_SELF, "nastune", NULL, NULL, 0, "none" },
};

const struct service_desc *
service_desc(const struct model *m, enum svc svc)
{
	switch (svc) {
	case SVC_SMB:
		return &rows[0];
	case SVC_NFS:
		return m->nfs.server == NFS_SERVER_GANESHA ? &rows[1] : &rows[2];
	case SVC_AFP:
		return &rows[3];
	case SVC_SYS:
		return &rows[5];
	case SVC_SELF:
		return &rows[6];
	default:
		return &rows[4];
	}
}

const char *
service_pidfile(const struct model *m, enum svc svc)
{
	if (m->services.svc_pidfile[svc])
		return m->services.svc_pidfile[svc];
	return service_desc(m, svc)->pidfile;
}

bool
service_port_listening(int port)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	char line[512];
	size_t i;

	for (i = 0; i < 2; i++) {
		FILE *fp = fopen(files[i], "re");

		if (!fp)
			continue;
		while (fgets(line, sizeof(line), fp)) {
			char local[128];
			unsigned st, p;
			char *colon;

			if (sscanf(line, " %*d: %127s %*s %x", local, &st) != 2 || st != 0x0A)
				continue;
			colon = strrchr(local, ':');
			if (colon && sscanf(colon + 1, "%x", &p) == 1 && (int)p == port) {
				fclose(fp);
				return true;
			}
		}
		fclose(fp);
	}
	return false;
}

/* Runs argv, waits; returns the exit status or -errno. */
static int
run(char *const argv[])
{
	pid_t pid;
	int st, rc;

	rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (rc != 0)
		return -rc;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A service that listened before a reload must listen again within 5 s. */
static int
wait_listening(const char *who, int port, bool was_listening, char *err, size_t errlen)
{
	int i;

	if (!was_listening || !port)
		return 0;
	for (i = 0; i < 50; i++) {
		if (service_port_listening(port))
			return 0;
		usleep(100000);
	}
	snprintf(err, errlen, "%s does not listen on port %d after the reload", who, port);
	return -ECONNREFUSED;
}

/* The sysctl file into the running kernel. When it is gone (rollback to before any sys.*
 * knob), the sys.* keys go back to the kernel's defaults from the knob table and then every
 * sysctl.d file is reread, so a value another file sets wins again. Only for the real
 * system: a staging root's file is not this kernel's. Returns 0, 1 (nothing to do), -errno. */
static int
sysctl_apply(const char *root, char *err, size_t errlen)
{
	char *argv_p[] = { "sysctl", "-q", "-p", RENDER_SYSCTL_PATH, NULL };
	char *argv_sys[] = { "sysctl", "-q", "--system", NULL };
	const struct knob *k;
	struct stat st;
	int rc;

	if (root && *root)
		return 1;
	if (stat(RENDER_SYSCTL_PATH, &st) == 0) {
		rc = run(argv_p);
	} else {
		for (k = knob_first(); k; k = knob_next(k)) {
			char val[64], *argv_w[] = { "sysctl", "-q", "-w", NULL, NULL };

			if (k->place != KNOB_AT_SYSCTL || !k->dflt)
				continue;
			knob_render_value(k, k->dflt, val, sizeof(val));
			argv_w[3] = xasprintf("%s=%s", k->param, val);
			run(argv_w);	/* best effort: --system below reports real failures */
			free(argv_w[3]);
		}
		rc = run(argv_sys);
	}
	if (rc != 0) {
		snprintf(err, errlen, "sysctl failed to load %s (%s)", RENDER_SYSCTL_PATH,
			 rc < 0 ? strerror(-rc) : "non-zero exit");
		return rc < 0 ? rc : -EIO;
	}
	return 0;
}

/* ---- systemd ---- */

static int
systemd_reload(const char *root, const struct service_desc *d, const char *pidfile, char *err,
	       size_t errlen)
{
	char *argv_sd[] = { "systemctl", "reload-or-restart", (char *)d->unit, NULL };
	char *argv_ex[] = { "exportfs", "-ra", NULL };
	int rc;

	(void)pidfile;
	if (strcmp(d->action, "sysctl") == 0)
		return sysctl_apply(root, err, errlen);
	if (strcmp(d->action, "none") == 0)
		return 1;
	rc = run(strcmp(d->action, "exportfs") == 0 ? argv_ex : argv_sd);
	if (rc != 0) {
		snprintf(err, errlen, "%s failed (%s)", strcmp(d->action, "exportfs") == 0 ?
			 "exportfs -ra" : "systemctl reload-or-restart",
			 rc < 0 ? strerror(-rc) : "non-zero exit");
		return rc < 0 ? rc : -EIO;
	}
	return 0;
}

static int
systemd_check(const char *root, const struct service_desc *d, const char *pidfile,
	      bool was_listening, char *err, size_t errlen)
{
	char *argv[] = { "systemctl", "is-active", "--quiet", (char *)d->unit, NULL };

	(void)root;
	(void)pidfile;
	if (strcmp(d->action, "sysctl") == 0 || strcmp(d->action, "none") == 0)
		return 0;
	if (run(argv) != 0) {
		snprintf(err, errlen, "%s is not active after the reload", d->unit);
		return -ESRCH;
	}
	return wait_listening(d->unit, d->port, was_listening, err, errlen);
}

/* ---- pidfile ---- */

static int
read_pid(const char *root, const char *pidfile, pid_t *pid, char **path)
{
	char *text = NULL;
	long v;
	int rc;

	*path = fs_rooted(root, pidfile);
	rc = fs_read_file(*path, 64, &text, NULL);
	if (rc < 0)
		return rc;
	v = strtol(text, NULL, 10);
	free(text);
	if (v <= 1)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

static int
pidfile_reload(const char *root, const struct service_desc *d, const char *pidfile, char *err,
	       size_t errlen)
{
	char *path = NULL;
	pid_t pid;
	int rc;

	if (strcmp(d->action, "sysctl") == 0)
		return sysctl_apply(root, err, errlen);
	if (strcmp(d->action, "exportfs") == 0) {
		char *argv[] = { "exportfs", "-ra", NULL };

		if (root && *root)
			return 1;	/* the kernel's exports are the host's, never a staging root's */
		rc = run(argv);
		if (rc != 0) {
			snprintf(err, errlen, "exportfs -ra failed");
			return -EIO;
		}
		return 0;
	}
	if (!pidfile)
		return 1;
	rc = read_pid(root, pidfile, &pid, &path);
	if (rc == -ENOENT) {
		free(path);
		return 1;
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot read pid of %s from %s: %s", d->daemon, path,
			 strerror(-rc));
		free(path);
		return rc;
	}
	if (kill(pid, SIGHUP) < 0) {
		if (errno == ESRCH) {
			/* A stale pidfile: the daemon is not running (it may have exited when its
			 * file was removed, e.g. by a rollback to the distro's originals). */
			free(path);
			return 1;
		}
		rc = -errno;
		snprintf(err, errlen, "%s (pid %d from %s) cannot be signalled: %s", d->daemon,
			 (int)pid, path, strerror(errno));
		free(path);
		return rc;
	}
	free(path);
	return 0;
}

static int
pidfile_check(const char *root, const struct service_desc *d, const char *pidfile,
	      bool was_listening, char *err, size_t errlen)
{
	char *path = NULL;
	pid_t pid;
	int i, rc;

	if (strcmp(d->action, "exportfs") == 0 || strcmp(d->action, "sysctl") == 0 || !pidfile)
		return 0;
	rc = read_pid(root, pidfile, &pid, &path);
	if (rc < 0) {
		snprintf(err, errlen, "%s's pidfile %s is gone after the reload", d->daemon, path);
		free(path);
		return -ESRCH;
	}
	/* Give the daemon a moment to act on the signal (or die of it). */
	for (i = 0; i < 5; i++) {
		usleep(50000);
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			snprintf(err, errlen, "%s (pid %d) died after the reload", d->daemon,
				 (int)pid);
			free(path);
			return -ESRCH;
		}
	}
	free(path);
	return wait_listening(d->daemon, d->port, was_listening, err, errlen);
}

/* ---- none ---- */

static int
none_reload(const char *root, const struct service_desc *d, const char *pidfile, char *err,
	    size_t errlen)
{
	(void)root;
	(void)d;
	(void)pidfile;
	(void)err;
	(void)errlen;
	return 1;
}

static int
none_check(const char *root, const struct service_desc *d, const char *pidfile,
	   bool was_listening, char *err, size_t errlen)
{
	(void)root;
	(void)d;
	(void)pidfile;
	(void)was_listening;
	(void)err;
	(void)errlen;
	return 0;
}

static const struct service_backend backends[] = {
	{ "systemd", systemd_reload, systemd_check },
	{ "pidfile", pidfile_reload, pidfile_check },
	{ "none", none_reload, none_check },
};

const struct service_backend *
service_backend(const struct model *m, const char *root, enum svc svc)
{
	const char *name = m->services.svc_backend[svc] ? m->services.svc_backend[svc] :
			   m->services.backend ? m->services.backend : "auto";
	size_t i;

	if (strcmp(name, "auto") == 0) {
		char *p = fs_rooted(root, "/run/systemd/system");
		struct stat st;

		name = stat(p, &st) == 0 && S_ISDIR(st.st_mode) ? "systemd" : "pidfile";
		free(p);
	}
	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (strcmp(backends[i].name, name) == 0)
			return &backends[i];
	return NULL;
}
