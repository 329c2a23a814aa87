/* cluster.h - a NAS of several nodes on CTDB: the files CTDB reads (pure), which node this
 * host is, the cluster's configuration record on the cluster file system, and what ctdb
 * says about the nodes and the public addresses.
 *
 * The record (<cluster.filesystem>/.nastune/cluster/, root-only): `desired` names the
 * configuration every node should run (its id, a counter bumped by each cluster-wide apply,
 * and the id before it); config/<id>.conf and config/<id>.tuned are the texts; nodes/<addr>
 * is each node's own report (the id it runs, the counter it last followed, whether that
 * apply worked). Functions return 0 or -errno unless said otherwise. */
#ifndef NASTUNE_CLUSTER_H
#define NASTUNE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* ---- the files CTDB reads: pure, identical on every node; caller frees ---- */
#define CLUSTER_CTDB_CONF "/etc/ctdb/ctdb.conf"
#define CLUSTER_NODES "/etc/ctdb/nodes"
#define CLUSTER_PUBLIC "/etc/ctdb/public_addresses"
/* nastune's event script: health, NFS grace on takeover, Bonjour, the record. */
#define CLUSTER_EVENT_SCRIPT "/etc/ctdb/events/legacy/90.nastune.script"
/* The Bonjour files the node holding the first public address publishes (staged here on
 * every node, copied into /etc/avahi by that node only). */
#define CLUSTER_BONJOUR_DIR "/etc/nastune/cluster/avahi/"

char *cluster_ctdb_conf(const struct model *m);
char *cluster_nodes_file(const struct model *m);
char *cluster_public_file(const struct model *m);
char *cluster_event_script(const struct model *m);
/* The staged Avahi hosts line: "ADDR NAME.local\n" for the first public address. */
char *cluster_bonjour_hosts(const struct model *m);
/* The cluster's mDNS host name, "NAME.local"; caller frees. */
char *cluster_host_name(const struct model *m);

/* ---- this host ---- */

/* The index in cluster.nodes of the node this host is: one of its interfaces has that
 * address, or NASTUNE_CLUSTER_NODE names it (tests, --root). Returns the index, or -ENOENT. */
int cluster_this_node(const struct model *m);

/* Whether the public address ("ADDR/PREFIX" or "ADDR") is on one of this host's
 * interfaces, i.e. CTDB placed it here. */
bool cluster_holds(const char *pub);
/* The first public address this node holds, into out (without the prefix): what a bench or
 * tune on a node measures through, as clients reach it. Returns its index, or -ENOENT. */
int cluster_local_public(const struct model *m, char *out, size_t len);

/* ---- the record ---- */
/* The record's top directory under cluster.filesystem: no share may reach it. */
#define CLUSTER_REC_TOP ".nastune"
#define CLUSTER_ID_LEN 16
/* The key every node signs and checks the record with: kept off the cluster file system,
 * the same bytes on every node (`nastune cluster join`), 64 hex digits. */
#define CLUSTER_KEY_PATH "/etc/nastune/cluster.key"
#define CLUSTER_KEY_LEN 32
/* Generations past this are a forged or broken record, not a busy cluster. */
#define CLUSTER_GEN_MAX 1000000000000L

/* The record, opened by handle and proven root's (recfs.c): the record directory and each
 * of its ancestors up to the cluster file system's root owned by the user nastune runs as
 * (root) and writable by no one else, every file a regular one likewise, nothing opened
 * through a link or blocking on a FIFO. */
struct cluster_rec {
	int dir, config, nodes; /* proven directory handles; -1 when closed */
	char *path;		/* the record directory, for messages */
	unsigned char key[CLUSTER_KEY_LEN];
	char err[512]; /* why the last call failed, for the user */
};

/* Opens <root><cluster.filesystem>/.nastune/cluster (create: makes what is missing, as
 * apply does) and loads the key. Returns 0; -ENOENT when there is no record and !create;
 * -EPERM when a directory or the key is not root's alone, -ENOKEY without a key (rec->err
 * says which and what to do); other -errno. Close with cluster_rec_close in every case. */
int cluster_rec_open(const struct model *m, const char *root, bool create, struct cluster_rec *rec);
void cluster_rec_close(struct cluster_rec *rec);
/* Reads name in the proven directory dirfd (at most max bytes, NUL-terminated; caller
 * frees): -ENOENT, -EPERM when it is not a regular file of root's alone (rec->err). */
int cluster_rec_read(struct cluster_rec *rec, int dirfd, const char *name, size_t max, char **out,
		     size_t *len);
/* Takes the record's cross-node lock (an fcntl lock on a file in the record: the cluster
 * file system's locks are coherent, as CTDB requires), waiting up to wait_s. Returns the
 * lock's fd, or -ETIMEDOUT / -errno (rec->err). Closing the fd releases it. */
int cluster_rec_lock(struct cluster_rec *rec, int wait_s);
/* HMAC-SHA256 of text under the record's key, as hex. */
void cluster_rec_mac(const struct cluster_rec *rec, const char *text, size_t len, char out[65]);
/* Installs the cluster key: a copy of from (a key file, "-" for stdin), or a new random key
 * when from is NULL and none exists yet. Returns 0, or -errno with err set. */
int cluster_key_install(const char *root, const char *from, char *err, size_t errlen);

struct cluster_desired {
	char id[CLUSTER_ID_LEN + 1];   /* the configuration every node should run */
	char prev[CLUSTER_ID_LEN + 1]; /* the one before ("" none) */
	long generation;	       /* bumped by each cluster-wide apply; 0: none yet, -1:
					* the record's is corrupt or refused */
	char from[64];		       /* the node that applied it */
};

struct cluster_node_rec {
	char addr[64];
	char id[CLUSTER_ID_LEN + 1]; /* the configuration it runs; "" unknown */
	long followed;		     /* the desired generation it last followed */
	long local_generation;	     /* nastune's generation number on that node */
	bool ok;		     /* its last apply worked */
	bool alone;		     /* applied on that node only (apply --this-node) */
	char error[512];
	char time[32];
	char refused[256]; /* why its record was not taken (mis-signed...); "" none */
};

/* The id of a configuration: the SHA-256 of the texts, shortened. */
void cluster_config_id(const char *conf, size_t conf_len, const char *tuned, size_t tuned_len,
		       char out[CLUSTER_ID_LEN + 1]);
/* Reads `desired`: 0, -ENOENT when the cluster has none yet (d zeroed), -EBADMSG when it is
 * truncated, garbled or not signed with this node's key (d->generation -1, rec->err). */
int cluster_read_desired(struct cluster_rec *rec, struct cluster_desired *d);
/* Under the record's lock: when `desired` is still base (what the caller read before it
 * applied; generation 0 none, -1 corrupt), stores the texts under their id and makes them
 * desired (generation bumped past every node's, prev the current one), then reads it back.
 * -EAGAIN when another node published since base (d: what it published). */
int cluster_publish(const struct model *m, struct cluster_rec *rec,
		    const struct cluster_desired *base, const char *conf, size_t conf_len,
		    const char *tuned, size_t tuned_len, const char *from,
		    struct cluster_desired *d);
/* Makes a stored id desired again (a rollback), only while desired is still expect;
 * -EAGAIN otherwise (d: what is desired now). */
int cluster_republish(const struct model *m, struct cluster_rec *rec,
		      const struct cluster_desired *expect, const char *id, const char *from,
		      struct cluster_desired *d);
/* The texts of id, their id and signature checked (tuned may come back NULL: none); caller
 * frees. -EBADMSG (rec->err) when they are not what id and the key say. */
int cluster_read_config(struct cluster_rec *rec, const char *id, char **conf, size_t *conf_len,
			char **tuned, size_t *tuned_len);
/* r->time: now, in UTC, as the record shows when a node last wrote it. */
void cluster_node_stamp(struct cluster_node_rec *r);
int cluster_write_node(struct cluster_rec *rec, const struct cluster_node_rec *r);
/* One record per cluster.nodes entry, in that order (a node without one: id "", ok false; one
 * refused: refused says why); caller frees *out. */
int cluster_read_nodes(const struct model *m, struct cluster_rec *rec,
		       struct cluster_node_rec **out);
/* What a followed configuration nm would change that a node takes from its own m only
 * (start commands, pid files, the lock, the file system, the nodes): the setting's name, or
 * NULL when none. */
const char *cluster_trust_differs(const struct model *m, const struct model *nm);

/* ---- ctdb's view ---- */
enum cluster_node_state {
	CN_OK,
	CN_UNHEALTHY,
	CN_DISCONNECTED,
	CN_BANNED,
	CN_INACTIVE,
	CN_UNKNOWN
};
const char *cluster_state_name(enum cluster_node_state s);

struct cluster_view {
	enum cluster_node_state *state; /* per cluster.nodes entry */
	char **holder;	/* per public address: the node address holding it, or NULL */
	size_t n_ips;	/* how many public addresses ctdbd serves (configured or not) */
	int this_pnn;	/* this node's index, -1 unknown */
	bool reachable; /* ctdbd answered */
	char err[256];
};

/* Asks the local ctdbd (`ctdb -X status`, `ctdb -X ip all`); v->reachable false with err
 * when it does not answer. Release with cluster_view_clear. */
void cluster_view_read(const struct model *m, struct cluster_view *v);
void cluster_view_clear(const struct model *m, struct cluster_view *v);
/* Asks every node to run its event scripts' ipreallocated event now (`ctdb ipreallocate`),
 * so they follow a new desired configuration without waiting for the next monitor event. */
int cluster_nudge(void);
/* Whether ctdbd serves exactly the configured public addresses, each held by a node. */
bool cluster_public_held(const struct model *m, const struct cluster_view *v);
/* Has every node reread its public_addresses (`ctdb reloadips all`): ctdbd keeps serving
 * the addresses it started with until told. Returns 0 or -errno. */
int cluster_reloadips(void);

/* Bonjour for the cluster: the node holding the first public address publishes the staged
 * records (and the cluster's name for that address) and reloads avahi-daemon; every other
 * node withdraws them. Returns 0, or -EIO when a record could not be written. */
int cluster_bonjour_update(const char *root, const struct model *m);
/* NFS-Ganesha's grace for an address ip this node takes (event 5) or releases (2), as
 * ctdb's Ganesha callout does: clients that held locks through it reclaim them first. */
void cluster_ganesha_grace(const struct model *m, int event, const char *ip);

#endif
