/* tune/search.c - the search behind `nastune tune` (search_api.h): the run loop. It plans the
 * false-positive budget, measures the start, runs the MTU step, the CPU tier and the screens
 * with their confirmation, pairs the chosen configuration with the start at the end, and owns
 * what every step shares: the model's switches, one measure call and its price, the budget,
 * which knobs the tune may try, and the decisions as they are made. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "search.h"
#include "xmalloc.h"

/* The screens' share of the time the CPU tier leaves while one of its comparisons is open. */
#define SCREEN_SHARE 0.6
/* What a CPU-tier change leaning to a gain leaves the screens of what is left after its
 * share. */
#define CPU_LEAVE 0.3
/* What the screens' first passes keep back of the time they start with, for confirming what
 * they find: a gain the last replicate shows appears when the time is spent. Handed back to
 * the screens once a pass finds nothing to confirm. */
#define CONFIRM_HOLD 0.15

void
tuner_set_knob(struct model *m, enum knob_id id, const char *value, enum knob_src src)
{
	char *copy = value ? xstrdup(value) : NULL; /* value may be the string freed below */

	free(m->knobs[id].value);
	m->knobs[id].value = copy;
	m->knobs[id].src = value ? src : KNOB_UNSET;
}

void __attribute__((format(printf, 2, 3))) ts_say(struct tstate *s, const char *fmt, ...)
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

double
ts_now(struct tstate *s)
{
	return s->ops->clock(s->ops->arg);
}

bool
ts_stopped(struct tstate *s)
{
	return s->ops->stopped && s->ops->stopped(s->ops->arg);
}

void
ts_setk(struct tstate *s, enum knob_id id, const char *v, enum knob_src src)
{
	const char *cur = knob_value(s->m, id);
	const struct knob *k;

	if ((cur == NULL) == (v == NULL) && (!cur || strcmp(cur, v) == 0) &&
	    knob_source(s->m, id) == (v ? src : KNOB_UNSET))
		return;
	k = knob_get(id);
	tuner_set_knob(s->m, id, v, src);
	s->dirty |= k && k->proto ? k->proto : TUNER_CLIENTS;
	s->gen++;
}

void
ts_snap_take(struct snap *sn, const struct model *m)
{
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		const char *v = knob_value(m, (enum knob_id)i);

		sn->v[i] = v ? xstrdup(v) : NULL;
		sn->src[i] = knob_source(m, (enum knob_id)i);
	}
}

void
ts_snap_put(struct tstate *s, const struct snap *sn)
{
	for (size_t i = 0; i < KNOB_COUNT; i++)
		ts_setk(s, (enum knob_id)i, sn->v[i], sn->src[i]);
}

void
ts_snap_release(struct snap *sn)
{
	for (size_t i = 0; i < KNOB_COUNT; i++)
		free(sn->v[i]);
}

/* ---- measuring, and what it costs ---- */

static void
learn(double *avg, double *last, unsigned mask, double t)
{
	avg[mask] = avg[mask] > 0 ? 0.7 * avg[mask] + 0.3 * t : t;
	last[mask] = t;
}

/* One measure call of the configuration as the model has it (installed first when it
 * changed); what the install took teaches ts_switch_cost, the runs ts_run_cost. */
int
ts_measure(struct tstate *s, unsigned protos, unsigned runs, unsigned warmup, double *scores,
	   struct bench_results *keep)
{
	double t = ts_now(s);
	int rc;

	if (ts_stopped(s))
		return -EINTR;
	if (s->installed != s->gen) {
		if ((rc = s->ops->install(s->ops->arg, s->m, s->err, sizeof(s->err))) < 0)
			return rc;
		s->installed = s->gen;
		learn(s->sw_cost, s->sw_last, s->dirty ? s->dirty & (NMASK - 1) : NMASK - 1,
		      ts_now(s) - t);
		s->dirty = 0;
		t = ts_now(s);
	}
	rc = s->ops->measure(s->ops->arg, protos, runs, warmup, scores, keep, s->err,
			     sizeof(s->err));
	if (rc < 0)
		return rc;
	learn(s->run_cost, s->run_last, protos, (ts_now(s) - t) / (runs + warmup));
	return 0;
}

/* What a run on protos costs: as measured (the last call's at least: a machine that turns slow
 * is slow from then on), else the sum of its protocols', else 0 (not known yet). */
double
ts_run_cost(const struct tstate *s, unsigned protos)
{
	double c = 0;

	if (s->run_cost[protos] > 0)
		return fmax(s->run_cost[protos], s->run_last[protos]);
	for (unsigned b = 1; b < NMASK; b <<= 1)
		if (protos & b)
			c += s->run_cost[b];
	return c;
}

/* What a switch of the knobs of mask costs: as measured; else the sum of its parts' when each
 * is known; else the cheapest switch known to touch all of it (a joint install bounds a part
 * of it); else the dearest known; else 0 (none yet). */
double
ts_switch_cost(const struct tstate *s, unsigned mask)
{
	double sum = 0, best = 0, any = 0;

	mask &= NMASK - 1;
	if (!mask)
		return 0;
	if (s->sw_cost[mask] > 0)
		return fmax(s->sw_cost[mask], s->sw_last[mask]);
	for (unsigned b = 1; b < NMASK && sum >= 0; b <<= 1)
		if (mask & b)
			sum = s->sw_cost[b] > 0 ? sum + fmax(s->sw_cost[b], s->sw_last[b]) : -1;
	if (sum > 0)
		return sum;
	for (unsigned u = 1; u < NMASK; u++) {
		double c = fmax(s->sw_cost[u], s->sw_last[u]);

		if (s->sw_cost[u] <= 0)
			continue;
		if ((u & mask) == mask && (best == 0 || c < best))
			best = c;
		any = fmax(any, c);
	}
	return best > 0 ? best : any;
}

/* What a comparison measured on protos switches: its protocols' daemons, or the host's knobs
 * when it measures only through the clients. */
unsigned
ts_own_switch(unsigned protos)
{
	return protos & ALL_PROTOS ? protos & ALL_PROTOS : protos;
}

/* What a measure call of one run on protos costs after a switch of a knob of its protocols;
 * a second when nothing is known yet. */
double
ts_slot_cost(const struct tstate *s, unsigned protos)
{
	double r = ts_run_cost(s, protos);

	if (r <= 0)
		return 1;
	return r + ts_switch_cost(s, ts_own_switch(protos));
}

/* The after-score's pairs kept in reserve on protos: tune_looks[0], or as many as an eighth of
 * the budget pays for (never below 2): it decides nothing, and in a budget of seconds its 8
 * pairs would take the time of the second decision. It may still measure more if time is
 * left. */
static double
after_cost(const struct tstate *s, unsigned protos)
{
	double pair = 2.0 * ts_slot_cost(s, protos);
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

double
ts_left(struct tstate *s)
{
	return s->o->budget_s - (ts_now(s) - s->t0) - reserve(s);
}

bool
ts_fits(struct tstate *s, double cost)
{
	return cost <= ts_left(s);
}

/* ---- the knobs ---- */

/* Knobs on the network path: with clients, their effect is what the clients see. */
bool
ts_on_path(const struct knob *k)
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

/* The protocols a knob's windows measure: its own, or every one measured for a host knob. */
unsigned
ts_knob_protos(const struct tstate *s, const struct knob *k)
{
	return (k->proto ? k->proto : ALL_PROTOS) & s->o->protos;
}

/* Whether the tune may measure k at all; if not, why in d->reason. */
bool
ts_eligible(struct tstate *s, const struct knob *k, struct tuner_decision *d)
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
	/* A trial cannot put it in force: a screen of it would measure a placebo and call it
	 * "no effect". Named in --knobs, it is measured all the same (the lab's placebo). */
	if (k->place == KNOB_AT_SYSCTL && s->o->sysctl_inert && !s->o->sel) {
		snprintf(d->reason, sizeof(d->reason),
			 "not tried: its file (%s) is written but never loaded into this kernel "
			 "here (a staging --root, or services.backend none): a trial cannot "
			 "change it; it takes effect at boot",
			 RENDER_SYSCTL_PATH);
		return false;
	}
	if (k->id == KNOB_NET_MTU) {
		snprintf(d->reason, sizeof(d->reason), "%s",
			 s->o->clients_none
				 ? "not tried: only clients cross the NIC, and no client agent "
				   "answered (--clients); network.mtu otherwise"
				 : "not tried: only clients cross the NIC (tune --clients); "
				   "network.mtu otherwise");
		return false;
	}
	if (ts_on_path(k) && s->o->clients_none) {
		snprintf(d->reason, sizeof(d->reason),
			 "not tried: it acts on the network path, which the clients decide, and "
			 "no client agent answered (--clients): start nastune agent on a paired "
			 "client (nastune pair), reachable from here");
		return false;
	}
	if (ts_on_path(k) && !(s->o->clients_decide && s->ops->clients) && !s->o->sel) {
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
const char *
ts_same_as(const struct model *m, const struct knob *k, const char *cur, const char *const *tried,
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
size_t
ts_candidates(const struct model *m, const struct knob *k, const char **out)
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
	size_t n = ts_candidates(m, k, all), d = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < d && !knob_same(m, k, out[j], all[i], NULL, 0))
			j++;
		if (j == d)
			out[d++] = all[i];
	}
	return d;
}

bool
ts_mtu_wanted(const struct tstate *s)
{
	return s->ops->mtu_probe && s->ops->mtu_set && (!s->o->sel || s->o->sel[KNOB_NET_MTU]);
}

/* Keeps d as it is now among the decisions made (again in its place when made before). */
void
ts_decided(struct tstate *s, const struct tuner_decision *d)
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
		ts_setk(s, k->id, j->after, KNOB_TUNED);
		s->r->changed = true;
		s->changed_protos |= ts_knob_protos(s, k);
	}
	return true;
}
/* Finishes the CPU tier's comparisons that are done (all: every one), a context before what
 * was measured in it (encryption before signing). */
static void
cpu_settle(struct tstate *s, struct cmp **cs, int rc, bool all)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < KNOB_COUNT; i++) {
			struct cmp *c = cs[i];

			if (!c || (!pass && c->ctx) || (!all && (ts_active(c) || c->dep || c->ctx)))
				continue;
			if (rc == 0 && !c->rounds) {
				struct tuner_decision *d = &s->r->dec[i];

				d->tried = true;
				d->verdict = TUNE_NOT_REACHED;
				snprintf(d->reason, sizeof(d->reason),
					 "not reached: no time was left for a round");
				ts_decided(s, d);
			} else if (rc == 0) {
				ts_finish(s, c, &s->r->dec[i]);
			}
			ts_cmp_unlink(s, c);
			ts_cmp_release(c);
			free(c);
			cs[i] = NULL;
		}
}

/* Whether a comparison of the CPU tier is still open (cpu_settle left it). */
static bool
any_open(struct cmp *const *cs)
{
	for (size_t i = 0; i < KNOB_COUNT; i++)
		if (cs[i])
			return true;
	return false;
}

/* Whether m holds the values of sn. */
static bool
same_knobs(const struct snap *sn, const struct model *m)
{
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		const char *v = knob_value(m, (enum knob_id)i);

		if ((v == NULL) != (sn->v[i] == NULL) || (v && strcmp(v, sn->v[i]) != 0))
			return false;
	}
	return true;
}

/* The knobs after the MTU step: the CPU tier one at a time (encryption, then signing in its
 * context), then the screens of every other knob on the CPU tier's decided values, their
 * apparent gains confirmed one by one. The screens get most of what is left; the
 * confirmations the rest (and whatever the screens leave). */
static int
knobs_all(struct tstate *s)
{
	struct cmp *cs[KNOB_COUNT] = { NULL };
	struct snap before = { 0 };
	char *vals[KNOB_COUNT][1 + TUNER_MAX_CANDS] = { { NULL } };
	unsigned gains[KNOB_COUNT] = { 0 };
	bool final[KNOB_COUNT] = { false };
	struct screens *x;
	double left, until, hold;
	int rc = 0;

	for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
		struct tuner_decision *d = &s->r->dec[k->id];

		if (k->id == KNOB_NET_MTU && ts_mtu_wanted(s))
			continue; /* the MTU step decided it */
		d->reason[0] = 0;
		if (ts_eligible(s, k, d))
			resumed(s, k, d);
	}
	rc = ts_leaders_first(s, cs, false, 0);
	/* A CPU-tier change leaning to a large gain goes on first (what a tune is for, and the
	 * screens then run on it), leaving the screens a share. */
	if (rc == 0 && ts_cpu_leaning(cs))
		rc = ts_leaders_first(s, cs, true,
				      s->t0 + s->o->budget_s -
					      CPU_LEAVE * (s->o->budget_s - (ts_now(s) - s->t0)));
	cpu_settle(s, cs, rc, rc < 0);
	if (rc < 0)
		return rc;
	ts_snap_take(&before, s->m);
	left = s->o->budget_s - (ts_now(s) - s->t0);
	/* The screens take the budget but what confirming their gains needs, or their share
	 * when a CPU-tier comparison still waits for the rest; each confirmation that ends
	 * early hands its time back to them, and what they find then is confirmed in turn. */
	until = any_open(cs) ? ts_now(s) + SCREEN_SHARE * left : 0;
	x = ts_screens_begin(s, vals);
	hold = CONFIRM_HOLD * (until > 0 ? until - ts_now(s) : left);
	for (bool more = true, decided = false; rc == 0 && more;) {
		size_t ran = 0, m = 0;

		rc = ts_screens_run(s, x, until, final, hold, &ran);
		if (rc < 0)
			break;
		if (ran || !decided) /* a pass that measured nothing has nothing new to say */
			ts_screens_decide(s, x, final, gains);
		else
			memset(gains, 0, sizeof(gains));
		decided = true;
		for (size_t i = 0; i < KNOB_COUNT; i++)
			m += gains[i] != 0;
		if (m)
			rc = ts_confirm(s, gains, vals);
		for (size_t i = 0; i < KNOB_COUNT; i++)
			final[i] = final[i] || gains[i];
		/* Each pass confirms new gains (knobs become final) or finds none: it ends. */
		more = m || hold > 0;
		if (!m)
			hold = 0; /* nothing to confirm: the screens have the time kept back */
	}
	ts_screens_end(x);
	/* The CPU tier's comparisons still open go on with what is left, if nothing changed
	 * under them (their pairs were measured against the configuration still in force). */
	if (rc == 0 && same_knobs(&before, s->m))
		rc = ts_leaders_first(s, cs, true, 0);
	cpu_settle(s, cs, rc, true);
	ts_snap_release(&before);
	for (size_t i = 0; i < KNOB_COUNT; i++)
		for (size_t j = 0; j <= TUNER_MAX_CANDS; j++)
			free(vals[i][j]);
	return rc;
}

/* ---- the whole tune ---- */

/* The level each of the looks from index from on gets from a budget: a look whose pairs
 * cannot reach it (all n pairs one way has probability 2^-n) can decide only "same" and
 * spends none, and the level depends on how many looks spend: the fewest shares such that no
 * more looks than that can reach one (all of them always qualify). */
double
ts_look_level(const struct tstate *s, double budget, unsigned from)
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
		return ts_look_level(s, budget, 0);
	}
	*first = budget / 2;
	*first_n = s->looks[f];
	return ts_look_level(s, budget / 2, f + 1);
}

/* The plan: the candidates the false-positive budget is shared by (every distinct candidate
 * of every eligible knob, and the MTU), and the looks. */
static void
plan(struct tstate *s)
{
	const char *vals[16];
	size_t total = 0;
	bool screened = false;
	double alpha = s->o->alpha > 0 ? s->o->alpha : TUNE_ALPHA;

	/* What can be applied shares the budget: the CPU tier's candidates, the MTU, and the
	 * confirmations as one share (split among however many gains the screens find); the
	 * screens themselves apply nothing. */
	for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
		struct tuner_decision d = { 0 };

		if (k->id == KNOB_NET_MTU || !ts_eligible(s, k, &d))
			continue;
		if (ts_is_leader(k))
			total += distinct_candidates(s->m, k, vals);
		else if (ts_candidates(s->m, k, vals))
			screened = true;
	}
	total += ts_mtu_wanted(s) + screened;
	s->family = total ? total : 1;
	s->alpha_conf = alpha / (double)s->family;
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
					  .alpha_confirm = screened ? s->alpha_conf : 0,
					  .nlooks = s->nlooks };
	memcpy(s->r->plan.looks, s->looks, sizeof(s->r->plan.looks));
	ts_say(s,
	       "tune: plan: %zu share(s) of a false-positive budget of %g (the CPU tier's "
	       "candidates, the MTU, the confirmations); looks at up to %u pairs",
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

/* The score of rs's results on protos alone: the after-score's two sides are told on what
 * was measured afresh side by side, not mixed with the start's fewer runs of the rest. */
static void
score_on(const struct bench_results *rs, unsigned protos, struct tuner_score *sc)
{
	struct bench_results sub = { 0 };

	for (size_t i = 0; i < rs->n; i++)
		if (model_proto_bit(rs->v[i].protocol) & protos)
			bench_results_add(&sub, &rs->v[i]);
	score_of(sub.n ? &sub : rs, sc);
	bench_results_clear(&sub);
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
	s.t0 = ts_now(&s);
	ts_snap_take(&start, m);
	plan(&s);
	if ((rc = ts_measure_start(&s)) < 0) {
		snprintf(err, errlen, "the starting configuration could not be measured: %s",
			 s.err);
		goto out;
	}
	r->started = true;
	score_of(&r->start, &r->start_score);
	if (o->exhaustive)
		rc = ts_grid_run(&s, err, errlen);
	else if ((rc = ts_mtu_step(&s)) == 0 && (rc = knobs_all(&s)) < 0)
		snprintf(err, errlen, "%s", rc == -EINTR ? "interrupted" : s.err);
	if (rc < 0)
		goto out;
	ts_withhold_left(&s); /* what the trials may measure, only a consent applies */
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		const char *v = knob_value(m, (enum knob_id)i);

		r->dec[i].applied =
			r->dec[i].applied ||
			(i != KNOB_NET_MTU && ((v == NULL) != (r->dec[i].before == NULL) ||
					       (v && strcmp(v, r->dec[i].before) != 0)));
		if (r->dec[i].applied && i != KNOB_NET_MTU)
			r->changed = true;
	}
	ts_snap_take(&chosen, m);
	if ((rc = ts_final_pairing(&s, &start, &chosen)) < 0) {
		snprintf(err, errlen, "the after-score could not be measured: %s", s.err);
		goto out;
	}
	/* The gate: chosen worse than its changes imply, only the largest one stays; the
	 * after-score is measured again for what is now chosen (as far as time allows). */
	if (!o->exhaustive && ts_gate(&s)) {
		bench_results_clear(&r->before);
		bench_results_clear(&r->after);
		r->improvement = (struct tune_effect){ 0 };
		r->changed = false;
		for (size_t i = 0; i < KNOB_COUNT; i++)
			r->changed |= r->dec[i].applied && i != KNOB_NET_MTU;
		ts_snap_release(&chosen);
		ts_snap_take(&chosen, m);
		if ((rc = ts_final_pairing(&s, &start, &chosen)) < 0) {
			snprintf(err, errlen, "the after-score could not be measured: %s", s.err);
			goto out;
		}
	}
	if (r->changed) {
		unsigned on = r->after_pairs ? r->after_protos : ~0u;

		score_on(&r->before, on, &r->before_score);
		score_on(&r->after, on, &r->after_score);
	}
	/* The clients again only when they fit (the budget holds whatever the estimates). */
	r->clients_after =
		o->clients_after && ts_now(&s) - s.t0 + s.client_pass <= 1.03 * o->budget_s;
out:
	r->done = true;
	r->tuner_s = ts_now(&s) - s.t0;
	ts_snap_release(&start);
	ts_snap_release(&chosen);
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
		ts_grid_entry_release(&r->grid[i]);
	free(r->grid);
	for (size_t i = 0; i < r->nkept; i++) {
		free(r->kept[i].after);
		free(r->kept[i].reason);
	}
	memset(r, 0, sizeof(*r));
}
