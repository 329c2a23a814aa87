/* profile.c - load nastune.conf over its preset with libconfig, validate, build the model.
 * The only file that includes libconfig. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "knobs.h"
#include "profile.h"
#include "units.h"
#include "xmalloc.h"

const char *const profile_presets[] = {
	"default", "home-media", "timemachine", "video-studio", "small-office", "demo", NULL,
};

struct ld {
	struct model *m;
	struct diag *d;
	const char *fallback; /* file name when libconfig has none (string input) */
};

/* ---- small helpers ---- */

static const char *
sfile(const struct ld *ld, const config_setting_t *s)
{
	const char *f = config_setting_source_file(s);

	return f ? f : ld->fallback;
}

static int
sline(const config_setting_t *s)
{
	return (int)config_setting_source_line(s);
}

/* File names live in m->files so struct loc can point at them. */
static const char *
intern_file(struct model *m, const char *f)
{
	size_t i;

	for (i = 0; i < m->files.n; i++)
		if (strcmp(m->files.v[i], f) == 0)
			return m->files.v[i];
	strlist_add(&m->files, f);
	return m->files.v[m->files.n - 1];
}

static struct loc
loc_of(struct ld *ld, const config_setting_t *s)
{
	struct loc l = { intern_file(ld->m, sfile(ld, s)), sline(s) };

	return l;
}

#define ERR(ld, s, ...) diag_error((ld)->d, sfile(ld, s), sline(s), __VA_ARGS__)
#define ERRL(ld, l, ...) diag_error((ld)->d, (l).file, (l).line, __VA_ARGS__)

static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1,
			       sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) !=
						    tolower((unsigned char)b[j - 1]));

			cur[j] = del < ins ? del : ins;
			if (sub < cur[j])
				cur[j] = sub;
		}
		memcpy(prev, cur, sizeof(prev));
	}
	return prev[lb];
}

/* The closest name in list to s, or NULL when nothing is close. */
static const char *
closest(const char *s, const char *const *list)
{
	const char *best = NULL;
	size_t bd = 99, limit = strlen(s) / 3 + 1, i;

	if (limit < 2)
		limit = 2;
	for (i = 0; list[i]; i++) {
		size_t dd = edit_distance(s, list[i]);

		if (dd < bd) {
			bd = dd;
			best = list[i];
		}
	}
	return bd <= limit ? best : NULL;
}

static void
unknown_keys(struct ld *ld, const config_setting_t *g, const char *where, const char *const *known)
{
	int i, n = config_setting_length(g);

	for (i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(s), *near;
		size_t k;
		bool ok = false;

		if (!name)
			continue;
		for (k = 0; known[k]; k++)
			if (strcmp(known[k], name) == 0)
				ok = true;
		if (ok)
			continue;
		near = closest(name, known);
		if (near)
			ERR(ld, s, "unknown key '%s' in %s — did you mean '%s'?", name, where,
			    near);
		else
			ERR(ld, s,
			    "unknown key '%s' in %s — remove it; nastune.conf(5) lists the "
			    "keys",
			    name, where);
	}
}

enum kind { K_STR, K_BOOL, K_INT, K_GROUP, K_LIST };

static const char *
type_name(int t)
{
	switch (t) {
	case CONFIG_TYPE_GROUP:
		return "a group { ... }";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "a number";
	case CONFIG_TYPE_FLOAT:
		return "a decimal number";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "true/false";
	case CONFIG_TYPE_ARRAY:
	case CONFIG_TYPE_LIST:
		return "a list";
	}
	return "something else";
}

static bool
is_kind(const config_setting_t *s, enum kind k)
{
	int t = config_setting_type(s);

	switch (k) {
	case K_STR:
		return t == CONFIG_TYPE_STRING;
	case K_BOOL:
		return t == CONFIG_TYPE_BOOL;
	case K_INT:
		return t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64;
	case K_GROUP:
		return t == CONFIG_TYPE_GROUP;
	case K_LIST:
		return t == CONFIG_TYPE_ARRAY || t == CONFIG_TYPE_LIST;
	}
	return false;
}

static const char *const kind_fix[] = {
	[K_STR] = "a quoted string, e.g. %s = \"value\";",
	[K_BOOL] = "true or false, e.g. %s = true;",
	[K_INT] = "a whole number, e.g. %s = 3;",
	[K_GROUP] = "a group, e.g. %s = { ... };",
	[K_LIST] = "a list, e.g. %s = [\"a\", \"b\"];",
};

/* The member key of g when present and of the right kind; type errors are reported. */
static config_setting_t *
member(struct ld *ld, const config_setting_t *g, const char *key, enum kind k, const char *where)
{
	config_setting_t *s = config_setting_get_member(g, key);
	char fix[128];

	if (!s)
		return NULL;
	if (is_kind(s, k))
		return s;
	snprintf(fix, sizeof(fix), kind_fix[k], key);
	ERR(ld, s, "%s.%s is %s — make it %s", where, key, type_name(config_setting_type(s)), fix);
	return NULL;
}

static void
set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* Text that every target format can carry: printable, no line breaks, bounded. */
static bool
check_text(struct ld *ld, const config_setting_t *s, const char *what, const char *v, size_t maxlen,
	   const char *forbid)
{
	const unsigned char *p;

	if (strlen(v) > maxlen) {
		ERR(ld, s, "%s is %zu characters long — shorten it to at most %zu", what, strlen(v),
		    maxlen);
		return false;
	}
	for (p = (const unsigned char *)v; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			ERR(ld, s, "%s contains a control character or line break — remove it",
			    what);
			return false;
		}
		if (forbid && strchr(forbid, *p)) {
			ERR(ld, s,
			    "%s contains '%c', which cannot be written safely into the "
			    "generated files — remove it",
			    what, *p);
			return false;
		}
	}
	return true;
}

/* One of a fixed set of words; returns the canonical entry or NULL after an error. */
static const char *
check_word(struct ld *ld, const config_setting_t *s, const char *what, const char *v,
	   const char *const *allowed)
{
	const char *near;
	char list[256] = "";
	size_t i;

	for (i = 0; allowed[i]; i++)
		if (strcasecmp(allowed[i], v) == 0)
			return allowed[i];
	for (i = 0; allowed[i]; i++) {
		if (i)
			strncat(list, ", ", sizeof(list) - strlen(list) - 1);
		strncat(list, allowed[i], sizeof(list) - strlen(list) - 1);
	}
	near = closest(v, allowed);
	if (near)
		ERR(ld, s, "%s '%s' is not valid — did you mean '%s'? (one of: %s)", what, v, near,
		    list);
	else
		ERR(ld, s, "%s '%s' is not valid — use one of: %s", what, v, list);
	return NULL;
}

static void
get_str(struct ld *ld, const config_setting_t *g, const char *key, const char *where, char **dst,
	size_t maxlen, const char *forbid)
{
	config_setting_t *s = member(ld, g, key, K_STR, where);
	char what[96];

	if (!s)
		return;
	snprintf(what, sizeof(what), "%s.%s", where, key);
	if (check_text(ld, s, what, config_setting_get_string(s), maxlen, forbid))
		set_str(dst, config_setting_get_string(s));
}

static void
get_bool(struct ld *ld, const config_setting_t *g, const char *key, const char *where, bool *dst)
{
	config_setting_t *s = member(ld, g, key, K_BOOL, where);

	if (s)
		*dst = config_setting_get_bool(s);
}

static void
get_word(struct ld *ld, const config_setting_t *g, const char *key, const char *where, char **dst,
	 const char *const *allowed)
{
	config_setting_t *s = member(ld, g, key, K_STR, where);
	char what[96];
	const char *w;

	if (!s)
		return;
	snprintf(what, sizeof(what), "%s.%s", where, key);
	w = check_word(ld, s, what, config_setting_get_string(s), allowed);
	if (w)
		set_str(dst, w);
}

/* A list of strings, each checked by fn (may be NULL); replaces *dst when present. */
static config_setting_t *
get_strlist(struct ld *ld, const config_setting_t *g, const char *key, const char *where,
	    struct strlist *dst,
	    bool (*fn)(struct ld *, const config_setting_t *, const char *, const char *))
{
	config_setting_t *s = member(ld, g, key, K_LIST, where);
	char what[128];
	int i, n;

	if (!s)
		return NULL;
	strlist_clear(dst);
	n = config_setting_length(s);
	for (i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		snprintf(what, sizeof(what), "%s.%s[%d]", where, key, i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING) {
			ERR(ld, e, "%s is %s — list entries must be quoted strings", what,
			    type_name(config_setting_type(e)));
			continue;
		}
		if (!check_text(ld, e, what, config_setting_get_string(e), 255, "\"\\%"))
			continue;
		if (fn && !fn(ld, e, what, config_setting_get_string(e)))
			continue;
		strlist_add(dst, config_setting_get_string(e));
	}
	return s;
}

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

static bool
is_ipaddr(const char *v, int *family)
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
static void
set_knob(struct ld *ld, enum knob_id id, const char *value, enum knob_src src,
	 const config_setting_t *s)
{
	struct knob_setting *k = &ld->m->knobs[id];

	free(k->value);
	k->value = value ? xstrdup(value) : NULL;
	k->src = value ? src : KNOB_UNSET;
	k->loc = loc_of(ld, s);
}

static bool
check_ifname(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
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

static bool
check_peer(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	int fam;

	if (is_ipaddr(v, &fam) || is_hostname(v))
		return true;
	ERR(ld, s,
	    "%s '%s' is neither an IP address nor a host name — write e.g. "
	    "\"192.0.2.20\" or \"mac-studio.local\"",
	    what, v);
	return false;
}

/* NFS client specs: address, CIDR, host name, wildcard host name, @netgroup. */
static bool
check_nfs_client(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
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
		if (!is_ipaddr(host, &fam) || !slash[1] || *end || errno || bits < 0 ||
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
	if (is_ipaddr(v, &fam))
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

static bool
check_username(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
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

/* ---- sections ---- */

static const char *const top_keys[] = {
	"profile", "server", "network",	 "protocols", "users",
	"shares",  "tuning", "services", "cluster",   NULL,
};

static void
load_server(struct ld *ld, const config_setting_t *g)
{
	static const char *const keys[] = {
		"name", "workgroup", "description", "model", "interfaces", NULL,
	};
	struct model *m = ld->m;
	config_setting_t *s;

	unknown_keys(ld, g, "server", keys);
	if ((s = member(ld, g, "name", K_STR, "server"))) {
		const char *v = config_setting_get_string(s);
		size_t n = strlen(v), i;
		bool ok = n >= 1 && n <= 15 && v[0] != '-' && v[n - 1] != '-';

		for (i = 0; i < n && ok; i++)
			ok = isalnum((unsigned char)v[i]) || v[i] == '-';
		if (ok)
			set_str(&m->server.name, v);
		else
			ERR(ld, s,
			    "server.name '%s' cannot be a NetBIOS and Bonjour name — use 1 to "
			    "15 letters, digits or inner hyphens, e.g. \"atlas\"",
			    v);
	}
	if ((s = member(ld, g, "workgroup", K_STR, "server"))) {
		const char *v = config_setting_get_string(s);
		size_t n = strlen(v);

		if (n >= 1 && n <= 15 &&
		    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
			      "wxyz0123456789-_.") == n)
			set_str(&m->server.workgroup, v);
		else
			ERR(ld, s,
			    "server.workgroup '%s' is not valid — use 1 to 15 letters, digits, "
			    "'-', '_' or '.', e.g. \"WORKGROUP\"",
			    v);
	}
	/* '%' would be expanded by Samba as a substitution variable. */
	get_str(ld, g, "description", "server", &m->server.description, 200, "%\"\\");
	if ((s = member(ld, g, "model", K_STR, "server"))) {
		const char *v = config_setting_get_string(s);
		size_t n = strlen(v);

		if (n >= 1 && n <= 64 &&
		    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
			      "wxyz0123456789,._-") == n)
			set_str(&m->server.model, v);
		else
			ERR(ld, s,
			    "server.model '%s' is not an Apple model identifier — use letters, "
			    "digits, ',', '.', '_' or '-', e.g. \"TimeCapsule8,119\" or "
			    "\"MacSamba\"",
			    v);
	}
	get_strlist(ld, g, "interfaces", "server", &m->server.interfaces, check_ifname);
}

static void
load_network(struct ld *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "interface", "mtu", "peers", NULL };
	struct model *m = ld->m;
	config_setting_t *s;

	unknown_keys(ld, g, "network", keys);
	if ((s = member(ld, g, "interface", K_STR, "network")) &&
	    check_ifname(ld, s, "network.interface", config_setting_get_string(s)))
		set_str(&m->network.interface, config_setting_get_string(s));
	if ((s = config_setting_get_member(g, "mtu"))) {
		if (is_kind(s, K_INT)) {
			long long v = config_setting_get_int64(s);

			if (config_setting_type(s) == CONFIG_TYPE_INT)
				v = config_setting_get_int(s);
			if (v < 576 || v > 9216) {
				ERR(ld, s,
				    "network.mtu %lld is out of range — use 576 to 9216, "
				    "\"auto\" or \"keep\"",
				    v);
			} else {
				m->network.mtu_mode = MTU_FIXED;
				char num[16];

				m->network.mtu = (int)v;
				snprintf(num, sizeof(num), "%d", (int)v);
				set_knob(ld, KNOB_NET_MTU, num, KNOB_CONFIG, s);
			}
		} else if (is_kind(s, K_STR) && strcmp(config_setting_get_string(s), "auto") == 0) {
			m->network.mtu_mode = MTU_AUTO;
			set_knob(ld, KNOB_NET_MTU, NULL, KNOB_UNSET, s);
		} else if (is_kind(s, K_STR) && strcmp(config_setting_get_string(s), "keep") == 0) {
			m->network.mtu_mode = MTU_KEEP;
			set_knob(ld, KNOB_NET_MTU, NULL, KNOB_UNSET, s);
		} else {
			ERR(ld, s,
			    "network.mtu must be a number from 576 to 9216, \"auto\" or "
			    "\"keep\" — e.g. mtu = 9000; or mtu = \"auto\";");
		}
	}
	get_strlist(ld, g, "peers", "network", &m->network.peers, check_peer);
}

static void
load_protocols(struct ld *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "smb", "nfs", "afp", NULL };
	static const char *const smb_keys[] = {
		"enabled", "min_protocol", "signing", "encryption", "apple", NULL,
	};
	static const char *const nfs_keys[] = { "enabled", "server", "versions", NULL };
	static const char *const afp_keys[] = { "enabled", "cnid_scheme", NULL };
	static const char *const min_protocols[] = {
		"SMB2", "SMB2_02", "SMB2_10", "SMB3", "SMB3_00", "SMB3_02", "SMB3_11", "NT1", NULL,
	};
	static const char *const signing[] = {
		"default", "auto", "desired", "mandatory", "required", "disabled", NULL,
	};
	static const char *const encryption[] = {
		"default", "off", "if_required", "desired", "required", NULL,
	};
	static const char *const nfs_servers[] = { "kernel", "ganesha", NULL };
	static const char *const cnid[] = { "dbd", "last", "sqlite", "mysql", NULL };
	struct model *m = ld->m;
	config_setting_t *p, *s;
	char *tmp = NULL;

	unknown_keys(ld, g, "protocols", keys);
	if ((p = member(ld, g, "smb", K_GROUP, "protocols"))) {
		unknown_keys(ld, p, "protocols.smb", smb_keys);
		get_bool(ld, p, "enabled", "protocols.smb", &m->smb.enabled);
		get_word(ld, p, "min_protocol", "protocols.smb", &m->smb.min_protocol,
			 min_protocols);
		if ((s = config_setting_get_member(p, "min_protocol")) && m->smb.min_protocol &&
		    strcmp(m->smb.min_protocol, "NT1") == 0)
			diag_warning(ld->d, sfile(ld, s), sline(s),
				     "protocols.smb.min_protocol NT1 "
				     "allows SMB1, which is insecure and slow — prefer \"SMB2\"");
		get_word(ld, p, "signing", "protocols.smb", &m->smb.signing, signing);
		get_word(ld, p, "encryption", "protocols.smb", &m->smb.encryption, encryption);
		get_bool(ld, p, "apple", "protocols.smb", &m->smb.apple);
	}
	if ((p = member(ld, g, "nfs", K_GROUP, "protocols"))) {
		unknown_keys(ld, p, "protocols.nfs", nfs_keys);
		get_bool(ld, p, "enabled", "protocols.nfs", &m->nfs.enabled);
		get_word(ld, p, "server", "protocols.nfs", &tmp, nfs_servers);
		if (tmp)
			m->nfs.server = strcmp(tmp, "ganesha") == 0 ? NFS_SERVER_GANESHA
								    : NFS_SERVER_KERNEL;
		free(tmp);
		if ((s = member(ld, p, "versions", K_LIST, "protocols.nfs"))) {
			int i, n = config_setting_length(s);
			bool v3 = false, v4 = false, ok = true;

			for (i = 0; i < n; i++) {
				config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

				if (config_setting_type(e) == CONFIG_TYPE_INT &&
				    config_setting_get_int(e) == 3)
					v3 = true;
				else if (config_setting_type(e) == CONFIG_TYPE_INT &&
					 config_setting_get_int(e) == 4)
					v4 = true;
				else {
					ERR(ld, e,
					    "protocols.nfs.versions[%d] must be 3 or 4 — e.g. "
					    "versions = [3, 4];",
					    i);
					ok = false;
				}
			}
			if (ok && !v3 && !v4)
				ERR(ld, s,
				    "protocols.nfs.versions is empty — list at least one of 3 "
				    "and 4, or set enabled = false");
			if (ok && (v3 || v4)) {
				m->nfs.v3 = v3;
				m->nfs.v4 = v4;
			}
		}
	}
	if ((p = member(ld, g, "afp", K_GROUP, "protocols"))) {
		unknown_keys(ld, p, "protocols.afp", afp_keys);
		get_bool(ld, p, "enabled", "protocols.afp", &m->afp.enabled);
		get_word(ld, p, "cnid_scheme", "protocols.afp", &m->afp.cnid_scheme, cnid);
	}
}

static void
load_users(struct ld *ld, const config_setting_t *l)
{
	static const char *const keys[] = { "name", NULL };
	struct model *m = ld->m;
	char where[32];
	int i, n = config_setting_length(l);
	size_t k;

	for (k = 0; k < m->n_users; k++)
		free(m->users[k].name);
	free(m->users);
	m->users = NULL;
	m->n_users = 0;
	for (i = 0; i < n; i++) {
		config_setting_t *u = config_setting_get_elem(l, (unsigned)i), *s;
		const char *name;

		snprintf(where, sizeof(where), "users[%d]", i);
		if (config_setting_type(u) != CONFIG_TYPE_GROUP) {
			ERR(ld, u, "%s must be a group — write ( { name = \"alice\"; } )", where);
			continue;
		}
		unknown_keys(ld, u, where, keys);
		s = member(ld, u, "name", K_STR, where);
		if (!s) {
			if (!config_setting_get_member(u, "name"))
				ERR(ld, u,
				    "%s has no name — add name = \"alice\"; (an existing system "
				    "account)",
				    where);
			continue;
		}
		name = config_setting_get_string(s);
		if (!check_username(ld, s, "users[].name", name))
			continue;
		for (k = 0; k < m->n_users; k++)
			if (strcmp(m->users[k].name, name) == 0)
				break;
		if (k < m->n_users) {
			ERR(ld, s, "user '%s' is listed twice (first at line %d) — remove one",
			    name, m->users[k].loc.line);
			continue;
		}
		m->users = xreallocarray(m->users, m->n_users + 1, sizeof(*m->users));
		m->users[m->n_users].name = xstrdup(name);
		m->users[m->n_users].loc = loc_of(ld, s);
		m->n_users++;
	}
}

/* SMB forbids these in share names; '%' is a Samba substitution; ',' and '=' would break the
 * Time Machine TXT record; '[' ']' the smb.conf section header. */
#define SHARE_FORBIDDEN "\\/:*?\"<>|[]+=;,%#"

static void
load_share(struct ld *ld, config_setting_t *g, int idx, struct share *sh)
{
	static const char *const keys[] = {
		"name",	       "path",	  "protocols",	  "read_only", "guest",
		"valid_users", "comment", "time_machine", "nfs",       NULL,
	};
	static const char *const tm_keys[] = { "enabled", "max_size", NULL };
	static const char *const nfs_keys[] = { "clients", "async", NULL };
	static const char *const reserved[] = { "global", "homes", "printers",
						"print$", "ipc$",  NULL };
	char where[32], what[64];
	config_setting_t *s, *p;
	size_t k;

	snprintf(where, sizeof(where), "shares[%d]", idx);
	sh->loc = loc_of(ld, g);
	sh->protocols = PROTO_SMB;
	unknown_keys(ld, g, where, keys);
	if ((s = member(ld, g, "name", K_STR, where))) {
		const char *v = config_setting_get_string(s);
		size_t n = strlen(v);

		sh->loc_name = loc_of(ld, s);
		snprintf(what, sizeof(what), "%s.name", where);
		if (n == 0) {
			ERR(ld, s, "%s is empty — give the share a name, e.g. \"Media\"", what);
		} else if (v[0] == ' ' || v[n - 1] == ' ') {
			ERR(ld, s, "share name '%s' starts or ends with a space — remove it", v);
		} else if (check_text(ld, s, what, v, 80, SHARE_FORBIDDEN)) {
			for (k = 0; reserved[k]; k++)
				if (strcasecmp(v, reserved[k]) == 0)
					break;
			if (reserved[k])
				ERR(ld, s,
				    "share name '%s' is reserved by Samba — choose another "
				    "name",
				    v);
			else
				sh->name = xstrdup(v);
		}
	} else if (!config_setting_get_member(g, "name")) {
		ERR(ld, g, "%s has no name — add name = \"Media\";", where);
	}
	if ((s = member(ld, g, "path", K_STR, where))) {
		const char *v = config_setting_get_string(s);

		sh->loc_path = loc_of(ld, s);
		snprintf(what, sizeof(what), "%s.path", where);
		if (v[0] != '/')
			ERR(ld, s,
			    "%s '%s' is not absolute — write the full path, e.g. "
			    "\"/srv/media\"",
			    what, v);
		else if (strcmp(v, "/") == 0)
			ERR(ld, s,
			    "%s is / — sharing the whole file system is refused; share a "
			    "directory such as \"/srv/media\"",
			    what);
		else if (strstr(v, "/../") || strstr(v, "/./") || strstr(v, "//") ||
			 (strlen(v) >= 3 && strcmp(v + strlen(v) - 3, "/..") == 0) ||
			 (strlen(v) >= 2 && strcmp(v + strlen(v) - 2, "/.") == 0) ||
			 v[strlen(v) - 1] == '/')
			ERR(ld, s,
			    "%s '%s' is not a plain path — remove '..', '.', doubled and "
			    "trailing slashes",
			    what, v);
		else if (check_text(ld, s, what, v, 1024, "\"\\%"))
			sh->path = xstrdup(v);
	} else if (!config_setting_get_member(g, "path")) {
		ERR(ld, g, "%s has no path — add path = \"/srv/...\";", where);
	}
	if ((s = member(ld, g, "protocols", K_LIST, where))) {
		int i, n = config_setting_length(s);
		unsigned set = 0;

		for (i = 0; i < n; i++) {
			config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
			const char *v = config_setting_type(e) == CONFIG_TYPE_STRING
						? config_setting_get_string(e)
						: "";
			unsigned bit = strcmp(v, "smb") == 0   ? PROTO_SMB
				       : strcmp(v, "nfs") == 0 ? PROTO_NFS
				       : strcmp(v, "afp") == 0 ? PROTO_AFP
							       : 0;

			if (!bit)
				ERR(ld, e, "%s.protocols[%d] must be \"smb\", \"nfs\" or \"afp\"",
				    where, i);
			else if (set & bit)
				ERR(ld, e, "%s.protocols lists \"%s\" twice — remove one", where,
				    v);
			set |= bit;
		}
		if (n == 0)
			ERR(ld, s,
			    "%s.protocols is empty — list at least one of \"smb\", \"nfs\", "
			    "\"afp\"",
			    where);
		sh->protocols = set;
	}
	get_bool(ld, g, "read_only", where, &sh->read_only);
	get_bool(ld, g, "guest", where, &sh->guest);
	snprintf(what, sizeof(what), "%s.comment", where);
	get_str(ld, g, "comment", where, &sh->comment, 256, "%\"\\");
	if ((s = get_strlist(ld, g, "valid_users", where, &sh->valid_users, check_username)))
		sh->loc_users = loc_of(ld, s);
	if ((p = member(ld, g, "time_machine", K_GROUP, where))) {
		snprintf(what, sizeof(what), "%s.time_machine", where);
		unknown_keys(ld, p, what, tm_keys);
		get_bool(ld, p, "enabled", what, &sh->tm_enabled);
		if ((s = config_setting_get_member(p, "max_size"))) {
			uint64_t b;
			int rc = -EINVAL;

			if (is_kind(s, K_STR))
				rc = units_parse_size(config_setting_get_string(s), &b);
			if (rc == -ERANGE)
				ERR(ld, s, "%s.max_size is too large — use at most 16383P", what);
			else if (rc < 0)
				ERR(ld, s,
				    "%s.max_size must be a size with a unit, e.g. \"2T\" or "
				    "\"500G\" (units K, M, G, T, P)",
				    what);
			else if (b < (1ULL << 30))
				ERR(ld, s,
				    "%s.max_size is below 1G — Time Machine needs more; use "
				    "e.g. \"500G\"",
				    what);
			else
				sh->tm_max_size = b;
		}
	}
	if ((p = member(ld, g, "nfs", K_GROUP, where))) {
		snprintf(what, sizeof(what), "%s.nfs", where);
		unknown_keys(ld, p, what, nfs_keys);
		if ((s = get_strlist(ld, p, "clients", what, &sh->nfs_clients, check_nfs_client)))
			sh->loc_clients = loc_of(ld, s);
		if (member(ld, p, "async", K_BOOL, what)) {
			get_bool(ld, p, "async", what, &sh->nfs_async);
			sh->nfs_async_set = true;
		}
	}
}

static void
load_shares(struct ld *ld, config_setting_t *l)
{
	struct model *m = ld->m;
	int i, n = config_setting_length(l);
	size_t k;

	for (k = 0; k < m->n_shares; k++) {
		struct share *sh = &m->shares[k];

		free(sh->name);
		free(sh->path);
		free(sh->comment);
		strlist_clear(&sh->valid_users);
		strlist_clear(&sh->nfs_clients);
	}
	free(m->shares);
	m->shares = NULL;
	m->n_shares = 0;
	for (i = 0; i < n; i++) {
		config_setting_t *g = config_setting_get_elem(l, (unsigned)i);

		if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
			ERR(ld, g,
			    "shares[%d] must be a group — write ( { name = \"Media\"; path = "
			    "\"/srv/media\"; } )",
			    i);
			continue;
		}
		m->shares = xreallocarray(m->shares, m->n_shares + 1, sizeof(*m->shares));
		memset(&m->shares[m->n_shares], 0, sizeof(*m->shares));
		load_share(ld, g, i, &m->shares[m->n_shares]);
		m->n_shares++;
	}
}

/* The knob groups of tuning.knobs and tuned.conf: smb = { use_sendfile = "yes"; }; ...
 * Values are strings, whole numbers, or true/false for yes/no knobs. A tuned value (src
 * KNOB_TUNED) never replaces one pinned in nastune.conf. */
static void
load_knobs(struct ld *ld, const config_setting_t *g, const char *where, enum knob_src src)
{
	static const char *const groups[] = { "smb", "nfs", "afp", "sys", "net", NULL };
	const char *keys[KNOB_COUNT + 1];
	const struct knob *k;
	char gwhere[64], what[96], canon[256], why[512], num[32];
	int i, j, n, nk;

	unknown_keys(ld, g, where, groups);
	for (i = 0; groups[i]; i++) {
		config_setting_t *p;

		snprintf(gwhere, sizeof(gwhere), "%s.%s", where, groups[i]);
		if (!(p = member(ld, g, groups[i], K_GROUP, where)))
			continue;
		nk = 0;
		for (k = knob_first(); k; k = knob_next(k))
			if (strncmp(k->name, groups[i], strlen(groups[i])) == 0 &&
			    k->name[strlen(groups[i])] == '.')
				keys[nk++] = knob_key(k);
		keys[nk] = NULL;
		unknown_keys(ld, p, gwhere, keys);
		n = config_setting_length(p);
		for (j = 0; j < n; j++) {
			config_setting_t *e = config_setting_get_elem(p, (unsigned)j);
			const char *name = config_setting_name(e), *v = NULL;
			struct knob_setting *cur;
			char full[64];

			snprintf(full, sizeof(full), "%s.%s", groups[i], name ? name : "");
			if (!(k = knob_find(full)))
				continue; /* reported by unknown_keys */
			snprintf(what, sizeof(what), "%s.%s", where, full);
			if (k->id == KNOB_NET_MTU) {
				ERR(ld, e,
				    "%s cannot be set here — the MTU is network.mtu's: write "
				    "network = { mtu = 9000; }; (or \"auto\")",
				    what);
				continue;
			}
			switch (config_setting_type(e)) {
			case CONFIG_TYPE_STRING:
				v = config_setting_get_string(e);
				break;
			case CONFIG_TYPE_INT:
			case CONFIG_TYPE_INT64:
				snprintf(num, sizeof(num), "%lld",
					 (long long)config_setting_get_int64(e));
				if (config_setting_type(e) == CONFIG_TYPE_INT)
					snprintf(num, sizeof(num), "%d", config_setting_get_int(e));
				v = num;
				break;
			case CONFIG_TYPE_BOOL:
				if (k->kind == KNOB_ENUM && (strcmp(k->words[0], "yes") == 0 ||
							     strcmp(k->words[0], "no") == 0))
					v = config_setting_get_bool(e) ? "yes" : "no";
				break;
			}
			if (!v) {
				ERR(ld, e, "%s is %s — write a quoted value, e.g. %s = \"%s\";",
				    what, type_name(config_setting_type(e)), name,
				    k->candidates[0]);
				continue;
			}
			if (knob_parse(k, v, canon, sizeof(canon), why, sizeof(why)) < 0) {
				ERR(ld, e, "%s %s", what, why);
				continue;
			}
			cur = &ld->m->knobs[k->id];
			if (src == KNOB_TUNED && cur->value && cur->src == KNOB_CONFIG) {
				diag_warning(
					ld->d, sfile(ld, e), sline(e),
					"%s is pinned in "
					"nastune.conf (%s:%d) — the tuned value is ignored and "
					"dropped at the next apply",
					full, cur->loc.file, cur->loc.line);
				continue;
			}
			if (src == KNOB_TUNED &&
			    !knob_value_permitted(ld->m, k, canon, why, sizeof(why))) {
				diag_warning(ld->d, sfile(ld, e), sline(e),
					     "%s; the tuned value is "
					     "ignored and dropped at the next apply",
					     why);
				continue;
			}
			set_knob(ld, k->id, canon, src, e);
		}
	}
}

static void
load_tuning(struct ld *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "goal", "allow_unsafe", "budget", "knobs", NULL };
	static const char *const goals[] = {
		"throughput", "small-files", "video", "balanced", NULL,
	};
	struct model *m = ld->m;
	config_setting_t *s;
	char *goal = NULL;

	unknown_keys(ld, g, "tuning", keys);
	get_word(ld, g, "goal", "tuning", &goal, goals);
	if (goal) {
		m->tuning.goal = strcmp(goal, "throughput") == 0    ? GOAL_THROUGHPUT
				 : strcmp(goal, "small-files") == 0 ? GOAL_SMALL_FILES
				 : strcmp(goal, "video") == 0	    ? GOAL_VIDEO
								    : GOAL_BALANCED;
		free(goal);
	}
	get_bool(ld, g, "allow_unsafe", "tuning", &m->tuning.allow_unsafe);
	if ((s = config_setting_get_member(g, "budget"))) {
		unsigned secs;

		if (is_kind(s, K_STR) &&
		    units_parse_duration(config_setting_get_string(s), &secs) == 0 && secs >= 10)
			m->tuning.budget_s = secs;
		else if (is_kind(s, K_INT) && config_setting_get_int(s) >= 10)
			m->tuning.budget_s = (unsigned)config_setting_get_int(s);
		else
			ERR(ld, s,
			    "tuning.budget must be a duration of at least 10 seconds — e.g. "
			    "\"10m\", \"90s\" or \"1h\"");
	}
	if ((s = member(ld, g, "knobs", K_GROUP, "tuning")))
		load_knobs(ld, s, "tuning.knobs", KNOB_CONFIG);
}

static void
load_services(struct ld *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "backend", "smb", "nfs", "afp", "mdns", NULL };
	static const char *const svc_keys[] = { "backend", "pidfile", "start", NULL };
	static const char *const backends[] = { "auto", "systemd", "pidfile", "none", NULL };
	struct model *m = ld->m;
	char where[32];
	int i;

	unknown_keys(ld, g, "services", keys);
	get_word(ld, g, "backend", "services", &m->services.backend, backends);
	for (i = 0; i < SVC_DAEMONS; i++) {
		config_setting_t *p;

		snprintf(where, sizeof(where), "services.%s", svc_name(i));
		if (!(p = member(ld, g, svc_name(i), K_GROUP, "services")))
			continue;
		unknown_keys(ld, p, where, svc_keys);
		get_word(ld, p, "backend", where, &m->services.svc_backend[i], backends);
		if (config_setting_get_member(p, "pidfile")) {
			config_setting_t *s = member(ld, p, "pidfile", K_STR, where);

			if (s && config_setting_get_string(s)[0] != '/')
				ERR(ld, s,
				    "%s.pidfile must be an absolute path, e.g. "
				    "\"/run/samba/smbd.pid\"",
				    where);
			else if (s)
				get_str(ld, p, "pidfile", where, &m->services.svc_pidfile[i], 1024,
					NULL);
		}
		if (config_setting_get_member(p, "start")) {
			config_setting_t *s = member(ld, p, "start", K_STR, where);

			if (s && !config_setting_get_string(
					 s)[strspn(config_setting_get_string(s), " \t")])
				ERR(ld, s,
				    "%s.start is empty — write the command line that starts %s "
				    "(run with /bin/sh -c), or remove it",
				    where,
				    i == SVC_NFS   ? "ganesha.nfsd"
				    : i == SVC_AFP ? "afpd"
				    : i == SVC_SMB ? "smbd"
						   : "avahi-daemon");
			else if (s)
				get_str(ld, p, "start", where, &m->services.svc_start[i], 1024,
					NULL);
		}
	}
}

/* cluster.nodes: private addresses only (ctdb binds them; names would need resolving). */
static bool
check_node(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	int fam;

	if (is_ipaddr(v, &fam))
		return true;
	ERR(ld, s,
	    "%s '%s' is not an IP address — list each node's private address, e.g. "
	    "\"10.0.0.1\"",
	    what, v);
	return false;
}

/* cluster.public_addresses: "ADDR/PREFIX" or "ADDR/PREFIX IFACE". */
static bool
check_public(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	char addr[64], iface[32] = "";
	const char *slash = strchr(v, '/'), *sp = strchr(v, ' ');
	char *end;
	long prefix;
	int fam;

	if (!slash || (size_t)(slash - v) >= sizeof(addr) || (sp && sp < slash))
		goto bad;
	memcpy(addr, v, (size_t)(slash - v));
	addr[slash - v] = '\0';
	prefix = strtol(slash + 1, &end, 10);
	if (end == slash + 1 || (*end && *end != ' ') || !is_ipaddr(addr, &fam) || prefix < 1 ||
	    prefix > (fam == AF_INET ? 32 : 128))
		goto bad;
	if (*end == ' ') {
		if (strlen(end + 1) >= sizeof(iface))
			goto bad;
		strcpy(iface, end + 1);
		if (!check_ifname(ld, s, what, iface))
			return false;
	}
	return true;
bad:
	ERR(ld, s,
	    "%s '%s' is not a public address — write ADDRESS/PREFIX, optionally followed by "
	    "an interface: \"192.0.2.50/24\" or \"192.0.2.50/24 eth1\"",
	    what, v);
	return false;
}

static void
load_cluster(struct ld *ld, const config_setting_t *g)
{
	static const char *const keys[] = {
		"name", "nodes", "public_addresses", "interface", "lock", "filesystem", NULL,
	};
	struct model *m = ld->m;
	config_setting_t *s;
	size_t i;

	unknown_keys(ld, g, "cluster", keys);
	m->cluster.enabled = true;
	m->cluster.loc = loc_of(ld, g);
	if ((s = member(ld, g, "name", K_STR, "cluster"))) {
		const char *v = config_setting_get_string(s);
		size_t n = strlen(v), k;
		bool ok = n >= 1 && n <= 15 && v[0] != '-' && v[n - 1] != '-';

		for (k = 0; k < n && ok; k++)
			ok = isalnum((unsigned char)v[k]) || v[k] == '-';
		if (ok)
			set_str(&m->cluster.name, v);
		else
			ERR(ld, s,
			    "cluster.name '%s' cannot be a NetBIOS and Bonjour name — use 1 to "
			    "15 letters, digits or inner hyphens, e.g. \"nas\"",
			    v);
	}
	if ((s = get_strlist(ld, g, "nodes", "cluster", &m->cluster.nodes, check_node)))
		m->cluster.loc_nodes = loc_of(ld, s);
	if ((s = get_strlist(ld, g, "public_addresses", "cluster", &m->cluster.public_addresses,
			     check_public))) {
		m->cluster.loc_public = loc_of(ld, s);
		/* Split "ADDR/PREFIX IFACE" into the address and its interface. */
		strlist_clear(&m->cluster.public_interfaces);
		for (i = 0; i < m->cluster.public_addresses.n; i++) {
			char *v = m->cluster.public_addresses.v[i], *sp = strchr(v, ' ');

			strlist_add(&m->cluster.public_interfaces, sp ? sp + 1 : "");
			if (sp)
				*sp = '\0';
		}
	}
	if ((s = member(ld, g, "interface", K_STR, "cluster")) &&
	    check_ifname(ld, s, "cluster.interface", config_setting_get_string(s)))
		set_str(&m->cluster.interface, config_setting_get_string(s));
	if ((s = member(ld, g, "lock", K_STR, "cluster"))) {
		const char *v = config_setting_get_string(s);

		m->cluster.loc_lock = loc_of(ld, s);
		if (check_text(ld, s, "cluster.lock", v, 255, "\"\\%")) {
			if (v[0] == '/' || (v[0] == '!' && v[1] && v[1] != ' '))
				set_str(&m->cluster.lock, v);
			else
				ERR(ld, s,
				    "cluster.lock '%s' is neither an absolute path nor a helper — "
				    "write a path on the cluster file system "
				    "(\"/cluster/.ctdb/lock\") "
				    "or \"!/usr/libexec/ctdb/ctdb_mutex_ceph_rados_helper ceph "
				    "client.admin pool lock\"",
				    v);
		}
	}
	if ((s = member(ld, g, "filesystem", K_STR, "cluster"))) {
		const char *v = config_setting_get_string(s);

		m->cluster.loc_fs = loc_of(ld, s);
		if (check_text(ld, s, "cluster.filesystem", v, 200, "\"\\% ") && v[0] == '/' &&
		    strcmp(v, "/") != 0 && !strstr(v, "/../") && v[strlen(v) - 1] != '/')
			set_str(&m->cluster.filesystem, v);
		else
			ERR(ld, s,
			    "cluster.filesystem '%s' is not a mount point — write the absolute "
			    "path where the cluster file system is mounted on every node, e.g. "
			    "\"/cluster\"",
			    v);
	}
}

/* One file's settings over whatever the model already holds. */
static void
load_root(struct ld *ld, config_setting_t *root, bool is_preset)
{
	config_setting_t *s;

	unknown_keys(ld, root, "the top level", top_keys);
	if (is_preset && (s = config_setting_get_member(root, "profile")))
		ERR(ld, s, "a preset cannot name another profile — remove 'profile'");
	if ((s = member(ld, root, "server", K_GROUP, "config")))
		load_server(ld, s);
	if ((s = member(ld, root, "network", K_GROUP, "config")))
		load_network(ld, s);
	if ((s = member(ld, root, "protocols", K_GROUP, "config")))
		load_protocols(ld, s);
	if ((s = member(ld, root, "users", K_LIST, "config")))
		load_users(ld, s);
	if ((s = member(ld, root, "shares", K_LIST, "config")))
		load_shares(ld, s);
	if ((s = member(ld, root, "tuning", K_GROUP, "config")))
		load_tuning(ld, s);
	if ((s = member(ld, root, "services", K_GROUP, "config")))
		load_services(ld, s);
	if ((s = member(ld, root, "cluster", K_GROUP, "config")))
		load_cluster(ld, s);
}

/* ---- whole-model checks ---- */

/* a is b, or a lies inside b. */
static bool
path_within(const char *a, const char *b)
{
	size_t lb = strlen(b);

	return strncmp(a, b, lb) == 0 && (a[lb] == '\0' || a[lb] == '/');
}

static void
validate(struct ld *ld)
{
	struct model *m = ld->m;
	size_t i, j, k;

	for (i = 0; i < m->n_shares; i++) {
		struct share *a = &m->shares[i];

		if (!a->name || !a->path)
			continue; /* already reported */
		for (j = 0; j < i; j++) {
			struct share *b = &m->shares[j];

			if (b->name && strcasecmp(a->name, b->name) == 0)
				ERRL(ld, a->loc_name,
				     "share name '%s' is already used by '%s' "
				     "(line %d); names are case-insensitive — rename one",
				     a->name, b->name, b->loc_name.line);
			if (!b->path || !(a->tm_enabled || b->tm_enabled))
				continue;
			if (path_within(a->path, b->path) || path_within(b->path, a->path))
				ERRL(ld, a->loc_path,
				     "share '%s' (%s) and Time Machine share '%s' (%s) "
				     "overlap — a Time Machine share must have its directory to "
				     "itself; move one of them",
				     a->tm_enabled ? b->name : a->name,
				     a->tm_enabled ? b->path : a->path,
				     a->tm_enabled ? a->name : b->name,
				     a->tm_enabled ? a->path : b->path);
		}
		if (a->tm_enabled && !(a->protocols & (PROTO_SMB | PROTO_AFP)))
			ERRL(ld, a->loc,
			     "Time Machine share '%s' has neither smb nor afp — add "
			     "\"smb\" to its protocols (Macs back up over SMB or AFP only)",
			     a->name);
		else if (a->tm_enabled && !((a->protocols & PROTO_SMB && m->smb.enabled) ||
					    (a->protocols & PROTO_AFP && m->afp.enabled)))
			ERRL(ld, a->loc,
			     "Time Machine share '%s' is served by no enabled protocol — "
			     "enable protocols.smb (or protocols.afp)",
			     a->name);
		if (a->tm_enabled && a->read_only)
			ERRL(ld, a->loc,
			     "Time Machine share '%s' is read_only — backups need to "
			     "write; set read_only = false",
			     a->name);
		if (a->guest && a->valid_users.n)
			ERRL(ld, a->loc_users,
			     "share '%s' is a guest share and also lists "
			     "valid_users — drop guest = true or the user list",
			     a->name);
		for (k = 0; k < a->valid_users.n; k++) {
			const char *names[65];
			size_t u, nn = 0;
			const char *near;

			for (u = 0; u < m->n_users; u++)
				if (strcmp(m->users[u].name, a->valid_users.v[k]) == 0)
					break;
			if (u < m->n_users)
				continue;
			for (u = 0; u < m->n_users && nn < 64; u++)
				names[nn++] = m->users[u].name;
			names[nn] = NULL;
			near = closest(a->valid_users.v[k], names);
			if (near)
				ERRL(ld, a->loc_users,
				     "share '%s' names user '%s', who is not in "
				     "users — did you mean '%s'?",
				     a->name, a->valid_users.v[k], near);
			else
				ERRL(ld, a->loc_users,
				     "share '%s' names user '%s', who is not in "
				     "users — add ( { name = \"%s\"; } ) to users",
				     a->name, a->valid_users.v[k], a->valid_users.v[k]);
		}
		if (a->protocols & PROTO_NFS) {
			if (a->nfs_clients.n == 0 && !a->guest)
				ERRL(ld, a->loc,
				     "share '%s' is exported over NFS to no one — NFS has no "
				     "passwords, so list who may mount it: nfs = { clients = "
				     "[\"192.0.2.0/24\"]; }; (guest shares default to \"*\")",
				     a->name);
			else if (a->nfs_clients.n == 0)
				strlist_add(&a->nfs_clients, "*");
			if (a->nfs_async && !m->tuning.allow_unsafe)
				ERRL(ld, a->loc,
				     "share '%s' asks for NFS async writes, which can lose "
				     "data on power loss — set tuning.allow_unsafe = true to allow "
				     "it, or remove nfs.async",
				     a->name);
			a->nfs_fsid = (model_hash32(a->path) & 0x7fffffffu) | 1u;
			for (j = 0; j < i; j++)
				if (m->shares[j].path && m->shares[j].protocols & PROTO_NFS &&
				    m->shares[j].nfs_fsid == a->nfs_fsid &&
				    strcmp(m->shares[j].path, a->path) != 0)
					ERRL(ld, a->loc_path,
					     "NFS fsid of '%s' collides with '%s' — "
					     "change either path slightly",
					     a->path, m->shares[j].path);
		} else if (a->nfs_clients.n) {
			diag_warning(ld->d, a->loc_clients.file, a->loc_clients.line,
				     "share '%s' sets nfs.clients but is not shared over nfs — add "
				     "\"nfs\" to its protocols or remove the nfs group",
				     a->name);
		}
		/* netatalk's parser ends an unquoted value at ';' or '#': AFP would serve another
		 * directory than SMB and NFS. */
		if (a->protocols & PROTO_AFP && strpbrk(a->path, ";#"))
			ERRL(ld, a->loc_path,
			     "share '%s' path '%s' holds ';' or '#', which afp.conf cannot "
			     "carry (netatalk ends the value there) — rename the directory or "
			     "drop \"afp\" from its protocols",
			     a->name, a->path);
		if (a->tm_enabled && a->guest)
			diag_warning(ld->d, a->loc.file, a->loc.line,
				     "Time Machine share '%s' is a "
				     "guest share: anyone on the network can read the backups",
				     a->name);
	}
	for (i = 0; i < KNOB_COUNT; i++) {
		const struct knob_setting *ks = &m->knobs[i];
		const struct knob *kb = knob_get((enum knob_id)i);
		char why[512];

		if (!ks->value || ks->src != KNOB_CONFIG || kb->id == KNOB_NET_MTU)
			continue;
		if (!knob_value_permitted(m, kb, ks->value, why, sizeof(why)))
			ERRL(ld, ks->loc, "tuning.knobs.%s", why);
		else if (!knob_applicable(m, kb, why, sizeof(why)))
			diag_warning(ld->d, ks->loc.file, ks->loc.line,
				     "tuning.knobs.%s has no "
				     "effect (%s) — remove it",
				     kb->name, why + strlen("not applicable: "));
	}
	if (m->network.mtu_mode != MTU_KEEP && !m->network.interface)
		diag_error(ld->d, m->files.n ? m->files.v[m->files.n - 1] : ld->fallback, 0,
			   "network.mtu is set but network.interface is not — add "
			   "network.interface = \"eth0\"; or set mtu = \"keep\"");
}

/* The address part of a public address, without "/PREFIX". */
static bool
same_addr(const char *node, const char *pub)
{
	size_t n = strcspn(pub, "/");

	return strlen(node) == n && strncmp(node, pub, n) == 0;
}

/* What a cluster needs that one box does not; the checks that look at this host's
 * interfaces are cluster_check_host's (cluster.c). */
static void
validate_cluster(struct ld *ld)
{
	struct model *m = ld->m;
	const struct loc *l = &m->cluster.loc;
	size_t i, j;

	if (!m->cluster.enabled)
		return;
	if (!m->cluster.name && m->server.name)
		m->cluster.name = xstrdup(m->server.name);
	if (!m->cluster.name)
		ERRL(ld, *l,
		     "cluster has no name — every node must answer to one SMB and Bonjour name: "
		     "add name = \"nas\"; to cluster (or server.name)");
	if (m->cluster.nodes.n == 0)
		ERRL(ld, *l,
		     "cluster.nodes is missing — list every node's private address, the same "
		     "list on every node: nodes = [\"10.0.0.1\", \"10.0.0.2\"];");
	for (i = 0; i < m->cluster.nodes.n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(m->cluster.nodes.v[i], m->cluster.nodes.v[j]) == 0)
				ERRL(ld, m->cluster.loc_nodes,
				     "cluster.nodes lists %s twice — list each node once",
				     m->cluster.nodes.v[i]);
	if (m->cluster.public_addresses.n == 0)
		ERRL(ld, *l,
		     "cluster.public_addresses is missing — clients reach the cluster only "
		     "through addresses CTDB moves between nodes: public_addresses = "
		     "[\"192.0.2.50/24\"];");
	for (i = 0; i < m->cluster.public_addresses.n; i++) {
		const char *p = m->cluster.public_addresses.v[i];

		for (j = 0; j < m->cluster.nodes.n; j++)
			if (same_addr(m->cluster.nodes.v[j], p))
				ERRL(ld, m->cluster.loc_public,
				     "public address %s is also node %s's address — a public "
				     "address moves between nodes and must be one no node owns: "
				     "choose another",
				     p, m->cluster.nodes.v[j]);
		for (j = 0; j < i; j++)
			if (same_addr(m->cluster.public_addresses.v[j], p) &&
			    strcspn(p, "/") == strcspn(m->cluster.public_addresses.v[j], "/"))
				ERRL(ld, m->cluster.loc_public,
				     "cluster.public_addresses lists %s twice — list each once", p);
		if (!*m->cluster.public_interfaces.v[i] && !m->cluster.interface)
			ERRL(ld, m->cluster.loc_public,
			     "public address %s has no interface — add interface = \"eth0\"; to "
			     "cluster, or write \"%s eth0\"",
			     p, p);
	}
	if (!m->cluster.filesystem)
		ERRL(ld, *l,
		     "cluster.filesystem is missing — name the mount point of the cluster file "
		     "system (CephFS, GlusterFS, GPFS...), e.g. filesystem = \"/cluster\"; the "
		     "lock, the shares and nastune's cluster record live there");
	if (!m->cluster.lock)
		ERRL(ld, *l,
		     "cluster.lock is missing — without a cluster lock two halves of a split "
		     "cluster both serve the shares: lock = \"/cluster/.ctdb/lock\"; (or "
		     "\"!helper ARGS\")");
	else if (m->cluster.lock[0] == '/' && m->cluster.filesystem &&
		 !path_within(m->cluster.lock, m->cluster.filesystem))
		ERRL(ld, m->cluster.loc_lock,
		     "cluster.lock %s is outside the cluster file system %s — every node must "
		     "take the same lock, so put it there (\"%s/.ctdb/lock\") or use a helper "
		     "(\"!/usr/libexec/ctdb/ctdb_mutex_ceph_rados_helper ...\")",
		     m->cluster.lock, m->cluster.filesystem, m->cluster.filesystem);
	for (i = 0; i < m->n_shares; i++) {
		const struct share *sh = &m->shares[i];

		if (sh->path && m->cluster.filesystem &&
		    !path_within(sh->path, m->cluster.filesystem))
			ERRL(ld, sh->loc_path,
			     "share '%s' (%s) is outside the cluster file system %s — a node "
			     "that takes over a public address must serve the same files: move it "
			     "under %s",
			     sh->name, sh->path, m->cluster.filesystem, m->cluster.filesystem);
		if (sh->tm_enabled)
			ERRL(ld, sh->loc,
			     "share '%s' is a Time Machine share, which nastune does not support "
			     "on a cluster — a Mac's backup keeps a sparse bundle open with "
			     "leases and durable handles that a takeover breaks, and nastune has "
			     "not proven a restore after one: serve Time Machine from a single "
			     "box, or remove time_machine",
			     sh->name);
		if (sh->protocols & PROTO_AFP && m->afp.enabled)
			ERRL(ld, sh->loc,
			     "share '%s' is shared over AFP, which cannot be clustered — "
			     "netatalk keeps its CNID database and locks on one host: remove "
			     "\"afp\" from its protocols",
			     sh->name);
	}
	if (m->nfs.enabled && m->nfs.server != NFS_SERVER_GANESHA && model_uses(m, PROTO_NFS))
		ERRL(ld, *l,
		     "a cluster serves NFS with NFS-Ganesha only (CTDB puts it in grace on "
		     "takeover) — set protocols.nfs.server = \"ganesha\"");
}

static void
set_defaults(struct model *m)
{
	m->server.workgroup = xstrdup("WORKGROUP");
	m->server.description = xstrdup("nastune NAS");
	m->server.model = xstrdup("MacSamba");
	m->smb.enabled = true;
	m->smb.min_protocol = xstrdup("SMB2");
	m->smb.signing = xstrdup("default");
	m->smb.encryption = xstrdup("default");
	m->nfs.v3 = m->nfs.v4 = true;
	m->afp.cnid_scheme = xstrdup("dbd");
	m->tuning.goal = GOAL_BALANCED;
	m->tuning.budget_s = 600;
	m->services.backend = xstrdup("auto");
}

static bool
read_cfg(struct ld *ld, config_t *cfg, const char *name, const char *text)
{
	bool ok = text ? config_read_string(cfg, text) == CONFIG_TRUE
		       : config_read_file(cfg, name) == CONFIG_TRUE;

	if (!ok) {
		const char *f = config_error_file(cfg);

		if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
			diag_error(ld->d, f ? f : name, 0,
				   "cannot read the file (%s) — check the "
				   "path given with -c",
				   strerror(errno ? errno : ENOENT));
		else
			diag_error(ld->d, f ? f : name, config_error_line(cfg),
				   "%s — fix the "
				   "syntax (settings look like key = value; and end with ';')",
				   config_error_text(cfg));
	}
	return ok;
}

static struct model *
load(const char *name, const char *text, const char *const *dirs, size_t ndirs, struct diag *d)
{
	struct ld ld = { .d = d, .fallback = name };
	config_t user, preset;
	config_setting_t *ps = NULL;
	const char *profile = "default";
	char *ppath = NULL;
	size_t i, before = d->errors;

	ld.m = model_new();
	set_defaults(ld.m);
	config_init(&user);
	config_init(&preset);
	if (!read_cfg(&ld, &user, name, text))
		goto out;
	if ((ps = member(&ld, config_root_setting(&user), "profile", K_STR, "config")))
		profile = config_setting_get_string(ps);
	for (i = 0; profile_presets[i]; i++)
		if (strcmp(profile_presets[i], profile) == 0)
			break;
	for (i = 0; i < ndirs && !ppath; i++) {
		char *p = xasprintf("%s/%s.conf", dirs[i], profile);

		if (strchr(profile, '/') == NULL && access(p, R_OK) == 0)
			ppath = p;
		else
			free(p);
	}
	if (!ppath) {
		const char *near = closest(profile, profile_presets);

		if (ps && near && strcmp(near, profile) != 0)
			ERR(&ld, ps, "unknown profile '%s' — did you mean '%s'?", profile, near);
		else if (ps)
			ERR(&ld, ps,
			    "unknown profile '%s' — use one of default, home-media, "
			    "timemachine, video-studio, small-office, demo (or a NAME.conf in "
			    "/etc/nastune/profiles)",
			    profile);
		else if (ndirs)
			diag_error(d, name, 0,
				   "the default preset is missing from %s — reinstall "
				   "nastune or pass --datadir",
				   dirs[0]);
		if (ps || ndirs)
			goto out;
	} else {
		set_str(&ld.m->profile, profile);
		if (!read_cfg(&ld, &preset, ppath, NULL))
			goto out;
		load_root(&ld, config_root_setting(&preset), true);
	}
	load_root(&ld, config_root_setting(&user), false);
	if (text)
		intern_file(ld.m, name);
	else
		intern_file(ld.m, name);
	validate(&ld);
	validate_cluster(&ld);
out:
	free(ppath);
	config_destroy(&user);
	config_destroy(&preset);
	if (d->errors > before) {
		model_free(ld.m);
		return NULL;
	}
	return ld.m;
}

struct model *
profile_load(const char *path, const char *const *dirs, size_t ndirs, struct diag *d)
{
	return load(path, NULL, dirs, ndirs, d);
}

struct model *
profile_load_string(const char *name, const char *text, const char *const *dirs, size_t ndirs,
		    struct diag *d)
{
	return load(name, text, dirs, ndirs, d);
}

static int
load_tuned(struct model *m, const char *name, const char *text, struct diag *d)
{
	static const char *const keys[] = { "knobs", NULL };
	struct ld ld = { .m = m, .d = d, .fallback = name };
	config_setting_t *s;
	config_t cfg;
	size_t before = d->errors;

	if (!text && access(name, F_OK) < 0 && errno == ENOENT)
		return 0;
	config_init(&cfg);
	if (read_cfg(&ld, &cfg, name, text)) {
		unknown_keys(&ld, config_root_setting(&cfg), "tuned.conf", keys);
		if ((s = member(&ld, config_root_setting(&cfg), "knobs", K_GROUP, "tuned.conf")))
			load_knobs(&ld, s, "knobs", KNOB_TUNED);
	}
	config_destroy(&cfg);
	return d->errors > before ? -EINVAL : 0;
}

int
profile_load_tuned(struct model *m, const char *path, struct diag *d)
{
	return load_tuned(m, path, NULL, d);
}

int
profile_load_tuned_string(struct model *m, const char *name, const char *text, struct diag *d)
{
	return load_tuned(m, name, text, d);
}
