/* facts.c - what an agent tells the controller about its client: host, OS, CPU, the NIC
 * towards the NAS (MTU, speed), the disk baseline (measured once), what the OS can mount, its
 * --mount paths and drivers. */
#include <arpa/inet.h>
#include <jansson.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent_state.h"
#include "bench.h"
#include "fsutil.h"
#include "hostaddr.h"
#include "log.h"

/* The MTU this host sends with towards the NAS on fd (the route's, or a smaller path MTU
 * learned since): the NAS's MTU auto must not go above it. 0 where the OS does not say. */
static int
nic_path_mtu(int fd, int family)
{
	int mtu = 0;
#if defined(IP_MTU) && defined(IPV6_MTU)
	socklen_t l = sizeof(mtu);

	if (getsockopt(fd, family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP,
		       family == AF_INET6 ? IPV6_MTU : IP_MTU, &mtu, &l) < 0)
		mtu = 0;
#else
	(void)fd;
	(void)family;
#endif
	return mtu;
}

/* The interface carrying the local address of fd, with its MTU and (Linux) speed. */
static json_t *
nic_facts(int fd)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);
	struct hostaddr *ha = NULL;
	size_t nha = 0, i;
	char addr[INET6_ADDRSTRLEN] = "", name[IF_NAMESIZE] = "";
	int mtu = 0, speed = -1;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		void *a = ss.ss_family == AF_INET
				  ? (void *)&((struct sockaddr_in *)&ss)->sin_addr
				  : (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
		inet_ntop(ss.ss_family, a, addr, sizeof(addr));
	}
	if ((ss.ss_family == AF_INET || ss.ss_family == AF_INET6) &&
	    hostaddr_list(ss.ss_family, &ha, &nha) == 0) {
		for (i = 0; i < nha; i++)
			if (strcmp(ha[i].addr, addr) == 0) {
				snprintf(name, sizeof(name), "%s", ha[i].name);
				break;
			}
		free(ha);
	}
	if (name[0]) {
		struct ifreq ifr;
		int s = socket(AF_INET, SOCK_DGRAM, 0);

		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		if (s >= 0 && ioctl(s, SIOCGIFMTU, &ifr) == 0)
			mtu = ifr.ifr_mtu;
		if (s >= 0)
			close(s);
#ifdef __linux__
		{
			char path[64], buf[32] = "";
			FILE *fp;

			snprintf(path, sizeof(path), "/sys/class/net/%s/speed", name);
			if ((fp = fopen(path, "r"))) {
				if (fgets(buf, sizeof(buf), fp))
					speed = atoi(buf);
				fclose(fp);
			}
		}
#endif
	}
	return json_pack("{s:s, s:s, s:i, s:i, s:i}", "name", name, "address", addr, "mtu", mtu,
			 "speed_mbps", speed, "path_mtu", nic_path_mtu(fd, ss.ss_family));
}

static json_t *
cpu_facts(void)
{
	char model[256] = "unknown";
#ifdef __linux__
	char line[512];
	FILE *fp = fopen("/proc/cpuinfo", "r");

	while (fp && fgets(line, sizeof(line), fp)) {
		char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && c) {
			snprintf(model, sizeof(model), "%s", c + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (fp)
		fclose(fp);
#endif
	return json_pack("{s:s, s:i}", "model", model, "count", (int)sysconf(_SC_NPROCESSORS_ONLN));
}

/* Which protocols the OS itself can mount (what a user of this machine gets without nastune). */
static json_t *
mount_facts(const struct utsname *u)
{
	bool smb = false, nfs = false, afp = false;
#ifdef __linux__
	char line[128];
	FILE *fp = fopen("/proc/filesystems", "r");

	while (fp && fgets(line, sizeof(line), fp)) {
		smb |= strstr(line, "\tcifs") || strstr(line, "\tsmb3");
		nfs |= strstr(line, "\tnfs") != NULL;
	}
	if (fp)
		fclose(fp);
	(void)u;
#elif defined(__APPLE__)
	/* macOS 27 (Darwin 26) has no AFP client: Apple removed it. */
	smb = nfs = true;
	afp = atoi(u->release) < 26;
#else
	(void)u;
#endif
	return json_pack("{s:b, s:b, s:b}", "smb", smb, "nfs", nfs, "afp", afp);
}

json_t *
agent_facts(struct agent *a, int fd)
{
	struct utsname u;
	json_t *f, *mounts = json_object(), *drivers = json_array();
	const struct bench_driver *const *d;
	size_t i;

	uname(&u);
	for (i = 0; i < a->o->nmounts; i++)
		json_object_set_new(mounts, a->o->mounts[i].proto,
				    json_string(a->o->mounts[i].path));
	for (d = bench_drivers(); *d; d++)
		if (strcmp((*d)->name, "null") != 0)
			json_array_append_new(drivers, json_string((*d)->name));
	pthread_mutex_lock(&a->state);
	if (!a->disk) {
		struct bench_baseline b = { 0 };
		struct bench_opts bo = { .size = 64ull << 20 };
		const char *dir = a->o->scratch_dir ? a->o->scratch_dir : "/var/tmp";
		char berr[512];

		if (bench_baseline_disk(dir, &bo, &b, berr, sizeof(berr)) == 0)
			a->disk = json_pack("{s:s, s:f, s:f, s:s}", "dir", dir, "write_mbs",
					    b.disk_write, "read_mbs", b.disk_read, "method",
					    b.disk_method);
		else
			a->disk = json_pack("{s:s, s:n}", "dir", dir, "write_mbs");
	}
	f = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:O, s:o, s:o, s:o}", "type", "facts",
		      "hostname", a->hostname, "os", u.sysname, "os_version", u.release,
		      "agent_version", NASTUNE_VERSION, "cpu", cpu_facts(), "nic", nic_facts(fd),
		      "disk", a->disk, "can_mount", mount_facts(&u), "mounts", mounts, "drivers",
		      drivers);
	pthread_mutex_unlock(&a->state);
	return f;
}
