/* conf.c - the files in force (imp_input) as one nastune.conf: server identity, protocols,
 * shares merged across SMB, AFP and NFS by name and path, users, knob values; what the schema
 * cannot say goes to the smb.conf site include (which smb.conf includes at the end of
 * [global], so its lines override nastune's globals and its sections stay served) or, for the
 * files without one, is named as not expressible. Pure. Here: the helpers the readers share
 * (conf_smb.c, conf_afp.c, conf_nfs.c), Avahi, and the whole conversion in order; the text
 * is conf_emit.c's. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "import.h"
#include "knobs.h"
#include "units.h"
#include "xmalloc.h"

/* Samba reserves these share names. */
const char *const cv_reserved[] = { "global", "homes", "printers", "print$", "ipc$", NULL };

/* ---- helpers ---- */

bool
cv_word_in(const char *v, const char *const *words)
{
	for (; *words; words++)
		if (strcasecmp(v, *words) == 0)
			return true;
	return false;
}

bool
cv_share_name_ok(const char *v)
{
	size_t n = strlen(v);

	return n && n <= 80 && v[0] != ' ' && v[n - 1] != ' ' && !strpbrk(v, NAME_FORBIDDEN) &&
	       !cv_word_in(v, cv_reserved);
}

bool
cv_path_ok(const char *v)
{
	size_t n = strlen(v);

	return v[0] == '/' && n > 1 && n <= 1024 && !strstr(v, "/../") && !strstr(v, "/./") &&
	       !strstr(v, "//") && strcmp(v + n - 1, "/") != 0 && !strpbrk(v, "\"\\%") &&
	       !(n >= 3 && strcmp(v + n - 3, "/..") == 0) &&
	       !(n >= 2 && strcmp(v + n - 2, "/.") == 0);
}

bool
cv_user_ok(const char *v)
{
	size_t i, n = strlen(v);

	for (i = 0; i < n; i++)
		if (!(islower((unsigned char)v[i]) || v[i] == '_' ||
		      (i > 0 && (isdigit((unsigned char)v[i]) || v[i] == '-' || v[i] == '.'))))
			return false;
	return n >= 1 && n <= 32;
}

bool
cv_netbios_ok(const char *v)
{
	size_t i, n = strlen(v);

	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && v[i] != '-')
			return false;
	return n >= 1 && n <= 15 && v[0] != '-' && v[n - 1] != '-';
}

bool
cv_ifname_ok(const char *v)
{
	size_t n = strlen(v);

	return n >= 1 && n < 16 &&
	       strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n;
}

/* Each blank- or comma-separated word of v passes ok: into l (replacing it). */
bool
cv_words_into(const char *v, bool (*ok)(const char *), struct strlist *l)
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

void
cv_set(char **dst, const char *v)
{
	free(*dst);
	*dst = v ? xstrdup(v) : NULL;
}

const char *
cv_value_or(const struct ini_section *sec, const char *key)
{
	const struct ini_entry *e = ini_get(sec, key);

	return e ? e->value : NULL;
}

/* Where a testparm line came from: the same section and parameter as written, or the
 * section's header, or the file. */
void
cv_raw_where(const struct cv *cv, const char *section, const char *key, const char **file,
	     int *line)
{
	const struct ini_section *s = ini_section(&cv->in->smb_raw, section);
	const struct ini_entry *e = ini_get(s, key);

	*file = e ? e->file : s ? s->file : SMB_FILE;
	*line = e ? e->line : s ? s->line : 0;
}

/* One smb.conf line for the site include, named. path: the share's, for a section nastune's
 * smb.conf opens again (smbd makes a section without a path unavailable before that). */
void
cv_keep_smb(struct cv *cv, const char *section, const char *path, const char *key,
	    const char *value)
{
	const char *file;
	int line;

	cv_raw_where(cv, section, key, &file, &line);
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

struct cshare *
cv_share_new(struct cv *cv, const char *name, const char *path)
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

struct cshare *
cv_share_by_name(struct cv *cv, const char *name)
{
	size_t i;

	for (i = 0; i < cv->n; i++)
		if (strcasecmp(cv->sh[i].name, name) == 0)
			return &cv->sh[i];
	return NULL;
}

struct cshare *
cv_share_by_path(struct cv *cv, const char *path)
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
bool
cv_knob_set(struct cv *cv, const struct knob *k, const char *value, const char *file, int line)
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
		cv_smb_shares(&cv, &srv);
		cv_smb_global(&cv);
		cv_smb_fruit_notes(&cv);
	}
	if (in->have_afp)
		cv_afp_all(&cv, &srv);
	cv_nfs_all(&cv, &srv);
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
	cv_emit(&cv);
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
