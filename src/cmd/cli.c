/* cli.c - what the subcommands share: finding files, loading the configuration and templates. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "agentctl.h"
#include "apply.h"
#include "buf.h"
#include "cli.h"
#include "cluster.h"
#include "diag.h"
#include "fsutil.h"
#include "log.h"
#include "model.h"
#include "proc.h"
#include "profile.h"
#include "render.h"
#include "smbmod.h"
#include "templates.h"
#include "xmalloc.h"

char *
cli_config_path(const struct ctx *ctx)
{
	if (ctx->config)
		return xstrdup(ctx->config);
	return fs_rooted(ctx->root, "/etc/nastune/nastune.conf");
}

static bool
is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

char **
cli_search_dirs(const struct ctx *ctx, const char *sub, int *n)
{
	char **v = xcalloc(4, sizeof(*v)), exe[PATH_MAX], *p, *site, *etc;
	ssize_t len;

	*n = 0;
	/* Site overrides first, then the installed data, then the source tree we run from. */
	etc = xasprintf("/etc/nastune/%s", sub);
	site = fs_rooted(ctx->root, etc);
	free(etc);
	if (is_dir(site))
		v[(*n)++] = site;
	else
		free(site);
	if (ctx->datadir) {
		v[(*n)++] = xasprintf("%s/%s", ctx->datadir, sub);
		return v;
	}
	p = xasprintf("%s/%s", NASTUNE_DATADIR, sub);
	if (is_dir(p))
		v[(*n)++] = p;
	else
		free(p);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = '\0';
		if ((p = strrchr(exe, '/')))
			*p = '\0';
		p = xasprintf("%s/../%s", exe, sub);
		if (is_dir(p))
			v[(*n)++] = p;
		else
			free(p);
	}
	return v;
}

static void
free_dirs(char **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
cli_repair_command(const struct ctx *ctx, char *out, size_t len)
{
	snprintf(out, len, "nastune%s%s%s%s repair", ctx->root && *ctx->root ? " --root " : "",
		 ctx->root ? ctx->root : "", ctx->config ? " -c " : "",
		 ctx->config ? ctx->config : "");
}

static const char *
pending_state(enum apply_file_gen gen)
{
	return gen == APPLY_FILE_PREV ? "previous" : gen == APPLY_FILE_NEW ? "new" : "changed";
}

void
cli_interrupted_text(const struct ctx *ctx, const struct apply_interruption *ai, bool repairing,
		     struct buf *out)
{
	const char *kind = ai->trial ? "a tune was interrupted while trying settings"
				     : "an apply was interrupted";
	size_t i, n[3] = { 0, 0, 0 };
	char cmd[1024];
	int s;

	cli_repair_command(ctx, cmd, sizeof(cmd));
	if (ai->why[0]) {
		buf_printf(out,
			   "%s (journal written %s), and its journal cannot be used: %s — check "
			   "the files nastune manages by hand, then remove the journal\n",
			   kind, ai->when, ai->why);
		return;
	}
	for (i = 0; i < ai->nfiles; i++)
		n[ai->files[i].gen]++;
	if (ai->recorded >= 0)
		buf_printf(out,
			   "an apply recorded generation %ld and was interrupted before it dropped "
			   "its journal (written %s): every file it wrote is in force\n",
			   ai->recorded, ai->when);
	else
		buf_printf(out, "%s (journal written %s): %s:\n", kind, ai->when,
			   n[APPLY_FILE_NEW] && n[APPLY_FILE_PREV]
				   ? "the files it manages are of two generations"
			   : n[APPLY_FILE_OTHER] ? "some files were changed since"
			   : n[APPLY_FILE_NEW]	 ? "it installed every file but did not record them"
						 : "it had changed no file yet");
	for (i = 0; ai->recorded < 0 && i < ai->nfiles; i++) {
		const struct apply_pending_file *f = &ai->files[i];

		if (f->gen == APPLY_FILE_PREV)
			buf_printf(out, "  %s: generation %ld\n", f->path, ai->prev);
		else if (f->gen == APPLY_FILE_NEW)
			buf_printf(out, "  %s: new (the interrupted %s's, never recorded)\n",
				   f->path, ai->trial ? "trial" : "apply");
		else
			buf_printf(out,
				   "  %s: neither (changed since; the repair puts generation %ld's "
				   "back)\n",
				   f->path, ai->prev);
	}
	for (s = 0; s < SVC_COUNT; s++)
		if (ai->restarts & (1u << s))
			buf_printf(out,
				   "  the restart of the %s service was interrupted: it may be "
				   "stopped\n",
				   svc_name(s));
	if (repairing)
		return;
	if (ai->recorded >= 0)
		buf_printf(out, "repair: `%s` drops the journal\n", cmd);
	else
		buf_printf(out,
			   "repair: `%s` puts generation %ld back and records it "
			   "(nastune-repair.service does it at boot, before the file servers "
			   "start)\n",
			   cmd, ai->prev);
}

json_t *
cli_interrupted_json(const struct ctx *ctx, const struct apply_interruption *ai)
{
	json_t *files = json_array(), *restarts = json_array();
	char cmd[1024];
	size_t i;
	int s;

	cli_repair_command(ctx, cmd, sizeof(cmd));
	for (i = 0; i < ai->nfiles; i++) {
		const struct apply_pending_file *f = &ai->files[i];
		long gen = f->gen == APPLY_FILE_PREV  ? ai->prev
			   : f->gen == APPLY_FILE_NEW ? ai->recorded
						      : -1;

		json_array_append_new(files, json_pack("{s:s, s:s, s:o}", "path", f->path, "state",
						       pending_state(f->gen), "generation",
						       gen >= 0 ? json_integer(gen) : json_null()));
	}
	for (s = 0; s < SVC_COUNT; s++)
		if (ai->restarts & (1u << s))
			json_array_append_new(restarts, json_string(svc_name(s)));
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:s?, s:s?}", "kind",
			 ai->trial ? "tune" : "apply", "journal_written", ai->when, "restores",
			 ai->prev >= 0 && !ai->why[0] ? json_integer(ai->prev) : json_null(),
			 "recorded", ai->recorded >= 0 ? json_integer(ai->recorded) : json_null(),
			 "files", files, "interrupted_restarts", restarts, "repair",
			 ai->why[0] ? NULL : cmd, "error", ai->why[0] ? ai->why : NULL);
}

void
cli_warn_interrupted(const struct ctx *ctx, const struct apply_interruption *ai, bool repairing)
{
	struct buf b;
	char *line, *save = NULL;

	buf_init(&b);
	cli_interrupted_text(ctx, ai, repairing, &b);
	for (line = strtok_r(b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		log_warnx("%s", line);
	buf_clear(&b);
}

static struct model *load_model(const struct ctx *ctx, int *status);

struct model *
cli_load_model_as(const struct ctx *ctx, int *status, enum cli_pending how)
{
	struct apply_interruption ai = { .prev = -1, .recorded = -1 };
	struct apply_opts o = { .root = ctx->root, .lock_timeout_s = 60 };
	bool pending = false;
	struct model *m;
	int rc;

	/* Named first, before anything read from the installed files (tuned.conf is one). */
	if (how != CLI_PENDING_QUIET && (pending = apply_interrupted(ctx->root, &ai) == 1))
		cli_warn_interrupted(ctx, &ai, how == CLI_PENDING_REPAIR);
	apply_interruption_clear(&ai);
	m = load_model(ctx, status);
	if (m && pending && how == CLI_PENDING_REPAIR) {
		/* Its generation back first, then the configuration read again. */
		rc = apply_end_trials(m, &o);
		model_free(m);
		m = NULL;
		if (rc < 0)
			*status = EXIT_FAIL;
		else
			m = load_model(ctx, status);
	}
	return m;
}

struct model *
cli_load_model(const struct ctx *ctx, int *status)
{
	return cli_load_model_as(ctx, status, CLI_PENDING_NAME);
}

static struct model *
load_model(const struct ctx *ctx, int *status)
{
	struct diag d;
	struct model *m;
	char *path = cli_config_path(ctx), **dirs;
	int n;

	dirs = cli_search_dirs(ctx, "profiles", &n);
	diag_init(&d);
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		fprintf(stderr,
			"%s: no such file — create it (see nastune.conf(5) and the presets "
			"in %s), or pass -c FILE\n",
			path, n ? dirs[0] : "profiles/");
		*status = EXIT_USAGE;
		m = NULL;
		goto out;
	}
	m = profile_load(path, (const char *const *)dirs, (size_t)n, &d);
	if (m) {
		/* tune's choices, over the configuration (pinned knobs win). */
		char *tuned = fs_rooted(ctx->root, RENDER_TUNED_PATH);

		if (profile_load_tuned(m, tuned, &d) < 0) {
			model_free(m);
			m = NULL;
		}
		free(tuned);
	}
	diag_print(&d, stderr);
	if (!m) {
		fprintf(stderr, "nastune: %zu error%s in the configuration; nothing was changed\n",
			d.errors, d.errors == 1 ? "" : "s");
		*status = EXIT_USAGE;
	}
out:
	diag_clear(&d);
	free_dirs(dirs, n);
	free(path);
	return m;
}

int
cli_cluster_host(const struct model *m)
{
	const struct loc *l = m->cluster.loc_nodes.file ? &m->cluster.loc_nodes : &m->cluster.loc;

	if (!m->cluster.enabled || cluster_this_node(m) >= 0)
		return EXIT_OK;
	fprintf(stderr,
		"%s:%d: cluster.nodes names no address of this host — add this node's private "
		"address to the list (the same list on every node), or run this on a node "
		"(NASTUNE_CLUSTER_NODE=ADDR names the node for tests)\n"
		"nastune: 1 error in the configuration; nothing was changed\n",
		l->file ? l->file : "?", l->line);
	return EXIT_USAGE;
}

int
cli_render(const struct ctx *ctx, const struct model *m, unsigned only, struct rendered *out)
{
	struct render_templates t;
	char **dirs, err[512];
	int n, rc;

	dirs = cli_search_dirs(ctx, "templates", &n);
	rc = templates_load((const char *const *)dirs, (size_t)n, &t, err, sizeof(err));
	free_dirs(dirs, n);
	if (rc < 0) {
		log_warnx("%s", err);
		return EXIT_FAIL;
	}
	rc = render_all(m, &t, only, out, err, sizeof(err));
	templates_clear(&t);
	if (rc < 0) {
		log_warnx("rendering failed: %s — fix the template", err);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

void
cli_host_facts(struct model *m)
{
	if (m->smb.enabled && m->host.io_uring < 0)
		m->host.io_uring =
			smbmod_io_uring(m->host.io_uring_why, sizeof(m->host.io_uring_why));
}

int
cli_check_host(struct model *m)
{
	const struct knob_setting *s = &m->knobs[KNOB_SMB_IO_URING];

	if (!s->value || strcmp(s->value, "yes") != 0 || !m->smb.enabled)
		return EXIT_OK;
	cli_host_facts(m);
	if (m->host.io_uring != 0)
		return EXIT_OK;
	fprintf(stderr,
		"nastune: %s:%d: smb.io_uring = \"yes\" cannot work on this host: %s — set it to "
		"\"no\" (or remove it)\n",
		s->loc.file ? s->loc.file : "tuning.knobs", s->loc.line, m->host.io_uring_why);
	return EXIT_USAGE;
}

struct model *
cli_load_model_recovered(const struct ctx *ctx, int *status)
{
	return cli_load_model_as(ctx, status, CLI_PENDING_REPAIR);
}

bool
cli_client_spec_ok(const char *spec)
{
	if (agent_client_spec_ok(spec))
		return true;
	fprintf(stderr, "nastune: --client(s) '%s' is not HOST, HOST:PORT, [V6]:PORT or auto\n",
		spec);
	return false;
}

/* Runs diff -u between the installed file and data (fed on stdin). Output goes to stdout. */
void
cli_show_diff(const char *installed, const char *label, const char *data, size_t len)
{
	char *argv[] = { "diff",    "-u",	 "--label",	    (char *)label,
			 "--label", "generated", (char *)installed, "-",
			 NULL };
	struct proc p = PROC_INIT(argv);

	p.in = PROC_PIPE;
	if (proc_start(&p) < 0)
		return;
	signal(SIGPIPE, SIG_IGN);
	(void)proc_write_all(p.in_fd, data, len);
	(void)proc_finish(&p);
}
