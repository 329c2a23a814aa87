/* benchrun.h - one benchmark run of this host, as `nastune bench` makes it: the plan (targets
 * from URLs or derived from the configuration, workloads, video formats), the run (per
 * target: baselines, every workload through the engine, each result attributed to its
 * bottleneck) and the record (one JSON document stored in the state database with the
 * generation in force and the hardware fingerprint). The command parses options, shows
 * progress through the engine's callback, adds the agents' results (benchrun_clients) and
 * prints; a unit test drives the same calls with the null driver.
 * The run's record (when, generation, hardware) is runrec.h's. */
#ifndef NASTUNE_BENCHRUN_H
#define NASTUNE_BENCHRUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "bench.h"

struct model;

#define BENCHRUN_MAX_VIDEO 8

struct benchrun_target {
	struct bench_target t;
	const struct bench_driver *d;
	char *local; /* local directory behind it (disk baseline); NULL */
};

struct benchrun_video {
	const struct bench_video_format *fmt;
	double fps;
};

struct benchrun {
	/* The plan: filled by the caller and benchrun_add_url / benchrun_derive_targets. */
	struct benchrun_target *tg;
	size_t ntg;
	bool wl[BENCH_NWORKLOADS]; /* the workloads to run */
	struct benchrun_video videos[BENCHRUN_MAX_VIDEO];
	size_t nvideo;	     /* 0: prores422hq-1080p at 30 fps */
	struct bench_opts o; /* o.video and o.video_fps are set per video run */
	bool no_baseline;
	/* Called after each workload on each target (a progress line ends there); NULL. */
	void (*workload_done)(void *arg);
	void *workload_arg;
	/* What the run found: results (loopback, then the caller's agents), baselines and
	 * errors as the stored document has them, and each agent's facts. */
	struct bench_results all;
	json_t *baselines, *errors, *agents;
};

/* Sets up an empty run with the defaults (warm-up 1; cache cold as root, hot otherwise). */
void benchrun_init(struct benchrun *b);
/* Frees what b holds (the targets, results and JSON arrays). */
void benchrun_clear(struct benchrun *b);

/* What to run: the protocols (protos, a comma list checked here; NULL: all), the workloads
 * (wls, a comma list into b->wl; NULL: all) and the video formats (videos, FORMAT@FPS,...
 * into b->videos; NULL: the default). Returns 0, or -EINVAL with err naming the entry. */
int benchrun_select(struct benchrun *b, const char *protos, const char *wls, const char *videos,
		    char *err, size_t errlen);
/* Adds the target url (as the user wrote it). m, when not NULL, is the configuration: a
 * Time Machine share of it is refused unless b->o.force; root prefixes its paths. Returns 0
 * when added, 1 when skipped for want of a driver in this build (logged), -EINVAL for a bad
 * URL or one whose protocol is not in protos (a comma list; NULL: all), -EPERM for a Time
 * Machine share; err says why. */
int benchrun_add_url(struct benchrun *b, const struct model *m, const char *root, const char *url,
		     const char *protos, char *err, size_t errlen);
/* Adds the server's own shares over loopback for each enabled protocol of protos with a
 * driver, and file:// of each share's path (shown as the configuration writes it, measured
 * under root); never Time Machine or read-only shares (logged). */
void benchrun_derive_targets(struct benchrun *b, const struct model *m, const char *root,
			     const char *protos);
/* Reads credentials for every target with a host from creds (when not NULL), else asks on
 * the terminal. Returns 0, or -EINVAL with err naming the file and line. */
int benchrun_credentials(struct benchrun *b, const char *creds, char *err, size_t errlen);
/* Warm-up and measured runs the plan makes (for progress). */
unsigned benchrun_total_runs(const struct benchrun *b);
/* Whether any workload is selected. */
bool benchrun_any_workload(const struct benchrun *b);

/* Runs the plan: per target, the baselines (unless no_baseline), then every selected
 * workload (each video format for video-frames), stopping when *b->o.stop is set, then the
 * bottleneck of each of the target's results. A failed workload is logged and added to
 * b->errors; the rest still run. Returns 0, -EIO when any workload failed, -EINTR when
 * stopped. */
int benchrun_run(struct benchrun *b);

/* The same workloads on the agents clients names (agentctl_bench, with token and protos as
 * there): their results appended to b->all, their facts to b->agents and their failures to
 * b->errors, as the run's document has them. Returns 0, or -errno when any agent or job
 * failed. */
int benchrun_clients(struct benchrun *b, const char *root, const struct model *m,
		     char *const *clients, size_t nclients, const char *token, const char *protos);

/* sync and drop the page cache (root only); a bench_opts.drop_caches callback. */
int benchrun_drop_caches(void *arg);

/* The run's document ({"run", "created", "nastune", "results", "baselines", "errors",
 * "agents", "hw_hash", "hw", "options", "generation"}: the arrays move into it) stored as a
 * new bench run in the state database under root, with "run" set to its id. Returns 0 with
 * *doc (caller decrefs) and *run_id, or -errno with err, *doc still built ("run" and
 * "generation" null when the database could not be opened) and *run_id -1. */
int benchrun_store(struct benchrun *b, const char *root, json_t **doc, long *run_id, char *err,
		   size_t errlen);

#endif
