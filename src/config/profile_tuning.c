/* profile_tuning.c - tuning { } and tuned.conf's knob groups, each value parsed by the knob
 * table; services { }: how each daemon is started and watched. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_keys.h"
#include "units.h"
#include "xmalloc.h"

/* ---- tuning ---- */

/* The knob groups of tuning.knobs and tuned.conf: smb = { use_sendfile = "yes"; }; ...
 * Values are strings, whole numbers, or true/false for yes/no knobs. A tuned value (src
 * KNOB_TUNED) never replaces one pinned in nastune.conf. */
static void
load_knobs(struct ld *ld, const config_setting_t *g, const char *where, enum knob_src src)
{
	static const char *const groups[] = { "smb", "nfs", "afp", "sys", "net", NULL };
	const char *keys[KNOB_COUNT + 1];
	const struct knob *k;
	char gwhere[64], what[96], canon[256], why[512], num[32];
	int i, j, n, nk;

	pf_unknown_keys(ld, g, where, groups);
	for (i = 0; groups[i]; i++) {
		config_setting_t *p;

		snprintf(gwhere, sizeof(gwhere), "%s.%s", where, groups[i]);
		if (!(p = pf_member(ld, g, groups[i], K_GROUP, where)))
			continue;
		nk = 0;
		for (k = knob_first(); k; k = knob_next(k))
			if (strncmp(k->name, groups[i], strlen(groups[i])) == 0 &&
			    k->name[strlen(groups[i])] == '.')
				keys[nk++] = knob_key(k);
		keys[nk] = NULL;
		pf_unknown_keys(ld, p, gwhere, keys);
		n = config_setting_length(p);
		for (j = 0; j < n; j++) {
			config_setting_t *e = config_setting_get_elem(p, (unsigned)j);
			const char *name = config_setting_name(e), *v = NULL;
			struct knob_setting *cur;
			char full[64];

			snprintf(full, sizeof(full), "%s.%s", groups[i], name ? name : "");
			if (!(k = knob_find(full)))
				continue; /* reported by pf_unknown_keys */
			snprintf(what, sizeof(what), "%s.%s", where, full);
			if (k->id == KNOB_NET_MTU) {
				ERR(ld, e,
				    "%s cannot be set here — the MTU is network.mtu's: write "
				    "network = { mtu = 9000; }; (or \"auto\")",
				    what);
				continue;
			}
			if (k->id == KNOB_AFP_CNID_SCHEME && src == KNOB_CONFIG) {
				ERR(ld, e,
				    "%s cannot be set here — the CNID backend is "
				    "protocols.afp.cnid_scheme's: write protocols = { afp = { "
				    "cnid_scheme = \"dbd\"; }; };",
				    what);
				continue;
			}
			switch (config_setting_type(e)) {
			case CONFIG_TYPE_STRING:
				v = config_setting_get_string(e);
				break;
			case CONFIG_TYPE_INT:
			case CONFIG_TYPE_INT64:
				snprintf(num, sizeof(num), "%lld",
					 (long long)config_setting_get_int64(e));
				if (config_setting_type(e) == CONFIG_TYPE_INT)
					snprintf(num, sizeof(num), "%d", config_setting_get_int(e));
				v = num;
				break;
			case CONFIG_TYPE_BOOL:
				if (k->kind == KNOB_ENUM && (strcmp(k->words[0], "yes") == 0 ||
							     strcmp(k->words[0], "no") == 0))
					v = config_setting_get_bool(e) ? "yes" : "no";
				break;
			}
			if (!v) {
				ERR(ld, e, "%s is %s — write a quoted value, e.g. %s = \"%s\";",
				    what, pf_type_name(config_setting_type(e)), name,
				    k->candidates[0]);
				continue;
			}
			if (knob_parse(k, v, canon, sizeof(canon), why, sizeof(why)) < 0) {
				ERR(ld, e, "%s %s", what, why);
				continue;
			}
			cur = &ld->m->knobs[k->id];
			if (src == KNOB_TUNED && cur->value && cur->src == KNOB_CONFIG) {
				diag_warning(
					ld->d, pf_sfile(ld, e), pf_sline(e),
					"%s is pinned in "
					"nastune.conf (%s:%d) — the tuned value is ignored and "
					"dropped at the next apply",
					full, cur->loc.file, cur->loc.line);
				continue;
			}
			if (src == KNOB_TUNED &&
			    !knob_value_permitted(ld->m, k, canon, why, sizeof(why))) {
				diag_warning(ld->d, pf_sfile(ld, e), pf_sline(e),
					     "%s; the tuned value is "
					     "ignored and dropped at the next apply",
					     why);
				continue;
			}
			pf_set_knob(ld, k->id, canon, src, e);
		}
	}
}

/* Indexed by enum tune_goal. */
static const char *const goals[] = { "throughput", "small-files", "video", "balanced", NULL };

static void
load_budget(struct ld *ld, config_setting_t *s, const char *what, const struct field *f, void *base)
{
	struct model *m = base;
	unsigned secs;

	(void)f;
	if (pf_is_kind(s, K_STR) &&
	    units_parse_duration(config_setting_get_string(s), &secs) == 0 && secs >= 10)
		m->tuning.budget_s = secs;
	else if (pf_is_kind(s, K_INT) && config_setting_get_int(s) >= 10)
		m->tuning.budget_s = (unsigned)config_setting_get_int(s);
	else
		ERR(ld, s,
		    "%s must be a duration of at least 10 seconds — e.g. \"10m\", \"90s\" or "
		    "\"1h\"",
		    what);
}

/* tuning.false_positives: the chance a tune may change what changes nothing, shared by all
 * its changes; a float (or 0/1 as an int: both refused, outside the range). */
static void
load_false_positives(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		     void *base)
{
	struct model *m = base;
	int t = config_setting_type(s);
	double v = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
		   : pf_is_kind(s, K_INT) ? (double)config_setting_get_int64(s)
					  : -1;

	(void)f;
	if (v >= TUNE_ALPHA_MIN && v <= TUNE_ALPHA_MAX)
		m->tuning.false_positives = v;
	else
		ERR(ld, s,
		    "%s must be a probability from %g to %g — e.g. 0.05 (the default: one tune "
		    "in twenty may apply a change that does nothing) or 0.01",
		    what, TUNE_ALPHA_MIN, TUNE_ALPHA_MAX);
}

static void
load_tuning_allow(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		  void *base)
{
	(void)f;
	pf_load_allow(ld, s, what, base, NULL);
}

/* tuning.knobs, pinned by the user; tuned.conf's knobs, chosen by tune. */
static void
load_knob_groups(struct ld *ld, config_setting_t *s, const char *what, const struct field *f,
		 void *base)
{
	(void)base;
	if (f->arg == KNOB_TUNED)
		load_knobs(ld, s, "knobs", KNOB_TUNED);
	else
		load_knobs(ld, s, what, KNOB_CONFIG);
}

const struct field pf_tuning_fields[] = {
	{ "goal", F_ENUM, .off = M(tuning.goal), .words = goals },
	{ "allow_unsafe", F_BOOL, .off = M(tuning.allow_unsafe) },
	{ "allow", F_FUNC, .load = load_tuning_allow, .kind = K_LIST },
	{ "budget", F_FUNC, .load = load_budget, .kind = K_ANY },
	{ "false_positives", F_FUNC, .load = load_false_positives, .kind = K_ANY },
	{ "knobs", F_FUNC, .load = load_knob_groups, .kind = K_GROUP, .arg = KNOB_CONFIG },
	{ NULL },
};

/* tuned.conf: only the knobs tune chose. */
const struct field pf_tuned_fields[] = {
	{ "knobs", F_FUNC, .load = load_knob_groups, .kind = K_GROUP, .arg = KNOB_TUNED },
	{ NULL },
};

/* ---- services ---- */

static const char *const backends[] = { "auto", "systemd", "pidfile", "none", NULL };

/* services.<svc>: what the table reads for one daemon. */
struct svc_settings {
	enum svc svc;
	char *backend, *pidfile, *start;
};

static bool
check_pidfile(struct ld *ld, const config_setting_t *s, const char *what, const char *v)
{
	if (v[0] == '/')
		return true;
	ERR(ld, s, "%s must be an absolute path, e.g. \"/run/samba/smbd.pid\"", what);
	return false;
}

static void
load_start(struct ld *ld, config_setting_t *s, const char *what, const struct field *f, void *base)
{
	static const char *const daemons[] = {
		[SVC_SMB] = "smbd",
		[SVC_NFS] = "ganesha.nfsd",
		[SVC_AFP] = "afpd",
		[SVC_MDNS] = "avahi-daemon",
	};
	struct svc_settings *v = base;
	const char *text = config_setting_get_string(s);

	(void)f;
	if (!text[strspn(text, " \t")])
		ERR(ld, s,
		    "%s is empty — write the command line that starts %s (run with /bin/sh -c), "
		    "or remove it",
		    what, daemons[v->svc]);
	else if (pf_check_text(ld, s, what, text, 1024, NULL))
		pf_set_str(&v->start, text);
}

static const struct field svc_fields[] = {
	{ "backend", F_WORD, .off = offsetof(struct svc_settings, backend), .words = backends },
	{ "pidfile", F_STR, .off = offsetof(struct svc_settings, pidfile), .check = check_pidfile,
	  .maxlen = 1024 },
	{ "start", F_FUNC, .load = load_start, .kind = K_STR },
	{ NULL },
};

static void
load_service(struct ld *ld, config_setting_t *p, const char *what, const struct field *f,
	     void *base)
{
	struct model *m = base;
	struct svc_settings v = {
		.svc = f->arg,
		.backend = m->services.svc_backend[f->arg],
		.pidfile = m->services.svc_pidfile[f->arg],
		.start = m->services.svc_start[f->arg],
	};

	pf_load_group(ld, p, what, f->sub, &v);
	m->services.svc_backend[v.svc] = v.backend;
	m->services.svc_pidfile[v.svc] = v.pidfile;
	m->services.svc_start[v.svc] = v.start;
}

const struct field pf_service_fields[] = {
	{ "backend", F_WORD, .off = M(services.backend), .words = backends },
	{ "smb", F_FUNC, .load = load_service, .kind = K_GROUP, .sub = svc_fields, .arg = SVC_SMB },
	{ "nfs", F_FUNC, .load = load_service, .kind = K_GROUP, .sub = svc_fields, .arg = SVC_NFS },
	{ "afp", F_FUNC, .load = load_service, .kind = K_GROUP, .sub = svc_fields, .arg = SVC_AFP },
	{ "mdns", F_FUNC, .load = load_service, .kind = K_GROUP, .sub = svc_fields,
	  .arg = SVC_MDNS },
	{ NULL },
};
