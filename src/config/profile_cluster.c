/* profile_cluster.c - cluster { }: the nodes, the public addresses, the recovery lock and
 * the cluster file system, as one node of a CTDB cluster reads them. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_keys.h"
#include "xmalloc.h"

/* ---- cluster ---- */

/* cluster.nodes: private addresses only (ctdb binds them; names would need resolving). */
static bool
check_node(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	int fam;

	if (pf_is_ipaddr(v, &fam))
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
	if (end == slash + 1 || (*end && *end != ' ') || !pf_is_ipaddr(addr, &fam) || prefix < 1 ||
	    prefix > (fam == AF_INET ? 32 : 128))
		goto bad;
	if (*end == ' ') {
		if (strlen(end + 1) >= sizeof(iface))
			goto bad;
		strcpy(iface, end + 1);
		if (!pf_check_ifname(ld, s, what, iface))
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
	pf_read_strlist(ld, s, what, &m->cluster.public_addresses, check_public);
	m->cluster.loc_public = pf_loc_of(ld, s);
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
	m->cluster.loc_lock = pf_loc_of(ld, s);
	if (!pf_check_text(ld, s, what, v, 255, "\"\\%"))
		return;
	if (v[0] == '/' || (v[0] == '!' && v[1] && v[1] != ' '))
		pf_set_str(&m->cluster.lock, v);
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
	m->cluster.loc_fs = pf_loc_of(ld, s);
	if (pf_check_text(ld, s, what, v, 200, "\"\\% ") && v[0] == '/' && strcmp(v, "/") != 0 &&
	    !strstr(v, "/../") && v[strlen(v) - 1] != '/')
		pf_set_str(&m->cluster.filesystem, v);
	else
		ERR(ld, s,
		    "%s '%s' is not a mount point — write the absolute path where the cluster "
		    "file system is mounted on every node, e.g. \"/cluster\"",
		    what, v);
}

const struct field pf_cluster_fields[] = {
	{ "name", F_STR, .off = M(cluster.name), .check = pf_check_cluster_name },
	{ "nodes", F_STRLIST, .off = M(cluster.nodes), .check = check_node,
	  .loc_off = M(cluster.loc_nodes) },
	{ "public_addresses", F_FUNC, .load = load_public_addresses, .kind = K_LIST },
	{ "interface", F_STR, .off = M(cluster.interface), .check = pf_check_ifname },
	{ "lock", F_FUNC, .load = load_cluster_lock, .kind = K_STR },
	{ "filesystem", F_FUNC, .load = load_cluster_fs, .kind = K_STR },
	{ NULL },
};

/* A cluster group makes this host one node of a CTDB cluster. */
void
pf_load_cluster(struct ld *ld, config_setting_t *g, const char *what, const struct field *f,
		void *base)
{
	struct model *m = base;

	m->cluster.enabled = true;
	m->cluster.loc = pf_loc_of(ld, g);
	pf_load_group(ld, g, what, f->sub, m);
}
