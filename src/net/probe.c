/* probe.c - don't-fragment ICMP echo probes towards a peer, IPv4 and IPv6.
 *
 * IP_PMTUDISC_PROBE (IPV6_PMTUDISC_PROBE + IPV6_DONTFRAG) sets DF, never fragments locally
 * and ignores the cached path MTU, so a lost echo of size S means the path or the peer does
 * not take S — the classic jumbo-frame black hole — while anything larger than the local
 * link fails at once with EMSGSIZE. Raw sockets need CAP_NET_RAW; unprivileged ping sockets
 * (SOCK_DGRAM/IPPROTO_ICMP) are used when net.ipv4.ping_group_range allows. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <linux/icmp.h>

#include "log.h"
#include "probe.h"
#include "xmalloc.h"

#ifndef IP_RECVFRAGSIZE
#define IP_RECVFRAGSIZE 25 /* linux/in.h; glibc before 2.26 lacks it */
#endif
#ifndef IPV6_RECVFRAGSIZE
#define IPV6_RECVFRAGSIZE 77 /* linux/in6.h */
#endif

#define PROBE_BUFSZ (65536 + 512)
#define PROBE_TIMEOUT_MS 50
#define PROBE_FIRST_TIMEOUT_MS 300
#define PROBE_TRIES 2
#define PROBE_FIRST_TRIES 3
#define PROBE_TIMEOUT_CAP_MS 1000

struct prober {
	int fd;
	int family;
	bool raw;
	uint16_t id;
	uint16_t seq;
	int timeout_ms;	      /* per echo, once the peer has answered */
	int first_timeout_ms; /* per echo, until then */
	int tries;
	bool answered;
	bool fast_fail; /* the last echo failed for a reason a retry won't change */
	bool fragsize;	/* the kernel reports reassembled replies (IP_RECVFRAGSIZE) */
	int last_frag;	/* largest fragment of the last reply; 0: it came whole */
	struct probe_result *r;
	unsigned char *buf;
};

static long long
probe_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static uint16_t
probe_cksum(const unsigned char *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)(p[len - 1] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int
probe_hdrlen(int family)
{
	/* IP header + ICMP echo header */
	return family == AF_INET ? 20 + 8 : 40 + 8;
}

static int
probe_setopts(struct prober *p, const struct probe_opts *o)
{
	int one = 1, val;

	if (p->family == AF_INET) {
		val = IP_PMTUDISC_PROBE;
		if (setsockopt(p->fd, IPPROTO_IP, IP_MTU_DISCOVER, &val, sizeof(val)) < 0 ||
		    setsockopt(p->fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)) < 0)
			return -errno;
		/* A reply larger than the MTU the peer sends with comes back in fragments: the
		 * kernel says so (Linux 4.12+), which tells the peer's own MTU from the slack
		 * its NIC accepts on receive (veth and many NICs take a few bytes more). */
		p->fragsize =
			setsockopt(p->fd, IPPROTO_IP, IP_RECVFRAGSIZE, &one, sizeof(one)) == 0;
		if (p->raw) {
			struct icmp_filter f;

			f.data = ~((1U << ICMP_ECHOREPLY) | (1U << ICMP_DEST_UNREACH) |
				   (1U << ICMP_TIME_EXCEEDED));
			(void)setsockopt(p->fd, SOL_RAW, ICMP_FILTER, &f, sizeof(f));
		}
	} else {
		val = IPV6_PMTUDISC_PROBE;
		if (setsockopt(p->fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &val, sizeof(val)) < 0 ||
		    setsockopt(p->fd, IPPROTO_IPV6, IPV6_DONTFRAG, &one, sizeof(one)) < 0 ||
		    setsockopt(p->fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof(one)) < 0)
			return -errno;
		p->fragsize =
			setsockopt(p->fd, IPPROTO_IPV6, IPV6_RECVFRAGSIZE, &one, sizeof(one)) == 0;
		if (p->raw) {
			struct icmp6_filter f;

			ICMP6_FILTER_SETBLOCKALL(&f);
			ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f);
			ICMP6_FILTER_SETPASS(ICMP6_PACKET_TOO_BIG, &f);
			ICMP6_FILTER_SETPASS(ICMP6_DST_UNREACH, &f);
			ICMP6_FILTER_SETPASS(ICMP6_TIME_EXCEEDED, &f);
			(void)setsockopt(p->fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f));
		}
	}
	if (o->ifname && setsockopt(p->fd, SOL_SOCKET, SO_BINDTODEVICE, o->ifname,
				    (socklen_t)strlen(o->ifname) + 1) < 0) {
		/* Unprivileged ping sockets may not bind; the route still decides. */
		if (errno != EPERM)
			return -errno;
		log_debug("probe: cannot bind to %s: %s", o->ifname, strerror(errno));
	}
	return 0;
}

/* Opens a connected ICMP socket towards peer. Returns 0, -ENETUNREACH (no route: r->why
 * set, not an error for the caller), or -errno with r->why set. */
static int
probe_open(struct prober *p, const char *peer, const struct probe_opts *o, struct probe_result *r)
{
	struct addrinfo hints, *ai = NULL;
	int proto, e, rc;
	socklen_t sl;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->r = r;
	p->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : PROBE_TIMEOUT_MS;
	p->first_timeout_ms =
		o->first_timeout_ms > 0 ? o->first_timeout_ms : PROBE_FIRST_TIMEOUT_MS;
	p->tries = o->tries > 0 ? o->tries : PROBE_TRIES;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	e = getaddrinfo(peer, NULL, &hints, &ai);
	if (e != 0 || !ai) {
		snprintf(r->why, sizeof(r->why), "cannot resolve peer '%s': %s", peer,
			 e ? gai_strerror(e) : "no address");
		return -EADDRNOTAVAIL;
	}
	p->family = ai->ai_family;
	r->family = p->family;
	r->min = p->family == AF_INET ? PROBE_MIN_V4 : PROBE_MIN_V6;
	if (p->family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, r->addr,
			  sizeof(r->addr));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, r->addr,
			  sizeof(r->addr));
	if (o->ifname && if_nametoindex(o->ifname) == 0) {
		snprintf(r->why, sizeof(r->why), "no interface named %s", o->ifname);
		rc = -ENODEV;
		goto fail;
	}

	proto = p->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	p->raw = true;
	p->fd = socket(p->family, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (p->fd < 0 && (errno == EPERM || errno == EACCES)) {
		p->raw = false;
		p->fd = socket(p->family, SOCK_DGRAM | SOCK_CLOEXEC, proto);
	}
	if (p->fd < 0) {
		rc = -errno;
		if (rc == -EPERM || rc == -EACCES) {
			snprintf(r->why, sizeof(r->why),
				 "ICMP probes need root (CAP_NET_RAW) or a group in "
				 "net.ipv4.ping_group_range");
			rc = -EPERM;
		} else {
			snprintf(r->why, sizeof(r->why), "ICMP socket: %s", strerror(-rc));
		}
		goto fail;
	}
	r->raw = p->raw;
	rc = probe_setopts(p, o);
	if (rc < 0) {
		snprintf(r->why, sizeof(r->why), "socket options: %s", strerror(-rc));
		goto fail;
	}
	if (connect(p->fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		rc = -errno;
		snprintf(r->why, sizeof(r->why), "no route to %s%s%s: %s", r->addr,
			 o->ifname ? " via " : "", o->ifname ? o->ifname : "", strerror(-rc));
		if (rc == -EHOSTUNREACH || rc == -EACCES || rc == -EPERM)
			rc = -ENETUNREACH;
		goto fail;
	}
	r->max = o->max;
	if (r->max <= 0) {
		int mtu = 0;

		sl = sizeof(mtu);
		if (p->family == AF_INET)
			e = getsockopt(p->fd, IPPROTO_IP, IP_MTU, &mtu, &sl);
		else
			e = getsockopt(p->fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &sl);
		r->max = e == 0 && mtu > 0 ? mtu : 1500;
	}
	if (r->max > 65535)
		r->max = 65535;
	if (r->max < r->min)
		r->max = r->min;
	p->id = (uint16_t)(getpid() ^ (probe_now_us() & 0xffff));
	p->buf = xmalloc(PROBE_BUFSZ);
	freeaddrinfo(ai);
	return 0;
fail:
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	freeaddrinfo(ai);
	return rc;
}

static void
probe_close(struct prober *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	free(p->buf);
	p->buf = NULL;
}

/* An ICMP error for one of our echoes: too big, unreachable, TTL. */
static void
probe_note_error(struct prober *p, int origin, int type, int code, unsigned info, int err)
{
	p->fast_fail = true;
	if (origin == SO_EE_ORIGIN_LOCAL) {
		if (err != EMSGSIZE)
			snprintf(p->r->why, sizeof(p->r->why), "%s", strerror(err));
		return;
	}
	if ((origin == SO_EE_ORIGIN_ICMP && type == ICMP_DEST_UNREACH &&
	     code == ICMP_FRAG_NEEDED) ||
	    (origin == SO_EE_ORIGIN_ICMP6 && type == ICMP6_PACKET_TOO_BIG)) {
		if (info >= 68 && info <= 65535)
			p->r->hint = (int)info;
		return;
	}
	snprintf(p->r->why, sizeof(p->r->why), "ICMP%s type %d code %d: %s",
		 origin == SO_EE_ORIGIN_ICMP6 ? "v6" : "", type, code, strerror(err));
}

/* Drains the error queue. Returns true when an entry concerned the echo in flight. */
static bool
probe_errqueue(struct prober *p)
{
	unsigned char data[64];
	char control[512];
	bool ours = false;

	for (;;) {
		struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
		struct msghdr mh = { .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = control,
				     .msg_controllen = sizeof(control) };
		struct cmsghdr *c;
		ssize_t n = recvmsg(p->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);

		if (n < 0)
			return ours;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			struct sock_extended_err ee;

			if (!((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR) ||
			      (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR)))
				continue;
			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			/* The echo header comes back with the error: skip stale sequences. */
			if (n >= 8 && (data[6] << 8 | data[7]) != p->seq)
				continue;
			probe_note_error(p, ee.ee_origin, ee.ee_type, ee.ee_code, ee.ee_info,
					 (int)ee.ee_errno);
			ours = true;
		}
	}
}

/* Is buf[0..n) the reply to the echo in flight? Raw IPv4 sockets see the IP header. */
static bool
probe_is_reply(struct prober *p, const unsigned char *buf, ssize_t n)
{
	const unsigned char *icmp = buf;
	int want = p->family == AF_INET ? ICMP_ECHOREPLY : ICMP6_ECHO_REPLY;

	if (p->family == AF_INET && p->raw) {
		size_t ihl;

		if (n < 20)
			return false;
		ihl = (size_t)(buf[0] & 0x0f) * 4;
		if (ihl < 20 || (ssize_t)ihl + 8 > n)
			return false;
		icmp = buf + ihl;
		n -= (ssize_t)ihl;
	}
	if (n < 8 || icmp[0] != want || icmp[1] != 0)
		return false;
	/* Ping sockets get their identifier from the kernel, which matches it for us. */
	if (p->raw && (icmp[4] << 8 | icmp[5]) != p->id)
		return false;
	return (icmp[6] << 8 | icmp[7]) == p->seq;
}

/* recv() that also notes in p->last_frag the largest fragment of a reassembled datagram. */
static ssize_t
probe_recv(struct prober *p)
{
	char control[256];
	struct iovec iov = { .iov_base = p->buf, .iov_len = PROBE_BUFSZ };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = control,
			     .msg_controllen = sizeof(control) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(p->fd, &mh, MSG_DONTWAIT);

	p->last_frag = 0;
	if (n < 0)
		return n;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVFRAGSIZE) ||
		    (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVFRAGSIZE)) {
			int v;

			memcpy(&v, CMSG_DATA(c), sizeof(v));
			p->last_frag = v > 0 ? v : 1;
		}
	return n;
}

/* One echo of size bytes. Returns 2 answered by a reply that came whole, 1 answered (in
 * fragments, or the kernel cannot tell), 0 lost (or refused locally), -errno. */
static int
probe_echo(struct prober *p, int size)
{
	int icmplen = size - probe_hdrlen(p->family) + 8;
	long long start, deadline, now;
	uint16_t ck;
	ssize_t n;
	int i, wait_ms;

	if (icmplen < 8)
		return -EINVAL;
	p->fast_fail = false;
	p->seq++;
	p->buf[0] = p->family == AF_INET ? ICMP_ECHO : ICMP6_ECHO_REQUEST;
	p->buf[1] = 0;
	p->buf[2] = p->buf[3] = 0;
	p->buf[4] = (unsigned char)(p->id >> 8);
	p->buf[5] = (unsigned char)p->id;
	p->buf[6] = (unsigned char)(p->seq >> 8);
	p->buf[7] = (unsigned char)p->seq;
	for (i = 8; i < icmplen; i++)
		p->buf[i] = (unsigned char)(i & 0xff);
	if (p->family == AF_INET) { /* the kernel sums ICMPv6 and ping sockets itself */
		ck = probe_cksum(p->buf, (size_t)icmplen);
		p->buf[2] = (unsigned char)(ck >> 8);
		p->buf[3] = (unsigned char)ck;
	}
	(void)probe_errqueue(p); /* forget errors about earlier echoes */
	p->fast_fail = false;
	p->r->probes++;
	start = probe_now_us();
	do
		n = send(p->fd, p->buf, (size_t)icmplen, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		switch (errno) {
		case EMSGSIZE: /* larger than the local link */
			p->fast_fail = true;
			(void)probe_errqueue(p);
			return 0;
		case EHOSTUNREACH:
		case ENETUNREACH:
		case EHOSTDOWN:
		case ENETDOWN:
		case ECONNREFUSED:
		case EPERM: /* a local firewall */
		case EACCES:
		case ENOBUFS:
		case EAGAIN:
			snprintf(p->r->why, sizeof(p->r->why), "sending to %s: %s", p->r->addr,
				 strerror(errno));
			(void)probe_errqueue(p);
			return 0;
		default:
			return -errno;
		}
	}
	wait_ms = p->answered ? p->timeout_ms : p->first_timeout_ms;
	deadline = start + (long long)wait_ms * 1000;
	for (;;) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		int left;

		now = probe_now_us();
		if (now >= deadline)
			return 0;
		left = (int)((deadline - now + 999) / 1000);
		i = poll(&pfd, 1, left);
		if (i < 0 && errno != EINTR)
			return -errno;
		if (i <= 0)
			continue;
		if ((pfd.revents & POLLERR) && probe_errqueue(p))
			return 0;
		if (!(pfd.revents & POLLIN))
			continue;
		n = probe_recv(p);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			if (probe_errqueue(p))
				return 0;
			continue;
		}
		if (!probe_is_reply(p, p->buf, n))
			continue;
		now = probe_now_us();
		if (!p->answered) {
			/* Later echoes wait a few round trips, not the first timeout. */
			long long t = (now - start) * 4 / 1000 + 1;

			p->answered = true;
			if (t > p->timeout_ms)
				p->timeout_ms =
					t > PROBE_TIMEOUT_CAP_MS ? PROBE_TIMEOUT_CAP_MS : (int)t;
		}
		return p->fragsize && !p->last_frag ? 2 : 1;
	}
}

static int
probe_try(void *arg, int size)
{
	struct prober *p = arg;
	int i, r, tries;

	tries = p->answered ? p->tries
			    : (p->tries > PROBE_FIRST_TRIES ? p->tries : PROBE_FIRST_TRIES);
	for (i = 0; i < tries; i++) {
		r = probe_echo(p, size);
		log_debug("probe %s: %d bytes: %s", p->r->addr, size,
			  r > 1	   ? "passed"
			  : r > 0  ? (p->last_frag ? "passed, reply in fragments" : "passed")
			  : r == 0 ? "lost"
				   : strerror(-r));
		if (r != 0)
			return r;
		if (p->fast_fail)
			break;
	}
	return 0;
}

int
probe_search(int lo, int hi, probe_try_fn try, void *arg, int *best)
{
	int good, bad, mid, r;

	r = try(arg, lo);
	if (r < 0)
		return r;
	if (r == 0)
		return -EHOSTUNREACH;
	if (hi <= lo) {
		*best = lo;
		return 0;
	}
	r = try(arg, hi);
	if (r < 0)
		return r;
	if (r > 0) {
		*best = hi;
		return 0;
	}
	good = lo;
	bad = hi;
	while (bad - good > 1) {
		mid = good + (bad - good) / 2;
		r = try(arg, mid);
		if (r < 0)
			return r;
		if (r > 0)
			good = mid;
		else
			bad = mid;
	}
	*best = good;
	return 0;
}

struct peer_search {
	probe_try_fn try;
	void *arg;
	int whole_max; /* largest size answered by a whole reply; 0 none */
	int frag_min;  /* smallest size answered in fragments; 0 none */
};

static int
probe_try_note(void *arg, int size)
{
	struct peer_search *ps = arg;
	int r = ps->try(ps->arg, size);

	if (r > 1 && size > ps->whole_max)
		ps->whole_max = size;
	if (r == 1 && (!ps->frag_min || size < ps->frag_min))
		ps->frag_min = size;
	return r;
}

int
probe_search_peer(int lo, int hi, probe_try_fn try, void *arg, int *best, int *own)
{
	struct peer_search ps = { .try = try, .arg = arg };
	int good, bad, mid, r;

	*own = 0;
	r = probe_search(lo, hi, probe_try_note, &ps, best);
	if (r < 0 || !ps.whole_max)
		return r; /* no whole reply seen: the kernel cannot tell fragments */
	if (ps.whole_max >= *best || !ps.frag_min) {
		*own = ps.whole_max;
		return 0;
	}
	/* Whole up to good, fragments from bad: the peer's own MTU is in between. */
	good = ps.whole_max;
	bad = ps.frag_min;
	while (bad - good > 1) {
		mid = good + (bad - good) / 2;
		r = try(arg, mid);
		if (r < 0)
			return r;
		if (r > 1)
			good = mid;
		else
			bad = mid; /* in fragments, or lost: above what the peer sends */
	}
	*own = good;
	return 0;
}

static void
probe_result_init(struct probe_result *r)
{
	memset(r, 0, sizeof(*r));
}

int
probe_peer(const char *peer, const struct probe_opts *o, struct probe_result *r)
{
	struct prober p;
	long long t0 = probe_now_us();
	int rc, best = 0;

	probe_result_init(r);
	rc = probe_open(&p, peer, o, r);
	if (rc == -ENETUNREACH) {
		r->elapsed_ms = (int)((probe_now_us() - t0) / 1000);
		return 0;
	}
	if (rc < 0)
		return rc;
	rc = probe_search_peer(r->min, r->max, probe_try, &p, &best, &r->peer_mtu);
	r->elapsed_ms = (int)((probe_now_us() - t0) / 1000);
	if (rc == -EHOSTUNREACH) {
		if (!r->why[0])
			snprintf(r->why, sizeof(r->why),
				 "no answer to %d echo requests of %d bytes within %d ms",
				 r->probes, r->min, r->elapsed_ms);
		rc = 0;
	} else if (rc == 0) {
		r->reachable = true;
		r->largest = best;
		r->why[0] = '\0';
	} else {
		snprintf(r->why, sizeof(r->why), "probing %s: %s", r->addr, strerror(-rc));
	}
	probe_close(&p);
	return rc;
}

int
probe_size(const char *peer, const struct probe_opts *o, int size, bool *passed,
	   struct probe_result *res)
{
	struct probe_result local;
	struct probe_result *r = res ? res : &local;
	struct prober p;
	long long t0 = probe_now_us();
	int rc;

	*passed = false;
	probe_result_init(r);
	rc = probe_open(&p, peer, o, r);
	if (rc == -ENETUNREACH) {
		r->elapsed_ms = (int)((probe_now_us() - t0) / 1000);
		return 0;
	}
	if (rc < 0)
		return rc;
	if (size <= 0)
		size = r->min;
	rc = probe_try(&p, size);
	r->elapsed_ms = (int)((probe_now_us() - t0) / 1000);
	if (rc > 0) {
		*passed = true;
		r->reachable = true;
		r->largest = size;
		r->peer_mtu = rc > 1 ? size : 0;
		r->why[0] = '\0';
		rc = 0;
	} else if (rc == 0 && !r->why[0]) {
		snprintf(r->why, sizeof(r->why),
			 "no answer to %d don't-fragment echo requests of %d bytes within %d ms",
			 r->probes, size, r->elapsed_ms);
	}
	probe_close(&p);
	return rc;
}
