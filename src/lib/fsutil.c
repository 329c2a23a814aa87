/* fsutil.c - whole-file reads and atomic writes. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "xmalloc.h"

int
fs_read_file(const char *path, size_t max, char **out, size_t *len)
{
	struct stat st;
	size_t cap = 4096, n = 0;
	char *p;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	p = xmalloc(cap);
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			if (cap > max + 1) {
				err = -EFBIG;
				goto fail;
			}
			cap *= 2;
			p = xreallocarray(p, cap, 1);
		}
		r = read(fd, p + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			err = -EFBIG;
			goto fail;
		}
	}
	close(fd);
	p[n] = '\0';
	*out = p;
	if (len)
		*len = n;
	return 0;
fail:
	close(fd);
	free(p);
	return err;
}

static int
write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* fsyncs the directory holding path: a rename, unlink or mkdir in it is durable only then.
 * EINVAL: the filesystem cannot sync directories at all. */
static int
sync_parent(const char *path)
{
	char *dcopy = xstrdup(path);
	int dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (dfd < 0 || (fsync(dfd) < 0 && errno != EINVAL))
		err = -errno;
	if (dfd >= 0)
		close(dfd);
	free(dcopy);
	return err;
}

int
fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode, int keep_owner)
{
	char *tmp = NULL;
	struct stat st;
	int fd = -1, err = 0;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;

	if (keep_owner && stat(path, &st) == 0) {
		mode = st.st_mode & 07777;
		uid = st.st_uid;
		gid = st.st_gid;
	}
	tmp = xasprintf("%s.nastune-tmp.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	if ((err = write_all(fd, data, len)) < 0)
		goto fail;
	if (fchmod(fd, mode) < 0) {
		err = -errno;
		goto fail;
	}
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && geteuid() == 0 && fchown(fd, uid, gid) < 0) {
		err = -errno;
		goto fail;
	}
	if (fsync(fd) < 0) {
		err = -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		err = -errno;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		err = -errno;
		goto fail;
	}
	/* The rename is durable only once the directory is: a failure here is reported (the
	 * new file is in place, but a crash could still bring the old one back). */
	err = sync_parent(path);
	free(tmp);
	return err;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return err;
}

int
fs_write_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode)
{
	char tmp[NAME_MAX + 1];
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), ".%.200s.nastune-tmp.%ld", name, (long)getpid()) < 0)
		return -EINVAL;
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	if ((err = write_all(fd, data, len)) < 0)
		goto fail;
	if (fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		err = -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		err = -errno;
		goto fail;
	}
	fd = -1;
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		err = -errno;
		goto fail;
	}
	return fsync(dirfd) < 0 ? -errno : 0;
fail:
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return err;
}

int
fs_remove_durable(const char *path)
{
	if (unlink(path) < 0)
		return errno == ENOENT ? 0 : -errno;
	return sync_parent(path);
}

int
fs_mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path), *s;
	int err = 0;

	for (s = p + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, mode) < 0) {
				if (errno != EEXIST) {
					err = -errno;
					break;
				}
			} else if ((err = sync_parent(p)) < 0) {
				/* A file written below a directory a crash forgets is lost with it
				 * (a generation's copy the state database names). */
				break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	free(p);
	return err;
}

char *
fs_rooted(const char *root, const char *abs)
{
	size_t rl;

	if (!root || !*root)
		return xstrdup(abs);
	rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	return xasprintf("%.*s%s", (int)rl, root, abs);
}
