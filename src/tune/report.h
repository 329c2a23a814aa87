/* tune/report.h - inside src/tune/: a finished tune as its report prints it, typed. A stored
 * document (what `tune --json` prints) is read into it once (reportdoc.c), whatever version
 * wrote it: a string absent or of another type is NULL, a number 0, and the printer
 * (report.c) names the default. Its strings are those of the escaped document (esc_render),
 * so a peer's or a client's text reaches a terminal or a page escaped. */
#ifndef NASTUNE_TUNE_REPORT_H
#define NASTUNE_TUNE_REPORT_H

#include <stdbool.h>
#include <stddef.h>

struct json_t;

/* A score: its median and 95% interval; present when the document holds it as an object. */
struct trep_score {
	bool present;
	double median, lo, hi;
};

/* An interval: bounded when it has two finite ends (older documents wrote an unbounded end as
 * -1 or 1e9: shown as no interval, never as an infinite one). */
struct trep_interval {
	bool bounded;
	double lo, hi;
};

/* One candidate of a knob, as the forest plot draws it. */
struct trep_cand {
	const char *value, *verdict;
	struct trep_interval iv;
	double effect, delta;
	long long pairs;
};

struct trep_knob {
	const char *name, *safety, *before, *after, *verdict, *decided_by, *reason;
	bool applied;
	bool has_design, has_confirmation; /* the keys are there (their text may not be) */
	const char *design, *confirmation;
	long long runs;
	struct trep_cand *cand;
	size_t ncand;
};

struct trep_result {
	const char *target, *workload, *metric, *unit, *bottleneck;
	double median;
};

struct trep_share {
	const char *share, *protocol, *why;
};

/* A protocol's score for one client, in the document's order. */
struct trep_proto_score {
	const char *protocol;
	double score;
};

struct trep_choice {
	const char *client, *cls, *os, *protocol, *why;
	struct trep_proto_score *scores;
	size_t nscores;
	struct trep_share *shares;
	size_t nshares;
};

struct trep_advice {
	const char *client, *advice;
};

/* A list of strings; an element that is not one is NULL. */
struct trep_strings {
	const char **v;
	size_t n;
};

struct tune_report {
	long long tune, budget_s, after_pairs;
	const char *goal, *status, *improvement_verdict;
	double elapsed_s, improvement;
	struct trep_strings targets, after_protocols, unchanged_protocols;
	struct trep_score before, after;
	struct trep_interval improvement_interval;
	bool planned; /* the plan: */
	long long candidates;
	double alpha, alpha_look, alpha_cost, min_gain, alpha_same;
	bool has_first_look, has_alpha_cost;
	double first_alpha_look;
	long long first_pairs;
	struct trep_knob *knobs;
	size_t nknobs;
	struct trep_result *results;
	size_t nresults;
	struct trep_choice *choices;
	size_t nchoices;
	struct trep_advice *advice;
	size_t nadvice;
};

/* doc read into r; its strings borrowed from doc (valid while doc is). Returns false with
 * err when doc is not a finished tune (no knobs or before score). Release with
 * tune_report_clear. */
bool tune_report_read(const struct json_t *doc, struct tune_report *r, char *err, size_t errlen);
void tune_report_clear(struct tune_report *r);

#endif
