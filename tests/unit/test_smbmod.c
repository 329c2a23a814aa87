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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Writes v into ROOT/proc/sys/kernel/io_uring_disabled. */
static void
write_switch(const char *root, const char *v)
{
	static const char *const sub[] = { "/proc", "/proc/sys", "/proc/sys/kernel" };
	char p[256];
	FILE *f;

	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", root, sub[i]);
		mkdir(p, 0755);
	}
	snprintf(p, sizeof(p), "%s/proc/sys/kernel/io_uring_disabled", root);
	assert_non_null(f = fopen(p, "w"));
	fputs(v, f);
	fclose(f);
}

/* The kernel's io_uring switch, read under a fake /proc: 2 refuses it for everyone, naming the
 * sysctl; below 2 the answer is the io_uring_setup probe's (the real kernel's here). */
static void
test_kernel_io_uring(void **state)
{
	static const char *const rm[] = { "/proc/sys/kernel/io_uring_disabled", "/proc/sys/kernel",
					  "/proc/sys", "/proc", "" };
	char root[] = "/tmp/test_smbmod.XXXXXX", why[256] = "", real[256], p[256];

	(void)state;
	assert_non_null(mkdtemp(root));
	write_switch(root, "2\n");
	assert_int_equal(smbmod_kernel_io_uring(root, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "kernel.io_uring_disabled = 2"));
	write_switch(root, "0\n");
	assert_int_equal(smbmod_kernel_io_uring(root, why, sizeof(why)),
			 smbmod_kernel_io_uring(NULL, real, sizeof(real)));
	for (size_t i = 0; i < 5; i++) {
		snprintf(p, sizeof(p), "%s%s", root, rm[i]);
		i == 0 ? unlink(p) : rmdir(p);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_kernel_io_uring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
