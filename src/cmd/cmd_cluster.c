/* cmd_cluster.c - `nastune cluster event|follow`: what CTDB's event script runs on each node
 * (nastune's own equivalent of ctdb's 50.samba and 60.nfs for the daemons nastune
 * configures), and a node following the cluster's configuration record. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "apply.h"
#include "proc.h"
#include "cli.h"
#include "cluster.h"
#include "diag.h"
#include "fsutil.h"
#include "log.h"
#include "model.h"
#include "paths.h"
#include "profile.h"
#include "render.h"
#include "service.h"
#include "xmalloc.h"

/* Starts `nastune [--root R] cluster follow` on its own, so the event returns at once (an
 * apply may take longer than ctdb gives an event script). */
static void
spawn_follow(const struct ctx *ctx)
{
	char exe[4096], *log = paths_state(ctx->root, "cluster.log"), *argv[6];
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
		cluster_bonjour_update(ctx->root, m);
		spawn_follow(ctx);
	} else if (strcmp(ev, "startup") == 0) {
		spawn_follow(ctx);
	} else if (strcmp(ev, "ipreallocated") == 0) {
		cluster_bonjour_update(ctx->root, m);
		spawn_follow(ctx);
	} else if (strcmp(ev, "takeip") == 0 && argc > 3) {
		cluster_ganesha_grace(m, 5, argv[3]);
	} else if (strcmp(ev, "releaseip") == 0 && argc > 3) {
		cluster_ganesha_grace(m, 2, argv[3]);
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

/* Applies nm, configuration id (conf: its nastune.conf), here, and makes conf this node's
 * nastune.conf (the one its event hook reads: never an `apply -c FILE`'s FILE, which a
 * rollback would otherwise overwrite with the configuration it replaced); the outcome into
 * me. */
static void
follow_apply(struct ctx *ctx, const struct model *nm, const char *id, const char *conf, size_t clen,
	     struct cluster_node_rec *me)
{
	struct apply_opts o = { .root = ctx->root, .lock_timeout_s = 60, .reason = "cluster" };
	struct apply_result res;
	struct rendered r;
	char *cpath;
	int rc;

	if (cli_render(ctx, nm, 0, &r) != EXIT_OK) {
		snprintf(me->error, sizeof(me->error), "configuration %s does not render", id);
		return;
	}
	rc = apply_run(nm, &r, &o, &res);
	if (rc < 0) {
		snprintf(me->error, sizeof(me->error), "%.500s", res.msg);
	} else {
		/* The node's nastune.conf is the cluster's from now on. */
		cpath = fs_rooted(ctx->root, "/etc/nastune/nastune.conf");
		if ((rc = fs_write_atomic(cpath, conf, clen, 0644, 1)) < 0) {
			snprintf(me->error, sizeof(me->error), "writing %s: %s", cpath,
				 strerror(-rc));
		} else {
			me->ok = true;
			snprintf(me->id, sizeof(me->id), "%s", id);
			me->local_generation =
				res.generation >= 0 ? res.generation : me->local_generation;
		}
		free(cpath);
	}
	apply_result_clear(&res);
	render_clear(&r);
}

/* Loads the record's configuration want.id into *nm, refusing one that changes what this
 * node takes from its own configuration only; the refusal into me->error. */
static int
follow_load(struct ctx *ctx, const struct model *m, struct cluster_rec *rec, const char *id,
	    struct model **nm, char **conf, size_t *clen, struct cluster_node_rec *me)
{
	char *tuned = NULL;
	const char *diff;
	size_t tlen;
	int rc;

	if ((rc = cluster_read_config(rec, id, conf, clen, &tuned, &tlen)) < 0) {
		snprintf(me->error, sizeof(me->error), "cannot read configuration %s: %.400s", id,
			 rc == -EBADMSG || rc == -EPERM ? rec->err : strerror(-rc));
		return rc;
	}
	rc = -EINVAL;
	if (!(*nm = load_texts(ctx, "nastune.conf (cluster)", *conf, tuned)))
		snprintf(me->error, sizeof(me->error), "configuration %s does not load here", id);
	else if (cluster_this_node(*nm) < 0)
		snprintf(me->error, sizeof(me->error), "configuration %s does not list this node",
			 id);
	else if ((diff = cluster_trust_differs(m, *nm)))
		/* What a node runs and trusts is its own: a record cannot change it. */
		snprintf(me->error, sizeof(me->error),
			 "configuration %s changes %s, which a node takes from its own "
			 "nastune.conf only: refused (apply it on each node with --this-node)",
			 id, diff);
	else
		rc = 0;
	free(tuned);
	return rc;
}

/* Brings this node to the cluster's desired configuration, once per desired generation. */
static int
cmd_follow(struct ctx *ctx)
{
	struct cluster_desired want;
	struct cluster_node_rec *recs = NULL, me;
	struct cluster_rec rec;
	struct model *m, *nm = NULL;
	char *conf = NULL, *lockp;
	size_t clen = 0;
	int status = EXIT_OK, self, lfd, rc;

	if (!(m = cli_load_model(ctx, &status)))
		return status;
	if (!m->cluster.enabled) {
		model_free(m);
		return EXIT_OK;
	}
	lockp = paths_state_dir(ctx->root);
	fs_mkdir_p(lockp, 0700);
	free(lockp);
	lockp = paths_state(ctx->root, "cluster-follow.lock");
	lfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(lockp);
	if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		log_warnx("cluster: another `nastune cluster follow` runs on this node: it "
			  "follows the record; try again when it is done");
		if (lfd >= 0)
			close(lfd);
		model_free(m);
		return EXIT_FAIL;
	}
	if ((self = cluster_this_node(m)) < 0) {
		log_warnx("cluster: this host is none of cluster.nodes");
		status = EXIT_FAIL;
		goto out_model;
	}
	if ((rc = cluster_rec_open(m, ctx->root, false, &rec)) < 0) {
		/* No record yet: nothing to follow. */
		if (rc != -ENOENT) {
			log_warnx("cluster: %s", rec.err);
			status = EXIT_FAIL;
		}
		goto out;
	}
	if ((rc = cluster_read_desired(&rec, &want)) < 0) {
		if (rc != -ENOENT) {
			log_warnx("cluster: %s; nothing followed — a cluster-wide `nastune apply` "
				  "on any node publishes it again",
				  rec.err);
			status = EXIT_FAIL;
		}
		goto out;
	}
	cluster_read_nodes(m, &rec, &recs);
	me = recs[self];
	*me.refused = '\0';
	snprintf(me.addr, sizeof(me.addr), "%s", m->cluster.nodes.v[self]);
	if (want.generation == me.followed)
		goto out;
	/* Its id changes only when an apply works: it runs want.id already (a rollback to
	 * what a failed apply left in force here, say). */
	if (strcmp(want.id, me.id) == 0 && !me.alone) {
		me.followed = want.generation;
		me.ok = true;
		me.error[0] = '\0';
		cluster_node_stamp(&me);
		cluster_write_node(&rec, &me);
		goto out;
	}
	log_info("cluster: following %s's configuration %s (cluster generation %ld)", want.from,
		 want.id, want.generation);
	me.followed = want.generation;
	me.alone = false;
	me.ok = false;
	me.error[0] = '\0';
	if (follow_load(ctx, m, &rec, want.id, &nm, &conf, &clen, &me) == 0)
		follow_apply(ctx, nm, want.id, conf, clen, &me);
	if (!me.ok)
		log_warnx("cluster: configuration %s failed here: %s", want.id, me.error);
	else
		log_info("cluster: now on configuration %s", want.id);
	cluster_node_stamp(&me);
	cluster_write_node(&rec, &me);
	status = me.ok ? EXIT_OK : EXIT_FAIL;
out:
	cluster_rec_close(&rec);
out_model:
	free(recs);
	free(conf);
	model_free(nm);
	model_free(m);
	close(lfd);
	return status;
}

/* Installs the cluster's key on this node: a new one (the first node), or a copy of FILE. */
static int
cmd_join(struct ctx *ctx, int argc, char **argv)
{
	char err[512], *path;

	if (argc > 2) {
		fprintf(stderr, "usage: nastune cluster join [KEYFILE|-]\n");
		return EXIT_USAGE;
	}
	if (cluster_key_install(ctx->root, argc == 2 ? argv[1] : NULL, err, sizeof(err)) < 0) {
		log_warnx("cluster: %s", err);
		return EXIT_FAIL;
	}
	path = fs_rooted(ctx->root, CLUSTER_KEY_PATH);
	printf("%s: the cluster's key on this node%s\n", path,
	       argc == 2 ? ""
			 : " (new: copy it to every other node, e.g. with scp, and run "
			   "`nastune cluster join FILE` there)");
	free(path);
	return EXIT_OK;
}

int
cmd_cluster(struct ctx *ctx, int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		printf("usage: nastune cluster event EVENT [ARGS] | follow | join [KEYFILE|-]\n"
		       "  event: what CTDB's event script (" CLUSTER_EVENT_SCRIPT ") runs\n"
		       "  follow: bring this node to the cluster's desired configuration\n"
		       "  join: install the key that signs the cluster's record (" CLUSTER_KEY_PATH
		       "):\n"
		       "        a new one on the first node, a copy of KEYFILE on the others\n");
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (strcmp(argv[1], "event") == 0)
		return cmd_event(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "follow") == 0 && argc == 2)
		return cmd_follow(ctx);
	if (strcmp(argv[1], "join") == 0)
		return cmd_join(ctx, argc - 1, argv + 1);
	fprintf(stderr, "nastune cluster: unknown '%s' — use event, follow or join\n", argv[1]);
	return EXIT_USAGE;
}
