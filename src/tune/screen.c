/* tune/screen.c - the screens: the knobs that act on one protocol's server, and those on the
 * network path (through the clients when there are any), each screened together in a folded
 * two-level orthogonal array (tune/design.c), replicated until every candidate is resolved or
 * the screens' share of the budget ends, and fitted robustly on the pairs' log-score
 * differences (tune/fit.c). A screen decides costs and bounds; its apparent gains go to the
 * confirmation (tune/confirm.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "design.h"
#include "fit.h"
#include "xmalloc.h"

/* A screen's intervals: 90%, each bound at 5% one-sided. */
#define SCREEN_ALPHA 0.05
/* Replicates before a screen may call itself resolved (the first has few residuals). */
#define SCREEN_MIN_REPS 2
/* The fewest residual degrees of freedom a fit's intervals rest on (t at 3 df: 2.35 at 95%). */
#define SCREEN_MIN_DF 3
#define MAX_SCREENS 8
#define MAX_CONS 64
/* A screen's responses: [0] the whole score, then each set of the goal's workloads some of its
 * knobs move alone (seq-read, seq-write). */
#define MAX_RESP 4

struct sfactor {
	const struct knob *k;
	const char *val[1 + TUNER_MAX_CANDS]; /* [0] the incumbent (owned copy, or NULL) */
	enum knob_src src0;
	unsigned nc;
	size_t col;    /* the fit's column of its candidate 1 (then 2, ...) */
	unsigned resp; /* the response it is fitted on */
};

struct screen {
	unsigned protos; /* what its measure calls measure */
	struct sfactor f[KNOB_COUNT];
	size_t k, p; /* factors; the fit's columns (intercept first) */
	unsigned ncand[KNOB_COUNT];
	struct tdesign_constraint cons[MAX_CONS];
	size_t ncons;
	struct tdesign des;
	struct tdesign_pair rep[TDESIGN_MAX_ORDER];
	size_t next, nrep; /* the replicate's next pair; replicates begun */
	unsigned per_side; /* runs each side of a pair (a daemon restart: more than one) */
	double *x;	   /* the fit's rows */
	/* Each response's pair differences, and its fit: a knob that moves only some of the
	 * goal's workloads is fitted on their part of the score, where the others' noise (a
	 * cold write spreads 20-30% where a read spreads 3%) is not. */
	unsigned rmask[MAX_RESP];
	double *y[MAX_RESP];
	struct tfit fit[MAX_RESP];
	struct tfit rest[MAX_RESP]; /* [r]: on the rest of the score, [0]'s y less [r]'s */
	size_t nresp;
	struct tdesign_pair *pairs;
	size_t rows, cap;
	double share; /* its replicate's price over all screens' (a tie's tie-break) */
	bool resolved, stopped, restarts;
	struct tfit_null null;
	char failed[400];
};

static const char *
screen_name(unsigned protos)
{
	static const struct {
		unsigned protos;
		const char *name;
	} names[] = {
		{ PROTO_SMB | TUNER_CLIENTS, "network-path screen (SMB, through the clients)" },
		{ PROTO_NFS | TUNER_CLIENTS, "network-path screen (NFS, through the clients)" },
		{ PROTO_AFP | TUNER_CLIENTS, "network-path screen (AFP, through the clients)" },
		{ PROTO_SMB, "SMB screen" },
		{ PROTO_NFS, "NFS screen" },
		{ PROTO_AFP, "AFP screen" }
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].protos == protos)
			return names[i].name;
	return protos & TUNER_CLIENTS ? "network-path screen (every protocol, through the clients)"
				      : "host screen";
}

/* Puts the levels lv[] of sc's factors in force. */
static void
put_levels(struct tstate *s, struct screen *sc, const unsigned char *lv)
{
	for (size_t f = 0; f < sc->k; f++) {
		const struct sfactor *x = &sc->f[f];

		ts_setk(s, x->k->id, x->val[lv[f]], lv[f] ? KNOB_TUNED : x->src0);
	}
}

/* The combinations of two factors' values that cannot be set together (a socket buffer above
 * the limit the other sets): for each candidate of b, each value of a checked with b's in the
 * model. a's candidate then goes back to the incumbent in such a run, or b's when a's
 * incumbent is what b's candidate cannot take. */
static void
constraints(struct tstate *s, struct screen *sc)
{
	char why[256];

	for (size_t b = 0; b < sc->k; b++)
		for (unsigned lb = 1; lb <= sc->f[b].nc; lb++) {
			enum knob_id bid = sc->f[b].k->id;
			char *keep = knob_value(s->m, bid) ? xstrdup(knob_value(s->m, bid)) : NULL;
			enum knob_src ksrc = knob_source(s->m, bid);

			tuner_set_knob(s->m, bid, sc->f[b].val[lb], KNOB_TUNED);
			for (size_t a = 0; a < sc->k; a++)
				for (unsigned la = 0; a != b && la <= sc->f[a].nc; la++) {
					const char *v = sc->f[a].val[la];

					if (!v || sc->ncons >= MAX_CONS ||
					    knob_allowed(s->m, sc->f[a].k, v, why, sizeof(why)))
						continue;
					sc->cons[sc->ncons++] =
						la ? (struct tdesign_constraint){ a, b, la, lb }
						   : (struct tdesign_constraint){ b, a, lb, 0 };
					ts_say(s, "tune: %s = %s never runs with %s = %s: %s",
					       la ? sc->f[a].k->name : sc->f[b].k->name,
					       la ? v : sc->f[b].val[lb],
					       la ? sc->f[b].k->name : sc->f[a].k->name,
					       la ? sc->f[b].val[lb] : (v ? v : "its default"),
					       why);
				}
			tuner_set_knob(s->m, bid, keep, ksrc);
			free(keep);
		}
}

/* The response a knob moving the goal's workloads wl is fitted on: their part of the score
 * (added to sc's responses when new), or [0], the whole score, when wl is all of goal's. */
static unsigned
response(struct screen *sc, unsigned wl, unsigned goal)
{
	if (!wl || wl == goal)
		return 0;
	for (unsigned r = 1; r < sc->nresp; r++)
		if (sc->rmask[r] == wl)
			return r;
	if (sc->nresp == MAX_RESP)
		return 0;
	sc->rmask[sc->nresp] = wl;
	return (unsigned)sc->nresp++;
}

/* Adds k (its candidates as ts_knob_cmp finds them) to the screen of its protocols. Returns
 * false, with d->reason, when k has no candidate to measure. */
static bool
screen_add(struct tstate *s, struct screen *scs, size_t *nscreens, const struct knob *k,
	   struct tuner_decision *d)
{
	struct cmp *c = ts_knob_cmp(s, k, d);
	struct screen *sc = NULL;
	struct sfactor *x;

	if (!c)
		return false;
	for (size_t i = 0; i < *nscreens && !sc; i++)
		if (scs[i].protos == c->protos)
			sc = &scs[i];
	if (!sc) {
		if (*nscreens >= MAX_SCREENS) {
			ts_cmp_release(c);
			free(c);
			return false;
		}
		sc = &scs[(*nscreens)++];
		memset(sc, 0, sizeof(*sc));
		sc->protos = c->protos;
		sc->per_side = 1;
		sc->rmask[0] = ~0u, sc->nresp = 1;
	}
	x = &sc->f[sc->k];
	x->k = k;
	x->resp = response(sc, k->workloads & s->o->wlmask, s->o->wlmask);
	x->src0 = c->src0;
	x->nc = (unsigned)c->nc;
	for (size_t j = 0; j <= c->nc; j++)
		x->val[j] = c->val[j];
	sc->ncand[sc->k++] = x->nc;
	/* A daemon restart per run costs more than the run and adds its own spread: two runs a
	 * side, each pair a restart apart (the spread between restarts is in the pairs'). */
	if (k->effect == KNOB_RESTART)
		sc->restarts = true, sc->per_side = 2;
	free(c); /* val[0] now the factor's */
	return true;
}

static void
screen_release(struct screen *sc)
{
	for (size_t f = 0; f < sc->k; f++)
		free((char *)sc->f[f].val[0]);
	free(sc->x);
	free(sc->pairs);
	for (size_t r = 0; r < sc->nresp; r++) {
		free(sc->y[r]);
		tfit_release(&sc->fit[r]);
		tfit_release(&sc->rest[r]);
	}
}

/* Seconds one pair of the n screens mem[] measured in the same runs costs: a switch of all
 * their knobs a side, and each screen's runs. */
static double
set_cost(const struct tstate *s, const struct screen *const *mem, size_t n)
{
	double runs = 0, unknown = 0;
	unsigned mask = 0;

	for (size_t i = 0; i < n; i++) {
		double r = ts_run_cost(s, mem[i]->protos);

		mask |= ts_own_switch(mem[i]->protos);
		runs += mem[i]->per_side * r;
		unknown += r > 0 ? 0 : mem[i]->per_side; /* not measured yet: a second a run */
	}
	return unknown > 0 ? 2.0 * (runs + unknown) : 2.0 * (ts_switch_cost(s, mask) + runs);
}

/* Seconds one pair of sc alone costs. */
static double
pair_cost(const struct tstate *s, const struct screen *sc)
{
	return set_cost(s, &sc, 1);
}

/* Whether a and b may be measured in the same runs: each acts on one protocol's server (or
 * its path through the clients), a different one, on the same side of the network. One
 * install a side then serves both, and one's knobs leave the other's score alone: a column
 * of a that moves b's runs would add to b's noise, never bias it (the columns are
 * independent). */
static bool
joins(const struct screen *a, const struct screen *b)
{
	unsigned pa = a->protos & ~TUNER_CLIENTS, pb = b->protos & ~TUNER_CLIENTS;

	return a != b && (a->protos & TUNER_CLIENTS) == (b->protos & TUNER_CLIENTS) &&
	       __builtin_popcount(pa) == 1 && __builtin_popcount(pb) == 1 && !(pa & pb);
}

static bool cand_effect(const struct screen *sc, size_t f, unsigned c, struct tune_effect *e);

/* The candidate of f the next replicate measures: the first in the cycle's order no pair has
 * reached, else the one with the fewest pairs but those a whole interval calls more than 10%
 * worse, else the cycle's (0). A -40% no longer takes the replicates an undecided one needs;
 * a candidate merely worse or bounded goes on (stopped there, an early fluke would stand:
 * placebos named worse in 148 of 2800, against 88 when every candidate went on). */
static unsigned
cand_next(const struct screen *sc, size_t f)
{
	unsigned best = 0;
	size_t fewest = SIZE_MAX;

	for (unsigned i = 0; i < sc->f[f].nc; i++) {
		unsigned c = tdesign_candidate(&sc->des, f, sc->des.rep + i);
		struct tune_effect e;

		if (!cand_effect(sc, f, c, &e))
			return c;
		if (e.verdict == TUNE_WORSE && e.hi < -TUNE_BOUND_MAX)
			continue;
		if (e.n < fewest)
			fewest = e.n, best = c;
	}
	return best;
}

/* sc's next pair of its design, a new replicate begun when the last is done. */
static const struct tdesign_pair *
pair_next(struct screen *sc)
{
	if (sc->next >= sc->des.order || !sc->nrep) {
		for (size_t f = 0; f < sc->k; f++)
			sc->des.want[f] = sc->f[f].nc > 1 ? cand_next(sc, f) : 0;
		tdesign_replicate(&sc->des, sc->rep);
		sc->next = 0;
		sc->nrep++;
	}
	return &sc->rep[sc->next];
}

/* sc's pair pr measured: a - b, the two sides' mean log scores (each response's), added to
 * its rows. */
static void
pair_record(struct screen *sc, const struct tdesign_pair *pr, const double *a, const double *b)
{
	double *row;

	sc->next++;
	if (sc->rows == sc->cap) {
		sc->cap = sc->cap ? 2 * sc->cap : 64;
		sc->x = xreallocarray(sc->x, sc->cap * sc->p, sizeof(*sc->x));
		for (size_t r = 0; r < sc->nresp; r++)
			sc->y[r] = xreallocarray(sc->y[r], sc->cap, sizeof(*sc->y[r]));
		sc->pairs = xreallocarray(sc->pairs, sc->cap, sizeof(*sc->pairs));
	}
	row = sc->x + sc->rows * sc->p;
	memset(row, 0, sc->p * sizeof(*row));
	row[0] = 1; /* a drift between a pair's two runs */
	for (size_t f = 0; f < sc->k; f++)
		for (unsigned c = 1; c <= sc->f[f].nc; c++)
			row[sc->f[f].col + c - 1] = (pr->first[f] == c) - (pr->second[f] == c);
	for (size_t r = 0; r < sc->nresp; r++)
		sc->y[r][sc->rows] = a[r] - b[r];
	sc->pairs[sc->rows++] = *pr;
}

/* The mean log of v[0..n). */
static double
mean_log(const double *v, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		m += log(v[i] > 1e-9 ? v[i] : 1e-9) / (double)n;
	return m;
}

/* per_side runs of sc on the configuration in force (installed once for every screen of the
 * side); each response's mean log score in ls[]. */
static int
run_side(struct tstate *s, struct screen *sc, double *ls)
{
	struct bench_results got = { 0 };
	double v[4];
	int rc;

	if ((rc = ts_measure(s, sc->protos, sc->per_side, 0, v, sc->nresp > 1 ? &got : NULL)) < 0) {
		bench_results_clear(&got); /* a failed call may have kept some */
		return rc;
	}
	ls[0] = mean_log(v, sc->per_side);
	for (size_t r = 1; r < sc->nresp; r++) {
		double *part = NULL;
		size_t n = 0;

		if (tune_scores_part(&got, 0, sc->rmask[r], &part, &n) < 0 || n < sc->per_side)
			ls[r] = ls[0]; /* cannot happen: the scores came from these results */
		else
			ls[r] = mean_log(part, sc->per_side);
		free(part);
	}
	bench_results_clear(&got);
	return 0;
}

/* The next pair of each of the n screens mem[] (joins() each other), measured in the same
 * runs: each side puts every screen's levels in force, then measures each on its own
 * protocol. A failure leaves every screen's rows as they were and, in *who, the screen whose
 * measurement failed (the install, when it was the first). */
static int
joint_pair(struct tstate *s, struct screen **mem, size_t n, struct screen **who)
{
	const struct tdesign_pair *pr[MAX_SCREENS];
	double ls[MAX_SCREENS][2][MAX_RESP];
	int rc;

	for (size_t i = 0; i < n; i++)
		pr[i] = pair_next(mem[i]);
	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < n; i++)
			put_levels(s, mem[i], side ? pr[i]->second : pr[i]->first);
		for (size_t i = 0; i < n; i++)
			if ((rc = run_side(s, mem[i], ls[i][side])) < 0) {
				*who = mem[i];
				return rc;
			}
	}
	for (size_t i = 0; i < n; i++)
		pair_record(mem[i], pr[i], ls[i][0], ls[i][1]);
	return 0;
}

/* The null check's contrasts: each replicate's unused columns over its rows. */
static void
null_check(struct screen *sc)
{
	size_t q = 0, n = sc->fit[0].n, per = sc->pairs[0].nnull, reps = sc->pairs[n - 1].rep + 1;
	signed char *z;

	if (!per) {
		memset(&sc->null, 0, sizeof(sc->null));
		return;
	}
	z = xcalloc(reps * per * n, sizeof(*z));
	for (size_t i = 0; i < n; i++)
		for (size_t u = 0; u < per; u++)
			z[(sc->pairs[i].rep * per + u) * n + i] = sc->pairs[i].null[u];
	q = reps * per;
	tfit_null_check(&sc->fit[0], z, q, &sc->null);
	free(z);
}

/* The response factor f is fitted on: its part of the score while the rest of the score shows
 * no effect of any of its candidates beyond +-5% (and outside a 99.8% interval: the rest
 * carries the noisier workloads, and every refit looks again); else, the knob moving workloads the
 * table does not name for it, the whole score. In the lab, smb.min_receivefile_size made
 * writes 3.7x faster and reads 3.7x slower: on the writes' part alone a +85% "gain". */
static unsigned
resp_of(const struct screen *sc, size_t f)
{
	unsigned r = sc->f[f].resp;

	for (unsigned c = 1; r && c <= sc->f[f].nc; c++) {
		size_t j = sc->f[f].col + c - 1;
		double lo, hi;

		if (!sc->rest[r].ok || !isfinite(sc->rest[r].se[j]))
			continue;
		tfit_interval(&sc->rest[r], j, 0.001, &lo, &hi);
		if ((lo > 0 || hi < 0) && fabs(sc->rest[r].b[j]) > log1p(TUNE_BOUND_GOAL))
			r = 0;
	}
	return r;
}

/* Candidate c of factor f as the fit has it: the effect and interval (ratios - 1), the pairs
 * that measured it, delta. false: not reached (no pair, or no fit). */
static bool
cand_effect(const struct screen *sc, size_t f, unsigned c, struct tune_effect *e)
{
	size_t j = sc->f[f].col + c - 1, n = 0;
	const struct tfit *fit = &sc->fit[resp_of(sc, f)];
	const double *y = sc->y[resp_of(sc, f)];
	double lo, hi;

	memset(e, 0, sizeof(*e));
	e->more = SIZE_MAX;
	e->runs = 2 * sc->rows * sc->per_side;
	for (size_t i = 0; i < sc->rows; i++)
		n += sc->x[i * sc->p + j] != 0;
	e->n = n;
	if (!n) {
		e->verdict = TUNE_NOT_REACHED;
		return false;
	}
	if (!fit->ok || !isfinite(fit->se[j])) {
		/* measured, but too few pairs for the fit: its contrast alone, no interval, and
		 * what would bound it from the pairs' spread */
		double sum = 0, sq = 0, sd;

		for (size_t i = 0; i < sc->rows; i++) {
			sum += sc->x[i * sc->p + j] * y[i];
			sq += y[i] * y[i];
		}
		sd = sc->rows > 1 ? sqrt(sq / (double)(sc->rows - 1)) : 0.2;
		e->est = expm1(sum / (double)n);
		e->lo = -INFINITY;
		e->hi = INFINITY;
		e->verdict = TUNE_UNDECIDED;
		e->more_runs = (size_t)ceil(pow(1.645 * sd / log1p(TUNE_BOUND_GOAL), 2) *
					    (double)sc->rows / (double)n) *
			       2 * sc->per_side;
		return true;
	}
	for (size_t i = e->n = 0; i < fit->n; i++) /* the pairs the fit rests on */
		e->n += sc->x[i * sc->p + j] != 0;
	tfit_interval(fit, j, SCREEN_ALPHA, &lo, &hi);
	e->est = expm1(fit->b[j]);
	e->lo = expm1(lo);
	e->hi = expm1(hi);
	e->delta = fmax(fabs(e->lo), fabs(e->hi));
	if (e->hi < 0 && e->est <= -TUNE_MIN_GAIN)
		e->verdict = TUNE_WORSE;
	else if (e->lo > 0 && e->est >= TUNE_MIN_GAIN)
		e->verdict = TUNE_BETTER; /* apparent: the confirmation decides */
	else if (e->delta <= TUNE_MIN_GAIN)
		e->verdict = TUNE_SAME;
	else if (e->delta <= TUNE_BOUND_MAX)
		e->verdict = TUNE_BOUNDED;
	else
		e->verdict = TUNE_UNDECIDED;
	return true;
}

/* Whether every candidate of sc is resolved: worse, an apparent gain, or bounded within the
 * goal's +-5%. */
static bool
resolved(const struct screen *sc)
{
	if (sc->nrep < SCREEN_MIN_REPS || sc->next < sc->des.order || !sc->fit[0].ok)
		return false;
	for (size_t f = 0; f < sc->k; f++)
		for (unsigned c = 1; c <= sc->f[f].nc; c++) {
			struct tune_effect e;

			if (!cand_effect(sc, f, c, &e) || !isfinite(e.lo) || !isfinite(e.hi))
				return false;
			if (e.verdict != TUNE_WORSE && e.verdict != TUNE_BETTER &&
			    e.delta > TUNE_BOUND_GOAL)
				return false;
		}
	return true;
}

/* Whether sc has rows enough for a fit with SCREEN_MIN_DF residual degrees of freedom: its
 * columns that some row sets (a candidate no replicate tried yet has none) and the intercept
 * against its rows. Fewer leave the noise, and so every interval, unknown. */
static bool
fittable(const struct screen *sc)
{
	size_t used = 0;

	for (size_t j = 0; j < sc->p; j++)
		for (size_t i = 0; i < sc->rows; i++)
			if (sc->x[i * sc->p + j] != 0) {
				used++;
				break;
			}
	return sc->rows >= used + SCREEN_MIN_DF;
}

/* Fits sc on its rows; when they leave a column without information of its own, on its
 * rows but the replicate begun last. That replicate's first pairs bring the next candidate
 * of every multi-candidate knob, each on the same row or two: identical columns, and no fit
 * for any knob of the screen. */
static void
refit(struct screen *sc)
{
	size_t n = sc->rows;

	for (size_t r = 0; r < sc->nresp; r++) { /* no part's fit outlives the whole's */
		tfit_release(&sc->fit[r]);
		tfit_release(&sc->rest[r]);
		sc->fit[r].ok = sc->rest[r].ok = false;
	}
	memset(&sc->null, 0, sizeof(sc->null)); /* a failed fit has no null check either */
	if (tfit_fit(sc->x, sc->y[0], n, sc->p, true, &sc->fit[0]) < 0) {
		while (n > 0 && sc->pairs[n - 1].rep == sc->pairs[sc->rows - 1].rep)
			n--;
		if (!n || tfit_fit(sc->x, sc->y[0], n, sc->p, true, &sc->fit[0]) < 0)
			return;
	}
	/* the same rows: the same columns, so the same fit or none */
	for (size_t r = 1; r < sc->nresp; r++) {
		double *rest = xmalloc(n * sizeof(*rest));

		for (size_t i = 0; i < n; i++)
			rest[i] = sc->y[0][i] - sc->y[r][i];
		(void)tfit_fit(sc->x, sc->y[r], n, sc->p, true, &sc->fit[r]);
		(void)tfit_fit(sc->x, rest, n, sc->p, true, &sc->rest[r]);
		free(rest);
	}
	null_check(sc);
}

/* What an undecided candidate needs to be bounded to +-5%: its interval narrows as the square
 * root of its pairs; runs count every run of the screen (its pairs are a share of them). */
static void
more_runs(const struct tstate *s, const struct screen *sc, struct tune_effect *e)
{
	double h = (log1p(e->hi) - log1p(e->lo)) / 2, want, share;

	if (!isfinite(h)) { /* too few pairs for the fit: cand_effect's rough count */
		e->more_s = (double)e->more_runs / (2.0 * sc->per_side) * pair_cost(s, sc);
		return;
	}
	if (!(h > 0) || !e->n)
		return;
	want = ceil((double)e->n * (h / log1p(TUNE_BOUND_GOAL)) * (h / log1p(TUNE_BOUND_GOAL)));
	share = (double)e->n / (double)sc->rows;
	e->more_runs = (size_t)ceil((want - (double)e->n) / share) * 2 * sc->per_side;
	e->more_s = (double)e->more_runs / (2.0 * sc->per_side) * pair_cost(s, sc);
}

/* The head of f's reason: "no effect beyond +-2.0% on seq-read, the workload it moves: ";
 * its length. A knob fitted on its part says where its bounds hold. */
static size_t
verdict_words(const struct screen *sc, size_t f, struct tuner_decision *d)
{
	unsigned r = resp_of(sc, f);
	size_t len;

	if (d->verdict == TUNE_BOUNDED)
		len = (size_t)snprintf(d->reason, sizeof(d->reason), "no effect beyond +-%.1f%%",
				       100 * d->e.delta);
	else
		len = (size_t)snprintf(d->reason, sizeof(d->reason), "%s",
				       tune_verdict_name(d->verdict));
	if (r && len < sizeof(d->reason)) {
		char wl[64];

		len += (size_t)snprintf(d->reason + len, sizeof(d->reason) - len,
					" on %s, the workload%s it moves",
					ts_wl_names(sc->rmask[r], wl, sizeof(wl)),
					__builtin_popcount(sc->rmask[r]) > 1 ? "s" : "");
	}
	if (len + 2 < sizeof(d->reason))
		len += (size_t)snprintf(d->reason + len, sizeof(d->reason) - len, ": ");
	return len;
}

/* Writes f's decision from the fit: every candidate's effect, the knob's verdict (the weakest
 * of its candidates': undecided, then not reached, then bounded, then same, then worse), and
 * the apparent gain with the largest estimate into *gain (0: none). */
static void
screen_decide(struct tstate *s, const struct screen *sc, size_t f, unsigned *gain)
{
	const struct sfactor *x = &sc->f[f];
	struct tuner_decision *d = &s->r->dec[x->k->id];
	size_t len, tell = SIZE_MAX, reached = 0;
	static const int rank[] = {
		[TUNE_UNDECIDED] = 0, [TUNE_NOT_REACHED] = 1, [TUNE_BOUNDED] = 2,
		[TUNE_SAME] = 3,      [TUNE_WORSE] = 4,	      [TUNE_BETTER] = 5
	};
	enum knob_id id = x->k->id;
	int worst = 5;

	*gain = 0;
	d->tried = true;
	d->ncand = 0;
	d->by_clients = (sc->protos & TUNER_CLIENTS) != 0;
	d->part = resp_of(sc, f) ? sc->rmask[resp_of(sc, f)] : 0;
	d->rest_b = d->rest_se = 0;
	len = (size_t)snprintf(d->design, sizeof(d->design),
			       "%s: %zu-run array, folded, %zu replicate%s%s",
			       screen_name(sc->protos), sc->des.order, sc->nrep,
			       sc->nrep == 1 ? "" : "s", sc->restarts ? ", 2 runs a restart" : "");
	if (x->resp && len < sizeof(d->design)) {
		char wl[64];

		ts_wl_names(sc->rmask[x->resp], wl, sizeof(wl));
		snprintf(d->design + len, sizeof(d->design) - len,
			 resp_of(sc, f) ? ", fitted on %s alone"
					: ", fitted on the whole score: it moved more than %s",
			 wl);
	}
	for (unsigned c = 1; c <= x->nc; c++) {
		struct tune_effect e;

		cand_effect(sc, f, c, &e);
		if (e.verdict == TUNE_UNDECIDED)
			more_runs(s, sc, &e);
		if (e.verdict != TUNE_NOT_REACHED) {
			reached++;
			/* the candidate told: one with an interval before one without (a
			 * candidate a replicate just began rests on a pair or two), then the
			 * largest estimate */
			bool fin = isfinite(e.lo) && isfinite(e.hi),
			     tfin = tell != SIZE_MAX && isfinite(d->cand[tell].e.lo) &&
				    isfinite(d->cand[tell].e.hi);

			if (tell == SIZE_MAX || (fin && !tfin) ||
			    (fin == tfin && fabs(e.est) > fabs(d->cand[tell].e.est)))
				tell = d->ncand;
		}
		if (e.verdict == TUNE_BETTER && (!*gain || e.est > d->cand[*gain - 1].e.est))
			*gain = c;
		if (rank[e.verdict] < worst && e.verdict != TUNE_BETTER)
			worst = rank[e.verdict];
		snprintf(d->cand[d->ncand].value, sizeof(d->cand[d->ncand].value), "%s", x->val[c]);
		d->cand[d->ncand++].e = e;
	}
	for (int v = TUNE_UNDECIDED; v <= TUNE_NOT_REACHED; v++)
		if (rank[v] == worst)
			d->verdict = (enum tune_verdict)v;
	if (!reached)
		d->verdict = TUNE_NOT_REACHED;
	d->e = tell != SIZE_MAX ? d->cand[*gain ? *gain - 1 : tell].e : d->cand[0].e;
	for (size_t j = 0; d->verdict == TUNE_UNDECIDED && j < d->ncand; j++)
		if (d->cand[j].e.verdict == TUNE_UNDECIDED &&
		    (d->e.verdict != TUNE_UNDECIDED || d->cand[j].e.more_runs > d->e.more_runs))
			d->e = d->cand[j].e; /* what would bound it: the most any candidate needs */
	if (d->verdict != TUNE_NOT_REACHED && d->verdict != TUNE_UNDECIDED) {
		/* bounded, same or worse: the widest reach among its candidates not worse */
		for (size_t j = 0; j < d->ncand; j++)
			if (d->cand[j].e.verdict == TUNE_BOUNDED ||
			    d->cand[j].e.verdict == TUNE_SAME)
				if (d->cand[j].e.delta > d->e.delta || d->e.verdict == TUNE_WORSE)
					d->e = d->cand[j].e;
	}
	if (*gain && d->part && sc->rest[resp_of(sc, f)].ok) {
		const struct tfit *rf = &sc->rest[resp_of(sc, f)];
		size_t j = x->col + *gain - 1;

		d->rest_b = rf->b[j];
		d->rest_se = isfinite(rf->se[j]) ? rf->se[j] : 0;
	}
	len = verdict_words(sc, f, d);
	for (size_t j = 0; j < d->ncand && len + 4 < sizeof(d->reason); j++) {
		if (j)
			len += (size_t)snprintf(d->reason + len, sizeof(d->reason) - len, "; ");
		if (len < sizeof(d->reason))
			len += ts_cand_words(d->reason + len, sizeof(d->reason) - len,
					     d->cand[j].value, &d->cand[j].e);
	}
	/* An apparent gain goes to the confirmation, which says what is kept: an applied knob's
	 * reason said "(the default) kept" after the screen's words. */
	if (len + 2 < sizeof(d->reason) && !*gain)
		snprintf(d->reason + len, sizeof(d->reason) - len, "; %s kept",
			 x->val[0] ? x->val[0] : "(the default)");
	(void)id;
}

/* The screens' turn: the one least advanced, the cheaper on a tie, among those still going;
 * NULL when none is. Advance is first towards a screen's first fit (an interval for each of
 * its knobs: the intercept, a column a knob and SCREEN_MIN_DF rows more), then in replicates.
 * A time share priced before any screen ran (a restart or a client run costs several times
 * what the start measured) left the SMB screen 4 pairs, short of its 9, where the AFP
 * screens had 6 to 11. */
static struct screen *
next_screen(struct screen *scs, size_t n)
{
	struct screen *best = NULL;
	double bp = 0;

	for (size_t i = 0; i < n; i++) {
		struct screen *sc = &scs[i];
		double need = (double)(1 + sc->k + SCREEN_MIN_DF), rows = (double)sc->rows;
		double p = rows < need ? rows / need
				       : 1 + (rows - need) / (double)(sc->des.order ? sc->des.order
										    : 1);

		if (sc->resolved || sc->stopped)
			continue;
		if (!best || p < bp || (p == bp && sc->share < best->share))
			best = sc, bp = p;
	}
	return best;
}

struct screens {
	struct screen v[MAX_SCREENS];
	size_t n;
	bool solo; /* each screen's pairs alone (a joint pair failed) */
};

/* Pairs a confirmation of an apparent gain of est needs to find it at about 90% power at a
 * level near the confirmations' (z 2.14 + 1.28 = 3.42), when a pair's difference spreads by sd:
 * at least what its level needs for an interval (least), at most four times the first look. */
static double
confirm_pairs(double est, double sd, unsigned least)
{
	double g = log1p(fmax(est, TUNE_MIN_GAIN)), n = ceil(pow(3.42 * sd / g, 2));

	return fmax(fmin(n, 4.0 * tune_looks[0]), least);
}

/* What confirming x's apparent gains (not final) would take now: their pairs, each a
 * confirmation's one-run sides on its screen's protocols. */
static double
confirm_reserve(const struct tstate *s, const struct screens *x, const bool *final)
{
	double r = 0, gain[KNOB_COUNT] = { 0 }, sd[KNOB_COUNT] = { 0 };
	unsigned protos[KNOB_COUNT] = { 0 };
	size_t m = 0;

	for (size_t i = 0; i < x->n; i++) {
		const struct screen *sc = &x->v[i];

		if (!sc->fit[0].ok)
			continue;
		for (size_t f = 0; f < sc->k; f++) {
			double best = 0;

			if (final[sc->f[f].k->id])
				continue;
			for (unsigned c = 1; c <= sc->f[f].nc; c++) {
				struct tune_effect e;

				if (cand_effect(sc, f, c, &e) && e.verdict == TUNE_BETTER)
					best = fmax(best, e.est);
			}
			if (best > 0) {
				enum knob_id id = sc->f[f].k->id;
				unsigned rr = resp_of(sc, f); /* its confirmation's response */

				m++;
				gain[id] = best, protos[id] = sc->protos;
				sd[id] = sc->fit[rr].ok ? sc->fit[rr].sigma : sc->fit[0].sigma;
			}
		}
	}
	for (size_t id = 0; id < KNOB_COUNT; id++)
		if (gain[id] > 0)
			r += confirm_pairs(gain[id], sd[id], ts_confirm_min_pairs(s, m)) * 2 *
			     ts_slot_cost(s, protos[id]);
	return r;
}

/* Builds the screens of every eligible knob not decided yet (not the MTU, not the CPU tier),
 * each knob's values into vals (KNOB_COUNT rows; the caller frees them); a knob with no
 * candidate is decided here. */
struct screens *
ts_screens_begin(struct tstate *s, char *vals[][1 + TUNER_MAX_CANDS])
{
	struct screens *x = xcalloc(1, sizeof(*x));
	struct screen *scs = x->v;
	double total = 0;

	for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
		struct tuner_decision *d = &s->r->dec[k->id];

		if (d->reason[0] || ts_is_leader(k) || k->id == KNOB_NET_MTU)
			continue;
		if (!screen_add(s, scs, &x->n, k, d))
			ts_decided(s, d);
	}
	for (size_t i = 0; i < x->n; i++) {
		struct screen *sc = &scs[i];

		for (size_t f = 0; f < sc->k; f++)
			for (unsigned c = 0; c <= sc->f[f].nc; c++)
				vals[sc->f[f].k->id][c] =
					sc->f[f].val[c] ? xstrdup(sc->f[f].val[c]) : NULL;
		if (tdesign_init(&sc->des, sc->k, sc->ncand, NULL, 0, 0x5bd1e995u + i) < 0) {
			sc->stopped = true; /* more knobs than the largest array: cannot happen
					     * with the table's 23 */
			continue;
		}
		constraints(s, sc);
		tdesign_init(&sc->des, sc->k, sc->ncand, sc->cons, sc->ncons, 0x5bd1e995u + i);
		sc->p = 1;
		for (size_t f = 0; f < sc->k; f++) {
			sc->f[f].col = sc->p;
			sc->p += sc->f[f].nc;
		}
		sc->share = (double)sc->des.order * pair_cost(s, sc);
		total += sc->share;
		ts_say(s,
		       "tune: %s: %zu knob(s) in a %zu-run two-level array, folded (%zu pairs a "
		       "replicate, about %.1fs)",
		       screen_name(sc->protos), sc->k, sc->des.order, sc->des.order, sc->share);
	}
	for (size_t i = 0; i < x->n; i++)
		scs[i].share = total > 0 ? scs[i].share / total : 1;
	return x;
}

/* Whether pairs costing cost fit before until (0: the budget) with reserve kept. */
static bool
pair_fits(struct tstate *s, double cost, double until, double reserve)
{
	return ts_fits(s, cost + reserve) && (until <= 0 || ts_now(s) + cost + reserve <= until);
}

/* The screens measured with lead in its next pair: lead, then every other still going that
 * joins() all of them while the time holds their pairs too (x->solo: none, after a joint pair
 * failed, until a pair alone has said whose the failure is). */
static size_t
members(struct tstate *s, struct screens *x, struct screen *lead, double until, double reserve,
	struct screen **mem)
{
	size_t n = 0;

	mem[n++] = lead;
	for (size_t i = 0; i < x->n && !x->solo; i++) {
		struct screen *o = &x->v[i];
		bool ok = !o->resolved && !o->stopped && o->rows < s->o->pairs;

		for (size_t j = 0; ok && j < n; j++)
			ok = joins(mem[j], o);
		mem[n] = o;
		if (ok && pair_fits(s, set_cost(s, (const struct screen *const *)mem, n + 1), until,
				    reserve))
			n++;
	}
	return n;
}

/* Runs x's pairs until each screen is resolved, has o->pairs pairs, or the time is spent:
 * until `until` (0: the budget), less what confirming the apparent gains so far would take
 * (final: the knobs a confirmation decided already), and never less than hold seconds. The
 * configuration in force before is put back after. *ran: the pairs measured. Returns 0 or
 * -EINTR. */
int
ts_screens_run(struct tstate *s, struct screens *x, double until, const bool *final, double hold,
	       size_t *ran)
{
	struct snap before = { 0 };
	double reserve = fmax(hold, confirm_reserve(s, x, final));
	int rc = 0;

	*ran = 0;
	ts_snap_take(&before, s->m);
	for (struct screen *sc; rc == 0 && (sc = next_screen(x->v, x->n));) {
		struct screen *mem[MAX_SCREENS], *who = sc;
		size_t n;

		if (!pair_fits(s, pair_cost(s, sc), until, reserve) || sc->rows >= s->o->pairs) {
			sc->stopped = true;
			continue;
		}
		n = members(s, x, sc, until, reserve, mem);
		if ((rc = joint_pair(s, mem, n, &who)) < 0) {
			if (rc == -EINTR)
				break;
			rc = 0;
			/* The failed pair's levels would go on into every later install. */
			ts_snap_put(s, &before);
			x->solo = n > 1; /* whose, the next pairs alone will say */
			if (n == 1) {
				snprintf(who->failed, sizeof(who->failed), "%.390s", s->err);
				who->stopped = true;
			}
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			(*ran)++;
			if (mem[i]->next == mem[i]->des.order && fittable(mem[i])) {
				refit(mem[i]);
				mem[i]->resolved = resolved(mem[i]);
				reserve = fmax(hold, confirm_reserve(s, x, final));
			}
		}
	}
	ts_snap_put(s, &before);
	ts_snap_release(&before);
	/* A screen stopped for the time may go on when a confirmation hands some back. */
	for (size_t i = 0; i < x->n; i++)
		x->v[i].stopped = x->v[i].stopped && x->v[i].failed[0];
	return rc;
}

/* " (seq-read's part 3%, seq-write's 21%)": each partial response's spread, "" when none. */
static const char *
parts(const struct screen *sc, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t r = 1; r < sc->nresp && n < len; r++) {
		char wl[64];

		if (sc->fit[r].ok)
			n += (size_t)snprintf(buf + n, len - n, "%s%s's part %.0f%%",
					      n ? ", " : " (",
					      ts_wl_names(sc->rmask[r], wl, sizeof(wl)),
					      100 * expm1(sc->fit[r].sigma));
	}
	if (n && n + 1 < len)
		snprintf(buf + n, len - n, ")");
	return buf;
}

/* Decides each knob of x not final from its screen's fit: costs and bounds, and in gains[]
 * (KNOB_COUNT, 0: none) the candidate (1-based, in vals[id]) of each apparent gain. */
void
ts_screens_decide(struct tstate *s, struct screens *x, const bool *final, unsigned *gains)
{
	for (size_t i = 0; i < x->n; i++) {
		struct screen *sc = &x->v[i];
		char spread[200];

		if (fittable(sc))
			refit(sc);
		if (sc->null.q)
			ts_say(s,
			       "tune: %s: %zu pairs, a pair's difference spread %.0f%%%s; null "
			       "check of %zu unused columns: %s (mean square %.2f)",
			       screen_name(sc->protos), sc->rows, 100 * expm1(sc->fit[0].sigma),
			       parts(sc, spread, sizeof(spread)), sc->null.q,
			       sc->null.ok ? "consistent" : "more spread than the noise model",
			       sc->null.mean_sq);
		else
			ts_say(s, "tune: %s: %zu pairs", screen_name(sc->protos), sc->rows);
		for (size_t f = 0; f < sc->k; f++) {
			struct tuner_decision *d = &s->r->dec[sc->f[f].k->id];
			enum knob_id id = sc->f[f].k->id;

			gains[id] = 0;
			if (final[id])
				continue;
			if (sc->failed[0] && !sc->rows) {
				snprintf(d->reason, sizeof(d->reason), "failed: %.400s",
					 sc->failed);
				d->tried = true;
				ts_decided(s, d);
			} else {
				screen_decide(s, sc, f, &gains[id]);
				if (!gains[id])
					ts_decided(s, d);
			}
		}
	}
}

void
ts_screens_end(struct screens *x)
{
	for (size_t i = 0; i < x->n; i++)
		screen_release(&x->v[i]);
	free(x);
}
