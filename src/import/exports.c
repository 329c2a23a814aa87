/* exports.c - the kernel NFS server's exports(5): one export per line, '\' continuations,
 * '#' comments, a path (quoted, or with \040-style octal escapes) then clients, each with its
 * options in parentheses; a leading "-opts" gives the default for the clients after it. Pure. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "xmalloc.h"

bool
exports_opt(const char *opts, const char *word)
{
	size_t n = strlen(word);
	const char *p = opts;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if ((len == n || (len > n && p[n] == '=')) && strncmp(p, word, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* The next word of s (blank-separated; a double-quoted run is one word, quotes dropped;
 * \NNN octal escapes decoded), or NULL at the end. */
static char *
next_word(const char **s)
{
	const char *p = *s;
	char *out;
	size_t n = 0;
	bool quoted = false;

	while (*p && isspace((unsigned char)*p))
		p++;
	if (!*p)
		return NULL;
	out = xmalloc(strlen(p) + 1);
	while (*p && (quoted || !isspace((unsigned char)*p))) {
		if (*p == '"') {
			quoted = !quoted;
			p++;
		} else if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' &&
			   p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
			out[n++] = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 4;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	*s = p;
	return out;
}

static void
client_add(struct exp_entry *x, const char *host, size_t hn, const char *opts)
{
	x->c = xreallocarray(x->c, x->nc + 1, sizeof(*x->c));
	x->c[x->nc].host = hn ? xstrndup(host, hn) : xstrdup("*");
	x->c[x->nc].opts = xstrdup(opts);
	x->nc++;
}

static int
parse_entry(struct exports *e, const char *file, int line, const char *l, struct diag *d)
{
	struct exp_entry x = { .file = file, .line = line };
	char *path = next_word(&l), *w, *dflt;
	int rc = 0;

	if (!path)
		return 0;
	if (path[0] != '/') {
		diag_error(d, file, line, "export '%s' is not an absolute path", path);
		free(path);
		return -EINVAL;
	}
	dflt = xstrdup("");
	x.path = path;
	while ((w = next_word(&l))) {
		char *open = strchr(w, '(');

		if (w[0] == '-' && !open) {
			free(dflt);
			dflt = xstrdup(w + 1);
		} else if (open) {
			size_t on = strlen(open + 1);

			if (on == 0 || open[on] != ')') {
				diag_error(d, file, line, "client '%s' of %s: no closing ')'", w,
					   path);
				rc = -EINVAL;
			} else {
				open[on] = '\0';
				client_add(&x, w, (size_t)(open - w), open + 1);
			}
		} else {
			client_add(&x, w, strlen(w), dflt);
		}
		free(w);
	}
	/* exportfs exports a line without clients to everyone, with the default options. */
	if (x.nc == 0)
		client_add(&x, "*", 1, dflt);
	free(dflt);
	e->v = xreallocarray(e->v, e->n + 1, sizeof(*e->v));
	e->v[e->n++] = x;
	return rc;
}

int
exports_parse(struct exports *e, const char *file, const char *text, size_t len, struct diag *d)
{
	const char *s = text, *end = text + len, *f;
	struct buf line;
	int n = 0, start = 0, rc = 0;

	strlist_add(&e->files, file);
	f = e->files.v[e->files.n - 1];
	buf_init(&line);
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t k = nl ? (size_t)(nl - s) : (size_t)(end - s);
		const char *hash = memchr(s, '#', k);
		bool cont;

		n++;
		if (hash)
			k = (size_t)(hash - s);
		if (k && s[k - 1] == '\r')
			k--;
		cont = !hash && k && s[k - 1] == '\\';
		if (!line.len)
			start = n;
		buf_add(&line, s, cont ? k - 1 : k);
		if (cont)
			buf_addc(&line, ' ');
		if (!cont || !nl) {
			if (line.len && parse_entry(e, f, start, line.data, d) < 0)
				rc = -EINVAL;
			buf_clear(&line);
		}
		s = nl ? nl + 1 : end;
	}
	buf_clear(&line);
	return rc;
}

void
exports_clear(struct exports *e)
{
	size_t i, k;

	for (i = 0; i < e->n; i++) {
		for (k = 0; k < e->v[i].nc; k++) {
			free(e->v[i].c[k].host);
			free(e->v[i].c[k].opts);
		}
		free(e->v[i].c);
		free(e->v[i].path);
	}
	free(e->v);
	strlist_clear(&e->files);
	memset(e, 0, sizeof(*e));
}
