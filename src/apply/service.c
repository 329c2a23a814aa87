/* service.c - service backends: systemd, pidfile, none. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fsutil.h"
#include "knobs.h"
#include "log.h"
#include "paths.h"
#include "proc.h"
#include "render.h"
#include "service.h"
#include "xmalloc.h"

static const struct service_desc rows[] = {
	{ SVC_SMB, "smbd", "smbd.service", "/run/samba/smbd.pid", 445, "reload" },
	{ SVC_NFS, "ganesha.nfsd", "nfs-ganesha.service", "/run/ganesha/ganesha.pid", 2049,
	  "reload" },
	{ SVC_NFS, "exportfs", "nfs-server.service", NULL, 2049, "exportfs" },
	{ SVC_AFP, "afpd", "netatalk.service", "/run/netatalk/afpd.pid", 548, "reload" },
	{ SVC_MDNS, "avahi-daemon", "avahi-daemon.service", "/run/avahi-daemon/pid", 0, "reload" },
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

const char *
service_start(const struct model *m, enum svc svc)
{
	return (unsigned)svc < SVC_COUNT ? m->services.svc_start[svc] : NULL;
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

/* Waits in steps of POLL_MS: a daemon exits or writes its pidfile within tens of ms, and a
 * tune restarts one at every switch of its screen. */
#define POLL_MS 10

/* A service that listened before a reload must listen again within 5 s; after a restart
 * (a daemon starting from nothing) within 30 s. */
static int
wait_listening(const char *who, int port, bool was_listening, bool restarted, char *err,
	       size_t errlen)
{
	int i, steps = (restarted ? 30000 : 5000) / POLL_MS;

	if (!was_listening || !port)
		return 0;
	for (i = 0; i < steps; i++) {
		if (service_port_listening(port))
			return 0;
		usleep(POLL_MS * 1000);
	}
	snprintf(err, errlen, "%s does not listen on port %d after the %s", who, port,
		 restarted ? "restart" : "reload");
	return -ECONNREFUSED;
}

/* The value "key = value" text sets for key, whitespace runs as one space, in out; false when
 * it sets none. Later lines win, as in sysctl -p. */
static bool
sysctl_conf_value(const char *text, const char *key, char *out, size_t outlen)
{
	size_t klen = strlen(key);
	const char *line, *p;
	bool found = false;

	for (line = text; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		size_t n = 0;

		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (strncmp(p, key, klen) != 0)
			continue;
		for (p += klen; *p == ' ' || *p == '\t'; p++)
			;
		if (*p++ != '=')
			continue;
		for (; *p == ' ' || *p == '\t'; p++)
			;
		for (; *p && *p != '\n' && n + 1 < outlen; p++) {
			if ((*p == ' ' || *p == '\t') && (n == 0 || out[n - 1] == ' '))
				continue;
			out[n++] = *p == '\t' ? ' ' : *p;
		}
		while (n > 0 && out[n - 1] == ' ')
			n--;
		out[n] = '\0';
		found = true;
	}
	return found;
}

static char *
sysctl_proc_path(const char *key)
{
	char *path = xasprintf("/proc/sys/%s", key), *c;

	for (c = path + strlen("/proc/sys/"); *c; c++)
		if (*c == '.')
			*c = '/';
	return path;
}

/* The kernel's value of key, whitespace runs as one space. Returns 0 or -errno. */
static int
sysctl_read(const char *key, char *out, size_t outlen)
{
	char *path = sysctl_proc_path(key), *text = NULL, *line;
	int rc = fs_read_file(path, 4096, &text, NULL);

	if (rc == 0) {
		line = xasprintf("%s = %s", key, text);
		if (!sysctl_conf_value(line, key, out, outlen))
			rc = -EINVAL;
		free(line);
	}
	free(text);
	free(path);
	return rc;
}

static int
sysctl_write(const char *key, const char *value)
{
	char *path = sysctl_proc_path(key);
	size_t len = strlen(value);
	int fd, rc = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -errno;
	if (write(fd, value, len) != (ssize_t)len)
		rc = errno ? -errno : -EIO;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Records in path (paths_sysctl_orig), before nastune first sets a key, the kernel's value of
 * every key the file sets and the record lacks, in sysctl.conf syntax so `sysctl -p` can load
 * it (the package's purge does). Nothing is set when the record cannot be written. Returns 0,
 * -errno. */
static int
sysctl_record(const char *conf, const char *path, char **orig, char *err, size_t errlen)
{
	const struct knob *k;
	char val[256], cur[256], *dir = NULL;
	struct buf b;
	int rc = 0;

	buf_init(&b);
	buf_adds(&b, *orig ? *orig : "");
	for (k = knob_first(); k; k = knob_next(k)) {
		if (k->place != KNOB_AT_SYSCTL ||
		    !sysctl_conf_value(conf, k->param, val, sizeof(val)))
			continue;
		if (*orig && sysctl_conf_value(*orig, k->param, cur, sizeof(cur)))
			continue;
		if ((rc = sysctl_read(k->param, cur, sizeof(cur))) < 0) {
			snprintf(err, errlen, "cannot read %s from the kernel: %s", k->param,
				 strerror(-rc));
			goto out;
		}
		if (b.len == 0)
			buf_adds(&b, "# The kernel's values before nastune set them; restored when "
				     "no generation sets them.\n");
		buf_printf(&b, "%s = %s\n", k->param, cur);
	}
	if (b.len == (*orig ? strlen(*orig) : 0))
		goto out;
	dir = paths_state_dir(NULL);
	if ((rc = fs_mkdir_p(dir, 0755)) < 0 ||
	    (rc = fs_write_atomic(path, b.data, b.len, 0644, 0)) < 0) {
		snprintf(err, errlen, "cannot record the kernel's sysctl values in %s: %s", path,
			 strerror(-rc));
		goto out;
	}
	free(*orig);
	*orig = buf_steal(&b, NULL);
out:
	free(dir);
	buf_clear(&b);
	return rc;
}

/* The sysctl file into the running kernel: every sys.* key takes the value the file sets, or
 * when it sets none (a key dropped, the file gone), exactly the kernel's own value recorded
 * before nastune first set it, so a trial or a rolled-back generation leaves nothing behind.
 * Only for the real system: a staging root's file is not this kernel's. Returns 0, 1 (nothing
 * to do), -errno. */
static int
sysctl_apply(const char *root, char *err, size_t errlen)
{
	char *conf = NULL, *orig = NULL, *path, val[256], cur[256];
	const struct knob *k;
	int rc;

	if (root && *root)
		return 1;
	path = paths_sysctl_orig();
	rc = fs_read_file(RENDER_SYSCTL_PATH, 1 << 20, &conf, NULL);
	if (rc < 0 && rc != -ENOENT) {
		snprintf(err, errlen, "cannot read %s: %s", RENDER_SYSCTL_PATH, strerror(-rc));
		free(path);
		return rc;
	}
	rc = fs_read_file(path, 1 << 20, &orig, NULL);
	if (rc < 0 && rc != -ENOENT) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		goto out;
	}
	if ((rc = sysctl_record(conf ? conf : "", path, &orig, err, errlen)) < 0)
		goto out;
	for (k = knob_first(); k; k = knob_next(k)) {
		if (k->place != KNOB_AT_SYSCTL)
			continue;
		if (!(conf && sysctl_conf_value(conf, k->param, val, sizeof(val))) &&
		    !(orig && sysctl_conf_value(orig, k->param, val, sizeof(val))))
			continue; /* never set by nastune */
		if (sysctl_read(k->param, cur, sizeof(cur)) == 0 && strcmp(cur, val) == 0)
			continue;
		if ((rc = sysctl_write(k->param, val)) < 0) {
			snprintf(err, errlen, "cannot set %s to \"%s\": %s", k->param, val,
				 strerror(-rc));
			goto out;
		}
	}
	rc = 0;
out:
	free(conf);
	free(orig);
	free(path);
	return rc;
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
	rc = proc_run_argv(strcmp(d->action, "exportfs") == 0 ? argv_ex : argv_sd);
	if (rc != 0) {
		snprintf(err, errlen, "%s failed (%s)",
			 strcmp(d->action, "exportfs") == 0 ? "exportfs -ra"
							    : "systemctl reload-or-restart",
			 rc < 0 ? strerror(-rc) : "non-zero exit");
		return rc < 0 ? rc : -EIO;
	}
	return 0;
}

/* systemctl restart starts a stopped unit too, as reload-or-restart does: force is moot. */
static int
systemd_restart(const char *root, const struct service_desc *d, const char *pidfile,
		const char *start, bool force, char *err, size_t errlen)
{
	char *argv[] = { "systemctl", "restart", (char *)d->unit, NULL };
	int rc;

	(void)start;
	(void)force;
	if (strcmp(d->action, "reload") != 0)
		return systemd_reload(root, d, pidfile, err, errlen);
	rc = proc_run_argv(argv);
	if (rc != 0) {
		snprintf(err, errlen, "systemctl restart %s failed (%s)", d->unit,
			 rc < 0 ? strerror(-rc) : "non-zero exit");
		return rc < 0 ? rc : -EIO;
	}
	return 0;
}

static int
systemd_check(const char *root, const struct service_desc *d, const char *pidfile,
	      bool was_listening, enum svc_check kind, char *err, size_t errlen)
{
	char *argv[] = { "systemctl", "is-active", "--quiet", (char *)d->unit, NULL };
	bool restarted = kind == SVC_CHECK_RESTART || kind == SVC_CHECK_TRIAL_RESTART;

	(void)root;
	(void)pidfile;
	if (strcmp(d->action, "sysctl") == 0 || strcmp(d->action, "none") == 0)
		return 0;
	if (proc_run_argv(argv) != 0) {
		snprintf(err, errlen, "%s is not active after the %s", d->unit,
			 restarted ? "restart" : "reload");
		return -ESRCH;
	}
	return wait_listening(d->unit, d->port, was_listening, restarted, err, errlen);
}

/* ---- pidfile ---- */

int
service_pid_read(const char *root, const char *pidfile, pid_t *pid, char **path)
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
			return 1; /* the kernel's exports are the host's, never a staging root's */
		rc = proc_run_argv(argv);
		if (rc != 0) {
			snprintf(err, errlen, "exportfs -ra failed");
			return -EIO;
		}
		return 0;
	}
	if (!pidfile)
		return 1;
	rc = service_pid_read(root, pidfile, &pid, &path);
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
	/* A stale pidfile: the daemon is not running (it may have exited when its file was
	 * removed, e.g. by a rollback to the distro's originals). Exited but not yet reaped
	 * counts too: kill() succeeds on a zombie, which then "dies after the reload". */
	if (!service_pid_alive(pid)) {
		free(path);
		return 1;
	}
	if (kill(pid, SIGHUP) < 0) {
		if (errno == ESRCH) {
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

/* ---- pidfile restart: stop the pid (SIGTERM, then SIGKILL), run the start command, wait
 * for the pidfile to name a new live process ---- */

/* kill(pid, 0) succeeds on a zombie too: /proc says which it is. */
bool
service_pid_alive(pid_t pid)
{
	char path[64], buf[256], *rp;
	FILE *fp;
	bool zombie = false;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fp = fopen(path, "re"))) {
		if (fgets(buf, sizeof(buf), fp) && (rp = strrchr(buf, ')')))
			zombie = rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
		fclose(fp);
	}
	return !zombie;
}

int
service_pidfile_claim(const char *path)
{
	char text[32], *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int rc;

	if (slash && slash != dir) {
		*slash = '\0';
		fs_mkdir_p(dir, 0755);
	}
	free(dir);
	snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	rc = fs_write_atomic(path, text, strlen(text), 0644, 0);
	return rc;
}

void
service_pidfile_release(const char *path)
{
	char text[32], *cur = NULL;

	snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	if (fs_read_file(path, 64, &cur, NULL) == 0 && strcmp(cur, text) == 0)
		unlink(path);
	free(cur);
}

/* Whether pid has taken the SIGHUP sent to it: not pending for the thread group or its main
 * thread (/proc/PID/status ShdPnd and SigPnd). When that cannot be read: true. */
static bool
hup_taken(pid_t pid)
{
	char path[64], line[256];
	unsigned long long bit = 1ull << (SIGHUP - 1), mask;
	bool pending = false;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(fp = fopen(path, "re")))
		return true;
	while (fgets(line, sizeof(line), fp))
		if ((sscanf(line, "ShdPnd: %llx", &mask) == 1 ||
		     sscanf(line, "SigPnd: %llx", &mask) == 1) &&
		    (mask & bit))
			pending = true;
	fclose(fp);
	return !pending;
}

#define STOP_TERM_STEPS 1000 /* SIGTERM, then up to 10 s for it to exit */
#define STOP_KILL_STEPS 500  /* SIGKILL, then up to 5 s */
#define START_PID_STEPS 3000 /* the start command returned: up to 30 s for the pidfile */

static int
stop_pid(const struct service_desc *d, pid_t pid, char *err, size_t errlen)
{
	int i;

	if (kill(pid, SIGTERM) < 0) {
		int e = errno;

		if (e == ESRCH)
			return 0;
		snprintf(err, errlen, "%s (pid %d) cannot be signalled: %s", d->daemon, (int)pid,
			 strerror(e));
		return -e;
	}
	for (i = 0; i < STOP_TERM_STEPS; i++) {
		if (!service_pid_alive(pid))
			return 0;
		usleep(POLL_MS * 1000);
	}
	log_warnx("%s (pid %d) did not exit within %d s of SIGTERM: killing it", d->daemon,
		  (int)pid, STOP_TERM_STEPS * POLL_MS / 1000);
	kill(pid, SIGKILL);
	for (i = 0; i < STOP_KILL_STEPS; i++) {
		if (!service_pid_alive(pid))
			return 0;
		usleep(POLL_MS * 1000);
	}
	snprintf(err, errlen, "%s (pid %d) is still there %d s after SIGKILL", d->daemon, (int)pid,
		 STOP_KILL_STEPS * POLL_MS / 1000);
	return -ETIMEDOUT;
}

/* A start command whose program is an absolute path that cannot run fails before anything
 * is stopped. Anything else is the shell's to judge. */
static int
start_runnable(const struct service_desc *d, const char *start, char *err, size_t errlen)
{
	char prog[1024];
	size_t n;

	start += strspn(start, " \t");
	n = strcspn(start, " \t;&|<>()$`\"'\\");
	if (start[0] != '/' || n >= sizeof(prog))
		return 0;
	memcpy(prog, start, n);
	prog[n] = '\0';
	if (access(prog, X_OK) == 0)
		return 0;
	snprintf(err, errlen,
		 "services.%s.start runs %s, which %s — fix services.%s.start; %s "
		 "was not stopped",
		 svc_name(d->svc), prog, errno == ENOENT ? "does not exist" : "is not executable",
		 svc_name(d->svc), d->daemon);
	return -ENOEXEC;
}

/* Runs start with /bin/sh -c in a session of its own, with default signal handling, and
 * waits for it (daemons fork: the command returns). Its input is /dev/null and its output
 * goes to an unlinked file, so a daemon that keeps them holds none of our pipes; our other
 * descriptors (the apply lock among them) are closed. Returns 0, or -errno with the
 * command's last line of output in err. */
static int
run_start(const struct service_desc *d, const char *start, char *err, size_t errlen)
{
	char tmpl[] = "/tmp/nastune-start.XXXXXX", out[2048], *line, *nl;
	char *argv[] = { "sh", "-c", (char *)start, NULL };
	struct proc p = PROC_INIT(argv);
	ssize_t got;
	int fd, rc, st = 0;

	if ((fd = mkostemp(tmpl, O_CLOEXEC)) < 0) {
		rc = -errno;
		snprintf(err, errlen,
			 "cannot create a file for the output of services.%s.start: %s",
			 svc_name(d->svc), strerror(-rc));
		return rc;
	}
	unlink(tmpl);
	p.file = "/bin/sh";
	p.in = PROC_NULL;
	p.out = PROC_FD;
	p.out_fd = fd;
	p.err = PROC_TO_OUT;
	p.new_session = true;
	p.close_fds = true;
	if ((rc = proc_start(&p)) < 0) {
		snprintf(err, errlen, "cannot run /bin/sh for services.%s.start: %s",
			 svc_name(d->svc), strerror(-rc));
		close(fd);
		return rc;
	}
	st = proc_finish(&p) < 0 ? -1 : p.status;
	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		close(fd);
		return 0;
	}
	got = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	out[got > 0 ? got : 0] = '\0';
	while ((nl = strrchr(out, '\n')) && nl[1] == '\0')
		*nl = '\0';
	line = (nl = strrchr(out, '\n')) ? nl + 1 : out;
	snprintf(err, errlen, "services.%s.start (%s) failed (%s %d)%s%s", svc_name(d->svc), start,
		 WIFSIGNALED(st) ? "signal" : "exit",
		 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), *line ? ": " : "", line);
	return -EIO;
}

static int
pidfile_restart(const char *root, const struct service_desc *d, const char *pidfile,
		const char *start, bool force, char *err, size_t errlen)
{
	char *path = NULL;
	pid_t pid = 0, npid;
	bool running;
	int i, rc;

	if (strcmp(d->action, "reload") != 0 || !pidfile)
		return pidfile_reload(root, d, pidfile, err, errlen);
	if (!start) {
		snprintf(err, errlen, "%s needs a restart and services.%s.start is not set",
			 d->daemon, svc_name(d->svc));
		return -EINVAL;
	}
	rc = service_pid_read(root, pidfile, &pid, &path);
	if (rc < 0 && rc != -ENOENT) {
		snprintf(err, errlen, "cannot read pid of %s from %s: %s", d->daemon, path,
			 strerror(-rc));
		free(path);
		return rc;
	}
	running = rc == 0 && service_pid_alive(pid);
	if (!running && !force) {
		free(path);
		return 1;
	}
	if ((rc = start_runnable(d, start, err, errlen)) < 0 ||
	    (running && (rc = stop_pid(d, pid, err, errlen)) < 0)) {
		free(path);
		return rc;
	}
	debug_crash("stopped"); /* between the stop and the start (apply's journal) */
	if ((rc = run_start(d, start, err, errlen)) < 0) {
		free(path);
		return rc;
	}
	for (i = 0; i < START_PID_STEPS; i++) {
		char *p2 = NULL;

		if (service_pid_read(root, pidfile, &npid, &p2) == 0 && npid != pid &&
		    service_pid_alive(npid)) {
			free(p2);
			free(path);
			return 0;
		}
		free(p2);
		usleep(POLL_MS * 1000);
	}
	snprintf(err, errlen,
		 "services.%s.start returned, but %s names no new running %s after "
		 "%d s",
		 svc_name(d->svc), path, d->daemon, START_PID_STEPS * POLL_MS / 1000);
	free(path);
	return -ESRCH;
}

static int
pidfile_check(const char *root, const struct service_desc *d, const char *pidfile,
	      bool was_listening, enum svc_check kind, char *err, size_t errlen)
{
	bool restarted = kind == SVC_CHECK_RESTART || kind == SVC_CHECK_TRIAL_RESTART;
	const char *what = restarted ? "restart" : "reload";
	char *path = NULL;
	pid_t pid;
	int i, rc, grace;

	if (strcmp(d->action, "exportfs") == 0 || strcmp(d->action, "sysctl") == 0 || !pidfile)
		return 0;
	rc = service_pid_read(root, pidfile, &pid, &path);
	if (rc < 0) {
		snprintf(err, errlen, "%s's pidfile %s is gone after the %s", d->daemon, path,
			 what);
		free(path);
		return -ESRCH;
	}
	/* After a reload, first until the daemon has taken its SIGHUP (no longer pending; at
	 * most 250 ms), then a moment to act on it (or die of it): 100 ms. A tune trial's gets
	 * no moment, only the look at once (a daemon the signal killed is caught here): its next
	 * step measures the daemon, and a daemon dead by then fails that measurement ("is smbd
	 * running?"), which ends the tune and restores its start; a tune reloads at every
	 * switch and would wait each time. A restart's new process gets 250 ms, a trial's
	 * none, for the same reason (a tune restarts Ganesha or afpd at most trials: 250 ms
	 * was 64% of a restart's time, a quarter of the screens'). */
	for (i = 0; !restarted && i < 250 && !hup_taken(pid); i++)
		usleep(1000); /* a daemon takes it within a few ms: look every ms */
	grace = kind == SVC_CHECK_TRIAL_RESTART ? 0
		: restarted || i == 250		? 5
		: kind == SVC_CHECK_TRIAL	? 0
						: 2;
	for (i = 0; i <= grace; i++) {
		if (i)
			usleep(50000);
		if (!service_pid_alive(pid)) {
			snprintf(err, errlen, "%s (pid %d) died after the %s", d->daemon, (int)pid,
				 what);
			free(path);
			return -ESRCH;
		}
	}
	free(path);
	return wait_listening(d->daemon, d->port, was_listening, restarted, err, errlen);
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
none_restart(const char *root, const struct service_desc *d, const char *pidfile, const char *start,
	     bool force, char *err, size_t errlen)
{
	(void)start;
	(void)force;
	return none_reload(root, d, pidfile, err, errlen);
}

static int
none_check(const char *root, const struct service_desc *d, const char *pidfile, bool was_listening,
	   enum svc_check kind, char *err, size_t errlen)
{
	(void)root;
	(void)d;
	(void)pidfile;
	(void)was_listening;
	(void)kind;
	(void)err;
	(void)errlen;
	return 0;
}

static const struct service_backend backends[] = {
	{ "systemd", systemd_reload, systemd_restart, systemd_check, false },
	{ "pidfile", pidfile_reload, pidfile_restart, pidfile_check, true },
	{ "none", none_reload, none_restart, none_check, false },
};

const struct service_backend *
service_backend(const struct model *m, const char *root, enum svc svc)
{
	const char *name = m->services.svc_backend[svc] ? m->services.svc_backend[svc]
			   : m->services.backend	? m->services.backend
							: "auto";
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

bool
service_sysctl_live(const struct model *m, const char *root)
{
	const struct service_backend *be = service_backend(m, root, SVC_SYS);

	return !(root && *root) && be && strcmp(be->name, "none") != 0;
}
