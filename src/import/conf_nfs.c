/* conf_nfs.c - NFS into the conversion: kernel exports and Ganesha EXPORT blocks, their
 * clients and versions; what nastune.conf cannot say is named. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "units.h"
#include "xmalloc.h"

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
	if (!cv_share_name_ok(n)) {
		free(n);
		n = xstrdup("export");
	}
	u = xstrdup(n);
	for (i = 2; cv_share_by_name(cv, u); i++) {
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
	struct cshare *sh = cv_share_by_path(cv, path);
	char *name;

	if (!cv_path_ok(path)) {
		NOTE(cv, file, line,
		     "not expressible: export %s: nastune shares only plain absolute paths "
		     "below /",
		     path);
		return NULL;
	}
	if (!sh) {
		name = name_from_path(cv, path);
		sh = cv_share_new(cv, name, path);
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
	if (!(sh = nfs_share(cv, x->path, !rw, all && !cv_share_by_path(cv, x->path), x->file,
			     x->line)))
		return;
	for (k = 0; k < x->nc; k++) {
		char *copy = xstrdup(x->c[k].opts), *save = NULL, *o;
		struct buf odd;

		nfs_client_add(cv, sh, x->c[k].host, x->file, x->line);
		buf_init(&odd);
		for (o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save))
			if (!cv_word_in(o, known) && strncmp(o, "fsid=", 5) != 0)
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
				if (!cv_knob_set(cv, kb, kv->value, b->file, kv->line))
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

void
cv_nfs_all(struct cv *cv, const struct imp_served *srv)
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
