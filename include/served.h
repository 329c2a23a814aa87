/* served.h - proof that the shares are served: after a reload, each share is asked for over
 * each protocol from this host, the way a client asks (SMB tree connect, NFS mount, AFP
 * FPOpenVol), through the benchmark's drivers. */
#ifndef NASTUNE_SERVED_H
#define NASTUNE_SERVED_H

#include <stdbool.h>
#include <stddef.h>

struct model;

enum served_state {
	SERVED_YES,	/* the server knows the share (an access refusal counts) */
	SERVED_NO,	/* it does not: bad network name, no such export or volume */
	SERVED_SKIPPED, /* not asked; answer says why */
};

struct served_proof {
	char *share;	   /* the share's name (owned) */
	const char *proto; /* "smb", "nfs", "afp" (static) */
	enum served_state state;
	char *answer; /* the server's answer, or why it was not asked (owned) */
};

/* Asks for every share of m that uses a protocol in protos (PROTO_* mask) over that protocol,
 * from this host (127.0.0.1, or the first address of server.interfaces for SMB, which binds
 * to them only). Appends one proof per share and protocol to *v (*n entries; the caller frees
 * with served_proofs_free). Returns 0 when no share was refused, -ENOENT when one was. */
int served_prove(const struct model *m, unsigned protos, struct served_proof **v, size_t *n);

/* What one answer proves (pure): proto "smb", "nfs" or "afp", rc the driver's connect result,
 * answer its sentence. A refusal proves the share only where it comes from the share itself:
 * an SMB tree connect refused (EACCES); not a refused session (EPERM, logon failure: no
 * share was asked for); an AFP volume refused at FPOpenVol, not a login refused before it. */
enum served_state served_judge(const char *proto, int rc, const char *answer);

/* "served", "NOT served", "not proven". */
const char *served_state_name(enum served_state s);

/* Frees v and what its n entries hold; NULL safe. */
void served_proofs_free(struct served_proof *v, size_t n);

#endif
