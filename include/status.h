/* status.h - what `nastune status` reports, gathered into one typed struct: an interrupted
 * apply (first), the generation in force and those kept, each daemon's backend and whether it
 * listens, where the knobs come from, the hardware fingerprint and its changes since the last
 * apply, and the Bonjour records clients see. The command only prints it (text or --json). */
#ifndef NASTUNE_STATUS_H
#define NASTUNE_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include "apply.h"
#include "model.h"
#include "state.h"

struct mdns_service;

struct status_service {
	enum svc svc;
	const char *daemon;  /* service_desc's, static */
	const char *backend; /* the backend's name; "?" when the configured one is unknown */
	bool has_port;	     /* the daemon listens on a TCP port once running */
	bool listening;	     /* something listens on that port now */
};

struct status {
	bool interrupted;		   /* an apply was interrupted: pending says what it left */
	struct apply_interruption pending; /* apply_interrupted's */

	bool has_generation;   /* a generation was applied: gen holds the newest */
	struct generation gen; /* the newest, when has_generation */
	long *gen_ids;	       /* the generations kept, oldest first */
	size_t ngen_ids;

	struct status_service services[SVC_DAEMONS];

	unsigned knobs_pinned; /* knobs set in nastune.conf */
	unsigned knobs_tuned;  /* knobs from tuned.conf */

	bool hw_unread;	  /* the fingerprint could not be read (hw_text is what was) */
	char hw_hash[65]; /* hwinfo_hash of this host's hardware */
	char *hw_text;	  /* hwinfo_text; never NULL after status_collect */
	char *hw_changes; /* hwinfo_diff from the newest generation's; NULL when none */

	int mdns_rc; /* mdns_browse's: 0, or -errno with mdns_err */
	char mdns_err[512];
	struct mdns_service *seen; /* the records on the network, IPv4 */
	size_t nseen;
};

/* Fills *st for model m under root (the state database is only read when it exists: status
 * never creates it). Always returns 0: what cannot be read is marked in *st. Release with
 * status_release. */
int status_collect(const struct model *m, const char *root, struct status *st);
/* Frees what *st holds; NULL or a zeroed struct is fine. */
void status_release(struct status *st);
/* True when the hardware changed since the last apply (a re-tune is due). */
bool status_retune_due(const struct status *st);

#endif
