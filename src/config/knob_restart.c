/* knob_restart.c - whether a change of a generated file needs its daemon restarted: the
 * values of the parameters that only a restart takes, before and after. Pure. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "knobs.h"
#include "units.h"

/* More distinct values than this for one param: assume a change. */
#define PARAM_VALUES_MAX 32

struct span {
	const char *p;
	size_t n;
};

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The distinct values of text's lines setting param ("key = value;" or "key = value"), in
 * order of first appearance, into v. Returns how many, or -1 for more than max. */
static int
param_values(const char *text, size_t len, const char *param, struct span *v, int max)
{
	const char *p = text, *end = text ? text + len : NULL;
	size_t plen = strlen(param);
	int n = 0;

	while (p && p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *k = p, *ke, *vs, *ve;
		int i;

		if (!eol)
			eol = end;
		p = eol < end ? eol + 1 : end;
		while (k < eol && is_blank(*k))
			k++;
		if (k == eol || *k == '#' || *k == ';' || !(ke = memchr(k, '=', (size_t)(eol - k))))
			continue;
		vs = ke + 1;
		while (ke > k && is_blank(ke[-1]))
			ke--;
		if ((size_t)(ke - k) != plen || strncasecmp(k, param, plen) != 0)
			continue;
		ve = eol;
		while (vs < ve && is_blank(*vs))
			vs++;
		while (ve > vs && is_blank(ve[-1]))
			ve--;
		if (ve > vs && ve[-1] == ';')
			for (ve--; ve > vs && is_blank(ve[-1]); ve--)
				;
		for (i = 0; i < n; i++)
			if (v[i].n == (size_t)(ve - vs) && memcmp(v[i].p, vs, v[i].n) == 0)
				break;
		if (i < n)
			continue;
		if (n == max)
			return -1;
		v[n].p = vs;
		v[n++].n = (size_t)(ve - vs);
	}
	return n;
}

int
knob_restart_changes(const char *path, const char *cur, size_t curlen, const char *next,
		     size_t nextlen, char *changed, size_t changedlen)
{
	struct span a[PARAM_VALUES_MAX], b[PARAM_VALUES_MAX];
	const struct knob *k;
	size_t used = 0;
	int n = 0;

	if (changedlen)
		changed[0] = '\0';
	for (k = knob_first(); k; k = knob_next(k)) {
		const char *file = knob_place_file(k->place);
		bool same;
		int na, nb, i;

		if (k->effect != KNOB_RESTART || !file || strcmp(file, path) != 0)
			continue;
		na = param_values(cur, curlen, k->param, a, PARAM_VALUES_MAX);
		nb = param_values(next, nextlen, k->param, b, PARAM_VALUES_MAX);
		same = na >= 0 && na == nb;
		for (i = 0; same && i < na; i++)
			same = a[i].n == b[i].n && memcmp(a[i].p, b[i].p, a[i].n) == 0;
		if (same)
			continue;
		n++;
		if (used < changedlen) {
			int w = snprintf(changed + used, changedlen - used, "%s%s",
					 used ? ", " : "", k->param);

			used = w < 0 ? changedlen : used + (size_t)w;
		}
	}
	return n;
}
