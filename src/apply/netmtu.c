/* netmtu.c - network.mtu in an apply: whether nastune manages the MTU, the drift of the link
 * from what the last generation recorded, the MTU restored on rollback, and the step that
 * sets and proves it (netif_mtu_ensure). */
#include <string.h>

#include "adopt.h"
#include "apply.h"
#include "buf.h"
#include "fsutil.h"
#include "hash.h"
#include "hwinfo.h"
#include "import.h"
#include "job.h"
#include "knobs.h"
#include "log.h"
#include "netif.h"
#include "paths.h"
#include "proc.h"
#include "profile.h"
#include "runrec.h"
#include "served.h"
#include "service.h"
#include "smbmod.h"
#include "state.h"
#include "timeutil.h"

bool
netmtu_managed(const struct model *m)
{
	return m->network.interface && m->network.mtu_mode != MTU_KEEP;
}

bool
netmtu_drifted(const struct model *m, const struct generation *last)
{
	int cur;

	if (!netmtu_managed(m))
		return false;
	return netif_get_mtu(m->network.interface, &cur) < 0 || cur != last->mtu ||
	       strcmp(last->mtu_iface, m->network.interface) != 0;
}

int
netmtu_restore(const struct generation *g)
{
	char err[512] = "";
	int cur, rc;

	if (!g->mtu || !g->mtu_iface[0])
		return 0;
	if ((rc = netif_get_mtu(g->mtu_iface, &cur)) < 0) {
		log_warnx("cannot read the MTU of %s to restore %d: %s", g->mtu_iface, g->mtu,
			  strerror(-rc));
		return rc;
	}
	if (cur == g->mtu)
		return 0;
	if ((rc = netif_set_mtu(g->mtu_iface, g->mtu, err, sizeof(err))) < 0) {
		log_warnx("cannot restore MTU %d on %s: %s", g->mtu, g->mtu_iface,
			  err[0] ? err : strerror(-rc));
		return rc;
	}
	log_info("MTU of %s restored to %d (was %d)", g->mtu_iface, g->mtu, cur);
	return 0;
}

/* network.mtu: commit-confirm through netif (prove against network.peers, revert on failure). */
static int
mtu_run(struct job *j, char *err, size_t errlen)
{
	const struct model *m = j->m;
	int rc;

	log_info("%s the MTU of %s%s...", m->network.mtu_mode == MTU_AUTO ? "choosing" : "setting",
		 m->network.interface, m->network.peers.n ? " and proving it to every peer" : "");
	rc = netif_mtu_ensure(m->network.interface,
			      m->network.mtu_mode == MTU_AUTO ? NETIF_MTU_AUTO : NETIF_MTU_FIXED,
			      m->network.mtu, (const char *const *)m->network.peers.v,
			      m->network.peers.n, &j->mtu, err, errlen);
	j->mtu_ran = true;
	return rc;
}

int
netmtu_step(struct job *j, const struct generation *last, long prev)
{
	const struct model *m = j->m;
	char err[1024] = "";
	int rc;

	if ((rc = mtu_run(j, err, sizeof(err))) < 0) {
		/* netif has put the old MTU back; the files follow it. */
		if (j->nch)
			return apply_undo(j, prev, "mtu", m->network.interface, err);
		return apply_fail(j, rc, "apply failed at mtu: %s: %s; nothing was changed",
				  m->network.interface, err);
	}
	apply_crash_point("mtu");
	if (j->nch == 0 && last->mtu == j->mtu.final_mtu &&
	    strcmp(last->mtu_iface, m->network.interface) == 0) {
		log_info("nothing to do: the installed files match the configuration and MTU %d on "
			 "%s is proven",
			 j->mtu.final_mtu, m->network.interface);
		return 1;
	}
	return 0;
}
