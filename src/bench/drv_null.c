/* drv_null.c - an in-memory driver for tests: names and sizes only, counted operations,
 * injected failures. See drv_null.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drv_null.h"
#include "xmalloc.h"

struct node {
	char *path;
	bool is_dir;
	uint64_t size;
	uint64_t ino; /* never reused: a directory made again is another one */
};

struct store {
	struct store *next;
	char *name;
	int refs;
	struct node *nodes;
	size_t n;
	uint64_t free_bytes;
	int fail_op; /* -1: none */
	uint64_t fail_at, calls[BNULL_NOPS];
	bool no_copy;
	unsigned delay_us;
	unsigned slow_us, slow_every; /* every slow_every-th read or write takes slow_us */
	uint64_t io;		      /* reads and writes so far */
};

struct bench_conn {
	struct store *s;
	char err[256];
};

struct bench_file {
	char *path;
	int flags;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct store *stores;
static struct {
	enum bench_null_op op;
	void (*fn)(enum bench_null_op op, const char *path, void *arg);
	void *arg;
} hook;
static struct bench_null_counts counts;
static uint64_t open_conns;

static const char *const op_names[BNULL_NOPS] = {
	"mkdir", "rmdir", "unlink", "rename", "stat",  "list", "space",
	"open",	 "pread", "pwrite", "flush",  "close", "copy", "connect",
};

void
bench_null_counts(struct bench_null_counts *out)
{
	pthread_mutex_lock(&lock);
	*out = counts;
	pthread_mutex_unlock(&lock);
}

void
bench_null_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(&counts, 0, sizeof(counts));
	counts.max_concurrent = open_conns;
	pthread_mutex_unlock(&lock);
}

long
bench_null_entries(const char *name)
{
	struct store *s;
	long n = -1;

	pthread_mutex_lock(&lock);
	for (s = stores; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			n = (long)s->n;
	pthread_mutex_unlock(&lock);
	return n;
}

void
bench_null_hook(enum bench_null_op op,
		void (*fn)(enum bench_null_op op, const char *path, void *arg), void *arg)
{
	pthread_mutex_lock(&lock);
	hook.op = op;
	hook.fn = fn;
	hook.arg = arg;
	pthread_mutex_unlock(&lock);
}

static void
run_hook(enum bench_null_op op, const char *path)
{
	if (hook.fn && hook.op == op)
		hook.fn(op, path, hook.arg);
}

/* Counts op and returns -EIO when it is the injected failure. Called with the lock held. */
static int
count(struct bench_conn *c, enum bench_null_op op)
{
	counts.ops[op]++;
	if (++c->s->calls[op] == c->s->fail_at && c->s->fail_op == (int)op) {
		snprintf(c->err, sizeof(c->err), "null: injected failure of %s call %llu",
			 op_names[op], (unsigned long long)c->s->fail_at);
		return -EIO;
	}
	return 0;
}

static struct node *
find(struct store *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->nodes[i].path, path) == 0)
			return &s->nodes[i];
	return NULL;
}

/* The parent of path must be an existing directory ("" is the root). */
static bool
parent_ok(struct store *s, const char *path)
{
	const char *slash = strrchr(path, '/');
	struct node *p;
	char *dir;

	if (!slash)
		return true;
	dir = xstrndup(path, slash - path);
	p = find(s, dir);
	free(dir);
	return p && p->is_dir;
}

static struct node *
add(struct store *s, const char *path, bool is_dir)
{
	struct node *n;

	s->nodes = xreallocarray(s->nodes, s->n + 1, sizeof(*s->nodes));
	n = &s->nodes[s->n++];
	static uint64_t next_ino = 100;

	n->path = xstrdup(path);
	n->is_dir = is_dir;
	n->size = 0;
	n->ino = next_ino++;
	return n;
}

static void
del(struct store *s, struct node *n)
{
	free(n->path);
	*n = s->nodes[--s->n];
}

static int
parse_opts(struct store *s, const char *q, char *err, size_t errlen)
{
	char *copy = xstrdup(q), *save = NULL, *kv;
	int rc = 0;

	for (kv = strtok_r(copy, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
		if (strncmp(kv, "free=", 5) == 0) {
			s->free_bytes = strtoull(kv + 5, NULL, 10);
		} else if (strncmp(kv, "fail=", 5) == 0) {
			char *colon = strchr(kv + 5, ':');
			int i;

			if (!colon) {
				rc = -EINVAL;
				break;
			}
			*colon = '\0';
			for (i = 0; i < BNULL_NOPS; i++)
				if (strcmp(op_names[i], kv + 5) == 0)
					s->fail_op = i;
			s->fail_at = strtoull(colon + 1, NULL, 10);
			if (s->fail_op < 0 || s->fail_at == 0) {
				rc = -EINVAL;
				break;
			}
		} else if (strcmp(kv, "copy=0") == 0) {
			s->no_copy = true;
		} else if (strncmp(kv, "delay_us=", 9) == 0) {
			s->delay_us = (unsigned)strtoul(kv + 9, NULL, 10);
		} else if (strncmp(kv, "slow_us=", 8) == 0) {
			s->slow_us = (unsigned)strtoul(kv + 8, NULL, 10);
		} else if (strncmp(kv, "slow_every=", 11) == 0) {
			s->slow_every = (unsigned)strtoul(kv + 11, NULL, 10);
		} else {
			rc = -EINVAL;
			break;
		}
	}
	if (rc < 0)
		snprintf(err, errlen,
			 "null: bad option \"%s\" (free=BYTES, fail=OP:N, copy=0, "
			 "delay_us=N, slow_us=N, slow_every=K)",
			 kv);
	free(copy);
	return rc;
}

static int
null_connect(const struct bench_target *t, struct bench_conn **out, char *err, size_t errlen)
{
	const char *spec = t->share ? t->share : "";
	const char *q = strchr(spec, '?');
	char *name = q ? xstrndup(spec, q - spec) : xstrdup(spec);
	struct bench_conn *c;
	struct store *s;

	pthread_mutex_lock(&lock);
	for (s = stores; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			break;
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->name = name;
		name = NULL;
		s->free_bytes = 1ull << 40;
		s->fail_op = -1;
		if (q && parse_opts(s, q + 1, err, errlen) < 0) {
			pthread_mutex_unlock(&lock);
			free(s->name);
			free(s);
			return -EINVAL;
		}
		s->next = stores;
		stores = s;
	}
	free(name);
	s->refs++;
	counts.ops[BNULL_CONNECT]++;
	if (++open_conns > counts.max_concurrent)
		counts.max_concurrent = open_conns;
	pthread_mutex_unlock(&lock);
	c = xcalloc(1, sizeof(*c));
	c->s = s;
	snprintf(c->err, sizeof(c->err), "no error");
	*out = c;
	return 0;
}

static void
null_disconnect(struct bench_conn *c)
{
	struct store **pp;

	if (!c)
		return;
	pthread_mutex_lock(&lock);
	open_conns--;
	if (--c->s->refs == 0) {
		for (pp = &stores; *pp; pp = &(*pp)->next)
			if (*pp == c->s) {
				*pp = c->s->next;
				break;
			}
		while (c->s->n)
			del(c->s, &c->s->nodes[0]);
		free(c->s->nodes);
		free(c->s->name);
		free(c->s);
	}
	pthread_mutex_unlock(&lock);
	free(c);
}

static const char *
null_error(struct bench_conn *c)
{
	return c->err;
}

static int
fail(struct bench_conn *c, int e, const char *op, const char *path)
{
	snprintf(c->err, sizeof(c->err), "null: %s %s: %s", op, path, strerror(e));
	return -e;
}

static int
null_mkdir(struct bench_conn *c, const char *path)
{
	int rc;

	pthread_mutex_lock(&lock);
	if ((rc = count(c, BNULL_MKDIR)) == 0) {
		if (find(c->s, path))
			rc = fail(c, EEXIST, "mkdir", path);
		else if (!parent_ok(c->s, path))
			rc = fail(c, ENOENT, "mkdir", path);
		else
			add(c->s, path, true);
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

static int
null_rmdir(struct bench_conn *c, const char *path)
{
	struct node *n;
	size_t len = strlen(path), i;
	int rc;

	run_hook(BNULL_RMDIR, path);
	pthread_mutex_lock(&lock);
	if ((rc = count(c, BNULL_RMDIR)) == 0) {
		if (!(n = find(c->s, path)) || !n->is_dir) {
			rc = fail(c, n ? ENOTDIR : ENOENT, "rmdir", path);
		} else {
			for (i = 0; i < c->s->n; i++)
				if (strncmp(c->s->nodes[i].path, path, len) == 0 &&
				    c->s->nodes[i].path[len] == '/')
					rc = fail(c, ENOTEMPTY, "rmdir", path);
			if (rc == 0)
				del(c->s, n);
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

static int
null_unlink(struct bench_conn *c, const char *path)
{
	struct node *n;
	int rc;

	run_hook(BNULL_UNLINK, path);
	pthread_mutex_lock(&lock);
	if ((rc = count(c, BNULL_UNLINK)) == 0) {
		if (!(n = find(c->s, path)) || n->is_dir)
			rc = fail(c, n ? EISDIR : ENOENT, "unlink", path);
		else
			del(c->s, n);
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/* A file, or a directory with everything below it; an existing file at to is replaced. */
static int
null_rename(struct bench_conn *c, const char *from, const char *to)
{
	struct node *n, *old;
	size_t flen = strlen(from), tlen = strlen(to), i;
	int rc;

	run_hook(BNULL_RENAME, from);
	pthread_mutex_lock(&lock);
	if ((rc = count(c, BNULL_RENAME)) == 0) {
		if (!(n = find(c->s, from))) {
			rc = fail(c, ENOENT, "rename", from);
		} else if (!parent_ok(c->s, to) ||
			   (n->is_dir && strncmp(to, from, flen) == 0 && to[flen] == '/')) {
			rc = fail(c, n->is_dir ? EINVAL : ENOENT, "rename", to);
		} else if ((old = find(c->s, to)) && (old->is_dir || n->is_dir)) {
			rc = fail(c, EEXIST, "rename", to);
		} else {
			if (old)
				del(c->s, old);
			for (i = 0; i < c->s->n; i++) {
				char *p = c->s->nodes[i].path;

				if (strncmp(p, from, flen) != 0 || (p[flen] && p[flen] != '/'))
					continue;
				c->s->nodes[i].path = xmalloc(tlen + strlen(p + flen) + 1);
				memcpy(c->s->nodes[i].path, to, tlen);
				strcpy(c->s->nodes[i].path + tlen, p + flen);
				free(p);
			}
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

static int
null_stat(struct bench_conn *c, const char *path, struct bench_stat *st)
{
	struct node *n;
	int rc;

	run_hook(BNULL_STAT, path);
	pthread_mutex_lock(&lock);
	if ((rc = count(c, BNULL_STAT)) == 0) {
		memset(st, 0, sizeof(*st));
		st->has_id = true;
		st->uid = 0;
		if (!*path) {
			st->is_dir = true;
			st->ino = 1;
		} else if (!(n = find(c->s, path))) {
			rc = fail(c, ENOENT, "stat", path);
		} else {
			st->size = n->size;
			st->is_dir = n->is_dir;
			st->ino = n->ino;
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/* The entries of path, "." and ".." first when dots (the root's parent is the root). */
static int
null_list_dots(struct bench_conn *c, const char *path, bool dots,
	       int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	struct node *n;
	struct {
		char *name;
		struct bench_stat st;
	} *v = NULL;
	size_t len = strlen(path), i, nv = 0;
	int rc;

	run_hook(BNULL_LIST, path);
	pthread_mutex_lock(&lock);
	if ((rc = count(c, BNULL_LIST)) == 0 && *path && (!(n = find(c->s, path)) || !n->is_dir))
		rc = fail(c, ENOENT, "list", path);
	if (rc == 0 && dots) {
		const char *slash = strrchr(path, '/');
		char *up = slash ? xstrndup(path, slash - path) : NULL;
		struct node *self = *path ? find(c->s, path) : NULL,
			    *par = up ? find(c->s, up) : NULL;

		v = xreallocarray(v, 2, sizeof(*v));
		v[0].name = xstrdup(".");
		v[0].st = (struct bench_stat){ .is_dir = true,
					       .has_id = true,
					       .ino = self ? self->ino : 1 };
		v[1].name = xstrdup("..");
		v[1].st = (struct bench_stat){ .is_dir = true,
					       .has_id = true,
					       .ino = par ? par->ino : 1 };
		nv = 2;
		free(up);
	}
	for (i = 0; rc == 0 && i < c->s->n; i++) {
		const char *p = c->s->nodes[i].path, *rest;

		if (len) {
			if (strncmp(p, path, len) != 0 || p[len] != '/')
				continue;
			rest = p + len + 1;
		} else {
			rest = p;
		}
		if (strchr(rest, '/'))
			continue;
		v = xreallocarray(v, nv + 1, sizeof(*v));
		v[nv].name = xstrdup(rest);
		v[nv].st = (struct bench_stat){ .has_id = true, .ino = c->s->nodes[i].ino };
		v[nv].st.size = c->s->nodes[i].size;
		v[nv++].st.is_dir = c->s->nodes[i].is_dir;
	}
	pthread_mutex_unlock(&lock);
	/* Outside the lock: fn may call back into the driver. */
	for (i = 0; i < nv; i++) {
		if (rc == 0)
			rc = fn(v[i].name, &v[i].st, arg);
		free(v[i].name);
	}
	free(v);
	return rc;
}

static int
null_list(struct bench_conn *c, const char *path,
	  int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	return null_list_dots(c, path, false, fn, arg);
}

static int
null_list_all(struct bench_conn *c, const char *path,
	      int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	return null_list_dots(c, path, true, fn, arg);
}

static int
null_space(struct bench_conn *c, const char *path, uint64_t *free_bytes)
{
	int rc;

	(void)path;
	pthread_mutex_lock(&lock);
	if ((rc = count(c, BNULL_SPACE)) == 0)
		*free_bytes = c->s->free_bytes;
	pthread_mutex_unlock(&lock);
	return rc;
}

static int
null_open(struct bench_conn *c, const char *path, int flags, struct bench_file **out)
{
	struct node *n;
	int rc;

	pthread_mutex_lock(&lock);
	if ((rc = count(c, BNULL_OPEN)) == 0) {
		n = find(c->s, path);
		if (n && n->is_dir)
			rc = fail(c, EISDIR, "open", path);
		else if (n && (flags & BENCH_CREATE))
			rc = fail(c, EEXIST, "open", path);
		else if (!n && !(flags & BENCH_CREATE))
			rc = fail(c, ENOENT, "open", path);
		else if (!n && !parent_ok(c->s, path))
			rc = fail(c, ENOENT, "open", path);
		else if (!n)
			add(c->s, path, false);
		else if (flags & BENCH_TRUNC)
			n->size = 0;
	}
	pthread_mutex_unlock(&lock);
	if (rc == 0) {
		*out = xcalloc(1, sizeof(**out));
		(*out)->path = xstrdup(path);
		(*out)->flags = flags;
	}
	return rc;
}

/* The latency of the io-th read or write of the store: its slow one or the usual delay. */
static void
delay(struct bench_conn *c, uint64_t io)
{
	const struct store *s = c->s;
	unsigned us = s->slow_every && io % s->slow_every == 0 ? s->slow_us : s->delay_us;
	struct timespec ts;

	if (!us)
		return;
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	nanosleep(&ts, NULL);
}

static ssize_t
null_pread(struct bench_conn *c, struct bench_file *f, void *buf, size_t len, uint64_t off)
{
	struct node *n;
	uint64_t io;
	ssize_t rc;

	pthread_mutex_lock(&lock);
	io = ++c->s->io;
	if ((rc = count(c, BNULL_PREAD)) == 0) {
		if (!(n = find(c->s, f->path)))
			rc = fail(c, ESTALE, "read", f->path);
		else
			rc = off >= n->size ? 0
					    : (ssize_t)(n->size - off < len ? n->size - off : len);
		if (rc > 0)
			counts.bytes_read += (uint64_t)rc;
	}
	pthread_mutex_unlock(&lock);
	if (rc > 0)
		memset(buf, 0, (size_t)rc);
	delay(c, io);
	return rc;
}

static ssize_t
null_pwrite(struct bench_conn *c, struct bench_file *f, const void *buf, size_t len, uint64_t off)
{
	struct node *n;
	uint64_t io;
	ssize_t rc;

	(void)buf;
	pthread_mutex_lock(&lock);
	io = ++c->s->io;
	if ((rc = count(c, BNULL_PWRITE)) == 0) {
		if (!(n = find(c->s, f->path))) {
			rc = fail(c, ESTALE, "write", f->path);
		} else {
			if (off + len > n->size)
				n->size = off + len;
			rc = (ssize_t)len;
			counts.bytes_written += len;
		}
	}
	pthread_mutex_unlock(&lock);
	delay(c, io);
	return rc;
}

static int
null_flush(struct bench_conn *c, struct bench_file *f)
{
	int rc;

	(void)f;
	pthread_mutex_lock(&lock);
	rc = count(c, BNULL_FLUSH);
	pthread_mutex_unlock(&lock);
	return rc;
}

static int
null_close(struct bench_conn *c, struct bench_file *f)
{
	int rc;

	pthread_mutex_lock(&lock);
	rc = count(c, BNULL_CLOSE);
	pthread_mutex_unlock(&lock);
	free(f->path);
	free(f);
	return rc;
}

static int
null_copy(struct bench_conn *c, const char *from, const char *to)
{
	struct node *src, *dst;
	uint64_t size;
	int rc;

	pthread_mutex_lock(&lock);
	if ((rc = count(c, BNULL_COPY)) == 0) {
		if (c->s->no_copy) {
			snprintf(c->err, sizeof(c->err), "null: no server-side copy (copy=0)");
			rc = -EOPNOTSUPP;
		} else if (!(src = find(c->s, from)) || src->is_dir) {
			rc = fail(c, ENOENT, "copy", from);
		} else if (find(c->s, to)) {
			rc = fail(c, EEXIST, "copy", to);
		} else {
			size = src->size;
			dst = add(c->s, to, false);
			dst->size = size;
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

const struct bench_driver bench_drv_null = {
	.name = "null",
	.scheme = "null",
	.connect = null_connect,
	.disconnect = null_disconnect,
	.error = null_error,
	.mkdir = null_mkdir,
	.rmdir = null_rmdir,
	.unlink = null_unlink,
	.rename = null_rename,
	.stat = null_stat,
	.list = null_list,
	.list_all = null_list_all,
	.space = null_space,
	.open = null_open,
	.pread = null_pread,
	.pwrite = null_pwrite,
	.flush = null_flush,
	.close = null_close,
	.copy = null_copy,
	.copy_method = "null copy",
	.concurrent = true,
};

const struct bench_driver bench_drv_null_serial = {
	.name = "null",
	.scheme = "null",
	.connect = null_connect,
	.disconnect = null_disconnect,
	.error = null_error,
	.mkdir = null_mkdir,
	.rmdir = null_rmdir,
	.unlink = null_unlink,
	.rename = null_rename,
	.stat = null_stat,
	.list = null_list,
	.space = null_space,
	.open = null_open,
	.pread = null_pread,
	.pwrite = null_pwrite,
	.flush = null_flush,
	.close = null_close,
	.copy = NULL,
	.copy_method = NULL,
	.concurrent = false,
};
