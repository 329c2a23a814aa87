/* tune/advice.c - what each client should mount, from facts: the protocols and versions this
 * NAS serves to that client (an NFS export only when its clients list admits the client's
 * address or name; AFP only to a Mac that still has an AFP client), the knobs in force
 * (SMB signing, encryption, multichannel; NFS rsize/wsize) and the figures measured from
 * that client. Pure: the model and typed facts in, typed advice out; no DNS, no clock. */
#include <arpa/inet.h>
#include <fnmatch.h>
#include <math.h>
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

/* A fact, NULL when empty. */
static const char *
fact(const char *s)
{
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

/* The measured score of protocol p for this client (its protocol choice), or -1. */
static double
score_of(const struct tune_choices *choice, const char *host, const char *p)
{
	size_t hl = host ? strlen(host) : 0;

	for (size_t i = 0; choice && i < choice->n; i++) {
		const struct tune_choice *c = &choice->v[i];
		const char *cl = fact(c->client);

		if (!cl || !host || strncmp(cl, host, hl) != 0 || (cl[hl] && cl[hl] != ' '))
			continue;
		for (size_t j = 0; j < c->nscores; j++)
			if (strcmp(c->scores[j].protocol, p) == 0 && isfinite(c->scores[j].score))
				return c->scores[j].score;
	}
	return -1;
}

struct client {
	const char *host, *addr, *os;
	int darwin; /* Darwin major version; 0: not macOS */
	bool mac, linux_, windows;
};

/* One offered protocol: added to the client's advice and to the text. */
static void
offer(struct tune_client_advice *a, struct buf *text, const struct client *c,
      const struct tune_choices *choice, const char *proto, const char *versions, const char *how,
      char **shares, size_t nshares)
{
	struct tune_offer *o = &a->offered[a->noffered++];

	*o = (struct tune_offer){ .protocol = proto,
				  .versions = versions,
				  .shares = shares,
				  .nshares = nshares,
				  .measured_mbs = score_of(choice, c->host, proto) };
	snprintf(o->how, sizeof(o->how), "%s", how);
	buf_printf(text, "%s%s %s, ", text->len ? "; " : "", upper(proto), versions);
	if (o->measured_mbs >= 0)
		buf_printf(text, "measured %.1f MB/s", o->measured_mbs);
	else
		buf_adds(text, "not measured from this client");
	buf_printf(text, ": %s", how);
}

static void
refuse(struct tune_client_advice *a, const char *proto, const char *why)
{
	struct tune_refusal *r = &a->refused[a->nrefused++];

	r->protocol = proto;
	snprintf(r->why, sizeof(r->why), "%s", why);
}

/* The names of the shares served over proto (and, for NFS, exported to the client). */
static char **
share_names(const struct model *m, unsigned proto, const struct client *c, bool nfs_check,
	    size_t *n)
{
	char **v = xcalloc(m->n_shares ? m->n_shares : 1, sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < m->n_shares; i++) {
		const struct share *s = &m->shares[i];

		if (!(s->protocols & proto) || (nfs_check && !share_admits(s, c->addr, c->host)))
			continue;
		v[(*n)++] = xstrdup(s->name);
	}
	return v;
}

static void
knob_use(struct tune_client_advice *a, const char *name, const char *value, const char *from)
{
	a->knobs[a->nknobs++] =
		(struct tune_knob_use){ .name = name, .value = xstrdup(value), .from = from };
}

static void
advise_smb(const struct model *m, const struct client *c, const struct tune_choices *choice,
	   struct tune_client_advice *a, struct buf *text)
{
	const char *ssrc, *esrc, *msrc;
	const char *sign = in_force(m, KNOB_SMB_SERVER_SIGNING, m->smb.signing, &ssrc);
	const char *enc = in_force(m, KNOB_SMB_SMB_ENCRYPT, m->smb.encryption, &esrc);
	const char *mc = in_force(m, KNOB_SMB_MULTICHANNEL, NULL, &msrc);
	bool sign_req = word_is(sign, "required", "mandatory");
	bool enc_req = word_is(enc, "required", NULL);
	bool multi = word_is(mc, "yes", "true");
	bool smb3_only = m->smb.min_protocol && strncasecmp(m->smb.min_protocol, "SMB3", 4) == 0;
	char how[512], **sh;
	size_t nsh;

	knob_use(a, "smb.server_signing", sign, ssrc);
	knob_use(a, "smb.smb_encrypt", enc, esrc);
	knob_use(a, "smb.multichannel", mc, msrc);
	if (!m->smb.enabled || !model_uses(m, PROTO_SMB)) {
		refuse(a, "smb",
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
	sh = share_names(m, PROTO_SMB, c, false, &nsh);
	offer(a, text, c, choice, "smb", smb3_only ? "3" : "2, 3", how, sh, nsh);
}

static void
advise_nfs(const struct model *m, const struct client *c, const struct tune_choices *choice,
	   struct tune_client_advice *a, struct buf *text)
{
	char how[512], why[256], **sh;
	size_t nsh;
	bool v3, v4;

	nfs_versions(m, &v3, &v4);
	if (!m->nfs.enabled || !model_uses(m, PROTO_NFS)) {
		refuse(a, "nfs",
		       m->nfs.enabled ? "no share is exported over NFS"
				      : "NFS is disabled (protocols.nfs.enabled)");
		return;
	}
	if (!v3 && !v4) {
		refuse(a, "nfs", "no NFS version is served");
		return;
	}
	if ((c->mac || c->windows) && !v3) {
		snprintf(why, sizeof(why), "only NFSv4 is served and the %s NFS client is NFSv3",
			 c->mac ? "macOS" : "Windows");
		refuse(a, "nfs", why);
		return;
	}
	if (!c->mac && !c->windows && !c->linux_) {
		refuse(a, "nfs", "no NFS client known for this OS");
		return;
	}
	sh = share_names(m, PROTO_NFS, c, true, &nsh);
	if (nsh == 0) {
		snprintf(why, sizeof(why), "no export's clients list admits %s%s%s",
			 c->addr ? c->addr : "this client", c->host ? " or " : "",
			 c->host ? c->host : "");
		refuse(a, "nfs", why);
		free(sh);
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
	offer(a, text, c, choice, "nfs", v3 && v4 ? "3, 4" : v3 ? "3" : "4", how, sh, nsh);
}

static void
advise_afp(const struct model *m, const struct client *c, const struct tune_choices *choice,
	   struct tune_client_advice *a, struct buf *text)
{
	char **sh;
	size_t nsh;

	if (!m->afp.enabled || !model_uses(m, PROTO_AFP)) {
		refuse(a, "afp",
		       m->afp.enabled ? "no share is served over AFP"
				      : "AFP is disabled (protocols.afp.enabled)");
		return;
	}
	if (!c->mac) {
		refuse(a, "afp", "AFP clients exist only on macOS");
		return;
	}
	if (c->darwin >= 26) {
		refuse(a, "afp", "macOS 27 and later have no AFP client");
		return;
	}
	sh = share_names(m, PROTO_AFP, c, false, &nsh);
	offer(a, text, c, choice, "afp", "3",
	      "Finder: Go > Connect to Server, afp://NAS/"
	      "volume (deprecated since macOS 15.5, removed in macOS 27: prefer SMB)",
	      sh, nsh);
}

typedef void (*advise_fn)(const struct model *m, const struct client *c,
			  const struct tune_choices *choice, struct tune_client_advice *a,
			  struct buf *text);

/* The client as facts f describe it. */
static void
client_of(const struct agent_facts *f, struct client *c)
{
	const char *ver = fact(f->os_version);

	*c = (struct client){ .host = fact(f->hostname),
			      .addr = fact(f->address),
			      .os = fact(f->os) };
	c->mac = c->os && strcmp(c->os, "Darwin") == 0;
	c->linux_ = c->os && strcmp(c->os, "Linux") == 0;
	c->windows = c->os && (strncmp(c->os, "Windows", 7) == 0 ||
			       strncmp(c->os, "CYGWIN", 6) == 0 || strncmp(c->os, "MINGW", 5) == 0);
	c->darwin = c->mac && ver ? atoi(ver) : 0;
}

static void
advise_client(const struct model *m, const struct agent_facts *f, const struct tune_choices *choice,
	      struct tune_client_advice *a)
{
	/* Each OS's own protocol first: NFS on Linux, SMB elsewhere. */
	static const advise_fn linux_order[] = { advise_nfs, advise_smb, advise_afp };
	static const advise_fn other_order[] = { advise_smb, advise_nfs, advise_afp };
	struct client c;
	struct buf text, body;
	double usev = -1;
	size_t i;

	client_of(f, &c);
	*a = (struct tune_client_advice){ .client = xstrdup(c.host ? c.host : "?"),
					  .os = xstrdup(c.os ? c.os : "?"),
					  .address = c.addr ? xstrdup(c.addr) : NULL };
	buf_init(&body);
	for (i = 0; i < 3; i++)
		(c.linux_ ? linux_order : other_order)[i](m, &c, choice, a, &body);
	/* Use the fastest measured from this client among what it is offered; unmeasured,
	 * the OS's own protocol (listed first). */
	for (i = 0; i < a->noffered; i++) {
		const struct tune_offer *o = &a->offered[i];

		if (!a->use || (o->measured_mbs >= 0 && o->measured_mbs > usev)) {
			a->use = o->protocol;
			usev = o->measured_mbs >= 0 ? o->measured_mbs : -1;
		}
	}
	buf_init(&text);
	buf_printf(&text, "%s: ",
		   c.mac  ? (c.darwin >= 26 ? "macOS 27+" : "macOS")
		   : c.os ? c.os
			  : "unknown OS");
	if (a->use && usev >= 0)
		buf_printf(&text, "use %s (the fastest measured from here); ", upper(a->use));
	else if (a->use)
		buf_printf(&text, "use %s (not measured from here); ", upper(a->use));
	buf_adds(&text, body.len ? body.data
				 : "nothing this NAS serves can be used from this "
				   "client");
	for (i = 0; i < a->nrefused; i++)
		buf_printf(&text, "; no %s: %s", upper(a->refused[i].protocol), a->refused[i].why);
	a->advice = buf_steal(&text, NULL);
	buf_clear(&body);
}

void
tune_advice(const struct model *m, const struct tune_agents *agents,
	    const struct tune_choices *choice, struct tune_advices *out)
{
	*out = (struct tune_advices){ 0 };
	if (!agents || agents->n == 0) {
		out->v = xcalloc(1, sizeof(*out->v));
		out->v[out->n++] = (struct tune_client_advice){
			.client = xstrdup("all"),
			.advice = xstrdup("client results are missing: this tune measured over "
					  "loopback only; run nastune agent on client machines "
					  "and tune --clients auto"),
			.placeholder = true
		};
		return;
	}
	out->v = xcalloc(agents->n, sizeof(*out->v));
	for (size_t i = 0; i < agents->n; i++)
		advise_client(m, &agents->v[i], choice, &out->v[out->n++]);
}

/* ---- small work: the clients' own caches, with the figure measured from the client ---- */

/* Whether a result's client label ("host" or "host (...)") is host's. */
static bool
labelled(const char *label, const char *host)
{
	size_t n = strlen(host);

	return label && strncmp(label, host, n) == 0 && (!label[n] || label[n] == ' ');
}

/* The median of workload/metric measured from host over proto, as a rate (per second: a
 * time in us is inverted), or -1 when not measured. */
static double
rate_of(const struct bench_results *rs, const char *host, const char *proto, const char *wl,
	const char *metric)
{
	for (size_t i = 0; rs && i < rs->n; i++) {
		const struct bench_result *r = &rs->v[i];

		if (!labelled(r->client, host) || !r->protocol || strcmp(r->protocol, proto) ||
		    !r->workload || strcmp(r->workload, wl) || !r->metric ||
		    strcmp(r->metric, metric) || !r->nruns || !(r->st.median > 0))
			continue;
		return strcmp(r->unit, "us") == 0 ? 1e6 / r->st.median : r->st.median;
	}
	return -1;
}

/* What the client's cache is worth on small work, as measured from host over proto: a
 * second pass (hot) against the first on a new connection (cold), of `make -n` over a tree,
 * else of a directory's stats, else of its listing. Returns the ratio hot/cold with the
 * figure in fig, or 0 when none was measured. */
static double
cache_figure(const struct bench_results *rs, const char *host, const char *proto, char *fig,
	     size_t len)
{
	static const struct {
		const char *wl, *hot, *cold, *what;
	} pairs[] = {
		{ "source-tree", "stat-hot", "stat-cold", "source-tree's stats (make -n)" },
		{ "metadata", "stat-hit-hot", "stat-hit-cold", "metadata's stats" },
		{ "metadata", "list-hot", "list-cold", "metadata's listings" },
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(*pairs); i++) {
		double hot = rate_of(rs, host, proto, pairs[i].wl, pairs[i].hot),
		       cold = rate_of(rs, host, proto, pairs[i].wl, pairs[i].cold);

		if (hot <= 0 || cold <= 0)
			continue;
		snprintf(fig, len,
			 "%s measured from here %.0f/s again against %.0f/s on a new "
			 "connection (x%.1f)",
			 pairs[i].what, hot, cold, hot / cold);
		return hot / cold;
	}
	return 0;
}

/* The client-side cache advice for one offered protocol, after its figure. */
static const char *
cache_advice(const struct tune_client_advice *a, const char *proto)
{
	bool mac = strcmp(a->os, "Darwin") == 0, lin = strcmp(a->os, "Linux") == 0;

	if (lin && strcmp(proto, "nfs") == 0)
		return "to keep what the cache holds longer, mount -o actimeo=60 (attributes kept "
		       "60 s: another client's change shows up to 60 s late), and nocto where "
		       "this client alone writes the tree";
	if (lin && strcmp(proto, "smb") == 0)
		return "to keep what the cache holds longer, mount -t cifs -o actimeo=60 (default "
		       "1 s), and cache=loose only where this client alone writes the share "
		       "(cache=strict, the default, is the safe one)";
	if (mac && strcmp(proto, "smb") == 0)
		return "for Finder listings, /etc/nsmb.conf [default] dir_cache_max=300 and "
		       "dir_cache_min=60 (a directory's listing kept up to 5 minutes; defaults "
		       "60 s and 30 s): another client's change shows up that much later";
	if (mac && strcmp(proto, "nfs") == 0)
		return "to keep what the cache holds longer, mount_nfs -o actimeo=60";
	return NULL;
}

void
tune_advice_small_work(struct tune_advices *out, const struct bench_results *rs)
{
	for (size_t i = 0; out && i < out->n; i++) {
		struct tune_client_advice *a = &out->v[i];

		if (a->placeholder || !a->client || !a->os)
			continue;
		for (size_t j = 0; j < a->noffered; j++) {
			const char *p = a->offered[j].protocol, *how = cache_advice(a, p);
			char fig[256], *text;

			if (!how || cache_figure(rs, a->client, p, fig, sizeof(fig)) <= 0)
				continue; /* advice only with its measured figure */
			text = xasprintf("%s; small work over %s: %s; %s", a->advice, upper(p), fig,
					 how);
			free(a->advice);
			a->advice = text;
		}
	}
}

void
tune_advices_clear(struct tune_advices *as)
{
	for (size_t i = 0; as && i < as->n; i++) {
		struct tune_client_advice *a = &as->v[i];

		for (size_t j = 0; j < a->noffered; j++) {
			for (size_t k = 0; k < a->offered[j].nshares; k++)
				free(a->offered[j].shares[k]);
			free(a->offered[j].shares);
		}
		for (size_t j = 0; j < a->nknobs; j++)
			free(a->knobs[j].value);
		free(a->client);
		free(a->os);
		free(a->address);
		free(a->advice);
	}
	if (as) {
		free(as->v);
		*as = (struct tune_advices){ 0 };
	}
}
