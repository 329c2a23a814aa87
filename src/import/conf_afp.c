/* conf_afp.c - afp.conf into the conversion: its volumes merged with the other shares; it
 * has no site include, so what nastune.conf cannot say is only named. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "units.h"
#include "xmalloc.h"

static void
afp_note(struct cv *cv, const struct ini_entry *e, const char *section)
{
	NOTE(cv, e->file, e->line, "not expressible: [%s] %s = %s (afp.conf has no site include)",
	     section, e->key, e->value);
}

static void
afp_global(struct cv *cv, const struct ini_section *g)
{
	static const char *const cnids[] = { "dbd", "last", "sqlite", "mysql", NULL };
	const struct knob *kb;
	size_t i;

	for (i = 0; g && i < g->n; i++) {
		const struct ini_entry *e = &g->v[i];
		char norm[128];

		for (kb = knob_first(); kb; kb = knob_next(kb)) {
			ini_norm(kb->param, norm, sizeof(norm));
			if (kb->place == KNOB_AT_AFP_GLOBAL && strcmp(norm, e->norm) == 0)
				break;
		}
		if (kb) {
			if (!cv_knob_set(cv, kb, e->value, e->file, e->line))
				afp_note(cv, e, g->name);
		} else if (strcmp(e->norm, "servername") == 0 && cv_netbios_ok(e->value) &&
			   (!cv->name || strcasecmp(cv->name, e->value) == 0)) {
			if (!cv->name) /* smb.conf's spelling first */
				cv_set(&cv->name, e->value);
		} else if (strcmp(e->norm, "mimicmodel") == 0 && !strpbrk(e->value, " %\"\\") &&
			   (!cv->model || strcmp(cv->model, e->value) == 0)) {
			cv_set(&cv->model, e->value);
		} else if (strcmp(e->norm, "cnidscheme") == 0 && cv_word_in(e->value, cnids)) {
			cv_set(&cv->cnid, e->value);
		} else if (strcmp(e->norm, "zeroconf") != 0 && strcmp(e->norm, "uamlist") != 0) {
			/* zeroconf: nastune publishes Bonjour itself; guests come from shares */
			afp_note(cv, e, g->name);
		}
	}
}

static void
afp_volume(struct cv *cv, const struct ini_section *sec, const struct imp_share *o)
{
	struct cshare *sh = cv_share_by_name(cv, o->name);
	size_t i;

	if (!cv_share_name_ok(o->name) || !cv_path_ok(o->path) || (o->tm && o->read_only) ||
	    strpbrk(o->path, ";#")) {
		NOTE(cv, sec->file, sec->line,
		     "not expressible: afp volume [%s] (name, path or a read-only Time Machine "
		     "volume nastune.conf refuses); it stops being served",
		     sec->name);
		return;
	}
	if (sh && strcmp(sh->path, o->path) != 0) {
		NOTE(cv, sec->file, sec->line,
		     "not expressible: afp volume '%s' (%s) has the name of the smb share of %s: "
		     "one nastune share has one path; it stops being served",
		     o->name, o->path, sh->path);
		return;
	}
	if (!sh) {
		sh = cv_share_new(cv, o->name, o->path);
		sh->read_only = o->read_only;
		sh->guest = o->guest;
		sh->tm = o->tm;
		for (i = 0; i < o->users.n; i++)
			strlist_add(&sh->users, o->users.v[i]);
	} else if (sh->read_only != o->read_only || sh->tm != o->tm) {
		NOTE(cv, sec->file, sec->line,
		     "not expressible: afp volume '%s' differs from the smb share in access or "
		     "Time "
		     "Machine: one nastune share has one; it follows the smb share",
		     o->name);
	}
	sh->protos |= PROTO_AFP;
	if (strcmp(sh->name, o->name) != 0)
		NOTE(cv, sec->file, sec->line,
		     "not expressible: afp volume '%s' is shown as '%s' from now on (a nastune "
		     "share "
		     "has one name for every protocol)",
		     o->name, sh->name);
	if (o->tm && o->tm_max && !sh->tm_max) {
		char size[32];

		units_format_size(o->tm_max, size, sizeof(size));
		if (o->tm_max >= (1ULL << 30))
			cv_set(&sh->tm_max, size);
	}
	for (i = 0; i < sec->n; i++) {
		const struct ini_entry *e = &sec->v[i];
		static const char *const expressed[] = { "path",	"volumename",	"readonly",
							 "timemachine", "volsizelimit", NULL };

		if (cv_word_in(e->norm, expressed) ||
		    (strcmp(e->norm, "cnidscheme") == 0 && cv->cnid &&
		     strcasecmp(e->value, cv->cnid) == 0))
			continue;
		if (strcmp(e->norm, "validusers") == 0 &&
		    cv_words_into(e->value, cv_user_ok, &sh->users)) {
			size_t k;

			for (k = 0; k < sh->users.n; k++)
				if (!strlist_has(&cv->users, sh->users.v[k]))
					strlist_add(&cv->users, sh->users.v[k]);
			continue;
		}
		afp_note(cv, e, sec->name);
	}
}

void
cv_afp_all(struct cv *cv, const struct imp_served *srv)
{
	const struct ini *afp = &cv->in->afp;
	size_t i;

	afp_global(cv, ini_section(afp, "global"));
	for (i = 0; i < srv->n; i++) {
		const struct imp_share *o = &srv->v[i];
		const struct ini_section *sec;

		if (o->proto != PROTO_AFP)
			continue;
		sec = ini_section(afp, o->name);
		for (size_t k = 0; !sec && k < afp->n; k++)
			if (strcmp(afp->s[k].file, o->file) == 0 && afp->s[k].line == o->line)
				sec = &afp->s[k];
		if (!sec)
			continue;
		if (strcasecmp(sec->name, "homes") == 0)
			NOTE(cv, sec->file, sec->line,
			     "not expressible: afp [Homes] (nastune.conf has no home directories); "
			     "it stops being served%s",
			     o->stock ? " (netatalk's stock one)" : "");
		else
			afp_volume(cv, sec, o);
	}
}
