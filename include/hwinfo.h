/* hwinfo.h - the hardware fingerprint behind `apply --if-changed` and `status`.
 *
 * A list of items, each "kind name value": NICs, block devices, the CPU and the RAM.
 * value is space-separated key=value tokens whose values never hold whitespace (runs of
 * whitespace and control characters become one '_'; an empty or unreadable field is
 * "unknown"), so the canonical text has one item per line and diffs token by token:
 *
 *	cpu system count=2 model=Intel(R)_Xeon(R)_Processor
 *	disk sda model=ST4000VN008-2DR1 rotational=1 fw=SC60
 *	mem system total=24GiB
 *	nic eth0 driver=igb fw=3.25,_0x800005cc
 *
 * Reads sysfs, procfs and the ethtool ioctl; no netlink. The max MTU is not in the
 * fingerprint: the kernel exposes it only over rtnetlink (IFLA_MAX_MTU, see netif.h), and it
 * follows from driver and firmware anyway. Nothing that changes on an ordinary boot is in it
 * either: not a link's speed or state (the cable and the switch port decide them), not media
 * the kernel marks removable (a USB stick left in at boot), so those alone never make
 * `apply --if-changed`, `status` or `tune --if-changed` see new hardware. */
#ifndef NASTUNE_HWINFO_H
#define NASTUNE_HWINFO_H

#include <stddef.h>

struct hwinfo_item {
	char *kind;  /* "cpu", "disk", "mem", "nic" */
	char *name;  /* "eth0", "sda"; "system" for cpu and mem */
	char *value; /* "driver=virtio_net fw=unknown" */
};

struct hwinfo {
	struct hwinfo_item *items; /* sorted by kind, then name (strcmp order) */
	size_t n;
};

/* Reads the current hardware into *hw. sysroot "" or NULL (or "/") reads the real /sys and
 * /proc; otherwise a directory holding sys/ and proc/ trees, for tests.
 *
 * Items: one "nic" per /sys/class/net entry but lo, with driver and fw from the ethtool
 * ETHTOOL_GDRVINFO ioctl (driver falls back to the device/driver symlink); links under
 * /sys/devices/virtual (veth, bridges) are left out. One "disk" per /sys/block entry but
 * loop*, ram*, zram*, dm-* and those whose "removable" attribute is 1, with device/model,
 * queue/rotational and device/firmware_rev (NVMe) or device/rev (SCSI/ATA). One "cpu":
 * the first "model name" of /proc/cpuinfo and the online count. One "mem": MemTotal rounded
 * up to a whole GiB, so a few MB reserved more or less by another kernel do not count.
 *
 * Under a sysroot the ioctl cannot be faked, so (a test-only convention) driver is the
 * basename of the sys/class/net/IF/device/driver symlink, fw the first line of
 * sys/class/net/IF/fw_version when that file exists, and the CPU count comes from
 * sys/devices/system/cpu/online, else from the "processor" lines of proc/cpuinfo.
 *
 * A missing sys/class/net or sys/block yields no items of that kind; a missing attribute
 * file yields "unknown". Returns 0, or -errno when proc/cpuinfo or proc/meminfo cannot be
 * read (-EINVAL when meminfo has no MemTotal) or a directory cannot be listed; then *hw is
 * empty. Free with hwinfo_clear. */
int hwinfo_read(const char *sysroot, struct hwinfo *hw);

/* Frees what hwinfo_read allocated and empties *hw; hw NULL or already empty is fine. */
void hwinfo_clear(struct hwinfo *hw);

/* The canonical text: one "kind name value\n" line per item, in item order ("" for none).
 * The caller frees it. */
char *hwinfo_text(const struct hwinfo *hw);

/* SHA-256 of hwinfo_text(hw) as 64 lowercase hex digits and a NUL, into out. */
void hwinfo_hash(const struct hwinfo *hw, char out[65]);

/* What changed from old_text to new_text, both canonical texts (NULL counts as ""), one line
 * per item, in kind/name order:
 *	"+ nic eth1 driver=igb fw=unknown speed=1000\n"		item appeared
 *	"- disk sda model=X rotational=1 fw=SC60\n"		item went away
 *	"~ nic eth0: driver=a -> driver=b, -fw=1.0, +maxmtu=9000\n"	tokens changed
 * Returns "" when nothing changed. The caller frees the result. */
char *hwinfo_diff(const char *old_text, const char *new_text);

#endif
