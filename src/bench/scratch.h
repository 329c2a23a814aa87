/* scratch.h - the benchmark's scratch directories inside src/bench/ (engine and
 * baseline): what a run records when it makes one, and the checks before it uses or removes
 * one again. The public side (names, the registry's place, removal of a kept one, stale
 * cleanup) is in bench.h.
 *
 * A scratch directory is known by what it is, not by its name: when this process makes one it
 * records the driver's identity of it (device, inode or file id, owner) in memory and, when a
 * registry is set (bench_scratch_registry), in a file of its own there, with this host and
 * pid. Whatever later carries the name is used or removed only while it is still that
 * directory; anything else is left alone and reported. */
#ifndef NASTUNE_BENCH_SCRATCH_H
#define NASTUNE_BENCH_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "bench_driver.h"

/* The entries of one directory: names (v), whether each is a directory and not a link
 * (dir) and what the listing said it is (st), n of them. Freed by scratch_names_clear(). */
struct scratch_names {
	char **v;
	bool *dir;
	struct bench_stat *st;
	size_t n;
};

/* Lists path (relative to the target's root, "" for the root) through d into ns. Returns 0
 * or the driver's -errno; ns holds what was listed either way. */
int scratch_names_list(const struct bench_driver *d, struct bench_conn *c, const char *path,
		       struct scratch_names *ns);
/* Frees what ns holds and resets it for reuse. */
void scratch_names_clear(struct scratch_names *ns);

/* Records name (just made by this process at the root of the target behind c, whose URL is
 * url) by its identity. Returns 0, or -errno when it cannot be stat'ed or has no identity
 * (it is then not used). */
int scratch_made(const struct bench_driver *d, struct bench_conn *c, const char *url,
		 const char *name);
/* Whether name at url is the directory this process recorded: 0 yes; -ENOENT nothing has
 * the name; -ENODATA it exists but was never recorded here; -ESTALE something else has the
 * name now (renamed, replaced, a link). err says which, in one sentence. */
int scratch_check(const struct bench_driver *d, struct bench_conn *c, const char *url,
		  const char *name, char *err, size_t errlen);
/* Removes the tree name (keep: the entries directly in it whose names begin with keep stay,
 * and so does name) when it is
 * still the recorded directory: pinned where the driver can, else first renamed to a private
 * name (not with keep); each directory is checked again before its entries are removed.
 * Forgets the record once the tree is gone. Returns 0, or -errno with err (-ESTALE: something
 * else was found; it and whatever was not removed yet are left alone). */
int scratch_remove(const struct bench_driver *d, struct bench_conn *c, const char *url,
		   const char *name, const char *keep, char *err, size_t errlen);
/* Forgets the record of name at url (memory and registry). */
void scratch_forget(const char *url, const char *name);
/* The registry's stale records for url: this host's, of processes that are gone. Each one
 * whose directory is still what was recorded is removed; one whose name now carries
 * something else is left alone and reported (log_warnx). Records end either way. Returns
 * how many directories were removed. */
int scratch_clean_stale(const struct bench_driver *d, struct bench_conn *c, const char *url);

#endif
