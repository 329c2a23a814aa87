/* tune/grid.c - --exhaustive: every combination of the selected knobs, measured once each,
 * for validating the search against it. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "xmalloc.h"

struct grid {
	const struct knob *ks[KNOB_COUNT];
	const char *vals[KNOB_COUNT][17];
	size_t nv[KNOB_COUNT], nk, total;
	enum knob_src osrc[KNOB_COUNT];
	char *orig[KNOB_COUNT];
};

void
ts_grid_entry_release(struct tuner_grid_entry *e)
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
		ts_setk(s, g->ks[i]->id, g->vals[i][idx], idx == 0 ? g->osrc[i] : KNOB_TUNED);
		if (e) {
			e->k[i] = g->ks[i];
			e->value[i] = g->vals[i][idx] ? xstrdup(g->vals[i][idx]) : NULL;
		}
	}
}

/* Every combination of the selected knobs' allowed values measured once; the best median
 * wins. Not side by side: for `make bench`'s comparison only. */
int
ts_grid_run(struct tstate *s, char *err, size_t errlen)
{
	struct grid g = { .total = 1 };
	size_t best = (size_t)-1, c, n = s->o->pairs;
	double bestmed = -1, *sc;
	unsigned protos = 0;
	int rc = 0;

	for (const struct knob *k = knob_first(); k; k = knob_next(k)) {
		struct tuner_decision *d = &s->r->dec[k->id];
		const char *cur = knob_value(s->m, k->id);

		if (!ts_eligible(s, k, d)) {
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
		g.nv[g.nk] = 1 + ts_candidates(s->m, k, &g.vals[g.nk][1]);
		protos |= ts_knob_protos(s, k);
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
	ts_say(s, "tune: exhaustive grid of %zu combination(s) over %zu knob(s)", g.total, g.nk);
	s->r->grid = xcalloc(g.total, sizeof(*s->r->grid));
	for (c = 0; c < g.total && rc == 0; c++) {
		struct tuner_grid_entry *e = &s->r->grid[s->r->ngrid];
		struct bench_stats st;

		grid_assign(s, &g, c, e);
		sc = xmalloc(n * sizeof(*sc));
		if ((rc = ts_measure(s, protos & s->o->protos, (unsigned)n, 1, sc, NULL)) < 0) {
			ts_grid_entry_release(e);
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
