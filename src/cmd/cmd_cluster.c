/* cmd_cluster.c - `nastune cluster event|follow`: what CTDB's event script runs on each node
 * (nastune's own equivalent of ctdb's 50.samba and 60.nfs for the daemons nastune
 * configures), and a node following the cluster's configuration record. */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <jansson.h>

#include "apply.h"
#include "buf.h"
#include "proc.h"
#include "cli.h"
#include "cluster.h"
#include "diag.h"
#include "fsutil.h"
#include "log.h"
#include "model.h"
#include "profile.h"
#include "render.h"
#include "service.h"
#include "timeutil.h"
#include "xmalloc.h"

#define FOLLOW_LOG "/var/lib/nastune/cluster.log"

/* Starts `nastune [--root R] cluster follow` on its own, so the event returns at once (an
 * apply may take longer than ctdb gives an event script). */
static void
spawn_follow(const struct ctx *ctx)
{
	char exe[4096], *log = fs_rooted(ctx->root, FOLLOW_LOG), *argv[6];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct proc p;
	int k = 0, fd;

	if (n <= 0) {
		free(log);
		return;
	}
	exe[n] = '\0';
	argv[k++] = exe;
	if (ctx->root && *ctx->root) {
		argv[k++] = "--root";
		argv[k++] = (char *)ctx->root;
	}
	argv[k++] = "cluster";
	argv[k++] = "follow";
	argv[k] = NULL;
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	p = (struct proc)PROC_INIT(argv);
	p.in = PROC_NULL;
	p.out = fd >= 0 ? PROC_FD : PROC_NULL;
	p.out_fd = fd;
	p.err = PROC_TO_OUT;
	p.new_session = true;
	p.close_fds = true;
	/* Not waited for: it outlives this event, and init reaps it. */
	if (proc_start(&p) < 0)
		log_warnx("cluster: cannot start %s cluster follow", exe);
	if (fd >= 0)
		close(fd);
	free(log);
}

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

/* Bonjour for the cluster: the node holding the first public address publishes the staged
 * records (and the cluster's name for that address); every other node withdraws them. */
static int
cluster_bonjour(const struct ctx *ctx, const struct model *m)
{
	bool hold =
		m->cluster.public_addresses.n && cluster_holds(m->cluster.public_addresses.v[0]);
	char *stage = fs_rooted(ctx->root, CLUSTER_BONJOUR_DIR), *svcdir;
	char *hosts = NULL;
	size_t hlen = 0;
	bool changed = false;
	DIR *dir;
	struct dirent *e;
	int rc = 0;

	svcdir = fs_rooted(ctx->root, "/etc/avahi/services");
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
			put_hosts_line(ctx->root, hosts, hold, &changed);
		free(hp);
	}
	if (changed) {
		const struct service_backend *be = service_backend(m, ctx->root, SVC_MDNS);
		const struct service_desc *d = service_desc(m, SVC_MDNS);
		char err[256] = "";

		/* The hosts file is read at start and on reload; the service files too. */
		if (be &&
		    be->reload(ctx->root, d, service_pidfile(m, SVC_MDNS), err, sizeof(err)) < 0)
			log_warnx("cluster: reloading avahi-daemon: %s", err);
		log_info("cluster: Bonjour records %s on this node",
			 hold ? "published" : "withdrawn");
	}
	free(hosts);
	free(svcdir);
	free(stage);
	return rc;
}

/* NFS-Ganesha's grace for an address this node takes or releases (ctdb's Ganesha callout
 * does the same): clients that held locks through it reclaim them before anyone else. */
static void
ganesha_grace(const struct model *m, int event, const char *ip)
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

/* monitor: the daemons nastune configures answer; else the node gives up its addresses. */
static int
monitor(const struct model *m)
{
	int bad = 0;

	if (m->smb.enabled && model_uses(m, PROTO_SMB) && !service_port_listening(445)) {
		printf("smbd does not listen on port 445\n");
		bad = 1;
	}
	if (m->nfs.enabled && model_uses(m, PROTO_NFS) && !service_port_listening(2049)) {
		printf("NFS-Ganesha does not listen on port 2049\n");
		bad = 1;
	}
	return bad;
}

static int
cmd_event(struct ctx *ctx, int argc, char **argv)
{
	const char *ev = argc > 1 ? argv[1] : "";
	struct model *m;
	int status = EXIT_OK;

	if (!(m = cli_load_model(ctx, &status)))
		return status;
	if (!m->cluster.enabled) {
		model_free(m);
		return EXIT_OK;
	}
	if (strcmp(ev, "monitor") == 0) {
		status = monitor(m) ? EXIT_FAIL : EXIT_OK;
		cluster_bonjour(ctx, m);
		spawn_follow(ctx);
	} else if (strcmp(ev, "startup") == 0) {
		spawn_follow(ctx);
	} else if (strcmp(ev, "ipreallocated") == 0) {
		cluster_bonjour(ctx, m);
		spawn_follow(ctx);
	} else if (strcmp(ev, "takeip") == 0 && argc > 3) {
		ganesha_grace(m, 5, argv[3]);
	} else if (strcmp(ev, "releaseip") == 0 && argc > 3) {
		ganesha_grace(m, 2, argv[3]);
	}
	model_free(m);
	return status;
}

/* Loads a configuration from the record's texts, as cli_load_model does from files. */
static struct model *
load_texts(const struct ctx *ctx, const char *name, const char *conf, const char *tuned)
{
	struct diag d;
	struct model *m;
	char **dirs;
	int n, i;

	dirs = cli_search_dirs(ctx, "profiles", &n);
	diag_init(&d);
	m = profile_load_string(name, conf, (const char *const *)dirs, (size_t)n, &d);
	if (m && tuned && profile_load_tuned_string(m, "tuned.conf", tuned, &d) < 0) {
		model_free(m);
		m = NULL;
	}
	diag_print(&d, stderr);
	diag_clear(&d);
	for (i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	return m;
}

static void
stamp(struct cluster_node_rec *r)
{
	timeutil_now_iso(r->time, sizeof(r->time));
}

/* Brings this node to the cluster's desired configuration, once per desired generation. */
static int
cmd_follow(struct ctx *ctx)
{
	struct cluster_desired want;
	struct cluster_node_rec *recs = NULL, me;
	struct model *m, *nm = NULL;
	char *conf = NULL, *tuned = NULL, *lockp, *cpath = NULL;
	size_t clen, tlen;
	int status = EXIT_OK, self, lfd, rc;

	if (!(m = cli_load_model(ctx, &status)))
		return status;
	if (!m->cluster.enabled) {
		model_free(m);
		return EXIT_OK;
	}
	lockp = fs_rooted(ctx->root, "/var/lib/nastune");
	fs_mkdir_p(lockp, 0700);
	free(lockp);
	lockp = fs_rooted(ctx->root, "/var/lib/nastune/cluster-follow.lock");
	lfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(lockp);
	if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		if (lfd >= 0)
			close(lfd);
		model_free(m);
		return EXIT_OK; /* another follow runs */
	}
	if ((self = cluster_this_node(m)) < 0) {
		log_warnx("cluster: this host is none of cluster.nodes");
		status = EXIT_FAIL;
		goto out;
	}
	if (cluster_read_desired(m, ctx->root, &want) < 0)
		goto out;
	cluster_read_nodes(m, ctx->root, &recs);
	me = recs[self];
	if (want.generation <= me.followed)
		goto out;
	/* Its id changes only when an apply works: it runs want.id already (a rollback to
	 * what a failed apply left in force here, say). */
	if (strcmp(want.id, me.id) == 0 && !me.alone) {
		me.followed = want.generation;
		me.ok = true;
		me.error[0] = '\0';
		stamp(&me);
		cluster_write_node(m, ctx->root, &me);
		goto out;
	}
	log_info("cluster: following %s's configuration %s (cluster generation %ld)", want.from,
		 want.id, want.generation);
	me.followed = want.generation;
	me.alone = false;
	me.ok = false;
	me.error[0] = '\0';
	if ((rc = cluster_read_config(m, ctx->root, want.id, &conf, &clen, &tuned, &tlen)) < 0) {
		snprintf(me.error, sizeof(me.error), "cannot read configuration %s: %s", want.id,
			 strerror(-rc));
	} else if (!(nm = load_texts(ctx, "nastune.conf (cluster)", conf, tuned))) {
		snprintf(me.error, sizeof(me.error), "configuration %s does not load here",
			 want.id);
	} else if (cluster_this_node(nm) < 0) {
		snprintf(me.error, sizeof(me.error), "configuration %s does not list this node",
			 want.id);
	} else {
		struct apply_opts o = { .root = ctx->root,
					.lock_timeout_s = 60,
					.reason = "cluster" };
		struct apply_result res;
		struct rendered r;

		if (cli_render(ctx, nm, 0, &r) != EXIT_OK) {
			snprintf(me.error, sizeof(me.error), "configuration %s does not render",
				 want.id);
		} else {
			rc = apply_run(nm, &r, &o, &res);
			if (rc < 0) {
				snprintf(me.error, sizeof(me.error), "%.500s", res.msg);
			} else {
				/* The node's nastune.conf is the cluster's from now on. */
				cpath = cli_config_path(ctx);
				if ((rc = fs_write_atomic(cpath, conf, clen, 0644, 1)) < 0)
					snprintf(me.error, sizeof(me.error), "writing %s: %s",
						 cpath, strerror(-rc));
				else {
					me.ok = true;
					snprintf(me.id, sizeof(me.id), "%s", want.id);
					me.local_generation = res.generation >= 0
								      ? res.generation
								      : me.local_generation;
				}
			}
			apply_result_clear(&res);
			render_clear(&r);
		}
	}
	if (!me.ok)
		log_warnx("cluster: configuration %s failed here: %s", want.id, me.error);
	else
		log_info("cluster: now on configuration %s", want.id);
	stamp(&me);
	cluster_write_node(m, ctx->root, &me);
	status = me.ok ? EXIT_OK : EXIT_FAIL;
out:
	free(recs);
	free(conf);
	free(tuned);
	free(cpath);
	model_free(nm);
	model_free(m);
	close(lfd);
	return status;
}

int
cmd_cluster(struct ctx *ctx, int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		printf("usage: nastune cluster event EVENT [ARGS] | follow\n"
		       "  event: what CTDB's event script (" CLUSTER_EVENT_SCRIPT ") runs\n"
		       "  follow: bring this node to the cluster's desired configuration\n");
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (strcmp(argv[1], "event") == 0)
		return cmd_event(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "follow") == 0 && argc == 2)
		return cmd_follow(ctx);
	fprintf(stderr, "nastune cluster: unknown '%s' — use event or follow\n", argv[1]);
	return EXIT_USAGE;
}

/* ---- a cluster-wide apply, from the node it runs on ---- */

struct node_outcome {
	enum { NO_FOLLOWED, NO_FAILED, NO_AWAY, NO_SILENT } what;
};

/* Waits until every node ctdb counts as connected has followed generation gen (or failed
 * it), up to wait_s. Fills out[i] per node; returns the number failed or silent. */
static int
wait_nodes(const struct ctx *ctx, const struct model *m, long gen, int self, int wait_s,
	   struct node_outcome *out, struct cluster_node_rec **recs_out)
{
	long long end = timeutil_mono_ms() + (long long)wait_s * 1000;
	struct cluster_node_rec *recs = NULL;
	size_t i, n = m->cluster.nodes.n;
	int bad;

	for (;;) {
		struct cluster_view v;
		bool pending = false;

		cluster_view_read(m, &v);
		free(recs);
		cluster_read_nodes(m, ctx->root, &recs);
		bad = 0;
		for (i = 0; i < n; i++) {
			bool connected =
				(int)i == self || v.state[i] == CN_OK || v.state[i] == CN_UNHEALTHY;

			if (recs[i].followed >= gen && !recs[i].alone)
				out[i].what = recs[i].ok ? NO_FOLLOWED : NO_FAILED;
			else if (!connected)
				out[i].what = NO_AWAY;
			else {
				out[i].what = NO_SILENT;
				pending = true;
			}
			bad += out[i].what == NO_FAILED || out[i].what == NO_SILENT;
		}
		cluster_view_clear(m, &v);
		if (!pending || timeutil_mono_ms() >= end)
			break;
		usleep(250 * 1000);
	}
	*recs_out = recs;
	return bad;
}

/* Runs follow in this process: the cluster's desired configuration onto this node. */
static int
follow_here(struct ctx *ctx)
{
	return cmd_follow(ctx);
}

int
cli_cluster_apply(struct ctx *ctx, const struct model *m, const struct rendered *r,
		  const struct apply_result *res, bool this_node, int wait_s, json_t **summary)
{
	struct cluster_desired want, back;
	struct cluster_node_rec *recs = NULL, me;
	struct node_outcome *out;
	char *cpath = cli_config_path(ctx), *conf = NULL, *def;
	const char *tuned = NULL;
	size_t clen = 0, tlen = 0, i, n = m->cluster.nodes.n;
	int self = cluster_this_node(m), rc, bad, status = EXIT_OK;
	json_t *nodes = json_array();

	*summary = NULL;
	for (i = 0; i < r->n; i++)
		if (strcmp(r->f[i].path, RENDER_TUNED_PATH) == 0) {
			tuned = r->f[i].data;
			tlen = r->f[i].len;
		}
	if ((rc = fs_read_file(cpath, 1 << 20, &conf, &clen)) < 0) {
		log_warnx("cluster: cannot read %s: %s", cpath, strerror(-rc));
		free(cpath);
		json_decref(nodes);
		return EXIT_FAIL;
	}
	cluster_read_nodes(m, ctx->root, &recs);
	me = recs[self];
	cluster_config_id(conf, clen, tuned, tlen, me.id);
	me.ok = true;
	me.error[0] = '\0';
	me.local_generation = res->generation >= 0 ? res->generation : me.local_generation;
	stamp(&me);
	/* This node's nastune.conf is the cluster's (its event hook reads it). */
	def = fs_rooted(ctx->root, "/etc/nastune/nastune.conf");
	if (strcmp(def, cpath) != 0 && (rc = fs_write_atomic(def, conf, clen, 0644, 1)) < 0)
		log_warnx("cluster: writing %s: %s", def, strerror(-rc));
	free(def);
	if (this_node) {
		me.alone = true;
		cluster_write_node(m, ctx->root, &me);
		log_warnx("cluster: applied on this node only (configuration %s): the others "
			  "name it inconsistent until the next cluster-wide apply",
			  me.id);
		*summary = json_pack("{s:s, s:b}", "id", me.id, "this_node_only", 1);
		goto out;
	}
	if ((rc = cluster_publish(m, ctx->root, conf, clen, tuned, tlen, m->cluster.nodes.v[self],
				  &want)) < 0) {
		log_warnx("cluster: cannot write the cluster's record under %s: %s",
			  m->cluster.filesystem, strerror(-rc));
		status = EXIT_FAIL;
		goto out;
	}
	me.alone = false;
	me.followed = want.generation;
	cluster_write_node(m, ctx->root, &me);
	{
		struct cluster_view v;

		cluster_view_read(m, &v);
		if (!v.reachable) {
			log_info("cluster: configuration %s is the cluster's (generation %ld); "
				 "ctdbd does not answer here, so the other nodes follow when their "
				 "ctdbd runs its event scripts",
				 want.id, want.generation);
			cluster_view_clear(m, &v);
			*summary = json_pack("{s:s, s:I, s:b}", "id", want.id, "generation",
					     (json_int_t)want.generation, "ctdb", 0);
			goto out;
		}
		cluster_view_clear(m, &v);
	}
	cluster_nudge();
	out = xcalloc(n + 1, sizeof(*out));
	free(recs);
	bad = wait_nodes(ctx, m, want.generation, self, wait_s, out, &recs);
	for (i = 0; i < n; i++) {
		const char *what = out[i].what == NO_FOLLOWED ? "applied"
				   : out[i].what == NO_FAILED ? "failed"
				   : out[i].what == NO_AWAY   ? "away"
							      : "no answer";

		json_array_append_new(nodes, json_pack("{s:s, s:s, s:s}", "address", recs[i].addr,
						       "result", what, "error", recs[i].error));
		if (out[i].what == NO_FAILED)
			log_warnx("cluster: node %s did not apply configuration %s: %s",
				  recs[i].addr, want.id, recs[i].error);
		else if (out[i].what == NO_SILENT)
			log_warnx("cluster: node %s did not answer within %d s", recs[i].addr,
				  wait_s);
		else if (out[i].what == NO_AWAY)
			log_warnx("cluster: node %s is not connected: it follows configuration %s "
				  "when it rejoins",
				  recs[i].addr, want.id);
	}
	if (bad == 0) {
		log_info("cluster: every connected node runs configuration %s (cluster "
			 "generation %ld)",
			 want.id, want.generation);
		*summary = json_pack("{s:s, s:I, s:o}", "id", want.id, "generation",
				     (json_int_t)want.generation, "nodes", nodes);
		nodes = NULL;
		free(out);
		goto out;
	}
	status = EXIT_FAIL;
	if (!*want.prev) {
		log_warnx("cluster: no earlier cluster configuration to go back to: fix the nodes "
			  "named above and apply again");
	} else if (cluster_republish(m, ctx->root, want.prev, m->cluster.nodes.v[self], &back) ==
		   0) {
		log_warnx("cluster: rolling every node back to configuration %s", want.prev);
		follow_here(ctx);
		cluster_nudge();
		wait_nodes(ctx, m, back.generation, self, wait_s, out, &recs);
	}
	*summary =
		json_pack("{s:s, s:I, s:o, s:s}", "id", want.id, "generation",
			  (json_int_t)want.generation, "nodes", nodes, "rolled_back_to", want.prev);
	nodes = NULL;
	free(out);
out:
	json_decref(nodes);
	free(recs);
	free(conf);
	free(cpath);
	return status;
}

json_t *
cli_cluster_status(const struct ctx *ctx, const struct model *m, bool print)
{
	struct cluster_desired want;
	struct cluster_node_rec *recs = NULL;
	struct cluster_view v;
	json_t *o, *nodes = json_array(), *pubs = json_array(), *odd = json_array();
	size_t i, n = m->cluster.nodes.n;
	int self = cluster_this_node(m), drc;
	bool consistent = true;

	cluster_view_read(m, &v);
	drc = cluster_read_desired(m, ctx->root, &want);
	cluster_read_nodes(m, ctx->root, &recs);
	if (print) {
		printf("cluster %s: ctdb %s", m->cluster.name,
		       v.reachable ? "answers" : "does not answer here");
		if (drc == 0)
			printf("; configuration %s (cluster generation %ld, applied from %s)\n",
			       want.id, want.generation, want.from);
		else
			printf("; no cluster-wide apply yet\n");
	}
	for (i = 0; i < n; i++) {
		const struct cluster_node_rec *r = &recs[i];
		bool same = drc == 0 && *r->id && strcmp(r->id, want.id) == 0 && !r->alone;
		const char *why = same	     ? NULL
				  : !*r->id  ? "has applied nothing yet"
				  : r->alone ? "applied a configuration on its own"
				  : !r->ok   ? "failed to apply the cluster's configuration"
					     : "runs another configuration";

		if (drc == 0 && !same) {
			consistent = false;
			json_array_append_new(
				odd, json_pack("{s:s, s:s}", "address", r->addr, "why", why));
		}
		json_array_append_new(nodes,
				      json_pack("{s:s, s:s, s:s, s:I, s:I, s:b, s:b, s:b, s:s}",
						"address", r->addr, "state",
						cluster_state_name(v.state[i]), "generation", r->id,
						"cluster_generation", (json_int_t)r->followed,
						"local_generation", (json_int_t)r->local_generation,
						"alone", r->alone, "this_node", (int)i == self,
						"consistent", drc == 0 && same, "error", r->error));
		if (print)
			printf("  node %-16s %-12s configuration %-16s%s%s%s\n", r->addr,
			       cluster_state_name(v.state[i]), *r->id ? r->id : "-",
			       (int)i == self ? " (this node)" : "", why ? " INCONSISTENT: " : "",
			       why ? why : "");
	}
	for (i = 0; i < m->cluster.public_addresses.n; i++) {
		json_array_append_new(pubs, json_pack("{s:s, s:s?}", "address",
						      m->cluster.public_addresses.v[i], "node",
						      v.holder[i]));
		if (print)
			printf("  public %-18s on %s\n", m->cluster.public_addresses.v[i],
			       v.holder[i] ? v.holder[i] : "no node");
	}
	if (print)
		printf("consistent: %s\n",
		       drc != 0	    ? "unknown (no cluster-wide apply yet)"
		       : consistent ? "yes, every node runs the cluster's configuration"
				    : "NO (nodes named above)");
	o = json_pack("{s:s, s:b, s:s?, s:o, s:o, s:o, s:o, s:o}", "name", m->cluster.name, "ctdb",
		      v.reachable, "ctdb_error", v.reachable ? NULL : v.err, "desired",
		      drc == 0 ? json_pack("{s:s, s:I, s:s}", "id", want.id, "generation",
					   (json_int_t)want.generation, "from", want.from)
			       : json_null(),
		      "nodes", nodes, "public_addresses", pubs, "consistent",
		      drc == 0 ? json_boolean(consistent) : json_null(), "inconsistent", odd);
	cluster_view_clear(m, &v);
	free(recs);
	return o;
}

int
cli_cluster_spread(struct ctx *ctx)
{
	struct apply_result res = { .generation = -1, .prev = -1 };
	struct rendered r;
	struct model *m;
	json_t *cj = NULL;
	int status = EXIT_OK;

	if (!(m = cli_load_model(ctx, &status)))
		return status;
	if (m->cluster.enabled && (status = cli_render(ctx, m, 0, &r)) == EXIT_OK) {
		status = cli_cluster_apply(ctx, m, &r, &res, false, 60, &cj);
		json_decref(cj);
		render_clear(&r);
	}
	model_free(m);
	return status;
}
