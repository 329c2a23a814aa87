/* test_smbmod.c - the "vfs objects" lines of a smb.conf read as Samba reads them, checked
 * against the smbd installed here (skipped without one): blanks, commas and semicolons
 * separate modules, quotes are dropped, parameter names are case-insensitive. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "smbmod.h"

static int
check(const char *conf, char *err, size_t errlen)
{
	return smbmod_check("smb.conf", conf, strlen(conf), err, errlen);
}

static void
test_lists(void **state)
{
	char err[512] = "";
	int rc;

	(void)state;
	rc = check("[x]\n\tvfs objects = catia fruit streams_xattr\n", err, sizeof(err));
	if (rc == 1 || (rc == -ENOENT && strstr(err, "fruit"))) {
		skip(); /* no smbd, or no samba-vfs-modules: nothing to read the lists against */
		return;
	}
	assert_int_equal(rc, 0);
	/* testparm reads each of these as catia, fruit and streams_xattr. */
	assert_int_equal(
		check("[x]\n\tvfs objects = catia;fruit,\"streams_xattr\"\n", err, sizeof(err)), 0);
	assert_int_equal(
		check("[x]\n\tvfs objects = catia , fruit ;streams_xattr\n", err, sizeof(err)), 0);
	/* Built into smbd: no .so to find. */
	assert_int_equal(check("[x]\n\tvfs objects = default posixacl\n", err, sizeof(err)), 0);
	/* A module that exists nowhere is refused, whatever the spelling of the name. */
	err[0] = '\0';
	assert_int_equal(check("[x]\n\tVFS Objects = catia;nastune_nonesuch\n", err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "smb.conf:2: VFS module \"nastune_nonesuch\""));
	assert_non_null(strstr(err, SMBMOD_PACKAGE));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
