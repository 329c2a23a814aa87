/* result.c - benchmark results: copies, and JSON both ways so they can cross the wire. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "xmalloc.h"

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void
bench_results_add(struct bench_results *rs, const struct bench_result *r)
{
	struct bench_result *d;

	rs->v = xreallocarray(rs->v, rs->n + 1, sizeof(*rs->v));
	d = &rs->v[rs->n++];
	*d = *r;
	d->target = dup_or_null(r->target);
	d->protocol = dup_or_null(r->protocol);
	d->workload = dup_or_null(r->workload);
	d->metric = dup_or_null(r->metric);
	d->unit = dup_or_null(r->unit);
	d->client = dup_or_null(r->client);
	d->cache = dup_or_null(r->cache);
	d->note = dup_or_null(r->note);
	d->bottleneck = dup_or_null(r->bottleneck);
	d->runs = NULL;
	if (r->nruns) {
		d->runs = xcalloc(r->nruns, sizeof(*d->runs));
		memcpy(d->runs, r->runs, r->nruns * sizeof(*d->runs));
	}
	d->durability = dup_or_null(r->durability);
	d->unflushed = NULL;
	if (r->unflushed && r->nruns) {
		d->unflushed = xcalloc(r->nruns, sizeof(*d->unflushed));
		memcpy(d->unflushed, r->unflushed, r->nruns * sizeof(*d->unflushed));
	}
	d->lat = NULL;
	if (r->lat) {
		d->lat = xmalloc(sizeof(*d->lat));
		*d->lat = *r->lat;
	}
	d->hist = NULL;
	if (r->hist) {
		d->hist = xcalloc(BENCH_HIST_BUCKETS, sizeof(*d->hist));
		memcpy(d->hist, r->hist, BENCH_HIST_BUCKETS * sizeof(*d->hist));
	}
}

void
bench_result_clear(struct bench_result *r)
{
	if (!r)
		return;
	free(r->target);
	free(r->protocol);
	free(r->workload);
	free(r->metric);
	free(r->unit);
	free(r->client);
	free(r->cache);
	free(r->note);
	free(r->bottleneck);
	free(r->runs);
	free(r->hist);
	free(r->durability);
	free(r->unflushed);
	free(r->lat);
	memset(r, 0, sizeof(*r));
}

void
bench_results_clear(struct bench_results *rs)
{
	size_t i;

	if (!rs)
		return;
	for (i = 0; i < rs->n; i++)
		bench_result_clear(&rs->v[i]);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

static json_t *
str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* fio's spelling of a percentile key: "99.900000". */
static void
pct_key(char *out, size_t len, double p)
{
	snprintf(out, len, "%.6f", p);
}

/* "iops" and "clat_ns" as fio's JSON output has them in a job's "read"/"write" (integers in
 * ns, percentiles keyed "50.000000"), so a document reads beside fio's. */
static void
lat_to_json(json_t *o, const struct bench_latency *l)
{
	json_t *c = json_object(), *p = json_object();
	char key[32];

	/* the fio job these requests match, in fio's own words */
	if (l->rw[0] && l->bs)
		json_object_set_new(o, "job options",
				    json_pack("{s:s, s:I, s:s}", "rw", l->rw, "bs",
					      (json_int_t)l->bs, "iodepth", "1"));
	json_object_set_new(o, "iops", json_real(l->iops));
	json_object_set_new(c, "min", json_integer((json_int_t)llround(l->min_ns)));
	json_object_set_new(c, "max", json_integer((json_int_t)llround(l->max_ns)));
	json_object_set_new(c, "mean", json_real(l->mean_ns));
	json_object_set_new(c, "stddev", json_real(l->stddev_ns));
	json_object_set_new(c, "N", json_integer((json_int_t)l->n));
	for (size_t i = 0; i < BENCH_LAT_NPCT; i++) {
		pct_key(key, sizeof(key), bench_lat_pcts[i]);
		json_object_set_new(p, key, json_integer((json_int_t)llround(l->pct_ns[i])));
	}
	json_object_set_new(c, "percentile", p);
	json_object_set_new(o, "clat_ns", c);
}

/* The latency of a result from a peer or the state: every field a finite number >= 0 (the
 * percentiles ascending), or nothing at all. */
static struct bench_latency *
lat_from_json(const json_t *o)
{
	const json_t *c = json_object_get(o, "clat_ns"), *p, *v;
	struct bench_latency l = { 0 }, *out;
	double *f[] = { &l.min_ns, &l.max_ns, &l.mean_ns, &l.stddev_ns };
	static const char *const keys[] = { "min", "max", "mean", "stddev" };
	char key[32];

	if (!json_is_object(c) || !json_is_object(p = json_object_get(c, "percentile")))
		return NULL;
	v = json_object_get(o, "iops");
	if (!json_is_number(v) || !isfinite(l.iops = json_number_value(v)) || l.iops < 0)
		return NULL;
	v = json_object_get(c, "N");
	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return NULL;
	l.n = (uint64_t)json_integer_value(v);
	for (size_t i = 0; i < 4; i++) {
		v = json_object_get(c, keys[i]);
		if (!json_is_number(v) || !isfinite(*f[i] = json_number_value(v)) || *f[i] < 0)
			return NULL;
	}
	for (size_t i = 0; i < BENCH_LAT_NPCT; i++) {
		pct_key(key, sizeof(key), bench_lat_pcts[i]);
		v = json_object_get(p, key);
		if (!json_is_number(v) || !isfinite(l.pct_ns[i] = json_number_value(v)) ||
		    l.pct_ns[i] < 0 || (i && l.pct_ns[i] < l.pct_ns[i - 1]))
			return NULL;
	}
	v = json_object_get(o, "job options");
	if (json_is_object(v) && json_is_string(json_object_get(v, "rw")) &&
	    json_string_length(json_object_get(v, "rw")) < sizeof(l.rw) &&
	    json_is_integer(json_object_get(v, "bs")) &&
	    json_integer_value(json_object_get(v, "bs")) > 0) {
		snprintf(l.rw, sizeof(l.rw), "%s", json_string_value(json_object_get(v, "rw")));
		l.bs = (uint64_t)json_integer_value(json_object_get(v, "bs"));
	}
	out = xmalloc(sizeof(*out));
	*out = l;
	return out;
}

json_t *
bench_result_to_json(const struct bench_result *r)
{
	json_t *o = json_object(), *runs = json_array();
	size_t i;

	json_object_set_new(o, "target", str_or_null(r->target));
	json_object_set_new(o, "protocol", str_or_null(r->protocol));
	json_object_set_new(o, "workload", str_or_null(r->workload));
	json_object_set_new(o, "metric", str_or_null(r->metric));
	json_object_set_new(o, "unit", str_or_null(r->unit));
	json_object_set_new(o, "median", json_real(r->st.median));
	json_object_set_new(o, "ci95_low", json_real(r->st.ci95_low));
	json_object_set_new(o, "ci95_high", json_real(r->st.ci95_high));
	for (i = 0; i < r->nruns; i++)
		json_array_append_new(runs, json_real(r->runs[i]));
	json_object_set_new(o, "runs", runs);
	json_object_set_new(o, "bottleneck", str_or_null(r->bottleneck));
	json_object_set_new(o, "client", str_or_null(r->client));
	json_object_set_new(o, "cache", str_or_null(r->cache));
	json_object_set_new(o, "note", str_or_null(r->note));
	json_object_set_new(o, "n", json_integer((json_int_t)r->st.n));
	json_object_set_new(o, "q1", json_real(r->st.q1));
	json_object_set_new(o, "q3", json_real(r->st.q3));
	json_object_set_new(o, "iqr", json_real(r->st.iqr));
	json_object_set_new(o, "cv", json_real(r->st.cv));
	json_object_set_new(o, "pass", r->pass < 0 ? json_null() : json_boolean(r->pass));
	if (r->hist) {
		json_t *h = json_array();

		for (i = 0; i < BENCH_HIST_BUCKETS; i++)
			json_array_append_new(h, json_integer((json_int_t)r->hist[i]));
		json_object_set_new(o, "latency_hist", h);
	} else {
		json_object_set_new(o, "latency_hist", json_null());
	}
	if (r->lat && r->lat->n)
		lat_to_json(o, r->lat);
	json_object_set_new(o, "durability", str_or_null(r->durability));
	if (r->unflushed && r->nruns) {
		json_t *u = json_array();
		struct bench_stats us;

		for (i = 0; i < r->nruns; i++)
			json_array_append_new(u, json_real(r->unflushed[i]));
		json_object_set_new(o, "unflushed_runs", u);
		bench_stats_summary(r->unflushed, r->nruns, &us);
		json_object_set_new(o, "unflushed_median", json_real(us.median));
	}
	return o;
}

static int
get_str(const json_t *j, const char *key, bool required, char **out, char *err, size_t errlen)
{
	const json_t *v = json_object_get(j, key);

	*out = NULL;
	if (!v || json_is_null(v)) {
		if (!required)
			return 0;
		snprintf(err, errlen, "result: \"%s\" is missing", key);
		return -EINVAL;
	}
	if (!json_is_string(v)) {
		snprintf(err, errlen, "result: \"%s\" is not a string", key);
		return -EINVAL;
	}
	if (json_string_length(v) > BENCH_RESULT_MAX_STR) {
		snprintf(err, errlen, "result: \"%s\" is %zu bytes long, more than %d", key,
			 json_string_length(v), BENCH_RESULT_MAX_STR);
		return -EINVAL;
	}
	*out = xstrdup(json_string_value(v));
	return 0;
}

int
bench_result_from_json(const json_t *j, struct bench_result *r, char *err, size_t errlen)
{
	static const char *const req[] = { "target", "protocol", "workload", "metric", "unit" };
	char **fields[] = { &r->target, &r->protocol, &r->workload, &r->metric, &r->unit };
	const json_t *runs, *v, *h;
	size_t i;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->pass = -1;
	if (!json_is_object(j)) {
		snprintf(err, errlen, "result: not an object");
		return -EINVAL;
	}
	for (i = 0; i < sizeof(req) / sizeof(req[0]) && rc == 0; i++)
		rc = get_str(j, req[i], true, fields[i], err, errlen);
	if (rc == 0)
		rc = get_str(j, "client", false, &r->client, err, errlen);
	if (rc == 0)
		rc = get_str(j, "cache", false, &r->cache, err, errlen);
	if (rc == 0)
		rc = get_str(j, "note", false, &r->note, err, errlen);
	if (rc == 0)
		rc = get_str(j, "bottleneck", false, &r->bottleneck, err, errlen);
	if (rc == 0)
		rc = get_str(j, "durability", false, &r->durability, err, errlen);
	runs = json_object_get(j, "runs");
	if (rc == 0 && !json_is_array(runs)) {
		snprintf(err, errlen, "result: \"runs\" is missing or not an array");
		rc = -EINVAL;
	}
	if (rc == 0 && json_array_size(runs) > BENCH_RESULT_MAX_RUNS) {
		snprintf(err, errlen, "result: %zu runs, more than the %u a run can make",
			 json_array_size(runs), BENCH_RESULT_MAX_RUNS);
		rc = -EINVAL;
	}
	if (rc == 0 && json_array_size(runs)) {
		r->nruns = json_array_size(runs);
		r->runs = xcalloc(r->nruns, sizeof(*r->runs));
		json_array_foreach(runs, i, v)
		{
			if (!json_is_number(v)) {
				snprintf(err, errlen, "result: \"runs\"[%zu] is not a number", i);
				rc = -EINVAL;
				break;
			}
			r->runs[i] = json_number_value(v);
		}
	}
	h = json_object_get(j, "unflushed_runs");
	if (rc == 0 && r->nruns && json_is_array(h) && json_array_size(h) == r->nruns) {
		r->unflushed = xcalloc(r->nruns, sizeof(*r->unflushed));
		json_array_foreach(h, i, v) r->unflushed[i] = json_number_value(v);
	}
	if (rc == 0 && (v = json_object_get(j, "pass")) && json_is_boolean(v))
		r->pass = json_is_true(v);
	if (rc == 0)
		r->lat = lat_from_json(j);
	h = json_object_get(j, "latency_hist");
	if (rc == 0 && json_is_array(h)) {
		r->hist = xcalloc(BENCH_HIST_BUCKETS, sizeof(*r->hist));
		json_array_foreach(h, i, v) if (i < BENCH_HIST_BUCKETS) r->hist[i] =
			(uint64_t)json_integer_value(v);
	}
	if (rc < 0) {
		bench_result_clear(r);
		return rc;
	}
	/* The summary follows from the runs (cheap); the interval is the producer's, stored with
	 * them, and bootstrapped again only when it is missing: every `report` would otherwise
	 * redo 2000 resamples per result. */
	bench_stats_summary(r->runs, r->nruns, &r->st);
	if ((v = json_object_get(j, "ci95_low")) && json_is_number(v) &&
	    (h = json_object_get(j, "ci95_high")) && json_is_number(h)) {
		r->st.ci95_low = json_number_value(v);
		r->st.ci95_high = json_number_value(h);
	} else if (r->nruns) {
		bench_bootstrap_ci(r->runs, r->nruns, 0, 1, &r->st.ci95_low, &r->st.ci95_high);
	}
	if ((v = json_object_get(j, "median")) && json_is_number(v))
		r->st.median = json_number_value(v);
	return 0;
}

json_t *
bench_results_to_json(const struct bench_results *rs)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < rs->n; i++)
		json_array_append_new(a, bench_result_to_json(&rs->v[i]));
	return a;
}

int
bench_results_from_json(const json_t *a, struct bench_results *rs, char *err, size_t errlen)
{
	const json_t *v;
	size_t i;

	if (!json_is_array(a)) {
		snprintf(err, errlen, "results: not an array");
		return -EINVAL;
	}
	json_array_foreach(a, i, v)
	{
		struct bench_result r;
		char e[256];
		int rc = bench_result_from_json(v, &r, e, sizeof(e));

		if (rc < 0) {
			snprintf(err, errlen, "results[%zu]: %s", i, e);
			return rc;
		}
		bench_results_add(rs, &r);
		bench_result_clear(&r);
	}
	return 0;
}
