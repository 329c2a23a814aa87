/* mdns.h - Bonjour through avahi-daemon: live publication and browsing.
 *
 * The only module that talks to the Avahi client library. The static records (the service
 * files under /etc/avahi/services) are rendered and installed by render/apply; this module
 * is for what lives only as long as a process (the agent, a tune) and for seeing what the
 * network sees. Functions return 0 or -errno and, when they take err/errlen, leave one
 * sentence there on failure. */
#ifndef NASTUNE_MDNS_H
#define NASTUNE_MDNS_H

#include <stdbool.h>
#include <stddef.h>

/* One resolved (or, with resolve off, only browsed) service instance. */
struct mdns_service {
	char *name;	/* instance name, e.g. "atlas" */
	char *type;	/* "_smb._tcp" */
	char *domain;	/* "local" */
	char iface[32]; /* interface it was seen on */
	int family;	/* 4 or 6 */
	char *host;	/* "atlas.local"; NULL unresolved */
	char *address;	/* numeric; NULL unresolved */
	int port;
	char **txt; /* "key=value" strings, in the order of the record */
	size_t ntxt;
	bool local; /* published by this host */
};

/* NAS-relevant types browsed by default. NULL-terminated. */
extern const char *const mdns_default_types[];

/* Browses types (NULL: mdns_default_types) for up to timeout_ms, resolving each instance
 * when resolve is set; family 0 (both), 4 or 6. Stops early once avahi says the cache is
 * exhausted and every resolver answered. *out (sorted by type, name, family, iface) is
 * malloc'd; free with mdns_services_free. Returns 0, -ENOENT when avahi-daemon is not
 * running or not reachable over D-Bus, or -errno. */
int mdns_browse(const char *const *types, int family, bool resolve, int timeout_ms,
		struct mdns_service **out, size_t *n, char *err, size_t errlen);
void mdns_services_free(struct mdns_service *v, size_t n);

/* What a publisher announces: one name, one or more service types on it. */
struct mdns_record {
	const char *type; /* "_nastune._tcp" */
	int port;
	const char *const *txt; /* "key=value"; may be NULL */
	size_t ntxt;
};

struct mdns_publisher;

/* Publishes the records under name in an entry group held by a background thread until
 * mdns_publisher_stop. A name taken on the network is replaced by Avahi's alternative
 * ("atlas #2", logged); when avahi-daemon restarts, everything is registered again by
 * itself. Waits up to wait_ms for the first registration to be established. Returns 0,
 * -ENOENT when avahi-daemon is not running (err says how to start it), -EINVAL for a bad
 * type or TXT, or -errno. */
int mdns_publisher_start(const char *name, const struct mdns_record *recs, size_t nrecs,
			 int wait_ms, struct mdns_publisher **out, char *err, size_t errlen);
/* The name in force now (after collisions) into buf; whether it is established. */
bool mdns_publisher_name(struct mdns_publisher *p, char *buf, size_t len);
/* Withdraws the records and frees p. NULL is fine. */
void mdns_publisher_stop(struct mdns_publisher *p);

/* v[0..n) as the JSON array `mdns browse --json` and `status --json` print: name, type,
 * domain, interface, family, host, address, port, txt, local. A new reference. */
struct json_t;
struct json_t *mdns_services_json(const struct mdns_service *v, size_t n);

#endif
