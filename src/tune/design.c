/* tune/design.c - the screening design (design.h): Hadamard matrices, and replicates of
 * a folded two-level array with the columns re-assigned at random, several candidates taken
 * in turn (or as the caller wants), and the combinations that cannot be run constrained. */
#include <errno.h>
#include <string.h>

#include "bench.h"
#include "design.h"

/* Plackett and Burman's (1946) first rows: the cyclic shifts of one, and a row of -1, make
 * an array of order n - 1 columns; a column of +1 in front makes it Hadamard. */
static const char pb12[] = "++-+++---+-";
static const char pb20[] = "++--++++-+-+----++-";
static const char pb24[] = "+++++-+-++--++--+-+----";

/* 4 for a screen of up to three knobs (one null column left, the rest keep two): a replicate
 * of 4 pairs cycles their candidates twice as often as one of 8, so a knob of three or four
 * reaches them all in the pairs an 8-run array spent on two. */
static const size_t orders[] = { 4, 8, 12, 16, 20, 24, 32, 64 };

bool
tdesign_order_ok(size_t n)
{
	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++)
		if (orders[i] == n)
			return true;
	return false;
}

size_t
tdesign_order(size_t k)
{
	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++)
		if (k + (orders[i] == 4 ? 1 : TDESIGN_MIN_NULL) <= orders[i])
			return orders[i];
	return 0;
}

static void
sylvester(size_t n, signed char *h)
{
	h[0] = 1;
	for (size_t m = 1; m < n; m *= 2)
		for (size_t r = 0; r < m; r++)
			for (size_t c = 0; c < m; c++) {
				signed char v = h[r * n + c];

				h[r * n + c + m] = v;
				h[(r + m) * n + c] = v;
				h[(r + m) * n + c + m] = (signed char)-v;
			}
}

static void
cyclic(size_t n, const char *gen, signed char *h)
{
	size_t m = n - 1;

	for (size_t r = 0; r < n; r++)
		h[r * n] = 1;
	for (size_t r = 0; r < m; r++)
		for (size_t c = 0; c < m; c++)
			h[r * n + 1 + c] = gen[(c + m - r) % m] == '+' ? 1 : -1;
	for (size_t c = 1; c < n; c++)
		h[m * n + c] = -1;
}

int
tdesign_hadamard(size_t n, signed char *h)
{
	if (!tdesign_order_ok(n))
		return -EINVAL;
	if ((n & (n - 1)) == 0)
		sylvester(n, h);
	else
		cyclic(n, n == 12 ? pb12 : n == 20 ? pb20 : pb24, h);
	return 0;
}

int
tdesign_init(struct tdesign *d, size_t k, const unsigned *ncand,
	     const struct tdesign_constraint *cons, size_t ncons, uint64_t seed)
{
	memset(d, 0, sizeof(*d));
	if (!k || !(d->order = tdesign_order(k)))
		return -EINVAL;
	for (size_t f = 0; f < k; f++)
		if (ncand[f] < 1 || ncand[f] >= TDESIGN_MAX_LEVELS)
			return -EINVAL;
	for (size_t i = 0; i < ncons; i++)
		if (cons[i].a >= k || cons[i].b >= k || cons[i].a == cons[i].b || cons[i].la < 1 ||
		    cons[i].la > ncand[cons[i].a] || cons[i].lb > ncand[cons[i].b])
			return -EINVAL;
	d->k = k;
	d->ncand = ncand;
	d->cons = cons;
	d->ncons = ncons;
	d->rng = seed ? seed : 1;
	return tdesign_hadamard(d->order, d->h);
}

unsigned
tdesign_candidate(const struct tdesign *d, size_t f, unsigned rep)
{
	return 1 + rep % d->ncand[f];
}

static size_t
pick(struct tdesign *d, size_t n)
{
	return (size_t)(bench_rand(&d->rng) % n);
}

/* Sends back to the incumbent every factor a constraint forbids in run lv; true if any. */
static bool
constrain(const struct tdesign *d, unsigned char *lv)
{
	bool any = false;

	for (bool again = true; again;) {
		again = false;
		for (size_t i = 0; i < d->ncons; i++) {
			const struct tdesign_constraint *c = &d->cons[i];

			if (lv[c->a] == c->la && lv[c->b] == c->lb) {
				lv[c->a] = 0;
				again = any = true;
			}
		}
	}
	return any;
}

size_t
tdesign_replicate(struct tdesign *d, struct tdesign_pair *out)
{
	size_t n = d->order, col[TDESIGN_MAX_ORDER], row[TDESIGN_MAX_ORDER];
	unsigned cand[TDESIGN_MAX_ORDER];

	for (size_t i = 0; i < n; i++)
		col[i] = row[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = pick(d, i + 1), t = col[i];

		col[i] = col[j], col[j] = t;
		j = pick(d, i + 1), t = row[i];
		row[i] = row[j], row[j] = t;
	}
	for (size_t f = 0; f < d->k; f++)
		cand[f] = d->want[f] && d->want[f] <= d->ncand[f] ? d->want[f]
								  : tdesign_candidate(d, f, d->rep);
	memset(d->want, 0, sizeof(d->want));
	for (size_t p = 0; p < n; p++) {
		struct tdesign_pair *x = &out[p];
		const signed char *hr = d->h + row[p] * n;
		int sign = bench_rand(&d->rng) & 1 ? 1 : -1; /* the row first, or its mirror */
		bool c1, c2;

		memset(x, 0, sizeof(*x));
		x->rep = d->rep;
		for (size_t f = 0; f < d->k; f++) {
			bool up = hr[col[f]] * sign > 0;

			x->first[f] = (unsigned char)(up ? cand[f] : 0);
			x->second[f] = (unsigned char)(up ? 0 : cand[f]);
		}
		for (size_t u = d->k; u < n; u++)
			x->null[x->nnull++] = (signed char)(hr[col[u]] * sign);
		c1 = constrain(d, x->first);
		c2 = constrain(d, x->second);
		x->constrained = c1 || c2;
	}
	d->rep++;
	return n;
}
