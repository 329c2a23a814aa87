/* cmd_mtu.c - `nastune mtu show|set|probe|auto`: the MTU, proven end to end. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "log.h"
#include "netif.h"
#include "netjson.h"
#include "probe.h"
#include "units.h"
#include "xmalloc.h"

#define MTU_USAGE                                                                                  \
	"usage: nastune mtu show [IFACE]\n"                                                        \
	"       nastune mtu set IFACE N [--peer PEER]...\n"                                        \
	"       nastune mtu probe [-i IFACE] [--max N] [--timeout MS] PEER...\n"                   \
	"       nastune mtu auto IFACE --peer PEER [--peer PEER]...\n"

static int
mtu_usage(const char *why)
{
	if (why)
		fprintf(stderr, "nastune: mtu: %s\n", why);
	fputs(MTU_USAGE, stderr);
	return EXIT_USAGE;
}

/* EXIT_USAGE when nothing was touched because the request itself is wrong. */
static int
mtu_exit(int r)
{
	return r == 0 ? EXIT_OK : netif_error_is_request(r) ? EXIT_USAGE : EXIT_FAIL;
}

static void
mtu_json_print(json_t *o)
{
	json_dumpf(o, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(o);
}

static int
mtu_fail(const struct ctx *ctx, json_t *o, int r, const char *msg)
{
	log_warnx("mtu: %s", msg);
	if (ctx->json) {
		if (!o)
			o = json_object();
		json_object_set_new(o, "ok", json_false());
		json_object_set_new(o, "error", json_string(msg));
		json_object_set_new(o, "reason", json_string(netjson_reason(r)));
		json_object_set_new(o, "errno", json_string(strerror(-r)));
		mtu_json_print(o);
	} else {
		json_decref(o);
	}
	return mtu_exit(r);
}

static int
mtu_show(struct ctx *ctx, int argc, char **argv)
{
	struct netif_info *v = NULL;
	size_t n, i, shown = 0;
	const char *want = argc > 1 ? argv[1] : NULL;
	json_t *arr = NULL;
	char msg[256];
	int r;

	if (argc > 2)
		return mtu_usage("show takes at most one interface");
	r = netif_list(&v, &n);
	if (r < 0) {
		snprintf(msg, sizeof(msg), "reading links over netlink: %s", strerror(-r));
		return mtu_fail(ctx, NULL, r, msg);
	}
	for (i = 0; want && i < n; i++)
		if (strcmp(want, v[i].name) == 0)
			break;
	if (want && i == n) {
		free(v);
		snprintf(msg, sizeof(msg), "no interface named %s (see 'nastune mtu show')", want);
		return mtu_fail(ctx, NULL, -ENODEV, msg);
	}
	if (ctx->json)
		arr = json_array();
	else
		printf("%-16s %6s %6s %6s  %-10s %-9s %-14s %s\n", "IFACE", "MTU", "MIN", "MAX",
		       "DRIVER", "KIND", "STATE", "SPEED");
	for (i = 0; i < n; i++) {
		const struct netif_info *in = &v[i];
		char min[16], max[16], speed[24], state[32];

		if (want && strcmp(want, in->name) != 0)
			continue;
		shown++;
		if (ctx->json) {
			json_array_append_new(arr, netjson_link(in));
			continue;
		}
		snprintf(min, sizeof(min), in->min_mtu ? "%d" : "-", in->min_mtu);
		snprintf(max, sizeof(max), in->max_mtu ? "%d" : "-", in->max_mtu);
		if (in->speed_mbps >= 1000 && in->speed_mbps % 1000 == 0)
			snprintf(speed, sizeof(speed), "%dGb/s", in->speed_mbps / 1000);
		else if (in->speed_mbps >= 0)
			snprintf(speed, sizeof(speed), "%dMb/s", in->speed_mbps);
		else
			snprintf(speed, sizeof(speed), "-");
		snprintf(state, sizeof(state), "%s%s", in->operstate,
			 in->admin_up ? "" : ",admin-down");
		printf("%-16s %6d %6s %6s  %-10s %-9s %-14s %s", in->name, in->mtu, min, max,
		       in->driver[0] ? in->driver : "-", in->kind[0] ? in->kind : "-", state,
		       speed);
		if (in->master[0])
			printf("  master %s", in->master);
		if (in->parent[0])
			printf("  parent %s", in->parent);
		putchar('\n');
	}
	free(v);
	log_debug("mtu show: %zu link(s)", shown);
	if (ctx->json) {
		json_t *o = json_object();

		json_object_set_new(o, "ok", json_true());
		json_object_set_new(o, "interfaces", arr);
		mtu_json_print(o);
	}
	return EXIT_OK;
}

/* netif_mtu_ensure for ifname, its report printed as JSON or by text; peers are freed. */
static int
mtu_ensure(struct ctx *ctx, const char *ifname, enum netif_mtu_mode mode, int mtu,
	   const char **peers, size_t npeers,
	   void (*text)(const char *ifname, const struct netif_mtu_report *rep))
{
	struct netif_mtu_report rep;
	char err[768];
	json_t *o;
	int r;

	r = netif_mtu_ensure(ifname, mode, mtu, peers, npeers, &rep, err, sizeof(err));
	free(peers);
	if (r < 0) {
		o = ctx->json ? netjson_mtu_report(ifname, &rep) : NULL;
		netif_mtu_report_clear(&rep);
		return mtu_fail(ctx, o, r, err);
	}
	if (ctx->json) {
		o = netjson_mtu_report(ifname, &rep);
		json_object_set_new(o, "ok", json_true());
		mtu_json_print(o);
	} else {
		text(ifname, &rep);
	}
	netif_mtu_report_clear(&rep);
	return EXIT_OK;
}

static void
set_text(const char *ifname, const struct netif_mtu_report *rep)
{
	printf("%s: MTU %d -> %d, proven to %zu peer(s) in %d ms\n", ifname, rep->old_mtu,
	       rep->final_mtu, rep->npeers, rep->elapsed_ms);
}

static void
auto_text(const char *ifname, const struct netif_mtu_report *rep)
{
	size_t i;

	if (rep->changed)
		printf("%s: MTU %d -> %d", ifname, rep->old_mtu, rep->final_mtu);
	else
		printf("%s: MTU %d kept", ifname, rep->final_mtu);
	if (rep->tried_mtu && rep->tried_mtu != rep->final_mtu)
		printf(" (tried %d)", rep->tried_mtu);
	printf(", proven to %zu peer(s) in %d ms\n", rep->npeers, rep->elapsed_ms);
	if (rep->peers_mtu)
		printf("  not above %d: the MTU %s sends with itself\n", rep->peers_mtu,
		       rep->peers_mtu_from);
	for (i = 0; i < rep->npeers; i++) {
		printf("  %s (%s): %d bytes pass", rep->peers[i].peer, rep->peers[i].addr,
		       rep->peers[i].largest);
		if (rep->peers[i].peer_mtu)
			printf(", replies whole up to %d", rep->peers[i].peer_mtu);
		putchar('\n');
	}
}

/* With --peer, the MTU is kept only if every peer receives full-size packets (commit-confirm,
 * as network.mtu = N does in apply); without, it is just set. */
static int
mtu_set(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "peer", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char **peers = NULL;
	size_t npeers = 0;
	char err[768];
	int c, mtu, old = 0, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "p:", opts, NULL)) != -1) {
		if (c != 'p') {
			free(peers);
			return mtu_usage(NULL);
		}
		peers = xreallocarray(peers, npeers + 1, sizeof(*peers));
		peers[npeers++] = optarg;
	}
	if (argc - optind != 2) {
		free(peers);
		return mtu_usage("set needs an interface and an MTU");
	}
	argv += optind - 1;
	if (units_parse_int(argv[2], 1, INT_MAX, &mtu) < 0) {
		free(peers);
		snprintf(err, sizeof(err), "'%s' is not an MTU (a positive number of bytes)",
			 argv[2]);
		return mtu_fail(ctx, NULL, -EINVAL, err);
	}
	if (npeers > 0)
		return mtu_ensure(ctx, argv[1], NETIF_MTU_FIXED, mtu, peers, npeers, set_text);
	free(peers);
	(void)netif_get_mtu(argv[1], &old);
	r = netif_set_mtu(argv[1], mtu, err, sizeof(err));
	if (r < 0)
		return mtu_fail(ctx, NULL, r, err);
	if (ctx->json) {
		json_t *o = json_object();

		json_object_set_new(o, "ok", json_true());
		json_object_set_new(o, "interface", json_string(argv[1]));
		json_object_set_new(o, "old_mtu", json_integer(old));
		json_object_set_new(o, "mtu", json_integer(mtu));
		mtu_json_print(o);
	} else if (old == mtu) {
		printf("%s: MTU already %d\n", argv[1], mtu);
	} else {
		printf("%s: MTU %d -> %d\n", argv[1], old, mtu);
	}
	return EXIT_OK;
}

static int
mtu_probe(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "max", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct probe_opts o = { 0 };
	json_t *arr = NULL;
	int c, i, r, status = EXIT_OK;
	char msg[512];

	optind = 0;
	while ((c = getopt_long(argc, argv, "i:m:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.ifname = optarg;
			break;
		case 'm':
			if (units_parse_int(optarg, PROBE_MIN_V4, 65535, &o.max) < 0)
				return mtu_usage("--max wants a size from 68 to 65535");
			break;
		case 't':
			if (units_parse_int(optarg, 1, 10000, &o.timeout_ms) < 0)
				return mtu_usage("--timeout wants milliseconds, 1 to 10000");
			break;
		case 'h':
			fputs(MTU_USAGE, stdout);
			return EXIT_OK;
		default:
			return mtu_usage(NULL);
		}
	}
	if (optind >= argc)
		return mtu_usage("probe needs at least one peer");
	if (o.ifname && o.max == 0) {
		r = netif_get_mtu(o.ifname, &o.max);
		if (r < 0) {
			snprintf(msg, sizeof(msg), "no interface named %s (see 'nastune mtu show')",
				 o.ifname);
			return mtu_fail(ctx, NULL, r, msg);
		}
	}
	if (ctx->json)
		arr = json_array();
	for (i = optind; i < argc; i++) {
		struct probe_result res;

		r = probe_peer(argv[i], &o, &res);
		if (r < 0) {
			snprintf(msg, sizeof(msg), "%s: %s", argv[i], res.why);
			if (!ctx->json)
				return mtu_fail(ctx, NULL, r, msg);
			json_array_append_new(
				arr, json_pack("{s:s, s:s}", "peer", argv[i], "error", res.why));
			log_warnx("mtu: %s", msg);
			if (mtu_exit(r) > status)
				status = mtu_exit(r);
			continue;
		}
		if (!res.reachable && status == EXIT_OK)
			status = EXIT_FAIL;
		if (ctx->json) {
			json_array_append_new(arr, netjson_probe(argv[i], &res));
		} else if (res.reachable) {
			printf("%s (%s): %d bytes pass with don't-fragment (searched %d..%d, "
			       "%d probes, %d ms)%s",
			       argv[i], res.addr, res.largest, res.min, res.max, res.probes,
			       res.elapsed_ms, res.largest == res.max ? ", the local limit" : "");
			if (res.peer_mtu && res.peer_mtu < res.largest)
				printf("; its replies come whole up to %d (the MTU it sends with)",
				       res.peer_mtu);
			putchar('\n');
		} else {
			printf("%s (%s): unreachable: %s\n", argv[i], res.addr, res.why);
		}
	}
	if (ctx->json) {
		json_t *obj = json_object();

		json_object_set_new(obj, "ok", json_boolean(status == EXIT_OK));
		json_object_set_new(obj, "peers", arr);
		mtu_json_print(obj);
	}
	return status;
}

static int
mtu_auto(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "peer", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char **peers = NULL;
	size_t npeers = 0;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			peers = xreallocarray(peers, npeers + 1, sizeof(*peers));
			peers[npeers++] = optarg;
			break;
		case 'h':
			fputs(MTU_USAGE, stdout);
			free(peers);
			return EXIT_OK;
		default:
			free(peers);
			return mtu_usage(NULL);
		}
	}
	if (optind != argc - 1 || npeers == 0) {
		free(peers);
		return mtu_usage("auto needs one interface and at least one --peer");
	}
	return mtu_ensure(ctx, argv[optind], NETIF_MTU_AUTO, 0, peers, npeers, auto_text);
}

int
cmd_mtu(struct ctx *ctx, int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "show") == 0)
		return mtu_show(ctx, argc > 1 ? argc - 1 : 1, argc > 1 ? argv + 1 : argv);
	if (strcmp(argv[1], "set") == 0)
		return mtu_set(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "probe") == 0)
		return mtu_probe(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "auto") == 0)
		return mtu_auto(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(MTU_USAGE, stdout);
		return EXIT_OK;
	}
	return mtu_usage("unknown mtu subcommand");
}
