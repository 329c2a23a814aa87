/* profile.c - load nastune.conf over its preset with libconfig, validate, build the model:
 * the files, the top level and the small groups (server, network, protocols, users). It and
 * the profile_*.c files it is split into are the only ones that include libconfig. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cluster.h"
#include "knobs.h"
#include "load.h"
#include "profile.h"
#include "profile_keys.h"
#include "units.h"
#include "xmalloc.h"

const char *const profile_presets[] = {
	"default", "home-media", "timemachine", "video-studio", "small-office", "demo", NULL,
};

/* ---- server ---- */

/* A NetBIOS and Bonjour name: 1 to 15 letters, digits or inner hyphens. */
static bool
netbios_name_ok(struct ld *ld, const config_setting_t *s, const char *what, const char *v,
		const char *example)
{
	size_t n = strlen(v), i;
	bool ok = n >= 1 && n <= 15 && v[0] != '-' && v[n - 1] != '-';

	for (i = 0; i < n && ok; i++)
		ok = isalnum((unsigned char)v[i]) || v[i] == '-';
	if (!ok)
		ERR(ld, s,
		    "%s '%s' cannot be a NetBIOS and Bonjour name — use 1 to 15 letters, digits "
		    "or inner hyphens, e.g. \"%s\"",
		    what, v, example);
	return ok;
}

static bool
check_netbios_name(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	return netbios_name_ok(ld, s, what, v, "atlas");
}

bool
pf_check_cluster_name(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	return netbios_name_ok(ld, s, what, v, "nas");
}

static bool
check_workgroup(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	size_t n = strlen(v);

	if (n >= 1 && n <= 15 &&
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") == n)
		return true;
	ERR(ld, s,
	    "%s '%s' is not valid — use 1 to 15 letters, digits, '-', '_' or '.', e.g. "
	    "\"WORKGROUP\"",
	    what, v);
	return false;
}

static bool
check_apple_model(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	size_t n = strlen(v);

	if (n >= 1 && n <= 64 &&
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789,._-") == n)
		return true;
	ERR(ld, s,
	    "%s '%s' is not an Apple model identifier — use letters, digits, ',', '.', '_' or "
	    "'-', e.g. \"TimeCapsule8,119\" or \"MacSamba\"",
	    what, v);
	return false;
}

static const struct field server_fields[] = {
	{ "name", F_STR, .off = M(server.name), .check = check_netbios_name },
	{ "workgroup", F_STR, .off = M(server.workgroup), .check = check_workgroup },
	/* '%' would be expanded by Samba as a substitution variable. */
	{ "description", F_STR, .off = M(server.description), .maxlen = 200, .forbid = "%\"\\" },
	{ "model", F_STR, .off = M(server.model), .check = check_apple_model },
	{ "interfaces", F_STRLIST, .off = M(server.interfaces), .check = pf_check_ifname },
	{ NULL },
};

/* ---- network ---- */

static void
load_mtu(struct ld *ld, config_setting_t *s, const char *what, const struct field *f, void *base)
{
	struct model *m = base;
	const char *v = pf_is_kind(s, K_STR) ? config_setting_get_string(s) : "";

	(void)f;
	if (pf_is_kind(s, K_INT)) {
		long long n = config_setting_type(s) == CONFIG_TYPE_INT
				      ? config_setting_get_int(s)
				      : config_setting_get_int64(s);
		char num[16];

		if (n < 576 || n > 9216) {
			ERR(ld, s,
			    "%s %lld is out of range — use 576 to 9216, \"auto\" or \"keep\"", what,
			    n);
			return;
		}
		m->network.mtu_mode = MTU_FIXED;
		m->network.mtu = (int)n;
		snprintf(num, sizeof(num), "%d", (int)n);
		pf_set_knob(ld, KNOB_NET_MTU, num, KNOB_CONFIG, s);
	} else if (strcmp(v, "auto") == 0 || strcmp(v, "keep") == 0) {
		m->network.mtu_mode = strcmp(v, "auto") == 0 ? MTU_AUTO : MTU_KEEP;
		pf_set_knob(ld, KNOB_NET_MTU, NULL, KNOB_UNSET, s);
	} else {
		ERR(ld, s,
		    "%s must be a number from 576 to 9216, \"auto\" or \"keep\" — e.g. mtu = "
		    "9000; or mtu = \"auto\";",
		    what);
	}
}

static const struct field network_fields[] = {
	{ "interface", F_STR, .off = M(network.interface), .check = pf_check_ifname },
	{ "mtu", F_FUNC, .load = load_mtu, .kind = K_ANY },
	{ "peers", F_STRLIST, .off = M(network.peers), .check = pf_check_peer },
	{ NULL },
};

/* ---- protocols ---- */

static const char *const min_protocols[] = {
	"SMB2", "SMB2_02", "SMB2_10", "SMB3", "SMB3_00", "SMB3_02", "SMB3_11", "NT1", NULL,
};
static const char *const signings[] = {
	"default", "auto", "desired", "mandatory", "required", "disabled", NULL,
};
static const char *const encryptions[] = {
	"default", "off", "if_required", "desired", "required", NULL,
};
/* Indexed by enum nfs_server. */
static const char *const nfs_servers[] = { "kernel", "ganesha", NULL };
static const char *const cnid_schemes[] = { "dbd", "last", "sqlite", "mysql", NULL };

/* A word of min_protocols; NT1 in force (even from the preset) is warned about. */
static void
load_min_protocol(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		  void *base)
{
	struct model *m = base;
	const char *w;

	if (pf_kind_ok(ld, s, K_STR, what) &&
	    (w = pf_check_word(ld, s, what, config_setting_get_string(s), f->words)))
		pf_set_str(&m->smb.min_protocol, w);
	if (m->smb.min_protocol && strcmp(m->smb.min_protocol, "NT1") == 0)
		diag_warning(ld->d, pf_sfile(ld, s), pf_sline(s),
			     "%s NT1 allows SMB1, which is insecure and slow — prefer \"SMB2\"",
			     what);
}

static void
load_nfs_versions(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		  void *base)
{
	struct model *m = base;
	int i, n = config_setting_length(s);
	bool v3 = false, v4 = false, ok = true;

	(void)f;
	for (i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		int v = config_setting_type(e) == CONFIG_TYPE_INT ? config_setting_get_int(e) : 0;

		if (v == 3 || v == 4) {
			v3 |= v == 3;
			v4 |= v == 4;
		} else {
			ERR(ld, e, "%s[%d] must be 3 or 4 — e.g. versions = [3, 4];", what, i);
			ok = false;
		}
	}
	if (ok && !v3 && !v4)
		ERR(ld, s, "%s is empty — list at least one of 3 and 4, or set enabled = false",
		    what);
	if (ok && (v3 || v4)) {
		m->nfs.v3 = v3;
		m->nfs.v4 = v4;
	}
}

static const struct field smb_fields[] = {
	{ "enabled", F_BOOL, .off = M(smb.enabled) },
	{ "min_protocol", F_FUNC, .load = load_min_protocol, .kind = K_ANY,
	  .words = min_protocols },
	{ "signing", F_WORD, .off = M(smb.signing), .words = signings },
	{ "encryption", F_WORD, .off = M(smb.encryption), .words = encryptions },
	{ "apple", F_BOOL, .off = M(smb.apple) },
	{ NULL },
};

static const struct field nfs_fields[] = {
	{ "enabled", F_BOOL, .off = M(nfs.enabled) },
	{ "server", F_ENUM, .off = M(nfs.server), .words = nfs_servers },
	{ "versions", F_FUNC, .load = load_nfs_versions, .kind = K_LIST },
	{ NULL },
};

static const struct field afp_fields[] = {
	{ "enabled", F_BOOL, .off = M(afp.enabled) },
	{ "cnid_scheme", F_WORD, .off = M(afp.cnid_scheme), .words = cnid_schemes },
	{ NULL },
};

static const struct field protocol_fields[] = {
	{ "smb", F_GROUP, .sub = smb_fields },
	{ "nfs", F_GROUP, .sub = nfs_fields },
	{ "afp", F_GROUP, .sub = afp_fields },
	{ NULL },
};

/* ---- users ---- */

static void
load_user_name(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
	       void *base)
{
	struct model *m = base;
	const char *name = config_setting_get_string(s);
	size_t k;

	(void)what;
	(void)f;
	if (!pf_check_username(ld, s, "users[].name", name))
		return;
	for (k = 0; k < m->n_users; k++)
		if (strcmp(m->users[k].name, name) == 0)
			break;
	if (k < m->n_users) {
		ERR(ld, s, "user '%s' is listed twice (first at line %d) — remove one", name,
		    m->users[k].loc.line);
		return;
	}
	m->users = xreallocarray(m->users, m->n_users + 1, sizeof(*m->users));
	m->users[m->n_users].name = xstrdup(name);
	m->users[m->n_users].loc = pf_loc_of(ld, s);
	m->n_users++;
}

/* users[]: existing system accounts. */
static const struct field user_fields[] = {
	{ "name", F_FUNC, .load = load_user_name, .kind = K_STR,
	  .missing = "add name = \"alice\"; (an existing system account)" },
	{ NULL },
};

static void
load_users(struct ld *ld, config_setting_t *l, const char *what, const struct field *f, void *base)
{
	struct model *m = base;
	char where[32];
	int i, n = config_setting_length(l);
	size_t k;

	(void)what;
	for (k = 0; k < m->n_users; k++)
		free(m->users[k].name);
	free(m->users);
	m->users = NULL;
	m->n_users = 0;
	for (i = 0; i < n; i++) {
		config_setting_t *u = config_setting_get_elem(l, (unsigned)i);

		snprintf(where, sizeof(where), "users[%d]", i);
		if (config_setting_type(u) != CONFIG_TYPE_GROUP)
			ERR(ld, u, "%s must be a group — write ( { name = \"alice\"; } )", where);
		else
			pf_load_group(ld, u, where, f->sub, m);
	}
}

/* ---- the top level ---- */

/* The user's file names its preset (load() reads it); a preset names none. */
static void
load_profile_key(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		 void *base)
{
	(void)what;
	(void)f;
	(void)base;
	if (ld->is_preset)
		ERR(ld, s, "a preset cannot name another profile — remove 'profile'");
}

static const struct field top_fields[] = {
	{ "profile", F_FUNC, .load = load_profile_key, .kind = K_ANY },
	{ "server", F_GROUP, .sub = server_fields },
	{ "network", F_GROUP, .sub = network_fields },
	{ "protocols", F_GROUP, .sub = protocol_fields },
	{ "users", F_FUNC, .load = load_users, .kind = K_LIST, .sub = user_fields },
	{ "shares", F_FUNC, .load = pf_load_shares, .kind = K_LIST, .sub = pf_share_fields },
	{ "tuning", F_GROUP, .sub = pf_tuning_fields },
	{ "services", F_GROUP, .sub = pf_service_fields },
	{ "cluster", F_FUNC, .load = pf_load_cluster, .kind = K_GROUP, .sub = pf_cluster_fields },
	{ NULL },
};

/* One file's settings over whatever the model already holds. */
static void
load_root(struct ld *ld, config_setting_t *root, bool is_preset)
{
	const char *keys[32];

	ld->is_preset = is_preset;
	pf_unknown_keys(ld, root, "the top level", pf_field_keys(top_fields, keys, 32));
	pf_load_fields(ld, root, "config", true, top_fields, ld->m);
}

static bool
read_cfg(struct ld *ld, config_t *cfg, const char *name, const char *text)
{
	bool ok = text ? config_read_string(cfg, text) == CONFIG_TRUE
		       : config_read_file(cfg, name) == CONFIG_TRUE;

	if (!ok) {
		const char *f = config_error_file(cfg);

		if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
			diag_error(ld->d, f ? f : name, 0,
				   "cannot read the file (%s) — check the "
				   "path given with -c",
				   strerror(errno ? errno : ENOENT));
		else
			diag_error(ld->d, f ? f : name, config_error_line(cfg),
				   "%s — fix the "
				   "syntax (settings look like key = value; and end with ';')",
				   config_error_text(cfg));
	}
	return ok;
}

static struct model *
load(const char *name, const char *text, const char *const *dirs, size_t ndirs, struct diag *d)
{
	struct ld ld = { .d = d, .fallback = name };
	config_t user, preset;
	config_setting_t *ps = NULL;
	const char *profile = "default";
	char *ppath = NULL;
	size_t i, before = d->errors;

	ld.m = model_new();
	crosscheck_defaults(ld.m);
	config_init(&user);
	config_init(&preset);
	if (!read_cfg(&ld, &user, name, text))
		goto out;
	if ((ps = pf_member(&ld, config_root_setting(&user), "profile", K_STR, "config")))
		profile = config_setting_get_string(ps);
	for (i = 0; profile_presets[i]; i++)
		if (strcmp(profile_presets[i], profile) == 0)
			break;
	for (i = 0; i < ndirs && !ppath; i++) {
		char *p = xasprintf("%s/%s.conf", dirs[i], profile);

		if (strchr(profile, '/') == NULL && access(p, R_OK) == 0)
			ppath = p;
		else
			free(p);
	}
	if (!ppath) {
		const char *near = load_closest(profile, profile_presets);

		if (ps && near && strcmp(near, profile) != 0)
			ERR(&ld, ps, "unknown profile '%s' — did you mean '%s'?", profile, near);
		else if (ps)
			ERR(&ld, ps,
			    "unknown profile '%s' — use one of default, home-media, "
			    "timemachine, video-studio, small-office, demo (or a NAME.conf in "
			    "/etc/nastune/profiles)",
			    profile);
		else if (ndirs)
			diag_error(d, name, 0,
				   "the default preset is missing from %s — reinstall "
				   "nastune or pass --datadir",
				   dirs[0]);
		if (ps || ndirs)
			goto out;
	} else {
		pf_set_str(&ld.m->profile, profile);
		if (!read_cfg(&ld, &preset, ppath, NULL))
			goto out;
		load_root(&ld, config_root_setting(&preset), true);
	}
	load_root(&ld, config_root_setting(&user), false);
	if (text)
		pf_intern_file(ld.m, name);
	else
		pf_intern_file(ld.m, name);
	crosscheck_model(&ld);
	crosscheck_cluster(&ld);
out:
	free(ppath);
	config_destroy(&user);
	config_destroy(&preset);
	if (d->errors > before) {
		model_free(ld.m);
		return NULL;
	}
	return ld.m;
}

struct model *
profile_load(const char *path, const char *const *dirs, size_t ndirs, struct diag *d)
{
	return load(path, NULL, dirs, ndirs, d);
}

struct model *
profile_load_string(const char *name, const char *text, const char *const *dirs, size_t ndirs,
		    struct diag *d)
{
	return load(name, text, dirs, ndirs, d);
}

static int
load_tuned(struct model *m, const char *name, const char *text, struct diag *d)
{
	struct ld ld = { .m = m, .d = d, .fallback = name };
	config_t cfg;
	size_t before = d->errors;

	if (!text && access(name, F_OK) < 0 && errno == ENOENT)
		return 0;
	config_init(&cfg);
	if (read_cfg(&ld, &cfg, name, text))
		pf_load_group(&ld, config_root_setting(&cfg), "tuned.conf", pf_tuned_fields, m);
	config_destroy(&cfg);
	return d->errors > before ? -EINVAL : 0;
}

int
profile_load_tuned(struct model *m, const char *path, struct diag *d)
{
	return load_tuned(m, path, NULL, d);
}

int
profile_load_tuned_string(struct model *m, const char *name, const char *text, struct diag *d)
{
	return load_tuned(m, name, text, d);
}
