/* drv_posix.c - a local directory, or a share the OS has mounted (a client's view of SMB, NFS
 * or AFP). Every operation is relative to a directory descriptor: of the target's root, or of a
 * directory this connection created (kept open). No component of a path is followed as a
 * symlink, "." and ".." are refused, every create is O_EXCL, and the walk enters only
 * directories that are ours, so nothing a share user plants can lead a write or an unlink
 * outside the target. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif

#include "bench_driver.h"
#include "xmalloc.h"

struct px_dir {
	char *path; /* relative to the root, as the engine names it */
	int fd;
	dev_t dev;
	ino_t ino;
};

struct bench_conn {
	int root;
	char *rootpath;
	/* Directories this connection created, kept open: a path below one of them is resolved
	 * from its descriptor, never again by name, so renaming one away and planting a symlink
	 * (or another directory) in its place redirects nothing. */
	struct px_dir *dirs;
	size_t ndirs;
	/* The owner a network or FUSE file system gave the first directory this connection
	 * made (root squash maps us to nobody; a CIFS mount to its uid=); -1 until then. */
	long long made_uid;
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

/* The file system of fd is served from elsewhere (NFS, CIFS/SMB) or by a FUSE daemon
 * (mergerfs pools on NAS boxes, sshfs): ownership there is what the server or daemon says. */
static bool
px_foreign(int fd)
{
#ifdef __linux__
	struct statfs sf;
	uint32_t t;

	if (fstatfs(fd, &sf) < 0)
		return false;
	t = (uint32_t)sf.f_type; /* a 32-bit magic in a signed word */
	return t == 0x6969u /* NFS */ || t == 0xFF534D42u /* CIFS */ ||
	       t == 0xFE534D42u /* SMB2 */ || t == 0x517Bu /* SMB */ || t == 0x65735546u /* FUSE */;
#else
	(void)fd;
	return false;
#endif
}

/* A directory below the root the walk may enter: ours, so no share user can add entries to
 * it. Locally: our uid and no write for group or others. On NFS, CIFS and FUSE the owner
 * still decides, as the server reports it: our uid, or the one it gave the directory this
 * connection made (a server may force the mode bits, so they are not asked there). */
static bool
px_ours(struct bench_conn *c, int fd)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return false;
	if (sb.st_uid == geteuid() && !(sb.st_mode & 022))
		return true;
	return px_foreign(fd) && (sb.st_uid == geteuid() || (long long)sb.st_uid == c->made_uid);
}

static bool
px_name_ok(const char *name, size_t len)
{
	return len > 0 && len <= NAME_MAX && !(len == 1 && name[0] == '.') &&
	       !(len == 2 && name[0] == '.' && name[1] == '.') && !memchr(name, '/', len);
}

/* A descriptor of the directory dir[0..len) ("" is the root): from the deepest directory this
 * connection created on the way, then one O_NOFOLLOW|O_DIRECTORY component at a time, each
 * checked by px_ours. *owned is the descriptor to close afterwards, or -1 when it is one of
 * ours (borrowed). Returns the descriptor, or -errno. */
static int
px_walk(struct bench_conn *c, const char *dir, size_t len, int *owned)
{
	const char *p, *end = dir + len;
	size_t best = 0, i;
	int fd = c->root;
	bool found = false;

	*owned = -1;
	for (i = 0; i < c->ndirs; i++) {
		size_t l = strlen(c->dirs[i].path);

		if (l <= len && l >= best && strncmp(dir, c->dirs[i].path, l) == 0 &&
		    (l == len || dir[l] == '/')) {
			best = l;
			fd = c->dirs[i].fd;
			found = true;
		}
	}
	p = dir + best + (found && best < len ? 1 : 0);
	while (p < end) {
		const char *q = memchr(p, '/', (size_t)(end - p));
		char name[NAME_MAX + 1];
		int nfd;

		if (!q)
			q = end;
		if (!px_name_ok(p, (size_t)(q - p))) {
			if (*owned >= 0)
				close(*owned);
			*owned = -1;
			return -EINVAL;
		}
		memcpy(name, p, (size_t)(q - p));
		name[q - p] = '\0';
		nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			nfd = -errno;
			if (*owned >= 0)
				close(*owned);
			*owned = -1;
			return nfd;
		}
		if (*owned >= 0)
			close(*owned);
		*owned = fd = nfd;
		if (!px_ours(c, fd)) {
			close(fd);
			*owned = -1;
			return -EPERM;
		}
		p = q + 1;
	}
	return fd;
}

/* Splits path into the descriptor of its parent (px_walk) and its last component. */
static int
px_at(struct bench_conn *c, const char *path, const char **leaf, int *owned)
{
	const char *slash = strrchr(path, '/');

	*leaf = slash ? slash + 1 : path;
	if (!px_name_ok(*leaf, strlen(*leaf))) {
		*owned = -1;
		return -EINVAL;
	}
	return px_walk(c, path, slash ? (size_t)(slash - path) : 0, owned);
}

static void
px_release(int owned)
{
	if (owned >= 0)
		close(owned);
}

static int
px_connect(const struct bench_target *t, struct bench_conn **out, char *err, size_t errlen)
{
	struct bench_conn *c;
	char *path;
	int fd, e;

	if (!t->share || t->share[0] != '/') {
		snprintf(err, errlen, "posix: %s is not an absolute path",
			 t->share ? t->share : "");
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
	c->made_uid = -1;
	snprintf(c->err, sizeof(c->err), "no error");
	*out = c;
	return 0;
}

static void
px_disconnect(struct bench_conn *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->ndirs; i++) {
		close(c->dirs[i].fd);
		free(c->dirs[i].path);
	}
	free(c->dirs);
	close(c->root);
	free(c->rootpath);
	free(c);
}

static const char *
px_error(struct bench_conn *c)
{
	return c->err;
}

/* mkdir, then keep the new directory open. Between the two a share user could swap in a
 * directory of theirs: px_ours refuses it. */
static int
px_mkdir(struct bench_conn *c, const char *path)
{
	const char *leaf;
	struct stat sb;
	int owned, dfd, fd;

	if ((dfd = px_at(c, path, &leaf, &owned)) < 0)
		return px_fail(c, -dfd, "mkdir", path);
	if (mkdirat(dfd, leaf, 0700) < 0) {
		fd = errno;
		px_release(owned);
		return px_fail(c, fd, "mkdir", path);
	}
	fd = openat(dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	px_release(owned);
	if (fd < 0)
		return px_fail(c, errno, "mkdir", path);
	/* The owner a foreign file system gives what we make is ours from now on. */
	if (c->made_uid < 0 && px_foreign(fd) && fstat(fd, &sb) == 0)
		c->made_uid = (long long)sb.st_uid;
	if (!px_ours(c, fd) || fstat(fd, &sb) < 0) {
		close(fd);
		snprintf(c->err, sizeof(c->err),
			 "mkdir %s/%s: replaced by a directory that is not "
			 "ours right after it was made; refusing to use it",
			 c->rootpath, path);
		return -EPERM;
	}
	/* Only once it is proven ours: a swapped-in directory keeps its own mode. */
	(void)fchmod(fd, 0700); /* whatever the umask; refused on a squashed mount */
	c->dirs = xreallocarray(c->dirs, c->ndirs + 1, sizeof(*c->dirs));
	c->dirs[c->ndirs++] = (struct px_dir){ xstrdup(path), fd, sb.st_dev, sb.st_ino };
	return 0;
}

static bool
px_below(const char *path, const char *dir)
{
	size_t l = strlen(dir);

	return strncmp(path, dir, l) == 0 && (path[l] == '\0' || path[l] == '/');
}

static int
px_rmdir(struct bench_conn *c, const char *path)
{
	const char *leaf;
	struct stat sb;
	size_t i, k;
	int owned, dfd, e = 0;

	if ((dfd = px_at(c, path, &leaf, &owned)) < 0)
		return px_fail(c, -dfd, "rmdir", path);
	/* A directory of ours that was renamed away and replaced is not removed in its place. */
	for (i = 0; i < c->ndirs; i++)
		if (strcmp(c->dirs[i].path, path) == 0 &&
		    (fstatat(dfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(sb.st_mode) ||
		     sb.st_dev != c->dirs[i].dev || sb.st_ino != c->dirs[i].ino))
			e = ESTALE;
	if (!e && unlinkat(dfd, leaf, AT_REMOVEDIR) < 0)
		e = errno;
	px_release(owned);
	if (e == ESTALE) {
		snprintf(c->err, sizeof(c->err),
			 "rmdir %s/%s: it was renamed or replaced while in "
			 "use; left alone",
			 c->rootpath, path);
		return -e;
	}
	if (e)
		return px_fail(c, e, "rmdir", path);
	for (i = k = 0; i < c->ndirs; i++) {
		if (px_below(c->dirs[i].path, path)) {
			close(c->dirs[i].fd);
			free(c->dirs[i].path);
		} else {
			c->dirs[k++] = c->dirs[i];
		}
	}
	c->ndirs = k;
	return 0;
}

static int
px_unlink(struct bench_conn *c, const char *path)
{
	const char *leaf;
	int owned, dfd, e = 0;

	if ((dfd = px_at(c, path, &leaf, &owned)) < 0)
		return px_fail(c, -dfd, "unlink", path);
	if (unlinkat(dfd, leaf, 0) < 0)
		e = errno;
	px_release(owned);
	return e ? px_fail(c, e, "unlink", path) : 0;
}

static int
px_rename(struct bench_conn *c, const char *from, const char *to)
{
	const char *lf, *lt;
	int of, ot, df, dt, e = 0;
	size_t i;

	if ((df = px_at(c, from, &lf, &of)) < 0)
		return px_fail(c, -df, "rename", from);
	if ((dt = px_at(c, to, &lt, &ot)) < 0) {
		px_release(of);
		return px_fail(c, -dt, "rename", to);
	}
	if (renameat(df, lf, dt, lt) < 0)
		e = errno;
	px_release(of);
	px_release(ot);
	if (e)
		return px_fail(c, e, "rename", from);
	for (i = 0; i < c->ndirs; i++) /* a directory of ours keeps its descriptor */
		if (px_below(c->dirs[i].path, from)) {
			char *p = xasprintf("%s%s", to, c->dirs[i].path + strlen(from));

			free(c->dirs[i].path);
			c->dirs[i].path = p;
		}
	return 0;
}

static void
px_fill(struct bench_stat *bs, const struct stat *sb)
{
	bs->size = (uint64_t)sb->st_size;
	bs->is_dir = S_ISDIR(sb->st_mode);
	bs->is_link = S_ISLNK(sb->st_mode);
	bs->has_id = true;
	bs->dev = (uint64_t)sb->st_dev;
	bs->ino = (uint64_t)sb->st_ino;
	bs->uid = (int64_t)sb->st_uid;
}

/* A directory at the root that an earlier process made: kept open from here on as if this
 * connection had made it, once it is the very directory want describes. */
static int
px_pin(struct bench_conn *c, const char *path, const struct bench_stat *want)
{
	struct stat sb;
	size_t i;
	int fd;

	if (!px_name_ok(path, strlen(path)))
		return px_fail(c, EINVAL, "open", path);
	for (i = 0; i < c->ndirs; i++)
		if (strcmp(c->dirs[i].path, path) == 0)
			return 0;
	fd = openat(c->root, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return px_fail(c, errno, "open", path);
	if (fstat(fd, &sb) < 0 || !want->has_id || (uint64_t)sb.st_dev != want->dev ||
	    (uint64_t)sb.st_ino != want->ino ||
	    (want->uid >= 0 && (int64_t)sb.st_uid != want->uid) || !px_ours(c, fd)) {
		close(fd);
		snprintf(c->err, sizeof(c->err),
			 "%s/%s is not the directory recorded when it was made (another one, or "
			 "not ours); left alone",
			 c->rootpath, path);
		return -ESTALE;
	}
	c->dirs = xreallocarray(c->dirs, c->ndirs + 1, sizeof(*c->dirs));
	c->dirs[c->ndirs++] = (struct px_dir){ xstrdup(path), fd, sb.st_dev, sb.st_ino };
	return 0;
}

static int
px_stat(struct bench_conn *c, const char *path, struct bench_stat *bs)
{
	const char *leaf;
	struct stat sb;
	int owned, dfd, e = 0;

	if (!*path) {
		if (fstat(c->root, &sb) < 0)
			return px_fail(c, errno, "stat", path);
	} else {
		if ((dfd = px_at(c, path, &leaf, &owned)) < 0)
			return px_fail(c, -dfd, "stat", path);
		if (fstatat(dfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			e = errno;
		px_release(owned);
		if (e)
			return px_fail(c, e, "stat", path);
	}
	px_fill(bs, &sb);
	return 0;
}

static int
px_list(struct bench_conn *c, const char *path,
	int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	struct dirent *de;
	DIR *d;
	int owned, dfd, fd, rc = 0;

	if ((dfd = px_walk(c, path, strlen(path), &owned)) < 0)
		return px_fail(c, -dfd, "list", path);
	/* A new open file description: readdir of a shared one would start where the last
	 * listing ended. */
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	rc = fd < 0 ? -errno : 0;
	px_release(owned);
	if (fd < 0)
		return px_fail(c, -rc, "list", path);
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
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
			px_fill(&bs, &sb);
		rc = fn(de->d_name, &bs, arg);
		errno = 0;
	}
	if (rc == 0 && errno)
		rc = px_fail(c, errno, "list", path);
	closedir(d);
	return rc;
}

int
bench_posix_dirfd(struct bench_conn *c, const char *path)
{
	int owned, dfd, fd;

	if ((dfd = px_walk(c, path, strlen(path), &owned)) < 0)
		return px_fail(c, -dfd, "open", path);
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fd = px_fail(c, errno, "open", path);
	px_release(owned);
	return fd;
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

/* Every create is O_EXCL, nothing is followed, and an existing name must be a regular file
 * (O_NONBLOCK until then: a FIFO planted there cannot hang the open). */
static int
px_open(struct bench_conn *c, const char *path, int flags, struct bench_file **out)
{
	int oflags = O_CLOEXEC | O_NOFOLLOW, fd, owned, dfd, e = 0;
	const char *leaf;
	struct stat sb;

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
	if ((dfd = px_at(c, path, &leaf, &owned)) < 0)
		return px_fail(c, -dfd, "open", path);
	fd = openat(dfd, leaf, oflags | O_NONBLOCK, 0600);
	if (fd < 0)
		e = errno;
	px_release(owned);
	if (fd >= 0) {
		int fl;

		if (fstat(fd, &sb) < 0)
			e = errno;
		else if (!S_ISREG(sb.st_mode))
			e = EINVAL;
		else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
			e = errno;
		if (e) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		return px_fail(c, e, "open", path);
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
		ssize_t n =
			pwrite(f->fd, (const char *)buf + done, len - done, (off_t)(off + done));

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
	struct bench_file *src, *dst;
	int rc = 0;

	if ((rc = px_open(c, from, BENCH_RD, &src)) < 0)
		return rc;
	if ((rc = px_open(c, to, BENCH_WR | BENCH_CREATE, &dst)) < 0) {
		px_close(c, src);
		return rc;
	}
	for (;;) {
		ssize_t n = copy_file_range(src->fd, NULL, dst->fd, NULL, 1 << 30, 0);

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
	if (rc == 0 && fsync(dst->fd) < 0)
		rc = px_fail(c, errno, "fsync", to);
	px_close(c, src);
	px_close(c, dst);
	if (rc == -EOPNOTSUPP)
		px_unlink(c, to); /* the engine copies by read+write instead */
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
	.pin = px_pin,
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
