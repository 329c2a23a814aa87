/* tune/reportdoc.c - a stored tune document read once into the typed report (report.h): what
 * the text and the page print, each field as the document holds it or its type's zero. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"
#include "xmalloc.h"

static const char *
str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static double
num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static long long
integer(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static struct trep_score
score_of(const json_t *s)
{
	return (struct trep_score){ .present = json_is_object(s),
				    .median = num(s, "median"),
				    .lo = num(s, "ci95_low"),
				    .hi = num(s, "ci95_high") };
}

static struct trep_interval
interval_of(const json_t *iv)
{
	struct trep_interval r = { .lo = json_number_value(json_array_get(iv, 0)),
				   .hi = json_number_value(json_array_get(iv, 1)) };

	r.bounded = json_array_size(iv) == 2 && r.lo > -1.0 && r.hi < 1e9;
	return r;
}

static struct trep_strings
strings_of(const json_t *a)
{
	struct trep_strings s = { .n = json_array_size(a) };
	const json_t *x;
	size_t i;

	s.v = xcalloc(s.n ? s.n : 1, sizeof(*s.v));
	json_array_foreach(a, i, x) s.v[i] = json_string_value(x);
	return s;
}

static void
cand_of(const json_t *c, struct trep_cand *o)
{
	*o = (struct trep_cand){ .value = str(c, "value"),
				 .verdict = str(c, "verdict"),
				 .iv = interval_of(json_object_get(c, "interval")),
				 .effect = num(c, "effect"),
				 .delta = num(c, "delta"),
				 .pairs = integer(c, "pairs") };
}

static void
knob_of(const json_t *x, struct trep_knob *k)
{
	const json_t *cands = json_object_get(x, "candidates"), *c;
	size_t i;

	*k = (struct trep_knob){ .name = str(x, "name"),
				 .safety = str(x, "safety"),
				 .before = str(x, "before"),
				 .after = str(x, "after"),
				 .verdict = str(x, "verdict"),
				 .decided_by = str(x, "decided_by"),
				 .reason = str(x, "reason"),
				 .applied = json_is_true(json_object_get(x, "applied")),
				 .has_design = json_object_get(x, "design") != NULL,
				 .design = str(x, "design"),
				 .runs = integer(x, "runs"),
				 .has_confirmation = json_object_get(x, "confirmation") != NULL,
				 .confirmation = str(x, "confirmation"),
				 .ncand = json_array_size(cands) };
	k->cand = xcalloc(k->ncand ? k->ncand : 1, sizeof(*k->cand));
	json_array_foreach(cands, i, c) cand_of(c, &k->cand[i]);
}

static void
choice_of(const json_t *x, struct trep_choice *c)
{
	const json_t *scores = json_object_get(x, "scores"), *sh, *v;
	const char *p;
	size_t i;

	*c = (struct trep_choice){ .client = str(x, "client"),
				   .cls = str(x, "class"),
				   .os = str(x, "os"),
				   .protocol = str(x, "protocol"),
				   .why = str(x, "why"),
				   .nshares = json_array_size(json_object_get(x, "shares")) };
	c->scores = xcalloc(json_object_size(scores) + 1, sizeof(*c->scores));
	json_object_foreach((json_t *)scores, p, v)
	{
		c->scores[c->nscores++] =
			(struct trep_proto_score){ .protocol = p, .score = json_number_value(v) };
	}
	c->shares = xcalloc(c->nshares ? c->nshares : 1, sizeof(*c->shares));
	json_array_foreach(json_object_get(x, "shares"), i, sh)
	{
		c->shares[i] = (struct trep_share){ .share = str(sh, "share"),
						    .protocol = str(sh, "protocol"),
						    .why = str(sh, "why") };
	}
}

static void
plan_of(const json_t *x, struct tune_report *r)
{
	const json_t *f = json_object_get(x, "first_look");

	r->planned = json_is_object(x);
	r->candidates = integer(x, "candidates");
	r->alpha = num(x, "alpha");
	r->alpha_look = num(x, "alpha_look");
	r->has_alpha_cost = json_object_get(x, "alpha_cost") != NULL;
	r->alpha_cost = num(x, "alpha_cost");
	r->min_gain = num(x, "min_gain");
	r->alpha_same = num(x, "alpha_same");
	r->has_first_look = json_is_object(f);
	r->first_alpha_look = num(f, "alpha_look");
	r->first_pairs = integer(f, "pairs");
}

/* The lists a report prints beside the knobs: results, protocol choices, advice. */
static void
lists_of(const json_t *doc, struct tune_report *r)
{
	const json_t *results = json_object_get(doc, "results"),
		     *choice = json_object_get(doc, "protocol_choice"),
		     *advice = json_object_get(doc, "advice"), *x;
	size_t i;

	r->nresults = json_array_size(results);
	r->results = xcalloc(r->nresults ? r->nresults : 1, sizeof(*r->results));
	json_array_foreach(results, i, x)
	{
		r->results[i] = (struct trep_result){ .target = str(x, "target"),
						      .workload = str(x, "workload"),
						      .metric = str(x, "metric"),
						      .unit = str(x, "unit"),
						      .bottleneck = str(x, "bottleneck"),
						      .median = num(x, "median") };
	}
	r->nchoices = json_array_size(choice);
	r->choices = xcalloc(r->nchoices ? r->nchoices : 1, sizeof(*r->choices));
	json_array_foreach(choice, i, x) choice_of(x, &r->choices[i]);
	r->nadvice = json_array_size(advice);
	r->advice = xcalloc(r->nadvice ? r->nadvice : 1, sizeof(*r->advice));
	json_array_foreach(advice, i, x)
	{
		r->advice[i] = (struct trep_advice){ .client = str(x, "client"),
						     .advice = str(x, "advice") };
	}
}

bool
tune_report_read(const json_t *doc, struct tune_report *r, char *err, size_t errlen)
{
	const json_t *knobs = json_object_get(doc, "knobs"), *x;
	size_t i;

	*r = (struct tune_report){ 0 };
	if (!json_is_object(doc) || !json_is_array(knobs) ||
	    !json_is_object(json_object_get(doc, "before"))) {
		snprintf(err, errlen, "not a finished tune (no knobs or before score)");
		return false;
	}
	r->tune = integer(doc, "tune");
	r->budget_s = integer(doc, "budget_s");
	r->after_pairs = integer(doc, "after_pairs");
	r->goal = str(doc, "goal");
	r->status = str(doc, "status");
	r->improvement_verdict = str(doc, "improvement_verdict");
	r->elapsed_s = num(doc, "elapsed_s");
	r->improvement = num(doc, "improvement");
	r->targets = strings_of(json_object_get(doc, "targets"));
	r->after_protocols = strings_of(json_object_get(doc, "after_protocols"));
	r->unchanged_protocols = strings_of(json_object_get(doc, "unchanged_protocols"));
	r->before = score_of(json_object_get(doc, "before"));
	r->after = score_of(json_object_get(doc, "after"));
	r->improvement_interval = interval_of(json_object_get(doc, "improvement_interval"));
	plan_of(json_object_get(doc, "plan"), r);
	r->nknobs = json_array_size(knobs);
	r->knobs = xcalloc(r->nknobs ? r->nknobs : 1, sizeof(*r->knobs));
	json_array_foreach(knobs, i, x) knob_of(x, &r->knobs[i]);
	lists_of(doc, r);
	return true;
}

void
tune_report_clear(struct tune_report *r)
{
	for (size_t i = 0; i < r->nknobs; i++)
		free(r->knobs[i].cand);
	for (size_t i = 0; i < r->nchoices; i++) {
		free(r->choices[i].scores);
		free(r->choices[i].shares);
	}
	free(r->targets.v);
	free(r->after_protocols.v);
	free(r->unchanged_protocols.v);
	free(r->knobs);
	free(r->results);
	free(r->choices);
	free(r->advice);
	*r = (struct tune_report){ 0 };
}
