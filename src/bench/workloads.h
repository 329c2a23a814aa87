/* workloads.h - the workloads' entry points inside src/bench/: each has an optional setup,
 * run once before the warm-up, and a run, called once per repeat; both return 0 or -errno
 * with the reason in the run's err. */
#ifndef NASTUNE_BENCH_WORKLOADS_H
#define NASTUNE_BENCH_WORKLOADS_H

#include <stdint.h>

#include "bench.h"

struct run;

/* What a kept scratch directory keeps between runs: the names directly in it that begin with
 * KEPT_PREFIX, which a run leaves in place at its end (rm_tree's keep). seq-read's file, written
 * only when a file of that size is not there yet; big-dir's directory of --entries files (the
 * entry count in its name), made once. */
#define KEPT_PREFIX "kept-"
#define KEPT_SEQ_READ KEPT_PREFIX "seq-read.dat"
#define KEPT_BIG_DIR KEPT_PREFIX "big-%u"

struct wl_ops {
	int (*setup)(struct run *r);
	int (*run)(struct run *r);
};

/* Indexed by enum bench_workload. */
extern const struct wl_ops wl_ops[BENCH_NWORKLOADS];

/* Fills in the defaults of the options left 0. */
void wl_normalize(struct bench_opts *o);

int wl_seq_write(struct run *r);
int wl_seq_read_setup(struct run *r);
int wl_seq_read(struct run *r);
int wl_copy_setup(struct run *r);
int wl_copy_run(struct run *r);
int wl_mixed_setup(struct run *r);
int wl_mixed_run(struct run *r);
int wl_small_files_setup(struct run *r);
int wl_small_files_run(struct run *r);
int wl_small_io_setup(struct run *r);
int wl_small_io_run(struct run *r);
int wl_random_setup(struct run *r);
int wl_random_run(struct run *r);
int wl_meta_setup(struct run *r);
int wl_meta_run(struct run *r);
int wl_video_run(struct run *r);
int wl_bigdir_setup(struct run *r);
int wl_bigdir_run(struct run *r);
int wl_tree_setup(struct run *r);
int wl_tree_run(struct run *r);

/* random-io's file: at least 16 MiB, the size rounded up to a multiple of 16 MiB. */
uint64_t wl_random_file_size(const struct bench_opts *o);

#endif
