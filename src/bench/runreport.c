/* runreport.c - a stored run as a text table, or as one self-contained HTML page with inline
 * SVG charts (no scripts, no external resources). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "buf.h"
#include "esc.h"
#include "xmalloc.h"

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
};

static const char *
jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static int
load(const json_t *doc, struct bench_results *rs, char *err, size_t errlen)
{
	if (!json_is_object(doc) || !json_is_array(json_object_get(doc, "results"))) {
		snprintf(err, errlen, "not a benchmark run (no \"results\" array)");
		return -1;
	}
	return bench_results_from_json(json_object_get(doc, "results"), rs, err, errlen);
}

static void
fmt_num(char *out, size_t len, double v)
{
	if (fabs(v) >= 100 || v == 0)
		snprintf(out, len, "%.0f", v);
	else if (fabs(v) >= 10)
		snprintf(out, len, "%.1f", v);
	else
		snprintf(out, len, "%.2f", v);
}

/* A latency in ns as people read one: "850 ns", "412 us", "3.10 ms", "1.20 s". */
static void
fmt_ns(char *out, size_t len, double ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	size_t u = 0;
	char n[24];

	while (u < 3 && ns >= 1000) {
		ns /= 1000;
		u++;
	}
	fmt_num(n, sizeof(n), ns);
	snprintf(out, len, "%s %s", n, unit[u]);
}

/* The percentile's label: "p50", "p99.9". */
static void
fmt_pct(char *out, size_t len, double p)
{
	snprintf(out, len, p == floor(p) ? "p%.0f" : "p%.1f", p);
}

static void
header_text(struct buf *b, const json_t *doc)
{
	const json_t *g = json_object_get(doc, "generation"),
		     *bl = json_object_get(doc, "baselines");
	const json_t *e = json_object_get(doc, "errors"), *v;
	size_t i;

	buf_printf(b, "run %lld, %s", (long long)json_integer_value(json_object_get(doc, "run")),
		   jstr(doc, "created"));
	if (json_is_integer(g))
		buf_printf(b, ", generation %lld", (long long)json_integer_value(g));
	buf_printf(b, ", hardware %.12s\n", jstr(doc, "hw_hash"));
	json_array_foreach(bl, i, v)
	{
		char n[32];

		fmt_num(n, sizeof(n), json_number_value(json_object_get(v, "value")));
		buf_printf(b, "baseline %-10s %10s MB/s  %s (%s)\n", jstr(v, "name"), n,
			   jstr(v, "where"), jstr(v, "method"));
	}
	json_array_foreach(e, i, v) buf_printf(b, "error    %s %s: %s\n", jstr(v, "target"),
					       jstr(v, "workload"), jstr(v, "message"));
}

static char *
report_text(const json_t *doc, char *err, size_t errlen)
{
	struct bench_results rs = { 0 };
	const char *last = NULL;
	struct buf b;
	size_t i;

	if (load(doc, &rs, err, errlen) < 0) {
		bench_results_clear(&rs);
		return NULL;
	}
	buf_init(&b);
	header_text(&b, doc);
	for (i = 0; i < rs.n; i++) {
		const struct bench_result *r = &rs.v[i];
		char med[48], lo[48], hi[48];

		if (!last || strcmp(last, r->target) != 0) {
			buf_printf(&b, "\n%s (%s, client %s)\n", r->target, r->protocol,
				   r->client ? r->client : "?");
			buf_printf(&b, "  %-14s %-15s %10s %-7s %-19s %6s %-4s %s\n", "workload",
				   "metric", "median", "unit", "95% CI", "CV", "cache",
				   "bottleneck / verdict");
			last = r->target;
		}
		fmt_num(med, sizeof(med), r->st.median);
		fmt_num(lo, sizeof(lo), r->st.ci95_low);
		fmt_num(hi, sizeof(hi), r->st.ci95_high);
		buf_printf(&b, "  %-14s %-15s %10s %-7s [%8s, %8s] %5.1f%% %-4s %s", r->workload,
			   r->metric, med, r->unit, lo, hi, 100 * r->st.cv,
			   r->cache ? r->cache : "",
			   r->pass >= 0 ? (r->pass ? "PASS" : "FAIL")
					: (r->bottleneck ? r->bottleneck : ""));
		/* Writes say whether a flush is in the figure: never compare across. */
		if (r->durability && r->unflushed) {
			struct bench_stats us;

			bench_stats_summary(r->unflushed, r->nruns, &us);
			fmt_num(med, sizeof(med), us.median);
			buf_printf(&b, " [flushed; %s without the flush]", med);
		} else if (r->durability) {
			buf_printf(&b, " [%s]", r->durability);
		}
		buf_addc(&b, '\n');
		if (r->lat && r->lat->n) {
			fmt_num(med, sizeof(med), r->lat->iops);
			buf_printf(&b, "  %-14s %-15s %10s %-7s clat", "", "", med, "IOPS");
			for (size_t k = 0; k < BENCH_LAT_NPCT; k++) {
				fmt_pct(lo, sizeof(lo), bench_lat_pcts[k]);
				fmt_ns(hi, sizeof(hi), r->lat->pct_ns[k]);
				buf_printf(&b, " %s %s", lo, hi);
			}
			buf_printf(&b, " (%llu requests)\n", (unsigned long long)r->lat->n);
		}
	}
	bench_results_clear(&rs);
	return buf_steal(&b, NULL);
}

/* Every string of doc (a peer's host name, a target, an error text) reaches the terminal
 * escaped. */
char *
bench_report_text(const json_t *doc, char *err, size_t errlen)
{
	return esc_render(doc, report_text, err, errlen);
}

static const char *
proto_color(const struct bench_results *rs, const char *proto)
{
	const char *seen[16];
	size_t i, n = 0, k;

	for (i = 0; i < rs->n && n < 16; i++) {
		for (k = 0; k < n; k++)
			if (strcmp(seen[k], rs->v[i].protocol) == 0)
				break;
		if (k == n)
			seen[n++] = rs->v[i].protocol;
		if (strcmp(rs->v[i].protocol, proto) == 0)
			return palette[k % (sizeof(palette) / sizeof(palette[0]))];
	}
	return palette[0];
}

/* Throughput: one horizontal bar per MB/s result, median with its 95% interval. */
static void
chart_throughput(struct buf *b, const struct bench_results *rs)
{
	double max = 0, x0 = 330, w = 520;
	size_t i, n = 0, row = 0;

	for (i = 0; i < rs->n; i++)
		if (strcmp(rs->v[i].unit, "MB/s") == 0) {
			n++;
			max = fmax(max, fmax(rs->v[i].st.ci95_high, rs->v[i].st.median));
		}
	buf_adds(b, "<h2>Throughput by protocol and workload</h2>\n");
	if (!n) {
		buf_adds(b, "<p>No throughput results in this run.</p>\n");
		return;
	}
	if (max <= 0)
		max = 1;
	buf_printf(b,
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"%zu\" "
		   "role=\"img\" aria-label=\"throughput\">\n",
		   n * 22 + 40);
	buf_printf(b, "<line x1=\"%.0f\" y1=\"10\" x2=\"%.0f\" y2=\"%zu\" stroke=\"#333\"/>\n", x0,
		   x0, n * 22 + 12);
	for (i = 0; i < rs->n; i++) {
		const struct bench_result *r = &rs->v[i];
		double y = 12 + (double)row * 22, bw = w * r->st.median / max;
		double lo = x0 + w * r->st.ci95_low / max, hi = x0 + w * r->st.ci95_high / max;
		char med[32];

		if (strcmp(r->unit, "MB/s") != 0)
			continue;
		row++;
		fmt_num(med, sizeof(med), r->st.median);
		buf_printf(b,
			   "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"end\" "
			   "font-family=\"sans-serif\">",
			   x0 - 6, y + 13);
		buf_add_html(b, r->protocol);
		buf_adds(b, " · ");
		buf_add_html(b, r->workload);
		buf_adds(b, " · ");
		buf_add_html(b, r->metric);
		buf_printf(b,
			   "</text>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.1f\" height=\"16\" "
			   "fill=\"%s\"><title>",
			   x0, y, bw, proto_color(rs, r->protocol));
		buf_add_html(b, r->target);
		buf_printf(b,
			   "</title></rect>\n<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" "
			   "stroke=\"#000\" stroke-width=\"1.5\"/>\n",
			   lo, y + 8, hi, y + 8);
		buf_printf(
			b,
			"<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#000\"/>"
			"<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#000\"/>\n",
			lo, y + 3, lo, y + 13, hi, y + 3, hi, y + 13);
		buf_printf(
			b,
			"<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" font-family=\"sans-serif\">"
			"%s MB/s</text>\n",
			fmax(hi, x0 + bw) + 6, y + 13, med);
	}
	buf_adds(b, "</svg>\n");
}

/* small-io latency distribution: the log2 histograms of the p99 metrics. */
static void
chart_latency(struct buf *b, const struct bench_results *rs)
{
	double x0 = 60, y0 = 230, bw = 34, maxfrac = 0;
	size_t i, k, series = 0;

	buf_adds(b, "<h2>small-io: latency distribution of 1 KiB operations</h2>\n");
	for (i = 0; i < rs->n; i++)
		if (rs->v[i].hist && series < 6) {
			uint64_t tot = 0;

			for (k = 0; k < BENCH_HIST_BUCKETS; k++)
				tot += rs->v[i].hist[k];
			for (k = 0; tot && k < BENCH_HIST_BUCKETS; k++)
				maxfrac = fmax(maxfrac, (double)rs->v[i].hist[k] / (double)tot);
			series++;
		}
	if (!series) {
		buf_adds(b, "<p>No small-io results in this run.</p>\n");
		return;
	}
	buf_printf(b,
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"%zu\" "
		   "role=\"img\" aria-label=\"latency\">\n",
		   280 + series * 18);
	buf_printf(b, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#333\"/>\n",
		   x0, y0, x0 + bw * BENCH_HIST_BUCKETS, y0);
	for (k = 0; k < BENCH_HIST_BUCKETS; k += 2)
		buf_printf(
			b,
			"<text x=\"%.0f\" y=\"%.0f\" font-size=\"10\" font-family=\"sans-serif\">"
			"&lt;%s%llu%s</text>\n",
			x0 + bw * (double)k, y0 + 14, "",
			k >= 20	  ? (1ull << k) / 1000000
			: k >= 10 ? (1ull << k) / 1000
				  : 1ull << k,
			k >= 20	  ? "s"
			: k >= 10 ? "ms"
				  : "µs");
	series = 0;
	for (i = 0; i < rs->n; i++) {
		const struct bench_result *r = &rs->v[i];
		uint64_t tot = 0;
		const char *color;

		if (!r->hist || series >= 6)
			continue;
		color = palette[series % (sizeof(palette) / sizeof(palette[0]))];
		for (k = 0; k < BENCH_HIST_BUCKETS; k++)
			tot += r->hist[k];
		for (k = 0; tot && k < BENCH_HIST_BUCKETS; k++) {
			double h = 200 * ((double)r->hist[k] / (double)tot) /
				   (maxfrac > 0 ? maxfrac : 1);

			if (r->hist[k])
				buf_printf(b,
					   "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
					   "height=\"%.1f\" "
					   "fill=\"%s\" fill-opacity=\"0.6\"/>\n",
					   x0 + bw * (double)k + (double)series * 4, y0 - h, bw - 8,
					   h, color);
		}
		buf_printf(
			b,
			"<rect x=\"%.0f\" y=\"%zu\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%.0f\" y=\"%zu\" font-size=\"12\" font-family=\"sans-serif\">",
			x0, 250 + series * 18, color, x0 + 18, 260 + series * 18);
		buf_add_html(b, r->protocol);
		buf_adds(b, " ");
		buf_add_html(b, r->metric);
		buf_printf(b, " (p99 %.0f µs) — ", r->st.median);
		buf_add_html(b, r->target);
		buf_adds(b, "</text>\n");
		series++;
	}
	buf_adds(b, "</svg>\n");
}

/* Request-sized metrics: IOPS and completion-latency percentiles, as fio reports them. */
static void
table_latency(struct buf *b, const struct bench_results *rs)
{
	char v[48], p[16];
	size_t i, k, n = 0;

	buf_adds(b, "<h2>Requests: IOPS and completion latency (fio's clat percentiles)</h2>\n");
	for (i = 0; i < rs->n; i++)
		n += rs->v[i].lat && rs->v[i].lat->n;
	if (!n) {
		buf_adds(b, "<p>No small-io, random-io or metadata results in this run.</p>\n");
		return;
	}
	buf_adds(b, "<table style=\"border-collapse:collapse;font-size:13px\" border=\"1\" "
		    "cellpadding=\"4\">\n<tr><th>target</th><th>protocol</th><th>workload</th>"
		    "<th>metric</th><th>IOPS</th>");
	for (k = 0; k < BENCH_LAT_NPCT; k++) {
		fmt_pct(p, sizeof(p), bench_lat_pcts[k]);
		buf_printf(b, "<th>%s</th>", p);
	}
	buf_adds(b, "<th>requests</th></tr>\n");
	for (i = 0; i < rs->n; i++) {
		const struct bench_result *r = &rs->v[i];
		const char *cells[] = { r->target, r->protocol, r->workload, r->metric };

		if (!r->lat || !r->lat->n)
			continue;
		buf_adds(b, "<tr>");
		for (k = 0; k < 4; k++) {
			buf_adds(b, "<td>");
			buf_add_html(b, cells[k] ? cells[k] : "");
			buf_adds(b, "</td>");
		}
		fmt_num(v, sizeof(v), r->lat->iops);
		buf_printf(b, "<td align=\"right\">%s</td>", v);
		for (k = 0; k < BENCH_LAT_NPCT; k++) {
			fmt_ns(v, sizeof(v), r->lat->pct_ns[k]);
			buf_printf(b, "<td align=\"right\">%s</td>", v);
		}
		buf_printf(b, "<td align=\"right\">%llu</td></tr>\n",
			   (unsigned long long)r->lat->n);
	}
	buf_adds(b, "</table>\n");
}

/* video-frames: pass/fail per target, format and direction. */
static void
chart_video(struct buf *b, const struct bench_results *rs)
{
	size_t i, n = 0, row = 0;

	buf_adds(b, "<h2>video-frames: pass / fail</h2>\n");
	for (i = 0; i < rs->n; i++)
		n += rs->v[i].pass >= 0;
	if (!n) {
		buf_adds(b, "<p>No video-frames results in this run.</p>\n");
		return;
	}
	buf_printf(b,
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"%zu\" "
		   "role=\"img\" aria-label=\"video\">\n",
		   n * 30 + 10);
	for (i = 0; i < rs->n; i++) {
		const struct bench_result *r = &rs->v[i];
		double y = 5 + (double)row * 30;

		if (r->pass < 0)
			continue;
		row++;
		buf_printf(
			b,
			"<rect x=\"5\" y=\"%.0f\" width=\"70\" height=\"24\" rx=\"4\" "
			"fill=\"%s\"/><text x=\"40\" y=\"%.0f\" font-size=\"13\" fill=\"#fff\" "
			"text-anchor=\"middle\" font-family=\"sans-serif\" font-weight=\"bold\">%s"
			"</text>\n",
			y, r->pass ? "#2ca02c" : "#d62728", y + 17, r->pass ? "PASS" : "FAIL");
		buf_printf(b,
			   "<text x=\"85\" y=\"%.0f\" font-size=\"12\" font-family=\"sans-serif\">",
			   y + 16);
		buf_add_html(b, r->protocol);
		buf_printf(b, " %s %.1f fps — ",
			   strncmp(r->metric, "write", 5) == 0 ? "write" : "read", r->st.median);
		buf_add_html(b, r->note);
		buf_adds(b, "</text>\n");
	}
	buf_adds(b, "</svg>\n");
}

static char *
report_html(const json_t *doc, char *err, size_t errlen)
{
	struct bench_results rs = { 0 };
	char *text;
	struct buf b;

	if (load(doc, &rs, err, errlen) < 0) {
		bench_results_clear(&rs);
		return NULL;
	}
	buf_init(&b);
	buf_printf(&b,
		   "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<title>nastune benchmark run %lld</title>\n<style>body{font-family:sans-serif;"
		   "margin:2em;color:#222;background:#fff}pre{background:#f4f4f4;padding:1em;"
		   "overflow-x:auto;font-size:12px}h1{font-size:1.4em}h2{font-size:1.1em;"
		   "margin-top:1.6em}</style></head><body>\n",
		   (long long)json_integer_value(json_object_get(doc, "run")));
	buf_printf(&b, "<h1>nastune benchmark run %lld</h1>\n",
		   (long long)json_integer_value(json_object_get(doc, "run")));
	chart_throughput(&b, &rs);
	chart_latency(&b, &rs);
	table_latency(&b, &rs);
	chart_video(&b, &rs);
	buf_adds(&b, "<h2>All results</h2>\n<pre>");
	text = report_text(doc, err, errlen);
	buf_add_html(&b, text);
	free(text);
	buf_adds(&b,
		 "</pre>\n<p>Throughput in MB/s (10<sup>6</sup> bytes per second), latencies "
		 "in microseconds; bars show the median of the measured runs and the whiskers its "
		 "bootstrap 95% interval.</p>\n</body></html>\n");
	bench_results_clear(&rs);
	return buf_steal(&b, NULL);
}

/* Escaped as the text is (a page saved and shown with cat stays harmless too). */
char *
bench_report_html(const json_t *doc, char *err, size_t errlen)
{
	return esc_render(doc, report_html, err, errlen);
}
