/* runrec.c - what a stored run says about when and where it was made (runrec.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hwinfo.h"
#include "netif.h"
#include "runrec.h"
#include "state.h"
#include "timeutil.h"
#include "xmalloc.h"

int
runrec_read_hw(struct hwinfo *hw)
{
	struct netif_info *links = NULL;
	size_t i, k, nlinks = 0;
	int rc = hwinfo_read(NULL, hw);

	/* The driver's max MTU is only available over netlink (netif.c), not in sysfs: one
	 * dump for every NIC, without ethtool (apply --if-changed reads this every time). */
	for (i = 0; rc == 0 && i < hw->n; i++) {
		const struct netif_info *ni = NULL;
		char *v;

		if (strcmp(hw->items[i].kind, "nic") != 0)
			continue;
		if (!links && netif_list_quick(&links, &nlinks) < 0)
			break;
		for (k = 0; k < nlinks && !ni; k++)
			if (strcmp(links[k].name, hw->items[i].name) == 0)
				ni = &links[k];
		if (!ni || ni->max_mtu <= 0)
			continue;
		v = xasprintf("%s maxmtu=%d", hw->items[i].value, ni->max_mtu);
		free(hw->items[i].value);
		hw->items[i].value = v;
	}
	free(links);
	return rc;
}

int
runrec_read(struct runrec *r, struct state *st)
{
	struct generation g = { 0 };
	struct hwinfo hw = { 0 };
	int rc = 0;

	memset(r, 0, sizeof(*r));
	timeutil_now_iso(r->created, sizeof(r->created));
	r->generation = -1;
	if (st && state_last_generation(st, &g) == 0 && g.created)
		r->generation = g.id;
	generation_clear(&g);
	if (runrec_read_hw(&hw) < 0)
		rc = -EIO;
	hwinfo_hash(&hw, r->hw_hash);
	r->hw = hwinfo_text(&hw);
	if (!r->hw)
		r->hw = xstrdup("");
	hwinfo_clear(&hw);
	return rc;
}

void
runrec_clear(struct runrec *r)
{
	free(r->hw);
	r->hw = NULL;
}
