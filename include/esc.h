/* esc.h - strings from the network or a config, made safe for a terminal or a log. */
#ifndef NASTUNE_ESC_H
#define NASTUNE_ESC_H

#include <stddef.h>

/* s (len bytes) with every byte a terminal or a log reader could act on shown as \xNN: C0
 * controls (newline and tab too), DEL, C1 controls (raw or UTF-8 encoded) and bytes that are
 * not valid UTF-8. Everything else, valid UTF-8 included, is kept. Caller frees. */
char *esc_term_len(const char *s, size_t len);
/* esc_term_len over a C string; NULL gives "(null)". Caller frees. */
char *esc_term(const char *s);
/* A deep copy of v (NULL-safe) with every string and object key passed through esc_term:
 * text renderers of stored runs work on it, whatever a peer or an older version stored.
 * Caller json_decref()s it. */
struct json_t;
struct json_t *esc_json(const struct json_t *v);
/* What render makes of esc_json(doc): the one way a stored run reaches a terminal or a page,
 * every string in it escaped whatever a peer or an older version stored. Returns render's
 * text (caller frees) or NULL with err as render set it. */
char *esc_render(const struct json_t *doc,
		 char *(*render)(const struct json_t *doc, char *err, size_t errlen), char *err,
		 size_t errlen);
/* Whether esc_term(s) would change s. */
int esc_term_needed(const char *s);

#endif
