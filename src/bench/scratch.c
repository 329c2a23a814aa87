/* scratch.c - the benchmark's scratch directories: random names, records of what each one is,
 * and removal only of what is still the directory this host made (scratch.h). A share
 * user can rename anything to a scratch-looking name; the name alone never decides. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/random.h>
#endif

#include "bench.h"
#include "fsutil.h"
#include "log.h"
#include "scratch.h"
#include "xmalloc.h"

/* What this process made: url, name and identity. */
struct rec {
	char *url, *name;
	struct bench_stat id; /* has_id false: the protocol gives none (AFP without CNIDs) */
	bool mine;	      /* made by this process (not read back from the registry) */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct rec *recs;
static size_t nrecs;
static char *registry; /* directory of record files; NULL: memory only */

void
bench_scratch_registry(const char *dir)
{
	pthread_mutex_lock(&mu);
	free(registry);
	registry = dir ? xstrdup(dir) : NULL;
	pthread_mutex_unlock(&mu);
}

/* ---- names ---- */

static void
host_name(char *buf, size_t len)
{
	char *p;

	if (gethostname(buf, len) < 0 || !*buf)
		snprintf(buf, len, "localhost");
	buf[len - 1] = '\0';
	for (p = buf; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
			*p = '_';
}

static void
random_hex(char *out, size_t bytes)
{
	unsigned char r[16];
	size_t i, got = 0;

	if (bytes > sizeof(r))
		bytes = sizeof(r);
#ifdef __linux__
	while (got < bytes) {
		ssize_t n = getrandom(r + got, bytes - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
#else
	arc4random_buf(r, bytes);
	got = bytes;
#endif
	for (; got < bytes; got++) { /* no getrandom (Linux < 3.17): the clock, at least */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		r[got] = (unsigned char)(ts.tv_nsec ^ (ts.tv_nsec >> 8) ^ rand());
	}
	for (i = 0; i < bytes; i++)
		sprintf(out + 2 * i, "%02x", r[i]);
}

void
bench_scratch_name(char *buf, size_t len, const char *tag)
{
	char host[65], rnd[17]; /* HOST_NAME_MAX + 1 */

	host_name(host, sizeof(host));
	random_hex(rnd, 8);
	snprintf(buf, len, "%s%s-%ld-%s-%s", BENCH_SCRATCH_PREFIX, host, (long)getpid(), tag, rnd);
}

/* ---- records ---- */

static bool
same(const struct bench_stat *a, const struct bench_stat *b)
{
	return a->has_id && b->has_id && a->dev == b->dev && a->ino == b->ino &&
	       a->is_dir == b->is_dir && !a->is_link && !b->is_link &&
	       (a->uid < 0 || b->uid < 0 || a->uid == b->uid);
}

/* The registry file of url + name: a hash of both (FNV-1a), so any name fits. Caller frees;
 * NULL without a registry. Called with mu held. */
static char *
rec_path(const char *url, const char *name)
{
	uint64_t h = 1469598103934665603ull;
	const char *s;

	if (!registry)
		return NULL;
	for (s = url; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	h = (h ^ '\n') * 1099511628211ull;
	for (s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return xasprintf("%s/%016llx", registry, (unsigned long long)h);
}

static struct rec *
rec_find(const char *url, const char *name)
{
	size_t i;

	for (i = 0; i < nrecs; i++)
		if (strcmp(recs[i].url, url) == 0 && strcmp(recs[i].name, name) == 0)
			return &recs[i];
	return NULL;
}

/* Writes r's registry file, so that the next start can clean up after a crash: one small
 * file, not made durable (a lost record only leaves a directory behind). Called with mu
 * held. */
static void
rec_write(const struct rec *r)
{
	char host[65], *path, *text;

	if (!(path = rec_path(r->url, r->name)) || strchr(r->url, '\n')) {
		free(path);
		return;
	}
	host_name(host, sizeof(host));
	if (r->id.has_id)
		text = xasprintf("nastune-scratch 1\nurl %s\nname %s\nhost %s\npid %ld\n"
				 "id %llu %llu %lld\n",
				 r->url, r->name, host, (long)getpid(),
				 (unsigned long long)r->id.dev, (unsigned long long)r->id.ino,
				 (long long)r->id.uid);
	else
		text = xasprintf("nastune-scratch 1\nurl %s\nname %s\nhost %s\npid %ld\n"
				 "id none\n",
				 r->url, r->name, host, (long)getpid());
	if (fs_mkdir_p(registry, 0700) < 0 ||
	    fs_write_atomic(path, text, strlen(text), 0600, 0) < 0)
		log_debug("bench: cannot record the scratch directory %s in %s", r->name, registry);
	free(text);
	free(path);
}

int
scratch_made(const struct bench_driver *d, struct bench_conn *c, const char *url, const char *name)
{
	struct bench_stat st = { 0 };
	struct rec *r;
	int rc;

	if ((rc = d->stat(c, name, &st)) < 0)
		return rc;
	if (!st.is_dir || st.is_link)
		return -ENOTDIR;
	pthread_mutex_lock(&mu);
	if (!(r = rec_find(url, name))) {
		recs = xreallocarray(recs, nrecs + 1, sizeof(*recs));
		r = &recs[nrecs++];
		r->url = xstrdup(url);
		r->name = xstrdup(name);
	}
	r->id = st;
	r->mine = true;
	rec_write(r);
	pthread_mutex_unlock(&mu);
	return st.has_id ? 0 : 1;
}

/* The record of from at url now names to (memory and registry), after a rename. */
static void
rec_rename(const char *url, const char *from, const char *to)
{
	struct rec *r;
	char *path;

	pthread_mutex_lock(&mu);
	if ((r = rec_find(url, from))) {
		free(r->name);
		r->name = xstrdup(to);
		rec_write(r);
	}
	if ((path = rec_path(url, from)))
		unlink(path);
	free(path);
	pthread_mutex_unlock(&mu);
}

void
scratch_forget(const char *url, const char *name)
{
	struct rec *r;
	char *path;

	pthread_mutex_lock(&mu);
	if ((path = rec_path(url, name)))
		unlink(path);
	free(path);
	if ((r = rec_find(url, name))) {
		free(r->url);
		free(r->name);
		*r = recs[--nrecs];
	}
	pthread_mutex_unlock(&mu);
}

int
scratch_check(const struct bench_driver *d, struct bench_conn *c, const char *url, const char *name,
	      char *err, size_t errlen)
{
	struct bench_stat st = { 0 }, want = { 0 };
	struct rec *r;
	bool known, mine = false;
	int rc = d->stat(c, name, &st);

	pthread_mutex_lock(&mu);
	r = rec_find(url, name);
	known = r != NULL;
	if (r) {
		want = r->id;
		mine = r->mine;
	}
	pthread_mutex_unlock(&mu);
	if (rc == -ENOENT) {
		snprintf(err, errlen, "%s in %s is gone", name, url);
		return -ENOENT;
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot stat %s in %s: %s", name, url, d->error(c));
		return rc;
	}
	if (!known) {
		snprintf(err, errlen,
			 "%s in %s was not made by this process; left alone (a share user can "
			 "give anything that name)",
			 name, url);
		return -ENODATA;
	}
	/* Without an identity only a directory this very process made is taken back by its
	 * name (all that can be done on such a volume); a crashed run's is not. */
	if (!want.has_id && mine && st.is_dir && !st.is_link)
		return 0;
	if (!want.has_id) {
		snprintf(
			err, errlen,
			"%s in %s cannot be told apart from another directory of that name (%s "
			"gives no file ids here); left alone: remove it by hand if it is nastune's",
			name, url, d->name);
		return -ESTALE;
	}
	if (!same(&st, &want)) {
		log_debug("bench: %s in %s: recorded dev %llu ino %llu uid %lld, found dev %llu "
			  "ino %llu uid %lld%s%s",
			  name, url, (unsigned long long)want.dev, (unsigned long long)want.ino,
			  (long long)want.uid, (unsigned long long)st.dev,
			  (unsigned long long)st.ino, (long long)st.uid,
			  st.is_dir ? "" : " (no dir)", st.is_link ? " (link)" : "");
		snprintf(err, errlen,
			 "%s in %s is no longer the scratch directory made there (renamed, "
			 "replaced or a link: another %s); left alone",
			 name, url,
			 st.is_link  ? "link"
			 : st.is_dir ? "directory"
				     : "file");
		return -ESTALE;
	}
	return 0;
}

/* ---- removal ----
 *
 * What each driver guarantees while a share user renames things under our feet:
 * - posix: the directory is pinned (a descriptor) and every path below it is resolved from
 *   descriptors of directories that are ours (drv_posix.c): a swap redirects nothing.
 * - smb, nfs, afp: their libraries reach everything by name from the share's root and hold
 *   no directory open. The directory is first renamed to a private random name and checked
 *   there, and every directory is checked again before any of its entries is removed: by
 *   the "." and ".." of its own listing (SMB: the very directory listed and its parent),
 *   else by a stat just before it is listed (NFS, AFP). A swapped-in directory is never
 *   emptied; a swap landing between a listing and one unlink can still take one file of
 *   the same name. */

static int
collect(const char *name, const struct bench_stat *st, void *arg)
{
	struct scratch_names *ns = arg;

	ns->v = xreallocarray(ns->v, ns->n + 1, sizeof(*ns->v));
	ns->dir = xreallocarray(ns->dir, ns->n + 1, sizeof(*ns->dir));
	ns->st = xreallocarray(ns->st, ns->n + 1, sizeof(*ns->st));
	ns->v[ns->n] = xstrdup(name);
	ns->st[ns->n] = *st;
	ns->dir[ns->n++] = st->is_dir && !st->is_link;
	return 0;
}

int
scratch_names_list(const struct bench_driver *d, struct bench_conn *c, const char *path,
		   struct scratch_names *ns)
{
	return d->list(c, path, collect, ns);
}

void
scratch_names_clear(struct scratch_names *ns)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
	free(ns->dir);
	free(ns->st);
	memset(ns, 0, sizeof(*ns));
}

/* A listing with "." and ".." apart. */
struct dir_listing {
	struct scratch_names ns;
	struct bench_stat self, up; /* has_id false: the listing gave none */
};

static int
collect_all(const char *name, const struct bench_stat *st, void *arg)
{
	struct dir_listing *l = arg;

	if (strcmp(name, ".") == 0)
		l->self = *st;
	else if (strcmp(name, "..") == 0)
		l->up = *st;
	else
		return collect(name, st, &l->ns);
	return 0;
}

/* The same directory: both known by an identity, and it matches (the owner where both
 * have one). */
static bool
same_dir(const struct bench_stat *a, const struct bench_stat *b)
{
	return a->has_id && b->has_id && a->dev == b->dev && a->ino == b->ino &&
	       (a->uid < 0 || b->uid < 0 || a->uid == b->uid);
}

struct rm {
	const struct bench_driver *d;
	struct bench_conn *c;
	const char *url;
	char *err;
	size_t errlen;
};

static int
rm_swapped(struct rm *x, const char *path, const char *what)
{
	snprintf(x->err, x->errlen,
		 "%s in %s %s while it was being removed (renamed, replaced or a link: a share "
		 "user can do that); stopped there, the rest left alone",
		 path, x->url, what);
	return -ESTALE;
}

/* Lists path into l, once it is proven to be the directory want (from its parent's listing,
 * or the record) below up (NULL: not asked): by the listing's own "." and "..", else by a
 * stat just before the listing. A want without identity (AFP without CNIDs, made by this
 * process) is only asked to be a directory. */
static int
rm_list(struct rm *x, const char *path, const struct bench_stat *want, const struct bench_stat *up,
	struct dir_listing *l)
{
	struct bench_stat st = { 0 };
	int rc;

	if (!x->d->list_all) {
		if ((rc = x->d->stat(x->c, path, &st)) < 0)
			return rc;
		if (!st.is_dir || st.is_link || (want->has_id && !same_dir(&st, want)))
			return rm_swapped(x, path, "was another directory");
		return x->d->list(x->c, path, collect, &l->ns);
	}
	if ((rc = x->d->list_all(x->c, path, collect_all, l)) < 0)
		return rc;
	if (!l->self.has_id && (rc = x->d->stat(x->c, path, &l->self)) < 0)
		return rc;
	if (want->has_id && !same_dir(&l->self, want))
		return rm_swapped(x, path, "was another directory when listed");
	if (up && up->has_id && l->up.has_id && !same_dir(&l->up, up))
		return rm_swapped(x, path, "was moved under another directory");
	return 0;
}

/* Removes path, the directory want, and everything below it. With keep, the entries directly
 * in path whose names begin with keep stay, and so does path. */
static int
rm_tree(struct rm *x, const char *path, const struct bench_stat *want, const struct bench_stat *up,
	int depth, const char *keep)
{
	struct dir_listing l = { 0 };
	struct bench_stat self;
	size_t i;
	int rc, first = 0;

	if (strncmp(path, BENCH_SCRATCH_PREFIX, strlen(BENCH_SCRATCH_PREFIX)) != 0 || depth > 8)
		return -EINVAL;
	if ((rc = rm_list(x, path, want, up, &l)) < 0) {
		scratch_names_clear(&l.ns);
		return rc;
	}
	self = l.self.has_id ? l.self : *want;
	for (i = 0; i < l.ns.n; i++) {
		char *p;

		if (keep && strncmp(l.ns.v[i], keep, strlen(keep)) == 0)
			continue;
		p = xasprintf("%s/%s", path, l.ns.v[i]);
		rc = l.ns.dir[i] ? rm_tree(x, p, &l.ns.st[i], &self, depth + 1, NULL)
				 : x->d->unlink(x->c, p);
		free(p);
		if (rc == -ESTALE) { /* nothing more: the tree is not what it was */
			scratch_names_clear(&l.ns);
			return rc;
		}
		if (rc < 0 && !first)
			first = rc;
	}
	scratch_names_clear(&l.ns);
	rc = keep ? 0 : x->d->rmdir(x->c, path);
	return first ? first : rc;
}

int
scratch_remove(const struct bench_driver *d, struct bench_conn *c, const char *url,
	       const char *name, const char *keep, char *err, size_t errlen)
{
	struct rm x = { d, c, url, err, errlen };
	struct bench_stat want, st = { 0 };
	char priv[256];
	const char *top = name;
	struct rec *r;
	int rc;

	if ((rc = scratch_check(d, c, url, name, err, errlen)) < 0)
		return rc;
	pthread_mutex_lock(&mu);
	r = rec_find(url, name);
	want = r ? r->id : (struct bench_stat){ 0 };
	pthread_mutex_unlock(&mu);
	want.is_dir = true;
	/* From here the name is not looked up again where the driver can hold the directory. */
	if (d->pin && (rc = d->pin(c, name, &want)) < 0) {
		snprintf(err, errlen, "%s", d->error(c));
		return rc;
	}
	/* Elsewhere it leaves the name a share user knows (and can swap) for one of ours. */
	if (!d->pin && !keep) {
		bench_scratch_name(priv, sizeof(priv), "rm");
		if ((rc = d->rename(c, name, priv)) < 0) {
			snprintf(err, errlen,
				 "cannot rename the scratch directory %s in %s for its "
				 "removal: %s",
				 name, url, d->error(c));
			return rc;
		}
		rec_rename(url, name, priv);
		top = priv;
		if ((rc = d->stat(c, priv, &st)) < 0 || !st.is_dir || st.is_link ||
		    (want.has_id && !same_dir(&st, &want))) {
			snprintf(err, errlen,
				 "%s in %s was replaced just before its removal (a share user can "
				 "rename it); what had the name is now %s there, left alone",
				 name, url, priv);
			scratch_forget(url, priv);
			return rc < 0 ? rc : -ESTALE;
		}
	}
	if ((rc = rm_tree(&x, top, &want, NULL, 0, keep)) < 0) {
		if (rc != -ESTALE)
			snprintf(err, errlen, "cannot remove the scratch directory %s in %s: %s",
				 top, url, d->error(c));
		if (rc == -ESTALE)
			scratch_forget(url, top);
		return rc;
	}
	if (!keep)
		scratch_forget(url, top);
	return 0;
}

int
bench_scratch_remove(const struct bench_driver *d, const struct bench_target *t, const char *name,
		     char *err, size_t errlen)
{
	struct bench_conn *c = NULL;
	int rc;

	if ((rc = d->connect(t, &c, err, errlen)) < 0)
		return rc;
	rc = scratch_remove(d, c, t->url, name, NULL, err, errlen);
	if (rc == -ENOENT) {
		scratch_forget(t->url, name);
		rc = 0;
	}
	d->disconnect(c);
	return rc;
}

/* ---- what crashed runs left ---- */

/* One record file: the fields into *r (caller frees url and name), host and pid. */
static bool
rec_parse(const char *text, struct rec *r, char *host, size_t hostlen, long *pid)
{
	unsigned long long dev, ino;
	long long uid;
	const char *l;
	char buf[4200];
	bool got[5] = { 0 };

	memset(r, 0, sizeof(*r));
	if (strncmp(text, "nastune-scratch 1\n", 18) != 0)
		return false;
	for (l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		size_t n = strcspn(l, "\n");

		if (n >= sizeof(buf))
			continue;
		memcpy(buf, l, n);
		buf[n] = '\0';
		if (strncmp(buf, "url ", 4) == 0 && !r->url)
			r->url = xstrdup(buf + 4), got[0] = true;
		else if (strncmp(buf, "name ", 5) == 0 && !r->name)
			r->name = xstrdup(buf + 5), got[1] = true;
		else if (strncmp(buf, "host ", 5) == 0 && n - 5 < hostlen)
			memcpy(host, buf + 5, n - 4), got[2] = true;
		else if (sscanf(buf, "pid %ld", pid) == 1)
			got[3] = true;
		else if (sscanf(buf, "id %llu %llu %lld", &dev, &ino, &uid) == 3) {
			r->id = (struct bench_stat){
				.is_dir = true, .has_id = true, .dev = dev, .ino = ino, .uid = uid
			};
			got[4] = true;
		} else if (strcmp(buf, "id none") == 0) {
			r->id = (struct bench_stat){ .is_dir = true, .uid = -1 };
			got[4] = true;
		}
	}
	if (got[0] && got[1] && got[2] && got[3] && got[4] &&
	    strncmp(r->name, BENCH_SCRATCH_PREFIX, strlen(BENCH_SCRATCH_PREFIX)) == 0 &&
	    !strchr(r->name, '/'))
		return true;
	free(r->url);
	free(r->name);
	return false;
}

int
scratch_clean_stale(const struct bench_driver *d, struct bench_conn *c, const char *url)
{
	char me[65], host[128], err[512], *dir, *path, *text, *nm;
	struct dirent *de;
	int removed = 0;
	DIR *dp;

	pthread_mutex_lock(&mu);
	dir = registry ? xstrdup(registry) : NULL;
	pthread_mutex_unlock(&mu);
	if (!dir || !(dp = opendir(dir))) {
		free(dir);
		return 0;
	}
	host_name(me, sizeof(me));
	while ((de = readdir(dp))) {
		struct rec r;
		long pid = 0;
		int rc;

		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		text = NULL;
		if (fs_read_file(path, 8192, &text, NULL) < 0 ||
		    !rec_parse(text, &r, host, sizeof(host), &pid)) {
			free(text);
			free(path);
			continue;
		}
		free(text);
		/* This host's, for this target, of a process that is gone. */
		if (strcmp(r.url, url) != 0 || strcmp(host, me) != 0 || pid <= 0 ||
		    pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) {
			free(r.url);
			free(r.name);
			free(path);
			continue;
		}
		/* Known to this process for the check and removal, then forgotten. */
		nm = xstrdup(r.name);
		pthread_mutex_lock(&mu);
		recs = xreallocarray(recs, nrecs + 1, sizeof(*recs));
		recs[nrecs++] = r;
		pthread_mutex_unlock(&mu);
		rc = scratch_remove(d, c, url, nm, NULL, err, sizeof(err));
		if (rc == 0)
			removed++;
		else if (rc != -ENOENT)
			log_warnx("bench: %s", err);
		scratch_forget(url, nm);
		free(nm);
		unlink(path);
		free(path);
	}
	closedir(dp);
	free(dir);
	return removed;
}

int
bench_clean_stale(const struct bench_driver *d, struct bench_conn *c, const char *url)
{
	return scratch_clean_stale(d, c, url);
}
