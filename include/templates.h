/* templates.h - reads the template files render needs (the I/O half of rendering). */
#ifndef NASTUNE_TEMPLATES_H
#define NASTUNE_TEMPLATES_H

#include <stddef.h>

#include "render.h"

/* Loads NAME.mustache for every name in render_template_names, each from the first of dirs
 * that has it. Returns 0, or -ENOENT/-errno with a message in err. Free with templates_clear. */
int templates_load(const char *const *dirs, size_t ndirs, struct render_templates *t, char *err,
		   size_t errlen);
void templates_clear(struct render_templates *t);

#endif
