/* tune/report.c - a stored tune document as text and as one self-contained HTML page with an
 * SVG chart, printed from the typed report (report.h) the document is read into once. Pure:
 * JSON in, a string out. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "esc.h"
#include "report.h"
#include "tune.h"

/* s, or the report's word for its absence. */
static const char * or (const char *s, const char *dflt)
{
	return s ? s : dflt;
}

/* The strings joined with ", " ("" for none; "(null)" for an element that was not one). */
static char *
join_strings(const struct trep_strings *a)
{
	struct buf b;

	buf_init(&b);
	for (size_t i = 0; i < a->n; i++)
		buf_printf(&b, "%s%s", i ? ", " : "", or (a->v[i], "(null)"));
	return buf_steal(&b, NULL);
}

/* Every knob's decision as a table row, with the screen and the confirmation that decided
 * it on a line of their own. */
static void
knobs_text(struct buf *out, const struct tune_report *r)
{
	buf_printf(out, "%-26s %-7s %-18s %-18s %-7s %-9s %-8s %s\n", "knob", "safety", "before",
		   "after", "applied", "verdict", "by", "reason");
	for (size_t i = 0; i < r->nknobs; i++) {
		const struct trep_knob *x = &r->knobs[i];

		buf_printf(out, "%-26s %-7s %-18s %-18s %-7s %-9s %-8s %s\n", or (x->name, "?"),
			   or (x->safety, "?"), or (x->before, "(default)"),
			   or (x->after, "(default)"), x->applied ? "yes" : "no",
			   or (x->verdict, "-"), or (x->decided_by, "-"), or (x->reason, ""));
		/* which screen measured it, on how many runs, and which confirmation decided */
		if (x->has_design)
			buf_printf(out, "%-26s   measured in the %s, %lld runs\n", "",
				   or (x->design, ""), x->runs);
		if (x->has_confirmation)
			buf_printf(out, "%-26s   confirmation: %s\n", "", or (x->confirmation, ""));
	}
}

/* The score lines: before, after with the improvement, and what the after-score measured. */
static void
scores_text(struct buf *out, const struct tune_report *r)
{
	buf_printf(out,
		   "score (geometric mean of the goal's throughput metrics, per run):\n"
		   "  before %.1f [%.1f, %.1f]\n",
		   r->before.median, r->before.lo, r->before.hi);
	if (r->after.present && r->after_pairs > 0) {
		char in[64] = "too few pairs for an interval";

		if (r->improvement_interval.bounded)
			snprintf(in, sizeof(in), "[%+.1f%%, %+.1f%%]",
				 100 * r->improvement_interval.lo,
				 100 * r->improvement_interval.hi);
		buf_printf(out, "  after  %.1f [%.1f, %.1f]  (%+.1f%% %s, %s)\n", r->after.median,
			   r->after.lo, r->after.hi, 100 * r->improvement, in,
			   or (r->improvement_verdict, "?"));
	} else if (r->after.present) {
		buf_printf(out, "  after  %.1f [%.1f, %.1f]\n", r->after.median, r->after.lo,
			   r->after.hi);
	}
	if (r->after_pairs > 0) {
		char *fresh = join_strings(&r->after_protocols);
		char *same = join_strings(&r->unchanged_protocols);

		buf_printf(out,
			   "  (before, after and the change: %lld pairs%s%s, measured afresh side "
			   "by side)\n",
			   r->after_pairs, *fresh ? " over " : "", fresh);
		if (*same)
			buf_printf(out,
				   "  (%s: no change applied touches it, so not measured again)\n",
				   same);
		free(fresh);
		free(same);
	}
}

static void
plan_text(struct buf *out, const struct tune_report *r)
{
	char first[96] = "";

	if (!r->planned)
		return;
	if (r->has_first_look)
		snprintf(first, sizeof(first), "%.2g at %lld pairs, then ", r->first_alpha_look,
			 r->first_pairs);
	buf_printf(out,
		   "verdicts: %lld candidate(s) share a false-positive budget of %g "
		   "(better at %s%.2g a look); a cost is named at %.2g a look; same: "
		   "within +-%.0f%% at %.0f%%; see nastune-tune(7)\n",
		   r->candidates, r->alpha, first, r->alpha_look,
		   r->has_alpha_cost ? r->alpha_cost : r->alpha_look, 100 * r->min_gain,
		   100 * (1 - 2 * r->alpha_same));
}

/* The bottlenecks, then what each client should use and mount. */
static void
clients_text(struct buf *out, const struct tune_report *r)
{
	for (size_t i = 0; i < r->nresults; i++)
		if (r->results[i].bottleneck)
			buf_printf(out, "bottleneck: %s %s %s: %s\n",
				   or (r->results[i].target, "?"), or (r->results[i].workload, "?"),
				   or (r->results[i].metric, "?"), r->results[i].bottleneck);
	for (size_t i = 0; i < r->nchoices; i++) {
		const struct trep_choice *x = &r->choices[i];

		buf_printf(out, "use for %s [%s]: %s (%s)\n", or (x->client, "?"),
			   or (x->cls, or (x->os, "?")), or (x->protocol, "?"), or (x->why, ""));
		for (size_t j = 0; j < x->nshares; j++)
			buf_printf(out, "  share %s: %s (%s)\n", or (x->shares[j].share, "?"),
				   or (x->shares[j].protocol, "?"), or (x->shares[j].why, ""));
	}
	for (size_t i = 0; i < r->nadvice; i++)
		buf_printf(out, "advice for %s: %s\n", or (r->advice[i].client, "?"),
			   or (r->advice[i].advice, ""));
}

static char *
report_text(const json_t *doc, char *err, size_t errlen)
{
	struct tune_report r;
	struct buf out;

	if (!tune_report_read(doc, &r, err, errlen))
		return NULL;
	buf_init(&out);
	buf_printf(&out, "tune %lld: goal %s, status %s, %.0fs (budget %llds)\n", r.tune,
		   or (r.goal, "?"), or (r.status, "?"), r.elapsed_s, r.budget_s);
	for (size_t i = 0; i < r.targets.n; i++)
		buf_printf(&out, "  target %s\n", or (r.targets.v[i], "(null)"));
	scores_text(&out, &r);
	plan_text(&out, &r);
	knobs_text(&out, &r);
	clients_text(&out, &r);
	tune_report_clear(&r);
	return buf_steal(&out, NULL);
}

/* Every string of doc (a peer's host name, a target, an error text) reaches the terminal
 * escaped. */
char *
tune_report_text(const json_t *doc, char *err, size_t errlen)
{
	return esc_render(doc, report_text, err, errlen);
}

/* Before/after bars with their 95% intervals as error bars. */
static void
chart(struct buf *b, const struct trep_score *before, const struct trep_score *after)
{
	const struct trep_score *v[2] = { before, after };
	const char *label[2] = { "before", "after" };
	double max = 0;
	int i;

	for (i = 0; i < 2; i++)
		if (v[i]->present && v[i]->hi > max)
			max = v[i]->hi;
	if (max <= 0)
		max = 1;
	buf_adds(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"520\" height=\"180\" "
		    "role=\"img\" aria-label=\"score before and after\">\n");
	for (i = 0; i < 2; i++) {
		double med, lo, hi, y = 30 + i * 70;

		if (!v[i]->present)
			continue;
		med = v[i]->median;
		lo = v[i]->lo;
		hi = v[i]->hi;
		buf_printf(b,
			   "<text x=\"8\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"14\">"
			   "%s</text>\n",
			   y + 25, label[i]);
		buf_printf(b,
			   "<rect x=\"70\" y=\"%.0f\" width=\"%.1f\" height=\"40\" fill=\"%s\"/>\n",
			   y, 400 * med / max, i ? "#2e7d32" : "#9e9e9e");
		buf_printf(b,
			   "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#000\" "
			   "stroke-width=\"2\"/>\n",
			   70 + 400 * lo / max, 70 + 400 * hi / max, y + 20, y + 20);
		buf_printf(b,
			   "<text x=\"%.1f\" y=\"%.0f\" font-family=\"sans-serif\" "
			   "font-size=\"12\">%.1f</text>\n",
			   76 + 400 * hi / max, y + 25, med);
	}
	buf_adds(b, "</svg>\n");
}

/* Where an effect lands on the forest plot's axis (-60% .. +60%, clamped). */
static double
fx(double v)
{
	if (!(v > -0.6))
		v = -0.6;
	if (!(v < 0.6))
		v = 0.6;
	return 440 + 400 * v / 1.2; /* the labels take the first 230 px */
}

/* One candidate's row of the forest plot: its name, its interval and effect in its
 * verdict's colour, and the verdict in words. */
static void
candidate_row(struct buf *b, const struct trep_knob *k, const struct trep_cand *c, size_t row)
{
	static const struct {
		const char *verdict, *colour;
	} col[] = { { "better", "#2e7d32" },
		    { "worse", "#c62828" },
		    { "same", "#546e7a" },
		    { "no effect beyond", "#546e7a" },
		    { "not reached", "#9e9e9e" } };
	const char *v = or (c->verdict, "undecided"), *colour = "#f9a825";
	double y = 19 + 18 * (double)row;

	for (size_t q = 0; q < sizeof(col) / sizeof(col[0]); q++)
		if (strcmp(v, col[q].verdict) == 0)
			colour = col[q].colour;
	buf_printf(b, "<text x=\"4\" y=\"%.0f\">", y + 4);
	buf_add_html(b, or (k->name, "?"));
	buf_adds(b, " = ");
	buf_add_html(b, or (c->value, "?"));
	buf_adds(b, "</text>\n");
	/* An interval too few pairs bound is not drawn (never to an infinite edge); a candidate
	 * no run reached (or no pair measured) has no dot or figure either. */
	if (c->iv.bounded)
		buf_printf(b,
			   "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" "
			   "stroke=\"%s\" stroke-width=\"2\"/>\n",
			   fx(c->iv.lo), fx(c->iv.hi), y, y, colour);
	if (strcmp(v, "not reached") != 0 && c->pairs > 0)
		buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.0f\" r=\"4\" fill=\"%s\"/>\n",
			   fx(c->effect), y, colour);
	buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">", fx(0.6) + 8, y + 4, colour);
	buf_add_html(b, v);
	if (strcmp(v, "no effect beyond") == 0)
		buf_printf(b, " +-%.1f%%", 100 * c->delta);
	if (strcmp(v, "not reached") != 0 && c->pairs > 0)
		buf_printf(b, " %+.1f%% (%lld pairs%s)", 100 * c->effect, c->pairs,
			   c->iv.bounded ? "" : ", too few for an interval");
	buf_adds(b, "</text>\n");
}

/* A forest plot: every candidate's effect (a dot) and its interval (a line; to the edge
 * when too few pairs bound it), coloured by verdict, the +-3% band shaded. */
static void
forest(struct buf *b, const struct tune_report *r)
{
	size_t rows = 0, row = 0;

	for (size_t i = 0; i < r->nknobs; i++)
		rows += r->knobs[i].ncand;
	if (!rows) {
		buf_adds(b, "<p>No candidate was measured.</p>\n");
		return;
	}
	buf_printf(b,
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"%zu\" "
		   "role=\"img\" aria-label=\"effect of every candidate with its interval\" "
		   "font-family=\"sans-serif\" font-size=\"11\">\n",
		   rows * 18 + 40);
	buf_printf(b,
		   "<rect x=\"%.1f\" y=\"10\" width=\"%.1f\" height=\"%zu\" fill=\"#eeeeee\"/>\n",
		   fx(-0.03), fx(0.03) - fx(-0.03), rows * 18);
	buf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"10\" y2=\"%zu\" stroke=\"#000\"/>\n",
		   fx(0), fx(0), rows * 18 + 10);
	for (int t = -60; t <= 60; t += 20)
		buf_printf(b, "<text x=\"%.1f\" y=\"%zu\" text-anchor=\"middle\">%+d%%</text>\n",
			   fx(t / 100.0), rows * 18 + 26, t);
	for (size_t i = 0; i < r->nknobs; i++)
		for (size_t j = 0; j < r->knobs[i].ncand; j++)
			candidate_row(b, &r->knobs[i], &r->knobs[i].cand[j], row++);
	buf_adds(b, "</svg>\n");
}

/* The clients' throughput per protocol side by side: one group of bars per client. */
static void
clients_chart(struct buf *b, const struct tune_report *r)
{
	double max = 0;
	size_t bars = 0, n = 0;

	for (size_t i = 0; i < r->nchoices; i++)
		for (size_t j = 0; j < r->choices[i].nscores; j++) {
			bars++;
			if (r->choices[i].scores[j].score > max)
				max = r->choices[i].scores[j].score;
		}
	if (!bars || max <= 0) {
		buf_adds(b, "<p>No client was measured (tune --clients).</p>\n");
		return;
	}
	buf_printf(b,
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"620\" height=\"%zu\" "
		   "role=\"img\" aria-label=\"client throughput per protocol\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n",
		   bars * 22 + r->nchoices * 20 + 10);
	for (size_t i = 0; i < r->nchoices; i++) {
		const struct trep_choice *x = &r->choices[i];
		double y = 10 + 22 * (double)n + 20 * (double)i;

		buf_printf(b, "<text x=\"4\" y=\"%.0f\" font-weight=\"bold\">", y + 12);
		buf_add_html(b, or (x->client, "?"));
		buf_adds(b, "</text>\n");
		for (size_t j = 0; j < x->nscores; j++) {
			const char *p = x->scores[j].protocol;
			double v = x->scores[j].score, yy = 30 + 22 * (double)n++ + 20 * (double)i;
			bool chosen = strcmp(p, or (x->protocol, "")) == 0;

			buf_printf(b, "<text x=\"20\" y=\"%.0f\">", yy + 12);
			buf_add_html(b, p);
			buf_printf(
				b,
				"</text>\n<rect x=\"70\" y=\"%.0f\" width=\"%.1f\" height=\"16\" "
				"fill=\"%s\"/>\n<text x=\"%.1f\" y=\"%.0f\">%.1f</text>\n",
				yy, 440 * v / max, chosen ? "#2e7d32" : "#9e9e9e",
				76 + 440 * v / max, yy + 12, v);
		}
	}
	buf_adds(b, "</svg>\n");
}

/* Every knob's decision as a table row. */
static void
knob_table(struct buf *b, const struct tune_report *r)
{
	buf_adds(b, "<h2>Every knob: the decision and why</h2>\n<table><tr><th>knob</th>"
		    "<th>safety</th><th>before</th><th>after</th><th>applied</th><th>verdict"
		    "</th><th>decided by</th><th>reason</th></tr>\n");
	for (size_t i = 0; i < r->nknobs; i++) {
		const struct trep_knob *x = &r->knobs[i];

		buf_printf(b, "<tr class=\"%s%s\"><td>", x->applied ? "applied" : "",
			   strcmp(or (x->safety, ""), "unsafe") == 0 ? " unsafe" : "");
		buf_add_html(b, or (x->name, "?"));
		buf_adds(b, "</td><td class=\"s\">");
		buf_add_html(b, or (x->safety, "?"));
		buf_adds(b, "</td><td>");
		buf_add_html(b, or (x->before, "(default)"));
		buf_adds(b, "</td><td>");
		buf_add_html(b, or (x->after, "(default)"));
		buf_printf(b, "</td><td>%s</td><td>", x->applied ? "yes" : "no");
		buf_add_html(b, or (x->verdict, "-"));
		buf_adds(b, "</td><td>");
		buf_add_html(b, or (x->decided_by, "-"));
		if (x->has_design) {
			buf_adds(b, "<br>");
			buf_add_html(b, or (x->design, ""));
			buf_printf(b, ", %lld runs", x->runs);
		}
		if (x->has_confirmation) {
			buf_adds(b, "<br>confirmation: ");
			buf_add_html(b, or (x->confirmation, ""));
		}
		buf_adds(b, "</td><td>");
		buf_add_html(b, or (x->reason, ""));
		buf_adds(b, "</td></tr>\n");
	}
}

/* The results after the tune with their bottleneck, as a table. */
static void
results_table(struct buf *b, const struct tune_report *r)
{
	buf_adds(b, "</table>\n<h2>Results after, and their bottleneck</h2>\n<table><tr>"
		    "<th>target</th><th>workload</th><th>metric</th><th>median</th><th>unit</th>"
		    "<th>bottleneck</th></tr>\n");
	for (size_t i = 0; i < r->nresults; i++) {
		const struct trep_result *x = &r->results[i];

		buf_adds(b, "<tr><td>");
		buf_add_html(b, or (x->target, "?"));
		buf_adds(b, "</td><td>");
		buf_add_html(b, or (x->workload, "?"));
		buf_adds(b, "</td><td>");
		buf_add_html(b, or (x->metric, "?"));
		buf_printf(b, "</td><td>%.1f</td><td>", x->median);
		buf_add_html(b, or (x->unit, ""));
		buf_adds(b, "</td><td>");
		buf_add_html(b, or (x->bottleneck, ""));
		buf_adds(b, "</td></tr>\n");
	}
}

/* What each client should use per share, and the advice, as a list. */
static void
clients_list(struct buf *b, const struct tune_report *r)
{
	buf_adds(b, "</table>\n<h2>Clients</h2>\n<ul>\n");
	for (size_t i = 0; i < r->nchoices; i++) {
		const struct trep_choice *x = &r->choices[i];

		buf_adds(b, "<li>");
		buf_add_html(b, or (x->client, "?"));
		buf_adds(b, " [");
		buf_add_html(b, or (x->cls, or (x->os, "?")));
		buf_adds(b, "]: use <b>");
		buf_add_html(b, or (x->protocol, "?"));
		buf_adds(b, "</b> (");
		buf_add_html(b, or (x->why, ""));
		buf_adds(b, ")<ul>");
		for (size_t j = 0; j < x->nshares; j++) {
			buf_adds(b, "<li>");
			buf_add_html(b, or (x->shares[j].share, "?"));
			buf_adds(b, ": <b>");
			buf_add_html(b, or (x->shares[j].protocol, "?"));
			buf_adds(b, "</b> (");
			buf_add_html(b, or (x->shares[j].why, ""));
			buf_adds(b, ")</li>");
		}
		buf_adds(b, "</ul></li>\n");
	}
	for (size_t i = 0; i < r->nadvice; i++) {
		buf_adds(b, "<li>");
		buf_add_html(b, or (r->advice[i].client, "?"));
		buf_adds(b, ": ");
		buf_add_html(b, or (r->advice[i].advice, ""));
		buf_adds(b, "</li>\n");
	}
	buf_adds(b, "</ul>\n</body></html>\n");
}

static char *
report_html(const json_t *doc, char *err, size_t errlen)
{
	struct tune_report r;
	struct buf b;

	if (!tune_report_read(doc, &r, err, errlen))
		return NULL;
	buf_init(&b);
	buf_printf(&b,
		   "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<title>nastune tune %lld</title>\n<style>body{font-family:sans-serif;"
		   "margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
		   "padding:3px 6px;font-size:13px}tr.applied{background:#e8f5e9}"
		   "tr.unsafe td.s{color:#b71c1c}</style></head><body>\n",
		   r.tune);
	buf_printf(&b, "<h1>nastune tune %lld</h1>\n<p>Goal <b>", r.tune);
	buf_add_html(&b, or (r.goal, "?"));
	buf_adds(&b, "</b>, status ");
	buf_add_html(&b, or (r.status, "?"));
	buf_printf(&b, ", %.0f s of a %lld s budget; score change %+.1f%%.</p>\n", r.elapsed_s,
		   r.budget_s, 100 * r.improvement);
	buf_adds(&b, "<h2>Score before and after (median, 95% interval)</h2>\n");
	chart(&b, &r.before, &r.after);
	buf_adds(&b, "<h2>Every candidate: its effect and interval</h2>\n");
	forest(&b, &r);
	buf_adds(&b, "<h2>What the clients get, per protocol (MB/s)</h2>\n");
	clients_chart(&b, &r);
	knob_table(&b, &r);
	results_table(&b, &r);
	clients_list(&b, &r);
	tune_report_clear(&r);
	return buf_steal(&b, NULL);
}

/* Escaped as the text is (a page saved and shown with cat stays harmless too). */
char *
tune_report_html(const json_t *doc, char *err, size_t errlen)
{
	return esc_render(doc, report_html, err, errlen);
}
