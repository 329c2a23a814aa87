/* status.c - the facts behind `nastune status` (status.h). */
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "hwinfo.h"
#include "knobs.h"
#include "mdns.h"
#include "runrec.h"
#include "service.h"
#include "status.h"

/* The newest generation and the ids kept, from the state database if there is one. */
static void
collect_generations(const char *root, struct status *st)
{
	struct state *db = NULL;
	char err[512];

	if (state_open_existing(root, &db, err, sizeof(err)) == 0 &&
	    state_last_generation(db, &st->gen) == 0) {
		st->has_generation = true;
		state_generation_ids(db, &st->gen_ids, &st->ngen_ids);
	}
	state_close(db);
}

/* The daemons; the sysctl file and tuned.conf show up as knobs (nastune knobs). */
static void
collect_services(const struct model *m, const char *root, struct status *st)
{
	int s;

	for (s = 0; s < SVC_DAEMONS; s++) {
		const struct service_backend *be = service_backend(m, root, s);
		const struct service_desc *d = service_desc(m, s);
		struct status_service *o = &st->services[s];

		o->svc = s;
		o->daemon = d->daemon;
		o->backend = be ? be->name : "?";
		o->has_port = d->port != 0;
		o->listening = d->port && service_port_listening(d->port);
	}
}

int
status_collect(const struct model *m, const char *root, struct status *st)
{
	struct hwinfo hw = { 0 };
	const struct knob *k;

	memset(st, 0, sizeof(*st));
	/* First: while it lasts the files may be of two generations. */
	st->interrupted = apply_interrupted(root, &st->pending) == 1;
	st->hw_unread = runrec_read_hw(&hw) < 0;
	hwinfo_hash(&hw, st->hw_hash);
	st->hw_text = hwinfo_text(&hw);
	hwinfo_clear(&hw);
	collect_generations(root, st);
	if (st->has_generation)
		st->hw_changes = hwinfo_diff(st->gen.hw_text, st->hw_text);
	collect_services(m, root, st);
	for (k = knob_first(); k; k = knob_next(k)) {
		st->knobs_pinned += knob_source(m, k->id) == KNOB_CONFIG;
		st->knobs_tuned += knob_source(m, k->id) == KNOB_TUNED;
	}
	/* What clients see: the records on the network, as this host's avahi-daemon knows them. */
	st->mdns_rc = mdns_browse(NULL, 4, true, 1500, &st->seen, &st->nseen, st->mdns_err,
				  sizeof(st->mdns_err));
	return 0;
}

bool
status_retune_due(const struct status *st)
{
	return st->hw_changes && *st->hw_changes;
}

void
status_release(struct status *st)
{
	if (!st)
		return;
	apply_interruption_clear(&st->pending);
	generation_clear(&st->gen);
	free(st->gen_ids);
	free(st->hw_text);
	free(st->hw_changes);
	mdns_services_free(st->seen, st->nseen);
	memset(st, 0, sizeof(*st));
}
