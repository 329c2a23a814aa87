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
	unsigned shift;
	const char *p = s;

	if (!(*p >= '0' && *p <= '9'))
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (fdiv >= 1000000)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*p - '0');
			fdiv *= 10;
		}
	}
	if (unit_shift(p, &shift) < 0)
		return -EINVAL;
	if (shift && whole > (UINT64_MAX >> shift))
		return -ERANGE;
	if (fdiv > 1 && shift == 0)
		return -EINVAL;	/* fractions of a byte */
	*bytes = (whole << shift) + ((frac << shift) / fdiv);
	return 0;
}

int
units_parse_duration(const char *s, unsigned *seconds)
{
	unsigned long total = 0;
	const char *p = s;

	if (!*p)
		return -EINVAL;
	while (*p) {
		unsigned long n = 0, mul;

		if (!(*p >= '0' && *p <= '9'))
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			n = n * 10 + (unsigned long)(*p - '0');
			if (n > 10UL * 365 * 86400)
				return -ERANGE;
		}
		switch (*p) {
		case '\0':
			if (p != s + strspn(s, "0123456789"))
				return -EINVAL;	/* "1h30" is ambiguous */
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
		if (total > 10UL * 365 * 86400)
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
			snprintf(buf, len, "%llu%c", (unsigned long long)(bytes >> shift), units[i]);
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
