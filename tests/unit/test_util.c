/* test_util.c - the small shared helpers: the clocks (timeutil), the stop-request handler
 * (sigstop), comma lists (units_in_list) and URL escaping (bench_url_escape). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_driver.h"
#include "sigstop.h"
#include "timeutil.h"
#include "units.h"

static void
test_clocks(void **state)
{
	char iso[32];
	struct tm tm = { 0 };
	double a = timeutil_mono(), b;
	long long ms = timeutil_mono_ms();

	(void)state;
	b = timeutil_mono();
	assert_true(b >= a);
	assert_true(ms >= (long long)(a * 1000) - 1 &&
		    ms <= (long long)(timeutil_mono() * 1000) + 1);
	timeutil_now_iso(iso, sizeof(iso));
	assert_int_equal(strlen(iso), 20);
	assert_non_null(strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm));
	assert_true(tm.tm_year + 1900 >= 2024);
}

static int previous_seen;

static void
previous(int sig)
{
	previous_seen = sig;
}

static void
test_sigstop(void **state)
{
	struct sigaction old[2], pa = { .sa_handler = previous };

	(void)state;
	sigemptyset(&pa.sa_mask);
	sigaction(SIGTERM, &pa, NULL);
	sigstop_caught = SIGINT; /* a stale value is cleared */
	sigstop_catch(old);
	assert_int_equal(sigstop_caught, 0);
	raise(SIGTERM);
	assert_int_equal(sigstop_caught, SIGTERM);
	assert_int_equal(previous_seen, 0);
	sigstop_restore(old);
	raise(SIGTERM);
	assert_int_equal(previous_seen, SIGTERM); /* the previous handler is back */
	signal(SIGTERM, SIG_DFL);
}

static void
test_lists_and_escapes(void **state)
{
	char *e;

	(void)state;
	assert_true(units_in_list(NULL, "smb"));
	assert_true(units_in_list("smb,nfs", "nfs"));
	assert_false(units_in_list("smb,nfs", "nf"));
	assert_false(units_in_list("", "smb"));
	e = bench_url_escape("/srv/My Media/é?#");
	assert_string_equal(e, "/srv/My%20Media/%C3%A9%3F%23");
	free(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clocks),
		cmocka_unit_test(test_sigstop),
		cmocka_unit_test(test_lists_and_escapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
