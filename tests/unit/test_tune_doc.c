/* test_tune_doc.c - the tune document's JSON edge (tune/doc.c): a typed result written as the
 * document with its keys in the order the search reaches them (written again as the search
 * goes on, a key keeps its place), and the decisions read back as an interrupted tune
 * resumes them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "tune/search_api.h"
#include "xmalloc.h"

static double runs[] = { 10, 12, 11 };

/* The keys of doc, comma-separated, in order. */
static void
keys(const json_t *doc, char *out, size_t len)
{
	const char *k;
	json_t *v;

	out[0] = 0;
	json_object_foreach((json_t *)doc, k, v)
	{
		strncat(out, k, len - strlen(out) - 1);
		strncat(out, ",", len - strlen(out) - 1);
	}
}

/* A result as the search leaves it mid-way: planned, started, one decision made. */
static void
midway(struct tuner_result *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < KNOB_COUNT; i++)
		r->dec[i].k = knob_get((enum knob_id)i);
	r->planned = true;
	r->plan = (struct tuner_plan){ .candidates = 7,
				       .alpha = 0.05,
				       .alpha_look = 0.001,
				       .alpha_same = 0.05,
				       .min_gain = 0.03,
				       .looks = { 8, 16 },
				       .nlooks = 2,
				       .look_first = 0.004,
				       .look_first_n = 8 };
	r->started = true;
	r->start_score = (struct tuner_score){ .v = xmalloc(sizeof(runs)), .n = 3 };
	memcpy(r->start_score.v, runs, sizeof(runs));
	r->kept[r->nkept++] = (struct tuner_kept){ .k = knob_get(KNOB_SMB_USE_SENDFILE),
						   .after = xstrdup("yes"),
						   .applied = true,
						   .tried = true,
						   .verdict = TUNE_BETTER,
						   .reason = xstrdup("better: +20%") };
}

/* ... and at its end: the after-score paired, one knob out of time. */
static void
finish(struct tuner_result *r)
{
	r->paired = true;
	r->after_protos = PROTO_SMB;
	r->unchanged_protos = PROTO_NFS;
	r->after_pairs = 8;
	r->improvement = (struct tune_effect){
		.verdict = TUNE_BETTER, .est = 0.2, .lo = 0.1, .hi = INFINITY, .n = 8
	};
	r->kept[r->nkept++] = (struct tuner_kept){ .k = knob_get(KNOB_SMB_SMB_ENCRYPT),
						   .tried = true,
						   .verdict = TUNE_WORSE,
						   .reason = xstrdup("worse: -30%") };
	r->untried[r->nuntried++] = knob_get(KNOB_SMB_SERVER_SIGNING);
	/* a screen whose every pair failed: tried, nothing measured */
	r->dec[KNOB_SMB_MULTICHANNEL].tried = true;
	snprintf(r->dec[KNOB_SMB_MULTICHANNEL].reason, sizeof(r->dec[0].reason),
		 "failed: no client result over smb (see errors)");
	r->dec[KNOB_SMB_USE_SENDFILE].tried = true;
	r->dec[KNOB_SMB_USE_SENDFILE].verdict = TUNE_SAME;
	r->dec[KNOB_SMB_USE_SENDFILE].e = (struct tune_effect){
		.verdict = TUNE_SAME, .est = 0.01, .lo = -0.02, .hi = 0.02, .n = 40
	};
	r->done = true;
	r->tuner_s = 42;
}

static void
test_keys_in_order(void **state)
{
	struct tuner_result r;
	json_t *doc = json_pack("{s:i, s:s}", "tune", 3, "status", "running"), *x;
	char k[1024];

	(void)state;
	midway(&r);
	tuner_result_json(&r, doc);
	keys(doc, k, sizeof(k));
	assert_string_equal(k, "tune,status,plan,before,after,improvement,decided,");
	assert_null(json_object_get(doc, "knobs"));

	finish(&r);
	tuner_result_json(&r, doc);
	keys(doc, k, sizeof(k));
	assert_string_equal(k, "tune,status,plan,before,after,improvement,decided,after_protocols,"
			       "unchanged_protocols,after_pairs,improvement_interval,"
			       "improvement_verdict,not_tried_budget,knobs,tuner_s,");
	/* Written once at the end (no save), "decided" follows the after-score. */
	x = json_object();
	tuner_result_json(&r, x);
	keys(x, k, sizeof(k));
	assert_string_equal(k, "plan,before,after,improvement,after_protocols,unchanged_protocols,"
			       "after_pairs,improvement_interval,improvement_verdict,decided,"
			       "not_tried_budget,knobs,tuner_s,");
	json_decref(x);

	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(doc, "plan"), "candidates")), 7);
	assert_int_equal(json_array_size(json_object_get(json_object_get(doc, "plan"), "looks")),
			 2);
	/* the first look's half of the budget, and no such look for costs here */
	x = json_object_get(json_object_get(doc, "plan"), "first_look");
	assert_int_equal(json_integer_value(json_object_get(x, "pairs")), 8);
	assert_true(json_real_value(json_object_get(x, "alpha_look")) == 0.004);
	assert_null(json_object_get(json_object_get(doc, "plan"), "first_look_cost"));
	{
		char err[256], *text = tune_report_text(doc, err, sizeof(err));

		assert_non_null(text);
		assert_non_null(strstr(text, "(better at 0.004 at 8 pairs, then 0.001 a look)"));
		free(text);
	}
	assert_true(json_real_value(json_object_get(json_object_get(doc, "before"), "median")) ==
		    11);
	assert_int_equal(json_array_size(json_object_get(json_object_get(doc, "after"), "runs")),
			 3);
	assert_true(json_real_value(json_object_get(doc, "improvement")) == 0.2);
	/* an interval with an unbounded end is none: never infinite, nor a stand-in for it */
	assert_true(json_is_null(json_object_get(doc, "improvement_interval")));
	assert_string_equal(json_string_value(json_object_get(doc, "improvement_verdict")),
			    "better");
	assert_string_equal(
		json_string_value(json_array_get(json_object_get(doc, "after_protocols"), 0)),
		"smb");
	assert_string_equal(
		json_string_value(json_array_get(json_object_get(doc, "not_tried_budget"), 0)),
		"smb.server_signing");
	assert_int_equal(json_array_size(json_object_get(doc, "knobs")), KNOB_COUNT);
	/* no pair measured it: no effect and no interval, not a 0 and a [0, 0] */
	x = json_array_get(json_object_get(doc, "knobs"), KNOB_SMB_MULTICHANNEL);
	assert_string_equal(json_string_value(json_object_get(x, "name")), "smb.multichannel");
	assert_true(json_is_null(json_object_get(x, "effect")));
	assert_true(json_is_null(json_object_get(x, "interval")));
	x = json_array_get(json_object_get(doc, "knobs"), KNOB_SMB_USE_SENDFILE);
	assert_true(json_real_value(json_object_get(x, "effect")) == 0.01);
	assert_true(json_real_value(json_array_get(json_object_get(x, "interval"), 1)) == 0.02);
	assert_int_equal(json_object_size(json_object_get(doc, "decided")), 2);
	tuner_result_release(&r);
	json_decref(doc);
}

/* The decisions written, read back: what an interrupted tune resumes. */
static void
test_resume_round_trip(void **state)
{
	struct tuner_result r;
	struct tuner_kept *back = xcalloc(KNOB_COUNT, sizeof(*back));
	json_t *doc = json_object(), *dec;
	const struct tuner_kept *a, *b;

	(void)state;
	midway(&r);
	finish(&r);
	tuner_result_json(&r, doc);
	dec = json_object_get(doc, "decided");
	json_object_set_new(dec, "no.such_knob", json_object()); /* skipped */
	json_object_set_new(dec, "smb.server_signing", json_integer(1));
	tuner_resume_from_json(dec, back);
	for (size_t i = 0; i < r.nkept; i++) {
		a = &r.kept[i];
		b = &back[a->k->id];
		assert_ptr_equal(b->k, a->k);
		assert_true(b->applied == a->applied && b->tried == a->tried);
		assert_int_equal(b->verdict, a->verdict);
		assert_string_equal(b->reason, a->reason);
		assert_true((a->after == NULL) == (b->after == NULL));
		if (a->after)
			assert_string_equal(b->after, a->after);
	}
	assert_null(back[KNOB_SMB_SERVER_SIGNING].k);
	tuner_resume_release(back);
	free(back);
	tuner_result_release(&r);
	json_decref(doc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_in_order),
		cmocka_unit_test(test_resume_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
