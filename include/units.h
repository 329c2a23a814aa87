/* units.h - sizes, durations and lists as people write them. Pure. */
#ifndef NASTUNE_UNITS_H
#define NASTUNE_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many decimals in a size ("1.999999T"): 10^6 is the divisor it may reach. */
#define UNITS_FRAC_DIV_MAX 1000000u
/* Durations are at most ten years. */
#define UNITS_DURATION_MAX (10ull * 365 * 86400)

/* "500G", "2T", "4096", "1.5T" (binary units K M G T P, optional "iB"/"B"; a fraction with
 * at most 6 decimals and a unit, rounded down to a whole byte). Returns 0 and sets *bytes, or
 * -EINVAL (bad syntax or unit) / -ERANGE (more than UINT64_MAX bytes, i.e. 16 EiB). Callers
 * apply their own, smaller upper bounds. */
int units_parse_size(const char *s, uint64_t *bytes);
/* a + b and a * b, or UINT64_MAX when the result does not fit: a size that saturates still
 * fails every "is there room" check instead of wrapping to a small number. */
uint64_t units_add_sat(uint64_t a, uint64_t b);
uint64_t units_mul_sat(uint64_t a, uint64_t b);
/* "90s", "10m", "1h", "1h30m", "45" (seconds, at most UNITS_DURATION_MAX). Returns 0 or
 * -EINVAL / -ERANGE. */
int units_parse_duration(const char *s, unsigned *seconds);
/* Largest exact binary unit: 2199023255552 -> "2T", 1536 -> "1536" ... writes into buf. */
void units_format_size(uint64_t bytes, char *buf, size_t len);

/* A whole number from lo to hi, the whole of s ("12"; no sign is needed, no space or unit is
 * allowed). Returns 0, or -EINVAL. */
int units_parse_int(const char *s, int lo, int hi, int *out);
/* Whether name is one of the comma-separated list ("smb,nfs"); a NULL list holds everything. */
bool units_in_list(const char *list, const char *name);

#endif
