/* drv_null.h - the null benchmark driver's controls, for tests.
 *
 * The null driver keeps an in-memory tree (names and sizes, no data: reads return zeros) per
 * target name, shared by every connection to that name and freed with the last one. Target
 * URL: null://NAME[?OPTION&...] with options
 *	free=BYTES	free space reported (default 1 TiB)
 *	fail=OP:N	the Nth call of OP (mkdir, rmdir, unlink, rename, stat, list, space, open,
 *			pread, pwrite, flush, close, copy) on this store fails with -EIO
 *	copy=0		no server-side copy (copy returns -EOPNOTSUPP)
 *	delay_us=N	every pread/pwrite takes at least N microseconds
 *	slow_us=N	... but every slow_every-th of them (counted per store) N instead
 *	slow_every=K */
#ifndef NASTUNE_BENCH_NULL_H
#define NASTUNE_BENCH_NULL_H

#include <stdint.h>

#include "bench_driver.h"

enum bench_null_op {
	BNULL_MKDIR,
	BNULL_RMDIR,
	BNULL_UNLINK,
	BNULL_RENAME,
	BNULL_STAT,
	BNULL_LIST,
	BNULL_SPACE,
	BNULL_OPEN,
	BNULL_PREAD,
	BNULL_PWRITE,
	BNULL_FLUSH,
	BNULL_CLOSE,
	BNULL_COPY,
	BNULL_CONNECT,
	BNULL_NOPS
};

struct bench_null_counts {
	uint64_t ops[BNULL_NOPS]; /* calls per op, over all stores since the last reset */
	uint64_t bytes_read, bytes_written;
	uint64_t max_concurrent; /* most connections open at once */
};

/* Copies the counters into out. Thread-safe. */
void bench_null_counts(struct bench_null_counts *out);
/* Zeroes the counters (stores with open connections are kept). */
void bench_null_reset(void);
/* Number of entries (files and directories) in the store named name, or -1 when no
 * connection to it is open. */
long bench_null_entries(const char *name);

/* Calls fn(op, path, arg) at the start of every later call of op on any store, outside the
 * driver's lock (fn may use another connection): a test changes the tree at that exact
 * moment. fn NULL removes the hook. Not thread-safe against running calls. */
void bench_null_hook(enum bench_null_op op,
		     void (*fn)(enum bench_null_op op, const char *path, void *arg), void *arg);

/* The same driver with concurrent = false and no copy: for the fallbacks' tests. Not in
 * the registry. */
extern const struct bench_driver bench_drv_null_serial;

#endif
