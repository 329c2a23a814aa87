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

/* The knobs the field reports as large, decided first and to the end, in this order: while
 * SMB3 encryption is required every message is sealed and none is signed on its own, so
 * encryption goes before signing; then what the disk path costs. */
static const enum knob_id leaders[] = { KNOB_SMB_SMB_ENCRYPT, KNOB_SMB_SERVER_SIGNING,
					KNOB_SMB_USE_SENDFILE, KNOB_SMB_AIO_READ_SIZE,
					KNOB_SMB_AIO_WRITE_SIZE };
#define NLEADERS (sizeof(leaders) / sizeof(leaders[0]))
#define NCPU_LEADERS 2 /* encryption and signing: the first tier */

bool
ts_is_leader(const struct knob *k)
{
	for (size_t i = 0; i < NLEADERS; i++)
		if (leaders[i] == k->id)
			return true;
	return false;
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

/* The leaders, pooled, look by look to LEADER_PAIRS (or their verdict) within their share of
 * what is left: one a leader, two kept for the rest (if any) so that it is screened too. */
int
ts_leaders_first(struct tstate *s, struct cmp **cs)
{
	size_t rest = 0;
	const struct knob *order[NLEADERS];
	double key[NLEADERS] = { 0 };
	int rc = 0;

	for (size_t i = 0; i < NLEADERS; i++) {
		struct tuner_decision *d = &s->r->dec[leaders[i]];

		if (d->reason[0])
			continue;
		if (!(cs[leaders[i]] = ts_knob_cmp(s, d->k, d))) {
			ts_decided(s, d);
			continue;
		}
	}
	for (const struct knob *k = knob_first(); k; k = knob_next(k))
		if (!ts_is_leader(k) && !s->r->dec[k->id].reason[0] &&
		    !(k->id == KNOB_NET_MTU && ts_mtu_wanted(s))) {
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
		until = ts_now(s) + (s->o->budget_s - (ts_now(s) - s->t0)) * (double)mine /
					    (double)(mine + rest);
		for (unsigned lv = 0;
		     mine && lv < s->nlooks && s->looks[lv] <= LEADER_PAIRS && rc == 0; lv++) {
			size_t nl = 0;

			for (size_t i = from; i < to; i++) {
				struct cmp *c = cs[leaders[i]];

				if (!c || (leaders[i] == KNOB_SMB_SERVER_SIGNING && ts_sealed(s) &&
					   !c->ctx && cs[KNOB_SMB_SMB_ENCRYPT]))
					continue;
				c->until = until;
				order[nl++] = c->k;
			}
			rc = ts_pool_level(s, cs, order, key, nl, lv);
		}
		for (size_t i = from; i < to; i++)
			if (cs[leaders[i]])
				cs[leaders[i]]->until = 0;
		from = to;
	}
	return rc;
}
