/* test_hwinfo.c - the hardware fingerprint against a fake sys/proc tree, the diff, and one
 * read of the real machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "hwinfo.h"
#include "xmalloc.h"

#define MEM_16G "MemTotal:       16318412 kB\nMemFree:         9120000 kB\n"

static const char fake_text[] =
	"cpu system count=4 model=AMD_Ryzen_5_5600G_with_Radeon_Graphics\n"
	"disk nvme0n1 model=Samsung_SSD_980_PRO_1TB rotational=0 fw=5B2QGXA7\n"
	"disk sda model=ST4000VN008-2DR166 rotational=1 fw=SC60\n"
	"mem system total=16GiB\n"
	"nic eth0 driver=igb fw=3.25,_0x800005cc\n"
	"nic eth1 driver=ixgbe fw=0x800003e2\n"
	"nic veth0 driver=unknown fw=unknown\n";

/* Writes root/rel, creating the directories on the way. */
static void
put(const char *root, const char *rel, const char *content)
{
	char *path = xasprintf("%s/%s", root, rel);
	char *dir = xstrdup(path);

	*strrchr(dir, '/') = '\0';
	assert_int_equal(fs_mkdir_p(dir, 0755), 0);
	assert_int_equal(fs_write_atomic(path, content, strlen(content), 0644, 0), 0);
	free(dir);
	free(path);
}

static void
put_link(const char *root, const char *rel, const char *target)
{
	char *path = xasprintf("%s/%s", root, rel);
	char *dir = xstrdup(path);

	*strrchr(dir, '/') = '\0';
	assert_int_equal(fs_mkdir_p(dir, 0755), 0);
	assert_int_equal(symlink(target, path), 0);
	free(dir);
	free(path);
}

static void
drop(const char *root, const char *rel)
{
	char *path = xasprintf("%s/%s", root, rel);

	assert_int_equal(unlink(path), 0);
	free(path);
}

/* Two NICs with drivers and firmware, a veth, lo; two disks and the pseudo-disks that must
 * not count; a four-CPU cpuinfo; 15.56 GiB of MemTotal. */
static int
setup(void **state)
{
	char *root = xstrdup("/tmp/nastune-hwinfo.XXXXXX");

	if (!mkdtemp(root))
		return -1;
	put(root, "sys/class/net/lo/speed", "");
	put(root, "sys/class/net/eth0/speed", "1000\n");
	put(root, "sys/class/net/eth0/fw_version", "3.25, 0x800005cc\n");
	put_link(root, "sys/class/net/eth0/device/driver", "../../../bus/pci/drivers/igb");
	put(root, "sys/class/net/eth1/speed", "10000\n");
	put(root, "sys/class/net/eth1/fw_version", "0x800003e2\n");
	put_link(root, "sys/class/net/eth1/device/driver", "../../../bus/pci/drivers/ixgbe");
	put(root, "sys/class/net/veth0/speed", "-1\n");

	put(root, "sys/block/sda/device/model", "ST4000VN008-2DR166  \n");
	put(root, "sys/block/sda/device/rev", "SC60\n");
	put(root, "sys/block/sda/queue/rotational", "1\n");
	put(root, "sys/block/nvme0n1/device/model", "Samsung SSD 980 PRO 1TB                 \n");
	put(root, "sys/block/nvme0n1/device/firmware_rev", "5B2QGXA7\n");
	put(root, "sys/block/nvme0n1/queue/rotational", "0\n");
	put(root, "sys/block/loop0/queue/rotational", "1\n");
	put(root, "sys/block/ram0/queue/rotational", "0\n");
	put(root, "sys/block/zram0/queue/rotational", "0\n");
	put(root, "sys/block/dm-0/queue/rotational", "0\n");
	put(root, "sys/block/sda/removable", "0\n");
	put(root, "sys/block/nvme0n1/removable", "0\n");

	put(root, "sys/devices/system/cpu/online", "0-3\n");
	put(root, "proc/cpuinfo",
	    "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
	    "model name\t: AMD Ryzen 5 5600G with Radeon Graphics\n\n"
	    "processor\t: 1\nmodel name\t: AMD Ryzen 5 5600G with Radeon Graphics\n\n"
	    "processor\t: 2\nmodel name\t: AMD Ryzen 5 5600G with Radeon Graphics\n\n"
	    "processor\t: 3\nmodel name\t: AMD Ryzen 5 5600G with Radeon Graphics\n\n");
	put(root, "proc/meminfo", MEM_16G);
	*state = root;
	return 0;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int
teardown(void **state)
{
	char *root = *state;
	int rc = nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);

	free(root);
	return rc;
}

/* hwinfo_read + hwinfo_text + hwinfo_hash in one go. */
static char *
read_text(const char *root, char hash[65])
{
	struct hwinfo hw;
	char *text;

	assert_int_equal(hwinfo_read(root, &hw), 0);
	text = hwinfo_text(&hw);
	if (hash)
		hwinfo_hash(&hw, hash);
	hwinfo_clear(&hw);
	return text;
}

static void
test_fake_text(void **state)
{
	struct hwinfo hw;
	char *text, *again, h1[65], h2[65];
	size_t i;

	assert_int_equal(hwinfo_read(*state, &hw), 0);
	assert_int_equal(hw.n, 7);
	for (i = 1; i < hw.n; i++) {
		int c = strcmp(hw.items[i - 1].kind, hw.items[i].kind);

		assert_true(c < 0 ||
			    (c == 0 && strcmp(hw.items[i - 1].name, hw.items[i].name) < 0));
	}
	text = hwinfo_text(&hw);
	assert_string_equal(text, fake_text);
	hwinfo_hash(&hw, h1);
	assert_int_equal(strlen(h1), 64);
	assert_int_equal(strspn(h1, "0123456789abcdef"), 64);
	hwinfo_clear(&hw);
	assert_null(hw.items);
	assert_int_equal(hw.n, 0);
	hwinfo_clear(&hw); /* twice is harmless */

	again = read_text(*state, h2);
	assert_string_equal(again, text);
	assert_string_equal(h1, h2);
	free(again);
	free(text);
}

/* sha256sum of fake_text, computed outside the code under test. */
static void
test_hash_is_sha256_of_text(void **state)
{
	char *root = *state, *path = xasprintf("%s/text", root), *cmd, line[128] = "";
	char hash[65];
	FILE *p;

	free(read_text(root, hash));
	put(root, "text", fake_text);
	cmd = xasprintf("sha256sum '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	pclose(p);
	line[64] = '\0';
	assert_string_equal(hash, line);
	free(cmd);
	free(path);
}

static void
test_disk_fw_change(void **state)
{
	char *root = *state, *before, *after, *diff, h1[65], h2[65];

	before = read_text(root, h1);
	put(root, "sys/block/sda/device/rev", "SC61\n");
	after = read_text(root, h2);
	assert_string_not_equal(h1, h2);
	diff = hwinfo_diff(before, after);
	assert_string_equal(diff, "~ disk sda: fw=SC60 -> fw=SC61\n");
	free(diff);
	diff = hwinfo_diff(after, before);
	assert_string_equal(diff, "~ disk sda: fw=SC61 -> fw=SC60\n");
	free(diff);
	free(before);
	free(after);
}

static void
test_mem_rounding(void **state)
{
	char *root = *state, *before, *after, *diff, h1[65], h2[65];

	before = read_text(root, h1);
	/* a few MB either way: still 16 GiB */
	put(root, "proc/meminfo", "MemTotal:       16312268 kB\n");
	after = read_text(root, h2);
	assert_string_equal(h1, h2);
	free(after);
	put(root, "proc/meminfo", "MemTotal:       16330700 kB\n");
	after = read_text(root, h2);
	assert_string_equal(h1, h2);
	free(after);

	put(root, "proc/meminfo", "MemTotal:       32827580 kB\n");
	after = read_text(root, h2);
	assert_string_not_equal(h1, h2);
	diff = hwinfo_diff(before, after);
	assert_string_equal(diff, "~ mem system: total=16GiB -> total=32GiB\n");
	free(diff);
	free(after);
	free(before);
}

static void
test_nic_and_disk_come_and_go(void **state)
{
	char *root = *state, *before, *after, *diff, *want;

	before = read_text(root, NULL);
	put(root, "sys/class/net/eth2/speed", "2500\n");
	put_link(root, "sys/class/net/eth2/device/driver", "../../../bus/pci/drivers/igc");
	put(root, "sys/class/net/eth0/speed", "100\n");
	drop(root, "sys/class/net/eth0/fw_version");
	drop(root, "sys/block/sda/device/rev");
	drop(root, "sys/block/sda/device/model");
	drop(root, "sys/block/sda/queue/rotational");
	after = read_text(root, NULL);
	diff = hwinfo_diff(before, after);
	want = "~ disk sda: model=ST4000VN008-2DR166 -> model=unknown, rotational=1 -> "
	       "rotational=unknown, fw=SC60 -> fw=unknown\n"
	       "~ nic eth0: fw=3.25,_0x800005cc -> fw=unknown\n"
	       "+ nic eth2 driver=igc fw=unknown\n";
	assert_string_equal(diff, want);
	free(diff);
	diff = hwinfo_diff(after, before);
	assert_non_null(strstr(diff, "- nic eth2 driver=igc fw=unknown\n"));
	free(diff);
	diff = hwinfo_diff(after, after);
	assert_string_equal(diff, "");
	free(diff);
	free(before);
	free(after);
}

/* What changes on an ordinary boot is not hardware: a link that renegotiated or is down, a
 * USB stick or a card left in a reader. The hash stays; a real change still shows. */
static void
test_boot_noise_ignored(void **state)
{
	char *root = *state, *before, *after, *diff, h1[65], h2[65];

	before = read_text(root, h1);
	put(root, "sys/class/net/eth0/speed", "100\n"); /* renegotiated */
	put(root, "sys/class/net/eth1/speed", "-1\n");	/* cable out: link down */
	put(root, "sys/class/net/eth1/operstate", "down\n");
	put(root, "sys/block/sdb/device/model", "Cruzer Blade\n"); /* a USB stick */
	put(root, "sys/block/sdb/queue/rotational", "0\n");
	put(root, "sys/block/sdb/removable", "1\n");
	put(root, "sys/block/sr0/device/model", "DVD-RW\n");
	put(root, "sys/block/sr0/removable", "1\n");
	after = read_text(root, h2);
	assert_string_equal(after, before);
	assert_string_equal(h1, h2);
	free(after);

	/* the same stick seen as a fixed disk is a disk */
	put(root, "sys/block/sdb/removable", "0\n");
	after = read_text(root, h2);
	assert_string_not_equal(h1, h2);
	diff = hwinfo_diff(before, after);
	assert_string_equal(diff, "+ disk sdb model=Cruzer_Blade rotational=0 fw=unknown\n");
	free(diff);
	free(after);
	free(before);
}

static void
test_cpu_count_fallback(void **state)
{
	char *root = *state, *text;

	put(root, "sys/devices/system/cpu/online", "0-1,3,6-7\n");
	text = read_text(root, NULL);
	assert_non_null(strstr(text, "cpu system count=5 model=AMD_Ryzen"));
	free(text);
	put(root, "sys/devices/system/cpu/online", "garbage\n");
	text = read_text(root, NULL);
	assert_non_null(strstr(text, "cpu system count=4 "));
	free(text);
	drop(root, "sys/devices/system/cpu/online");
	text = read_text(root, NULL);
	assert_non_null(strstr(text, "cpu system count=4 "));
	free(text);
	put(root, "proc/cpuinfo", "processor\t: 0\nHardware\t: BCM2835\n");
	text = read_text(root, NULL);
	assert_non_null(strstr(text, "cpu system count=1 model=unknown\n"));
	free(text);
}

static void
test_missing_trees(void **state)
{
	char *root = *state, *path;
	struct hwinfo hw = { (struct hwinfo_item *)&hw, 99 }; /* must be reset */

	drop(root, "proc/meminfo");
	assert_int_equal(hwinfo_read(root, &hw), -ENOENT);
	assert_null(hw.items);
	assert_int_equal(hw.n, 0);
	put(root, "proc/meminfo", "MemFree: 12 kB\n");
	assert_int_equal(hwinfo_read(root, &hw), -EINVAL);
	assert_int_equal(hw.n, 0);
	put(root, "proc/meminfo", MEM_16G);

	/* no sys/ at all: only cpu and mem */
	path = xasprintf("%s/sys", root);
	assert_int_equal(nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	free(path);
	assert_int_equal(hwinfo_read(root, &hw), 0);
	assert_int_equal(hw.n, 2);
	assert_string_equal(hw.items[0].kind, "cpu");
	assert_string_equal(hw.items[0].value,
			    "count=4 model=AMD_Ryzen_5_5600G_with_Radeon_Graphics");
	assert_string_equal(hw.items[1].kind, "mem");
	hwinfo_clear(&hw);
}

static void
test_diff_pure(void **state)
{
	char *d;

	(void)state;
	d = hwinfo_text(NULL);
	assert_string_equal(d, "");
	free(d);
	d = hwinfo_diff(NULL, NULL);
	assert_string_equal(d, "");
	free(d);
	d = hwinfo_diff(fake_text, fake_text);
	assert_string_equal(d, "");
	free(d);
	d = hwinfo_diff(NULL, "mem system total=8GiB\n");
	assert_string_equal(d, "+ mem system total=8GiB\n");
	free(d);
	d = hwinfo_diff("mem system total=8GiB\n", "");
	assert_string_equal(d, "- mem system total=8GiB\n");
	free(d);
	/* token added and removed; the order of input lines does not matter */
	d = hwinfo_diff("nic b driver=x fw=1\nnic a driver=y\n",
			"nic a driver=y maxmtu=9000\nnic b driver=x\n");
	assert_string_equal(d, "~ nic a: +maxmtu=9000\n~ nic b: -fw=1\n");
	free(d);
	/* same tokens, other spacing: shown whole rather than as an empty change */
	d = hwinfo_diff("nic a x=1 y=2\n", "nic a y=2 x=1\n");
	assert_string_equal(d, "~ nic a: x=1 y=2 -> y=2 x=1\n");
	free(d);
	/* lines without a value, with no trailing newline */
	d = hwinfo_diff("odd line", "odd line\nodd\n");
	assert_string_equal(d, "+ odd\n");
	free(d);
}

static void
test_real_machine(void **state)
{
	struct hwinfo hw;
	char *text, *line, *save = NULL, hash[65];
	size_t i, cpu = 0, mem = 0;

	(void)state;
	assert_int_equal(hwinfo_read(NULL, &hw), 0);
	for (i = 0; i < hw.n; i++) {
		cpu += strcmp(hw.items[i].kind, "cpu") == 0;
		mem += strcmp(hw.items[i].kind, "mem") == 0;
		assert_null(strpbrk(hw.items[i].value, "\n\t"));
		assert_null(strchr(hw.items[i].name, ' '));
		assert_true(strcmp(hw.items[i].kind, "nic") != 0 ||
			    strcmp(hw.items[i].name, "lo") != 0);
	}
	assert_int_equal(cpu, 1);
	assert_int_equal(mem, 1);
	text = hwinfo_text(&hw);
	hwinfo_hash(&hw, hash);
	hwinfo_clear(&hw);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		print_message("# %s\n", line);
	print_message("# sha256 %s\n", hash);
	free(text);

	/* "/" is the real machine too */
	assert_int_equal(hwinfo_read("/", &hw), 0);
	text = hwinfo_text(&hw);
	hwinfo_clear(&hw);
	assert_non_null(strstr(text, "mem system total="));
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fake_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hash_is_sha256_of_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_fw_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mem_rounding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nic_and_disk_come_and_go, setup, teardown),
		cmocka_unit_test_setup_teardown(test_boot_noise_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_count_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_trees, setup, teardown),
		cmocka_unit_test(test_diff_pure),
		cmocka_unit_test(test_real_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
