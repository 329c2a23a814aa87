/* recfs.c - the cluster record's files, root's by proof rather than by place: every
 * directory from the cluster file system's root down to the record is opened relative to the
 * one above it, without following links or blocking, and refused unless it belongs to the
 * user nastune runs as (root on a node) and no one else can write it; every file likewise,
 * and a regular one. A share user who can write anywhere on that path could otherwise swap
 * in a record that every node's root follows. The key that signs the record lives off the
 * cluster file system, in /etc/nastune. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster.h"
#include "fsutil.h"
#include "hash.h"
#include "timeutil.h"
#include "xmalloc.h"

/* fd (what: its path) is a directory (dir) or regular file of this user's that no group or
 * other can write; else -EPERM with err saying why and what to do. */
static int
proven(int fd, const char *what, bool dir, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a %s: nastune refuses the record — remove it",
			 what, dir ? "directory" : "regular file");
		return -EPERM;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen,
			 "%s is owned by uid %u, not root: anyone who owns it could write the "
			 "cluster's configuration — check it, then chown root it",
			 what, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & 022) {
		snprintf(err, errlen,
			 "%s is writable by its group or others (mode %04o): anyone who can "
			 "write it could replace the cluster's configuration — chmod go-w it",
			 what, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* Opens directory name under the proven dirfd (parent: its path), making it first when
 * create; the new handle is proven too. Returns the fd or -errno. */
static int
open_dir_at(struct cluster_rec *rec, int dirfd, const char *parent, const char *name, bool create)
{
	char *what = xasprintf("%s/%s", parent, name);
	int fd, rc;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST) {
			rc = -errno;
			snprintf(rec->err, sizeof(rec->err), "cannot make %s: %s", what,
				 strerror(-rc));
			free(what);
			return rc;
		}
		fsync(dirfd);
		fd = openat(dirfd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	}
	if (fd < 0) {
		rc = -errno;
		if (rc == -ELOOP || rc == -ENOTDIR) {
			snprintf(rec->err, sizeof(rec->err),
				 "%s is a symbolic link or not a directory: nastune refuses the "
				 "record — remove it",
				 what);
			rc = -EPERM;
		} else {
			snprintf(rec->err, sizeof(rec->err), "cannot open %s: %s", what,
				 strerror(-rc));
		}
		free(what);
		return rc;
	}
	if ((rc = proven(fd, what, true, rec->err, sizeof(rec->err))) < 0) {
		close(fd);
		fd = rc;
	}
	free(what);
	return fd;
}

/* Parses 64 hex digits (and an optional newline) into key. */
static int
parse_key(const char *text, size_t len, unsigned char key[CLUSTER_KEY_LEN])
{
	size_t i;

	if (len && text[len - 1] == '\n')
		len--;
	if (len != 2 * CLUSTER_KEY_LEN || strspn(text, "0123456789abcdef") < len)
		return -EINVAL;
	for (i = 0; i < CLUSTER_KEY_LEN; i++) {
		unsigned v;

		if (sscanf(text + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		key[i] = (unsigned char)v;
	}
	return 0;
}

/* Loads the key, refusing one others can read or write. */
static int
load_key(const char *root, struct cluster_rec *rec)
{
	char *path = fs_rooted(root, CLUSTER_KEY_PATH), *text = NULL;
	struct stat st;
	size_t len = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = errno == ENOENT ? -ENOKEY : -errno;
		snprintf(rec->err, sizeof(rec->err),
			 rc == -ENOKEY
				 ? "%s is missing: this node cannot sign or check the "
				   "cluster's record — copy the key from another node with "
				   "`nastune cluster join FILE` (or `nastune cluster join` on "
				   "the first node)"
				 : "cannot open %s: %s",
			 path, strerror(errno));
		free(path);
		return rc;
	}
	rc = proven(fd, path, false, rec->err, sizeof(rec->err));
	if (rc == 0 && fstat(fd, &st) == 0 && (st.st_mode & 077)) {
		snprintf(rec->err, sizeof(rec->err),
			 "%s can be read by its group or others (mode %04o): chmod 600 it", path,
			 (unsigned)(st.st_mode & 07777));
		rc = -EPERM;
	}
	close(fd);
	if (rc == 0 && (rc = fs_read_file(path, 256, &text, &len)) == 0 &&
	    (rc = parse_key(text, len, rec->key)) < 0)
		snprintf(rec->err, sizeof(rec->err),
			 "%s is not a cluster key (64 hex digits): copy it again from another node",
			 path);
	free(text);
	free(path);
	return rc;
}

int
cluster_rec_open(const struct model *m, const char *root, bool create, struct cluster_rec *rec)
{
	char *fs = fs_rooted(root, m->cluster.filesystem), *top;
	int fd, next, rc;

	memset(rec, 0, sizeof(*rec));
	rec->dir = rec->config = rec->nodes = -1;
	rec->path = xasprintf("%s/" CLUSTER_REC_TOP "/cluster", fs);
	if ((rc = load_key(root, rec)) < 0)
		goto out;
	/* The mount point itself is the node's own configuration: its path may be a link. */
	fd = open(fs, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(rec->err, sizeof(rec->err), "cannot open the cluster file system %s: %s",
			 fs, strerror(-rc));
		goto out;
	}
	if ((rc = proven(fd, fs, true, rec->err, sizeof(rec->err))) < 0) {
		close(fd);
		goto out;
	}
	next = open_dir_at(rec, fd, fs, CLUSTER_REC_TOP, create);
	close(fd);
	if ((rc = next) < 0)
		goto out;
	top = xasprintf("%s/" CLUSTER_REC_TOP, fs);
	rec->dir = open_dir_at(rec, next, top, "cluster", create);
	close(next);
	free(top);
	if ((rc = rec->dir) < 0)
		goto out;
	if ((rc = rec->config = open_dir_at(rec, rec->dir, rec->path, "config", create)) < 0 ||
	    (rc = rec->nodes = open_dir_at(rec, rec->dir, rec->path, "nodes", create)) < 0)
		goto out;
	rc = 0;
out:
	if (rc == -ENOENT && !create)
		snprintf(rec->err, sizeof(rec->err), "no cluster record under %s yet", fs);
	free(fs);
	return rc;
}

void
cluster_rec_close(struct cluster_rec *rec)
{
	if (rec->dir >= 0)
		close(rec->dir);
	if (rec->config >= 0)
		close(rec->config);
	if (rec->nodes >= 0)
		close(rec->nodes);
	free(rec->path);
	OPENSSL_cleanse(rec->key, sizeof(rec->key));
	rec->dir = rec->config = rec->nodes = -1;
	rec->path = NULL;
}

/* The record path of name in dirfd, for messages; caller frees. */
static char *
rec_name(const struct cluster_rec *rec, int dirfd, const char *name)
{
	return xasprintf("%s/%s%s", rec->path,
			 dirfd == rec->config  ? "config/"
			 : dirfd == rec->nodes ? "nodes/"
					       : "",
			 name);
}

int
cluster_rec_read(struct cluster_rec *rec, int dirfd, const char *name, size_t max, char **out,
		 size_t *len)
{
	char *what = rec_name(rec, dirfd, name), *buf = NULL;
	struct stat st;
	size_t got = 0;
	int fd, rc;

	*out = NULL;
	*len = 0;
	/* Looked at before it is opened: a FIFO or device is never opened at all. */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(rec->err, sizeof(rec->err),
			 "%s is not a regular file (a link, FIFO or device): nastune refuses it — "
			 "remove it",
			 what);
		rc = -EPERM;
		goto out;
	}
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = errno == ELOOP ? -EPERM : -errno;
		snprintf(rec->err, sizeof(rec->err), "cannot open %s: %s", what, strerror(errno));
		goto out;
	}
	if ((rc = proven(fd, what, false, rec->err, sizeof(rec->err))) < 0 ||
	    (rc = fstat(fd, &st) < 0 ? -errno : 0) < 0) {
		close(fd);
		goto out;
	}
	if ((size_t)st.st_size > max) {
		snprintf(rec->err, sizeof(rec->err), "%s is larger than %zu bytes", what, max);
		close(fd);
		rc = -EFBIG;
		goto out;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	*len = got;
	rc = 0;
out:
	free(what);
	return rc;
}

int
cluster_rec_lock(struct cluster_rec *rec, int wait_s)
{
	long long end = timeutil_mono_ms() + (long long)wait_s * 1000;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char *what = rec_name(rec, rec->dir, "lock");
	int fd, rc;

	fd = openat(rec->dir, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(rec->err, sizeof(rec->err), "cannot open %s: %s", what, strerror(-rc));
		free(what);
		return rc;
	}
	if ((rc = proven(fd, what, false, rec->err, sizeof(rec->err))) < 0)
		goto fail;
	while (fcntl(fd, F_SETLK, &fl) < 0) {
		if (errno != EACCES && errno != EAGAIN && errno != EINTR) {
			rc = -errno;
			snprintf(rec->err, sizeof(rec->err), "cannot lock %s: %s", what,
				 strerror(-rc));
			goto fail;
		}
		if (timeutil_mono_ms() >= end) {
			snprintf(rec->err, sizeof(rec->err),
				 "another node has held %s for more than %d s: try again when its "
				 "apply is done",
				 what, wait_s);
			rc = -ETIMEDOUT;
			goto fail;
		}
		usleep(100 * 1000);
	}
	free(what);
	return fd;
fail:
	close(fd);
	free(what);
	return rc;
}

void
cluster_rec_mac(const struct cluster_rec *rec, const char *text, size_t len, char out[65])
{
	hash_hmac_sha256_hex(rec->key, sizeof(rec->key), text, len, out);
}

int
cluster_key_install(const char *root, const char *from, char *err, size_t errlen)
{
	char *path = fs_rooted(root, CLUSTER_KEY_PATH), *dir, *text = NULL,
	     hex[2 * CLUSTER_KEY_LEN + 2];
	unsigned char key[CLUSTER_KEY_LEN];
	struct stat st;
	size_t len = 0, i;
	int rc;

	if (!from && stat(path, &st) == 0) {
		snprintf(err, errlen, "%s exists already: copy it to the other nodes", path);
		rc = -EEXIST;
		goto out;
	}
	if (!from) {
		if (RAND_bytes(key, sizeof(key)) != 1) {
			snprintf(err, errlen, "no randomness for a key");
			rc = -EIO;
			goto out;
		}
	} else {
		rc = strcmp(from, "-") == 0 ? fs_read_file("/dev/stdin", 256, &text, &len)
					    : fs_read_file(from, 256, &text, &len);
		if (rc == 0 && (rc = parse_key(text, len, key)) < 0)
			snprintf(err, errlen, "%s is not a cluster key (64 hex digits)", from);
		else if (rc < 0)
			snprintf(err, errlen, "cannot read %s: %s", from, strerror(-rc));
		if (rc < 0)
			goto out;
	}
	for (i = 0; i < sizeof(key); i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	hex[2 * CLUSTER_KEY_LEN] = '\n';
	dir = fs_rooted(root, "/etc/nastune");
	rc = fs_mkdir_p(dir, 0755);
	free(dir);
	if (rc == 0)
		rc = fs_write_atomic(path, hex, 2 * CLUSTER_KEY_LEN + 1, 0600, 0);
	if (rc < 0)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
	OPENSSL_cleanse(hex, sizeof(hex));
out:
	OPENSSL_cleanse(key, sizeof(key));
	free(text);
	free(path);
	return rc;
}
