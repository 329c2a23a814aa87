/* cmd_config.c - check, render, diff: the side-effect-free commands. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fsutil.h"
#include "log.h"
#include "model.h"
#include "render.h"
#include "xmalloc.h"

static void
json_print(json_t *o)
{
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
}

static int
no_args(const char *cmd, int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: nastune %s\n", cmd);
		return EXIT_OK + 100;
	}
	if (argc > 1) {
		fprintf(stderr, "nastune %s: unexpected argument '%s' — it takes none\n", cmd,
			argv[1]);
		return EXIT_USAGE;
	}
	return -1;
}

int
cmd_check(struct ctx *ctx, int argc, char **argv)
{
	struct model *m;
	int status = EXIT_OK, rc;
	size_t i;
	unsigned counts[3] = { 0, 0, 0 };

	if ((rc = no_args("check", argc, argv)) >= 0)
		return rc == 100 ? EXIT_OK : rc;
	m = cli_load_model(ctx, &status);
	if (!m)
		return status;
	if ((status = cli_cluster_host(m)) != EXIT_OK || (status = cli_check_host(m)) != EXIT_OK) {
		model_free(m);
		return status;
	}
	for (i = 0; i < m->n_shares; i++) {
		counts[0] += !!(m->shares[i].protocols & PROTO_SMB) && m->smb.enabled;
		counts[1] += !!(m->shares[i].protocols & PROTO_NFS) && m->nfs.enabled;
		counts[2] += !!(m->shares[i].protocols & PROTO_AFP) && m->afp.enabled;
	}
	if (ctx->json) {
		json_print(json_pack("{s:b, s:s, s:i, s:{s:i, s:i, s:i}}", "ok", 1, "profile",
				     m->profile ? m->profile : "", "shares", (int)m->n_shares,
				     "served", "smb", counts[0], "nfs", counts[1], "afp",
				     counts[2]));
	} else if (ctx->verbosity >= 0) {
		printf("configuration OK: profile %s, %zu share%s (smb %u, nfs %u, afp %u)\n",
		       m->profile ? m->profile : "(none)", m->n_shares, m->n_shares == 1 ? "" : "s",
		       counts[0], counts[1], counts[2]);
	}
	model_free(m);
	return EXIT_OK;
}

/* "smb,mdns" -> mask of (1 << SVC_*). Returns 0 and sets *mask, or -EINVAL. */
static int
parse_only(const char *s, unsigned *mask)
{
	char *copy = xstrdup(s), *tok, *save = NULL;
	int i, rc = 0;

	*mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < SVC_COUNT; i++)
			if (strcmp(tok, svc_name(i)) == 0)
				break;
		if (i == SVC_COUNT) {
			rc = -EINVAL;
			break;
		}
		*mask |= 1u << i;
	}
	free(copy);
	return *mask ? rc : -EINVAL;
}

int
cmd_render(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "only", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outdir = NULL;
	struct rendered r;
	struct model *m;
	unsigned only = 0;
	int c, status = EXIT_OK;
	size_t i;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			outdir = optarg;
			break;
		case 'O':
			if (parse_only(optarg, &only) < 0) {
				fprintf(stderr,
					"nastune render: --only '%s' is not valid — use a "
					"comma list of smb, nfs, afp, mdns, sys, nastune\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			printf("usage: nastune render [-o DIR] [--only smb|nfs|afp|mdns]\n");
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nastune render: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!(m = cli_load_model(ctx, &status)))
		return status;
	if ((status = cli_render(ctx, m, only, &r)) != EXIT_OK) {
		model_free(m);
		return status;
	}
	if (outdir) {
		for (i = 0; i < r.n && status == EXIT_OK; i++) {
			char *p = fs_rooted(outdir, r.f[i].path), *slash;
			int rc;

			slash = strrchr(p, '/');
			*slash = '\0';
			rc = fs_mkdir_p(p, 0755);
			*slash = '/';
			if (rc == 0)
				rc = fs_write_atomic(p, r.f[i].data, r.f[i].len, 0644, 0);
			if (rc < 0) {
				errno = -rc;
				log_warn("render: cannot write %s", p);
				status = EXIT_FAIL;
			} else {
				log_debug("wrote %s", p);
			}
			free(p);
		}
	} else if (ctx->json) {
		json_t *files = json_array();

		for (i = 0; i < r.n; i++)
			json_array_append_new(files,
					      json_pack("{s:s, s:s, s:s%}", "path", r.f[i].path,
							"service", svc_name(r.f[i].svc), "content",
							r.f[i].data, r.f[i].len));
		json_print(json_pack("{s:o}", "files", files));
	} else {
		for (i = 0; i < r.n; i++) {
			if (r.n > 1)
				printf("%s==> %s <==\n", i ? "\n" : "", r.f[i].path);
			fwrite(r.f[i].data, 1, r.f[i].len, stdout);
		}
	}
	render_clear(&r);
	model_free(m);
	return status;
}

int
cmd_diff(struct ctx *ctx, int argc, char **argv)
{
	struct rendered r;
	struct model *m;
	json_t *files = NULL;
	int status = EXIT_OK, rc;
	size_t i, differ = 0;

	if ((rc = no_args("diff", argc, argv)) >= 0)
		return rc == 100 ? EXIT_OK : rc;
	if (!(m = cli_load_model(ctx, &status)))
		return status;
	if ((status = cli_render(ctx, m, 0, &r)) != EXIT_OK) {
		model_free(m);
		return status;
	}
	if (ctx->json)
		files = json_array();
	for (i = 0; i < r.n; i++) {
		char *p = fs_rooted(ctx->root, r.f[i].path), *cur = NULL;
		const char *state;
		size_t len = 0;

		rc = fs_read_file(p, 64 << 20, &cur, &len);
		if (rc == -ENOENT)
			state = "missing";
		else if (rc < 0)
			state = "unreadable";
		else if (len == r.f[i].len && memcmp(cur, r.f[i].data, len) == 0)
			state = "same";
		else
			state = "differs";
		if (strcmp(state, "same") != 0)
			differ++;
		if (files) {
			json_array_append_new(
				files, json_pack("{s:s, s:s, s:s}", "path", r.f[i].path, "service",
						 svc_name(r.f[i].svc), "state", state));
		} else if (strcmp(state, "differs") == 0) {
			cli_show_diff(p, r.f[i].path, r.f[i].data, r.f[i].len);
		} else if (strcmp(state, "same") != 0) {
			printf("%s: %s\n", r.f[i].path, state);
		} else if (ctx->verbosity > 0) {
			printf("%s: same\n", r.f[i].path);
		}
		free(cur);
		free(p);
	}
	if (files)
		json_print(json_pack("{s:b, s:o}", "same", differ == 0, "files", files));
	else if (differ == 0 && ctx->verbosity >= 0)
		printf("installed files match the configuration\n");
	render_clear(&r);
	model_free(m);
	return differ ? EXIT_FAIL : EXIT_OK;
}
