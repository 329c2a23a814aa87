/* bench.h - the benchmark engine: workloads run through a driver (bench_driver.h) on a target,
 * repeated, summarised with statistics, attributed to a bottleneck, and (de)serialised as JSON.
 *
 * Portable library code: the tuner (tune/stats.c) and the agent (issue #8, also built on macOS)
 * call it. Nothing here includes libconfig, libnl, Avahi or the profile/netif/mdns headers.
 *
 * Units everywhere: throughput in MB/s (10^6 bytes per second), latencies in microseconds,
 * sizes in bytes. */
#ifndef NASTUNE_BENCH_H
#define NASTUNE_BENCH_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_driver.h"

/* Workloads; the names (bench_workload_name) are stable: CLI, config and reports use them. */
enum bench_workload {
	BENCH_SEQ_WRITE,   /* "seq-write": 1 MiB blocks, size bytes */
	BENCH_SEQ_READ,	   /* "seq-read" */
	BENCH_COPY,	   /* "copy-in-share": server-side copy, else read+write */
	BENCH_MIXED_RW,	   /* "mixed-rw": one reader and one writer at once */
	BENCH_SMALL_FILES, /* "small-files": N files of 66 KB */
	BENCH_SMALL_IO,	   /* "small-io": 1 KiB writes and reads */
	BENCH_RANDOM_IO,   /* "random-io": 4k, 512k, 16M records */
	BENCH_METADATA,	   /* "metadata": stat hit/miss, list, cold and hot */
	BENCH_VIDEO,	   /* "video-frames": paced frames, fps / dropped / p99 */
	BENCH_BIG_DIR,	   /* "big-dir": lookups, creates and a listing in one big directory */
	BENCH_SOURCE_TREE, /* "source-tree": `make -n`'s stats over a tree, cold and hot */
	BENCH_NWORKLOADS
};

/* The stable name of w ("seq-write", ...), or NULL when out of range. */
const char *bench_workload_name(enum bench_workload w);
/* The workload named name (exact match), or -EINVAL. */
int bench_workload_parse(const char *name);

/* A video format for the video-frames workload. */
struct bench_video_format {
	const char *name;     /* "prores422hq-1080p", "prores422hq-2160p", "v210-1080p" */
	const char *label;    /* "1080p ProRes 422 HQ" */
	uint64_t frame_bytes; /* bytes per frame (ProRes: its target bit rate / frame rate) */
};

/* The known formats, NULL-terminated. */
const struct bench_video_format *const *bench_video_formats(void);
/* Parses "FORMAT@FPS" ("prores422hq-1080p@30"; fps 1 to 240). Returns 0, or -EINVAL. */
int bench_video_parse(const char *spec, const struct bench_video_format **fmt, double *fps);

enum bench_cache {
	BENCH_CACHE_HOT,  /* caches left as they are (labelled "hot") */
	BENCH_CACHE_COLD, /* drop_caches before each measured run (labelled "cold" when that
			   * reached the server's cache too, else "client-cold") */
};

/* Progress: called before each warm-up or measured run of a workload. */
struct bench_progress {
	const char *target; /* URL */
	const char *workload;
	unsigned run;  /* 1-based, warm-up runs included */
	unsigned runs; /* warm-up + repeats */
	bool warmup;
};

struct bench_opts {
	uint64_t size;	  /* seq/copy/mixed/random file size; 0: 1 GiB */
	unsigned repeats; /* measured runs; 0: 5 */
	unsigned warmup;  /* discarded runs before them (the CLI's default is 1) */
	enum bench_cache cache;
	unsigned small_files;			/* small-files count; 0: 100 */
	uint64_t small_io_write;		/* bytes of 1 KiB writes; 0: min(10 MB, size) */
	uint64_t small_io_read;			/* bytes of 1 KiB reads; 0: min(100 MB, size) */
	unsigned meta_entries;			/* metadata, big-dir directory size; 0: 1000 */
	unsigned tree_files;			/* source-tree files; 0: 2000 */
	unsigned dir_ops;			/* big-dir's timed ops; 0: BENCH_DIR_OPS */
	const struct bench_video_format *video; /* NULL: prores422hq-1080p */
	double video_fps;			/* 0: 30 */
	double video_seconds;			/* per direction and run; 0: 10 */
	bool force;    /* benchmark a target that looks like a Time Machine share */
	bool quiet;    /* the agents' job lines at debug level (a tune's trials: dozens) */
	uint64_t seed; /* PRNG seed (data, random offsets, bootstrap); 0: fixed default */
	/* Drops the page cache (root: sync + drop_caches). Returns 0 or -errno; NULL: cannot,
	 * so runs are labelled hot even when cold was asked. */
	int (*drop_caches)(void *arg);
	void *drop_arg;
	/* drop_caches empties the server's page cache too: the target's server runs on this
	 * machine's kernel (bench_target_on_this_host). Only then is a network target's run
	 * labelled "cold"; otherwise the server may still hold the file and it is "client-cold".
	 * file:// and null:// targets are served by this machine by definition. */
	bool drop_reaches_server;
	void (*progress)(const struct bench_progress *p, void *arg);
	void *progress_arg;
	/* Set (by a signal handler) to stop: the run ends with -EINTR, scratch removed. */
	const volatile sig_atomic_t *stop;
	/* A scratch directory (a bench_scratch_name) the caller keeps across runs on one target,
	 * or NULL: each run then works in a new one and removes it. Kept, it is made when
	 * missing and left in place after the run with seq-read's file in it, which the next
	 * runs of the same size read again instead of writing it anew (a tune measures one
	 * target in dozens of short calls); whatever else a run made in it is removed at its
	 * end. It is reused only while it is the directory this process made (its identity:
	 * device and inode, file id, CNID, owner); anything else found under the name is left
	 * alone and the run fails. The caller removes it with bench_scratch_remove(). Ignored by
	 * the posix driver: locally each run makes its own. */
	const char *keep_scratch;
};

#define BENCH_DEFAULT_SIZE (1ull << 30)
#define BENCH_DEFAULT_REPEATS 5
/* Upper bounds of the options (bench_opts_check): with them every footprint fits in 64 bits
 * with room to spare, and a typo ("--size 1E") is refused instead of filling a disk. */
#define BENCH_MAX_SIZE (16ull << 40) /* --size, and each small-io volume: 16 TiB */
#define BENCH_MAX_REPEATS 1000u
#define BENCH_MAX_WARMUP 100u
#define BENCH_MAX_FILES 1000000u    /* --files */
#define BENCH_MAX_ENTRIES 100000u   /* --entries */
#define BENCH_MAX_TREE_FILES 25600u /* --tree-files: 100 directories of 16 of 16 files */
/* big-dir's lookups, creates and unlinks a run times unless dir_ops (at most --entries) */
#define BENCH_DIR_OPS 500u
/* Free space asked for beyond twice the largest footprint. */
#define BENCH_SPACE_MARGIN (64ull << 20)
#define BENCH_SCRATCH_PREFIX ".nastune-bench-"

/* Summary statistics of a sample. */
struct bench_stats {
	size_t n;
	double median, q1, q3, iqr; /* quantiles by linear interpolation (R type 7) */
	double mean, sd, cv;	    /* sample sd (n-1); cv = sd / mean (0 when mean is 0) */
	double min, max;
	double ci95_low, ci95_high; /* bootstrap percentile interval of the median */
};

/* Computes s over v[0..n) (v is not modified). The bootstrap uses 2000 resamples drawn from a
 * splitmix64 PRNG seeded with seed, so results are reproducible. n == 0 gives all zeros.
 * Returns 0, or -EINVAL when v is NULL with n > 0. */
int bench_stats_compute(const double *v, size_t n, uint64_t seed, struct bench_stats *s);
/* bench_stats_compute without the bootstrap (ci95_* left 0): O(n log n), for a summary shown
 * again (a report, the unflushed median) rather than decided on. */
int bench_stats_summary(const double *v, size_t n, struct bench_stats *s);
/* The p-quantile (0..1) of sorted[0..n), R type 7; 0 for n == 0. */
double bench_quantile(const double *sorted, size_t n, double p);
/* Bootstrap percentile 95% interval of the median of v; resamples 0 means 2000. */
void bench_bootstrap_ci(const double *v, size_t n, unsigned resamples, uint64_t seed, double *lo,
			double *hi);
/* splitmix64: advances *state and returns the next value. */
uint64_t bench_rand(uint64_t *state);

/* Mann-Whitney U test (two-sided) of a against b. */
struct bench_mwu {
	double u;   /* U of sample a: rank sum of a - na(na+1)/2 */
	double z;   /* normal approximation's z (0 when exact) */
	double p;   /* two-sided p-value */
	bool exact; /* exact distribution (no ties, na + nb <= 50) */
};
/* Exact p when there are no ties and na + nb <= 50, else the normal approximation with tie
 * and continuity correction (as scipy.stats.mannwhitneyu and R's wilcox.test). Returns 0, or
 * -EINVAL when either sample is empty. */
int bench_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct bench_mwu *out);
/* true when a and b differ at alpha (two-sided MWU) and their medians differ by more than
 * min_rel (e.g. 0.03 for 3%). */
bool bench_differs(const double *a, size_t na, const double *b, size_t nb, double alpha,
		   double min_rel);

/* Number of log2 latency buckets: bucket i counts ops under 2^i microseconds (the last one:
 * everything longer). */
#define BENCH_HIST_BUCKETS 24

/* The completion latency of a request-sized metric (small-io, random-io, metadata): every
 * request of the measured runs pooled, as fio's "clat_ns" with its default percentiles' p50,
 * p90, p99 and p99.9 (bench_lat_pcts), and the requests per second. n == 0: none. */
#define BENCH_LAT_NPCT 4
extern const double bench_lat_pcts[BENCH_LAT_NPCT]; /* 50, 90, 99, 99.9 */
struct bench_latency {
	char rw[12]; /* the fio job it matches: "read", "write", "randread", "randwrite";
		      * "" none (metadata) */
	uint64_t bs; /* its block size in bytes; 0 none */
	uint64_t n;  /* requests timed */
	double iops; /* n / the seconds their loops took */
	double min_ns, max_ns, mean_ns, stddev_ns;
	double pct_ns[BENCH_LAT_NPCT];
};

/* A latency accumulator (latency.c): fixed memory, any number of requests. */
struct bench_lathist;
struct bench_lathist *bench_lathist_new(void);
void bench_lathist_free(struct bench_lathist *h); /* NULL-safe */
/* One request that took secs. */
void bench_lathist_add(struct bench_lathist *h, double secs);
/* The wall time a loop of requests took (added up for IOPS). */
void bench_lathist_span(struct bench_lathist *h, double secs);
/* The summary; percentiles within 0.8% of a request's own latency (log-linear buckets). */
void bench_lathist_summary(const struct bench_lathist *h, struct bench_latency *out);

/* One metric of one workload on one target, summarised over the measured runs. */
struct bench_result {
	char *target;	  /* URL (never with a password) */
	char *protocol;	  /* driver name: "posix", "smb", ... */
	char *workload;	  /* bench_workload_name */
	char *metric;	  /* "write", "read-4k", "stat-miss-cold", "fps", ... */
	char *unit;	  /* "MB/s", "us", "files/s", "fps", "frames" */
	char *client;	  /* "loopback", or the agent's name */
	char *cache;	  /* "hot", "cold" (client's and server's page cache dropped) or
			   * "client-cold" (only this machine's: the server's is not ours) */
	char *note;	  /* how it was measured ("server-side copy (copy_file_range)"); NULL */
	char *bottleneck; /* "network-bound (97% of TCP)", ...; NULL for non-throughput */
	double *runs;	  /* measured values, in run order */
	size_t nruns;
	struct bench_stats st;
	int pass;	/* video: 1 pass, 0 fail; -1 not a pass/fail metric */
	uint64_t *hist; /* latency histogram (BENCH_HIST_BUCKETS) or NULL */
	/* Write metrics: "flushed" when the timing includes a flush that puts the data on the
	 * server's stable storage (NFS COMMIT, FPFlushFork, fsync), "unflushed" when it does not
	 * (libsmbclient has no flush; small-files and video writes are not flushed); NULL for
	 * reads and metadata. Compare across protocols only like with like. */
	char *durability;
	/* Flushed results: each run's value without the flush (the data written to the server's
	 * cache, as an unflushed protocol measures it), nruns values; NULL otherwise. */
	double *unflushed;
	/* Request-sized metrics: their requests' latency and IOPS; NULL otherwise. */
	struct bench_latency *lat;
};

/* What a result from a peer or the state may hold (bench_result_from_json): a run makes at
 * most one value per metric and repeat, and nothing received is worth more than that to
 * parse or summarise. */
#define BENCH_RESULT_MAX_RUNS BENCH_MAX_REPEATS
#define BENCH_RESULT_MAX_STR 4096 /* bytes of any of its strings */

struct bench_results {
	struct bench_result *v;
	size_t n;
};

/* Runs workload w with driver d on target t (connecting, and disconnecting at the end):
 * removes what this host's crashed runs left (bench_clean_stale), refuses a
 * target that looks like a Time Machine share unless o->force (-EPERM), checks free space
 * (-ENOSPC when below 2 x the footprint + BENCH_SPACE_MARGIN), works only inside a new scratch
 * directory bench_scratch_name(n) at the target's root, runs o->warmup
 * discarded and o->repeats measured runs, and removes the scratch directory whatever
 * happens. On success appends one result per metric to out (client "loopback"; the caller
 * may change it) and returns 0. On failure returns -errno (-EINTR when *o->stop was set)
 * with one sentence in err, and out is unchanged. */
int bench_run(const struct bench_driver *d, const struct bench_target *t, enum bench_workload w,
	      const struct bench_opts *o, struct bench_results *out, char *err, size_t errlen);

/* A session: one connection to t through d that several workloads run on in turn, as
 * bench_run does each on its own (a tune's measure call runs its workloads on one connection:
 * a login per workload would weigh on the short runs a tune makes). A
 * workload's preflight is skipped when one on this session already passed with at least its
 * footprint (and no laxer force): each workload removes its files at its end, before the next
 * starts. A kept scratch directory (o->keep_scratch) is looked for once a session. */
struct bench_session;
/* Connects. Returns 0 with *s, or -errno with one sentence in err. */
int bench_session_open(const struct bench_driver *d, const struct bench_target *t,
		       struct bench_session **s, char *err, size_t errlen);
/* bench_run's work for workload w, on the session's connection. */
int bench_session_run(struct bench_session *s, enum bench_workload w, const struct bench_opts *o,
		      struct bench_results *out, char *err, size_t errlen);
/* Disconnects and frees s; NULL-safe. */
void bench_session_close(struct bench_session *s);

/* Bytes the workload holds in its scratch directory at most, with opts o; UINT64_MAX when that
 * does not fit in 64 bits (it never passes a space check). */
uint64_t bench_footprint(enum bench_workload w, const struct bench_opts *o);

/* Checks o against the BENCH_MAX_* bounds (and fps 0-240, seconds 0-3600; 0 means the
 * default). Returns 0, or -EINVAL with one sentence in err naming the value and the limit.
 * bench_run checks it too. */
int bench_opts_check(const struct bench_opts *o, char *err, size_t errlen);

/* The refusals before the first byte is written to the target behind c: a root that looks
 * like a Time Machine share unless force (-EPERM); free space below 2 x footprint +
 * BENCH_SPACE_MARGIN, computed without wrapping (-ENOSPC). Removes this host's stale
 * scratch entries on the way. what names the workload in err. Returns 0 or -errno with err. */
int bench_preflight(const struct bench_driver *d, struct bench_conn *c, const char *url,
		    const char *what, uint64_t footprint, bool force, char *err, size_t errlen);

/* A scratch name for this process: BENCH_SCRATCH_PREFIX"<host>-<pid>-<tag>-<16 random hex>"
 * into buf (random: a share user cannot plant it in advance). The next start removes it
 * (directory or file) once this process is gone. */
void bench_scratch_name(char *buf, size_t len, const char *tag);

/* Removes the kept scratch directory name (bench_opts.keep_scratch) from target t with
 * driver d: connects, removes the tree when it is still the directory this process made
 * (-ESTALE, left alone, when not), disconnects. A missing one is not an error. Returns 0 or
 * -errno with err. */
int bench_scratch_remove(const struct bench_driver *d, const struct bench_target *t,
			 const char *name, char *err, size_t errlen);

/* Where a run records the scratch directories it makes (one small 0600 file each: target,
 * name, this host and pid, and the directory's identity: device, inode or file id, owner),
 * so that a later run can remove what a crashed one left: <root>/var/lib/nastune/scratch for
 * the commands. NULL (the default): records in memory only, and nothing stale is cleaned. */
void bench_scratch_registry(const char *dir);

/* Removes what this host's crashed runs left at the root of the target behind c (whose URL
 * is url): every recorded scratch directory of a process that is gone, when it is still what
 * was recorded. A name now carrying something else (renamed, replaced, a link, another
 * owner) is left alone and reported; a name that was never recorded is never touched,
 * whatever it looks like. Returns how many were removed. */
int bench_clean_stale(const struct bench_driver *d, struct bench_conn *c, const char *url);

/* Appends a deep copy of r to rs. */
void bench_results_add(struct bench_results *rs, const struct bench_result *r);
/* Frees everything in r / rs and zeroes them; NULL-safe. */
void bench_result_clear(struct bench_result *r);
void bench_results_clear(struct bench_results *rs);

/* Baselines measured in the same run, for attribution. 0 means unknown. */
struct bench_baseline {
	double disk_write, disk_read; /* MB/s, raw disk of the share's filesystem */
	char disk_method[64];	      /* "O_DIRECT" or "buffered+fsync (no O_DIRECT here)" */
	double tcp;		      /* MB/s between the ends */
	char tcp_method[64];	      /* "tcp stream (loopback)", "iperf3" */
	double client_disk;	      /* MB/s (agents) */
};

/* Raw disk throughput of the filesystem holding dir: writes then reads o->size bytes (0: the
 * default; capped at 1 GiB, at least 4 MiB) with O_DIRECT, median of three runs each. First
 * the refusals of bench_preflight (a Time Machine root unless o->force, free space); then
 * everything happens in a new scratch directory (bench_scratch_name "disk", mode 0700, made
 * through bench_drv_posix) holding one file created O_EXCL|O_NOFOLLOW through the
 * directory's descriptor, and both are removed after, also when *o->stop ends it (-EINTR).
 * Falls back to buffered I/O + fsync (and says so in b->disk_method) where O_DIRECT is
 * refused. Returns 0, or -errno with one sentence in err. */
int bench_baseline_disk(const char *dir, const struct bench_opts *o, struct bench_baseline *b,
			char *err, size_t errlen);
/* Raw TCP throughput over loopback with nastune's own stream test (sender and receiver
 * threads, bytes bytes, capped at 4 GiB). Returns 0 or -errno. */
int bench_baseline_tcp_loopback(uint64_t bytes, struct bench_baseline *b);
/* TCP throughput to host with iperf3 -c (needs iperf3 here and a server there). Returns 0,
 * -ENOENT when iperf3 is not installed, or -EIO. */
int bench_baseline_iperf3(const char *host, struct bench_baseline *b);
/* Sets r->bottleneck from b (for MB/s metrics; others keep NULL). network says whether the
 * protocol crosses the network (TCP counts). */
void bench_attribute(struct bench_result *r, const struct bench_baseline *b, bool network);

/* JSON: one result as {"target", "protocol", "workload", "metric", "unit", "median",
 * "ci95_low", "ci95_high", "runs", "bottleneck", "client", "cache", "note", "n", "q1", "q3",
 * "iqr", "cv", "pass", "latency_hist", "durability"}, and for flushed results
 * "unflushed_runs" and "unflushed_median". Returns a new reference. */
json_t *bench_result_to_json(const struct bench_result *r);
/* Parses one result object into r (clear it with bench_result_clear). Statistics are
 * recomputed from "runs" when absent. Returns 0, or -EINVAL with err naming the field. */
int bench_result_from_json(const json_t *j, struct bench_result *r, char *err, size_t errlen);
/* All of rs as a JSON array (new reference) / parsed from one (appending to rs). */
json_t *bench_results_to_json(const struct bench_results *rs);
int bench_results_from_json(const json_t *a, struct bench_results *rs, char *err, size_t errlen);

/* A run document as stored and printed: {"run", "created", "generation", "hw_hash",
 * "results": [...], "baselines": [...], "errors": [...]} (bench_results_to_json for results).
 * Reports: plain text (caller frees) and one self-contained HTML page with SVG charts
 * (throughput with error bars, small-io latency distribution, video pass/fail). Both return
 * NULL with err when doc is not a run document. */
char *bench_report_text(const json_t *doc, char *err, size_t errlen);
char *bench_report_html(const json_t *doc, char *err, size_t errlen);

#endif
