/* tune/report.c - a stored tune document as text and as one self-contained HTML page with an
 * SVG chart. Pure: JSON in, a string out. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "esc.h"
#include "tune.h"

static const char *
str(const json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : dflt;
}

/* Whether iv is an interval with two finite ends (older documents wrote an unbounded end
 * as -1 or 1e9: shown as no interval, never as infinite). */
static bool
bounded(const json_t *iv)
{
	double lo = json_number_value(json_array_get(iv, 0)),
	       hi = json_number_value(json_array_get(iv, 1));

	return json_array_size(iv) == 2 && lo > -1.0 && hi < 1e9;
}

static double
num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* The strings of a JSON array joined with ", " ("" for none). */
static char *
join_strings(const json_t *a)
{
	struct buf b;
	const json_t *x;
	size_t i;

	buf_init(&b);
	json_array_foreach(a, i, x) buf_printf(&b, "%s%s", i ? ", " : "", json_string_value(x));
	return buf_steal(&b, NULL);
}

static bool
is_tune_doc(const json_t *doc, char *err, size_t errlen)
{
	if (!json_is_object(doc) || !json_is_array(json_object_get(doc, "knobs")) ||
	    !json_is_object(json_object_get(doc, "before"))) {
		snprintf(err, errlen, "not a finished tune (no knobs or before score)");
		return false;
	}
	return true;
}

/* Every knob's decision as a table row, with the screen and the confirmation that decided
 * it on a line of their own. */
static void
knobs_text(struct buf *out, const json_t *knobs)
{
	const json_t *x;
	size_t i;

	buf_printf(out, "%-26s %-7s %-18s %-18s %-7s %-9s %-8s %s\n", "knob", "safety", "before",
		   "after", "applied", "verdict", "by", "reason");
	json_array_foreach(knobs, i, x)
	{
		buf_printf(out, "%-26s %-7s %-18s %-18s %-7s %-9s %-8s %s\n", str(x, "name", "?"),
			   str(x, "safety", "?"), str(x, "before", "(default)"),
			   str(x, "after", "(default)"),
			   json_is_true(json_object_get(x, "applied")) ? "yes" : "no",
			   str(x, "verdict", "-"), str(x, "decided_by", "-"), str(x, "reason", ""));
		/* which screen measured it, on how many runs, and which confirmation decided */
		if (json_object_get(x, "design"))
			buf_printf(out, "%-26s   measured in the %s, %lld runs\n", "",
				   str(x, "design", ""),
				   (long long)json_integer_value(json_object_get(x, "runs")));
		if (json_object_get(x, "confirmation"))
			buf_printf(out, "%-26s   confirmation: %s\n", "",
				   str(x, "confirmation", ""));
	}
}

static char *
report_text(const json_t *doc, char *err, size_t errlen)
{
	const json_t *b, *a, *x;
	struct buf out;
	size_t i;

	if (!is_tune_doc(doc, err, errlen))
		return NULL;
	buf_init(&out);
	b = json_object_get(doc, "before");
	a = json_object_get(doc, "after");
	buf_printf(&out, "tune %lld: goal %s, status %s, %.0fs (budget %llds)\n",
		   (long long)json_integer_value(json_object_get(doc, "tune")),
		   str(doc, "goal", "?"), str(doc, "status", "?"), num(doc, "elapsed_s"),
		   (long long)json_integer_value(json_object_get(doc, "budget_s")));
	json_array_foreach(json_object_get(doc, "targets"), i, x)
		buf_printf(&out, "  target %s\n", json_string_value(x));
	buf_printf(&out,
		   "score (geometric mean of the goal's throughput metrics, per run):\n"
		   "  before %.1f [%.1f, %.1f]\n",
		   num(b, "median"), num(b, "ci95_low"), num(b, "ci95_high"));
	if (json_is_object(a) && json_integer_value(json_object_get(doc, "after_pairs")) > 0) {
		const json_t *iv = json_object_get(doc, "improvement_interval");
		char in[64] = "too few pairs for an interval";

		if (bounded(iv))
			snprintf(in, sizeof(in), "[%+.1f%%, %+.1f%%]",
				 100 * json_number_value(json_array_get(iv, 0)),
				 100 * json_number_value(json_array_get(iv, 1)));
		buf_printf(&out, "  after  %.1f [%.1f, %.1f]  (%+.1f%% %s, %s)\n", num(a, "median"),
			   num(a, "ci95_low"), num(a, "ci95_high"), 100 * num(doc, "improvement"),
			   in, str(doc, "improvement_verdict", "?"));
	} else if (json_is_object(a)) {
		buf_printf(&out, "  after  %.1f [%.1f, %.1f]\n", num(a, "median"),
			   num(a, "ci95_low"), num(a, "ci95_high"));
	}
	if (json_integer_value(json_object_get(doc, "after_pairs")) > 0) {
		char *fresh = join_strings(json_object_get(doc, "after_protocols"));
		char *same = join_strings(json_object_get(doc, "unchanged_protocols"));

		buf_printf(&out,
			   "  (before and after measured afresh, side by side: %lld pairs%s%s)\n",
			   (long long)json_integer_value(json_object_get(doc, "after_pairs")),
			   *fresh ? " over " : "", fresh);
		if (*same)
			buf_printf(&out,
				   "  (%s: no change applied touches it, so not measured again)\n",
				   same);
		free(fresh);
		free(same);
	}
	x = json_object_get(doc, "plan");
	if (json_is_object(x)) {
		json_t *f = json_object_get(x, "first_look");
		char first[96] = "";

		if (json_is_object(f))
			snprintf(first, sizeof(first), "%.2g at %lld pairs, then ",
				 num(f, "alpha_look"),
				 (long long)json_integer_value(json_object_get(f, "pairs")));
		buf_printf(&out,
			   "verdicts: %lld candidate(s) share a false-positive budget of %g "
			   "(better at %s%.2g a look); a cost is named at %.2g a look; same: "
			   "within +-%.0f%% at %.0f%%; see nastune-tune(7)\n",
			   (long long)json_integer_value(json_object_get(x, "candidates")),
			   num(x, "alpha"), first, num(x, "alpha_look"),
			   json_object_get(x, "alpha_cost") ? num(x, "alpha_cost")
							    : num(x, "alpha_look"),
			   100 * num(x, "min_gain"), 100 * (1 - 2 * num(x, "alpha_same")));
	}
	knobs_text(&out, json_object_get(doc, "knobs"));
	json_array_foreach(json_object_get(doc, "results"), i,
			   x) if (json_string_value(json_object_get(x, "bottleneck")))
		buf_printf(&out, "bottleneck: %s %s %s: %s\n", str(x, "target", "?"),
			   str(x, "workload", "?"), str(x, "metric", "?"),
			   str(x, "bottleneck", ""));
	json_array_foreach(json_object_get(doc, "protocol_choice"), i, x)
	{
		const json_t *sh;
		size_t j;

		buf_printf(&out, "use for %s [%s]: %s (%s)\n", str(x, "client", "?"),
			   str(x, "class", str(x, "os", "?")), str(x, "protocol", "?"),
			   str(x, "why", ""));
		json_array_foreach(json_object_get(x, "shares"), j, sh)
			buf_printf(&out, "  share %s: %s (%s)\n", str(sh, "share", "?"),
				   str(sh, "protocol", "?"), str(sh, "why", ""));
	}
	json_array_foreach(json_object_get(doc, "advice"), i, x) buf_printf(
		&out, "advice for %s: %s\n", str(x, "client", "?"), str(x, "advice", ""));
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
chart(struct buf *b, const json_t *before, const json_t *after)
{
	const json_t *v[2] = { before, after };
	const char *label[2] = { "before", "after" };
	double max = 0;
	int i;

	for (i = 0; i < 2; i++)
		if (json_is_object(v[i]) && num(v[i], "ci95_high") > max)
			max = num(v[i], "ci95_high");
	if (max <= 0)
		max = 1;
	buf_adds(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"520\" height=\"180\" "
		    "role=\"img\" aria-label=\"score before and after\">\n");
	for (i = 0; i < 2; i++) {
		double med, lo, hi, y = 30 + i * 70;

		if (!json_is_object(v[i]))
			continue;
		med = num(v[i], "median");
		lo = num(v[i], "ci95_low");
		hi = num(v[i], "ci95_high");
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

/* A forest plot: every candidate's effect (a dot) and its interval (a line; to the edge
 * when too few pairs bound it), coloured by verdict, the +-3% band shaded. */
static void
forest(struct buf *b, const json_t *knobs)
{
	static const struct {
		const char *verdict, *colour;
	} col[] = { { "better", "#2e7d32" },
		    { "worse", "#c62828" },
		    { "same", "#546e7a" },
		    { "no effect beyond", "#546e7a" },
		    { "not reached", "#9e9e9e" } };
	const json_t *k, *c;
	size_t i, j, rows = 0, r = 0;

	json_array_foreach(knobs, i, k) rows += json_array_size(json_object_get(k, "candidates"));
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
	json_array_foreach(knobs, i, k) json_array_foreach(json_object_get(k, "candidates"), j, c)
	{
		const json_t *iv = json_object_get(c, "interval");
		const char *v = str(c, "verdict", "undecided"), *colour = "#f9a825";
		double y = 19 + 18 * (double)r++;

		for (size_t q = 0; q < sizeof(col) / sizeof(col[0]); q++)
			if (strcmp(v, col[q].verdict) == 0)
				colour = col[q].colour;
		buf_printf(b, "<text x=\"4\" y=\"%.0f\">", y + 4);
		buf_add_html(b, str(k, "name", "?"));
		buf_adds(b, " = ");
		buf_add_html(b, str(c, "value", "?"));
		buf_adds(b, "</text>\n");
		/* An interval too few pairs bound is not drawn (never to an infinite edge); a
		 * candidate no run reached has no dot either. */
		if (bounded(iv))
			buf_printf(b,
				   "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" "
				   "stroke=\"%s\" stroke-width=\"2\"/>\n",
				   fx(json_number_value(json_array_get(iv, 0))),
				   fx(json_number_value(json_array_get(iv, 1))), y, y, colour);
		if (strcmp(v, "not reached") != 0)
			buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.0f\" r=\"4\" fill=\"%s\"/>\n",
				   fx(num(c, "effect")), y, colour);
		buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">", fx(0.6) + 8, y + 4,
			   colour);
		buf_add_html(b, v);
		if (strcmp(v, "no effect beyond") == 0)
			buf_printf(b, " +-%.1f%%", 100 * num(c, "delta"));
		if (strcmp(v, "not reached") != 0)
			buf_printf(b, " %+.1f%% (%lld pairs%s)", 100 * num(c, "effect"),
				   (long long)json_integer_value(json_object_get(c, "pairs")),
				   bounded(iv) ? "" : ", too few for an interval");
		buf_adds(b, "</text>\n");
	}
	buf_adds(b, "</svg>\n");
}

/* The clients' throughput per protocol side by side: one group of bars per client. */
static void
clients_chart(struct buf *b, const json_t *choice)
{
	const json_t *x, *sc;
	const char *p;
	double max = 0;
	size_t i, bars = 0, n = 0;

	json_array_foreach(choice, i, x) json_object_foreach(json_object_get(x, "scores"), p, sc)
	{
		bars++;
		if (json_number_value(sc) > max)
			max = json_number_value(sc);
	}
	if (!bars || max <= 0) {
		buf_adds(b, "<p>No client was measured (tune --clients).</p>\n");
		return;
	}
	buf_printf(b,
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"620\" height=\"%zu\" "
		   "role=\"img\" aria-label=\"client throughput per protocol\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n",
		   bars * 22 + json_array_size(choice) * 20 + 10);
	json_array_foreach(choice, i, x)
	{
		double y = 10 + 22 * (double)n + 20 * (double)i;

		buf_printf(b, "<text x=\"4\" y=\"%.0f\" font-weight=\"bold\">", y + 12);
		buf_add_html(b, str(x, "client", "?"));
		buf_adds(b, "</text>\n");
		json_object_foreach(json_object_get(x, "scores"), p, sc)
		{
			double v = json_number_value(sc),
			       yy = 30 + 22 * (double)n++ + 20 * (double)i;
			bool chosen = strcmp(p, str(x, "protocol", "")) == 0;

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
knob_table(struct buf *b, const json_t *knobs)
{
	const json_t *x;
	size_t i;

	buf_adds(b, "<h2>Every knob: the decision and why</h2>\n<table><tr><th>knob</th>"
		    "<th>safety</th><th>before</th><th>after</th><th>applied</th><th>verdict"
		    "</th><th>decided by</th><th>reason</th></tr>\n");
	json_array_foreach(knobs, i, x)
	{
		bool applied = json_is_true(json_object_get(x, "applied"));

		buf_printf(b, "<tr class=\"%s%s\"><td>", applied ? "applied" : "",
			   strcmp(str(x, "safety", ""), "unsafe") == 0 ? " unsafe" : "");
		buf_add_html(b, str(x, "name", "?"));
		buf_adds(b, "</td><td class=\"s\">");
		buf_add_html(b, str(x, "safety", "?"));
		buf_adds(b, "</td><td>");
		buf_add_html(b, str(x, "before", "(default)"));
		buf_adds(b, "</td><td>");
		buf_add_html(b, str(x, "after", "(default)"));
		buf_printf(b, "</td><td>%s</td><td>", applied ? "yes" : "no");
		buf_add_html(b, str(x, "verdict", "-"));
		buf_adds(b, "</td><td>");
		buf_add_html(b, str(x, "decided_by", "-"));
		if (json_object_get(x, "design")) {
			buf_adds(b, "<br>");
			buf_add_html(b, str(x, "design", ""));
			buf_printf(b, ", %lld runs",
				   (long long)json_integer_value(json_object_get(x, "runs")));
		}
		if (json_object_get(x, "confirmation")) {
			buf_adds(b, "<br>confirmation: ");
			buf_add_html(b, str(x, "confirmation", ""));
		}
		buf_adds(b, "</td><td>");
		buf_add_html(b, str(x, "reason", ""));
		buf_adds(b, "</td></tr>\n");
	}
}

static char *
report_html(const json_t *doc, char *err, size_t errlen)
{
	const json_t *x;
	struct buf b;
	size_t i;
	char *text;

	if (!is_tune_doc(doc, err, errlen))
		return NULL;
	buf_init(&b);
	buf_printf(&b,
		   "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<title>nastune tune %lld</title>\n<style>body{font-family:sans-serif;"
		   "margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
		   "padding:3px 6px;font-size:13px}tr.applied{background:#e8f5e9}"
		   "tr.unsafe td.s{color:#b71c1c}</style></head><body>\n",
		   (long long)json_integer_value(json_object_get(doc, "tune")));
	buf_printf(&b, "<h1>nastune tune %lld</h1>\n<p>Goal <b>",
		   (long long)json_integer_value(json_object_get(doc, "tune")));
	buf_add_html(&b, str(doc, "goal", "?"));
	buf_adds(&b, "</b>, status ");
	buf_add_html(&b, str(doc, "status", "?"));
	buf_printf(&b, ", %.0f s of a %lld s budget; score change %+.1f%%.</p>\n",
		   num(doc, "elapsed_s"),
		   (long long)json_integer_value(json_object_get(doc, "budget_s")),
		   100 * num(doc, "improvement"));
	buf_adds(&b, "<h2>Score before and after (median, 95% interval)</h2>\n");
	chart(&b, json_object_get(doc, "before"), json_object_get(doc, "after"));
	buf_adds(&b, "<h2>Every candidate: its effect and interval</h2>\n");
	forest(&b, json_object_get(doc, "knobs"));
	buf_adds(&b, "<h2>What the clients get, per protocol (MB/s)</h2>\n");
	clients_chart(&b, json_object_get(doc, "protocol_choice"));
	knob_table(&b, json_object_get(doc, "knobs"));
	buf_adds(&b, "</table>\n<h2>Results after, and their bottleneck</h2>\n<table><tr>"
		     "<th>target</th><th>workload</th><th>metric</th><th>median</th><th>unit</th>"
		     "<th>bottleneck</th></tr>\n");
	json_array_foreach(json_object_get(doc, "results"), i, x)
	{
		buf_adds(&b, "<tr><td>");
		buf_add_html(&b, str(x, "target", "?"));
		buf_adds(&b, "</td><td>");
		buf_add_html(&b, str(x, "workload", "?"));
		buf_adds(&b, "</td><td>");
		buf_add_html(&b, str(x, "metric", "?"));
		buf_printf(&b, "</td><td>%.1f</td><td>", num(x, "median"));
		buf_add_html(&b, str(x, "unit", ""));
		buf_adds(&b, "</td><td>");
		buf_add_html(&b, str(x, "bottleneck", ""));
		buf_adds(&b, "</td></tr>\n");
	}
	buf_adds(&b, "</table>\n<h2>Clients</h2>\n<ul>\n");
	json_array_foreach(json_object_get(doc, "protocol_choice"), i, x)
	{
		const json_t *sh;
		size_t j;

		buf_adds(&b, "<li>");
		buf_add_html(&b, str(x, "client", "?"));
		buf_adds(&b, " [");
		buf_add_html(&b, str(x, "class", str(x, "os", "?")));
		buf_adds(&b, "]: use <b>");
		buf_add_html(&b, str(x, "protocol", "?"));
		buf_adds(&b, "</b> (");
		buf_add_html(&b, str(x, "why", ""));
		buf_adds(&b, ")<ul>");
		json_array_foreach(json_object_get(x, "shares"), j, sh)
		{
			buf_adds(&b, "<li>");
			buf_add_html(&b, str(sh, "share", "?"));
			buf_adds(&b, ": <b>");
			buf_add_html(&b, str(sh, "protocol", "?"));
			buf_adds(&b, "</b> (");
			buf_add_html(&b, str(sh, "why", ""));
			buf_adds(&b, ")</li>");
		}
		buf_adds(&b, "</ul></li>\n");
	}
	json_array_foreach(json_object_get(doc, "advice"), i, x)
	{
		buf_adds(&b, "<li>");
		buf_add_html(&b, str(x, "client", "?"));
		buf_adds(&b, ": ");
		buf_add_html(&b, str(x, "advice", ""));
		buf_adds(&b, "</li>\n");
	}
	buf_adds(&b, "</ul>\n</body></html>\n");
	text = buf_steal(&b, NULL);
	return text;
}

/* Escaped as the text is (a page saved and shown with cat stays harmless too). */
char *
tune_report_html(const json_t *doc, char *err, size_t errlen)
{
	return esc_render(doc, report_html, err, errlen);
}
