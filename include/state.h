/* state.h - nastune's state in SQLite (<root>/var/lib/nastune/state.db, WAL): generations
 * and their file manifests, the hardware fingerprint applied with each, later bench runs and
 * tune results. The only file that includes sqlite3.h. */
#ifndef NASTUNE_STATE_H
#define NASTUNE_STATE_H

#include <stddef.h>

struct state;

struct gen_file {
	char *path;	 /* installed path without the root prefix */
	char sha256[65]; /* of the content; "" when absent */
	unsigned mode, uid, gid;
	int present; /* 0: the generation has no such file (rollback removes it) */
};

struct generation {
	long id;	      /* 0 is the backup of the distro's own files */
	char *created;	      /* UTC, ISO 8601 */
	char *reason;	      /* "apply", "rollback to 3", "original files" */
	char *version;	      /* nastune's version */
	char inputs_hash[65]; /* rendered files + version: --if-changed compares this */
	char hw_hash[65];
	char *hw_text;
	char mtu_iface[16]; /* network.interface when it was set; "" none */
	int mtu;	    /* its MTU with this generation in force; 0 not recorded */
	struct gen_file *files;
	size_t nfiles;
};

/* Opens (creating and migrating) the state database under root. Returns 0 or -errno with a
 * message in err. Close with state_close. */
int state_open(const char *root, struct state **st, char *err, size_t errlen);
/* state_open, but only when the database can be seen: -ENOENT (err "no PATH") when not,
 * so that commands that only read never create it. */
int state_open_existing(const char *root, struct state **st, char *err, size_t errlen);
void state_close(struct state *st);
/* Opens the state database under root for reading only, writing nothing at all (no journal,
 * no WAL index: SQLite's immutable mode), for a caller that holds the apply lock shared so
 * that no generation can be recorded meanwhile. Returns 0; -ENOENT without a database;
 * -EAGAIN while a WAL file exists (its transactions would be missed); -EPROTO when its
 * schema is not this version's (state_open migrates it); -EIO. Close with state_close. */
int state_open_readonly(const char *root, struct state **st);
/* The head stamp (<state dir>/head): the newest generation's head without opening SQLite.
 * state_head_stamp_write, by a holder of the apply lock (exclusive) after closing the
 * database, writes it atomically from the database as it is (or removes it when it cannot
 * be had: a WAL, no generation). state_head_stamp_read fills g's id, hashes and MTU (no
 * files, no strings) and returns 0 only when the stamp is this user's, well formed and
 * written from this very database file, unchanged since and without a WAL; else -errno
 * (-ESTALE: the database changed behind it) and the caller reads the database. */
int state_head_stamp_write(const char *root);
int state_head_stamp_read(const char *root, struct generation *g);
/* Schema version after migrations. */
int state_schema_version(struct state *st);

/* The newest generation (highest id). Returns 0, -ENOENT when there is none, or -EIO. */
int state_last_generation(struct state *st, struct generation *g);
/* The same without its files (nfiles 0): what apply --if-changed compares. */
int state_last_generation_head(struct state *st, struct generation *g);
int state_get_generation(struct state *st, long id, struct generation *g);
/* Stores g with its files; g->id is used when >= 0, else the next id is assigned into it. */
int state_add_generation(struct state *st, struct generation *g);
/* Ids of all generations, oldest first; caller frees *ids. */
/* Adds one file to an existing generation (generation 0 learning the original of a file
 * nastune writes for the first time later). Returns 0 or -EIO. */
int state_add_generation_file(struct state *st, long gen, const struct gen_file *f);
int state_generation_ids(struct state *st, long **ids, size_t *n);
int state_delete_generation(struct state *st, long id);
void generation_clear(struct generation *g);

/* A stored benchmark run: the JSON document `nastune bench --json` prints. */
struct state_bench_run {
	long id;
	char *created;	  /* UTC, ISO 8601 */
	long gen;	  /* generation in force when it ran; -1: none */
	char hw_hash[65]; /* hardware fingerprint; "" when unknown */
	char *json;
};

/* Stores a run; *id gets its id (ids only grow). Returns 0 or -EIO. */
int state_add_bench_run(struct state *st, const char *created, long gen, const char *hw_hash,
			const char *json, long *id);
/* Replaces the JSON of run id (to put the id into it). Returns 0, -ENOENT or -EIO. */
int state_set_bench_run_json(struct state *st, long id, const char *json);
/* Run id, or the newest when id < 0. Returns 0, -ENOENT or -EIO; clear r with
 * state_bench_run_clear. */
int state_get_bench_run(struct state *st, long id, struct state_bench_run *r);
/* All runs, oldest first, JSON included; the caller clears each and frees *runs. */
int state_list_bench_runs(struct state *st, struct state_bench_run **runs, size_t *n);
void state_bench_run_clear(struct state_bench_run *r);

/* Tune runs in tune_results: a JSON document each (status "running" while it runs, then
 * "done", "aborted" or "dry-run"), with the generation and hardware fingerprint. */
int state_add_tune(struct state *st, const char *created, long gen, const char *hw_hash,
		   const char *json, long *id);
int state_set_tune(struct state *st, long id, const char *json);
/* Tune id, or the newest when id < 0: its id, hardware hash and JSON (caller frees both).
 * Returns 0, -ENOENT or -EIO. */
int state_get_tune(struct state *st, long id, long *out_id, char **hw_hash, char **json);

#endif
