/* probe.h - don't-fragment ICMP echo probes: the largest packet that reaches a peer.
 *
 * Sizes are whole IP packets (what an MTU limits): an IPv4 echo of size S carries S - 28
 * bytes of ICMP payload, an IPv6 echo S - 48. Every wait is bounded; no libnl here. */
#ifndef NASTUNE_PROBE_H
#define NASTUNE_PROBE_H

#include <stdbool.h>

#define PROBE_MIN_V4 68	  /* smallest IPv4 MTU (RFC 791) */
#define PROBE_MIN_V6 1280 /* IPv6 minimum link MTU (RFC 8200) */

struct probe_opts {
	const char *ifname;   /* NULL: where the route goes; else bound to this interface */
	int max;	      /* largest size to try; 0: the route's MTU towards the peer */
	int timeout_ms;	      /* floor of the per-echo wait once the peer answered; 0: 50 */
	int first_timeout_ms; /* per-echo wait before the first answer; 0: 300 */
	int tries; /* echoes per size before it counts as lost; 0: 2 (3 at the minimum) */
};

struct probe_result {
	char addr[64];	/* numeric address probed */
	int family;	/* AF_INET or AF_INET6 */
	bool reachable; /* answered at the protocol minimum */
	int min;	/* protocol minimum searched from */
	int max;	/* upper bound searched to */
	int largest;	/* largest size that got through; 0 when unreachable */
	int hint;	/* next-hop MTU a router reported (ICMP frag needed/too big); 0: none */
	/* The largest size whose echo reply came back whole (not in fragments): the MTU the
	 * peer itself sends with towards us, which can be a few bytes below `largest` (many
	 * NICs, veth included, receive frames a little over their MTU). 0: not known (the
	 * kernel does not report fragments, or unreachable). */
	int peer_mtu;
	int probes; /* echo requests sent */
	int elapsed_ms;
	bool raw;      /* raw socket (root) rather than an unprivileged ping socket */
	char why[160]; /* unreachable or error: what was seen */
};

/* Finds the largest don't-fragment echo that reaches peer (IPv4 or IPv6 literal or name;
 * "fe80::1%lab0" for link-local). Returns 0 when the probe ran — r->reachable tells whether
 * the peer answered at all — or -errno with r->why set: -EADDRNOTAVAIL peer not resolvable,
 * -EPERM no ICMP socket allowed (needs CAP_NET_RAW or net.ipv4.ping_group_range),
 * -ENODEV o->ifname does not exist, other -errno from the socket calls. */
int probe_peer(const char *peer, const struct probe_opts *o, struct probe_result *r);

/* Sends up to o->tries don't-fragment echoes of exactly size bytes. Sets *passed when one is
 * answered. Returns 0, or -errno as probe_peer (r->why set); r may be NULL. */
int probe_size(const char *peer, const struct probe_opts *o, int size, bool *passed,
	       struct probe_result *r);

/* The search, without I/O so it can be tested. try(arg, size) returns 1 when size got
 * through, 0 when it did not, -errno to abort. Assumes sizes pass up to some limit and fail
 * above it. Checks lo (reachability), then hi, then bisects. Returns 0 with *best set,
 * -EHOSTUNREACH when lo does not pass, or try's error. */
typedef int (*probe_try_fn)(void *arg, int size);
int probe_search(int lo, int hi, probe_try_fn try, void *arg, int *best);

/* probe_search for a try that also says how the reply came back: 2 whole, 1 in fragments
 * (or cannot tell), 0 lost. *own is then the largest size whose reply came back whole (the
 * peer's own MTU, at most *best), found with a few more tries between the largest whole and
 * the smallest fragmented reply seen; 0 when try never returned 2. Returns as probe_search. */
int probe_search_peer(int lo, int hi, probe_try_fn try, void *arg, int *best, int *own);

#endif
