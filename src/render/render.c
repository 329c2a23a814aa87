/* render.c - model -> view -> templates -> files. Pure. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "hash.h"
#include "knobs.h"
#include "cluster.h"
#include "render.h"
#include "tmpl.h"
#include "units.h"
#include "xmalloc.h"

static char *adisk_uuid(const char *path);

const char *const render_template_names[] = {
	"smb.conf",    "exports",     "ganesha.conf", "afp.conf", "nastune.service",
	"nfs.service", "sysctl.conf", "tuned.conf",   NULL,
};

bool
render_optional_path(const char *path)
{
	return strncmp(path, RENDER_NFS_SERVICE_PREFIX, strlen(RENDER_NFS_SERVICE_PREFIX)) == 0 ||
	       strncmp(path, CLUSTER_BONJOUR_DIR, strlen(CLUSTER_BONJOUR_DIR)) == 0 ||
	       strcmp(path, CLUSTER_EVENT_SCRIPT) == 0 || strcmp(path, RENDER_SYSCTL_PATH) == 0 ||
	       strcmp(path, RENDER_TUNED_PATH) == 0;
}

/* name is "nastune.service" or "nastune-nfs-XXXXXXXX.service" (8 hex digits). */
static bool
avahi_file_name(const char *name)
{
	const char *h = name + 12;

	if (strcmp(name, "nastune.service") == 0)
		return true;
	return strncmp(name, "nastune-nfs-", 12) == 0 && strspn(h, "0123456789abcdef") == 8 &&
	       strcmp(h + 8, ".service") == 0;
}

bool
render_known_path(const char *path)
{
	static const char *const fixed[] = {
		"/etc/samba/smb.conf",
		"/etc/exports.d/nastune.exports",
		"/etc/ganesha/ganesha.conf",
		"/etc/netatalk/afp.conf",
		RENDER_SYSCTL_PATH,
		RENDER_TUNED_PATH,
		CLUSTER_CTDB_CONF,
		CLUSTER_NODES,
		CLUSTER_PUBLIC,
		CLUSTER_EVENT_SCRIPT,
		CLUSTER_BONJOUR_DIR "hosts",
		NULL,
	};
	size_t i, la = strlen("/etc/avahi/services/"), lb = strlen(CLUSTER_BONJOUR_DIR);

	for (i = 0; fixed[i]; i++)
		if (strcmp(path, fixed[i]) == 0)
			return true;
	if (strncmp(path, "/etc/avahi/services/", la) == 0)
		return avahi_file_name(path + la);
	return strncmp(path, CLUSTER_BONJOUR_DIR, lb) == 0 && avahi_file_name(path + lb);
}

static const char *
tmpl_text(const struct render_templates *t, const char *name, size_t *len, const char **origin)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->name[i], name) == 0) {
			*len = t->len[i];
			*origin = t->origin[i] ? t->origin[i] : name;
			return t->text[i];
		}
	return NULL;
}

static void
join(struct buf *b, const struct strlist *l, const char *sep)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (i)
			buf_adds(b, sep);
		buf_adds(b, l->v[i]);
	}
}

static void
set_joined(struct view *v, const char *key, const struct strlist *l, const char *sep)
{
	struct buf b;

	buf_init(&b);
	join(&b, l, sep);
	view_set_str(v, key, b.data ? b.data : "");
	buf_clear(&b);
}

/* exports(5): whitespace in a path needs double quotes. */
static void
export_path(struct buf *b, const char *path)
{
	if (strpbrk(path, " \t"))
		buf_printf(b, "\"%s\"", path);
	else
		buf_adds(b, path);
}

/* The lines of the knobs set for place into list l, as { param, value } (value as the daemon
 * reads it), except skip1 and skip2, which the template renders on lines of their own. sh:
 * the share a per-share place renders into, which a value changing what clients see must
 * have the consent of (knob_consented); NULL for the server's own sections. A knob that
 * means nothing here (a vfs_fruit option without fruit) is left out. Returns the count. */
static size_t
knob_items(struct view *l, const struct model *m, enum knob_place place, const struct share *sh,
	   enum knob_id skip1, enum knob_id skip2)
{
	struct knob_line lines[KNOB_LINES_MAX];
	const struct knob *k;
	struct view *it;
	char why[256];
	size_t n = 0, i, nl;

	for (k = knob_first(); k; k = knob_next(k)) {
		const char *v = knob_value(m, k->id);

		if (k->place != place || !v || k->id == skip1 || k->id == skip2)
			continue;
		if (knob_value_visible(k, v) && !knob_consented(m, k, sh))
			continue;
		if (sh && !knob_applicable(m, k, why, sizeof(why)))
			continue;
		nl = knob_render_lines(k, v, lines);
		for (i = 0; i < nl; i++) {
			it = view_list_add_obj(l);
			view_set_str(it, "param", lines[i].param);
			view_set_str(it, "value", lines[i].value);
			n++;
		}
	}
	return n;
}

static size_t
knob_list(struct view *obj, const char *key, const struct model *m, enum knob_place place,
	  enum knob_id skip1, enum knob_id skip2)
{
	return knob_items(view_add_list(obj, key), m, place, NULL, skip1, skip2);
}

/* tuned.conf: the KNOB_TUNED values by group, in canonical form. */
static void
tuned_view(struct view *v, const struct model *m)
{
	static const char *const groups[] = { "smb", "nfs", "afp", "sys", "net", NULL };
	struct view *l = view_add_list(v, "tuned"), *g, *items, *it;
	const struct knob *k;
	size_t i, glen;

	for (i = 0; groups[i]; i++) {
		glen = strlen(groups[i]);
		g = NULL;
		items = NULL;
		for (k = knob_first(); k; k = knob_next(k)) {
			if (knob_source(m, k->id) != KNOB_TUNED ||
			    strncmp(k->name, groups[i], glen) != 0 || k->name[glen] != '.')
				continue;
			if (!g) {
				g = view_list_add_obj(l);
				view_set_str(g, "group", groups[i]);
				items = view_add_list(g, "items");
			}
			it = view_list_add_obj(items);
			view_set_str(it, "key", knob_key(k));
			view_set_str(it, "value", knob_value(m, k->id));
		}
	}
}

/* The signing or encryption line: the knob when set, else the configured word in Samba's
 * spelling ("required" as "mandatory", as nastune always wrote it). */
static const char *
smb_security(const struct model *m, enum knob_id id, const char *cfg)
{
	const char *v = knob_value(m, id);

	if (v)
		return v;
	return strcmp(cfg, "required") == 0 && id == KNOB_SMB_SERVER_SIGNING ? "mandatory" : cfg;
}

/* A "vfs objects" list: the fruit stack when Macs are served, and smb.io_uring last, as
 * vfs_io_uring(8) requires (it does the I/O the modules before it pass down). */
static const char *
smb_vfs_objects(const struct model *m, bool fruit)
{
	const char *u = knob_value(m, KNOB_SMB_IO_URING);
	bool uring = u && strcmp(u, "yes") == 0;

	if (fruit)
		return uring ? "catia fruit streams_xattr io_uring" : "catia fruit streams_xattr";
	return uring ? "io_uring" : "";
}

/* The smb_shares list: each share served over SMB (smb.conf's sections). */
static void
smb_shares_view(struct view *v, const struct model *m, bool tm)
{
	struct view *l, *s;
	bool smb = m->smb.enabled;
	char size[32];
	size_t i;

	l = view_add_list(v, "smb_shares");
	for (i = 0; smb && i < m->n_shares; i++) {
		const struct share *sh = &m->shares[i];

		if (!(sh->protocols & PROTO_SMB))
			continue;
		s = view_list_add_obj(l);
		view_set_str(s, "name", sh->name);
		view_set_str(s, "path", sh->path);
		view_set_str(s, "comment", sh->comment ? sh->comment : "");
		view_set_str(s, "read_only", sh->read_only ? "yes" : "no");
		view_set_str(s, "guest", sh->guest ? "yes" : "no");
		set_joined(s, "valid_users", &sh->valid_users, " ");
		view_set_bool(s, "fruit", tm || m->smb.apple);
		view_set_str(s, "vfs_objects", smb_vfs_objects(m, tm || m->smb.apple));
		knob_items(view_add_list(s, "knobs"), m, KNOB_AT_SMB_SHARE, sh, KNOB_COUNT,
			   KNOB_COUNT);
		view_set_bool(s, "time_machine", sh->tm_enabled);
		size[0] = '\0';
		if (sh->tm_max_size)
			units_format_size(sh->tm_max_size, size, sizeof(size));
		view_set_str(s, "max_size", size);
	}
}

/* The afp_shares list: each volume served over AFP (afp.conf's sections). */
static void
afp_shares_view(struct view *v, const struct model *m)
{
	struct view *l, *s;
	bool afp = m->afp.enabled;
	size_t i;

	l = view_add_list(v, "afp_shares");
	for (i = 0; afp && i < m->n_shares; i++) {
		const struct share *sh = &m->shares[i];
		const char *cnid;

		if (!(sh->protocols & PROTO_AFP))
			continue;
		s = view_list_add_obj(l);
		view_set_str(s, "name", sh->name);
		view_set_str(s, "path", sh->path);
		/* A tuned backend applies only where it may: a new one starts the ids again. */
		cnid = knob_value(m, KNOB_AFP_CNID_SCHEME);
		if (!cnid || (knob_value_visible(knob_get(KNOB_AFP_CNID_SCHEME), cnid) &&
			      !knob_consented(m, knob_get(KNOB_AFP_CNID_SCHEME), sh)))
			cnid = m->afp.cnid_scheme;
		view_set_str(s, "cnid_scheme", cnid);
		knob_items(view_add_list(s, "knobs"), m, KNOB_AT_AFP_VOLUME, sh,
			   KNOB_AFP_CNID_SCHEME, KNOB_COUNT);
		view_set_bool(s, "read_only_yes", sh->read_only);
		set_joined(s, "valid_users", &sh->valid_users, " ");
		view_set_bool(s, "time_machine", sh->tm_enabled);
		if (sh->tm_max_size)
			view_set_strf(s, "vol_size_limit", "%llu",
				      (unsigned long long)(sh->tm_max_size >> 20));
		else
			view_set_str(s, "vol_size_limit", "");
	}
}

/* The nfs_shares list: each export, with its Ganesha Export_Id (unique, stable) and its
 * exports(5) client list. */
static void
nfs_shares_view(struct view *v, const struct model *m)
{
	struct view *l, *s;
	bool nfs = m->nfs.enabled;
	uint16_t used_ids[1024];
	size_t i, j, nused = 0;

	l = view_add_list(v, "nfs_shares");
	for (i = 0; nfs && i < m->n_shares; i++) {
		const struct share *sh = &m->shares[i];
		struct buf b;
		uint16_t id;

		if (!(sh->protocols & PROTO_NFS))
			continue;
		s = view_list_add_obj(l);
		view_set_str(s, "name", sh->name);
		view_set_str(s, "path", sh->path);
		buf_init(&b);
		export_path(&b, sh->path);
		view_set_str(s, "export_path", b.data);
		buf_clear(&b);
		view_set_strf(s, "fsid", "%u", sh->nfs_fsid);
		/* Ganesha export ids are 16-bit and 0 is the pseudo root: hash, then probe. */
		id = (uint16_t)(model_hash32(sh->path) % 65534u + 1u);
		for (j = 0; j < nused; j++)
			if (used_ids[j] == id) {
				id = (uint16_t)(id % 65534u + 1u);
				j = (size_t)-1;
			}
		if (nused < sizeof(used_ids) / sizeof(used_ids[0]))
			used_ids[nused++] = id;
		view_set_strf(s, "export_id", "%u", id);
		view_set_str(s, "access", sh->read_only ? "RO" : "RW");
		view_set_str(s, "squash", sh->guest ? "All_Squash" : "Root_Squash");
		knob_items(view_add_list(s, "export_knobs"), m, KNOB_AT_GANESHA_EXPORT, sh,
			   KNOB_COUNT, KNOB_COUNT);
		view_set_bool(s, "anonymous", sh->guest);
		set_joined(s, "client_list", &sh->nfs_clients, ", ");
		buf_init(&b);
		for (j = 0; j < sh->nfs_clients.n; j++)
			buf_printf(&b, "%s%s(%s,%s,no_subtree_check,%s,fsid=%u)", j ? " " : "",
				   sh->nfs_clients.v[j], sh->read_only ? "ro" : "rw",
				   knob_export_async(m, i) ? "async" : "sync",
				   sh->guest ? "all_squash,anonuid=65534,anongid=65534"
					     : "root_squash",
				   sh->nfs_fsid);
		view_set_str(s, "export_clients", b.data ? b.data : "");
		buf_clear(&b);
	}
}

/* The tm_disks list: one _adisk dkN record per Time Machine share served (adVF flags:
 * 0x82 SMB, 0x81 AFP, 0x83 both). */
static void
tm_disks_view(struct view *v, const struct model *m)
{
	struct view *l, *s;
	bool smb = m->smb.enabled, afp = m->afp.enabled;
	size_t i, tmn = 0;

	l = view_add_list(v, "tm_disks");
	for (i = 0; i < m->n_shares; i++) {
		const struct share *sh = &m->shares[i];
		unsigned flags = 0x80;

		if (!sh->tm_enabled)
			continue;
		if (sh->protocols & PROTO_SMB && smb)
			flags |= 0x02;
		if (sh->protocols & PROTO_AFP && afp)
			flags |= 0x01;
		if (flags == 0x80)
			continue;
		s = view_list_add_obj(l);
		view_set_strf(s, "index", "%zu", tmn++);
		view_set_str(s, "name", sh->name);
		view_set_strf(s, "flags", "0x%x", flags);
		{
			char *uuid = adisk_uuid(sh->path);

			view_set_str(s, "uuid", uuid);
			free(uuid);
		}
	}
}

/* A new object under v, named key. */
static struct view *
child_obj(struct view *v, const char *key)
{
	struct view *o = view_new_obj();

	o->key = xstrdup(key);
	v->items = xreallocarray(v->items, v->n + 1, sizeof(*v->items));
	v->items[v->n++] = o;
	return o;
}

/* The server's names and interfaces. */
static void
server_view(struct view *v, const struct model *m)
{
	/* A cluster answers to one name on every node, whatever each node is called. */
	const char *name = m->cluster.enabled ? m->cluster.name : m->server.name;
	char nb[16];
	size_t i;

	view_set_bool(v, "has_name", name != NULL);
	view_set_str(v, "name", name ? name : "");
	for (i = 0; name && name[i] && i < 15; i++)
		nb[i] = (char)toupper((unsigned char)name[i]);
	nb[i] = '\0';
	view_set_str(v, "netbios_name", nb);
	view_set_str(v, "workgroup", m->server.workgroup);
	view_set_str(v, "description", m->server.description);
	view_set_str(v, "model", m->server.model);
	view_set_bool(v, "has_interfaces", m->server.interfaces.n > 0);
	view_set_bool(v, "clustering", m->cluster.enabled);
	if (m->cluster.enabled) {
		/* Bonjour records point at the cluster's name, which resolves to its first
		 * public address (cluster_bonjour_hosts), never at a node's own name. */
		char *hn = cluster_host_name(m);

		view_set_str(v, "host_name", hn);
		free(hn);
	}
	set_joined(v, "interfaces", &m->server.interfaces, " ");
}

static struct view *
build_view(const struct model *m)
{
	struct view *v = view_new_obj(), *o;
	bool smb = m->smb.enabled, afp = m->afp.enabled;
	bool tm = false, guest_smb = false, guest_afp = false;
	size_t i;

	server_view(v, m);
	for (i = 0; i < m->n_shares; i++) {
		const struct share *sh = &m->shares[i];

		if (sh->tm_enabled &&
		    ((sh->protocols & PROTO_SMB && smb) || (sh->protocols & PROTO_AFP && afp)))
			tm = true;
		guest_smb |= sh->guest && sh->protocols & PROTO_SMB;
		guest_afp |= sh->guest && sh->protocols & PROTO_AFP;
	}

	o = child_obj(v, "smb");
	view_set_str(o, "min_protocol", m->smb.min_protocol);
	/* Samba 4.17 reads every word of protocols.smb.signing; "desired" is its own level
	 * (written as "auto" it would read as if_required). */
	view_set_str(o, "signing", smb_security(m, KNOB_SMB_SERVER_SIGNING, m->smb.signing));
	view_set_str(o, "encryption", smb_security(m, KNOB_SMB_SMB_ENCRYPT, m->smb.encryption));
	knob_list(o, "knobs", m, KNOB_AT_SMB_GLOBAL, KNOB_SMB_SERVER_SIGNING, KNOB_SMB_SMB_ENCRYPT);
	view_set_bool(o, "guest", guest_smb);
	view_set_bool(o, "fruit", tm || m->smb.apple);
	view_set_str(o, "vfs_objects", smb_vfs_objects(m, tm || m->smb.apple));
	/* Without fruit, io_uring's line stands alone in [global]; shares inherit it. */
	view_set_bool(o, "vfs_alone", !(tm || m->smb.apple) && *smb_vfs_objects(m, false));

	o = child_obj(v, "afp");
	view_set_bool(o, "guest", guest_afp);
	view_set_str(o, "cnid_scheme", m->afp.cnid_scheme);
	knob_list(o, "knobs", m, KNOB_AT_AFP_GLOBAL, KNOB_COUNT, KNOB_COUNT);

	o = child_obj(v, "nfs");
	if (knob_value(m, KNOB_NFS_VERSIONS)) {
		char pv[16];

		knob_render_value(knob_get(KNOB_NFS_VERSIONS), knob_value(m, KNOB_NFS_VERSIONS), pv,
				  sizeof(pv));
		view_set_str(o, "protocols", pv);
	} else {
		view_set_str(o, "protocols",
			     m->nfs.v3 && m->nfs.v4 ? "3, 4"
			     : m->nfs.v3	    ? "3"
						    : "4");
	}
	knob_list(o, "core_knobs", m, KNOB_AT_GANESHA_CORE, KNOB_NFS_VERSIONS, KNOB_COUNT);
	view_set_bool(o, "mdcache",
		      knob_list(o, "mdcache_knobs", m, KNOB_AT_GANESHA_MDCACHE, KNOB_COUNT,
				KNOB_COUNT) > 0);

	smb_shares_view(v, m, tm);
	afp_shares_view(v, m);
	nfs_shares_view(v, m);

	o = child_obj(v, "mdns");
	view_set_bool(o, "smb", model_uses(m, PROTO_SMB));
	view_set_bool(o, "afp", model_uses(m, PROTO_AFP));
	view_set_bool(o, "adisk", tm);
	o = child_obj(v, "sys");
	knob_list(o, "knobs", m, KNOB_AT_SYSCTL, KNOB_COUNT, KNOB_COUNT);
	tuned_view(v, m);
	tm_disks_view(v, m);
	return v;
}

/* adVU: the identity Time Machine keeps for a destination. Derived from the share's path,
 * so it is stable across applies and renames of the share (the backups stay where they
 * are), and formatted as an RFC 4122 name-based UUID. Caller frees. */
static char *
adisk_uuid(const char *path)
{
	char hex[65], *in = xasprintf("nastune adisk %s", path);

	hash_sha256_hex(in, strlen(in), hex);
	free(in);
	hex[12] = '5';							/* version */
	hex[16] = "89ab"[strtol((char[]){ hex[16], 0 }, NULL, 16) & 3]; /* variant */
	for (char *c = hex; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	return xasprintf("%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
}

static int
render_one(const struct render_templates *t, const char *name, const struct view *v,
	   enum tmpl_escape esc, struct buf *out, char *err, size_t errlen)
{
	const char *text, *origin = NULL;
	struct tmpl *tp;
	size_t len = 0;
	int rc;

	text = tmpl_text(t, name, &len, &origin);
	if (!text) {
		snprintf(err, errlen, "template '%s' is missing", name);
		return -EINVAL;
	}
	tp = tmpl_parse(origin, text, len, err, errlen);
	if (!tp)
		return -EINVAL;
	rc = tmpl_render(tp, v, esc, out, err, errlen);
	tmpl_free(tp);
	return rc;
}

static void
add_file(struct rendered *r, const char *path, enum svc svc, struct buf *b)
{
	struct rfile *f;

	r->f = xreallocarray(r->f, r->n + 1, sizeof(*r->f));
	f = &r->f[r->n++];
	f->path = xstrdup(path);
	f->svc = svc;
	f->data = buf_steal(b, &f->len);
}

static void
add_text(struct rendered *r, const char *path, enum svc svc, char *text)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, text);
	free(text);
	add_file(r, path, svc, &b);
}

/* A cluster: CTDB's files, and the Bonjour files moved aside, for only the node holding the
 * first public address publishes them (a record published by every node would name each
 * node's own address). */
static void
add_cluster_files(const struct model *m, struct rendered *r)
{
	size_t i, n = r->n;

	for (i = 0; i < n; i++) {
		const char *p = r->f[i].path;

		if (strncmp(p, "/etc/avahi/services/", 20) == 0) {
			char *staged = xasprintf(CLUSTER_BONJOUR_DIR "%s", p + 20);

			free(r->f[i].path);
			r->f[i].path = staged;
			r->f[i].svc = SVC_SELF;
		}
	}
	if (n)
		add_text(r, CLUSTER_BONJOUR_DIR "hosts", SVC_SELF, cluster_bonjour_hosts(m));
	add_text(r, CLUSTER_CTDB_CONF, SVC_SELF, cluster_ctdb_conf(m));
	add_text(r, CLUSTER_NODES, SVC_SELF, cluster_nodes_file(m));
	add_text(r, CLUSTER_PUBLIC, SVC_SELF, cluster_public_file(m));
	add_text(r, CLUSTER_EVENT_SCRIPT, SVC_SELF, cluster_event_script(m));
}

unsigned
render_file_mode(const char *path)
{
	return strcmp(path, CLUSTER_EVENT_SCRIPT) == 0 ? 0755 : 0644;
}

int
render_all(const struct model *m, const struct render_templates *t, unsigned only,
	   struct rendered *out, char *err, size_t errlen)
{
	static const struct {
		const char *tmpl, *path;
		enum svc svc;
		enum tmpl_escape esc;
	} files[] = {
		{ "smb.conf", "/etc/samba/smb.conf", SVC_SMB, TMPL_ESC_CONF },
		{ "exports", "/etc/exports.d/nastune.exports", SVC_NFS, TMPL_ESC_CONF },
		{ "ganesha.conf", "/etc/ganesha/ganesha.conf", SVC_NFS, TMPL_ESC_CONF },
		{ "afp.conf", "/etc/netatalk/afp.conf", SVC_AFP, TMPL_ESC_CONF },
		{ "nastune.service", "/etc/avahi/services/nastune.service", SVC_MDNS,
		  TMPL_ESC_XML },
		{ "sysctl.conf", RENDER_SYSCTL_PATH, SVC_SYS, TMPL_ESC_CONF },
		{ "tuned.conf", RENDER_TUNED_PATH, SVC_SELF, TMPL_ESC_CONF },
	};
	bool any_sys = false, any_tuned = false;
	const struct knob *k;
	struct view *v = build_view(m);
	struct tmpl *nfs_tmpl = NULL;
	struct buf b;
	size_t i;
	int rc = 0;

	out->f = NULL;
	out->n = 0;
	for (k = knob_first(); k; k = knob_next(k)) {
		any_sys |= k->place == KNOB_AT_SYSCTL && knob_value(m, k->id);
		any_tuned |= knob_source(m, k->id) == KNOB_TUNED;
	}
	buf_init(&b);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		enum svc svc = files[i].svc;

		if (only && !(only & (1u << svc)))
			continue;
		if ((svc == SVC_SMB && !m->smb.enabled) || (svc == SVC_AFP && !m->afp.enabled) ||
		    (svc == SVC_NFS && !m->nfs.enabled))
			continue;
		if (svc == SVC_NFS && (strcmp(files[i].tmpl, "ganesha.conf") == 0) !=
					      (m->nfs.server == NFS_SERVER_GANESHA))
			continue;
		if ((svc == SVC_SYS && !any_sys) || (svc == SVC_SELF && !any_tuned))
			continue;
		if ((rc = render_one(t, files[i].tmpl, v, files[i].esc, &b, err, errlen)) < 0)
			goto out;
		add_file(out, files[i].path, svc, &b);
	}
	if (m->nfs.enabled && (!only || only & (1u << SVC_MDNS)) && model_uses(m, PROTO_NFS)) {
		const char *text, *origin = NULL;
		size_t len = 0;

		/* One template, parsed once, rendered per export. */
		if (!(text = tmpl_text(t, "nfs.service", &len, &origin))) {
			snprintf(err, errlen, "template 'nfs.service' is missing");
			rc = -EINVAL;
			goto out;
		}
		if (!(nfs_tmpl = tmpl_parse(origin, text, len, err, errlen))) {
			rc = -EINVAL;
			goto out;
		}
	}
	for (i = 0; nfs_tmpl && i < m->n_shares; i++) {
		const struct share *sh = &m->shares[i];
		struct view *sv;
		char path[128];

		if (!(sh->protocols & PROTO_NFS))
			continue;
		sv = view_new_obj();
		if (m->cluster.enabled) {
			char *hn = cluster_host_name(m);

			view_set_bool(sv, "has_name", true);
			view_set_str(sv, "server_name", m->cluster.name);
			view_set_str(sv, "host_name", hn);
			free(hn);
		} else {
			view_set_bool(sv, "has_name", m->server.name != NULL);
			view_set_str(sv, "server_name", m->server.name ? m->server.name : "");
		}
		view_set_str(sv, "name", sh->name);
		view_set_str(sv, "path", sh->path);
		rc = tmpl_render(nfs_tmpl, sv, TMPL_ESC_XML, &b, err, errlen);
		view_free(sv);
		if (rc < 0)
			goto out;
		snprintf(path, sizeof(path), RENDER_NFS_SERVICE_PREFIX "%08x.service",
			 sh->nfs_fsid);
		add_file(out, path, SVC_MDNS, &b);
	}
	if (m->cluster.enabled && (!only || only & (1u << SVC_SELF)))
		add_cluster_files(m, out);
out:
	tmpl_free(nfs_tmpl);
	buf_clear(&b);
	view_free(v);
	if (rc < 0)
		render_clear(out);
	return rc;
}

void
render_clear(struct rendered *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->f[i].path);
		free(r->f[i].data);
	}
	free(r->f);
	r->f = NULL;
	r->n = 0;
}
