/* tune/mtu.c - the pure part of the tuner's MTU step: how far the peers' own MTUs let the
 * NIC's MTU go. A probe alone overstates it: veth and many NICs receive frames a few bytes
 * over their MTU, and TCP's MSS follows the smaller side, so those bytes carry nothing. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "tune.h"

int
tune_mtu_ceiling(const json_t *agents, char *from, size_t fromlen)
{
	const json_t *f;
	size_t i;
	int best = 0;

	if (from && fromlen)
		from[0] = '\0';
	json_array_foreach(agents, i, f)
	{
		const json_t *nic = json_object_get(f, "nic");
		json_int_t path = json_integer_value(json_object_get(nic, "path_mtu"));
		json_int_t ifmtu = json_integer_value(json_object_get(nic, "mtu"));
		/* The route towards the NAS can be narrower than the interface (a route mtu,
		 * a learned path MTU); an older agent reports only the interface. */
		json_int_t mtu = path > 0 && (ifmtu <= 0 || path < ifmtu) ? path : ifmtu;
		const char *host = json_string_value(json_object_get(f, "hostname"));

		if (mtu < 68 || mtu > 65535)
			continue; /* not reported */
		if (!best || mtu < best) {
			best = (int)mtu;
			if (from && fromlen)
				snprintf(from, fromlen, "%s", host && *host ? host : "an agent");
		}
	}
	return best;
}
