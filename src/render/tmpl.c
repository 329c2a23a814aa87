/* tmpl.c - the Mustache subset used for every generated file. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpl.h"
#include "xmalloc.h"

#define TMPL_MAX_DEPTH 32
#define TMPL_MAX_NAME 128

/* ---- views ---- */

static struct view *
view_alloc(enum view_type type, const char *key)
{
	struct view *v = xcalloc(1, sizeof(*v));

	v->type = type;
	v->key = key ? xstrdup(key) : NULL;
	return v;
}

struct view *
view_new_obj(void)
{
	return view_alloc(VIEW_OBJ, NULL);
}

void
view_free(struct view *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++)
		view_free(v->items[i]);
	free(v->items);
	free(v->key);
	free(v->str);
	free(v);
}

static struct view *
view_append(struct view *parent, struct view *child)
{
	parent->items = xreallocarray(parent->items, parent->n + 1, sizeof(*parent->items));
	parent->items[parent->n++] = child;
	return child;
}

void
view_set_str(struct view *obj, const char *key, const char *val)
{
	struct view *v = view_alloc(VIEW_STR, key);

	v->str = xstrdup(val ? val : "");
	view_append(obj, v);
}

void
view_set_strf(struct view *obj, const char *key, const char *fmt, ...)
{
	struct view *v = view_alloc(VIEW_STR, key);
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&v->str, fmt, ap) < 0)
		v->str = xstrdup("");
	va_end(ap);
	view_append(obj, v);
}

void
view_set_bool(struct view *obj, const char *key, bool b)
{
	struct view *v = view_alloc(VIEW_BOOL, key);

	v->b = b;
	view_append(obj, v);
}

struct view *
view_add_list(struct view *obj, const char *key)
{
	return view_append(obj, view_alloc(VIEW_LIST, key));
}

struct view *
view_list_add_obj(struct view *list)
{
	return view_append(list, view_alloc(VIEW_OBJ, NULL));
}

void
view_list_add_str(struct view *list, const char *s)
{
	struct view *v = view_alloc(VIEW_STR, NULL);

	v->str = xstrdup(s);
	view_append(list, v);
}

/* ---- templates ---- */

enum node_type { N_TEXT, N_VAR, N_RAW, N_SECTION, N_INVERTED };

struct node {
	enum node_type type;
	char *text; /* text, or the tag name */
	size_t len; /* N_TEXT */
	int line;
	struct node **kids; /* sections */
	size_t nkids;
};

struct tmpl {
	char *name;
	struct node root;
};

static void
node_release(struct node *n)
{
	size_t i;

	for (i = 0; i < n->nkids; i++) {
		node_release(n->kids[i]);
		free(n->kids[i]);
	}
	free(n->kids);
	free(n->text);
}

void
tmpl_free(struct tmpl *t)
{
	if (!t)
		return;
	node_release(&t->root);
	free(t->name);
	free(t);
}

static struct node *
node_add(struct node *parent, enum node_type type, const char *text, size_t len, int line)
{
	struct node *n = xcalloc(1, sizeof(*n));

	n->type = type;
	n->text = xstrndup(text, len);
	n->len = len;
	n->line = line;
	parent->kids = xreallocarray(parent->kids, parent->nkids + 1, sizeof(*parent->kids));
	parent->kids[parent->nkids++] = n;
	return n;
}

static int
count_lines(const char *p, const char *end)
{
	int n = 0;

	for (; p < end; p++)
		if (*p == '\n')
			n++;
	return n;
}

static bool
valid_name(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > TMPL_MAX_NAME)
		return false;
	if (len == 1 && s[0] == '.')
		return true;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

static void
trim(const char **s, size_t *len)
{
	while (*len && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*len)--;
	}
	while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
		(*len)--;
}

/* A section, inverted section, closing or comment tag alone on its line (blanks aside)
 * takes the line with it: the text before the tag (from p, *textlen) then ends where the
 * line starts, and *after moves past the line's end. */
static void
standalone(const char *text, const char *end, const char *p, const char *open, const char **after,
	   size_t *textlen)
{
	const char *ls = open, *le = *after;

	while (ls > text && (ls[-1] == ' ' || ls[-1] == '\t'))
		ls--;
	while (le < end && (*le == ' ' || *le == '\t'))
		le++;
	if ((ls == text || ls[-1] == '\n') &&
	    (le == end || *le == '\n' || (*le == '\r' && le + 1 < end && le[1] == '\n')) &&
	    ls >= p) {
		*textlen = (size_t)(ls - p);
		if (le < end && *le == '\r')
			le++;
		if (le < end)
			le++;
		*after = le;
	}
}

/* The node of a tag under the innermost open section: a section or inverted section opens
 * one (stack[++*depth]), a closing tag closes it. Returns 0, or -1 with err. */
static int
add_tag(const char *name, struct node **stack, int *depth, char sigil, bool triple, const char *tag,
	size_t taglen, int tagline, char *err, size_t errlen)
{
	struct node *top = stack[*depth];

	switch (sigil) {
	case '#':
	case '^':
		if (*depth == TMPL_MAX_DEPTH) {
			snprintf(err, errlen, "%s:%d: sections nested too deeply", name, tagline);
			return -1;
		}
		stack[++*depth] =
			node_add(top, sigil == '#' ? N_SECTION : N_INVERTED, tag, taglen, tagline);
		return 0;
	case '/':
		if (*depth == 0 || strlen(top->text) != taglen ||
		    memcmp(top->text, tag, taglen) != 0) {
			snprintf(err, errlen, "%s:%d: '{{/%.*s}}' does not close %s%s%s", name,
				 tagline, (int)taglen, tag, *depth ? "'" : "any section",
				 *depth ? top->text : "", *depth ? "'" : "");
			return -1;
		}
		--*depth;
		return 0;
	default:
		node_add(top, triple || sigil == '&' ? N_RAW : N_VAR, tag, taglen, tagline);
		return 0;
	}
}

struct tmpl *
tmpl_parse(const char *name, const char *text, size_t len, char *err, size_t errlen)
{
	struct node *stack[TMPL_MAX_DEPTH + 1];
	const char *p = text, *end = text + len;
	struct tmpl *t = xcalloc(1, sizeof(*t));
	int depth = 0, line = 1;

	t->name = xstrdup(name);
	stack[0] = &t->root;
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "%s:1: template contains a NUL byte", name);
		goto fail;
	}
	while (p < end) {
		const char *open = NULL, *q, *close, *tag, *after;
		size_t taglen, textlen;
		char sigil = 0;
		bool triple = false;
		int tagline;

		for (q = p; q + 1 < end; q++)
			if (q[0] == '{' && q[1] == '{') {
				open = q;
				break;
			}
		if (!open) {
			node_add(stack[depth], N_TEXT, p, (size_t)(end - p), line);
			break;
		}
		textlen = (size_t)(open - p);
		tagline = line + count_lines(p, open);
		tag = open + 2;
		if (tag < end && *tag == '{') {
			triple = true;
			tag++;
		}
		close = NULL;
		for (q = tag; q + 1 < end; q++)
			if (q[0] == '}' && q[1] == '}') {
				close = q;
				break;
			}
		if (!close) {
			snprintf(err, errlen, "%s:%d: unclosed tag '{{'", name, tagline);
			goto fail;
		}
		after = close + 2;
		if (triple) {
			if (after >= end || *after != '}') {
				snprintf(err, errlen, "%s:%d: '{{{' must close with '}}}'", name,
					 tagline);
				goto fail;
			}
			after++;
		}
		taglen = (size_t)(close - tag);
		if (!triple && taglen && strchr("#^/!&>=", *tag)) {
			sigil = *tag;
			tag++;
			taglen--;
		}
		if (sigil == '>' || sigil == '=') {
			snprintf(err, errlen, "%s:%d: %s are not supported", name, tagline,
				 sigil == '>' ? "partials" : "delimiter changes");
			goto fail;
		}
		if (sigil == '#' || sigil == '^' || sigil == '/' || sigil == '!')
			standalone(text, end, p, open, &after, &textlen);
		if (textlen)
			node_add(stack[depth], N_TEXT, p, textlen, line);
		line = tagline + count_lines(open, after);
		p = after;
		if (sigil == '!')
			continue;
		trim(&tag, &taglen);
		if (!valid_name(tag, taglen)) {
			snprintf(err, errlen, "%s:%d: bad tag name '%.*s'", name, tagline,
				 (int)(taglen > 40 ? 40 : taglen), tag);
			goto fail;
		}
		if (add_tag(name, stack, &depth, sigil, triple, tag, taglen, tagline, err, errlen) <
		    0)
			goto fail;
	}
	if (depth) {
		snprintf(err, errlen, "%s:%d: section '%s' is never closed", name,
			 stack[depth]->line, stack[depth]->text);
		goto fail;
	}
	return t;
fail:
	tmpl_free(t);
	return NULL;
}

struct rctx {
	const struct tmpl *t;
	const struct view *stack[TMPL_MAX_DEPTH + 2];
	int depth;
	enum tmpl_escape esc;
	struct buf *out;
	char *err;
	size_t errlen;
};

static const struct view *
obj_get(const struct view *v, const char *key, size_t keylen)
{
	size_t i;

	if (v->type != VIEW_OBJ)
		return NULL;
	for (i = 0; i < v->n; i++)
		if (strlen(v->items[i]->key) == keylen &&
		    memcmp(v->items[i]->key, key, keylen) == 0)
			return v->items[i];
	return NULL;
}

static const struct view *
lookup(const struct rctx *r, const char *name)
{
	const char *dot;
	const struct view *v = NULL;
	size_t first;
	int i;

	if (strcmp(name, ".") == 0)
		return r->stack[r->depth];
	dot = strchr(name, '.');
	first = dot ? (size_t)(dot - name) : strlen(name);
	for (i = r->depth; i >= 0 && !v; i--)
		v = obj_get(r->stack[i], name, first);
	while (v && dot) {
		const char *next = strchr(dot + 1, '.');
		size_t l = next ? (size_t)(next - dot - 1) : strlen(dot + 1);

		v = obj_get(v, dot + 1, l);
		dot = next;
	}
	return v;
}

static int
emit(struct rctx *r, const struct node *n, const char *s)
{
	const char *c;

	if (n->type == N_RAW || r->esc == TMPL_ESC_CONF) {
		if (r->esc == TMPL_ESC_CONF && strpbrk(s, "\r\n")) {
			snprintf(r->err, r->errlen, "%s:%d: value of '%s' holds a line break",
				 r->t->name, n->line, n->text);
			return -EINVAL;
		}
		buf_adds(r->out, s);
		return 0;
	}
	for (c = s; *c; c++) {
		switch (*c) {
		case '&':
			buf_adds(r->out, "&amp;");
			break;
		case '<':
			buf_adds(r->out, "&lt;");
			break;
		case '>':
			buf_adds(r->out, "&gt;");
			break;
		case '"':
			buf_adds(r->out, "&quot;");
			break;
		case '\'':
			buf_adds(r->out, "&#39;");
			break;
		default:
			buf_addc(r->out, *c);
		}
	}
	return 0;
}

static bool
truthy(const struct view *v)
{
	if (!v)
		return false;
	switch (v->type) {
	case VIEW_BOOL:
		return v->b;
	case VIEW_STR:
		return v->str[0] != '\0';
	case VIEW_LIST:
		return v->n > 0;
	case VIEW_OBJ:
		return true;
	}
	return false;
}

static int render_kids(struct rctx *r, const struct node *n);

static int
render_with(struct rctx *r, const struct node *n, const struct view *ctx)
{
	int rc;

	if (r->depth + 1 >= (int)(sizeof(r->stack) / sizeof(r->stack[0]))) {
		snprintf(r->err, r->errlen, "%s:%d: data nested too deeply", r->t->name, n->line);
		return -EINVAL;
	}
	r->stack[++r->depth] = ctx;
	rc = render_kids(r, n);
	r->depth--;
	return rc;
}

static int
render_node(struct rctx *r, const struct node *n)
{
	const struct view *v;
	size_t i;
	int rc;

	switch (n->type) {
	case N_TEXT:
		buf_add(r->out, n->text, n->len);
		return 0;
	case N_VAR:
	case N_RAW:
		v = lookup(r, n->text);
		if (!v) {
			snprintf(r->err, r->errlen, "%s:%d: unknown variable '%s'", r->t->name,
				 n->line, n->text);
			return -EINVAL;
		}
		if (v->type == VIEW_STR)
			return emit(r, n, v->str);
		if (v->type == VIEW_BOOL)
			return emit(r, n, v->b ? "yes" : "no");
		snprintf(r->err, r->errlen, "%s:%d: '%s' is a list or object, not a value",
			 r->t->name, n->line, n->text);
		return -EINVAL;
	case N_SECTION:
		v = lookup(r, n->text);
		if (!truthy(v))
			return 0;
		if (v->type == VIEW_LIST) {
			for (i = 0; i < v->n; i++)
				if ((rc = render_with(r, n, v->items[i])) < 0)
					return rc;
			return 0;
		}
		if (v->type == VIEW_OBJ)
			return render_with(r, n, v);
		return render_kids(r, n);
	case N_INVERTED:
		v = lookup(r, n->text);
		return truthy(v) ? 0 : render_kids(r, n);
	}
	return 0;
}

static int
render_kids(struct rctx *r, const struct node *n)
{
	size_t i;
	int rc;

	for (i = 0; i < n->nkids; i++)
		if ((rc = render_node(r, n->kids[i])) < 0)
			return rc;
	return 0;
}

int
tmpl_render(const struct tmpl *t, const struct view *v, enum tmpl_escape esc, struct buf *out,
	    char *err, size_t errlen)
{
	struct rctx r = { .t = t, .esc = esc, .out = out, .err = err, .errlen = errlen };

	r.stack[0] = v;
	return render_kids(&r, &t->root);
}
