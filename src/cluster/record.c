/* record.c - which node this host is, and the cluster's configuration record on the cluster
 * file system: what every node should run, and what each one reports it runs. Where it sits
 * proves nothing (recfs.c proves whose it is); every part of it is signed with the key each
 * node keeps in /etc/nastune, and a configuration's id is the hash of its texts. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "buf.h"
#include "cluster.h"
#include "fsutil.h"
#include "hash.h"
#include "hostaddr.h"
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
	struct hostaddr *ha;
	size_t i, k, n;
	int found = -ENOENT, rc;

	if (override && *override) {
		for (i = 0; i < m->cluster.nodes.n; i++)
			if (addr_eq(m->cluster.nodes.v[i], override))
				return (int)i;
		return -ENOENT;
	}
	if ((rc = hostaddr_list(AF_UNSPEC, &ha, &n)) < 0)
		return rc;
	for (k = 0; k < n && found < 0; k++)
		for (i = 0; i < m->cluster.nodes.n; i++)
			if (addr_eq(m->cluster.nodes.v[i], ha[k].addr))
				found = (int)i;
	free(ha);
	return found;
}

/* Whether addr (textual) is configured on an interface of this host. */
static bool
local_address(const char *addr)
{
	struct hostaddr *ha;
	size_t k, n;
	bool found = false;

	if (hostaddr_list(AF_UNSPEC, &ha, &n) < 0)
		return false;
	for (k = 0; k < n && !found; k++)
		found = addr_eq(ha[k].addr, addr);
	free(ha);
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

#define REC_FIELD(b, s) buf_printf(b, "%zu:%s\n", strlen(s), s)

/* What desired's signature covers: every field, length-prefixed. */
static void
desired_text(struct buf *b, const struct cluster_desired *d, const char *when)
{
	buf_printf(b, "nastune-desired-1\n%ld\n", d->generation);
	REC_FIELD(b, d->id);
	REC_FIELD(b, d->prev);
	REC_FIELD(b, d->from);
	REC_FIELD(b, when);
}

static void
node_text(struct buf *b, const struct cluster_node_rec *r)
{
	buf_printf(b, "nastune-node-1\n%ld\n%ld\n%d\n%d\n", r->followed, r->local_generation, r->ok,
		   r->alone);
	REC_FIELD(b, r->addr);
	REC_FIELD(b, r->id);
	REC_FIELD(b, r->error);
	REC_FIELD(b, r->time);
}

/* The signature of a configuration's texts (tuned NULL: none). */
static void
config_mac(const struct cluster_rec *rec, const char *id, const char *conf, size_t clen,
	   const char *tuned, size_t tlen, char out[65])
{
	struct buf b;

	buf_init(&b);
	buf_printf(&b, "nastune-config-1\n%s\n%zu:", id, clen);
	buf_add(&b, conf, clen);
	if (tuned) {
		buf_printf(&b, "\n%zu:", tlen);
		buf_add(&b, tuned, tlen);
	} else {
		buf_adds(&b, "\n-");
	}
	cluster_rec_mac(rec, b.data, b.len, out);
	buf_clear(&b);
}

static bool
mac_eq(const char *a, const char *b)
{
	return b && strlen(b) == 64 && CRYPTO_memcmp(a, b, 64) == 0;
}

static int
write_json(struct cluster_rec *rec, int dirfd, const char *name, json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int rc;

	if (!s)
		return -ENOMEM;
	rc = fs_write_atomic_at(dirfd, name, s, strlen(s), 0600);
	if (rc < 0)
		snprintf(rec->err, sizeof(rec->err), "cannot write %s/%s: %s", rec->path, name,
			 strerror(-rc));
	free(s);
	return rc;
}

/* name in dirfd as a JSON object: -ENOENT, -EPERM (not root's, not regular), -EBADMSG
 * (truncated, garbled), with rec->err. */
static json_t *
read_json(struct cluster_rec *rec, int dirfd, const char *name, int *rc)
{
	char *text = NULL;
	size_t len = 0;
	json_t *o;

	if ((*rc = cluster_rec_read(rec, dirfd, name, REC_MAX, &text, &len)) < 0)
		return NULL;
	o = json_loadb(text, len, 0, NULL);
	free(text);
	if (!o || !json_is_object(o)) {
		json_decref(o);
		snprintf(rec->err, sizeof(rec->err),
			 "%s/%s%s is truncated or garbled (not a JSON object)", rec->path,
			 dirfd == rec->nodes ? "nodes/" : "", name);
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
cluster_read_desired(struct cluster_rec *rec, struct cluster_desired *d)
{
	char when[64], mac[65];
	json_t *o, *g;
	struct buf b;
	int rc;

	memset(d, 0, sizeof(*d));
	if (!(o = read_json(rec, rec->dir, "desired", &rc))) {
		if (rc != -ENOENT)
			d->generation = -1;
		return rc == -EPERM ? -EBADMSG : rc;
	}
	copy_str(d->id, sizeof(d->id), o, "id");
	copy_str(d->prev, sizeof(d->prev), o, "previous");
	copy_str(d->from, sizeof(d->from), o, "from");
	copy_str(when, sizeof(when), o, "time");
	g = json_object_get(o, "generation");
	d->generation = json_is_integer(g) ? (long)json_integer_value(g) : -1;
	buf_init(&b);
	desired_text(&b, d, when);
	cluster_rec_mac(rec, b.data, b.len, mac);
	buf_clear(&b);
	rc = 0;
	if (!valid_id(d->id) || (*d->prev && !valid_id(d->prev)) || d->generation < 1 ||
	    d->generation > CLUSTER_GEN_MAX) {
		snprintf(rec->err, sizeof(rec->err),
			 "%s/desired is garbled (its id, previous id or generation is invalid)",
			 rec->path);
		rc = -EBADMSG;
	} else if (!mac_eq(mac, json_string_value(json_object_get(o, "mac")))) {
		snprintf(rec->err, sizeof(rec->err),
			 "%s/desired is %s with this node's key (%s): refused — another node's "
			 "key differs, or someone else wrote it",
			 rec->path, json_object_get(o, "mac") ? "not signed" : "unsigned",
			 CLUSTER_KEY_PATH);
		rc = -EBADMSG;
	}
	json_decref(o);
	if (rc < 0) {
		memset(d, 0, sizeof(*d));
		d->generation = -1;
	}
	return rc;
}

/* The generation after every one the record knows: desired's and each node's followed. */
static long
next_generation(const struct model *m, struct cluster_rec *rec, const struct cluster_desired *cur)
{
	struct cluster_node_rec *v = NULL;
	long g = cur->generation > 0 ? cur->generation : 0;
	size_t i;

	cluster_read_nodes(m, rec, &v);
	for (i = 0; v && i < m->cluster.nodes.n; i++)
		if (!*v[i].refused && v[i].followed > g && v[i].followed <= CLUSTER_GEN_MAX)
			g = v[i].followed;
	free(v);
	return g + 1;
}

/* Writes desired = id (prev: cur's), signed, and reads it back. Under the lock. */
static int
set_desired(const struct model *m, struct cluster_rec *rec, const struct cluster_desired *cur,
	    const char *id, const char *from, struct cluster_desired *d)
{
	struct cluster_desired back;
	char when[32], mac[65];
	struct buf b;
	json_t *o;
	int rc;

	timeutil_now_iso(when, sizeof(when));
	memset(d, 0, sizeof(*d));
	snprintf(d->id, sizeof(d->id), "%s", id);
	snprintf(d->prev, sizeof(d->prev), "%s", cur->generation > 0 ? cur->id : "");
	snprintf(d->from, sizeof(d->from), "%s", from);
	d->generation = next_generation(m, rec, cur);
	if (d->generation > CLUSTER_GEN_MAX) {
		snprintf(rec->err, sizeof(rec->err), "the record's generation is at its limit");
		return -EOVERFLOW;
	}
	buf_init(&b);
	desired_text(&b, d, when);
	cluster_rec_mac(rec, b.data, b.len, mac);
	buf_clear(&b);
	o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s}", "id", d->id, "generation",
		      (json_int_t)d->generation, "previous", d->prev, "from", d->from, "time", when,
		      "mac", mac);
	rc = write_json(rec, rec->dir, "desired", o);
	json_decref(o);
	if (rc < 0)
		return rc;
	/* Read back: what every node will read is what was meant. */
	if ((rc = cluster_read_desired(rec, &back)) < 0)
		return rc;
	if (back.generation != d->generation || strcmp(back.id, d->id) != 0) {
		snprintf(rec->err, sizeof(rec->err),
			 "%s/desired changed under the lock (now %s, generation %ld, from %s)",
			 rec->path, back.id, back.generation, back.from);
		return -EAGAIN;
	}
	return 0;
}

/* Whether desired is still base (same generation and id; corrupt or absent alike). */
static bool
still(const struct cluster_desired *cur, const struct cluster_desired *base)
{
	if (base->generation <= 0 || cur->generation <= 0)
		return base->generation == cur->generation;
	return cur->generation == base->generation && strcmp(cur->id, base->id) == 0;
}

/* Reads desired under the lock into cur; -EAGAIN (rec->err naming the winner) when it is no
 * longer base. */
static int
check_base(struct cluster_rec *rec, const struct cluster_desired *base, struct cluster_desired *cur)
{
	int rc = cluster_read_desired(rec, cur);

	if (rc < 0 && rc != -ENOENT && rc != -EBADMSG)
		return rc;
	if (!still(cur, base)) {
		snprintf(rec->err, sizeof(rec->err),
			 "node %s published configuration %s (cluster generation %ld) first",
			 *cur->from ? cur->from : "?", *cur->id ? cur->id : "?", cur->generation);
		return -EAGAIN;
	}
	return 0;
}

int
cluster_publish(const struct model *m, struct cluster_rec *rec, const struct cluster_desired *base,
		const char *conf, size_t conf_len, const char *tuned, size_t tuned_len,
		const char *from, struct cluster_desired *d)
{
	struct cluster_desired cur;
	char id[CLUSTER_ID_LEN + 1], name[64], mac[65];
	int lk, rc;

	if ((lk = cluster_rec_lock(rec, 30)) < 0)
		return lk;
	if ((rc = check_base(rec, base, &cur)) < 0) {
		*d = cur;
		goto out;
	}
	cluster_config_id(conf, conf_len, tuned, tuned_len, id);
	config_mac(rec, id, conf, conf_len, tuned, tuned_len, mac);
	snprintf(name, sizeof(name), "%s.conf", id);
	rc = fs_write_atomic_at(rec->config, name, conf, conf_len, 0600);
	snprintf(name, sizeof(name), "%s.tuned", id);
	if (rc == 0 && tuned)
		rc = fs_write_atomic_at(rec->config, name, tuned, tuned_len, 0600);
	else if (rc == 0 && unlinkat(rec->config, name, 0) < 0 && errno != ENOENT)
		rc = -errno;
	snprintf(name, sizeof(name), "%s.mac", id);
	if (rc == 0)
		rc = fs_write_atomic_at(rec->config, name, mac, strlen(mac), 0600);
	if (rc < 0)
		snprintf(rec->err, sizeof(rec->err), "cannot write %s/config/%s: %s", rec->path,
			 name, strerror(-rc));
	else
		rc = set_desired(m, rec, &cur, id, from, d);
out:
	close(lk);
	return rc;
}

int
cluster_republish(const struct model *m, struct cluster_rec *rec,
		  const struct cluster_desired *expect, const char *id, const char *from,
		  struct cluster_desired *d)
{
	struct cluster_desired cur;
	char *conf = NULL, *tuned = NULL;
	size_t cl, tl;
	int lk, rc;

	if (!valid_id(id))
		return -EINVAL;
	if ((lk = cluster_rec_lock(rec, 30)) < 0)
		return lk;
	if ((rc = check_base(rec, expect, &cur)) < 0)
		*d = cur;
	else if ((rc = cluster_read_config(rec, id, &conf, &cl, &tuned, &tl)) == 0)
		rc = set_desired(m, rec, &cur, id, from, d);
	free(conf);
	free(tuned);
	close(lk);
	return rc;
}

int
cluster_read_config(struct cluster_rec *rec, const char *id, char **conf, size_t *conf_len,
		    char **tuned, size_t *tuned_len)
{
	char name[64], *mac = NULL, want[65], got[CLUSTER_ID_LEN + 1];
	size_t mlen = 0;
	int rc;

	*conf = *tuned = NULL;
	*conf_len = *tuned_len = 0;
	if (!valid_id(id))
		return -EINVAL;
	snprintf(name, sizeof(name), "%s.conf", id);
	if ((rc = cluster_rec_read(rec, rec->config, name, REC_MAX, conf, conf_len)) < 0)
		goto fail;
	snprintf(name, sizeof(name), "%s.tuned", id);
	rc = cluster_rec_read(rec, rec->config, name, REC_MAX, tuned, tuned_len);
	if (rc < 0 && rc != -ENOENT)
		goto fail;
	snprintf(name, sizeof(name), "%s.mac", id);
	if ((rc = cluster_rec_read(rec, rec->config, name, 256, &mac, &mlen)) < 0 && rc != -ENOENT)
		goto fail;
	cluster_config_id(*conf, *conf_len, *tuned, *tuned_len, got);
	config_mac(rec, id, *conf, *conf_len, *tuned, *tuned_len, want);
	if (strcmp(got, id) != 0) {
		snprintf(rec->err, sizeof(rec->err),
			 "%s/config/%s.conf is not configuration %s (its content hashes to %s): "
			 "refused",
			 rec->path, id, id, got);
		rc = -EBADMSG;
	} else if (!mac || !mac_eq(want, mac)) {
		snprintf(rec->err, sizeof(rec->err),
			 "configuration %s in %s/config is %s with this node's key (%s): refused",
			 id, rec->path, mac ? "not signed" : "unsigned", CLUSTER_KEY_PATH);
		rc = -EBADMSG;
	} else {
		free(mac);
		return 0;
	}
fail:
	free(mac);
	free(*conf);
	free(*tuned);
	*conf = *tuned = NULL;
	return rc;
}

void
cluster_node_stamp(struct cluster_node_rec *r)
{
	timeutil_now_iso(r->time, sizeof(r->time));
}

int
cluster_write_node(struct cluster_rec *rec, const struct cluster_node_rec *r)
{
	char mac[65];
	struct buf b;
	json_t *o;
	int rc;

	buf_init(&b);
	node_text(&b, r);
	cluster_rec_mac(rec, b.data, b.len, mac);
	buf_clear(&b);
	o = json_pack("{s:s, s:s, s:I, s:I, s:b, s:b, s:s, s:s, s:s}", "address", r->addr, "id",
		      r->id, "followed", (json_int_t)r->followed, "local_generation",
		      (json_int_t)r->local_generation, "ok", r->ok, "alone", r->alone, "error",
		      r->error, "time", r->time, "mac", mac);
	rc = write_json(rec, rec->nodes, r->addr, o);
	json_decref(o);
	return rc;
}

/* Fills r from its record o, or says in r->refused why it is not taken. */
static void
take_node(struct cluster_rec *rec, struct cluster_node_rec *r, json_t *o)
{
	struct cluster_node_rec t = { 0 };
	char mac[65];
	struct buf b;

	snprintf(t.addr, sizeof(t.addr), "%s", r->addr);
	copy_str(t.id, sizeof(t.id), o, "id");
	copy_str(t.error, sizeof(t.error), o, "error");
	copy_str(t.time, sizeof(t.time), o, "time");
	t.followed = (long)json_integer_value(json_object_get(o, "followed"));
	t.local_generation = (long)json_integer_value(json_object_get(o, "local_generation"));
	t.ok = json_is_true(json_object_get(o, "ok"));
	t.alone = json_is_true(json_object_get(o, "alone"));
	buf_init(&b);
	node_text(&b, &t);
	cluster_rec_mac(rec, b.data, b.len, mac);
	buf_clear(&b);
	if (!mac_eq(mac, json_string_value(json_object_get(o, "mac"))))
		snprintf(r->refused, sizeof(r->refused),
			 "its report nodes/%s is not signed with this node's key", r->addr);
	else if ((*t.id && !valid_id(t.id)) || t.followed < 0 || t.followed > CLUSTER_GEN_MAX)
		snprintf(r->refused, sizeof(r->refused), "its report nodes/%s is garbled", r->addr);
	else
		*r = t;
}

int
cluster_read_nodes(const struct model *m, struct cluster_rec *rec, struct cluster_node_rec **out)
{
	struct cluster_node_rec *v = xcalloc(m->cluster.nodes.n + 1, sizeof(*v));
	size_t i;

	for (i = 0; i < m->cluster.nodes.n; i++) {
		json_t *o;
		int rc;

		snprintf(v[i].addr, sizeof(v[i].addr), "%s", m->cluster.nodes.v[i]);
		o = read_json(rec, rec->nodes, m->cluster.nodes.v[i], &rc);
		if (!o) {
			if (rc != -ENOENT)
				snprintf(v[i].refused, sizeof(v[i].refused), "%.250s", rec->err);
			continue;
		}
		take_node(rec, &v[i], o);
		json_decref(o);
	}
	*out = v;
	return 0;
}

static bool
str_differs(const char *a, const char *b)
{
	return (a || b) && (!a || !b || strcmp(a, b) != 0);
}

const char *
cluster_trust_differs(const struct model *m, const struct model *nm)
{
	static char what[64];
	size_t i;

	for (i = 0; i < SVC_COUNT; i++) {
		if (str_differs(m->services.svc_start[i], nm->services.svc_start[i]))
			return snprintf(what, sizeof(what), "services.%s.start", svc_name(i)), what;
		if (str_differs(m->services.svc_pidfile[i], nm->services.svc_pidfile[i]))
			return snprintf(what, sizeof(what), "services.%s.pidfile", svc_name(i)),
			       what;
		if (str_differs(m->services.svc_backend[i], nm->services.svc_backend[i]))
			return snprintf(what, sizeof(what), "services.%s.backend", svc_name(i)),
			       what;
	}
	if (str_differs(m->services.backend, nm->services.backend))
		return "services.backend";
	if (str_differs(m->cluster.lock, nm->cluster.lock))
		return "cluster.lock";
	if (str_differs(m->cluster.filesystem, nm->cluster.filesystem))
		return "cluster.filesystem";
	if (m->cluster.nodes.n != nm->cluster.nodes.n)
		return "cluster.nodes";
	for (i = 0; i < m->cluster.nodes.n; i++)
		if (strcmp(m->cluster.nodes.v[i], nm->cluster.nodes.v[i]) != 0)
			return "cluster.nodes";
	return NULL;
}
