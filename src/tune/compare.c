/* tune/compare.c - the paired comparison: a knob's candidates measured in alternation with the
 * incumbent, alone (round_once) or pooled with other knobs' (pool_level), looked at by the
 * sequential test of tune.h, and their verdicts in words. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "xmalloc.h"

static void
put_knob(struct tstate *s, struct cmp *c, size_t side)
{
	ts_setk(s, c->k->id, c->val[side], side ? KNOB_TUNED : c->src0);
	if (c->ctx)
		put_knob(s, c->ctx, side ? c->ctx_j + 1 : 0);
}

void
ts_put_mtu(struct tstate *s, struct cmp *c, size_t side)
{
	if (s->ops->mtu_set(s->ops->arg, c->mtu[side], s->err, sizeof(s->err)) < 0)
		ts_say(s, "tune: MTU %d: %s", c->mtu[side], s->err);
}

void
ts_put_snap(struct tstate *s, struct cmp *c, size_t side)
{
	ts_snap_put(s, c->snaps[side]);
}

/* Looks at candidate j: at one of the looks, or at its last pair. */
static void
look(struct tstate *s, struct cmp *c, size_t j)
{
	struct cand *x = &c->c[j];
	double ab = c->alpha_better, aw = c->alpha_worse;

	if (x->done || (x->look < s->nlooks && x->n < s->looks[x->look] && x->n < c->max_pairs))
		return;
	while (x->look < s->nlooks && s->looks[x->look] <= x->n)
		x->look++;
	if (c->front_better && x->n == s->look_first_n)
		ab = s->look_first;
	if (c->front_worse)
		aw = fmax(x->n == s->cost_first_n ? s->cost_first : s->alpha_cost, ab);
	tune_effect_of(x->d, x->n, ab, s->alpha_same, &x->e);
	if (x->e.verdict == TUNE_WORSE || x->e.verdict == TUNE_BETTER || x->e.verdict == TUNE_SAME)
		x->done = true;
	/* The worse bound may be judged at its own level (the MTU step's "not worse"). */
	if (!x->done && aw != ab) {
		struct tune_effect w;

		tune_effect_of(x->d, x->n, aw, s->alpha_same, &w);
		if (w.verdict == TUNE_WORSE) {
			x->e = w;
			x->done = true;
		}
	}
	/* Futility: a gain that cannot reach the least worth applying is not confirmed now;
	 * more pairs would only narrow a "same" (a confirmation ran 71 pairs to +0.5% [-2.1%,
	 * +2.9%] while the screens waited). Its bounds are then the "same" level's, and bound
	 * it within +-5% (at -10%, io_uring stopped at [-9.4%, +2.3%] with half the time
	 * left, where the goal's bound is 5%). */
	if (!x->done && c->futile_n && x->n >= c->futile_n) {
		struct tune_effect f;

		tune_effect_of(x->d, x->n, s->alpha_same, s->alpha_same, &f);
		if (f.verdict == TUNE_UNDECIDED && f.hi < TUNE_MIN_GAIN &&
		    f.lo > -TUNE_BOUND_GOAL) {
			x->e = f;
			x->done = x->futile = true;
		}
	}
	if (x->n >= c->max_pairs || x->look >= s->nlooks)
		x->done = true;
}

/* The comparison stops before its next look (budget, or its time share): what its pairs say
 * now stands for that look. */
void
ts_conclude(struct tstate *s, struct cmp *c)
{
	for (size_t j = 0; j < c->nc; j++) {
		struct cand *x = &c->c[j];

		if (x->n && x->e.n != x->n) {
			x->look = s->nlooks;
			look(s, c, j);
		}
	}
}

size_t
ts_active(const struct cmp *c)
{
	size_t n = 0;

	for (size_t j = 0; j < c->nc; j++)
		n += !c->c[j].done;
	return n;
}

/* The score of one run's results got on the workloads part alone (the others held at 1). */
static int
part_score(struct tstate *s, const struct bench_results *got, unsigned part, double *out)
{
	double *v = NULL;
	size_t n = 0;

	if (tune_scores_part(got, 0, part, &v, &n) < 0 || n != 1) {
		free(v);
		snprintf(s->err, sizeof(s->err), "no throughput result to score");
		return -EIO;
	}
	*out = v[0];
	free(v);
	return 0;
}

/* One round: the incumbent and every undecided candidate, forwards or backwards. The last
 * side measured stays in force, so that the next round, which starts with it, installs
 * nothing; the caller puts the incumbent back (leave()). */
int
ts_round_once(struct tstate *s, struct cmp *c)
{
	size_t order[1 + TUNER_MAX_CANDS], n = 0;
	double sc[1 + TUNER_MAX_CANDS], ps[1 + TUNER_MAX_CANDS];
	bool back = c->rounds % 2;
	int rc = 0;

	order[n++] = 0;
	for (size_t j = 0; j < c->nc; j++)
		if (!c->c[j].done)
			order[n++] = j + 1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t side = order[back ? n - 1 - i : i];

		struct bench_results got = { 0 }, *keep = c->keep[side ? 1 : 0];

		c->put(s, c, side);
		rc = ts_measure(s, c->protos, 1, 0, &sc[side], keep || c->part ? &got : NULL);
		if (rc == 0 && c->part)
			rc = part_score(s, &got, c->part, &ps[side]);
		if (rc == 0 && keep)
			ts_merge_results(keep, &got);
		bench_results_clear(&got);
	}
	if (rc < 0)
		return rc;
	c->rounds++;
	for (size_t i = 1; i < n; i++) {
		struct cand *x = &c->c[order[i] - 1];

		x->d = xreallocarray(x->d, x->n + 1, sizeof(*x->d));
		if (c->part) { /* the part decides; the rest is watched (ts_confirm) */
			x->r = xreallocarray(x->r, x->n + 1, sizeof(*x->r));
			x->d[x->n] = tune_log_ratio(ps[0], ps[order[i]]);
			x->r[x->n] = tune_log_ratio(sc[0], sc[order[i]]) - x->d[x->n];
		} else {
			x->d[x->n] = tune_log_ratio(sc[0], sc[order[i]]);
		}
		x->n++;
		look(s, c, order[i] - 1);
	}
	return 0;
}

/* Candidates a pooled round measures between two runs of the incumbent. */
#define POOL_GROUP 3
/* The measurements of a pooled round of n candidates. */
#define POOL_CALLS(n) ((n) + ((n) + POOL_GROUP - 1) / POOL_GROUP + 1)

struct pool_ent {
	struct cmp *c;
	size_t j;
	double score; /* its run in this round (0: not measured) */
};

/* Whether candidate j of c goes into a round of e[0..ne): undecided, short of upto, and when
 * measured in another's context, with that context's candidate in the round (its pair). */
static bool
pool_wants(const struct cmp *c, size_t j, size_t upto, const struct pool_ent *e, size_t ne)
{
	if (c->c[j].done || c->c[j].n >= upto)
		return false;
	if (!c->ctx)
		return true;
	for (size_t i = 0; i < ne; i++)
		if (e[i].c == c->ctx && e[i].j == c->ctx_j)
			return true;
	return false;
}

/* The candidates of cs[0..n) a round measures into e; returns how many. Those measured in
 * another's context go last: a round cut short drops them first, never the run they pair
 * with. */
static size_t
pool_entries(struct cmp **cs, size_t n, size_t upto, struct pool_ent *e)
{
	size_t ne = 0;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < cs[i]->nc; j++)
				if (!cs[i]->ctx == !pass && pool_wants(cs[i], j, upto, e, ne))
					e[ne++] = (struct pool_ent){ cs[i], j, 0 };
	return ne;
}

/* The score of c's candidate j in this round (0: not measured). */
static double
pool_score(const struct pool_ent *e, size_t ne, const struct cmp *c, size_t j)
{
	for (size_t i = 0; i < ne; i++)
		if (e[i].c == c && e[i].j == j)
			return e[i].score;
	return 0;
}

/* The pairs of the candidates measured in another's context: each against that context's
 * run of the same round. A verdict there applies nothing yet (its context decides first). */
static void
pool_pair_ctx(struct tstate *s, struct pool_ent *e, size_t ne)
{
	for (size_t i = 0; i < ne; i++) {
		struct cmp *c = e[i].c;
		struct cand *x = &c->c[e[i].j];
		double base;

		if (!c->ctx || !e[i].score || x->done ||
		    !(base = pool_score(e, ne, c->ctx, c->ctx_j)))
			continue;
		x->d = xreallocarray(x->d, x->n + 1, sizeof(*x->d));
		x->d[x->n++] = tune_log_ratio(base, e[i].score);
		look(s, c, e[i].j);
	}
}

/* The pairs of a group's m candidates (scores sc) against base, the incumbent's runs around
 * them; true when one of them is decided better. */
static bool
pool_pair(struct tstate *s, struct pool_ent *e, size_t m, double base, const double *sc)
{
	bool gain = false;

	for (size_t t = 0; t < m; t++) {
		struct cmp *c = e[t].c;
		struct cand *x = &c->c[e[t].j];

		e[t].score = sc[t];
		if (c->ctx)
			continue; /* pool_pair_ctx() */
		x->d = xreallocarray(x->d, x->n + 1, sizeof(*x->d));
		x->d[x->n++] = tune_log_ratio(base, sc[t]);
		look(s, c, e[t].j);
		/* One value better ends the knob: its change goes in now, and what its other
		 * values would gain over it is left to another tune. */
		if (x->done && x->e.verdict == TUNE_BETTER) {
			for (size_t j = 0; j < c->nc; j++) {
				struct cand *y = &c->c[j];

				if (!y->done && y->n && y->e.n != y->n) {
					y->look = s->nlooks; /* its pairs so far */
					look(s, c, j);
				}
				y->done = true;
			}
			gain = true;
		}
	}
	return gain;
}

/* The entries of e[0..ne) a round keeps when it would end past their share of the time
 * (until): those that fit in it, in order, and those a round or two short of their look,
 * which finish it within the budget; pairs short of a look decide nothing (the bench's
 * signing, +55% at 7 pairs of 8, "undecided"). Returns how many. */
static size_t
pool_share(struct tstate *s, struct pool_ent *e, size_t ne, size_t upto, double until,
	   unsigned protos)
{
	size_t k = 0, near = upto == SIZE_MAX ? 0 : upto / 4 ? upto / 4 : 1;

	for (size_t i = 0; i < ne; i++) {
		const struct cand *x = &e[i].c->c[e[i].j];
		bool fits =
			ts_now(s) + (double)POOL_CALLS(k + 1) * ts_slot_cost(s, protos) <= until;

		if ((fits || (x->n > 0 && x->n + near >= upto)) &&
		    pool_wants(e[i].c, e[i].j, upto, e, k))
			e[k++] = e[i];
	}
	return k;
}

/* Measures pooled rounds of several knobs' comparisons (cs, one protos mask) until each of
 * their undecided candidates has `upto` pairs, while they fit in the budget. A round runs the
 * incumbent, then up to POOL_GROUP candidates (each the incumbent with one knob changed), the
 * incumbent again, and so on, in a new order every round; each candidate's run pairs with the
 * mean (of logs) of the two incumbent runs around it, so a drift between them cancels and the
 * incumbent's runs serve every knob at once (one measured in another's context pairs with that
 * context's run instead: pool_pair_ctx). Returns 0, or -errno with *culprit the
 * comparison whose candidate failed (NULL: the incumbent did). The incumbent is in force on
 * return. */
static int
pool_advance(struct tstate *s, struct cmp **cs, size_t n, size_t upto, struct cmp **culprit,
	     bool *gained)
{
	unsigned protos = cs[0]->protos;
	struct pool_ent *e = xcalloc(n * TUNER_MAX_CANDS, sizeof(*e));
	double prev = 0;
	bool gain = false, cut = false;
	int rc = 0;

	*culprit = NULL;
	*gained = false;
	while (rc == 0) {
		size_t ne = 0, calls;

		if (!(ne = pool_entries(cs, n, upto, e)))
			break;
		/* As much of the round as fits, the first knobs of cs (the caller's order: what
		 * can pay first); out of time only when not one candidate fits. */
		for (calls = POOL_CALLS(ne);
		     ne && !ts_fits(s, (double)calls * ts_slot_cost(s, protos));
		     calls = POOL_CALLS(ne))
			ne--;
		if (!ne) {
			cut = true;
			break;
		}
		if (cs[0]->until > 0 &&
		    ts_now(s) + (double)calls * ts_slot_cost(s, protos) > cs[0]->until &&
		    !(ne = pool_share(s, e, ne, upto, cs[0]->until, protos)))
			break; /* their share of the time is spent: they may go on later */
		calls = POOL_CALLS(ne);
		for (size_t i = 0, last = SIZE_MAX; i < ne; i++) /* one cmp: contiguous */
			if (e[i].c != (last == SIZE_MAX ? NULL : e[last].c))
				e[i].c->rounds++, last = i;
		/* A new order each round: a run carries over into the next (a daemon reloaded
		 * with other modules, an install that slept in I/O), and in a fixed order the
		 * same candidate would always follow the same neighbour and carry its bias. */
		for (size_t i = ne - 1; i > 0; i--) {
			size_t r = (size_t)(bench_rand(&s->rng) % (i + 1));
			struct pool_ent t = e[i];

			e[i] = e[r], e[r] = t;
		}
		/* A new incumbent run each round: one shared by two rounds would tie the pairs of
		 * the candidate at the turn (the simulator's placebos: 13 of 200 applied, not 6).
		 */
		if ((rc = ts_measure(s, protos, 1, 0, &prev, NULL)) < 0)
			break;
		for (size_t g = 0; g < ne && rc == 0; g += POOL_GROUP) {
			size_t m = ne - g < POOL_GROUP ? ne - g : POOL_GROUP;
			double sc[POOL_GROUP], next;

			for (size_t t = 0; t < m && rc == 0; t++) {
				struct cmp *c = e[g + t].c;

				/* A call costs what the last ones did (a daemon restarted, a
				 * slower disk): the round stops where the budget does, with
				 * the incumbent run its candidates pair with. */
				if (!ts_fits(s, 2 * ts_slot_cost(s, protos))) {
					m = t, cut = true;
					break;
				}
				c->put(s, c, e[g + t].j + 1);
				rc = ts_measure(s, protos, 1, 0, &sc[t], NULL);
				c->put(s, c, 0);
				if (rc < 0)
					*culprit = c;
			}
			/* ... and when the candidates' calls were slower than foreseen, their
			 * runs go unpaired rather than the closing run past the budget. */
			if (rc == 0 && m && !ts_fits(s, ts_slot_cost(s, protos)))
				m = 0, cut = true;
			if (rc < 0 || !m || (rc = ts_measure(s, protos, 1, 0, &next, NULL)) < 0)
				break;
			gain = pool_pair(s, e + g, m, sqrt(prev * next), sc);
			prev = next;
			if (gain || cut)
				break; /* nothing more against the old incumbent */
		}
		pool_pair_ctx(s, e, ne);
		if (gain || cut)
			break; /* the change goes in before more is measured against the old */
	}
	for (size_t i = 0; cut && i < n; i++)
		cs[i]->out_of_time = true; /* not one more candidate fits */
	free(e);
	*gained = gain;
	return rc;
}

/* c is about to go: the comparison measured in its context no longer has one. What the
 * context left in force decides what its pairs are worth: measured with encryption's
 * candidate, they stand once encryption no longer seals; while it still does, they were not
 * measured with the configuration in force and start again (as signing did before). */
void
ts_cmp_unlink(struct tstate *s, struct cmp *c)
{
	struct cmp *g = c->dep;

	if (c->ctx) {
		c->ctx->dep = NULL;
		c->ctx = NULL;
	}
	if (!g)
		return;
	c->dep = NULL;
	g->ctx = NULL;
	if (!ts_sealed(s)) {
		ts_say(s, "tune: %s: its pairs measured with %s = %s stand (now in force)",
		       g->k->name, c->k->name, knob_value(s->m, c->k->id));
		return;
	}
	for (size_t j = 0; j < g->nc; j++) {
		free(g->c[j].d);
		memset(&g->c[j], 0, sizeof(g->c[j]));
	}
	g->rounds = 0;
}

void
ts_cmp_release(struct cmp *c)
{
	for (size_t j = 0; j < c->nc; j++) {
		free(c->c[j].d);
		free(c->c[j].r);
	}
	if (c->k)
		free((char *)c->val[0]);
}

/* ---- verdicts in words ---- */

/* "+1.2% [-3.0%, +5.1%], 12 pairs", or without the interval when too few pairs bound it. */
static void
effect_text(char *buf, size_t len, const struct tune_effect *e)
{
	if (isfinite(e->lo) && isfinite(e->hi))
		snprintf(buf, len, "%+.1f%% [%+.1f%%, %+.1f%%], %zu pairs", 100 * e->est,
			 100 * e->lo, 100 * e->hi, e->n);
	else
		snprintf(buf, len, "%+.1f%%, %zu pairs: too few for an interval", 100 * e->est,
			 e->n);
}

/* "required: 37% slower here (-37.0% [-45.0%, -30.1%], 12 pairs)" and the like. */
void
ts_verdict_words(char *buf, size_t len, const char *v, const struct tune_effect *e,
		 bool out_of_time)
{
	char ef[96], more[96] = "";

	effect_text(ef, sizeof(ef), e);
	switch (e->verdict) {
	case TUNE_BETTER:
		snprintf(buf, len, "%s: %.0f%% faster here (%s)", v, 100 * e->est, ef);
		break;
	case TUNE_WORSE:
		snprintf(buf, len, "%s: %.0f%% slower here (%s)", v, -100 * e->est, ef);
		break;
	case TUNE_SAME:
		snprintf(buf, len, "%s: the same within +-%.0f%% (%s)", v, 100 * TUNE_MIN_GAIN, ef);
		break;
	default:
		if (e->more != SIZE_MAX)
			snprintf(more, sizeof(more), "; about %zu more pairs would decide",
				 e->more);
		snprintf(buf, len, "%s: undecided (%s%s%s)", v, ef,
			 out_of_time ? ", the budget ran out" : "", more);
		break;
	}
}

/* The comparison of k's candidates, the incumbent in force: NULL when none can be measured
 * (d->reason says why). Values documented as behaving like one already taken are not. */
struct cmp *
ts_knob_cmp(struct tstate *s, const struct knob *k, struct tuner_decision *d)
{
	const char *vals[16], *cur = knob_value(s->m, k->id);
	size_t nv = ts_candidates(s->m, k, vals);
	struct cmp *c = xcalloc(1, sizeof(*c));
	char sw[256];

	c->put = put_knob;
	c->k = k;
	c->src0 = knob_source(s->m, k->id);
	c->protos = ts_knob_protos(s, k);
	if (s->o->clients_decide && s->ops->clients && ts_on_path(k)) {
		c->protos |= TUNER_CLIENTS;
		d->by_clients = true;
	}
	c->alpha_better = s->alpha_look;
	/* The tune's levels, look by look (look()); a cost changes nothing (the value in force
	 * stays), so it is named at the comparison's own level, not at the tune's. */
	c->front_better = c->front_worse = true;
	c->max_pairs = s->o->pairs;
	for (size_t i = 0; i < nv && c->nc < TUNER_MAX_CANDS; i++) {
		const char *twin;

		if ((twin = ts_same_as(s->m, k, cur, c->val + 1, c->nc, vals[i], sw, sizeof(sw)))) {
			ts_say(s, "tune: %s = %s: not measured: the same as %s here: %s", k->name,
			       vals[i], twin, sw);
			continue;
		}
		if (s->ops->measurable &&
		    !s->ops->measurable(s->ops->arg, k, vals[i], sw, sizeof(sw))) {
			ts_say(s, "tune: %s = %s: not measured: %s", k->name, vals[i], sw);
			snprintf(d->reason, sizeof(d->reason), "%s not measured: %.300s", vals[i],
				 sw);
			continue;
		}
		c->val[++c->nc] = vals[i];
	}
	c->val[0] = cur ? xstrdup(cur) : NULL; /* the model's copy is freed at every switch */
	if (!c->nc) {
		free((char *)c->val[0]);
		if (!d->reason[0])
			snprintf(d->reason, sizeof(d->reason),
				 "no candidate other than the current value");
		for (const char *const *v = k->candidates; *v && !nv; v++)
			if (!(cur && strcmp(cur, *v) == 0) &&
			    !(!cur && k->dflt && strcmp(k->dflt, *v) == 0) &&
			    !knob_allowed(s->m, k, *v, sw, sizeof(sw))) {
				snprintf(d->reason, sizeof(d->reason), "not tried: %.300s", sw);
				break;
			}
		free(c);
		return NULL;
	}
	return c;
}

/* The knob's verdict from its candidates': the first better one in the table's order (the
 * daemon's default first) is applied, so that two values both better and within the noise of
 * each other do not take turns from tune to tune; otherwise
 * undecided while any is, else same while any is, else worse (the value in force is best). */
void
ts_finish(struct tstate *s, struct cmp *c, struct tuner_decision *d)
{
	size_t best = SIZE_MAX, tell = 0, len;
	bool undecided = false, same = false;
	const char *cur = c->val[0] ? c->val[0] : "(the default)";
	bool short_of[TUNER_MAX_CANDS];

	for (size_t j = 0; j < c->nc; j++)
		short_of[j] = c->out_of_time && !c->c[j].done;
	ts_conclude(s, c);
	for (size_t j = 0; j < c->nc; j++) {
		struct tune_effect *e = &c->c[j].e;

		if (!c->c[j].n)
			e->more = SIZE_MAX, e->lo = -INFINITY, e->hi = INFINITY;
		if (e->verdict == TUNE_BETTER && best == SIZE_MAX)
			best = j;
		undecided |= e->verdict == TUNE_UNDECIDED;
		same |= e->verdict == TUNE_SAME;
		if (fabs(e->est) > fabs(c->c[tell].e.est))
			tell = j;
		if (d->ncand < TUNER_MAX_CANDS) {
			snprintf(d->cand[d->ncand].value, sizeof(d->cand[d->ncand].value), "%s",
				 c->val[j + 1]);
			d->cand[d->ncand++].e = *e;
		}
	}
	d->tried = true;
	d->verdict = best != SIZE_MAX ? TUNE_BETTER
		     : undecided      ? TUNE_UNDECIDED
		     : same	      ? TUNE_SAME
				      : TUNE_WORSE;
	d->e = c->c[best != SIZE_MAX ? best : tell].e;
	len = (size_t)snprintf(d->reason, sizeof(d->reason), "%s: ", tune_verdict_name(d->verdict));
	if (best != SIZE_MAX) {
		ts_verdict_words(d->reason + len, sizeof(d->reason) - len, c->val[best + 1],
				 &c->c[best].e, false);
		len = strlen(d->reason);
	}
	for (size_t j = 0; j < c->nc && len + 2 < sizeof(d->reason); j++) {
		if (j == best)
			continue;
		len += (size_t)snprintf(d->reason + len, sizeof(d->reason) - len, "%s",
					len > strlen(tune_verdict_name(d->verdict)) + 2 ? "; "
											: "");
		if (len < sizeof(d->reason))
			ts_verdict_words(d->reason + len, sizeof(d->reason) - len, c->val[j + 1],
					 &c->c[j].e,
					 short_of[j] && c->c[j].e.verdict == TUNE_UNDECIDED);
		len = strlen(d->reason);
	}
	if (best != SIZE_MAX) {
		free(d->after);
		d->after = xstrdup(c->val[best + 1]);
		d->applied = true;
		ts_setk(s, c->k->id, c->val[best + 1], KNOB_TUNED);
		s->r->changed = true;
		s->changed_protos |= ts_knob_protos(s, c->k);
	} else if (len + 2 < sizeof(d->reason)) {
		snprintf(d->reason + len, sizeof(d->reason) - len, "; %s kept", cur);
	}
	ts_say(s, "tune: %s: %s", c->k->name, d->reason);
	ts_decided(s, d);
}

static void
trying(struct tstate *s, const struct cmp *c)
{
	if (!c->rounds)
		ts_say(s, "tune: trying %s = %s%s (side by side with %s, up to %zu pairs%s)",
		       c->k->name, c->val[1], c->nc > 1 ? " and more" : "",
		       c->val[0] ? c->val[0] : "the default", c->max_pairs,
		       c->protos & TUNER_CLIENTS ? ", through the clients" : "");
}

/* k's comparison failed to measure (s->err): the knob's decision says so. */
static int
failed(struct tstate *s, struct cmp **cp, struct tuner_decision *d, int rc)
{
	snprintf(d->reason, sizeof(d->reason), "failed: %.400s", s->err);
	d->tried = true;
	ts_decided(s, d);
	ts_cmp_unlink(s, *cp);
	ts_cmp_release(*cp);
	free(*cp);
	*cp = NULL;
	return rc == -EINTR ? rc : 0;
}

/* Finishes k's comparison once no candidate is left undecided or the budget is spent. */
static void
settle(struct tstate *s, struct cmp **cp, struct tuner_decision *d)
{
	struct cmp *c = *cp;

	if ((ts_active(c) && !c->out_of_time) || c->ctx)
		return; /* (measured in another's context: that one goes first) */
	if (!c->rounds) {
		/* tried, with no time for a round: "not reached", and what a round costs */
		d->tried = true;
		d->verdict = TUNE_NOT_REACHED;
		snprintf(d->reason, sizeof(d->reason),
			 "not reached: no time was left for a round (%zu measurements, about "
			 "%.1fs)",
			 c->nc + 1, (double)(c->nc + 1) * ts_slot_cost(s, c->protos));
		ts_decided(s, d);
	} else {
		ts_finish(s, c, d);
	}
	ts_cmp_unlink(s, c);
	ts_cmp_release(c);
	free(c);
	*cp = NULL;
}

/* Where k's comparison can pay next: 0 when an undecided candidate leans to a gain (its
 * estimate at least the smallest gain: what the tune is for), else the seconds its undecided
 * candidates likely need to decide (their "more" pairs, rounds sharing the incumbent's runs);
 * INFINITY when no likely number would. */
double
ts_need(struct tstate *s, const struct cmp *c)
{
	size_t most = 0;

	for (size_t j = 0; c && j < c->nc; j++) {
		const struct cand *x = &c->c[j];

		if (x->done || !x->n)
			continue;
		if (x->e.est >= TUNE_MIN_GAIN)
			return 0;
		if (x->e.more == SIZE_MAX)
			return INFINITY;
		if (x->e.more > most)
			most = x->e.more;
	}
	return (double)most * (double)(ts_active(c) + 1) * ts_slot_cost(s, c->protos);
}

/* One level of the look loop: the knobs of order (n, by key: ts_need()) not waiting measured in
 * pools, one a protocol mask, to the level's look. A knob whose verdict would take more than
 * twice what is left waits, so that its time decides others. */
int
ts_pool_level(struct tstate *s, struct cmp **cs, const struct knob *const *order, const double *key,
	      size_t n, unsigned lv)
{
	size_t upto = lv + 1 < s->nlooks ? s->looks[lv] : SIZE_MAX;
	bool taken[KNOB_COUNT] = { false };
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		struct cmp *pool[KNOB_COUNT], *bad = NULL;
		const struct knob *ks[KNOB_COUNT];
		double left = s->o->budget_s - (ts_now(s) - s->t0);
		size_t np = 0;

		if (taken[i] || !cs[order[i]->id])
			continue;
		for (size_t q = i; q < n; q++) {
			struct cmp *c = cs[order[q]->id];

			if (taken[q] || !c || c->protos != cs[order[i]->id]->protos)
				continue;
			taken[q] = true;
			if (lv + 1 < s->nlooks && key[q] > 2 * left && c->rounds >= 16)
				continue;
			trying(s, c);
			ks[np] = order[q];
			pool[np++] = c;
		}
		/* Again after a gain (the change went in): the rest of the pool still has this
		 * look to reach, against the new incumbent. */
		for (bool gained = true; np && gained && rc == 0;) {
			size_t keep = 0, culprit = SIZE_MAX;

			rc = pool_advance(s, pool, np, upto, &bad, &gained);
			for (size_t q = 0; q < np; q++)
				if (pool[q] == bad)
					culprit = q;
			for (size_t q = 0; q < np; q++) {
				struct tuner_decision *d = &s->r->dec[ks[q]->id];

				if (rc < 0 && (culprit == SIZE_MAX || culprit == q)) {
					if (failed(s, &cs[ks[q]->id], d, rc) < 0)
						return rc;
				} else {
					settle(s, &cs[ks[q]->id], d);
				}
				if (cs[ks[q]->id])
					ks[keep] = ks[q], pool[keep++] = cs[ks[q]->id];
			}
			np = keep;
			if (rc < 0 && rc != -EINTR)
				rc = 0, gained = true; /* the others go on */
		}
	}
	return rc;
}
