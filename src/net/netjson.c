/* netjson.c - the network side's results as JSON (netjson.h). */
#include <errno.h>
#include <jansson.h>
#include <sys/socket.h>

#include "netif.h"
#include "netjson.h"
#include "probe.h"

static json_t *
int_or_null(int v, int unknown)
{
	return v == unknown ? json_null() : json_integer(v);
}

/* A stable word for --json consumers; the message is for people. */
const char *
netjson_reason(int r)
{
	switch (r) {
	case -ENODEV:
		return "no_such_interface";
	case -ERANGE:
		return "outside_driver_limits";
	case -EINVAL:
		return "invalid_value";
	case -EBUSY:
		return "bond_member";
	case -EADDRNOTAVAIL:
		return "peer_not_resolvable";
	case -EPERM:
	case -EACCES:
		return "permission_denied";
	case -EHOSTUNREACH:
		return "peer_unreachable";
	case -EPROTO:
		return "path_too_small";
	case -ETIMEDOUT:
		return "not_confirmed";
	default:
		return "system_error";
	}
}

json_t *
netjson_link(const struct netif_info *in)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", json_string(in->name));
	json_object_set_new(o, "ifindex", json_integer(in->ifindex));
	json_object_set_new(o, "mtu", json_integer(in->mtu));
	json_object_set_new(o, "min_mtu", int_or_null(in->min_mtu, 0));
	json_object_set_new(o, "max_mtu", int_or_null(in->max_mtu, 0));
	json_object_set_new(o, "kind", in->kind[0] ? json_string(in->kind) : json_null());
	json_object_set_new(o, "driver", in->driver[0] ? json_string(in->driver) : json_null());
	json_object_set_new(o, "operstate", json_string(in->operstate));
	json_object_set_new(o, "admin_up", json_boolean(in->admin_up));
	json_object_set_new(o, "speed_mbps", int_or_null(in->speed_mbps, -1));
	json_object_set_new(o, "master", in->master[0] ? json_string(in->master) : json_null());
	json_object_set_new(o, "parent", in->parent[0] ? json_string(in->parent) : json_null());
	return o;
}

json_t *
netjson_mtu_report(const char *ifname, const struct netif_mtu_report *rep)
{
	json_t *o = json_object(), *arr = json_array();
	size_t i;

	json_object_set_new(o, "interface", json_string(ifname));
	json_object_set_new(o, "old_mtu", json_integer(rep->old_mtu));
	json_object_set_new(o, "tried_mtu",
			    rep->tried_mtu ? json_integer(rep->tried_mtu) : json_null());
	json_object_set_new(o, "mtu", json_integer(rep->final_mtu));
	json_object_set_new(o, "changed", json_boolean(rep->changed));
	json_object_set_new(o, "reverted", json_boolean(rep->reverted));
	json_object_set_new(o, "elapsed_ms", json_integer(rep->elapsed_ms));
	for (i = 0; i < rep->npeers; i++) {
		const struct netif_mtu_peer *p = &rep->peers[i];
		json_t *e = json_object();

		json_object_set_new(e, "peer", json_string(p->peer));
		json_object_set_new(e, "address", p->addr[0] ? json_string(p->addr) : json_null());
		json_object_set_new(e, "reachable", json_boolean(p->reachable));
		json_object_set_new(e, "largest",
				    p->reachable ? json_integer(p->largest) : json_null());
		json_object_set_new(e, "peer_mtu",
				    p->peer_mtu ? json_integer(p->peer_mtu) : json_null());
		json_object_set_new(e, "elapsed_ms", json_integer(p->elapsed_ms));
		json_array_append_new(arr, e);
	}
	json_object_set_new(o, "peers", arr);
	json_object_set_new(o, "peers_mtu",
			    rep->peers_mtu ? json_integer(rep->peers_mtu) : json_null());
	return o;
}

json_t *
netjson_probe(const char *peer, const struct probe_result *res)
{
	json_t *e = json_object();

	json_object_set_new(e, "peer", json_string(peer));
	json_object_set_new(e, "address", json_string(res->addr));
	json_object_set_new(e, "family", json_integer(res->family == AF_INET6 ? 6 : 4));
	json_object_set_new(e, "reachable", json_boolean(res->reachable));
	json_object_set_new(e, "largest",
			    res->reachable ? json_integer(res->largest) : json_null());
	json_object_set_new(e, "min", json_integer(res->min));
	json_object_set_new(e, "max", json_integer(res->max));
	if (res->hint)
		json_object_set_new(e, "router_mtu", json_integer(res->hint));
	json_object_set_new(e, "peer_mtu",
			    res->peer_mtu ? json_integer(res->peer_mtu) : json_null());
	json_object_set_new(e, "probes", json_integer(res->probes));
	json_object_set_new(e, "elapsed_ms", json_integer(res->elapsed_ms));
	json_object_set_new(e, "raw_socket", json_boolean(res->raw));
	if (!res->reachable)
		json_object_set_new(e, "why", json_string(res->why));
	return e;
}
