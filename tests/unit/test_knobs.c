/* test_knobs.c - the knob table: its invariants, value syntax, that every knob renders into
 * its file with every candidate (through the real templates), and which values tune may try. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "knobs.h"
#include "model.h"
#include "profile.h"
#include "render.h"
#include "templates.h"
#include "unit.h"

/* Every protocol on, one share over all of them; server is "kernel" or "ganesha". */
static struct model *
model_for(const char *server, const char *extra)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "network = { interface = \"eth0\"; mtu = \"auto\"; peers = [\"192.0.2.9\"]; };\n"
		 "protocols = { smb = { enabled = true; }; afp = { enabled = true; };\n"
		 "  nfs = { enabled = true; server = \"%s\"; versions = [3, 4]; }; };\n"
		 "shares = ( { name = \"Media\"; path = \"/srv/media\";\n"
		 "  protocols = [\"smb\", \"nfs\", \"afp\"]; nfs = { clients = [\"192.0.2.0/24\"]; "
		 "}; } );\n"
		 "tuning = { allow_unsafe = true; };\n%s",
		 server, extra ? extra : "");
	return unit_model(text);
}

static void
set(struct model *m, enum knob_id id, const char *value, enum knob_src src)
{
	free(m->knobs[id].value);
	m->knobs[id].value = value ? strdup(value) : NULL;
	m->knobs[id].src = value ? src : KNOB_UNSET;
	m->knobs[id].loc.file = NULL;
	m->knobs[id].loc.line = 0;
}

static void
test_table_invariants(void **state)
{
	const struct knob *k, *o;
	char canon[256], why[512];
	size_t i, n = 0;

	(void)state;
	for (k = knob_first(); k; k = knob_next(k), n++) {
		const char *dot = strchr(k->name, '.');

		assert_ptr_equal(knob_get(k->id), k);
		assert_int_equal(k->id, n); /* the table is indexed by id */
		assert_ptr_equal(knob_find(k->name), k);
		assert_non_null(dot);
		assert_string_equal(knob_key(k), dot + 1);
		/* the group names the protocol: smb/nfs/afp knobs belong to it, sys/net to the host
		 */
		if (strncmp(k->name, "smb.", 4) == 0)
			assert_int_equal(k->proto, PROTO_SMB);
		else if (strncmp(k->name, "nfs.", 4) == 0)
			assert_int_equal(k->proto, PROTO_NFS);
		else if (strncmp(k->name, "afp.", 4) == 0)
			assert_int_equal(k->proto, PROTO_AFP);
		else if (strncmp(k->name, "sys.", 4) == 0 || strncmp(k->name, "net.", 4) == 0)
			assert_int_equal(k->proto, 0);
		else
			fail_msg("%s: unknown group", k->name);
		for (o = knob_first(); o != k; o = knob_next(o))
			assert_string_not_equal(o->name, k->name);
		assert_non_null(k->param);
		assert_non_null(k->where);
		assert_true(k->why && strlen(k->why) > 10);
		assert_true(k->workloads != 0 && (k->workloads & ~WL_ALL) == 0);
		assert_true((knob_place_file(k->place) == NULL) == (k->place == KNOB_AT_NETLINK));
		/* candidates: at least two, each valid and already canonical, no repeats; a
		 * knob whose every other value changes what clients see has its default alone */
		assert_non_null(k->candidates[0]);
		if (k->safety != KNOB_SEMANTICS || k->visible)
			assert_non_null(k->candidates[1]);
		for (i = 0; k->candidates[i]; i++) {
			size_t j;

			if (knob_parse(k, k->candidates[i], canon, sizeof(canon), why,
				       sizeof(why)) < 0)
				fail_msg("%s: candidate '%s' invalid: %s", k->name,
					 k->candidates[i], why);
			assert_string_equal(canon, k->candidates[i]);
			for (j = 0; j < i; j++)
				assert_string_not_equal(k->candidates[j], k->candidates[i]);
		}
		/* the first candidate is the daemon's default when it has one */
		if (k->dflt)
			assert_string_equal(k->candidates[0], k->dflt);
		/* unsafe knobs name their unsafe values; those are candidates, never the first */
		assert_true((k->safety == KNOB_UNSAFE) == (k->unsafe != NULL));
		for (i = 0; k->unsafe && k->unsafe[i]; i++) {
			size_t j;

			for (j = 0; k->candidates[j]; j++)
				if (strcmp(k->candidates[j], k->unsafe[i]) == 0)
					break;
			assert_non_null(k->candidates[j]);
			assert_true(j > 0);
			assert_true(knob_value_unsafe(k, k->unsafe[i]));
		}
		assert_false(knob_value_unsafe(k, k->candidates[0]));
		/* semantics knobs say what they change; the first candidate changes nothing */
		assert_true((k->safety == KNOB_SEMANTICS) == (k->changes != NULL));
		assert_true(k->safety == KNOB_SEMANTICS || (!k->visible && !k->keep));
		assert_false(knob_value_visible(k, k->candidates[0]));
		assert_null(knob_client_change(k, k->candidates[0]));
		for (i = 0; k->visible && k->visible[i]; i++) {
			assert_true(knob_value_visible(k, k->visible[i]));
			assert_ptr_equal(knob_client_change(k, k->visible[i]), k->changes);
		}
	}
	assert_int_equal(n, KNOB_COUNT);
	assert_null(knob_find("smb.nope"));
	assert_null(knob_find("use_sendfile"));
	assert_null(knob_get(KNOB_COUNT));
	/* the list */
	assert_int_equal(knob_get(KNOB_SMB_STRICT_SYNC)->safety, KNOB_UNSAFE);
	assert_int_equal(knob_get(KNOB_NFS_EXPORT_SYNC)->safety, KNOB_UNSAFE);
	for (i = 0; i < WL_COUNT; i++)
		assert_non_null(knob_workload_name(1u << i));
	assert_null(knob_workload_name(3));
}

static void
expect_canon(enum knob_id id, const char *in, const char *want)
{
	char out[256], why[512] = "";

	if (knob_parse(knob_get(id), in, out, sizeof(out), why, sizeof(why)) < 0)
		fail_msg("%s '%s': %s", knob_get(id)->name, in, why);
	assert_string_equal(out, want);
}

static void
expect_bad(enum knob_id id, const char *in, const char *needle)
{
	char out[256], why[512] = "";

	assert_int_equal(knob_parse(knob_get(id), in, out, sizeof(out), why, sizeof(why)), -EINVAL);
	if (!strstr(why, needle))
		fail_msg("'%s': '%s' lacks '%s'", in, why, needle);
}

static void
test_parse_values(void **state)
{
	(void)state;
	expect_canon(KNOB_SMB_USE_SENDFILE, "YES", "yes");
	expect_bad(KNOB_SMB_USE_SENDFILE, "maybe", "use one of: no, yes");
	expect_canon(KNOB_SMB_AIO_READ_SIZE, "1m", "1M");
	expect_canon(KNOB_SMB_AIO_READ_SIZE, "1048576", "1M");
	expect_canon(KNOB_SMB_AIO_READ_SIZE, "0", "0");
	expect_canon(KNOB_SMB_AIO_READ_SIZE, "1000", "1000");
	expect_bad(KNOB_SMB_AIO_READ_SIZE, "32M", "out of range");
	expect_bad(KNOB_SMB_AIO_READ_SIZE, "lots", "not a size");
	expect_bad(KNOB_AFP_SERVER_QUANTUM, "16K", "out of range");
	expect_canon(KNOB_NFS_THREADS, "64", "64");
	expect_bad(KNOB_NFS_THREADS, "1", "2 to 16384");
	expect_bad(KNOB_NFS_THREADS, "6x", "whole number");
	expect_canon(KNOB_SYS_TCP_RMEM, "4K 128K 16M", "4096 131072 16777216");
	expect_bad(KNOB_SYS_TCP_RMEM, "4096 131072", "three ascending");
	expect_bad(KNOB_SYS_TCP_RMEM, "16M 128K 4K", "three ascending");
	expect_bad(KNOB_SYS_TCP_RMEM, "4096 131072 6291456 1", "three ascending");
	expect_canon(KNOB_SMB_SOCKET_OPTIONS, "tcp_nodelay  so_rcvbuf=256K",
		     "TCP_NODELAY SO_RCVBUF=262144");
	expect_bad(KNOB_SMB_SOCKET_OPTIONS, "TCP_NODELAY TCP_NODELAY", "twice");
	expect_bad(KNOB_SMB_SOCKET_OPTIONS, "SO_RCVBUF", "needs a size");
	expect_bad(KNOB_SMB_SOCKET_OPTIONS, "TCP_NODELAY=1", "takes no value");
	expect_bad(KNOB_SMB_SOCKET_OPTIONS, "SO_BINDTODEVICE=eth0", "not one nastune knows");
	expect_bad(KNOB_SMB_SOCKET_OPTIONS, "SO_SNDBUF=1", "out of range");
	expect_bad(KNOB_SMB_SOCKET_OPTIONS, "", "1 to 255");
	expect_canon(KNOB_NFS_VERSIONS, "4,3", "3,4");
	expect_canon(KNOB_NFS_VERSIONS, "3, 4", "3,4");
	expect_canon(KNOB_NFS_VERSIONS, "4", "4");
	expect_bad(KNOB_NFS_VERSIONS, "3,3", "not a set");
	expect_bad(KNOB_NFS_VERSIONS, "2", "not a set");
	expect_bad(KNOB_NFS_VERSIONS, "34", "not a set");
	expect_bad(KNOB_NFS_VERSIONS, ",4", "not a set");
}

/* The line a knob's value must produce in its file. */
static void
expected_line(const struct knob *k, const char *value, char *out, size_t len)
{
	struct knob_line l[KNOB_LINES_MAX];
	const char *v = l[0].value;

	assert_true(knob_render_lines(k, value, l) >= 1);
	switch (k->place) {
	case KNOB_AT_SMB_GLOBAL:
	case KNOB_AT_SMB_SHARE:
	case KNOB_AT_AFP_GLOBAL:
	case KNOB_AT_AFP_VOLUME:
		snprintf(out, len, "\t%s = %s\n", l[0].param, v);
		break;
	case KNOB_AT_GANESHA_CORE:
	case KNOB_AT_GANESHA_EXPORT:
	case KNOB_AT_GANESHA_MDCACHE:
		snprintf(out, len, "\t%s = %s;\n", k->param, v);
		break;
	case KNOB_AT_SYSCTL:
		snprintf(out, len, "\n%s = %s\n", k->param, v);
		break;
	case KNOB_AT_EXPORTS:
		snprintf(out, len, "(rw,%s,", v);
		break;
	case KNOB_AT_SMB_VFS:
		/* smb.io_uring: last of the list, or no list at all */
		snprintf(out, len, "%s", strcmp(value, "yes") == 0 ? " io_uring\n" : "");
		break;
	case KNOB_AT_NETLINK:
		out[0] = '\0';
		break;
	}
}

static const struct rfile *
find_file(const struct rendered *r, const char *path)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->f[i].path, path) == 0)
			return &r->f[i];
	return NULL;
}

static void
render_ok(const struct model *m, const struct render_templates *t, struct rendered *r)
{
	char err[512] = "";

	if (render_all(m, t, 0, r, err, sizeof(err)) < 0)
		fail_msg("render: %s", err);
}

static void
test_every_candidate_renders(void **state)
{
	static const char *const tdirs[] = { "templates" };
	struct render_templates t;
	const struct knob *k;
	char err[512], line[512];
	size_t i, checked = 0;

	(void)state;
	assert_int_equal(templates_load(tdirs, 1, &t, err, sizeof(err)), 0);
	for (k = knob_first(); k; k = knob_next(k)) {
		bool ganesha = k->place == KNOB_AT_GANESHA_CORE ||
			       k->place == KNOB_AT_GANESHA_EXPORT ||
			       k->place == KNOB_AT_GANESHA_MDCACHE;
		bool fruit = strncmp(k->param, "fruit:", 6) == 0 ||
			     strncmp(k->param, "readdir_attr:", 13) == 0;

		if (k->place == KNOB_AT_NETLINK)
			continue; /* net.mtu: netif sets it, nothing is rendered */
		for (i = 0; k->candidates[i]; i++) {
			struct model *m = model_for(ganesha ? "ganesha" : "kernel", NULL);
			struct rendered r;
			const struct rfile *f;

			/* every value may apply: consent, and fruit for vfs_fruit's options */
			m->tuning.allow_semantics = true;
			m->smb.apple = fruit;
			set(m, k->id, k->candidates[i], KNOB_CONFIG);
			render_ok(m, &t, &r);
			f = find_file(&r, knob_place_file(k->place));
			if (!f)
				fail_msg("%s: %s not rendered", k->name, knob_place_file(k->place));
			expected_line(k, k->candidates[i], line, sizeof(line));
			if (!strstr(f->data, line))
				fail_msg("%s = %s: '%s' not in %s:\n%s", k->name, k->candidates[i],
					 line, f->path, f->data);
			/* pinned knobs are not tune's: no tuned.conf */
			assert_null(find_file(&r, RENDER_TUNED_PATH));
			render_clear(&r);
			model_free(m);
			checked++;
		}
	}
	assert_true(checked > 60);
	templates_clear(&t);
}

/* Unset knobs leave the daemons' defaults alone: no line, and no sysctl file or tuned.conf. */
static void
test_unset_renders_nothing(void **state)
{
	static const char *const tdirs[] = { "templates" };
	static const char *const servers[] = { "kernel", "ganesha" };
	struct render_templates t;
	const struct knob *k;
	char err[512], pat[256];
	size_t s;

	(void)state;
	assert_int_equal(templates_load(tdirs, 1, &t, err, sizeof(err)), 0);
	for (s = 0; s < 2; s++) {
		struct model *m = model_for(servers[s], NULL);
		struct rendered r;

		render_ok(m, &t, &r);
		assert_null(find_file(&r, RENDER_SYSCTL_PATH));
		assert_null(find_file(&r, RENDER_TUNED_PATH));
		for (k = knob_first(); k; k = knob_next(k)) {
			const struct rfile *f;

			/* these four have always been written from protocols.*; a knob only
			 * changes their value */
			if (k->place == KNOB_AT_NETLINK || k->id == KNOB_SMB_SERVER_SIGNING ||
			    k->id == KNOB_SMB_SMB_ENCRYPT || k->id == KNOB_NFS_VERSIONS ||
			    k->id == KNOB_NFS_EXPORT_SYNC || k->id == KNOB_AFP_CNID_SCHEME)
				continue;
			if (!(f = find_file(&r, knob_place_file(k->place))))
				continue;
			snprintf(pat, sizeof(pat),
				 k->place == KNOB_AT_SMB_VFS ? "io_uring" : "\t%s = ", k->param);
			if (strstr(f->data, pat))
				fail_msg("unset %s rendered in %s", k->name, f->path);
		}
		render_clear(&r);
		model_free(m);
	}
	templates_clear(&t);
}

/* smb.io_uring is the last module of every "vfs objects" list: after the fruit stack in
 * [global] and in each share when Macs are served, alone in [global] otherwise. */
static void
test_io_uring_last(void **state)
{
	static const char *const tdirs[] = { "templates" };
	struct render_templates t;
	char err[512];
	size_t i;

	(void)state;
	assert_int_equal(templates_load(tdirs, 1, &t, err, sizeof(err)), 0);
	for (i = 0; i < 2; i++) {
		struct model *m = model_for("kernel", NULL);
		struct rendered r;
		const struct rfile *f;
		const char *p;
		size_t lists = 0;

		m->smb.apple = i == 1; /* protocols.smb.apple: the fruit stack everywhere */
		set(m, KNOB_SMB_IO_URING, "yes", KNOB_TUNED);
		render_ok(m, &t, &r);
		f = find_file(&r, "/etc/samba/smb.conf");
		assert_non_null(f);
		for (p = f->data; (p = strstr(p, "vfs objects = ")); p++, lists++) {
			const char *eol = strchr(p, '\n');

			assert_true(eol - p > 9 && strncmp(eol - 9, " io_uring", 9) == 0);
		}
		/* no fruit: one [global] line; fruit: [global] and the share */
		assert_int_equal(lists, i == 0 ? 1 : 2);
		render_clear(&r);
		model_free(m);
	}
	templates_clear(&t);
}

/* knob_restart_changes over one pair of texts: returns the count, checks the params named. */
static int
restart_changes(const char *path, const char *cur, const char *next, const char *want)
{
	char changed[256] = "x";
	int n = knob_restart_changes(path, cur, cur ? strlen(cur) : 0, next,
				     next ? strlen(next) : 0, changed, sizeof(changed));

	assert_string_equal(changed, want);
	return n;
}

/* Only lines setting a restart-class knob's param decide a restart, and only their values. */
static void
test_restart_changes(void **state)
{
	static const char ganesha[] = "# Generated by nastune\n"
				      "NFS_CORE_PARAM {\n"
				      "\tProtocols = 3, 4;\n"
				      "\tRPC_Ioq_ThrdMax = 200;\n"
				      "}\n\n"
				      "EXPORT {\n"
				      "\tExport_Id = 1;\n"
				      "\tProtocols = 3, 4;\n"
				      "\tSquash = root_squash;\n"
				      "\tMaxRead = 1048576;\n"
				      "}\n";
	static const char afp[] = "; Generated by nastune\n"
				  "[Global]\n"
				  "\tzeroconf = no\n"
				  "\tserver quantum = 1048576\n"
				  "\n[Media]\n"
				  "\tpath = /srv/media\n";
	static const char smb[] = "[global]\n"
				  "\tsocket options = TCP_NODELAY\n"
				  "\tuse sendfile = no\n";
	const char *g = "/etc/ganesha/ganesha.conf", *a = "/etc/netatalk/afp.conf";
	char text[2048];

	(void)state;
	/* a value in a Ganesha block changed: restart, naming the param */
	snprintf(text, sizeof(text), "%s", ganesha);
	memcpy(strstr(text, "= 200;"), "= 016;", 6);
	assert_int_equal(restart_changes(g, ganesha, text, "RPC_Ioq_ThrdMax"), 1);
	/* two params at once, in table order; case and spacing of the key do not matter */
	snprintf(text, sizeof(text), "%s", ganesha);
	memcpy(strstr(text, "ThrdMax = 200"), "ThrdMax = 512", 13);
	memcpy(strstr(text, "MaxRead = 1048576"), "maxread=  4194304", 17);
	assert_int_equal(restart_changes(g, ganesha, text, "RPC_Ioq_ThrdMax, MaxRead"), 2);
	/* only a comment or another line changed: reload */
	snprintf(text, sizeof(text), "# RPC_Ioq_ThrdMax = 16;\n%s", ganesha);
	memcpy(strstr(text, "root_squash"), "all_squash;", 11);
	assert_int_equal(restart_changes(g, ganesha, text, ""), 0);
	/* the same text, re-indented, with CRLF: reload */
	snprintf(text, sizeof(text), "%s",
		 "NFS_CORE_PARAM {\r\n  Protocols =3, 4 ;\r\n"
		 "  RPC_Ioq_ThrdMax=200;\r\n}\r\nEXPORT {\r\n  MaxRead = 1048576;\r\n}\r\n");
	assert_int_equal(restart_changes(g, ganesha, text, ""), 0);
	/* an export added with the same Protocols and MaxRead: reload (Ganesha adds exports
	 * on SIGHUP); one with a different MaxRead: restart */
	snprintf(text, sizeof(text),
		 "%sEXPORT {\n\tExport_Id = 2;\n\tProtocols = 3, 4;\n"
		 "\tMaxRead = 1048576;\n}\n",
		 ganesha);
	assert_int_equal(restart_changes(g, ganesha, text, ""), 0);
	snprintf(text, sizeof(text),
		 "%sEXPORT {\n\tExport_Id = 2;\n\tProtocols = 3, 4;\n"
		 "\tMaxRead = 65536;\n}\n",
		 ganesha);
	assert_int_equal(restart_changes(g, ganesha, text, "MaxRead"), 1);
	/* a knob set where it was unset, and the versions narrowed in both blocks */
	snprintf(text, sizeof(text), "%s", ganesha);
	*strstr(text, "\tRPC_Ioq_ThrdMax") = '#';
	assert_int_equal(restart_changes(g, text, ganesha, "RPC_Ioq_ThrdMax"), 1);
	snprintf(text, sizeof(text), "%s", ganesha);
	memcpy(strstr(text, "Protocols = 3, 4;"), "Protocols = 3;   ", 17);
	memcpy(strstr(strstr(text, "EXPORT"), "Protocols = 3, 4;"), "Protocols = 3;   ", 17);
	assert_int_equal(restart_changes(g, ganesha, text, "Protocols"), 1);
	/* no file before (the first apply): every param set now is a change */
	assert_int_equal(restart_changes(g, NULL, ganesha, "RPC_Ioq_ThrdMax, MaxRead, Protocols"),
			 3);
	assert_int_equal(restart_changes(g, ganesha, ganesha, ""), 0);
	/* afp.conf [Global] server quantum changed: restart; a volume line changed: reload */
	snprintf(text, sizeof(text), "%s", afp);
	memcpy(strstr(text, "1048576"), "4194304", 7);
	assert_int_equal(restart_changes(a, afp, text, "server quantum"), 1);
	snprintf(text, sizeof(text), "%s", afp);
	memcpy(strstr(text, "server quantum"), "Server Quantum", 14);
	memcpy(strstr(text, "/srv/media"), "/srv/other", 10);
	assert_int_equal(restart_changes(a, afp, text, ""), 0);
	snprintf(text, sizeof(text), "%s\tdsireadbuf = 24\n", afp);
	assert_int_equal(restart_changes(a, afp, text, "dsireadbuf"), 1);
	/* a restart-class param of another file is not this file's business */
	snprintf(text, sizeof(text), "%s", ganesha);
	memcpy(strstr(text, "= 200;"), "= 016;", 6);
	assert_int_equal(restart_changes(a, ganesha, text, ""), 0);
	assert_int_equal(restart_changes("/etc/exports.d/nastune.exports", ganesha, text, ""), 0);
	/* smb.conf: every smb knob is reload class: never a restart */
	snprintf(text, sizeof(text), "%s", smb);
	memcpy(strstr(text, "TCP_NODELAY"), "SO_KEEPALIV", 11);
	memcpy(strstr(text, "sendfile = no"), "sendfile = ye", 13);
	assert_int_equal(restart_changes("/etc/samba/smb.conf", smb, text, ""), 0);
	assert_int_equal(restart_changes("/etc/samba/smb.conf", NULL, smb, ""), 0);
	/* no room for the names: the count still says restart */
	assert_int_equal(knob_restart_changes(a, afp, strlen(afp), smb, strlen(smb), NULL, 0), 1);
}

/* Through the real templates: a restart-class knob set in the model restarts the service of
 * its file; a reload-class one never does. */
static void
test_restart_rendered(void **state)
{
	static const char *const tdirs[] = { "templates" };
	static const struct {
		enum knob_id id;
		const char *value, *path, *want;
	} cases[] = {
		{ KNOB_NFS_THREADS, "16", "/etc/ganesha/ganesha.conf", "RPC_Ioq_ThrdMax" },
		{ KNOB_NFS_GANESHA_MAX_READ, "1M", "/etc/ganesha/ganesha.conf", "MaxRead" },
		{ KNOB_NFS_VERSIONS, "3", "/etc/ganesha/ganesha.conf", "Protocols" },
		{ KNOB_AFP_SERVER_QUANTUM, "4M", "/etc/netatalk/afp.conf", "server quantum" },
		{ KNOB_AFP_TCPSNDBUF, "512K", "/etc/netatalk/afp.conf", "tcpsndbuf" },
		{ KNOB_SMB_USE_SENDFILE, "yes", "/etc/samba/smb.conf", "" },
		{ KNOB_SMB_SOCKET_OPTIONS, "TCP_NODELAY IPTOS_THROUGHPUT", "/etc/samba/smb.conf",
		  "" },
	};
	struct render_templates t;
	char err[512], changed[256];
	size_t i;

	(void)state;
	assert_int_equal(templates_load(tdirs, 1, &t, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model *m = model_for("ganesha", NULL);
		struct rendered before, after;
		const struct rfile *b, *a;
		size_t k;

		render_ok(m, &t, &before);
		set(m, cases[i].id, cases[i].value, KNOB_TUNED);
		render_ok(m, &t, &after);
		b = find_file(&before, cases[i].path);
		a = find_file(&after, cases[i].path);
		assert_non_null(b);
		assert_non_null(a);
		assert_true(b->len != a->len || memcmp(b->data, a->data, a->len) != 0);
		assert_int_equal(knob_restart_changes(a->path, b->data, b->len, a->data, a->len,
						      changed, sizeof(changed)),
				 cases[i].want[0] ? 1 : 0);
		assert_string_equal(changed, cases[i].want);
		/* no other file of the set calls for a restart */
		for (k = 0; k < after.n; k++) {
			const struct rfile *o = find_file(&before, after.f[k].path);

			if (strcmp(after.f[k].path, cases[i].path) == 0)
				continue;
			assert_int_equal(knob_restart_changes(after.f[k].path, o ? o->data : NULL,
							      o ? o->len : 0, after.f[k].data,
							      after.f[k].len, NULL, 0),
					 0);
		}
		render_clear(&before);
		render_clear(&after);
		model_free(m);
	}
	templates_clear(&t);
}

/* Tuned values render into tuned.conf, which loads back to the same values. */
static void
test_tuned_conf_round_trip(void **state)
{
	static const char *const tdirs[] = { "templates" };
	struct render_templates t;
	struct model *m = model_for("ganesha", NULL), *back;
	const struct rfile *f;
	struct rendered r;
	struct diag d;
	char err[512];

	(void)state;
	assert_int_equal(templates_load(tdirs, 1, &t, err, sizeof(err)), 0);
	set(m, KNOB_SMB_AIO_READ_SIZE, "1M", KNOB_TUNED);
	set(m, KNOB_SMB_SOCKET_OPTIONS, "TCP_NODELAY SO_RCVBUF=262144", KNOB_TUNED);
	set(m, KNOB_SYS_TCP_RMEM, "4096 131072 16777216", KNOB_TUNED);
	set(m, KNOB_NFS_VERSIONS, "3", KNOB_TUNED);
	set(m, KNOB_SMB_USE_SENDFILE, "yes", KNOB_CONFIG); /* pinned: not tune's */
	render_ok(m, &t, &r);
	f = find_file(&r, RENDER_TUNED_PATH);
	assert_non_null(f);
	assert_int_equal(f->svc, SVC_SELF);
	assert_non_null(strstr(f->data, "\tsmb = {\n\t\taio_read_size = \"1M\";\n"));
	assert_non_null(
		strstr(f->data, "\t\tsocket_options = \"TCP_NODELAY SO_RCVBUF=262144\";\n"));
	assert_non_null(strstr(f->data, "\tsys = {\n\t\ttcp_rmem = \"4096 131072 16777216\";\n"));
	assert_null(strstr(f->data, "use_sendfile"));
	assert_int_equal(find_file(&r, RENDER_SYSCTL_PATH)->svc, SVC_SYS);

	back = model_for("ganesha", NULL);
	diag_init(&d);
	assert_int_equal(profile_load_tuned_string(back, RENDER_TUNED_PATH, f->data, &d), 0);
	diag_print(&d, stderr);
	assert_int_equal(d.n, 0);
	assert_string_equal(knob_value(back, KNOB_SMB_AIO_READ_SIZE), "1M");
	assert_int_equal(knob_source(back, KNOB_SMB_AIO_READ_SIZE), KNOB_TUNED);
	assert_string_equal(knob_value(back, KNOB_SMB_SOCKET_OPTIONS),
			    "TCP_NODELAY SO_RCVBUF=262144");
	assert_string_equal(knob_value(back, KNOB_SYS_TCP_RMEM), "4096 131072 16777216");
	assert_string_equal(knob_value(back, KNOB_NFS_VERSIONS), "3");
	assert_null(knob_value(back, KNOB_SMB_USE_SENDFILE));
	diag_clear(&d);
	model_free(back);
	render_clear(&r);
	model_free(m);
	templates_clear(&t);
}

static void
expect_allowed(const struct model *m, enum knob_id id, const char *v, bool want, const char *needle)
{
	char why[512] = "";
	bool got = knob_allowed(m, knob_get(id), v, why, sizeof(why));

	if (got != want)
		fail_msg("%s = %s: allowed %d, want %d (%s)", knob_get(id)->name, v, got, want,
			 why);
	if (!want && needle && !strstr(why, needle))
		fail_msg("%s = %s: '%s' lacks '%s'", knob_get(id)->name, v, why, needle);
}

static void
test_allowed(void **state)
{
	struct model *m;

	(void)state;
	/* unsafe values need allow_unsafe; the safe value of an unsafe knob does not */
	m = unit_model(
		"shares = ( { name = \"A\"; path = \"/srv/a\"; protocols = [\"smb\", \"nfs\"];\n"
		"  nfs = { clients = [\"*\"]; }; } );\n");
	expect_allowed(m, KNOB_SMB_STRICT_SYNC, "no", false, "tuning.allow_unsafe");
	expect_allowed(m, KNOB_SMB_STRICT_SYNC, "yes", true, NULL);
	expect_allowed(m, KNOB_NFS_EXPORT_SYNC, "async", false, "power loss");
	expect_allowed(m, KNOB_NFS_EXPORT_SYNC, "sync", true, NULL);
	m->tuning.allow_unsafe = true;
	expect_allowed(m, KNOB_SMB_STRICT_SYNC, "no", true, NULL);
	expect_allowed(m, KNOB_NFS_EXPORT_SYNC, "async", true, NULL);
	/* kernel server: the Ganesha knobs are not applicable */
	expect_allowed(m, KNOB_NFS_THREADS, "64", false, "not applicable");
	expect_allowed(m, KNOB_NFS_GANESHA_MAX_READ, "1M", false, "not applicable");
	expect_allowed(m, KNOB_NFS_VERSIONS, "3", false, "not applicable");
	/* AFP is off by default */
	expect_allowed(m, KNOB_AFP_DSIREADBUF, "24", false, "afp is disabled");
	/* host knobs always apply; bad values are refused with the parse reason */
	expect_allowed(m, KNOB_SYS_RMEM_MAX, "16M", true, NULL);
	expect_allowed(m, KNOB_SYS_RMEM_MAX, "2G", false, "out of range");
	/* signing "default" demands nothing: every value may be tried */
	expect_allowed(m, KNOB_SMB_SERVER_SIGNING, "disabled", true, NULL);
	/* pinned: never tune's */
	set(m, KNOB_SMB_USE_SENDFILE, "yes", KNOB_CONFIG);
	expect_allowed(m, KNOB_SMB_USE_SENDFILE, "no", false, "pinned in nastune.conf");
	set(m, KNOB_SMB_USE_SENDFILE, "yes", KNOB_TUNED);
	expect_allowed(m, KNOB_SMB_USE_SENDFILE, "no", true, NULL);
	/* smb.io_uring: offered while the host is not known to lack it, refused with the
	 * reason the host gave */
	expect_allowed(m, KNOB_SMB_IO_URING, "yes", true, NULL);
	m->host.io_uring = 0;
	snprintf(m->host.io_uring_why, sizeof(m->host.io_uring_why), "no io_uring.so here");
	expect_allowed(m, KNOB_SMB_IO_URING, "yes", false, "cannot run it: no io_uring.so here");
	m->host.io_uring = 1;
	expect_allowed(m, KNOB_SMB_IO_URING, "yes", true, NULL);
	/* net.mtu: no interface */
	expect_allowed(m, KNOB_NET_MTU, "9000", false, "no network.interface");
	model_free(m);

	/* SMB floors: required allows only required; desired allows desired and required */
	m = unit_model(
		"protocols = { smb = { signing = \"required\"; encryption = \"desired\"; }; };\n"
		"shares = ( { name = \"A\"; path = \"/srv/a\"; } );\n");
	expect_allowed(m, KNOB_SMB_SERVER_SIGNING, "disabled", false,
		       "weaker than protocols.smb.signing");
	expect_allowed(m, KNOB_SMB_SERVER_SIGNING, "default", false, "weaker");
	expect_allowed(m, KNOB_SMB_SERVER_SIGNING, "desired", false, "weaker");
	expect_allowed(m, KNOB_SMB_SERVER_SIGNING, "required", true, NULL);
	expect_allowed(m, KNOB_SMB_SMB_ENCRYPT, "off", false, "protocols.smb.encryption");
	expect_allowed(m, KNOB_SMB_SMB_ENCRYPT, "if_required", false, "weaker");
	expect_allowed(m, KNOB_SMB_SMB_ENCRYPT, "desired", true, NULL);
	expect_allowed(m, KNOB_SMB_SMB_ENCRYPT, "required", true, NULL);
	/* NFS on, but no share over it */
	expect_allowed(m, KNOB_NFS_EXPORT_SYNC, "sync", false, "no share is served over nfs");
	model_free(m);
	m = unit_model(
		"protocols = { smb = { signing = \"mandatory\"; encryption = \"required\"; }; };\n"
		"shares = ( { name = \"A\"; path = \"/srv/a\"; } );\n");
	expect_allowed(m, KNOB_SMB_SERVER_SIGNING, "if_required", false, "weaker");
	expect_allowed(m, KNOB_SMB_SMB_ENCRYPT, "desired", false, "weaker");
	expect_allowed(m, KNOB_SMB_SMB_ENCRYPT, "required", true, NULL);
	model_free(m);

	/* Ganesha with v3 only: nfs.versions never adds v4; the kernel knob is not applicable */
	m = unit_model(
		"protocols = { nfs = { server = \"ganesha\"; versions = [3]; }; };\n"
		"shares = ( { name = \"A\"; path = \"/srv/a\"; protocols = [\"nfs\"];\n"
		"  nfs = { clients = [\"*\"]; }; } );\n"
		"network = { interface = \"eth0\"; mtu = 9000; peers = [\"192.0.2.1\"]; };\n");
	expect_allowed(m, KNOB_NFS_VERSIONS, "3", true, NULL);
	expect_allowed(m, KNOB_NFS_VERSIONS, "3,4", false, "does not list");
	expect_allowed(m, KNOB_NFS_VERSIONS, "4", false, "does not list");
	expect_allowed(m, KNOB_NFS_EXPORT_SYNC, "sync", false, "kernel exports only");
	expect_allowed(m, KNOB_NFS_THREADS, "512", true, NULL);
	expect_allowed(m, KNOB_SMB_USE_SENDFILE, "yes", false, "no share is served over smb");
	/* a fixed network.mtu pins net.mtu */
	assert_string_equal(knob_value(m, KNOB_NET_MTU), "9000");
	expect_allowed(m, KNOB_NET_MTU, "1500", false, "pinned in nastune.conf (t.conf:4)");
	model_free(m);

	m = unit_model("network = { interface = \"eth0\"; mtu = \"auto\"; };\n");
	expect_allowed(m, KNOB_NET_MTU, "9000", false, "no network.peers");
	model_free(m);
	m = unit_model(
		"network = { interface = \"eth0\"; mtu = \"auto\"; peers = [\"192.0.2.1\"]; };\n");
	expect_allowed(m, KNOB_NET_MTU, "9000", true, NULL);
	expect_allowed(m, KNOB_NET_MTU, "9500", false, "576 to 9216");
	assert_null(knob_value(m, KNOB_NET_MTU));
	model_free(m);
	m = unit_model("network = { interface = \"eth0\"; peers = [\"192.0.2.1\"]; };\n");
	expect_allowed(m, KNOB_NET_MTU, "9000", false, "\"keep\"");
	model_free(m);
}

/* One place decides sync/async for a kernel export: the share's own nfs.async, else the knob. */
/* The semantics class: a value that changes what clients see reaches a share only with the
 * server's or the share's consent, never a share whose fruit needs the default, and the
 * refusal says what would change. */
static void
test_consented(void **state)
{
	const struct knob *cs = knob_get(KNOB_SMB_CASE_SENSITIVE),
			  *meta = knob_get(KNOB_SMB_FRUIT_METADATA),
			  *ea = knob_get(KNOB_SMB_EA_SUPPORT), *op = knob_get(KNOB_SMB_OPLOCKS),
			  *dbp = knob_get(KNOB_AFP_VOL_DBPATH);
	struct knob_line l[KNOB_LINES_MAX];
	char why[512], canon[256];
	struct model *m;

	(void)state;
	/* no consent anywhere: refused, with the sentence and the fix */
	m = unit_model("shares = ( { name = \"A\"; path = \"/srv/a\"; },\n"
		       "  { name = \"B\"; path = \"/srv/b\"; } );\n");
	assert_false(knob_consented(m, cs, &m->shares[0]));
	assert_false(knob_consented(m, cs, NULL));
	assert_false(knob_consented_any(m, cs));
	assert_true(knob_consented(m, op, &m->shares[0])); /* safe: always */
	assert_true(knob_consented(m, knob_get(KNOB_SMB_STRICT_SYNC), NULL));
	expect_allowed(m, KNOB_SMB_CASE_SENSITIVE, "yes", false, "changes what clients see");
	assert_true(knob_allowed(m, cs, "auto", why, sizeof(why)));
	assert_false(knob_value_permitted(m, cs, "yes", why, sizeof(why)));
	assert_non_null(strstr(why, cs->changes));
	assert_non_null(strstr(why, "tuning.allow"));
	/* a tune's trials on A: A may measure it, B and the configuration still do not consent */
	m->shares[0].trial_semantics = true;
	assert_true(knob_consented(m, cs, &m->shares[0]));
	assert_false(knob_consented(m, cs, &m->shares[1]));
	assert_true(knob_consented_any(m, cs));
	assert_true(knob_value_permitted(m, cs, "yes", why, sizeof(why)));
	assert_false(knob_consent_given(m, cs));
	model_free(m);

	/* one share's consent: that share only; the server's stays no */
	m = unit_model("shares = ( { name = \"A\"; path = \"/srv/a\"; allow = [\"semantics\"]; "
		       "},\n  { name = \"B\"; path = \"/srv/b\"; } );\n");
	assert_true(m->shares[0].allow_semantics && !m->shares[1].allow_semantics);
	assert_true(knob_consented(m, cs, &m->shares[0]));
	assert_false(knob_consented(m, cs, &m->shares[1]));
	assert_false(knob_consented(m, cs, NULL));
	assert_true(knob_consented_any(m, cs));
	assert_true(knob_consent_given(m, cs));
	expect_allowed(m, KNOB_SMB_CASE_SENSITIVE, "yes", true, NULL);
	model_free(m);

	/* the server's consent: every share, except where fruit needs the default */
	m = unit_model("protocols = { smb = { enabled = true; }; };\n"
		       "users = ( { name = \"alice\"; } );\n"
		       "shares = ( { name = \"A\"; path = \"/srv/a\"; },\n"
		       "  { name = \"TM\"; path = \"/srv/tm\"; valid_users = [\"alice\"];\n"
		       "    time_machine = { enabled = true; }; } );\n"
		       "tuning = { allow = [\"semantics\"]; };\n");
	assert_true(m->tuning.allow_semantics && model_smb_fruit(m));
	assert_true(knob_consented(m, cs, &m->shares[0]));
	assert_true(knob_consented(m, cs, &m->shares[1]));
	assert_true(knob_consented(m, meta, &m->shares[0]));
	assert_false(knob_consented(m, meta, &m->shares[1])); /* Time Machine keeps stream */
	assert_false(knob_consented(m, ea, &m->shares[0]));   /* every fruit share keeps xattrs */
	assert_false(knob_consented(m, ea, &m->shares[1]));
	expect_allowed(m, KNOB_SMB_FRUIT_METADATA, "netatalk", true, NULL);
	expect_allowed(m, KNOB_SMB_EA_SUPPORT, "no", false, "keep it");
	expect_allowed(m, KNOB_SMB_EA_SUPPORT, "yes", true, NULL);
	model_free(m);

	/* a tune's trials keep what fruit needs too: no consent on a Time Machine share's
	 * fruit:metadata, nor on any fruit share's ea support */
	m = unit_model("protocols = { smb = { enabled = true; }; };\n"
		       "users = ( { name = \"alice\"; } );\n"
		       "shares = ( { name = \"A\"; path = \"/srv/a\"; },\n"
		       "  { name = \"TM\"; path = \"/srv/tm\"; valid_users = [\"alice\"];\n"
		       "    time_machine = { enabled = true; }; } );\n");
	m->shares[0].trial_semantics = m->shares[1].trial_semantics = true;
	assert_true(knob_consented(m, meta, &m->shares[0]));
	assert_false(knob_consented(m, meta, &m->shares[1]));
	assert_false(knob_consented(m, ea, &m->shares[0]));
	assert_false(knob_consented(m, ea, &m->shares[1]));
	assert_false(knob_consent_given(m, meta));
	model_free(m);

	/* vfs_fruit's options mean nothing without fruit */
	m = unit_model("shares = ( { name = \"A\"; path = \"/srv/a\"; } );\n"
		       "tuning = { allow = [\"semantics\", \"unsafe\"]; };\n");
	assert_true(m->tuning.allow_unsafe); /* "unsafe" in allow is allow_unsafe */
	assert_false(knob_applicable(m, meta, why, sizeof(why)));
	assert_false(knob_applicable(m, knob_get(KNOB_SMB_AAPL_MAX_ACCESS), why, sizeof(why)));
	assert_true(knob_consented(m, ea, &m->shares[0]));
	model_free(m);

	/* smb.name_case renders Samba's three case parameters together */
	assert_int_equal(knob_render_lines(knob_get(KNOB_SMB_NAME_CASE), "upper", l), 3);
	assert_string_equal(l[0].param, "default case");
	assert_string_equal(l[0].value, "upper");
	assert_string_equal(l[1].param, "preserve case");
	assert_string_equal(l[1].value, "no");
	assert_string_equal(l[2].param, "short preserve case");
	assert_string_equal(l[2].value, "no");
	assert_int_equal(knob_render_lines(knob_get(KNOB_SMB_NAME_CASE), "preserve", l), 3);
	assert_string_equal(l[1].value, "yes");
	assert_int_equal(knob_render_lines(op, "no", l), 1);
	assert_string_equal(l[0].param, "oplocks");

	/* a path knob: absolute, no blanks or separators, canonical without a trailing slash;
	 * every value but the default changes what clients see */
	assert_int_equal(knob_parse(dbp, "/ssd/cnid/", canon, sizeof(canon), why, sizeof(why)), 0);
	assert_string_equal(canon, "/ssd/cnid");
	assert_true(knob_parse(dbp, "ssd/cnid", canon, sizeof(canon), why, sizeof(why)) < 0);
	assert_true(knob_parse(dbp, "/a b", canon, sizeof(canon), why, sizeof(why)) < 0);
	assert_true(knob_parse(dbp, "/a;b", canon, sizeof(canon), why, sizeof(why)) < 0);
	assert_true(knob_parse(dbp, "/a/../b", canon, sizeof(canon), why, sizeof(why)) < 0);
	assert_true(knob_value_visible(dbp, "/ssd/cnid"));
	assert_false(knob_value_visible(dbp, dbp->dflt));
	assert_string_equal(knob_safety_name(KNOB_SEMANTICS), "semantics");
}

static void
test_export_async(void **state)
{
	struct model *m;

	(void)state;
	m = unit_model("tuning = { allow_unsafe = true; };\n"
		       "shares = ( { name = \"A\"; path = \"/srv/a\"; protocols = [\"nfs\"];\n"
		       "  nfs = { clients = [\"*\"]; }; },\n"
		       "  { name = \"B\"; path = \"/srv/b\"; protocols = [\"nfs\"];\n"
		       "  nfs = { clients = [\"*\"]; async = false; }; },\n"
		       "  { name = \"C\"; path = \"/srv/c\"; protocols = [\"nfs\"];\n"
		       "  nfs = { clients = [\"*\"]; async = true; }; } );\n");
	assert_false(knob_export_async(m, 0));
	assert_false(knob_export_async(m, 1));
	assert_true(knob_export_async(m, 2));
	set(m, KNOB_NFS_EXPORT_SYNC, "async", KNOB_TUNED);
	assert_true(knob_export_async(m, 0));
	assert_false(knob_export_async(m, 1)); /* the share said sync itself */
	assert_true(knob_export_async(m, 2));
	model_free(m);
}

/* Documented equivalences that tune measures once. */
static void
test_same(void **state)
{
	const struct knob *sig = knob_get(KNOB_SMB_SERVER_SIGNING);
	const struct knob *enc = knob_get(KNOB_SMB_SMB_ENCRYPT);
	const struct knob *sf = knob_get(KNOB_SMB_USE_SENDFILE);
	struct model *m = unit_model("");
	char why[256] = "";

	(void)state;
	assert_true(knob_same(m, enc, "default", "if_required", why, sizeof(why)));
	assert_non_null(strstr(why, "smb.conf(5)"));
	assert_true(knob_same(m, enc, NULL, "if_required", NULL, 0));	    /* NULL: the default */
	assert_true(knob_same(m, enc, "default", "off", why, sizeof(why))); /* no client asks */
	assert_non_null(strstr(why, "does not ask"));
	assert_false(knob_same(m, enc, "if_required", "desired", NULL, 0));
	assert_true(knob_same(m, sig, "default", "disabled", NULL, 0));
	assert_true(knob_same(m, sig, "if_required", "desired", NULL, 0));
	assert_false(knob_same(m, sig, "desired", "required", NULL, 0));
	assert_false(knob_same(m, sig, NULL, "required", NULL, 0));
	assert_true(knob_same(m, sf, "yes", "yes", NULL, 0));
	assert_false(knob_same(m, sf, "no", "yes", NULL, 0));
	model_free(m);
	/* nfs.versions unset serves protocols.nfs.versions: "3,4" is a no-op there, "3" not. */
	m = unit_model("protocols = { nfs = { enabled = true; server = \"ganesha\"; "
		       "versions = [3, 4]; }; };\n");
	why[0] = 0;
	assert_true(knob_same(m, knob_get(KNOB_NFS_VERSIONS), NULL, "3,4", why, sizeof(why)));
	assert_non_null(strstr(why, "protocols.nfs.versions"));
	assert_false(knob_same(m, knob_get(KNOB_NFS_VERSIONS), NULL, "3", NULL, 0));
	assert_false(knob_same(m, knob_get(KNOB_NFS_VERSIONS), "4", "3,4", NULL, 0));
	model_free(m);
	m = unit_model("protocols = { nfs = { enabled = true; server = \"ganesha\"; "
		       "versions = [4]; }; };\n");
	assert_true(knob_same(m, knob_get(KNOB_NFS_VERSIONS), NULL, "4", NULL, 0));
	model_free(m);
	/* With SMB1 allowed, signing values differ for SMB1 clients. */
	m = unit_model("protocols = { smb = { min_protocol = \"NT1\"; }; };\n");
	assert_false(knob_same(m, sig, "default", "disabled", NULL, 0));
	model_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_invariants),
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_every_candidate_renders),
		cmocka_unit_test(test_unset_renders_nothing),
		cmocka_unit_test(test_io_uring_last),
		cmocka_unit_test(test_tuned_conf_round_trip),
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_export_async),
		cmocka_unit_test(test_consented),
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_restart_changes),
		cmocka_unit_test(test_restart_rendered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
