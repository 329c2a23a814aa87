/* tune/doc.c - the tune document's JSON (search_api.h): the search's typed result, the protocol
 * choice and the client advice written into the document `tune --json` prints and the state
 * store keeps, and an interrupted tune's decisions read back from it. With the agents' facts
 * and errors (measure/agentfacts.c), the one place the tuner's data meets JSON. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_api.h"
#include "xmalloc.h"

static json_t *
protos_json(unsigned mask)
{
	json_t *a = json_array();

	for (unsigned b = 1; b < 16; b <<= 1)
		if (mask & b)
			json_array_append_new(a, json_string(model_proto_name(b)));
	return a;
}

static json_t *
score_json(const struct tuner_score *sc)
{
	struct bench_stats st;
	json_t *runs = json_array();

	bench_stats_compute(sc->v, sc->n, 1, &st);
	for (size_t i = 0; i < sc->n; i++)
		json_array_append_new(runs, json_real(sc->v[i]));
	return json_pack("{s:f, s:f, s:f, s:o}", "median", st.median, "ci95_low", st.ci95_low,
			 "ci95_high", st.ci95_high, "runs", runs);
}

/* An interval as [lo, hi], or null when too few pairs bound it (none: nothing measured it):
 * never an infinite end, never a [0, 0] no run stands for. */
static json_t *
interval_json(const struct tune_effect *e)
{
	if (!e->n || !isfinite(e->lo) || !isfinite(e->hi))
		return json_null();
	return json_pack("[f, f]", e->lo, e->hi);
}

/* An effect's estimate, or null when no pair measured it. */
static json_t *
est_json(const struct tune_effect *e)
{
	return e->n ? json_real(e->est) : json_null();
}

/* What a screened effect adds: its reach, the runs it rests on, and for an undecided one
 * what would bound it. */
static void
screen_json(json_t *j, const struct tune_effect *e)
{
	if (e->delta > 0)
		json_object_set_new(j, "delta", json_real(e->delta));
	if (e->runs)
		json_object_set_new(j, "runs", json_integer((json_int_t)e->runs));
	if (e->more_runs) {
		json_object_set_new(j, "more_runs", json_integer((json_int_t)e->more_runs));
		json_object_set_new(j, "more_seconds", json_real(e->more_s));
	}
}

static json_t *
effect_json(const char *value, const struct tune_effect *e)
{
	json_t *j = json_pack("{s:s, s:s, s:o, s:o, s:i}", "value", value, "verdict",
			      tune_verdict_name(e->verdict), "effect", est_json(e), "interval",
			      interval_json(e), "pairs", (int)e->n);

	if (e->verdict == TUNE_UNDECIDED && e->more != SIZE_MAX)
		json_object_set_new(j, "more_pairs", json_integer((json_int_t)e->more));
	screen_json(j, e);
	return j;
}

/* The decisions as the document's "knobs" array. */
static json_t *
decisions_json(const struct tuner_result *r)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < KNOB_COUNT; i++) {
		const struct tuner_decision *d = &r->dec[i];
		json_t *cands = json_array(), *x;

		if (!d->k) {
			json_decref(cands);
			continue;
		}
		for (size_t j = 0; j < d->ncand; j++)
			json_array_append_new(cands, effect_json(d->cand[j].value, &d->cand[j].e));
		x = json_pack("{s:s, s:s, s:s?, s:s?, s:b, s:b, s:s?, s:s, s:o, s:o, s:i, s:s?, "
			      "s:o}",
			      "name", d->k->name, "safety", knob_safety_name(d->k->safety),
			      "before", d->before, "after", d->after, "applied", d->applied,
			      "tried", d->tried, "verdict",
			      d->tried ? tune_verdict_name(d->verdict) : NULL, "reason", d->reason,
			      "effect", est_json(&d->e), "interval", interval_json(&d->e), "pairs",
			      (int)d->e.n, "decided_by",
			      d->tried ? (d->by_clients ? "clients" : "loopback") : NULL,
			      "candidates", cands);
		screen_json(x, &d->e);
		if (d->design[0])
			json_object_set_new(x, "design", json_string(d->design));
		if (d->confirmed[0])
			json_object_set_new(x, "confirmation", json_string(d->confirmed));
		if (d->withheld) /* measured better, not applied: no consent */
			json_object_set_new(x, "withheld",
					    json_pack("{s:s, s:s}", "value", d->withheld_value,
						      "changes", d->withheld));
		json_array_append_new(arr, x);
	}
	return arr;
}

/* The decisions made, {name: decision}, as an interrupted tune resumes them. */
static json_t *
kept_json(const struct tuner_result *r)
{
	json_t *o = json_object();

	for (size_t i = 0; i < r->nkept; i++) {
		const struct tuner_kept *x = &r->kept[i];

		json_object_set_new(o, x->k->name,
				    json_pack("{s:s?, s:b, s:b, s:s, s:s}", "after", x->after,
					      "applied", x->applied, "tried", x->tried, "verdict",
					      tune_verdict_name(x->verdict), "reason", x->reason));
	}
	return o;
}

static json_t *
plan_json(const struct tuner_plan *p)
{
	json_t *lk = json_array(), *o;

	for (unsigned i = 0; i < p->nlooks; i++)
		json_array_append_new(lk, json_integer(p->looks[i]));
	o = json_pack("{s:i, s:f, s:f, s:f, s:o, s:f, s:f}", "candidates", (int)p->candidates,
		      "alpha", p->alpha, "alpha_look", p->alpha_look, "alpha_same", p->alpha_same,
		      "looks", lk, "min_gain", p->min_gain, "alpha_cost", p->alpha_cost);
	if (o && p->alpha_confirm > 0)
		json_object_set_new(o, "alpha_confirm", json_real(p->alpha_confirm));
	/* The first look that spends half a budget: its pairs and level (absent: none). */
	if (o && p->look_first_n)
		json_object_set_new(o, "first_look",
				    json_pack("{s:i, s:f}", "pairs", (int)p->look_first_n,
					      "alpha_look", p->look_first));
	if (o && p->cost_first_n)
		json_object_set_new(o, "first_look_cost",
				    json_pack("{s:i, s:f}", "pairs", (int)p->cost_first_n,
					      "alpha_cost", p->cost_first));
	return o;
}

static json_t *
grid_json(const struct tuner_result *r)
{
	json_t *gj = json_array();

	for (size_t i = 0; i < r->ngrid; i++) {
		const struct tuner_grid_entry *g = &r->grid[i];
		json_t *e = score_json(&g->score), *assign = json_object();

		for (size_t j = 0; j < g->nk; j++)
			json_object_set_new(assign, g->k[j]->name,
					    g->value[j] ? json_string(g->value[j]) : json_null());
		json_object_set_new(e, "assign", assign);
		json_array_append_new(gj, e);
	}
	return gj;
}

/* The after-score's keys: the protocols, the pairs, the effect when there are pairs. */
static void
paired_json(const struct tuner_result *r, json_t *doc)
{
	const struct tune_effect *e = &r->improvement;

	json_object_set_new(doc, "after_protocols", protos_json(r->after_protos));
	json_object_set_new(doc, "unchanged_protocols", protos_json(r->unchanged_protos));
	json_object_set_new(doc, "after_pairs", json_integer((json_int_t)r->after_pairs));
	if (!r->after_pairs)
		return;
	json_object_set_new(doc, "improvement_interval", interval_json(e));
	json_object_set_new(doc, "improvement_verdict", json_string(tune_verdict_name(e->verdict)));
}

void
tuner_result_json(const struct tuner_result *r, json_t *doc)
{
	if (r->planned)
		json_object_set_new(doc, "plan", plan_json(&r->plan));
	/* The start's scores stand for both sides until the after-score replaces them. */
	if (r->started && r->start_score.n) {
		json_object_set_new(doc, "before", score_json(&r->start_score));
		json_object_set_new(doc, "after", score_json(&r->start_score));
	}
	if (r->started)
		json_object_set_new(doc, "improvement",
				    json_real(r->after_pairs ? r->improvement.est : 0));
	if (r->has_grid)
		json_object_set_new(doc, "grid", grid_json(r));
	if (r->paired)
		paired_json(r, doc);
	if (r->before_score.n)
		json_object_set_new(doc, "before", score_json(&r->before_score));
	if (r->after_score.n)
		json_object_set_new(doc, "after", score_json(&r->after_score));
	if (r->nkept || r->done)
		json_object_set_new(doc, "decided", kept_json(r));
	if (!r->done)
		return;
	json_object_set_new(doc, "not_tried_budget", json_array());
	for (size_t i = 0; i < r->nuntried; i++)
		json_array_append_new(json_object_get(doc, "not_tried_budget"),
				      json_string(r->untried[i]->name));
	json_object_set_new(doc, "knobs", decisions_json(r));
	json_object_set_new(doc, "tuner_s", json_real(r->tuner_s));
}

void
tuner_resume_from_json(const json_t *decided, struct tuner_kept *out)
{
	const char *name;
	json_t *j;

	memset(out, 0, KNOB_COUNT * sizeof(*out));
	json_object_foreach((json_t *)decided, name, j)
	{
		const struct knob *k = knob_find(name);
		const char *after = json_string_value(json_object_get(j, "after"));
		const char *reason = json_string_value(json_object_get(j, "reason"));
		const char *verdict = json_string_value(json_object_get(j, "verdict"));
		struct tuner_kept *x;

		if (!k || !json_is_object(j))
			continue;
		x = &out[k->id];
		free(x->after);
		free(x->reason);
		*x = (struct tuner_kept){ .k = k,
					  .after = after ? xstrdup(after) : NULL,
					  .applied = json_is_true(json_object_get(j, "applied")) &&
						     after,
					  .tried = json_is_true(json_object_get(j, "tried")) };
		for (int v = TUNE_UNDECIDED; v <= TUNE_NOT_REACHED && verdict; v++)
			if (strcmp(verdict, tune_verdict_name((enum tune_verdict)v)) == 0)
				x->verdict = (enum tune_verdict)v;
		x->reason = xstrdup(reason ? reason : "?");
	}
}

void
tuner_resume_release(struct tuner_kept *kept)
{
	for (size_t i = 0; kept && i < KNOB_COUNT; i++) {
		free(kept[i].after);
		free(kept[i].reason);
	}
}

static json_t *
choice_json(const struct tune_choice *c)
{
	json_t *scores = json_object(), *flushed = json_object(), *per = json_array(), *one;

	for (size_t k = 0; k < c->nscores; k++) {
		json_object_set_new(scores, c->scores[k].protocol, json_real(c->scores[k].score));
		if (c->scores[k].replaced)
			json_object_set_new(flushed, c->scores[k].protocol,
					    json_real(c->scores[k].flushed));
	}
	for (size_t j = 0; j < c->nshares; j++)
		json_array_append_new(per, json_pack("{s:s, s:s, s:s}", "share", c->shares[j].share,
						     "protocol", c->shares[j].protocol, "why",
						     c->shares[j].why));
	one = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:s}", "client", c->client, "os",
			c->os, "class", c->cls, "protocol", c->protocol, "why", c->why, "scores",
			scores, "shares", per, "writes",
			c->unflushed ? "unflushed" : "as measured");
	if (c->unflushed)
		json_object_set_new(one, "scores_flushed", flushed);
	else
		json_decref(flushed);
	return one;
}

json_t *
tune_choices_json(const struct tune_choices *c)
{
	json_t *a = json_array();

	for (size_t i = 0; c && i < c->n; i++)
		json_array_append_new(a, choice_json(&c->v[i]));
	return a;
}

static json_t *
offer_json(const struct tune_offer *o)
{
	json_t *shares = json_array(), *j;

	for (size_t i = 0; i < o->nshares; i++)
		json_array_append_new(shares, json_string(o->shares[i]));
	j = json_pack("{s:s, s:s, s:s, s:o}", "protocol", o->protocol, "versions", o->versions,
		      "how", o->how, "shares", shares);
	if (o->measured_mbs >= 0)
		json_object_set_new(j, "measured_mbs", json_real(o->measured_mbs));
	return j;
}

static json_t *
advice_json(const struct tune_client_advice *a)
{
	json_t *offered, *refused, *knobs;

	if (a->placeholder)
		return json_pack("{s:s, s:s}", "client", a->client, "advice", a->advice);
	offered = json_array(), refused = json_array(), knobs = json_object();
	for (size_t i = 0; i < a->noffered; i++)
		json_array_append_new(offered, offer_json(&a->offered[i]));
	for (size_t i = 0; i < a->nrefused; i++)
		json_array_append_new(refused,
				      json_pack("{s:s, s:s}", "protocol", a->refused[i].protocol,
						"why", a->refused[i].why));
	for (size_t i = 0; i < a->nknobs; i++)
		json_object_set_new(knobs, a->knobs[i].name,
				    json_pack("{s:s, s:s}", "value", a->knobs[i].value, "from",
					      a->knobs[i].from));
	return json_pack("{s:s, s:s, s:s?, s:s, s:s?, s:o, s:o, s:o}", "client", a->client, "os",
			 a->os, "address", a->address, "advice", a->advice, "use", a->use,
			 "protocols", offered, "not_offered", refused, "knobs", knobs);
}

json_t *
tune_advices_json(const struct tune_advices *a)
{
	json_t *arr = json_array();

	for (size_t i = 0; a && i < a->n; i++)
		json_array_append_new(arr, advice_json(&a->v[i]));
	return arr;
}
