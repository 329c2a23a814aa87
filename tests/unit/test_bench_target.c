/* test_bench_target.c - target URLs and credentials files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_driver.h"

static void
test_smb(void **state)
{
	struct bench_target t;
	char err[256] = "";

	(void)state;
	assert_int_equal(bench_target_parse("smb://WG;alice@198.18.0.1:4455/Media/a%20b/c/", &t,
					    err, sizeof(err)),
			 0);
	assert_string_equal(t.scheme, "smb");
	assert_string_equal(t.domain, "WG");
	assert_string_equal(t.user, "alice");
	assert_string_equal(t.host, "198.18.0.1");
	assert_int_equal(t.port, 4455);
	assert_string_equal(t.share, "Media");
	assert_string_equal(t.subdir, "a b/c");
	assert_null(t.password);
	bench_target_clear(&t);

	assert_int_equal(bench_target_parse("afp://[fd00:198:18::1]/Public", &t, err, sizeof(err)),
			 0);
	assert_string_equal(t.host, "fd00:198:18::1");
	assert_int_equal(t.port, 0);
	assert_null(t.user);
	assert_string_equal(t.share, "Public");
	assert_string_equal(t.subdir, "");
	bench_target_clear(&t);
}

static void
test_nfs_file_null(void **state)
{
	struct bench_target t;
	char err[256] = "";

	(void)state;
	assert_int_equal(
		bench_target_parse("nfs://server/srv/media?version=4", &t, err, sizeof(err)), 0);
	assert_string_equal(t.share, "/srv/media");
	assert_int_equal(t.nfs_version, 4);
	assert_int_equal(t.nfs_uid, -1);
	assert_int_equal(t.nfs_gid, -1);
	bench_target_clear(&t);
	assert_int_equal(bench_target_parse("nfs://server/srv/media?uid=29001&gid=29000&version=3",
					    &t, err, sizeof(err)),
			 0);
	assert_int_equal(t.nfs_uid, 29001);
	assert_int_equal(t.nfs_gid, 29000);
	assert_int_equal(t.nfs_version, 3);
	bench_target_clear(&t);
	assert_int_equal(bench_target_parse("file:///srv/x", &t, err, sizeof(err)), 0);
	assert_string_equal(t.share, "/srv/x");
	assert_null(t.host);
	bench_target_clear(&t);
	assert_int_equal(bench_target_parse("null://", &t, err, sizeof(err)), 0);
	assert_string_equal(t.scheme, "null");
	bench_target_clear(&t);
}

static void
test_errors(void **state)
{
	static const struct {
		const char *url, *needle;
	} bad[] = {
		{ "smb://alice:secret@h/s", "password in the URL" },
		{ "ftp://h/s", "unknown scheme" },
		{ "h/s", "no scheme" },
		{ "smb://h", "no share" },
		{ "smb://h/", "no share or volume" },
		{ "smb://h:99999/s", "bad host or port" },
		{ "smb://[::1/s", "bad host or port" },
		{ "smb://h/s/../../etc", "\"..\"" },
		{ "nfs://h/x?version=5", "unknown option" },
		{ "nfs://h/x?uid=alice", "unknown option" },
		{ "nfs://h/x?uid=-1", "unknown option" },
		{ "smb://h/x?uid=1", "unknown option" },
		{ "file://relative", "absolute" },
		{ "smb://h/s%zz", "escape" },
	};
	struct bench_target t;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(bench_target_parse(bad[i].url, &t, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].needle))
			fail_msg("%s: \"%s\" lacks \"%s\"", bad[i].url, err, bad[i].needle);
		assert_null(t.url);
		/* The password never reaches the message. */
		assert_null(strstr(err, "secret"));
	}
}

static void
test_credentials(void **state)
{
	char path[] = "/tmp/nastune-cred.XXXXXX", err[256] = "";
	struct bench_target t;
	FILE *fp;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	fprintf(fp, "# lab\nusername = bob\npassword = two words \ndomain=LAB\n");
	fclose(fp);
	chmod(path, 0600);
	assert_int_equal(bench_target_parse("smb://h/s", &t, err, sizeof(err)), 0);
	assert_int_equal(bench_target_credentials(&t, path, err, sizeof(err)), 0);
	assert_string_equal(t.user, "bob");
	assert_string_equal(t.password, "two words");
	assert_string_equal(t.domain, "LAB");
	bench_target_clear(&t);

	/* The URL's user wins over the file's. */
	assert_int_equal(bench_target_parse("smb://alice@h/s", &t, err, sizeof(err)), 0);
	assert_int_equal(bench_target_credentials(&t, path, err, sizeof(err)), 0);
	assert_string_equal(t.user, "alice");
	bench_target_clear(&t);

	/* guest@ is the guest login for AFP as for SMB: no user, no password, whatever the
	 * credentials file says (it is for the other targets). */
	assert_int_equal(bench_target_parse("afp://guest@h/Public", &t, err, sizeof(err)), 0);
	assert_true(t.guest);
	assert_null(t.user);
	assert_int_equal(bench_target_credentials(&t, path, err, sizeof(err)), 0);
	assert_null(t.user);
	assert_null(t.password);
	assert_int_equal(bench_target_prompt(&t), 0); /* nothing to ask */
	assert_string_equal(t.url, "afp://guest@h/Public");
	bench_target_clear(&t);
	assert_int_equal(bench_target_parse("smb://Guest@h/s", &t, err, sizeof(err)), 0);
	assert_true(t.guest);
	assert_null(t.user);
	bench_target_clear(&t);
	assert_int_equal(bench_target_parse("afp://guests@h/s", &t, err, sizeof(err)), 0);
	assert_false(t.guest);
	assert_string_equal(t.user, "guests");
	bench_target_clear(&t);

	chmod(path, 0644);
	assert_int_equal(bench_target_parse("smb://h/s", &t, err, sizeof(err)), 0);
	assert_int_equal(bench_target_credentials(&t, path, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "chmod 600"));
	chmod(path, 0600);
	fp = fopen(path, "w");
	fprintf(fp, "username bob\n");
	fclose(fp);
	assert_int_equal(bench_target_credentials(&t, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":1:"));
	bench_target_clear(&t);
	unlink(path);
}

static bool
on_host(const char *url)
{
	struct bench_target t;
	char err[256];
	bool here;

	assert_int_equal(bench_target_parse(url, &t, err, sizeof(err)), 0);
	here = bench_target_on_this_host(&t);
	bench_target_clear(&t);
	return here;
}

/* Whose page cache a drop reaches: this machine's own addresses, not another host's. */
static void
test_on_this_host(void **state)
{
	struct ifaddrs *ifa, *i;
	char addr[INET_ADDRSTRLEN] = "", url[128];

	(void)state;
	assert_true(on_host("file:///tmp"));
	assert_true(on_host("null://x"));
	assert_true(on_host("smb://127.0.0.1/Media"));
	assert_true(on_host("nfs://localhost/srv/media"));
	/* TEST-NET-1 (RFC 5737) is never assigned to a host: bind fails, nothing is sent */
	assert_false(on_host("smb://192.0.2.1/Media"));
	assert_false(on_host("afp://alice@198.51.100.7/TM"));
	/* a non-loopback address of this namespace, when it has one, is this host */
	assert_int_equal(getifaddrs(&ifa), 0);
	for (i = ifa; i && !addr[0]; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    strcmp(i->ifa_name, "lo") != 0)
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, addr,
				  sizeof(addr));
	freeifaddrs(ifa);
	if (addr[0]) {
		snprintf(url, sizeof(url), "smb://%s/Media", addr);
		assert_true(on_host(url));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smb),	     cmocka_unit_test(test_nfs_file_null),
		cmocka_unit_test(test_errors),	     cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_on_this_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
