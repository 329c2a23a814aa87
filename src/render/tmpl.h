/* tmpl.h - a small Mustache subset: {{var}}, {{{raw}}}/{{&raw}}, {{#section}}, {{^inverted}},
 * {{/close}}, {{! comment}}, dotted names and {{.}}; standalone tag lines vanish as in the
 * Mustache spec. No partials, no delimiter changes, no lambdas. Pure: no I/O. */
#ifndef NASTUNE_TMPL_H
#define NASTUNE_TMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* The data a template is rendered against. */
enum view_type { VIEW_STR, VIEW_BOOL, VIEW_LIST, VIEW_OBJ };

struct view {
	enum view_type type;
	char *key;	     /* name within the parent object; NULL in lists */
	char *str;	     /* VIEW_STR */
	bool b;		     /* VIEW_BOOL */
	struct view **items; /* VIEW_LIST items, VIEW_OBJ members */
	size_t n;
};

struct view *view_new_obj(void);
void view_free(struct view *v);
void view_set_str(struct view *obj, const char *key, const char *val);
void view_set_strf(struct view *obj, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void view_set_bool(struct view *obj, const char *key, bool b);
/* Adds an empty list member and returns it (owned by obj). */
struct view *view_add_list(struct view *obj, const char *key);
/* Appends an empty object (or a string) to a list and returns it (owned by the list). */
struct view *view_list_add_obj(struct view *list);
void view_list_add_str(struct view *list, const char *s);

enum tmpl_escape {
	TMPL_ESC_CONF, /* config files: values go in verbatim but may not hold a newline */
	TMPL_ESC_XML,  /* &, <, >, ", ' become entities */
};

struct tmpl;

/* Parses text; name is used in messages. Returns the template (free with tmpl_free) or NULL
 * with a "name:line: message" in err. */
struct tmpl *tmpl_parse(const char *name, const char *text, size_t len, char *err, size_t errlen);
void tmpl_free(struct tmpl *t);

/* Appends the rendering to out. Returns 0, or -EINVAL with "name:line: message" in err
 * (unknown variable, a value that the escape mode cannot carry, a section over a string
 * list used as an object). */
int tmpl_render(const struct tmpl *t, const struct view *v, enum tmpl_escape esc, struct buf *out,
		char *err, size_t errlen);

#endif
