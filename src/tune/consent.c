/* tune/consent.c - what a tune measures but may not apply: values that change what clients
 * see (class semantics) without the configuration's consent. The trials measure them on the
 * shares the tune measures; a gain is reported with what it would change, and withheld. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "xmalloc.h"

bool
ts_needs_consent(const struct model *m, const struct knob *k, const char *v)
{
	return v && knob_value_visible(k, v) && !knob_consent_given(m, k);
}

void
ts_withhold(struct tuner_decision *d, const char *v, const char *measured)
{
	const struct tune_effect *e = &d->e;
	char fx[96];

	if (isfinite(e->lo) && isfinite(e->hi))
		snprintf(fx, sizeof(fx), "%+.1f%% [%+.1f%%, %+.1f%%]", 100 * e->est, 100 * e->lo,
			 100 * e->hi);
	else
		snprintf(fx, sizeof(fx), "%+.1f%%", 100 * e->est);
	d->applied = false;
	free(d->after);
	d->after = d->before ? xstrdup(d->before) : NULL;
	d->withheld = knob_client_change(d->k, v);
	snprintf(d->withheld_value, sizeof(d->withheld_value), "%s", v);
	snprintf(d->reason, sizeof(d->reason),
		 "better, not applied: %.40s measured %.40s (%.60s), but it changes what clients "
		 "see: %.180s — allow \"semantics\" (tuning.allow, or the share's allow) to "
		 "apply it",
		 v, fx, measured, d->withheld ? d->withheld : "?");
}

void
ts_withhold_left(struct tstate *s)
{
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		struct tuner_decision *d = &s->r->dec[i];
		const char *v = knob_value(s->m, (enum knob_id)i);
		char *was;

		if (!d->k || !ts_needs_consent(s->m, d->k, v) ||
		    (d->before && strcmp(d->before, v) == 0))
			continue;
		/* v is freed by the ts_setk below */
		was = xstrdup(v);
		ts_setk(s, (enum knob_id)i, d->before, KNOB_TUNED);
		if (!d->before)
			ts_setk(s, (enum knob_id)i, NULL, KNOB_UNSET);
		ts_withhold(d, was, "in the search");
		ts_say(s, "tune: %s: %s", d->k->name, d->reason);
		ts_decided(s, d);
		free(was);
	}
}
