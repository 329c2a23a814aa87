/* test_served.c - what one answer proves about a share (served_judge): a refusal counts only
 * when it comes from the share itself, not from a session or login refused before any share
 * was named (that answer is the same for a share that exists and one that does not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>

#include "served.h"

static void
test_smb(void **state)
{
	(void)state;
	assert_int_equal(served_judge("smb", 0, "connected as guest"), SERVED_YES);
	/* Tree connect refused: smbd found the share (valid users). */
	assert_int_equal(served_judge("smb", -EACCES, "127.0.0.1/Media: connect: access denied "
				      "for guest (not a valid user of the share?)"), SERVED_YES);
	/* Session refused (map to guest = never, no anonymous): nothing about the share. */
	assert_int_equal(served_judge("smb", -EPERM, "127.0.0.1/Gone: connect: logon failure "
				      "for guest (guest access not allowed?)"), SERVED_SKIPPED);
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
	assert_int_equal(served_judge("nfs", -EACCES, "h:/x: the server refuses this client "
				      "(NFSv3): ACCES"), SERVED_YES);
	assert_int_equal(served_judge("nfs", -EIO, "h:/x: the server refuses this client"),
			 SERVED_YES);
	assert_int_equal(served_judge("nfs", -ENOENT, "h: no export \"/x\""), SERVED_NO);
}

static void
test_afp(void **state)
{
	(void)state;
	assert_int_equal(served_judge("afp", 0, ""), SERVED_YES);
	assert_int_equal(served_judge("afp", -EACCES, "127.0.0.1/Vol: open volume: access denied "
				      "for guest (not a valid user of the volume?)"), SERVED_YES);
	/* A server offering no guest login refuses before any volume is named. */
	assert_int_equal(served_judge("afp", -EACCES, "127.0.0.1/Gone: login: the server offers "
				      "no guest login (UAMs: DHX2)"), SERVED_SKIPPED);
	assert_int_equal(served_judge("afp", -EPERM, "127.0.0.1/Gone: login: logon failure for "
				      "guest"), SERVED_SKIPPED);
	assert_int_equal(served_judge("afp", -ENODEV, "127.0.0.1/Gone: open volume: no volume"),
			 SERVED_NO);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smb),
		cmocka_unit_test(test_nfs),
		cmocka_unit_test(test_afp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
