/* shares.c - what a set of parsed files serves, share by share, in one shape for every
 * protocol, and what one set loses against another. Pure. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import.h"
#include "units.h"
#include "xmalloc.h"

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the words of v (blank- or comma-separated) to l, sorted, without repeats. */
static void
add_words(struct strlist *l, const char *v)
{
	char *copy = xstrdup(v ? v : ""), *save = NULL, *w;

	for (w = strtok_r(copy, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save))
		if (!strlist_has(l, w))
			strlist_add(l, w);
	free(copy);
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_str);
}

static struct imp_share *
share_add(struct imp_served *s, unsigned proto, const char *name, const char *path,
	  const char *file, int line)
{
	struct imp_share *sh;

	s->v = xreallocarray(s->v, s->n + 1, sizeof(*s->v));
	sh = &s->v[s->n++];
	memset(sh, 0, sizeof(*sh));
	sh->proto = proto;
	sh->name = xstrdup(name);
	sh->path = xstrdup(path ? path : "");
	sh->file = xstrdup(file ? file : "?");
	sh->line = line;
	return sh;
}

static const char *
value_of(const struct ini_section *sec, const char *key)
{
	const struct ini_entry *e = ini_get(sec, key);

	return e ? e->value : NULL;
}

/* Samba's boolean of key, or dflt when unset or not a boolean. */
static bool
bool_of(const struct ini_section *sec, const char *key, bool dflt)
{
	int b = ini_bool(value_of(sec, key));

	return b < 0 ? dflt : b;
}

/* "read only" and its inverse synonyms: whichever sec sets last wins, as in smbd. */
static bool
smb_read_only(const struct ini_section *sec)
{
	static const char *const inverse[] = { "writeable", "writable", "write ok" };
	const struct ini_entry *ro = ini_get(sec, "read only"), *e;
	bool v = ro ? bool_of(sec, "read only", true) : true;
	size_t i;

	for (i = 0; i < 3; i++) {
		int b;

		e = ini_get(sec, inverse[i]);
		if (!e || (b = ini_bool(e->value)) < 0)
			continue;
		if (!ro || e > ro) {
			v = !b;
			ro = e;
		}
	}
	return v;
}

void
imp_served_smb(struct imp_served *s, const struct ini *smb)
{
	size_t i;

	for (i = 0; i < smb->n; i++) {
		const struct ini_section *sec = &smb->s[i];
		const char *path = value_of(sec, "path"), *max;
		struct imp_share *sh;
		uint64_t b;

		if (strcasecmp(sec->name, "global") == 0 || strcasecmp(sec->name, "ipc$") == 0 ||
		    !bool_of(sec, "available", true))
			continue;
		if (!path)
			path = value_of(sec, "directory");
		sh = share_add(s, PROTO_SMB, sec->name, path, sec->file, sec->line);
		sh->read_only = smb_read_only(sec);
		sh->guest = bool_of(sec, "guest ok",
				    ini_get(sec, "public") && bool_of(sec, "public", false));
		add_words(&sh->users, value_of(sec, "valid users"));
		sh->tm = bool_of(sec, "fruit:time machine", false);
		max = value_of(sec, "fruit:time machine max size");
		if (sh->tm && max && units_parse_size(max, &b) == 0)
			sh->tm_max = b;
		sh->stock = bool_of(sec, "printable", bool_of(sec, "print ok", false)) ||
			    strcasecmp(sec->name, "print$") == 0 ||
			    (strcasecmp(sec->name, "homes") == 0 && sh->read_only);
	}
}

void
imp_served_afp(struct imp_served *s, const struct ini *afp)
{
	const struct ini_section *g = ini_section(afp, "global");
	const char *uams = value_of(g, "uam list");
	bool guest_uam = uams && strstr(uams, "uams_guest");
	size_t i;

	for (i = 0; i < afp->n; i++) {
		const struct ini_section *sec = &afp->s[i];
		const char *name = value_of(sec, "volume name"), *lim;
		struct imp_share *sh;

		if (strcasecmp(sec->name, "global") == 0)
			continue;
		char *lower = NULL;

		/* Without a volume name afpd shows the section's name in lower case. */
		if (!name || !*name) {
			lower = xstrdup(sec->name);
			for (char *c = lower; *c; c++)
				*c = (char)tolower((unsigned char)*c);
			name = lower;
		}
		/* afpd serves the first volume of a name. */
		if (imp_served_find(s, PROTO_AFP, name)) {
			free(lower);
			continue;
		}
		sh = share_add(s, PROTO_AFP, name, value_of(sec, "path"), sec->file, sec->line);
		free(lower);
		sh->read_only = bool_of(sec, "read only", false);
		add_words(&sh->users, value_of(sec, "valid users"));
		sh->guest = guest_uam && sh->users.n == 0;
		sh->tm = bool_of(sec, "time machine", false);
		/* netatalk's own afp.conf ships [Homes] with its basedir regex and nothing else. */
		sh->stock = strcasecmp(sec->name, "homes") == 0 && sec->n == 1 &&
			    ini_get(sec, "basedir regex");
		lim = value_of(sec, "vol size limit");
		if (sh->tm && lim && *lim)
			sh->tm_max = (uint64_t)strtoull(lim, NULL, 10) << 20; /* MiB */
	}
}

void
imp_served_exports(struct imp_served *s, const struct exports *e)
{
	size_t i, k;

	for (i = 0; i < e->n; i++) {
		const struct exp_entry *x = &e->v[i];
		struct imp_share *sh = (struct imp_share *)imp_served_find(s, PROTO_NFS, x->path);

		if (!sh) {
			sh = share_add(s, PROTO_NFS, x->path, x->path, x->file, x->line);
			sh->read_only = true;
			sh->guest = true;
		}
		for (k = 0; k < x->nc; k++) {
			bool rw = exports_opt(x->c[k].opts, "rw");
			char *c = xasprintf("%s %s", x->c[k].host, rw ? "rw" : "ro");

			sh->read_only = sh->read_only && !rw;
			sh->guest = sh->guest && exports_opt(x->c[k].opts, "all_squash");
			if (!strlist_has(&sh->clients, c))
				strlist_add(&sh->clients, c);
			free(c);
		}
		qsort(sh->clients.v, sh->clients.n, sizeof(*sh->clients.v), cmp_str);
	}
}

/* Ganesha's access words as "rw" or "ro"; NULL for none (MDONLY and NONE serve no data). */
static const char *
gan_access(const char *v)
{
	if (!v)
		return NULL;
	if (strcasecmp(v, "RW") == 0)
		return "rw";
	if (strcasecmp(v, "RO") == 0)
		return "ro";
	return NULL;
}

static void
gan_clients(struct imp_share *sh, const char *list, const char *acc)
{
	char *copy = xstrdup(list), *save = NULL, *w;

	for (w = strtok_r(copy, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		char *c = xasprintf("%s %s", w, acc);

		if (!strlist_has(&sh->clients, c))
			strlist_add(&sh->clients, c);
		if (strcmp(acc, "rw") == 0)
			sh->read_only = false;
		free(c);
	}
	free(copy);
}

void
imp_served_ganesha(struct imp_served *s, const struct ganesha *g)
{
	size_t i, k;

	for (i = 0; i < g->top.nsub; i++) {
		const struct gan_block *b = &g->top.sub[i];
		const struct gan_kv *path = ganesha_get(b, "Path"), *sq = ganesha_get(b, "Squash");
		const char *acc = gan_access(ganesha_get(b, "Access_Type")
						     ? ganesha_get(b, "Access_Type")->value
						     : NULL);
		struct imp_share *sh;
		bool any = false;

		if (strcasecmp(b->name, "EXPORT") != 0 || !path)
			continue;
		/* Two blocks of one path are one export to the clients: its clients together. */
		sh = (struct imp_share *)imp_served_find(s, PROTO_NFS, path->value);
		if (!sh) {
			sh = share_add(s, PROTO_NFS, path->value, path->value, b->file, b->line);
			if (ganesha_get(b, "Pseudo"))
				sh->pseudo = xstrdup(ganesha_get(b, "Pseudo")->value);
			sh->read_only = true;
			sh->guest = sq && (strcasecmp(sq->value, "All_Squash") == 0 ||
					   strcasecmp(sq->value, "all") == 0 ||
					   strcasecmp(sq->value, "allsquash") == 0);
		}
		for (k = 0; k < b->nsub; k++) {
			const struct gan_block *c = &b->sub[k];
			const struct gan_kv *cl = ganesha_get(c, "Clients");
			const struct gan_kv *ca = ganesha_get(c, "Access_Type");
			const char *a = ca ? gan_access(ca->value) : acc;

			if (strcasecmp(c->name, "CLIENT") != 0 || !cl)
				continue;
			any = true;
			if (a)
				gan_clients(sh, cl->value, a);
		}
		if (!any && acc)
			gan_clients(sh, "*", acc);
		if (sh->clients.n > 1)
			qsort(sh->clients.v, sh->clients.n, sizeof(*sh->clients.v), cmp_str);
	}
}

void
imp_served_clear(struct imp_served *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].path);
		free(s->v[i].file);
		free(s->v[i].pseudo);
		strlist_clear(&s->v[i].users);
		strlist_clear(&s->v[i].clients);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

const struct imp_share *
imp_served_find(const struct imp_served *s, unsigned proto, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].proto == proto &&
		    (proto == PROTO_NFS ? strcmp(s->v[i].name, name) == 0
					: strcasecmp(s->v[i].name, name) == 0))
			return &s->v[i];
	return NULL;
}

static void
join(const struct strlist *l, struct buf *b)
{
	size_t i;

	if (l->n == 0)
		buf_adds(b, "(none)");
	for (i = 0; i < l->n; i++)
		buf_printf(b, "%s%s", i ? ", " : "", l->v[i]);
}

static bool
same_list(const struct strlist *a, const struct strlist *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

static const char *
what(unsigned proto)
{
	return proto == PROTO_NFS ? "nfs export" : proto == PROTO_AFP ? "afp volume" : "smb share";
}

/* One share's differences, each on its own line into out. Returns how many. */
static size_t
compare_one(const struct imp_share *o, const struct imp_share *n, struct buf *out)
{
	size_t diffs = 0;
	char a[32], b[32];

#define DIFF(...)                                                                                  \
	do {                                                                                       \
		buf_printf(out, "%s:%d: %s '%s': ", o->file, o->line, what(o->proto), o->name);    \
		buf_printf(out, __VA_ARGS__);                                                      \
		buf_addc(out, '\n');                                                               \
		diffs++;                                                                           \
	} while (0)
	if (strcmp(o->name, n->name) != 0)
		DIFF("shown as '%s', would be '%s'", o->name, n->name);
	if (strcmp(o->path, n->path) != 0)
		DIFF("path %s, would be %s", o->path, n->path);
	if (o->pseudo && n->pseudo && strcmp(o->pseudo, n->pseudo) != 0)
		DIFF("NFSv4 path %s, would be %s", o->pseudo, n->pseudo);
	if (o->read_only != n->read_only)
		DIFF("%s, would be %s", o->read_only ? "read-only" : "writable",
		     n->read_only ? "read-only" : "writable");
	if (o->guest != n->guest)
		DIFF("%s, would %s", o->guest ? "open to guests" : "not open to guests",
		     n->guest ? "be open to guests" : "not be");
	if (!same_list(&o->users, &n->users)) {
		buf_printf(out, "%s:%d: %s '%s': valid users ", o->file, o->line, what(o->proto),
			   o->name);
		join(&o->users, out);
		buf_adds(out, ", would be ");
		join(&n->users, out);
		buf_addc(out, '\n');
		diffs++;
	}
	if (o->tm != n->tm)
		DIFF("%s a Time Machine target, would %s", o->tm ? "is" : "is not",
		     n->tm ? "be" : "not be");
	if (o->tm && n->tm && o->tm_max != n->tm_max) {
		units_format_size(o->tm_max, a, sizeof(a));
		units_format_size(n->tm_max, b, sizeof(b));
		DIFF("Time Machine limit %s, would be %s", o->tm_max ? a : "none",
		     n->tm_max ? b : "none");
	}
	if (!same_list(&o->clients, &n->clients)) {
		buf_printf(out, "%s:%d: %s '%s': clients ", o->file, o->line, what(o->proto),
			   o->name);
		join(&o->clients, out);
		buf_adds(out, ", would be ");
		join(&n->clients, out);
		buf_addc(out, '\n');
		diffs++;
	}
#undef DIFF
	return diffs;
}

size_t
imp_served_compare(const struct imp_served *old, const struct imp_served *new, unsigned flags,
		   struct buf *out)
{
	size_t i, diffs = 0;

	for (i = 0; i < old->n; i++) {
		const struct imp_share *o = &old->v[i], *n;

		if ((flags & IMP_CMP_SKIP_STOCK) && o->stock)
			continue;
		n = imp_served_find(new, o->proto, o->name);
		if (!n) {
			buf_printf(out, "%s:%d: %s '%s'%s%s%s: would no longer be served\n",
				   o->file, o->line, what(o->proto), o->name, *o->path ? " (" : "",
				   o->path, *o->path ? ")" : "");
			diffs++;
			continue;
		}
		if (!(flags & IMP_CMP_GONE_ONLY))
			diffs += compare_one(o, n, out);
	}
	return diffs;
}
