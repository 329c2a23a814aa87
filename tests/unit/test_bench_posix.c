/* test_bench_posix.c - the posix driver and the disk baseline against a share user's plants:
 * a scratch directory renamed away and replaced by a symlink (step by step, and mid-run
 * through the engine's progress callback), a symlink at the baseline's once predictable name,
 * "..", directories that are not ours, a FIFO in place of a file; Time Machine and free-space
 * refusals of the baseline before anything is created. Runs on temp directories. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "bench/scratch.h"
#include "fsutil.h"
#include "unit.h"
#include "xmalloc.h"

struct fx {
	char top[64]; /* temp dir holding share/ and outside/ */
	char share[128], outside[128];
	struct bench_target t;
	struct bench_conn *c;
};

static const struct bench_driver *const D = &bench_drv_posix;

/* Linked with -Wl,--wrap=mkdirat (Makefile): armed with a directory, the next mkdirat that
 * succeeds has that directory put in place of the one it made, at once, as a share user
 * racing the driver would: between its mkdir and its first look at the result. */
int __real_mkdirat(int dfd, const char *name, mode_t mode);
int __wrap_mkdirat(int dfd, const char *name, mode_t mode);
static const char *swap_in;

int
__wrap_mkdirat(int dfd, const char *name, mode_t mode)
{
	int rc = __real_mkdirat(dfd, name, mode);

	if (rc == 0 && swap_in) {
		assert_int_equal(renameat(dfd, name, dfd, "made.away"), 0);
		assert_int_equal(renameat(AT_FDCWD, swap_in, dfd, name), 0);
		swap_in = NULL;
	}
	return rc;
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256], url[160];

	snprintf(f->top, sizeof(f->top), "/tmp/nastune-posix-XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	snprintf(f->share, sizeof(f->share), "%s/share", f->top);
	snprintf(f->outside, sizeof(f->outside), "%s/outside", f->top);
	if (mkdir(f->share, 0755) < 0 || mkdir(f->outside, 0755) < 0)
		return -1;
	snprintf(url, sizeof(url), "file://%s", f->share);
	if (bench_target_parse(url, &f->t, err, sizeof(err)) < 0 ||
	    D->connect(&f->t, &f->c, err, sizeof(err)) < 0)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	if (f->c)
		D->disconnect(f->c);
	bench_target_clear(&f->t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->top);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void
put(const char *dir, const char *name, const char *text)
{
	char p[256];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_non_null(fp = fopen(p, "w"));
	fputs(text, fp);
	fclose(fp);
}

/* "name=content;" for every entry of dir, sorted by readdir order normalised: a fingerprint
 * of what is there. */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *
listing(const char *dir)
{
	char *v[64], *out = calloc(1, 4096), p[512], buf[64];
	struct dirent *de;
	size_t n = 0, i;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)) && n < 64)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			v[n++] = strdup(de->d_name);
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0; i < n; i++) {
		FILE *fp;
		size_t k = 0;

		snprintf(p, sizeof(p), "%s/%s", dir, v[i]);
		buf[0] = '\0';
		if ((fp = fopen(p, "r"))) {
			k = fread(buf, 1, sizeof(buf) - 1, fp);
			fclose(fp);
		}
		buf[k] = '\0';
		snprintf(out + strlen(out), 4096 - strlen(out), "%s=%s;", v[i], buf);
		free(v[i]);
	}
	return out;
}

static void
assert_listing(const char *dir, const char *want)
{
	char *l = listing(dir);

	assert_string_equal(l, want);
	free(l);
}

static void
write_file(struct bench_conn *c, const char *path, const char *text)
{
	struct bench_file *bf;

	assert_int_equal(D->open(c, path, BENCH_WR | BENCH_CREATE, &bf), 0);
	assert_int_equal(D->pwrite(c, bf, text, strlen(text), 0), (ssize_t)strlen(text));
	assert_int_equal(D->close(c, bf), 0);
}

/* The scratch directory renamed away and a symlink to outside/ planted under its name, between
 * two driver calls: creates, renames, unlinks, listings and the final rmdir all stay inside
 * the share. */
static void
test_swapped_scratch(void **state)
{
	struct fx *f = *state;
	struct bench_file *bf;
	struct bench_stat st;
	char scratch[192], p[512], q[512], moved[256], *before, *after;

	put(f->outside, "a", "precious");
	put(f->outside, "b", "precious");
	before = listing(f->outside);
	bench_scratch_name(scratch, sizeof(scratch), "t");
	assert_int_equal(D->mkdir(f->c, scratch), 0);
	snprintf(p, sizeof(p), "%s/%s", f->share, scratch);
	{
		struct stat sb;

		assert_int_equal(stat(p, &sb), 0);
		assert_int_equal(sb.st_mode & 07777, 0700);
		assert_int_equal(sb.st_uid, geteuid());
	}
	snprintf(q, sizeof(q), "%s/a", scratch);
	write_file(f->c, q, "ours");

	/* The share user's move. */
	snprintf(moved, sizeof(moved), "%s/moved", f->share);
	assert_int_equal(rename(p, moved), 0);
	assert_int_equal(symlink(f->outside, p), 0);

	snprintf(q, sizeof(q), "%s/b", scratch);
	write_file(f->c, q, "ours"); /* lands in moved/, through the kept descriptor */
	snprintf(q, sizeof(q), "%s/sub", scratch);
	assert_int_equal(D->mkdir(f->c, q), 0);
	snprintf(q, sizeof(q), "%s/sub/c", scratch);
	write_file(f->c, q, "ours");
	snprintf(p, sizeof(p), "%s/b", scratch);
	snprintf(q, sizeof(q), "%s/a2", scratch);
	assert_int_equal(D->rename(f->c, p, q), 0);
	assert_int_equal(D->stat(f->c, q, &st), 0);
	assert_int_equal(st.size, 4);
	snprintf(q, sizeof(q), "%s/a", scratch);
	assert_int_equal(D->open(f->c, q, BENCH_RD, &bf), 0);
	assert_int_equal(D->close(f->c, bf), 0);
	assert_int_equal(D->unlink(f->c, q), 0);
	snprintf(q, sizeof(q), "%s/a2", scratch);
	assert_int_equal(D->unlink(f->c, q), 0);
	snprintf(q, sizeof(q), "%s/sub/c", scratch);
	assert_int_equal(D->unlink(f->c, q), 0);
	snprintf(q, sizeof(q), "%s/sub", scratch);
	assert_int_equal(D->rmdir(f->c, q), 0);
	/* The name now is the symlink: not removed in place of our directory. */
	assert_int_equal(D->rmdir(f->c, scratch), -ESTALE);
	assert_non_null(strstr(D->error(f->c), "renamed or replaced"));

	after = listing(f->outside);
	assert_string_equal(before, after);
	free(after);
	after = listing(moved);
	assert_string_equal(after, ""); /* everything went (and went away) there */
	free(after);
	free(before);
}

/* A directory swapped in right after the driver's mkdir is refused before its mode is
 * touched: a group-writable one of ours, and (as root) another user's, keep their modes. */
static void
test_mkdir_swapped(void **state)
{
	struct fx *f = *state;
	struct stat sb;
	char name[192], p[512], theirs[256];
	int i;

	for (i = 0; i < (geteuid() == 0 ? 2 : 1); i++) {
		mode_t mode = i == 0 ? 0775 : 0755;

		snprintf(theirs, sizeof(theirs), "%s/theirs", f->outside);
		assert_int_equal(mkdir(theirs, 0700), 0);
		assert_int_equal(chmod(theirs, mode), 0);
		if (i == 1)
			assert_int_equal(chown(theirs, 65534, 65534), 0);
		bench_scratch_name(name, sizeof(name), "t");
		swap_in = theirs;
		assert_int_equal(D->mkdir(f->c, name), -EPERM);
		assert_null(swap_in); /* the swap happened */
		assert_non_null(strstr(D->error(f->c), "not ours right after it was made"));
		snprintf(p, sizeof(p), "%s/%s", f->share, name);
		assert_int_equal(lstat(p, &sb), 0);
		assert_int_equal(sb.st_mode & 07777, mode);
		assert_int_equal(sb.st_uid, i == 0 ? geteuid() : 65534);
		assert_int_equal(rmdir(p), 0);
		snprintf(p, sizeof(p), "%s/made.away", f->share);
		assert_int_equal(rmdir(p), 0);
	}
}

/* A second connection (as mixed-rw opens) knows no descriptor: its walk follows no symlink
 * and enters no directory that is not ours; ".." and absolute names are refused. */
static void
test_walk(void **state)
{
	struct fx *f = *state;
	struct bench_conn *c2;
	struct bench_file *bf;
	char err[256], p[256], *before, *after;

	put(f->outside, "x", "precious");
	before = listing(f->outside);
	assert_int_equal(D->connect(&f->t, &c2, err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/.nastune-bench-link", f->share);
	assert_int_equal(symlink(f->outside, p), 0);
	assert_true(D->open(c2, ".nastune-bench-link/y", BENCH_WR | BENCH_CREATE, &bf) < 0);
	assert_true(D->unlink(c2, ".nastune-bench-link/x") < 0);
	assert_true(D->mkdir(c2, ".nastune-bench-link/d") < 0);
	assert_true(D->rename(c2, ".nastune-bench-link/x", "z") < 0);
	assert_int_equal(D->open(c2, "../outside/y", BENCH_WR | BENCH_CREATE, &bf), -EINVAL);
	assert_int_equal(D->unlink(c2, "../outside/x"), -EINVAL);
	assert_int_equal(D->mkdir(c2, ".."), -EINVAL);
	/* Not ours: a directory another user owns (root only: chown). */
	if (geteuid() == 0) {
		snprintf(p, sizeof(p), "%s/theirs", f->share);
		assert_int_equal(mkdir(p, 0777), 0);
		assert_int_equal(chown(p, 65534, 65534), 0);
		assert_int_equal(D->open(c2, "theirs/f", BENCH_WR | BENCH_CREATE, &bf), -EPERM);
	}
	/* A FIFO where a file is expected fails at once instead of hanging the open. */
	assert_int_equal(D->mkdir(c2, ".nastune-bench-fifo"), 0);
	snprintf(p, sizeof(p), "%s/.nastune-bench-fifo/f", f->share);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(D->open(c2, ".nastune-bench-fifo/f", BENCH_RD, &bf), -EINVAL);
	assert_int_equal(D->unlink(c2, ".nastune-bench-fifo/../../outside/x"), -EINVAL);
	assert_int_equal(D->unlink(c2, ".nastune-bench-fifo/./f"), -EINVAL);
	after = listing(f->outside);
	assert_string_equal(after, before);
	D->disconnect(c2);
	free(after);
	free(before);
}

/* The engine mid-run: before the second run the scratch directory is swapped for a symlink to
 * outside/. Nothing outside changes; the swap is reported when the scratch is to be removed
 * (what has its name is no longer the directory recorded). */
struct swap {
	struct fx *f;
	int calls;
};

static void
swap_on_progress(const struct bench_progress *p, void *arg)
{
	struct swap *s = arg;
	struct dirent *de;
	char from[512], to[512];
	DIR *d;

	if (++s->calls != 2 || p->run != 2)
		return;
	assert_non_null(d = opendir(s->f->share));
	while ((de = readdir(d)))
		if (strncmp(de->d_name, BENCH_SCRATCH_PREFIX, strlen(BENCH_SCRATCH_PREFIX)) == 0)
			break;
	assert_non_null(de);
	snprintf(from, sizeof(from), "%s/%s", s->f->share, de->d_name);
	snprintf(to, sizeof(to), "%s/moved", s->f->share);
	closedir(d);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(symlink(s->f->outside, from), 0);
}

static void
test_engine_swap(void **state)
{
	struct fx *f = *state;
	struct swap s = { f, 0 };
	struct bench_opts o = { .size = 1u << 20,
				.repeats = 2,
				.small_files = 5,
				.progress = swap_on_progress,
				.progress_arg = &s };
	struct bench_results rs = { 0 };
	char err[512], *before;
	int w;

	put(f->outside, "seq.dat", "precious");
	put(f->outside, "sf", "precious");
	before = listing(f->outside);
	for (w = BENCH_SEQ_WRITE; w <= BENCH_SMALL_FILES;
	     w += BENCH_SMALL_FILES - BENCH_SEQ_WRITE) {
		char cmd[300];

		s.calls = 0;
		assert_true(bench_run(D, &f->t, (enum bench_workload)w, &o, &rs, err, sizeof(err)) <
			    0);
		assert_non_null(strstr(err, "renamed, replaced or a link"));
		assert_listing(f->outside, before);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'/.nastune-bench-* '%s/moved'", f->share,
			 f->share);
		assert_int_equal(system(cmd), 0);
	}
	bench_results_clear(&rs);
	free(before);
}

/* The local driver never keeps a scratch directory (bench_opts.keep_scratch is a tune's, for
 * network shares): each run makes its own and removes it, so nothing is left at the root. */
static void
test_never_keeps(void **state)
{
	struct fx *f = *state;
	struct bench_opts o = { .size = 1u << 20, .repeats = 2 };
	struct bench_results rs = { 0 };
	char keep[192], err[512], *before;

	before = listing(f->share);
	bench_scratch_name(keep, sizeof(keep), "tune");
	o.keep_scratch = keep;
	assert_int_equal(bench_run(D, &f->t, BENCH_SEQ_READ, &o, &rs, err, sizeof(err)), 0);
	assert_listing(f->share, before);
	bench_results_clear(&rs);
	free(before);
}

/* The baseline's name was <prefix><host>-<pid>-disk at the share root, opened O_CREAT|O_TRUNC:
 * a symlink planted there for our pid made root truncate and overwrite its target. */
static void
test_baseline_planted(void **state)
{
	struct fx *f = *state;
	struct bench_baseline b = { 0 };
	struct bench_opts o = { .size = 4u << 20 };
	char host[128], p[512], err[512], *before, *in_share;

	put(f->outside, "victim", "precious");
	before = listing(f->outside);
	gethostname(host, sizeof(host));
	snprintf(p, sizeof(p), "%s/%s%s-%ld-disk", f->share, BENCH_SCRATCH_PREFIX, host,
		 (long)getpid());
	snprintf(err, sizeof(err), "%s/victim", f->outside);
	assert_int_equal(symlink(err, p), 0);
	in_share = listing(f->share);
	assert_int_equal(bench_baseline_disk(f->share, &o, &b, err, sizeof(err)), 0);
	assert_true(b.disk_write > 0 && b.disk_read > 0);
	assert_listing(f->outside, before);
	assert_listing(f->share, in_share); /* its scratch is gone again */
	free(before);
	free(in_share);
}

/* Refusals come before the first entry is created. */
static void
test_baseline_refusals(void **state)
{
	struct fx *f = *state;
	struct bench_baseline b = { 0 };
	struct bench_opts o = { .size = 4u << 20 };
	char p[256], err[512], *before;

	snprintf(p, sizeof(p), "%s/Mac.sparsebundle", f->share);
	assert_int_equal(mkdir(p, 0755), 0);
	before = listing(f->share);
	assert_int_equal(bench_baseline_disk(f->share, &o, &b, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "looks like a Time Machine share"));
	assert_listing(f->share, before);
	o.force = true;
	assert_int_equal(bench_baseline_disk(f->share, &o, &b, err, sizeof(err)), 0);
	assert_listing(f->share, before);
	free(before);
}

/* The space check of a footprint near 2^64: it saturates instead of wrapping to a small need. */
static void
test_preflight_huge(void **state)
{
	struct fx *f = *state;
	char err[512];

	assert_int_equal(bench_preflight(D, f->c, "file:///x", "seq-write", UINT64_MAX / 2 + 1,
					 false, err, sizeof(err)),
			 -ENOSPC);
	assert_non_null(strstr(err, "not enough free space"));
	assert_int_equal(bench_preflight(D, f->c, "file:///x", "seq-write",
					 UINT64_MAX - (32ull << 20), false, err, sizeof(err)),
			 -ENOSPC);
	assert_int_equal(
		bench_preflight(D, f->c, "file:///x", "seq-write", 4096, false, err, sizeof(err)),
		0);
}

/* The records of this process in reg rewritten to pid, as a crash of pid leaves them, and
 * forgotten here. */
static void
crash_records(const char *reg, pid_t pid, const char *url, const char *const *names, size_t n)
{
	size_t i;

	unit_crash_records(reg, pid);
	bench_scratch_registry(NULL); /* forget in memory only */
	for (i = 0; i < n; i++)
		scratch_forget(url, names[i]);
	bench_scratch_registry(reg);
}

/* Stale scratch is what a crashed run of this host recorded, and goes only while it
 * is still that directory. A private directory (0700, another owner) renamed to a
 * stale-looking name by a share user stays, and so does one renamed over a recorded name; a
 * recorded directory of a dead pid goes. */
static void
test_stale(void **state)
{
	struct fx *f = *state;
	char host[128], reg[200], mine[512], swapped[512], look[512], away[600], p[1200];
	const char *names[2];
	pid_t dead = fork();

	if (dead == 0)
		_exit(0);
	assert_true(dead > 0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	snprintf(reg, sizeof(reg), "%s/registry", f->top);
	bench_scratch_registry(reg);
	snprintf(mine, sizeof(mine), "%s%s-%ld-1-0123456789abcdef", BENCH_SCRATCH_PREFIX, host,
		 (long)dead);
	snprintf(swapped, sizeof(swapped), "%s%s-%ld-2-0123456789abcdef", BENCH_SCRATCH_PREFIX,
		 host, (long)dead);
	snprintf(look, sizeof(look), "%s%s-%ld-3-0123456789abcdef", BENCH_SCRATCH_PREFIX, host,
		 (long)dead);
	/* Made and recorded through the driver, as the dead run did. */
	assert_int_equal(D->mkdir(f->c, mine), 0);
	assert_int_equal(D->mkdir(f->c, swapped), 0);
	assert_int_equal(scratch_made(D, f->c, f->t.url, mine), 0);
	assert_int_equal(scratch_made(D, f->c, f->t.url, swapped), 0);
	snprintf(p, sizeof(p), "%s/%s", f->share, mine);
	put(p, "f", "x");
	names[0] = mine;
	names[1] = swapped;
	crash_records(reg, dead, f->t.url, names, 2);
	D->disconnect(f->c); /* run as a new process would: nothing cached */
	f->c = NULL;
	/* A share user's private directories, renamed to scratch names: one over a recorded
	 * name (the recorded directory renamed away), one to a look-alike never recorded. */
	snprintf(p, sizeof(p), "%s/%s", f->share, swapped);
	snprintf(away, sizeof(away), "%s/away", f->share);
	assert_int_equal(rename(p, away), 0);
	{
		const char *priv[] = { swapped, look };
		size_t i;

		for (i = 0; i < 2; i++) {
			snprintf(p, sizeof(p), "%s/%s", f->share, priv[i]);
			assert_int_equal(mkdir(p, 0700), 0);
			put(p, "letter", "dear diary");
			if (geteuid() == 0)
				assert_int_equal(chown(p, 65534, 65534), 0);
		}
	}
	{
		char err[256];

		assert_int_equal(D->connect(&f->t, &f->c, err, sizeof(err)), 0);
	}
	assert_int_equal(bench_clean_stale(D, f->c, f->t.url), 1);
	snprintf(p, sizeof(p), "%s/%s", f->share, mine);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/%s/letter", f->share, swapped);
	assert_int_equal(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/%s/letter", f->share, look);
	assert_int_equal(access(p, F_OK), 0);
	/* The records are done with: a second pass finds nothing to do. */
	assert_int_equal(bench_clean_stale(D, f->c, f->t.url), 0);
	snprintf(p, sizeof(p), "%s/%s/letter", f->share, swapped);
	assert_int_equal(access(p, F_OK), 0);
	bench_scratch_registry(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_swapped_scratch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_swapped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_engine_swap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preflight_huge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_never_keeps, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
