/* netif.h - network interfaces: MTU, limits, driver and link state, over rtnetlink.
 *
 * The only module that talks to libnl. Functions return 0 or -errno; when they take
 * err/errlen, a failure also leaves one human sentence there (no "nastune:" prefix, no
 * newline) naming the interface, the cause and, where one exists, what to do. */
#ifndef NASTUNE_NETIF_H
#define NASTUNE_NETIF_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

struct netif_info {
	char name[IF_NAMESIZE];
	int ifindex;
	int mtu;
	int min_mtu;	    /* IFLA_MIN_MTU; 0 when the kernel does not say */
	int max_mtu;	    /* IFLA_MAX_MTU; 0 when the kernel does not say */
	char kind[16];	    /* IFLA_INFO_KIND: "veth", "bridge", "vlan", "bond"; "" physical */
	char driver[32];    /* ethtool driver name; "" unknown */
	char operstate[16]; /* "up", "down", "lowerlayerdown", "dormant", "unknown", ... */
	bool admin_up;	    /* IFF_UP */
	int speed_mbps;	    /* ethtool link speed; -1 unknown */
	int master_ifindex; /* IFLA_MASTER; 0 none */
	char master[IF_NAMESIZE]; /* "" none */
	char master_kind[16];
	int parent_ifindex;	  /* IFLA_LINK for stacked devices (vlan, macvlan); 0 none */
	char parent[IF_NAMESIZE]; /* "" none or in another namespace */
	int parent_mtu;		  /* 0 when parent is "" */
};

/* Every link in this network namespace, in ifindex order. *out is malloc'd; the caller
 * frees it with free(). Returns 0 or -errno. */
int netif_list(struct netif_info **out, size_t *n);
/* The same from netlink alone: driver "" and speed_mbps -1 (no ethtool, no sysfs), for the
 * callers that need only names and MTUs (the hardware fingerprint of every apply). */
int netif_list_quick(struct netif_info **out, size_t *n);

/* One link by name. Returns 0, -ENODEV when there is no such interface, or -errno. */
int netif_get_info(const char *ifname, struct netif_info *info);

/* The current MTU of ifname. Returns 0, -ENODEV, or -errno. */
int netif_get_mtu(const char *ifname, int *mtu);

/* Whether mtu may be set on the link described by info (pure: no I/O). Returns 0, or
 * -ERANGE outside the driver's limits, -EINVAL above a stacked device's parent (VLAN,
 * macvlan), -EBUSY for a bond or team member (the MTU belongs to the master); err says so. */
int netif_mtu_allowed(const struct netif_info *info, int mtu, char *err, size_t errlen);

/* Sets the MTU with rtnl_link_change after netif_mtu_allowed. Returns 0, -ENODEV, the
 * netif_mtu_allowed errors (nothing tried), -EPERM without CAP_NET_ADMIN, or the kernel's
 * -errno with its extended-ACK message in err when it sent one. */
int netif_set_mtu(const char *ifname, int mtu, char *err, size_t errlen);

enum netif_mtu_mode {
	NETIF_MTU_KEEP,	 /* touch nothing; report the current MTU */
	NETIF_MTU_AUTO,	 /* largest MTU every peer is proven to receive (up to 9216) */
	NETIF_MTU_FIXED, /* the given MTU, kept only if every peer receives it */
};

#define NETIF_MTU_AUTO_CEILING 9216

struct netif_mtu_peer {
	char peer[256]; /* as given */
	char addr[64];	/* numeric address probed */
	bool reachable;
	int largest;  /* largest DF packet that got through at the tried MTU; 0 none */
	int peer_mtu; /* largest whose reply came back whole: the peer's own MTU
		       * towards us (probe_result.peer_mtu); 0 not known */
	int elapsed_ms;
};

struct netif_mtu_report {
	int old_mtu;   /* before; what a rollback restores */
	int tried_mtu; /* the candidate set while probing; 0: none set */
	int final_mtu; /* in force on return */
	bool changed;  /* final_mtu != old_mtu */
	bool reverted; /* a candidate was set and then taken back */
	/* AUTO: the smallest MTU the peers use themselves, when known (the caller's ceiling
	 * from their facts, or their echo replies), and the peer it comes from ("" none). Auto
	 * never goes above it, whatever larger packets the peers happen to receive. */
	int peers_mtu;
	char peers_mtu_from[256];
	struct netif_mtu_peer *peers; /* npeers entries, owned: netif_mtu_report_clear */
	size_t npeers;
	int elapsed_ms;
};

/* Commit-confirm for the network.mtu setting. With peers, a changed MTU is kept only when
 * don't-fragment echoes of the full size reach every peer; otherwise the old MTU is put back.
 * A watchdog process, forked before the change, restores the old MTU if this process dies
 * before confirming (or after 120 s). AUTO also refuses to lower the MTU below the old one:
 * a peer that cannot take the old MTU is a black hole to fix, reported as an error. With no
 * peers, FIXED sets the MTU unverified and AUTO keeps it.
 *
 * AUTO never goes above the MTU the peers send with themselves: a peer whose echo reply to a
 * size S comes back in fragments uses an MTU below S, however much more its NIC receives.
 * For AUTO, mtu > 0 is a ceiling known beforehand (the agents' own MTUs from their facts:
 * tune_mtu_ceiling); 0: none.
 *
 * rep may be NULL; when given it is filled even on failure and freed with
 * netif_mtu_report_clear. Returns 0 (rep->final_mtu in force), or -errno with err set:
 * -ENODEV, -ERANGE, -EINVAL, -EBUSY, -EADDRNOTAVAIL (a peer does not resolve) — nothing
 * touched; -EPERM no privilege; -EHOSTUNREACH a peer answers no echo at all (nothing
 * changed); -EPROTO a peer does not receive full-size packets at the old or requested MTU
 * (old MTU in force, err names the peer and the largest size that passed); -errno from
 * netlink or the sockets (old MTU restored when it could be). */
int netif_mtu_ensure(const char *ifname, enum netif_mtu_mode mode, int mtu,
		     const char *const *peers, size_t npeers, struct netif_mtu_report *rep,
		     char *err, size_t errlen);

void netif_mtu_report_clear(struct netif_mtu_report *rep);

/* Whether -errno r of the calls above means the request itself was wrong (no such
 * interface, an MTU outside the driver's limits, a bond member, a peer that does not
 * resolve): nothing was touched, and the caller should say how to ask. */
bool netif_error_is_request(int r);

#endif
