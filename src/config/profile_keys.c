/* profile_keys.c - a group of nastune.conf read through its key table: a setting's file and
 * line, its kind checked with the fix said, unknown keys with "did you mean", strings and
 * lists of strings checked as text every generated file can carry. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "profile_keys.h"
#include "xmalloc.h"

/* ---- small helpers ---- */

const char *
pf_sfile(const struct ld *ld, const config_setting_t *s)
{
	const char *f = config_setting_source_file(s);

	return f ? f : ld->fallback;
}

int
pf_sline(const config_setting_t *s)
{
	return (int)config_setting_source_line(s);
}

/* File names live in m->files so struct loc can point at them. */
const char *
pf_intern_file(struct model *m, const char *f)
{
	size_t i;

	for (i = 0; i < m->files.n; i++)
		if (strcmp(m->files.v[i], f) == 0)
			return m->files.v[i];
	strlist_add(&m->files, f);
	return m->files.v[m->files.n - 1];
}

struct loc
pf_loc_of(struct ld *ld, const config_setting_t *s)
{
	struct loc l = { pf_intern_file(ld->m, pf_sfile(ld, s)), pf_sline(s) };

	return l;
}

static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1,
			       sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) !=
						    tolower((unsigned char)b[j - 1]));

			cur[j] = del < ins ? del : ins;
			if (sub < cur[j])
				cur[j] = sub;
		}
		memcpy(prev, cur, sizeof(prev));
	}
	return prev[lb];
}

const char *
load_closest(const char *s, const char *const *list)
{
	const char *best = NULL;
	size_t bd = 99, limit = strlen(s) / 3 + 1, i;

	if (limit < 2)
		limit = 2;
	for (i = 0; list[i]; i++) {
		size_t dd = edit_distance(s, list[i]);

		if (dd < bd) {
			bd = dd;
			best = list[i];
		}
	}
	return bd <= limit ? best : NULL;
}

void
pf_unknown_keys(struct ld *ld, const config_setting_t *g, const char *where,
		const char *const *known)
{
	int i, n = config_setting_length(g);

	for (i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(s), *near;
		size_t k;
		bool ok = false;

		if (!name)
			continue;
		for (k = 0; known[k]; k++)
			if (strcmp(known[k], name) == 0)
				ok = true;
		if (ok)
			continue;
		near = load_closest(name, known);
		if (near)
			ERR(ld, s, "unknown key '%s' in %s — did you mean '%s'?", name, where,
			    near);
		else
			ERR(ld, s,
			    "unknown key '%s' in %s — remove it; nastune.conf(5) lists the "
			    "keys",
			    name, where);
	}
}

const char *
pf_type_name(int t)
{
	switch (t) {
	case CONFIG_TYPE_GROUP:
		return "a group { ... }";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "a number";
	case CONFIG_TYPE_FLOAT:
		return "a decimal number";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "true/false";
	case CONFIG_TYPE_ARRAY:
	case CONFIG_TYPE_LIST:
		return "a list";
	}
	return "something else";
}

bool
pf_is_kind(const config_setting_t *s, enum kind k)
{
	int t = config_setting_type(s);

	switch (k) {
	case K_ANY:
		return true;
	case K_STR:
		return t == CONFIG_TYPE_STRING;
	case K_BOOL:
		return t == CONFIG_TYPE_BOOL;
	case K_INT:
		return t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64;
	case K_GROUP:
		return t == CONFIG_TYPE_GROUP;
	case K_LIST:
		return t == CONFIG_TYPE_ARRAY || t == CONFIG_TYPE_LIST;
	}
	return false;
}

static const char *const kind_fix[] = {
	[K_ANY] = "%s",
	[K_STR] = "a quoted string, e.g. %s = \"value\";",
	[K_BOOL] = "true or false, e.g. %s = true;",
	[K_INT] = "a whole number, e.g. %s = 3;",
	[K_GROUP] = "a group, e.g. %s = { ... };",
	[K_LIST] = "a list, e.g. %s = [\"a\", \"b\"];",
};

/* Whether s is of kind k; when not, says so (what: "group.key"). */
bool
pf_kind_ok(struct ld *ld, const config_setting_t *s, enum kind k, const char *what)
{
	char fix[128];

	if (pf_is_kind(s, k))
		return true;
	snprintf(fix, sizeof(fix), kind_fix[k], config_setting_name(s));
	ERR(ld, s, "%s is %s — make it %s", what, pf_type_name(config_setting_type(s)), fix);
	return false;
}

/* The member key of g when present and of the right kind; type errors are reported. */
config_setting_t *
pf_member(struct ld *ld, const config_setting_t *g, const char *key, enum kind k, const char *where)
{
	config_setting_t *s = config_setting_get_member(g, key);
	char what[128];

	if (!s)
		return NULL;
	snprintf(what, sizeof(what), "%s.%s", where, key);
	return pf_kind_ok(ld, s, k, what) ? s : NULL;
}

void
pf_set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* Text that every target format can carry: printable, no line breaks, bounded. */
bool
pf_check_text(struct ld *ld, const config_setting_t *s, const char *what, const char *v,
	      size_t maxlen, const char *forbid)
{
	const unsigned char *p;

	if (strlen(v) > maxlen) {
		ERR(ld, s, "%s is %zu characters long — shorten it to at most %zu", what, strlen(v),
		    maxlen);
		return false;
	}
	for (p = (const unsigned char *)v; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			ERR(ld, s, "%s contains a control character or line break — remove it",
			    what);
			return false;
		}
		if (forbid && strchr(forbid, *p)) {
			ERR(ld, s,
			    "%s contains '%c', which cannot be written safely into the "
			    "generated files — remove it",
			    what, *p);
			return false;
		}
	}
	return true;
}

/* One of a fixed set of words; returns the canonical entry or NULL after an error. */
const char *
pf_check_word(struct ld *ld, const config_setting_t *s, const char *what, const char *v,
	      const char *const *allowed)
{
	const char *near;
	char list[256] = "";
	size_t i;

	for (i = 0; allowed[i]; i++)
		if (strcasecmp(allowed[i], v) == 0)
			return allowed[i];
	for (i = 0; allowed[i]; i++) {
		if (i)
			strncat(list, ", ", sizeof(list) - strlen(list) - 1);
		strncat(list, allowed[i], sizeof(list) - strlen(list) - 1);
	}
	near = load_closest(v, allowed);
	if (near)
		ERR(ld, s, "%s '%s' is not valid — did you mean '%s'? (one of: %s)", what, v, near,
		    list);
	else
		ERR(ld, s, "%s '%s' is not valid — use one of: %s", what, v, list);
	return NULL;
}

static void
get_bool(struct ld *ld, const config_setting_t *g, const char *key, const char *where, bool *dst)
{
	config_setting_t *s = pf_member(ld, g, key, K_BOOL, where);

	if (s)
		*dst = config_setting_get_bool(s);
}

static void
get_word(struct ld *ld, const config_setting_t *g, const char *key, const char *where, char **dst,
	 const char *const *allowed)
{
	config_setting_t *s = pf_member(ld, g, key, K_STR, where);
	char what[96];
	const char *w;

	if (!s)
		return;
	snprintf(what, sizeof(what), "%s.%s", where, key);
	w = pf_check_word(ld, s, what, config_setting_get_string(s), allowed);
	if (w)
		pf_set_str(dst, w);
}

/* The strings of list s, each checked by fn (may be NULL), replace *dst; what is the list's
 * path ("group.key"). */
void
pf_read_strlist(struct ld *ld, const config_setting_t *s, const char *what, struct strlist *dst,
		bool (*fn)(struct ld *, const config_setting_t *, const char *, const char *))
{
	char ewhat[160];
	int i, n = config_setting_length(s);

	strlist_clear(dst);
	for (i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		snprintf(ewhat, sizeof(ewhat), "%s[%d]", what, i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING) {
			ERR(ld, e, "%s is %s — list entries must be quoted strings", ewhat,
			    pf_type_name(config_setting_type(e)));
			continue;
		}
		if (!pf_check_text(ld, e, ewhat, config_setting_get_string(e), 255, "\"\\%"))
			continue;
		if (fn && !fn(ld, e, ewhat, config_setting_get_string(e)))
			continue;
		strlist_add(dst, config_setting_get_string(e));
	}
}

/* A list of strings, each checked by fn (may be NULL); replaces *dst when present. */
static config_setting_t *
get_strlist(struct ld *ld, const config_setting_t *g, const char *key, const char *where,
	    struct strlist *dst,
	    bool (*fn)(struct ld *, const config_setting_t *, const char *, const char *))
{
	config_setting_t *s = pf_member(ld, g, key, K_LIST, where);
	char what[128];

	if (!s)
		return NULL;
	snprintf(what, sizeof(what), "%s.%s", where, key);
	pf_read_strlist(ld, s, what, dst, fn);
	return s;
}

/* The table's keys as a NULL-terminated list, for pf_unknown_keys; into v (n entries). */
const char *const *
pf_field_keys(const struct field *fields, const char **v, size_t n)
{
	size_t i;

	for (i = 0; fields[i].key && i + 1 < n; i++)
		v[i] = fields[i].key;
	v[i] = NULL;
	return v;
}

static void
load_field(struct ld *ld, const config_setting_t *g, const char *where, const char *what,
	   const struct field *f, void *base)
{
	config_setting_t *s;
	const char *v;
	char *w = NULL;
	int i;

	switch (f->type) {
	case F_STR:
		if (!(s = pf_member(ld, g, f->key, K_STR, where)))
			break;
		v = config_setting_get_string(s);
		if ((!f->check || f->check(ld, s, what, v)) &&
		    (!f->maxlen || pf_check_text(ld, s, what, v, f->maxlen, f->forbid)))
			pf_set_str(FIELD_PTR(base, f->off, char *), v);
		break;
	case F_WORD:
		get_word(ld, g, f->key, where, FIELD_PTR(base, f->off, char *), f->words);
		break;
	case F_ENUM:
		get_word(ld, g, f->key, where, &w, f->words);
		for (i = 0; w && f->words[i]; i++)
			if (strcmp(f->words[i], w) == 0)
				*FIELD_PTR(base, f->off, int) = i;
		free(w);
		break;
	case F_BOOL:
		get_bool(ld, g, f->key, where, FIELD_PTR(base, f->off, bool));
		break;
	case F_STRLIST:
		s = get_strlist(ld, g, f->key, where, FIELD_PTR(base, f->off, struct strlist),
				f->check);
		if (s && f->loc_off)
			*FIELD_PTR(base, f->loc_off, struct loc) = pf_loc_of(ld, s);
		break;
	case F_GROUP:
		if ((s = pf_member(ld, g, f->key, K_GROUP, where)))
			pf_load_group(ld, s, what, f->sub, base);
		break;
	case F_FUNC:
		if ((s = pf_member(ld, g, f->key, f->kind, where)))
			f->load(ld, s, what, f, base);
		else if (f->missing && !config_setting_get_member(g, f->key))
			ERR(ld, g, "%s has no %s — %s", where, f->key, f->missing);
		break;
	}
}

/* Reads g's keys as fields says into base. A key's path is where.key, or the key alone at
 * the top level (top: where is then only what type errors call the file). */
void
pf_load_fields(struct ld *ld, const config_setting_t *g, const char *where, bool top,
	       const struct field *fields, void *base)
{
	const struct field *f;
	char what[96];

	for (f = fields; f->key; f++) {
		if (top)
			snprintf(what, sizeof(what), "%s", f->key);
		else
			snprintf(what, sizeof(what), "%s.%s", where, f->key);
		load_field(ld, g, where, what, f, base);
	}
}

/* A group: its unknown keys reported, then its fields read. */
void
pf_load_group(struct ld *ld, const config_setting_t *g, const char *where,
	      const struct field *fields, void *base)
{
	const char *keys[32];

	pf_unknown_keys(ld, g, where, pf_field_keys(fields, keys, 32));
	pf_load_fields(ld, g, where, false, fields, base);
}
