/* render.h - model -> the files nastune owns, in memory. Pure: no I/O, no clock, no
 * environment; the same model and templates give byte-identical output. */
#ifndef NASTUNE_RENDER_H
#define NASTUNE_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* Template texts by name ("smb.conf", "exports", "ganesha.conf", "afp.conf",
 * "nastune.service", "nfs.service", "sysctl.conf", "tuned.conf"); the loader fills them,
 * render only reads. */
#define RENDER_TEMPLATES_MAX 12
struct render_templates {
	const char *name[RENDER_TEMPLATES_MAX];
	const char *text[RENDER_TEMPLATES_MAX];
	size_t len[RENDER_TEMPLATES_MAX];
	const char *origin[RENDER_TEMPLATES_MAX]; /* where each came from, for messages */
	size_t n;
};

struct rfile {
	char *path; /* absolute, without the root prefix: "/etc/samba/smb.conf" */
	char *data;
	size_t len;
	enum svc svc; /* which service reads it */
};

struct rendered {
	struct rfile *f;
	size_t n;
};

/* The template names render needs, NULL-terminated. */
extern const char *const render_template_names[];

/* Renders every file for the enabled protocols; only is a mask of (1 << SVC_*) to keep, or 0
 * for all. Returns 0, or -EINVAL with a message in err (a template error). The caller frees
 * out with render_clear. */
int render_all(const struct model *m, const struct render_templates *t, unsigned only,
	       struct rendered *out, char *err, size_t errlen);
void render_clear(struct rendered *r);

/* Files nastune owns at any time: fixed paths plus this glob-like prefix for per-export
 * Avahi files. Used by apply to remove files a new configuration no longer renders. */
#define RENDER_NFS_SERVICE_PREFIX "/etc/avahi/services/nastune-nfs-"
/* The kernel settings of the sys.* knobs; rendered only when one is set (SVC_SYS). */
#define RENDER_SYSCTL_PATH "/etc/sysctl.d/90-nastune.conf"
/* The knob values tune chose; rendered only when there are any (SVC_SELF), and read back
 * over nastune.conf by profile_load_tuned. Generations keep it with the configs, so
 * rollback restores the knobs of the configuration it restores. */
#define RENDER_TUNED_PATH "/etc/nastune/tuned.conf"

/* true for a nastune-owned file that a configuration may or may not render (the per-export
 * Avahi files, the sysctl file, tuned.conf): apply removes it when the last generation had
 * it and the new rendering does not. */
bool render_optional_path(const char *path);
/* true for a path render_all can produce (any configuration): what a journal or a
 * generation may name, and so all that recovery writes or removes. */
bool render_known_path(const char *path);

/* The mode a rendered file is installed with: 0755 for CTDB's event script (ctdb runs the
 * executable ones), else 0644. */
unsigned render_file_mode(const char *path);

#endif
