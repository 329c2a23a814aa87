/* test_netif.c - the pure parts of the MTU work: the don't-fragment search against a fake
 * path, and which MTU values a link may take. Real netlink and ICMP are tested in
 * tests/lab/t_mtu.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "netif.h"
#include "probe.h"

/* A path that carries up to limit bytes; 0 answers nothing at all. */
struct fake_path {
	int limit;
	int calls;
	int fail_at_call; /* return -EIO on this call (1-based); 0 never */
	int max_seen;
	int min_seen;
};

static int
fake_try(void *arg, int size)
{
	struct fake_path *f = arg;

	f->calls++;
	if (f->calls == 1 || size < f->min_seen)
		f->min_seen = size;
	if (size > f->max_seen)
		f->max_seen = size;
	if (f->fail_at_call && f->calls == f->fail_at_call)
		return -EIO;
	return f->limit > 0 && size <= f->limit;
}

static void
search_finds(int lo, int hi, int limit, int want)
{
	struct fake_path f = { .limit = limit };
	int best = -1;

	assert_int_equal(probe_search(lo, hi, fake_try, &f, &best), 0);
	assert_int_equal(best, want);
	assert_true(f.min_seen >= lo);
	assert_true(f.max_seen <= (hi > lo ? hi : lo));
	/* lo, hi, then a bisection: never more than 2 + ceil(log2(hi - lo)) + 1 probes */
	assert_true(f.calls <= 2 + 15);
}

static void
test_search_limits(void **state)
{
	(void)state;
	search_finds(PROBE_MIN_V4, 9216, 7936, 7936);  /* server 9216, client 7936 */
	search_finds(PROBE_MIN_V4, 9000, 1500, 1500);  /* the switch that drops jumbo */
	search_finds(PROBE_MIN_V4, 9000, 9000, 9000);  /* everything passes: hi at once */
	search_finds(PROBE_MIN_V4, 9000, 65535, 9000); /* the peer takes more than we send */
	search_finds(PROBE_MIN_V6, 9000, 1280, 1280);  /* only the IPv6 minimum */
	search_finds(PROBE_MIN_V6, 9000, 1281, 1281);
	search_finds(PROBE_MIN_V4, 9000, 8999, 8999);
	search_finds(PROBE_MIN_V4, PROBE_MIN_V4, 9000, PROBE_MIN_V4); /* lo == hi */
	search_finds(1500, 1400, 9000, 1500); /* hi below lo: lo is the answer */
}

static void
test_search_every_limit(void **state)
{
	int limit;

	(void)state;
	for (limit = 1280; limit <= 1600; limit++)
		search_finds(1280, 1600, limit, limit);
}

static void
test_search_fast_when_all_pass(void **state)
{
	struct fake_path f = { .limit = 9000 };
	int best;

	(void)state;
	assert_int_equal(probe_search(68, 9000, fake_try, &f, &best), 0);
	assert_int_equal(f.calls, 2); /* the minimum, then the full size */
}

static void
test_search_unreachable(void **state)
{
	struct fake_path f = { .limit = 0 };
	int best = 1234;

	(void)state;
	assert_int_equal(probe_search(68, 9000, fake_try, &f, &best), -EHOSTUNREACH);
	assert_int_equal(best, 1234); /* untouched: unreachable is not "MTU 0" */
	assert_int_equal(f.calls, 1);
}

static void
test_search_error_aborts(void **state)
{
	struct fake_path f = { .limit = 7936, .fail_at_call = 4 };
	int best = 0;

	(void)state;
	assert_int_equal(probe_search(68, 9216, fake_try, &f, &best), -EIO);
	assert_int_equal(f.calls, 4);
	f = (struct fake_path){ .limit = 7936, .fail_at_call = 1 };
	assert_int_equal(probe_search(68, 9216, fake_try, &f, &best), -EIO);
}

/* A peer with MTU own whose NIC receives up to own + slack: echoes above own come back in
 * fragments (1), up to own whole (2), above own + slack not at all (0). */
struct fake_peer {
	int own, slack, calls;
	bool blind; /* the kernel cannot tell fragments: never 2 */
};

static int
peer_try(void *arg, int size)
{
	struct fake_peer *f = arg;

	f->calls++;
	if (size > f->own + f->slack)
		return 0;
	return size <= f->own && !f->blind ? 2 : 1;
}

static void
peer_finds(int lo, int hi, int own, int slack, int want_best, int want_own)
{
	struct fake_peer f = { .own = own, .slack = slack };
	int best = -1, got = -1;

	assert_int_equal(probe_search_peer(lo, hi, peer_try, &f, &best, &got), 0);
	assert_int_equal(best, want_best);
	assert_int_equal(got, want_own);
	assert_true(f.calls <= 2 + 15 + 15);
}

/* The probe's slack is not the peer's MTU: a 1500 client passes 1504 (veth), 7936 passes 7940,
 * 9000 passes 9004; the peer's own MTU shows in its replies. */
static void
test_search_peer_own_mtu(void **state)
{
	struct fake_peer blind = { .own = 1500, .slack = 4, .blind = true };
	int best, own;

	(void)state;
	peer_finds(PROBE_MIN_V4, 9216, 1500, 4, 1504, 1500);
	peer_finds(PROBE_MIN_V4, 9216, 7936, 4, 7940, 7936);
	peer_finds(PROBE_MIN_V4, 9216, 9000, 4, 9004, 9000);
	peer_finds(PROBE_MIN_V6, 9216, 7936, 4, 7940, 7936);
	peer_finds(PROBE_MIN_V4, 9216, 1500, 7500, 9000, 1500); /* a NIC that takes jumbo */
	peer_finds(PROBE_MIN_V4, 9000, 9000, 4, 9000, 9000);	/* our side is the limit */
	peer_finds(PROBE_MIN_V4, 9000, 7936, 0, 7936, 7936);	/* no slack */
	for (int m = 1280; m <= 1600; m++)
		peer_finds(PROBE_MIN_V6, 9216, m, 4, m + 4, m);
	/* Without fragment reports the peer's MTU is unknown, not the probe's figure. */
	assert_int_equal(probe_search_peer(68, 9216, peer_try, &blind, &best, &own), 0);
	assert_int_equal(best, 1504);
	assert_int_equal(own, 0);
}

static struct netif_info
veth(const char *name, int mtu)
{
	struct netif_info in;

	memset(&in, 0, sizeof(in));
	snprintf(in.name, sizeof(in.name), "%s", name);
	snprintf(in.kind, sizeof(in.kind), "veth");
	snprintf(in.driver, sizeof(in.driver), "veth");
	in.mtu = mtu;
	in.min_mtu = 68;
	in.max_mtu = 65535;
	return in;
}

static void
test_allowed_limits(void **state)
{
	struct netif_info in = veth("lab0", 1500);
	char err[256];

	(void)state;
	assert_int_equal(netif_mtu_allowed(&in, 9000, err, sizeof(err)), 0);
	assert_int_equal(netif_mtu_allowed(&in, 68, err, sizeof(err)), 0);
	assert_int_equal(netif_mtu_allowed(&in, 65535, err, sizeof(err)), 0);
	assert_int_equal(netif_mtu_allowed(&in, 65536, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "68..65535"));
	assert_non_null(strstr(err, "lab0"));
	assert_int_equal(netif_mtu_allowed(&in, 67, err, sizeof(err)), -ERANGE);
	assert_int_equal(netif_mtu_allowed(&in, 0, err, sizeof(err)), -ERANGE);
	assert_int_equal(netif_mtu_allowed(&in, -1, err, sizeof(err)), -ERANGE);
	in.max_mtu = 9000; /* a NIC with a real ceiling */
	snprintf(in.driver, sizeof(in.driver), "e1000e");
	assert_int_equal(netif_mtu_allowed(&in, 9216, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "68..9000"));
	assert_non_null(strstr(err, "e1000e"));
	in.min_mtu = in.max_mtu = 0; /* the kernel's "no limit" (lo) */
	assert_int_equal(netif_mtu_allowed(&in, 65536, err, sizeof(err)), 0);
}

static void
test_allowed_stacked_and_members(void **state)
{
	struct netif_info vlan = veth("eth0.10", 1500);
	struct netif_info member = veth("eth1", 1500);
	struct netif_info port = veth("eth2", 1500);
	char err[256];

	(void)state;
	snprintf(vlan.kind, sizeof(vlan.kind), "vlan");
	snprintf(vlan.parent, sizeof(vlan.parent), "eth0");
	vlan.parent_mtu = 1500;
	assert_int_equal(netif_mtu_allowed(&vlan, 1500, err, sizeof(err)), 0);
	assert_int_equal(netif_mtu_allowed(&vlan, 1496, err, sizeof(err)), 0);
	assert_int_equal(netif_mtu_allowed(&vlan, 9000, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "eth0"));
	assert_non_null(strstr(err, "parent"));
	vlan.parent_mtu = 9000;
	assert_int_equal(netif_mtu_allowed(&vlan, 9000, err, sizeof(err)), 0);

	snprintf(member.master, sizeof(member.master), "bond0");
	snprintf(member.master_kind, sizeof(member.master_kind), "bond");
	assert_int_equal(netif_mtu_allowed(&member, 9000, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "bond0"));

	/* A bridge port may change on its own. */
	snprintf(port.master, sizeof(port.master), "br0");
	snprintf(port.master_kind, sizeof(port.master_kind), "bridge");
	assert_int_equal(netif_mtu_allowed(&port, 9000, err, sizeof(err)), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_search_limits),
		cmocka_unit_test(test_search_every_limit),
		cmocka_unit_test(test_search_fast_when_all_pass),
		cmocka_unit_test(test_search_unreachable),
		cmocka_unit_test(test_search_error_aborts),
		cmocka_unit_test(test_search_peer_own_mtu),
		cmocka_unit_test(test_allowed_limits),
		cmocka_unit_test(test_allowed_stacked_and_members),
	};

	return cmocka_run_group_tests_name("netif", tests, NULL, NULL);
}
