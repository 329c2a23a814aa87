/* bench_driver.h - what the benchmark engine asks of a protocol driver, and targets as URLs.
 *
 * A driver is a const vtable in src/bench/, looked up by exact name. It speaks one protocol
 * to one target (a share, an export, a volume, or a local directory) through a connection it
 * owns. Every path a driver sees is relative to the target's root, '/'-separated, without a
 * leading slash; the engine only ever passes paths inside its scratch directory.
 *
 * Convention: functions return 0 (or a byte count) on success and -errno on failure; after a
 * failure bench_conn_error() describes it in one sentence. Drivers translate their library's
 * codes at this boundary (smbc errno, libnfs strings, AFP result codes). */
#ifndef NASTUNE_BENCH_DRIVER_H
#define NASTUNE_BENCH_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A parsed target URL: smb://[user@]host[:port]/share[/sub/dir],
 * nfs://host[:port]/export/path[?version=3|4][&uid=N&gid=N], afp://[user@]host[:port]/volume[/sub],
 * file:///abs/path, null://[name]. */
struct bench_target {
	char *url;	 /* as given, without the password */
	char *scheme;	 /* "smb", "nfs", "afp", "file", "null" */
	char *user;	 /* NULL: guest / anonymous */
	bool guest;	 /* "guest@" in the URL (any case): the guest login (user NULL),
			  * whatever a credentials file says */
	char *password;	 /* from a credentials file or a prompt, never from argv; NULL */
	char *domain;	 /* SMB workgroup/domain; NULL */
	char *host;	 /* NULL for file:// and null:// */
	int port;	 /* 0: the protocol's default */
	char *share;	 /* SMB share, NFS export path ("/srv/x"), AFP volume; file: the path */
	char *subdir;	 /* below the share; "" for its root */
	int nfs_version; /* 3 or 4; 0: the driver's default (3) */
	/* NFS AUTH_SYS identity from ?uid=N&gid=N (libnfs' URL options): the server's ids, which
	 * the client need not know by name. -1 (bench_target_parse's default): the process's. */
	int nfs_uid, nfs_gid;
};

/* Parses url into t. Returns 0, or -EINVAL with one sentence in err naming the problem and
 * the expected form. A password in the URL is refused (it would show in ps). Free with
 * bench_target_clear. */
int bench_target_parse(const char *url, struct bench_target *t, char *err, size_t errlen);
void bench_target_clear(struct bench_target *t);
/* s with everything but unreserved characters and '/' percent-encoded, for the path of a
 * target URL. Caller frees. */
char *bench_url_escape(const char *s);

/* Reads credentials for t from file (smbclient's format: "username = x", "password = y",
 * "domain = z" lines; '#' comments). The file must not be readable by group or others.
 * A username in the file is used only when the URL has none. Returns 0 or -errno with err. */
int bench_target_credentials(struct bench_target *t, const char *file, char *err, size_t errlen);

/* Whether t's server runs on this machine's kernel, so that dropping this machine's page
 * cache drops the server's too: true for file:// and null://, and for a host that resolves
 * (numerically, or through /etc/hosts and the resolver) to an address a socket here can
 * bind to — 127.0.0.1, ::1, or one of this network namespace's own addresses. Sends
 * nothing. A name that does not resolve is not this host. */
bool bench_target_on_this_host(const struct bench_target *t);

/* Prompts for t's password on the controlling terminal (echo off) when t has a user and no
 * password. Returns 0, -ENOTTY when there is no terminal, or -errno. */
int bench_target_prompt(struct bench_target *t);

/* Open flags for bench_driver.open_file. */
#define BENCH_RD 0x1
#define BENCH_WR 0x2
#define BENCH_CREATE 0x4 /* create; fail with -EEXIST when it exists */
#define BENCH_TRUNC 0x8

struct bench_stat {
	uint64_t size;
	bool is_dir;
	bool is_link; /* a symbolic link itself, where the protocol shows one */
	/* What the entry is, whatever its name: dev and ino (the server's device and inode, NFS
	 * fileid, SMB file index, AFP CNID and volume) when has_id; uid its owner as the server
	 * reports it, -1 when the protocol does not say (SMB without unix extensions, AFP). */
	bool has_id;
	uint64_t dev, ino;
	int64_t uid;
};

struct bench_conn; /* a driver's connection; opaque to the engine */
struct bench_file; /* an open file on a connection */

struct bench_driver {
	const char *name;   /* "posix", "smb", "nfs", "afp", "null" */
	const char *scheme; /* the URL scheme it serves */
	/* Connects to t (t outlives the connection). Returns 0 and *c, or -errno with err. */
	int (*connect)(const struct bench_target *t, struct bench_conn **c, char *err,
		       size_t errlen);
	void (*disconnect)(struct bench_conn *c);
	/* Last error of this connection, one sentence; never NULL. */
	const char *(*error)(struct bench_conn *c);

	int (*mkdir)(struct bench_conn *c, const char *path);
	int (*rmdir)(struct bench_conn *c, const char *path);
	int (*unlink)(struct bench_conn *c, const char *path);
	int (*rename)(struct bench_conn *c, const char *from, const char *to);
	/* -ENOENT for a missing name (the metadata workload stats missing names on purpose).
	 * Does not follow a last component that is a symlink, where the protocol shows it. */
	int (*stat)(struct bench_conn *c, const char *path, struct bench_stat *st);
	/* Optional: from now on path (one component at the root) is the directory want
	 * identifies, reached by what it is, not by its name: opened without following links,
	 * checked against want's dev, ino and uid, and every later path below it resolved from
	 * it. -ESTALE when the directory found is another one. (posix: a kept descriptor.) */
	int (*pin)(struct bench_conn *c, const char *path, const struct bench_stat *want);
	/* Calls fn for every entry but "." and ".."; stops early when fn returns non-zero and
	 * returns that value. */
	int (*list)(struct bench_conn *c, const char *path,
		    int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg);
	/* Optional: list() that passes "." and ".." to fn too, where the reply has them, each
	 * with the identity that same reply gives: which directory was listed, and under which
	 * parent, for a protocol that cannot hold a directory open (scratch removal). Entries
	 * carry their identities (has_id) where the listing gives them. */
	int (*list_all)(struct bench_conn *c, const char *path,
			int (*fn)(const char *name, const struct bench_stat *st, void *arg),
			void *arg);
	/* Free bytes for an unprivileged writer under path. */
	int (*space)(struct bench_conn *c, const char *path, uint64_t *free_bytes);

	int (*open)(struct bench_conn *c, const char *path, int flags, struct bench_file **f);
	/* Full transfers: a short count only at end of file (read). Drivers may split, pipeline
	 * or coalesce internally; len can be large (the engine's block size, up to 16 MiB). */
	ssize_t (*pread)(struct bench_conn *c, struct bench_file *f, void *buf, size_t len,
			 uint64_t off);
	ssize_t (*pwrite)(struct bench_conn *c, struct bench_file *f, const void *buf, size_t len,
			  uint64_t off);
	/* The request sizes bulk transfers go in (seq-read, seq-write, mixed-rw, the setups'
	 * files), or 0 for the engine's 1 MiB: a server that does work per request (a
	 * thread-pool handoff per SMB READ or WRITE) does less of it in fewer, larger ones. At
	 * most 16 MiB. */
	size_t read_block, write_block;
	/* Data on stable storage on the server (SMB flush, NFS COMMIT, FPFlushFork, fsync). */
	int (*flush)(struct bench_conn *c, struct bench_file *f);
	/* flush() cannot ask the server for it and returns 0 at once (libsmbclient 4.17 has no
	 * SMB2 FLUSH): the engine labels this driver's writes "unflushed". */
	bool flush_noop;
	int (*close)(struct bench_conn *c, struct bench_file *f);

	/* Server-side copy of a whole file (SMB copychunk, AFP FPCopyFile, NFSv4.2 COPY, or
	 * copy_file_range locally); NULL or -EOPNOTSUPP when the protocol has none, and the
	 * engine copies with read+write and says so. */
	int (*copy)(struct bench_conn *c, const char *from, const char *to);
	/* What copy() uses, for reports: "copychunk", "FPCopyFile", "copy_file_range". */
	const char *copy_method;
	/* Can run two connections at once to one target (mixed-rw opens a second one). */
	bool concurrent;
	/* Its library keeps per-thread state it cannot set up here (libsmbclient without
	 * smbc_thread_posix): a concurrent second connection then runs in a child process. */
	bool no_threads;
};

/* The driver registered under name, or NULL. */
const struct bench_driver *bench_driver_find(const char *name);
/* The driver for a URL scheme ("file" → posix), or NULL. */
const struct bench_driver *bench_driver_for_scheme(const char *scheme);
/* Registered drivers, NULL-terminated, in registry order. */
const struct bench_driver *const *bench_drivers(void);

extern const struct bench_driver bench_drv_null;
extern const struct bench_driver bench_drv_posix;
/* posix only: a new descriptor (O_DIRECTORY, the caller closes it) of the directory path on a
 * bench_drv_posix connection, resolved as every posix path is (from a directory the
 * connection created, no symlink followed). For the raw disk baseline's O_DIRECT file.
 * Returns it, or -errno with bench_drv_posix.error(c). */
int bench_posix_dirfd(struct bench_conn *c, const char *path);
extern const struct bench_driver bench_drv_smb;
extern const struct bench_driver bench_drv_nfs;
extern const struct bench_driver bench_drv_afp;

#endif
