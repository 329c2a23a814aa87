/* drv_posix.c - a local directory, or a share the OS has mounted (a client's view of SMB, NFS
 * or AFP). Every operation is relative to a directory descriptor of the target's root, so a
 * path can never climb out of it; the final component is never followed as a symlink. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bench_driver.h"
#include "xmalloc.h"

struct bench_conn {
	int root;
	char *rootpath;
	char err[512];
};

struct bench_file {
	int fd;
	char *path;
};

static int
px_fail(struct bench_conn *c, int e, const char *op, const char *path)
{
	snprintf(c->err, sizeof(c->err), "%s %s/%s: %s", op, c->rootpath, path, strerror(e));
	return -e;
}

static int
px_connect(const struct bench_target *t, struct bench_conn **out, char *err, size_t errlen)
{
	struct bench_conn *c;
	char *path;
	int fd, e;

	if (!t->share || t->share[0] != '/') {
		snprintf(err, errlen, "posix: %s is not an absolute path", t->share ? t->share : "");
		return -EINVAL;
	}
	path = *t->subdir ? xasprintf("%s/%s", t->share, t->subdir) : xstrdup(t->share);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "posix: cannot open %s: %s", path, strerror(e));
		free(path);
		return -e;
	}
	c = xcalloc(1, sizeof(*c));
	c->root = fd;
	c->rootpath = path;
	snprintf(c->err, sizeof(c->err), "no error");
	*out = c;
	return 0;
}

static void
px_disconnect(struct bench_conn *c)
{
	if (!c)
		return;
	close(c->root);
	free(c->rootpath);
	free(c);
}

static const char *
px_error(struct bench_conn *c)
{
	return c->err;
}

static int
px_mkdir(struct bench_conn *c, const char *path)
{
	return mkdirat(c->root, path, 0700) < 0 ? px_fail(c, errno, "mkdir", path) : 0;
}

static int
px_rmdir(struct bench_conn *c, const char *path)
{
	return unlinkat(c->root, path, AT_REMOVEDIR) < 0 ? px_fail(c, errno, "rmdir", path) : 0;
}

static int
px_unlink(struct bench_conn *c, const char *path)
{
	return unlinkat(c->root, path, 0) < 0 ? px_fail(c, errno, "unlink", path) : 0;
}

static int
px_rename(struct bench_conn *c, const char *from, const char *to)
{
	return renameat(c->root, from, c->root, to) < 0 ? px_fail(c, errno, "rename", from) : 0;
}

static int
px_stat(struct bench_conn *c, const char *path, struct bench_stat *bs)
{
	struct stat sb;

	if (fstatat(c->root, *path ? path : ".", &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return px_fail(c, errno, "stat", path);
	bs->size = (uint64_t)sb.st_size;
	bs->is_dir = S_ISDIR(sb.st_mode);
	return 0;
}

static int
px_list(struct bench_conn *c, const char *path,
	int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	fd = openat(c->root, *path ? path : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return px_fail(c, errno, "list", path);
	if (!(d = fdopendir(fd))) {
		close(fd);
		return px_fail(c, errno, "list", path);
	}
	errno = 0;
	while (rc == 0 && (de = readdir(d))) {
		struct bench_stat bs = { 0 };
		struct stat sb;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
			bs.size = (uint64_t)sb.st_size;
			bs.is_dir = S_ISDIR(sb.st_mode);
		}
		rc = fn(de->d_name, &bs, arg);
		errno = 0;
	}
	if (rc == 0 && errno)
		rc = px_fail(c, errno, "list", path);
	closedir(d);
	return rc;
}

static int
px_space(struct bench_conn *c, const char *path, uint64_t *free_bytes)
{
	struct statvfs sv;

	(void)path;
	if (fstatvfs(c->root, &sv) < 0)
		return px_fail(c, errno, "statvfs", "");
	*free_bytes = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	return 0;
}

static int
px_open(struct bench_conn *c, const char *path, int flags, struct bench_file **out)
{
	int oflags = O_CLOEXEC | O_NOFOLLOW, fd;

	if ((flags & BENCH_RD) && (flags & BENCH_WR))
		oflags |= O_RDWR;
	else if (flags & BENCH_WR)
		oflags |= O_WRONLY;
	else
		oflags |= O_RDONLY;
	if (flags & BENCH_CREATE)
		oflags |= O_CREAT | O_EXCL;
	if (flags & BENCH_TRUNC)
		oflags |= O_TRUNC;
	fd = openat(c->root, path, oflags, 0600);
	if (fd < 0)
		return px_fail(c, errno, "open", path);
	*out = xcalloc(1, sizeof(**out));
	(*out)->fd = fd;
	(*out)->path = xstrdup(path);
	return 0;
}

static ssize_t
px_pread(struct bench_conn *c, struct bench_file *f, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(f->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0)
			return px_fail(c, errno, "read", f->path);
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static ssize_t
px_pwrite(struct bench_conn *c, struct bench_file *f, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(f->fd, (const char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0)
			return px_fail(c, errno, "write", f->path);
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int
px_flush(struct bench_conn *c, struct bench_file *f)
{
	return fsync(f->fd) < 0 ? px_fail(c, errno, "fsync", f->path) : 0;
}

static int
px_close(struct bench_conn *c, struct bench_file *f)
{
	int rc = close(f->fd) < 0 ? px_fail(c, errno, "close", f->path) : 0;

	free(f->path);
	free(f);
	return rc;
}

#ifdef __linux__
static int
px_copy(struct bench_conn *c, const char *from, const char *to)
{
	int in, out, rc = 0;

	in = openat(c->root, from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return px_fail(c, errno, "open", from);
	out = openat(c->root, to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		rc = px_fail(c, errno, "open", to);
		close(in);
		return rc;
	}
	for (;;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);

		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				rc = px_fail(c, errno, "copy_file_range", to);
			else if (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP ||
				 errno == EINVAL)
				rc = -EOPNOTSUPP, snprintf(c->err, sizeof(c->err),
							   "copy_file_range unsupported here");
			else
				rc = px_fail(c, errno, "copy_file_range", to);
			break;
		}
	}
	if (rc == 0 && fsync(out) < 0)
		rc = px_fail(c, errno, "fsync", to);
	close(in);
	close(out);
	if (rc == -EOPNOTSUPP)
		unlinkat(c->root, to, 0);	/* the engine copies by read+write instead */
	return rc;
}
#endif

const struct bench_driver bench_drv_posix = {
	.name = "posix",
	.scheme = "file",
	.connect = px_connect,
	.disconnect = px_disconnect,
	.error = px_error,
	.mkdir = px_mkdir,
	.rmdir = px_rmdir,
	.unlink = px_unlink,
	.rename = px_rename,
	.stat = px_stat,
	.list = px_list,
	.space = px_space,
	.open = px_open,
	.pread = px_pread,
	.pwrite = px_pwrite,
	.flush = px_flush,
	.close = px_close,
#ifdef __linux__
	.copy = px_copy,
	.copy_method = "copy_file_range",
#endif
	.concurrent = true,
};
