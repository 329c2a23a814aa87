/* Scratch removal while a share user swaps directories (src/bench/scratch.c), on the null
 * driver: its hook renames at the exact moment of a call, so each race is hit every time.
 * The tree removed is a scratch directory with a file and a subdirectory; the victim is a
 * user's directory with the same names in it, and one more. Whatever the moment of the swap,
 * the removal stops with -ESTALE and every file of the victim is still there. */
#include <errno.h>

#include "unit.h"

#include "bench.h"
#include "bench/drv_null.h"
#include "bench/scratch.h"

struct swap {
	enum bench_null_op op;
	const char *at;	    /* swap when a call of op names a path ending in "/" at (NULL: the
			     * scratch top, by whatever name) */
	const char *victim; /* what takes the path's place */
	const struct bench_driver *d;
	struct bench_conn *c;
	int done;
	char where[256]; /* the path swapped */
};

/* The scratch directory at the root this call is about (S or its private name). */
static bool
is_top(const char *path)
{
	return strncmp(path, BENCH_SCRATCH_PREFIX, strlen(BENCH_SCRATCH_PREFIX)) == 0 &&
	       !strchr(path, '/');
}

static void
swap_hook(enum bench_null_op op, const char *path, void *arg)
{
	struct swap *s = arg;
	char *p;

	(void)op;
	size_t n = strlen(path), k = s->at ? strlen(s->at) : 0;

	if (s->done || (s->at ? n <= k || path[n - k - 1] != '/' || strcmp(path + n - k, s->at)
			      : !is_top(path)))
		return;
	s->done = 1;
	snprintf(s->where, sizeof(s->where), "%s", path);
	p = xstrdup(path); /* path may be the caller's buffer */
	assert_int_equal(s->d->rename(s->c, p, "parked"), 0);
	assert_int_equal(s->d->rename(s->c, s->victim, p), 0);
	free(p);
}

static void
mk(const struct bench_driver *d, struct bench_conn *c, const char *path, bool dir)
{
	struct bench_file *f;

	if (dir) {
		assert_int_equal(d->mkdir(c, path), 0);
		return;
	}
	assert_int_equal(d->open(c, path, BENCH_WR | BENCH_CREATE, &f), 0);
	assert_int_equal(d->close(c, f), 0);
}

/* Whether the file rel is in directory top. */
static bool
victim_has(const struct bench_driver *d, struct bench_conn *c, const char *top, const char *rel)
{
	struct bench_stat st;
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	return d->stat(c, p, &st) == 0;
}

/* Runs one race: op at path "at" (NULL: the scratch top) swaps it for victim; the removal
 * must refuse with want_msg and leave the victim's three files. */
static void
race(const struct bench_driver *d, const char *store, enum bench_null_op op, const char *at,
     bool sub_victim, const char *want_msg)
{
	struct bench_target t;
	struct bench_conn *c;
	char err[512] = "", name[192], url[64], sub[256], where[256];
	struct swap s = { .op = op, .d = d };
	int rc;

	snprintf(url, sizeof(url), "null://%s", store);
	assert_int_equal(bench_target_parse(url, &t, err, sizeof(err)), 0);
	assert_int_equal(d->connect(&t, &c, err, sizeof(err)), 0);
	s.c = c;
	bench_scratch_name(name, sizeof(name), "race");
	mk(d, c, name, true);
	assert_int_equal(scratch_made(d, c, t.url, name), 0);
	snprintf(sub, sizeof(sub), "%s/sub", name);
	mk(d, c, sub, true);
	snprintf(where, sizeof(where), "%s/a", name);
	mk(d, c, where, false);
	snprintf(where, sizeof(where), "%s/sub/b", name);
	mk(d, c, where, false);
	/* the user's directory: the same names, and one more */
	mk(d, c, "victim", true);
	mk(d, c, "victim/sub", true);
	mk(d, c, "victim/a", false);
	mk(d, c, "victim/sub/b", false);
	mk(d, c, "victim/sub/letter", false);

	s.victim = sub_victim ? "victim/sub" : "victim";
	s.at = at;
	bench_null_hook(op, swap_hook, &s);
	rc = scratch_remove(d, c, t.url, name, NULL, err, sizeof(err));
	bench_null_hook(op, NULL, NULL);
	assert_int_equal(s.done, 1);
	if (rc != -ESTALE)
		fail_msg("removal returned %d: %s", rc, err);
	if (!strstr(err, want_msg))
		fail_msg("\"%s\" not in: %s", want_msg, err);
	/* The victim's files, wherever the swap put the directory. */
	if (sub_victim) {
		assert_true(victim_has(d, c, s.where, "b"));
		assert_true(victim_has(d, c, s.where, "letter"));
		assert_true(victim_has(d, c, "victim", "a"));
	} else {
		const char *top = victim_has(d, c, s.where, "sub/letter") ? s.where : NULL;
		char priv[256] = "";

		if (!top) { /* renamed before the swap was noticed: named in the error */
			const char *p = strstr(err, BENCH_SCRATCH_PREFIX);

			assert_non_null(p);
			p = strstr(p + 1, BENCH_SCRATCH_PREFIX);
			assert_non_null(p);
			snprintf(priv, sizeof(priv), "%.*s", (int)strcspn(p, " "), p);
			top = priv;
		}
		assert_true(victim_has(d, c, top, "a"));
		assert_true(victim_has(d, c, top, "sub/b"));
		assert_true(victim_has(d, c, top, "sub/letter"));
	}
	d->disconnect(c);
	bench_target_clear(&t);
}

/* Swapped for the victim just as it is listed: the listing's "." is not the scratch
 * directory, nothing of it is removed. */
static void
test_swap_top_at_listing(void **state)
{
	(void)state;
	race(&bench_drv_null, "top", BNULL_LIST, NULL, false, "was another directory when listed");
}

/* Its subdirectory swapped (by a user who can write in it) as the subdirectory is listed. */
static void
test_swap_sub_at_listing(void **state)
{
	(void)state;
	race(&bench_drv_null, "sub", BNULL_LIST, "sub", true, "was another directory when listed");
}

/* Swapped between the check and the rename to the private name: the rename takes the
 * victim, the check after it says so and nothing is removed. */
static void
test_swap_before_rename(void **state)
{
	(void)state;
	race(&bench_drv_null, "ren", BNULL_RENAME, NULL, false,
	     "was replaced just before its removal");
}

/* A driver whose listing gives no "." (NFSv4, AFP): each directory is stat'ed just before it
 * is listed; swapped at that stat, it is not listed. */
static void
test_swap_without_dots(void **state)
{
	(void)state;
	assert_null(bench_drv_null_serial.list_all);
	race(&bench_drv_null_serial, "serial", BNULL_STAT, "sub", true, "was another directory");
}

/* No swap: the tree goes whole and so does its record, also through a private name. */
static void
test_plain_removal(void **state)
{
	struct bench_target t;
	struct bench_conn *c;
	char err[512] = "", name[192], p[256];

	(void)state;
	assert_int_equal(bench_target_parse("null://plain", &t, err, sizeof(err)), 0);
	assert_int_equal(bench_drv_null.connect(&t, &c, err, sizeof(err)), 0);
	bench_scratch_name(name, sizeof(name), "plain");
	mk(&bench_drv_null, c, name, true);
	assert_int_equal(scratch_made(&bench_drv_null, c, t.url, name), 0);
	snprintf(p, sizeof(p), "%s/d", name);
	mk(&bench_drv_null, c, p, true);
	snprintf(p, sizeof(p), "%s/d/f", name);
	mk(&bench_drv_null, c, p, false);
	mk(&bench_drv_null, c, "other", false);
	assert_int_equal(scratch_remove(&bench_drv_null, c, t.url, name, NULL, err, sizeof(err)),
			 0);
	assert_int_equal(bench_null_entries("plain"), 1); /* "other" alone */
	assert_int_equal(scratch_check(&bench_drv_null, c, t.url, name, err, sizeof(err)), -ENOENT);
	bench_drv_null.disconnect(c);
	bench_target_clear(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swap_top_at_listing),
		cmocka_unit_test(test_swap_sub_at_listing),
		cmocka_unit_test(test_swap_before_rename),
		cmocka_unit_test(test_swap_without_dots),
		cmocka_unit_test(test_plain_removal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
