/* model.h - the validated configuration as plain data. No I/O lives here. */
#ifndef NASTUNE_MODEL_H
#define NASTUNE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "knobs.h"

/* Where a value came from; file points into model->files (not owned here). */
struct loc {
	const char *file;
	int line;
};

struct strlist {
	char **v;
	size_t n;
};

enum nfs_server { NFS_SERVER_KERNEL, NFS_SERVER_GANESHA };
enum mtu_mode { MTU_KEEP, MTU_AUTO, MTU_FIXED };
/* The range of tuning.false_positives and tune --false-positives (the default: TUNE_ALPHA). */
#define TUNE_ALPHA_MIN 0.0001
#define TUNE_ALPHA_MAX 0.2

enum tune_goal { GOAL_THROUGHPUT, GOAL_SMALL_FILES, GOAL_VIDEO, GOAL_BALANCED };
/* The services nastune configures; order is fixed (service.c, render.c index by it). The
 * daemons come first (services.<name> config groups exist for them); SVC_SYS is the kernel's
 * sysctl file (sysctl -p), SVC_SELF nastune's own tuned.conf (nothing to reload). */
enum svc { SVC_SMB, SVC_NFS, SVC_AFP, SVC_MDNS, SVC_SYS, SVC_SELF, SVC_COUNT };
#define SVC_DAEMONS (SVC_MDNS + 1)

struct share {
	char *name;
	char *path;
	char *comment;	    /* NULL: none */
	unsigned protocols; /* PROTO_* */
	bool read_only;
	bool guest;
	struct strlist valid_users;
	bool tm_enabled;
	uint64_t tm_max_size; /* bytes; 0: no limit */
	struct strlist nfs_clients;
	bool nfs_async_set;   /* nfs.async written for this share: overrides nfs.export_sync */
	bool nfs_async;	      /* only with tuning.allow_unsafe; see knob_export_async() */
	uint32_t nfs_fsid;    /* stable, derived from the path */
	bool allow_semantics; /* allow = ["semantics"]: knob values that change what this
			       * share's clients see may apply to it (knob_consented) */
	/* A tune measures on this share: its trials may install values that change what
	 * clients see here, for the trial only (never applied without allow_semantics). */
	bool trial_semantics;
	struct loc loc, loc_name, loc_path, loc_users, loc_clients;
};

/* A knob's value (knobs.h), canonical as knob_parse writes it; NULL value: unset. */
struct knob_setting {
	char *value;
	enum knob_src src;
	struct loc loc; /* where it was set */
};

struct user {
	char *name;
	struct loc loc;
};

struct model {
	char *profile;
	struct {
		char *name; /* NetBIOS and mDNS name; NULL: the host name */
		char *workgroup;
		char *description; /* smb "server string" */
		char *model;	   /* Apple model shown to Macs */
		struct strlist interfaces;
	} server;
	struct {
		char *interface; /* NULL: none configured */
		enum mtu_mode mtu_mode;
		int mtu; /* MTU_FIXED only */
		struct strlist peers;
	} network;
	struct {
		bool enabled;
		char *min_protocol;
		char *signing;
		char *encryption;
		bool apple; /* fruit globals even without Time Machine */
	} smb;
	struct {
		bool enabled;
		enum nfs_server server;
		bool v3, v4;
	} nfs;
	struct {
		bool enabled;
		char *cnid_scheme;
	} afp;
	struct user *users;
	size_t n_users;
	struct share *shares;
	size_t n_shares;
	struct {
		enum tune_goal goal;
		bool allow_unsafe;    /* allow_unsafe = true, or "unsafe" in allow */
		bool allow_semantics; /* "semantics" in allow: on every share */
		unsigned budget_s;
		double false_positives; /* the tune's false-positive budget; 0: TUNE_ALPHA */
	} tuning;
	/* tuning.knobs (KNOB_CONFIG) over tuned.conf (KNOB_TUNED), indexed by enum knob_id. */
	struct knob_setting knobs[KNOB_COUNT];
	struct {
		char *backend;		      /* auto | systemd | pidfile | none */
		char *svc_backend[SVC_COUNT]; /* per service override, or NULL */
		char *svc_pidfile[SVC_COUNT]; /* pidfile override, or NULL */
		/* The shell command line that starts the daemon (pidfile backend: a restart
		 * stops it and runs this), or NULL: restarts fall back to reloads. */
		char *svc_start[SVC_COUNT];
	} services;
	/* Facts about this host that decide whether a knob can work here, found by the command
	 * layer when a command needs them (cli_host_facts); the pure code only reads them. */
	struct {
		int io_uring;		/* smbd and the kernel can use io_uring: 1, 0; -1 unknown */
		char io_uring_why[256]; /* when 0: why not */
	} host;
	/* A CTDB cluster (cluster = { ... }): the same file on every node. */
	struct {
		bool enabled;
		char *name;			  /* the cluster's SMB and Bonjour name */
		struct strlist nodes;		  /* private addresses, in ctdb's node order */
		struct strlist public_addresses;  /* "ADDR/PREFIX" */
		struct strlist public_interfaces; /* per address: its interface, "" = interface */
		char *interface;		  /* where public addresses go by default */
		char *lock;			  /* a path, or "!helper ARGS" */
		char *filesystem;		  /* the cluster file system's mount point */
		struct loc loc, loc_nodes, loc_public, loc_lock, loc_fs;
	} cluster;
	/* Files the model was read from, in order (preset first); owned. */
	struct strlist files;
};

struct model *model_new(void);
void model_free(struct model *m);

/* The name of one PROTO_* bit ("smb", "nfs", "afp"), or NULL; and the bit of a name, or 0. */
const char *model_proto_name(unsigned proto);
unsigned model_proto_bit(const char *name);
/* true when any share uses proto (and the protocol is enabled). */
bool model_uses(const struct model *m, unsigned proto);
/* true when any share is a Time Machine target. */
bool model_has_time_machine(const struct model *m);
/* true when smb.conf serves its shares with the vfs_fruit stack: protocols.smb.apple, or a
 * Time Machine share served by an enabled protocol (one fruit share makes every share fruit). */
bool model_smb_fruit(const struct model *m);

void strlist_add(struct strlist *l, const char *s);
void strlist_clear(struct strlist *l);
bool strlist_has(const struct strlist *l, const char *s);

const char *goal_name(enum tune_goal g);
/* FNV-1a of s: stable ids (NFS fsid, Ganesha Export_Id) derived from a share path. */
uint32_t model_hash32(const char *s);
/* "smb", "nfs", "afp", "mdns", "sys", "nastune" */
const char *svc_name(enum svc s);

/* Whether the share's NFS clients admit this host over loopback (so a loopback benchmark of the
 * export can work). */
bool model_nfs_loopback_ok(const struct share *s);

/* ---- the knobs (knobs.h) under this model ---- */

/* Whether k means anything under m: its protocol is enabled and serves a share, the NFS
 * server is the one it belongs to, and the host can run it as far as m->host knows
 * (smb.io_uring). Returns true, or false with the reason in why. */
bool knob_applicable(const struct model *m, const struct knob *k, char *why, size_t whylen);
/* Whether a value of k that changes what clients see (knob_value_visible) may apply to share
 * sh: always for knobs not of class KNOB_SEMANTICS; for those, only with the consent of
 * tuning.allow = ["semantics"] or of the share's own allow = ["semantics"], and never to a
 * share whose fruit stack needs the default (k->keep: Time Machine keeps fruit:metadata =
 * stream, every fruit share keeps ea support). sh NULL: the server as a whole, for a place
 * that is not per share (tuning.allow only). During a tune's trials (share.trial_semantics)
 * the shares it measures consent too, and for sh NULL the server does while any does. Pure;
 * the renderer and the tuner call it. */
bool knob_consented(const struct model *m, const struct knob *k, const struct share *sh);
/* Whether a visible value of k could apply to at least one share of m (knob_consented for
 * some share k's protocol serves). */
bool knob_consented_any(const struct model *m, const struct knob *k);
/* knob_consented_any without the trials' leave (share.trial_semantics): whether the
 * configuration itself consents, so that a tune may apply a visible value of k. */
bool knob_consent_given(const struct model *m, const struct knob *k);
/* Whether m's own settings permit value for k, whoever sets it: unsafe values need
 * tuning.allow_unsafe; values that change what clients see need a consent
 * (knob_consented_any) and name what would change in why; smb.server_signing / smb.smb_encrypt
 * never go below a configured "desired" or "required" (protocols.smb.signing / .encryption; weaker
 * settings demand nothing); nfs.versions only serves versions protocols.nfs.versions lists. value
 * must be canonical. Returns true, or false with the reason in why. */
bool knob_value_permitted(const struct model *m, const struct knob *k, const char *value, char *why,
			  size_t whylen);
/* Whether tune may try value for k under m: the knob is applicable, not pinned in
 * nastune.conf, not managed elsewhere (net.mtu: only with network.interface and peers to
 * prove it, and not a fixed network.mtu; tune must further keep to MTUs the peers passed),
 * value parses, and knob_value_permitted. Returns true, or false with the reason in why. */
bool knob_allowed(const struct model *m, const struct knob *k, const char *value, char *why,
		  size_t whylen);
/* Whether values a and b of k behave the same under m, as the daemon documents it: then
 * tune measures only one of them. smb.smb_encrypt: "default" is "if_required" (smb.conf(5));
 * smb.server_signing: with SMB1 off (protocols.smb.min_protocol not NT1), SMB2 signing can
 * only be required or not, so everything but "required" is one behaviour on a server that
 * is not a domain controller (nastune never makes one). NULL stands for k->dflt. When true,
 * why (if given) says so in one sentence. */
bool knob_same(const struct model *m, const struct knob *k, const char *a, const char *b, char *why,
	       size_t whylen);
/* The value in force for k: m's setting, or NULL when unset (the daemon's default). */
const char *knob_value(const struct model *m, enum knob_id id);
/* Where m's value of k came from. */
enum knob_src knob_source(const struct model *m, enum knob_id id);
/* Whether the kernel export of share index i is async: the share's own nfs.async when
 * written, else nfs.export_sync. The one place render decides sync/async. */
bool knob_export_async(const struct model *m, size_t share);

#endif
