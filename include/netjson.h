/* netjson.h - links, MTU reports and probes as the JSON objects `nastune mtu --json` prints
 * (fields documented in nastune(8)); the caller owns what is returned (json_decref). */
#ifndef NASTUNE_NETJSON_H
#define NASTUNE_NETJSON_H

#include <jansson.h>

struct netif_info;
struct netif_mtu_report;
struct probe_result;

/* One link of netif_list. */
json_t *netjson_link(const struct netif_info *in);
/* What netif_mtu_ensure did to ifname. */
json_t *netjson_mtu_report(const char *ifname, const struct netif_mtu_report *rep);
/* What probe_peer found for peer. */
json_t *netjson_probe(const char *peer, const struct probe_result *res);
/* A stable word for a -errno of the MTU calls ("no_such_interface", "not_confirmed", ...):
 * for scripts; the message is for people. */
const char *netjson_reason(int r);

#endif
