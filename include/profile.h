/* profile.h - nastune.conf and its presets (libconfig) into a validated model. */
#ifndef NASTUNE_PROFILE_H
#define NASTUNE_PROFILE_H

#include <stddef.h>

#include "diag.h"
#include "model.h"

/* Loads the user's file at path over the preset it names (`profile`, default "default"),
 * looked up as NAME.conf in dirs (first match wins), and validates the merged result.
 * Every problem goes to d as "file:line: message — fix". Returns the model (free with
 * model_free) when d has no errors, else NULL. */
struct model *profile_load(const char *path, const char *const *dirs, size_t ndirs, struct diag *d);

/* Same, with the user's configuration given as text (name is used in messages). */
struct model *profile_load_string(const char *name, const char *text, const char *const *dirs,
				  size_t ndirs, struct diag *d);

/* Overlays the knob values tune chose, from path (/etc/nastune/tuned.conf: only a
 * `knobs = { smb = { ... }; sys = { ... }; };` group), onto m as profile_load returned it. A
 * missing file is no error. A knob pinned in nastune.conf keeps its value, and a tuned value
 * the configuration no longer permits (knob_value_permitted: unsafe without
 * tuning.allow_unsafe, weaker than protocols.smb.signing...) is dropped; both with a warning.
 * Returns 0, or -EINVAL with "file:line: message — fix" errors in d (discard m then). */
int profile_load_tuned(struct model *m, const char *path, struct diag *d);
/* Same, with the file's text given (name is used in messages). */
int profile_load_tuned_string(struct model *m, const char *name, const char *text, struct diag *d);

/* Names of the presets shipped with nastune. */
extern const char *const profile_presets[];

#endif
