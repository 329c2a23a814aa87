/* netif.c - interface MTU, limits, driver and state over rtnetlink (libnl-route-3); the
 * commit-confirm MTU change over it is netif_mtu.c.
 *
 * The only file that includes libnl. Links are read with our own RTM_GETLINK dump because
 * libnl 3.7 has no accessors for IFLA_MIN_MTU/IFLA_MAX_MTU; they are changed with
 * rtnl_link_change. Extended ACK is switched on so the kernel's reason reaches the user. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netif.h"
#include "netif_link.h"

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

bool
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

int
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
