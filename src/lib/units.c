/* units.c - sizes, durations and lists as people write them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"
#include "xmalloc.h"

static int
unit_shift(const char *u, unsigned *shift)
{
	static const char units[] = "KMGTP";
	const char *c;

	if (*u == '\0') {
		*shift = 0;
		return 0;
	}
	c = strchr(units, *u >= 'a' && *u <= 'z' ? *u - 32 : *u);
	if (!c || *u == '\0')
		return -EINVAL;
	if (u[1] != '\0' && strcasecmp(u + 1, "iB") != 0 && strcasecmp(u + 1, "B") != 0)
		return -EINVAL;
	*shift = 10 * (unsigned)(c - units + 1);
	return 0;
}

int
units_parse_size(const char *s, uint64_t *bytes)
{
	uint64_t whole = 0, frac = 0, fdiv = 1;
	unsigned __int128 v;
	unsigned shift;
	const char *p = s;

	if (!(*p >= '0' && *p <= '9'))
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
			return -ERANGE;
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (fdiv >= UNITS_FRAC_DIV_MAX)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*p - '0');
			fdiv *= 10;
		}
	}
	if (unit_shift(p, &shift) < 0)
		return -EINVAL;
	if (fdiv > 1 && shift == 0)
		return -EINVAL; /* fractions of a byte */
	/* 128 bits hold whole << 50 and frac (< 10^6 < 2^20) << 50: the fraction of a P once
	 * wrapped here ("1.99999P" gave 1.017P). Rounded down to a whole byte. */
	v = ((unsigned __int128)whole << shift) + (((unsigned __int128)frac << shift) / fdiv);
	if (v > UINT64_MAX)
		return -ERANGE;
	*bytes = (uint64_t)v;
	return 0;
}

uint64_t
units_add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t
units_mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

int
units_parse_duration(const char *s, unsigned *seconds)
{
	uint64_t total = 0;
	const char *p = s;

	if (!*p)
		return -EINVAL;
	while (*p) {
		uint64_t n = 0, mul;

		if (!(*p >= '0' && *p <= '9'))
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			n = n * 10 + (uint64_t)(*p - '0');
			if (n > UNITS_DURATION_MAX)
				return -ERANGE;
		}
		switch (*p) {
		case '\0':
			if (p != s + strspn(s, "0123456789"))
				return -EINVAL; /* "1h30" is ambiguous */
			mul = 1;
			break;
		case 's':
			mul = 1;
			p++;
			break;
		case 'm':
			mul = 60;
			p++;
			break;
		case 'h':
			mul = 3600;
			p++;
			break;
		case 'd':
			mul = 86400;
			p++;
			break;
		default:
			return -EINVAL;
		}
		total += n * mul;
		if (total > UNITS_DURATION_MAX)
			return -ERANGE;
	}
	*seconds = (unsigned)total;
	return 0;
}

void
units_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGTP";
	int i;

	for (i = 4; i >= 0; i--) {
		unsigned shift = 10 * (unsigned)(i + 1);

		if (bytes && (bytes & ((1ULL << shift) - 1)) == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(bytes >> shift),
				 units[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)bytes);
}

bool
units_in_list(const char *list, const char *name)
{
	char *copy, *save = NULL, *tok;
	bool found = false;

	if (!list)
		return true;
	copy = xstrdup(list);
	for (tok = strtok_r(copy, ",", &save); tok && !found; tok = strtok_r(NULL, ",", &save))
		found = strcmp(tok, name) == 0;
	free(copy);
	return found;
}

int
units_parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (int)v;
	return 0;
}
