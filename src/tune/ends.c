/* tune/ends.c - the start and the end of a tune: the starting configuration measured, and the
 * chosen one paired with it at the end (the after-score and the gate). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "xmalloc.h"

static bool
same_result(const struct bench_result *a, const struct bench_result *b)
{
	return strcmp(a->target, b->target) == 0 && strcmp(a->protocol, b->protocol) == 0 &&
	       strcmp(a->workload, b->workload) == 0 && strcmp(a->metric, b->metric) == 0 &&
	       strcmp(a->client ? a->client : "", b->client ? b->client : "") == 0;
}

/* Appends src's runs to the matching results of dst (one result per metric, all runs). */
void
ts_merge_results(struct bench_results *dst, const struct bench_results *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct bench_result *r = &src->v[i];
		struct bench_result *d = NULL;

		for (size_t j = 0; j < dst->n && !d; j++)
			if (same_result(&dst->v[j], r))
				d = &dst->v[j];
		if (!d) {
			bench_results_add(dst, r);
			continue;
		}
		d->runs = xreallocarray(d->runs, d->nruns + r->nruns, sizeof(*d->runs));
		memcpy(d->runs + d->nruns, r->runs, r->nruns * sizeof(*r->runs));
		d->nruns += r->nruns;
		bench_stats_compute(d->runs, d->nruns, 1, &d->st);
	}
}

/* Appends to dst the results of src whose protocol is in protos. */
static void
merge_protos(struct bench_results *dst, const struct bench_results *src, unsigned protos)
{
	struct bench_results sub = { 0 };

	for (size_t i = 0; i < src->n; i++)
		if (model_proto_bit(src->v[i].protocol) & protos)
			bench_results_add(&sub, &src->v[i]);
	ts_merge_results(dst, &sub);
	bench_results_clear(&sub);
}

/* The protocols this tune's knobs can change: those the eligible knobs with a candidate
 * measure (a host knob: every one). The rest keep their configuration whatever the tune
 * decides, so neither the start nor the after-score measures them (nor does the grid). */
static unsigned
tuned_protos(struct tstate *s)
{
	unsigned mask = 0;
	const char *vals[16];

	for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
		struct tuner_decision d = { 0 };

		if (ts_eligible(s, k, &d) && ts_candidates(s->m, k, vals))
			mask |= ts_knob_protos(s, k);
	}
	return mask ? mask : s->o->protos;
}

/* The starting configuration, each protocol on its own (what a run of each costs, the
 * report's "before" when nothing changes; the after-score measures more), and the clients. */
int
ts_measure_start(struct tstate *s)
{
	unsigned n = 2, protos = tuned_protos(s);
	double *sc = xmalloc(n * sizeof(*sc)), t;
	int rc = 0;

	ts_say(s, "tune: measuring the starting configuration (%s goal)",
	       s->o->goal ? s->o->goal : "the");
	for (unsigned b = 1; b <= ALL_PROTOS && rc == 0; b <<= 1) {
		if (!(protos & b))
			continue;
		for (unsigned i = 0; i < n && rc == 0; i++) {
			struct bench_results got = { 0 };

			rc = ts_measure(s, b, 1, 0, sc + i, &got);
			ts_merge_results(&s->r->start, &got);
			bench_results_clear(&got);
		}
		/* A run costs what the second did: the first is cold and not yet time-boxed
		 * (1 GiB in 3.6 s, then 72 MiB in 0.4 s: a 15 s tune planned 6x too high). */
		if (rc == 0)
			s->run_cost[b] = s->run_last[b];
	}
	free(sc);
	if (rc < 0 || !s->ops->clients)
		return rc;
	t = ts_now(s);
	s->ops->clients(s->ops->arg);
	/* What one client run costs: a pass measures each share's protocols' workloads. */
	s->client_pass = ts_now(s) - t;
	return ts_stopped(s) ? -EINTR : 0;
}

/* The after-score: the starting and the chosen configuration side by side on the protocols a
 * change touched, a first look's pairs at most, for the report (each change was decided on
 * its own). Unchanged: the starting runs are both. */
int
ts_final_pairing(struct tstate *s, struct snap *start, struct snap *chosen)
{
	struct cmp c = { .put = ts_put_snap, .nc = 1, .max_pairs = tune_looks[0] };
	unsigned tp = 0;
	int rc = 0;

	for (size_t i = 0; i < KNOB_COUNT; i++)
		if (s->r->dec[i].applied && i != KNOB_NET_MTU && s->r->dec[i].k)
			tp |= ts_knob_protos(s, s->r->dec[i].k);
	tp &= s->o->protos;
	s->r->paired = true;
	s->r->after_protos = s->r->changed ? tp : 0;
	s->r->unchanged_protos = s->r->changed ? s->o->protos & ~tp : s->o->protos;
	s->r->after_pairs = 0;
	if (!s->r->changed || !tp) {
		ts_merge_results(&s->r->before, &s->r->start);
		ts_merge_results(&s->r->after, &s->r->start);
		return 0;
	}
	s->r->changed = false; /* the after-score's own time is no longer reserved */
	c.snaps[0] = start;
	c.snaps[1] = chosen;
	c.keep[0] = &s->r->before;
	c.keep[1] = &s->r->after;
	c.protos = tp;
	c.alpha_better = c.alpha_worse = s->alpha_same;
	ts_say(s,
	       "tune: the after-score: the starting and the chosen configuration, up to %zu "
	       "pairs side by side",
	       c.max_pairs);
	while (!c.c[0].done && ts_fits(s, 2 * ts_slot_cost(s, tp)) &&
	       (rc = ts_round_once(s, &c)) == 0)
		;
	ts_conclude(s, &c);
	s->r->changed = true;
	ts_snap_put(s, chosen);
	if (rc == 0) {
		merge_protos(&s->r->before, &s->r->start, s->o->protos & ~tp);
		merge_protos(&s->r->after, &s->r->start, s->o->protos & ~tp);
		if (!s->r->after.n) { /* no time for a pair: the start's runs stand for both */
			ts_merge_results(&s->r->before, &s->r->start);
			ts_merge_results(&s->r->after, &s->r->start);
		}
		s->r->after_pairs = c.c[0].n;
		if (c.c[0].n)
			s->r->improvement = c.c[0].e;
	}
	ts_cmp_release(&c);
	return rc;
}
