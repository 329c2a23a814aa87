/* test_tune_advice.c - client advice from facts (tune_advice) and the MTU ceiling from the
 * agents' facts (tune_mtu_ceiling): only what this NAS serves to each client, with the knobs
 * in force and the measured figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "knobs.h"
#include "model.h"
#include "profile.h"
#include "tune.h"
#include "tune/search_api.h"

static const char *const dirs[] = { "profiles" };

/* protocols: the protocols group's body; clients: the Media share's NFS clients list. */
static struct model *
model_for(const char *protocols, const char *clients, const char *extra)
{
	char text[4096];
	struct diag d;
	struct model *m;

	snprintf(text, sizeof(text),
		 "protocols = { %s };\n"
		 "shares = ( { name = \"Media\"; path = \"/srv/media\";\n"
		 "  protocols = [\"smb\", \"nfs\", \"afp\"]; nfs = { clients = [%s]; }; },\n"
		 "  { name = \"Docs\"; path = \"/srv/docs\"; protocols = [\"smb\"]; guest = true; "
		 "} );\n"
		 "%s",
		 protocols, clients, extra ? extra : "");
	diag_init(&d);
	m = profile_load_string("t.conf", text, dirs, 1, &d);
	diag_print(&d, stderr);
	assert_non_null(m);
	diag_clear(&d);
	return m;
}

#define ALL_ON                                                                                     \
	"smb = { enabled = true; }; afp = { enabled = true; }; "                                   \
	"nfs = { enabled = true; server = \"ganesha\"; versions = [3, 4]; };"

static void
add_agent(struct agent_factset *a, const char *host, const char *os, const char *ver,
	  const char *addr, long long mtu, long long path_mtu)
{
	a->v = realloc(a->v, (a->n + 1) * sizeof(*a->v));
	assert_non_null(a->v);
	a->v[a->n++] = (struct agent_facts){ .hostname = host ? strdup(host) : NULL,
					     .os = os ? strdup(os) : NULL,
					     .os_version = ver ? strdup(ver) : NULL,
					     .address = addr ? strdup(addr) : NULL,
					     .mtu = mtu,
					     .path_mtu = path_mtu };
}

static struct agent_factset
agents(void)
{
	struct agent_factset a = { 0 };

	add_agent(&a, "lin", "Linux", "6.1.0", "198.18.0.12", 1500, 0);
	add_agent(&a, "mac", "Darwin", "26.0.0", "198.18.0.11", 1500, 0);
	add_agent(&a, "oldmac", "Darwin", "24.1.0", "198.18.0.13", 1500, 0);
	return a;
}

/* A client's choice with its scores (protocol, score; NULL ends). */
static void
add_choice(struct tune_choices *c, const char *client, const char *protocol, ...)
{
	struct tune_choice *x;
	const char *p;
	va_list ap;

	c->v = realloc(c->v, (c->n + 1) * sizeof(*c->v));
	assert_non_null(c->v);
	x = &c->v[c->n++];
	*x = (struct tune_choice){ .client = strdup(client), .os = strdup("?") };
	va_start(ap, protocol);
	while ((p = va_arg(ap, const char *))) {
		x->scores = realloc(x->scores, (x->nscores + 1) * sizeof(*x->scores));
		assert_non_null(x->scores);
		x->scores[x->nscores++] =
			(struct tune_score){ .protocol = strdup(p), .score = va_arg(ap, double) };
		if (strcmp(p, protocol) == 0)
			x->protocol = x->scores[x->nscores - 1].protocol;
	}
	va_end(ap);
}

static struct tune_choices
choice(void)
{
	struct tune_choices c = { 0 };

	add_choice(&c, "lin (198.18.0.12)", "nfs", "nfs", 612.5, "smb", 450.25, NULL);
	add_choice(&c, "oldmac (198.18.0.13)", "afp", "afp", 300.0, "smb", 280.0, NULL);
	return c;
}

/* The advice as the tune document holds it (tune/doc.c). */
static json_t *
advise(const struct model *m, const struct agent_factset *a, const struct tune_choices *c)
{
	struct tune_advices adv;
	json_t *j;

	tune_advice(m, a ? &(struct tune_agents){ a->v, a->n } : NULL, c, &adv);
	j = tune_advices_json(&adv);
	tune_advices_clear(&adv);
	return j;
}

/* The advice entry of client host. */
static const json_t *
entry(const json_t *adv, const char *host)
{
	const json_t *x;
	size_t i;

	json_array_foreach(adv, i, x) if (strcmp(json_string_value(json_object_get(x, "client")),
						 host) == 0) return x;
	fail_msg("no advice for %s", host);
	return NULL;
}

/* The offered protocol p of an entry, or NULL. */
static const json_t *
offered(const json_t *e, const char *p)
{
	const json_t *x;
	size_t i;

	json_array_foreach(json_object_get(e, "protocols"), i,
			   x) if (strcmp(json_string_value(json_object_get(x, "protocol")), p) ==
				  0) return x;
	return NULL;
}

/* Why protocol p is not offered, or NULL when it is not in not_offered. */
static const char *
refused(const json_t *e, const char *p)
{
	const json_t *x;
	size_t i;

	json_array_foreach(json_object_get(e, "not_offered"), i,
			   x) if (strcmp(json_string_value(json_object_get(x, "protocol")), p) ==
				  0) return json_string_value(json_object_get(x, "why"));
	return NULL;
}

static const char *
text(const json_t *e)
{
	return json_string_value(json_object_get(e, "advice"));
}

static const char *
how(const json_t *e, const char *p)
{
	const json_t *o = offered(e, p);

	assert_non_null(o);
	return json_string_value(json_object_get(o, "how"));
}

static void
test_everything_served(void **state)
{
	struct model *m = model_for(ALL_ON, "\"198.18.0.0/24\"", NULL);
	struct agent_factset a = agents();
	struct tune_choices c = choice();
	json_t *adv = advise(m, &a, &c);
	const json_t *lin = entry(adv, "lin"), *old = entry(adv, "oldmac");

	(void)state;
	/* Linux: NFS first (both versions served), with the figures measured from it. */
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(lin, "protocols"), 0), "protocol")),
		"nfs");
	assert_string_equal(json_string_value(json_object_get(offered(lin, "nfs"), "versions")),
			    "3, 4");
	assert_non_null(strstr(how(lin, "nfs"), "vers=3,rsize=1048576,wsize=1048576,nconnect=4"));
	assert_non_null(strstr(text(lin), "measured 612.5 MB/s"));
	assert_non_null(strstr(text(lin), "measured 450.2 MB/s"));
	assert_true(json_real_value(json_object_get(offered(lin, "nfs"), "measured_mbs")) == 612.5);
	assert_null(offered(lin, "afp"));
	assert_non_null(strstr(refused(lin, "afp"), "only on macOS"));
	/* The Docs share is SMB only: NFS lists Media alone. */
	assert_int_equal(json_array_size(json_object_get(offered(lin, "nfs"), "shares")), 1);
	assert_int_equal(json_array_size(json_object_get(offered(lin, "smb"), "shares")), 2);
	/* An older Mac: SMB first, AFP still possible there. */
	assert_non_null(offered(old, "afp"));
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(old, "protocols"), 0), "protocol")),
		"smb");
	assert_non_null(strstr(text(old), "AFP 3, measured 300.0 MB/s"));
	/* Use: the fastest measured among what is offered. */
	assert_string_equal(json_string_value(json_object_get(lin, "use")), "nfs");
	assert_non_null(
		strstr(text(lin), "Linux: use NFS (the fastest measured from here); NFS 3, 4"));
	assert_string_equal(json_string_value(json_object_get(old, "use")), "afp");
	json_decref(adv);
	agent_factset_clear(&a);
	tune_choices_clear(&c);
	model_free(m);
}

static void
add_small(struct bench_results *rs, const char *client, const char *proto, const char *wl,
	  const char *metric, const char *unit, double median)
{
	struct bench_result r = { .client = (char *)client,
				  .protocol = (char *)proto,
				  .workload = (char *)wl,
				  .metric = (char *)metric,
				  .unit = (char *)unit,
				  .runs = &median,
				  .nruns = 1,
				  .pass = -1 };

	bench_results_add(rs, &r);
	rs->v[rs->n - 1].st.median = median;
}

/* Small work: each client's own caches advised after the figure measured from that client
 * over that protocol (a second pass against the first), and only then. */
static void
test_small_work(void **state)
{
	struct model *m = model_for(ALL_ON, "\"198.18.0.0/24\"", NULL);
	struct agent_factset a = agents();
	struct tune_choices c = choice();
	struct bench_results rs = { 0 };
	struct tune_advices adv;
	const char *lin = NULL, *mac = NULL, *old = NULL;

	(void)state;
	add_small(&rs, "lin (198.18.0.12)", "nfs", "source-tree", "stat-hot", "ops/s", 8000);
	add_small(&rs, "lin (198.18.0.12)", "nfs", "source-tree", "stat-cold", "ops/s", 2000);
	add_small(&rs, "mac (198.18.0.11)", "smb", "metadata", "list-hot", "us", 1000);
	add_small(&rs, "mac (198.18.0.11)", "smb", "metadata", "list-cold", "us", 3000);
	add_small(&rs, "oldmac (198.18.0.13)", "smb", "source-tree", "stat-hot", "ops/s", 900);
	tune_advice(m, &(struct tune_agents){ a.v, a.n }, &c, &adv);
	tune_advice_small_work(&adv, &rs);
	for (size_t i = 0; i < adv.n; i++) {
		const char *t = adv.v[i].advice;

		if (strcmp(adv.v[i].client, "lin") == 0)
			lin = t;
		else if (strcmp(adv.v[i].client, "mac") == 0)
			mac = t;
		else
			old = t;
	}
	assert_non_null(strstr(lin, "small work over NFS: source-tree's stats (make -n) measured "
				    "from here 8000/s again against 2000/s on a new connection "
				    "(x4.0)"));
	assert_non_null(strstr(lin, "actimeo=60"));
	assert_non_null(strstr(lin, "nocto"));
	assert_null(strstr(lin, "small work over SMB")); /* not measured over SMB */
	assert_non_null(strstr(mac, "small work over SMB: metadata's listings"));
	assert_non_null(strstr(mac, "(x3.0)"));
	assert_non_null(strstr(mac, "dir_cache_max=300"));
	assert_null(strstr(old, "small work")); /* a hot figure without its cold one */
	tune_advices_clear(&adv);
	bench_results_clear(&rs);
	agent_factset_clear(&a);
	tune_choices_clear(&c);
	model_free(m);
}

/* NFS off: no NFS advice at all (the old advice told every Linux client vers=3, nconnect=4). */
static void
test_nfs_off(void **state)
{
	struct model *m =
		model_for("smb = { enabled = true; }; nfs = { enabled = false; };", "\"*\"", NULL);
	struct agent_factset a = agents();
	json_t *adv = advise(m, &a, NULL);
	const json_t *lin = entry(adv, "lin"), *mac = entry(adv, "mac");

	(void)state;
	assert_null(offered(lin, "nfs"));
	assert_null(strstr(text(lin), "mount -t nfs"));
	assert_null(strstr(text(lin), "nconnect"));
	assert_non_null(strstr(refused(lin, "nfs"), "NFS is disabled"));
	assert_string_equal(json_string_value(json_object_get(lin, "use")), "smb");
	assert_non_null(offered(lin, "smb"));
	assert_non_null(strstr(text(lin), "not measured from this client"));
	assert_null(offered(mac, "nfs"));
	assert_null(offered(mac, "afp"));
	assert_non_null(strstr(refused(mac, "afp"), "AFP is disabled"));
	json_decref(adv);
	agent_factset_clear(&a);
	model_free(m);
}

/* Only NFSv4 exported: Linux is told vers=4.1, never vers=3; the Macs' NFSv3 client gets no NFS. */
static void
test_v4_only(void **state)
{
	struct model *m = model_for("smb = { enabled = true; }; nfs = { enabled = true; "
				    "server = \"ganesha\"; versions = [4]; };",
				    "\"*\"", NULL);
	struct agent_factset a = agents();
	json_t *adv = advise(m, &a, NULL);
	const json_t *lin = entry(adv, "lin"), *mac = entry(adv, "mac");

	(void)state;
	assert_string_equal(json_string_value(json_object_get(offered(lin, "nfs"), "versions")),
			    "4");
	assert_non_null(strstr(how(lin, "nfs"), "vers=4.1"));
	assert_null(strstr(how(lin, "nfs"), "vers=3"));
	assert_null(offered(mac, "nfs"));
	assert_non_null(strstr(refused(mac, "nfs"), "only NFSv4"));
	json_decref(adv);
	model_free(m);
	/* The same through the nfs.versions knob (Ganesha's Protocols), tuned to "4". */
	m = model_for(ALL_ON, "\"*\"", "tuning = { knobs = { nfs = { versions = \"4\"; }; }; };");
	adv = advise(m, &a, NULL);
	lin = entry(adv, "lin");
	assert_string_equal(json_string_value(json_object_get(offered(lin, "nfs"), "versions")),
			    "4");
	assert_null(strstr(how(lin, "nfs"), "vers=3"));
	json_decref(adv);
	agent_factset_clear(&a);
	model_free(m);
}

/* The export's clients list decides: not admitted, no NFS, and why. */
static void
test_not_admitted(void **state)
{
	struct model *m = model_for(ALL_ON, "\"198.18.1.0/24\", \"@lab\", \"other*.lan\"", NULL);
	struct agent_factset a = agents();
	json_t *adv = advise(m, &a, NULL);
	const json_t *lin = entry(adv, "lin");

	(void)state;
	assert_null(offered(lin, "nfs"));
	assert_non_null(strstr(refused(lin, "nfs"), "admits 198.18.0.12"));
	assert_null(strstr(text(lin), "mount -t nfs"));
	json_decref(adv);
	model_free(m);
	/* Admitted by a network that holds it, by its own address, by its name. */
	static const char *const yes[] = { "\"198.18.0.8/29\"", "\"198.18.0.12\"", "\"LIN\"",
					   "\"l?n\"", "\"10.0.0.0/8\", \"198.18.0.0/15\"" };
	static const char *const no[] = { "\"198.18.0.0/29\"", "\"198.18.0.13\"", "\"lin.lan\"",
					  "\"2001:db8::/32\"" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		m = model_for(ALL_ON, yes[i], NULL);
		adv = advise(m, &a, NULL);
		if (!offered(entry(adv, "lin"), "nfs"))
			fail_msg("clients [%s] should admit lin (198.18.0.12)", yes[i]);
		json_decref(adv);
		model_free(m);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		m = model_for(ALL_ON, no[i], NULL);
		adv = advise(m, &a, NULL);
		if (offered(entry(adv, "lin"), "nfs"))
			fail_msg("clients [%s] should not admit lin (198.18.0.12)", no[i]);
		json_decref(adv);
		model_free(m);
	}
	agent_factset_clear(&a);
	/* IPv6: by network and by address. */
	add_agent(&a, "lin6", "Linux", NULL, "fd00:198:18::c", 0, 0);
	m = model_for(ALL_ON, "\"fd00:198:18::/64\"", NULL);
	adv = advise(m, &a, NULL);
	assert_non_null(offered(entry(adv, "lin6"), "nfs"));
	json_decref(adv);
	model_free(m);
	m = model_for(ALL_ON, "\"fd00:198:19::/64\", \"198.18.0.0/15\"", NULL);
	adv = advise(m, &a, NULL);
	assert_null(offered(entry(adv, "lin6"), "nfs"));
	json_decref(adv);
	model_free(m);
	agent_factset_clear(&a);
}

/* macOS 27 has no AFP client: never advised there, even when AFP is served and measured. */
static void
test_macos27_no_afp(void **state)
{
	struct model *m = model_for(ALL_ON, "\"*\"", NULL);
	struct agent_factset a = agents();
	struct tune_choices c = choice();
	json_t *adv = advise(m, &a, &c);
	const json_t *mac = entry(adv, "mac");

	(void)state;
	assert_null(offered(mac, "afp"));
	assert_null(strstr(text(mac), "afp://"));
	assert_non_null(strstr(refused(mac, "afp"), "macOS 27"));
	assert_non_null(strstr(text(mac), "macOS 27+: use SMB (not measured from here); SMB 2, 3"));
	assert_string_equal(json_string_value(json_object_get(mac, "use")), "smb");
	assert_non_null(offered(mac, "nfs")); /* NFSv3 is served and admits everyone */
	assert_non_null(strstr(how(mac, "nfs"), "vers=3"));
	json_decref(adv);
	agent_factset_clear(&a);
	tune_choices_clear(&c);
	model_free(m);
}

/* SMB advice follows the knobs in force: the tuned/pinned value, else the configuration,
 * else Samba's default. */
static void
test_smb_knobs(void **state)
{
	struct model *m = model_for("smb = { enabled = true; signing = \"required\"; }; "
				    "nfs = { enabled = false; };",
				    "\"*\"",
				    "tuning = { knobs = { smb = { multichannel = \"no\"; "
				    "smb_encrypt = \"required\"; }; }; };");
	struct agent_factset a = agents();
	json_t *adv = advise(m, &a, NULL);
	const json_t *lin = entry(adv, "lin"), *mac = entry(adv, "mac"), *k;

	(void)state;
	assert_non_null(strstr(how(mac, "smb"), "signing_required=yes"));
	assert_non_null(strstr(how(mac, "smb"), "mc_on=no"));
	assert_non_null(strstr(how(mac, "smb"), "requires encryption"));
	assert_non_null(strstr(how(lin, "smb"), ",sign"));
	assert_non_null(strstr(how(lin, "smb"), ",seal"));
	assert_null(strstr(how(lin, "smb"), "multichannel,"));
	k = json_object_get(lin, "knobs");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(k, "smb.multichannel"), "value")),
		"no");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(k, "smb.multichannel"), "from")),
		"pinned");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(k, "smb.server_signing"), "from")),
			    "configured");
	json_decref(adv);
	model_free(m);
	/* Nothing set: Samba's defaults (multichannel on, signing and encryption default). */
	m = model_for("smb = { enabled = true; }; nfs = { enabled = false; };", "\"*\"", NULL);
	adv = advise(m, &a, NULL);
	lin = entry(adv, "lin");
	mac = entry(adv, "mac");
	assert_non_null(strstr(how(lin, "smb"), "multichannel,max_channels=4"));
	assert_null(strstr(how(lin, "smb"), ",seal"));
	assert_null(strstr(how(lin, "smb"), ",sign"));
	assert_non_null(strstr(how(mac, "smb"), "mc_on=yes"));
	assert_non_null(strstr(how(mac, "smb"), "signing_required=no"));
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(lin, "knobs"), "smb.multichannel"),
			"from")),
		"Samba's default");
	json_decref(adv);
	model_free(m);
	/* SMB off: not advised. */
	m = model_for("smb = { enabled = false; }; nfs = { enabled = true; };", "\"*\"", NULL);
	adv = advise(m, &a, NULL);
	assert_null(offered(entry(adv, "mac"), "smb"));
	assert_non_null(strstr(refused(entry(adv, "mac"), "smb"), "SMB is disabled"));
	json_decref(adv);
	agent_factset_clear(&a);
	model_free(m);
}

static void
test_no_agents(void **state)
{
	struct model *m = model_for(ALL_ON, "\"*\"", NULL);
	json_t *adv = advise(m, NULL, NULL);

	(void)state;
	assert_int_equal(json_array_size(adv), 1);
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(adv, 0), "advice")),
			       "loopback only"));
	json_decref(adv);
	model_free(m);
}

static void
test_mtu_ceiling(void **state)
{
	struct agent_facts f[] = {
		{ .hostname = "a", .mtu = 9000, .path_mtu = 7936 },
		{ .hostname = "b", .mtu = 9000 },
		{ .hostname = "c", .mtu = 0, .path_mtu = 0 },
		{ .hostname = "d" },
		{ .hostname = "e", .mtu = 1500, .path_mtu = 1500 },
	};
	char from[64];

	(void)state;
	/* a, b, c, d */
	assert_int_equal(tune_mtu_ceiling(&(struct tune_agents){ f, 4 }, from, sizeof(from)),
			 7936); /* a's route */
	assert_string_equal(from, "a");
	/* and e */
	assert_int_equal(tune_mtu_ceiling(&(struct tune_agents){ f, 5 }, from, sizeof(from)), 1500);
	assert_string_equal(from, "e");
	/* b, c, d */
	assert_int_equal(tune_mtu_ceiling(&(struct tune_agents){ f + 1, 3 }, NULL, 0),
			 9000); /* b: interface only */
	/* c, d */
	assert_int_equal(tune_mtu_ceiling(&(struct tune_agents){ f + 2, 2 }, from, sizeof(from)),
			 0); /* nothing reported */
	assert_string_equal(from, "");
	assert_int_equal(tune_mtu_ceiling(NULL, NULL, 0), 0);
}

/* A client's write (or read) result for the protocol choice: one run, and its value without
 * the flush when unflushed > 0. */
static void
add_result(struct bench_results *rs, const char *client, const char *protocol, const char *workload,
	   const char *metric, double median, const char *durability, double unflushed)
{
	struct bench_result r = { .client = (char *)client,
				  .protocol = (char *)protocol,
				  .workload = (char *)workload,
				  .metric = (char *)metric,
				  .unit = "MB/s",
				  .runs = &median,
				  .nruns = 1,
				  .pass = -1,
				  .durability = (char *)durability,
				  .unflushed = unflushed > 0 ? &unflushed : NULL };

	bench_results_add(rs, &r);
	rs->v[rs->n - 1].st.median = median;
}

/* SMB's writes are unflushed (libsmbclient has no flush), NFS's end with COMMIT: the protocol
 * choice compares NFS without it, and keeps the flushed score beside. */
static void
test_choice_like_for_like(void **state)
{
	struct bench_results res = { 0 };
	struct agent_factset ag = { 0 };
	struct tune_choices ch;
	json_t *c, *lin, *old;

	(void)state;
	add_result(&res, "lin (198.18.0.12)", "smb", "seq-write", "write", 400, "unflushed", 0);
	add_result(&res, "lin (198.18.0.12)", "nfs", "seq-write", "write", 300, "flushed", 500);
	add_result(&res, "lin (198.18.0.12)", "smb", "seq-read", "read", 600, NULL, 0);
	add_result(&res, "lin (198.18.0.12)", "nfs", "seq-read", "read", 600, NULL, 0);
	add_result(&res, "old (198.18.0.13)", "nfs", "seq-write", "write", 300, "flushed", 500);
	add_result(&res, "old (198.18.0.13)", "afp", "seq-write", "write", 350, "flushed", 360);
	add_agent(&ag, "lin", "Linux", NULL, NULL, 0, 0);
	add_agent(&ag, "old", "Darwin", "24.1", NULL, 0, 0);
	tune_protocol_choice(&res, &(struct tune_agents){ ag.v, ag.n }, NULL, 0, &ch);
	c = tune_choices_json(&ch); /* as the tune document holds it */
	assert_int_equal(json_array_size(c), 2);
	lin = json_array_get(c, 0);
	old = json_array_get(c, 1);
	/* As measured, SMB (sqrt(400*600) = 490) would beat NFS (sqrt(300*600) = 424); like for
	 * like, NFS without COMMIT is sqrt(500*600) = 548. */
	assert_string_equal(json_string_value(json_object_get(lin, "protocol")), "nfs");
	assert_string_equal(json_string_value(json_object_get(lin, "writes")), "unflushed");
	assert_true(fabs(json_real_value(json_object_get(json_object_get(lin, "scores"), "nfs")) -
			 sqrt(500.0 * 600)) < 0.01);
	assert_true(fabs(json_real_value(
				 json_object_get(json_object_get(lin, "scores_flushed"), "nfs")) -
			 sqrt(300.0 * 600)) < 0.01);
	assert_null(json_object_get(json_object_get(lin, "scores_flushed"), "smb"));
	assert_non_null(strstr(json_string_value(json_object_get(lin, "why")),
			       "writes compared unflushed"));
	/* Both flushed: compared as measured, nothing replaced. */
	assert_string_equal(json_string_value(json_object_get(old, "protocol")), "afp");
	assert_string_equal(json_string_value(json_object_get(old, "writes")), "as measured");
	assert_null(json_object_get(old, "scores_flushed"));
	json_decref(c);
	tune_choices_clear(&ch);
	agent_factset_clear(&ag);
	bench_results_clear(&res);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_everything_served),
		cmocka_unit_test(test_nfs_off),
		cmocka_unit_test(test_v4_only),
		cmocka_unit_test(test_not_admitted),
		cmocka_unit_test(test_macos27_no_afp),
		cmocka_unit_test(test_smb_knobs),
		cmocka_unit_test(test_no_agents),
		cmocka_unit_test(test_mtu_ceiling),
		cmocka_unit_test(test_choice_like_for_like),
		cmocka_unit_test(test_small_work),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
