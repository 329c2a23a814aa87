/* buf.c - a growable byte buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "xmalloc.h"

void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
buf_clear(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

static void
buf_reserve(struct buf *b, size_t n)
{
	size_t want;

	if (n > (size_t)-1 / 2 - b->len)
		fatalx("buffer too large");
	want = b->len + n + 1;
	if (want <= b->cap)
		return;
	if (b->cap == 0)
		b->cap = 256;
	while (b->cap < want)
		b->cap *= 2;
	b->data = xreallocarray(b->data, b->cap, 1);
	b->data[b->len] = '\0';
}

void
buf_add(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatalx("buf_printf: bad format");
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *
buf_steal(struct buf *b, size_t *len)
{
	char *p;

	if (!b->data)
		buf_reserve(b, 0);
	p = b->data;
	if (len)
		*len = b->len;
	buf_init(b);
	return p;
}

void
buf_add_html(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			buf_adds(b, "&lt;");
			break;
		case '>':
			buf_adds(b, "&gt;");
			break;
		case '&':
			buf_adds(b, "&amp;");
			break;
		case '"':
			buf_adds(b, "&quot;");
			break;
		default:
			buf_addc(b, *s);
		}
	}
}
