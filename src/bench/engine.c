/* engine.c - runs one workload through a driver: a session's connection and buffers, the
 * scratch directory, the preflight, warm-up and repeats, and the results with their statistics.
 * The workloads themselves are in workload_*.c; every path they hand the driver is built by
 * run_path(), inside scratch. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "log.h"
#include "run.h"
#include "scratch.h"
#include "workloads.h"
#include "xmalloc.h"

/* One connection to a target and what the workloads run on it share: the buffer reads land
 * in, the preflight that passed on it, and the kept scratch directory found. */
struct bench_session {
	const struct bench_driver *d;
	const struct bench_target *t;
	struct bench_conn *c;
	unsigned char *rbuf; /* BUFSZ, where reads land */
	unsigned char *own;  /* a pattern of the session's own, for a seed not cached */
	uint64_t own_seed, own_rng;
	uint64_t checked; /* the largest footprint a preflight passed on c; 0 none yet */
	bool forced;	  /* that preflight was told to pass a Time Machine root */
	char kept[192];	  /* the kept scratch directory this session found or made */
};

/* The preflight of r's workload, unless one on this connection already passed with room for
 * it: a session's workloads run one after another, each removing its files before the next
 * starts, and the list of a large share's root would otherwise be read at every workload. */
static int
preflight(struct run *r, struct bench_session *s)
{
	uint64_t need = bench_footprint(r->w, &r->o);
	int rc;

	if (s->checked && need <= s->checked && (!s->forced || r->o.force))
		return 0;
	if ((rc = bench_preflight(r->d, r->c, r->t->url, bench_workload_name(r->w), need,
				  r->o.force, r->err, sizeof(r->err))) < 0)
		return rc;
	s->checked = need ? need : 1;
	s->forced = r->o.force;
	return 0;
}

static int
prepare(struct run *r, struct bench_session *sess)
{
	static unsigned seq;
	char tag[16], why[512];
	int rc;

	if ((rc = preflight(r, sess)) < 0)
		return rc;
	if (r->o.keep_scratch) {
		if (strncmp(r->o.keep_scratch, BENCH_SCRATCH_PREFIX,
			    strlen(BENCH_SCRATCH_PREFIX)) ||
		    strchr(r->o.keep_scratch, '/') ||
		    strlen(r->o.keep_scratch) >= sizeof(r->scratch)) {
			snprintf(r->err, sizeof(r->err), "bad kept scratch directory name \"%s\"",
				 r->o.keep_scratch);
			return -EINVAL;
		}
		snprintf(r->scratch, sizeof(r->scratch), "%s", r->o.keep_scratch);
		/* Reused only while it is the directory this process made (its identity, as
		 * the protocol gives it): a link or another directory swapped in between calls
		 * is left alone, and so is whatever a share user named so in advance. */
		debug_stop("kept-scratch"); /* where the race tests swap it */
		rc = scratch_check(r->d, r->c, r->t->url, r->scratch, why, sizeof(why));
		if (rc == 0) {
			snprintf(sess->kept, sizeof(sess->kept), "%s", r->scratch);
			return 0;
		}
		if (rc != -ENOENT) {
			snprintf(r->err, sizeof(r->err), "%s", why);
			r->scratch[0] = '\0';
			return rc;
		}
	} else {
		snprintf(tag, sizeof(tag), "%u", __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST));
		bench_scratch_name(r->scratch, sizeof(r->scratch), tag);
	}
	if ((rc = r->d->mkdir(r->c, r->scratch)) < 0) {
		snprintf(r->err, sizeof(r->err), "cannot create the scratch directory in %s: %s",
			 r->t->url, r->d->error(r->c));
		r->scratch[0] = '\0';
		return rc;
	}
	if ((rc = scratch_made(r->d, r->c, r->t->url, r->scratch)) < 0) {
		snprintf(r->err, sizeof(r->err), "the scratch directory %s in %s: %s", r->scratch,
			 r->t->url,
			 rc == -ENOTDIR ? "no directory right after mkdir" : strerror(-rc));
		r->scratch[0] = '\0';
		return rc;
	}
	/* No identity to know it again by in the next call (AFP without persistent CNIDs):
	 * this run removes it whole, and each call makes its own. */
	if (rc == 1)
		r->o.keep_scratch = NULL;
	if (r->o.keep_scratch)
		snprintf(sess->kept, sizeof(sess->kept), "%s", r->scratch);
	return 0;
}

/* "cold" only when the drop reached the cache the server reads from: a remote server still
 * holds the file in its RAM, and its results are about that cache, not the disk. */
static const char *
cache_label(const struct run *r, const struct metric *m)
{
	if (!m->cold)
		return "hot";
	return server_cache_dropped(r) ? "cold" : "client-cold";
}

static void
to_results(struct run *r, struct bench_results *out)
{
	size_t i;

	for (i = 0; i < r->nm; i++) {
		struct metric *m = &r->m[i];
		struct bench_result res = {
			.target = r->t->url,
			.protocol = (char *)r->d->name,
			.workload = (char *)bench_workload_name(r->w),
			.metric = (char *)m->name,
			.unit = (char *)m->unit,
			.client = "loopback",
			.cache = (char *)cache_label(r, m),
			.note = r->note[0] ? r->note : NULL,
			.runs = m->v,
			.nruns = m->n,
			.pass = m->pass,
			.hist = m->hist,
			.durability = (char *)m->durability,
			.unflushed = m->nuf == m->n ? m->uf : NULL,
		};
		struct bench_latency lat;
		uint64_t seed = r->o.seed;
		const char *s;

		for (s = m->name; *s; s++)
			seed = seed * 31 + (unsigned char)*s;
		bench_stats_compute(m->v, m->n, seed, &res.st);
		if (m->lh) {
			bench_lathist_summary(m->lh, &lat);
			snprintf(lat.rw, sizeof(lat.rw), "%s", m->rw ? m->rw : "");
			lat.bs = m->bs;
			res.lat = &lat;
		}
		bench_results_add(out, &res);
	}
}

int
bench_session_open(const struct bench_driver *d, const struct bench_target *t,
		   struct bench_session **out, char *err, size_t errlen)
{
	struct bench_session *s;
	int rc;

	*out = NULL;
	if (!d || !t) {
		snprintf(err, errlen, "bench_session_open: bad arguments");
		return -EINVAL;
	}
	s = xcalloc(1, sizeof(*s));
	s->d = d;
	s->t = t;
	if ((rc = d->connect(t, &s->c, err, errlen)) < 0) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void
bench_session_close(struct bench_session *s)
{
	if (!s)
		return;
	s->d->disconnect(s->c);
	free(s->rbuf);
	free(s->own);
	free(s);
}

/* BUFSZ bytes from splitmix64 seeded with seed into buf; returns the generator's state. */
static uint64_t
fill_pattern(unsigned char *buf, uint64_t seed)
{
	uint64_t st = seed;

	for (size_t k = 0; k < BUFSZ / 8; k++) {
		uint64_t v = bench_rand(&st);

		memcpy(buf + k * 8, &v, 8);
	}
	return st;
}

/* What writes send: BUFSZ seeded random bytes (no server can compress or deduplicate them),
 * made once per process for the first seed asked (a tune measures in many short calls, and
 * each would otherwise fill it again) and read-only after; another seed gets the session's
 * own. *rng gets the generator's state after the fill. */
static const unsigned char *
pattern(struct bench_session *s, uint64_t seed, uint64_t *rng)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static unsigned char *buf;
	static uint64_t buf_seed, buf_rng;
	const unsigned char *out = NULL;

	pthread_mutex_lock(&mu);
	if (!buf) {
		buf = xmalloc(BUFSZ);
		buf_rng = fill_pattern(buf, seed);
		buf_seed = seed;
	}
	if (buf_seed == seed) {
		*rng = buf_rng;
		out = buf;
	}
	pthread_mutex_unlock(&mu);
	if (out)
		return out;
	if (!s->own || s->own_seed != seed) {
		if (!s->own)
			s->own = xmalloc(BUFSZ);
		s->own_rng = fill_pattern(s->own, seed);
		s->own_seed = seed;
	}
	*rng = s->own_rng;
	return s->own;
}

int
bench_session_run(struct bench_session *s, enum bench_workload w, const struct bench_opts *opts,
		  struct bench_results *out, char *err, size_t errlen)
{
	const struct bench_driver *d;
	const struct bench_target *t;
	struct run *r;
	char e2[512];
	unsigned i, total;
	size_t k;
	int rc, rc2;

	if ((unsigned)w >= BENCH_NWORKLOADS || !s) {
		snprintf(err, errlen, "bench_session_run: bad arguments");
		return -EINVAL;
	}
	d = s->d;
	t = s->t;
	r = xcalloc(1, sizeof(*r));
	r->d = d;
	r->t = t;
	r->c = s->c;
	r->o = *opts;
	r->w = w;
	wl_normalize(&r->o);
	/* Locally every run gets a new directory: the posix driver's guarantees for root (paths
	 * resolved from the descriptors of directories it made itself) stay whole. */
	if (strcmp(d->name, "posix") == 0)
		r->o.keep_scratch = NULL;
	if ((rc = bench_opts_check(&r->o, r->err, sizeof(r->err))) < 0)
		goto out;
	if ((rc = prepare(r, s)) < 0)
		goto out;
	r->buf = pattern(s, r->o.seed, &r->rng);
	if (!s->rbuf)
		s->rbuf = xmalloc(BUFSZ);
	r->rbuf = s->rbuf;
	if (wl_ops[w].setup && (rc = wl_ops[w].setup(r)) < 0)
		goto out;
	total = r->o.warmup + r->o.repeats;
	for (i = 0; i < total; i++) {
		if ((rc = run_check_stop(r, r->err)) < 0)
			goto out;
		if (r->o.progress) {
			struct bench_progress p = { t->url, bench_workload_name(w), i + 1, total,
						    i < r->o.warmup };

			r->o.progress(&p, r->o.progress_arg);
		}
		r->measuring = i >= r->o.warmup;
		r->cold = false;
		if (r->measuring && r->o.cache == BENCH_CACHE_COLD && r->o.drop_caches)
			r->cold = r->o.drop_caches(r->o.drop_arg) == 0;
		if ((rc = wl_ops[w].run(r)) < 0)
			goto out;
	}
out:
	if (r->c2)
		d->disconnect(r->c2);
	if (r->scratch[0] &&
	    (rc2 = scratch_remove(d, r->c, t->url, r->scratch,
				  r->o.keep_scratch ? KEPT_PREFIX : NULL, e2, sizeof(e2))) < 0 &&
	    rc == 0) {
		snprintf(r->err, sizeof(r->err), "%s", e2);
		rc = rc2;
	}
	if (rc == 0)
		to_results(r, out);
	else
		snprintf(err, errlen, "%s", r->err[0] ? r->err : strerror(-rc));
	for (k = 0; k < r->nm; k++) {
		free(r->m[k].v);
		free(r->m[k].hist);
		bench_lathist_free(r->m[k].lh);
		free(r->m[k].uf);
	}
	free(r);
	return rc;
}

int
bench_run(const struct bench_driver *d, const struct bench_target *t, enum bench_workload w,
	  const struct bench_opts *opts, struct bench_results *out, char *err, size_t errlen)
{
	struct bench_session *s;
	int rc;

	if ((unsigned)w >= BENCH_NWORKLOADS || !d || !t) {
		snprintf(err, errlen, "bench_run: bad arguments");
		return -EINVAL;
	}
	if ((rc = bench_opts_check(opts, err, errlen)) < 0)
		return rc;
	if ((rc = bench_session_open(d, t, &s, err, errlen)) < 0)
		return rc;
	rc = bench_session_run(s, w, opts, out, err, errlen);
	bench_session_close(s);
	return rc;
}
