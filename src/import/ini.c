/* ini.c - Samba's ini syntax (smb.conf, and netatalk's afp.conf, which borrows it): sections,
 * "name = value" lines, comment lines, '\' continuations, includes. Pure. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import.h"
#include "xmalloc.h"

#define INI_INCLUDE_DEPTH 10

void
ini_norm(const char *key, char *out, size_t outlen)
{
	size_t n = 0;

	for (; *key && n + 1 < outlen; key++)
		if (!isspace((unsigned char)*key))
			out[n++] = (char)tolower((unsigned char)*key);
	if (outlen)
		out[n] = '\0';
}

int
ini_bool(const char *v)
{
	static const char *const yes[] = { "yes", "true", "1", "on", NULL };
	static const char *const no[] = { "no", "false", "0", "off", NULL };
	size_t i;

	for (i = 0; v && yes[i]; i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	}
	return -1;
}

static struct ini_section *
section_open(struct ini *ini, const char *name, const char *file, int line)
{
	struct ini_section *s;
	size_t i;

	for (i = 0; i < ini->n; i++)
		if (strcasecmp(ini->s[i].name, name) == 0)
			return &ini->s[i];
	ini->s = xreallocarray(ini->s, ini->n + 1, sizeof(*ini->s));
	s = &ini->s[ini->n++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	s->file = file;
	s->line = line;
	return s;
}

static char *
trimmed(const char *p, size_t n)
{
	while (n && isspace((unsigned char)*p))
		p++, n--;
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	return xstrndup(p, n);
}

static void
entry_add(struct ini_section *s, const char *key, const char *value, const char *file, int line)
{
	struct ini_entry *e;
	char norm[128];

	s->v = xreallocarray(s->v, s->n + 1, sizeof(*s->v));
	e = &s->v[s->n++];
	ini_norm(key, norm, sizeof(norm));
	e->key = xstrdup(key);
	e->norm = xstrdup(norm);
	e->value = xstrdup(value);
	e->file = file;
	e->line = line;
}

struct parse {
	struct ini *ini;
	imp_read_fn rd;
	void *rdctx;
	struct diag *d;
	struct ini_section *cur;
	int depth;
	int rc;
};

static void parse_text(struct parse *p, const char *file, const char *text, size_t len);

static void
include(struct parse *p, const char *file, int line, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	size_t i;
	int rc;

	for (i = 0; i < p->ini->files.n; i++)
		if (strcmp(p->ini->files.v[i], path) == 0)
			break;
	if (p->depth >= INI_INCLUDE_DEPTH || i < p->ini->files.n) {
		diag_warning(p->d, file, line,
			     "include of %s is nested too deep or loops: not read", path);
		return;
	}
	rc = p->rd(p->rdctx, path, &text, &len);
	if (rc < 0) {
		/* smbd skips an include it cannot read, and so does the daemon's view here. */
		if (rc != -ENOENT)
			diag_warning(p->d, file, line, "include %s: %s: not read", path,
				     strerror(-rc));
		return;
	}
	p->depth++;
	parse_text(p, path, text, len);
	p->depth--;
	free(text);
}

static void
parse_line(struct parse *p, const char *file, int line, const char *l, size_t n)
{
	const char *eq, *close;
	char *key, *value;

	while (n && isspace((unsigned char)*l))
		l++, n--;
	if (n == 0 || *l == '#' || *l == ';')
		return;
	if (*l == '[') {
		close = memchr(l, ']', n);
		if (!close) {
			diag_error(p->d, file, line, "section header without ']' — write [name]");
			p->rc = -EINVAL;
			return;
		}
		key = trimmed(l + 1, (size_t)(close - l - 1));
		p->cur = section_open(p->ini, key, file, line);
		free(key);
		return;
	}
	eq = memchr(l, '=', n);
	if (!eq) {
		diag_warning(p->d, file, line, "a line with no '=' is ignored (as smbd does)");
		return;
	}
	key = trimmed(l, (size_t)(eq - l));
	value = trimmed(eq + 1, n - (size_t)(eq + 1 - l));
	if (!p->cur)
		p->cur = section_open(p->ini, "global", file, line);
	if (p->rd && strcasecmp(key, "include") == 0 && value[0] && !strchr(value, '%'))
		include(p, file, line, value); /* smbd goes on in the section it left open */
	else
		entry_add(p->cur, key, value, file, line);
	free(key);
	free(value);
}

static void
parse_text(struct parse *p, const char *file, const char *text, size_t len)
{
	const char *f, *s = text, *end = text + len;
	char *joined = NULL;
	size_t jn = 0;
	int line = 0, start = 0;

	strlist_add(&p->ini->files, file);
	f = p->ini->files.v[p->ini->files.n - 1];
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		bool cont;

		line++;
		if (n && s[n - 1] == '\r')
			n--;
		cont = n && s[n - 1] == '\\';
		if (!joined)
			start = line;
		joined = xreallocarray(joined, jn + n + 1, 1);
		memcpy(joined + jn, s, cont ? n - 1 : n);
		jn += cont ? n - 1 : n;
		joined[jn] = '\0';
		if (!cont || !nl) {
			parse_line(p, f, start, joined, jn);
			free(joined);
			joined = NULL;
			jn = 0;
		}
		s = nl ? nl + 1 : end;
	}
	free(joined);
}

int
ini_parse(struct ini *ini, const char *file, const char *text, size_t len, imp_read_fn rd,
	  void *rdctx, struct diag *d)
{
	struct parse p = { .ini = ini, .rd = rd, .rdctx = rdctx, .d = d };

	parse_text(&p, file, text, len);
	return p.rc;
}

void
ini_clear(struct ini *ini)
{
	size_t i, k;

	for (i = 0; i < ini->n; i++) {
		for (k = 0; k < ini->s[i].n; k++) {
			free(ini->s[i].v[k].key);
			free(ini->s[i].v[k].norm);
			free(ini->s[i].v[k].value);
		}
		free(ini->s[i].v);
		free(ini->s[i].name);
	}
	free(ini->s);
	strlist_clear(&ini->files);
	memset(ini, 0, sizeof(*ini));
}

const struct ini_section *
ini_section(const struct ini *ini, const char *name)
{
	size_t i;

	for (i = 0; i < ini->n; i++)
		if (strcasecmp(ini->s[i].name, name) == 0)
			return &ini->s[i];
	return NULL;
}

const struct ini_entry *
ini_get(const struct ini_section *sec, const char *key)
{
	char norm[128];
	size_t i;

	if (!sec)
		return NULL;
	ini_norm(key, norm, sizeof(norm));
	for (i = sec->n; i-- > 0;)
		if (strcmp(sec->v[i].norm, norm) == 0)
			return &sec->v[i];
	return NULL;
}
