/* drv_smb.c - the SMB benchmark driver: libsmbclient's context API, one private context per
 * connection (never the global smbc_init state), so two connections to one share can run at
 * once. This is the only file that includes libsmbclient.h.
 *
 * Throughput notes (libsmbclient 4.17, seen on the wire with strace): one smbc_read is split
 * into pipelined SMB2 READs of the server's max read (cli_pull), but against smbd's default
 * 8 MiB "smb2 max read" a read call is one READ: one request in flight. A smaller server
 * max read pipelines more and was slower here (1 MiB: 0.77 of the 8 MiB figure). smbc_write
 * is cli_writeall: one WRITE at a time, never pipelined. Both go faster in smaller calls
 * (SMB_READ_CALL, SMB_WRITE_CALL; the engine's blocks too). Likely, not proven: the library
 * receives a READ into its own buffer and copies it out, smbd receives a WRITE whole before
 * writing it, and 8 MiB buffers fall out of the CPU's caches where 1-2 MiB ones stay. Two
 * connections at once (two processes, half the file each) wrote 1.3x one connection's 8 MiB
 * calls, less than 1 MiB calls on one; more requests in flight in one driver would take
 * child processes (the library is not thread-safe), a copy through shared memory and a
 * session setup each.
 * libsmbclient has no flush call: flush() is a no-op, flagged flush_noop, so every SMB write
 * result is labelled "unflushed" and never compared with a flushed one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <dlfcn.h>
#include <libsmbclient.h>

#include "bench_driver.h"
#include "log.h"
#include "xmalloc.h"

/* libsmbclient is loaded when the first SMB connection is made, not linked: Samba's hundred
 * or so libraries would make every nastune process pay their relocations at start-up, and
 * only bench, tune and the agent speak SMB. The calls below go through this table (same names). */
#define SMBC_API(X)                                                                                \
	X(smbc_new_context)                                                                        \
	X(smbc_free_context)                                                                       \
	X(smbc_init_context)                                                                       \
	X(smbc_setDebug)                                                                           \
	X(smbc_setOptionUserData)                                                                  \
	X(smbc_getOptionUserData)                                                                  \
	X(smbc_setFunctionAuthDataWithContext)                                                     \
	X(smbc_setOptionUseKerberos)                                                               \
	X(smbc_setOptionFallbackAfterKerberos)                                                     \
	X(smbc_setOptionNoAutoAnonymousLogin)                                                      \
	X(smbc_setOptionUseCCache)                                                                 \
	X(smbc_setTimeout)                                                                         \
	X(smbc_setUser)                                                                            \
	X(smbc_setWorkgroup)                                                                       \
	X(smbc_setOptionProtocols)                                                                 \
	X(smbc_getFunctionClose)                                                                   \
	X(smbc_getFunctionClosedir)                                                                \
	X(smbc_getFunctionFstat)                                                                   \
	X(smbc_getFunctionLseek)                                                                   \
	X(smbc_getFunctionMkdir)                                                                   \
	X(smbc_getFunctionOpen)                                                                    \
	X(smbc_getFunctionOpendir)                                                                 \
	X(smbc_getFunctionRead)                                                                    \
	X(smbc_getFunctionReaddirPlus2)                                                            \
	X(smbc_getFunctionRename)                                                                  \
	X(smbc_getFunctionRmdir)                                                                   \
	X(smbc_getFunctionSplice)                                                                  \
	X(smbc_getFunctionStat)                                                                    \
	X(smbc_getFunctionStatVFS)                                                                 \
	X(smbc_getFunctionUnlink)                                                                  \
	X(smbc_getFunctionWrite)
static struct {
	void *lib;
#define X(name) __typeof__(name) *name;
	SMBC_API(X)
#undef X
} smbc;

static int
smbc_load(char *err, size_t errlen)
{
	void *lib;

	if (smbc.lib)
		return 0;
	if (!(lib = dlopen("libsmbclient.so.0", RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, errlen,
			 "the SMB driver needs libsmbclient.so.0 (Debian: apt-get "
			 "install libsmbclient): %s",
			 dlerror());
		return -ENOSYS;
	}
#define X(name)                                                                                    \
	if (!(smbc.name = (__typeof__(name) *)dlsym(lib, #name))) {                                \
		snprintf(err, errlen, "libsmbclient.so.0 has no %s: too old for the SMB driver",   \
			 #name);                                                                   \
		dlclose(lib);                                                                      \
		return -ENOSYS;                                                                    \
	}
	SMBC_API(X)
#undef X
	smbc.lib = lib;
	return 0;
}

/* From here on every smbc_* call goes through the table. */
#define smbc_new_context (smbc.smbc_new_context)
#define smbc_free_context (smbc.smbc_free_context)
#define smbc_init_context (smbc.smbc_init_context)
#define smbc_setDebug (smbc.smbc_setDebug)
#define smbc_setOptionUserData (smbc.smbc_setOptionUserData)
#define smbc_getOptionUserData (smbc.smbc_getOptionUserData)
#define smbc_setFunctionAuthDataWithContext (smbc.smbc_setFunctionAuthDataWithContext)
#define smbc_setOptionUseKerberos (smbc.smbc_setOptionUseKerberos)
#define smbc_setOptionFallbackAfterKerberos (smbc.smbc_setOptionFallbackAfterKerberos)
#define smbc_setOptionNoAutoAnonymousLogin (smbc.smbc_setOptionNoAutoAnonymousLogin)
#define smbc_setOptionUseCCache (smbc.smbc_setOptionUseCCache)
#define smbc_setTimeout (smbc.smbc_setTimeout)
#define smbc_setUser (smbc.smbc_setUser)
#define smbc_setWorkgroup (smbc.smbc_setWorkgroup)
#define smbc_setOptionProtocols (smbc.smbc_setOptionProtocols)
#define smbc_getFunctionClose (smbc.smbc_getFunctionClose)
#define smbc_getFunctionClosedir (smbc.smbc_getFunctionClosedir)
#define smbc_getFunctionFstat (smbc.smbc_getFunctionFstat)
#define smbc_getFunctionLseek (smbc.smbc_getFunctionLseek)
#define smbc_getFunctionMkdir (smbc.smbc_getFunctionMkdir)
#define smbc_getFunctionOpen (smbc.smbc_getFunctionOpen)
#define smbc_getFunctionOpendir (smbc.smbc_getFunctionOpendir)
#define smbc_getFunctionRead (smbc.smbc_getFunctionRead)
#define smbc_getFunctionReaddirPlus2 (smbc.smbc_getFunctionReaddirPlus2)
#define smbc_getFunctionRename (smbc.smbc_getFunctionRename)
#define smbc_getFunctionRmdir (smbc.smbc_getFunctionRmdir)
#define smbc_getFunctionSplice (smbc.smbc_getFunctionSplice)
#define smbc_getFunctionStat (smbc.smbc_getFunctionStat)
#define smbc_getFunctionStatVFS (smbc.smbc_getFunctionStatVFS)
#define smbc_getFunctionUnlink (smbc.smbc_getFunctionUnlink)
#define smbc_getFunctionWrite (smbc.smbc_getFunctionWrite)

/* An unresponsive server fails a call after this long instead of hanging the benchmark. */
#define SMB_TIMEOUT_MS 20000
/* The most one smbc_read and one smbc_write are given (libsmbclient 4.17 refuses a read of
 * 16 MiB with EINVAL). Against 8 MiB calls in the same rounds of the 10g lab, medians of the
 * paired ratios: reads x1.27 at 2 MiB (x1.08 at 1, x1.06 at 4), writes x1.34 at 1 MiB
 * (x1.06 at 2, x1.33 at 512 KiB). */
#define SMB_READ_CALL (2u << 20)
#define SMB_WRITE_CALL (1u << 20)

struct bench_conn {
	SMBCCTX *ctx;
	const struct bench_target *t;
	char *base; /* smb://host[:port]/share[/subdir], escaped */
	char err[512];
};

struct bench_file {
	SMBCFILE *fh;
	uint64_t pos; /* where the server-side file pointer is; saves an lseek */
	/* Where a short read found the end (UINT64_MAX: not seen; a write forgets it): a read
	 * from there returns 0 without asking again. libsmbclient reads until it has all or
	 * the server says end of file, so a read loop asked once more at the end: a round trip
	 * a file, a quarter of a 66 KB file's get (smbclient knows the size and stops). */
	uint64_t eof;
	char *path;
};

/* Percent-escapes what libsmbclient's URL parser would take for syntax. */
static void
url_append(char **out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(*out), cap = n + 3 * strlen(s) + 1;
	char *p;

	*out = xreallocarray(*out, cap, 1);
	p = *out + n;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '%' || ch == '?' || ch == '#' || ch == '@' || ch == ';' || ch == ':' ||
		    ch < 0x21 || ch == 0x7f) {
			*p++ = '%';
			*p++ = hex[ch >> 4];
			*p++ = hex[ch & 15];
		} else {
			*p++ = (char)ch;
		}
	}
	*p = '\0';
}

/* The URL of path below the target's root; the caller frees. */
static char *
smb_url(struct bench_conn *c, const char *path)
{
	char *u = xstrdup(c->base);

	if (path && *path) {
		u = xreallocarray(u, strlen(u) + 2, 1);
		strcat(u, "/");
		url_append(&u, path);
	}
	return u;
}

static const char *
who(const struct bench_target *t)
{
	return t->user ? t->user : "guest";
}

/* Records a sentence for errno e on op/path and returns -e. */
static int
smb_fail(struct bench_conn *c, int e, const char *op, const char *path)
{
	const struct bench_target *t = c->t;
	char where[300];

	if (e == 0)
		e = EIO;
	snprintf(where, sizeof(where), "%s/%s%s%s%s%s", t->host, t->share, *t->subdir ? "/" : "",
		 t->subdir, path && *path ? "/" : "", path ? path : "");
	switch (e) {
	case EPERM:
		/* NT_STATUS_LOGON_FAILURE and friends arrive as EPERM. */
		snprintf(c->err, sizeof(c->err), "%s: %s: logon failure for %s%s", where, op,
			 who(t), t->user ? " (wrong password?)" : " (guest access not allowed?)");
		break;
	case EACCES:
		snprintf(c->err, sizeof(c->err), "%s: %s: access denied for %s%s", where, op,
			 who(t),
			 strcmp(op, "connect") == 0 ? " (not a valid user of the share?)" : "");
		break;
	case ENODEV:
		snprintf(c->err, sizeof(c->err), "%s: %s: no share \"%s\" on %s", where, op,
			 t->share, t->host);
		break;
	case ETIMEDOUT:
		snprintf(c->err, sizeof(c->err), "%s: %s: the server did not answer within %d s",
			 where, op, SMB_TIMEOUT_MS / 1000);
		break;
	case ECONNRESET:
	case ENETRESET:
	case ECONNABORTED:
	case EPIPE:
		snprintf(c->err, sizeof(c->err),
			 "%s: %s: the server closed the connection (smbd stopped?)", where, op);
		e = ECONNRESET;
		break;
	case ECONNREFUSED:
		snprintf(c->err, sizeof(c->err), "%s: %s: connection refused (is smbd running?)",
			 where, op);
		break;
	default:
		snprintf(c->err, sizeof(c->err), "%s: %s: %s", where, op, strerror(e));
	}
	return -e;
}

static void
auth_fn(SMBCCTX *ctx, const char *srv, const char *shr, char *wg, int wglen, char *un, int unlen,
	char *pw, int pwlen)
{
	struct bench_conn *c = smbc_getOptionUserData(ctx);
	const struct bench_target *t = c->t;

	(void)srv;
	(void)shr;
	if (t->domain)
		snprintf(wg, wglen, "%s", t->domain);
	/* Guest as the user "guest", not an anonymous (null) session: Samba maps an unknown user
	 * to its guest account (map to guest = bad user), whose token owns what it creates; an
	 * anonymous token does not, so it could not write inside a directory it had just made.
	 * libsmbclient still falls back to anonymous when that is refused. */
	snprintf(un, unlen, "%s", t->user ? t->user : "guest");
	snprintf(pw, pwlen, "%s", t->password ? t->password : "");
}

/* Whether the credentials open a session at all (lists the server's shares over IPC$). */
static bool
session_ok(struct bench_conn *c)
{
	char *u = xstrdup("smb://");
	SMBCFILE *d;

	url_append(&u, c->t->host);
	if (c->t->port) {
		char *p = xasprintf("%s:%d", u, c->t->port);
		free(u);
		u = p;
	}
	d = smbc_getFunctionOpendir(c->ctx)(c->ctx, u);
	free(u);
	if (!d)
		return errno != EACCES && errno != EPERM;
	smbc_getFunctionClosedir(c->ctx)(c->ctx, d);
	return true;
}

static void
smb_disconnect(struct bench_conn *c)
{
	if (!c)
		return;
	if (c->ctx)
		smbc_free_context(c->ctx, 1);
	free(c->base);
	free(c);
}

/* A libsmbclient context for c's target speaking SMB2_02 up to maxproto. Returns 0, or
 * -errno with err. */
static int
smb_ctx(struct bench_conn *c, const char *maxproto, char *err, size_t errlen)
{
	const struct bench_target *t = c->t;

	c->ctx = smbc_new_context();
	if (!c->ctx) {
		snprintf(err, errlen, "%s: cannot create an SMB client context: %s", t->host,
			 strerror(errno));
		return -ENOMEM;
	}
	smbc_setDebug(c->ctx, 0);
	smbc_setOptionUserData(c->ctx, c);
	smbc_setFunctionAuthDataWithContext(c->ctx, auth_fn);
	smbc_setOptionUseKerberos(c->ctx, false);
	smbc_setOptionFallbackAfterKerberos(c->ctx, true);
	/* A wrong password must fail, not quietly become an anonymous session. */
	smbc_setOptionNoAutoAnonymousLogin(c->ctx, t->user != NULL);
	smbc_setOptionUseCCache(c->ctx, false);
	smbc_setTimeout(c->ctx, SMB_TIMEOUT_MS);
	if (t->user)
		smbc_setUser(c->ctx, t->user);
	if (t->domain)
		smbc_setWorkgroup(c->ctx, t->domain);
	if (!smbc_init_context(c->ctx)) {
		snprintf(err, errlen, "%s: cannot initialise libsmbclient: %s", t->host,
			 strerror(errno));
		smbc_free_context(c->ctx, 1);
		c->ctx = NULL;
		return -EIO;
	}
	/* Set after init: init loads smb.conf, whose client protocol limits would win. */
	smbc_setOptionProtocols(c->ctx, "SMB2_02", maxproto);
	return 0;
}

static int
smb_connect(const struct bench_target *t, struct bench_conn **out, char *err, size_t errlen)
{
	struct bench_conn *c = xcalloc(1, sizeof(*c));
	struct stat st;
	char *u;
	int rc = 0, stat_rc;

	*out = NULL;
	if ((rc = smbc_load(err, errlen)) < 0) {
		free(c);
		return rc;
	}
	c->t = t;
	if ((rc = smb_ctx(c, "SMB3", err, errlen)) < 0) {
		free(c);
		return rc;
	}

	c->base = xstrdup("smb://");
	url_append(&c->base, t->host);
	if (t->port) {
		char *b = xasprintf("%s:%d", c->base, t->port);
		free(c->base);
		c->base = b;
	}
	c->base = xreallocarray(c->base, strlen(c->base) + 2, 1);
	strcat(c->base, "/");
	url_append(&c->base, t->share);
	if (*t->subdir) {
		c->base = xreallocarray(c->base, strlen(c->base) + 2, 1);
		strcat(c->base, "/");
		url_append(&c->base, t->subdir);
	}

	/* Log in and prove the share (and subdir) exist now, not at the first workload. */
	u = smb_url(c, "");
	stat_rc = smbc_getFunctionStat(c->ctx)(c->ctx, u, &st);
	if (stat_rc < 0 && errno == EINVAL && !t->user) {
		/* A guest on a share whose server desires encryption: libsmbclient 4.17 honours
		 * the share's encrypt-data flag, which a guest session cannot, and fails with
		 * EINVAL; clients that follow MS-SMB2 send a guest's requests in clear. SMB 2.1
		 * negotiates no encryption (a guest signs nothing either), so it connects. */
		smbc_free_context(c->ctx, 1);
		if ((rc = smb_ctx(c, "SMB2_10", err, errlen)) < 0) {
			free(u);
			smb_disconnect(c);
			return rc;
		}
		stat_rc = smbc_getFunctionStat(c->ctx)(c->ctx, u, &st);
	}
	if (stat_rc < 0) {
		int e = errno;
		/* A share that is not there comes back as ENOENT on the share's root. */
		if (e == ENOENT && !*t->subdir)
			e = ENODEV;
		/* A failed session setup and a refused tree connect both arrive as EACCES:
		 * the share list (IPC$) needs only the session, so it tells them apart. */
		if (e == EACCES || e == EPERM)
			e = session_ok(c) ? EACCES : EPERM;
		rc = smb_fail(c, e, "connect", NULL);
	} else if (!S_ISDIR(st.st_mode)) {
		rc = smb_fail(c, ENOTDIR, "connect", NULL);
	}
	free(u);
	if (rc < 0) {
		snprintf(err, errlen, "%s", c->err);
		smb_disconnect(c);
		return rc;
	}
	*out = c;
	return 0;
}

static const char *
smb_error(struct bench_conn *c)
{
	return c->err[0] ? c->err : "no error";
}

static int
smb_mkdir(struct bench_conn *c, const char *path)
{
	char *u = smb_url(c, path);
	int rc = smbc_getFunctionMkdir(c->ctx)(c->ctx, u, 0777);

	rc = rc < 0 ? smb_fail(c, errno, "mkdir", path) : 0;
	free(u);
	return rc;
}

static int
smb_rmdir(struct bench_conn *c, const char *path)
{
	char *u = smb_url(c, path);
	int rc = smbc_getFunctionRmdir(c->ctx)(c->ctx, u);

	rc = rc < 0 ? smb_fail(c, errno, "rmdir", path) : 0;
	free(u);
	return rc;
}

static int
smb_unlink(struct bench_conn *c, const char *path)
{
	char *u = smb_url(c, path);
	int rc = smbc_getFunctionUnlink(c->ctx)(c->ctx, u);

	rc = rc < 0 ? smb_fail(c, errno, "delete", path) : 0;
	free(u);
	return rc;
}

static int
smb_rename(struct bench_conn *c, const char *from, const char *to)
{
	char *a = smb_url(c, from), *b = smb_url(c, to);
	int rc = smbc_getFunctionRename(c->ctx)(c->ctx, a, c->ctx, b);

	rc = rc < 0 ? smb_fail(c, errno, "rename", from) : 0;
	free(a);
	free(b);
	return rc;
}

static int
smb_stat(struct bench_conn *c, const char *path, struct bench_stat *bs)
{
	char *u = smb_url(c, path);
	struct stat st;
	int rc = smbc_getFunctionStat(c->ctx)(c->ctx, u, &st);

	free(u);
	if (rc < 0)
		return smb_fail(c, errno, "stat", path);
	memset(bs, 0, sizeof(*bs));
	bs->size = (uint64_t)st.st_size;
	bs->is_dir = S_ISDIR(st.st_mode);
	/* The server's file index (Samba: the inode) and the share; a symlink the server follows
	 * shows as its target, whose index differs. libsmbclient reports our own uid. */
	bs->has_id = st.st_ino != 0;
	bs->dev = (uint64_t)st.st_dev;
	bs->ino = (uint64_t)st.st_ino;
	bs->uid = -1;
	return 0;
}

/* Every entry with the identity the listing gives it (the server's file index; a symlink
 * the server follows shows its target's), "." and ".." too when dots. */
static int
smb_list_dots(struct bench_conn *c, const char *path, bool dots,
	      int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	char *u = smb_url(c, path);
	SMBCFILE *d;
	const struct libsmb_file_info *fi;
	struct stat st;
	int rc = 0;

	/* Where the race tests swap a directory: just before it is listed. */
	debug_stop("smb-list");
	d = smbc_getFunctionOpendir(c->ctx)(c->ctx, u);
	free(u);
	if (!d)
		return smb_fail(c, errno, "list", path);
	errno = 0;
	while ((fi = smbc_getFunctionReaddirPlus2(c->ctx)(c->ctx, d, &st))) {
		struct bench_stat bs = { .uid = -1 };

		if (!dots && (strcmp(fi->name, ".") == 0 || strcmp(fi->name, "..") == 0))
			continue;
		bs.size = fi->size;
		bs.is_dir = S_ISDIR(st.st_mode);
		bs.has_id = st.st_ino != 0;
		bs.dev = (uint64_t)st.st_dev;
		bs.ino = (uint64_t)st.st_ino;
		rc = fn(fi->name, &bs, arg);
		if (rc)
			break;
		errno = 0;
	}
	if (!fi && errno && rc == 0)
		rc = smb_fail(c, errno, "list", path);
	smbc_getFunctionClosedir(c->ctx)(c->ctx, d);
	return rc;
}

static int
smb_list(struct bench_conn *c, const char *path,
	 int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	return smb_list_dots(c, path, false, fn, arg);
}

static int
smb_list_all(struct bench_conn *c, const char *path,
	     int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	return smb_list_dots(c, path, true, fn, arg);
}

static int
smb_space(struct bench_conn *c, const char *path, uint64_t *free_bytes)
{
	char *u = smb_url(c, path);
	struct statvfs sv;
	int rc = smbc_getFunctionStatVFS(c->ctx)(c->ctx, u, &sv);

	free(u);
	if (rc < 0)
		return smb_fail(c, errno, "free space", path);
	/* libsmbclient fills f_bsize with the bytes per sector and f_frsize with the sectors per
	 * allocation unit (SMBC_fstatvfs_ctx); the blocks count allocation units. */
	*free_bytes = (uint64_t)sv.f_bavail * sv.f_bsize * (sv.f_frsize ? sv.f_frsize : 1);
	return 0;
}

static int
smb_open(struct bench_conn *c, const char *path, int flags, struct bench_file **out)
{
	int oflags = 0;
	char *u;
	SMBCFILE *fh;

	if ((flags & BENCH_RD) && (flags & BENCH_WR))
		oflags = O_RDWR;
	else if (flags & BENCH_WR)
		oflags = O_WRONLY;
	else
		oflags = O_RDONLY;
	if (flags & BENCH_CREATE)
		oflags |= O_CREAT | O_EXCL;
	if (flags & BENCH_TRUNC)
		oflags |= O_TRUNC;
	u = smb_url(c, path);
	fh = smbc_getFunctionOpen(c->ctx)(c->ctx, u, oflags, 0666);
	free(u);
	if (!fh)
		return smb_fail(c, errno, "open", path);
	*out = xcalloc(1, sizeof(**out));
	(*out)->fh = fh;
	(*out)->eof = UINT64_MAX;
	(*out)->path = xstrdup(path);
	return 0;
}

static int
seek_to(struct bench_conn *c, struct bench_file *f, uint64_t off)
{
	if (f->pos == off)
		return 0;
	if (smbc_getFunctionLseek(c->ctx)(c->ctx, f->fh, (off_t)off, SEEK_SET) < 0)
		return smb_fail(c, errno, "seek", f->path);
	f->pos = off;
	return 0;
}

static ssize_t
smb_pread(struct bench_conn *c, struct bench_file *f, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	int rc;

	if (off >= f->eof)
		return 0;
	if ((rc = seek_to(c, f, off)) < 0)
		return rc;
	while (done < len) {
		size_t want = len - done > SMB_READ_CALL ? SMB_READ_CALL : len - done;
		ssize_t n = smbc_getFunctionRead(c->ctx)(c->ctx, f->fh, (char *)buf + done, want);
		if (n < 0) {
			f->pos = UINT64_MAX; /* unknown now */
			return smb_fail(c, errno, "read", f->path);
		}
		done += (size_t)n;
		f->pos += (uint64_t)n;
		if ((size_t)n < want) { /* the end: libsmbclient stops short only there */
			f->eof = f->pos;
			break;
		}
	}
	return (ssize_t)done;
}

static ssize_t
smb_pwrite(struct bench_conn *c, struct bench_file *f, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	int rc = seek_to(c, f, off);

	if (rc < 0)
		return rc;
	f->eof = UINT64_MAX;
	while (done < len) {
		size_t want = len - done > SMB_WRITE_CALL ? SMB_WRITE_CALL : len - done;
		ssize_t n = smbc_getFunctionWrite(c->ctx)(c->ctx, f->fh, (const char *)buf + done,
							  want);
		if (n <= 0) {
			f->pos = UINT64_MAX;
			return smb_fail(c, n < 0 ? errno : EIO, "write", f->path);
		}
		done += (size_t)n;
		f->pos += (uint64_t)n;
	}
	return (ssize_t)done;
}

/* libsmbclient 4.17 exposes no SMB2 FLUSH: returns 0 without forcing the server's cache to
 * disk (smbd honours "strict sync" only on a client's FLUSH). Reported as a limitation. */
static int
smb_flush(struct bench_conn *c, struct bench_file *f)
{
	(void)c;
	(void)f;
	return 0;
}

static int
smb_close(struct bench_conn *c, struct bench_file *f)
{
	int rc = 0;

	if (!f)
		return 0;
	if (smbc_getFunctionClose(c->ctx)(c->ctx, f->fh) < 0)
		rc = smb_fail(c, errno, "close", f->path);
	free(f->path);
	free(f);
	return rc;
}

/* smbc_splice calls this after every chunk unconditionally; non-zero means "go on". */
static int
splice_progress(off_t n, void *priv)
{
	(void)n;
	(void)priv;
	return 1;
}

/* Server-side copy with FSCTL_SRV_COPYCHUNK (smbc_splice): the data never crosses the
 * network. */
static int
smb_copy(struct bench_conn *c, const char *from, const char *to)
{
	struct bench_file *src = NULL, *dst = NULL;
	struct stat st;
	off_t n;
	int rc;

	rc = smb_open(c, from, BENCH_RD, &src);
	if (rc < 0)
		return rc;
	if (smbc_getFunctionFstat(c->ctx)(c->ctx, src->fh, &st) < 0) {
		rc = smb_fail(c, errno, "copy (stat)", from);
		goto out;
	}
	rc = smb_open(c, to, BENCH_RD | BENCH_WR | BENCH_CREATE | BENCH_TRUNC, &dst);
	if (rc < 0)
		goto out;
	if (st.st_size > 0) {
		errno = 0;
		n = smbc_getFunctionSplice(c->ctx)(c->ctx, src->fh, dst->fh, st.st_size,
						   splice_progress, NULL);
		if (n < 0 || n != st.st_size) {
			rc = smb_fail(c, n < 0 ? errno : EIO, "server-side copy (copychunk)", from);
			goto out;
		}
	}
	rc = 0;
out:
	if (dst) {
		int r = smb_close(c, dst);
		if (rc == 0)
			rc = r;
		if (rc < 0) {
			char keep[sizeof(c->err)];
			memcpy(keep, c->err, sizeof(keep));
			smb_unlink(c, to); /* no half copy left behind */
			memcpy(c->err, keep, sizeof(keep));
		}
	}
	if (src)
		smb_close(c, src);
	return rc;
}

const struct bench_driver bench_drv_smb = {
	.name = "smb",
	.scheme = "smb",
	.connect = smb_connect,
	.disconnect = smb_disconnect,
	.error = smb_error,
	.mkdir = smb_mkdir,
	.rmdir = smb_rmdir,
	.unlink = smb_unlink,
	.rename = smb_rename,
	.stat = smb_stat,
	.list = smb_list,
	.list_all = smb_list_all,
	.space = smb_space,
	.open = smb_open,
	.pread = smb_pread,
	.pwrite = smb_pwrite,
	.flush = smb_flush,
	.flush_noop = true,
	/* the engine's blocks as the calls the library moves fastest (see SMB_READ_CALL) */
	.read_block = SMB_READ_CALL,
	.write_block = SMB_WRITE_CALL,
	.close = smb_close,
	.copy = smb_copy,
	.copy_method = "copychunk",
	.concurrent = true,
	/* libsmbclient's talloc stack frames are per process unless smbc_thread_posix() is
	 * called, and Debian's 4.17 library does not export it: two threads abort. */
	.no_threads = true,
};
