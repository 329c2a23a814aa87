/* events.c - what a node does on CTDB's events besides following (cluster.h): the
 * cluster's Bonjour records on the node holding the first public address, NFS-Ganesha's
 * grace for an address taken or released. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cluster.h"
#include "fsutil.h"
#include "log.h"
#include "model.h"
#include "proc.h"
#include "service.h"
#include "xmalloc.h"

/* Makes path hold data (NULL: absent); *changed when it did not already. */
static int
put_file(const char *path, const char *data, size_t len, bool *changed)
{
	char *cur = NULL;
	size_t clen = 0;
	int rc = fs_read_file(path, 1 << 20, &cur, &clen);

	if (!data) {
		free(cur);
		if (rc == -ENOENT)
			return 0;
		*changed = true;
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	}
	if (rc == 0 && clen == len && memcmp(cur, data, len) == 0) {
		free(cur);
		return 0;
	}
	free(cur);
	*changed = true;
	return fs_write_atomic(path, data, len, 0644, 1);
}

/* /etc/avahi/hosts with our line (the staged one) present or absent; other lines kept. */
static int
put_hosts_line(const char *root, const char *line, bool present, bool *changed)
{
	char *path = fs_rooted(root, "/etc/avahi/hosts"), *cur = NULL, *p, *save = NULL;
	size_t len = 0, ll = strcspn(line, "\n");
	struct buf b;
	bool had = false;
	int rc = fs_read_file(path, 1 << 20, &cur, &len);

	if (rc < 0 && rc != -ENOENT) {
		free(path);
		return rc;
	}
	buf_init(&b);
	for (p = cur ? strtok_r(cur, "\n", &save) : NULL; p; p = strtok_r(NULL, "\n", &save)) {
		if (strlen(p) == ll && strncmp(p, line, ll) == 0) {
			had = true;
			continue;
		}
		buf_printf(&b, "%s\n", p);
	}
	if (present)
		buf_printf(&b, "%.*s\n", (int)ll, line);
	rc = 0;
	if (had != present) {
		*changed = true;
		rc = fs_write_atomic(path, b.data, b.len, 0644, 1);
	}
	buf_clear(&b);
	free(cur);
	free(path);
	return rc;
}

int
cluster_bonjour_update(const char *root, const struct model *m)
{
	bool hold =
		m->cluster.public_addresses.n && cluster_holds(m->cluster.public_addresses.v[0]);
	char *stage = fs_rooted(root, CLUSTER_BONJOUR_DIR), *svcdir;
	char *hosts = NULL;
	size_t hlen = 0;
	bool changed = false;
	DIR *dir;
	struct dirent *e;
	int rc = 0;

	svcdir = fs_rooted(root, "/etc/avahi/services");
	/* Withdraw what is published but no longer staged, or everything when not holding. */
	if ((dir = opendir(svcdir))) {
		while ((e = readdir(dir))) {
			char *staged, *inst;
			struct stat st;

			if (strncmp(e->d_name, "nastune-cluster", 15) != 0)
				continue;
			staged = xasprintf("%s%s%s", stage, "nastune",
					   e->d_name + strlen("nastune-cluster"));
			inst = xasprintf("%s/%s", svcdir, e->d_name);
			if (!hold || stat(staged, &st) < 0)
				put_file(inst, NULL, 0, &changed);
			free(staged);
			free(inst);
		}
		closedir(dir);
	}
	if (hold && (dir = opendir(stage))) {
		while ((e = readdir(dir))) {
			char *src, *dst, *data = NULL;
			size_t len = 0;

			if (strncmp(e->d_name, "nastune", 7) != 0 || !strstr(e->d_name, ".service"))
				continue;
			src = xasprintf("%s%s", stage, e->d_name);
			dst = xasprintf("%s/nastune-cluster%s", svcdir, e->d_name + 7);
			if (fs_read_file(src, 1 << 20, &data, &len) == 0 &&
			    put_file(dst, data, len, &changed) < 0)
				rc = -EIO;
			free(data);
			free(src);
			free(dst);
		}
		closedir(dir);
	}
	{
		char *hp = xasprintf("%shosts", stage);

		if (fs_read_file(hp, 4096, &hosts, &hlen) == 0 && hlen)
			put_hosts_line(root, hosts, hold, &changed);
		free(hp);
	}
	if (changed) {
		const struct service_backend *be = service_backend(m, root, SVC_MDNS);
		const struct service_desc *d = service_desc(m, SVC_MDNS);
		char err[256] = "";

		/* The hosts file is read at start and on reload; the service files too. */
		if (be && be->reload(root, d, service_pidfile(m, SVC_MDNS), err, sizeof(err)) < 0)
			log_warnx("cluster: reloading avahi-daemon: %s", err);
		log_info("cluster: Bonjour records %s on this node",
			 hold ? "published" : "withdrawn");
	}
	free(hosts);
	free(svcdir);
	free(stage);
	return rc;
}

void
cluster_ganesha_grace(const struct model *m, int event, const char *ip)
{
	char arg[128];
	char *argv[] = { "dbus-send",
			 "--print-reply",
			 "--system",
			 "--dest=org.ganesha.nfsd",
			 "/org/ganesha/nfsd/admin",
			 "org.ganesha.nfsd.admin.grace",
			 arg,
			 NULL };
	int rc;

	if (!m->nfs.enabled || m->nfs.server != NFS_SERVER_GANESHA || !model_uses(m, PROTO_NFS))
		return;
	snprintf(arg, sizeof(arg), "string:%d:%s", event, ip);
	{
		struct proc p = PROC_INIT(argv);

		p.in = p.out = p.err = PROC_NULL;
		p.timeout_ms = 10000;
		rc = proc_run(&p);
	}
	if (rc != 0)
		log_warnx("cluster: NFS-Ganesha did not take the grace period for %s (dbus-send "
			  "exit %d)",
			  ip, rc);
}
