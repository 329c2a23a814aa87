/* preflight.c - the checks before a benchmark writes on a target: not a Time Machine
 * destination (unless forced), this host's stale scratch directories removed, and free space
 * for twice what the workload writes plus a margin. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "scratch.h"
#include "units.h"

/* A Time Machine destination holds sparsebundles, a Backups.backupdb or Apple's markers. */
static const char *
time_machine_marker(const struct scratch_names *ns)
{
	size_t i, len;

	for (i = 0; i < ns->n; i++) {
		len = strlen(ns->v[i]);
		if ((len > 13 && strcmp(ns->v[i] + len - 13, ".sparsebundle") == 0) ||
		    strcmp(ns->v[i], "Backups.backupdb") == 0 ||
		    strncmp(ns->v[i], ".com.apple.timemachine", 22) == 0 ||
		    strncmp(ns->v[i], ".com.apple.TimeMachine", 22) == 0)
			return ns->v[i];
	}
	return NULL;
}

static void
fmt_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= 1000000000ull)
		snprintf(buf, len, "%.1f GB", (double)b / 1e9);
	else
		snprintf(buf, len, "%.1f MB", (double)b / 1e6);
}

int
bench_preflight(const struct bench_driver *d, struct bench_conn *c, const char *url,
		const char *what, uint64_t footprint, bool force, char *err, size_t errlen)
{
	struct scratch_names ns = { 0 };
	const char *marker;
	uint64_t free_b = 0, need;
	char a[32], b[32];
	int rc;

	if ((rc = scratch_names_list(d, c, "", &ns)) < 0) {
		snprintf(err, errlen, "cannot list %s: %s", url, d->error(c));
		scratch_names_clear(&ns);
		return rc;
	}
	if (!force && (marker = time_machine_marker(&ns))) {
		snprintf(err, errlen,
			 "%s looks like a Time Machine share (it holds %s); refusing to "
			 "benchmark it — use --force to do it anyway",
			 url, marker);
		scratch_names_clear(&ns);
		return -EPERM;
	}
	scratch_names_clear(&ns);
	/* What this host's crashed runs left, known by what it is, never by its name. */
	scratch_clean_stale(d, c, url);

	if ((rc = d->space(c, "", &free_b)) < 0) {
		snprintf(err, errlen, "cannot read the free space of %s: %s", url, d->error(c));
		return rc;
	}
	/* Saturating: a footprint near 2^64 must not wrap to a small need and pass. */
	need = units_add_sat(units_mul_sat(2, footprint), BENCH_SPACE_MARGIN);
	if (free_b < need) {
		fmt_bytes(free_b, a, sizeof(a));
		fmt_bytes(need, b, sizeof(b));
		snprintf(err, errlen,
			 "not enough free space on %s for %s: %s free, need %s (twice "
			 "what it writes, plus %llu MiB); nothing was written — use a smaller "
			 "--size "
			 "or free some space",
			 url, what, a, b, (unsigned long long)(BENCH_SPACE_MARGIN >> 20));
		return -ENOSPC;
	}
	return 0;
}
