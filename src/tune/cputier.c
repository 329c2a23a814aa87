/* tune/cputier.c - the CPU tier: encryption, then signing in encryption's context, each
 * compared one at a time with the incumbent before any screen, since they change the data
 * path every other SMB knob runs on. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "xmalloc.h"

/* The CPU tier, in this order: while SMB3 encryption is required every message is sealed and
 * none is signed on its own, so encryption goes before signing. */
static const enum knob_id leaders[] = { KNOB_SMB_SMB_ENCRYPT, KNOB_SMB_SERVER_SIGNING };
#define NLEADERS (sizeof(leaders) / sizeof(leaders[0]))

bool
ts_is_leader(const struct knob *k)
{
	for (size_t i = 0; i < NLEADERS; i++)
		if (leaders[i] == k->id)
			return true;
	return false;
}

/* Whether smb_encrypt = v seals every session (signing cannot matter then). */
static bool
seals(const char *v)
{
	return v && (strcmp(v, "desired") == 0 || strcmp(v, "required") == 0);
}

/* Whether the value in force seals: signing is then measured in encryption's context
 * (seal_context), or waits for encryption's verdict rather than measure nothing. */
bool
ts_sealed(const struct tstate *s)
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

	if (!e || !g || !ts_sealed(s))
		return;
	for (size_t j = 0; j < e->nc; j++)
		if (!seals(e->val[j + 1])) {
			g->ctx = e;
			g->ctx_j = j;
			e->dep = g;
			ts_say(s,
			       "tune: %s: measured with %s = %s on both sides (%s seals every "
			       "session, and signing matters only without it)",
			       g->k->name, e->k->name, e->val[j + 1], knob_value(s->m, e->k->id));
			return;
		}
}

/* The first pass's pairs: enough to name a large effect (a cost of a third under the lab's
 * noise), not enough to spend the screens' time on a value that changes nothing. */
#define LEADER_PAIRS 32

/* The CPU tier, pooled, look by look (to a verdict) within its share of what is left; again:
 * the comparisons still open, until until_again (0: the budget's end). */
int
ts_leaders_first(struct tstate *s, struct cmp **cs, bool again, double until_again)
{
	size_t rest = 0;
	const struct knob *order[NLEADERS];
	double key[NLEADERS] = { 0 };
	int rc = 0;

	for (size_t i = 0; i < NLEADERS && !again; i++) {
		struct tuner_decision *d = &s->r->dec[leaders[i]];

		if (d->reason[0])
			continue;
		if (!(cs[leaders[i]] = ts_knob_cmp(s, d->k, d))) {
			ts_decided(s, d);
			continue;
		}
	}
	/* The screens' shares: two, and one more for every two knobs they screen. */
	for (const struct knob *k = knob_first(); k; k = knob_next(k))
		if (!ts_is_leader(k) && !s->r->dec[k->id].reason[0] &&
		    !(k->id == KNOB_NET_MTU && ts_mtu_wanted(s)))
			rest = rest ? rest + 1 : 4;
	if (!again)
		seal_context(s, cs);
	/* The tier's share of what is left, set once (counted again at every look it would
	 * compound): a share a knob, signing waiting for encryption included; look by look
	 * within it. */
	{
		size_t mine = 0;
		double until;

		for (size_t i = 0; i < NLEADERS; i++)
			mine += cs[leaders[i]] != NULL;
		/* again (the screens done): what is left, to the budget */
		until = again ? until_again
			      : ts_now(s) + (s->o->budget_s - (ts_now(s) - s->t0)) * (double)mine /
						    ((double)mine + (double)rest / 2);
		for (unsigned lv = 0;
		     mine && lv < s->nlooks && (again || s->looks[lv] <= LEADER_PAIRS) && rc == 0;
		     lv++) {
			size_t nl = 0;

			for (size_t i = 0; i < NLEADERS; i++) {
				struct cmp *c = cs[leaders[i]];

				if (!c || (leaders[i] == KNOB_SMB_SERVER_SIGNING && ts_sealed(s) &&
					   !c->ctx && cs[KNOB_SMB_SMB_ENCRYPT]))
					continue;
				/* the first look whole: a verdict needs it, and screens measured
				 * before it would stand on a data path the tier may yet change */
				c->until = again || lv ? until : 0;
				order[nl++] = c->k;
			}
			rc = ts_pool_level(s, cs, order, key, nl, lv);
		}
		for (size_t i = 0; i < NLEADERS; i++)
			if (cs[leaders[i]])
				cs[leaders[i]]->until = 0;
	}
	return rc;
}

bool
ts_cpu_leaning(struct cmp **cs)
{
	for (size_t i = 0; i < NLEADERS; i++) {
		const struct cmp *c = cs[leaders[i]];

		for (size_t j = 0; c && j < c->nc; j++)
			if (!c->c[j].done && c->c[j].n && c->c[j].e.est >= TUNE_BOUND_MAX)
				return true;
	}
	return false;
}
