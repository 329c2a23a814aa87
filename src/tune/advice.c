/* tune/advice.c - what each client should mount, from facts: the protocols and versions this
 * NAS serves to that client (an NFS export only when its clients list admits the client's
 * address or name; AFP only to a Mac that still has an AFP client), the knobs in force
 * (SMB signing, encryption, multichannel; NFS rsize/wsize) and the figures measured from
 * that client. Pure: the model and JSON in, JSON out; no DNS, no clock. */
#include <arpa/inet.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "buf.h"
#include "knobs.h"
#include "model.h"
#include "tune.h"
#include "units.h"
#include "xmalloc.h"

static const char *
upper(const char *proto)
{
	return strcmp(proto, "smb") == 0   ? "SMB"
	       : strcmp(proto, "nfs") == 0 ? "NFS"
	       : strcmp(proto, "afp") == 0 ? "AFP"
					   : proto;
}

static const char *
fstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s && *s ? s : NULL;
}

/* Whether addr lies in the network net/bits (both numeric, same family). */
static bool
in_network(const char *net, int bits, const char *addr)
{
	unsigned char a[16], n[16];
	int fam = strchr(net, ':') ? AF_INET6 : AF_INET, len = fam == AF_INET ? 4 : 16, i;

	if ((strchr(addr, ':') != NULL) != (fam == AF_INET6) || inet_pton(fam, net, n) != 1 ||
	    inet_pton(fam, addr, a) != 1 || bits < 0 || bits > len * 8)
		return false;
	for (i = 0; i < len && bits > 0; i++, bits -= 8) {
		unsigned mask = bits >= 8 ? 0xffu : (0xffu << (8 - bits)) & 0xffu;

		if ((a[i] & mask) != (n[i] & mask))
			return false;
	}
	return true;
}

/* Whether one exports(5) client spec admits the client with this address and host name.
 * Netgroups cannot be checked without NIS: not counted. Names match as wildcards, without
 * DNS (the server resolves them; a name it resolves differently is not seen here). */
static bool
spec_admits(const char *spec, const char *addr, const char *host)
{
	const char *slash = strchr(spec, '/');

	if (strcmp(spec, "*") == 0)
		return true;
	if (spec[0] == '@')
		return false;
	if (slash) {
		char net[64];
		char *end;
		long bits = strtol(slash + 1, &end, 10);

		snprintf(net, sizeof(net), "%.*s", (int)(slash - spec), spec);
		return addr && !*end && in_network(net, (int)bits, addr);
	}
	if (addr && in_network(spec, strchr(spec, ':') ? 128 : 32, addr))
		return true;
	return host && fnmatch(spec, host, FNM_CASEFOLD) == 0;
}

/* The share's NFS clients list admits the client. */
static bool
share_admits(const struct share *s, const char *addr, const char *host)
{
	for (size_t i = 0; i < s->nfs_clients.n; i++)
		if (spec_admits(s->nfs_clients.v[i], addr, host))
			return true;
	return false;
}

/* The NFS versions served: protocols.nfs.versions, narrowed by the nfs.versions knob. */
static void
nfs_versions(const struct model *m, bool *v3, bool *v4)
{
	const char *k = knob_value(m, KNOB_NFS_VERSIONS);

	*v3 = m->nfs.v3;
	*v4 = m->nfs.v4;
	if (k && m->nfs.server == NFS_SERVER_GANESHA) {
		*v3 = *v3 && strchr(k, '3');
		*v4 = *v4 && strchr(k, '4');
	}
}

/* The value in force for a knob: its setting, else the configured word, else the daemon's
 * default; src says which. */
static const char *
in_force(const struct model *m, enum knob_id id, const char *cfg, const char **src)
{
	const char *v = knob_value(m, id);

	if (v) {
		*src = knob_source(m, id) == KNOB_TUNED ? "tuned" : "pinned";
		return v;
	}
	if (cfg) {
		*src = "configured";
		return cfg;
	}
	*src = "Samba's default";
	return knob_get(id)->dflt ? knob_get(id)->dflt : "default";
}

static bool
word_is(const char *v, const char *a, const char *b)
{
	return v && (strcasecmp(v, a) == 0 || (b && strcasecmp(v, b) == 0));
}

/* NFS rsize/wsize for a Linux client: 1 MiB (its maximum), or less when the export's
 * MaxRead/MaxWrite knob is below that. */
static unsigned long long
nfs_iosize(const struct model *m, enum knob_id id)
{
	const char *v = m->nfs.server == NFS_SERVER_GANESHA ? knob_value(m, id) : NULL;
	uint64_t b = 1u << 20;

	if (v && units_parse_size(v, &b) == 0 && b < (1u << 20))
		return (unsigned long long)b;
	return 1u << 20;
}

/* The measured score of protocol p for this client (its protocol_choice entry), or -1. */
static double
score_of(const json_t *choice, const char *host, const char *p)
{
	const json_t *c, *v;
	size_t i, hl = host ? strlen(host) : 0;

	json_array_foreach(choice, i, c)
	{
		const char *cl = fstr(c, "client");

		if (!cl || !host || strncmp(cl, host, hl) != 0 || (cl[hl] && cl[hl] != ' '))
			continue;
		if ((v = json_object_get(json_object_get(c, "scores"), p)) && json_is_number(v))
			return json_number_value(v);
	}
	return -1;
}

struct client {
	const char *host, *addr, *os;
	int darwin; /* Darwin major version; 0: not macOS */
	bool mac, linux_, windows;
};

/* One offered protocol: appended to the JSON list and to the text. */
static void
offer(json_t *list, struct buf *text, const struct client *c, const json_t *choice,
      const char *proto, const char *versions, const char *how, json_t *shares)
{
	double score = score_of(choice, c->host, proto);
	json_t *o = json_pack("{s:s, s:s, s:s, s:o}", "protocol", proto, "versions", versions,
			      "how", how, "shares", shares);

	if (score >= 0)
		json_object_set_new(o, "measured_mbs", json_real(score));
	json_array_append_new(list, o);
	buf_printf(text, "%s%s %s, ", text->len ? "; " : "", upper(proto), versions);
	if (score >= 0)
		buf_printf(text, "measured %.1f MB/s", score);
	else
		buf_adds(text, "not measured from this client");
	buf_printf(text, ": %s", how);
}

static void
refuse(json_t *list, const char *proto, const char *why)
{
	json_array_append_new(list, json_pack("{s:s, s:s}", "protocol", proto, "why", why));
}

static json_t *
share_names(const struct model *m, unsigned proto, const struct client *c, bool nfs_check)
{
	json_t *a = json_array();

	for (size_t i = 0; i < m->n_shares; i++) {
		const struct share *s = &m->shares[i];

		if (!(s->protocols & proto) || (nfs_check && !share_admits(s, c->addr, c->host)))
			continue;
		json_array_append_new(a, json_string(s->name));
	}
	return a;
}

static void
advise_smb(const struct model *m, const struct client *c, const json_t *choice, json_t *list,
	   json_t *knobs, struct buf *text)
{
	const char *ssrc, *esrc, *msrc;
	const char *sign = in_force(m, KNOB_SMB_SERVER_SIGNING, m->smb.signing, &ssrc);
	const char *enc = in_force(m, KNOB_SMB_SMB_ENCRYPT, m->smb.encryption, &esrc);
	const char *mc = in_force(m, KNOB_SMB_MULTICHANNEL, NULL, &msrc);
	bool sign_req = word_is(sign, "required", "mandatory");
	bool enc_req = word_is(enc, "required", NULL);
	bool multi = word_is(mc, "yes", "true");
	bool smb3_only = m->smb.min_protocol && strncasecmp(m->smb.min_protocol, "SMB3", 4) == 0;
	char how[512];

	json_object_set_new(knobs, "smb.server_signing",
			    json_pack("{s:s, s:s}", "value", sign, "from", ssrc));
	json_object_set_new(knobs, "smb.smb_encrypt",
			    json_pack("{s:s, s:s}", "value", enc, "from", esrc));
	json_object_set_new(knobs, "smb.multichannel",
			    json_pack("{s:s, s:s}", "value", mc, "from", msrc));
	if (!m->smb.enabled || !model_uses(m, PROTO_SMB)) {
		refuse(list, "smb",
		       m->smb.enabled ? "no share is served over SMB"
				      : "SMB is disabled (protocols.smb.enabled)");
		return;
	}
	if (c->mac)
		snprintf(how, sizeof(how),
			 "/etc/nsmb.conf [default] signing_required=%s, "
			 "protocol_vers_map=%s, mc_on=%s%s (server: signing %s, encryption %s, "
			 "multichannel %s)",
			 sign_req ? "yes" : "no", smb3_only ? "4 (SMB 3)" : "6 (SMB 2 and 3)",
			 multi ? "yes" : "no",
			 enc_req ? "; the server requires encryption: macOS encrypts with SMB 3"
				 : "",
			 sign, enc, mc);
	else if (c->linux_)
		snprintf(how, sizeof(how),
			 "mount -t cifs -o vers=3.1.1,cache=strict%s%s%s "
			 "(server: signing %s, encryption %s, multichannel %s)",
			 multi ? ",multichannel,max_channels=4" : "", sign_req ? ",sign" : "",
			 enc_req ? ",seal" : "", sign, enc, mc);
	else
		snprintf(how, sizeof(how),
			 "SMB 3%s%s (server: signing %s, encryption %s, "
			 "multichannel %s)",
			 multi ? "; Windows uses multichannel by itself" : "",
			 enc_req ? "; encryption is required" : "", sign, enc, mc);
	offer(list, text, c, choice, "smb", smb3_only ? "3" : "2, 3", how,
	      share_names(m, PROTO_SMB, c, false));
}

static void
advise_nfs(const struct model *m, const struct client *c, const json_t *choice, json_t *list,
	   struct buf *text)
{
	json_t *sh;
	bool v3, v4;
	char how[512], why[256];

	nfs_versions(m, &v3, &v4);
	if (!m->nfs.enabled || !model_uses(m, PROTO_NFS)) {
		refuse(list, "nfs",
		       m->nfs.enabled ? "no share is exported over NFS"
				      : "NFS is disabled (protocols.nfs.enabled)");
		return;
	}
	if (!v3 && !v4) {
		refuse(list, "nfs", "no NFS version is served");
		return;
	}
	if ((c->mac || c->windows) && !v3) {
		snprintf(why, sizeof(why), "only NFSv4 is served and the %s NFS client is NFSv3",
			 c->mac ? "macOS" : "Windows");
		refuse(list, "nfs", why);
		return;
	}
	if (!c->mac && !c->windows && !c->linux_) {
		refuse(list, "nfs", "no NFS client known for this OS");
		return;
	}
	sh = share_names(m, PROTO_NFS, c, true);
	if (json_array_size(sh) == 0) {
		snprintf(why, sizeof(why), "no export's clients list admits %s%s%s",
			 c->addr ? c->addr : "this client", c->host ? " or " : "",
			 c->host ? c->host : "");
		refuse(list, "nfs", why);
		json_decref(sh);
		return;
	}
	if (c->linux_)
		snprintf(how, sizeof(how),
			 "mount -t nfs -o vers=%s,rsize=%llu,wsize=%llu,"
			 "nconnect=4%s",
			 v3 ? "3" : "4.1", nfs_iosize(m, KNOB_NFS_GANESHA_MAX_READ),
			 nfs_iosize(m, KNOB_NFS_GANESHA_MAX_WRITE),
			 v3 && v4 ? " (or vers=4.1: both are served)" : "");
	else if (c->mac)
		snprintf(how, sizeof(how), "mount_nfs -o vers=3,resvport,rsize=%llu,wsize=%llu",
			 nfs_iosize(m, KNOB_NFS_GANESHA_MAX_READ),
			 nfs_iosize(m, KNOB_NFS_GANESHA_MAX_WRITE));
	else
		snprintf(how, sizeof(how),
			 "the optional Client for NFS (NFSv3): mount -o "
			 "anon \\\\NAS\\export");
	offer(list, text, c, choice, "nfs", v3 && v4 ? "3, 4" : v3 ? "3" : "4", how, sh);
}

static void
advise_afp(const struct model *m, const struct client *c, const json_t *choice, json_t *list,
	   struct buf *text)
{
	if (!m->afp.enabled || !model_uses(m, PROTO_AFP)) {
		refuse(list, "afp",
		       m->afp.enabled ? "no share is served over AFP"
				      : "AFP is disabled (protocols.afp.enabled)");
		return;
	}
	if (!c->mac) {
		refuse(list, "afp", "AFP clients exist only on macOS");
		return;
	}
	if (c->darwin >= 26) {
		refuse(list, "afp", "macOS 27 and later have no AFP client");
		return;
	}
	offer(list, text, c, choice, "afp", "3",
	      "Finder: Go > Connect to Server, afp://NAS/"
	      "volume (deprecated since macOS 15.5, removed in macOS 27: prefer SMB)",
	      share_names(m, PROTO_AFP, c, false));
}

typedef void (*advise_fn)(const struct model *m, const struct client *c, const json_t *choice,
			  json_t *list, json_t *knobs, struct buf *text);

static void
advise_nfs_k(const struct model *m, const struct client *c, const json_t *choice, json_t *list,
	     json_t *knobs, struct buf *text)
{
	(void)knobs;
	advise_nfs(m, c, choice, list, text);
}

static void
advise_afp_k(const struct model *m, const struct client *c, const json_t *choice, json_t *list,
	     json_t *knobs, struct buf *text)
{
	(void)knobs;
	advise_afp(m, c, choice, list, text);
}

static json_t *
advise_client(const struct model *m, const json_t *f, const json_t *choice)
{
	/* Each OS's own protocol first: NFS on Linux, SMB elsewhere. */
	static const advise_fn linux_order[] = { advise_nfs_k, advise_smb, advise_afp_k };
	static const advise_fn other_order[] = { advise_smb, advise_nfs_k, advise_afp_k };
	struct client c = { 0 };
	const char *ver = fstr(f, "os_version");
	json_t *all = json_array(), *offered = json_array(), *refused = json_array();
	json_t *knobs = json_object(), *x, *out;
	struct buf text, body;
	const char *use = NULL;
	double usev = -1;
	size_t i;
	char *t;

	c.host = fstr(f, "hostname");
	c.addr = fstr(json_object_get(f, "nic"), "address");
	c.os = fstr(f, "os");
	c.mac = c.os && strcmp(c.os, "Darwin") == 0;
	c.linux_ = c.os && strcmp(c.os, "Linux") == 0;
	c.windows = c.os && (strncmp(c.os, "Windows", 7) == 0 || strncmp(c.os, "CYGWIN", 6) == 0 ||
			     strncmp(c.os, "MINGW", 5) == 0);
	c.darwin = c.mac && ver ? atoi(ver) : 0;
	buf_init(&body);
	for (i = 0; i < 3; i++)
		(c.linux_ ? linux_order : other_order)[i](m, &c, choice, all, knobs, &body);
	json_array_foreach(all, i, x)
		json_array_append(json_object_get(x, "how") ? offered : refused, x);
	json_decref(all);
	/* Use the fastest measured from this client among what it is offered; unmeasured,
	 * the OS's own protocol (listed first). */
	json_array_foreach(offered, i, x)
	{
		const json_t *v = json_object_get(x, "measured_mbs");

		if (!use || (v && json_number_value(v) > usev)) {
			use = fstr(x, "protocol");
			usev = v ? json_number_value(v) : -1;
		}
	}
	buf_init(&text);
	buf_printf(&text, "%s: ",
		   c.mac  ? (c.darwin >= 26 ? "macOS 27+" : "macOS")
		   : c.os ? c.os
			  : "unknown OS");
	if (use && usev >= 0)
		buf_printf(&text, "use %s (the fastest measured from here); ", upper(use));
	else if (use)
		buf_printf(&text, "use %s (not measured from here); ", upper(use));
	buf_adds(&text, body.len ? body.data
				 : "nothing this NAS serves can be used from this "
				   "client");
	json_array_foreach(refused, i, x)
		buf_printf(&text, "; no %s: %s", upper(fstr(x, "protocol")), fstr(x, "why"));
	t = buf_steal(&text, NULL);
	out = json_pack("{s:s, s:s, s:s?, s:s, s:s?, s:o, s:o, s:o}", "client",
			c.host ? c.host : "?", "os", c.os ? c.os : "?", "address", c.addr, "advice",
			t, "use", use, "protocols", offered, "not_offered", refused, "knobs",
			knobs);
	free(t);
	buf_clear(&body);
	return out;
}

json_t *
tune_advice(const struct model *m, const json_t *agents, const json_t *choice)
{
	json_t *a = json_array(), *f;
	size_t i;

	if (!agents || json_array_size(agents) == 0) {
		json_array_append_new(
			a, json_pack("{s:s, s:s}", "client", "all", "advice",
				     "client results are missing: this tune measured over loopback "
				     "only; run "
				     "nastune agent on client machines and tune --clients auto"));
		return a;
	}
	json_array_foreach(agents, i, f) json_array_append_new(a, advise_client(m, f, choice));
	return a;
}
