/* smbmod.c - are the VFS modules a smb.conf names installed?
 *
 * testparm accepts "vfs objects = fruit" whether or not fruit.so exists; smbd only finds out
 * at tree connect and refuses the share (NT_STATUS_BAD_NETWORK_NAME). Debian ships every
 * loadable VFS module in samba-vfs-modules, which samba only recommends, so an install
 * without recommends has none. smbd -b names the module directory and the modules built in. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/io_uring.h>

#include "fsutil.h"
#include "proc.h"
#include "smbmod.h"
#include "xmalloc.h"

static char *
smbd_build_info_run(int *rc)
{
	static const char *const cands[] = { "smbd", "/usr/sbin/smbd" };
	char *out = NULL;
	size_t i, len;
	int e = -ENOENT;

	/* PATH may lack /usr/sbin (cron, a minimal sudo): then the usual place. */
	for (i = 0; i < 2 && e == -ENOENT; i++) {
		char *argv[] = { (char *)cands[i], "-b", NULL };
		struct proc p = PROC_INIT(argv);

		p.err = PROC_NULL;
		free(out);
		e = proc_capture(&p, SIZE_MAX, &out, &len);
	}
	if (e == -ENOENT || (e < 0 && !out)) {
		*rc = e == -ENOENT ? 1 : e;
		return NULL;
	}
	if (e != 0 || !strstr(out, "MODULESDIR:")) {
		free(out);
		*rc = -EIO;
		return NULL;
	}
	*rc = 0;
	return out;
}

/* Runs `smbd -b` and returns its output (caller frees), or NULL with *rc: 1 when smbd is
 * not installed, -errno otherwise. What one run said is kept for the process: a tune checks
 * every trial's smb.conf, and the binary does not change under a running nastune. */
static char *
smbd_build_info(int *rc)
{
	static char *kept;
	char *info;

	if (kept) {
		*rc = 0;
		return xstrdup(kept);
	}
	if ((info = smbd_build_info_run(rc)))
		kept = xstrdup(info);
	return info;
}

/* The value after "KEY:" on its line in info, into buf. */
static void
info_value(const char *info, const char *key, char *buf, size_t len)
{
	const char *p = strstr(info, key);
	size_t n;

	buf[0] = '\0';
	if (!p)
		return;
	p += strlen(key);
	p += strspn(p, " \t");
	n = strcspn(p, "\n");
	snprintf(buf, len, "%.*s", (int)n, p);
}

/* Whether smbd has module name built in ("Builtin modules:" lists "vfs_default" ...). */
static bool
builtin(const char *info, const char *name)
{
	const char *p = strstr(info, "Builtin modules:");
	char want[160];
	size_t wl;

	if (!p)
		return false;
	p = strchr(p, '\n');
	snprintf(want, sizeof(want), "vfs_%s", name);
	wl = strlen(want);
	for (; p && *p == '\n' && p[1] == ' '; p = strchr(p + 1, '\n')) {
		const char *end = strchr(p + 1, '\n'), *q = p + 1;

		if (!end)
			end = q + strlen(q);
		while (q < end) {
			size_t n;

			q += strspn(q, " \t");
			n = strcspn(q, " \t\n");
			if (n == wl && strncmp(q, want, wl) == 0)
				return true;
			q += n;
		}
	}
	return false;
}

/* Checks the modules of one "vfs objects = a b c" value. */
static int
check_line(const char *info, const char *dir, const char *path, int lineno, const char *val,
	   char *err, size_t errlen)
{
	char name[128], why[256], *so;
	struct stat st;
	size_t n;

	/* Split as Samba splits a list: blanks, commas and semicolons, quotes dropped
	 * (testparm reads `catia;fruit,"streams_xattr"` as three modules). */
	while (*(val += strspn(val, " \t,;\""))) {
		n = strcspn(val, " \t,;\"");
		snprintf(name, sizeof(name), "%.*s", (int)n, val);
		val += n;
		if (strcmp(name, "io_uring") == 0 &&
		    smbmod_kernel_io_uring(NULL, why, sizeof(why)) == 0) {
			snprintf(err, errlen,
				 "%s:%d: VFS module \"io_uring\" cannot run here: %s (smbd would "
				 "refuse every share that uses it): set smb.io_uring = \"no\"",
				 path, lineno, why);
			return -ENOENT;
		}
		if (builtin(info, name))
			continue;
		so = xasprintf("%s/vfs/%s.so", dir, name);
		if (stat(so, &st) < 0) {
			snprintf(err, errlen,
				 "%s:%d: VFS module \"%s\" is not installed (smbd has no "
				 "%s, so it would refuse every share that uses it): install %s "
				 "(apt-get install %s)",
				 path, lineno, name, so, SMBMOD_PACKAGE, SMBMOD_PACKAGE);
			free(so);
			return -ENOENT;
		}
		free(so);
	}
	return 0;
}

int
smbmod_check(const char *path, const char *conf, size_t len, char *err, size_t errlen)
{
	char dir[512], *info, *text = xmalloc(len + 1), *line, *save = NULL;
	int rc, lineno = 0;

	memcpy(text, conf, len);
	text[len] = '\0';
	if (!strcasestr(text, "vfs object")) {
		free(text);
		return 0;
	}
	if (!(info = smbd_build_info(&rc))) {
		if (rc < 0)
			snprintf(err, errlen, "cannot ask smbd -b for its module directory: %s",
				 strerror(-rc));
		free(text);
		return rc;
	}
	info_value(info, "MODULESDIR:", dir, sizeof(dir));
	rc = 0;
	for (line = text; line && rc == 0; line = save) {
		char *eq, *k;

		save = strchr(line, '\n');
		if (save)
			*save++ = '\0';
		lineno++;
		k = line + strspn(line, " \t");
		/* Parameter names are case-insensitive ("VFS Objects"). */
		if (strncasecmp(k, "vfs object", 10) != 0)
			continue;
		if (!(eq = strchr(k, '=')))
			continue;
		rc = check_line(info, dir, path, lineno, eq + 1, err, errlen);
	}
	free(info);
	free(text);
	return rc;
}

int
smbmod_kernel_io_uring(const char *procroot, char *why, size_t whylen)
{
	char *p = fs_rooted(procroot, "/proc/sys/kernel/io_uring_disabled"), *v = NULL;
	struct io_uring_params params;
	int fd;

	/* 0: anyone; 1: CAP_SYS_ADMIN or kernel.io_uring_group (smbd runs as root); 2: no one.
	 * Kernels before 6.6 have no such file. */
	if (fs_read_file(p, 64, &v, NULL) == 0 && atoi(v) >= 2) {
		snprintf(why, whylen,
			 "the kernel has io_uring switched off (kernel.io_uring_disabled "
			 "= 2)");
		free(v);
		free(p);
		return 0;
	}
	free(v);
	free(p);
	/* The sysctl does not say what a seccomp filter (containers) or an old kernel refuse. */
	memset(&params, 0, sizeof(params));
	fd = (int)syscall(__NR_io_uring_setup, 1, &params);
	if (fd < 0) {
		snprintf(why, whylen, "the kernel refuses io_uring_setup (%s)",
			 errno == ENOSYS ? "not built in" : strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

int
smbmod_io_uring(char *why, size_t whylen)
{
	char dir[512], *info, *so;
	struct stat st;
	int rc;

	if (!(info = smbd_build_info(&rc))) {
		snprintf(why, whylen, "%s",
			 rc == 1 ? "smbd is not installed"
				 : "smbd -b does not answer (its module directory is unknown)");
		return 0;
	}
	info_value(info, "MODULESDIR:", dir, sizeof(dir));
	so = xasprintf("%s/vfs/io_uring.so", dir);
	rc = builtin(info, "io_uring") || stat(so, &st) == 0;
	if (!rc)
		snprintf(why, whylen, "this Samba has no io_uring module (no %s; install %s)", so,
			 SMBMOD_PACKAGE);
	free(so);
	free(info);
	return rc ? smbmod_kernel_io_uring(NULL, why, whylen) : 0;
}
