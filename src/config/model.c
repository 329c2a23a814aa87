/* model.c - constructors and queries for the plain-data model. */
#include <stdlib.h>
#include <string.h>

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
