/* cmd_agent.c - `nastune agent` (on a client) and `nastune pair` (on the NAS). The Linux build
 * advertises the agent over mDNS; agent.c itself knows nothing of Avahi. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "cli.h"
#include "fsutil.h"
#include "log.h"
#include "mdns.h"
#include "paths.h"
#include "sigstop.h"
#include "xmalloc.h"

#define AGENT_USAGE                                                                                \
	"usage: nastune agent [--listen ADDR:PORT] [--token-file FILE] "                           \
	"[--mount PROTO=PATH]... [--credentials FILE] [--scratch DIR] [--no-advertise]\n"

static void *
advertise(const char *name, int port, const char *const *txt, size_t ntxt)
{
	struct mdns_record rec = {
		.type = "_nastune._tcp", .port = port, .txt = txt, .ntxt = ntxt
	};
	struct mdns_publisher *p = NULL;
	char err[512];

	if (mdns_publisher_start(name, &rec, 1, 5000, &p, err, sizeof(err)) < 0) {
		log_warnx("agent: not advertised over mDNS (%s); the NAS must name this host "
			  "with --client",
			  err);
		return NULL;
	}
	return p;
}

static void
unadvertise(void *h)
{
	mdns_publisher_stop(h);
}

int
cmd_agent(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "token-file", required_argument, NULL, 't' },
		{ "mount", required_argument, NULL, 'm' },
		{ "credentials", required_argument, NULL, 'C' },
		{ "scratch", required_argument, NULL, 's' },
		{ "no-advertise", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct agent_opts o = { .stop = &sigstop_caught,
				.advertise = advertise,
				.unadvertise = unadvertise };
	struct agent_mount *mounts = NULL;
	char *token = NULL, err[512], addr[128];
	size_t nmounts = 0, i;
	int c, port, rc, status = EXIT_USAGE;

	optind = 0;
	while ((c = getopt_long(argc, argv, "l:t:m:C:s:Ah", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (agent_parse_listen(optarg, addr, sizeof(addr), &port) < 0) {
				fprintf(stderr,
					"nastune agent: --listen '%s' is not ADDR:PORT, ADDR, "
					":PORT or [V6]:PORT\n",
					optarg);
				goto out;
			}
			o.listen = optarg;
			break;
		case 't':
			free(token);
			token = xstrdup(optarg);
			break;
		case 'm': {
			char *eq = strchr(optarg, '=');

			if (!eq || eq - optarg >= (long)sizeof(mounts->proto) || eq[1] != '/' ||
			    (strncmp(optarg, "smb=", 4) && strncmp(optarg, "nfs=", 4) &&
			     strncmp(optarg, "afp=", 4))) {
				fprintf(stderr,
					"nastune agent: --mount '%s' is not PROTO=/PATH "
					"(smb, nfs or afp; e.g. smb=/Volumes/Media)\n",
					optarg);
				goto out;
			}
			mounts = xreallocarray(mounts, nmounts + 1, sizeof(*mounts));
			snprintf(mounts[nmounts].proto, sizeof(mounts->proto), "%.*s",
				 (int)(eq - optarg), optarg);
			mounts[nmounts++].path = eq + 1;
			break;
		}
		case 'C':
			o.credentials = optarg;
			break;
		case 's':
			o.scratch_dir = optarg;
			break;
		case 'A':
			o.advertise = NULL;
			break;
		case 'h':
			fputs(AGENT_USAGE, stdout);
			status = EXIT_OK;
			goto out;
		default:
			fputs(AGENT_USAGE, stderr);
			goto out;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "nastune agent: unexpected argument '%s'\n%s", argv[optind],
			AGENT_USAGE);
		goto out;
	}
	if (!token)
		token = paths_agent_key(ctx->root);
	if ((rc = agent_key_load(token, o.key, err, sizeof(err))) < 0) {
		fprintf(stderr, "nastune agent: %s\n", err);
		status = rc == -ENOENT || rc == -EINVAL || rc == -EPERM ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
	o.mounts = mounts;
	o.nmounts = nmounts;
	sigstop_catch(NULL);
	rc = agent_serve(&o, err, sizeof(err));
	if (rc < 0) {
		log_warnx("agent: %s", err);
		status = rc == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
	status = EXIT_OK;
out:
	for (i = 0; i < sizeof(o.key); i++)
		o.key[i] = 0;
	free(mounts);
	free(token);
	return status;
}

int
cmd_pair(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "token-file", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint8_t key[AGENT_KEY_LEN];
	char *path = NULL, err[512], kid[17], hex[2 * AGENT_KEY_LEN + 1];
	bool force = false;
	size_t i;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "ft:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			force = true;
			break;
		case 't':
			free(path);
			path = xstrdup(optarg);
			break;
		case 'h':
			printf("usage: nastune pair [--force] [--token-file FILE]\n");
			free(path);
			return EXIT_OK;
		default:
			fprintf(stderr, "usage: nastune pair [--force] [--token-file FILE]\n");
			free(path);
			return EXIT_USAGE;
		}
	}
	if (!path)
		path = paths_agent_key(ctx->root);
	{
		char *dir = xstrdup(path), *slash = strrchr(dir, '/');

		if (slash && slash != dir) {
			*slash = '\0';
			fs_mkdir_p(dir, 0755);
		}
		free(dir);
	}
	rc = agent_key_create(path, force, key, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "nastune pair: %s\n", err);
		free(path);
		return rc == -EEXIST ? EXIT_USAGE : EXIT_FAIL;
	}
	agent_key_id(key, kid);
	for (i = 0; i < AGENT_KEY_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	if (ctx->json) {
		printf("{\"key_file\": \"%s\", \"key_id\": \"%s\", \"key\": \"%s\"}\n", path, kid,
		       hex);
	} else {
		printf("new agent key %s in %s (mode 0600)\n\n", kid, path);
		printf("On each client, as root (the key is a secret: copy it over a trusted "
		       "channel):\n\n");
		printf("  umask 077; mkdir -p /etc/nastune && echo %s > /etc/nastune/agent.key && "
		       "nastune agent --token-file /etc/nastune/agent.key\n\n",
		       hex);
		printf("Then on this NAS: nastune bench --client auto (or --client HOST)\n");
	}
	memset(key, 0, sizeof(key));
	memset(hex, 0, sizeof(hex));
	free(path);
	return EXIT_OK;
}
