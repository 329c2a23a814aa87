/* profile.c - load nastune.conf over its preset with libconfig, validate, build the model.
 * The only file that includes libconfig. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cluster.h"
#include "knobs.h"
#include "load.h"
#include "profile.h"
#include "units.h"
#include "xmalloc.h"

const char *const profile_presets[] = {
	"default", "home-media", "timemachine", "video-studio", "small-office", "demo", NULL,
};

/* ---- small helpers ---- */

static const char *
sfile(const struct ld *ld, const config_setting_t *s)
{
	const char *f = config_setting_source_file(s);

	return f ? f : ld->fallback;
}

static int
sline(const config_setting_t *s)
{
	return (int)config_setting_source_line(s);
}

/* File names live in m->files so struct loc can point at them. */
static const char *
intern_file(struct model *m, const char *f)
{
	size_t i;

	for (i = 0; i < m->files.n; i++)
		if (strcmp(m->files.v[i], f) == 0)
			return m->files.v[i];
	strlist_add(&m->files, f);
	return m->files.v[m->files.n - 1];
}

static struct loc
loc_of(struct ld *ld, const config_setting_t *s)
{
	struct loc l = { intern_file(ld->m, sfile(ld, s)), sline(s) };

	return l;
}

#define ERR(ld, s, ...) diag_error((ld)->d, sfile(ld, s), sline(s), __VA_ARGS__)

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

static void
unknown_keys(struct ld *ld, const config_setting_t *g, const char *where, const char *const *known)
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

enum kind { K_ANY, K_STR, K_BOOL, K_INT, K_GROUP, K_LIST };

static const char *
type_name(int t)
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

static bool
is_kind(const config_setting_t *s, enum kind k)
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
static bool
kind_ok(struct ld *ld, const config_setting_t *s, enum kind k, const char *what)
{
	char fix[128];

	if (is_kind(s, k))
		return true;
	snprintf(fix, sizeof(fix), kind_fix[k], config_setting_name(s));
	ERR(ld, s, "%s is %s — make it %s", what, type_name(config_setting_type(s)), fix);
	return false;
}

/* The member key of g when present and of the right kind; type errors are reported. */
static config_setting_t *
member(struct ld *ld, const config_setting_t *g, const char *key, enum kind k, const char *where)
{
	config_setting_t *s = config_setting_get_member(g, key);
	char what[128];

	if (!s)
		return NULL;
	snprintf(what, sizeof(what), "%s.%s", where, key);
	return kind_ok(ld, s, k, what) ? s : NULL;
}

static void
set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* Text that every target format can carry: printable, no line breaks, bounded. */
static bool
check_text(struct ld *ld, const config_setting_t *s, const char *what, const char *v, size_t maxlen,
	   const char *forbid)
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
static const char *
check_word(struct ld *ld, const config_setting_t *s, const char *what, const char *v,
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
	config_setting_t *s = member(ld, g, key, K_BOOL, where);

	if (s)
		*dst = config_setting_get_bool(s);
}

static void
get_word(struct ld *ld, const config_setting_t *g, const char *key, const char *where, char **dst,
	 const char *const *allowed)
{
	config_setting_t *s = member(ld, g, key, K_STR, where);
	char what[96];
	const char *w;

	if (!s)
		return;
	snprintf(what, sizeof(what), "%s.%s", where, key);
	w = check_word(ld, s, what, config_setting_get_string(s), allowed);
	if (w)
		set_str(dst, w);
}

/* The strings of list s, each checked by fn (may be NULL), replace *dst; what is the list's
 * path ("group.key"). */
static void
read_strlist(struct ld *ld, const config_setting_t *s, const char *what, struct strlist *dst,
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
			    type_name(config_setting_type(e)));
			continue;
		}
		if (!check_text(ld, e, ewhat, config_setting_get_string(e), 255, "\"\\%"))
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
	config_setting_t *s = member(ld, g, key, K_LIST, where);
	char what[128];

	if (!s)
		return NULL;
	snprintf(what, sizeof(what), "%s.%s", where, key);
	read_strlist(ld, s, what, dst, fn);
	return s;
}

/* ---- value checks ---- */

static bool
is_hostname(const char *v)
{
	size_t label = 0;
	const char *p;

	if (!*v || strlen(v) > 253)
		return false;
	for (p = v; *p; p++) {
		if (*p == '.') {
			if (label == 0 || p[-1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)*p) || (*p == '-' && label > 0)))
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0 && p[-1] != '-';
}

static bool
is_ipaddr(const char *v, int *family)
{
	unsigned char b[16];

	if (inet_pton(AF_INET, v, b) == 1) {
		*family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, v, b) == 1) {
		*family = AF_INET6;
		return true;
	}
	return false;
}

/* Sets (value non-NULL) or clears knob id with its origin s. */
static void
set_knob(struct ld *ld, enum knob_id id, const char *value, enum knob_src src,
	 const config_setting_t *s)
{
	struct knob_setting *k = &ld->m->knobs[id];

	free(k->value);
	k->value = value ? xstrdup(value) : NULL;
	k->src = value ? src : KNOB_UNSET;
	k->loc = loc_of(ld, s);
}

static bool
check_ifname(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	const char *p;

	if (!*v || strlen(v) > 15) {
		ERR(ld, s,
		    "%s '%s' is not an interface name — use 1 to 15 characters, e.g. "
		    "\"eth0\"",
		    what, v);
		return false;
	}
	for (p = v; *p; p++)
		if (*p == '/' || *p == ' ' || *p == ':' || *p == ',') {
			ERR(ld, s,
			    "%s '%s' is not an interface name — no '/', ':', ',' or "
			    "spaces",
			    what, v);
			return false;
		}
	return true;
}

static bool
check_peer(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	int fam;

	if (is_ipaddr(v, &fam) || is_hostname(v))
		return true;
	ERR(ld, s,
	    "%s '%s' is neither an IP address nor a host name — write e.g. "
	    "\"192.0.2.20\" or \"mac-studio.local\"",
	    what, v);
	return false;
}

/* NFS client specs: address, CIDR, host name, wildcard host name, @netgroup. */
static bool
check_nfs_client(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	char host[256];
	const char *slash = strchr(v, '/'), *p;
	int fam;

	if (strcmp(v, "*") == 0)
		return true;
	if (v[0] == '@') {
		if (is_hostname(v + 1) ||
		    (v[1] &&
		     strspn(v + 1, "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(v + 1)))
			return true;
		ERR(ld, s, "%s '%s' is not a valid netgroup — write \"@groupname\"", what, v);
		return false;
	}
	if (slash) {
		char *end;
		long bits;

		snprintf(host, sizeof(host), "%.*s", (int)(slash - v), v);
		errno = 0;
		bits = strtol(slash + 1, &end, 10);
		if (!is_ipaddr(host, &fam) || !slash[1] || *end || errno || bits < 0 ||
		    bits > (fam == AF_INET ? 32 : 128)) {
			ERR(ld, s,
			    "%s '%s' is not a valid network — write an address and a prefix "
			    "length, e.g. \"192.0.2.0/24\" or \"2001:db8::/64\" (IPv4 /0-32, "
			    "IPv6 /0-128)",
			    what, v);
			return false;
		}
		return true;
	}
	if (is_ipaddr(v, &fam))
		return true;
	/* Wildcards: '*' and '?' stand for host name characters. */
	snprintf(host, sizeof(host), "%s", v);
	for (p = host; *p; p++)
		if (*p == '*' || *p == '?')
			host[p - host] = 'x';
	if (is_hostname(host))
		return true;
	ERR(ld, s,
	    "%s '%s' is not an NFS client — use an address, a network (\"192.0.2.0/24\"), "
	    "a host name, a wildcard (\"*.lan\") or \"@netgroup\"",
	    what, v);
	return false;
}

static bool
check_username(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	size_t i, n = strlen(v);

	for (i = 0; i < n; i++) {
		char c = v[i];

		if (!(islower((unsigned char)c) || c == '_' ||
		      (i > 0 && (isdigit((unsigned char)c) || c == '-' || c == '.')) ||
		      (i == n - 1 && i > 0 && c == '$')))
			break;
	}
	if (n == 0 || n > 32 || i != n) {
		ERR(ld, s,
		    "%s '%s' is not a valid user name — use lower-case letters, digits, '_' "
		    "and '-', starting with a letter, at most 32 characters",
		    what, v);
		return false;
	}
	return true;
}

/* ---- the key tables ---- */

/* How a key's value is read. */
enum ftype {
	F_STR,	   /* a string, checked by check then check_text, into a char * */
	F_WORD,	   /* one of words (any case), kept as the canonical word, into a char * */
	F_ENUM,	   /* one of words, kept as its index, into an enum */
	F_BOOL,	   /* true/false, into a bool */
	F_STRLIST, /* a list of strings, each checked by check, into a struct strlist */
	F_GROUP,   /* a group with keys of its own: sub, over the same base */
	F_FUNC,	   /* anything else: load reads it, once its kind is checked */
};

struct field;

/* A value check: true, or false after saying why at s; what is "group.key" (or "...[i]"). */
typedef bool (*value_check)(struct ld *, const config_setting_t *s, const char *what,
			    const char *v);
/* Reads the present key s, of the row's kind, into base; what is "group.key". */
typedef void (*key_loader)(struct ld *, config_setting_t *s, const char *what,
			   const struct field *f, void *base);

/* One key of a group, as Redis's config table: its name, how it is read and checked, and
 * where its value goes, an offset into the group's base (the model, a share, a service's
 * settings). The table's order is the order its keys are read in (so the order of the
 * diagnostics) and the order "did you mean" considers them in. A new group is one more
 * table and an F_GROUP row in its parent's (or an F_FUNC row naming it in .sub: a list of
 * groups is .kind = K_LIST); tests/pkg/doccheck follows the rows to hold nastune.conf(5)
 * to the tables. */
struct field {
	const char *key;
	enum ftype type;
	size_t off;		  /* the value, in base */
	value_check check;	  /* F_STR: before check_text; F_STRLIST: every entry */
	size_t maxlen;		  /* F_STR: check_text's limit; 0: check alone decides */
	const char *forbid;	  /* F_STR: characters check_text refuses */
	const char *const *words; /* F_WORD, F_ENUM */
	size_t loc_off;		  /* F_STRLIST: where the list's struct loc goes; 0: nowhere */
	const struct field *sub;  /* F_GROUP; F_FUNC: the table its loader reads (documented) */
	key_loader load;	  /* F_FUNC */
	enum kind kind;		  /* F_FUNC: what s must be (K_ANY: load checks it) */
	const char *missing;	  /* F_FUNC: the fix when the key is absent; NULL: optional */
	int arg;		  /* F_FUNC: the loader's own */
};

/* F_ENUM writes an int. */
_Static_assert(sizeof(enum nfs_server) == sizeof(int) && sizeof(enum tune_goal) == sizeof(int),
	       "F_ENUM fields must be int-sized");

#define M(member) offsetof(struct model, member)
#define SH(member) offsetof(struct share, member)
#define FIELD_PTR(base, off, type) ((type *)(void *)((char *)(base) + (off)))

static void load_group(struct ld *ld, const config_setting_t *g, const char *where,
		       const struct field *fields, void *base);

/* The table's keys as a NULL-terminated list, for unknown_keys; into v (n entries). */
static const char *const *
field_keys(const struct field *fields, const char **v, size_t n)
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
		if (!(s = member(ld, g, f->key, K_STR, where)))
			break;
		v = config_setting_get_string(s);
		if ((!f->check || f->check(ld, s, what, v)) &&
		    (!f->maxlen || check_text(ld, s, what, v, f->maxlen, f->forbid)))
			set_str(FIELD_PTR(base, f->off, char *), v);
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
			*FIELD_PTR(base, f->loc_off, struct loc) = loc_of(ld, s);
		break;
	case F_GROUP:
		if ((s = member(ld, g, f->key, K_GROUP, where)))
			load_group(ld, s, what, f->sub, base);
		break;
	case F_FUNC:
		if ((s = member(ld, g, f->key, f->kind, where)))
			f->load(ld, s, what, f, base);
		else if (f->missing && !config_setting_get_member(g, f->key))
			ERR(ld, g, "%s has no %s — %s", where, f->key, f->missing);
		break;
	}
}

/* Reads g's keys as fields says into base. A key's path is where.key, or the key alone at
 * the top level (top: where is then only what type errors call the file). */
static void
load_fields(struct ld *ld, const config_setting_t *g, const char *where, bool top,
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
static void
load_group(struct ld *ld, const config_setting_t *g, const char *where, const struct field *fields,
	   void *base)
{
	const char *keys[32];

	unknown_keys(ld, g, where, field_keys(fields, keys, 32));
	load_fields(ld, g, where, false, fields, base);
}

/* ---- server ---- */

/* A NetBIOS and Bonjour name: 1 to 15 letters, digits or inner hyphens. */
static bool
netbios_name_ok(struct ld *ld, const config_setting_t *s, const char *what, const char *v,
		const char *example)
{
	size_t n = strlen(v), i;
	bool ok = n >= 1 && n <= 15 && v[0] != '-' && v[n - 1] != '-';

	for (i = 0; i < n && ok; i++)
		ok = isalnum((unsigned char)v[i]) || v[i] == '-';
	if (!ok)
		ERR(ld, s,
		    "%s '%s' cannot be a NetBIOS and Bonjour name — use 1 to 15 letters, digits "
		    "or inner hyphens, e.g. \"%s\"",
		    what, v, example);
	return ok;
}

static bool
check_netbios_name(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	return netbios_name_ok(ld, s, what, v, "atlas");
}

static bool
check_cluster_name(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	return netbios_name_ok(ld, s, what, v, "nas");
}

static bool
check_workgroup(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	size_t n = strlen(v);

	if (n >= 1 && n <= 15 &&
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") == n)
		return true;
	ERR(ld, s,
	    "%s '%s' is not valid — use 1 to 15 letters, digits, '-', '_' or '.', e.g. "
	    "\"WORKGROUP\"",
	    what, v);
	return false;
}

static bool
check_apple_model(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	size_t n = strlen(v);

	if (n >= 1 && n <= 64 &&
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789,._-") == n)
		return true;
	ERR(ld, s,
	    "%s '%s' is not an Apple model identifier — use letters, digits, ',', '.', '_' or "
	    "'-', e.g. \"TimeCapsule8,119\" or \"MacSamba\"",
	    what, v);
	return false;
}

static const struct field server_fields[] = {
	{ "name", F_STR, .off = M(server.name), .check = check_netbios_name },
	{ "workgroup", F_STR, .off = M(server.workgroup), .check = check_workgroup },
	/* '%' would be expanded by Samba as a substitution variable. */
	{ "description", F_STR, .off = M(server.description), .maxlen = 200, .forbid = "%\"\\" },
	{ "model", F_STR, .off = M(server.model), .check = check_apple_model },
	{ "interfaces", F_STRLIST, .off = M(server.interfaces), .check = check_ifname },
	{ NULL },
};

/* ---- network ---- */

static void
load_mtu(struct ld *ld, config_setting_t *s, const char *what, const struct field *f, void *base)
{
	struct model *m = base;
	const char *v = is_kind(s, K_STR) ? config_setting_get_string(s) : "";

	(void)f;
	if (is_kind(s, K_INT)) {
		long long n = config_setting_type(s) == CONFIG_TYPE_INT
				      ? config_setting_get_int(s)
				      : config_setting_get_int64(s);
		char num[16];

		if (n < 576 || n > 9216) {
			ERR(ld, s,
			    "%s %lld is out of range — use 576 to 9216, \"auto\" or \"keep\"", what,
			    n);
			return;
		}
		m->network.mtu_mode = MTU_FIXED;
		m->network.mtu = (int)n;
		snprintf(num, sizeof(num), "%d", (int)n);
		set_knob(ld, KNOB_NET_MTU, num, KNOB_CONFIG, s);
	} else if (strcmp(v, "auto") == 0 || strcmp(v, "keep") == 0) {
		m->network.mtu_mode = strcmp(v, "auto") == 0 ? MTU_AUTO : MTU_KEEP;
		set_knob(ld, KNOB_NET_MTU, NULL, KNOB_UNSET, s);
	} else {
		ERR(ld, s,
		    "%s must be a number from 576 to 9216, \"auto\" or \"keep\" — e.g. mtu = "
		    "9000; or mtu = \"auto\";",
		    what);
	}
}

static const struct field network_fields[] = {
	{ "interface", F_STR, .off = M(network.interface), .check = check_ifname },
	{ "mtu", F_FUNC, .load = load_mtu, .kind = K_ANY },
	{ "peers", F_STRLIST, .off = M(network.peers), .check = check_peer },
	{ NULL },
};

/* ---- protocols ---- */

static const char *const min_protocols[] = {
	"SMB2", "SMB2_02", "SMB2_10", "SMB3", "SMB3_00", "SMB3_02", "SMB3_11", "NT1", NULL,
};
static const char *const signings[] = {
	"default", "auto", "desired", "mandatory", "required", "disabled", NULL,
};
static const char *const encryptions[] = {
	"default", "off", "if_required", "desired", "required", NULL,
};
/* Indexed by enum nfs_server. */
static const char *const nfs_servers[] = { "kernel", "ganesha", NULL };
static const char *const cnid_schemes[] = { "dbd", "last", "sqlite", "mysql", NULL };

/* A word of min_protocols; NT1 in force (even from the preset) is warned about. */
static void
load_min_protocol(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		  void *base)
{
	struct model *m = base;
	const char *w;

	if (kind_ok(ld, s, K_STR, what) &&
	    (w = check_word(ld, s, what, config_setting_get_string(s), f->words)))
		set_str(&m->smb.min_protocol, w);
	if (m->smb.min_protocol && strcmp(m->smb.min_protocol, "NT1") == 0)
		diag_warning(ld->d, sfile(ld, s), sline(s),
			     "%s NT1 allows SMB1, which is insecure and slow — prefer \"SMB2\"",
			     what);
}

static void
load_nfs_versions(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		  void *base)
{
	struct model *m = base;
	int i, n = config_setting_length(s);
	bool v3 = false, v4 = false, ok = true;

	(void)f;
	for (i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		int v = config_setting_type(e) == CONFIG_TYPE_INT ? config_setting_get_int(e) : 0;

		if (v == 3 || v == 4) {
			v3 |= v == 3;
			v4 |= v == 4;
		} else {
			ERR(ld, e, "%s[%d] must be 3 or 4 — e.g. versions = [3, 4];", what, i);
			ok = false;
		}
	}
	if (ok && !v3 && !v4)
		ERR(ld, s, "%s is empty — list at least one of 3 and 4, or set enabled = false",
		    what);
	if (ok && (v3 || v4)) {
		m->nfs.v3 = v3;
		m->nfs.v4 = v4;
	}
}

static const struct field smb_fields[] = {
	{ "enabled", F_BOOL, .off = M(smb.enabled) },
	{ "min_protocol", F_FUNC, .load = load_min_protocol, .kind = K_ANY,
	  .words = min_protocols },
	{ "signing", F_WORD, .off = M(smb.signing), .words = signings },
	{ "encryption", F_WORD, .off = M(smb.encryption), .words = encryptions },
	{ "apple", F_BOOL, .off = M(smb.apple) },
	{ NULL },
};

static const struct field nfs_fields[] = {
	{ "enabled", F_BOOL, .off = M(nfs.enabled) },
	{ "server", F_ENUM, .off = M(nfs.server), .words = nfs_servers },
	{ "versions", F_FUNC, .load = load_nfs_versions, .kind = K_LIST },
	{ NULL },
};

static const struct field afp_fields[] = {
	{ "enabled", F_BOOL, .off = M(afp.enabled) },
	{ "cnid_scheme", F_WORD, .off = M(afp.cnid_scheme), .words = cnid_schemes },
	{ NULL },
};

static const struct field protocol_fields[] = {
	{ "smb", F_GROUP, .sub = smb_fields },
	{ "nfs", F_GROUP, .sub = nfs_fields },
	{ "afp", F_GROUP, .sub = afp_fields },
	{ NULL },
};

/* ---- users ---- */

static void
load_user_name(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
	       void *base)
{
	struct model *m = base;
	const char *name = config_setting_get_string(s);
	size_t k;

	(void)what;
	(void)f;
	if (!check_username(ld, s, "users[].name", name))
		return;
	for (k = 0; k < m->n_users; k++)
		if (strcmp(m->users[k].name, name) == 0)
			break;
	if (k < m->n_users) {
		ERR(ld, s, "user '%s' is listed twice (first at line %d) — remove one", name,
		    m->users[k].loc.line);
		return;
	}
	m->users = xreallocarray(m->users, m->n_users + 1, sizeof(*m->users));
	m->users[m->n_users].name = xstrdup(name);
	m->users[m->n_users].loc = loc_of(ld, s);
	m->n_users++;
}

/* users[]: existing system accounts. */
static const struct field user_fields[] = {
	{ "name", F_FUNC, .load = load_user_name, .kind = K_STR,
	  .missing = "add name = \"alice\"; (an existing system account)" },
	{ NULL },
};

static void
load_users(struct ld *ld, config_setting_t *l, const char *what, const struct field *f, void *base)
{
	struct model *m = base;
	char where[32];
	int i, n = config_setting_length(l);
	size_t k;

	(void)what;
	for (k = 0; k < m->n_users; k++)
		free(m->users[k].name);
	free(m->users);
	m->users = NULL;
	m->n_users = 0;
	for (i = 0; i < n; i++) {
		config_setting_t *u = config_setting_get_elem(l, (unsigned)i);

		snprintf(where, sizeof(where), "users[%d]", i);
		if (config_setting_type(u) != CONFIG_TYPE_GROUP)
			ERR(ld, u, "%s must be a group — write ( { name = \"alice\"; } )", where);
		else
			load_group(ld, u, where, f->sub, m);
	}
}

/* ---- shares ---- */

/* SMB forbids these in share names; '%' is a Samba substitution; ',' and '=' would break the
 * Time Machine TXT record; '[' ']' the smb.conf section header. */
#define SHARE_FORBIDDEN "\\/:*?\"<>|[]+=;,%#"

static void
load_share_name(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		void *base)
{
	static const char *const reserved[] = { "global", "homes", "printers",
						"print$", "ipc$",  NULL };
	struct share *sh = base;
	const char *v = config_setting_get_string(s);
	size_t n = strlen(v), k;

	(void)f;
	sh->loc_name = loc_of(ld, s);
	if (n == 0) {
		ERR(ld, s, "%s is empty — give the share a name, e.g. \"Media\"", what);
	} else if (v[0] == ' ' || v[n - 1] == ' ') {
		ERR(ld, s, "share name '%s' starts or ends with a space — remove it", v);
	} else if (check_text(ld, s, what, v, 80, SHARE_FORBIDDEN)) {
		for (k = 0; reserved[k]; k++)
			if (strcasecmp(v, reserved[k]) == 0)
				break;
		if (reserved[k])
			ERR(ld, s, "share name '%s' is reserved by Samba — choose another name", v);
		else
			sh->name = xstrdup(v);
	}
}

/* White space next to a '/' or at either end: Samba and netatalk trim a path's ends and
 * exports do not, so such a path names two directories. */
static bool
edge_space(const char *v)
{
	size_t i, n = strlen(v);

	for (i = 0; i < n; i++)
		if (isspace((unsigned char)v[i]) &&
		    (i == 0 || i == n - 1 || v[i - 1] == '/' || v[i + 1] == '/'))
			return true;
	return false;
}

static void
load_share_path(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		void *base)
{
	struct share *sh = base;
	const char *v = config_setting_get_string(s);
	size_t n = strlen(v);

	(void)f;
	sh->loc_path = loc_of(ld, s);
	if (edge_space(v))
		ERR(ld, s,
		    "%s '%s' has white space at the start or end of a name — Samba and netatalk "
		    "trim it and NFS does not, so one share would serve two directories: remove it",
		    what, v);
	else if (v[0] != '/')
		ERR(ld, s, "%s '%s' is not absolute — write the full path, e.g. \"/srv/media\"",
		    what, v);
	else if (strcmp(v, "/") == 0)
		ERR(ld, s,
		    "%s is / — sharing the whole file system is refused; share a directory such "
		    "as \"/srv/media\"",
		    what);
	else if (strstr(v, "/../") || strstr(v, "/./") || strstr(v, "//") ||
		 (n >= 3 && strcmp(v + n - 3, "/..") == 0) ||
		 (n >= 2 && strcmp(v + n - 2, "/.") == 0) || v[n - 1] == '/')
		ERR(ld, s,
		    "%s '%s' is not a plain path — remove '..', '.', doubled and trailing slashes",
		    what, v);
	else if (check_text(ld, s, what, v, 1024, "\"\\%"))
		sh->path = xstrdup(v);
}

static void
load_share_protocols(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		     void *base)
{
	struct share *sh = base;
	unsigned set = 0, bit;
	int i, n = config_setting_length(s);

	(void)f;
	for (i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		const char *v = config_setting_type(e) == CONFIG_TYPE_STRING
					? config_setting_get_string(e)
					: "";

		if (!(bit = model_proto_bit(v)))
			ERR(ld, e, "%s[%d] must be \"smb\", \"nfs\" or \"afp\"", what, i);
		else if (set & bit)
			ERR(ld, e, "%s lists \"%s\" twice — remove one", what, v);
		set |= bit;
	}
	if (n == 0)
		ERR(ld, s, "%s is empty — list at least one of \"smb\", \"nfs\", \"afp\"", what);
	sh->protocols = set;
}

/* A size with a unit, at least 1G. */
static void
load_tm_max_size(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		 void *base)
{
	struct share *sh = base;
	uint64_t b;
	int rc = is_kind(s, K_STR) ? units_parse_size(config_setting_get_string(s), &b) : -EINVAL;

	(void)f;
	if (rc == -ERANGE)
		ERR(ld, s, "%s is too large — use at most 16383P", what);
	else if (rc < 0)
		ERR(ld, s,
		    "%s must be a size with a unit, e.g. \"2T\" or \"500G\" (units K, M, G, T, P)",
		    what);
	else if (b < (1ULL << 30))
		ERR(ld, s, "%s is below 1G — Time Machine needs more; use e.g. \"500G\"", what);
	else
		sh->tm_max_size = b;
}

/* Written at all, it overrides nfs.export_sync for the share. */
static void
load_nfs_async(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
	       void *base)
{
	struct share *sh = base;

	(void)ld;
	(void)what;
	(void)f;
	sh->nfs_async = config_setting_get_bool(s);
	sh->nfs_async_set = true;
}

/* The knob classes a consent can name (knobs.h: enum knob_safety). */
static const char *const knob_classes[] = { "unsafe", "semantics", NULL };

/* tuning.allow (share NULL) or a share's allow: the knob classes that may apply beyond
 * speed. A list written replaces the preset's; "unsafe" is the server's only. */
static void
load_allow(struct ld *ld, config_setting_t *s, const char *what, struct model *m, struct share *sh)
{
	int i, n = config_setting_length(s);

	if (sh)
		sh->allow_semantics = false;
	else
		m->tuning.allow_semantics = false;
	for (i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		char ewhat[128];
		const char *w;

		snprintf(ewhat, sizeof(ewhat), "%s[%d]", what, i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING) {
			ERR(ld, e, "%s must be a quoted class — e.g. allow = [\"semantics\"];",
			    ewhat);
			continue;
		}
		if (!(w = check_word(ld, e, ewhat, config_setting_get_string(e), knob_classes)))
			continue;
		if (strcmp(w, "semantics") == 0 && sh)
			sh->allow_semantics = true;
		else if (strcmp(w, "semantics") == 0)
			m->tuning.allow_semantics = true;
		else if (!sh)
			m->tuning.allow_unsafe = true;
		else
			ERR(ld, e,
			    "%s \"unsafe\" is the whole server's — write tuning.allow = "
			    "[\"unsafe\"]; (or nfs = { async = true; } for this share's NFS "
			    "writes)",
			    ewhat);
	}
}

static void
load_share_allow(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		 void *base)
{
	(void)f;
	load_allow(ld, s, what, ld->m, base);
}

static const struct field tm_fields[] = {
	{ "enabled", F_BOOL, .off = SH(tm_enabled) },
	{ "max_size", F_FUNC, .load = load_tm_max_size, .kind = K_ANY },
	{ NULL },
};

static const struct field share_nfs_fields[] = {
	{ "clients", F_STRLIST, .off = SH(nfs_clients), .check = check_nfs_client,
	  .loc_off = SH(loc_clients) },
	{ "async", F_FUNC, .load = load_nfs_async, .kind = K_BOOL },
	{ NULL },
};

static const struct field share_fields[] = {
	{ "name", F_FUNC, .load = load_share_name, .kind = K_STR,
	  .missing = "add name = \"Media\";" },
	{ "path", F_FUNC, .load = load_share_path, .kind = K_STR,
	  .missing = "add path = \"/srv/...\";" },
	{ "protocols", F_FUNC, .load = load_share_protocols, .kind = K_LIST },
	{ "read_only", F_BOOL, .off = SH(read_only) },
	{ "guest", F_BOOL, .off = SH(guest) },
	{ "comment", F_STR, .off = SH(comment), .maxlen = 256, .forbid = "%\"\\" },
	{ "valid_users", F_STRLIST, .off = SH(valid_users), .check = check_username,
	  .loc_off = SH(loc_users) },
	{ "time_machine", F_GROUP, .sub = tm_fields },
	{ "nfs", F_GROUP, .sub = share_nfs_fields },
	{ "allow", F_FUNC, .load = load_share_allow, .kind = K_LIST },
	{ NULL },
};

static void
load_shares(struct ld *ld, config_setting_t *l, const char *what, const struct field *f, void *base)
{
	struct model *m = base;
	char where[32];
	int i, n = config_setting_length(l);
	size_t k;

	(void)what;
	for (k = 0; k < m->n_shares; k++) {
		struct share *sh = &m->shares[k];

		free(sh->name);
		free(sh->path);
		free(sh->comment);
		strlist_clear(&sh->valid_users);
		strlist_clear(&sh->nfs_clients);
	}
	free(m->shares);
	m->shares = NULL;
	m->n_shares = 0;
	for (i = 0; i < n; i++) {
		config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
		struct share *sh;

		if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
			ERR(ld, g,
			    "shares[%d] must be a group — write ( { name = \"Media\"; path = "
			    "\"/srv/media\"; } )",
			    i);
			continue;
		}
		m->shares = xreallocarray(m->shares, m->n_shares + 1, sizeof(*m->shares));
		sh = memset(&m->shares[m->n_shares++], 0, sizeof(*m->shares));
		sh->loc = loc_of(ld, g);
		sh->protocols = PROTO_SMB;
		snprintf(where, sizeof(where), "shares[%d]", i);
		load_group(ld, g, where, f->sub, sh);
	}
}

/* ---- tuning ---- */

/* The knob groups of tuning.knobs and tuned.conf: smb = { use_sendfile = "yes"; }; ...
 * Values are strings, whole numbers, or true/false for yes/no knobs. A tuned value (src
 * KNOB_TUNED) never replaces one pinned in nastune.conf. */
static void
load_knobs(struct ld *ld, const config_setting_t *g, const char *where, enum knob_src src)
{
	static const char *const groups[] = { "smb", "nfs", "afp", "sys", "net", NULL };
	const char *keys[KNOB_COUNT + 1];
	const struct knob *k;
	char gwhere[64], what[96], canon[256], why[512], num[32];
	int i, j, n, nk;

	unknown_keys(ld, g, where, groups);
	for (i = 0; groups[i]; i++) {
		config_setting_t *p;

		snprintf(gwhere, sizeof(gwhere), "%s.%s", where, groups[i]);
		if (!(p = member(ld, g, groups[i], K_GROUP, where)))
			continue;
		nk = 0;
		for (k = knob_first(); k; k = knob_next(k))
			if (strncmp(k->name, groups[i], strlen(groups[i])) == 0 &&
			    k->name[strlen(groups[i])] == '.')
				keys[nk++] = knob_key(k);
		keys[nk] = NULL;
		unknown_keys(ld, p, gwhere, keys);
		n = config_setting_length(p);
		for (j = 0; j < n; j++) {
			config_setting_t *e = config_setting_get_elem(p, (unsigned)j);
			const char *name = config_setting_name(e), *v = NULL;
			struct knob_setting *cur;
			char full[64];

			snprintf(full, sizeof(full), "%s.%s", groups[i], name ? name : "");
			if (!(k = knob_find(full)))
				continue; /* reported by unknown_keys */
			snprintf(what, sizeof(what), "%s.%s", where, full);
			if (k->id == KNOB_NET_MTU) {
				ERR(ld, e,
				    "%s cannot be set here — the MTU is network.mtu's: write "
				    "network = { mtu = 9000; }; (or \"auto\")",
				    what);
				continue;
			}
			if (k->id == KNOB_AFP_CNID_SCHEME && src == KNOB_CONFIG) {
				ERR(ld, e,
				    "%s cannot be set here — the CNID backend is "
				    "protocols.afp.cnid_scheme's: write protocols = { afp = { "
				    "cnid_scheme = \"dbd\"; }; };",
				    what);
				continue;
			}
			switch (config_setting_type(e)) {
			case CONFIG_TYPE_STRING:
				v = config_setting_get_string(e);
				break;
			case CONFIG_TYPE_INT:
			case CONFIG_TYPE_INT64:
				snprintf(num, sizeof(num), "%lld",
					 (long long)config_setting_get_int64(e));
				if (config_setting_type(e) == CONFIG_TYPE_INT)
					snprintf(num, sizeof(num), "%d", config_setting_get_int(e));
				v = num;
				break;
			case CONFIG_TYPE_BOOL:
				if (k->kind == KNOB_ENUM && (strcmp(k->words[0], "yes") == 0 ||
							     strcmp(k->words[0], "no") == 0))
					v = config_setting_get_bool(e) ? "yes" : "no";
				break;
			}
			if (!v) {
				ERR(ld, e, "%s is %s — write a quoted value, e.g. %s = \"%s\";",
				    what, type_name(config_setting_type(e)), name,
				    k->candidates[0]);
				continue;
			}
			if (knob_parse(k, v, canon, sizeof(canon), why, sizeof(why)) < 0) {
				ERR(ld, e, "%s %s", what, why);
				continue;
			}
			cur = &ld->m->knobs[k->id];
			if (src == KNOB_TUNED && cur->value && cur->src == KNOB_CONFIG) {
				diag_warning(
					ld->d, sfile(ld, e), sline(e),
					"%s is pinned in "
					"nastune.conf (%s:%d) — the tuned value is ignored and "
					"dropped at the next apply",
					full, cur->loc.file, cur->loc.line);
				continue;
			}
			if (src == KNOB_TUNED &&
			    !knob_value_permitted(ld->m, k, canon, why, sizeof(why))) {
				diag_warning(ld->d, sfile(ld, e), sline(e),
					     "%s; the tuned value is "
					     "ignored and dropped at the next apply",
					     why);
				continue;
			}
			set_knob(ld, k->id, canon, src, e);
		}
	}
}

/* Indexed by enum tune_goal. */
static const char *const goals[] = { "throughput", "small-files", "video", "balanced", NULL };

static void
load_budget(struct ld *ld, config_setting_t *s, const char *what, const struct field *f, void *base)
{
	struct model *m = base;
	unsigned secs;

	(void)f;
	if (is_kind(s, K_STR) && units_parse_duration(config_setting_get_string(s), &secs) == 0 &&
	    secs >= 10)
		m->tuning.budget_s = secs;
	else if (is_kind(s, K_INT) && config_setting_get_int(s) >= 10)
		m->tuning.budget_s = (unsigned)config_setting_get_int(s);
	else
		ERR(ld, s,
		    "%s must be a duration of at least 10 seconds — e.g. \"10m\", \"90s\" or "
		    "\"1h\"",
		    what);
}

/* tuning.false_positives: the chance a tune may change what changes nothing, shared by all
 * its changes; a float (or 0/1 as an int: both refused, outside the range). */
static void
load_false_positives(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		     void *base)
{
	struct model *m = base;
	int t = config_setting_type(s);
	double v = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
		   : is_kind(s, K_INT)	  ? (double)config_setting_get_int64(s)
					  : -1;

	(void)f;
	if (v >= TUNE_ALPHA_MIN && v <= TUNE_ALPHA_MAX)
		m->tuning.false_positives = v;
	else
		ERR(ld, s,
		    "%s must be a probability from %g to %g — e.g. 0.05 (the default: one tune "
		    "in twenty may apply a change that does nothing) or 0.01",
		    what, TUNE_ALPHA_MIN, TUNE_ALPHA_MAX);
}

static void
load_tuning_allow(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		  void *base)
{
	(void)f;
	load_allow(ld, s, what, base, NULL);
}

/* tuning.knobs, pinned by the user; tuned.conf's knobs, chosen by tune. */
static void
load_knob_groups(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		 void *base)
{
	(void)base;
	if (f->arg == KNOB_TUNED)
		load_knobs(ld, s, "knobs", KNOB_TUNED);
	else
		load_knobs(ld, s, what, KNOB_CONFIG);
}

static const struct field tuning_fields[] = {
	{ "goal", F_ENUM, .off = M(tuning.goal), .words = goals },
	{ "allow_unsafe", F_BOOL, .off = M(tuning.allow_unsafe) },
	{ "allow", F_FUNC, .load = load_tuning_allow, .kind = K_LIST },
	{ "budget", F_FUNC, .load = load_budget, .kind = K_ANY },
	{ "false_positives", F_FUNC, .load = load_false_positives, .kind = K_ANY },
	{ "knobs", F_FUNC, .load = load_knob_groups, .kind = K_GROUP, .arg = KNOB_CONFIG },
	{ NULL },
};

/* tuned.conf: only the knobs tune chose. */
static const struct field tuned_fields[] = {
	{ "knobs", F_FUNC, .load = load_knob_groups, .kind = K_GROUP, .arg = KNOB_TUNED },
	{ NULL },
};

/* ---- services ---- */

static const char *const backends[] = { "auto", "systemd", "pidfile", "none", NULL };

/* services.<svc>: what the table reads for one daemon. */
struct svc_settings {
	enum svc svc;
	char *backend, *pidfile, *start;
};

static bool
check_pidfile(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	if (v[0] == '/')
		return true;
	ERR(ld, s, "%s must be an absolute path, e.g. \"/run/samba/smbd.pid\"", what);
	return false;
}

static void
load_start(struct ld *ld, config_setting_t *s, const char *what, const struct field *f, void *base)
{
	static const char *const daemons[] = {
		[SVC_SMB] = "smbd",
		[SVC_NFS] = "ganesha.nfsd",
		[SVC_AFP] = "afpd",
		[SVC_MDNS] = "avahi-daemon",
	};
	struct svc_settings *v = base;
	const char *text = config_setting_get_string(s);

	(void)f;
	if (!text[strspn(text, " \t")])
		ERR(ld, s,
		    "%s is empty — write the command line that starts %s (run with /bin/sh -c), "
		    "or remove it",
		    what, daemons[v->svc]);
	else if (check_text(ld, s, what, text, 1024, NULL))
		set_str(&v->start, text);
}

static const struct field svc_fields[] = {
	{ "backend", F_WORD, .off = offsetof(struct svc_settings, backend), .words = backends },
	{ "pidfile", F_STR, .off = offsetof(struct svc_settings, pidfile), .check = check_pidfile,
	  .maxlen = 1024 },
	{ "start", F_FUNC, .load = load_start, .kind = K_STR },
	{ NULL },
};

static void
load_service(struct ld *ld, config_setting_t *p, const char *what, const struct field *f,
	     void *base)
{
	struct model *m = base;
	struct svc_settings v = {
		.svc = f->arg,
		.backend = m->services.svc_backend[f->arg],
		.pidfile = m->services.svc_pidfile[f->arg],
		.start = m->services.svc_start[f->arg],
	};

	load_group(ld, p, what, f->sub, &v);
	m->services.svc_backend[v.svc] = v.backend;
	m->services.svc_pidfile[v.svc] = v.pidfile;
	m->services.svc_start[v.svc] = v.start;
}

static const struct field service_fields[] = {
	{ "backend", F_WORD, .off = M(services.backend), .words = backends },
	{ "smb", F_FUNC, .load = load_service, .kind = K_GROUP, .sub = svc_fields, .arg = SVC_SMB },
	{ "nfs", F_FUNC, .load = load_service, .kind = K_GROUP, .sub = svc_fields, .arg = SVC_NFS },
	{ "afp", F_FUNC, .load = load_service, .kind = K_GROUP, .sub = svc_fields, .arg = SVC_AFP },
	{ "mdns", F_FUNC, .load = load_service, .kind = K_GROUP, .sub = svc_fields,
	  .arg = SVC_MDNS },
	{ NULL },
};

/* ---- cluster ---- */

/* cluster.nodes: private addresses only (ctdb binds them; names would need resolving). */
static bool
check_node(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	int fam;

	if (is_ipaddr(v, &fam))
		return true;
	ERR(ld, s,
	    "%s '%s' is not an IP address — list each node's private address, e.g. "
	    "\"10.0.0.1\"",
	    what, v);
	return false;
}

/* cluster.public_addresses: "ADDR/PREFIX" or "ADDR/PREFIX IFACE". */
static bool
check_public(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	char addr[64], iface[32] = "";
	const char *slash = strchr(v, '/'), *sp = strchr(v, ' ');
	char *end;
	long prefix;
	int fam;

	if (!slash || (size_t)(slash - v) >= sizeof(addr) || (sp && sp < slash))
		goto bad;
	memcpy(addr, v, (size_t)(slash - v));
	addr[slash - v] = '\0';
	prefix = strtol(slash + 1, &end, 10);
	if (end == slash + 1 || (*end && *end != ' ') || !is_ipaddr(addr, &fam) || prefix < 1 ||
	    prefix > (fam == AF_INET ? 32 : 128))
		goto bad;
	if (*end == ' ') {
		if (strlen(end + 1) >= sizeof(iface))
			goto bad;
		strcpy(iface, end + 1);
		if (!check_ifname(ld, s, what, iface))
			return false;
	}
	return true;
bad:
	ERR(ld, s,
	    "%s '%s' is not a public address — write ADDRESS/PREFIX, optionally followed by "
	    "an interface: \"192.0.2.50/24\" or \"192.0.2.50/24 eth1\"",
	    what, v);
	return false;
}

static void
load_public_addresses(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		      void *base)
{
	struct model *m = base;
	size_t i;

	(void)f;
	read_strlist(ld, s, what, &m->cluster.public_addresses, check_public);
	m->cluster.loc_public = loc_of(ld, s);
	/* Split "ADDR/PREFIX IFACE" into the address and its interface. */
	strlist_clear(&m->cluster.public_interfaces);
	for (i = 0; i < m->cluster.public_addresses.n; i++) {
		char *v = m->cluster.public_addresses.v[i], *sp = strchr(v, ' ');

		strlist_add(&m->cluster.public_interfaces, sp ? sp + 1 : "");
		if (sp)
			*sp = '\0';
	}
}

static void
load_cluster_lock(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		  void *base)
{
	struct model *m = base;
	const char *v = config_setting_get_string(s);

	(void)f;
	m->cluster.loc_lock = loc_of(ld, s);
	if (!check_text(ld, s, what, v, 255, "\"\\%"))
		return;
	if (v[0] == '/' || (v[0] == '!' && v[1] && v[1] != ' '))
		set_str(&m->cluster.lock, v);
	else
		ERR(ld, s,
		    "%s '%s' is neither an absolute path nor a helper — write a path on the "
		    "cluster file system (\"/cluster/.ctdb/lock\") or "
		    "\"!/usr/libexec/ctdb/ctdb_mutex_ceph_rados_helper ceph client.admin pool "
		    "lock\"",
		    what, v);
}

static void
load_cluster_fs(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		void *base)
{
	struct model *m = base;
	const char *v = config_setting_get_string(s);

	(void)f;
	m->cluster.loc_fs = loc_of(ld, s);
	if (check_text(ld, s, what, v, 200, "\"\\% ") && v[0] == '/' && strcmp(v, "/") != 0 &&
	    !strstr(v, "/../") && v[strlen(v) - 1] != '/')
		set_str(&m->cluster.filesystem, v);
	else
		ERR(ld, s,
		    "%s '%s' is not a mount point — write the absolute path where the cluster "
		    "file system is mounted on every node, e.g. \"/cluster\"",
		    what, v);
}

static const struct field cluster_fields[] = {
	{ "name", F_STR, .off = M(cluster.name), .check = check_cluster_name },
	{ "nodes", F_STRLIST, .off = M(cluster.nodes), .check = check_node,
	  .loc_off = M(cluster.loc_nodes) },
	{ "public_addresses", F_FUNC, .load = load_public_addresses, .kind = K_LIST },
	{ "interface", F_STR, .off = M(cluster.interface), .check = check_ifname },
	{ "lock", F_FUNC, .load = load_cluster_lock, .kind = K_STR },
	{ "filesystem", F_FUNC, .load = load_cluster_fs, .kind = K_STR },
	{ NULL },
};

/* A cluster group makes this host one node of a CTDB cluster. */
static void
load_cluster(struct ld *ld, config_setting_t *g, const char *what, const struct field *f,
	     void *base)
{
	struct model *m = base;

	m->cluster.enabled = true;
	m->cluster.loc = loc_of(ld, g);
	load_group(ld, g, what, f->sub, m);
}

/* ---- the top level ---- */

/* The user's file names its preset (load() reads it); a preset names none. */
static void
load_profile_key(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		 void *base)
{
	(void)what;
	(void)f;
	(void)base;
	if (ld->is_preset)
		ERR(ld, s, "a preset cannot name another profile — remove 'profile'");
}

static const struct field top_fields[] = {
	{ "profile", F_FUNC, .load = load_profile_key, .kind = K_ANY },
	{ "server", F_GROUP, .sub = server_fields },
	{ "network", F_GROUP, .sub = network_fields },
	{ "protocols", F_GROUP, .sub = protocol_fields },
	{ "users", F_FUNC, .load = load_users, .kind = K_LIST, .sub = user_fields },
	{ "shares", F_FUNC, .load = load_shares, .kind = K_LIST, .sub = share_fields },
	{ "tuning", F_GROUP, .sub = tuning_fields },
	{ "services", F_GROUP, .sub = service_fields },
	{ "cluster", F_FUNC, .load = load_cluster, .kind = K_GROUP, .sub = cluster_fields },
	{ NULL },
};

/* One file's settings over whatever the model already holds. */
static void
load_root(struct ld *ld, config_setting_t *root, bool is_preset)
{
	const char *keys[32];

	ld->is_preset = is_preset;
	unknown_keys(ld, root, "the top level", field_keys(top_fields, keys, 32));
	load_fields(ld, root, "config", true, top_fields, ld->m);
}

static bool
read_cfg(struct ld *ld, config_t *cfg, const char *name, const char *text)
{
	bool ok = text ? config_read_string(cfg, text) == CONFIG_TRUE
		       : config_read_file(cfg, name) == CONFIG_TRUE;

	if (!ok) {
		const char *f = config_error_file(cfg);

		if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
			diag_error(ld->d, f ? f : name, 0,
				   "cannot read the file (%s) — check the "
				   "path given with -c",
				   strerror(errno ? errno : ENOENT));
		else
			diag_error(ld->d, f ? f : name, config_error_line(cfg),
				   "%s — fix the "
				   "syntax (settings look like key = value; and end with ';')",
				   config_error_text(cfg));
	}
	return ok;
}

static struct model *
load(const char *name, const char *text, const char *const *dirs, size_t ndirs, struct diag *d)
{
	struct ld ld = { .d = d, .fallback = name };
	config_t user, preset;
	config_setting_t *ps = NULL;
	const char *profile = "default";
	char *ppath = NULL;
	size_t i, before = d->errors;

	ld.m = model_new();
	crosscheck_defaults(ld.m);
	config_init(&user);
	config_init(&preset);
	if (!read_cfg(&ld, &user, name, text))
		goto out;
	if ((ps = member(&ld, config_root_setting(&user), "profile", K_STR, "config")))
		profile = config_setting_get_string(ps);
	for (i = 0; profile_presets[i]; i++)
		if (strcmp(profile_presets[i], profile) == 0)
			break;
	for (i = 0; i < ndirs && !ppath; i++) {
		char *p = xasprintf("%s/%s.conf", dirs[i], profile);

		if (strchr(profile, '/') == NULL && access(p, R_OK) == 0)
			ppath = p;
		else
			free(p);
	}
	if (!ppath) {
		const char *near = load_closest(profile, profile_presets);

		if (ps && near && strcmp(near, profile) != 0)
			ERR(&ld, ps, "unknown profile '%s' — did you mean '%s'?", profile, near);
		else if (ps)
			ERR(&ld, ps,
			    "unknown profile '%s' — use one of default, home-media, "
			    "timemachine, video-studio, small-office, demo (or a NAME.conf in "
			    "/etc/nastune/profiles)",
			    profile);
		else if (ndirs)
			diag_error(d, name, 0,
				   "the default preset is missing from %s — reinstall "
				   "nastune or pass --datadir",
				   dirs[0]);
		if (ps || ndirs)
			goto out;
	} else {
		set_str(&ld.m->profile, profile);
		if (!read_cfg(&ld, &preset, ppath, NULL))
			goto out;
		load_root(&ld, config_root_setting(&preset), true);
	}
	load_root(&ld, config_root_setting(&user), false);
	if (text)
		intern_file(ld.m, name);
	else
		intern_file(ld.m, name);
	crosscheck_model(&ld);
	crosscheck_cluster(&ld);
out:
	free(ppath);
	config_destroy(&user);
	config_destroy(&preset);
	if (d->errors > before) {
		model_free(ld.m);
		return NULL;
	}
	return ld.m;
}

struct model *
profile_load(const char *path, const char *const *dirs, size_t ndirs, struct diag *d)
{
	return load(path, NULL, dirs, ndirs, d);
}

struct model *
profile_load_string(const char *name, const char *text, const char *const *dirs, size_t ndirs,
		    struct diag *d)
{
	return load(name, text, dirs, ndirs, d);
}

static int
load_tuned(struct model *m, const char *name, const char *text, struct diag *d)
{
	struct ld ld = { .m = m, .d = d, .fallback = name };
	config_t cfg;
	size_t before = d->errors;

	if (!text && access(name, F_OK) < 0 && errno == ENOENT)
		return 0;
	config_init(&cfg);
	if (read_cfg(&ld, &cfg, name, text))
		load_group(&ld, config_root_setting(&cfg), "tuned.conf", tuned_fields, m);
	config_destroy(&cfg);
	return d->errors > before ? -EINVAL : 0;
}

int
profile_load_tuned(struct model *m, const char *path, struct diag *d)
{
	return load_tuned(m, path, NULL, d);
}

int
profile_load_tuned_string(struct model *m, const char *name, const char *text, struct diag *d)
{
	return load_tuned(m, name, text, d);
}
