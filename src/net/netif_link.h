/* netif_link.h - inside src/net/: the link calls netif.c (the one file that speaks netlink)
 * gives netif_mtu.c, below the checks netif.h's callers go through. */
#ifndef NASTUNE_NETIF_LINK_H
#define NASTUNE_NETIF_LINK_H

#include <stdbool.h>
#include <stddef.h>

#define NETIF_NL_TIMEOUT_S 5 /* bound on every netlink reply */

/* Whether a link of this kind (vlan, macvlan, ipvlan, ...) sits on a parent link. */
bool netif_is_stacked(const char *kind);

/* rtnl_link_change without the checks; ifname must exist. */
int netif_change_mtu(const char *ifname, int mtu, char *err, size_t errlen);

#endif
