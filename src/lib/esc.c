/* esc.c - one escaping for every string that reaches a terminal or a log from outside: an
 * agent's host name or error text, a target, a config value. A forged "\r\n" or an escape
 * sequence must not rewrite what the reader sees. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "xmalloc.h"

/* Length of the valid, printable UTF-8 sequence at s (n bytes left), or 0. */
static size_t
utf8_ok(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07u;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 ||
	    cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
		return 0; /* overlong, surrogates, C1, line/paragraph separators, bidi overrides */
	return len;
}

char *
esc_term_len(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, k;
	char *out;

	if (len > (SIZE_MAX - 1) / 4)
		len = (SIZE_MAX - 1) / 4;
	out = xmalloc(4 * len + 1);
	while (i < len) {
		if ((k = utf8_ok(p + i, len - i))) {
			memcpy(out + o, p + i, k);
			o += k;
			i += k;
			continue;
		}
		/* one byte at a time: the rest of a rejected sequence fails on its own */
		snprintf(out + o, 5, "\\x%02x", p[i++]);
		o += 4;
	}
	out[o] = '\0';
	return out;
}

char *
esc_term(const char *s)
{
	return s ? esc_term_len(s, strlen(s)) : xstrdup("(null)");
}

int
esc_term_needed(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, k;

	while (i < n) {
		if (!(k = utf8_ok(p + i, n - i)))
			return 1;
		i += k;
	}
	return 0;
}
