/* netif_mtu.c - the commit-confirm MTU change: a watchdog process that restores the old MTU
 * unless confirmed, the peers probed with don't-fragment echoes at the new size, the largest
 * size every peer answers (auto), and the restore when the proof fails. Netlink itself stays
 * in netif.c. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "netif.h"
#include "netif_link.h"
#include "probe.h"
#include "timeutil.h"
#include "xmalloc.h"

#define NETIF_WATCHDOG_S 120	 /* the watchdog restores after this even if alive */
#define NETIF_LINK_WAIT_MS 10000 /* a real NIC may renegotiate after an MTU change */

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
