/* record.c - which node this host is, and the cluster's configuration record on the cluster
 * file system: what every node should run, and what each one reports it runs. The cluster
 * file system is the one channel every node already trusts (root-only directory on storage
 * only the nodes mount): no new listener, no keys to hand out. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster.h"
#include "fsutil.h"
#include "hash.h"
#include "timeutil.h"
#include "xmalloc.h"

#define REC_MAX (1u << 20)

/* Compares two textual addresses as addresses ("::1" and "0::1" are one). */
static bool
addr_eq(const char *a, const char *b)
{
	unsigned char x[16], y[16];

	if (inet_pton(AF_INET, a, x) == 1)
		return inet_pton(AF_INET, b, y) == 1 && memcmp(x, y, 4) == 0;
	if (inet_pton(AF_INET6, a, x) == 1)
		return inet_pton(AF_INET6, b, y) == 1 && memcmp(x, y, 16) == 0;
	return strcmp(a, b) == 0;
}

int
cluster_this_node(const struct model *m)
{
	const char *override = getenv("NASTUNE_CLUSTER_NODE");
	struct ifaddrs *ifa = NULL, *p;
	size_t i;
	int found = -ENOENT;

	if (override && *override) {
		for (i = 0; i < m->cluster.nodes.n; i++)
			if (addr_eq(m->cluster.nodes.v[i], override))
				return (int)i;
		return -ENOENT;
	}
	if (getifaddrs(&ifa) < 0)
		return -errno;
	for (p = ifa; p && found < 0; p = p->ifa_next) {
		char a[INET6_ADDRSTRLEN];

		if (!p->ifa_addr)
			continue;
		if (p->ifa_addr->sa_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)p->ifa_addr)->sin_addr, a,
				  sizeof(a));
		else if (p->ifa_addr->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr, a,
				  sizeof(a));
		else
			continue;
		for (i = 0; i < m->cluster.nodes.n; i++)
			if (addr_eq(m->cluster.nodes.v[i], a))
				found = (int)i;
	}
	freeifaddrs(ifa);
	return found;
}

/* Whether addr (textual) is configured on an interface of this host. */
static bool
local_address(const char *addr)
{
	struct ifaddrs *ifa = NULL, *p;
	bool found = false;

	if (getifaddrs(&ifa) < 0)
		return false;
	for (p = ifa; p && !found; p = p->ifa_next) {
		char a[INET6_ADDRSTRLEN] = "";

		if (!p->ifa_addr)
			continue;
		if (p->ifa_addr->sa_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)p->ifa_addr)->sin_addr, a,
				  sizeof(a));
		else if (p->ifa_addr->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr, a,
				  sizeof(a));
		found = *a && addr_eq(a, addr);
	}
	freeifaddrs(ifa);
	return found;
}

bool
cluster_holds(const char *pub)
{
	char want[64];

	snprintf(want, sizeof(want), "%.*s", (int)strcspn(pub, "/"), pub);
	return local_address(want);
}

int
cluster_local_public(const struct model *m, char *out, size_t len)
{
	size_t i;

	for (i = 0; i < m->cluster.public_addresses.n; i++)
		if (cluster_holds(m->cluster.public_addresses.v[i])) {
			snprintf(out, len, "%.*s",
				 (int)strcspn(m->cluster.public_addresses.v[i], "/"),
				 m->cluster.public_addresses.v[i]);
			return (int)i;
		}
	return -ENOENT;
}

void
cluster_config_id(const char *conf, size_t conf_len, const char *tuned, size_t tuned_len,
		  char out[CLUSTER_ID_LEN + 1])
{
	struct hash_ctx *h = hash_new();
	char hex[65];

	hash_update(h, conf, conf_len);
	hash_update(h, "\0", 1);
	if (tuned)
		hash_update(h, tuned, tuned_len);
	hash_final_hex(h, hex);
	memcpy(out, hex, CLUSTER_ID_LEN);
	out[CLUSTER_ID_LEN] = '\0';
}

/* <root><filesystem>/.nastune/cluster/<rel>; caller frees. */
static char *
rec_path(const struct model *m, const char *root, const char *rel)
{
	char *abs = xasprintf("%s/.nastune/cluster/%s", m->cluster.filesystem, rel);
	char *p = fs_rooted(root, abs);

	free(abs);
	return p;
}

static int
rec_dirs(const struct model *m, const char *root)
{
	static const char *const dirs[] = { "", "config", "nodes" };
	size_t i;
	int rc = 0;

	for (i = 0; i < 3 && rc == 0; i++) {
		char *p = rec_path(m, root, dirs[i]);

		rc = fs_mkdir_p(p, 0700);
		free(p);
	}
	return rc;
}

static int
write_json(const char *path, json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int rc;

	if (!s)
		return -ENOMEM;
	rc = fs_write_atomic(path, s, strlen(s), 0600, 0);
	free(s);
	return rc;
}

static json_t *
read_json(const char *path, int *rc)
{
	char *text = NULL;
	size_t len = 0;
	json_t *o;

	if ((*rc = fs_read_file(path, REC_MAX, &text, &len)) < 0)
		return NULL;
	o = json_loadb(text, len, 0, NULL);
	free(text);
	if (!o || !json_is_object(o)) {
		json_decref(o);
		*rc = -EBADMSG;
		return NULL;
	}
	return o;
}

static void
copy_str(char *dst, size_t len, json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	snprintf(dst, len, "%s", v ? v : "");
}

static bool
valid_id(const char *id)
{
	return strlen(id) == CLUSTER_ID_LEN && strspn(id, "0123456789abcdef") == CLUSTER_ID_LEN;
}

int
cluster_read_desired(const struct model *m, const char *root, struct cluster_desired *d)
{
	char *p = rec_path(m, root, "desired");
	json_t *o;
	int rc;

	memset(d, 0, sizeof(*d));
	o = read_json(p, &rc);
	free(p);
	if (!o)
		return rc;
	copy_str(d->id, sizeof(d->id), o, "id");
	copy_str(d->prev, sizeof(d->prev), o, "previous");
	copy_str(d->from, sizeof(d->from), o, "from");
	d->generation = (long)json_integer_value(json_object_get(o, "generation"));
	json_decref(o);
	if (!valid_id(d->id) || (*d->prev && !valid_id(d->prev)))
		return -EBADMSG;
	return 0;
}

static int
set_desired(const struct model *m, const char *root, const char *id, const char *from,
	    struct cluster_desired *d)
{
	struct cluster_desired cur;
	char when[32], *p;
	json_t *o;
	int rc = cluster_read_desired(m, root, &cur);

	if (rc < 0 && rc != -ENOENT)
		return rc;
	timeutil_now_iso(when, sizeof(when));
	memset(d, 0, sizeof(*d));
	snprintf(d->id, sizeof(d->id), "%s", id);
	snprintf(d->prev, sizeof(d->prev), "%s", cur.id);
	snprintf(d->from, sizeof(d->from), "%s", from);
	d->generation = cur.generation + 1;
	o = json_pack("{s:s, s:I, s:s, s:s, s:s}", "id", d->id, "generation",
		      (json_int_t)d->generation, "previous", d->prev, "from", d->from, "time",
		      when);
	p = rec_path(m, root, "desired");
	rc = write_json(p, o);
	free(p);
	json_decref(o);
	return rc;
}

int
cluster_publish(const struct model *m, const char *root, const char *conf, size_t conf_len,
		const char *tuned, size_t tuned_len, const char *from, struct cluster_desired *d)
{
	char id[CLUSTER_ID_LEN + 1], rel[64], *p;
	int rc;

	if ((rc = rec_dirs(m, root)) < 0)
		return rc;
	cluster_config_id(conf, conf_len, tuned, tuned_len, id);
	snprintf(rel, sizeof(rel), "config/%s.conf", id);
	p = rec_path(m, root, rel);
	rc = fs_write_atomic(p, conf, conf_len, 0600, 0);
	free(p);
	snprintf(rel, sizeof(rel), "config/%s.tuned", id);
	p = rec_path(m, root, rel);
	if (rc == 0 && tuned)
		rc = fs_write_atomic(p, tuned, tuned_len, 0600, 0);
	else if (rc == 0 && unlink(p) < 0 && errno != ENOENT)
		rc = -errno;
	free(p);
	return rc < 0 ? rc : set_desired(m, root, id, from, d);
}

int
cluster_republish(const struct model *m, const char *root, const char *id, const char *from,
		  struct cluster_desired *d)
{
	char rel[64], *p;
	struct stat st;
	int rc;

	if (!valid_id(id))
		return -EINVAL;
	snprintf(rel, sizeof(rel), "config/%s.conf", id);
	p = rec_path(m, root, rel);
	rc = stat(p, &st) < 0 ? -errno : 0;
	free(p);
	return rc < 0 ? rc : set_desired(m, root, id, from, d);
}

int
cluster_read_config(const struct model *m, const char *root, const char *id, char **conf,
		    size_t *conf_len, char **tuned, size_t *tuned_len)
{
	char rel[64], *p;
	int rc;

	*conf = *tuned = NULL;
	*conf_len = *tuned_len = 0;
	if (!valid_id(id))
		return -EINVAL;
	snprintf(rel, sizeof(rel), "config/%s.conf", id);
	p = rec_path(m, root, rel);
	rc = fs_read_file(p, REC_MAX, conf, conf_len);
	free(p);
	if (rc < 0)
		return rc;
	snprintf(rel, sizeof(rel), "config/%s.tuned", id);
	p = rec_path(m, root, rel);
	rc = fs_read_file(p, REC_MAX, tuned, tuned_len);
	free(p);
	if (rc == -ENOENT)
		rc = 0;
	if (rc < 0) {
		free(*conf);
		*conf = NULL;
	}
	return rc;
}

int
cluster_write_node(const struct model *m, const char *root, const struct cluster_node_rec *r)
{
	char rel[96], *p;
	json_t *o;
	int rc;

	if ((rc = rec_dirs(m, root)) < 0)
		return rc;
	o = json_pack("{s:s, s:s, s:I, s:I, s:b, s:b, s:s, s:s}", "address", r->addr, "id", r->id,
		      "followed", (json_int_t)r->followed, "local_generation",
		      (json_int_t)r->local_generation, "ok", r->ok, "alone", r->alone, "error",
		      r->error, "time", r->time);
	snprintf(rel, sizeof(rel), "nodes/%s", r->addr);
	p = rec_path(m, root, rel);
	rc = write_json(p, o);
	free(p);
	json_decref(o);
	return rc;
}

int
cluster_read_nodes(const struct model *m, const char *root, struct cluster_node_rec **out)
{
	struct cluster_node_rec *v = xcalloc(m->cluster.nodes.n + 1, sizeof(*v));
	size_t i;

	for (i = 0; i < m->cluster.nodes.n; i++) {
		char rel[96], *p;
		json_t *o;
		int rc;

		snprintf(v[i].addr, sizeof(v[i].addr), "%s", m->cluster.nodes.v[i]);
		snprintf(rel, sizeof(rel), "nodes/%s", m->cluster.nodes.v[i]);
		p = rec_path(m, root, rel);
		o = read_json(p, &rc);
		free(p);
		if (!o)
			continue;
		copy_str(v[i].id, sizeof(v[i].id), o, "id");
		copy_str(v[i].error, sizeof(v[i].error), o, "error");
		copy_str(v[i].time, sizeof(v[i].time), o, "time");
		v[i].followed = (long)json_integer_value(json_object_get(o, "followed"));
		v[i].local_generation =
			(long)json_integer_value(json_object_get(o, "local_generation"));
		v[i].ok = json_is_true(json_object_get(o, "ok"));
		v[i].alone = json_is_true(json_object_get(o, "alone"));
		json_decref(o);
	}
	*out = v;
	return 0;
}
