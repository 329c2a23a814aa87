/* adopt.h - inside src/apply/: the first adoption of a box that already serves: which
 * shares an apply would stop serving that no nastune generation installed. */
#ifndef NASTUNE_APPLY_ADOPT_H
#define NASTUNE_APPLY_ADOPT_H

#include <stddef.h>

#include "buf.h"
#include "render.h"

/* For every file of r that serves shares (smb.conf, afp.conf, ganesha.conf, the exports
 * file), the shares the installed copy under root serves that r's copy does not, that no
 * generation nastune recorded (1 and up, their kept copies) served, and that are not a
 * package's stock ones (printers, print$, a read-only homes): one "file:line: ..." line each
 * into out. Includes are read under root, else
 * at the paths they name. Returns how many. Reads only. */
int adopt_unmanaged(const char *root, const struct rendered *r, struct buf *out);

/* adopt_unmanaged's shares, refused: returns -EINVAL with them and the ways out (nastune
 * import, add them, --drop-unmanaged) in msg, or 0 when there are none. */
int adopt_guard(const char *root, const struct rendered *r, char *msg, size_t msglen);

#endif
