/* test_profile.c - configuration loading and validation: one case per error class, each
 * asserting the line and the message. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "knobs.h"
#include "model.h"
#include "profile.h"

static const char *const dirs[] = { "profiles" };

static struct model *
load(const char *text, struct diag *d)
{
	diag_init(d);
	return profile_load_string("test.conf", text, dirs, 1, d);
}

/* Asserts that d holds an error at line whose message contains needle. */
static void
assert_diag(const struct diag *d, int line, const char *needle)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->v[i].line == line && strstr(d->v[i].msg, needle))
			return;
	for (i = 0; i < d->n; i++)
		fprintf(stderr, "# got %s:%d: %s\n", d->v[i].file, d->v[i].line, d->v[i].msg);
	fail_msg("no diagnostic at line %d containing '%s'", line, needle);
}

static void
expect_error(const char *text, int line, const char *needle)
{
	struct diag d;
	struct model *m = load(text, &d);

	assert_null(m);
	assert_true(d.errors >= 1);
	assert_diag(&d, line, needle);
	diag_clear(&d);
}

static void
test_valid_design_example(void **state)
{
	(void)state;
	struct diag d;
	struct model *m = load(
		"profile = \"timemachine\";\n"
		"server = { name = \"atlas\"; workgroup = \"WORKGROUP\"; interfaces = [\"eth0\"]; "
		"};\n"
		"network = { interface = \"eth0\"; mtu = \"auto\"; peers = [\"192.168.1.20\"]; };\n"
		"protocols = {\n"
		"  smb = { enabled = true; min_protocol = \"SMB2\"; signing = \"default\"; "
		"encryption = \"default\"; };\n"
		"  nfs = { enabled = true; server = \"kernel\"; versions = [3, 4]; };\n"
		"  afp = { enabled = false; cnid_scheme = \"dbd\"; };\n"
		"};\n"
		"users = ( { name = \"alice\"; } );\n"
		"shares = (\n"
		"  { name = \"Media\"; path = \"/srv/media\"; protocols = [\"smb\", \"nfs\"]; "
		"read_only = false;\n"
		"    nfs = { clients = [\"192.168.1.0/24\"]; }; },\n"
		"  { name = \"TimeMachine\"; path = \"/srv/tm\"; protocols = [\"smb\"]; "
		"valid_users = [\"alice\"];\n"
		"    time_machine = { enabled = true; max_size = \"2T\"; }; },\n"
		"  { name = \"Public\"; path = \"/srv/public\"; protocols = [\"smb\", \"nfs\", "
		"\"afp\"]; guest = true;\n"
		"    comment = \"Anyone on the LAN\"; }\n"
		");\n"
		"tuning = { goal = \"throughput\"; allow_unsafe = false; budget = \"10m\"; };\n",
		&d);

	diag_print(&d, stderr);
	assert_non_null(m);
	assert_int_equal(d.errors, 0);
	assert_string_equal(m->profile, "timemachine");
	assert_int_equal(m->n_shares, 3);
	assert_int_equal(m->shares[1].tm_max_size, 2ULL << 40);
	assert_int_equal(m->network.mtu_mode, MTU_AUTO);
	assert_int_equal(m->tuning.budget_s, 600);
	assert_int_equal(m->tuning.goal, GOAL_THROUGHPUT);
	/* guest NFS share defaults to everyone; the preset's model came through */
	assert_string_equal(m->shares[2].nfs_clients.v[0], "*");
	assert_string_equal(m->server.model, "TimeCapsule8,119");
	/* the user's shares replace the preset's */
	assert_string_equal(m->shares[0].name, "Media");
	model_free(m);
	diag_clear(&d);
}

static void
test_preset_merge(void **state)
{
	(void)state;
	struct diag d;
	struct model *m =
		load("profile = \"small-office\";\nserver = { name = \"files\"; };\n", &d);

	assert_non_null(m);
	assert_string_equal(m->smb.signing, "mandatory");      /* from the preset */
	assert_string_equal(m->server.name, "files");	       /* from the user */
	assert_string_equal(m->server.workgroup, "WORKGROUP"); /* from default.conf */
	assert_int_equal(m->n_shares, 1);		       /* the preset's share */
	assert_int_equal(m->tuning.goal, GOAL_SMALL_FILES);
	model_free(m);
	diag_clear(&d);
}

static void
test_syntax_error(void **state)
{
	(void)state;
	expect_error("server = {\n  name = = \"a\"; };\n", 2, "fix the syntax");
}

static void
test_unknown_key_did_you_mean(void **state)
{
	(void)state;
	expect_error("server = {\n  wrkgroup = \"X\";\n};\n", 2, "did you mean 'workgroup'");
	expect_error("shares = ( { name = \"A\"; path = \"/srv/a\";\n  read_onyl = true; } );\n", 2,
		     "did you mean 'read_only'");
	expect_error("bogus_top = 1;\n", 1, "unknown key 'bogus_top'");
}

static void
test_wrong_type(void **state)
{
	(void)state;
	expect_error("protocols = { smb = {\n enabled = \"yes\"; }; };\n", 2,
		     "make it true or false");
	expect_error("shares = ( { name = \"A\"; path = \"/srv/a\";\n  protocols = \"smb\"; } );\n",
		     2, "make it a list");
}

static void
test_missing_required(void **state)
{
	(void)state;
	expect_error("shares = (\n { path = \"/srv/a\"; } );\n", 2, "has no name");
	expect_error("shares = (\n { name = \"A\"; } );\n", 2, "has no path");
	expect_error("users = (\n { } );\n", 2, "has no name");
}

static void
test_share_names(void **state)
{
	(void)state;
	expect_error("shares = ( { name = \"Me:dia\"; path = \"/srv/a\"; } );\n", 1,
		     "contains ':'");
	expect_error("shares = ( { name = \"50%\"; path = \"/srv/a\"; } );\n", 1, "contains '%'");
	expect_error("shares = ( { name = \"a[b]\"; path = \"/srv/a\"; } );\n", 1, "contains '['");
	expect_error("shares = ( { name = \" Media\"; path = \"/srv/a\"; } );\n", 1,
		     "starts or ends with a space");
	expect_error("shares = ( { name = \"line\\nbreak\"; path = \"/srv/a\"; } );\n", 1,
		     "line break");
	expect_error("shares = ( { name = \"global\"; path = \"/srv/a\"; } );\n", 1, "reserved");
	expect_error("shares = ( { name = "
		     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		     "aaaaaa\"; path = \"/srv/a\"; } );\n",
		     1, "shorten it");
	expect_error("shares = (\n { name = \"Media\"; path = \"/srv/a\"; },\n"
		     " { name = \"MEDIA\"; path = \"/srv/b\"; } );\n",
		     3, "case-insensitive");
}

static void
test_paths(void **state)
{
	(void)state;
	expect_error("shares = ( { name = \"A\";\n path = \"srv/a\"; } );\n", 2, "not absolute");
	expect_error("shares = ( { name = \"A\";\n path = \"/\"; } );\n", 2, "whole file system");
	expect_error("shares = ( { name = \"A\";\n path = \"/srv/../etc\"; } );\n", 2, "'..'");
	expect_error("shares = ( { name = \"A\";\n path = \"/srv/a/\"; } );\n", 2, "trailing");
	/* Samba and netatalk trim white space, exports do not: one share, two directories. */
	expect_error("shares = ( { name = \"A\";\n path = \"/srv/media \"; } );\n", 2,
		     "white space at the start or end");
	expect_error("shares = ( { name = \"A\";\n path = \"/srv/ media\"; } );\n", 2,
		     "white space at the start or end");
	expect_error("shares = ( { name = \"A\";\n path = \"\t/srv/media\"; } );\n", 2,
		     "white space at the start or end");
	expect_error(
		"shares = (\n { name = \"A\"; path = \"/srv\"; },\n"
		" { name = \"TM\"; path = \"/srv/tm\"; time_machine = { enabled = true; }; } );\n",
		3, "overlap");
}

static void
test_time_machine(void **state)
{
	(void)state;
	expect_error("shares = (\n { name = \"TM\"; path = \"/srv/tm\"; protocols = [\"nfs\"]; "
		     "guest = true;\n"
		     " time_machine = { enabled = true; }; } );\n",
		     2, "neither smb nor afp");
	expect_error("shares = ( { name = \"TM\"; path = \"/srv/tm\";\n"
		     " time_machine = { enabled = true; max_size = \"2X\"; }; } );\n",
		     2, "size with a unit");
	expect_error("shares = ( { name = \"TM\"; path = \"/srv/tm\";\n"
		     " time_machine = { enabled = true; max_size = \"10M\"; }; } );\n",
		     2, "below 1G");
}

static void
test_nfs_clients(void **state)
{
	(void)state;
	expect_error("shares = ( { name = \"A\"; path = \"/srv/a\"; protocols = [\"nfs\"];\n"
		     " nfs = { clients = [\"192.168.1.0/33\"]; }; } );\n",
		     2, "not a valid network");
	expect_error("shares = ( { name = \"A\"; path = \"/srv/a\"; protocols = [\"nfs\"];\n"
		     " nfs = { clients = [\"bad host!\"]; }; } );\n",
		     2, "not an NFS client");
	expect_error(
		"shares = (\n { name = \"A\"; path = \"/srv/a\"; protocols = [\"nfs\"]; } );\n", 2,
		"to no one");

	struct diag d;
	struct model *m =
		load("shares = ( { name = \"A\"; path = \"/srv/a\"; protocols = [\"nfs\"];\n"
		     " nfs = { clients = [\"2001:db8::/64\", \"*.lan\", \"host1\", \"@ops\", "
		     "\"10.0.0.1\"]; }; } );\n",
		     &d);
	diag_print(&d, stderr);
	assert_non_null(m);
	assert_int_equal(m->shares[0].nfs_clients.n, 5);
	model_free(m);
	diag_clear(&d);
}

static void
test_protocol_values(void **state)
{
	(void)state;
	expect_error("protocols = { smb = {\n min_protocol = \"SMB4\"; }; };\n", 2, "not valid");
	expect_error("protocols = { smb = {\n signing = \"mandatroy\"; }; };\n", 2,
		     "did you mean 'mandatory'");
	expect_error("protocols = { smb = {\n encryption = \"always\"; }; };\n", 2, "not valid");
	expect_error("protocols = { nfs = {\n server = \"knfsd\"; }; };\n", 2, "not valid");
	expect_error("protocols = { nfs = { versions = [\n 2 ]; }; };\n", 2, "must be 3 or 4");
}

static void
test_mtu(void **state)
{
	(void)state;
	expect_error("network = { interface = \"eth0\";\n mtu = 9300; };\n", 2, "out of range");
	expect_error("network = { interface = \"eth0\";\n mtu = 100; };\n", 2, "out of range");
	expect_error("network = { interface = \"eth0\";\n mtu = \"jumbo\"; };\n", 2, "\"auto\"");

	struct diag d;
	struct model *m = load("network = { interface = \"eth0\"; mtu = 9000; };\n", &d);
	assert_non_null(m);
	assert_int_equal(m->network.mtu_mode, MTU_FIXED);
	assert_int_equal(m->network.mtu, 9000);
	model_free(m);
	diag_clear(&d);
}

static void
test_users(void **state)
{
	(void)state;
	expect_error(
		"users = ( { name = \"alice\"; } );\n"
		"shares = ( { name = \"A\"; path = \"/srv/a\";\n valid_users = [\"alcie\"]; } );\n",
		3, "did you mean 'alice'");
	expect_error(
		"users = ( { name = \"alice\"; } );\n"
		"shares = ( { name = \"A\"; path = \"/srv/a\";\n valid_users = [\"zed\"]; } );\n",
		3, "not in users");
	expect_error("users = ( { name = \"Alice Smith\"; } );\n", 1, "not a valid user name");
	expect_error("users = ( { name = \"alice\"; },\n { name = \"alice\"; } );\n", 2, "twice");
}

static void
test_profile_name(void **state)
{
	(void)state;
	expect_error("\n\nprofile = \"timemachien\";\n", 3, "did you mean 'timemachine'");
	expect_error("profile = \"../../etc/x\";\n", 1, "unknown profile");
}

static void
test_unsafe_needs_allow(void **state)
{
	(void)state;
	expect_error("shares = (\n { name = \"A\"; path = \"/srv/a\"; protocols = [\"nfs\"];\n"
		     " nfs = { clients = [\"*\"]; async = true; }; } );\n",
		     2, "allow_unsafe");
}

static void
test_all_errors_in_one_run(void **state)
{
	(void)state;
	struct diag d;
	struct model *m = load("server = { wrkgroup = \"X\"; };\n"
			       "protocols = { smb = { signing = \"nope\"; }; };\n"
			       "shares = ( { name = \"a/b\"; path = \"rel\"; } );\n",
			       &d);
	assert_null(m);
	assert_int_equal(d.errors, 4);
	assert_diag(&d, 1, "wrkgroup");
	assert_diag(&d, 2, "signing");
	assert_diag(&d, 3, "contains '/'");
	assert_diag(&d, 3, "not absolute");
	diag_clear(&d);
}

static void
test_presets_all_load(void **state)
{
	(void)state;
	size_t i;

	for (i = 0; profile_presets[i]; i++) {
		struct diag d;
		char text[128];
		struct model *m;

		snprintf(text, sizeof(text), "profile = \"%s\";\n", profile_presets[i]);
		m = load(text, &d);
		diag_print(&d, stderr);
		assert_non_null(m);
		model_free(m);
		diag_clear(&d);
	}
}

static void
test_knobs_pinned(void **state)
{
	(void)state;
	struct diag d;
	struct model *m = load("shares = ( { name = \"A\"; path = \"/srv/a\"; } );\n"
			       "tuning = { knobs = {\n"
			       "  smb = { use_sendfile = true;\n"
			       "    aio_read_size = \"1m\"; socket_options = \"tcp_nodelay\"; };\n"
			       "  sys = { rmem_max = 16777216; tcp_rmem = \"4K 128K 16M\"; };\n"
			       "}; };\n",
			       &d);

	diag_print(&d, stderr);
	assert_non_null(m);
	assert_int_equal(d.n, 0);
	assert_string_equal(knob_value(m, KNOB_SMB_USE_SENDFILE), "yes");
	assert_int_equal(knob_source(m, KNOB_SMB_USE_SENDFILE), KNOB_CONFIG);
	assert_int_equal(m->knobs[KNOB_SMB_USE_SENDFILE].loc.line, 3);
	assert_string_equal(m->knobs[KNOB_SMB_USE_SENDFILE].loc.file, "test.conf");
	assert_string_equal(knob_value(m, KNOB_SMB_AIO_READ_SIZE), "1M");
	assert_int_equal(m->knobs[KNOB_SMB_AIO_READ_SIZE].loc.line, 4);
	assert_string_equal(knob_value(m, KNOB_SMB_SOCKET_OPTIONS), "TCP_NODELAY");
	assert_string_equal(knob_value(m, KNOB_SYS_RMEM_MAX), "16M");
	assert_string_equal(knob_value(m, KNOB_SYS_TCP_RMEM), "4096 131072 16777216");
	assert_null(knob_value(m, KNOB_SMB_STRICT_SYNC));
	assert_int_equal(knob_source(m, KNOB_SMB_STRICT_SYNC), KNOB_UNSET);
	model_free(m);
	diag_clear(&d);
}

static void
test_knobs_errors(void **state)
{
	(void)state;
	struct diag d;
	struct model *m;

	expect_error(
		"tuning = { knobs = {\n  smb = { use_sendfil = \"yes\"; }; }; };\n", 2,
		"unknown key 'use_sendfil' in tuning.knobs.smb — did you mean 'use_sendfile'?");
	expect_error("tuning = { knobs = {\n  smbb = { }; }; };\n", 2,
		     "unknown key 'smbb' in tuning.knobs — did you mean 'smb'?");
	expect_error("tuning = { knobs = { smb = {\n  aio_read_size = \"lots\"; }; }; };\n", 2,
		     "tuning.knobs.smb.aio_read_size 'lots' is not a size — write e.g.");
	expect_error("tuning = { knobs = { smb = {\n  use_sendfile = \"maybe\"; }; }; };\n", 2,
		     "'maybe' is not valid — use one of: no, yes");
	expect_error("tuning = { knobs = { nfs = {\n  threads = 1.5; }; }; };\n", 2,
		     "is a decimal number — write a quoted value");
	expect_error("tuning = { knobs = { sys = {\n  rmem_max = true; }; }; };\n", 2,
		     "tuning.knobs.sys.rmem_max is true/false");
	expect_error("tuning = { knobs = { net = {\n  mtu = 9000; }; }; };\n", 2,
		     "the MTU is network.mtu's");
	expect_error("tuning = {\n  knobs = \"fast\"; };\n", 2, "make it a group");
	/* unsafe pinned without allow_unsafe: error at the knob's line */
	expect_error("shares = ( { name = \"A\"; path = \"/srv/a\"; } );\n"
		     "tuning = { knobs = { smb = {\n  strict_sync = \"no\"; }; }; };\n",
		     3,
		     "tuning.knobs.smb.strict_sync = no may lose data on power loss — set "
		     "tuning.allow_unsafe = true");
	/* below the configured signing */
	expect_error("protocols = { smb = { signing = \"required\"; }; };\n"
		     "tuning = { knobs = { smb = {\n  server_signing = \"default\"; }; }; };\n",
		     3, "weaker than protocols.smb.signing = \"required\"");
	/* a version the config does not serve */
	expect_error("protocols = { nfs = { server = \"ganesha\"; versions = [4]; }; };\n"
		     "tuning = { knobs = { nfs = {\n  versions = \"3,4\"; }; }; };\n",
		     3, "does not list");
	/* all in one run */
	m = load("tuning = { knobs = {\n"
		 "  smb = { aio_read_size = \"x\";\n"
		 "    bogus = 1; };\n"
		 "  afp = { dsireadbuf = 0; }; }; };\n",
		 &d);
	assert_null(m);
	assert_int_equal(d.errors, 3);
	assert_diag(&d, 2, "aio_read_size");
	assert_diag(&d, 3, "unknown key 'bogus'");
	assert_diag(&d, 4, "1 to 128");
	diag_clear(&d);
	/* a knob of a protocol nothing uses is a warning, not an error */
	m = load("protocols = { afp = { enabled = false; }; };\n"
		 "tuning = { knobs = { afp = {\n  dsireadbuf = 24; }; }; };\n",
		 &d);
	assert_non_null(m);
	assert_int_equal(d.warnings, 1);
	assert_diag(&d, 3, "has no effect");
	model_free(m);
	diag_clear(&d);
}

static void
test_nfs_async_folds_into_knob(void **state)
{
	(void)state;
	struct diag d;
	struct model *m =
		load("tuning = { allow_unsafe = true; };\n"
		     "shares = ( { name = \"A\"; path = \"/srv/a\"; protocols = [\"nfs\"];\n"
		     "  nfs = { clients = [\"*\"]; async = true; }; },\n"
		     "  { name = \"B\"; path = \"/srv/b\"; protocols = [\"nfs\"]; nfs = { clients "
		     "= [\"*\"]; }; } );\n",
		     &d);

	assert_non_null(m);
	assert_true(m->shares[0].nfs_async_set);
	assert_true(knob_export_async(m, 0));
	assert_false(m->shares[1].nfs_async_set);
	assert_false(knob_export_async(m, 1));
	model_free(m);
	diag_clear(&d);
}

/* tuned.conf over nastune.conf: tuned values fill what the config leaves unset. */
static void
test_tuned_overlay(void **state)
{
	(void)state;
	struct diag d;
	struct model *m = load("shares = ( { name = \"A\"; path = \"/srv/a\"; } );\n"
			       "tuning = { knobs = { smb = {\n  use_sendfile = \"no\"; }; }; };\n",
			       &d);

	assert_non_null(m);
	assert_int_equal(profile_load_tuned_string(m, "tuned.conf",
						   "knobs = {\n"
						   "  smb = { use_sendfile = \"yes\";\n"
						   "    aio_write_size = \"64K\";\n"
						   "    strict_sync = \"no\"; };\n"
						   "  sys = { wmem_max = \"4M\"; };\n"
						   "};\n",
						   &d),
			 0);
	/* pinned wins, with a warning at the tuned line */
	assert_string_equal(knob_value(m, KNOB_SMB_USE_SENDFILE), "no");
	assert_int_equal(knob_source(m, KNOB_SMB_USE_SENDFILE), KNOB_CONFIG);
	assert_diag(&d, 2, "smb.use_sendfile is pinned in nastune.conf (test.conf:3)");
	/* unsafe without allow_unsafe: dropped, with a warning */
	assert_null(knob_value(m, KNOB_SMB_STRICT_SYNC));
	assert_diag(&d, 4, "may lose data on power loss");
	assert_int_equal(d.errors, 0);
	assert_int_equal(d.warnings, 2);
	/* the rest is tuned, with tuned.conf's lines */
	assert_string_equal(knob_value(m, KNOB_SMB_AIO_WRITE_SIZE), "64K");
	assert_int_equal(knob_source(m, KNOB_SMB_AIO_WRITE_SIZE), KNOB_TUNED);
	assert_string_equal(m->knobs[KNOB_SMB_AIO_WRITE_SIZE].loc.file, "tuned.conf");
	assert_int_equal(m->knobs[KNOB_SMB_AIO_WRITE_SIZE].loc.line, 3);
	assert_string_equal(knob_value(m, KNOB_SYS_WMEM_MAX), "4M");
	/* tune may not touch the pinned knob, and says why */
	{
		char why[256];

		assert_false(
			knob_allowed(m, knob_get(KNOB_SMB_USE_SENDFILE), "yes", why, sizeof(why)));
		assert_non_null(strstr(why, "pinned in nastune.conf"));
		assert_true(
			knob_allowed(m, knob_get(KNOB_SMB_AIO_WRITE_SIZE), "1M", why, sizeof(why)));
	}
	model_free(m);
	diag_clear(&d);
}

static void
test_tuned_errors(void **state)
{
	(void)state;
	struct diag d;
	struct model *m;

	m = load("shares = ( { name = \"A\"; path = \"/srv/a\"; } );\n", &d);
	assert_non_null(m);
	assert_int_equal(
		profile_load_tuned_string(m, "tuned.conf",
					  "knobs = {\n  smb = { aio_read_sise = \"1M\"; };\n"
					  "  sys = {\n    tcp_rmem = \"1 2\"; }; };\n"
					  "tuning = { };\n",
					  &d),
		-EINVAL);
	assert_int_equal(d.errors, 3);
	assert_diag(&d, 2, "did you mean 'aio_read_size'");
	assert_diag(&d, 4, "knobs.sys.tcp_rmem '1 2' is not three ascending sizes");
	assert_diag(&d, 5, "unknown key 'tuning' in tuned.conf");
	for (size_t i = 0; i < d.n; i++)
		assert_string_equal(d.v[i].file, "tuned.conf");
	diag_clear(&d);
	diag_init(&d);
	assert_int_equal(profile_load_tuned_string(m, "tuned.conf", "knobs = { smb = ;\n", &d),
			 -EINVAL);
	assert_diag(&d, 1, "fix the syntax");
	diag_clear(&d);
	/* a missing file means nothing was tuned */
	diag_init(&d);
	assert_int_equal(profile_load_tuned(m, "/nonexistent/tuned.conf", &d), 0);
	assert_int_equal(d.n, 0);
	diag_clear(&d);
	model_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_design_example),
		cmocka_unit_test(test_preset_merge),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_unknown_key_did_you_mean),
		cmocka_unit_test(test_wrong_type),
		cmocka_unit_test(test_missing_required),
		cmocka_unit_test(test_share_names),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_time_machine),
		cmocka_unit_test(test_nfs_clients),
		cmocka_unit_test(test_protocol_values),
		cmocka_unit_test(test_mtu),
		cmocka_unit_test(test_users),
		cmocka_unit_test(test_profile_name),
		cmocka_unit_test(test_unsafe_needs_allow),
		cmocka_unit_test(test_all_errors_in_one_run),
		cmocka_unit_test(test_presets_all_load),
		cmocka_unit_test(test_knobs_pinned),
		cmocka_unit_test(test_knobs_errors),
		cmocka_unit_test(test_nfs_async_folds_into_knob),
		cmocka_unit_test(test_tuned_overlay),
		cmocka_unit_test(test_tuned_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
