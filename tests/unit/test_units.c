/* test_units.c - sizes at their limits: fractions of every unit exact to the byte (a P
 * fraction once wrapped), the 64-bit edge, saturating arithmetic, the benchmark's bounds and
 * footprints that cannot wrap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "bench.h"
#include "units.h"

static void
test_fractions(void **state)
{
	uint64_t b;

	(void)state;
	/* floor(1.99999 * 2^50): 1.017P before the fix. */
	assert_int_equal(units_parse_size("1.99999P", &b), 0);
	assert_true(b == (1ull << 50) + (uint64_t)(((unsigned __int128)99999 << 50) / 100000));
	assert_true(b > (1ull << 50) * 199 / 100);
	assert_int_equal(units_parse_size("1.5P", &b), 0);
	assert_true(b == 3ull << 49);
	assert_int_equal(units_parse_size("0.999999P", &b), 0);
	assert_true(b < (1ull << 50) && b > (1ull << 50) / 10 * 9);
	assert_int_equal(units_parse_size("1.999999T", &b), 0);
	assert_true(b < (2ull << 40) && b > (1ull << 40) * 19 / 10);
	assert_int_equal(units_parse_size("1.3K", &b), 0);
	assert_true(b == 1331); /* rounded down to a whole byte */
	assert_int_equal(units_parse_size("1.9999999P", &b), -EINVAL); /* 7 decimals */
	assert_int_equal(units_parse_size("1.5", &b), -EINVAL);	       /* fractions of a byte */
	assert_int_equal(units_parse_size("1.", &b), -EINVAL);
	assert_int_equal(units_parse_size("1.5Q", &b), -EINVAL);
	assert_int_equal(units_parse_size("", &b), -EINVAL);
	assert_int_equal(units_parse_size("1 G", &b), -EINVAL);
	assert_int_equal(units_parse_size("1GiBx", &b), -EINVAL);
}

static void
test_edges(void **state)
{
	uint64_t b;

	(void)state;
	assert_int_equal(units_parse_size("18446744073709551615", &b), 0);
	assert_true(b == UINT64_MAX);
	assert_int_equal(units_parse_size("18446744073709551616", &b), -ERANGE);
	assert_int_equal(units_parse_size("16383P", &b), 0);
	assert_true(b == 16383ull << 50);
	assert_int_equal(units_parse_size("16383.999999P", &b), 0);
	assert_true(b > (16383ull << 50));
	assert_int_equal(units_parse_size("16384P", &b), -ERANGE);
	assert_int_equal(units_parse_size("17179869184G", &b), -ERANGE); /* 2^64 */
	assert_int_equal(units_parse_size("17179869183.999999G", &b), 0);
	assert_int_equal(units_parse_size("99999999999999999999999P", &b), -ERANGE);
	assert_true(units_add_sat(UINT64_MAX - 1, 2) == UINT64_MAX);
	assert_true(units_add_sat(1, 2) == 3);
	assert_true(units_mul_sat(1ull << 32, 1ull << 32) == UINT64_MAX);
	assert_true(units_mul_sat(3, 5) == 15);
}

static void
test_bench_bounds(void **state)
{
	struct bench_opts o = { 0 };
	char err[256];
	int w;

	(void)state;
	assert_int_equal(bench_opts_check(&o, err, sizeof(err)), 0);
	o.size = BENCH_MAX_SIZE;
	assert_int_equal(bench_opts_check(&o, err, sizeof(err)), 0);
	o.size = BENCH_MAX_SIZE + 1;
	assert_int_equal(bench_opts_check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "17592186044417"));
	o.size = 0;
	o.small_files = BENCH_MAX_FILES + 1;
	assert_int_equal(bench_opts_check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "1000001 small files"));
	o.small_files = 0;
	o.video_seconds = 1e300;
	assert_int_equal(bench_opts_check(&o, err, sizeof(err)), -EINVAL);
	/* Footprints never wrap: at the limits they fit; beyond, they saturate. */
	o = (struct bench_opts){ .size = BENCH_MAX_SIZE,
				 .small_files = BENCH_MAX_FILES,
				 .meta_entries = BENCH_MAX_ENTRIES,
				 .video_fps = 240,
				 .video_seconds = 3600,
				 .small_io_read = BENCH_MAX_SIZE,
				 .small_io_write = BENCH_MAX_SIZE };
	for (w = 0; w < BENCH_NWORKLOADS; w++)
		assert_true(bench_footprint((enum bench_workload)w, &o) < (UINT64_MAX >> 2));
	o.size = UINT64_MAX;
	assert_true(bench_footprint(BENCH_COPY, &o) == UINT64_MAX);
	assert_true(bench_footprint(BENCH_RANDOM_IO, &o) == UINT64_MAX);
	o.small_io_read = o.small_io_write = UINT64_MAX / 2 + 1;
	assert_true(bench_footprint(BENCH_SMALL_IO, &o) == UINT64_MAX);
	o.video_seconds = 1e300;
	assert_true(bench_footprint(BENCH_VIDEO, &o) == UINT64_MAX);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fractions),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_bench_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
