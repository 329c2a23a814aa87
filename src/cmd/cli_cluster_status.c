/* cli_cluster_status.c - the cluster's part of `status` (cli.h): ctdb's view of the nodes
 * and public addresses, and whether every node runs the cluster's configuration, from a
 * record that is refused, and named, unless it is root's and signed. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cluster.h"
#include "esc.h"
#include "model.h"
#include "xmalloc.h"

/* Why node r is not on the cluster's configuration want (drc: reading want), or NULL. */
static const char *
node_why(const struct cluster_node_rec *r, const struct cluster_desired *want, int drc)
{
	if (*r->refused)
		return r->refused;
	if (drc == 0 && *r->id && strcmp(r->id, want->id) == 0 && !r->alone)
		return NULL;
	return !*r->id	  ? "has applied nothing yet"
	       : r->alone ? "applied a configuration on its own"
	       : !r->ok	  ? "failed to apply the cluster's configuration"
			  : "runs another configuration";
}

/* Each public address and its holder into pubs; one no node holds makes the cluster
 * inconsistent (named in odd) when want was read (drc 0). */
static void
status_public(const struct model *m, const struct cluster_view *v, int drc, bool print,
	      json_t *pubs, json_t *odd, bool *consistent)
{
	size_t i;

	for (i = 0; i < m->cluster.public_addresses.n; i++) {
		/* A configured address no node serves is an outage for its clients. */
		bool unheld = v->reachable && !v->holder[i];

		json_array_append_new(pubs, json_pack("{s:s, s:s?}", "address",
						      m->cluster.public_addresses.v[i], "node",
						      v->holder[i]));
		if (unheld && drc == 0) {
			*consistent = false;
			json_array_append_new(odd,
					      json_pack("{s:s, s:s}", "address",
							m->cluster.public_addresses.v[i], "why",
							"no node holds this public address"));
		}
		if (print)
			printf("  public %-18s on %s\n", m->cluster.public_addresses.v[i],
			       v->holder[i] ? v->holder[i]
			       : unheld	    ? "no node: INCONSISTENT"
					    : "no node");
	}
}

json_t *
cli_cluster_status(const struct ctx *ctx, const struct model *m, bool print)
{
	struct cluster_desired want = { 0 };
	struct cluster_node_rec *recs = NULL;
	struct cluster_view v;
	struct cluster_rec rec;
	json_t *o, *nodes = json_array(), *pubs = json_array(), *odd = json_array();
	size_t i, n = m->cluster.nodes.n;
	int self = cluster_this_node(m), drc, orc;
	bool consistent = true;
	char *recerr = NULL, *from;

	cluster_view_read(m, &v);
	orc = cluster_rec_open(m, ctx->root, false, &rec);
	drc = orc < 0 ? orc : cluster_read_desired(&rec, &want);
	if (orc == 0)
		cluster_read_nodes(m, &rec, &recs);
	else
		recs = xcalloc(n + 1, sizeof(*recs));
	/* The record's words reach a terminal: escaped, as anything from the network. */
	if (drc < 0 && drc != -ENOENT)
		recerr = esc_term(rec.err);
	from = esc_term(want.from);
	if (print) {
		printf("cluster %s: ctdb %s", m->cluster.name,
		       v.reachable ? "answers" : "does not answer here");
		if (drc == 0)
			printf("; configuration %s (cluster generation %ld, applied from %s)\n",
			       want.id, want.generation, from);
		else if (recerr)
			printf("; RECORD REFUSED: %s — a cluster-wide `nastune apply` on a node "
			       "publishes it again\n",
			       recerr);
		else
			printf("; no cluster-wide apply yet\n");
	}
	for (i = 0; i < n; i++) {
		struct cluster_node_rec *r = &recs[i];
		const char *why = node_why(r, &want, drc);
		char *ewhy = why ? esc_term(why) : NULL, *err = esc_term(r->error);

		snprintf(r->addr, sizeof(r->addr), "%s", m->cluster.nodes.v[i]);
		if (drc == 0 && why) {
			consistent = false;
			json_array_append_new(
				odd, json_pack("{s:s, s:s}", "address", r->addr, "why", ewhy));
		}
		json_array_append_new(nodes,
				      json_pack("{s:s, s:s, s:s, s:I, s:I, s:b, s:b, s:b, s:s}",
						"address", r->addr, "state",
						cluster_state_name(v.state[i]), "generation", r->id,
						"cluster_generation", (json_int_t)r->followed,
						"local_generation", (json_int_t)r->local_generation,
						"alone", r->alone, "this_node", (int)i == self,
						"consistent", drc == 0 && !why, "error", err));
		if (print)
			printf("  node %-16s %-12s configuration %-16s%s%s%s\n", r->addr,
			       cluster_state_name(v.state[i]), *r->id ? r->id : "-",
			       (int)i == self ? " (this node)" : "", why ? " INCONSISTENT: " : "",
			       why ? ewhy : "");
		free(ewhy);
		free(err);
	}
	status_public(m, &v, drc, print, pubs, odd, &consistent);
	if (print)
		printf("consistent: %s\n",
		       recerr	    ? "NO (the record is refused, above)"
		       : drc != 0   ? "unknown (no cluster-wide apply yet)"
		       : consistent ? "yes, every node runs the cluster's configuration"
				    : "NO (named above)");
	o = json_pack("{s:s, s:b, s:s?, s:o, s:s?, s:o, s:o, s:o, s:o}", "name", m->cluster.name,
		      "ctdb", v.reachable, "ctdb_error", v.reachable ? NULL : v.err, "desired",
		      drc == 0 ? json_pack("{s:s, s:I, s:s}", "id", want.id, "generation",
					   (json_int_t)want.generation, "from", from)
			       : json_null(),
		      "record_error", recerr, "nodes", nodes, "public_addresses", pubs,
		      "consistent",
		      recerr	 ? json_false()
		      : drc == 0 ? json_boolean(consistent)
				 : json_null(),
		      "inconsistent", odd);
	cluster_view_clear(m, &v);
	cluster_rec_close(&rec);
	free(recerr);
	free(from);
	free(recs);
	return o;
}
