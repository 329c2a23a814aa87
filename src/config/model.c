/* model.c - constructors and queries for the plain-data model, and what it permits for each
 * knob. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model.h"
#include "xmalloc.h"

struct model *
model_new(void)
{
	struct model *m = xcalloc(1, sizeof(struct model));

	m->host.io_uring = -1;
	return m;
}

void
strlist_add(struct strlist *l, const char *s)
{
	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = xstrdup(s);
}

void
strlist_clear(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

bool
strlist_has(const struct strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return true;
	return false;
}

static void
share_release(struct share *s)
{
	free(s->name);
	free(s->path);
	free(s->comment);
	strlist_clear(&s->valid_users);
	strlist_clear(&s->nfs_clients);
}

void
model_free(struct model *m)
{
	size_t i;

	if (!m)
		return;
	free(m->profile);
	free(m->server.name);
	free(m->server.workgroup);
	free(m->server.description);
	free(m->server.model);
	strlist_clear(&m->server.interfaces);
	free(m->network.interface);
	strlist_clear(&m->network.peers);
	free(m->smb.min_protocol);
	free(m->smb.signing);
	free(m->smb.encryption);
	free(m->afp.cnid_scheme);
	for (i = 0; i < m->n_users; i++)
		free(m->users[i].name);
	free(m->users);
	for (i = 0; i < m->n_shares; i++)
		share_release(&m->shares[i]);
	free(m->shares);
	free(m->services.backend);
	for (i = 0; i < SVC_COUNT; i++) {
		free(m->services.svc_backend[i]);
		free(m->services.svc_pidfile[i]);
		free(m->services.svc_start[i]);
	}
	for (i = 0; i < KNOB_COUNT; i++)
		free(m->knobs[i].value);
	free(m->cluster.name);
	strlist_clear(&m->cluster.nodes);
	strlist_clear(&m->cluster.public_addresses);
	strlist_clear(&m->cluster.public_interfaces);
	free(m->cluster.interface);
	free(m->cluster.lock);
	free(m->cluster.filesystem);
	strlist_clear(&m->files);
	free(m);
}

static const char *const proto_names[] = { "smb", "nfs", "afp" };

const char *
model_proto_name(unsigned proto)
{
	for (unsigned i = 0; i < 3; i++)
		if (proto == 1u << i)
			return proto_names[i];
	return NULL;
}

unsigned
model_proto_bit(const char *name)
{
	for (unsigned i = 0; i < 3; i++)
		if (name && strcmp(name, proto_names[i]) == 0)
			return 1u << i;
	return 0;
}

static bool
proto_enabled(const struct model *m, unsigned proto)
{
	switch (proto) {
	case PROTO_SMB:
		return m->smb.enabled;
	case PROTO_NFS:
		return m->nfs.enabled;
	case PROTO_AFP:
		return m->afp.enabled;
	}
	return false;
}

bool
model_uses(const struct model *m, unsigned proto)
{
	size_t i;

	if (!proto_enabled(m, proto))
		return false;
	for (i = 0; i < m->n_shares; i++)
		if (m->shares[i].protocols & proto)
			return true;
	return false;
}

bool
model_has_time_machine(const struct model *m)
{
	size_t i;

	for (i = 0; i < m->n_shares; i++)
		if (m->shares[i].tm_enabled)
			return true;
	return false;
}

bool
model_smb_fruit(const struct model *m)
{
	size_t i;

	if (!m->smb.enabled)
		return false;
	if (m->smb.apple)
		return true;
	for (i = 0; i < m->n_shares; i++) {
		const struct share *sh = &m->shares[i];

		if (sh->tm_enabled &&
		    ((sh->protocols & PROTO_SMB) || (sh->protocols & PROTO_AFP && m->afp.enabled)))
			return true;
	}
	return false;
}

const char *
goal_name(enum tune_goal g)
{
	switch (g) {
	case GOAL_THROUGHPUT:
		return "throughput";
	case GOAL_SMALL_FILES:
		return "small-files";
	case GOAL_VIDEO:
		return "video";
	case GOAL_BALANCED:
		return "balanced";
	}
	return "?";
}

const char *
svc_name(enum svc s)
{
	static const char *const names[SVC_COUNT] = {
		"smb", "nfs", "afp", "mdns", "sys", "nastune"
	};

	return (unsigned)s < SVC_COUNT ? names[s] : "?";
}

uint32_t
model_hash32(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

bool
model_nfs_loopback_ok(const struct share *s)
{
	size_t i;

	for (i = 0; i < s->nfs_clients.n; i++) {
		const char *c = s->nfs_clients.v[i];

		if (strcmp(c, "*") == 0 || strncmp(c, "127.", 4) == 0 ||
		    strcmp(c, "localhost") == 0 || strcmp(c, "0.0.0.0/0") == 0)
			return true;
	}
	return false;
}

/* ---- the knobs under this model ---- */

/* Strength of a signing or encryption setting, in either vocabulary (the config's words and
 * Samba's): 0 off, 1 offered when asked, 2 desired, 3 required. */
static int
smb_strength(const char *v)
{
	if (!v)
		return 1;
	if (strcmp(v, "disabled") == 0 || strcmp(v, "off") == 0)
		return 0;
	if (strcmp(v, "desired") == 0)
		return 2;
	if (strcmp(v, "required") == 0 || strcmp(v, "mandatory") == 0)
		return 3;
	return 1; /* default, auto, if_required */
}

bool
knob_applicable(const struct model *m, const struct knob *k, char *why, size_t whylen)
{
	if (k->proto) {
		const char *p = k->proto == PROTO_SMB	? "smb"
				: k->proto == PROTO_NFS ? "nfs"
							: "afp";
		bool enabled = k->proto == PROTO_SMB   ? m->smb.enabled
			       : k->proto == PROTO_NFS ? m->nfs.enabled
						       : m->afp.enabled;

		if (!enabled) {
			snprintf(why, whylen,
				 "not applicable: %s is disabled (protocols.%s.enabled)", p, p);
			return false;
		}
		if (!model_uses(m, k->proto)) {
			snprintf(why, whylen, "not applicable: no share is served over %s", p);
			return false;
		}
	}
	if (k->place == KNOB_AT_EXPORTS && m->nfs.server != NFS_SERVER_KERNEL) {
		snprintf(why, whylen,
			 "not applicable: the NFS server is ganesha (kernel exports "
			 "only)");
		return false;
	}
	if ((k->place == KNOB_AT_GANESHA_CORE || k->place == KNOB_AT_GANESHA_EXPORT) &&
	    m->nfs.server != NFS_SERVER_GANESHA) {
		snprintf(why, whylen,
			 "not applicable: the NFS server is kernel (NFS-Ganesha "
			 "only; the kernel's threads and versions live in /etc/nfs.conf, which "
			 "nastune does not manage)");
		return false;
	}
	if (k->id == KNOB_SMB_IO_URING && m->host.io_uring == 0) {
		snprintf(why, whylen, "not applicable: this host cannot run it: %s",
			 m->host.io_uring_why);
		return false;
	}
	if ((strncmp(k->param, "fruit:", 6) == 0 || strncmp(k->param, "readdir_attr:", 13) == 0) &&
	    !model_smb_fruit(m)) {
		snprintf(why, whylen,
			 "not applicable: no share is served with vfs_fruit (protocols.smb.apple "
			 "or a Time Machine share)");
		return false;
	}
	if (k->place == KNOB_AT_NETLINK && !m->network.interface) {
		snprintf(why, whylen, "not applicable: no network.interface to set the MTU of");
		return false;
	}
	return true;
}

/* Whether the fruit stack of share sh needs k's default (k->keep). */
static bool
knob_kept(const struct model *m, const struct knob *k, const struct share *sh)
{
	if (!sh || !(sh->protocols & PROTO_SMB) || !model_smb_fruit(m))
		return false;
	return k->keep == KNOB_KEEP_FRUIT || (k->keep == KNOB_KEEP_TM && sh->tm_enabled);
}

/* The consent of sh (NULL: the server's own sections), with the trials' leave or without. */
static bool
consented(const struct model *m, const struct knob *k, const struct share *sh, bool trial)
{
	bool any_trial = false;

	if (k->safety != KNOB_SEMANTICS)
		return true;
	if (knob_kept(m, k, sh))
		return false;
	if (m->tuning.allow_semantics || (sh && sh->allow_semantics))
		return true;
	if (!trial)
		return false;
	for (size_t i = 0; !sh && i < m->n_shares; i++)
		any_trial |= m->shares[i].trial_semantics;
	return sh ? sh->trial_semantics : any_trial;
}

bool
knob_consented(const struct model *m, const struct knob *k, const struct share *sh)
{
	return consented(m, k, sh, true);
}

static bool
consented_any(const struct model *m, const struct knob *k, bool trial)
{
	size_t i;

	if (k->safety != KNOB_SEMANTICS)
		return true;
	for (i = 0; i < m->n_shares; i++)
		if ((!k->proto || m->shares[i].protocols & k->proto) &&
		    consented(m, k, &m->shares[i], trial))
			return true;
	return false;
}

bool
knob_consented_any(const struct model *m, const struct knob *k)
{
	return consented_any(m, k, true);
}

bool
knob_consent_given(const struct model *m, const struct knob *k)
{
	return consented_any(m, k, false);
}

bool
knob_value_permitted(const struct model *m, const struct knob *k, const char *value, char *why,
		     size_t whylen)
{
	if (knob_value_visible(k, value) && !knob_consented_any(m, k)) {
		bool kept = false;
		size_t i;

		for (i = 0; i < m->n_shares; i++)
			kept |= (m->shares[i].protocols & k->proto) &&
				knob_kept(m, k, &m->shares[i]) &&
				(m->tuning.allow_semantics || m->shares[i].allow_semantics);
		if (kept)
			snprintf(why, whylen,
				 "%s = %s would reach only shares whose Apple support needs %s "
				 "(%s), which keep it — use %s",
				 k->name, value, k->dflt ? k->dflt : "the default",
				 k->keep == KNOB_KEEP_TM ? "Time Machine" : "vfs_fruit",
				 k->dflt ? k->dflt : "no value");
		else
			snprintf(why, whylen,
				 "%s = %s changes what clients see: %s — add \"semantics\" to "
				 "tuning.allow (every share) or allow = [\"semantics\"] to the "
				 "shares that may change",
				 k->name, value, k->changes);
		return false;
	}
	if (knob_value_unsafe(k, value) && !m->tuning.allow_unsafe) {
		snprintf(why, whylen,
			 "%s = %s may lose data on power loss — set "
			 "tuning.allow_unsafe = true to allow it, or use %s",
			 k->name, value, k->candidates[0]);
		return false;
	}
	if (k->id == KNOB_SMB_SERVER_SIGNING || k->id == KNOB_SMB_SMB_ENCRYPT) {
		const char *cfg =
			k->id == KNOB_SMB_SERVER_SIGNING ? m->smb.signing : m->smb.encryption;
		const char *key = k->id == KNOB_SMB_SERVER_SIGNING ? "signing" : "encryption";
		int floor = smb_strength(cfg);

		/* Only a demand is a floor: "default" and weaker ask for nothing. */
		if (floor >= 2 && smb_strength(value) < floor) {
			snprintf(why, whylen,
				 "%s = %s is weaker than protocols.smb.%s = \"%s\" — "
				 "use a stronger value, or relax protocols.smb.%s",
				 k->name, value, key, cfg, key);
			return false;
		}
	}
	if (k->id == KNOB_NFS_VERSIONS &&
	    ((strchr(value, '3') && !m->nfs.v3) || (strchr(value, '4') && !m->nfs.v4))) {
		snprintf(why, whylen,
			 "nfs.versions = %s serves a version protocols.nfs.versions "
			 "does not list — use \"%s\", or add the version there",
			 value, m->nfs.v3 ? "3" : "4");
		return false;
	}
	return true;
}

bool
knob_allowed(const struct model *m, const struct knob *k, const char *value, char *why,
	     size_t whylen)
{
	const struct knob_setting *s = &m->knobs[k->id];
	char canon[256], perr[256];

	if (!knob_applicable(m, k, why, whylen))
		return false;
	if (s->src == KNOB_CONFIG) {
		if (s->loc.file)
			snprintf(why, whylen, "pinned in nastune.conf (%s:%d)", s->loc.file,
				 s->loc.line);
		else
			snprintf(why, whylen, "pinned in nastune.conf");
		return false;
	}
	if (k->id == KNOB_NET_MTU && m->network.mtu_mode == MTU_KEEP) {
		snprintf(why, whylen, "network.mtu is \"keep\": nastune leaves the MTU alone");
		return false;
	}
	if (k->id == KNOB_NET_MTU && m->network.peers.n == 0) {
		snprintf(why, whylen, "no network.peers to prove an MTU against");
		return false;
	}
	if (knob_parse(k, value, canon, sizeof(canon), perr, sizeof(perr)) < 0) {
		snprintf(why, whylen, "%s", perr);
		return false;
	}
	return knob_value_permitted(m, k, canon, why, whylen);
}

bool
knob_same(const struct model *m, const struct knob *k, const char *a, const char *b, char *why,
	  size_t whylen)
{
	if (k->id == KNOB_NFS_VERSIONS) {
		/* Unset serves what protocols.nfs.versions lists: the same file as the knob set
		 * to exactly those versions. */
		const char *cfg = m->nfs.v3 && m->nfs.v4 ? "3,4" : m->nfs.v3 ? "3" : "4";
		bool same, unset = !a || !b;

		a = a ? a : cfg;
		b = b ? b : cfg;
		same = !strchr(a, '3') == !strchr(b, '3') && !strchr(a, '4') == !strchr(b, '4');
		if (same && unset && why)
			snprintf(
				why, whylen,
				"unset, nfs.versions serves what protocols.nfs.versions lists (%s)",
				cfg);
		return same;
	}
	if (!a)
		a = k->dflt;
	if (!b)
		b = k->dflt;
	if (!a || !b)
		return a == b;
	if (strcasecmp(a, b) == 0)
		return true;
	switch (k->id) {
	case KNOB_SMB_SMB_ENCRYPT: {
		/* None of these seals a session whose client does not ask for it, and no client
		 * the tune measures with asks: they differ only for a client that demands it. */
		static const char *const lax[] = { "default", "if_required", "off" };
		bool la = false, lb = false;

		for (size_t i = 0; i < 3; i++) {
			la |= strcmp(a, lax[i]) == 0;
			lb |= strcmp(b, lax[i]) == 0;
		}
		if (!la || !lb)
			return false;
		if (why)
			snprintf(why, whylen,
				 strcmp(a, "off") && strcmp(b, "off")
					 ? "\"default\" is \"if_required\" (smb.conf(5))"
					 : "neither \"%s\" nor \"%s\" seals a session the client "
					   "does not ask to seal, and the clients measured do not "
					   "ask "
					   "(smb.conf(5))",
				 a, b);
		return true;
	}
	case KNOB_SMB_SERVER_SIGNING:
		if (m->smb.min_protocol && strcmp(m->smb.min_protocol, "NT1") == 0)
			return false; /* SMB1 clients see the difference */
		if (strcmp(a, "required") == 0 || strcmp(b, "required") == 0)
			return false;
		if (why)
			snprintf(why, whylen,
				 "SMB2 signing is only ever required or not: \"%s\" "
				 "and \"%s\" both leave it to the client (smb.conf(5))",
				 a, b);
		return true;
	default:
		return false;
	}
}

const char *
knob_value(const struct model *m, enum knob_id id)
{
	return (unsigned)id < KNOB_COUNT ? m->knobs[id].value : NULL;
}

enum knob_src
knob_source(const struct model *m, enum knob_id id)
{
	return (unsigned)id < KNOB_COUNT && m->knobs[id].value ? m->knobs[id].src : KNOB_UNSET;
}

bool
knob_export_async(const struct model *m, size_t share)
{
	const struct share *sh = &m->shares[share];
	const char *v = m->knobs[KNOB_NFS_EXPORT_SYNC].value;

	if (sh->nfs_async_set)
		return sh->nfs_async;
	return v && strcmp(v, "async") == 0;
}
