/* hwinfo.c - the hardware fingerprint: NICs, block devices, CPU and RAM from sysfs, procfs
 * and the ethtool ioctl, as sorted "kind name value" items with a text form, a SHA-256 and a
 * token-level diff. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <net/if.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "buf.h"
#include "fsutil.h"
#include "hash.h"
#include "hwinfo.h"
#include "log.h"
#include "xmalloc.h"

#define HWINFO_ATTR_MAX (64 * 1024)	   /* a sysfs attribute is one page at most */
#define HWINFO_PROC_MAX (16 * 1024 * 1024) /* /proc/cpuinfo grows with the CPU count */
#define HWINFO_UNKNOWN "unknown"

struct hwinfo_builder {
	struct hwinfo *hw;
	size_t cap;
};

/* s[0..len) as one token: trimmed, each run of whitespace or control characters made one
 * '_', "unknown" when nothing is left. Caller frees. */
static char *
hwinfo_clean(const char *s, size_t len)
{
	struct buf b;
	size_t i;
	int gap = 0;

	buf_init(&b);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\0')
			break;
		if (isspace(c) || iscntrl(c)) {
			gap = 1;
			continue;
		}
		if (gap && b.len)
			buf_addc(&b, '_');
		gap = 0;
		buf_addc(&b, (char)c);
	}
	if (!b.len)
		buf_adds(&b, HWINFO_UNKNOWN);
	return buf_steal(&b, NULL);
}

/* The first line of dir/rel as a token, or NULL when the file cannot be read. */
static char *
hwinfo_attr(const char *dir, const char *rel)
{
	char *path = xasprintf("%s/%s", dir, rel), *data = NULL, *tok;
	size_t len;

	if (fs_read_file(path, HWINFO_ATTR_MAX, &data, &len) < 0) {
		free(path);
		return NULL;
	}
	free(path);
	tok = hwinfo_clean(data, strcspn(data, "\n"));
	free(data);
	return tok;
}

/* Like hwinfo_attr, but "unknown" instead of NULL. */
static char *
hwinfo_attr_or_unknown(const char *dir, const char *rel)
{
	char *tok = hwinfo_attr(dir, rel);

	return tok ? tok : xstrdup(HWINFO_UNKNOWN);
}

/* Takes ownership of value. */
static void
hwinfo_add(struct hwinfo_builder *hb, const char *kind, const char *name, char *value)
{
	struct hwinfo *hw = hb->hw;
	struct hwinfo_item *it;

	if (hw->n == hb->cap) {
		hb->cap = hb->cap ? hb->cap * 2 : 16;
		hw->items = xreallocarray(hw->items, hb->cap, sizeof(*hw->items));
	}
	it = &hw->items[hw->n++];
	it->kind = xstrdup(kind);
	it->name = hwinfo_clean(name, strlen(name));
	it->value = value;
}

/* Basename of the symlink dir/rel as a token, or NULL. */
static char *
hwinfo_link_base(const char *dir, const char *rel)
{
	char *path = xasprintf("%s/%s", dir, rel), target[PATH_MAX], *base;
	ssize_t n;

	n = readlink(path, target, sizeof(target) - 1);
	free(path);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	return *base ? hwinfo_clean(base, strlen(base)) : NULL;
}

/* Driver and firmware version of ifname from ETHTOOL_GDRVINFO; 0 or -errno. */
static int
hwinfo_ethtool_drvinfo(int fd, const char *ifname, char **driver, char **fw)
{
	struct ethtool_drvinfo di;
	struct ifreq ifr;

	if (fd < 0 || strlen(ifname) >= sizeof(ifr.ifr_name))
		return -EINVAL;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	memset(&di, 0, sizeof(di));
	di.cmd = ETHTOOL_GDRVINFO;
	ifr.ifr_data = (void *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		return -errno;
	*driver = hwinfo_clean(di.driver, sizeof(di.driver));
	*fw = hwinfo_clean(di.fw_version, sizeof(di.fw_version));
	return 0;
}

static int
hwinfo_read_nics(const char *root, int real, struct hwinfo_builder *hb)
{
	char *dir = fs_rooted(root, "/sys/class/net");
	struct dirent *de;
	DIR *d;
	int fd = -1, err = 0;

	d = opendir(dir);
	if (!d) {
		err = errno == ENOENT ? 0 : -errno;
		goto out;
	}
	if (real) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	}
	for (errno = 0; (de = readdir(d)) != NULL; errno = 0) {
		char *ifdir, *driver = NULL, *fw = NULL;

		if (de->d_name[0] == '.' || strcmp(de->d_name, "lo") == 0)
			continue;
		ifdir = xasprintf("%s/%s", dir, de->d_name);
		/* Virtual links (veth, bridges, ifb, containers) come and go: not hardware. The
		 * class entry is a link into /sys/devices: one readlink tells (realpath would
		 * read the link of every component on the way). */
		{
			char tgt[PATH_MAX];
			ssize_t k = readlink(ifdir, tgt, sizeof(tgt) - 1);

			if (k > 0) {
				tgt[k] = '\0';
				if (strstr(tgt, "devices/virtual/")) {
					free(ifdir);
					continue;
				}
			}
		}
		if (!real || hwinfo_ethtool_drvinfo(fd, de->d_name, &driver, &fw) < 0) {
			driver = hwinfo_link_base(ifdir, "device/driver");
			if (!real)
				fw = hwinfo_attr(ifdir, "fw_version");
		}
		/* No link speed or state: they follow the cable and the switch port (a link that
		 * is down at boot reads -1, a renegotiation 100 instead of 1000), not the NAS, and
		 * a re-tune for them would measure the same hardware again. */
		hwinfo_add(hb, "nic", de->d_name,
			   xasprintf("driver=%s fw=%s", driver ? driver : HWINFO_UNKNOWN,
				     fw ? fw : HWINFO_UNKNOWN));
		free(driver);
		free(fw);
		free(ifdir);
	}
	if (errno)
		err = -errno;
out:
	if (fd >= 0)
		close(fd);
	if (d)
		closedir(d);
	free(dir);
	return err;
}

/* Loop, RAM-disk, compressed-RAM and device-mapper nodes are not hardware. */
static int
hwinfo_skip_disk(const char *name)
{
	static const char *const skip[] = { "loop", "ram", "zram", "dm-" };
	size_t i;

	if (name[0] == '.')
		return 1;
	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strncmp(name, skip[i], strlen(skip[i])) == 0)
			return 1;
	return 0;
}

/* Media the kernel marks removable (USB sticks, card readers, optical drives) come and go
 * with what is plugged in at boot: not the NAS's own disks. */
static bool
hwinfo_removable(const char *bdir)
{
	char *r = hwinfo_attr(bdir, "removable");
	bool yes = r && strcmp(r, "1") == 0;

	free(r);
	return yes;
}

static int
hwinfo_read_disks(const char *root, struct hwinfo_builder *hb)
{
	char *dir = fs_rooted(root, "/sys/block");
	struct dirent *de;
	DIR *d;
	int err = 0;

	d = opendir(dir);
	if (!d) {
		err = errno == ENOENT ? 0 : -errno;
		free(dir);
		return err;
	}
	for (errno = 0; (de = readdir(d)) != NULL; errno = 0) {
		char *bdir, *model, *rot, *fw;

		if (hwinfo_skip_disk(de->d_name))
			continue;
		bdir = xasprintf("%s/%s", dir, de->d_name);
		if (hwinfo_removable(bdir)) {
			free(bdir);
			continue;
		}
		model = hwinfo_attr_or_unknown(bdir, "device/model");
		rot = hwinfo_attr_or_unknown(bdir, "queue/rotational");
		fw = hwinfo_attr(bdir, "device/firmware_rev");
		if (!fw)
			fw = hwinfo_attr_or_unknown(bdir, "device/rev");
		hwinfo_add(hb, "disk", de->d_name,
			   xasprintf("model=%s rotational=%s fw=%s", model, rot, fw));
		free(model);
		free(rot);
		free(fw);
		free(bdir);
	}
	if (errno)
		err = -errno;
	closedir(d);
	free(dir);
	return err;
}

/* The value after ':' on the first line of text starting with key, as a token, or NULL. */
static char *
hwinfo_proc_field(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *line = text;

	while (*line) {
		size_t len = strcspn(line, "\n");

		if (len > klen && strncmp(line, key, klen) == 0 &&
		    (line[klen] == ':' || isspace((unsigned char)line[klen]))) {
			const char *colon = memchr(line, ':', len);

			if (colon)
				return hwinfo_clean(colon + 1, (size_t)(line + len - colon - 1));
		}
		line += len;
		if (*line == '\n')
			line++;
	}
	return NULL;
}

/* CPUs in a sysfs cpu list ("0-3,8,10-11"), or -1 when it does not parse. */
static long
hwinfo_cpulist_count(const char *s)
{
	long count = 0;

	while (*s && *s != '\n') {
		char *end;
		long a, b;

		errno = 0;
		a = strtol(s, &end, 10);
		if (errno || end == s || a < 0)
			return -1;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (errno || end == s || b < a)
				return -1;
		}
		count += b - a + 1;
		s = end;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
	}
	return count > 0 ? count : -1;
}

/* Online CPUs under a sysroot: sys/devices/system/cpu/online, else the "processor" lines. */
static long
hwinfo_fake_cpu_count(const char *root, const char *cpuinfo)
{
	char *path = fs_rooted(root, "/sys/devices/system/cpu/online"), *data = NULL;
	const char *line;
	long n = -1;

	if (fs_read_file(path, HWINFO_ATTR_MAX, &data, NULL) == 0)
		n = hwinfo_cpulist_count(data);
	free(data);
	free(path);
	if (n > 0)
		return n;
	n = 0;
	for (line = cpuinfo; *line;) {
		if (strncmp(line, "processor", 9) == 0 &&
		    (line[9] == ':' || isspace((unsigned char)line[9])))
			n++;
		line += strcspn(line, "\n");
		if (*line == '\n')
			line++;
	}
	return n;
}

static int
hwinfo_read_cpu(const char *root, int real, struct hwinfo_builder *hb)
{
	char *path = fs_rooted(root, "/proc/cpuinfo"), *data = NULL, *model, *count;
	long n;
	int err;

	err = fs_read_file(path, HWINFO_PROC_MAX, &data, NULL);
	free(path);
	if (err < 0)
		return err;
	model = hwinfo_proc_field(data, "model name");
	n = real ? sysconf(_SC_NPROCESSORS_ONLN) : hwinfo_fake_cpu_count(root, data);
	count = n > 0 ? xasprintf("%ld", n) : xstrdup(HWINFO_UNKNOWN);
	hwinfo_add(hb, "cpu", "system",
		   xasprintf("count=%s model=%s", count, model ? model : HWINFO_UNKNOWN));
	free(count);
	free(model);
	free(data);
	return 0;
}

static int
hwinfo_read_mem(const char *root, struct hwinfo_builder *hb)
{
	char *path = fs_rooted(root, "/proc/meminfo"), *data = NULL, *total, *end;
	unsigned long long kib, gib;
	int err;

	err = fs_read_file(path, HWINFO_PROC_MAX, &data, NULL);
	free(path);
	if (err < 0)
		return err;
	total = hwinfo_proc_field(data, "MemTotal");
	free(data);
	if (!total)
		return -EINVAL;
	/* "24684092_kB" after cleaning */
	errno = 0;
	kib = strtoull(total, &end, 10);
	if (errno || end == total || (*end && strcmp(end, "_kB") != 0)) {
		free(total);
		return -EINVAL;
	}
	free(total);
	/* Up, not to nearest: MemTotal is the installed RAM less what firmware and kernel keep
	 * (1-3%), so a 32 GiB machine shows 31.3-31.6 GiB, right on a nearest-rounding edge. */
	gib = (kib + 1024 * 1024 - 1) / (1024 * 1024);
	hwinfo_add(hb, "mem", "system", xasprintf("total=%lluGiB", gib));
	return 0;
}

static int
hwinfo_item_cmp(const void *a, const void *b)
{
	const struct hwinfo_item *x = a, *y = b;
	int c = strcmp(x->kind, y->kind);

	return c ? c : strcmp(x->name, y->name);
}

int
hwinfo_read(const char *sysroot, struct hwinfo *hw)
{
	struct hwinfo_builder hb = { .hw = hw };
	int real, err;

	hw->items = NULL;
	hw->n = 0;
	real = !sysroot || sysroot[strspn(sysroot, "/")] == '\0';
	if (real)
		sysroot = NULL;
	if ((err = hwinfo_read_nics(sysroot, real, &hb)) < 0 ||
	    (err = hwinfo_read_disks(sysroot, &hb)) < 0 ||
	    (err = hwinfo_read_cpu(sysroot, real, &hb)) < 0 ||
	    (err = hwinfo_read_mem(sysroot, &hb)) < 0) {
		hwinfo_clear(hw);
		return err;
	}
	if (hw->n)
		qsort(hw->items, hw->n, sizeof(*hw->items), hwinfo_item_cmp);
	return 0;
}

void
hwinfo_clear(struct hwinfo *hw)
{
	size_t i;

	if (!hw)
		return;
	for (i = 0; i < hw->n; i++) {
		free(hw->items[i].kind);
		free(hw->items[i].name);
		free(hw->items[i].value);
	}
	free(hw->items);
	hw->items = NULL;
	hw->n = 0;
}

char *
hwinfo_text(const struct hwinfo *hw)
{
	struct buf b;
	size_t i;

	buf_init(&b);
	buf_adds(&b, ""); /* buf_steal of a never-written buf is not NUL-terminated */
	for (i = 0; hw && i < hw->n; i++)
		buf_printf(&b, "%s %s %s\n", hw->items[i].kind, hw->items[i].name,
			   hw->items[i].value);
	return buf_steal(&b, NULL);
}

void
hwinfo_hash(const struct hwinfo *hw, char out[65])
{
	char *text = hwinfo_text(hw);

	hash_sha256_hex(text, strlen(text), out);
	free(text);
}

/* One line of a canonical text, split in place: key "kind name", value the rest. */
struct hwinfo_line {
	const char *key;
	const char *value;
};

static int
hwinfo_line_cmp(const void *a, const void *b)
{
	const struct hwinfo_line *x = a, *y = b;

	return strcmp(x->key, y->key);
}

/* Splits a copy of text (stored in *copy, caller frees) into lines sorted by key. */
static struct hwinfo_line *
hwinfo_split(const char *text, char **copy, size_t *n)
{
	struct hwinfo_line *v = NULL;
	size_t cap = 0;
	char *line, *next;

	*n = 0;
	*copy = xstrdup(text ? text : "");
	for (line = *copy; *line; line = next) {
		char *sp;

		next = line + strcspn(line, "\n");
		if (*next == '\n')
			*next++ = '\0';
		if (!*line)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[*n].key = line;
		v[*n].value = "";
		sp = strchr(line, ' ');
		if (sp && (sp = strchr(sp + 1, ' '))) {
			*sp = '\0';
			v[*n].value = sp + 1;
		}
		(*n)++;
	}
	if (*n)
		qsort(v, *n, sizeof(*v), hwinfo_line_cmp);
	return v;
}

/* Splits s in place on spaces; the array is the caller's to free. */
static char **
hwinfo_tokens(char *s, size_t *n)
{
	char **v = xreallocarray(NULL, strlen(s) / 2 + 1, sizeof(*v));
	char *tok, *save = NULL;

	*n = 0;
	for (tok = strtok_r(s, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		v[(*n)++] = tok;
	return v;
}

/* "~ key: a=1 -> a=2, -b=3, +c=4\n": tokens matched by the text before their '='. */
static void
hwinfo_diff_values(struct buf *b, const char *key, const char *old_value, const char *new_value)
{
	char *oc = xstrdup(old_value), *nc = xstrdup(new_value), **ot, **nt;
	const char *sep = "";
	size_t on, nn, i, j, start;
	unsigned char *used;

	ot = hwinfo_tokens(oc, &on);
	nt = hwinfo_tokens(nc, &nn);
	used = xcalloc(nn + 1, 1);
	buf_printf(b, "~ %s:", key);
	start = b->len;
	for (i = 0; i < on; i++) {
		size_t kl = strcspn(ot[i], "=");

		for (j = 0; j < nn; j++)
			if (!used[j] && strcspn(nt[j], "=") == kl && strncmp(ot[i], nt[j], kl) == 0)
				break;
		if (j == nn) {
			buf_printf(b, "%s -%s", sep, ot[i]);
			sep = ",";
			continue;
		}
		used[j] = 1;
		if (strcmp(ot[i], nt[j]) != 0) {
			buf_printf(b, "%s %s -> %s", sep, ot[i], nt[j]);
			sep = ",";
		}
	}
	for (j = 0; j < nn; j++) {
		if (!used[j]) {
			buf_printf(b, "%s +%s", sep, nt[j]);
			sep = ",";
		}
	}
	/* same tokens, different spacing or order: show both whole */
	if (b->len == start)
		buf_printf(b, " %s -> %s", old_value, new_value);
	buf_addc(b, '\n');
	free(used);
	free(ot);
	free(nt);
	free(oc);
	free(nc);
}

static void
hwinfo_diff_line(struct buf *b, char sign, const struct hwinfo_line *l)
{
	buf_printf(b, "%c %s%s%s\n", sign, l->key, *l->value ? " " : "", l->value);
}

char *
hwinfo_diff(const char *old_text, const char *new_text)
{
	struct hwinfo_line *ov, *nv;
	char *oc, *nc;
	size_t on, nn, i = 0, j = 0;
	struct buf b;

	buf_init(&b);
	buf_adds(&b, ""); /* "" when nothing changed; see hwinfo_text */
	ov = hwinfo_split(old_text, &oc, &on);
	nv = hwinfo_split(new_text, &nc, &nn);
	while (i < on || j < nn) {
		int c = i == on ? 1 : j == nn ? -1 : strcmp(ov[i].key, nv[j].key);

		if (c < 0) {
			hwinfo_diff_line(&b, '-', &ov[i++]);
		} else if (c > 0) {
			hwinfo_diff_line(&b, '+', &nv[j++]);
		} else {
			if (strcmp(ov[i].value, nv[j].value) != 0)
				hwinfo_diff_values(&b, ov[i].key, ov[i].value, nv[j].value);
			i++;
			j++;
		}
	}
	free(ov);
	free(nv);
	free(oc);
	free(nc);
	return buf_steal(&b, NULL);
}
