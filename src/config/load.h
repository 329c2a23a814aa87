/* load.h - inside src/config/: the state one load of nastune.conf carries (the model being
 * filled, the diagnostics) and the calls profile.c and its profile_*.c, which alone speak
 * libconfig, share with the whole-model checks (crosscheck.c). */
#ifndef NASTUNE_CONFIG_LOAD_H
#define NASTUNE_CONFIG_LOAD_H

#include <stdbool.h>

#include "diag.h"
#include "model.h"

/* An error at the place l a value was read from. */
#define ERRL(ld, l, ...) diag_error((ld)->d, (l).file, (l).line, __VA_ARGS__)

struct ld {
	struct model *m;
	struct diag *d;
	const char *fallback; /* file name when libconfig has none (string input) */
	bool is_preset;	      /* reading the preset, not the user's file */
};

/* The closest name in list to s, or NULL when nothing is close. */
const char *load_closest(const char *s, const char *const *list);

/* The whole-model checks, once every key is read; errors go to ld->d. */
void crosscheck_model(struct ld *ld);

/* What a cluster needs that one box does not; the checks that look at this host's
 * interfaces are cluster_check_host's (cluster.c). */
void crosscheck_cluster(struct ld *ld);

/* The defaults the model starts from, before any key is read. */
void crosscheck_defaults(struct model *m);

#endif
