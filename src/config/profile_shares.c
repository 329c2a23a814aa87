/* profile_shares.c - shares[]: each share's keys, names and paths checked; and the consent
 * lists (allow) a share and tuning.allow write. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "profile_keys.h"
#include "units.h"
#include "xmalloc.h"

/* ---- shares ---- */

/* SMB forbids these in share names; '%' is a Samba substitution; ',' and '=' would break the
 * Time Machine TXT record; '[' ']' the smb.conf section header. */
#define SHARE_FORBIDDEN "\\/:*?\"<>|[]+=;,%#"

static void
load_share_name(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		void *base)
{
	static const char *const reserved[] = { "global", "homes", "printers",
						"print$", "ipc$",  NULL };
	struct share *sh = base;
	const char *v = config_setting_get_string(s);
	size_t n = strlen(v), k;

	(void)f;
	sh->loc_name = pf_loc_of(ld, s);
	if (n == 0) {
		ERR(ld, s, "%s is empty — give the share a name, e.g. \"Media\"", what);
	} else if (v[0] == ' ' || v[n - 1] == ' ') {
		ERR(ld, s, "share name '%s' starts or ends with a space — remove it", v);
	} else if (pf_check_text(ld, s, what, v, 80, SHARE_FORBIDDEN)) {
		for (k = 0; reserved[k]; k++)
			if (strcasecmp(v, reserved[k]) == 0)
				break;
		if (reserved[k])
			ERR(ld, s, "share name '%s' is reserved by Samba — choose another name", v);
		else
			sh->name = xstrdup(v);
	}
}

/* White space next to a '/' or at either end: Samba and netatalk trim a path's ends and
 * exports do not, so such a path names two directories. */
static bool
edge_space(const char *v)
{
	size_t i, n = strlen(v);

	for (i = 0; i < n; i++)
		if (isspace((unsigned char)v[i]) &&
		    (i == 0 || i == n - 1 || v[i - 1] == '/' || v[i + 1] == '/'))
			return true;
	return false;
}

static void
load_share_path(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		void *base)
{
	struct share *sh = base;
	const char *v = config_setting_get_string(s);
	size_t n = strlen(v);

	(void)f;
	sh->loc_path = pf_loc_of(ld, s);
	if (edge_space(v))
		ERR(ld, s,
		    "%s '%s' has white space at the start or end of a name — Samba and netatalk "
		    "trim it and NFS does not, so one share would serve two directories: remove it",
		    what, v);
	else if (v[0] != '/')
		ERR(ld, s, "%s '%s' is not absolute — write the full path, e.g. \"/srv/media\"",
		    what, v);
	else if (strcmp(v, "/") == 0)
		ERR(ld, s,
		    "%s is / — sharing the whole file system is refused; share a directory such "
		    "as \"/srv/media\"",
		    what);
	else if (strstr(v, "/../") || strstr(v, "/./") || strstr(v, "//") ||
		 (n >= 3 && strcmp(v + n - 3, "/..") == 0) ||
		 (n >= 2 && strcmp(v + n - 2, "/.") == 0) || v[n - 1] == '/')
		ERR(ld, s,
		    "%s '%s' is not a plain path — remove '..', '.', doubled and trailing slashes",
		    what, v);
	else if (pf_check_text(ld, s, what, v, 1024, "\"\\%"))
		sh->path = xstrdup(v);
}

static void
load_share_protocols(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		     void *base)
{
	struct share *sh = base;
	unsigned set = 0, bit;
	int i, n = config_setting_length(s);

	(void)f;
	for (i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		const char *v = config_setting_type(e) == CONFIG_TYPE_STRING
					? config_setting_get_string(e)
					: "";

		if (!(bit = model_proto_bit(v)))
			ERR(ld, e, "%s[%d] must be \"smb\", \"nfs\" or \"afp\"", what, i);
		else if (set & bit)
			ERR(ld, e, "%s lists \"%s\" twice — remove one", what, v);
		set |= bit;
	}
	if (n == 0)
		ERR(ld, s, "%s is empty — list at least one of \"smb\", \"nfs\", \"afp\"", what);
	sh->protocols = set;
}

/* A size with a unit, at least 1G. */
static void
load_tm_max_size(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		 void *base)
{
	struct share *sh = base;
	uint64_t b;
	int rc =
		pf_is_kind(s, K_STR) ? units_parse_size(config_setting_get_string(s), &b) : -EINVAL;

	(void)f;
	if (rc == -ERANGE)
		ERR(ld, s, "%s is too large — use at most 16383P", what);
	else if (rc < 0)
		ERR(ld, s,
		    "%s must be a size with a unit, e.g. \"2T\" or \"500G\" (units K, M, G, T, P)",
		    what);
	else if (b < (1ULL << 30))
		ERR(ld, s, "%s is below 1G — Time Machine needs more; use e.g. \"500G\"", what);
	else
		sh->tm_max_size = b;
}

/* Written at all, it overrides nfs.export_sync for the share. */
static void
load_nfs_async(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
	       void *base)
{
	struct share *sh = base;

	(void)ld;
	(void)what;
	(void)f;
	sh->nfs_async = config_setting_get_bool(s);
	sh->nfs_async_set = true;
}

/* The knob classes a consent can name (knobs.h: enum knob_safety). */
static const char *const knob_classes[] = { "unsafe", "semantics", NULL };

/* tuning.allow (share NULL) or a share's allow: the knob classes that may apply beyond
 * speed. A list written replaces the preset's; "unsafe" is the server's only. */
void
pf_load_allow(struct ld *ld, config_setting_t *s, const char *what, struct model *m,
	      struct share *sh)
{
	int i, n = config_setting_length(s);

	if (sh)
		sh->allow_semantics = false;
	else
		m->tuning.allow_semantics = false;
	for (i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		char ewhat[128];
		const char *w;

		snprintf(ewhat, sizeof(ewhat), "%s[%d]", what, i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING) {
			ERR(ld, e, "%s must be a quoted class — e.g. allow = [\"semantics\"];",
			    ewhat);
			continue;
		}
		if (!(w = pf_check_word(ld, e, ewhat, config_setting_get_string(e), knob_classes)))
			continue;
		if (strcmp(w, "semantics") == 0 && sh)
			sh->allow_semantics = true;
		else if (strcmp(w, "semantics") == 0)
			m->tuning.allow_semantics = true;
		else if (!sh)
			m->tuning.allow_unsafe = true;
		else
			ERR(ld, e,
			    "%s \"unsafe\" is the whole server's — write tuning.allow = "
			    "[\"unsafe\"]; (or nfs = { async = true; } for this share's NFS "
			    "writes)",
			    ewhat);
	}
}

static void
load_share_allow(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		 void *base)
{
	(void)f;
	pf_load_allow(ld, s, what, ld->m, base);
}

static const struct field tm_fields[] = {
	{ "enabled", F_BOOL, .off = SH(tm_enabled) },
	{ "max_size", F_FUNC, .load = load_tm_max_size, .kind = K_ANY },
	{ NULL },
};

static const struct field share_nfs_fields[] = {
	{ "clients", F_STRLIST, .off = SH(nfs_clients), .check = pf_check_nfs_client,
	  .loc_off = SH(loc_clients) },
	{ "async", F_FUNC, .load = load_nfs_async, .kind = K_BOOL },
	{ NULL },
};

const struct field pf_share_fields[] = {
	{ "name", F_FUNC, .load = load_share_name, .kind = K_STR,
	  .missing = "add name = \"Media\";" },
	{ "path", F_FUNC, .load = load_share_path, .kind = K_STR,
	  .missing = "add path = \"/srv/...\";" },
	{ "protocols", F_FUNC, .load = load_share_protocols, .kind = K_LIST },
	{ "read_only", F_BOOL, .off = SH(read_only) },
	{ "guest", F_BOOL, .off = SH(guest) },
	{ "comment", F_STR, .off = SH(comment), .maxlen = 256, .forbid = "%\"\\" },
	{ "valid_users", F_STRLIST, .off = SH(valid_users), .check = pf_check_username,
	  .loc_off = SH(loc_users) },
	{ "time_machine", F_GROUP, .sub = tm_fields },
	{ "nfs", F_GROUP, .sub = share_nfs_fields },
	{ "allow", F_FUNC, .load = load_share_allow, .kind = K_LIST },
	{ NULL },
};

void
pf_load_shares(struct ld *ld, config_setting_t *l, const char *what, const struct field *f,
	       void *base)
{
	struct model *m = base;
	char where[32];
	int i, n = config_setting_length(l);
	size_t k;

	(void)what;
	for (k = 0; k < m->n_shares; k++) {
		struct share *sh = &m->shares[k];

		free(sh->name);
		free(sh->path);
		free(sh->comment);
		strlist_clear(&sh->valid_users);
		strlist_clear(&sh->nfs_clients);
	}
	free(m->shares);
	m->shares = NULL;
	m->n_shares = 0;
	for (i = 0; i < n; i++) {
		config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
		struct share *sh;

		if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
			ERR(ld, g,
			    "shares[%d] must be a group — write ( { name = \"Media\"; path = "
			    "\"/srv/media\"; } )",
			    i);
			continue;
		}
		m->shares = xreallocarray(m->shares, m->n_shares + 1, sizeof(*m->shares));
		sh = memset(&m->shares[m->n_shares++], 0, sizeof(*m->shares));
		sh->loc = pf_loc_of(ld, g);
		sh->protocols = PROTO_SMB;
		snprintf(where, sizeof(where), "shares[%d]", i);
		pf_load_group(ld, g, where, f->sub, sh);
	}
}
