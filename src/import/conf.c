/* conf.c - the files in force (imp_input) as one nastune.conf: server identity, protocols,
 * shares merged across SMB, AFP and NFS by name and path, users, knob values; what the schema
 * cannot say goes to the smb.conf site include (which smb.conf includes at the end of
 * [global], so its lines override nastune's globals and its sections stay served) or, for the
 * files without one, is named as not expressible. Pure. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import.h"
#include "knobs.h"
#include "units.h"
#include "xmalloc.h"

#define SMB_FILE "/etc/samba/smb.conf"
/* profile_shares.c refuses these in share names (SHARE_FORBIDDEN) and these names. */
#define NAME_FORBIDDEN "\\/:*?\"<>|[]+=;,%#"
static const char *const reserved[] = { "global", "homes", "printers", "print$", "ipc$", NULL };

struct cshare {
	char *name, *path, *comment;
	unsigned protos;
	bool read_only, guest, tm;
	char *tm_max; /* as written; NULL none */
	struct strlist users, clients;
	bool fruit_vfs; /* its own vfs objects are the fruit stack nastune renders */
};

struct cv {
	const struct imp_input *in;
	struct imp_result *res;
	struct cshare *sh;
	size_t n;
	struct strlist users;
	char *name, *workgroup, *description, *model;
	struct strlist interfaces;
	char *min_protocol, *signing, *encryption, *cnid;
	bool apple, nfs_ganesha, v3, v4, versions_set;
	struct strlist knob_keys, knob_values; /* "smb.use_sendfile", "yes" */
	struct buf site_global;		       /* the site include's [global] lines */
	const char *site_section;	       /* the section the site buffer is in */
};

#define NOTE(cv, file, line, ...) diag_warning(&(cv)->res->notes, (file), (line), __VA_ARGS__)

/* ---- helpers ---- */

static bool
word_in(const char *v, const char *const *words)
{
	for (; *words; words++)
		if (strcasecmp(v, *words) == 0)
			return true;
	return false;
}

static bool
share_name_ok(const char *v)
{
	size_t n = strlen(v);

	return n && n <= 80 && v[0] != ' ' && v[n - 1] != ' ' && !strpbrk(v, NAME_FORBIDDEN) &&
	       !word_in(v, reserved);
}

static bool
path_ok(const char *v)
{
	size_t n = strlen(v);

	return v[0] == '/' && n > 1 && n <= 1024 && !strstr(v, "/../") && !strstr(v, "/./") &&
	       !strstr(v, "//") && strcmp(v + n - 1, "/") != 0 && !strpbrk(v, "\"\\%") &&
	       !(n >= 3 && strcmp(v + n - 3, "/..") == 0) &&
	       !(n >= 2 && strcmp(v + n - 2, "/.") == 0);
}

static bool
user_ok(const char *v)
{
	size_t i, n = strlen(v);

	for (i = 0; i < n; i++)
		if (!(islower((unsigned char)v[i]) || v[i] == '_' ||
		      (i > 0 && (isdigit((unsigned char)v[i]) || v[i] == '-' || v[i] == '.'))))
			return false;
	return n >= 1 && n <= 32;
}

static bool
netbios_ok(const char *v)
{
	size_t i, n = strlen(v);

	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && v[i] != '-')
			return false;
	return n >= 1 && n <= 15 && v[0] != '-' && v[n - 1] != '-';
}

static bool
ifname_ok(const char *v)
{
	size_t n = strlen(v);

	return n >= 1 && n < 16 &&
	       strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n;
}

/* Each blank- or comma-separated word of v passes ok: into l (replacing it). */
static bool
words_into(const char *v, bool (*ok)(const char *), struct strlist *l)
{
	char *copy = xstrdup(v), *save = NULL, *w;
	bool all = true;

	strlist_clear(l);
	for (w = strtok_r(copy, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		if (!ok(w))
			all = false;
		else if (!strlist_has(l, w))
			strlist_add(l, w);
	}
	free(copy);
	if (!all)
		strlist_clear(l);
	return all;
}

static void
set(char **dst, const char *v)
{
	free(*dst);
	*dst = v ? xstrdup(v) : NULL;
}

static const char *
value_or(const struct ini_section *sec, const char *key)
{
	const struct ini_entry *e = ini_get(sec, key);

	return e ? e->value : NULL;
}

/* Where a testparm line came from: the same section and parameter as written, or the
 * section's header, or the file. */
static void
raw_where(const struct cv *cv, const char *section, const char *key, const char **file, int *line)
{
	const struct ini_section *s = ini_section(&cv->in->smb_raw, section);
	const struct ini_entry *e = ini_get(s, key);

	*file = e ? e->file : s ? s->file : SMB_FILE;
	*line = e ? e->line : s ? s->line : 0;
}

/* One smb.conf line for the site include, named. path: the share's, for a section nastune's
 * smb.conf opens again (smbd makes a section without a path unavailable before that). */
static void
keep_smb(struct cv *cv, const char *section, const char *path, const char *key, const char *value)
{
	const char *file;
	int line;

	raw_where(cv, section, key, &file, &line);
	NOTE(cv, file, line, "kept as a site include: [%s] %s = %s", section, key, value);
	if (strcasecmp(section, "global") == 0) {
		buf_printf(&cv->site_global, "\t%s = %s\n", key, value);
		return;
	}
	if (!cv->site_section || strcasecmp(cv->site_section, section) != 0) {
		buf_printf(&cv->res->site, "%s[%s]\n", cv->res->site.len ? "\n" : "", section);
		if (path)
			buf_printf(&cv->res->site, "\tpath = %s\n", path);
		cv->site_section = section;
	}
	buf_printf(&cv->res->site, "\t%s = %s\n", key, value);
}

static struct cshare *
share_new(struct cv *cv, const char *name, const char *path)
{
	struct cshare *s;

	cv->sh = xreallocarray(cv->sh, cv->n + 1, sizeof(*cv->sh));
	s = &cv->sh[cv->n++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	s->path = xstrdup(path);
	s->read_only = true;
	return s;
}

static struct cshare *
share_by_name(struct cv *cv, const char *name)
{
	size_t i;

	for (i = 0; i < cv->n; i++)
		if (strcasecmp(cv->sh[i].name, name) == 0)
			return &cv->sh[i];
	return NULL;
}

static struct cshare *
share_by_path(struct cv *cv, const char *path)
{
	size_t i;

	for (i = 0; i < cv->n; i++)
		if (strcmp(cv->sh[i].path, path) == 0)
			return &cv->sh[i];
	return NULL;
}

/* A knob's value into tuning.knobs. False, named, when the table refuses it; false, not
 * named, for a value that may lose data (pinning it would need tuning.allow_unsafe, which
 * would also let tune try others): the caller keeps the line where it can. */
static bool
knob_set(struct cv *cv, const struct knob *k, const char *value, const char *file, int line)
{
	char canon[256], why[512];

	if (knob_parse(k, value, canon, sizeof(canon), why, sizeof(why)) < 0) {
		NOTE(cv, file, line, "not expressible: %s = %s as knob %s: %s", k->param, value,
		     k->name, why);
		return false;
	}
	if (knob_value_unsafe(k, canon))
		return false;
	strlist_add(&cv->knob_keys, k->name);
	strlist_add(&cv->knob_values, canon);
	return true;
}

/* ---- smb.conf ---- */

static const char *const fruit_globals[][2] = {
	{ "fruit:metadata", "stream" },
	{ "fruit:posix_rename", "yes" },
	{ "fruit:veto_appledouble", "no" },
	{ "fruit:nfs_aces", "no" },
	{ "fruit:copyfile", "yes" },
	{ "fruit:wipe_intentionally_left_blank_rfork", "yes" },
	{ "fruit:delete_empty_adfiles", "yes" },
};

static bool
is_fruit_stack(const char *v)
{
	return v && (strcasecmp(v, "catia fruit streams_xattr") == 0 ||
		     strcasecmp(v, "fruit streams_xattr") == 0);
}

/* A [global] line nastune.conf says itself; false: the site include keeps it. */
static bool
smb_global_expressed(struct cv *cv, const struct ini_entry *e, bool guests)
{
	static const char *const signings[] = { "default",  "auto",	"desired", "mandatory",
						"required", "disabled", NULL };
	static const char *const encrypts[] = { "default", "off",      "if_required",
						"desired", "required", NULL };
	static const char *const minp[] = { "SMB2",    "SMB2_02", "SMB2_10", "SMB3", "SMB3_00",
					    "SMB3_02", "SMB3_11", "NT1",     NULL };
	const char *k = e->norm, *v = e->value;
	const struct ini_section *g = ini_section(&cv->in->smb, "global");
	size_t i;

	if (strcmp(k, "workgroup") == 0 && netbios_ok(v) && strlen(v) <= 15)
		return set(&cv->workgroup, v), true;
	if (strcmp(k, "netbiosname") == 0 && netbios_ok(v))
		return set(&cv->name, v), true;
	if (strcmp(k, "serverstring") == 0 && strlen(v) <= 200 && !strpbrk(v, "%\"\\"))
		return set(&cv->description, v), true;
	if (strcmp(k, "serverrole") == 0)
		return strcasecmp(v, "standalone server") == 0 || strcasecmp(v, "standalone") == 0;
	if (strcmp(k, "serverminprotocol") == 0 && word_in(v, minp)) {
		for (i = 0; strcasecmp(minp[i], v) != 0; i++)
			;
		return set(&cv->min_protocol, minp[i]), true;
	}
	if (strcmp(k, "serversigning") == 0 && word_in(v, signings))
		return set(&cv->signing, v), true;
	if ((strcmp(k, "serversmbencrypt") == 0 || strcmp(k, "smbencrypt") == 0) &&
	    word_in(v, encrypts))
		return set(&cv->encryption, v), true;
	if (strcmp(k, "interfaces") == 0 && ini_bool(value_or(g, "bind interfaces only")) == 1)
		return words_into(v, ifname_ok, &cv->interfaces);
	if (strcmp(k, "bindinterfacesonly") == 0)
		return ini_bool(v) == 1 && cv->interfaces.n;
	if (strcmp(k, "multicastdnsregister") == 0 || strcmp(k, "disablenetbios") == 0)
		return ini_bool(v) == (k[0] == 'd');
	if (strcmp(k, "smbports") == 0)
		return strcmp(v, "445") == 0;
	if (strcmp(k, "maptoguest") == 0)
		return guests && strcasecmp(v, "bad user") == 0;
	if (strcmp(k, "vfsobjects") == 0 && is_fruit_stack(v))
		return cv->apple = true;
	if (strcmp(k, "fruit:model") == 0 && strlen(v) <= 64 &&
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789,._-") ==
		    strlen(v))
		return set(&cv->model, v), true;
	for (i = 0; i < sizeof(fruit_globals) / sizeof(fruit_globals[0]); i++)
		if (strcasecmp(e->key, fruit_globals[i][0]) == 0)
			return is_fruit_stack(value_or(g, "vfs objects")) &&
			       strcasecmp(v, fruit_globals[i][1]) == 0;
	return false;
}

/* Every line of sec into the site include: the section stays served as it is. */
static void
keep_section(struct cv *cv, const struct ini_section *sec, const char *why)
{
	const char *file;
	int line;
	size_t i;

	raw_where(cv, sec->name, "", &file, &line);
	NOTE(cv, file, line, "kept as a site include: [%s] whole (%s)", sec->name, why);
	if (!cv->site_section || strcasecmp(cv->site_section, sec->name) != 0) {
		buf_printf(&cv->res->site, "%s[%s]\n", cv->res->site.len ? "\n" : "", sec->name);
		cv->site_section = sec->name;
	}
	for (i = 0; i < sec->n; i++)
		buf_printf(&cv->res->site, "\t%s = %s\n", sec->v[i].key, sec->v[i].value);
}

/* Why a section cannot be a nastune share, or NULL when it can. */
static const char *
smb_unshareable(const struct ini_section *sec, const struct imp_share *srv)
{
	if (strcasecmp(sec->name, "homes") == 0)
		return "home directories: nastune.conf has none";
	if (word_in(sec->name, reserved) || srv->stock || ini_bool(value_or(sec, "printable")) == 1)
		return "a printer share: nastune serves no printers";
	if (!ini_get(sec, "path") && !ini_get(sec, "directory"))
		return "no path: nastune shares need one";
	if (!share_name_ok(sec->name))
		return "its name has characters nastune.conf refuses in a share name";
	if (!path_ok(srv->path))
		return "its path is not a plain absolute path (or uses a % substitution)";
	if (ini_bool(value_or(sec, "available")) == 0)
		return "switched off (available = no)";
	if (srv->tm && srv->read_only)
		return "a read-only Time Machine share, which nastune.conf refuses";
	return NULL;
}

static void
smb_share_line(struct cv *cv, const struct ini_section *sec, const struct ini_entry *e,
	       struct cshare *sh)
{
	static const char *const expressed[] = { "path",      "directory", "readonly",
						 "writeable", "writable",  "writeok",
						 "guestok",   "public",	   "fruit:timemachine",
						 NULL };
	const char *k = e->norm, *file;
	uint64_t b;
	size_t i;
	int line;

	for (i = 0; expressed[i]; i++)
		if (strcmp(k, expressed[i]) == 0)
			return;
	if (strcmp(k, "comment") == 0 && strlen(e->value) <= 256 && !strpbrk(e->value, "%\"\\")) {
		set(&sh->comment, e->value);
	} else if (strcmp(k, "validusers") == 0 && !sh->guest &&
		   words_into(e->value, user_ok, &sh->users)) {
		for (i = 0; i < sh->users.n; i++)
			if (!strlist_has(&cv->users, sh->users.v[i]))
				strlist_add(&cv->users, sh->users.v[i]);
	} else if (strcmp(k, "vfsobjects") == 0 && is_fruit_stack(e->value)) {
		sh->fruit_vfs = true;
	} else if (strcmp(k, "fruit:timemachinemaxsize") == 0 && sh->tm &&
		   units_parse_size(e->value, &b) == 0 && b >= (1ULL << 30)) {
		set(&sh->tm_max, e->value);
	} else if (strchr(e->key, ':')) {
		/* smbd drops a section's "module:option" lines when the section opens again. */
		raw_where(cv, sec->name, e->key, &file, &line);
		NOTE(cv, file, line,
		     "not expressible: [%s] %s = %s: a share's module option does not survive "
		     "nastune's own [%s] section",
		     sec->name, e->key, e->value, sec->name);
	} else {
		keep_smb(cv, sec->name, sh->path, e->key, e->value);
	}
}

static void
smb_shares(struct cv *cv, const struct imp_served *srv)
{
	const struct ini *smb = &cv->in->smb;
	size_t i, k;

	for (i = 0; i < smb->n; i++) {
		const struct ini_section *sec = &smb->s[i];
		const struct imp_share *o = imp_served_find(srv, PROTO_SMB, sec->name);
		const char *why;
		struct cshare *sh;

		if (strcasecmp(sec->name, "global") == 0)
			continue;
		if (!o || (why = smb_unshareable(sec, o))) {
			keep_section(cv, sec, o ? why : "switched off (available = no)");
			continue;
		}
		sh = share_new(cv, sec->name, o->path);
		sh->protos = PROTO_SMB;
		sh->read_only = o->read_only;
		sh->guest = o->guest;
		sh->tm = o->tm;
		for (k = 0; k < sec->n; k++)
			smb_share_line(cv, sec, &sec->v[k], sh);
	}
}

static void
smb_global(struct cv *cv)
{
	const struct ini_section *g = ini_section(&cv->in->smb, "global");
	bool guests = false;
	const struct knob *kb;
	const char *file;
	size_t i;
	int line;

	for (i = 0; i < cv->n; i++)
		guests = guests || cv->sh[i].guest;
	if (g && ini_bool(value_or(g, "bind interfaces only")) == 1 && value_or(g, "interfaces"))
		words_into(value_or(g, "interfaces"), ifname_ok, &cv->interfaces);
	for (i = 0; g && i < g->n; i++) {
		const struct ini_entry *e = &g->v[i];
		char norm[128];

		for (kb = knob_first(); kb; kb = knob_next(kb)) {
			ini_norm(kb->param, norm, sizeof(norm));
			if (kb->place == KNOB_AT_SMB_GLOBAL && strcmp(norm, e->norm) == 0)
				break;
		}
		if (strcmp(e->norm, "include") == 0)
			continue; /* testparm has read it: its lines are the ones imported */
		/* testparm prints Samba's default idmap line whether written or not. */
		if (strcmp(e->norm, "idmapconfig*:backend") == 0 && strcmp(e->value, "tdb") == 0 &&
		    !ini_get(ini_section(&cv->in->smb_raw, "global"), e->key))
			continue;
		if (strcmp(e->norm, "interfaces") == 0 ||
		    strcmp(e->norm, "bindinterfacesonly") == 0) {
			if (cv->interfaces.n)
				continue;
		} else if (smb_global_expressed(cv, e, guests)) {
			continue;
		} else if (kb && kb->id != KNOB_SMB_SERVER_SIGNING &&
			   kb->id != KNOB_SMB_SMB_ENCRYPT) {
			raw_where(cv, "global", e->key, &file, &line);
			if (knob_set(cv, kb, e->value, file, line))
				continue;
		}
		keep_smb(cv, "global", NULL, e->key, e->value);
	}
}

/* A share's own vfs objects other than the fruit stack, when nastune gives it the stack. */
static void
smb_fruit_notes(struct cv *cv)
{
	size_t i;

	for (i = 0; i < cv->n; i++) {
		const struct cshare *sh = &cv->sh[i];
		const struct ini_section *sec = ini_section(&cv->in->smb, sh->name);
		const struct ini_entry *e = ini_get(sec, "vfs objects");
		const char *file;
		int line;

		if (e && !sh->fruit_vfs && (cv->apple || sh->tm)) {
			raw_where(cv, sh->name, "vfs objects", &file, &line);
			NOTE(cv, file, line,
			     "not expressible: [%s] vfs objects = %s: nastune gives every share "
			     "\"catia fruit streams_xattr\" when it serves Macs",
			     sh->name, e->value);
		}
		if (sh->fruit_vfs)
			cv->apple = true;
	}
}

/* ---- afp.conf: it has no site include, so what it cannot say is only named ---- */

static void
afp_note(struct cv *cv, const struct ini_entry *e, const char *section)
{
	NOTE(cv, e->file, e->line, "not expressible: [%s] %s = %s (afp.conf has no site include)",
	     section, e->key, e->value);
}

static void
afp_global(struct cv *cv, const struct ini_section *g)
{
	static const char *const cnids[] = { "dbd", "last", "sqlite", "mysql", NULL };
	const struct knob *kb;
	size_t i;

	for (i = 0; g && i < g->n; i++) {
		const struct ini_entry *e = &g->v[i];
		char norm[128];

		for (kb = knob_first(); kb; kb = knob_next(kb)) {
			ini_norm(kb->param, norm, sizeof(norm));
			if (kb->place == KNOB_AT_AFP_GLOBAL && strcmp(norm, e->norm) == 0)
				break;
		}
		if (kb) {
			if (!knob_set(cv, kb, e->value, e->file, e->line))
				afp_note(cv, e, g->name);
		} else if (strcmp(e->norm, "servername") == 0 && netbios_ok(e->value) &&
			   (!cv->name || strcasecmp(cv->name, e->value) == 0)) {
			if (!cv->name) /* smb.conf's spelling first */
				set(&cv->name, e->value);
		} else if (strcmp(e->norm, "mimicmodel") == 0 && !strpbrk(e->value, " %\"\\") &&
			   (!cv->model || strcmp(cv->model, e->value) == 0)) {
			set(&cv->model, e->value);
		} else if (strcmp(e->norm, "cnidscheme") == 0 && word_in(e->value, cnids)) {
			set(&cv->cnid, e->value);
		} else if (strcmp(e->norm, "zeroconf") != 0 && strcmp(e->norm, "uamlist") != 0) {
			/* zeroconf: nastune publishes Bonjour itself; guests come from shares */
			afp_note(cv, e, g->name);
		}
	}
}

static void
afp_volume(struct cv *cv, const struct ini_section *sec, const struct imp_share *o)
{
	struct cshare *sh = share_by_name(cv, o->name);
	size_t i;

	if (!share_name_ok(o->name) || !path_ok(o->path) || (o->tm && o->read_only) ||
	    strpbrk(o->path, ";#")) {
		NOTE(cv, sec->file, sec->line,
		     "not expressible: afp volume [%s] (name, path or a read-only Time Machine "
		     "volume nastune.conf refuses); it stops being served",
		     sec->name);
		return;
	}
	if (sh && strcmp(sh->path, o->path) != 0) {
		NOTE(cv, sec->file, sec->line,
		     "not expressible: afp volume '%s' (%s) has the name of the smb share of %s: "
		     "one nastune share has one path; it stops being served",
		     o->name, o->path, sh->path);
		return;
	}
	if (!sh) {
		sh = share_new(cv, o->name, o->path);
		sh->read_only = o->read_only;
		sh->guest = o->guest;
		sh->tm = o->tm;
		for (i = 0; i < o->users.n; i++)
			strlist_add(&sh->users, o->users.v[i]);
	} else if (sh->read_only != o->read_only || sh->tm != o->tm) {
		NOTE(cv, sec->file, sec->line,
		     "not expressible: afp volume '%s' differs from the smb share in access or "
		     "Time "
		     "Machine: one nastune share has one; it follows the smb share",
		     o->name);
	}
	sh->protos |= PROTO_AFP;
	if (strcmp(sh->name, o->name) != 0)
		NOTE(cv, sec->file, sec->line,
		     "not expressible: afp volume '%s' is shown as '%s' from now on (a nastune "
		     "share "
		     "has one name for every protocol)",
		     o->name, sh->name);
	if (o->tm && o->tm_max && !sh->tm_max) {
		char size[32];

		units_format_size(o->tm_max, size, sizeof(size));
		if (o->tm_max >= (1ULL << 30))
			set(&sh->tm_max, size);
	}
	for (i = 0; i < sec->n; i++) {
		const struct ini_entry *e = &sec->v[i];
		static const char *const expressed[] = { "path",	"volumename",	"readonly",
							 "timemachine", "volsizelimit", NULL };

		if (word_in(e->norm, expressed) ||
		    (strcmp(e->norm, "cnidscheme") == 0 && cv->cnid &&
		     strcasecmp(e->value, cv->cnid) == 0))
			continue;
		if (strcmp(e->norm, "validusers") == 0 &&
		    words_into(e->value, user_ok, &sh->users)) {
			size_t k;

			for (k = 0; k < sh->users.n; k++)
				if (!strlist_has(&cv->users, sh->users.v[k]))
					strlist_add(&cv->users, sh->users.v[k]);
			continue;
		}
		afp_note(cv, e, sec->name);
	}
}

static void
afp_all(struct cv *cv, const struct imp_served *srv)
{
	const struct ini *afp = &cv->in->afp;
	size_t i;

	afp_global(cv, ini_section(afp, "global"));
	for (i = 0; i < srv->n; i++) {
		const struct imp_share *o = &srv->v[i];
		const struct ini_section *sec;

		if (o->proto != PROTO_AFP)
			continue;
		sec = ini_section(afp, o->name);
		for (size_t k = 0; !sec && k < afp->n; k++)
			if (strcmp(afp->s[k].file, o->file) == 0 && afp->s[k].line == o->line)
				sec = &afp->s[k];
		if (!sec)
			continue;
		if (strcasecmp(sec->name, "homes") == 0)
			NOTE(cv, sec->file, sec->line,
			     "not expressible: afp [Homes] (nastune.conf has no home directories); "
			     "it stops being served%s",
			     o->stock ? " (netatalk's stock one)" : "");
		else
			afp_volume(cv, sec, o);
	}
}

/* ---- NFS: kernel exports and Ganesha EXPORT blocks ---- */

/* A share name from an export path: its last component, made acceptable and unique. */
static char *
name_from_path(struct cv *cv, const char *path)
{
	const char *base = strrchr(path, '/');
	char *n = xstrdup(base && base[1] ? base + 1 : "export"), *p, *u;
	int i;

	for (p = n; *p; p++)
		if (strchr(NAME_FORBIDDEN, *p) || !isprint((unsigned char)*p))
			*p = '_';
	if (!share_name_ok(n)) {
		free(n);
		n = xstrdup("export");
	}
	u = xstrdup(n);
	for (i = 2; share_by_name(cv, u); i++) {
		free(u);
		u = xasprintf("%s-%d", n, i);
	}
	free(n);
	return u;
}

static bool
nfs_client_ok(const char *v)
{
	size_t n = strlen(v);

	return n && n < 256 && !strstr(v, "gss/") &&
	       strspn(v,
		      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_*?:/@") ==
		       n;
}

/* The share an export joins (by path), or a new one; NULL when it cannot be one. */
static struct cshare *
nfs_share(struct cv *cv, const char *path, bool read_only, bool guest, const char *file, int line)
{
	struct cshare *sh = share_by_path(cv, path);
	char *name;

	if (!path_ok(path)) {
		NOTE(cv, file, line,
		     "not expressible: export %s: nastune shares only plain absolute paths "
		     "below /",
		     path);
		return NULL;
	}
	if (!sh) {
		name = name_from_path(cv, path);
		sh = share_new(cv, name, path);
		sh->read_only = read_only;
		sh->guest = guest;
		free(name);
	} else if (sh->read_only != read_only) {
		NOTE(cv, file, line,
		     "not expressible: export %s is %s but share '%s' is %s: one nastune share "
		     "has one access",
		     path, read_only ? "read-only" : "writable", sh->name,
		     sh->read_only ? "read-only" : "writable");
	}
	sh->protos |= PROTO_NFS;
	return sh;
}

static void
nfs_client_add(struct cv *cv, struct cshare *sh, const char *host, const char *file, int line)
{
	if (!nfs_client_ok(host))
		NOTE(cv, file, line, "not expressible: NFS client '%s' of %s; it loses access",
		     host, sh->path);
	else if (!strlist_has(&sh->clients, host))
		strlist_add(&sh->clients, host);
}

static void
kernel_export(struct cv *cv, const struct exp_entry *x)
{
	static const char *const known[] = { "rw",
					     "ro",
					     "sync",
					     "no_subtree_check",
					     "root_squash",
					     "all_squash",
					     "anonuid=65534",
					     "anongid=65534",
					     "secure",
					     "wdelay",
					     NULL };
	bool rw = false, all = true;
	struct cshare *sh;
	size_t k;

	for (k = 0; k < x->nc; k++) {
		rw = rw || exports_opt(x->c[k].opts, "rw");
		all = all && exports_opt(x->c[k].opts, "all_squash");
	}
	if (!(sh = nfs_share(cv, x->path, !rw, all && !share_by_path(cv, x->path), x->file,
			     x->line)))
		return;
	for (k = 0; k < x->nc; k++) {
		char *copy = xstrdup(x->c[k].opts), *save = NULL, *o;
		struct buf odd;

		nfs_client_add(cv, sh, x->c[k].host, x->file, x->line);
		buf_init(&odd);
		for (o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save))
			if (!word_in(o, known) && strncmp(o, "fsid=", 5) != 0)
				buf_printf(&odd, "%s%s", odd.len ? "," : "", o);
		if (odd.len)
			NOTE(cv, x->file, x->line,
			     "not expressible: options %s of %s on %s: nastune exports with "
			     "%s,sync,no_subtree_check and root_squash (all_squash for a guest "
			     "share)",
			     odd.data, x->c[k].host, x->path, sh->read_only ? "ro" : "rw");
		buf_clear(&odd);
		free(copy);
	}
	for (k = 1; k < x->nc; k++)
		if (exports_opt(x->c[k].opts, "rw") != exports_opt(x->c[0].opts, "rw")) {
			NOTE(cv, x->file, x->line,
			     "not expressible: the clients of %s differ in access (%s %s, %s %s): "
			     "a nastune share gives all its clients one",
			     x->path, x->c[0].host, exports_opt(x->c[0].opts, "rw") ? "rw" : "ro",
			     x->c[k].host, exports_opt(x->c[k].opts, "rw") ? "rw" : "ro");
			break;
		}
	if (strcmp(x->file, "/etc/exports") == 0)
		NOTE(cv, x->file, x->line,
		     "now share '%s' in nastune.conf; /etc/exports stays in force (nastune never "
		     "writes it): after the first apply remove this line, or the kernel exports %s "
		     "twice",
		     sh->name, x->path);
}

static bool
gan_expected(const struct gan_kv *kv, const char *path)
{
	const char *k = kv->key, *v = kv->value;

	return strcasecmp(k, "Export_Id") == 0 || strcasecmp(k, "Path") == 0 ||
	       strcasecmp(k, "Access_Type") == 0 || strcasecmp(k, "Protocols") == 0 ||
	       strcasecmp(k, "Squash") == 0 || strcasecmp(k, "Anonymous_Uid") == 0 ||
	       strcasecmp(k, "Anonymous_Gid") == 0 ||
	       (strcasecmp(k, "Pseudo") == 0 && strcmp(v, path) == 0) ||
	       (strcasecmp(k, "Transports") == 0 && strcasecmp(v, "TCP") == 0) ||
	       (strcasecmp(k, "SecType") == 0 && strcasecmp(v, "sys") == 0);
}

static void
gan_note(struct cv *cv, const char *file, int line, const char *block, const char *k, const char *v)
{
	NOTE(cv, file, line, "not expressible: %s { %s = %s; } (ganesha.conf has no site include)",
	     block, k, v);
}

static void
ganesha_export(struct cv *cv, const struct gan_block *b, const struct imp_served *srv)
{
	const struct gan_kv *path = ganesha_get(b, "Path");
	const struct imp_share *o = path ? imp_served_find(srv, PROTO_NFS, path->value) : NULL;
	struct cshare *sh;
	size_t i, k;

	if (!o || !(sh = nfs_share(cv, o->path, o->read_only, o->guest, b->file, b->line)))
		return;
	for (i = 0; i < o->clients.n; i++) {
		char *host = xstrdup(o->clients.v[i]), *sp = strrchr(host, ' ');

		if (sp)
			*sp = '\0';
		nfs_client_add(cv, sh, host, b->file, b->line);
		free(host);
	}
	for (i = 0; i < b->nkv; i++)
		if (!gan_expected(&b->kv[i], o->path))
			gan_note(cv, b->file, b->kv[i].line, "EXPORT", b->kv[i].key,
				 b->kv[i].value);
	for (i = 0; i < b->nsub; i++) {
		const struct gan_block *c = &b->sub[i];

		for (k = 0; k < c->nkv; k++) {
			const char *key = c->kv[k].key, *v = c->kv[k].value;

			if ((strcasecmp(c->name, "FSAL") == 0 && strcasecmp(key, "Name") == 0 &&
			     strcasecmp(v, "VFS") == 0) ||
			    (strcasecmp(c->name, "CLIENT") == 0 &&
			     (strcasecmp(key, "Clients") == 0 ||
			      strcasecmp(key, "Access_Type") == 0)))
				continue;
			gan_note(cv, b->file, c->kv[k].line, c->name, key, v);
		}
	}
}

/* NFS versions from a Protocols value ("3, 4"); false when it holds another word. */
static bool
gan_versions(struct cv *cv, const char *v)
{
	bool v3 = false, v4 = false, other = false;
	char *copy = xstrdup(v), *save = NULL, *w;

	for (w = strtok_r(copy, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
		if (strcmp(w, "3") == 0 || strcasecmp(w, "NFSv3") == 0 || strcasecmp(w, "V3") == 0)
			v3 = true;
		else if (strcmp(w, "4") == 0 || strcasecmp(w, "NFSv4") == 0 ||
			 strcasecmp(w, "V4") == 0)
			v4 = true;
		else
			other = true;
	}
	free(copy);
	if (other || !(v3 || v4))
		return false;
	cv->v3 = v3;
	cv->v4 = v4;
	cv->versions_set = true;
	return true;
}

static void
ganesha_all(struct cv *cv, const struct imp_served *srv)
{
	const struct gan_block *top = &cv->in->ganesha.top;
	const struct knob *kb;
	size_t i, k;

	for (i = 0; i < top->nsub; i++) {
		const struct gan_block *b = &top->sub[i];

		if (strcasecmp(b->name, "EXPORT") == 0) {
			const struct gan_kv *p = ganesha_get(b, "Protocols");

			if (p && !cv->versions_set && !gan_versions(cv, p->value))
				gan_note(cv, b->file, p->line, "EXPORT", p->key, p->value);
			ganesha_export(cv, b, srv);
			continue;
		}
		for (k = 0; k < b->nkv; k++) {
			const struct gan_kv *kv = &b->kv[k];

			kb = knob_get(KNOB_NFS_THREADS);
			if (strcasecmp(b->name, "NFS_CORE_PARAM") == 0 &&
			    strcasecmp(kv->key, "Protocols") == 0 && gan_versions(cv, kv->value))
				continue;
			if (strcasecmp(b->name, "NFS_CORE_PARAM") == 0 &&
			    strcasecmp(kv->key, kb->param) == 0) {
				if (!knob_set(cv, kb, kv->value, b->file, kv->line))
					gan_note(cv, b->file, kv->line, b->name, kv->key,
						 kv->value);
				continue;
			}
			gan_note(cv, b->file, kv->line, b->name, kv->key, kv->value);
		}
		if (b->nsub)
			NOTE(cv, b->file, b->line,
			     "not expressible: the blocks inside %s (ganesha.conf has no site "
			     "include)",
			     b->name);
	}
}

static void
nfs_all(struct cv *cv, const struct imp_served *srv)
{
	size_t i, nk = cv->in->exports.n, ng = 0;

	for (i = 0; i < cv->in->ganesha.top.nsub; i++)
		if (strcasecmp(cv->in->ganesha.top.sub[i].name, "EXPORT") == 0)
			ng++;
	if (nk && ng)
		NOTE(cv, "/etc/ganesha/ganesha.conf", 0,
		     "not expressible: both the kernel and NFS-Ganesha export shares; nastune runs "
		     "one NFS server (kernel here, as the kernel's exports are kept)");
	cv->nfs_ganesha = ng && !nk;
	for (i = 0; i < nk; i++)
		kernel_export(cv, &cv->in->exports.v[i]);
	if (cv->in->have_ganesha && !nk)
		ganesha_all(cv, srv);
}

/* ---- Avahi ---- */

static void
avahi_all(struct cv *cv)
{
	static const char *const ours[] = { "_smb._tcp",	 "_afpovertcp._tcp", "_adisk._tcp",
					    "_device-info._tcp", "_nfs._tcp",	     NULL };
	const struct strlist *f = &cv->in->avahi, *t = &cv->in->avahi_types;
	size_t i;

	for (i = 0; i < f->n; i++) {
		bool dup = false;

		for (size_t k = 0; ours[k]; k++)
			dup = dup || strstr(t->v[i], ours[k]);
		NOTE(cv, f->v[i], 0,
		     "stays in force (nastune writes only its own service files): it publishes "
		     "%s%s",
		     *t->v[i] ? t->v[i] : "nothing",
		     dup ? "; nastune publishes these records itself: remove the file after the "
			   "first apply, or clients see the NAS twice"
			 : "");
	}
}

/* ---- the text ---- */

/* A libconfig string: nastune's values carry no quote or backslash (the checks above keep
 * them out), so only those would need escaping. */
static void
str(struct buf *b, const char *v)
{
	buf_addc(b, '"');
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			buf_addc(b, '\\');
		buf_addc(b, *v);
	}
	buf_addc(b, '"');
}

static void
str_list(struct buf *b, const struct strlist *l)
{
	size_t i;

	buf_addc(b, '[');
	for (i = 0; i < l->n; i++) {
		if (i)
			buf_adds(b, ", ");
		str(b, l->v[i]);
	}
	buf_addc(b, ']');
}

static void
emit_server(struct cv *cv, struct buf *b)
{
	const struct imp_input *in = cv->in;
	bool smb = false, nfs = false, afp = false;
	size_t i;

	for (i = 0; i < cv->n; i++) {
		smb = smb || cv->sh[i].protos & PROTO_SMB;
		nfs = nfs || cv->sh[i].protos & PROTO_NFS;
		afp = afp || cv->sh[i].protos & PROTO_AFP;
	}
	buf_adds(b, "# What this host served when `nastune import` read it:");
	buf_printf(b, "%s%s%s%s.\n", in->have_smb ? " smb.conf" : "",
		   in->exports.n ? " exports" : "", in->have_ganesha ? " ganesha.conf" : "",
		   in->have_afp ? " afp.conf" : "");
	buf_printf(b, "# What nastune.conf cannot say is named by import%s.\n",
		   cv->res->site.len || cv->site_global.len ? " and kept in " IMPORT_SMB_SITE : "");
	buf_adds(b, "profile = \"default\";\nserver = {");
	if (cv->name)
		buf_adds(b, " name = "), str(b, cv->name), buf_addc(b, ';');
	if (cv->workgroup)
		buf_adds(b, " workgroup = "), str(b, cv->workgroup), buf_addc(b, ';');
	if (cv->description)
		buf_adds(b, " description = "), str(b, cv->description), buf_addc(b, ';');
	if (cv->model)
		buf_adds(b, " model = "), str(b, cv->model), buf_addc(b, ';');
	if (cv->interfaces.n)
		buf_adds(b, " interfaces = "), str_list(b, &cv->interfaces), buf_addc(b, ';');
	buf_adds(b, " };\nprotocols = {\n");
	buf_printf(b, "  smb = { enabled = %s; min_protocol = ", smb ? "true" : "false");
	str(b, cv->min_protocol ? cv->min_protocol : "SMB2");
	buf_adds(b, "; signing = ");
	str(b, cv->signing ? cv->signing : "default");
	buf_adds(b, "; encryption = ");
	str(b, cv->encryption ? cv->encryption : "default");
	buf_printf(b, "; apple = %s; };\n", cv->apple ? "true" : "false");
	buf_printf(b, "  nfs = { enabled = %s; server = \"%s\"; versions = [%s]; };\n",
		   nfs ? "true" : "false", cv->nfs_ganesha ? "ganesha" : "kernel",
		   !cv->versions_set || (cv->v3 && cv->v4) ? "3, 4"
		   : cv->v3				   ? "3"
							   : "4");
	buf_printf(b, "  afp = { enabled = %s; cnid_scheme = ", afp ? "true" : "false");
	str(b, cv->cnid ? cv->cnid : "dbd");
	buf_adds(b, "; };\n};\n");
}

static void
emit_share(const struct cshare *sh, struct buf *b)
{
	static const unsigned order[] = { PROTO_SMB, PROTO_NFS, PROTO_AFP };
	size_t i;
	bool first = true;

	buf_adds(b, "  { name = ");
	str(b, sh->name);
	buf_adds(b, "; path = ");
	str(b, sh->path);
	buf_adds(b, "; protocols = [");
	for (i = 0; i < 3; i++)
		if (sh->protos & order[i]) {
			buf_printf(b, "%s\"%s\"", first ? "" : ", ", model_proto_name(order[i]));
			first = false;
		}
	buf_printf(b, "]; read_only = %s;", sh->read_only ? "true" : "false");
	if (sh->guest)
		buf_adds(b, " guest = true;");
	if (sh->comment)
		buf_adds(b, "\n    comment = "), str(b, sh->comment), buf_addc(b, ';');
	if (sh->users.n && !sh->guest)
		buf_adds(b, "\n    valid_users = "), str_list(b, &sh->users), buf_addc(b, ';');
	if (sh->tm) {
		buf_adds(b, "\n    time_machine = { enabled = true;");
		if (sh->tm_max)
			buf_adds(b, " max_size = "), str(b, sh->tm_max), buf_addc(b, ';');
		buf_adds(b, " };");
	}
	if (sh->protos & PROTO_NFS && sh->clients.n)
		buf_adds(b, "\n    nfs = { clients = "), str_list(b, &sh->clients),
			buf_adds(b, "; };");
	buf_adds(b, " }");
}

static void
emit_knobs(struct cv *cv, struct buf *b)
{
	static const char *const groups[] = { "smb", "nfs", "afp", "sys", "net", NULL };
	size_t g, i;

	if (!cv->knob_keys.n)
		return;
	buf_adds(b, "tuning = { knobs = {");
	for (g = 0; groups[g]; g++) {
		bool open = false;
		size_t gl = strlen(groups[g]);

		for (i = 0; i < cv->knob_keys.n; i++) {
			const char *k = cv->knob_keys.v[i];

			if (strncmp(k, groups[g], gl) != 0 || k[gl] != '.')
				continue;
			if (!open)
				buf_printf(b, "\n  %s = {", groups[g]);
			open = true;
			buf_printf(b, " %s = ", k + gl + 1);
			str(b, cv->knob_values.v[i]);
			buf_addc(b, ';');
		}
		if (open)
			buf_adds(b, " };");
	}
	buf_adds(b, "\n}; };\n");
}

static void
emit(struct cv *cv)
{
	struct buf *b = &cv->res->conf;
	size_t i;

	emit_server(cv, b);
	buf_adds(b, "users = (");
	for (i = 0; i < cv->users.n; i++) {
		buf_adds(b, i ? ", { name = " : " { name = ");
		str(b, cv->users.v[i]);
		buf_adds(b, "; }");
	}
	buf_adds(b, cv->users.n ? " );\nshares = (" : ");\nshares = (");
	for (i = 0; i < cv->n; i++) {
		buf_adds(b, i ? ",\n" : "\n");
		emit_share(&cv->sh[i], b);
	}
	buf_adds(b, cv->n ? "\n);\n" : ");\n");
	emit_knobs(cv, b);
}

/* nastune refuses an NFS share without clients unless it is a guest one: a share whose
 * clients were all inexpressible loses NFS, named. */
static void
nfs_without_clients(struct cv *cv)
{
	size_t i;

	for (i = 0; i < cv->n; i++) {
		struct cshare *sh = &cv->sh[i];

		if (sh->protos & PROTO_NFS && !sh->clients.n && !sh->guest) {
			sh->protos &= ~PROTO_NFS;
			NOTE(cv, NULL, 0,
			     "not expressible: share '%s' (%s): no NFS client nastune.conf can "
			     "name; "
			     "it stops being exported",
			     sh->name, sh->path);
		}
	}
}

static void
cv_release(struct cv *cv)
{
	size_t i;

	for (i = 0; i < cv->n; i++) {
		free(cv->sh[i].name);
		free(cv->sh[i].path);
		free(cv->sh[i].comment);
		free(cv->sh[i].tm_max);
		strlist_clear(&cv->sh[i].users);
		strlist_clear(&cv->sh[i].clients);
	}
	free(cv->sh);
	strlist_clear(&cv->users);
	strlist_clear(&cv->interfaces);
	strlist_clear(&cv->knob_keys);
	strlist_clear(&cv->knob_values);
	buf_clear(&cv->site_global);
	free(cv->name);
	free(cv->workgroup);
	free(cv->description);
	free(cv->model);
	free(cv->min_protocol);
	free(cv->signing);
	free(cv->encryption);
	free(cv->cnid);
}

void
import_conf(const struct imp_input *in, struct imp_result *res)
{
	struct cv cv = { .in = in, .res = res };
	struct imp_served srv = { 0 };
	size_t i, n;

	buf_init(&res->conf);
	buf_init(&res->site);
	diag_init(&res->notes);
	import_served(in, &srv);
	if (in->have_smb) {
		smb_shares(&cv, &srv);
		smb_global(&cv);
		smb_fruit_notes(&cv);
	}
	if (in->have_afp)
		afp_all(&cv, &srv);
	nfs_all(&cv, &srv);
	nfs_without_clients(&cv);
	avahi_all(&cv);
	/* A share served over no protocol nastune enables is no share. */
	for (i = n = 0; i < cv.n; i++) {
		struct cshare *sh = &cv.sh[i];

		if (sh->protos) {
			cv.sh[n++] = *sh;
			continue;
		}
		free(sh->name);
		free(sh->path);
		free(sh->comment);
		free(sh->tm_max);
		strlist_clear(&sh->users);
		strlist_clear(&sh->clients);
	}
	cv.n = n;
	emit(&cv);
	if (res->site.len || cv.site_global.len) {
		struct buf head;

		buf_init(&head);
		buf_adds(&head,
			 "# Kept by `nastune import` from " SMB_FILE ": what nastune.conf "
			 "cannot say.\n# smb.conf includes this file at the end of [global]; "
			 "nastune never writes it again.\n");
		if (cv.site_global.len)
			buf_printf(&head, "[global]\n%s%s", cv.site_global.data,
				   res->site.len ? "\n" : "");
		if (res->site.len)
			buf_add(&head, res->site.data, res->site.len);
		buf_clear(&res->site);
		res->site = head;
	}
	imp_served_clear(&srv);
	cv_release(&cv);
}

void
import_result_clear(struct imp_result *res)
{
	buf_clear(&res->conf);
	buf_clear(&res->site);
	diag_clear(&res->notes);
}
