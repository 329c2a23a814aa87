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
	size_t i;
	int rc = hwinfo_read(NULL, hw);

	/* The driver's max MTU is only available over netlink (netif.c), not in sysfs. */
	for (i = 0; rc == 0 && i < hw->n; i++) {
		struct netif_info ni;
		char *v;

		if (strcmp(hw->items[i].kind, "nic") != 0 ||
		    netif_get_info(hw->items[i].name, &ni) < 0 || ni.max_mtu <= 0)
			continue;
		v = xasprintf("%s maxmtu=%d", hw->items[i].value, ni.max_mtu);
		free(hw->items[i].value);
		hw->items[i].value = v;
	}
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
