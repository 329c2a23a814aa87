/* test_benchrun.c - the benchmark's plan, run loop and record (benchrun.c) driven with the
 * null driver: targets from URLs and from a configuration (Time Machine and read-only shares
 * skipped, file:// shown as the configuration writes it but measured under the root), a
 * failing target does not stop the others, a stop request, baselines and bottlenecks, and
 * runs stored in a state database under a temporary root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchrun.h"
#include "fsutil.h"
#include "model.h"
#include "state.h"
#include "xmalloc.h"

static void
quick(struct benchrun *b)
{
	benchrun_init(b);
	b->o = (struct bench_opts){ .size = 1u << 20,
				    .repeats = 2,
				    .warmup = 0,
				    .cache = BENCH_CACHE_HOT,
				    .small_files = 5 };
	b->wl[BENCH_SEQ_WRITE] = true;
	b->no_baseline = true;
}

static void
done(void *arg)
{
	(*(int *)arg)++;
}

static void
test_run_continues_after_a_failure(void **state)
{
	struct benchrun b;
	char err[512];
	int ndone = 0;
	size_t i;

	(void)state;
	quick(&b);
	b.workload_done = done;
	b.workload_arg = &ndone;
	assert_int_equal(
		benchrun_add_url(&b, NULL, "", "null://bad?fail=open:1", NULL, err, sizeof(err)),
		0);
	assert_int_equal(benchrun_add_url(&b, NULL, "", "null://good", NULL, err, sizeof(err)), 0);
	b.wl[BENCH_SEQ_READ] = true;
	assert_int_equal(benchrun_total_runs(&b), 2 * 2 * 2);
	assert_int_equal(benchrun_run(&b), -EIO);
	assert_int_equal(ndone, 4);
	/* bad: each workload fails at its first open (a new connection each); good: both ran. */
	assert_int_equal(json_array_size(b.errors), 2);
	for (i = 0; i < 2; i++)
		assert_string_equal(
			json_string_value(json_object_get(json_array_get(b.errors, i), "target")),
			"null://bad?fail=open:1");
	assert_true(b.all.n >= 2);
	for (i = 0; i < b.all.n; i++) {
		assert_string_equal(b.all.v[i].target, "null://good");
		assert_int_equal(b.all.v[i].nruns, 2);
	}
	benchrun_clear(&b);
}

static void
test_stop_request(void **state)
{
	static volatile sig_atomic_t stop = SIGINT;
	struct benchrun b;
	char err[512];

	(void)state;
	quick(&b);
	b.o.stop = &stop;
	assert_int_equal(benchrun_add_url(&b, NULL, "", "null://x", NULL, err, sizeof(err)), 0);
	assert_int_equal(benchrun_run(&b), -EINTR);
	assert_int_equal(b.all.n, 0);
	benchrun_clear(&b);
}

static void
test_protocol_filter(void **state)
{
	struct benchrun b;
	char err[512];

	(void)state;
	quick(&b);
	assert_int_equal(benchrun_add_url(&b, NULL, "", "null://x", "posix", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not in --protocol posix"));
	assert_int_equal(benchrun_add_url(&b, NULL, "", "ftp://x/y", NULL, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(b.ntg, 0);
	benchrun_clear(&b);
}

/* A configuration with a writable share, a Time Machine share and a read-only one. */
static void
model_of(struct model *m, struct share sh[3])
{
	memset(m, 0, sizeof(*m));
	memset(sh, 0, 3 * sizeof(*sh));
	sh[0] = (struct share){ .name = "Data", .path = "/srv/data", .protocols = PROTO_SMB };
	sh[1] = (struct share){
		.name = "TM", .path = "/srv/tm", .protocols = PROTO_SMB, .tm_enabled = true
	};
	sh[2] = (struct share){
		.name = "RO", .path = "/srv/ro", .protocols = PROTO_SMB, .read_only = true
	};
	m->shares = sh;
	m->n_shares = 3;
}

static void
test_targets_from_the_configuration(void **state)
{
	char root[] = "/tmp/test_benchrun.XXXXXX", *p, err[512];
	struct benchrun b;
	struct model m;
	struct share sh[3];

	(void)state;
	assert_non_null(mkdtemp(root));
	model_of(&m, sh);
	quick(&b);
	benchrun_derive_targets(&b, &m, root, "posix");
	assert_int_equal(b.ntg, 1);
	assert_string_equal(b.tg[0].t.url, "file:///srv/data"); /* as configured */
	p = xasprintf("%s/srv/data", root);
	assert_string_equal(b.tg[0].t.share, p); /* measured under the root */
	assert_string_equal(b.tg[0].local, p);
	free(p);
	/* The Time Machine share by URL: refused unless forced. */
	p = xasprintf("file://%s/srv/tm/sub", root);
	assert_int_equal(benchrun_add_url(&b, &m, root, p, NULL, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "Time Machine share TM"));
	b.o.force = true;
	assert_int_equal(benchrun_add_url(&b, &m, root, p, NULL, err, sizeof(err)), 0);
	assert_int_equal(b.ntg, 2);
	free(p);
	benchrun_clear(&b);
	rmdir(root);
}

static void
test_baselines_and_store(void **state)
{
	char root[] = "/tmp/test_benchrun.XXXXXX", err[512], *dir, *cmd;
	struct state_bench_run r = { 0 };
	struct benchrun b;
	struct state *st;
	json_t *doc = NULL, *stored;
	long id;

	(void)state;
	assert_non_null(mkdtemp(root));
	dir = xasprintf("%s/data", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	cmd = xasprintf("file://%s", dir);
	quick(&b);
	b.no_baseline = false;
	assert_int_equal(benchrun_add_url(&b, NULL, root, cmd, NULL, err, sizeof(err)), 0);
	assert_int_equal(benchrun_run(&b), 0);
	assert_true(json_array_size(b.baselines) >= 1); /* the raw disk behind the path */
	assert_true(b.all.n >= 1);
	assert_non_null(b.all.v[0].bottleneck); /* attributed against it */

	assert_int_equal(benchrun_store(&b, root, &doc, &id, err, sizeof(err)), 0);
	assert_int_equal(id, 1);
	assert_int_equal(json_integer_value(json_object_get(doc, "run")), 1);
	assert_true(json_is_null(json_object_get(doc, "generation")));
	assert_int_equal(strlen(json_string_value(json_object_get(doc, "hw_hash"))), 64);
	assert_true(json_array_size(json_object_get(doc, "baselines")) >= 1);
	assert_int_equal(json_array_size(json_object_get(doc, "results")), b.all.n);
	json_decref(doc);
	/* A second run of the same plan is the next id; the stored document names itself. */
	assert_int_equal(benchrun_store(&b, root, &doc, &id, err, sizeof(err)), 0);
	assert_int_equal(id, 2);
	json_decref(doc);
	assert_int_equal(state_open(root, &st, err, sizeof(err)), 0);
	assert_int_equal(state_get_bench_run(st, 1, &r), 0);
	stored = json_loads(r.json, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(stored, "run")), 1);
	json_decref(stored);
	state_bench_run_clear(&r);
	state_close(st);
	benchrun_clear(&b);
	free(cmd);
	cmd = xasprintf("rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_continues_after_a_failure),
		cmocka_unit_test(test_stop_request),
		cmocka_unit_test(test_protocol_filter),
		cmocka_unit_test(test_targets_from_the_configuration),
		cmocka_unit_test(test_baselines_and_store),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
