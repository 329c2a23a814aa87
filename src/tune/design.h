/* tune/design.h - the tuner's screening design: two-level orthogonal arrays (Hadamard
 * matrices) folded over, one replicate at a time, as mirror pairs of runs to measure. Each
 * factor (a knob) is a column: its incumbent value against one candidate, a knob with several
 * taking one a replicate (in turn, or the one the caller wants). Columns are re-assigned at
 * random every replicate and the order inside each mirror pair is random, so a drift cancels
 * inside a pair and no knob always runs first. Pure: no I/O; the randomness comes from the
 * caller's seed. */
#ifndef NASTUNE_TUNE_DESIGN_H
#define NASTUNE_TUNE_DESIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest array (runs of one half of a replicate), and so the most factors. */
#define TDESIGN_MAX_ORDER 64
/* Levels of one factor: the incumbent (0) and up to 8 candidates. */
#define TDESIGN_MAX_LEVELS 9
/* Unused columns kept free in every array of 8 runs or more, as the fit's null check (one in
 * an array of 4). */
#define TDESIGN_MIN_NULL 2

/* Whether n is an order tdesign_hadamard builds: 4, 8, 12, 16, 20, 24, 32, 64. */
bool tdesign_order_ok(size_t n);

/* The smallest order with room for k factors and its null columns; 0 when k is more than the
 * largest holds. */
size_t tdesign_order(size_t k);

/* Fills h[n * n] (row-major) with a Hadamard matrix of order n (H H' = n I, entries +-1):
 * Sylvester's for powers of two, Plackett-Burman's cyclic generators for 12, 20, 24. Returns
 * 0, or -EINVAL when n is not an order it builds. */
int tdesign_hadamard(size_t n, signed char *h);

/* A combination that cannot be run: factor a at level la together with factor b at level
 * lb. Where a run would hold it, a goes back to its incumbent in that run (the run measures
 * what it says; the fit sees the level actually run). */
struct tdesign_constraint {
	size_t a, b;
	unsigned la, lb;
};

struct tdesign {
	size_t k;	       /* factors */
	const unsigned *ncand; /* candidates per factor, k of them (1..8) */
	const struct tdesign_constraint *cons;
	size_t ncons;
	size_t order; /* the array's order (tdesign_order(k)) */
	uint64_t rng; /* the seed, advanced by every replicate */
	unsigned rep; /* replicates made so far */
	/* The candidate each factor takes in the next replicate, set by the caller (0: the
	 * cycle's); tdesign_replicate clears it. */
	unsigned want[TDESIGN_MAX_ORDER];
	signed char h[TDESIGN_MAX_ORDER * TDESIGN_MAX_ORDER];
};

/* One mirror pair: the levels of its first and its second run (0: the incumbent, c: the
 * factor's candidate c), and each null column's sign (+1 when the first run is the array's
 * row, -1 when it is the mirror, times the column's entry). */
struct tdesign_pair {
	unsigned char first[TDESIGN_MAX_ORDER], second[TDESIGN_MAX_ORDER];
	signed char null[TDESIGN_MAX_ORDER];
	size_t nnull;
	unsigned rep;	  /* the replicate it belongs to */
	bool constrained; /* a constraint sent a factor back to its incumbent */
};

/* Sets d up for k factors with ncand[] candidates each (kept by pointer) and the constraints
 * (kept by pointer; may be NULL), seeded with seed. Returns 0, or -EINVAL (no factor, too
 * many, a candidate count out of range, a constraint naming a missing factor or level). */
int tdesign_init(struct tdesign *d, size_t k, const unsigned *ncand,
		 const struct tdesign_constraint *cons, size_t ncons, uint64_t seed);

/* The next replicate: d->order mirror pairs into out[0..d->order), each factor at d->want's
 * candidate or the cycle's. Returns how many. */
size_t tdesign_replicate(struct tdesign *d, struct tdesign_pair *out);

/* The candidate factor f cycles to in replicate rep (1..ncand[f]). */
unsigned tdesign_candidate(const struct tdesign *d, size_t f, unsigned rep);

#endif
