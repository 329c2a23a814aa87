/* test_apply_key.c - a tune's trials run testparm once per smb.conf they install, keyed by what
 * testparm reads: the text and the files it includes. A site's local.conf edited during a
 * tune must not inherit the verdict its old text earned. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "fsutil.h"
#include "render.h"

static void
key_of(const char *text, char out[65])
{
	struct rfile f = { .path = "/etc/samba/smb.conf",
			   .data = (char *)text,
			   .len = strlen(text),
			   .svc = SVC_SMB };

	apply_testparm_key(&f, out);
}

static void
test_key(void **state)
{
	char dir[] = "/tmp/test_apply_key.XXXXXX", inc[256], text[512], k1[65], k2[65], k3[65],
	     k4[65];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(inc, sizeof(inc), "%s/local.conf", dir);
	snprintf(text, sizeof(text), "[global]\n\tworkgroup = W\n   Include =  %s \n", inc);

	/* no included file yet, then one, then another text in it */
	key_of(text, k1);
	assert_int_equal(fs_write_atomic(inc, "\tcomment = a\n", 13, 0644, 0), 0);
	key_of(text, k2);
	assert_string_not_equal(k1, k2);
	assert_int_equal(fs_write_atomic(inc, "\tbogus parameter = 1\n", 21, 0644, 0), 0);
	key_of(text, k3);
	assert_string_not_equal(k2, k3);
	/* the same text and the same include: the same key */
	key_of(text, k4);
	assert_string_equal(k3, k4);
	/* another text: another key */
	key_of("[global]\n\tworkgroup = X\n", k4);
	assert_string_not_equal(k3, k4);
	/* a commented include names nothing */
	snprintf(text, sizeof(text), "[global]\n#include = %s\n", inc);
	key_of(text, k1);
	unlink(inc);
	key_of(text, k2);
	assert_string_equal(k1, k2);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
