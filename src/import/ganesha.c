/* ganesha.c - NFS-Ganesha's configuration syntax: blocks "NAME { ... }" holding
 * "key = value;" lines (a value may be a comma list or a quoted string) and other blocks,
 * '#' comments, "%include PATH" lines. Pure. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import.h"
#include "xmalloc.h"

#define GAN_DEPTH 16

struct lex {
	const char *s, *end;
	const char *file;
	int line;
	struct ganesha *g;
	imp_read_fn rd;
	void *rdctx;
	struct diag *d;
	int depth;
	int rc;
};

static void
skip_blank(struct lex *x)
{
	while (x->s < x->end) {
		if (*x->s == '\n') {
			x->line++;
			x->s++;
		} else if (isspace((unsigned char)*x->s)) {
			x->s++;
		} else if (*x->s == '#') {
			while (x->s < x->end && *x->s != '\n')
				x->s++;
		} else {
			break;
		}
	}
}

/* One token: a quoted string (unquoted), a word, or one of { } = ; , as itself. NULL at end. */
static char *
token(struct lex *x, bool *quoted)
{
	const char *p;

	skip_blank(x);
	*quoted = false;
	if (x->s >= x->end)
		return NULL;
	p = x->s;
	if (*p == '"' || *p == '\'') {
		char q = *p++;
		const char *e = p;

		while (e < x->end && *e != q) {
			if (*e == '\n')
				x->line++;
			e++;
		}
		x->s = e < x->end ? e + 1 : e;
		*quoted = true;
		return xstrndup(p, (size_t)(e - p));
	}
	if (strchr("{}=;,", *p)) {
		x->s++;
		return xstrndup(p, 1);
	}
	while (x->s < x->end && !isspace((unsigned char)*x->s) && !strchr("{}=;,#\"'", *x->s))
		x->s++;
	return xstrndup(p, (size_t)(x->s - p));
}

static bool
is(const char *t, bool quoted, const char *c)
{
	return t && !quoted && strcmp(t, c) == 0;
}

static void parse_body(struct lex *x, struct gan_block *b, bool top);

static void
include(struct lex *x, struct gan_block *b)
{
	struct lex sub;
	char *path, *text = NULL;
	size_t len = 0, i;
	bool q;
	int line = x->line, rc;

	path = token(x, &q);
	if (!path) {
		diag_error(x->d, x->file, line, "%%include without a file");
		x->rc = -EINVAL;
		return;
	}
	for (i = 0; i < x->g->files.n; i++)
		if (strcmp(x->g->files.v[i], path) == 0)
			break;
	if (!x->rd || x->depth >= GAN_DEPTH || i < x->g->files.n) {
		if (x->rd)
			diag_warning(x->d, x->file, line, "%%include %s loops: not read", path);
		free(path);
		return;
	}
	rc = x->rd(x->rdctx, path, &text, &len);
	if (rc < 0) {
		diag_warning(x->d, x->file, line, "%%include %s: %s: not read", path,
			     strerror(-rc));
		free(path);
		return;
	}
	strlist_add(&x->g->files, path);
	sub = *x;
	sub.s = text;
	sub.end = text + len;
	sub.file = x->g->files.v[x->g->files.n - 1];
	sub.line = 1;
	sub.depth = x->depth + 1;
	parse_body(&sub, b, true);
	x->rc = sub.rc ? sub.rc : x->rc;
	free(text);
	free(path);
}

static void
kv_add(struct gan_block *b, const char *key, const char *value, int line)
{
	b->kv = xreallocarray(b->kv, b->nkv + 1, sizeof(*b->kv));
	b->kv[b->nkv].key = xstrdup(key);
	b->kv[b->nkv].value = xstrdup(value);
	b->kv[b->nkv].line = line;
	b->nkv++;
}

/* "= value [, value]... ;" after key (the '=' read). */
static void
parse_value(struct lex *x, struct gan_block *b, const char *key, int line)
{
	struct buf v;
	char *t;
	bool q;

	buf_init(&v);
	while ((t = token(x, &q))) {
		if (is(t, q, ";")) {
			free(t);
			break;
		}
		if (is(t, q, "}")) {
			/* The last value of a block may end without ';'. */
			x->s--;
			free(t);
			break;
		}
		if (is(t, q, ","))
			buf_adds(&v, ", ");
		else
			buf_adds(&v, t);
		free(t);
	}
	kv_add(b, key, v.data ? v.data : "", line);
	buf_clear(&v);
}

static void
parse_body(struct lex *x, struct gan_block *b, bool top)
{
	char *t;
	bool q;

	while (x->rc == 0 && (t = token(x, &q))) {
		int line = x->line;
		char *t2;
		bool q2;

		if (is(t, q, "}")) {
			free(t);
			if (top) {
				diag_error(x->d, x->file, line, "'}' closes no block");
				x->rc = -EINVAL;
			}
			return;
		}
		if (!q && strcasecmp(t, "%include") == 0) {
			free(t);
			include(x, b);
			continue;
		}
		if (is(t, q, ";")) {
			free(t);
			continue;
		}
		t2 = token(x, &q2);
		if (is(t2, q2, "=")) {
			parse_value(x, b, t, line);
		} else if (is(t2, q2, "{") && x->depth + 1 < GAN_DEPTH) {
			struct gan_block *nb;

			b->sub = xreallocarray(b->sub, b->nsub + 1, sizeof(*b->sub));
			nb = &b->sub[b->nsub++];
			memset(nb, 0, sizeof(*nb));
			nb->name = xstrdup(t);
			nb->file = x->file;
			nb->line = line;
			x->depth++;
			parse_body(x, nb, false);
			x->depth--;
		} else {
			diag_error(x->d, x->file, line,
				   "'%s' is followed by neither '=' nor '{' — write key = value; "
				   "or NAME { ... }",
				   t);
			x->rc = -EINVAL;
		}
		free(t);
		free(t2);
	}
	if (!top && x->rc == 0) {
		diag_error(x->d, x->file, b->line, "block %s is not closed — add '}'", b->name);
		x->rc = -EINVAL;
	}
}

int
ganesha_parse(struct ganesha *g, const char *file, const char *text, size_t len, imp_read_fn rd,
	      void *rdctx, struct diag *d)
{
	struct lex x = {
		.s = text, .end = text + len, .line = 1, .g = g, .rd = rd, .rdctx = rdctx, .d = d
	};

	strlist_add(&g->files, file);
	x.file = g->files.v[g->files.n - 1];
	parse_body(&x, &g->top, true);
	return x.rc;
}

static void
block_clear(struct gan_block *b)
{
	size_t i;

	for (i = 0; i < b->nkv; i++) {
		free(b->kv[i].key);
		free(b->kv[i].value);
	}
	for (i = 0; i < b->nsub; i++)
		block_clear(&b->sub[i]);
	free(b->kv);
	free(b->sub);
	free(b->name);
	memset(b, 0, sizeof(*b));
}

void
ganesha_clear(struct ganesha *g)
{
	block_clear(&g->top);
	strlist_clear(&g->files);
}

const struct gan_kv *
ganesha_get(const struct gan_block *b, const char *key)
{
	size_t i;

	for (i = b->nkv; i-- > 0;)
		if (strcasecmp(b->kv[i].key, key) == 0)
			return &b->kv[i];
	return NULL;
}

bool
ganesha_ids_moved(const char *cur, size_t curlen, const char *next, size_t nextlen)
{
	struct ganesha a = { 0 }, b = { 0 };
	struct diag d;
	bool moved = false;
	size_t i, k;

	diag_init(&d);
	ganesha_parse(&a, "cur", cur, curlen, NULL, NULL, &d);
	ganesha_parse(&b, "next", next, nextlen, NULL, NULL, &d);
	for (i = 0; i < a.top.nsub && !moved; i++) {
		const struct gan_kv *pa = ganesha_get(&a.top.sub[i], "Path");
		const struct gan_kv *ia = ganesha_get(&a.top.sub[i], "Export_Id");

		for (k = 0; pa && ia && k < b.top.nsub && !moved; k++) {
			const struct gan_kv *pb = ganesha_get(&b.top.sub[k], "Path");
			const struct gan_kv *ib = ganesha_get(&b.top.sub[k], "Export_Id");

			moved = pb && ib && strcasecmp(a.top.sub[i].name, "EXPORT") == 0 &&
				strcasecmp(b.top.sub[k].name, "EXPORT") == 0 &&
				strcmp(pa->value, pb->value) == 0 &&
				strcmp(ia->value, ib->value) != 0;
		}
	}
	ganesha_clear(&a);
	ganesha_clear(&b);
	diag_clear(&d);
	return moved;
}
