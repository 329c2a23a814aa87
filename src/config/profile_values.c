/* profile_values.c - the value checks more than one group uses: host names and addresses,
 * interface names, NFS client specs, user names; and a knob set with its origin. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_keys.h"
#include "xmalloc.h"

/* ---- value checks ---- */

static bool
is_hostname(const char *v)
{
	size_t label = 0;
	const char *p;

	if (!*v || strlen(v) > 253)
		return false;
	for (p = v; *p; p++) {
		if (*p == '.') {
			if (label == 0 || p[-1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)*p) || (*p == '-' && label > 0)))
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0 && p[-1] != '-';
}

bool
pf_is_ipaddr(const char *v, int *family)
{
	unsigned char b[16];

	if (inet_pton(AF_INET, v, b) == 1) {
		*family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, v, b) == 1) {
		*family = AF_INET6;
		return true;
	}
	return false;
}

/* Sets (value non-NULL) or clears knob id with its origin s. */
void
pf_set_knob(struct ld *ld, enum knob_id id, const char *value, enum knob_src src,
	    const config_setting_t *s)
{
	struct knob_setting *k = &ld->m->knobs[id];

	free(k->value);
	k->value = value ? xstrdup(value) : NULL;
	k->src = value ? src : KNOB_UNSET;
	k->loc = pf_loc_of(ld, s);
}

bool
pf_check_ifname(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	const char *p;

	if (!*v || strlen(v) > 15) {
		ERR(ld, s,
		    "%s '%s' is not an interface name — use 1 to 15 characters, e.g. "
		    "\"eth0\"",
		    what, v);
		return false;
	}
	for (p = v; *p; p++)
		if (*p == '/' || *p == ' ' || *p == ':' || *p == ',') {
			ERR(ld, s,
			    "%s '%s' is not an interface name — no '/', ':', ',' or "
			    "spaces",
			    what, v);
			return false;
		}
	return true;
}

bool
pf_check_peer(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	int fam;

	if (pf_is_ipaddr(v, &fam) || is_hostname(v))
		return true;
	ERR(ld, s,
	    "%s '%s' is neither an IP address nor a host name — write e.g. "
	    "\"192.0.2.20\" or \"mac-studio.local\"",
	    what, v);
	return false;
}

/* NFS client specs: address, CIDR, host name, wildcard host name, @netgroup. */
bool
pf_check_nfs_client(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	char host[256];
	const char *slash = strchr(v, '/'), *p;
	int fam;

	if (strcmp(v, "*") == 0)
		return true;
	if (v[0] == '@') {
		if (is_hostname(v + 1) ||
		    (v[1] &&
		     strspn(v + 1, "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(v + 1)))
			return true;
		ERR(ld, s, "%s '%s' is not a valid netgroup — write \"@groupname\"", what, v);
		return false;
	}
	if (slash) {
		char *end;
		long bits;

		snprintf(host, sizeof(host), "%.*s", (int)(slash - v), v);
		errno = 0;
		bits = strtol(slash + 1, &end, 10);
		if (!pf_is_ipaddr(host, &fam) || !slash[1] || *end || errno || bits < 0 ||
		    bits > (fam == AF_INET ? 32 : 128)) {
			ERR(ld, s,
			    "%s '%s' is not a valid network — write an address and a prefix "
			    "length, e.g. \"192.0.2.0/24\" or \"2001:db8::/64\" (IPv4 /0-32, "
			    "IPv6 /0-128)",
			    what, v);
			return false;
		}
		return true;
	}
	if (pf_is_ipaddr(v, &fam))
		return true;
	/* Wildcards: '*' and '?' stand for host name characters. */
	snprintf(host, sizeof(host), "%s", v);
	for (p = host; *p; p++)
		if (*p == '*' || *p == '?')
			host[p - host] = 'x';
	if (is_hostname(host))
		return true;
	ERR(ld, s,
	    "%s '%s' is not an NFS client — use an address, a network (\"192.0.2.0/24\"), "
	    "a host name, a wildcard (\"*.lan\") or \"@netgroup\"",
	    what, v);
	return false;
}

bool
pf_check_username(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	size_t i, n = strlen(v);

	for (i = 0; i < n; i++) {
		char c = v[i];

		if (!(islower((unsigned char)c) || c == '_' ||
		      (i > 0 && (isdigit((unsigned char)c) || c == '-' || c == '.')) ||
		      (i == n - 1 && i > 0 && c == '$')))
			break;
	}
	if (n == 0 || n > 32 || i != n) {
		ERR(ld, s,
		    "%s '%s' is not a valid user name — use lower-case letters, digits, '_' "
		    "and '-', starting with a letter, at most 32 characters",
		    what, v);
		return false;
	}
	return true;
}
