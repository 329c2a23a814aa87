/* fuzz_units.c - libFuzzer harness for sizes and their arithmetic: any text through
 * units_parse_size (and units_parse_duration) must give 0, -EINVAL or -ERANGE without
 * undefined behaviour; a parsed size must lie within what its digits say (whole << shift up
 * to (whole + 1) << shift, and within 1e-15 of the exact value), print and parse back to
 * itself, and not shrink when its fraction grows; the saturating add and multiply must match
 * 128-bit arithmetic; a benchmark footprint from any options must not wrap. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned
shift_of(char u)
{
	const char *units = "KMGTP",
		   *c = u ? strchr(units, u >= 'a' && u <= 'z' ? u - 32 : u) : NULL;

	return c ? 10 * (unsigned)(c - units + 1) : 0;
}

static void
check_size(const char *s)
{
	uint64_t v, back, whole = 0;
	unsigned __int128 lo, hi;
	long double exact, frac = 0, scale = 1;
	const char *p = s;
	char buf[64], more[96];
	unsigned shift;
	int rc = units_parse_size(s, &v);

	if (rc != 0 && rc != -EINVAL && rc != -ERANGE)
		abort();
	if (rc != 0)
		return;
	for (; *p >= '0' && *p <= '9'; p++)
		whole = whole * 10 + (uint64_t)(*p - '0'); /* it parsed: no overflow */
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++) {
			scale /= 10;
			frac += (long double)(*p - '0') * scale;
		}
	shift = shift_of(*p);
	lo = (unsigned __int128)whole << shift;
	hi = ((unsigned __int128)whole + 1) << shift;
	if (v < lo || (unsigned __int128)v >= hi)
		abort();
	exact = ((long double)whole + frac) * ldexpl(1, (int)shift);
	if (fabsl((long double)v - exact) > 1 + exact * 1e-15L)
		abort();
	units_format_size(v, buf, sizeof(buf));
	if (units_parse_size(buf, &back) != 0 || back != v)
		abort();
	/* One more decimal 9 (when allowed) never gives less. */
	if (strchr(s, '.') && strlen(s) < 80) {
		size_t unit_at = (size_t)(p - s);

		snprintf(more, sizeof(more), "%.*s9%s", (int)unit_at, s, s + unit_at);
		if (units_parse_size(more, &back) == 0 && back < v)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[72];
	uint64_t a, b;
	unsigned secs;
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
	struct bench_opts o = { 0 };
	char err[256];
	int w;

	memcpy(s, data, n);
	s[n] = '\0';
	check_size(s);
	if (units_parse_duration(s, &secs) == 0 && secs > UNITS_DURATION_MAX)
		abort();

	if (size >= 16) {
		unsigned __int128 sum, prod;

		memcpy(&a, data, 8);
		memcpy(&b, data + 8, 8);
		sum = (unsigned __int128)a + b;
		prod = (unsigned __int128)a * b;
		if (units_add_sat(a, b) != (sum > UINT64_MAX ? UINT64_MAX : (uint64_t)sum) ||
		    units_mul_sat(a, b) != (prod > UINT64_MAX ? UINT64_MAX : (uint64_t)prod))
			abort();
	}
	if (size >= 48) {
		uint32_t u[4];
		double d[2];

		memcpy(&o.size, data, 8);
		memcpy(&o.small_io_read, data + 8, 8);
		memcpy(&o.small_io_write, data + 16, 8);
		memcpy(u, data + 24, sizeof(u));
		memcpy(d, data + 32, sizeof(d));
		o.repeats = u[0];
		o.warmup = u[1];
		o.small_files = u[2];
		o.meta_entries = u[3];
		o.video_fps = d[0];
		o.video_seconds = d[1];
		(void)bench_opts_check(&o, err, sizeof(err));
		for (w = 0; w < BENCH_NWORKLOADS; w++) {
			uint64_t fp = bench_footprint((enum bench_workload)w, &o);

			if ((w == BENCH_SEQ_WRITE || w == BENCH_COPY) && o.size && fp < o.size)
				abort(); /* wrapped */
			if (w == BENCH_SMALL_IO && fp < o.small_io_read)
				abort();
		}
	}
	return 0;
}
