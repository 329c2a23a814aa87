/* cmd_bench.c - bench, report, history: targets from the command line or the configuration,
 * progress on stderr, results stored in the state database. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "bench.h"
#include "buf.h"
#include "cli.h"
#include "fsutil.h"
#include "hwinfo.h"
#include "log.h"
#include "model.h"
#include "state.h"
#include "tune.h"
#include "units.h"
#include "xmalloc.h"

#define MAX_VIDEO 8

static volatile sig_atomic_t stop_flag;

static void
on_signal(int sig)
{
	stop_flag = sig;
}

struct target {
	struct bench_target t;
	const struct bench_driver *d;
	char *local;		/* local directory behind it, for the disk baseline; NULL */
};

struct video_spec {
	const struct bench_video_format *fmt;
	double fps;
};

struct progress {
	bool tty, quiet;
	unsigned done, total;
	double t0;
	int width;
};

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
show_progress(const struct bench_progress *p, void *arg)
{
	struct progress *pr = arg;
	double el = mono() - pr->t0, eta;
	unsigned pct, i, fill;

	if (pr->done < pr->total)
		pr->done++;
	if (pr->quiet)
		return;
	if (!pr->tty) {
		fprintf(stderr, "nastune: bench: %s %s: run %u of %u%s\n", p->target, p->workload,
			p->run, p->runs, p->warmup ? " (warm-up)" : "");
		return;
	}
	pct = pr->total ? pr->done * 100 / pr->total : 0;
	fill = pct * 20 / 100;
	eta = pr->done > 1 ? el / (pr->done - 1) * (pr->total - pr->done + 1) : 0;
	fputs("\r\033[K[", stderr);
	for (i = 0; i < 20; i++)
		fputc(i < fill ? '#' : '.', stderr);
	fprintf(stderr, "] %3u%% %s %s %u/%u", pct, p->target, p->workload, p->run, p->runs);
	if (pr->done > 1)
		fprintf(stderr, " ETA %um%02us", (unsigned)eta / 60, (unsigned)eta % 60);
	fflush(stderr);
}

static int
drop_caches(void *arg)
{
	FILE *fp;
	int rc = 0;

	(void)arg;
	sync();
	if (!(fp = fopen("/proc/sys/vm/drop_caches", "w")))
		return -errno;
	if (fputs("3\n", fp) < 0)
		rc = -EIO;
	if (fclose(fp) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

static void
add_target(struct target **v, size_t *n, const char *url, const struct bench_driver *d,
	   const char *local)
{
	struct target *t;
	char err[512];

	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	t = &(*v)[*n];
	memset(t, 0, sizeof(*t));
	if (bench_target_parse(url, &t->t, err, sizeof(err)) < 0) {
		log_warnx("bench: %s; skipped", err);
		return;
	}
	t->d = d;
	t->local = local ? xstrdup(local) : NULL;
	(*n)++;
}

/* The server's own shares over loopback for each enabled protocol with a driver, and file://
 * of each share's path; never Time Machine or read-only shares. */
static void
derive_targets(const struct ctx *ctx, const struct model *m, const char *protos,
	       struct target **v, size_t *n)
{
	static const struct {
		const char *name;
		unsigned bit;
	} ps[] = { { "smb", PROTO_SMB }, { "nfs", PROTO_NFS }, { "afp", PROTO_AFP } };
	bool warned[3] = { false, false, false };
	size_t i, k;

	for (i = 0; i < m->n_shares; i++) {
		const struct share *s = &m->shares[i];
		char *local = fs_rooted(ctx->root, s->path), *esc, *url;

		if (s->tm_enabled || s->read_only) {
			log_info("bench: share %s skipped (%s)", s->name,
				 s->tm_enabled ? "Time Machine" : "read-only");
			free(local);
			continue;
		}
		for (k = 0; k < 3; k++) {
			const struct bench_driver *d;
			bool enabled = k == 0 ? m->smb.enabled : k == 1 ? m->nfs.enabled :
								 m->afp.enabled;

			if (!(s->protocols & ps[k].bit) || !enabled || !cli_in_list(protos, ps[k].name))
				continue;
			if (k == 1 && !cli_nfs_loopback_ok(s)) {
				log_info("bench: NFS export %s skipped: its clients do not include this "
					 "host's loopback (measure it from a client: --client)", s->path);
				continue;
			}
			if (!(d = bench_driver_find(ps[k].name))) {
				if (!warned[k])
					log_warnx("bench: no %s driver in this build; %s skipped",
						  ps[k].name, ps[k].name);
				warned[k] = true;
				continue;
			}
			esc = cli_url_escape(k == 1 ? s->path : s->name);
			url = xasprintf("%s://127.0.0.1%s%s", ps[k].name, k == 1 ? "" : "/", esc);
			add_target(v, n, url, d, local);
			free(esc);
			free(url);
		}
		if (cli_in_list(protos, "posix")) {
			esc = cli_url_escape(local);
			url = xasprintf("file://%s", esc);
			add_target(v, n, url, &bench_drv_posix, local);
			free(esc);
			free(url);
		}
		free(local);
	}
}

/* A Time Machine or read-only share of the configuration that t points at, or NULL. */
static const struct share *
tm_share_of(const struct ctx *ctx, const struct model *m, const struct bench_target *t)
{
	size_t i;

	for (i = 0; m && i < m->n_shares; i++) {
		const struct share *s = &m->shares[i];
		char *p;
		size_t len;
		bool hit = false;

		if (!s->tm_enabled && !s->read_only)
			continue;
		if (strcmp(t->scheme, "file") == 0) {
			p = fs_rooted(ctx->root, s->path);
			len = strlen(p);
			hit = strncmp(t->share, p, len) == 0 && (!t->share[len] || t->share[len] == '/');
			free(p);
		} else if (strcmp(t->scheme, "nfs") == 0) {
			hit = strcmp(t->share, s->path) == 0;
		} else if (t->share) {
			hit = strcasecmp(t->share, s->name) == 0;
		}
		if (hit)
			return s;
	}
	return NULL;
}

static bool
is_loopback(const char *host)
{
	return host && (strcmp(host, "127.0.0.1") == 0 || strcmp(host, "localhost") == 0 ||
			strcmp(host, "::1") == 0);
}

static void
now_iso(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void
add_baseline(json_t *a, const char *name, double v, const char *where, const char *method)
{
	if (v > 0)
		json_array_append_new(a, json_pack("{s:s, s:s, s:f, s:s, s:s}", "name", name,
						   "unit", "MB/s", "value", v, "where", where,
						   "method", method));
}

static void
bench_usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: nastune bench [--protocol LIST] [--workload LIST] [--target URL]... "
		    "[--repeat N] [--warmup N]\n"
		    "                     [--size SIZE] [--credentials FILE] [--force] "
		    "[--cache hot|cold|auto]\n"
		    "                     [--files N] [--entries N] [--video FORMAT@FPS,...] "
		    "[--video-seconds S] [--no-baseline]\n"
		    "                     [--client HOST[:PORT]|auto]... [--token-file FILE] "
		    "[--clients-only]\n"
		    "workloads:");
	for (i = 0; i < BENCH_NWORKLOADS; i++)
		fprintf(fp, " %s", bench_workload_name(i));
	fprintf(fp, "\nprotocols: null posix smb nfs afp (those with a driver in this build:");
	for (i = 0; bench_drivers()[i]; i++)
		fprintf(fp, " %s", bench_drivers()[i]->name);
	fprintf(fp, ")\nvideo formats:");
	for (i = 0; bench_video_formats()[i]; i++)
		fprintf(fp, " %s", bench_video_formats()[i]->name);
	fprintf(fp, "\ntargets: file:///path, smb://[user@]host/share[/dir], "
		    "nfs://host/export[?version=3|4], afp://[user@]host/volume, null://name\n");
}

static int
parse_uint(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v < lo || v > hi) {
		fprintf(stderr, "nastune bench: %s '%s' must be a number from %u to %u\n", opt, s, lo,
			hi);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

int
cmd_bench(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "protocol", required_argument, NULL, 'p' },
		{ "workload", required_argument, NULL, 'w' },
		{ "target", required_argument, NULL, 't' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "size", required_argument, NULL, 's' },
		{ "credentials", required_argument, NULL, 'C' },
		{ "force", no_argument, NULL, 'f' },
		{ "cache", required_argument, NULL, 'k' },
		{ "files", required_argument, NULL, 'F' },
		{ "entries", required_argument, NULL, 'E' },
		{ "video", required_argument, NULL, 'V' },
		{ "video-seconds", required_argument, NULL, 'S' },
		{ "no-baseline", no_argument, NULL, 'B' },
		{ "client", required_argument, NULL, 'c' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "clients-only", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_opts o = { .warmup = 1, .cache = geteuid() == 0 ? BENCH_CACHE_COLD :
								       BENCH_CACHE_HOT };
	const char *protos = NULL, *wls = NULL, *creds = NULL, *video_arg = NULL, *token = NULL;
	char **clients = NULL;
	size_t nclients = 0;
	bool clients_only = false;
	json_t *agents = json_array();
	char **urls = NULL, err[1024], created[32], hash[65] = "", *hwtext = NULL;
	struct video_spec videos[MAX_VIDEO];
	struct target *tg = NULL;
	size_t nurls = 0, ntg = 0, nvideo = 0, i, k;
	bool wl[BENCH_NWORKLOADS] = { false }, no_baseline = false, any_wl = false;
	struct model *m = NULL;
	struct bench_results all = { 0 };
	json_t *doc = NULL, *errors = json_array(), *baselines = json_array();
	struct progress pr = { 0 };
	struct sigaction sa = { 0 }, old_int, old_term;
	struct state *st = NULL;
	struct generation g = { 0 };
	struct hwinfo hw = { 0 };
	int c, status = EXIT_OK, rc;
	long run_id = -1;
	char *end;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			protos = optarg;
			break;
		case 'w':
			wls = optarg;
			break;
		case 't':
			urls = xreallocarray(urls, nurls + 1, sizeof(*urls));
			urls[nurls++] = optarg;
			break;
		case 'n':
			if (parse_uint("--repeat", optarg, 1, BENCH_MAX_REPEATS, &o.repeats) < 0)
				goto usage;
			break;
		case 'W':
			if (parse_uint("--warmup", optarg, 0, BENCH_MAX_WARMUP, &o.warmup) < 0)
				goto usage;
			break;
		case 's':
			if (units_parse_size(optarg, &o.size) < 0 || o.size < 4096 ||
			    o.size > BENCH_MAX_SIZE) {
				fprintf(stderr, "nastune bench: --size '%s' is not a size from 4K to "
						"16T (e.g. 64M, 1G)\n", optarg);
				goto usage;
			}
			break;
		case 'C':
			creds = optarg;
			break;
		case 'f':
			o.force = true;
			break;
		case 'k':
			if (strcmp(optarg, "hot") == 0)
				o.cache = BENCH_CACHE_HOT;
			else if (strcmp(optarg, "cold") == 0)
				o.cache = BENCH_CACHE_COLD;
			else if (strcmp(optarg, "auto") != 0) {
				fprintf(stderr, "nastune bench: --cache must be hot, cold or auto\n");
				goto usage;
			}
			break;
		case 'F':
			if (parse_uint("--files", optarg, 1, BENCH_MAX_FILES, &o.small_files) < 0)
				goto usage;
			break;
		case 'E':
			if (parse_uint("--entries", optarg, 1, BENCH_MAX_ENTRIES, &o.meta_entries) < 0)
				goto usage;
			break;
		case 'V':
			video_arg = optarg;
			break;
		case 'S':
			o.video_seconds = strtod(optarg, &end);
			if (*end || !(o.video_seconds >= 0.1 && o.video_seconds <= 3600)) {
				fprintf(stderr, "nastune bench: --video-seconds '%s' must be 0.1 to "
						"3600\n", optarg);
				goto usage;
			}
			break;
		case 'B':
			no_baseline = true;
			break;
		case 'c':
			if (!cli_client_spec_ok(optarg))
				goto usage;
			clients = xreallocarray(clients, nclients + 1, sizeof(*clients));
			clients[nclients++] = optarg;
			break;
		case 'T':
			token = optarg;
			break;
		case 'O':
			clients_only = true;
			break;
		case 'h':
			bench_usage(stdout);
			status = EXIT_OK;
			goto out;
		default:
			goto usage;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nastune bench: unexpected argument '%s'\n", argv[optind]);
		goto usage;
	}
	if (protos) {
		char *copy = xstrdup(protos), *save = NULL, *tok;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (!cli_in_list("null,posix,smb,nfs,afp", tok)) {
				fprintf(stderr, "nastune bench: unknown protocol '%s' (null, posix, "
						"smb, nfs, afp)\n", tok);
				free(copy);
				goto usage;
			}
		free(copy);
	}
	for (i = 0; i < BENCH_NWORKLOADS; i++)
		wl[i] = !wls;
	if (wls) {
		char *copy = xstrdup(wls), *save = NULL, *tok;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if ((rc = bench_workload_parse(tok)) < 0) {
				fprintf(stderr, "nastune bench: unknown workload '%s' — see "
						"`nastune bench --help`\n", tok);
				free(copy);
				goto usage;
			}
			wl[rc] = true;
		}
		free(copy);
	}
	if (video_arg) {
		char *copy = xstrdup(video_arg), *save = NULL, *tok;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (nvideo == MAX_VIDEO ||
			    bench_video_parse(tok, &videos[nvideo].fmt, &videos[nvideo].fps) < 0) {
				fprintf(stderr, "nastune bench: --video '%s' is not FORMAT@FPS with a "
						"known format (see --help) and 1-240 fps\n", tok);
				free(copy);
				goto usage;
			}
			nvideo++;
		}
		free(copy);
	}
	if (!nvideo) {
		videos[0].fmt = bench_video_formats()[0];
		videos[0].fps = 30;
		nvideo = 1;
	}

	/* The configuration: required to derive targets; with --target, read when present
	 * (to recognise Time Machine shares). */
	{
		char *path = cli_config_path(ctx);
		struct stat sb;

		if (!nurls || stat(path, &sb) == 0) {
			m = cli_load_model(ctx, &status);
			if (!m) {	/* errors printed; an invalid file is never ignored */
				free(path);
				goto out;
			}
		}
		free(path);
	}
	for (i = 0; i < nurls; i++) {
		struct target t = { 0 };
		const struct share *tm;

		if (bench_target_parse(urls[i], &t.t, err, sizeof(err)) < 0) {
			fprintf(stderr, "nastune bench: %s\n", err);
			status = EXIT_USAGE;
			goto out;
		}
		if (!(t.d = bench_driver_for_scheme(t.t.scheme))) {
			log_warnx("bench: no %s driver in this build; %s skipped", t.t.scheme, t.t.url);
			bench_target_clear(&t.t);
			continue;
		}
		if (!cli_in_list(protos, t.d->name)) {
			fprintf(stderr, "nastune bench: --target %s is %s, not in --protocol %s\n",
				t.t.url, t.d->name, protos);
			bench_target_clear(&t.t);
			status = EXIT_USAGE;
			goto out;
		}
		if (!o.force && (tm = tm_share_of(ctx, m, &t.t))) {
			fprintf(stderr, "nastune bench: %s is the %s share %s; refusing to "
					"benchmark it (%s) — add --force to do it anyway\n", t.t.url,
				tm->tm_enabled ? "Time Machine" : "read-only", tm->name,
				tm->tm_enabled ? "it would disturb backups" :
						 "nothing may be written to it");
			bench_target_clear(&t.t);
			status = EXIT_USAGE;
			goto out;
		}
		if (strcmp(t.t.scheme, "file") == 0)
			t.local = *t.t.subdir ? xasprintf("%s/%s", t.t.share, t.t.subdir) :
						xstrdup(t.t.share);
		tg = xreallocarray(tg, ntg + 1, sizeof(*tg));
		tg[ntg++] = t;
	}
	if (clients_only && !nclients) {
		fprintf(stderr, "nastune bench: --clients-only needs --client HOST or --client auto\n");
		goto usage;
	}
	if (nclients && !m) {
		fprintf(stderr, "nastune bench: --client needs the configuration (its shares are "
				"what the agents benchmark)\n");
		goto usage;
	}
	if (!nurls && !clients_only)
		derive_targets(ctx, m, protos, &tg, &ntg);
	for (i = 0; i < ntg; i++) {
		if (!tg[i].t.host)	/* file://, null://: no login */
			continue;
		if (creds && (rc = bench_target_credentials(&tg[i].t, creds, err, sizeof(err))) < 0) {
			fprintf(stderr, "nastune bench: %s\n", err);
			status = EXIT_USAGE;
			goto out;
		}
		if (bench_target_prompt(&tg[i].t) == -ENOTTY)
			log_info("bench: no terminal to ask for %s's password", tg[i].t.user);
	}
	if (!ntg && !nclients) {
		log_warnx("bench: nothing to benchmark (no target with a driver in this build)");
		status = EXIT_FAIL;
		goto out;
	}
	for (i = 0; i < BENCH_NWORKLOADS; i++)
		any_wl |= wl[i];

	/* A server or agent that hangs up must give an error, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	sa.sa_handler = on_signal;	/* no SA_RESTART: blocked I/O returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	stop_flag = 0;

	pr.tty = isatty(STDERR_FILENO);
	pr.quiet = log_verbosity() < 0;
	pr.t0 = mono();
	for (i = 0; i < BENCH_NWORKLOADS; i++)
		if (wl[i])
			pr.total += (unsigned)ntg * (o.warmup + (o.repeats ? o.repeats : 5)) *
				    (i == BENCH_VIDEO ? (unsigned)nvideo : 1);
	o.progress = show_progress;
	o.progress_arg = &pr;
	o.stop = &stop_flag;
	if (o.cache == BENCH_CACHE_COLD && geteuid() == 0)
		o.drop_caches = drop_caches;

	for (i = 0; i < ntg && !stop_flag && any_wl; i++) {
		struct target *t = &tg[i];
		struct bench_baseline bl = { 0 };
		bool network = strcmp(t->t.scheme, "file") != 0 && strcmp(t->t.scheme, "null") != 0;
		size_t first = all.n;
		int w;

		if (!no_baseline) {
			if (t->local && bench_baseline_disk(t->local, &o, &bl, err, sizeof(err)) < 0)
				log_warnx("bench: raw disk baseline of %s: %s", t->local, err);
			if (network && is_loopback(t->t.host))
				rc = bench_baseline_tcp_loopback(o.size ? o.size : BENCH_DEFAULT_SIZE, &bl);
			else if (network && t->t.host)
				rc = bench_baseline_iperf3(t->t.host, &bl);
			add_baseline(baselines, "disk-write", bl.disk_write, t->local ? t->local : "",
				     bl.disk_method);
			add_baseline(baselines, "disk-read", bl.disk_read, t->local ? t->local : "",
				     bl.disk_method);
			add_baseline(baselines, "tcp", bl.tcp, t->t.host ? t->t.host : "",
				     bl.tcp_method);
		}
		for (w = 0; w < BENCH_NWORKLOADS && !stop_flag; w++) {
			if (!wl[w])
				continue;
			for (k = 0; k < (w == BENCH_VIDEO ? nvideo : 1) && !stop_flag; k++) {
				o.video = videos[k].fmt;
				o.video_fps = videos[k].fps;
				rc = bench_run(t->d, &t->t, (enum bench_workload)w, &o, &all, err,
					       sizeof(err));
				if (pr.tty && !pr.quiet)
					fputs("\r\033[K", stderr);
				if (rc < 0) {
					log_warnx("bench: %s %s: %s", t->t.url, bench_workload_name(w),
						  err);
					json_array_append_new(errors, json_pack(
						"{s:s, s:s, s:s, s:s}", "target", t->t.url, "protocol",
						t->d->name, "workload", bench_workload_name(w), "message",
						err));
					status = EXIT_FAIL;
				}
			}
		}
		for (k = first; k < all.n; k++)
			bench_attribute(&all.v[k], &bl, network);
	}
	/* Client-assisted: the same workloads from the agents' machines. */
	if (nclients && !stop_flag && any_wl &&
	    cli_bench_clients(ctx, m, clients, nclients, token, protos, wl, &o, &all, errors,
			      agents) < 0)
		status = EXIT_FAIL;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (stop_flag) {
		log_warnx("bench: interrupted by %s; scratch directories removed",
			  stop_flag == SIGINT ? "SIGINT" : "SIGTERM");
		status = EXIT_FAIL;
	}

	/* Store the run with the generation in force and the hardware fingerprint. */
	if (apply_read_hw(&hw) < 0)
		log_warnx("bench: cannot read the hardware fingerprint");
	hwinfo_hash(&hw, hash);
	hwtext = hwinfo_text(&hw);
	now_iso(created, sizeof(created));
	doc = json_object();
	json_object_set_new(doc, "run", json_null());
	json_object_set_new(doc, "created", json_string(created));
	json_object_set_new(doc, "nastune", json_string(NASTUNE_VERSION));
	json_object_set_new(doc, "results", bench_results_to_json(&all));
	json_object_set_new(doc, "baselines", baselines);
	json_object_set_new(doc, "errors", errors);
	json_object_set_new(doc, "agents", agents);
	baselines = errors = agents = NULL;
	json_object_set_new(doc, "hw_hash", json_string(hash));
	json_object_set_new(doc, "hw", json_string(hwtext ? hwtext : ""));
	json_object_set_new(doc, "options", json_pack("{s:I, s:i, s:i, s:s}", "size",
						      (json_int_t)(o.size ? o.size : BENCH_DEFAULT_SIZE),
						      "repeat", o.repeats ? o.repeats : 5, "warmup",
						      o.warmup, "cache", o.drop_caches ? "cold" : "hot"));
	if ((rc = state_open(ctx->root, &st, err, sizeof(err))) < 0) {
		log_warnx("bench: cannot store the run: %s", err);
		status = EXIT_FAIL;
		json_object_set_new(doc, "generation", json_null());
	} else {
		char *text;

		if (state_last_generation(st, &g) == 0)
			json_object_set_new(doc, "generation", json_integer(g.id));
		else
			json_object_set_new(doc, "generation", json_null());
		text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
		rc = state_add_bench_run(st, created, g.created ? g.id : -1, hash, text, &run_id);
		free(text);
		if (rc == 0) {
			json_object_set_new(doc, "run", json_integer(run_id));
			text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
			rc = state_set_bench_run_json(st, run_id, text);
			free(text);
		}
		if (rc < 0) {
			log_warnx("bench: cannot store the run in the state database");
			status = EXIT_FAIL;
		} else {
			log_info("bench: stored as run %ld (`nastune report --run %ld`)", run_id,
				 run_id);
		}
	}
	if (ctx->json) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else {
		char *text = bench_report_text(doc, err, sizeof(err));

		if (text)
			fputs(text, stdout);
		free(text);
	}
	goto out;
usage:
	status = EXIT_USAGE;
out:
	for (i = 0; i < ntg; i++) {
		bench_target_clear(&tg[i].t);
		free(tg[i].local);
	}
	free(tg);
	free(urls);
	free(clients);
	json_decref(agents);
	free(hwtext);
	bench_results_clear(&all);
	json_decref(doc);
	json_decref(errors);
	json_decref(baselines);
	generation_clear(&g);
	hwinfo_free(&hw);
	state_close(st);
	model_free(m);
	return status;
}

/* Opens the state database only when it exists (report and history never create it). */
static int
open_existing(const struct ctx *ctx, struct state **st, const char *cmd)
{
	char *db = fs_rooted(ctx->root, "/var/lib/nastune/state.db"), err[512];
	struct stat sb;
	int rc;

	if (stat(db, &sb) < 0) {
		fprintf(stderr, "nastune %s: no benchmark runs yet (no %s) — run `nastune bench`\n",
			cmd, db);
		free(db);
		return -ENOENT;
	}
	free(db);
	if ((rc = state_open(ctx->root, st, err, sizeof(err))) < 0)
		fprintf(stderr, "nastune %s: %s\n", cmd, err);
	return rc;
}

int
cmd_report(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "html", required_argument, NULL, 'H' },
		{ "run", required_argument, NULL, 'r' },
		{ "tune", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct state_bench_run run = { 0 };
	bool tune = false;
	const char *html = NULL;
	struct state *st = NULL;
	json_t *doc = NULL;
	json_error_t jerr;
	char err[512], *out = NULL, *end;
	long id = -1;
	int c, rc, status = EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'H':
			html = optarg;
			break;
		case 'r':
			id = strtol(optarg, &end, 10);
			if (*end || id < 1) {
				fprintf(stderr, "nastune report: --run '%s' is not a run number — see "
						"`nastune history`\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 't':
			tune = true;
			break;
		case 'h':
			printf("usage: nastune report [--tune] [--html FILE] [--run ID]\n");
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nastune report: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (open_existing(ctx, &st, "report") < 0)
		return EXIT_FAIL;
	if (tune) {
		long tid;
		char *hw = NULL, *text = NULL;

		if ((rc = state_get_tune(st, id, &tid, &hw, &text)) < 0) {
			fprintf(stderr, rc == -ENOENT ? (id >= 0 ? "nastune report: no tune %ld\n" :
					"nastune report: no tune yet — run `nastune tune`\n") :
					"nastune report: cannot read the state database\n", id);
			state_close(st);
			return rc == -ENOENT && id >= 0 ? EXIT_USAGE : EXIT_FAIL;
		}
		run.id = tid;
		run.json = text;
		free(hw);
	} else if ((rc = state_get_bench_run(st, id, &run)) < 0) {
		if (rc == -ENOENT && id >= 0)
			fprintf(stderr, "nastune report: no run %ld — see `nastune history`\n", id);
		else if (rc == -ENOENT)
			fprintf(stderr, "nastune report: no benchmark runs yet — run `nastune bench`\n");
		else
			fprintf(stderr, "nastune report: cannot read the state database\n");
		status = rc == -ENOENT && id >= 0 ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
	if (!(doc = json_loads(run.json, 0, &jerr))) {
		fprintf(stderr, "nastune report: run %ld is not valid JSON: %s\n", run.id, jerr.text);
		goto out;
	}
	if (ctx->json && !html) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		status = EXIT_OK;
		goto out;
	}
	if (tune)
		out = html ? tune_report_html(doc, err, sizeof(err)) :
			     tune_report_text(doc, err, sizeof(err));
	else
		out = html ? bench_report_html(doc, err, sizeof(err)) :
			     bench_report_text(doc, err, sizeof(err));
	if (!out) {
		fprintf(stderr, "nastune report: run %ld: %s\n", run.id, err);
		goto out;
	}
	if (html) {
		if ((rc = fs_write_atomic(html, out, strlen(out), 0644, 0)) < 0) {
			fprintf(stderr, "nastune report: cannot write %s: %s\n", html, strerror(-rc));
			goto out;
		}
		log_info("report: run %ld written to %s", run.id, html);
	} else {
		fputs(out, stdout);
	}
	status = EXIT_OK;
out:
	free(out);
	json_decref(doc);
	state_bench_run_clear(&run);
	state_close(st);
	return status;
}

int
cmd_history(struct ctx *ctx, int argc, char **argv)
{
	struct state_bench_run *runs = NULL;
	struct state *st = NULL;
	json_t *list = json_array();
	size_t n = 0, i;
	int status = EXIT_FAIL;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: nastune history\n");
		json_decref(list);
		return strcmp(argv[1], "--help") == 0 ? EXIT_OK : EXIT_USAGE;
	}
	if (open_existing(ctx, &st, "history") < 0) {
		json_decref(list);
		return EXIT_FAIL;
	}
	if (state_list_bench_runs(st, &runs, &n) < 0) {
		fprintf(stderr, "nastune history: cannot read the state database\n");
		goto out;
	}
	if (!ctx->json)
		printf("%5s  %-20s  %4s  %-12s  %7s  %6s  %s\n", "run", "created", "gen", "hardware",
		       "results", "errors", "targets");
	for (i = 0; i < n; i++) {
		json_t *doc = json_loads(runs[i].json, 0, NULL), *targets = json_array(), *v;
		const json_t *res = json_object_get(doc, "results");
		size_t k, nres = json_array_size(res), nerr;
		struct buf tl;

		nerr = json_array_size(json_object_get(doc, "errors"));
		buf_init(&tl);
		json_array_foreach(res, k, v) {
			const char *t = json_string_value(json_object_get(v, "target"));
			size_t j;
			json_t *x;
			bool seen = false;

			json_array_foreach(targets, j, x)
				seen |= t && strcmp(json_string_value(x), t) == 0;
			if (t && !seen) {
				json_array_append_new(targets, json_string(t));
				buf_printf(&tl, "%s%s", tl.len ? " " : "", t);
			}
		}
		if (ctx->json) {
			json_array_append_new(list, json_pack(
				"{s:I, s:s, s:o, s:s, s:I, s:I, s:o}", "run", (json_int_t)runs[i].id,
				"created", runs[i].created, "generation", runs[i].gen >= 0 ?
				json_integer(runs[i].gen) : json_null(), "hw_hash", runs[i].hw_hash,
				"results", (json_int_t)nres, "errors", (json_int_t)nerr, "targets",
				targets));
		} else {
			char gen[16];

			snprintf(gen, sizeof(gen), "%ld", runs[i].gen);
			printf("%5ld  %-20s  %4s  %-12.12s  %7zu  %6zu  %s\n", runs[i].id,
			       runs[i].created, runs[i].gen >= 0 ? gen : "-", runs[i].hw_hash, nres,
			       nerr, tl.data ? tl.data : "");
			json_decref(targets);
		}
		buf_free(&tl);
		json_decref(doc);
	}
	if (ctx->json) {
		json_t *o = json_pack("{s:o}", "runs", list);

		list = NULL;
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	}
	status = EXIT_OK;
out:
	for (i = 0; i < n; i++)
		state_bench_run_clear(&runs[i]);
	free(runs);
	json_decref(list);
	state_close(st);
	return status;
}
