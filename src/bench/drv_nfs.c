/* drv_nfs.c - the NFS benchmark driver over libnfs (userspace, no mount), NFSv3 by default
 * and NFSv4 on request. This is the only file that includes nfsc/libnfs.h.
 *
 * Large reads and writes are cut into READ/WRITE RPCs of the server's preferred size and
 * NFS_DEPTH of them are kept outstanding with libnfs' async API: one RPC at a time would
 * leave the link idle for a round trip per MiB. Writes go out UNSTABLE; flush() is COMMIT.
 * NFSv3 READs and WRITEs go over a connection of their own (nfs_wire.c) that moves the
 * payload straight between the socket and the caller's buffer: libnfs 4.0 copies every
 * byte once more through its PDU buffers. libnfs keeps the rest (mount, lookups, COMMIT),
 * and the data too where that connection cannot be had (NFSv4, a server refusing it).
 * libnfs 4.0 has no NFSv4.2 COPY, so there is no server-side copy (copy is NULL). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw-mount.h> /* struct exportnode */
#include <nfsc/libnfs-raw.h>	   /* nfs_get_fh */

#include "bench_driver.h"
#include "nfs_wire.h"
#include "timeutil.h"
#include "xmalloc.h"

#define NFS_TIMEOUT_MS 20000 /* per RPC, and for a transfer that stops progressing */
#define NFS_DEPTH 8	     /* RPCs in flight during one pread/pwrite */
#define NFS_MAX_CHUNK (1024 * 1024)
/* The engine's bulk request to the driver: the RPCs in flight drain at the end of each call,
 * so a call of the engine's default 1 MiB block had one WRITE in flight; a call of NFS_DEPTH
 * chunks keeps them all in flight until its end. */
#define NFS_BLOCK (NFS_DEPTH * NFS_MAX_CHUNK)

struct io_batch;

/* libnfs 4.0 returns it from nfs_get_fh() but keeps its layout in a private header (the same
 * from libnfs 1.x on); a release that publishes it fails to build here rather than differ.
 * A handle that is not one fails the data path's GETATTR, and libnfs keeps the data. */
struct nfs_fh {
	int len;
	char *val;
};

struct bench_conn {
	struct nfs_context *nfs;
	const struct bench_target *t;
	int version;
	bool broken;	       /* RPCs were abandoned in flight: refuse further I/O */
	struct nfs_wire *wire; /* the NFSv3 data path; NULL: libnfs carries the data */
	bool wire_checked;     /* the server took a call on it (GETATTR at the first open) */
	char err[512];
};

struct bench_file {
	struct nfsfh *fh;
	char *path;
	struct nfs_fh rawfh; /* the file handle, for the data path */
	bool dirty;	     /* written through the data path: close() COMMITs, as libnfs does */
};

/* One pread/pwrite: heap-allocated, because a transfer abandoned on a timeout leaves RPCs
 * whose callbacks may still run later (then they must not touch the caller's buffer). */
struct io_batch {
	char *buf;
	int inflight;
	bool abandoned;
	int err; /* first error, -errno */
	char errmsg[200];
	uint64_t short_at; /* offset (from the batch start) of the first short read */
};

struct io_chunk {
	struct io_batch *b;
	size_t boff; /* offset within the batch */
	size_t len;
};

static const char *
proto(const struct bench_conn *c)
{
	return c->version == 4 ? "NFSv4" : "NFSv3";
}

/* "/subdir/path" for libnfs (paths are relative to the mounted export); caller frees. */
static char *
nfs_path(struct bench_conn *c, const char *path)
{
	const char *sub = c->t->subdir;

	return xasprintf("/%s%s%s", sub, *sub && path && *path ? "/" : "", path ? path : "");
}

static int
nfs_fail(struct bench_conn *c, int e, const char *op, const char *path, const char *detail)
{
	const struct bench_target *t = c->t;
	char where[300];

	if (e <= 0)
		e = EIO;
	snprintf(where, sizeof(where), "%s:%s%s%s%s%s", t->host, t->share, *t->subdir ? "/" : "",
		 t->subdir, path && *path ? "/" : "", path ? path : "");
	switch (e) {
	case EACCES:
	case EPERM:
		snprintf(c->err, sizeof(c->err), "%s: %s (%s): permission denied for uid %d%s%s%s",
			 where, op, proto(c), t->nfs_uid >= 0 ? t->nfs_uid : (int)getuid(),
			 (t->nfs_uid >= 0 ? t->nfs_uid : (int)getuid()) == 0
				 ? " (root is squashed unless the export says otherwise; give "
				   "?uid=N&gid=N)"
				 : "",
			 detail ? ": " : "", detail ? detail : "");
		break;
	case EROFS:
		snprintf(c->err, sizeof(c->err), "%s: %s (%s): the export is read-only", where, op,
			 proto(c));
		break;
	case ECONNRESET:
		snprintf(c->err, sizeof(c->err),
			 "%s: %s (%s): the server closed the connection (NFS server stopped?)%s%s",
			 where, op, proto(c), detail ? ": " : "", detail ? detail : "");
		break;
	case ETIMEDOUT:
		snprintf(c->err, sizeof(c->err),
			 "%s: %s (%s): the server did not answer within %d s", where, op, proto(c),
			 NFS_TIMEOUT_MS / 1000);
		break;
	default:
		snprintf(c->err, sizeof(c->err), "%s: %s (%s): %s%s%s", where, op, proto(c),
			 strerror(e), detail ? " — " : "", detail ? detail : "");
	}
	return -e;
}

/* For the sync API: libnfs keeps the last error string in the context. */
static int
nfs_fail_ctx(struct bench_conn *c, int rc, const char *op, const char *path)
{
	const char *msg = nfs_get_error(c->nfs);

	return nfs_fail(c, -rc, op, path, msg && *msg ? msg : NULL);
}

/* Whether the server's MOUNT export list names export (NFSv3 servers, Ganesha among them,
 * answer MNT3ERR_ACCES for an export that does not exist); true when it cannot be told. */
static bool
exported(const char *host, const char *export)
{
	struct exportnode *list = mount_getexports(host), *e;
	bool found = false;

	if (!list)
		return true;
	for (e = list; e; e = e->ex_next)
		if (e->ex_dir && strcmp(e->ex_dir, export) == 0)
			found = true;
	mount_free_export_list(list);
	return found;
}

static void
nfsd_disconnect(struct bench_conn *c)
{
	if (!c)
		return;
	nfs_wire_close(c->wire);
	if (c->nfs)
		nfs_destroy_context(c->nfs);
	free(c);
}

static int
nfsd_connect(const struct bench_target *t, struct bench_conn **out, char *err, size_t errlen)
{
	struct bench_conn *c = xcalloc(1, sizeof(*c));
	struct nfs_stat_64 st;
	char *root;
	int rc, uid = t->nfs_uid, gid = t->nfs_gid;

	*out = NULL;
	c->t = t;
	c->version = t->nfs_version == 4 ? 4 : 3;
	c->nfs = nfs_init_context();
	if (!c->nfs) {
		snprintf(err, errlen, "%s: cannot create an NFS client context", t->host);
		free(c);
		return -ENOMEM;
	}
	if (t->user && uid < 0) {
		struct passwd *pw = getpwnam(t->user);
		if (!pw) {
			snprintf(err, errlen,
				 "%s:%s: user \"%s\" is unknown on this machine; give "
				 "the server's ids as ?uid=N&gid=N",
				 t->host, t->share, t->user);
			nfsd_disconnect(c);
			return -EINVAL;
		}
		uid = (int)pw->pw_uid;
		gid = gid < 0 ? (int)pw->pw_gid : gid;
	}
	if (uid >= 0)
		nfs_set_uid(c->nfs, uid);
	if (gid >= 0)
		nfs_set_gid(c->nfs, gid);
	nfs_set_timeout(c->nfs, NFS_TIMEOUT_MS);
	/* A dead server must fail the call, not be retried forever. */
	nfs_set_autoreconnect(c->nfs, 0);
	if (nfs_set_version(c->nfs, c->version) < 0) {
		snprintf(err, errlen, "%s: libnfs refuses NFS version %d", t->host, c->version);
		nfsd_disconnect(c);
		return -EINVAL;
	}
	/* NFS_V3 and NFS_V4 are 3 and 4. libnfs 4.0 has no port setter outside its URL parser; the
	 * port is looked up through the portmapper (v3) or is 2049 (v4). */
	rc = nfs_mount(c->nfs, t->host, t->share);
	if (rc < 0) {
		const char *msg = nfs_get_error(c->nfs);
		int e = -rc;

		if ((msg && (strstr(msg, "NOENT") || strstr(msg, "No such"))) ||
		    (c->version == 3 && !exported(t->host, t->share)))
			snprintf(err, errlen, "%s: no export \"%s\" (%s): %s", t->host, t->share,
				 proto(c), msg);
		else if (msg && (strstr(msg, "ACCES") || strstr(msg, "PERM")))
			snprintf(err, errlen, "%s:%s: the server refuses this client (%s): %s",
				 t->host, t->share, proto(c), msg);
		else
			snprintf(err, errlen, "%s:%s: cannot mount (%s): %s", t->host, t->share,
				 proto(c), msg && *msg ? msg : strerror(e));
		nfsd_disconnect(c);
		return e > 0 ? -e : -EIO;
	}
	root = nfs_path(c, "");
	rc = nfs_stat64(c->nfs, root, &st);
	free(root);
	if (rc < 0 || !S_ISDIR(st.nfs_mode)) {
		rc = rc < 0 ? nfs_fail_ctx(c, rc, "connect", NULL)
			    : nfs_fail(c, ENOTDIR, "connect", NULL, NULL);
		snprintf(err, errlen, "%s", c->err);
		nfsd_disconnect(c);
		return rc;
	}
	if (c->version == 3) {
		/* The data path's connection: to the address and port libnfs mounted through. */
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		char werr[200];

		if (getpeername(nfs_get_fd(c->nfs), (struct sockaddr *)&ss, &sl) == 0)
			c->wire = nfs_wire_open((struct sockaddr *)&ss, sl,
						(uint32_t)(uid >= 0 ? uid : (int)getuid()),
						(uint32_t)(gid >= 0 ? gid : (int)getgid()),
						NFS_TIMEOUT_MS, werr, sizeof(werr));
	}
	*out = c;
	return 0;
}

static const char *
nfsd_error(struct bench_conn *c)
{
	return c->err[0] ? c->err : "no error";
}

static int
nfsd_mkdir(struct bench_conn *c, const char *path)
{
	char *p = nfs_path(c, path);
	/* 0700: the job's uid (the share user's, ?uid=) alone may enter the scratch tree; with
	 * 0777 any other user of the export could plant names in it. */
	int rc = nfs_mkdir2(c->nfs, p, 0700);

	free(p);
	return rc < 0 ? nfs_fail_ctx(c, rc, "mkdir", path) : 0;
}

static int
nfsd_rmdir(struct bench_conn *c, const char *path)
{
	char *p = nfs_path(c, path);
	int rc = nfs_rmdir(c->nfs, p);

	free(p);
	return rc < 0 ? nfs_fail_ctx(c, rc, "rmdir", path) : 0;
}

static int
nfsd_unlink(struct bench_conn *c, const char *path)
{
	char *p = nfs_path(c, path);
	int rc = nfs_unlink(c->nfs, p);

	free(p);
	return rc < 0 ? nfs_fail_ctx(c, rc, "delete", path) : 0;
}

static int
nfsd_rename(struct bench_conn *c, const char *from, const char *to)
{
	char *a = nfs_path(c, from), *b = nfs_path(c, to);
	int rc = nfs_rename(c->nfs, a, b);

	free(a);
	free(b);
	return rc < 0 ? nfs_fail_ctx(c, rc, "rename", from) : 0;
}

static int
nfsd_stat(struct bench_conn *c, const char *path, struct bench_stat *bs)
{
	char *p = nfs_path(c, path);
	struct nfs_stat_64 st;
	/* lstat: a symlink swapped in for a directory shows as what it is. */
	int rc = nfs_lstat64(c->nfs, p, &st);

	free(p);
	if (rc < 0)
		return nfs_fail_ctx(c, rc, "stat", path);
	memset(bs, 0, sizeof(*bs));
	bs->size = st.nfs_size;
	bs->is_dir = S_ISDIR(st.nfs_mode);
	bs->is_link = S_ISLNK(st.nfs_mode);
	bs->has_id = true; /* fsid and fileid */
	bs->dev = st.nfs_dev;
	bs->ino = st.nfs_ino;
	bs->uid = (int64_t)st.nfs_uid;
	return 0;
}

static int
nfsd_list(struct bench_conn *c, const char *path,
	  int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	char *p = nfs_path(c, path);
	struct nfsdir *d;
	struct nfsdirent *e;
	int rc = nfs_opendir(c->nfs, p, &d);

	free(p);
	if (rc < 0)
		return nfs_fail_ctx(c, rc, "list", path);
	rc = 0;
	while ((e = nfs_readdir(c->nfs, d))) {
		struct bench_stat bs = { .uid = -1 };

		if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
			continue;
		bs.size = e->size;
		bs.is_dir = S_ISDIR(e->mode);
		rc = fn(e->name, &bs, arg);
		if (rc)
			break;
	}
	nfs_closedir(c->nfs, d);
	return rc;
}

static int
nfsd_space(struct bench_conn *c, const char *path, uint64_t *free_bytes)
{
	char *p = nfs_path(c, path);
	struct nfs_statvfs_64 sv;
	int rc = nfs_statvfs64(c->nfs, p, &sv);

	free(p);
	if (rc < 0)
		return nfs_fail_ctx(c, rc, "free space", path);
	*free_bytes = sv.f_bavail * (sv.f_frsize ? sv.f_frsize : sv.f_bsize);
	return 0;
}

static int
nfsd_open(struct bench_conn *c, const char *path, int flags, struct bench_file **out)
{
	char *p = nfs_path(c, path);
	struct nfsfh *fh = NULL;
	int oflags, rc;

	if ((flags & BENCH_RD) && (flags & BENCH_WR))
		oflags = O_RDWR;
	else if (flags & BENCH_WR)
		oflags = O_WRONLY;
	else
		oflags = O_RDONLY;
	if (flags & BENCH_TRUNC)
		oflags |= O_TRUNC;
	if (flags & BENCH_CREATE)
		rc = nfs_create(c->nfs, p, O_EXCL | (oflags & O_TRUNC), 0644, &fh);
	else
		rc = nfs_open2(c->nfs, p, oflags, 0644, &fh);
	free(p);
	if (rc < 0) {
		rc = nfs_fail_ctx(c, rc, (flags & BENCH_CREATE) ? "create" : "open", path);
		return rc;
	}
	*out = xcalloc(1, sizeof(**out));
	(*out)->fh = fh;
	(*out)->path = xstrdup(path);
	if (c->wire) {
		struct nfs_fh *raw = nfs_get_fh(fh);
		char werr[200];

		if (raw && raw->len > 0 && raw->len <= 64 && raw->val)
			(*out)->rawfh = *raw;
		/* Once per connection: a server that will not take the data path's calls (a
		 * port or credentials it refuses) leaves the data to libnfs. */
		if (!c->wire_checked) {
			c->wire_checked = true;
			if (!(*out)->rawfh.val ||
			    nfs_wire_getattr(c->wire, raw->val, (size_t)raw->len, werr,
					     sizeof(werr)) != 0) {
				nfs_wire_close(c->wire);
				c->wire = NULL;
			}
		}
	}
	return 0;
}

static void
batch_done(struct io_chunk *k, int status, const char *msg)
{
	struct io_batch *b = k->b;

	if (status < 0 && b->err == 0) {
		b->err = status;
		snprintf(b->errmsg, sizeof(b->errmsg), "%s", msg ? msg : "");
	}
	b->inflight--;
	free(k);
	if (b->abandoned && b->inflight == 0)
		free(b);
}

static void
read_cb(int status, struct nfs_context *nfs, void *data, void *priv)
{
	struct io_chunk *k = priv;
	struct io_batch *b = k->b;

	(void)nfs;
	if (status >= 0 && !b->abandoned) {
		size_t n = (size_t)status > k->len ? k->len : (size_t)status;
		memcpy(b->buf + k->boff, data, n);
		if (n < k->len && k->boff + n < b->short_at)
			b->short_at = k->boff + n;
	}
	batch_done(k, status < 0 ? status : 0, status < 0 ? data : NULL);
}

static void
write_cb(int status, struct nfs_context *nfs, void *data, void *priv)
{
	struct io_chunk *k = priv;

	(void)nfs;
	if (status >= 0 && (size_t)status != k->len)
		status = -EIO; /* a short WRITE: the server ran out of space or quota */
	batch_done(k, status < 0 ? status : 0, status < 0 ? data : NULL);
}

/* The NFSv3 data path (nfs_wire.c): the same calls, without libnfs' copy of the payload. */
static ssize_t
wire_transfer(struct bench_conn *c, struct bench_file *f, char *buf, size_t len, uint64_t off,
	      bool write, size_t chunk)
{
	char werr[200] = "";
	ssize_t ret = nfs_wire_transfer(c->wire, f->rawfh.val, (size_t)f->rawfh.len, write, buf,
					len, off, chunk, NFS_DEPTH, werr, sizeof(werr));

	if (write)
		f->dirty = true;
	if (nfs_wire_broken(c->wire))
		c->broken = true;
	if (ret >= 0)
		return ret;
	return nfs_fail(c, (int)-ret, write ? "write" : "read", f->path, werr[0] ? werr : NULL);
}

/* Keeps up to NFS_DEPTH READ or WRITE RPCs outstanding until len bytes are done. */
static ssize_t
transfer(struct bench_conn *c, struct bench_file *f, char *buf, size_t len, uint64_t off,
	 bool write)
{
	struct io_batch *b;
	uint64_t chunk, last_progress;
	size_t next = 0;
	ssize_t ret;

	if (c->broken)
		return nfs_fail(c, EIO, write ? "write" : "read", f->path,
				"an earlier transfer on this connection was abandoned");
	chunk = write ? nfs_get_writemax(c->nfs) : nfs_get_readmax(c->nfs);
	if (chunk == 0 || chunk > NFS_MAX_CHUNK)
		chunk = NFS_MAX_CHUNK;
	if (c->wire && f->rawfh.val)
		return wire_transfer(c, f, buf, len, off, write, (size_t)chunk);
	b = xcalloc(1, sizeof(*b));
	b->buf = buf;
	b->short_at = len;
	last_progress = (uint64_t)timeutil_mono_ms();
	while (b->err == 0 && (next < len || b->inflight > 0)) {
		/* Reads stop issuing past a short read: the rest is beyond end of file. */
		while (b->err == 0 && next < len && b->inflight < NFS_DEPTH &&
		       (write || next < b->short_at)) {
			struct io_chunk *k = xcalloc(1, sizeof(*k));
			int rc;

			k->b = b;
			k->boff = next;
			k->len = len - next < chunk ? len - next : (size_t)chunk;
			rc = write ? nfs_pwrite_async(c->nfs, f->fh, off + next, k->len, buf + next,
						      write_cb, k)
				   : nfs_pread_async(c->nfs, f->fh, off + next, k->len, read_cb, k);
			if (rc < 0) {
				b->err = rc;
				snprintf(b->errmsg, sizeof(b->errmsg), "%s", nfs_get_error(c->nfs));
				free(k);
				break;
			}
			b->inflight++;
			next += k->len;
		}
		if (b->inflight == 0)
			break;

		struct pollfd pfd = { .fd = nfs_get_fd(c->nfs),
				      .events = nfs_which_events(c->nfs) };
		int inflight = b->inflight, n = poll(&pfd, 1, 200);

		if (n < 0 && errno != EINTR) {
			b->err = -errno;
			break;
		}
		/* Also on a poll timeout: libnfs times RPCs out from inside nfs_service. */
		if (nfs_service(c->nfs, n > 0 ? pfd.revents : 0) < 0) {
			if (b->err == 0) {
				b->err = -EIO;
				snprintf(b->errmsg, sizeof(b->errmsg), "%s", nfs_get_error(c->nfs));
			}
			break;
		}
		if (b->inflight != inflight)
			last_progress = (uint64_t)timeutil_mono_ms();
		else if ((uint64_t)timeutil_mono_ms() - last_progress > NFS_TIMEOUT_MS) {
			b->err = -ETIMEDOUT;
			break;
		}
	}
	if (b->err) {
		if (strstr(b->errmsg, "timed out") || strstr(b->errmsg, "Timed out"))
			b->err = -ETIMEDOUT;
		else if (strstr(b->errmsg, "POLLHUP") || strstr(b->errmsg, "POLLERR") ||
			 strstr(b->errmsg, "reset") || strstr(b->errmsg, "closed") ||
			 strstr(b->errmsg, "reconnect") || strstr(b->errmsg, "Socket"))
			b->err = -ECONNRESET;
		ret = nfs_fail(c, -b->err, write ? "write" : "read", f->path,
			       b->errmsg[0] ? b->errmsg : NULL);
		/* libnfs 4.0 cannot encode an NFSv4 WRITE at all (nfs-cp fails the same
		 * way): say so rather than blame the server or the permissions. */
		if (write && c->version == 4 && strstr(b->errmsg, "encode")) {
			ret = -EOPNOTSUPP;
			snprintf(c->err, sizeof(c->err),
				 "%s:%s/%s: write (NFSv4): libnfs 4.0 cannot send NFSv4 WRITEs "
				 "(\"%s\"); writes need NFSv3 (?version=3)",
				 c->t->host, c->t->share, f->path, b->errmsg);
		}
	} else {
		ret = (ssize_t)(write ? len : (b->short_at < len ? b->short_at : len));
	}
	if (b->inflight > 0) {
		b->abandoned = true; /* freed by the last callback */
		c->broken = true;
	} else {
		free(b);
	}
	return ret;
}

static ssize_t
nfsd_pread(struct bench_conn *c, struct bench_file *f, void *buf, size_t len, uint64_t off)
{
	return transfer(c, f, buf, len, off, false);
}

static ssize_t
nfsd_pwrite(struct bench_conn *c, struct bench_file *f, const void *buf, size_t len, uint64_t off)
{
	/* libnfs takes the buffer as const for writes; transfer() only reads it then. */
	return transfer(c, f, (char *)(uintptr_t)buf, len, off, true);
}

static int
nfsd_flush(struct bench_conn *c, struct bench_file *f)
{
	int rc = nfs_fsync(c->nfs, f->fh);

	return rc < 0 ? nfs_fail_ctx(c, rc, "flush (COMMIT)", f->path) : 0;
}

static int
nfsd_close(struct bench_conn *c, struct bench_file *f)
{
	int rc;

	if (!f)
		return 0;
	/* libnfs 4.0's close COMMITs a file written through it; so for the data path. */
	rc = f->dirty ? nfs_fsync(c->nfs, f->fh) : 0;
	if (rc < 0) {
		rc = nfs_fail_ctx(c, rc, "close (COMMIT)", f->path);
		nfs_close(c->nfs, f->fh);
		free(f->path);
		free(f);
		return rc;
	}
	rc = nfs_close(c->nfs, f->fh);
	if (rc < 0)
		rc = nfs_fail_ctx(c, rc, "close", f->path);
	free(f->path);
	free(f);
	return rc < 0 ? rc : 0;
}

const struct bench_driver bench_drv_nfs = {
	.name = "nfs",
	.scheme = "nfs",
	.connect = nfsd_connect,
	.disconnect = nfsd_disconnect,
	.error = nfsd_error,
	.mkdir = nfsd_mkdir,
	.rmdir = nfsd_rmdir,
	.unlink = nfsd_unlink,
	.rename = nfsd_rename,
	.stat = nfsd_stat,
	.list = nfsd_list,
	.space = nfsd_space,
	.open = nfsd_open,
	.pread = nfsd_pread,
	.pwrite = nfsd_pwrite,
	.read_block = NFS_BLOCK,
	.write_block = NFS_BLOCK,
	.flush = nfsd_flush,
	.close = nfsd_close,
	.copy = NULL,
	.copy_method = NULL,
	.concurrent = true,
};
