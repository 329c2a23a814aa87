/* crosscheck.c - the checks over the whole model once every key is read: each share against
 * the users and the other shares, the cluster's nodes and shares; and the defaults the model
 * starts from before any key is read. Without libconfig: errors are placed by the struct loc
 * each value was read at. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster.h"
#include "knobs.h"
#include "load.h"
#include "profile.h"
#include "units.h"
#include "xmalloc.h"

/* a is b, or a lies inside b. */
static bool
path_within(const char *a, const char *b)
{
	size_t lb = strlen(b);

	return strncmp(a, b, lb) == 0 && (a[lb] == '\0' || a[lb] == '/');
}

/* Every user a share names is in users. */
static void
validate_users(struct ld *ld, const struct share *a)
{
	struct model *m = ld->m;
	size_t k;

	for (k = 0; k < a->valid_users.n; k++) {
		const char *names[65];
		size_t u, nn = 0;
		const char *near;

		for (u = 0; u < m->n_users; u++)
			if (strcmp(m->users[u].name, a->valid_users.v[k]) == 0)
				break;
		if (u < m->n_users)
			continue;
		for (u = 0; u < m->n_users && nn < 64; u++)
			names[nn++] = m->users[u].name;
		names[nn] = NULL;
		near = load_closest(a->valid_users.v[k], names);
		if (near)
			ERRL(ld, a->loc_users,
			     "share '%s' names user '%s', who is not in "
			     "users — did you mean '%s'?",
			     a->name, a->valid_users.v[k], near);
		else
			ERRL(ld, a->loc_users,
			     "share '%s' names user '%s', who is not in "
			     "users — add ( { name = \"%s\"; } ) to users",
			     a->name, a->valid_users.v[k], a->valid_users.v[k]);
	}
}

/* Share i against the shares before it and the rest of the model. */
static void
validate_share(struct ld *ld, size_t i)
{
	struct model *m = ld->m;
	struct share *a = &m->shares[i];
	size_t j;

	if (!a->name || !a->path)
		return; /* already reported */
	for (j = 0; j < i; j++) {
		struct share *b = &m->shares[j];

		if (b->name && strcasecmp(a->name, b->name) == 0)
			ERRL(ld, a->loc_name,
			     "share name '%s' is already used by '%s' "
			     "(line %d); names are case-insensitive — rename one",
			     a->name, b->name, b->loc_name.line);
		if (!b->path || !(a->tm_enabled || b->tm_enabled))
			continue;
		if (path_within(a->path, b->path) || path_within(b->path, a->path))
			ERRL(ld, a->loc_path,
			     "share '%s' (%s) and Time Machine share '%s' (%s) "
			     "overlap — a Time Machine share must have its directory to "
			     "itself; move one of them",
			     a->tm_enabled ? b->name : a->name, a->tm_enabled ? b->path : a->path,
			     a->tm_enabled ? a->name : b->name, a->tm_enabled ? a->path : b->path);
	}
	if (a->tm_enabled && !(a->protocols & (PROTO_SMB | PROTO_AFP)))
		ERRL(ld, a->loc,
		     "Time Machine share '%s' has neither smb nor afp — add "
		     "\"smb\" to its protocols (Macs back up over SMB or AFP only)",
		     a->name);
	else if (a->tm_enabled && !((a->protocols & PROTO_SMB && m->smb.enabled) ||
				    (a->protocols & PROTO_AFP && m->afp.enabled)))
		ERRL(ld, a->loc,
		     "Time Machine share '%s' is served by no enabled protocol — "
		     "enable protocols.smb (or protocols.afp)",
		     a->name);
	if (a->tm_enabled && a->read_only)
		ERRL(ld, a->loc,
		     "Time Machine share '%s' is read_only — backups need to "
		     "write; set read_only = false",
		     a->name);
	if (a->guest && a->valid_users.n)
		ERRL(ld, a->loc_users,
		     "share '%s' is a guest share and also lists "
		     "valid_users — drop guest = true or the user list",
		     a->name);
	validate_users(ld, a);
	if (a->protocols & PROTO_NFS) {
		if (a->nfs_clients.n == 0 && !a->guest)
			ERRL(ld, a->loc,
			     "share '%s' is exported over NFS to no one — NFS has no "
			     "passwords, so list who may mount it: nfs = { clients = "
			     "[\"192.0.2.0/24\"]; }; (guest shares default to \"*\")",
			     a->name);
		else if (a->nfs_clients.n == 0)
			strlist_add(&a->nfs_clients, "*");
		if (a->nfs_async && !m->tuning.allow_unsafe)
			ERRL(ld, a->loc,
			     "share '%s' asks for NFS async writes, which can lose "
			     "data on power loss — set tuning.allow_unsafe = true to allow "
			     "it, or remove nfs.async",
			     a->name);
		a->nfs_fsid = (model_hash32(a->path) & 0x7fffffffu) | 1u;
		for (j = 0; j < i; j++)
			if (m->shares[j].path && m->shares[j].protocols & PROTO_NFS &&
			    m->shares[j].nfs_fsid == a->nfs_fsid &&
			    strcmp(m->shares[j].path, a->path) != 0)
				ERRL(ld, a->loc_path,
				     "NFS fsid of '%s' collides with '%s' — "
				     "change either path slightly",
				     a->path, m->shares[j].path);
	} else if (a->nfs_clients.n) {
		diag_warning(ld->d, a->loc_clients.file, a->loc_clients.line,
			     "share '%s' sets nfs.clients but is not shared over nfs — add "
			     "\"nfs\" to its protocols or remove the nfs group",
			     a->name);
	}
	/* netatalk's parser ends an unquoted value at ';' or '#': AFP would serve another
	 * directory than SMB and NFS. */
	if (a->protocols & PROTO_AFP && strpbrk(a->path, ";#"))
		ERRL(ld, a->loc_path,
		     "share '%s' path '%s' holds ';' or '#', which afp.conf cannot "
		     "carry (netatalk ends the value there) — rename the directory or "
		     "drop \"afp\" from its protocols",
		     a->name, a->path);
	if (a->tm_enabled && a->guest)
		diag_warning(ld->d, a->loc.file, a->loc.line,
			     "Time Machine share '%s' is a "
			     "guest share: anyone on the network can read the backups",
			     a->name);
}

void
crosscheck_model(struct ld *ld)
{
	struct model *m = ld->m;
	size_t i;

	for (i = 0; i < m->n_shares; i++)
		validate_share(ld, i);
	for (i = 0; i < KNOB_COUNT; i++) {
		const struct knob_setting *ks = &m->knobs[i];
		const struct knob *kb = knob_get((enum knob_id)i);
		char why[512];

		if (!ks->value || ks->src != KNOB_CONFIG || kb->id == KNOB_NET_MTU)
			continue;
		if (!knob_value_permitted(m, kb, ks->value, why, sizeof(why)))
			ERRL(ld, ks->loc, "tuning.knobs.%s", why);
		else if (!knob_applicable(m, kb, why, sizeof(why)))
			diag_warning(ld->d, ks->loc.file, ks->loc.line,
				     "tuning.knobs.%s has no "
				     "effect (%s) — remove it",
				     kb->name, why + strlen("not applicable: "));
	}
	if (m->network.mtu_mode != MTU_KEEP && !m->network.interface)
		diag_error(ld->d, m->files.n ? m->files.v[m->files.n - 1] : ld->fallback, 0,
			   "network.mtu is set but network.interface is not — add "
			   "network.interface = \"eth0\"; or set mtu = \"keep\"");
}

/* The address part of a public address, without "/PREFIX". */
static bool
same_addr(const char *node, const char *pub)
{
	size_t n = strcspn(pub, "/");

	return strlen(node) == n && strncmp(node, pub, n) == 0;
}

/* What a cluster asks of its shares: on the cluster file system, away from nastune's record,
 * and nothing that cannot move between nodes. */
static void
validate_cluster_shares(struct ld *ld)
{
	struct model *m = ld->m;
	char *rec = NULL;
	size_t i;

	if (m->cluster.filesystem)
		rec = xasprintf("%s/" CLUSTER_REC_TOP, m->cluster.filesystem);
	for (i = 0; i < m->n_shares; i++) {
		const struct share *sh = &m->shares[i];

		if (sh->path && m->cluster.filesystem &&
		    !path_within(sh->path, m->cluster.filesystem))
			ERRL(ld, sh->loc_path,
			     "share '%s' (%s) is outside the cluster file system %s — a node "
			     "that takes over a public address must serve the same files: move it "
			     "under %s",
			     sh->name, sh->path, m->cluster.filesystem, m->cluster.filesystem);
		else if (sh->path && rec &&
			 (path_within(rec, sh->path) || path_within(sh->path, rec)))
			/* Its users could replace the record every node's root follows. */
			ERRL(ld, sh->loc_path,
			     "share '%s' (%s) %s nastune's cluster record %s — share a directory "
			     "under %s instead, such as \"%s/srv/%s\"",
			     sh->name, sh->path,
			     strcmp(sh->path, m->cluster.filesystem) == 0
				     ? "is the cluster file "
				       "system's root, which holds"
				     : "reaches",
			     rec, m->cluster.filesystem, m->cluster.filesystem, sh->name);
		if (sh->tm_enabled)
			ERRL(ld, sh->loc,
			     "share '%s' is a Time Machine share, which nastune does not support "
			     "on a cluster — a Mac's backup keeps a sparse bundle open with "
			     "leases and durable handles that a takeover breaks, and nastune has "
			     "not proven a restore after one: serve Time Machine from a single "
			     "box, or remove time_machine",
			     sh->name);
		if (sh->protocols & PROTO_AFP && m->afp.enabled)
			ERRL(ld, sh->loc,
			     "share '%s' is shared over AFP, which cannot be clustered — "
			     "netatalk keeps its CNID database and locks on one host: remove "
			     "\"afp\" from its protocols",
			     sh->name);
	}
	free(rec);
}

void
crosscheck_cluster(struct ld *ld)
{
	struct model *m = ld->m;
	const struct loc *l = &m->cluster.loc;
	size_t i, j;

	if (!m->cluster.enabled)
		return;
	if (!m->cluster.name && m->server.name)
		m->cluster.name = xstrdup(m->server.name);
	if (!m->cluster.name)
		ERRL(ld, *l,
		     "cluster has no name — every node must answer to one SMB and Bonjour name: "
		     "add name = \"nas\"; to cluster (or server.name)");
	if (m->cluster.nodes.n == 0)
		ERRL(ld, *l,
		     "cluster.nodes is missing — list every node's private address, the same "
		     "list on every node: nodes = [\"10.0.0.1\", \"10.0.0.2\"];");
	for (i = 0; i < m->cluster.nodes.n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(m->cluster.nodes.v[i], m->cluster.nodes.v[j]) == 0)
				ERRL(ld, m->cluster.loc_nodes,
				     "cluster.nodes lists %s twice — list each node once",
				     m->cluster.nodes.v[i]);
	if (m->cluster.public_addresses.n == 0)
		ERRL(ld, *l,
		     "cluster.public_addresses is missing — clients reach the cluster only "
		     "through addresses CTDB moves between nodes: public_addresses = "
		     "[\"192.0.2.50/24\"];");
	for (i = 0; i < m->cluster.public_addresses.n; i++) {
		const char *p = m->cluster.public_addresses.v[i];

		for (j = 0; j < m->cluster.nodes.n; j++)
			if (same_addr(m->cluster.nodes.v[j], p))
				ERRL(ld, m->cluster.loc_public,
				     "public address %s is also node %s's address — a public "
				     "address moves between nodes and must be one no node owns: "
				     "choose another",
				     p, m->cluster.nodes.v[j]);
		for (j = 0; j < i; j++)
			if (same_addr(m->cluster.public_addresses.v[j], p) &&
			    strcspn(p, "/") == strcspn(m->cluster.public_addresses.v[j], "/"))
				ERRL(ld, m->cluster.loc_public,
				     "cluster.public_addresses lists %s twice — list each once", p);
		if (!*m->cluster.public_interfaces.v[i] && !m->cluster.interface)
			ERRL(ld, m->cluster.loc_public,
			     "public address %s has no interface — add interface = \"eth0\"; to "
			     "cluster, or write \"%s eth0\"",
			     p, p);
	}
	if (!m->cluster.filesystem)
		ERRL(ld, *l,
		     "cluster.filesystem is missing — name the mount point of the cluster file "
		     "system (CephFS, GlusterFS, GPFS...), e.g. filesystem = \"/cluster\"; the "
		     "lock, the shares and nastune's cluster record live there");
	if (!m->cluster.lock)
		ERRL(ld, *l,
		     "cluster.lock is missing — without a cluster lock two halves of a split "
		     "cluster both serve the shares: lock = \"/cluster/.ctdb/lock\"; (or "
		     "\"!helper ARGS\")");
	else if (m->cluster.lock[0] == '/' && m->cluster.filesystem &&
		 !path_within(m->cluster.lock, m->cluster.filesystem))
		ERRL(ld, m->cluster.loc_lock,
		     "cluster.lock %s is outside the cluster file system %s — every node must "
		     "take the same lock, so put it there (\"%s/.ctdb/lock\") or use a helper "
		     "(\"!/usr/libexec/ctdb/ctdb_mutex_ceph_rados_helper ...\")",
		     m->cluster.lock, m->cluster.filesystem, m->cluster.filesystem);
	validate_cluster_shares(ld);
	if (m->nfs.enabled && m->nfs.server != NFS_SERVER_GANESHA && model_uses(m, PROTO_NFS))
		ERRL(ld, *l,
		     "a cluster serves NFS with NFS-Ganesha only (CTDB puts it in grace on "
		     "takeover) — set protocols.nfs.server = \"ganesha\"");
}

void
crosscheck_defaults(struct model *m)
{
	m->server.workgroup = xstrdup("WORKGROUP");
	m->server.description = xstrdup("nastune NAS");
	m->server.model = xstrdup("MacSamba");
	m->smb.enabled = true;
	m->smb.min_protocol = xstrdup("SMB2");
	m->smb.signing = xstrdup("default");
	m->smb.encryption = xstrdup("default");
	m->nfs.v3 = m->nfs.v4 = true;
	m->afp.cnid_scheme = xstrdup("dbd");
	m->tuning.goal = GOAL_BALANCED;
	m->tuning.budget_s = 600;
	m->services.backend = xstrdup("auto");
}
