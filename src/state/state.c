/* state.c - SQLite state with versioned migrations. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "paths.h"
#include "state.h"
#include "xmalloc.h"

struct state {
	sqlite3 *db;
	char *stamp; /* the head stamp to drop before generations change; NULL read-only */
};

/* The head stamp (<state dir>/head): the newest generation's head as the database held it,
 * and the database file's identity then, so that apply --if-changed can answer without
 * opening SQLite. Trusted only when the database is the same file, unchanged since (device,
 * inode, size, ctime and mtime to the nanosecond) and without a WAL; anything else is no
 * stamp. Every writer of generations drops it first; whoever holds the apply lock
 * exclusively writes it again after closing the database. */
#define STAMP_MAGIC "nastune-head 1"
#define STAMP_MAX 512

/* Migration N takes the schema from version N to N+1. Append only; never edit one. */
static const char *const migrations[] = {
	"CREATE TABLE generations ("
	"  id INTEGER PRIMARY KEY, created TEXT NOT NULL, reason TEXT NOT NULL,"
	"  version TEXT NOT NULL, inputs_hash TEXT NOT NULL, hw_hash TEXT NOT NULL,"
	"  hw_text TEXT NOT NULL);"
	"CREATE TABLE files ("
	"  gen INTEGER NOT NULL REFERENCES generations(id) ON DELETE CASCADE,"
	"  path TEXT NOT NULL, sha256 TEXT NOT NULL, mode INTEGER NOT NULL,"
	"  uid INTEGER NOT NULL, gid INTEGER NOT NULL, present INTEGER NOT NULL,"
	"  PRIMARY KEY (gen, path));",
	"CREATE TABLE bench_runs ("
	"  id INTEGER PRIMARY KEY, created TEXT NOT NULL, gen INTEGER, hw_hash TEXT,"
	"  json TEXT NOT NULL);"
	"CREATE TABLE tune_results ("
	"  id INTEGER PRIMARY KEY, created TEXT NOT NULL, gen INTEGER, hw_hash TEXT,"
	"  json TEXT NOT NULL);",
	/* The MTU of network.interface in force with each generation: rollback restores it. */
	"ALTER TABLE generations ADD COLUMN mtu_iface TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE generations ADD COLUMN mtu INTEGER NOT NULL DEFAULT 0;",
};

static int
exec(struct state *st, const char *sql)
{
	return sqlite3_exec(st->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

int
state_schema_version(struct state *st)
{
	sqlite3_stmt *s;
	int v = -1;

	if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return v;
}

int
state_open(const char *root, struct state **out, char *err, size_t errlen)
{
	char *dir = paths_state_dir(root), *path = NULL;
	struct state *st = xcalloc(1, sizeof(*st));
	struct stat sb;
	int rc, v, fd;
	size_t i;

	if ((rc = fs_mkdir_p(dir, 0755)) < 0) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(-rc));
		goto fail;
	}
	path = paths_state_db(root);
	/* Created 0600 whatever the umask (run history, hosts and results); SQLite
	 * gives its -wal and -shm files the database's mode. An older 0644 one is tightened;
	 * one already 0600 is left alone (a chmod would move its ctime: the head stamp). */
	if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0 ||
	    fstat(fd, &sb) < 0 || ((sb.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0)) {
		rc = -errno;
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(-rc));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	close(fd);
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 st->db ? sqlite3_errmsg(st->db) : "out of memory");
		rc = -EIO;
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 10000);
	if (exec(st, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; "
		     "PRAGMA synchronous=FULL;") < 0) {
		snprintf(err, errlen, "%s: %s%s%s%s", path, sqlite3_errmsg(st->db),
			 sqlite3_system_errno(st->db) ? " (" : "",
			 sqlite3_system_errno(st->db) ? strerror(sqlite3_system_errno(st->db)) : "",
			 sqlite3_system_errno(st->db) ? ")" : "");
		rc = -EIO;
		goto fail;
	}
	v = state_schema_version(st);
	if (v > (int)(sizeof(migrations) / sizeof(migrations[0]))) {
		snprintf(err, errlen,
			 "%s has schema version %d, newer than this nastune knows "
			 "(%zu) — upgrade nastune",
			 path, v, sizeof(migrations) / sizeof(migrations[0]));
		rc = -EPROTO;
		goto fail;
	}
	for (i = (size_t)(v < 0 ? 0 : v); i < sizeof(migrations) / sizeof(migrations[0]); i++) {
		char *sql = xasprintf("BEGIN; %s PRAGMA user_version=%zu; COMMIT;", migrations[i],
				      i + 1);

		rc = exec(st, sql);
		free(sql);
		if (rc < 0) {
			snprintf(err, errlen, "%s: migration to schema %zu failed: %s%s%s%s", path,
				 i + 1, sqlite3_errmsg(st->db),
				 sqlite3_system_errno(st->db) ? " (" : "",
				 sqlite3_system_errno(st->db)
					 ? strerror(sqlite3_system_errno(st->db))
					 : "",
				 sqlite3_system_errno(st->db) ? ")" : "");
			exec(st, "ROLLBACK");
			goto fail;
		}
	}
	st->stamp = paths_state(root, "head");
	free(dir);
	free(path);
	*out = st;
	return 0;
fail:
	state_close(st);
	free(dir);
	free(path);
	return rc;
}

/* Appends s to a SQLite URI's path, escaping what the URI parser would read as syntax. */
static void
uri_append(char **u, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(*u);
	char *p;

	*u = xreallocarray(*u, n + 3 * strlen(s) + 1, 1);
	p = *u + n;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '%' || ch == '?' || ch == '#' || ch < 0x21 || ch == 0x7f) {
			*p++ = '%';
			*p++ = hex[ch >> 4];
			*p++ = hex[ch & 15];
		} else {
			*p++ = (char)ch;
		}
	}
	*p = '\0';
}

int
state_open_existing(const char *root, struct state **st, char *err, size_t errlen)
{
	char *path = paths_state_db(root);
	struct stat sb;
	int rc = 0;

	*st = NULL;
	if (stat(path, &sb) < 0) {
		rc = -ENOENT;
		snprintf(err, errlen, "no %s", path);
	}
	free(path);
	return rc < 0 ? rc : state_open(root, st, err, errlen);
}

int
state_open_readonly(const char *root, struct state **out)
{
	char *path = paths_state_db(root);
	char *wal = xasprintf("%s-wal", path), *uri = xstrdup("file:");
	struct state *st = xcalloc(1, sizeof(*st));
	struct stat sb;
	int rc = 0;

	*out = NULL;
	if (stat(path, &sb) < 0) {
		rc = -errno;
		goto fail;
	}
	/* Committed transactions may still be in the WAL, which immutable ignores. */
	if (stat(wal, &sb) == 0 || errno != ENOENT) {
		rc = -EAGAIN;
		goto fail;
	}
	uri_append(&uri, path);
	uri = xreallocarray(uri, strlen(uri) + sizeof("?immutable=1"), 1);
	strcat(uri, "?immutable=1");
	if (sqlite3_open_v2(uri, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) !=
	    SQLITE_OK) {
		rc = -EIO;
		goto fail;
	}
	if (state_schema_version(st) != (int)(sizeof(migrations) / sizeof(migrations[0]))) {
		rc = -EPROTO; /* a migration is due: only state_open may run it */
		goto fail;
	}
	*out = st;
	st = NULL;
fail:
	state_close(st);
	free(uri);
	free(wal);
	free(path);
	return rc;
}

void
state_close(struct state *st)
{
	if (!st)
		return;
	sqlite3_close(st->db);
	free(st->stamp);
	free(st);
}

/* Before generations change: the stamp would describe the old head. The database's own
 * change would also show in its stat; dropping it first does not rely on that alone. */
static int
stamp_drop(struct state *st)
{
	if (st->stamp && unlink(st->stamp) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static void
stamp_key(const struct stat *sb, char *out, size_t len)
{
	snprintf(out, len, "%llu %llu %lld %lld.%09ld %lld.%09ld", (unsigned long long)sb->st_dev,
		 (unsigned long long)sb->st_ino, (long long)sb->st_size,
		 (long long)sb->st_ctim.tv_sec, sb->st_ctim.tv_nsec, (long long)sb->st_mtim.tv_sec,
		 sb->st_mtim.tv_nsec);
}

/* The database's identity and no WAL beside it (its transactions are not in the file yet). */
static int
stamp_db_key(const char *root, char *out, size_t len, struct timespec *ctim)
{
	char *db = paths_state_db(root), *wal = xasprintf("%s-wal", db);
	struct stat sb, wb;
	int rc = 0;

	if (lstat(db, &sb) < 0)
		rc = -errno;
	else if (!S_ISREG(sb.st_mode))
		rc = -EINVAL;
	else if (lstat(wal, &wb) == 0 || errno != ENOENT)
		rc = -EAGAIN;
	else
		stamp_key(&sb, out, len);
	if (rc == 0 && ctim)
		*ctim = sb.st_ctim;
	free(wal);
	free(db);
	return rc;
}

/* Waits until the clock that stamps files has left the tick of the database's last change
 * (ct): a later change then shows in its ctime even when its size stays. A change within the
 * same tick would not. A filesystem of whole seconds gets no stamp (a second is too long). */
static int
stamp_settle(const struct timespec *ct)
{
	const struct timespec ms = { 0, 1000000 };
	struct timespec now;
	int i;

	if (ct->tv_nsec == 0)
		return -ERANGE;
	for (i = 0; i < 100; i++) {
		if (clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0)
			return -errno;
		if (now.tv_sec > ct->tv_sec ||
		    (now.tv_sec == ct->tv_sec && now.tv_nsec > ct->tv_nsec))
			return 0;
		nanosleep(&ms, NULL);
	}
	return -ETIME;
}

int
state_head_stamp_write(const char *root)
{
	char *stamp = paths_state(root, "head"), before[160], after[160], buf[STAMP_MAX];
	struct generation g = { 0 };
	struct state *st = NULL;
	struct timespec ct;
	int rc, n;

	if ((rc = stamp_db_key(root, before, sizeof(before), &ct)) < 0 ||
	    (rc = stamp_settle(&ct)) < 0 || (rc = state_open_readonly(root, &st)) < 0 ||
	    (rc = state_last_generation_head(st, &g)) < 0)
		goto drop;
	state_close(st);
	st = NULL;
	/* The same file, unchanged while it was read. */
	if ((rc = stamp_db_key(root, after, sizeof(after), NULL)) < 0)
		goto drop;
	if (strcmp(before, after) != 0) {
		rc = -EAGAIN;
		goto drop;
	}
	n = snprintf(buf, sizeof(buf), "%s %s %ld %s %s %d %s\n", STAMP_MAGIC, before, g.id,
		     g.inputs_hash, g.hw_hash, g.mtu, g.mtu_iface[0] ? g.mtu_iface : "-");
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		rc = -EOVERFLOW;
		goto drop;
	}
	if ((rc = fs_write_atomic(stamp, buf, (size_t)n, 0600, 0)) < 0)
		goto drop;
	generation_clear(&g);
	free(stamp);
	return 0;
drop:
	state_close(st);
	generation_clear(&g);
	if (unlink(stamp) < 0 && errno != ENOENT)
		rc = -errno;
	free(stamp);
	return rc;
}

int
state_head_stamp_read(const char *root, struct generation *g)
{
	char *stamp = paths_state(root, "head"), buf[STAMP_MAX], key[160];
	char dev[24], ino[24], size[24], ctim[32], mtim[32], ih[65], hh[65], iface[17];
	struct stat sb;
	ssize_t n;
	long id;
	int fd, mtu, used = 0, rc = -EINVAL;

	memset(g, 0, sizeof(*g));
	fd = open(stamp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(stamp);
	if (fd < 0)
		return -errno;
	/* Only this user's own (root's, for the system) and no one else's to write. */
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    (sb.st_mode & 022) || (n = read(fd, buf, sizeof(buf) - 1)) <= 0 ||
	    (size_t)n >= sizeof(buf) - 1 || buf[n - 1] != '\n')
		goto out;
	buf[n] = '\0';
	if (sscanf(buf,
		   STAMP_MAGIC " %23s %23s %23s %31s %31s %ld %64[0-9a-f] %64[0-9a-f] %d %16s%n",
		   dev, ino, size, ctim, mtim, &id, ih, hh, &mtu, iface, &used) != 10 ||
	    used != n - 1 || strlen(ih) != 64 || strlen(hh) != 64 || strlen(iface) > 15 || id < 0)
		goto out;
	if ((rc = stamp_db_key(root, key, sizeof(key), NULL)) < 0)
		goto out;
	/* The database this stamp was written from, untouched since. */
	snprintf(buf, sizeof(buf), "%s %s %s %s %s", dev, ino, size, ctim, mtim);
	if (strcmp(buf, key) != 0) {
		rc = -ESTALE;
		goto out;
	}
	g->id = id;
	memcpy(g->inputs_hash, ih, sizeof(g->inputs_hash));
	memcpy(g->hw_hash, hh, sizeof(g->hw_hash));
	g->mtu = mtu;
	snprintf(g->mtu_iface, sizeof(g->mtu_iface), "%s", strcmp(iface, "-") ? iface : "");
	rc = 0;
out:
	close(fd);
	return rc;
}

void
generation_clear(struct generation *g)
{
	size_t i;

	for (i = 0; i < g->nfiles; i++)
		free(g->files[i].path);
	free(g->files);
	free(g->created);
	free(g->reason);
	free(g->version);
	free(g->hw_text);
	memset(g, 0, sizeof(*g));
}

static char *
col_str(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return xstrdup(t ? (const char *)t : "");
}

static int
load_gen(struct state *st, const char *where, long id, struct generation *g, bool files)
{
	sqlite3_stmt *s;
	char *sql = xasprintf("SELECT id, created, reason, version, inputs_hash, hw_hash, hw_text, "
			      "mtu_iface, mtu FROM generations %s",
			      where);
	int rc;

	memset(g, 0, sizeof(*g));
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return -EIO;
	if (strstr(where, "?"))
		sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(s);
		return rc == SQLITE_DONE ? -ENOENT : -EIO;
	}
	g->id = (long)sqlite3_column_int64(s, 0);
	g->created = col_str(s, 1);
	g->reason = col_str(s, 2);
	g->version = col_str(s, 3);
	snprintf(g->inputs_hash, sizeof(g->inputs_hash), "%s", sqlite3_column_text(s, 4));
	snprintf(g->hw_hash, sizeof(g->hw_hash), "%s", sqlite3_column_text(s, 5));
	g->hw_text = col_str(s, 6);
	snprintf(g->mtu_iface, sizeof(g->mtu_iface), "%s", sqlite3_column_text(s, 7));
	g->mtu = sqlite3_column_int(s, 8);
	sqlite3_finalize(s);
	if (!files)
		return 0;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT path, sha256, mode, uid, gid, present FROM files "
			       "WHERE gen = ? ORDER BY path",
			       -1, &s, NULL) != SQLITE_OK) {
		generation_clear(g);
		return -EIO;
	}
	sqlite3_bind_int64(s, 1, g->id);
	while (sqlite3_step(s) == SQLITE_ROW) {
		struct gen_file *f;

		g->files = xreallocarray(g->files, g->nfiles + 1, sizeof(*g->files));
		f = &g->files[g->nfiles++];
		f->path = col_str(s, 0);
		snprintf(f->sha256, sizeof(f->sha256), "%s", sqlite3_column_text(s, 1));
		f->mode = (unsigned)sqlite3_column_int(s, 2);
		f->uid = (unsigned)sqlite3_column_int(s, 3);
		f->gid = (unsigned)sqlite3_column_int(s, 4);
		f->present = sqlite3_column_int(s, 5);
	}
	sqlite3_finalize(s);
	return 0;
}

int
state_last_generation(struct state *st, struct generation *g)
{
	return load_gen(st, "ORDER BY id DESC LIMIT 1", 0, g, true);
}

int
state_last_generation_head(struct state *st, struct generation *g)
{
	return load_gen(st, "ORDER BY id DESC LIMIT 1", 0, g, false);
}

int
state_get_generation(struct state *st, long id, struct generation *g)
{
	return load_gen(st, "WHERE id = ?", id, g, true);
}

/* Binds one row of INSERT INTO files (gen, path, sha256, mode, uid, gid, present). */
static void
bind_file(sqlite3_stmt *s, long gen, const struct gen_file *f)
{
	sqlite3_bind_int64(s, 1, gen);
	sqlite3_bind_text(s, 2, f->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 3, f->sha256, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, 4, (int)f->mode);
	sqlite3_bind_int(s, 5, (int)f->uid);
	sqlite3_bind_int(s, 6, (int)f->gid);
	sqlite3_bind_int(s, 7, f->present);
}

int
state_add_generation(struct state *st, struct generation *g)
{
	sqlite3_stmt *s = NULL;
	size_t i;

	if (stamp_drop(st) < 0 || exec(st, "BEGIN IMMEDIATE") < 0)
		return -EIO;
	if (g->id < 0) {
		if (sqlite3_prepare_v2(st->db, "SELECT COALESCE(MAX(id), -1) + 1 FROM generations",
				       -1, &s, NULL) != SQLITE_OK ||
		    sqlite3_step(s) != SQLITE_ROW)
			goto fail;
		g->id = (long)sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO generations (id, created, reason, version, "
			       "inputs_hash, hw_hash, hw_text, mtu_iface, mtu) "
			       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &s, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(s, 1, g->id);
	sqlite3_bind_text(s, 2, g->created ? g->created : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 3, g->reason ? g->reason : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 4, g->version ? g->version : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 5, g->inputs_hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 6, g->hw_hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 7, g->hw_text ? g->hw_text : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 8, g->mtu_iface, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, 9, g->mtu);
	if (sqlite3_step(s) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO files (gen, path, sha256, mode, uid, gid, "
			       "present) VALUES (?, ?, ?, ?, ?, ?, ?)",
			       -1, &s, NULL) != SQLITE_OK)
		goto fail;
	for (i = 0; i < g->nfiles; i++) {
		const struct gen_file *f = &g->files[i];

		sqlite3_reset(s);
		bind_file(s, g->id, f);
		if (sqlite3_step(s) != SQLITE_DONE)
			goto fail;
	}
	sqlite3_finalize(s);
	return exec(st, "COMMIT");
fail:
	sqlite3_finalize(s);
	exec(st, "ROLLBACK");
	return -EIO;
}

int
state_add_generation_file(struct state *st, long gen, const struct gen_file *f)
{
	sqlite3_stmt *s;
	int rc;

	if (stamp_drop(st) < 0)
		return -EIO;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO files (gen, path, sha256, mode, uid, gid, "
			       "present) VALUES (?, ?, ?, ?, ?, ?, ?)",
			       -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	bind_file(s, gen, f);
	rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -EIO;
	sqlite3_finalize(s);
	return rc;
}

int
state_generation_ids(struct state *st, long **ids, size_t *n)
{
	sqlite3_stmt *s;

	*ids = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(st->db, "SELECT id FROM generations ORDER BY id", -1, &s, NULL) !=
	    SQLITE_OK)
		return -EIO;
	while (sqlite3_step(s) == SQLITE_ROW) {
		*ids = xreallocarray(*ids, *n + 1, sizeof(**ids));
		(*ids)[(*n)++] = (long)sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	return 0;
}

int
state_delete_generation(struct state *st, long id)
{
	char *sql = xasprintf("BEGIN; DELETE FROM files WHERE gen = %ld; "
			      "DELETE FROM generations WHERE id = %ld; COMMIT;",
			      id, id);
	int rc = stamp_drop(st) < 0 ? -EIO : exec(st, sql);

	free(sql);
	if (rc < 0)
		exec(st, "ROLLBACK");
	return rc;
}

void
state_bench_run_clear(struct state_bench_run *r)
{
	if (!r)
		return;
	free(r->created);
	free(r->json);
	memset(r, 0, sizeof(*r));
}

/* bench_runs and tune_results have the same shape: one JSON document per row. */
static int
add_run(struct state *st, const char *table, const char *created, long gen, const char *hw_hash,
	const char *json, long *id)
{
	sqlite3_stmt *s;
	char *sql = xasprintf("INSERT INTO %s (created, gen, hw_hash, json) VALUES (?, ?, ?, ?)",
			      table);
	int rc;

	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(s, 1, created, -1, SQLITE_TRANSIENT);
	if (gen >= 0)
		sqlite3_bind_int64(s, 2, gen);
	else
		sqlite3_bind_null(s, 2);
	sqlite3_bind_text(s, 3, hw_hash ? hw_hash : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 4, json, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -EIO;
	sqlite3_finalize(s);
	if (rc == 0)
		*id = (long)sqlite3_last_insert_rowid(st->db);
	return rc;
}

static int
set_run_json(struct state *st, const char *table, long id, const char *json)
{
	sqlite3_stmt *s;
	char *sql = xasprintf("UPDATE %s SET json = ? WHERE id = ?", table);
	int rc;

	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(s, 1, json, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, id);
	rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -EIO;
	sqlite3_finalize(s);
	if (rc == 0 && sqlite3_changes(st->db) == 0)
		rc = -ENOENT;
	return rc;
}

int
state_add_bench_run(struct state *st, const char *created, long gen, const char *hw_hash,
		    const char *json, long *id)
{
	return add_run(st, "bench_runs", created, gen, hw_hash, json, id);
}

int
state_set_bench_run_json(struct state *st, long id, const char *json)
{
	return set_run_json(st, "bench_runs", id, json);
}

static void
bench_row(sqlite3_stmt *s, struct state_bench_run *r)
{
	r->id = (long)sqlite3_column_int64(s, 0);
	r->created = col_str(s, 1);
	r->gen = sqlite3_column_type(s, 2) == SQLITE_NULL ? -1 : (long)sqlite3_column_int64(s, 2);
	snprintf(r->hw_hash, sizeof(r->hw_hash), "%s",
		 sqlite3_column_text(s, 3) ? (const char *)sqlite3_column_text(s, 3) : "");
	r->json = col_str(s, 4);
}

int
state_get_bench_run(struct state *st, long id, struct state_bench_run *r)
{
	sqlite3_stmt *s;
	int rc;

	memset(r, 0, sizeof(*r));
	if (sqlite3_prepare_v2(
		    st->db,
		    id < 0 ? "SELECT id, created, gen, hw_hash, json FROM bench_runs "
			     "ORDER BY id DESC LIMIT 1"
			   : "SELECT id, created, gen, hw_hash, json FROM bench_runs WHERE id = ?",
		    -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	if (id >= 0)
		sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		bench_row(s, r);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : -EIO;
}

int
state_list_bench_runs(struct state *st, struct state_bench_run **runs, size_t *n)
{
	sqlite3_stmt *s;
	int rc;

	*runs = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT id, created, gen, hw_hash, json FROM bench_runs "
			       "ORDER BY id",
			       -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*runs = xreallocarray(*runs, *n + 1, sizeof(**runs));
		bench_row(s, &(*runs)[(*n)++]);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* ---- tune runs (same shape as bench runs, table tune_results) ---- */

int
state_add_tune(struct state *st, const char *created, long gen, const char *hw_hash,
	       const char *json, long *id)
{
	return add_run(st, "tune_results", created, gen, hw_hash, json, id);
}

int
state_set_tune(struct state *st, long id, const char *json)
{
	return set_run_json(st, "tune_results", id, json);
}

int
state_get_tune(struct state *st, long id, long *out_id, char **hw_hash, char **json)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(
		    st->db,
		    id < 0 ? "SELECT id, hw_hash, json FROM tune_results ORDER BY id DESC "
			     "LIMIT 1"
			   : "SELECT id, hw_hash, json FROM tune_results WHERE id = ?",
		    -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	if (id >= 0)
		sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(s);
		return rc == SQLITE_DONE ? -ENOENT : -EIO;
	}
	*out_id = (long)sqlite3_column_int64(s, 0);
	*hw_hash = col_str(s, 1);
	*json = col_str(s, 2);
	sqlite3_finalize(s);
	return 0;
}
