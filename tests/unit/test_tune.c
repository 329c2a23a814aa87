/* test_tune.c - the tuner's pure parts: scores per run, protocol choice
 * per client, and the reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"
#include "tune/report.h"
#include "xmalloc.h"

static void
add_wl(struct bench_results *rs, const char *workload, const char *metric, const char *unit,
       const double *runs, size_t n)
{
	struct bench_result r = { 0 };

	r.target = "t";
	r.protocol = "smb";
	r.workload = (char *)workload;
	r.metric = (char *)metric;
	r.unit = (char *)unit;
	r.client = "loopback";
	r.cache = "hot";
	r.runs = (double *)runs;
	r.nruns = n;
	r.pass = -1;
	bench_results_add(rs, &r);
}

static void
add(struct bench_results *rs, const char *unit, const double *runs, size_t n)
{
	add_wl(rs, "seq-read", "read", unit, runs, n);
}

static void
test_scores(void **state)
{
	static const double a[] = { 100, 400, 100 }, b[] = { 400, 100, 100, 7 },
			    lat[] = { 5, 5, 5 };
	struct bench_results rs = { 0 };
	double *s;
	size_t n;

	(void)state;
	assert_int_equal(tune_scores(&rs, 0, &s, &n), -ENOENT);
	add(&rs, "us", lat, 3);
	assert_int_equal(tune_scores(&rs, 0, &s, &n), -ENOENT); /* latencies do not score */
	add(&rs, "MB/s", a, 3);
	add(&rs, "files/s", b, 4);
	assert_int_equal(tune_scores(&rs, 0, &s, &n), 0);
	assert_int_equal(n, 3);		      /* the shortest run count */
	assert_true(fabs(s[0] - 200) < 1e-9); /* sqrt(100 * 400) */
	assert_true(fabs(s[1] - 200) < 1e-9);
	assert_true(fabs(s[2] - 100) < 1e-9);
	free(s);
	assert_int_equal(tune_scores(&rs, 2, &s, &n), 0); /* from: only the last result */
	assert_int_equal(n, 4);
	assert_true(fabs(s[3] - 7) < 1e-9);
	free(s);
	bench_results_clear(&rs);
}

/* The small-work workloads score too: big-dir and source-tree as operations a second, the
 * metadata workload's mean time per operation as its rate; percentiles still do not. */
static void
test_scores_small_work(void **state)
{
	static const double ops[] = { 2000, 8000 }, us[] = { 250, 1000 }, p99[] = { 9, 9 };
	struct bench_results rs = { 0 };
	double *s;
	size_t n;

	(void)state;
	add_wl(&rs, "video-frames", "write-p99", "us", p99, 2);
	add_wl(&rs, "small-io", "write-1k-p99", "us", p99, 2);
	assert_int_equal(tune_scores(&rs, 0, &s, &n), -ENOENT);
	add_wl(&rs, "big-dir", "lookup-miss", "ops/s", ops, 2);
	assert_int_equal(tune_scores(&rs, 0, &s, &n), 0);
	assert_true(fabs(s[0] - 2000) < 1e-9 && fabs(s[1] - 8000) < 1e-9);
	free(s);
	add_wl(&rs, "metadata", "stat-miss-cold", "us", us, 2); /* 4000 and 1000 a second */
	assert_int_equal(tune_scores(&rs, 0, &s, &n), 0);
	assert_true(fabs(s[0] - sqrt(2000.0 * 4000)) < 1e-6);
	assert_true(fabs(s[1] - sqrt(8000.0 * 1000)) < 1e-6);
	free(s);
	bench_results_clear(&rs);
}

/* Each workload weighs the same: small-files' five rates do not outvote seq-read's one. */
static void
test_scores_per_workload(void **state)
{
	static const double seq[] = { 100, 400 }, f1[] = { 10, 10 }, f2[] = { 1000, 1000 };
	struct bench_results rs = { 0 };
	double *s;
	size_t n;

	(void)state;
	add_wl(&rs, "seq-read", "read", "MB/s", seq, 2);
	for (int i = 0; i < 4; i++)
		add_wl(&rs, "small-files", "create", "files/s", f1, 2);
	add_wl(&rs, "small-files", "delete", "files/s", f2, 2);
	assert_int_equal(tune_scores(&rs, 0, &s, &n), 0);
	/* small-files: (10^4 * 1000)^(1/5) = 10^1.4; with seq-read's 100 and 400, halves */
	assert_true(fabs(s[0] - sqrt(100 * pow(10, 1.4))) < 1e-6);
	assert_true(fabs(s[1] - sqrt(400 * pow(10, 1.4))) < 1e-6);
	assert_true(fabs(s[1] / s[0] - 2) < 1e-9); /* seq-read's x4 is half the score: x2 */
	free(s);
	bench_results_clear(&rs);
}

/* A part of the score: the workloads of a mask weigh as in the whole (each group its share,
 * its metrics sharing it), every other group held at 1; no group of the mask measured, the
 * whole score. */
static void
test_scores_part(void **state)
{
	static const double w[] = { 100, 400 }, r1[] = { 900, 900 }, r2[] = { 100, 100 };
	struct bench_results rs = { 0 };
	double *s, *p;
	size_t n;

	(void)state;
	add_wl(&rs, "seq-write", "write", "MB/s", w, 2);
	add_wl(&rs, "seq-read", "read", "MB/s", r1, 2);
	add_wl(&rs, "seq-read", "read-again", "MB/s", r2, 2); /* seq-read's: sqrt(900*100) */
	assert_int_equal(tune_scores(&rs, 0, &s, &n), 0);
	assert_int_equal(tune_scores_part(&rs, 0, WL_SEQ_WRITE, &p, &n), 0);
	assert_int_equal(n, 2);
	assert_true(fabs(p[0] - sqrt(100)) < 1e-9 && fabs(p[1] - sqrt(400)) < 1e-9);
	free(p);
	assert_int_equal(tune_scores_part(&rs, 0, WL_SEQ_READ, &p, &n), 0);
	assert_true(fabs(p[0] - sqrt(300)) < 1e-9); /* the read group's 300, at half weight */
	/* the parts make the whole */
	for (int i = 0; i < 2; i++) {
		double q;

		free(p);
		assert_int_equal(tune_scores_part(&rs, 0, WL_SEQ_WRITE, &p, &n), 0);
		q = p[i];
		free(p);
		assert_int_equal(tune_scores_part(&rs, 0, WL_SEQ_READ, &p, &n), 0);
		assert_true(fabs(q * p[i] - s[i]) < 1e-6);
	}
	free(p);
	assert_int_equal(tune_scores_part(&rs, 0, WL_SEQ_WRITE | WL_SEQ_READ, &p, &n), 0);
	assert_true(fabs(p[0] - s[0]) < 1e-9 && fabs(p[1] - s[1]) < 1e-9);
	free(p);
	assert_int_equal(tune_scores_part(&rs, 0, WL_SMALL_FILES, &p, &n), 0); /* none: whole */
	assert_true(fabs(p[0] - s[0]) < 1e-9 && fabs(p[1] - s[1]) < 1e-9);
	free(p);
	free(s);
	bench_results_clear(&rs);
}

static void
test_goal(void **state)
{
	bool wl[BENCH_NWORKLOADS];

	(void)state;
	tune_goal_workloads(GOAL_THROUGHPUT, wl);
	assert_true(wl[BENCH_SEQ_READ] && wl[BENCH_SEQ_WRITE] && !wl[BENCH_SMALL_FILES]);
	tune_goal_workloads(GOAL_SMALL_FILES, wl);
	assert_true(wl[BENCH_SMALL_FILES] && wl[BENCH_METADATA] && !wl[BENCH_SEQ_READ]);
	assert_true(wl[BENCH_BIG_DIR] && wl[BENCH_SOURCE_TREE]);
	assert_int_equal(tune_goal_workloads(GOAL_SMALL_FILES, wl), WL_META);
	/* balanced: bulk and small work, the stats and the big directory that show the
	 * small-work knobs included */
	assert_int_equal(tune_goal_workloads(GOAL_BALANCED, wl),
			 WL_SEQ_WRITE | WL_SEQ_READ | WL_SMALL_FILES | WL_METADATA | WL_BIG_DIR);
	assert_true(wl[BENCH_SEQ_READ] && wl[BENCH_METADATA] && wl[BENCH_BIG_DIR]);
	assert_false(wl[BENCH_SOURCE_TREE]);
	tune_goal_workloads(GOAL_VIDEO, wl);
	assert_true(wl[BENCH_VIDEO]);
}

/* A client's MB/s result for the protocol choice: one run, its median as measured. */
static void
add_client(struct bench_results *rs, const char *client, const char *protocol, const char *unit,
	   double median)
{
	struct bench_result r = { .protocol = (char *)protocol,
				  .unit = (char *)unit,
				  .client = (char *)client,
				  .runs = &median,
				  .nruns = 1,
				  .pass = -1 };

	bench_results_add(rs, &r);
	rs->v[rs->n - 1].st.median = median;
}

static const struct tune_choice *
choice_of(const struct tune_choices *c, const char *prefix)
{
	for (size_t i = 0; i < c->n; i++)
		if (strncmp(c->v[i].client, prefix, strlen(prefix)) == 0)
			return &c->v[i];
	fail_msg("no choice for %s", prefix);
	return NULL;
}

static void
test_protocol_choice(void **state)
{
	struct bench_results res = { 0 };
	struct agent_facts facts[] = {
		{ .hostname = "mac", .os = "Darwin", .os_version = "26.0.0" },
		{ .hostname = "oldmac", .os = "Darwin", .os_version = "24.1" },
		{ .hostname = "lin", .os = "Linux", .os_version = "6.1" },
	};
	const struct tune_agents agents = { .v = facts, .n = 3 };
	const struct tune_share shares[] = {
		{ .name = "TM", .protocols = PROTO_SMB | PROTO_AFP, .time_machine = true },
		{ .name = "Media", .protocols = PROTO_SMB | PROTO_NFS | PROTO_AFP },
		{ .name = "Old", .protocols = PROTO_AFP },
		{ .name = "Exp", .protocols = PROTO_NFS },
	};
	struct tune_choices c;
	const struct tune_choice *mac, *oldmac, *lin;

	(void)state;
	add_client(&res, "mac (198.18.0.11)", "afp", "MB/s", 900);
	add_client(&res, "mac (198.18.0.11)", "smb", "MB/s", 500);
	add_client(&res, "oldmac (198.18.0.13)", "afp", "MB/s", 900);
	add_client(&res, "oldmac (198.18.0.13)", "smb", "MB/s", 500);
	add_client(&res, "lin (198.18.0.12)", "nfs", "MB/s", 800);
	add_client(&res, "lin (198.18.0.12)", "nfs", "MB/s", 200);
	add_client(&res, "lin (198.18.0.12)", "smb", "MB/s", 450);
	add_client(&res, "lin (198.18.0.12)", "smb", "us", 9);
	tune_protocol_choice(&res, &agents, shares, 4, &c);
	assert_int_equal(c.n, 3);
	mac = choice_of(&c, "mac ");
	oldmac = choice_of(&c, "oldmac");
	lin = choice_of(&c, "lin");
	assert_string_equal(mac->protocol, "smb"); /* AFP faster, but macOS 27 has no AFP client */
	assert_non_null(strstr(mac->why, "no AFP client"));
	assert_string_equal(oldmac->protocol,
			    "afp");		   /* measured fastest and still possible there */
	assert_string_equal(lin->protocol, "smb"); /* geometric mean of nfs is 400 < 450 */
	assert_string_equal(mac->cls, "macOS 27+");
	assert_non_null(strstr(mac->why, "Time Machine shares use SMB"));
	/* Per share: Time Machine is SMB on macOS even where AFP measured faster. */
	assert_int_equal(mac->nshares, 3); /* "Old" is AFP only: nothing for it */
	assert_string_equal(mac->shares[0].share, "TM");
	assert_string_equal(mac->shares[0].protocol, "smb");
	assert_string_equal(mac->shares[1].protocol, "smb"); /* AFP gone on macOS 27 */
	assert_string_equal(mac->shares[2].share, "Exp");    /* NFS, not measured from there */
	assert_string_equal(mac->shares[2].protocol, "nfs");
	assert_non_null(strstr(mac->shares[2].why, "not measured"));
	assert_string_equal(oldmac->shares[0].protocol, "smb"); /* Time Machine */
	assert_string_equal(oldmac->shares[1].protocol, "afp"); /* fastest it offers */
	assert_string_equal(oldmac->shares[2].protocol, "afp");
	assert_string_equal(lin->shares[0].protocol, "smb"); /* no AFP on Linux, no TM */
	assert_string_equal(lin->shares[1].protocol, "smb");
	assert_string_equal(lin->shares[2].share, "Exp"); /* "Old" skipped: AFP only */
	assert_string_equal(lin->shares[2].protocol, "nfs");
	assert_non_null(strstr(lin->shares[2].why, "fastest"));
	tune_choices_clear(&c);
	bench_results_clear(&res);
}

static void
test_reports(void **state)
{
	json_t *doc = json_loads(
		"{\"tune\":3,\"goal\":\"throughput\",\"status\":\"done\","
		"\"budget_s\":60,\"elapsed_s\":12.5,\"targets\":[\"smb://127.0.0.1/M\"],"
		"\"before\":{\"median\":100,\"ci95_low\":90,\"ci95_high\":110},"
		"\"after\":{\"median\":150,\"ci95_low\":140,\"ci95_high\":160},\"improvement\":0.5,"
		"\"after_pairs\":1,\"improvement_interval\":[-1,1e9],"
		"\"improvement_verdict\":\"undecided\","
		"\"knobs\":[{\"name\":\"smb.smb_encrypt\",\"safety\":\"safe\",\"before\":"
		"\"required\","
		"\"after\":\"default\",\"applied\":true,\"reason\":\"better: "
		"<50%>\",\"effect\":0.5,\"candidates\":[{\"value\":\"off\",\"verdict\":"
		"\"undecided\",\"effect\":null,\"interval\":null,\"pairs\":0}]}],"
		"\"results\":[],\"advice\":[]}",
		0, NULL);
	char err[128], *t, *h;

	(void)state;
	t = tune_report_text(doc, err, sizeof(err));
	assert_non_null(t);
	assert_non_null(strstr(t, "smb.smb_encrypt"));
	/* one pair: an older document's unbounded ends (-1, 1e9) are no interval, never an
	 * infinite one */
	assert_non_null(strstr(
		t,
		"after  150.0 [140.0, 160.0]  (+50.0% too few pairs for an interval, undecided)"));
	assert_null(strstr(t, "inf"));
	h = tune_report_html(doc, err, sizeof(err));
	assert_non_null(h);
	assert_non_null(strstr(h, "<svg"));
	assert_non_null(strstr(h, "better: &lt;50%&gt;")); /* escaped */
	assert_null(strstr(h, "<script"));
	assert_null(strstr(h, "inf"));
	/* a candidate no pair measured: named, no dot and no figure */
	assert_non_null(strstr(h, "smb.smb_encrypt = off"));
	assert_null(strstr(h, "0 pairs"));
	free(t);
	free(h);
	json_decref(doc);
	doc = json_loads("{\"results\":[]}", 0, NULL);
	assert_null(tune_report_text(doc, err, sizeof(err)));
	assert_non_null(strstr(err, "not a finished tune"));
	json_decref(doc);
}

/* A stored document read into the typed report once: present fields as stored, another
 * type or none as absent (the printer's default), an unbounded interval as none. */
static void
test_report_read(void **state)
{
	json_t *doc = json_loads(
		"{\"tune\":7,\"goal\":3,\"before\":{\"median\":10},\"after\":[],"
		"\"after_pairs\":8.0,\"improvement_interval\":[0.01,0.2],"
		"\"plan\":{\"candidates\":5,\"alpha_cost\":null},"
		"\"knobs\":[{\"name\":\"smb.x\",\"design\":null,\"runs\":24,\"applied\":true,"
		"\"candidates\":[{\"value\":\"yes\",\"interval\":[-1,1e9],\"pairs\":16},7]}],"
		"\"protocol_choice\":[{\"client\":\"c\",\"scores\":{\"nfs\":2,\"smb\":\"x\"}}]}",
		0, NULL);
	struct tune_report r;
	char err[128];

	(void)state;
	assert_true(tune_report_read(doc, &r, err, sizeof(err)));
	assert_int_equal(r.tune, 7);
	assert_null(r.goal);		    /* not a string */
	assert_int_equal(r.after_pairs, 0); /* not an integer */
	assert_true(r.before.present && r.before.median == 10);
	assert_false(r.after.present);
	assert_true(r.improvement_interval.bounded && r.improvement_interval.hi == 0.2);
	assert_true(r.planned && r.candidates == 5 && r.has_alpha_cost && !r.has_first_look);
	assert_int_equal(r.nknobs, 1);
	assert_true(r.knobs[0].has_design && !r.knobs[0].design && r.knobs[0].runs == 24);
	assert_true(r.knobs[0].applied && !r.knobs[0].has_confirmation);
	assert_int_equal(r.knobs[0].ncand, 2);
	assert_string_equal(r.knobs[0].cand[0].value, "yes");
	assert_false(r.knobs[0].cand[0].iv.bounded);
	assert_int_equal(r.knobs[0].cand[0].pairs, 16);
	assert_null(r.knobs[0].cand[1].value); /* not an object: every field absent */
	assert_int_equal(r.nchoices, 1);
	assert_int_equal(r.choices[0].nscores, 2);
	assert_string_equal(r.choices[0].scores[1].protocol, "smb");
	assert_true(r.choices[0].scores[0].score == 2 && r.choices[0].scores[1].score == 0);
	tune_report_clear(&r);
	json_decref(doc);
	doc = json_loads("{\"knobs\":[]}", 0, NULL);
	assert_false(tune_report_read(doc, &r, err, sizeof(err)));
	assert_non_null(strstr(err, "not a finished tune"));
	json_decref(doc);
}

/* What a client or the network said (a host name, a share, a target, an error) reaches the
 * text and the page escaped, wherever the document holds it. */
static void
test_report_strings_escaped(void **state)
{
	json_t *doc = json_pack(
		"{s:i, s:s, s:[s], s:{s:f, s:f, s:f}, s:[{s:s, s:s, s:b, s:s}], "
		"s:[{s:s, s:s, s:s, s:s, s:s}], "
		"s:[{s:s, s:s, s:s, s:s, s:{s:f}, s:[{s:s, s:s, s:s}]}], s:[{s:s, s:s}]}",
		"tune", 4, "status", "done", "targets", "smb://h/\x1b[2J", "before", "median", 10.0,
		"ci95_low", 9.0, "ci95_high", 11.0, "knobs", "name", "smb.x", "reason",
		"r\x1b]0;t\x07", "applied", 0, "design", "d\xc2\x9b", "results", "target",
		"smb://t\x1b[1m", "workload", "seq-read", "metric", "read", "unit", "MB/s",
		"bottleneck", "disk\x1b[K", "protocol_choice", "client", "evil\x1b[31m\nhost", "os",
		"Linux", "protocol", "smb", "why", "w\x07", "scores", "smb\x1b", 5.0, "shares",
		"share", "Sh\x1b[2Jare", "protocol", "smb", "why", "y", "advice", "client",
		"adv\x1b[31m", "advice", "mount \x1b[2J");
	char err[128], *t, *h;

	(void)state;
	assert_non_null(doc);
	t = tune_report_text(doc, err, sizeof(err));
	h = tune_report_html(doc, err, sizeof(err));
	assert_non_null(t);
	assert_non_null(h);
	assert_null(strchr(t, '\x1b'));
	assert_null(strchr(h, '\x1b'));
	assert_null(strchr(t, '\x07'));
	assert_non_null(strstr(t, "use for evil\\x1b[31m\\x0ahost [Linux]"));
	assert_non_null(strstr(t, "  share Sh\\x1b[2Jare: smb (y)"));
	assert_non_null(strstr(t, "advice for adv\\x1b[31m: mount \\x1b[2J"));
	assert_non_null(strstr(t, "  target smb://h/\\x1b[2J"));
	assert_non_null(strstr(t, "bottleneck: smb://t\\x1b[1m seq-read read: disk\\x1b[K"));
	assert_non_null(strstr(h, "smb\\x1b")); /* a score's protocol, an object key */
	free(t);
	free(h);
	json_decref(doc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scores),
		cmocka_unit_test(test_scores_small_work),
		cmocka_unit_test(test_scores_per_workload),
		cmocka_unit_test(test_scores_part),
		cmocka_unit_test(test_goal),
		cmocka_unit_test(test_protocol_choice),
		cmocka_unit_test(test_reports),
		cmocka_unit_test(test_report_read),
		cmocka_unit_test(test_report_strings_escaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
