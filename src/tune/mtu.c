/* tune/mtu.c - the pure part of the tuner's MTU step: how far the peers' own MTUs let the
 * NIC's MTU go. A probe alone overstates it: veth and many NICs receive frames a few bytes
 * over their MTU, and TCP's MSS follows the smaller side, so those bytes carry nothing. */
#include <stdio.h>
#include <string.h>

#include "tune.h"

int
tune_mtu_ceiling(const struct tune_agents *agents, char *from, size_t fromlen)
{
	int best = 0;

	if (from && fromlen)
		from[0] = '\0';
	for (size_t i = 0; agents && i < agents->n; i++) {
		const struct agent_facts *f = &agents->v[i];
		/* The route towards the NAS can be narrower than the interface (a route mtu,
		 * a learned path MTU); an older agent reports only the interface. */
		long long mtu = f->path_mtu > 0 && (f->mtu <= 0 || f->path_mtu < f->mtu)
					? f->path_mtu
					: f->mtu;

		if (mtu < 68 || mtu > 65535)
			continue; /* not reported */
		if (!best || mtu < best) {
			best = (int)mtu;
			if (from && fromlen)
				snprintf(from, fromlen, "%s",
					 f->hostname && *f->hostname ? f->hostname : "an agent");
		}
	}
	return best;
}
