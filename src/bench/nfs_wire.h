/* nfs_wire.h - NFSv3 READ and WRITE on a TCP connection of their own, the payload moved
 * straight between the socket and the caller's buffer (libnfs 4.0 copies every byte once
 * more, through its PDU buffers). The NFS driver's data path; portable, no libnfs. */
#ifndef NASTUNE_NFS_WIRE_H
#define NASTUNE_NFS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct nfs_wire;

/* Connects to the NFS service at sa (AUTH_UNIX as uid/gid; a reserved source port when the
 * process may bind one, as libnfs does). NULL with a message in err on failure. */
struct nfs_wire *nfs_wire_open(const struct sockaddr *sa, socklen_t salen, uint32_t uid,
			       uint32_t gid, int timeout_ms, char *err, size_t errlen);
void nfs_wire_close(struct nfs_wire *w);

/* GETATTR of fh: whether the server takes this connection's calls (port, credentials). */
int nfs_wire_getattr(struct nfs_wire *w, const void *fh, size_t fhlen, char *err, size_t errlen);

/* READs into buf, or UNSTABLE WRITEs from it, len bytes at file offset off in calls of at
 * most chunk bytes, depth of them in flight. Returns the bytes done (a read stops at end of
 * file) or -errno with a message in err; after a transport error (timeout, closed
 * connection, a reply it cannot parse) the connection is unusable (nfs_wire_broken). */
ssize_t nfs_wire_transfer(struct nfs_wire *w, const void *fh, size_t fhlen, bool write, char *buf,
			  size_t len, uint64_t off, size_t chunk, int depth, char *err,
			  size_t errlen);
bool nfs_wire_broken(const struct nfs_wire *w);

#endif
