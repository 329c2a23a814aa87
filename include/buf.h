/* buf.h - a growable byte buffer, always NUL-terminated. */
#ifndef NASTUNE_BUF_H
#define NASTUNE_BUF_H

#include <stddef.h>

struct buf {
	char *data; /* NUL-terminated; owned by the buf */
	size_t len;
	size_t cap;
};

void buf_init(struct buf *b);
void buf_clear(struct buf *b);
void buf_add(struct buf *b, const void *p, size_t n);
void buf_adds(struct buf *b, const char *s);
void buf_addc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the data to the caller (who frees it) and resets the buf. */
char *buf_steal(struct buf *b, size_t *len);
/* Appends s (NULL: nothing) escaped for HTML text and attribute values. */
void buf_add_html(struct buf *b, const char *s);

#endif
