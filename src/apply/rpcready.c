/* rpcready.c - whether a restarted NFS server answers its RPC programs. Ganesha binds port
 * 2049 early and only then registers and serves MOUNT and NFS; systemd calls a Type=forking
 * unit started when the parent exits, before that. A listening port is not a server that
 * mounts: this asks the program itself (a NULL call, found through rpcbind as a client does). */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "service.h"
#include "timeutil.h"

struct probe {
	int state;  /* 0 connecting, 1 calling NULL, 2 answered, -1 failed */
	bool mount; /* the NULL call: MOUNT v3's, else NFS v3's */
	char why[200];
};

static void
null_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	struct probe *p = priv;

	(void)rpc;
	/* A v4-only Ganesha answers NFS v3's NULL with a version mismatch: the program is
	 * served, which is what is asked; "Program not available" is a server still starting. */
	if (status == RPC_STATUS_SUCCESS || (status == RPC_STATUS_ERROR && data &&
					     strstr((const char *)data, "version mismatch"))) {
		p->state = 2;
		return;
	}
	snprintf(p->why, sizeof(p->why), "%s",
		 status == RPC_STATUS_ERROR && data ? (const char *)data : "cancelled");
	p->state = -1;
}

static void
connect_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	struct probe *p = priv;
	int rc;

	if (status != RPC_STATUS_SUCCESS) {
		snprintf(p->why, sizeof(p->why), "%s",
			 status == RPC_STATUS_ERROR && data ? (const char *)data : "cancelled");
		p->state = -1;
		return;
	}
	p->state = 1;
	/* libnfs 4 has no NFSv4 NULL call: version 3's, which a v4-only server refuses as a
	 * version mismatch, answers for the program. */
	rc = p->mount ? rpc_mount3_null_async(rpc, null_cb, p)
		      : rpc_nfs3_null_async(rpc, null_cb, p);
	if (rc != 0) {
		snprintf(p->why, sizeof(p->why), "cannot send the NULL call");
		p->state = -1;
	}
}

/* One probe on 127.0.0.1 within ms: MOUNT v3 found through rpcbind (as an NFSv3 client
 * mounts), else NFS on port 2049 (as an NFSv4 client does). Returns true when it answered;
 * why says what failed otherwise. */
static bool
probe_once(bool mount, int ms, char *why, size_t whylen)
{
	struct rpc_context *rpc = rpc_init_context();
	struct probe p = { 0 };
	double end = timeutil_mono() + ms / 1000.0;

	if (!rpc) {
		snprintf(why, whylen, "cannot create an RPC context");
		return false;
	}
	p.mount = mount;
	if ((mount ? rpc_connect_program_async(rpc, "127.0.0.1", MOUNT_PROGRAM, MOUNT_V3,
					       connect_cb, &p)
		   : rpc_connect_async(rpc, "127.0.0.1", 2049, connect_cb, &p)) != 0) {
		snprintf(why, whylen, "%s", rpc_get_error(rpc));
		rpc_destroy_context(rpc);
		return false;
	}
	while (p.state >= 0 && p.state < 2) {
		struct pollfd pfd = { .fd = rpc_get_fd(rpc),
				      .events = (short)rpc_which_events(rpc) };
		int left = (int)((end - timeutil_mono()) * 1000);

		if (left <= 0) {
			snprintf(p.why, sizeof(p.why), "no answer within %d ms", ms);
			p.state = -1;
			break;
		}
		if (poll(&pfd, 1, left < 20 ? left : 20) < 0 && errno != EINTR) {
			snprintf(p.why, sizeof(p.why), "poll: %s", strerror(errno));
			p.state = -1;
			break;
		}
		if (rpc_service(rpc, pfd.revents) < 0 && p.state >= 0 && p.state < 2) {
			snprintf(p.why, sizeof(p.why), "%s", rpc_get_error(rpc));
			p.state = -1;
		}
	}
	snprintf(why, whylen, "%s", p.why);
	rpc_destroy_context(rpc);
	return p.state == 2;
}

int
service_rpc_ready(bool v3, int timeout_ms, char *err, size_t errlen)
{
	double end = timeutil_mono() + timeout_ms / 1000.0;
	char why[200] = "";

	for (;;) {
		if (probe_once(v3, 1000, why, sizeof(why)))
			return 0;
		if (timeutil_mono() >= end)
			break;
		usleep(10000);
	}
	snprintf(err, errlen, "ganesha.nfsd listens but does not answer %s after %d s: %s",
		 v3 ? "MOUNT v3" : "NFS", timeout_ms / 1000, why[0] ? why : "no answer");
	return -ETIMEDOUT;
}
