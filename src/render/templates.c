/* templates.c - template files from the site, data and source directories. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "templates.h"
#include "xmalloc.h"

#define TEMPLATE_MAX (1024 * 1024)

int
templates_load(const char *const *dirs, size_t ndirs, struct render_templates *t, char *err,
	       size_t errlen)
{
	size_t i, d;

	memset(t, 0, sizeof(*t));
	for (i = 0; render_template_names[i]; i++) {
		int rc = -ENOENT;

		for (d = 0; d < ndirs; d++) {
			char *p = xasprintf("%s/%s.mustache", dirs[d], render_template_names[i]);
			char *text;
			size_t len;

			rc = fs_read_file(p, TEMPLATE_MAX, &text, &len);
			if (rc == 0) {
				t->name[t->n] = render_template_names[i];
				t->text[t->n] = text;
				t->len[t->n] = len;
				t->origin[t->n] = p;
				t->n++;
				break;
			}
			if (rc != -ENOENT) {
				snprintf(err, errlen, "%s: %s", p, strerror(-rc));
				free(p);
				templates_clear(t);
				return rc;
			}
			free(p);
		}
		if (rc == -ENOENT) {
			snprintf(err, errlen,
				 "template %s.mustache not found in %s%s — reinstall "
				 "nastune or pass --datadir",
				 render_template_names[i],
				 ndirs ? dirs[0] : "any template directory",
				 ndirs > 1 ? " etc." : "");
			templates_clear(t);
			return -ENOENT;
		}
	}
	return 0;
}

void
templates_clear(struct render_templates *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free((char *)t->text[i]);
		free((char *)t->origin[i]);
	}
	memset(t, 0, sizeof(*t));
}
