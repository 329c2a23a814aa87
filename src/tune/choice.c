/* tune/choice.c - which protocol each client should use, from the figures measured from it:
 * the fastest it can use, like with like where the protocols' write durabilities differ,
 * and one choice per share among the protocols the share offers. Pure: typed in and out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "tune.h"
#include "xmalloc.h"

static const char * or (const char *s, const char *dflt)
{
	return s ? s : dflt;
}

size_t
tune_shares_of(const struct model *m, struct tune_share **out)
{
	const unsigned on = (m->smb.enabled ? PROTO_SMB : 0) | (m->nfs.enabled ? PROTO_NFS : 0) |
			    (m->afp.enabled ? PROTO_AFP : 0);

	*out = m->n_shares ? xcalloc(m->n_shares, sizeof(**out)) : NULL;
	for (size_t i = 0; i < m->n_shares; i++)
		(*out)[i] = (struct tune_share){ .name = m->shares[i].name,
						 .protocols = m->shares[i].protocols & on,
						 .time_machine = m->shares[i].tm_enabled };
	return m->n_shares;
}

static const struct tune_score *
score_of(const struct tune_choice *c, const char *protocol)
{
	for (size_t i = 0; i < c->nscores; i++)
		if (strcmp(c->scores[i].protocol, protocol) == 0)
			return &c->scores[i];
	return NULL;
}

/* The share's protocol for one client: Time Machine over SMB for macOS, else the best
 * measured among the share's protocols, else (nothing measured) the first it offers.
 * Returns false when the client can mount none of them. */
static bool
share_choice(const struct tune_share *sh, const struct tune_choice *c, bool mac, bool no_afp,
	     struct tune_share_choice *out)
{
	static const unsigned order[] = { PROTO_SMB, PROTO_NFS, PROTO_AFP };
	const char *best = NULL, *first = NULL;
	double bestv = -1;
	bool smb = false;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const char *name = model_proto_name(order[i]);
		const struct tune_score *v;

		if (!(sh->protocols & order[i]) || (order[i] == PROTO_AFP && (!mac || no_afp)))
			continue; /* no AFP client on this OS */
		smb = smb || order[i] == PROTO_SMB;
		if (!first)
			first = name;
		if ((v = score_of(c, name)) && v->score > bestv) {
			bestv = v->score;
			best = name;
		}
	}
	if (mac && smb && sh->time_machine) {
		best = "smb";
		snprintf(out->why, sizeof(out->why), "Time Machine: SMB on current macOS%s",
			 no_afp ? " (macOS 27 and later have no AFP)" : "");
	} else if (best) {
		snprintf(out->why, sizeof(out->why), "fastest this share offers: %.1f MB/s", bestv);
	} else if (first) {
		best = first;
		snprintf(out->why, sizeof(out->why),
			 "the share's protocols were not measured from this "
			 "client; %s is the first it offers",
			 first);
	} else {
		return false; /* nothing this client can mount */
	}
	out->share = xstrdup(or (sh->name, "?"));
	out->protocol = best;
	return true;
}

/* The key of a result for like-for-like: client, workload and metric. */
static char *
lfl_key(const struct bench_result *r)
{
	return xasprintf("%s\n%s\n%s", or (r->client, ""), or (r->workload, ""),
			 or (r->metric, ""));
}

/* A geometric mean being accumulated. */
struct gmean {
	double logs;
	size_t n;
};

static void
gmean_add(struct gmean *g, double v)
{
	g->logs += log(v);
	g->n++;
}

static double
gmean_of(const struct gmean *g)
{
	return g->n ? exp(g->logs / (double)g->n) : 0;
}

/* One protocol's MB/s medians from one client: like for like (an unflushed figure where the
 * protocols' durabilities differ), and as measured (flushed where it could be). */
struct pacc {
	const char *protocol;
	struct gmean like, flushed;
	bool replaced; /* an unflushed figure replaced a flushed one */
};

/* One client's accumulators, by protocol in the order first measured. */
struct cacc {
	const char *client;
	struct pacc *p;
	size_t np;
};

/* The class of a client's OS, from the last agent whose host name the client's label starts
 * with ("host (address)"). */
static void
client_os(struct tune_choice *c, const struct tune_agents *agents, bool *mac, bool *no_afp)
{
	const char *os = "?", *ver = "";

	for (size_t i = 0; agents && i < agents->n; i++) {
		const char *h = or (agents->v[i].hostname, "");

		if (*h && strncmp(c->client, h, strlen(h)) == 0 && c->client[strlen(h)] == ' ') {
			os = or (agents->v[i].os, "?");
			ver = or (agents->v[i].os_version, "");
		}
	}
	*mac = strcmp(os, "Darwin") == 0;
	*no_afp = *mac && atoi(ver) >= 26; /* Darwin 26 is macOS 27 */
	if (*no_afp)
		snprintf(c->cls, sizeof(c->cls), "macOS 27+");
	else if (*mac)
		snprintf(c->cls, sizeof(c->cls), "macOS (Darwin %d)", atoi(ver));
	else
		snprintf(c->cls, sizeof(c->cls), "%s", os);
	c->os = xstrdup(os);
}

static void
choice_clear(struct tune_choice *c)
{
	for (size_t j = 0; j < c->nscores; j++)
		free(c->scores[j].protocol);
	for (size_t j = 0; j < c->nshares; j++)
		free(c->shares[j].share);
	free(c->scores);
	free(c->shares);
	free(c->client);
	free(c->os);
	*c = (struct tune_choice){ 0 };
}

/* One client's choice from its per-protocol accumulators cl (see tune_protocol_choice).
 * Returns false (c cleared) when it measured nothing it can use. */
static bool
client_choice(const struct cacc *cl, const struct tune_agents *agents,
	      const struct tune_share *shares, size_t nshares, struct tune_choice *c)
{
	const char *bestp = NULL;
	double best = -1;
	char unfl[160] = "";
	bool mac, no_afp, tm = false;

	*c = (struct tune_choice){ .client = xstrdup(cl->client) };
	client_os(c, agents, &mac, &no_afp);
	c->scores = xcalloc(cl->np ? cl->np : 1, sizeof(*c->scores));
	for (size_t k = 0; k < cl->np; k++) {
		struct tune_score *s = &c->scores[c->nscores++];

		*s = (struct tune_score){ .protocol = xstrdup(cl->p[k].protocol),
					  .score = gmean_of(&cl->p[k].like),
					  .flushed = gmean_of(&cl->p[k].flushed),
					  .replaced = cl->p[k].replaced };
		if (s->replaced) {
			size_t l = strlen(unfl);

			snprintf(unfl + l, sizeof(unfl) - l, "%s%s %.1f", l ? ", " : "",
				 s->protocol, s->flushed);
			c->unflushed = true;
		}
		if (strncmp(s->protocol, "afp", 3) == 0 && (no_afp || !mac))
			continue;
		if (s->score > best) {
			best = s->score;
			bestp = s->protocol;
		}
	}
	if (!bestp) {
		choice_clear(c);
		return false;
	}
	c->protocol = bestp;
	c->shares = xcalloc(nshares ? nshares : 1, sizeof(*c->shares));
	for (size_t j = 0; shares && j < nshares; j++) {
		tm = tm || shares[j].time_machine;
		if (share_choice(&shares[j], c, mac, no_afp, &c->shares[c->nshares]))
			c->nshares++;
	}
	snprintf(c->why, sizeof(c->why), "fastest measured for this client: %.1f MB/s%s%s%s%s%s",
		 best, no_afp ? "; macOS 27 and later have no AFP client" : "",
		 mac && tm ? "; Time Machine shares use SMB on current macOS" : "",
		 unfl[0] ? "; writes compared unflushed, like SMB's (libsmbclient cannot "
			   "flush); flushed: "
			 : "",
		 unfl, unfl[0] ? " MB/s" : "");
	return true;
}

/* Which durabilities the results of one like-for-like key were measured with (1 flushed,
 * 2 unflushed). */
struct mix {
	char *key;
	unsigned durab;
};

static unsigned *
mix_at(struct mix **v, size_t *n, char *key)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].key, key) == 0) {
			free(key);
			return &(*v)[i].durab;
		}
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[*n] = (struct mix){ .key = key };
	return &(*v)[(*n)++].durab;
}

static struct pacc *
pacc_at(struct cacc **v, size_t *n, const char *client, const char *protocol)
{
	struct cacc *c = NULL;

	for (size_t i = 0; i < *n && !c; i++)
		if (strcmp((*v)[i].client, client) == 0)
			c = &(*v)[i];
	if (!c) {
		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		c = &(*v)[(*n)++];
		*c = (struct cacc){ .client = client };
	}
	for (size_t i = 0; i < c->np; i++)
		if (strcmp(c->p[i].protocol, protocol) == 0)
			return &c->p[i];
	c->p = xreallocarray(c->p, c->np + 1, sizeof(*c->p));
	c->p[c->np] = (struct pacc){ .protocol = protocol };
	return &c->p[c->np++];
}

/* The median of r's unflushed runs, or 0 when it has none. */
static double
unflushed_median(const struct bench_result *r)
{
	struct bench_stats us;

	if (!r->unflushed || !r->nruns)
		return 0;
	bench_stats_summary(r->unflushed, r->nruns, &us);
	return us.median;
}

void
tune_protocol_choice(const struct bench_results *results, const struct tune_agents *agents,
		     const struct tune_share *shares, size_t nshares, struct tune_choices *out)
{
	struct mix *mix = NULL;
	struct cacc *by = NULL;
	size_t i, nmix = 0, nby = 0;

	*out = (struct tune_choices){ 0 };
	/* Which durabilities each client's write metric was measured with, over the protocols:
	 * where they differ (SMB cannot flush, NFS COMMITs), the unflushed figures decide. */
	for (i = 0; i < results->n; i++) {
		const struct bench_result *r = &results->v[i];

		if (r->durability)
			*mix_at(&mix, &nmix, lfl_key(r)) |=
				strcmp(r->durability, "flushed") == 0 ? 1 : 2;
	}
	/* client -> protocol -> the geometric means of MB/s medians (finite ones: the document
	 * cannot hold the others). */
	for (i = 0; i < results->n; i++) {
		const struct bench_result *r = &results->v[i];
		double v = r->st.median, like = v, uf;
		struct pacc *acc;

		if (!r->client || !r->protocol || strcmp(or (r->unit, ""), "MB/s") != 0 ||
		    !isfinite(v) || v <= 0)
			continue;
		uf = unflushed_median(r);
		if (*mix_at(&mix, &nmix, lfl_key(r)) == 3 && isfinite(uf) && uf > 0)
			like = uf;
		acc = pacc_at(&by, &nby, r->client, r->protocol);
		gmean_add(&acc->like, like);
		gmean_add(&acc->flushed, v);
		acc->replaced |= like != v;
	}
	for (i = 0; i < nmix; i++)
		free(mix[i].key);
	free(mix);
	out->v = xcalloc(nby ? nby : 1, sizeof(*out->v));
	for (i = 0; i < nby; i++) {
		if (client_choice(&by[i], agents, shares, nshares, &out->v[out->n]))
			out->n++;
		free(by[i].p);
	}
	free(by);
}

void
tune_choices_clear(struct tune_choices *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++)
		choice_clear(&cs->v[i]);
	free(cs->v);
	*cs = (struct tune_choices){ 0 };
}
