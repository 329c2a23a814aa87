/* test_tune_design.c - the screen's design (tune/design.c): Hadamard arrays, the folded
 * replicates (mirror pairs, balance, orthogonality), the columns re-assigned every replicate,
 * candidates cycled, and constraints that send a factor back to its incumbent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "tune/design.h"

static void
test_hadamard(void **state)
{
	static const size_t ns[] = { 8, 12, 16, 20, 24, 32, 64 };
	static signed char h[64 * 64];

	(void)state;
	for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
		size_t n = ns[t];

		assert_int_equal(tdesign_hadamard(n, h), 0);
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(h[i * n], 1);
			for (size_t j = 0; j < n; j++) {
				long dot = 0;

				for (size_t c = 0; c < n; c++) {
					assert_true(h[i * n + c] == 1 || h[i * n + c] == -1);
					dot += h[i * n + c] * h[j * n + c];
				}
				assert_int_equal(dot, i == j ? (long)n : 0);
			}
		}
	}
	assert_int_equal(tdesign_hadamard(10, h), -EINVAL);
	assert_int_equal(tdesign_hadamard(28, h), -EINVAL);
}

static void
test_order(void **state)
{
	(void)state;
	assert_int_equal(tdesign_order(1), 4);
	assert_int_equal(tdesign_order(2), 4);
	assert_int_equal(tdesign_order(3), 4);
	assert_int_equal(tdesign_order(4), 8);
	assert_int_equal(tdesign_order(6), 8);
	assert_int_equal(tdesign_order(7), 12);
	assert_int_equal(tdesign_order(10), 12);
	assert_int_equal(tdesign_order(14), 16);
	assert_int_equal(tdesign_order(18), 20);
	assert_int_equal(tdesign_order(62), 64);
	assert_int_equal(tdesign_order(63), 0);
}

/* The pair's regressor of factor f at its candidate c: +1 when the first run holds it, -1
 * when the second does, 0 when neither (or both). */
static int
z(const struct tdesign_pair *p, size_t f, unsigned c)
{
	return (p->first[f] == c) - (p->second[f] == c);
}

static void
test_folded(void **state)
{
	static const size_t ks[] = { 1, 2, 3, 6, 10, 14, 20, 30 };

	(void)state;
	for (size_t t = 0; t < sizeof(ks) / sizeof(ks[0]); t++) {
		size_t k = ks[t], n;
		unsigned nc[64];
		struct tdesign d;
		struct tdesign_pair p[64];
		size_t first_up = 0;

		for (size_t f = 0; f < k; f++)
			nc[f] = 1;
		/* as many pairs for an array of 4 as for one of 8 or more: the bounds below */
		int reps = tdesign_order(k) < 8 ? 16 : 4;

		assert_int_equal(tdesign_init(&d, k, nc, NULL, 0, 42 + t), 0);
		for (int rep = 0; rep < reps; rep++) {
			n = tdesign_replicate(&d, p);
			assert_int_equal(n, tdesign_order(k));
			for (size_t f = 0; f < k; f++) {
				long sum = 0;

				for (size_t i = 0; i < n; i++) {
					/* a mirror: one run at the candidate, the other not */
					assert_int_equal(p[i].first[f] + p[i].second[f], 1);
					sum += p[i].first[f];
				}
				/* balanced in each half of the folded array */
				for (size_t g = f + 1; g < k; g++) {
					long dot = 0;

					for (size_t i = 0; i < n; i++)
						dot += z(&p[i], f, 1) * z(&p[i], g, 1);
					assert_int_equal(dot, 0);
				}
				first_up += (size_t)sum;
			}
			/* the null columns: the rest of the array, orthogonal to every factor */
			assert_int_equal(p[0].nnull, n - k);
			for (size_t u = 0; u < p[0].nnull; u++)
				for (size_t f = 0; f < k; f++) {
					long dot = 0;

					for (size_t i = 0; i < n; i++)
						dot += p[i].null[u] * z(&p[i], f, 1);
					assert_int_equal(dot, 0);
				}
		}
		/* the order inside a pair is random: the candidate runs first about half the time
		 */
		assert_true(first_up > (size_t)reps * k * tdesign_order(k) * 4 / 10);
		assert_true(first_up < (size_t)reps * k * tdesign_order(k) * 6 / 10);
	}
}

/* The product of four factors is the same in every pair of a replicate exactly when their
 * columns multiply to the array's constant column: fixed columns would make that all or
 * nothing over replicates, random ones now and then. */
static void
test_reassigned(void **state)
{
	unsigned nc[6] = { 1, 1, 1, 1, 1, 1 };
	struct tdesign d;
	struct tdesign_pair p[8];
	int aliased = 0;

	(void)state;
	assert_int_equal(tdesign_init(&d, 6, nc, NULL, 0, 7), 0);
	for (int rep = 0; rep < 200; rep++) {
		bool same = true;
		int first = 0;

		assert_int_equal(tdesign_replicate(&d, p), 8);
		for (size_t i = 0; i < 8; i++) {
			int prod = 1;

			for (size_t f = 0; f < 4; f++)
				prod *= p[i].first[f] ? 1 : -1;
			if (i == 0)
				first = prod;
			same &= prod == first;
		}
		aliased += same;
	}
	assert_true(aliased > 5);
	assert_true(aliased < 150);
}

static void
test_cycled(void **state)
{
	unsigned nc[3] = { 3, 1, 2 };
	struct tdesign d;
	struct tdesign_pair p[8];
	size_t seen[3][4] = { { 0 } };

	(void)state;
	assert_int_equal(tdesign_init(&d, 3, nc, NULL, 0, 9), 0);
	for (unsigned rep = 0; rep < 6; rep++) {
		assert_int_equal(tdesign_replicate(&d, p), 4); /* three factors: an array of 4 */
		for (size_t i = 0; i < 4; i++) {
			assert_int_equal(p[i].rep, rep);
			for (size_t f = 0; f < 3; f++) {
				unsigned c = p[i].first[f] ? p[i].first[f] : p[i].second[f];

				assert_int_equal(c, tdesign_candidate(&d, f, rep));
				seen[f][c]++;
			}
		}
	}
	/* every candidate of every factor tried, each in the same number of pairs */
	assert_int_equal(seen[0][1], 8);
	assert_int_equal(seen[0][2], 8);
	assert_int_equal(seen[0][3], 8);
	assert_int_equal(seen[1][1], 24);
	assert_int_equal(seen[2][1], 12);
	assert_int_equal(seen[2][2], 12);
}

/* The caller's candidate for the next replicate (want) is the one run, in every pair of it
 * and on the same side as the array says; the one after goes back to the cycle. */
static void
test_wanted(void **state)
{
	unsigned nc[2] = { 3, 2 };
	struct tdesign d;
	struct tdesign_pair p[4];

	(void)state;
	assert_int_equal(tdesign_init(&d, 2, nc, NULL, 0, 5), 0);
	d.want[0] = 3;
	d.want[1] = 9; /* out of range: the cycle's */
	assert_int_equal(tdesign_replicate(&d, p), 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(p[i].first[0] + p[i].second[0], 3);
		assert_true(p[i].first[0] == 0 || p[i].second[0] == 0);
		assert_int_equal(p[i].first[1] + p[i].second[1], tdesign_candidate(&d, 1, 0));
	}
	assert_int_equal(d.want[0], 0);
	assert_int_equal(tdesign_replicate(&d, p), 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(p[i].first[0] + p[i].second[0], tdesign_candidate(&d, 0, 1));
}

static void
test_constrained(void **state)
{
	/* factor 0's candidate 2 (a socket buffer above the limit) never with factor 1 at its
	 * incumbent (the limit as it is) */
	unsigned nc[4] = { 2, 1, 1, 1 };
	struct tdesign_constraint c = { .a = 0, .la = 2, .b = 1, .lb = 0 };
	struct tdesign d;
	struct tdesign_pair p[8];
	size_t constrained = 0, cand2 = 0;

	(void)state;
	assert_int_equal(tdesign_init(&d, 4, nc, &c, 1, 11), 0);
	for (int rep = 0; rep < 8; rep++) {
		assert_int_equal(tdesign_replicate(&d, p), 8);
		for (size_t i = 0; i < 8; i++) {
			assert_false(p[i].first[0] == 2 && p[i].first[1] == 0);
			assert_false(p[i].second[0] == 2 && p[i].second[1] == 0);
			if (p[i].constrained) {
				constrained++;
				/* what is run is what the pair says: both at the incumbent */
				assert_int_equal(p[i].first[0], 0);
				assert_int_equal(p[i].second[0], 0);
			}
			cand2 += p[i].first[0] == 2 || p[i].second[0] == 2;
			/* the other factors are never touched */
			for (size_t f = 1; f < 4; f++)
				assert_int_equal(p[i].first[f] + p[i].second[f], 1);
		}
	}
	/* candidate 2 runs in half its replicates' pairs: those with factor 1 up with it */
	assert_int_equal(constrained, 16);
	assert_int_equal(cand2, 16);
}

static void
test_init_rejects(void **state)
{
	unsigned nc[64];
	struct tdesign d;
	struct tdesign_constraint bad = { .a = 0, .la = 2, .b = 1, .lb = 0 };

	(void)state;
	for (size_t f = 0; f < 64; f++)
		nc[f] = 1;
	assert_int_equal(tdesign_init(&d, 0, nc, NULL, 0, 1), -EINVAL);
	assert_int_equal(tdesign_init(&d, 63, nc, NULL, 0, 1), -EINVAL);
	assert_int_equal(tdesign_init(&d, 62, nc, NULL, 0, 1), 0);
	assert_int_equal(d.order, 64);
	nc[0] = 0;
	assert_int_equal(tdesign_init(&d, 3, nc, NULL, 0, 1), -EINVAL);
	nc[0] = 9;
	assert_int_equal(tdesign_init(&d, 3, nc, NULL, 0, 1), -EINVAL);
	nc[0] = 1;
	assert_int_equal(tdesign_init(&d, 3, nc, &bad, 1, 1), -EINVAL); /* no level 2 */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hadamard),    cmocka_unit_test(test_order),
		cmocka_unit_test(test_folded),	    cmocka_unit_test(test_reassigned),
		cmocka_unit_test(test_cycled),	    cmocka_unit_test(test_wanted),
		cmocka_unit_test(test_constrained), cmocka_unit_test(test_init_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
