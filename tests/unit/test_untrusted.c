/* test_untrusted.c - what arrives from a peer or a config: printed through one escaping
 * (esc_term: control characters, newlines too, as \xNN) and parsed within plausible bounds
 * (a 150,000-run result is refused at once, a stored interval is not bootstrapped again). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "esc.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
test_esc_term(void **state)
{
	/* Octal escapes where a hex one would swallow the next character. */
	static const struct {
		const char *in;
		size_t len;
		const char *want;
	} cases[] = {
		{ "nas-1.local", 11, "nas-1.local" },
		{ "a\nb\r\tc", 6, "a\\x0ab\\x0d\\x09c" },
		{ "\033[31mred\033[0m", 12, "\\x1b[31mred\\x1b[0m" },
		{ "del\177", 4, "del\\x7f" },
		{ "caf\303\251 \342\202\254", 9, "caf\303\251 \342\202\254" }, /* é €: kept */
		{ "\302\2332J", 4, "\\xc2\\x9b2J" },			       /* C1 CSI, UTF-8 */
		{ "\2332J", 3, "\\x9b2J" },				       /* raw C1 */
		{ "\303", 1, "\\xc3" },					       /* cut short */
		{ "\300\257", 2, "\\xc0\\xaf" },			       /* overlong '/' */
		{ "\355\240\200", 3, "\\xed\\xa0\\x80" },		       /* a surrogate */
		{ "\342\200\256txt", 6, "\\xe2\\x80\\xaetxt" },		       /* RTL override */
		{ "a\0b", 3, "a\\x00b" },
	};
	size_t i;
	char *s;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = esc_term_len(cases[i].in, cases[i].len);
		assert_string_equal(s, cases[i].want);
		free(s);
	}
	s = esc_term(NULL);
	assert_string_equal(s, "(null)");
	free(s);
	assert_false(esc_term_needed("plain text"));
	assert_true(esc_term_needed("two\nlines"));
}

static void
test_esc_json(void **state)
{
	json_t *doc = json_pack("{s:s, s:[s, i], s:{s:s}}", "host", "evil\n\x1b[2Jgeneration 42",
				"list", "ok", 7, "obj", "k\tey", "v\r");
	json_t *e = esc_json(doc);

	(void)state;
	assert_string_equal(json_string_value(json_object_get(e, "host")),
			    "evil\\x0a\\x1b[2Jgeneration 42");
	assert_string_equal(json_string_value(json_array_get(json_object_get(e, "list"), 0)), "ok");
	assert_int_equal(json_integer_value(json_array_get(json_object_get(e, "list"), 1)), 7);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(e, "obj"), "k\\x09ey")),
		"v\\x0d");
	json_decref(e);
	json_decref(doc);
}

static json_t *
result_json(size_t nruns, bool with_ci)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "target", "smb://nas/Data", "protocol",
			      "smb", "workload", "seq-read", "metric", "read", "unit", "MB/s");
	json_t *runs = json_array();
	size_t i;

	for (i = 0; i < nruns; i++)
		json_array_append_new(runs, json_real(100.0 + (double)(i % 17)));
	json_object_set_new(o, "runs", runs);
	if (with_ci) {
		json_object_set_new(o, "ci95_low", json_real(101.5));
		json_object_set_new(o, "ci95_high", json_real(108.25));
	}
	return o;
}

static void
test_result_bounds(void **state)
{
	struct bench_result r;
	char err[256], *big;
	json_t *j;
	double t0;
	int i;

	(void)state;
	/* 150,000 runs: refused before anything is summarised (it took ~30 s of bootstrap). */
	j = result_json(150000, false);
	t0 = now();
	assert_int_equal(bench_result_from_json(j, &r, err, sizeof(err)), -EINVAL);
	assert_true(now() - t0 < 1.0);
	assert_non_null(strstr(err, "150000 runs"));
	json_decref(j);
	/* The most a run can make is taken. */
	j = result_json(BENCH_RESULT_MAX_RUNS, true);
	assert_int_equal(bench_result_from_json(j, &r, err, sizeof(err)), 0);
	assert_int_equal(r.nruns, BENCH_RESULT_MAX_RUNS);
	bench_result_clear(&r);
	/* A string longer than any a run writes is refused. */
	big = calloc(1, BENCH_RESULT_MAX_STR + 2);
	memset(big, 'x', BENCH_RESULT_MAX_STR + 1);
	json_object_set_new(j, "client", json_string(big));
	assert_int_equal(bench_result_from_json(j, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "client"));
	free(big);
	json_decref(j);
	/* A stored interval is taken as it is: 200 results of 1000 runs load in well under a
	 * second, where bootstrapping each again took about a minute here. */
	j = result_json(BENCH_RESULT_MAX_RUNS, true);
	t0 = now();
	for (i = 0; i < 200; i++) {
		assert_int_equal(bench_result_from_json(j, &r, err, sizeof(err)), 0);
		assert_true(r.st.ci95_low == 101.5 && r.st.ci95_high == 108.25);
		bench_result_clear(&r);
	}
	assert_true(now() - t0 < 2.0);
	json_decref(j);
	/* Without one it is bootstrapped (bounded by the run count above). */
	j = result_json(50, false);
	assert_int_equal(bench_result_from_json(j, &r, err, sizeof(err)), 0);
	assert_true(r.st.ci95_low > 0 && r.st.ci95_low <= r.st.median &&
		    r.st.median <= r.st.ci95_high);
	bench_result_clear(&r);
	json_decref(j);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_esc_term),
		cmocka_unit_test(test_esc_json),
		cmocka_unit_test(test_result_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
