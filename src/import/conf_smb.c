/* conf_smb.c - smb.conf into the conversion: the [global] lines nastune.conf says itself,
 * the shares, the fruit stack; every other line kept in the site include, named. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "units.h"
#include "xmalloc.h"

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

	if (strcmp(k, "workgroup") == 0 && cv_netbios_ok(v) && strlen(v) <= 15)
		return cv_set(&cv->workgroup, v), true;
	if (strcmp(k, "netbiosname") == 0 && cv_netbios_ok(v))
		return cv_set(&cv->name, v), true;
	if (strcmp(k, "serverstring") == 0 && strlen(v) <= 200 && !strpbrk(v, "%\"\\"))
		return cv_set(&cv->description, v), true;
	if (strcmp(k, "serverrole") == 0)
		return strcasecmp(v, "standalone server") == 0 || strcasecmp(v, "standalone") == 0;
	if (strcmp(k, "serverminprotocol") == 0 && cv_word_in(v, minp)) {
		for (i = 0; strcasecmp(minp[i], v) != 0; i++)
			;
		return cv_set(&cv->min_protocol, minp[i]), true;
	}
	if (strcmp(k, "serversigning") == 0 && cv_word_in(v, signings))
		return cv_set(&cv->signing, v), true;
	if ((strcmp(k, "serversmbencrypt") == 0 || strcmp(k, "smbencrypt") == 0) &&
	    cv_word_in(v, encrypts))
		return cv_set(&cv->encryption, v), true;
	if (strcmp(k, "interfaces") == 0 && ini_bool(cv_value_or(g, "bind interfaces only")) == 1)
		return cv_words_into(v, cv_ifname_ok, &cv->interfaces);
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
		return cv_set(&cv->model, v), true;
	for (i = 0; i < sizeof(fruit_globals) / sizeof(fruit_globals[0]); i++)
		if (strcasecmp(e->key, fruit_globals[i][0]) == 0)
			return is_fruit_stack(cv_value_or(g, "vfs objects")) &&
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

	cv_raw_where(cv, sec->name, "", &file, &line);
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
	if (cv_word_in(sec->name, cv_reserved) || srv->stock ||
	    ini_bool(cv_value_or(sec, "printable")) == 1)
		return "a printer share: nastune serves no printers";
	if (!ini_get(sec, "path") && !ini_get(sec, "directory"))
		return "no path: nastune shares need one";
	if (!cv_share_name_ok(sec->name))
		return "its name has characters nastune.conf refuses in a share name";
	if (!cv_path_ok(srv->path))
		return "its path is not a plain absolute path (or uses a % substitution)";
	if (ini_bool(cv_value_or(sec, "available")) == 0)
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
		cv_set(&sh->comment, e->value);
	} else if (strcmp(k, "validusers") == 0 && !sh->guest &&
		   cv_words_into(e->value, cv_user_ok, &sh->users)) {
		for (i = 0; i < sh->users.n; i++)
			if (!strlist_has(&cv->users, sh->users.v[i]))
				strlist_add(&cv->users, sh->users.v[i]);
	} else if (strcmp(k, "vfsobjects") == 0 && is_fruit_stack(e->value)) {
		sh->fruit_vfs = true;
	} else if (strcmp(k, "fruit:timemachinemaxsize") == 0 && sh->tm &&
		   units_parse_size(e->value, &b) == 0 && b >= (1ULL << 30)) {
		cv_set(&sh->tm_max, e->value);
	} else if (strchr(e->key, ':')) {
		/* smbd drops a section's "module:option" lines when the section opens again. */
		cv_raw_where(cv, sec->name, e->key, &file, &line);
		NOTE(cv, file, line,
		     "not expressible: [%s] %s = %s: a share's module option does not survive "
		     "nastune's own [%s] section",
		     sec->name, e->key, e->value, sec->name);
	} else {
		cv_keep_smb(cv, sec->name, sh->path, e->key, e->value);
	}
}

void
cv_smb_shares(struct cv *cv, const struct imp_served *srv)
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
		sh = cv_share_new(cv, sec->name, o->path);
		sh->protos = PROTO_SMB;
		sh->read_only = o->read_only;
		sh->guest = o->guest;
		sh->tm = o->tm;
		for (k = 0; k < sec->n; k++)
			smb_share_line(cv, sec, &sec->v[k], sh);
	}
}

void
cv_smb_global(struct cv *cv)
{
	const struct ini_section *g = ini_section(&cv->in->smb, "global");
	bool guests = false;
	const struct knob *kb;
	const char *file;
	size_t i;
	int line;

	for (i = 0; i < cv->n; i++)
		guests = guests || cv->sh[i].guest;
	if (g && ini_bool(cv_value_or(g, "bind interfaces only")) == 1 &&
	    cv_value_or(g, "interfaces"))
		cv_words_into(cv_value_or(g, "interfaces"), cv_ifname_ok, &cv->interfaces);
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
			cv_raw_where(cv, "global", e->key, &file, &line);
			if (cv_knob_set(cv, kb, e->value, file, line))
				continue;
		}
		cv_keep_smb(cv, "global", NULL, e->key, e->value);
	}
}

/* A share's own vfs objects other than the fruit stack, when nastune gives it the stack. */
void
cv_smb_fruit_notes(struct cv *cv)
{
	size_t i;

	for (i = 0; i < cv->n; i++) {
		const struct cshare *sh = &cv->sh[i];
		const struct ini_section *sec = ini_section(&cv->in->smb, sh->name);
		const struct ini_entry *e = ini_get(sec, "vfs objects");
		const char *file;
		int line;

		if (e && !sh->fruit_vfs && (cv->apple || sh->tm)) {
			cv_raw_where(cv, sh->name, "vfs objects", &file, &line);
			NOTE(cv, file, line,
			     "not expressible: [%s] vfs objects = %s: nastune gives every share "
			     "\"catia fruit streams_xattr\" when it serves Macs",
			     sh->name, e->value);
		}
		if (sh->fruit_vfs)
			cv->apple = true;
	}
}
