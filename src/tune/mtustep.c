/* tune/mtustep.c - the MTU step: the largest MTU every peer is proven to receive replaces the
 * one in force unless the clients measure it worse. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "xmalloc.h"

/* The largest MTU every peer receives, proven by the probe, replaces the one in force unless
 * the clients measure it worse. The proof is what makes the change safe, so the step fits in
 * any budget: its measurement is time-boxed (a quarter of what is left, at most its first
 * look) and only judges "not worse", at the comparison's own level; "better" is claimed at the
 * tune's level, as for every knob. */
int
ts_mtu_step(struct tstate *s)
{
	struct tuner_decision *d = &s->r->dec[KNOB_NET_MTU];
	struct cmp c = { .put = ts_put_mtu, .nc = 1, .protos = TUNER_CLIENTS };
	double until;
	char why[384] = "", words[256], err[512];
	int cur = 0, next = 0, rc;

	if (!ts_mtu_wanted(s))
		return 0;
	if ((rc = s->ops->mtu_probe(s->ops->arg, &cur, &next, why, sizeof(why))) < 0 ||
	    next <= cur) {
		snprintf(d->reason, sizeof(d->reason), "%s%s", rc < 0 ? "not tried: " : "", why);
		if (cur > 0) {
			free(d->before);
			d->before = xasprintf("%d", cur);
		}
		ts_decided(s, d);
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
	ts_say(s, "tune: MTU %d proven to every peer; the clients at %d and %d side by side", next,
	       cur, next);
	until = ts_now(s) + (s->o->budget_s - (ts_now(s) - s->t0)) / 4;
	/* The first round runs whatever its estimate (the start's pass of every share is no
	 * measure of one run); the next only while they fit in the step's time. */
	while (ts_active(&c) &&
	       (!c.rounds ? ts_now(s) < until
			  : ts_now(s) + 2 * ts_slot_cost(s, TUNER_CLIENTS) <= until) &&
	       (rc = ts_round_once(s, &c)) == 0)
		;
	ts_put_mtu(s, &c, 0);
	ts_conclude(s, &c);
	if (rc == -EINTR) {
		ts_cmp_release(&c);
		return rc;
	}
	d->e = c.c[0].e;
	d->ncand = 1;
	snprintf(d->cand[0].value, sizeof(d->cand[0].value), "%d", next);
	d->cand[0].e = d->e;
	ts_verdict_words(words, sizeof(words), d->cand[0].value, &d->e, ts_active(&c) > 0);
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
	ts_say(s, "tune: net.mtu: %s", d->reason);
	ts_decided(s, d);
	ts_cmp_release(&c);
	return 0;
}
