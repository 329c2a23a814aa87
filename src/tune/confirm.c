/* tune/confirm.c - the confirmation of what a tune would change, and the gate. The proposed
 * configuration P is the incumbent with the screens' apparent gains; each gain is confirmed
 * on fresh runs, P against P without it, paired, at the confirmations' share of the
 * false-positive budget split m ways. Only confirmed gains are applied. At the end, the gate:
 * if the chosen configuration measures worse against the start than its changes imply, only
 * the largest single change stays ("interaction suspected"). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "xmalloc.h"

/* The protocols a gain's confirmation measures: its screen's. */
static unsigned
gain_protos(const struct tstate *s, const struct knob *k)
{
	unsigned p = ts_knob_protos(s, k);

	if (s->o->clients_decide && s->ops->clients && ts_on_path(k))
		p |= TUNER_CLIENTS;
	return p;
}

/* The fewest pairs a confirmation of one of m gains needs for an interval at its level: the
 * first look at which all pairs one way (probability 2^-n) reaches it. */
unsigned
ts_confirm_min_pairs(const struct tstate *s, size_t m)
{
	double level = ts_look_level(s, s->alpha_conf / (double)(m ? m : 1), 0);

	for (unsigned i = 0; i < s->nlooks; i++)
		if (ldexp(1.0, -(int)s->looks[i]) <= level)
			return s->looks[i];
	return s->looks[s->nlooks - 1];
}

/* futile: e is the interval at the "same" level of a futile stop (short of +3%); at90: that of
 * a gain neither confirmed nor ruled out at its own level. */
static void
effect_words(char *buf, size_t len, const struct tune_effect *e, unsigned least, bool at90,
	     bool futile)
{
	if (isfinite(e->lo) && isfinite(e->hi))
		snprintf(buf, len, "%+.1f%% [%+.1f%%, %+.1f%%]%s, %zu pairs", 100 * e->est,
			 100 * e->lo, 100 * e->hi,
			 futile ? " at 90%: short of +3%"
			 : at90 ? " at 90%"
				: "",
			 e->n);
	else
		snprintf(buf, len, "%+.1f%%, %zu pairs: its level needs %u for an interval",
			 100 * e->est, e->n, least);
}

/* A confirmation's effect e, with the runs it rests on: the screen's (runs) and its own. */
static struct tune_effect
with_runs(struct tune_effect e, size_t runs)
{
	e.runs = runs + 2 * e.n;
	return e;
}

/* The verdict of a gain the confirmation did not confirm: what its pairs say (e; NULL: it had
 * none), as a bound when they bound it (on: " on seq-write" when it was confirmed on a part),
 * undecided when they lean to the gain (lean: the more pairs that would confirm it). */
static void
unconfirmed(struct tstate *s, struct tuner_decision *d, const struct tune_effect *e,
	    unsigned protos, unsigned least, const char *v, const char *words, const char *on,
	    size_t lean)
{
	char screen[sizeof(d->reason)], more[128] = "";

	snprintf(screen, sizeof(screen), "%s", d->reason);
	if (!e) {
		/* no time for a pair: the screen's figures stand, unconfirmed */
		d->verdict = TUNE_UNDECIDED;
		d->e.more_runs = 2 * (size_t)least; /* the pairs the confirmation needs */
		d->e.more_s = (double)d->e.more_runs * ts_slot_cost(s, protos);
		snprintf(d->reason, sizeof(d->reason),
			 "undecided: %.60s not confirmed (%.100s; about %zu more runs, %.0fs, "
			 "would bound it to +-5%%); the screen said: %.250s",
			 v, words, d->e.more_runs, d->e.more_s, screen);
		return;
	}
	d->e = with_runs(*e, d->e.runs);
	d->e.delta = isfinite(e->lo) && isfinite(e->hi) ? fmax(fabs(e->lo), fabs(e->hi)) : 0;
	if (lean) {
		/* better at 90%, short of its level: neither a gain nor a bound */
		d->verdict = TUNE_UNDECIDED;
		d->e.more_runs = 2 * lean;
		d->e.more_s = (double)d->e.more_runs * ts_slot_cost(s, protos);
		snprintf(d->reason, sizeof(d->reason),
			 "undecided: %.60s not confirmed%.32s: it leans to a gain (%.100s); about "
			 "%zu more runs, %.0fs, would confirm it at its level; the screen said: "
			 "%.180s",
			 v, on, words, d->e.more_runs, d->e.more_s, screen);
		return;
	}
	if (e->verdict == TUNE_WORSE)
		d->verdict = TUNE_WORSE;
	else if (e->verdict == TUNE_SAME)
		d->verdict = TUNE_SAME;
	else if (d->e.delta > 0 && d->e.delta <= TUNE_BOUND_MAX)
		d->verdict = d->e.delta <= TUNE_MIN_GAIN ? TUNE_SAME : TUNE_BOUNDED;
	else
		d->verdict = TUNE_UNDECIDED;
	if (d->verdict == TUNE_UNDECIDED) {
		/* what would bound it to +-5%: the pairs' interval narrows as their square root */
		double h = isfinite(e->lo) && isfinite(e->hi) ? (log1p(e->hi) - log1p(e->lo)) / 2
							      : 0,
		       want = h > 0 ? ceil((double)e->n * pow(h / log1p(TUNE_BOUND_GOAL), 2))
				    : (double)(e->n + 16);

		d->e.more_runs = 2 * (size_t)fmax(2, want - (double)e->n);
		d->e.more_s = (double)d->e.more_runs * ts_slot_cost(s, protos);
		snprintf(more, sizeof(more),
			 "; about %zu more runs, %.0fs, would bound it to +-5%%", d->e.more_runs,
			 d->e.more_s);
	}
	if (d->verdict == TUNE_BOUNDED)
		snprintf(d->reason, sizeof(d->reason),
			 "no effect beyond +-%.1f%%%.32s: %.60s not confirmed (%.100s); the screen "
			 "said: %.250s",
			 100 * d->e.delta, on, v, words, screen);
	else
		snprintf(d->reason, sizeof(d->reason),
			 "%s: %.60s not confirmed (%.100s%s); the screen said: %.250s",
			 tune_verdict_name(d->verdict), v, words, more, screen);
}

/* The rest of the score's effect of a gain confirmed on its part (c->part), in log: the
 * screen's estimate and the confirmation's pairs' mean, weighted by their precision, into *b
 * and its standard error *se. false: neither says anything. */
static bool
rest_effect(const struct tuner_decision *d, const struct cand *x, double *b, double *se)
{
	double sum = 0, sq = 0, mean, w = 0, s1;

	*b = *se = 0;
	if (x->n >= 2 && x->r) {
		for (size_t i = 0; i < x->n; i++)
			sum += x->r[i];
		mean = sum / (double)x->n;
		for (size_t i = 0; i < x->n; i++)
			sq += (x->r[i] - mean) * (x->r[i] - mean);
		s1 = sqrt(sq / (double)(x->n - 1) / (double)x->n);
		if (s1 > 0)
			w += 1 / (s1 * s1), *b += mean / (s1 * s1);
	}
	if (d->rest_se > 0)
		w += 1 / (d->rest_se * d->rest_se), *b += d->rest_b / (d->rest_se * d->rest_se);
	if (!(w > 0))
		return false;
	*b /= w;
	*se = 1 / sqrt(w);
	return true;
}

/* A gain confirmed on its part: its effect on the whole score into *net (the part's with the
 * rest's added, the bounds widened by the rest's at 90%: what the gate and the headline use),
 * the rest's words into words ("; the rest of the score -1.0% [-4.3%, +2.4%] at 90%"), and
 * whether the rest paid for it: the whole score's estimate below +1%. On the split simulator
 * (writes 25% a run) a rest 12% slower, the score -1.6%, passed in 1 of 20 tunes (with "not
 * above 0": 4, told as "0% faster"; with the rest also tested at 5% one-sided: 0, but 16
 * of 20 real gains kept where this keeps 17). A knob the table and the screen say
 * moves only its part is trusted to unless this says not: the rest is watched, not bounded
 * as the part is. */
static bool
rest_paid(const struct tuner_decision *d, const struct cmp *c, struct tune_effect *net, char *words,
	  size_t len)
{
	const struct cand *x = &c->c[0];
	double b, se;

	*net = x->e;
	if (!c->part || !rest_effect(d, x, &b, &se))
		return false;
	net->est = expm1(log1p(x->e.est) + b);
	if (isfinite(x->e.lo) && isfinite(x->e.hi)) {
		net->lo = expm1(log1p(x->e.lo) + b - 1.645 * se);
		net->hi = expm1(log1p(x->e.hi) + b + 1.645 * se);
	}
	snprintf(words, len, "; the rest of the score %+.1f%% [%+.1f%%, %+.1f%%] at 90%%",
		 100 * expm1(b), 100 * expm1(b - 1.645 * se), 100 * expm1(b + 1.645 * se));
	return net->est < TUNE_MIN_GAIN / 3;
}

/* id back to v0, its value without the gain (NULL: unset): not in P from now on. */
static void
leave_p(struct tstate *s, enum knob_id id, const char *v0)
{
	ts_setk(s, id, v0, KNOB_TUNED);
	if (!v0)
		ts_setk(s, id, NULL, KNOB_UNSET);
}

/* d's verdict from its confirmation c of v (v0 its value without it; ok: c ran to its end):
 * applied when better, withheld when better but not consented to, else unconfirmed and out
 * of P. A gain confirmed on its part reads as its effect on the whole score. */
static void
conclude(struct tstate *s, struct tuner_decision *d, const struct cmp *c, bool ok, unsigned least,
	 const char *v, const char *v0, const char *words, size_t lean)
{
	enum knob_id id = d->k->id;
	bool better = ok && c->c[0].n && c->c[0].e.verdict == TUNE_BETTER;
	char rest[112] = "", on[96] = "", wl[64];
	struct tune_effect net;
	bool paid = better && rest_paid(d, c, &net, rest, sizeof(rest));
	const char *share = c->part ? "its share of the score " : "";

	if (c->part)
		snprintf(on, sizeof(on), " on %s", ts_wl_names(c->part, wl, sizeof(wl)));
	if (paid) {
		char was[sizeof(d->reason)];

		/* a gain the other workloads paid for: not confirmed, and said so */
		snprintf(was, sizeof(was), "%s", d->reason);
		d->verdict = TUNE_UNDECIDED;
		d->e = with_runs(net, d->e.runs);
		d->e.verdict = TUNE_UNDECIDED;
		d->e.delta =
			isfinite(net.lo) && isfinite(net.hi) ? fmax(fabs(net.lo), fabs(net.hi)) : 0;
		snprintf(d->reason, sizeof(d->reason),
			 "undecided: %.60s not confirmed: faster%s (%s%.100s), but the other "
			 "workloads paid for it%s; the screen said: %.200s",
			 v, on, share, words, rest, was);
		leave_p(s, id, v0);
		return;
	}
	if (better && ts_needs_consent(s->m, d->k, v)) {
		/* measured, not applied: out of P from now on */
		d->verdict = TUNE_BETTER;
		d->e = with_runs(net, d->e.runs);
		d->e.delta = 0;
		ts_withhold(d, v, "confirmed against the proposal without it");
		leave_p(s, id, v0);
	} else if (better) {
		char screen[sizeof(d->reason)];

		snprintf(screen, sizeof(screen), "%s", d->reason);
		d->verdict = TUNE_BETTER;
		d->e = with_runs(net, d->e.runs);
		d->e.delta = 0;
		d->applied = true;
		free(d->after);
		d->after = xstrdup(v);
		s->r->changed = true;
		s->changed_protos |= ts_knob_protos(s, d->k);
		snprintf(d->reason, sizeof(d->reason),
			 "better: %.60s: %.0f%% faster here, confirmed%s (%s%.100s%s); the "
			 "screen said: %.200s",
			 v, 100 * d->e.est, on, share, words, rest, screen);
	} else {
		unconfirmed(s, d, c->c[0].n ? &c->c[0].e : NULL, c->protos, least, v, words, on,
			    lean);
		leave_p(s, id, v0);
	}
}

/* A gain its confirmation's pairs x neither confirm nor rule out at its level: bounded on them
 * at the "same" level instead (90%, as a screen's bounds are). A lean to a gain there (its
 * lower bound above 0) is no bound: *lean, the more pairs that would confirm it at its level
 * (its interval there narrowing as one over their square root; twice its pairs, or least,
 * when it has none there yet). false: they give no interval at 90% either. */
static bool
same_level(const struct tstate *s, struct cand *x, unsigned least, size_t *lean)
{
	struct tune_effect f;

	*lean = 0;
	tune_effect_of(x->d, x->n, s->alpha_same, s->alpha_same, &f);
	if (!isfinite(f.lo) || !isfinite(f.hi))
		return false;
	if (f.lo > 0) {
		double g = log1p(f.est), want = fmax(2.0 * (double)x->n, least);

		if (isfinite(x->e.lo) && g > 0)
			want = ceil((double)x->n * pow((g - log1p(x->e.lo)) / g, 2));
		*lean = (size_t)fmax(1, want - (double)x->n);
	}
	f.verdict = f.verdict == TUNE_BETTER ? TUNE_UNDECIDED : f.verdict;
	x->e = f;
	return true;
}

/* A failed round (or a stop, rc) ended the confirmations: the n gains of order not confirmed
 * yet leave P, or they would stay in force unconfirmed; unless stopped, each is undecided. */
static void
leave_rest(struct tstate *s, const enum knob_id *order, size_t n, const unsigned *gains,
	   char *vals[][1 + TUNER_MAX_CANDS], int rc)
{
	for (size_t i = 0; i < n; i++) {
		struct tuner_decision *d = &s->r->dec[order[i]];
		char screen[sizeof(d->reason)];

		leave_p(s, order[i], vals[order[i]][0]);
		if (rc == -EINTR)
			continue;
		snprintf(screen, sizeof(screen), "%s", d->reason);
		d->verdict = TUNE_UNDECIDED;
		snprintf(
			d->reason, sizeof(d->reason),
			"undecided: %.60s not confirmed (a confirmation before it failed: %.120s); "
			"the screen said: %.220s",
			vals[order[i]][gains[order[i]]], s->err, screen);
		ts_decided(s, d);
	}
}

int
ts_confirm(struct tstate *s, const unsigned *gains, char *vals[][1 + TUNER_MAX_CANDS])
{
	struct snap p = { 0 }, without = { 0 };
	enum knob_id order[KNOB_COUNT];
	size_t m = 0, done = 0;
	unsigned least;
	double level;
	int rc = 0;

	for (size_t i = 0; i < KNOB_COUNT; i++)
		if (gains[i])
			order[m++] = (enum knob_id)i;
	if (!m)
		return 0;
	/* The largest apparent gain first: it is the likeliest to be confirmed in the time. */
	for (size_t i = 1; i < m; i++)
		for (size_t j = i;
		     j > 0 && s->r->dec[order[j]].e.est > s->r->dec[order[j - 1]].e.est; j--) {
			enum knob_id t = order[j];

			order[j] = order[j - 1], order[j - 1] = t;
		}
	for (size_t i = 0; i < m; i++)
		ts_setk(s, order[i], vals[order[i]][gains[order[i]]], KNOB_TUNED);
	level = ts_look_level(s, s->alpha_conf / (double)m, 0);
	least = ts_confirm_min_pairs(s, m);
	ts_say(s,
	       "tune: confirming %zu apparent gain(s), each P against P without it, at %.2g a "
	       "look",
	       m, level);
	for (; done < m && rc == 0; done++) {
		size_t i = done;
		enum knob_id id = order[i];
		struct tuner_decision *d = &s->r->dec[id];
		const char *v = vals[id][gains[id]];
		struct cmp c = { .put = ts_put_snap, .nc = 1, .max_pairs = s->o->pairs };
		double left = s->o->budget_s - (ts_now(s) - s->t0), until, slot, avail = 0;
		size_t lean = 0;
		bool at90;
		char words[160], wl[64];

		ts_snap_take(&p, s->m);
		ts_setk(s, id, vals[id][0], KNOB_TUNED);
		ts_snap_take(&without, s->m);
		ts_snap_put(s, &p);
		c.protos = gain_protos(s, d->k);
		c.part = d->part; /* where the screen found it: the others' noise stays out */
		c.snaps[0] = &without;
		c.snaps[1] = &p;
		c.alpha_better = c.alpha_worse = level;
		c.futile_n = least;
		slot = 2 * ts_slot_cost(s, c.protos);
		/* An equal share of what is left, but never less than the pairs its interval
		 * needs: the largest gain, first, was skipped for a share short of its 12
		 * pairs, and smaller ones got the time after it. */
		until = ts_now(s) + fmax(left / (double)(m - i), least * slot);
		/* Started only with time for the pairs an interval needs at its level (fewer
		 * decide nothing, and the screens may use the time instead), then on pair by
		 * pair while a pair fits its share. Those first pairs answer to the budget
		 * alone: until holds them by construction, and a check against it a moment
		 * later missed it by the microseconds between. */
		for (;;) {
			bool first = c.c[0].n < least;
			double need = (first ? least - c.c[0].n : 1) * slot;

			avail = ts_left(s);
			if (c.c[0].done || need > avail || (!first && ts_now(s) + need > until) ||
			    (rc = ts_round_once(s, &c)) != 0)
				break;
		}
		ts_snap_put(s, &p);
		ts_conclude(s, &c);
		at90 = c.c[0].n && !c.c[0].futile && c.c[0].e.verdict == TUNE_UNDECIDED &&
		       same_level(s, &c.c[0], least, &lean);
		if (c.c[0].n)
			effect_words(words, sizeof(words), &c.c[0].e, least, at90, c.c[0].futile);
		else if (rc < 0 && rc != -EINTR)
			snprintf(words, sizeof(words), "failed: %.140s", s->err);
		else
			snprintf(words, sizeof(words),
				 "no time for the %u pairs it needs (%.2fs; %.2fs left)", least,
				 least * slot, fmax(0, avail));
		snprintf(d->confirmed, sizeof(d->confirmed),
			 "P against P without it%s%s: %.90s, at %.2g a look (%zu gain%s)",
			 c.part ? " on " : "", c.part ? ts_wl_names(c.part, wl, sizeof(wl)) : "",
			 words, level, m, m == 1 ? "" : "s");
		if (rc == 0 || rc != -EINTR)
			conclude(s, d, &c, rc == 0, least, v, vals[id][0], words, lean);
		ts_say(s, "tune: %s: %s", d->k->name, d->reason);
		if (rc == 0)
			ts_decided(s, d);
		for (size_t j = 0; j < c.nc; j++) {
			free(c.c[j].d);
			free(c.c[j].r);
		}
		ts_snap_release(&p);
		ts_snap_release(&without);
		memset(&p, 0, sizeof(p));
		memset(&without, 0, sizeof(without));
	}
	leave_rest(s, order + done, m - done, gains, vals, rc);
	return rc == -EINTR ? rc : 0;
}

bool
ts_gate(struct tstate *s)
{
	const struct tune_effect *e = &s->r->improvement;
	double implied = 0, best = -INFINITY;
	size_t n = 0, keep = KNOB_COUNT;

	if (!s->r->after_pairs || !isfinite(e->hi))
		return false;
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		const struct tuner_decision *d = &s->r->dec[i];

		if (!d->applied || i == KNOB_NET_MTU || !d->k)
			continue;
		n++;
		/* each change's own lower bound, measured in the chosen configuration: the
		 * chosen one should beat the start by at least the largest of them (effects in
		 * context do not add up: two that help only together each measure the pair) */
		if (isfinite(d->e.lo) && d->e.lo > 0)
			implied = fmax(implied, log1p(d->e.lo));
		if (d->e.est > best)
			best = d->e.est, keep = i;
	}
	if (n < 2 || log1p(e->hi) >= implied)
		return false;
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		struct tuner_decision *d = &s->r->dec[i];
		char was[sizeof(d->reason)];

		if (!d->applied || i == KNOB_NET_MTU || !d->k || i == keep)
			continue;
		snprintf(was, sizeof(was), "%s", d->reason);
		ts_setk(s, (enum knob_id)i, d->before, KNOB_TUNED);
		if (!d->before)
			ts_setk(s, (enum knob_id)i, NULL, KNOB_UNSET);
		d->applied = false;
		free(d->after);
		d->after = d->before ? xstrdup(d->before) : NULL;
		d->verdict = TUNE_UNDECIDED;
		snprintf(d->reason, sizeof(d->reason),
			 "undecided: interaction suspected: the chosen configuration measured "
			 "%+.1f%% [%+.1f%%, %+.1f%%] against the start, below what its changes "
			 "imply (at least %+.1f%%); only %s kept; this one said: %.250s",
			 100 * e->est, 100 * e->lo, 100 * e->hi, 100 * expm1(implied),
			 s->r->dec[keep].k->name, was);
		ts_say(s, "tune: %s: %s", d->k->name, d->reason);
		ts_decided(s, d);
	}
	return true;
}
