/* agentfacts.c - what the agents said besides results, typed: each agent's facts read once off
 * the wire, each failed job or unreached agent as the controller saw it, and both written back
 * as JSON at the edge, where a run's or a tune's document stores them. */
#include <jansson.h>
#include <stdlib.h>

#include "agentctl.h"
#include "xmalloc.h"

static char *
str_dup(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? xstrdup(s) : NULL;
}

static long long
int_of(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

void
agent_facts_parse(const json_t *msg, struct agent_facts *f)
{
	const json_t *nic = json_object_get(msg, "nic");

	*f = (struct agent_facts){
		.hostname = str_dup(msg, "hostname"),
		.os = str_dup(msg, "os"),
		.os_version = str_dup(msg, "os_version"),
		.nic = str_dup(nic, "name"),
		.address = str_dup(nic, "address"),
		.mtu = int_of(nic, "mtu"),
		.path_mtu = int_of(nic, "path_mtu"),
		.speed_mbps = int_of(nic, "speed_mbps"),
		.sent = json_deep_copy(msg),
	};
}

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void
agent_facts_copy(struct agent_facts *dst, const struct agent_facts *src)
{
	*dst = *src;
	dst->hostname = dup_or_null(src->hostname);
	dst->os = dup_or_null(src->os);
	dst->os_version = dup_or_null(src->os_version);
	dst->nic = dup_or_null(src->nic);
	dst->address = dup_or_null(src->address);
	dst->sent = json_deep_copy(src->sent);
}

void
agent_facts_clear(struct agent_facts *f)
{
	free(f->hostname);
	free(f->os);
	free(f->os_version);
	free(f->nic);
	free(f->address);
	json_decref(f->sent);
	*f = (struct agent_facts){ 0 };
}

void
agent_factset_clear(struct agent_factset *a)
{
	for (size_t i = 0; i < a->n; i++)
		agent_facts_clear(&a->v[i]);
	free(a->v);
	*a = (struct agent_factset){ 0 };
}

void
agent_errors_clear(struct agent_errors *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].client);
		free(e->v[i].target);
		free(e->v[i].protocol);
		free(e->v[i].workload);
		free(e->v[i].message);
	}
	free(e->v);
	*e = (struct agent_errors){ 0 };
}

void
agent_factset_json(const struct agent_factset *a, json_t *out)
{
	for (size_t i = 0; i < a->n; i++)
		json_array_append_new(out, json_deep_copy(a->v[i].sent));
}

/* Only the fields it has, in the order the controller has always written them; NULL (the
 * error left out, as json_pack did) when a string is not UTF-8. */
static json_t *
error_json(const struct agent_error *e)
{
	const struct {
		const char *key, *value;
	} f[] = { { "client", e->client },
		  { "target", e->target },
		  { "protocol", e->protocol },
		  { "workload", e->workload },
		  { "message", e->message } };
	json_t *o = json_object();

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].value && json_object_set_new(o, f[i].key, json_string(f[i].value)) < 0) {
			json_decref(o);
			return NULL;
		}
	json_object_set_new(o, "busy", json_boolean(e->busy));
	return o;
}

void
agent_errors_json(const struct agent_errors *e, json_t *out)
{
	for (size_t i = 0; i < e->n; i++)
		json_array_append_new(out, error_json(&e->v[i]));
}
