/* conf_emit.c - the conversion written out as nastune.conf text, quoted as libconfig reads
 * it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "units.h"
#include "xmalloc.h"

/* A libconfig string: nastune's values carry no quote or backslash (the checks above keep
 * them out), so only those would need escaping. */
static void
str(struct buf *b, const char *v)
{
	buf_addc(b, '"');
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			buf_addc(b, '\\');
		buf_addc(b, *v);
	}
	buf_addc(b, '"');
}

static void
str_list(struct buf *b, const struct strlist *l)
{
	size_t i;

	buf_addc(b, '[');
	for (i = 0; i < l->n; i++) {
		if (i)
			buf_adds(b, ", ");
		str(b, l->v[i]);
	}
	buf_addc(b, ']');
}

static void
emit_server(struct cv *cv, struct buf *b)
{
	const struct imp_input *in = cv->in;
	bool smb = false, nfs = false, afp = false;
	size_t i;

	for (i = 0; i < cv->n; i++) {
		smb = smb || cv->sh[i].protos & PROTO_SMB;
		nfs = nfs || cv->sh[i].protos & PROTO_NFS;
		afp = afp || cv->sh[i].protos & PROTO_AFP;
	}
	buf_adds(b, "# What this host served when `nastune import` read it:");
	buf_printf(b, "%s%s%s%s.\n", in->have_smb ? " smb.conf" : "",
		   in->exports.n ? " exports" : "", in->have_ganesha ? " ganesha.conf" : "",
		   in->have_afp ? " afp.conf" : "");
	buf_printf(b, "# What nastune.conf cannot say is named by import%s.\n",
		   cv->res->site.len || cv->site_global.len ? " and kept in " IMPORT_SMB_SITE : "");
	buf_adds(b, "profile = \"default\";\nserver = {");
	if (cv->name)
		buf_adds(b, " name = "), str(b, cv->name), buf_addc(b, ';');
	if (cv->workgroup)
		buf_adds(b, " workgroup = "), str(b, cv->workgroup), buf_addc(b, ';');
	if (cv->description)
		buf_adds(b, " description = "), str(b, cv->description), buf_addc(b, ';');
	if (cv->model)
		buf_adds(b, " model = "), str(b, cv->model), buf_addc(b, ';');
	if (cv->interfaces.n)
		buf_adds(b, " interfaces = "), str_list(b, &cv->interfaces), buf_addc(b, ';');
	buf_adds(b, " };\nprotocols = {\n");
	buf_printf(b, "  smb = { enabled = %s; min_protocol = ", smb ? "true" : "false");
	str(b, cv->min_protocol ? cv->min_protocol : "SMB2");
	buf_adds(b, "; signing = ");
	str(b, cv->signing ? cv->signing : "default");
	buf_adds(b, "; encryption = ");
	str(b, cv->encryption ? cv->encryption : "default");
	buf_printf(b, "; apple = %s; };\n", cv->apple ? "true" : "false");
	buf_printf(b, "  nfs = { enabled = %s; server = \"%s\"; versions = [%s]; };\n",
		   nfs ? "true" : "false", cv->nfs_ganesha ? "ganesha" : "kernel",
		   !cv->versions_set || (cv->v3 && cv->v4) ? "3, 4"
		   : cv->v3				   ? "3"
							   : "4");
	buf_printf(b, "  afp = { enabled = %s; cnid_scheme = ", afp ? "true" : "false");
	str(b, cv->cnid ? cv->cnid : "dbd");
	buf_adds(b, "; };\n};\n");
}

static void
emit_share(const struct cshare *sh, struct buf *b)
{
	static const unsigned order[] = { PROTO_SMB, PROTO_NFS, PROTO_AFP };
	size_t i;
	bool first = true;

	buf_adds(b, "  { name = ");
	str(b, sh->name);
	buf_adds(b, "; path = ");
	str(b, sh->path);
	buf_adds(b, "; protocols = [");
	for (i = 0; i < 3; i++)
		if (sh->protos & order[i]) {
			buf_printf(b, "%s\"%s\"", first ? "" : ", ", model_proto_name(order[i]));
			first = false;
		}
	buf_printf(b, "]; read_only = %s;", sh->read_only ? "true" : "false");
	if (sh->guest)
		buf_adds(b, " guest = true;");
	if (sh->comment)
		buf_adds(b, "\n    comment = "), str(b, sh->comment), buf_addc(b, ';');
	if (sh->users.n && !sh->guest)
		buf_adds(b, "\n    valid_users = "), str_list(b, &sh->users), buf_addc(b, ';');
	if (sh->tm) {
		buf_adds(b, "\n    time_machine = { enabled = true;");
		if (sh->tm_max)
			buf_adds(b, " max_size = "), str(b, sh->tm_max), buf_addc(b, ';');
		buf_adds(b, " };");
	}
	if (sh->protos & PROTO_NFS && sh->clients.n)
		buf_adds(b, "\n    nfs = { clients = "), str_list(b, &sh->clients),
			buf_adds(b, "; };");
	buf_adds(b, " }");
}

static void
emit_knobs(struct cv *cv, struct buf *b)
{
	static const char *const groups[] = { "smb", "nfs", "afp", "sys", "net", NULL };
	size_t g, i;

	if (!cv->knob_keys.n)
		return;
	buf_adds(b, "tuning = { knobs = {");
	for (g = 0; groups[g]; g++) {
		bool open = false;
		size_t gl = strlen(groups[g]);

		for (i = 0; i < cv->knob_keys.n; i++) {
			const char *k = cv->knob_keys.v[i];

			if (strncmp(k, groups[g], gl) != 0 || k[gl] != '.')
				continue;
			if (!open)
				buf_printf(b, "\n  %s = {", groups[g]);
			open = true;
			buf_printf(b, " %s = ", k + gl + 1);
			str(b, cv->knob_values.v[i]);
			buf_addc(b, ';');
		}
		if (open)
			buf_adds(b, " };");
	}
	buf_adds(b, "\n}; };\n");
}

void
cv_emit(struct cv *cv)
{
	struct buf *b = &cv->res->conf;
	size_t i;

	emit_server(cv, b);
	buf_adds(b, "users = (");
	for (i = 0; i < cv->users.n; i++) {
		buf_adds(b, i ? ", { name = " : " { name = ");
		str(b, cv->users.v[i]);
		buf_adds(b, "; }");
	}
	buf_adds(b, cv->users.n ? " );\nshares = (" : ");\nshares = (");
	for (i = 0; i < cv->n; i++) {
		buf_adds(b, i ? ",\n" : "\n");
		emit_share(&cv->sh[i], b);
	}
	buf_adds(b, cv->n ? "\n);\n" : ");\n");
	emit_knobs(cv, b);
}
