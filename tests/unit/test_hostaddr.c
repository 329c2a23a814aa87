/* test_hostaddr.c - this host's interface addresses: loopback's 127.0.0.1 found under "lo",
 * each family kept apart, and the numeric text matching the binary address. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hostaddr.h"
#include "unit.h"

static void
test_loopback(void **state)
{
	struct hostaddr *v;
	size_t n, i;
	int lo = 0;

	(void)state;
	assert_int_equal(hostaddr_list(AF_INET, &v, &n), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(v[i].family, AF_INET);
		assert_true(v[i].name[0] != '\0');
		if (strcmp(v[i].addr, "127.0.0.1") == 0) {
			assert_true(v[i].a.in.s_addr == htonl(INADDR_LOOPBACK));
			lo += strcmp(v[i].name, "lo") == 0;
		}
	}
	assert_int_equal(lo, 1);
	free(v);
}

static void
test_families(void **state)
{
	struct hostaddr *v4, *v6, *all;
	size_t n4, n6, n, i;

	(void)state;
	assert_int_equal(hostaddr_list(AF_INET, &v4, &n4), 0);
	assert_int_equal(hostaddr_list(AF_INET6, &v6, &n6), 0);
	assert_int_equal(hostaddr_list(AF_UNSPEC, &all, &n), 0);
	assert_int_equal(n, n4 + n6);
	for (i = 0; i < n6; i++) {
		struct in6_addr a;

		assert_int_equal(v6[i].family, AF_INET6);
		assert_int_equal(inet_pton(AF_INET6, v6[i].addr, &a), 1);
		assert_memory_equal(&a, &v6[i].a.in6, sizeof(a));
	}
	for (i = 0; i < n; i++)
		assert_true(all[i].family == AF_INET || all[i].family == AF_INET6);
	free(v4);
	free(v6);
	free(all);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_families),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
