/* cmd_mdns.c - `nastune mdns publish|withdraw|browse`: live Bonjour records and what the
 * network sees. The static records are apply's (the Avahi service files). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "esc.h"
#include "log.h"
#include "mdns.h"
#include "model.h"
#include "paths.h"
#include "service.h"
#include "sigstop.h"
#include "xmalloc.h"

#define MDNS_USAGE                                                                                 \
	"usage: nastune mdns publish [--name NAME] [--type TYPE] [--port N] "                      \
	"[--txt KEY=VALUE]... [--for SECONDS]\n"                                                   \
	"       nastune mdns withdraw\n"                                                           \
	"       nastune mdns browse [--type TYPE]... [-4|-6] [--timeout MS] [--no-resolve]\n"

static int
cmd_mdns_usage(const char *why)
{
	if (why)
		fprintf(stderr, "nastune: mdns: %s\n", why);
	fputs(MDNS_USAGE, stderr);
	return EXIT_USAGE;
}

/* server.name from the configuration when there is one, else the host name. */
static char *
default_name(const struct ctx *ctx)
{
	char *path = cli_config_path(ctx), host[256] = "nastune";
	struct model *m = NULL;
	struct stat sb;
	char *name = NULL;
	int status;

	if (stat(path, &sb) == 0 && (m = cli_load_model(ctx, &status)) && m->server.name)
		name = xstrdup(m->server.name);
	model_free(m);
	free(path);
	if (!name) {
		gethostname(host, sizeof(host) - 1);
		name = xstrdup(host);
	}
	return name;
}

/* What `mdns publish` announces, and for how long. */
struct publish_args {
	char *name;
	const char *type;
	const char **txt;
	size_t ntxt;
	long port, secs; /* secs 0: until interrupted */
};

/* The options into a. Returns EXIT_OK, 100 after the help, or EXIT_USAGE. */
static int
parse_publish(int argc, char **argv, struct publish_args *a)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "type", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ "txt", required_argument, NULL, 'x' },
		{ "for", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "n:t:p:x:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			free(a->name);
			a->name = xstrdup(optarg);
			break;
		case 't':
			a->type = optarg;
			break;
		case 'p':
			a->port = strtol(optarg, &end, 10);
			if (*end || end == optarg || a->port < 0 || a->port > 65535)
				return cmd_mdns_usage("--port takes 0 to 65535");
			break;
		case 'x':
			a->txt = xreallocarray(a->txt, a->ntxt + 1, sizeof(*a->txt));
			a->txt[a->ntxt++] = optarg;
			break;
		case 'f':
			a->secs = strtol(optarg, &end, 10);
			if (*end || end == optarg || a->secs <= 0)
				return cmd_mdns_usage("--for takes a number of seconds");
			break;
		case 'h':
			fputs(MDNS_USAGE, stdout);
			return 100;
		default:
			return cmd_mdns_usage(NULL);
		}
	}
	if (optind != argc)
		return cmd_mdns_usage("publish takes no operands");
	return EXIT_OK;
}

/* Until a signal (or secs), saying each name the record takes (mdns.c logs renames and
 * re-registrations); last holds the name published first. */
static void
publish_until(struct mdns_publisher *pub, long secs, char *last, size_t lastlen)
{
	time_t until = secs ? time(NULL) + secs : 0;
	char cur[128];

	while (!sigstop_caught && (!until || time(NULL) < until)) {
		usleep(100000);
		mdns_publisher_name(pub, cur, sizeof(cur));
		if (strcmp(cur, last) != 0) {
			printf("now published as \"%s\"\n", cur);
			fflush(stdout);
			snprintf(last, lastlen, "%s", cur);
		}
	}
}

static int
cmd_mdns_publish(struct ctx *ctx, int argc, char **argv)
{
	struct publish_args a = { .type = "_nastune._tcp" };
	struct mdns_publisher *pub = NULL;
	struct mdns_record rec;
	struct sigaction sa = { .sa_handler = sigstop_handler };
	char *pidfile = NULL, err[512], last[128], version_txt[64];
	int rc, status;

	if ((status = parse_publish(argc, argv, &a)) != EXIT_OK) {
		free(a.name);
		free(a.txt);
		return status == 100 ? EXIT_OK : status;
	}
	status = EXIT_FAIL;
	if (!a.name)
		a.name = default_name(ctx);
	if (strcmp(a.type, "_nastune._tcp") == 0 && a.ntxt == 0) {
		snprintf(version_txt, sizeof(version_txt), "version=%s", NASTUNE_VERSION);
		a.txt = xreallocarray(a.txt, 2, sizeof(*a.txt));
		a.txt[a.ntxt++] = "role=server";
		a.txt[a.ntxt++] = version_txt;
	}
	rec = (struct mdns_record){
		.type = a.type, .port = (int)a.port, .txt = a.txt, .ntxt = a.ntxt
	};

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	rc = mdns_publisher_start(a.name, &rec, 1, 5000, &pub, err, sizeof(err));
	if (rc < 0) {
		log_warnx("mdns publish: %s", err);
		status = rc == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
	/* So that `mdns withdraw` finds us. */
	pidfile = paths_run(ctx->root, "mdns-publish.pid");
	if ((rc = service_pidfile_claim(pidfile)) < 0)
		log_warnx("mdns publish: cannot write %s: %s (withdraw will not find this process)",
			  pidfile, strerror(-rc));
	mdns_publisher_name(pub, last, sizeof(last));
	printf("published \"%s\" (%s port %ld) until interrupted%s\n", last, a.type, a.port,
	       a.secs ? "" : " (Ctrl-C or `nastune mdns withdraw` stops it)");
	fflush(stdout);
	publish_until(pub, a.secs, last, sizeof(last));
	printf("withdrawn \"%s\"\n", last);
	status = EXIT_OK;
out:
	mdns_publisher_stop(pub);
	if (pidfile)
		service_pidfile_release(pidfile);
	free(pidfile);
	free(a.name);
	free(a.txt);
	return status;
}

static int
cmd_mdns_withdraw(struct ctx *ctx, int argc, char **argv)
{
	char *pidfile = paths_run(ctx->root, "mdns-publish.pid"), *path = NULL;
	pid_t pid;
	int i, rc, status = EXIT_FAIL;

	(void)argv;
	if (argc > 1) {
		free(pidfile);
		return cmd_mdns_usage("withdraw takes no operands");
	}
	rc = service_pid_read(NULL, pidfile, &pid, &path);
	if (rc == -ENOENT) {
		log_info("nothing to withdraw: no `nastune mdns publish` is running (%s is absent)",
			 pidfile);
		status = EXIT_OK;
		goto out;
	}
	if (rc < 0) {
		log_warnx("mdns withdraw: %s is unreadable", pidfile);
		goto out;
	}
	if (kill(pid, SIGTERM) < 0) {
		if (errno == ESRCH) {
			log_info("nothing to withdraw: publisher %ld is gone; removing %s",
				 (long)pid, pidfile);
			unlink(pidfile);
			status = EXIT_OK;
		} else {
			log_warn("mdns withdraw: cannot signal %ld", (long)pid);
		}
		goto out;
	}
	for (i = 0; i < 100 && service_pid_alive(pid); i++)
		usleep(50000);
	if (i == 100) {
		log_warnx("mdns withdraw: publisher %ld did not stop within 5 s", (long)pid);
		goto out;
	}
	log_info("withdrawn: publisher %ld stopped", (long)pid);
	status = EXIT_OK;
out:
	free(path);
	free(pidfile);
	return status;
}

/* What the network announced, escaped: any host on the link can publish these. */
static void
print_service(const struct mdns_service *s)
{
	char *ty = esc_term(s->type), *nm = esc_term(s->name);
	size_t i;

	printf("%-18s %-24s IPv%d %-8s", ty, nm, s->family, s->iface);
	free(ty);
	free(nm);
	if (s->address) {
		char *h = esc_term(s->host);

		printf(" %s %s:%d", h, s->address, s->port);
		free(h);
	}
	for (i = 0; i < s->ntxt; i++) {
		char *t = esc_term(s->txt[i]);

		printf(" \"%s\"", t);
		free(t);
	}
	printf("\n");
}

static int
cmd_mdns_browse(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "type", required_argument, NULL, 't' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "no-resolve", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char **types = NULL;
	struct mdns_service *v = NULL;
	size_t ntypes = 0, n = 0, i;
	bool resolve = true;
	char err[512], *end;
	long timeout = 3000;
	int c, family = 0, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "t:T:R46h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			types = xreallocarray(types, ntypes + 2, sizeof(*types));
			types[ntypes++] = optarg;
			types[ntypes] = NULL;
			break;
		case 'T':
			timeout = strtol(optarg, &end, 10);
			if (*end || end == optarg || timeout <= 0 || timeout > 600000) {
				free(types);
				return cmd_mdns_usage("--timeout takes 1 to 600000 milliseconds");
			}
			break;
		case 'R':
			resolve = false;
			break;
		case '4':
			family = 4;
			break;
		case '6':
			family = 6;
			break;
		case 'h':
			fputs(MDNS_USAGE, stdout);
			free(types);
			return EXIT_OK;
		default:
			free(types);
			return cmd_mdns_usage(NULL);
		}
	}
	if (optind != argc) {
		free(types);
		return cmd_mdns_usage("browse takes no operands");
	}
	rc = mdns_browse(types, family, resolve, (int)timeout, &v, &n, err, sizeof(err));
	free(types);
	if (rc < 0) {
		log_warnx("mdns browse: %s", err);
		return EXIT_FAIL;
	}
	if (ctx->json) {
		json_t *o = json_object();

		json_object_set_new(o, "services", mdns_services_json(v, n));
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		for (i = 0; i < n; i++)
			print_service(&v[i]);
		if (n == 0)
			log_info("no NAS services seen within %ld ms", timeout);
	}
	mdns_services_free(v, n);
	return EXIT_OK;
}

int
cmd_mdns(struct ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return cmd_mdns_usage("which one: publish, withdraw or browse?");
	if (strcmp(argv[1], "publish") == 0)
		return cmd_mdns_publish(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "withdraw") == 0)
		return cmd_mdns_withdraw(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "browse") == 0)
		return cmd_mdns_browse(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(MDNS_USAGE, stdout);
		return EXIT_OK;
	}
	return cmd_mdns_usage("unknown mdns subcommand");
}
