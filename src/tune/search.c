/* tune/search.c - the search behind `nastune tune` (tuner.h): the starting point measured, the
 * MTU step, then the knobs by what they can pay, every candidate measured side by side with
 * the incumbent and decided by the one sequential comparison of tune.h at a level that keeps
 * the whole tune's false-positive rate at TUNE_ALPHA, and the chosen configuration paired with
 * the start at the end. The machine is reached through struct tuner_ops only. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner.h"
#include "xmalloc.h"

#define NMASK 16 /* PROTO_* masks (SMB 1, NFS 2, AFP 4) and TUNER_CLIENTS */
#define ALL_PROTOS (PROTO_SMB | PROTO_NFS | PROTO_AFP)
#define MAX_GRID 64

struct snap {
	char *v[KNOB_COUNT];
	enum knob_src src[KNOB_COUNT];
};

struct tstate {
	struct model *m;
	const struct tuner_opts *o;
	const struct tuner_ops *ops;
	struct tuner_result *r;
	double t0;
	double slot_cost[NMASK]; /* seconds a measure call of one run takes, switch included */
	double last_cost[NMASK]; /* ... the last call's */
	unsigned gen, installed; /* the model's generation, and the one installed */
	size_t family;		 /* the candidates the false-positive budget is shared by */
	unsigned looks[TUNE_NLOOKS + 1], nlooks;
	double alpha_look, alpha_same;
	double alpha_cost; /* "worse": each comparison's own level, its looks sharing it */
	/* The first look able to reach half a budget spends that half (a large effect is
	 * decided there); alpha_look and alpha_cost are the later looks' shares. */
	double look_first, cost_first;
	unsigned look_first_n, cost_first_n; /* its pairs (0: one level for every look) */
	unsigned changed_protos;	     /* the protocols the changes made so far touch */
	double client_pass;		     /* seconds the clients' pass at the start took */
	uint64_t rng; /* the pools' orders (fixed seed: a tune is reproducible) */
	char err[512];
};

/* One comparison: the incumbent (side 0) and up to TUNER_MAX_CANDS candidates (sides 1..nc)
 * measured in rounds, one run a measure call: incumbent, candidates, then the same backwards,
 * so each candidate's run and the incumbent's it pairs with swap order from round to round
 * and a steady drift cancels. put() puts a side in force. */
struct cand {
	double *d; /* the pairs' log-ratios */
	size_t n;
	unsigned look; /* the next look (index into tstate.looks) */
	struct tune_effect e;
	bool done;
};

struct cmp {
	void (*put)(struct tstate *s, struct cmp *c, size_t side);
	const struct knob *k;		      /* a knob's values, or NULL */
	const char *val[1 + TUNER_MAX_CANDS]; /* a knob's: [0] the incumbent (owned) */
	enum knob_src src0;
	int mtu[1 + TUNER_MAX_CANDS];	  /* the MTU step's */
	const struct snap *snaps[2];	  /* the after-score's: start, chosen */
	struct bench_results *keep[2];	  /* the after-score's results, by side */
	unsigned protos;		  /* what a measure call measures */
	double alpha_better, alpha_worse; /* one-sided levels of the interval's bounds */
	bool front_better, front_worse;	  /* ... the tune's, its first look spending more */
	size_t nc;
	struct cand c[TUNER_MAX_CANDS];
	unsigned rounds;
	size_t max_pairs; /* this comparison's most pairs */
	/* Measured in the context of another comparison's candidate (signing while encryption
	 * seals: with encryption's candidate ctx_j in force on both sides), or NULL. Its runs
	 * pair with that candidate's run of the same round, not with the incumbent's. */
	struct cmp *ctx;
	size_t ctx_j;
	struct cmp *dep; /* the comparison measured in this one's context, or NULL */
	double until;	 /* no round starts that would end after this (0: none) */
	bool out_of_time;
};

void
tuner_set_knob(struct model *m, enum knob_id id, const char *value, enum knob_src src)
{
	char *copy = value ? xstrdup(value) : NULL; /* value may be the string freed below */

	free(m->knobs[id].value);
	m->knobs[id].value = copy;
	m->knobs[id].src = value ? src : KNOB_UNSET;
}

static void __attribute__((format(printf, 2, 3))) say(struct tstate *s, const char *fmt, ...)
{
	char line[768];
	va_list ap;

	if (!s->ops->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->ops->progress(s->ops->arg, line);
}

static double
now(struct tstate *s)
{
	return s->ops->clock(s->ops->arg);
}

static bool
stopped(struct tstate *s)
{
	return s->ops->stopped && s->ops->stopped(s->ops->arg);
}

static void
setk(struct tstate *s, enum knob_id id, const char *v, enum knob_src src)
{
	const char *cur = knob_value(s->m, id);

	if ((cur == NULL) == (v == NULL) && (!cur || strcmp(cur, v) == 0) &&
	    knob_source(s->m, id) == (v ? src : KNOB_UNSET))
		return;
	tuner_set_knob(s->m, id, v, src);
	s->gen++;
}

static void
snap_take(struct snap *sn, const struct model *m)
{
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		const char *v = knob_value(m, (enum knob_id)i);

		sn->v[i] = v ? xstrdup(v) : NULL;
		sn->src[i] = knob_source(m, (enum knob_id)i);
	}
}

static void
snap_put(struct tstate *s, const struct snap *sn)
{
	for (size_t i = 0; i < KNOB_COUNT; i++)
		setk(s, (enum knob_id)i, sn->v[i], sn->src[i]);
}

static void
snap_release(struct snap *sn)
{
	for (size_t i = 0; i < KNOB_COUNT; i++)
		free(sn->v[i]);
}

/* ---- measuring, and what it costs ---- */

/* One measure call of the configuration as the model has it (installed first when it
 * changed); what the call took, its switch included, teaches slot_cost. */
static int
measure(struct tstate *s, unsigned protos, unsigned runs, unsigned warmup, double *scores,
	struct bench_results *keep)
{
	double t = now(s);
	int rc;

	if (stopped(s))
		return -EINTR;
	if (s->installed != s->gen) {
		if ((rc = s->ops->install(s->ops->arg, s->m, s->err, sizeof(s->err))) < 0)
			return rc;
		s->installed = s->gen;
	}
	rc = s->ops->measure(s->ops->arg, protos, runs, warmup, scores, keep, s->err,
			     sizeof(s->err));
	if (rc < 0)
		return rc;
	t = (now(s) - t) / (runs + warmup);
	s->slot_cost[protos] = s->slot_cost[protos] > 0 ? 0.7 * s->slot_cost[protos] + 0.3 * t : t;
	s->last_cost[protos] = t;
	return 0;
}

/* What a measure call of one run on protos costs: as measured (the last call's at least: a
 * machine that turns slow is slow from then on), else the sum of its protocols', else a
 * second. */
static double
slot_cost(const struct tstate *s, unsigned protos)
{
	double c = 0;

	if (s->slot_cost[protos] > 0)
		return fmax(s->slot_cost[protos], s->last_cost[protos]);
	for (unsigned b = 1; b < NMASK; b <<= 1)
		if (protos & b)
			c += s->slot_cost[b];
	return c > 0 ? c : 1;
}

/* The after-score's pairs kept in reserve on protos: tune_looks[0], or as many as an eighth of
 * the budget pays for (never below 2): it decides nothing, and in a budget of seconds its 8
 * pairs would take the time of the second decision. It may still measure more if time is
 * left. */
static double
after_cost(const struct tstate *s, unsigned protos)
{
	double pair = 2.0 * slot_cost(s, protos);
	double n = fmin(tune_looks[0], fmax(2, floor(s->o->budget_s / 8 / pair)));

	return n * pair;
}

/* What the rest of the tune needs after the knobs: the after-score once a change is made (on
 * the protocols the changes touch), and the clients again. */
static double
reserve(const struct tstate *s)
{
	double r = s->r->changed && s->changed_protos ? after_cost(s, s->changed_protos) : 0;

	if (s->o->clients_after)
		r += s->client_pass;
	return r;
}

static bool
fits(struct tstate *s, double cost)
{
	return now(s) - s->t0 + cost + reserve(s) <= s->o->budget_s;
}

/* ---- the comparison ---- */

static void merge_results(struct bench_results *dst, const struct bench_results *src);

static void
put_knob(struct tstate *s, struct cmp *c, size_t side)
{
	setk(s, c->k->id, c->val[side], side ? KNOB_TUNED : c->src0);
	if (c->ctx)
		put_knob(s, c->ctx, side ? c->ctx_j + 1 : 0);
}

static void
put_mtu(struct tstate *s, struct cmp *c, size_t side)
{
	if (s->ops->mtu_set(s->ops->arg, c->mtu[side], s->err, sizeof(s->err)) < 0)
		say(s, "tune: MTU %d: %s", c->mtu[side], s->err);
}

static void
put_snap(struct tstate *s, struct cmp *c, size_t side)
{
	snap_put(s, c->snaps[side]);
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
	if (x->n >= c->max_pairs || x->look >= s->nlooks)
		x->done = true;
}

/* The comparison stops before its next look (budget, or its time share): what its pairs say
 * now stands for that look. */
static void
conclude(struct tstate *s, struct cmp *c)
{
	for (size_t j = 0; j < c->nc; j++) {
		struct cand *x = &c->c[j];

		if (x->n && x->e.n != x->n) {
			x->look = s->nlooks;
			look(s, c, j);
		}
	}
}

static size_t
active(const struct cmp *c)
{
	size_t n = 0;

	for (size_t j = 0; j < c->nc; j++)
		n += !c->c[j].done;
	return n;
}

/* One round: the incumbent and every undecided candidate, forwards or backwards. The last
 * side measured stays in force, so that the next round, which starts with it, installs
 * nothing; the caller puts the incumbent back (leave()). */
static int
round_once(struct tstate *s, struct cmp *c)
{
	size_t order[1 + TUNER_MAX_CANDS], n = 0;
	double sc[1 + TUNER_MAX_CANDS];
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
		rc = measure(s, c->protos, 1, 0, &sc[side], keep ? &got : NULL);
		if (rc == 0 && keep)
			merge_results(keep, &got);
		bench_results_clear(&got);
	}
	if (rc < 0)
		return rc;
	c->rounds++;
	for (size_t i = 1; i < n; i++) {
		struct cand *x = &c->c[order[i] - 1];

		x->d = xreallocarray(x->d, x->n + 1, sizeof(*x->d));
		x->d[x->n++] = tune_log_ratio(sc[0], sc[order[i]]);
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
		for (calls = POOL_CALLS(ne); ne && !fits(s, (double)calls * slot_cost(s, protos));
		     calls = POOL_CALLS(ne))
			ne--;
		if (!ne) {
			cut = true;
			break;
		}
		while (ne && cs[0]->until > 0 &&
		       now(s) + (double)calls * slot_cost(s, protos) > cs[0]->until)
			--ne, calls = POOL_CALLS(ne);
		if (!ne)
			break; /* their share of the time is spent: they may go on later */
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
		if ((rc = measure(s, protos, 1, 0, &prev, NULL)) < 0)
			break;
		for (size_t g = 0; g < ne && rc == 0; g += POOL_GROUP) {
			size_t m = ne - g < POOL_GROUP ? ne - g : POOL_GROUP;
			double sc[POOL_GROUP], next;

			for (size_t t = 0; t < m && rc == 0; t++) {
				struct cmp *c = e[g + t].c;

				/* A call costs what the last ones did (a daemon restarted, a
				 * slower disk): the round stops where the budget does, with
				 * the incumbent run its candidates pair with. */
				if (!fits(s, 2 * slot_cost(s, protos))) {
					m = t, cut = true;
					break;
				}
				c->put(s, c, e[g + t].j + 1);
				rc = measure(s, protos, 1, 0, &sc[t], NULL);
				c->put(s, c, 0);
				if (rc < 0)
					*culprit = c;
			}
			/* ... and when the candidates' calls were slower than foreseen, their
			 * runs go unpaired rather than the closing run past the budget. */
			if (rc == 0 && m && !fits(s, slot_cost(s, protos)))
				m = 0, cut = true;
			if (rc < 0 || !m || (rc = measure(s, protos, 1, 0, &next, NULL)) < 0)
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

static bool sealed(const struct tstate *s);

/* c is about to go: the comparison measured in its context no longer has one. What the
 * context left in force decides what its pairs are worth: measured with encryption's
 * candidate, they stand once encryption no longer seals; while it still does, they were not
 * measured with the configuration in force and start again (as signing did before). */
static void
cmp_unlink(struct tstate *s, struct cmp *c)
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
	if (!sealed(s)) {
		say(s, "tune: %s: its pairs measured with %s = %s stand (now in force)", g->k->name,
		    c->k->name, knob_value(s->m, c->k->id));
		return;
	}
	for (size_t j = 0; j < g->nc; j++) {
		free(g->c[j].d);
		memset(&g->c[j], 0, sizeof(g->c[j]));
	}
	g->rounds = 0;
}

static void
cmp_release(struct cmp *c)
{
	for (size_t j = 0; j < c->nc; j++)
		free(c->c[j].d);
	if (c->k)
		free((char *)c->val[0]);
}

/* ---- verdicts in words ---- */

static void
pct(char *buf, size_t len, double v)
{
	if (isinf(v))
		snprintf(buf, len, "%s", v < 0 ? "-inf" : "+inf");
	else
		snprintf(buf, len, "%+.1f%%", 100 * v);
}

/* "required: 37% slower here [-45.0%, -30.1%], 12 pairs" and the like. */
static void
verdict_words(char *buf, size_t len, const char *v, const struct tune_effect *e, bool out_of_time)
{
	char lo[16], hi[16], more[96] = "";

	pct(lo, sizeof(lo), e->lo);
	pct(hi, sizeof(hi), e->hi);
	switch (e->verdict) {
	case TUNE_BETTER:
		snprintf(buf, len, "%s: %.0f%% faster here (%+.1f%% [%s, %s], %zu pairs)", v,
			 100 * e->est, 100 * e->est, lo, hi, e->n);
		break;
	case TUNE_WORSE:
		snprintf(buf, len, "%s: %.0f%% slower here (%+.1f%% [%s, %s], %zu pairs)", v,
			 -100 * e->est, 100 * e->est, lo, hi, e->n);
		break;
	case TUNE_SAME:
		snprintf(buf, len, "%s: the same within +-%.0f%% (%+.1f%% [%s, %s], %zu pairs)", v,
			 100 * TUNE_MIN_GAIN, 100 * e->est, lo, hi, e->n);
		break;
	default:
		if (e->more != SIZE_MAX)
			snprintf(more, sizeof(more), "; about %zu more pairs would decide",
				 e->more);
		snprintf(buf, len, "%s: undecided (%+.1f%% [%s, %s], %zu pairs%s%s)", v,
			 100 * e->est, lo, hi, e->n, out_of_time ? ", the budget ran out" : "",
			 more);
		break;
	}
}

/* ---- the knobs ---- */

/* Knobs on the network path: with clients, their effect is what the clients see. */
static bool
on_path(const struct knob *k)
{
	switch (k->id) {
	case KNOB_SMB_MULTICHANNEL:
	case KNOB_SMB_SOCKET_OPTIONS:
	case KNOB_AFP_TCPRCVBUF:
	case KNOB_AFP_TCPSNDBUF:
	case KNOB_SYS_RMEM_MAX:
	case KNOB_SYS_WMEM_MAX:
	case KNOB_SYS_TCP_RMEM:
	case KNOB_SYS_TCP_WMEM:
		return true;
	default:
		return false;
	}
}

/* The knobs the field reports as large, decided first and to the end, in this order: while
 * SMB3 encryption is required every message is sealed and none is signed on its own, so
 * encryption goes before signing; then what the disk path costs. */
static const enum knob_id leaders[] = { KNOB_SMB_SMB_ENCRYPT, KNOB_SMB_SERVER_SIGNING,
					KNOB_SMB_USE_SENDFILE, KNOB_SMB_AIO_READ_SIZE,
					KNOB_SMB_AIO_WRITE_SIZE };
#define NLEADERS (sizeof(leaders) / sizeof(leaders[0]))
#define NCPU_LEADERS 2 /* encryption and signing: the first tier */

static bool
is_leader(const struct knob *k)
{
	for (size_t i = 0; i < NLEADERS; i++)
		if (leaders[i] == k->id)
			return true;
	return false;
}

/* The protocols a knob's windows measure: its own, or every one measured for a host knob. */
static unsigned
knob_protos(const struct tstate *s, const struct knob *k)
{
	return (k->proto ? k->proto : ALL_PROTOS) & s->o->protos;
}

/* Whether the tune may measure k at all; if not, why in d->reason. */
static bool
eligible(struct tstate *s, const struct knob *k, struct tuner_decision *d)
{
	const struct model *m = s->m;
	char why[256] = "";

	if (s->o->sel && !s->o->sel[k->id]) {
		snprintf(d->reason, sizeof(d->reason), "not selected (--knobs)");
		return false;
	}
	if (!(k->workloads & s->o->wlmask)) {
		snprintf(d->reason, sizeof(d->reason), "no effect on the %s goal's workloads",
			 s->o->goal ? s->o->goal : "tune");
		return false;
	}
	if (!knob_applicable(m, k, why, sizeof(why))) {
		snprintf(d->reason, sizeof(d->reason), "%s%s",
			 strncmp(why, "not applicable", 14) ? "not applicable: " : "", why);
		return false;
	}
	if (knob_source(m, k->id) == KNOB_CONFIG) {
		snprintf(d->reason, sizeof(d->reason), "not allowed: pinned in %s:%d",
			 m->knobs[k->id].loc.file ? m->knobs[k->id].loc.file : "nastune.conf",
			 m->knobs[k->id].loc.line);
		return false;
	}
	if (k->id == KNOB_NET_MTU) {
		snprintf(d->reason, sizeof(d->reason),
			 "not tried: only clients cross the NIC "
			 "(tune --clients); network.mtu otherwise");
		return false;
	}
	if (on_path(k) && !(s->o->clients_decide && s->ops->clients) && !s->o->sel) {
		snprintf(d->reason, sizeof(d->reason),
			 "not tried: it acts on the network path, which loopback does not have "
			 "(no NIC, no latency): the clients decide it (tune --clients), or "
			 "name it in --knobs to measure it over loopback");
		return false;
	}
	if (k->proto && !(k->proto & s->o->protos)) {
		snprintf(d->reason, sizeof(d->reason),
			 "not tried: no share of its protocol that "
			 "this host can measure (no time spent on what is not served)");
		return false;
	}
	return true;
}

/* The value (cur, or one of the n measured in tried) that v behaves like under m, or NULL;
 * why says how. cur NULL is the daemon's default. */
static const char *
same_as(const struct model *m, const struct knob *k, const char *cur, const char *const *tried,
	size_t n, const char *v, char *why, size_t whylen)
{
	if (knob_same(m, k, cur, v, why, whylen))
		return cur ? cur : k->dflt;
	for (size_t i = 0; i < n; i++)
		if (knob_same(m, k, tried[i], v, why, whylen))
			return tried[i];
	return NULL;
}

/* The candidates of k worth measuring from the current value: allowed, not the value in force
 * and not documented as behaving like it. Returns how many went into out (up to 16). */
static size_t
candidates(const struct model *m, const struct knob *k, const char **out)
{
	const char *cur = knob_value(m, k->id);
	char why[256];
	size_t n = 0;

	for (const char *const *v = k->candidates; *v && n < 16; v++) {
		if ((cur && strcmp(cur, *v) == 0) || (!cur && k->dflt && strcmp(k->dflt, *v) == 0))
			continue;
		if (knob_same(m, k, cur, *v, why, sizeof(why)))
			continue;
		if (knob_allowed(m, k, *v, why, sizeof(why)))
			out[n++] = *v;
	}
	return n;
}

/* The candidates of k that behave differently from each other, the first of each kind: what
 * decide_knob() can measure (it skips a value documented as behaving like one it measured),
 * so what the correction counts. Returns how many went into out. */
static size_t
distinct_candidates(const struct model *m, const struct knob *k, const char **out)
{
	const char *all[16];
	size_t n = candidates(m, k, all), d = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < d && !knob_same(m, k, out[j], all[i], NULL, 0))
			j++;
		if (j == d)
			out[d++] = all[i];
	}
	return d;
}

static bool
mtu_wanted(const struct tstate *s)
{
	return s->ops->mtu_probe && s->ops->mtu_set && (!s->o->sel || s->o->sel[KNOB_NET_MTU]);
}

/* The comparison of k's candidates, the incumbent in force: NULL when none can be measured
 * (d->reason says why). Values documented as behaving like one already taken are not. */
static struct cmp *
knob_cmp(struct tstate *s, const struct knob *k, struct tuner_decision *d)
{
	const char *vals[16], *cur = knob_value(s->m, k->id);
	size_t nv = candidates(s->m, k, vals);
	struct cmp *c = xcalloc(1, sizeof(*c));
	char sw[256];

	c->put = put_knob;
	c->k = k;
	c->src0 = knob_source(s->m, k->id);
	c->protos = knob_protos(s, k);
	if (s->o->clients_decide && s->ops->clients && on_path(k)) {
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

		if ((twin = same_as(s->m, k, cur, c->val + 1, c->nc, vals[i], sw, sizeof(sw)))) {
			say(s, "tune: %s = %s: not measured: the same as %s here: %s", k->name,
			    vals[i], twin, sw);
			continue;
		}
		if (s->ops->measurable &&
		    !s->ops->measurable(s->ops->arg, k, vals[i], sw, sizeof(sw))) {
			say(s, "tune: %s = %s: not measured: %s", k->name, vals[i], sw);
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

/* Keeps d as it is now among the decisions made (again in its place when made before). */
static void
decided(struct tstate *s, const struct tuner_decision *d)
{
	struct tuner_kept *x = s->r->kept;

	while (x < s->r->kept + s->r->nkept && x->k != d->k)
		x++;
	if (x == s->r->kept + s->r->nkept)
		s->r->nkept++;
	free(x->after);
	free(x->reason);
	*x = (struct tuner_kept){ .k = d->k,
				  .after = d->after ? xstrdup(d->after) : NULL,
				  .applied = d->applied,
				  .tried = d->tried,
				  .verdict = d->verdict,
				  .reason = xstrdup(d->reason) };
	if (s->ops->save)
		s->ops->save(s->ops->arg, s->r);
}

/* The knob's verdict from its candidates': the first better one in the table's order (the
 * daemon's default first) is applied, so that two values both better and within the noise of
 * each other do not take turns from tune to tune; otherwise
 * undecided while any is, else same while any is, else worse (the value in force is best). */
static void
finish(struct tstate *s, struct cmp *c, struct tuner_decision *d)
{
	size_t best = SIZE_MAX, tell = 0, len;
	bool undecided = false, same = false;
	const char *cur = c->val[0] ? c->val[0] : "(the default)";
	bool short_of[TUNER_MAX_CANDS];

	for (size_t j = 0; j < c->nc; j++)
		short_of[j] = c->out_of_time && !c->c[j].done;
	conclude(s, c);
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
		verdict_words(d->reason + len, sizeof(d->reason) - len, c->val[best + 1],
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
			verdict_words(d->reason + len, sizeof(d->reason) - len, c->val[j + 1],
				      &c->c[j].e,
				      short_of[j] && c->c[j].e.verdict == TUNE_UNDECIDED);
		len = strlen(d->reason);
	}
	if (best != SIZE_MAX) {
		free(d->after);
		d->after = xstrdup(c->val[best + 1]);
		d->applied = true;
		setk(s, c->k->id, c->val[best + 1], KNOB_TUNED);
		s->r->changed = true;
		s->changed_protos |= knob_protos(s, c->k);
	} else if (len + 2 < sizeof(d->reason)) {
		snprintf(d->reason + len, sizeof(d->reason) - len, "; %s kept", cur);
	}
	say(s, "tune: %s: %s", c->k->name, d->reason);
	decided(s, d);
}

/* An interrupted tune of the same configuration decided k already: keep that decision. */
static bool
resumed(struct tstate *s, const struct knob *k, struct tuner_decision *d)
{
	const struct tuner_kept *j = s->o->resume ? &s->o->resume[k->id] : NULL;

	if (!j || !j->k)
		return false;
	d->applied = j->applied && j->after;
	d->tried = j->tried;
	d->verdict = j->verdict;
	snprintf(d->reason, sizeof(d->reason), "%s (decided before the interruption)", j->reason);
	if (d->applied) {
		d->after = xstrdup(j->after);
		setk(s, k->id, j->after, KNOB_TUNED);
		s->r->changed = true;
		s->changed_protos |= knob_protos(s, k);
	}
	return true;
}

static void
trying(struct tstate *s, const struct cmp *c)
{
	if (!c->rounds)
		say(s, "tune: trying %s = %s%s (side by side with %s, up to %zu pairs%s)",
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
	decided(s, d);
	cmp_unlink(s, *cp);
	cmp_release(*cp);
	free(*cp);
	*cp = NULL;
	return rc == -EINTR ? rc : 0;
}

/* Finishes k's comparison once no candidate is left undecided or the budget is spent. */
static void
settle(struct tstate *s, struct cmp **cp, struct tuner_decision *d)
{
	struct cmp *c = *cp;

	if ((active(c) && !c->out_of_time) || c->ctx)
		return; /* (measured in another's context: that one goes first) */
	if (!c->rounds) {
		snprintf(d->reason, sizeof(d->reason),
			 "not tried: budget exhausted (a round of %zu measurements needs about "
			 "%.1fs)",
			 c->nc + 1, (double)(c->nc + 1) * slot_cost(s, c->protos));
		s->r->untried[s->r->nuntried++] = c->k;
	} else {
		finish(s, c, d);
	}
	cmp_unlink(s, c);
	cmp_release(c);
	free(c);
	*cp = NULL;
}

/* Where k's comparison can pay next: 0 when an undecided candidate leans to a gain (its
 * estimate at least the smallest gain: what the tune is for), else the seconds its undecided
 * candidates likely need to decide (their "more" pairs, rounds sharing the incumbent's runs);
 * INFINITY when no likely number would. */
static double
need(struct tstate *s, const struct cmp *c)
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
	return (double)most * (double)(active(c) + 1) * slot_cost(s, c->protos);
}

/* One level of the look loop: the knobs of order (n, by key: need()) not waiting measured in
 * pools, one a protocol mask, to the level's look. A knob whose verdict would take more than
 * twice what is left waits, so that its time decides others. */
static int
pool_level(struct tstate *s, struct cmp **cs, const struct knob *const *order, const double *key,
	   size_t n, unsigned lv)
{
	size_t upto = lv + 1 < s->nlooks ? s->looks[lv] : SIZE_MAX;
	bool taken[KNOB_COUNT] = { false };
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		struct cmp *pool[KNOB_COUNT], *bad = NULL;
		const struct knob *ks[KNOB_COUNT];
		double left = s->o->budget_s - (now(s) - s->t0);
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

/* The leaders' first pairs: enough to name a large effect (a cost of a third under the lab's
 * noise), not enough to spend the budget on a value that changes nothing. */
#define LEADER_PAIRS 32

/* Whether smb_encrypt = v seals every session (signing cannot matter then). */
static bool
seals(const char *v)
{
	return v && (strcmp(v, "desired") == 0 || strcmp(v, "required") == 0);
}

/* Whether the value in force seals: signing is then measured in encryption's context
 * (seal_context), or waits for encryption's verdict rather than measure nothing. */
static bool
sealed(const struct tstate *s)
{
	return seals(knob_value(s->m, KNOB_SMB_SMB_ENCRYPT));
}

/* While encryption seals every session, signing changes nothing the clients measure: it is
 * measured with encryption's first candidate that does not seal in force on both sides (its
 * runs pair with that candidate's run of the same round), so that both costs are found in
 * one tier rather than signing's only after encryption's verdict. */
static void
seal_context(struct tstate *s, struct cmp **cs)
{
	struct cmp *e = cs[KNOB_SMB_SMB_ENCRYPT], *g = cs[KNOB_SMB_SERVER_SIGNING];

	if (!e || !g || !sealed(s))
		return;
	for (size_t j = 0; j < e->nc; j++)
		if (!seals(e->val[j + 1])) {
			g->ctx = e;
			g->ctx_j = j;
			e->dep = g;
			say(s,
			    "tune: %s: measured with %s = %s on both sides (%s seals every "
			    "session, and signing matters only without it)",
			    g->k->name, e->k->name, e->val[j + 1], knob_value(s->m, e->k->id));
			return;
		}
}

/* The leaders, pooled, look by look to LEADER_PAIRS (or their verdict) within their share of
 * what is left: one a leader, two kept for the rest (if any) so that it is screened too. */
static int
leaders_first(struct tstate *s, struct cmp **cs)
{
	size_t rest = 0;
	const struct knob *order[NLEADERS];
	double key[NLEADERS] = { 0 };
	int rc = 0;

	for (size_t i = 0; i < NLEADERS; i++) {
		struct tuner_decision *d = &s->r->dec[leaders[i]];

		if (d->reason[0])
			continue;
		if (!(cs[leaders[i]] = knob_cmp(s, d->k, d))) {
			decided(s, d);
			continue;
		}
	}
	for (const struct knob *k = knob_first(); k; k = knob_next(k))
		if (!is_leader(k) && !s->r->dec[k->id].reason[0] &&
		    !(k->id == KNOB_NET_MTU && mtu_wanted(s))) {
			rest = 2;
			break;
		}
	seal_context(s, cs);
	/* Two tiers: the CPU's (encryption, signing: the largest here, and signing's cost shows
	 * only without the seal), then the disk path's; each its leaders' share. */
	for (size_t tier = 0, from = 0; tier < 2 && rc == 0; tier++) {
		size_t to = tier ? NLEADERS : NCPU_LEADERS, mine = 0;
		double until;

		/* Its share, set once (counted again at every look it would compound): a share a
		 * leader of the tier, signing waiting for encryption included, two kept for the
		 * rest; the next tier is after it, in the order of what they can pay. */
		for (size_t i = from; i < to; i++)
			mine += cs[leaders[i]] != NULL;
		until = now(s) +
			(s->o->budget_s - (now(s) - s->t0)) * (double)mine / (double)(mine + rest);
		for (unsigned lv = 0;
		     mine && lv < s->nlooks && s->looks[lv] <= LEADER_PAIRS && rc == 0; lv++) {
			size_t nl = 0;

			for (size_t i = from; i < to; i++) {
				struct cmp *c = cs[leaders[i]];

				if (!c || (leaders[i] == KNOB_SMB_SERVER_SIGNING && sealed(s) &&
					   !c->ctx && cs[KNOB_SMB_SMB_ENCRYPT]))
					continue;
				c->until = until;
				order[nl++] = c->k;
			}
			rc = pool_level(s, cs, order, key, nl, lv);
		}
		for (size_t i = from; i < to; i++)
			if (cs[leaders[i]])
				cs[leaders[i]]->until = 0;
		from = to;
	}
	return rc;
}

/* The knobs: the leaders first (to LEADER_PAIRS, or their verdict), then a screen of the rest
 * (their first look), then look by look while the budget lasts: first the knobs leaning to a
 * gain, then those closest to a verdict; a knob whose verdict would take more than twice what
 * is left waits, so that its time decides others. */
static int
knobs_all(struct tstate *s)
{
	struct cmp *cs[KNOB_COUNT] = { NULL };
	int rc = 0;

	for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
		struct tuner_decision *d = &s->r->dec[k->id];

		if (k->id == KNOB_NET_MTU && mtu_wanted(s))
			continue; /* the MTU step decided it */
		d->reason[0] = 0;
		if (eligible(s, k, d))
			resumed(s, k, d);
	}
	rc = leaders_first(s, cs);
	for (unsigned lv = 0; lv < s->nlooks && rc == 0; lv++) {
		const struct knob *order[KNOB_COUNT];
		double key[KNOB_COUNT];
		size_t n = 0;

		for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
			struct tuner_decision *d = &s->r->dec[k->id];

			if (lv == 0 && !is_leader(k) && !d->reason[0] &&
			    !(cs[k->id] = knob_cmp(s, k, d)))
				decided(s, d);
			if (cs[k->id])
				order[n++] = k;
		}
		for (size_t i = 0; i < n; i++)
			key[i] = lv > 0 ? need(s, cs[order[i]->id]) : 0;
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && key[j] < key[j - 1]; j--) {
				const struct knob *t = order[j];
				double kt = key[j];

				order[j] = order[j - 1], key[j] = key[j - 1];
				order[j - 1] = t, key[j - 1] = kt;
			}
		rc = pool_level(s, cs, order, key, n, lv);
	}
	/* A context before what was measured in it (encryption before signing). */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < KNOB_COUNT; i++)
			if (cs[i] && (pass || !cs[i]->ctx)) {
				if (rc == 0)
					finish(s, cs[i], &s->r->dec[i]);
				cmp_unlink(s, cs[i]);
				cmp_release(cs[i]);
				free(cs[i]);
				cs[i] = NULL;
			}
	return rc;
}

/* ---- the MTU step ---- */

/* The largest MTU every peer receives, proven by the probe, replaces the one in force unless
 * the clients measure it worse. The proof is what makes the change safe, so the step fits in
 * any budget: its measurement is time-boxed (a quarter of what is left, at most its first
 * look) and only judges "not worse", at the comparison's own level; "better" is claimed at the
 * tune's level, as for every knob. */
static int
mtu_step(struct tstate *s)
{
	struct tuner_decision *d = &s->r->dec[KNOB_NET_MTU];
	struct cmp c = { .put = put_mtu, .nc = 1, .protos = TUNER_CLIENTS };
	double until;
	char why[384] = "", words[256], err[512];
	int cur = 0, next = 0, rc;

	if (!mtu_wanted(s))
		return 0;
	if ((rc = s->ops->mtu_probe(s->ops->arg, &cur, &next, why, sizeof(why))) < 0 ||
	    next <= cur) {
		snprintf(d->reason, sizeof(d->reason), "%s%s", rc < 0 ? "not tried: " : "", why);
		if (cur > 0) {
			free(d->before);
			d->before = xasprintf("%d", cur);
		}
		decided(s, d);
		return 0;
	}
	free(d->before);
	d->before = xasprintf("%d", cur);
	d->tried = d->by_clients = true;
	c.mtu[0] = cur;
	c.mtu[1] = next;
	c.alpha_better = s->alpha_look;
	c.front_better = true;
	c.alpha_worse = TUNE_ALPHA / 2;
	c.max_pairs = tune_looks[1];
	say(s, "tune: MTU %d proven to every peer; the clients at %d and %d side by side", next,
	    cur, next);
	until = now(s) + (s->o->budget_s - (now(s) - s->t0)) / 4;
	/* The first round runs whatever its estimate (the start's pass of every share is no
	 * measure of one run); the next only while they fit in the step's time. */
	while (active(&c) &&
	       (!c.rounds ? now(s) < until : now(s) + 2 * slot_cost(s, TUNER_CLIENTS) <= until) &&
	       (rc = round_once(s, &c)) == 0)
		;
	put_mtu(s, &c, 0);
	conclude(s, &c);
	if (rc == -EINTR) {
		cmp_release(&c);
		return rc;
	}
	d->e = c.c[0].e;
	d->ncand = 1;
	snprintf(d->cand[0].value, sizeof(d->cand[0].value), "%d", next);
	d->cand[0].e = d->e;
	verdict_words(words, sizeof(words), d->cand[0].value, &d->e, active(&c) > 0);
	if (rc < 0 || !c.c[0].n) {
		d->verdict = TUNE_UNDECIDED;
		snprintf(words, sizeof(words), "%d: not measured (%.200s)", next,
			 rc < 0 ? s->err : "no time for a pair");
	} else {
		d->verdict = d->e.verdict;
	}
	if (d->verdict == TUNE_WORSE) {
		snprintf(d->reason, sizeof(d->reason), "worse: %s; %d kept", words, cur);
	} else if (s->ops->mtu_set(s->ops->arg, next, err, sizeof(err)) < 0) {
		snprintf(d->reason, sizeof(d->reason), "%s: %s; could not be set again: %.200s",
			 tune_verdict_name(d->verdict), words, err);
	} else {
		d->applied = true;
		d->after = xasprintf("%d", next);
		s->m->network.mtu_mode = MTU_FIXED;
		s->m->network.mtu = next;
		snprintf(d->reason, sizeof(d->reason), "%s: %s; raised: proven to every peer%s",
			 tune_verdict_name(d->verdict), words,
			 d->verdict == TUNE_BETTER ? "" : ", and not measured slower");
	}
	say(s, "tune: net.mtu: %s", d->reason);
	decided(s, d);
	cmp_release(&c);
	return 0;
}

/* ---- the start and the end ---- */

static bool
same_result(const struct bench_result *a, const struct bench_result *b)
{
	return strcmp(a->target, b->target) == 0 && strcmp(a->protocol, b->protocol) == 0 &&
	       strcmp(a->workload, b->workload) == 0 && strcmp(a->metric, b->metric) == 0 &&
	       strcmp(a->client ? a->client : "", b->client ? b->client : "") == 0;
}

/* Appends src's runs to the matching results of dst (one result per metric, all runs). */
static void
merge_results(struct bench_results *dst, const struct bench_results *src)
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
	merge_results(dst, &sub);
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

		if (eligible(s, k, &d) && candidates(s->m, k, vals))
			mask |= knob_protos(s, k);
	}
	return mask ? mask : s->o->protos;
}

/* The starting configuration, each protocol on its own (what a run of each costs, the
 * report's "before" when nothing changes; the after-score measures more), and the clients. */
static int
measure_start(struct tstate *s)
{
	unsigned n = 2, protos = tuned_protos(s);
	double *sc = xmalloc(n * sizeof(*sc)), t;
	int rc = 0;

	say(s, "tune: measuring the starting configuration (%s goal)",
	    s->o->goal ? s->o->goal : "the");
	for (unsigned b = 1; b <= ALL_PROTOS && rc == 0; b <<= 1) {
		if (!(protos & b))
			continue;
		for (unsigned i = 0; i < n && rc == 0; i++) {
			struct bench_results got = { 0 };

			rc = measure(s, b, 1, 0, sc + i, &got);
			merge_results(&s->r->start, &got);
			bench_results_clear(&got);
		}
		/* A run costs what the second did: the first is cold and not yet time-boxed
		 * (1 GiB in 3.6 s, then 72 MiB in 0.4 s: a 15 s tune planned 6x too high). */
		if (rc == 0)
			s->slot_cost[b] = s->last_cost[b];
	}
	free(sc);
	if (rc < 0 || !s->ops->clients)
		return rc;
	t = now(s);
	s->ops->clients(s->ops->arg);
	/* What one client run costs: a pass measures each share's protocols' workloads. */
	s->client_pass = now(s) - t;
	return stopped(s) ? -EINTR : 0;
}

/* The after-score: the starting and the chosen configuration side by side on the protocols a
 * change touched, a first look's pairs at most, for the report (each change was decided on
 * its own). Unchanged: the starting runs are both. */
static int
final_pairing(struct tstate *s, struct snap *start, struct snap *chosen)
{
	struct cmp c = { .put = put_snap, .nc = 1, .max_pairs = tune_looks[0] };
	unsigned tp = 0;
	int rc = 0;

	for (size_t i = 0; i < KNOB_COUNT; i++)
		if (s->r->dec[i].applied && i != KNOB_NET_MTU && s->r->dec[i].k)
			tp |= knob_protos(s, s->r->dec[i].k);
	tp &= s->o->protos;
	s->r->paired = true;
	s->r->after_protos = s->r->changed ? tp : 0;
	s->r->unchanged_protos = s->r->changed ? s->o->protos & ~tp : s->o->protos;
	s->r->after_pairs = 0;
	if (!s->r->changed || !tp) {
		merge_results(&s->r->before, &s->r->start);
		merge_results(&s->r->after, &s->r->start);
		return 0;
	}
	s->r->changed = false; /* the after-score's own time is no longer reserved */
	c.snaps[0] = start;
	c.snaps[1] = chosen;
	c.keep[0] = &s->r->before;
	c.keep[1] = &s->r->after;
	c.protos = tp;
	c.alpha_better = c.alpha_worse = s->alpha_same;
	say(s,
	    "tune: the after-score: the starting and the chosen configuration, up to %zu "
	    "pairs side by side",
	    c.max_pairs);
	while (!c.c[0].done && fits(s, 2 * slot_cost(s, tp)) && (rc = round_once(s, &c)) == 0)
		;
	conclude(s, &c);
	s->r->changed = true;
	snap_put(s, chosen);
	if (rc == 0) {
		merge_protos(&s->r->before, &s->r->start, s->o->protos & ~tp);
		merge_protos(&s->r->after, &s->r->start, s->o->protos & ~tp);
		if (!s->r->after.n) { /* no time for a pair: the start's runs stand for both */
			merge_results(&s->r->before, &s->r->start);
			merge_results(&s->r->after, &s->r->start);
		}
		s->r->after_pairs = c.c[0].n;
		if (c.c[0].n)
			s->r->improvement = c.c[0].e;
	}
	cmp_release(&c);
	return rc;
}

/* ---- --exhaustive: every combination, for validating the search ---- */

struct grid {
	const struct knob *ks[KNOB_COUNT];
	const char *vals[KNOB_COUNT][17];
	size_t nv[KNOB_COUNT], nk, total;
	enum knob_src osrc[KNOB_COUNT];
	char *orig[KNOB_COUNT];
};

static void
grid_entry_release(struct tuner_grid_entry *e)
{
	for (size_t i = 0; i < e->nk; i++)
		free(e->value[i]);
	free(e->value);
	free(e->k);
	free(e->score.v);
	memset(e, 0, sizeof(*e));
}

/* Puts combination c in force; with e, records it there. */
static void
grid_assign(struct tstate *s, struct grid *g, size_t c, struct tuner_grid_entry *e)
{
	if (e) {
		e->k = xcalloc(g->nk, sizeof(*e->k));
		e->value = xcalloc(g->nk, sizeof(*e->value));
		e->nk = g->nk;
	}
	for (size_t i = 0, j = c; i < g->nk; i++) {
		size_t idx = j % g->nv[i];

		j /= g->nv[i];
		setk(s, g->ks[i]->id, g->vals[i][idx], idx == 0 ? g->osrc[i] : KNOB_TUNED);
		if (e) {
			e->k[i] = g->ks[i];
			e->value[i] = g->vals[i][idx] ? xstrdup(g->vals[i][idx]) : NULL;
		}
	}
}

/* Every combination of the selected knobs' allowed values measured once; the best median
 * wins. Not side by side: for `make bench`'s comparison only. */
static int
grid_run(struct tstate *s, char *err, size_t errlen)
{
	struct grid g = { .total = 1 };
	size_t best = (size_t)-1, c, n = s->o->pairs;
	double bestmed = -1, *sc;
	unsigned protos = 0;
	int rc = 0;

	for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
		struct tuner_decision *d = &s->r->dec[k->id];
		const char *cur = knob_value(s->m, k->id);

		if (!eligible(s, k, d)) {
			if (s->o->sel && s->o->sel[k->id]) {
				char why[sizeof(d->reason)];

				snprintf(why, sizeof(why), "%s", d->reason);
				snprintf(d->reason, sizeof(d->reason), "not in the grid: %.300s",
					 why);
			}
			continue;
		}
		g.ks[g.nk] = k;
		g.orig[g.nk] = cur ? xstrdup(cur) : NULL;
		g.osrc[g.nk] = knob_source(s->m, k->id);
		g.vals[g.nk][0] = g.orig[g.nk] ? g.orig[g.nk] : k->dflt;
		g.nv[g.nk] = 1 + candidates(s->m, k, &g.vals[g.nk][1]);
		protos |= knob_protos(s, k);
		g.total *= g.nv[g.nk];
		g.nk++;
	}
	if (!g.nk || g.total > MAX_GRID) {
		snprintf(err, errlen,
			 !g.nk ? "--exhaustive: none of --knobs can be tried under "
				 "this configuration"
			       : "--exhaustive: %zu combinations, more than %d — "
				 "select fewer knobs",
			 g.total, MAX_GRID);
		rc = -EINVAL;
		goto out;
	}
	say(s, "tune: exhaustive grid of %zu combination(s) over %zu knob(s)", g.total, g.nk);
	s->r->grid = xcalloc(g.total, sizeof(*s->r->grid));
	for (c = 0; c < g.total && rc == 0; c++) {
		struct tuner_grid_entry *e = &s->r->grid[s->r->ngrid];
		struct bench_stats st;

		grid_assign(s, &g, c, e);
		sc = xmalloc(n * sizeof(*sc));
		if ((rc = measure(s, protos & s->o->protos, (unsigned)n, 1, sc, NULL)) < 0) {
			grid_entry_release(e);
			free(sc);
			snprintf(err, errlen, "%s", s->err);
			break;
		}
		e->score = (struct tuner_score){ .v = sc, .n = n };
		s->r->ngrid++;
		bench_stats_compute(sc, n, 1, &st);
		if (st.median > bestmed) {
			bestmed = st.median;
			best = c;
		}
	}
	grid_assign(s, &g, best == (size_t)-1 ? 0 : best, NULL);
	for (size_t i = 0, j = best == (size_t)-1 ? 0 : best; i < g.nk; i++) {
		struct tuner_decision *d = &s->r->dec[g.ks[i]->id];
		size_t bi = j % g.nv[i];

		j /= g.nv[i];
		d->tried = true;
		d->applied = bi != 0;
		d->after = g.vals[i][bi] ? xstrdup(g.vals[i][bi]) : NULL;
		snprintf(d->reason, sizeof(d->reason), "exhaustive: best of %zu combination(s)%s",
			 g.total, d->applied ? "" : " keeps the current value");
	}
out:
	s->r->has_grid = true;
	for (size_t i = 0; i < g.nk; i++)
		free(g.orig[i]);
	return rc;
}

/* ---- the whole tune ---- */

/* The level each of the looks from index from on gets from a budget: a look whose pairs
 * cannot reach it (all n pairs one way has probability 2^-n) can decide only "same" and
 * spends none, and the level depends on how many looks spend: the fewest shares such that no
 * more looks than that can reach one (all of them always qualify). */
static double
look_level(const struct tstate *s, double budget, unsigned from)
{
	double level = budget;

	for (unsigned spending = 1; spending <= s->nlooks - from; spending++) {
		unsigned reach = 0;

		level = budget / spending;
		for (unsigned i = from; i < s->nlooks; i++)
			reach += ldexp(1.0, -(int)s->looks[i]) <= level;
		if (reach <= spending)
			break;
	}
	return level;
}

/* A budget's levels, front-loaded: the first look that can reach half of it spends that half
 * (a gain or cost of a third is clear there, and the leaders' time goes to the next knob), the
 * later looks share the other half (look_level). Returns their level; *first_n 0 when no look
 * before the last can reach half (then one level for all). */
static double
look_levels(const struct tstate *s, double budget, double *first, unsigned *first_n)
{
	unsigned f = 0;

	while (f < s->nlooks && ldexp(1.0, -(int)s->looks[f]) > budget / 2)
		f++;
	if (f + 1 >= s->nlooks) {
		*first = 0;
		*first_n = 0;
		return look_level(s, budget, 0);
	}
	*first = budget / 2;
	*first_n = s->looks[f];
	return look_level(s, budget / 2, f + 1);
}

/* The plan: the candidates the false-positive budget is shared by (every distinct candidate
 * of every eligible knob, and the MTU), and the looks. */
static void
plan(struct tstate *s)
{
	const char *vals[16];
	size_t total = 0;
	double alpha = s->o->alpha > 0 ? s->o->alpha : TUNE_ALPHA;

	for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
		struct tuner_decision d = { 0 };

		if (eligible(s, k, &d))
			total += distinct_candidates(s->m, k, vals);
	}
	total += mtu_wanted(s);
	s->family = total ? total : 1;
	for (unsigned i = 0; i < TUNE_NLOOKS && tune_looks[i] < s->o->pairs; i++)
		s->looks[s->nlooks++] = tune_looks[i];
	s->looks[s->nlooks++] = s->o->pairs;
	s->alpha_look = look_levels(s, alpha / (double)s->family, &s->look_first, &s->look_first_n);
	s->alpha_cost = look_levels(s, TUNE_ALPHA, &s->cost_first, &s->cost_first_n);
	s->alpha_same = TUNE_ALPHA;
	s->r->planned = true;
	s->r->plan = (struct tuner_plan){ .candidates = total,
					  .alpha = alpha,
					  .alpha_look = s->alpha_look,
					  .alpha_same = s->alpha_same,
					  .alpha_cost = s->alpha_cost,
					  .look_first = s->look_first,
					  .cost_first = s->cost_first,
					  .look_first_n = s->look_first_n,
					  .cost_first_n = s->cost_first_n,
					  .min_gain = TUNE_MIN_GAIN,
					  .nlooks = s->nlooks };
	memcpy(s->r->plan.looks, s->looks, sizeof(s->r->plan.looks));
	say(s,
	    "tune: plan: %zu candidate value(s) share a false-positive budget of %g; looks at "
	    "up to %u pairs",
	    total, alpha, s->o->pairs);
}

/* The scores of rs into sc (n 0: none). */
static void
score_of(const struct bench_results *rs, struct tuner_score *sc)
{
	free(sc->v);
	*sc = (struct tuner_score){ 0 };
	if (tune_scores(rs, 0, &sc->v, &sc->n) < 0)
		*sc = (struct tuner_score){ 0 };
}

int
tuner_run(struct model *m, const struct tuner_opts *o, const struct tuner_ops *ops,
	  struct tuner_result *r, char *err, size_t errlen)
{
	struct tstate s = {
		.m = m, .o = o, .ops = ops, .r = r, .gen = 1, .rng = 0x9e3779b97f4a7c15ull
	};
	struct snap start = { 0 }, chosen = { 0 };
	int rc;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		const char *v = knob_value(m, (enum knob_id)i);

		r->dec[i].k = knob_get((enum knob_id)i);
		r->dec[i].before = v ? xstrdup(v) : NULL;
		r->dec[i].e.more = SIZE_MAX;
		snprintf(r->dec[i].reason, sizeof(r->dec[i].reason), "not reached");
	}
	s.t0 = now(&s);
	snap_take(&start, m);
	plan(&s);
	if ((rc = measure_start(&s)) < 0) {
		snprintf(err, errlen, "the starting configuration could not be measured: %s",
			 s.err);
		goto out;
	}
	r->started = true;
	score_of(&r->start, &r->start_score);
	if (o->exhaustive)
		rc = grid_run(&s, err, errlen);
	else if ((rc = mtu_step(&s)) == 0 && (rc = knobs_all(&s)) < 0)
		snprintf(err, errlen, "%s", rc == -EINTR ? "interrupted" : s.err);
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		const char *v = knob_value(m, (enum knob_id)i);

		r->dec[i].applied =
			r->dec[i].applied ||
			(i != KNOB_NET_MTU && ((v == NULL) != (r->dec[i].before == NULL) ||
					       (v && strcmp(v, r->dec[i].before) != 0)));
		if (r->dec[i].applied && i != KNOB_NET_MTU)
			r->changed = true;
	}
	snap_take(&chosen, m);
	if ((rc = final_pairing(&s, &start, &chosen)) < 0) {
		snprintf(err, errlen, "the after-score could not be measured: %s", s.err);
		goto out;
	}
	if (r->changed) {
		score_of(&r->before, &r->before_score);
		score_of(&r->after, &r->after_score);
	}
	/* The clients again only when they fit (the budget holds whatever the estimates). */
	r->clients_after = o->clients_after && now(&s) - s.t0 + s.client_pass <= 1.03 * o->budget_s;
out:
	r->done = true;
	r->tuner_s = now(&s) - s.t0;
	snap_release(&start);
	snap_release(&chosen);
	return rc;
}

void
tuner_result_release(struct tuner_result *r)
{
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		free(r->dec[i].before);
		free(r->dec[i].after);
	}
	bench_results_clear(&r->start);
	bench_results_clear(&r->before);
	bench_results_clear(&r->after);
	free(r->start_score.v);
	free(r->before_score.v);
	free(r->after_score.v);
	for (size_t i = 0; i < r->ngrid; i++)
		grid_entry_release(&r->grid[i]);
	free(r->grid);
	for (size_t i = 0; i < r->nkept; i++) {
		free(r->kept[i].after);
		free(r->kept[i].reason);
	}
	memset(r, 0, sizeof(*r));
}
