/* cmd_import.c - `nastune import`: the files in force as one nastune.conf, printed or written
 * with its smb.conf site include; --check: what would be lost once it is applied. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fsutil.h"
#include "import.h"
#include "model.h"
#include "render.h"
#include "xmalloc.h"

struct import_args {
	const char *out;
	bool force, check;
};

static int
parse_args(int argc, char **argv, struct import_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "check", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			a->out = optarg;
			break;
		case 'f':
			a->force = true;
			break;
		case 'C':
			a->check = true;
			break;
		case 'h':
			printf("usage: nastune import [-o FILE] [--force] [--check]\n");
			return 100;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nastune import: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int
by_place(const void *a, const void *b)
{
	const struct diag_entry *x = *(const struct diag_entry *const *)a;
	const struct diag_entry *y = *(const struct diag_entry *const *)b;
	int c = strcmp(x->file ? x->file : "~", y->file ? y->file : "~");

	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* "file:line: message" in file order, the file alone when there is no line. */
static void
print_notes(const struct diag *d)
{
	const struct diag_entry **v = xcalloc(d->n + 1, sizeof(*v));
	size_t i;

	for (i = 0; i < d->n; i++)
		v[i] = &d->v[i];
	qsort(v, d->n, sizeof(*v), by_place);
	for (i = 0; i < d->n; i++) {
		const struct diag_entry *e = v[i];

		if (e->file && e->line)
			fprintf(stderr, "%s:%d: %s\n", e->file, e->line, e->msg);
		else if (e->file)
			fprintf(stderr, "%s: %s\n", e->file, e->msg);
		else
			fprintf(stderr, "nastune import: %s\n", e->msg);
	}
	free(v);
}

/* Writes the configuration to a->out and the site include under the root; refuses an
 * existing file without --force before writing either. */
static int
write_out(const struct ctx *ctx, const struct import_args *a, const struct imp_result *res)
{
	char *site = fs_rooted(ctx->root, IMPORT_SMB_SITE), *dir;
	int status = EXIT_OK, rc = 0;

	if (!a->force &&
	    (access(a->out, F_OK) == 0 || (res->site.len && access(site, F_OK) == 0))) {
		fprintf(stderr,
			"nastune import: %s exists — keep it, choose another -o FILE, or pass "
			"--force to replace it\n",
			access(a->out, F_OK) == 0 ? a->out : site);
		free(site);
		return EXIT_USAGE;
	}
	if (res->site.len) {
		dir = xstrdup(site);
		*strrchr(dir, '/') = '\0';
		if ((rc = fs_mkdir_p(dir, 0755)) == 0)
			rc = fs_write_atomic(site, res->site.data, res->site.len, 0644, 0);
		free(dir);
		if (rc < 0) {
			fprintf(stderr, "nastune import: cannot write %s: %s\n", site,
				strerror(-rc));
			status = EXIT_FAIL;
		} else {
			fprintf(stderr, "nastune import: wrote %s\n", site);
		}
	}
	if (status == EXIT_OK) {
		rc = fs_write_atomic(a->out, res->conf.data, res->conf.len, 0644, 0);
		if (rc < 0) {
			fprintf(stderr, "nastune import: cannot write %s: %s\n", a->out,
				strerror(-rc));
			status = EXIT_FAIL;
		} else {
			fprintf(stderr, "nastune import: wrote %s\n", a->out);
		}
	}
	free(site);
	return status;
}

/* The configuration in force (or -o FILE's) rendered and compared with what is served. */
static int
check(struct ctx *ctx, const struct imp_input *in)
{
	struct rendered r;
	struct model *m;
	struct buf out;
	size_t n;
	int status = EXIT_OK;

	if (!(m = cli_load_model(ctx, &status)))
		return status;
	if ((status = cli_render(ctx, m, 0, &r)) != EXIT_OK) {
		model_free(m);
		return status;
	}
	buf_init(&out);
	n = import_check(ctx->root, in, &r, &out);
	if (n) {
		fputs(out.data, stdout);
		printf("%zu difference%s: applying this configuration would change what is "
		       "served\n",
		       n, n > 1 ? "s" : "");
		status = EXIT_FAIL;
	} else {
		printf("every share served today is served the same way by this configuration\n");
	}
	buf_clear(&out);
	render_clear(&r);
	model_free(m);
	return status;
}

int
cmd_import(struct ctx *ctx, int argc, char **argv)
{
	struct import_args a = { 0 };
	struct imp_input in;
	struct imp_result res;
	struct diag d;
	int status;

	if ((status = parse_args(argc, argv, &a)) != EXIT_OK)
		return status == 100 ? EXIT_OK : status;
	diag_init(&d);
	if (import_read(ctx->root, &in, &d) < 0) {
		diag_print(&d, stderr);
		diag_clear(&d);
		import_input_clear(&in);
		return EXIT_USAGE;
	}
	diag_print(&d, stderr);
	diag_clear(&d);
	if (a.check && !a.out) {
		status = check(ctx, &in);
		import_input_clear(&in);
		return status;
	}
	import_conf(&in, &res);
	print_notes(&res.notes);
	if (a.out) {
		status = write_out(ctx, &a, &res);
		if (status == EXIT_OK && a.check) {
			ctx->config = a.out;
			status = check(ctx, &in);
		}
	} else {
		fputs(res.conf.data, stdout);
		if (res.site.len)
			fprintf(stderr,
				"nastune import: the lines kept need %s (written with -o FILE)\n",
				IMPORT_SMB_SITE);
	}
	import_result_clear(&res);
	import_input_clear(&in);
	return status;
}
