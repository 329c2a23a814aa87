/* test_served.c - what one answer proves about a share (served_judge): a refusal counts only
 * when it comes from the share itself, not from a session or login refused before any share
 * was named (that answer is the same for a share that exists and one that does not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "model.h"
#include "served.h"

static void
test_smb(void **state)
{
	(void)state;
	assert_int_equal(served_judge("smb", 0, "connected as guest"), SERVED_YES);
	/* Tree connect refused: smbd found the share (valid users). */
	assert_int_equal(served_judge("smb", -EACCES,
				      "127.0.0.1/Media: connect: access denied "
				      "for guest (not a valid user of the share?)"),
			 SERVED_YES);
	/* Session refused (map to guest = never, no anonymous): nothing about the share. */
	assert_int_equal(served_judge("smb", -EPERM,
				      "127.0.0.1/Gone: connect: logon failure "
				      "for guest (guest access not allowed?)"),
			 SERVED_SKIPPED);
	assert_int_equal(served_judge("smb", -ENODEV, "no share"), SERVED_NO);
	assert_int_equal(served_judge("smb", -ECONNREFUSED, "refused"), SERVED_NO);
}

static void
test_nfs(void **state)
{
	(void)state;
	assert_int_equal(served_judge("nfs", 0, ""), SERVED_YES);
	assert_int_equal(served_judge("nfs", -EACCES, "h: no export \"/x\" (NFSv3): ACCES"),
			 SERVED_NO);
	assert_int_equal(served_judge("nfs", -EACCES,
				      "h:/x: the server refuses this client "
				      "(NFSv3): ACCES"),
			 SERVED_YES);
	assert_int_equal(served_judge("nfs", -EIO, "h:/x: the server refuses this client"),
			 SERVED_YES);
	assert_int_equal(served_judge("nfs", -ENOENT, "h: no export \"/x\""), SERVED_NO);
}

static void
test_afp(void **state)
{
	(void)state;
	assert_int_equal(served_judge("afp", 0, ""), SERVED_YES);
	assert_int_equal(served_judge("afp", -EACCES,
				      "127.0.0.1/Vol: open volume: access denied "
				      "for guest (not a valid user of the volume?)"),
			 SERVED_YES);
	/* A server offering no guest login refuses before any volume is named. */
	assert_int_equal(served_judge("afp", -EACCES,
				      "127.0.0.1/Gone: login: the server offers "
				      "no guest login (UAMs: DHX2)"),
			 SERVED_SKIPPED);
	assert_int_equal(served_judge("afp", -EPERM,
				      "127.0.0.1/Gone: login: logon failure for "
				      "guest"),
			 SERVED_SKIPPED);
	assert_int_equal(served_judge("afp", -ENODEV, "127.0.0.1/Gone: open volume: no volume"),
			 SERVED_NO);
}

/* smbd binds only to server.interfaces: with no IPv4 address among them (an IPv6-only
 * interface, or one without its address yet) there is nowhere to ask, and asking 127.0.0.1
 * would be refused for every share. Not proven, not "not served" (which rolls back). */
static void
test_smb_no_address(void **state)
{
	char *ifs[] = { "nastune-none0" };
	struct share sh = { .name = "Data", .path = "/srv/data", .protocols = PROTO_SMB };
	struct model m = { 0 };
	struct served_proof *v = NULL;
	size_t n = 0;

	(void)state;
	m.server.interfaces.v = ifs;
	m.server.interfaces.n = 1;
	m.shares = &sh;
	m.n_shares = 1;
	assert_int_equal(served_prove(&m, PROTO_SMB, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].state, SERVED_SKIPPED);
	assert_non_null(strstr(v[0].answer, "server.interfaces"));
	served_proofs_free(v, n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smb),
		cmocka_unit_test(test_nfs),
		cmocka_unit_test(test_afp),
		cmocka_unit_test(test_smb_no_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
