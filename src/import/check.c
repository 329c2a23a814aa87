/* check.c - the round trip of an import: what the files in force serve against what would be
 * served once the rendered files are installed, with everything nastune leaves alone still
 * in force beside them. */
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "import.h"
#include "render.h"

static const struct rfile *
rendered_file(const struct rendered *r, const char *path)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->f[i].path, path) == 0)
			return &r->f[i];
	return NULL;
}

/* What the new smb.conf or afp.conf serves: the rendered text, includes read under root. */
static void
served_ini(const char *root, const struct rfile *f, bool smb, struct imp_served *s)
{
	struct ini ini = { 0 };
	struct diag d;

	diag_init(&d);
	ini_parse(&ini, f->path, f->data, f->len, import_read_include, (void *)root, &d);
	if (smb)
		imp_served_smb(s, &ini);
	else
		imp_served_afp(s, &ini);
	ini_clear(&ini);
	diag_clear(&d);
}

/* The kernel exports after the apply: every exports file but nastune's as it is, and
 * nastune's as rendered. */
static void
served_exports(const struct imp_input *in, const struct rendered *r, struct imp_served *s)
{
	const struct rfile *f = rendered_file(r, "/etc/exports.d/nastune.exports");
	struct exports e = { 0 }, ours = { 0 };
	struct diag d;
	size_t i;

	diag_init(&d);
	for (i = 0; i < in->exports.n; i++) {
		const struct exp_entry *x = &in->exports.v[i];

		if (strcmp(x->file, "/etc/exports.d/nastune.exports") == 0)
			continue;
		e.v = (struct exp_entry *)x;
		e.n = 1;
		imp_served_exports(s, &e);
	}
	if (f) {
		exports_parse(&ours, f->path, f->data, f->len, &d);
		imp_served_exports(s, &ours);
		exports_clear(&ours);
	}
	diag_clear(&d);
}

size_t
import_check(const char *root, const struct imp_input *in, const struct rendered *r,
	     struct buf *out)
{
	struct imp_served old = { 0 }, new = { 0 };
	const struct rfile *f;
	struct diag d;
	size_t n;

	diag_init(&d);
	import_served(in, &old);
	if ((f = rendered_file(r, "/etc/samba/smb.conf")))
		served_ini(root, f, true, &new);
	else if (in->have_smb)
		imp_served_smb(&new, &in->smb);
	if ((f = rendered_file(r, "/etc/netatalk/afp.conf")))
		served_ini(root, f, false, &new);
	else if (in->have_afp)
		imp_served_afp(&new, &in->afp);
	if ((f = rendered_file(r, "/etc/ganesha/ganesha.conf"))) {
		struct ganesha g = { 0 };

		ganesha_parse(&g, f->path, f->data, f->len, import_read_include, (void *)root, &d);
		imp_served_ganesha(&new, &g);
		ganesha_clear(&g);
	} else if (in->have_ganesha) {
		imp_served_ganesha(&new, &in->ganesha);
	}
	served_exports(in, r, &new);
	n = imp_served_compare(&old, &new, 0, out);
	imp_served_clear(&old);
	imp_served_clear(&new);
	diag_clear(&d);
	return n;
}
