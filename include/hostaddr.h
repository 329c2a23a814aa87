/* hostaddr.h - this host's interface addresses: the one getifaddrs() walk, for whoever needs to
 * know which interface holds an address or which addresses an interface holds. Portable
 * POSIX (the agent uses it on macOS too). */
#ifndef NASTUNE_HOSTADDR_H
#define NASTUNE_HOSTADDR_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>

struct hostaddr {
	char name[IF_NAMESIZE];	     /* the interface */
	int family;		     /* AF_INET or AF_INET6 */
	char addr[INET6_ADDRSTRLEN]; /* numeric, as inet_ntop writes it */
	union {
		struct in_addr in;
		struct in6_addr in6;
	} a;
};

/* The IPv4 and IPv6 addresses of this host's interfaces, in the order the OS lists them;
 * family AF_INET or AF_INET6 keeps that family only, AF_UNSPEC both. *out (n entries, NULL
 * when none) is the caller's to free(). Returns 0 or -errno from getifaddrs(). */
int hostaddr_list(int family, struct hostaddr **out, size_t *n);

#endif
