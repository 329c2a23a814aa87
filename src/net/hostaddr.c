/* hostaddr.c - this host's interface addresses, from one getifaddrs() walk. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hostaddr.h"
#include "xmalloc.h"

int
hostaddr_list(int family, struct hostaddr **out, size_t *n)
{
	struct ifaddrs *ifs = NULL, *p;
	struct hostaddr *v = NULL;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (getifaddrs(&ifs) < 0)
		return -errno;
	for (p = ifs; p; p = p->ifa_next) {
		struct hostaddr *e;
		int f;

		if (!p->ifa_addr)
			continue;
		f = p->ifa_addr->sa_family;
		if ((f != AF_INET && f != AF_INET6) || (family != AF_UNSPEC && f != family))
			continue;
		v = xreallocarray(v, k + 1, sizeof(*v));
		e = &v[k++];
		memset(e, 0, sizeof(*e));
		snprintf(e->name, sizeof(e->name), "%s", p->ifa_name);
		e->family = f;
		if (f == AF_INET)
			e->a.in = ((struct sockaddr_in *)p->ifa_addr)->sin_addr;
		else
			e->a.in6 = ((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr;
		inet_ntop(f, &e->a, e->addr, sizeof(e->addr));
	}
	freeifaddrs(ifs);
	*out = v;
	*n = k;
	return 0;
}
