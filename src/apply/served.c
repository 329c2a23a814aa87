/* served.c - asks the running daemons for each share, as a client would, from this host.
 *
 * The benchmark's drivers do the asking (libsmbclient, libnfs and the AFP client each stay in
 * their one driver). What counts as served is what proves the server knows the share, not
 * that this host may use it: an SMB tree connect refused with access denied (the share has
 * valid users), an NFS export that refuses this client but is in the server's export list, an
 * AFP volume a guest may not open. Bad network name, no such export and no such volume are
 * "not served"; a session or login refused before any share is named is "not proven". */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_driver.h"
#include "hostaddr.h"
#include "model.h"
#include "served.h"
#include "xmalloc.h"

const char *
served_state_name(enum served_state s)
{
	return s == SERVED_YES ? "served" : s == SERVED_NO ? "NOT served" : "not proven";
}

enum served_state
served_judge(const char *proto, int rc, const char *answer)
{
	if (rc == 0)
		return SERVED_YES;
	if (strcmp(proto, "smb") == 0) {
		/* EPERM is a session refused (logon failure) before any tree connect: the same
		 * for a share that exists and one that does not. */
		return rc == -EACCES ? SERVED_YES : rc == -EPERM ? SERVED_SKIPPED : SERVED_NO;
	}
	if (strcmp(proto, "nfs") == 0) {
		/* The driver looks an NFSv3 refusal up in the export list (Ganesha answers an
		 * unknown export with MNT3ERR_ACCES too): "refuses this client" means the export
		 * is listed. */
		if (strstr(answer, "no export"))
			return SERVED_NO;
		if (strstr(answer, "refuses this client"))
			return SERVED_YES;
		return rc == -EACCES || rc == -EPERM ? SERVED_YES : SERVED_NO;
	}
	/* AFP: only FPOpenVol's refusal is about the volume; a server offering no guest login,
	 * or refusing it, answers before any volume is named. */
	if (rc == -EACCES && strstr(answer, ": open volume: "))
		return SERVED_YES;
	return rc == -EACCES || rc == -EPERM ? SERVED_SKIPPED : SERVED_NO;
}

/* Where smbd listens: with server.interfaces it binds to those only (bind interfaces only),
 * so loopback would be refused. The first IPv4 address of the first listed interface that has
 * one; an entry may also be an address ("192.168.1.2/24"). false when the list has none (an
 * IPv6-only interface, one without its address yet): asking 127.0.0.1 then would be refused
 * for every share, a false "not served". */
static bool
smb_host(const struct model *m, char *host, size_t len)
{
	struct hostaddr *ha = NULL;
	size_t nha = 0, i, k;
	bool found = false;

	snprintf(host, len, "127.0.0.1");
	if (m->server.interfaces.n == 0)
		return true;
	if (hostaddr_list(AF_INET, &ha, &nha) < 0)
		return false;
	for (i = 0; i < m->server.interfaces.n; i++) {
		const char *e = m->server.interfaces.v[i];
		struct in_addr in;
		char buf[64];

		snprintf(buf, sizeof(buf), "%s", e);
		buf[strcspn(buf, "/")] = '\0';
		if (inet_pton(AF_INET, buf, &in) == 1) {
			snprintf(host, len, "%s", buf);
			found = true;
			break;
		}
		for (k = 0; k < nha; k++)
			if (strcmp(ha[k].name, e) == 0)
				break;
		if (k < nha) {
			snprintf(host, len, "%s", ha[k].addr);
			found = true;
			break;
		}
	}
	free(ha);
	return found;
}

static struct served_proof *
add(struct served_proof **v, size_t *n, const struct share *s, const char *proto,
    enum served_state st, char *answer)
{
	struct served_proof *p;

	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	p = &(*v)[(*n)++];
	p->share = xstrdup(s->name);
	p->proto = proto;
	p->state = st;
	p->answer = answer;
	return p;
}

/* Connects to share (SMB share, NFS export path, AFP volume) on host through driver d, as
 * guest / anonymous. Returns the connect's result with its sentence in err. */
static int
ask(const struct bench_driver *d, const char *scheme, const char *host, const char *share,
    int nfs_version, char *err, size_t errlen)
{
	struct bench_target t = { 0 };
	struct bench_conn *c = NULL;
	int rc;

	t.scheme = (char *)scheme;
	t.host = (char *)host;
	t.share = (char *)share;
	t.subdir = (char *)"";
	t.url = xasprintf("%s://%s%s%s", scheme, host, *share == '/' ? "" : "/", share);
	t.nfs_version = nfs_version;
	t.nfs_uid = t.nfs_gid = -1;
	/* A daemon that has just reloaded may drop or refuse the first connection (afpd closed
	 * one in a loaded run): that is no answer about the share, so ask again for up to 2 s. */
	for (int i = 0; i < 10; i++) {
		err[0] = '\0';
		rc = d->connect(&t, &c, err, errlen);
		if (rc != -ECONNRESET && rc != -ECONNREFUSED)
			break;
		usleep(200000);
	}
	if (rc == 0) {
		snprintf(err, errlen, "%s: connected as guest", t.url);
		d->disconnect(c);
	}
	free(t.url);
	return rc;
}

static void
prove_smb(const struct model *m, const struct share *s, const char *host, struct served_proof **v,
	  size_t *n)
{
	char err[512];
	int rc = ask(&bench_drv_smb, "smb", host, s->name, 0, err, sizeof(err));

	/* Access denied at tree connect is an answer about the share from a server that has it;
	 * a missing share is ENODEV (NT_STATUS_BAD_NETWORK_NAME). */
	(void)m;
	add(v, n, s, "smb", served_judge("smb", rc, err),
	    rc == -ENODEV ? xasprintf("tree connect: NT_STATUS_BAD_NETWORK_NAME (%s)", err)
			  : xasprintf("tree connect: %s", err));
}

/* Whether IPv4 address a (network order) is in client spec c ("*", "a.b.c.d", "a.b.c.d/n"). */
static bool
client_admits(const char *c, struct in_addr a)
{
	char buf[64], *slash;
	struct in_addr net;
	unsigned long bits = 32;
	uint32_t mask;

	if (strcmp(c, "*") == 0)
		return true;
	snprintf(buf, sizeof(buf), "%s", c);
	if ((slash = strchr(buf, '/'))) {
		*slash = '\0';
		bits = strtoul(slash + 1, NULL, 10);
	}
	if (inet_pton(AF_INET, buf, &net) != 1 || bits > 32)
		return false; /* a host name or netgroup: not decided here */
	mask = bits ? htonl(~0u << (32 - bits)) : 0;
	return (net.s_addr & mask) == (a.s_addr & mask);
}

/* An address of this host the export admits: Ganesha lists an export, and both servers mount
 * it, only for its clients. Loopback first. false when none is. */
static bool
nfs_host(const struct share *s, char *host, size_t len)
{
	struct hostaddr *ha = NULL;
	struct in_addr lo = { htonl(INADDR_LOOPBACK) };
	size_t nha = 0, i, k;
	bool found = false;

	snprintf(host, len, "127.0.0.1");
	for (i = 0; i < s->nfs_clients.n; i++)
		if (client_admits(s->nfs_clients.v[i], lo))
			return true;
	if (s->nfs_clients.n == 0)
		return true;
	if (hostaddr_list(AF_INET, &ha, &nha) < 0)
		return false;
	for (k = 0; k < nha && !found; k++)
		for (i = 0; i < s->nfs_clients.n && !found; i++)
			if (client_admits(s->nfs_clients.v[i], ha[k].a.in)) {
				snprintf(host, len, "%s", ha[k].addr);
				found = true;
			}
	free(ha);
	return found;
}

static void
prove_nfs(const struct model *m, const struct share *s, struct served_proof **v, size_t *n)
{
	char err[512], host[64];
	int rc;

	if (!nfs_host(s, host, sizeof(host))) {
		add(v, n, s, "nfs", SERVED_SKIPPED,
		    xstrdup("no address of this host is among the "
			    "export's clients"));
		return;
	}
	rc = ask(&bench_drv_nfs, "nfs", host, s->path, m->nfs.v3 ? 3 : 4, err, sizeof(err));
	add(v, n, s, "nfs", served_judge("nfs", rc, err), xasprintf("mount: %s", err));
}

static void
prove_afp(const struct model *m, const struct share *s, struct served_proof **v, size_t *n)
{
	char err[512];
	int rc;

	(void)m;
	if (!s->guest) {
		/* afpd shows a volume only to users who may open it, and apply has no password. */
		add(v, n, s, "afp", SERVED_SKIPPED,
		    xstrdup("not a guest volume: afpd lists it only "
			    "to its users, and apply logs in as guest"));
		return;
	}
	rc = ask(&bench_drv_afp, "afp", "127.0.0.1", s->name, 0, err, sizeof(err));
	add(v, n, s, "afp", served_judge("afp", rc, err), xasprintf("open volume: %s", err));
}

int
served_prove(const struct model *m, unsigned protos, struct served_proof **v, size_t *n)
{
	char host[64];
	size_t i, first = *n;
	bool smb_ok = smb_host(m, host, sizeof(host));

	for (i = 0; i < m->n_shares; i++) {
		const struct share *s = &m->shares[i];

		if ((protos & PROTO_SMB) && (s->protocols & PROTO_SMB) && !smb_ok)
			add(v, n, s, "smb", SERVED_SKIPPED,
			    xstrdup("no IPv4 address among "
				    "server.interfaces to ask smbd "
				    "on (it binds to those only)"));
		else if ((protos & PROTO_SMB) && (s->protocols & PROTO_SMB))
			prove_smb(m, s, host, v, n);
		if ((protos & PROTO_NFS) && (s->protocols & PROTO_NFS))
			prove_nfs(m, s, v, n);
		if ((protos & PROTO_AFP) && (s->protocols & PROTO_AFP))
			prove_afp(m, s, v, n);
	}
	for (i = first; i < *n; i++)
		if ((*v)[i].state == SERVED_NO)
			return -ENOENT;
	return 0;
}

void
served_proofs_free(struct served_proof *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].share);
		free(v[i].answer);
	}
	free(v);
}
