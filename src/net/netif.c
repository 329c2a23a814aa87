/* netif.c - interface MTU, limits, driver and state over rtnetlink (libnl-route-3), and the
 * commit-confirm MTU change with a watchdog.
 *
 * The only file that includes libnl. Links are read with our own RTM_GETLINK dump because
 * libnl 3.7 has no accessors for IFLA_MIN_MTU/IFLA_MAX_MTU; they are changed with
 * rtnl_link_change. Extended ACK is switched on so the kernel's reason reaches the user. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "netif.h"

#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>

#include "log.h"
#include "probe.h"
#include "timeutil.h"
#include "xmalloc.h"

#define NETIF_NL_TIMEOUT_S 5	 /* bound on every netlink reply */
#define NETIF_WATCHDOG_S 120	 /* the watchdog restores after this even if alive */
#define NETIF_LINK_WAIT_MS 10000 /* a real NIC may renegotiate after an MTU change */

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* libnl's NLE_* codes, as errno for the rest of nastune. */
static int
netif_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case 0:
		return 0;
	case NLE_INTR:
		return -EINTR;
	case NLE_AGAIN:
		return -ETIMEDOUT; /* SO_RCVTIMEO ran out */
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_EXIST:
		return -EEXIST;
	case NLE_INVAL:
		return -EINVAL;
	case NLE_RANGE:
		return -ERANGE;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_OBJ_NOTFOUND:
	case NLE_NODEV:
		return -ENODEV;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_PERM:
		return -EPERM;
	case NLE_MSGSIZE:
		return -EMSGSIZE;
	default:
		return -EIO;
	}
}

/* Kernel error and its extended-ACK message, captured by netif_err_cb. */
struct netif_ack {
	int kerr; /* positive errno from the kernel; 0 none */
	char msg[200];
};

static int
netif_open(struct nl_sock **skp)
{
	struct timeval tv = { .tv_sec = NETIF_NL_TIMEOUT_S };
	struct nl_sock *sk;
	int one = 1, r, fd;

	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0) {
		nl_socket_free(sk);
		return netif_errno(r);
	}
	nl_socket_enable_msg_peek(sk);
	fd = nl_socket_get_fd(sk);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	*skp = sk;
	return 0;
}

static int
netif_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct netif_ack *a = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off, total;

	(void)nla;
	a->kerr = -e->error;
	a->msg[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	off = sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	off = NLMSG_ALIGN(off);
	total = nlh->nlmsg_len - NLMSG_HDRLEN;
	if (off >= total)
		return NL_STOP;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)e + off), (int)(total - off),
		      NULL) < 0)
		return NL_STOP;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(a->msg, sizeof(a->msg), "%s", nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	return NL_STOP;
}

struct netif_dump {
	struct netif_info *v;
	size_t n, cap;
};

static const char *
netif_operstate(unsigned s)
{
	static const char *const names[] = { "unknown", "notpresent", "down", "lowerlayerdown",
					     "testing", "dormant",    "up" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

static int
netif_parse_link(struct nl_msg *msg, void *arg)
{
	struct netif_dump *d = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[IFLA_MAX + 1];
	struct ifinfomsg *ifi;
	struct netif_info *in;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return NL_SKIP;
	if (nlmsg_parse(nlh, sizeof(*ifi), tb, IFLA_MAX, NULL) < 0 || !tb[IFLA_IFNAME])
		return NL_SKIP;
	ifi = nlmsg_data(nlh);
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 16;
		d->v = xreallocarray(d->v, d->cap, sizeof(*d->v));
	}
	in = &d->v[d->n++];
	memset(in, 0, sizeof(*in));
	in->ifindex = ifi->ifi_index;
	in->admin_up = (ifi->ifi_flags & IFF_UP) != 0;
	in->speed_mbps = -1;
	snprintf(in->name, sizeof(in->name), "%s", nla_get_string(tb[IFLA_IFNAME]));
	if (tb[IFLA_MTU])
		in->mtu = (int)nla_get_u32(tb[IFLA_MTU]);
	if (tb[IFLA_MIN_MTU])
		in->min_mtu = (int)nla_get_u32(tb[IFLA_MIN_MTU]);
	if (tb[IFLA_MAX_MTU])
		in->max_mtu = (int)nla_get_u32(tb[IFLA_MAX_MTU]);
	snprintf(in->operstate, sizeof(in->operstate), "%s",
		 netif_operstate(tb[IFLA_OPERSTATE] ? nla_get_u8(tb[IFLA_OPERSTATE]) : 0));
	if (tb[IFLA_MASTER])
		in->master_ifindex = (int)nla_get_u32(tb[IFLA_MASTER]);
	/* IFLA_LINK of a veth names its peer, often in another namespace: not a parent. */
	if (tb[IFLA_LINK] && !tb[IFLA_LINK_NETNSID])
		in->parent_ifindex = (int)nla_get_u32(tb[IFLA_LINK]);
	if (in->parent_ifindex == in->ifindex)
		in->parent_ifindex = 0;
	if (tb[IFLA_LINKINFO]) {
		struct nlattr *li[IFLA_INFO_MAX + 1];

		if (nla_parse_nested(li, IFLA_INFO_MAX, tb[IFLA_LINKINFO], NULL) == 0 &&
		    li[IFLA_INFO_KIND])
			snprintf(in->kind, sizeof(in->kind), "%s",
				 nla_get_string(li[IFLA_INFO_KIND]));
	}
	return NL_OK;
}

static const struct netif_info *
netif_by_index(const struct netif_info *v, size_t n, int ifindex)
{
	size_t i;

	for (i = 0; ifindex > 0 && i < n; i++)
		if (v[i].ifindex == ifindex)
			return &v[i];
	return NULL;
}

/* Driver name and link speed through the ethtool ioctl; /sys as the fallback for speed. */
static void
netif_ethtool(struct netif_info *in)
{
	struct ethtool_drvinfo di;
	uint32_t lsbuf[(sizeof(struct ethtool_link_settings) + 3 * 128 * 4) / 4];
	struct ethtool_link_settings *ls = (struct ethtool_link_settings *)lsbuf;
	struct ifreq ifr;
	char path[64], val[32];
	int fd, nwords;
	FILE *fp;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", in->name);
	memset(&di, 0, sizeof(di));
	di.cmd = ETHTOOL_GDRVINFO;
	ifr.ifr_data = (void *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
		snprintf(in->driver, sizeof(in->driver), "%s", di.driver);

	/* Two calls: the first asks the kernel how many words its link-mode masks need. */
	memset(lsbuf, 0, sizeof(lsbuf));
	ls->cmd = ETHTOOL_GLINKSETTINGS;
	ifr.ifr_data = (void *)ls;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0 && ls->link_mode_masks_nwords < 0) {
		nwords = -ls->link_mode_masks_nwords;
		if (nwords <= 128) {
			memset(lsbuf, 0, sizeof(lsbuf));
			ls->cmd = ETHTOOL_GLINKSETTINGS;
			ls->link_mode_masks_nwords = (__s8)nwords;
			if (ioctl(fd, SIOCETHTOOL, &ifr) == 0 && ls->speed != 0 &&
			    ls->speed != (__u32)SPEED_UNKNOWN)
				in->speed_mbps = (int)ls->speed;
		}
	}
	close(fd);
	if (in->speed_mbps >= 0)
		return;
	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", in->name);
	fp = fopen(path, "re");
	if (!fp)
		return;
	if (fgets(val, sizeof(val), fp) && atoi(val) > 0)
		in->speed_mbps = atoi(val);
	fclose(fp);
}

/* Every link over netlink; with ethtool, also each one's driver and speed (three ioctls
 * under the RTNL lock and a sysfs read per link). */
static int
netif_dump_links(struct netif_info **out, size_t *n, bool ethtool)
{
	struct netif_dump d = { 0 };
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nl_sock *sk = NULL;
	struct nl_msg *msg = NULL;
	size_t i;
	int r;

	*out = NULL;
	*n = 0;
	r = netif_open(&sk);
	if (r < 0)
		return r;
	msg = nlmsg_alloc_simple(RTM_GETLINK, NLM_F_DUMP);
	if (!msg) {
		r = -ENOMEM;
		goto out;
	}
	if (nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 ||
	    nla_put_u32(msg, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS) < 0) {
		r = -ENOMEM;
		goto out;
	}
	r = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, netif_parse_link, &d);
	if (r >= 0)
		r = nl_send_auto(sk, msg);
	if (r >= 0)
		r = nl_recvmsgs_default(sk);
	if (r < 0) {
		r = netif_errno(r);
		goto out;
	}
	for (i = 0; i < d.n; i++) {
		struct netif_info *in = &d.v[i];
		const struct netif_info *m = netif_by_index(d.v, d.n, in->master_ifindex);
		const struct netif_info *p = netif_by_index(d.v, d.n, in->parent_ifindex);

		if (m) {
			snprintf(in->master, sizeof(in->master), "%s", m->name);
			snprintf(in->master_kind, sizeof(in->master_kind), "%s", m->kind);
		}
		if (p) {
			snprintf(in->parent, sizeof(in->parent), "%s", p->name);
			in->parent_mtu = p->mtu;
		}
		if (ethtool)
			netif_ethtool(in);
	}
	*out = d.v;
	*n = d.n;
	d.v = NULL;
	r = 0;
out:
	free(d.v);
	nlmsg_free(msg);
	nl_socket_free(sk);
	return r;
}

int
netif_list(struct netif_info **out, size_t *n)
{
	return netif_dump_links(out, n, true);
}

int
netif_list_quick(struct netif_info **out, size_t *n)
{
	return netif_dump_links(out, n, false);
}

/* One link by name, from netif_list or netif_list_quick. */
static int
netif_find(const char *ifname, struct netif_info *info, bool ethtool)
{
	struct netif_info *v;
	size_t n, i;
	int r;

	r = netif_dump_links(&v, &n, ethtool);
	if (r < 0)
		return r;
	r = -ENODEV;
	for (i = 0; i < n; i++) {
		if (strcmp(v[i].name, ifname) == 0) {
			*info = v[i];
			r = 0;
			break;
		}
	}
	free(v);
	return r;
}

int
netif_get_info(const char *ifname, struct netif_info *info)
{
	return netif_find(ifname, info, true);
}

int
netif_get_mtu(const char *ifname, int *mtu)
{
	struct netif_info in;
	int r;

	/* Netlink alone: apply --if-changed asks this every time the MTU is managed. */
	r = netif_find(ifname, &in, false);
	if (r == 0)
		*mtu = in.mtu;
	return r;
}

static bool
netif_is_stacked(const char *kind)
{
	static const char *const kinds[] = { "vlan", "macvlan", "macvtap", "ipvlan", "ipvtap" };
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kind, kinds[i]) == 0)
			return true;
	return false;
}

int
netif_mtu_allowed(const struct netif_info *in, int mtu, char *err, size_t errlen)
{
	/* The kernel's own rule: 0 means no limit on that side. */
	if (mtu <= 0 || (in->min_mtu > 0 && mtu < in->min_mtu) ||
	    (in->max_mtu > 0 && mtu > in->max_mtu)) {
		char lim[64];

		if (in->max_mtu > 0)
			snprintf(lim, sizeof(lim), "%d..%d", in->min_mtu, in->max_mtu);
		else
			snprintf(lim, sizeof(lim), "%d and up", in->min_mtu);
		snprintf(err, errlen, "%s: MTU %d is outside the driver's limits (%s%s%s)",
			 in->name, mtu, lim, in->driver[0] ? ", driver " : "", in->driver);
		return -ERANGE;
	}
	if (strcmp(in->master_kind, "bond") == 0 || strcmp(in->master_kind, "team") == 0) {
		snprintf(err, errlen,
			 "%s is a member of %s %s: set the MTU on %s, which applies it to every "
			 "member",
			 in->name, in->master_kind, in->master, in->master);
		return -EBUSY;
	}
	if (netif_is_stacked(in->kind) && in->parent[0] && mtu > in->parent_mtu) {
		snprintf(err, errlen,
			 "%s is a %s on %s (MTU %d) and cannot exceed its parent: raise %s to at "
			 "least %d first",
			 in->name, in->kind, in->parent, in->parent_mtu, in->parent, mtu);
		return -EINVAL;
	}
	return 0;
}

/* rtnl_link_change without the checks; ifname must exist. */
static int
netif_change_mtu(const char *ifname, int mtu, char *err, size_t errlen)
{
	struct netif_ack ack = { 0 };
	struct rtnl_link *orig = NULL, *change = NULL;
	struct nl_sock *sk = NULL;
	struct nl_cb *cb;
	int r;

	r = netif_open(&sk);
	if (r < 0) {
		snprintf(err, errlen, "netlink: %s", strerror(-r));
		return r;
	}
	r = rtnl_link_get_kernel(sk, 0, ifname, &orig);
	if (r < 0) {
		r = netif_errno(r);
		snprintf(err, errlen, "%s: %s", ifname,
			 r == -ENODEV ? "no such interface" : nl_geterror(r));
		goto out;
	}
	change = rtnl_link_alloc();
	if (!change) {
		r = -ENOMEM;
		goto out;
	}
	rtnl_link_set_mtu(change, (unsigned)mtu);
	cb = nl_socket_get_cb(sk);
	nl_cb_err(cb, NL_CB_CUSTOM, netif_err_cb, &ack);
	nl_cb_put(cb);
	r = rtnl_link_change(sk, orig, change, 0);
	if (r >= 0) {
		r = 0;
		goto out;
	}
	r = ack.kerr > 0 ? -ack.kerr : netif_errno(r);
	if (r == -EPERM || r == -EACCES)
		snprintf(err, errlen, "changing the MTU of %s needs root (CAP_NET_ADMIN): %s",
			 ifname, strerror(-r));
	else if (ack.msg[0])
		snprintf(err, errlen, "%s: kernel refused MTU %d: %s (%s)", ifname, mtu, ack.msg,
			 strerror(-r));
	else
		snprintf(err, errlen, "%s: kernel refused MTU %d: %s", ifname, mtu, strerror(-r));
out:
	rtnl_link_put(change);
	rtnl_link_put(orig);
	nl_socket_free(sk);
	return r;
}

int
netif_set_mtu(const char *ifname, int mtu, char *err, size_t errlen)
{
	struct netif_info in;
	int r;

	r = netif_get_info(ifname, &in);
	if (r == -ENODEV) {
		snprintf(err, errlen, "no interface named %s (see 'nastune mtu show')", ifname);
		return r;
	}
	if (r < 0) {
		snprintf(err, errlen, "reading %s over netlink: %s", ifname, strerror(-r));
		return r;
	}
	/* Test hook: let the kernel judge, to exercise its extended-ACK path. */
	if (!getenv("NASTUNE_DEBUG_SKIP_LIMITS")) {
		r = netif_mtu_allowed(&in, mtu, err, errlen);
		if (r < 0)
			return r;
	}
	if (in.mtu == mtu)
		return 0;
	return netif_change_mtu(ifname, mtu, err, errlen);
}

/* ---- commit-confirm ---------------------------------------------------------------- */

struct netif_watchdog {
	pid_t pid;
	int fd; /* our end of a socketpair: we send 'C' to disarm; it answers 'K'
		 * (disarmed) or 'R' (restored); our death closes it, which means restore */
};

static void __attribute__((noreturn)) netif_watchdog_main(int fd, const char *ifname, int old_mtu)
{
	const char *dbg = getenv("NASTUNE_DEBUG_WATCHDOG_S"); /* tests: a short deadline */
	long long secs = dbg && atoi(dbg) > 0 ? atoi(dbg) : NETIF_WATCHDOG_S;
	long long deadline = timeutil_mono_ms() + secs * 1000LL;
	char c = 0, err[256];
	ssize_t n = 0;
	int r;

	/* Outlive terminal signals and a dying parent; only the socket decides. */
	(void)setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	/* Hold nothing of the parent's (locks, listening sockets) beyond this one fd. */
	if (fd != 3) {
		if (dup2(fd, 3) < 0)
			_exit(1);
		fd = 3;
	}
	(void)close_range(4, ~0U, 0);
	r = open("/dev/null", O_WRONLY | O_CLOEXEC); /* stdout may be a caller's pipe */
	if (r >= 0) {
		(void)dup2(r, STDOUT_FILENO);
		if (r != STDOUT_FILENO)
			close(r);
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline - timeutil_mono_ms();

		if (left <= 0)
			break;
		r = poll(&pfd, 1, (int)(left > 60000 ? 60000 : left));
		if (r <= 0)
			continue;
		n = read(fd, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (n == 1 && c == 'C') {
		(void)send(fd, "K", 1, MSG_NOSIGNAL);
		_exit(0);
	}
	r = netif_set_mtu(ifname, old_mtu, err, sizeof(err));
	if (r < 0)
		log_warnx("watchdog: could not restore the MTU of %s to %d: %s", ifname, old_mtu,
			  err);
	else
		log_warnx("watchdog: the MTU change on %s was not confirmed; restored %d", ifname,
			  old_mtu);
	(void)send(fd, "R", 1, MSG_NOSIGNAL);
	_exit(r < 0 ? 1 : 0);
}

static int
netif_watchdog_arm(struct netif_watchdog *w, const char *ifname, int old_mtu)
{
	int sv[2], e;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	w->pid = fork();
	if (w->pid < 0) {
		e = -errno;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (w->pid == 0) {
		close(sv[0]);
		netif_watchdog_main(sv[1], ifname, old_mtu);
	}
	close(sv[1]);
	w->fd = sv[0];
	return 0;
}

/* Reaps the watchdog, waiting at most ms: it exits right after answering or restoring. */
static void
netif_watchdog_reap(struct netif_watchdog *w, int ms)
{
	long long deadline = timeutil_mono_ms() + ms;

	while (waitpid(w->pid, NULL, WNOHANG) == 0 && timeutil_mono_ms() < deadline)
		usleep(20000);
	w->pid = 0;
}

/* Tells the watchdog not to restore. Returns 0 when it agreed, -ETIMEDOUT when it had
 * already restored the old MTU (its deadline passed), -EIO when it vanished. */
static int
netif_watchdog_disarm(struct netif_watchdog *w)
{
	struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
	char c = 0;
	int r = -EIO;

	if (w->pid <= 0)
		return 0;
	if (send(w->fd, "C", 1, MSG_NOSIGNAL) == 1 && poll(&pfd, 1, 5000) == 1 &&
	    read(w->fd, &c, 1) == 1)
		r = c == 'K' ? 0 : -ETIMEDOUT;
	else if (poll(&pfd, 1, 0) == 1 && read(w->fd, &c, 1) == 1 && c == 'R')
		r = -ETIMEDOUT;
	close(w->fd);
	netif_watchdog_reap(w, 1000);
	return r;
}

/* Lets the watchdog restore now (our own restore failed) and waits for it, bounded. */
static void
netif_watchdog_fire(struct netif_watchdog *w)
{
	if (w->pid <= 0)
		return;
	close(w->fd);
	netif_watchdog_reap(w, (NETIF_NL_TIMEOUT_S + 1) * 2 * 1000);
}

/* Test hook: die or stall between the change and the confirmation. */
static void
netif_debug_crash(const char *point)
{
	const char *v = getenv("NASTUNE_DEBUG_CRASH");

	if (!v)
		return;
	if (strncmp(v, "hang-", 5) == 0 && strcmp(v + 5, point) == 0) {
		const char *s = getenv("NASTUNE_DEBUG_HANG_S");
		int secs = s ? atoi(s) : 30;

		fprintf(stderr, "nastune: debug: stalling at %s (pid %d)\n", point, (int)getpid());
		sleep((unsigned)(secs > 0 && secs <= 300 ? secs : 30));
	} else if (strcmp(v, point) == 0) {
		fprintf(stderr, "nastune: debug: crashing at %s\n", point);
		raise(SIGKILL);
	}
}

/* After an MTU change some NICs retrain the link: wait (bounded) until it is up again. */
static void
netif_wait_oper_up(const char *ifname)
{
	long long deadline = timeutil_mono_ms() + NETIF_LINK_WAIT_MS;
	struct netif_info in;

	while (timeutil_mono_ms() < deadline) {
		if (netif_get_info(ifname, &in) < 0 || strcmp(in.operstate, "up") == 0 ||
		    strcmp(in.operstate, "unknown") == 0)
			return;
		usleep(100000);
	}
}

void
netif_mtu_report_clear(struct netif_mtu_report *rep)
{
	if (!rep)
		return;
	free(rep->peers);
	rep->peers = NULL;
	rep->npeers = 0;
}

static void
netif_peer_note(struct netif_mtu_peer *pr, const struct probe_result *r)
{
	snprintf(pr->addr, sizeof(pr->addr), "%s", r->addr);
	pr->reachable = r->reachable;
	pr->largest = r->largest;
	pr->peer_mtu = r->peer_mtu;
	pr->elapsed_ms += r->elapsed_ms;
}

/* Every peer, don't-fragment, from the protocol minimum to max. Returns 0 with *best the
 * size every peer passes and *worst the index of the peer that limits it, or -errno with
 * err set (-EHOSTUNREACH: a peer answered nothing). */
static int
netif_probe_all(const char *ifname, const char *const *peers, size_t npeers, int max,
		struct netif_mtu_peer *out, int *best, size_t *worst, char *err, size_t errlen)
{
	struct probe_opts o = { .ifname = ifname, .max = max };
	struct probe_result r;
	size_t i;
	int rc;

	*best = max;
	*worst = 0;
	for (i = 0; i < npeers; i++) {
		rc = probe_peer(peers[i], &o, &r);
		netif_peer_note(&out[i], &r);
		if (rc < 0) {
			snprintf(err, errlen, "peer %s: %s", peers[i], r.why);
			return rc;
		}
		if (!r.reachable) {
			snprintf(err, errlen,
				 "peer %s (%s) does not answer at %d bytes via %s "
				 "(%s): unreachable, or ICMP echo filtered",
				 peers[i], r.addr, r.min, ifname, r.why);
			return -EHOSTUNREACH;
		}
		if (r.largest < *best) {
			*best = r.largest;
			*worst = i;
		}
	}
	return 0;
}

/* The MTU auto tries: the ceiling, capped by the driver's maximum, by ceiling (> 0: what the
 * peers' facts say they use themselves) and a stacked device's parent, and never below the
 * MTU in force (auto never lowers on its own). */
static int
auto_candidate(const struct netif_info *in, int ceiling, struct netif_mtu_report *rep)
{
	int cand = NETIF_MTU_AUTO_CEILING;

	if (in->max_mtu > 0 && cand > in->max_mtu)
		cand = in->max_mtu;
	if (ceiling > 0 && cand > ceiling) {
		cand = ceiling;
		rep->peers_mtu = ceiling;
		snprintf(rep->peers_mtu_from, sizeof(rep->peers_mtu_from), "their facts");
	}
	if (netif_is_stacked(in->kind) && in->parent[0] && cand > in->parent_mtu)
		cand = in->parent_mtu;
	return cand < in->mtu ? in->mtu : cand;
}

/* AUTO's MTU from best, the size every peer receives: not above what a peer sends with itself
 * (its echo replies came back in fragments above that), whatever slack its NIC has on
 * receive; never below cur (auto never lowers on its own). Notes the peer that limits it. */
static int
netif_auto_target(struct netif_mtu_report *rep, const char *const *peers, size_t npeers, int best,
		  int cur)
{
	for (size_t i = 0; i < npeers; i++) {
		int own = rep->peers[i].peer_mtu;

		if (own > 0 && own < best) {
			best = own;
			rep->peers_mtu = own;
			snprintf(rep->peers_mtu_from, sizeof(rep->peers_mtu_from), "%s", peers[i]);
		}
	}
	return best < cur ? cur : best;
}

/* Whether every peer answers a small echo via ifname (MTU cur). Returns 0 or -errno with err. */
static int
peers_answer(const char *ifname, int cur, const char *const *peers, size_t npeers,
	     struct netif_mtu_report *rep, char *err, size_t errlen)
{
	struct probe_opts o = { .ifname = ifname };
	struct probe_result pr;
	bool passed;
	size_t i;
	int r;

	for (i = 0; i < npeers; i++) {
		r = probe_size(peers[i], &o, 0, &passed, &pr);
		netif_peer_note(&rep->peers[i], &pr);
		if (r < 0) {
			snprintf(err, errlen, "peer %s: %s", peers[i], pr.why);
			return r;
		}
		if (!passed) {
			snprintf(err, errlen,
				 "peer %s (%s) does not answer via %s (%s): unreachable, "
				 "or ICMP echo filtered; MTU of %s left at %d",
				 peers[i], pr.addr, ifname, pr.why, ifname, cur);
			return -EHOSTUNREACH;
		}
	}
	return 0;
}

/* Sets the MTU to best, the largest size every peer took, and proves it once more. Returns 0
 * or -errno with err. */
static int
settle(const char *ifname, int best, const char *const *peers, size_t npeers,
       struct netif_mtu_report *rep, char *err, size_t errlen)
{
	struct probe_result pr;
	bool passed;
	size_t i;
	int r;

	r = netif_change_mtu(ifname, best, err, errlen);
	if (r < 0)
		return r;
	rep->final_mtu = best;
	netif_wait_oper_up(ifname);
	for (i = 0; i < npeers; i++) {
		struct probe_opts vo = { .ifname = ifname, .max = best, .tries = 3 };

		r = probe_size(peers[i], &vo, best, &passed, &pr);
		if (r == 0 && !passed) {
			snprintf(err, errlen,
				 "peer %s (%s) passed %d bytes while probing but not "
				 "when rechecked at that MTU (%s)",
				 peers[i], pr.addr, best, pr.why);
			r = -EPROTO;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* Sets the candidate MTU cand (old in force) under the watchdog's guard. Returns 0 or -errno
 * with err (the MTU unchanged, the watchdog gone). */
static int
try_mtu(const char *ifname, int old, int cand, struct netif_watchdog *w,
	struct netif_mtu_report *rep, char *err, size_t errlen)
{
	int r = netif_watchdog_arm(w, ifname, old);

	if (r < 0) {
		snprintf(err, errlen, "cannot start the MTU watchdog: %s", strerror(-r));
		return r;
	}
	if ((r = netif_change_mtu(ifname, cand, err, errlen)) < 0) {
		(void)netif_watchdog_disarm(w);
		return r;
	}
	rep->tried_mtu = cand;
	rep->final_mtu = cand;
	log_debug("%s: MTU %d -> %d, probing %zu peer(s)", ifname, old, cand, rep->npeers);
	netif_debug_crash("mtu-after-set");
	netif_wait_oper_up(ifname);
	return 0;
}

/* Why best, the largest size peer (addr) took, will not do: below the fixed MTU cand, or
 * (auto) below the MTU old already in force, a black hole. Into err. */
static void
too_small(const char *ifname, enum netif_mtu_mode mode, int old, int cand, int best,
	  const char *peer, const char *addr, char *err, size_t errlen)
{
	if (mode == NETIF_MTU_FIXED)
		snprintf(err, errlen,
			 "peer %s (%s) receives don't-fragment packets of at most %d bytes, not %d",
			 peer, addr, best, cand);
	else
		snprintf(err, errlen,
			 "black hole: peer %s (%s) receives don't-fragment packets of at most %d "
			 "bytes, below the MTU %d of %s; fix the path (switch port or peer MTU) or "
			 "run 'nastune mtu set %s %d'",
			 peer, addr, best, old, ifname, ifname, best);
}

/* Puts the MTU old back after a failed change (the watchdog retries when that fails too),
 * and says so after err. */
static void
restore_mtu(const char *ifname, int old, struct netif_watchdog *w, struct netif_mtu_report *rep,
	    char *err, size_t errlen)
{
	int now;

	if (rep->final_mtu != old) {
		char rerr[256];
		int rr = netif_change_mtu(ifname, old, rerr, sizeof(rerr));

		if (rr < 0) {
			/* Leave it to the watchdog, which tries again as it exits. */
			log_warnx("%s; the watchdog will retry", rerr);
			netif_watchdog_fire(w);
		} else {
			rep->final_mtu = old;
		}
		rep->reverted = true;
	}
	if (w->pid > 0)
		(void)netif_watchdog_disarm(w);
	if (netif_get_mtu(ifname, &now) == 0)
		rep->final_mtu = now;
	if (rep->reverted) {
		size_t l = strlen(err);

		snprintf(err + l, errlen > l ? errlen - l : 0, "; MTU of %s restored to %d", ifname,
			 rep->final_mtu);
	}
}

int
netif_mtu_ensure(const char *ifname, enum netif_mtu_mode mode, int mtu, const char *const *peers,
		 size_t npeers, struct netif_mtu_report *rep, char *err, size_t errlen)
{
	struct netif_mtu_report local;
	struct netif_watchdog w = { 0 };
	struct netif_info in;
	long long t0 = timeutil_mono_ms();
	size_t i, worst;
	int r, cand, best;

	if (!rep)
		rep = &local;
	memset(rep, 0, sizeof(*rep));
	rep->npeers = npeers;
	rep->peers = xcalloc(npeers ? npeers : 1, sizeof(*rep->peers));
	for (i = 0; i < npeers; i++)
		snprintf(rep->peers[i].peer, sizeof(rep->peers[i].peer), "%s", peers[i]);
	err[0] = '\0';

	r = netif_get_info(ifname, &in);
	if (r < 0) {
		snprintf(err, errlen,
			 r == -ENODEV ? "no interface named %s (see 'nastune mtu "
					"show')"
				      : "reading %s over netlink failed",
			 ifname);
		goto out;
	}
	rep->old_mtu = rep->final_mtu = in.mtu;
	if (mode == NETIF_MTU_KEEP)
		goto out;
	cand = mode == NETIF_MTU_AUTO ? auto_candidate(&in, mtu, rep) : mtu;
	r = netif_mtu_allowed(&in, cand, err, errlen);
	if (r < 0)
		goto out;

	/* Before touching anything: every peer must answer a small echo. */
	if ((r = peers_answer(ifname, in.mtu, peers, npeers, rep, err, errlen)) < 0)
		goto out;
	if (npeers == 0 && mode == NETIF_MTU_AUTO)
		goto out; /* nothing to prove a larger MTU against */
	if (npeers == 0) {
		r = netif_set_mtu(ifname, cand, err, errlen);
		if (r == 0)
			rep->final_mtu = cand;
		goto out;
	}

	if (cand != in.mtu && (r = try_mtu(ifname, in.mtu, cand, &w, rep, err, errlen)) < 0)
		goto out;

	r = netif_probe_all(ifname, peers, npeers, cand, rep->peers, &best, &worst, err, errlen);
	if (r < 0)
		goto restore;
	if (best < cand && (mode == NETIF_MTU_FIXED || best < in.mtu)) {
		too_small(ifname, mode, in.mtu, cand, best, peers[worst], rep->peers[worst].addr,
			  err, errlen);
		r = -EPROTO;
		goto restore;
	}
	if (mode == NETIF_MTU_AUTO)
		best = netif_auto_target(rep, peers, npeers, best, in.mtu);
	if (best < cand) {
		/* Settle on the largest size every peer takes, and prove it once more. */
		if ((r = settle(ifname, best, peers, npeers, rep, err, errlen)) < 0)
			goto restore;
	}
	if (w.pid > 0) {
		r = netif_watchdog_disarm(&w);
		if (r < 0) {
			snprintf(err, errlen,
				 "%s: the watchdog restored MTU %d before the change was "
				 "confirmed",
				 ifname, in.mtu);
			rep->final_mtu = in.mtu;
			rep->reverted = true;
			goto out;
		}
	}
	r = 0;
	goto out;

restore:
	restore_mtu(ifname, in.mtu, &w, rep, err, errlen);
out:
	rep->changed = rep->final_mtu != rep->old_mtu;
	rep->elapsed_ms = (int)(timeutil_mono_ms() - t0);
	if (rep == &local)
		netif_mtu_report_clear(&local);
	return r;
}

bool
netif_error_is_request(int r)
{
	switch (r) {
	case -ENODEV:
	case -ERANGE:
	case -EINVAL:
	case -EBUSY:
	case -EADDRNOTAVAIL:
		return true;
	default:
		return false;
	}
}
