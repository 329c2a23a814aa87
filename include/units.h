/* units.h - sizes, durations and lists as people write them. Pure. */
#ifndef NASTUNE_UNITS_H
#define NASTUNE_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "500G", "2T", "4096", "1.5T" (binary units K M G T P, optional "iB"/"B"). Returns 0 and sets
 * *bytes, or -EINVAL (bad syntax or unit) / -ERANGE (overflow). */
int units_parse_size(const char *s, uint64_t *bytes);
/* "90s", "10m", "1h", "1h30m", "45" (seconds). Returns 0 or -EINVAL / -ERANGE. */
int units_parse_duration(const char *s, unsigned *seconds);
/* Largest exact binary unit: 2199023255552 -> "2T", 1536 -> "1536" ... writes into buf. */
void units_format_size(uint64_t bytes, char *buf, size_t len);

/* Whether name is one of the comma-separated list ("smb,nfs"); a NULL list holds everything. */
bool units_in_list(const char *list, const char *name);

#endif
