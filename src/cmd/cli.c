/* cli.c - what the subcommands share: finding files, loading the configuration and templates. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "apply.h"
#include "cli.h"
#include "diag.h"
#include "fsutil.h"
#include "log.h"
#include "model.h"
#include "profile.h"
#include "render.h"
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

struct model *
cli_load_model(const struct ctx *ctx, int *status)
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

struct model *
cli_load_model_recovered(const struct ctx *ctx, int *status)
{
	struct model *m = cli_load_model(ctx, status);
	char *pending = fs_rooted(ctx->root, "/var/lib/nastune/pending");
	struct apply_opts o = { .root = ctx->root, .lock_timeout_s = 60 };
	struct stat sb;

	if (m && stat(pending, &sb) == 0) {
		/* An interrupted apply or tune left its journal: put its generation back first,
		 * then read the configuration again (tuned.conf is one of the files). */
		if (apply_end_trials(m, &o) != EXIT_OK) {
			model_free(m);
			m = NULL;
			*status = EXIT_FAIL;
		} else {
			model_free(m);
			m = cli_load_model(ctx, status);
		}
	}
	free(pending);
	return m;
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
