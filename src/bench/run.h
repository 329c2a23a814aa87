/* run.h - one workload run inside the bench engine: the metrics it records, the driver and
 * scratch directory it works in, and the helpers every workload calls. Private to src/bench/. */
#ifndef NASTUNE_BENCH_RUN_H
#define NASTUNE_BENCH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"
#include "timeutil.h"

#define BLOCK (1u << 20)
/* Bulk transfers (seq-*, mixed-rw, the setups' files) go in the driver's own request sizes
 * where it has them (bench_driver.read_block, write_block), else in BLOCK. */
#define READ_BLOCK(r) ((r)->d->read_block ? (r)->d->read_block : BLOCK)
#define WRITE_BLOCK(r) ((r)->d->write_block ? (r)->d->write_block : BLOCK)
#define BUFSZ (16u << 20)
#define SMALL_FILE 66000u /* "66 KB" */
#define MAX_METRICS 16

struct metric {
	const char *name, *unit;
	double *v;
	size_t n;
	uint64_t *hist;
	struct bench_lathist *lh; /* request-sized metrics: each request's latency */
	const char *rw;		  /* ... and the fio job they match ("" none), its bs */
	uint64_t bs;
	int pass;
	bool cold;
	const char *durability; /* write metrics: "flushed" or "unflushed"; NULL others */
	double *uf;		/* flushed: each run's value without the flush */
	size_t nuf;
};

struct run {
	const struct bench_driver *d;
	const struct bench_target *t;
	struct bench_opts o;
	enum bench_workload w;
	struct bench_conn *c, *c2;
	char scratch[192];
	const unsigned char *buf; /* what writes send: BUFSZ seeded random bytes, shared */
	unsigned char *rbuf;	  /* where reads land: BUFSZ, the session's */
	bool measuring, cold, copy_fallback;
	struct metric m[MAX_METRICS];
	size_t nm;
	char note[512];
	char err[512];
	uint64_t rng;
};

static inline double
since(double t0)
{
	double d = timeutil_mono() - t0;

	return d > 1e-9 ? d : 1e-9;
}

/* The page cache dropped before a run is also the one the target's server reads through. */
static inline bool
server_cache_dropped(const struct run *r)
{
	return !r->t->host || r->o.drop_reaches_server;
}

static inline bool
stopped(const struct run *r)
{
	return r->o.stop && *r->o.stop;
}

static inline double
mbps(uint64_t bytes, double secs)
{
	return (double)bytes / 1e6 / (secs > 1e-9 ? secs : 1e-9);
}

/* A path inside the scratch directory. */
void run_path(const struct run *r, char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Records a driver failure (or the interruption that caused it) in err (512 bytes); returns
 * the code. */
int run_fail(const struct run *r, struct bench_conn *c, int rc, const char *what, const char *path,
	     char *err);
/* -EINTR with "interrupted" in err once the run was told to stop, else 0. */
int run_check_stop(const struct run *r, char *err);
/* Adds v to metric name (made on first use) while the run is measuring. */
void run_record(struct run *r, const char *name, const char *unit, double v, bool cold);
/* The metric name, or NULL when none was recorded yet. */
struct metric *run_metric(struct run *r, const char *name);
/* Labels the write metric name just recorded: "flushed" when its timing includes a flush the
 * driver really makes (then unflushed is the same run without the flush, what a protocol
 * that cannot flush measures), else "unflushed". */
void run_durable(struct run *r, const char *name, bool flush_timed, double unflushed);
/* Writes size bytes to a new file at path in blocks of blk; flushes when flush, and then
 * puts the seconds the flush took in *fsecs (may be NULL). */
int run_write_file(const struct run *r, struct bench_conn *c, const char *path, uint64_t size,
		   size_t blk, bool flush, double *fsecs, char *err);
/* Reads the whole file at path in blocks of blk; *bytes gets the amount read. */
int run_read_file(const struct run *r, struct bench_conn *c, const char *path, size_t blk,
		  uint64_t *bytes, char *err);
/* qsort's comparison of doubles, ascending. */
int run_cmp_double(const void *a, const void *b);
/* Adds latencies (us) to the histogram of metric name and returns their p99. */
double run_latency_summary(struct run *r, const char *name, double *lat, size_t n);
/* Pools one loop's request latencies (us each) into metric name, with the loop's wall time for
 * its IOPS: every request of every measured run, as fio counts a job's. */
void run_lat_pool(struct run *r, const char *name, const char *rw, uint64_t bs, const double *us,
		  size_t n, double span);

#endif
