/* agent.c - the nastune agent on client machines (the controller's connection to it is
 * src/measure/agentctl_conn.c).
 *
 * Thread per connection: at most AGENT_UNAUTH_PER_PEER per address (AGENT_UNAUTH_MAX in all)
 * still in the handshake, max_conns authenticated (more are told "busy"); jobs one at a time
 * behind a mutex with a bounded queue. Nothing is answered before the handshake succeeds,
 * and every message after it is authenticated (agent_proto.h). Jobs run only against the
 * controller that authenticated, or on --mount paths. A job writes only inside the scratch
 * directory the engine creates in its target. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <jansson.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent.h"
#include "bench.h"
#include "fsutil.h"
#include "log.h"
#include "xmalloc.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

#define IDLE_MS (10 * 60 * 1000) /* a controller silent this long is dropped */
#define MAX_SIZE (64ull << 30)
#define MAX_REPEATS 100

/* ---- listen address ---- */

int
agent_parse_listen(const char *spec, char *addr, size_t addrlen, int *port)
{
	const char *colon;
	char *end;
	long p = AGENT_DEFAULT_PORT;

	if (!spec || !*spec) {
		snprintf(addr, addrlen, "0.0.0.0");
		*port = AGENT_DEFAULT_PORT;
		return 0;
	}
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || (size_t)(close - spec - 1) >= addrlen)
			return -EINVAL;
		snprintf(addr, addrlen, "%.*s", (int)(close - spec - 1), spec + 1);
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] && !colon)
			return -EINVAL;
	} else {
		colon = strrchr(spec, ':');
		if (colon && strchr(spec, ':') != colon)
			return -EINVAL; /* bare IPv6 needs brackets */
		snprintf(addr, addrlen, "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec),
			 spec);
		if (!*addr)
			snprintf(addr, addrlen, "0.0.0.0");
	}
	if (colon) {
		p = strtol(colon + 1, &end, 10);
		if (*end || end == colon + 1 || p <= 0 || p > 65535)
			return -EINVAL;
	}
	*port = (int)p;
	return 0;
}

/* ---- facts ---- */

/* The MTU this host sends with towards the NAS on fd (the route's, or a smaller path MTU
 * learned since): the NAS's MTU auto must not go above it. 0 where the OS does not say. */
static int
nic_path_mtu(int fd, int family)
{
	int mtu = 0;
#if defined(IP_MTU) && defined(IPV6_MTU)
	socklen_t l = sizeof(mtu);

	if (getsockopt(fd, family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP,
		       family == AF_INET6 ? IPV6_MTU : IP_MTU, &mtu, &l) < 0)
		mtu = 0;
#else
	(void)fd;
	(void)family;
#endif
	return mtu;
}

/* The interface carrying the local address of fd, with its MTU and (Linux) speed. */
static json_t *
nic_facts(int fd)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);
	struct ifaddrs *ifa = NULL, *i;
	char addr[INET6_ADDRSTRLEN] = "", name[IF_NAMESIZE] = "";
	int mtu = 0, speed = -1;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		void *a = ss.ss_family == AF_INET
				  ? (void *)&((struct sockaddr_in *)&ss)->sin_addr
				  : (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
		inet_ntop(ss.ss_family, a, addr, sizeof(addr));
	}
	if (getifaddrs(&ifa) == 0) {
		for (i = ifa; i; i = i->ifa_next) {
			char a[INET6_ADDRSTRLEN] = "";

			if (!i->ifa_addr || i->ifa_addr->sa_family != ss.ss_family)
				continue;
			inet_ntop(
				i->ifa_addr->sa_family,
				i->ifa_addr->sa_family == AF_INET
					? (void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
					: (void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
				a, sizeof(a));
			if (strcmp(a, addr) == 0) {
				snprintf(name, sizeof(name), "%s", i->ifa_name);
				break;
			}
		}
		freeifaddrs(ifa);
	}
	if (name[0]) {
		struct ifreq ifr;
		int s = socket(AF_INET, SOCK_DGRAM, 0);

		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		if (s >= 0 && ioctl(s, SIOCGIFMTU, &ifr) == 0)
			mtu = ifr.ifr_mtu;
		if (s >= 0)
			close(s);
#ifdef __linux__
		{
			char path[64], buf[32] = "";
			FILE *fp;

			snprintf(path, sizeof(path), "/sys/class/net/%s/speed", name);
			if ((fp = fopen(path, "r"))) {
				if (fgets(buf, sizeof(buf), fp))
					speed = atoi(buf);
				fclose(fp);
			}
		}
#endif
	}
	return json_pack("{s:s, s:s, s:i, s:i, s:i}", "name", name, "address", addr, "mtu", mtu,
			 "speed_mbps", speed, "path_mtu", nic_path_mtu(fd, ss.ss_family));
}

static json_t *
cpu_facts(void)
{
	char model[256] = "unknown";
#ifdef __linux__
	char line[512];
	FILE *fp = fopen("/proc/cpuinfo", "r");

	while (fp && fgets(line, sizeof(line), fp)) {
		char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && c) {
			snprintf(model, sizeof(model), "%s", c + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (fp)
		fclose(fp);
#endif
	return json_pack("{s:s, s:i}", "model", model, "count", (int)sysconf(_SC_NPROCESSORS_ONLN));
}

/* Which protocols the OS itself can mount (what a user of this machine gets without nastune). */
static json_t *
mount_facts(const struct utsname *u)
{
	bool smb = false, nfs = false, afp = false;
#ifdef __linux__
	char line[128];
	FILE *fp = fopen("/proc/filesystems", "r");

	while (fp && fgets(line, sizeof(line), fp)) {
		smb |= strstr(line, "\tcifs") || strstr(line, "\tsmb3");
		nfs |= strstr(line, "\tnfs") != NULL;
	}
	if (fp)
		fclose(fp);
	(void)u;
#elif defined(__APPLE__)
	/* macOS 27 (Darwin 26) removed the AFP client (FIELD.md). */
	smb = nfs = true;
	afp = atoi(u->release) < 26;
#else
	(void)u;
#endif
	return json_pack("{s:b, s:b, s:b}", "smb", smb, "nfs", nfs, "afp", afp);
}

/* A connection over the handshake limits, waiting AGENT_KNOCK_WAIT_MS for a knock. Only the
 * accept loop touches these. */
struct pending {
	int fd;
	long deadline;
	char peer[INET6_ADDRSTRLEN + 8];
};

struct conn_arg;

struct agent {
	const struct agent_opts *o;
	pthread_mutex_t lock;		 /* jobs, one at a time */
	pthread_mutex_t state;		 /* the counters, the lists and the cache below */
	unsigned conns, authed, waiting; /* threads; authenticated; jobs queued */
	unsigned reserved;		 /* handshakes admitted by a knock */
	char unauth[AGENT_UNAUTH_MAX][INET6_ADDRSTRLEN + 8]; /* peers in the handshake */
	struct conn_arg *sessions;			     /* authenticated, newest first */
	struct pending pend[AGENT_PENDING_MAX];
	size_t npend;
	char knocks[AGENT_KNOCKS_SEEN][2 * AGENT_NONCE_LEN + 1]; /* replay check */
	size_t nknocks;
	json_t *disk; /* client disk baseline, measured once */
	char hostname[256];
};

static json_t *
facts(struct agent *a, int fd)
{
	struct utsname u;
	json_t *f, *mounts = json_object(), *drivers = json_array();
	const struct bench_driver *const *d;
	size_t i;

	uname(&u);
	for (i = 0; i < a->o->nmounts; i++)
		json_object_set_new(mounts, a->o->mounts[i].proto,
				    json_string(a->o->mounts[i].path));
	for (d = bench_drivers(); *d; d++)
		if (strcmp((*d)->name, "null") != 0)
			json_array_append_new(drivers, json_string((*d)->name));
	pthread_mutex_lock(&a->state);
	if (!a->disk) {
		struct bench_baseline b = { 0 };
		struct bench_opts bo = { .size = 64ull << 20 };
		const char *dir = a->o->scratch_dir ? a->o->scratch_dir : "/var/tmp";
		char berr[512];

		if (bench_baseline_disk(dir, &bo, &b, berr, sizeof(berr)) == 0)
			a->disk = json_pack("{s:s, s:f, s:f, s:s}", "dir", dir, "write_mbs",
					    b.disk_write, "read_mbs", b.disk_read, "method",
					    b.disk_method);
		else
			a->disk = json_pack("{s:s, s:n}", "dir", dir, "write_mbs");
	}
	f = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:O, s:o, s:o, s:o}", "type", "facts",
		      "hostname", a->hostname, "os", u.sysname, "os_version", u.release,
		      "agent_version", NASTUNE_VERSION, "cpu", cpu_facts(), "nic", nic_facts(fd),
		      "disk", a->disk, "can_mount", mount_facts(&u), "mounts", mounts, "drivers",
		      drivers);
	pthread_mutex_unlock(&a->state);
	return f;
}

/* ---- jobs ---- */

struct job_ctx {
	struct agent_session *ss;
	json_int_t id;
	volatile sig_atomic_t stop; /* the controller went away */
	const volatile sig_atomic_t *global_stop;
};

static void
job_progress(const struct bench_progress *p, void *arg)
{
	struct job_ctx *j = arg;
	json_t *m = json_pack("{s:s, s:I, s:s, s:i, s:i, s:b}", "type", "progress", "id", j->id,
			      "workload", p->workload, "run", (int)p->run, "runs", (int)p->runs,
			      "warmup", p->warmup);

	/* A controller that is gone makes the send fail: stop the job, scratch is removed. */
	if (agent_session_send(j->ss, m) < 0)
		j->stop = 1;
	if (j->global_stop && *j->global_stop)
		j->stop = 1;
	json_decref(m);
}

static int
opt_u64(json_t *opts, const char *key, uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(opts, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max) {
		snprintf(err, errlen, "options.%s must be an integer from 0 to %llu", key,
			 (unsigned long long)max);
		return -EINVAL;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

void
agent_job_clear(struct agent_job *j)
{
	if (j->target) {
		bench_target_clear(j->target);
		free(j->target);
	}
	memset(j, 0, sizeof(*j));
}

int
agent_job_parse(const struct agent_opts *ao, const char *nas, json_t *msg, struct agent_job *j,
		char *err, size_t errlen)
{
	const char *wname = json_string_value(json_object_get(msg, "workload"));
	const char *proto = json_string_value(json_object_get(msg, "protocol"));
	const char *url = json_string_value(json_object_get(msg, "target"));
	json_t *opts = json_object_get(msg, "options");
	size_t i;

	memset(j, 0, sizeof(*j));
	j->id = json_integer_value(json_object_get(msg, "id"));
	j->warmup = 1;
	if (!wname || (j->workload = bench_workload_parse(wname)) < 0) {
		snprintf(err, errlen, "unknown workload \"%.64s\"", wname ? wname : "");
		return -EINVAL;
	}
	if (!proto || !url || strlen(url) > 1024 || strlen(proto) >= sizeof(j->proto)) {
		snprintf(err, errlen, "a job needs \"protocol\" and \"target\"");
		return -EINVAL;
	}
	snprintf(j->proto, sizeof(j->proto), "%s", proto);
	if (opts && !json_is_object(opts)) {
		snprintf(err, errlen, "\"options\" must be an object");
		return -EINVAL;
	}
	if (opt_u64(opts, "size", MAX_SIZE, &j->size, err, errlen) < 0 ||
	    opt_u64(opts, "repeats", MAX_REPEATS, &j->repeats, err, errlen) < 0 ||
	    opt_u64(opts, "warmup", 10, &j->warmup, err, errlen) < 0 ||
	    opt_u64(opts, "small_files", 100000, &j->files, err, errlen) < 0)
		return -EINVAL;
	/* --force overrides the Time Machine refusal: only for whoever runs bench on this
	 * machine, never for a message from the network. */
	if (json_object_get(opts, "force") && !json_is_false(json_object_get(opts, "force"))) {
		snprintf(err, errlen, "\"force\" is never accepted from the network");
		return -EPERM;
	}
	j->target = xcalloc(1, sizeof(*j->target));
	if (bench_target_parse(url, j->target, err, errlen) < 0) {
		agent_job_clear(j);
		return -EINVAL;
	}
	if (strcmp(j->target->scheme, "file") == 0) {
		/* A local target only where this machine's owner said (--mount). */
		for (i = 0; i < ao->nmounts && !j->mount; i++)
			if (strcmp(ao->mounts[i].path, j->target->share) == 0 &&
			    strcmp(ao->mounts[i].proto, proto) == 0)
				j->mount = ao->mounts[i].path;
		if (!j->mount) {
			snprintf(err, errlen,
				 "file:// targets are accepted only for this agent's "
				 "--mount paths, with their protocol");
			agent_job_clear(j);
			return -EPERM;
		}
		return 0;
	}
	if (strcmp(j->target->scheme, "null") == 0 || strcmp(j->target->scheme, proto) != 0) {
		snprintf(err, errlen, "this agent has no %.16s driver for %.16s", proto,
			 j->target->scheme);
		agent_job_clear(j);
		return -EINVAL;
	}
	if (!nas || !agent_addr_equal(j->target->host, nas)) {
		snprintf(err, errlen,
			 "target host %.80s is not the NAS that authenticated (%.64s): "
			 "jobs run only against it",
			 j->target->host, nas ? nas : "none");
		agent_job_clear(j);
		return -EPERM;
	}
	/* --mount PROTO=PATH: the OS's own client, through the posix driver. */
	for (i = 0; i < ao->nmounts; i++)
		if (strcmp(ao->mounts[i].proto, proto) == 0)
			j->mount = ao->mounts[i].path;
	return 0;
}

/* Runs one job message from the controller at nas; returns the reply (result or error). */
static json_t *
run_job(struct agent *a, struct agent_session *ss, const char *nas, json_t *msg)
{
	struct job_ctx jc = { .ss = ss, .global_stop = a->o->stop };
	struct bench_opts o = { .progress = job_progress, .progress_arg = &jc, .stop = &jc.stop };
	struct bench_results rs = { 0 };
	struct bench_target mt = { 0 }, *t;
	const struct bench_driver *d = NULL;
	struct agent_job j;
	char err[512] = "", *mount_url = NULL;
	json_t *reply;
	size_t i;
	int rc;

	jc.id = json_integer_value(json_object_get(msg, "id"));
	if (agent_job_parse(a->o, nas, msg, &j, err, sizeof(err)) < 0)
		goto fail;
	o.size = j.size;
	o.repeats = (unsigned)j.repeats;
	o.warmup = (unsigned)j.warmup;
	o.small_files = (unsigned)j.files;
	o.cache = BENCH_CACHE_HOT;
	o.force = false;
	t = j.target;
	if (j.mount) {
		mount_url = xasprintf("file://%s", j.mount);
		if (bench_target_parse(mount_url, &mt, err, sizeof(err)) < 0)
			goto fail;
		t = &mt;
	}
	d = j.mount ? bench_driver_find("posix") : bench_driver_for_scheme(t->scheme);
	if (!d) {
		snprintf(err, sizeof(err), "this agent has no %s driver for %s", j.proto,
			 t->scheme);
		goto fail;
	}
	/* Logins are for SMB and AFP; NFS (AUTH_SYS) goes by the uid/gid in the URL. */
	if (!j.mount && a->o->credentials && strcmp(t->scheme, "nfs") != 0 &&
	    bench_target_credentials(t, a->o->credentials, err, sizeof(err)) < 0)
		goto fail;
	if (t->user && !t->password) {
		snprintf(err, sizeof(err),
			 "no password for %s on this agent: start it with "
			 "--credentials FILE",
			 t->user);
		goto fail;
	}
	log_info("agent: job %lld: %s over %s on %s", (long long)j.id,
		 bench_workload_name(j.workload), d->name, mount_url ? mount_url : t->url);
	rc = bench_run(d, t, (enum bench_workload)j.workload, &o, &rs, err, sizeof(err));
	if (rc < 0)
		goto fail;
	for (i = 0; i < rs.n; i++) {
		free(rs.v[i].client);
		rs.v[i].client = xstrdup(a->hostname);
		if (j.mount) {
			/* Say that the OS's client was measured, and which protocol it spoke. */
			free(rs.v[i].protocol);
			rs.v[i].protocol = xasprintf("%s (os mount)", j.proto);
		}
	}
	reply = json_pack("{s:s, s:I, s:o}", "type", "result", "id", (json_int_t)jc.id, "results",
			  bench_results_to_json(&rs));
	bench_results_clear(&rs);
	bench_target_clear(&mt);
	agent_job_clear(&j);
	free(mount_url);
	log_info("agent: job %lld done", (long long)jc.id);
	return reply;
fail:
	log_warnx("agent: job %lld refused or failed: %s", (long long)jc.id, err);
	bench_results_clear(&rs);
	bench_target_clear(&mt);
	agent_job_clear(&j);
	free(mount_url);
	return json_pack("{s:s, s:I, s:s}", "type", "error", "id", (json_int_t)jc.id, "error", err);
}

/* ---- connections ---- */

struct conn_arg {
	struct agent *a;
	int fd;
	int slot;      /* index in a->unauth while the handshake runs; -1 after */
	bool reserved; /* admitted by a knock: counted in a->reserved while in the handshake */
	bool in_job;   /* running or queued for a job (under a->state) */
	bool replaced; /* a newer session of the key took its place: ends quietly */
	struct conn_arg *next; /* in a->sessions */
	char peer[INET6_ADDRSTRLEN + 8];
};

static void
reply_error(struct agent_session *ss, const char *why)
{
	json_t *m = json_pack("{s:s, s:s}", "type", "error", "error", why);

	agent_session_send(ss, m);
	json_decref(m);
}

static void
handle_job(struct agent *a, struct conn_arg *c, struct agent_session *ss, const char *nas,
	   json_t *msg)
{
	bool queued, replaced;
	json_t *r;

	pthread_mutex_lock(&a->state);
	replaced = c->replaced;
	queued = !replaced && a->waiting < (a->o->max_queue ? a->o->max_queue : 2);
	if (queued) {
		a->waiting++;
		c->in_job = true;
	}
	pthread_mutex_unlock(&a->state);
	if (replaced)
		return;
	if (!queued) {
		reply_error(ss, "busy: too many jobs queued on this agent");
		return;
	}
	pthread_mutex_lock(&a->lock);
	pthread_mutex_lock(&a->state);
	a->waiting--;
	pthread_mutex_unlock(&a->state);
	r = run_job(a, ss, nas, msg);
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_lock(&a->state);
	c->in_job = false;
	pthread_mutex_unlock(&a->state);
	agent_session_send(ss, r);
	json_decref(r);
}

/* Serves one authenticated controller until it says bye, goes silent or sends a frame that
 * fails its check. */
static void
serve_session(struct agent *a, struct conn_arg *c, struct agent_session *ss, const char *nas)
{
	char err[512];
	json_t *msg;
	int rc;

	for (;;) {
		const char *type;

		rc = agent_session_recv(ss, IDLE_MS, &msg, err, sizeof(err));
		if (rc == -ECONNRESET || c->replaced)
			break;
		if (rc < 0) {
			/* Framing cannot resynchronise after a bad message, and after a frame
			 * that fails its MAC or sequence number nothing more is trusted: say why
			 * (authenticated) and hang up. */
			log_warnx("agent: %s: %s; closing the connection", c->peer, err);
			reply_error(ss, err);
			break;
		}
		type = agent_type(msg);
		if (strcmp(type, "facts") == 0) {
			json_t *f = facts(a, c->fd);

			agent_session_send(ss, f);
			json_decref(f);
		} else if (strcmp(type, "job") == 0) {
			handle_job(a, c, ss, nas, msg);
		} else if (strcmp(type, "bye") == 0) {
			json_decref(msg);
			break;
		} else {
			char why[96];

			snprintf(why, sizeof(why), "unknown message type \"%.32s\"", type);
			reply_error(ss, why);
		}
		json_decref(msg);
	}
}

static void
unauth_release(struct agent *a, struct conn_arg *c)
{
	pthread_mutex_lock(&a->state);
	if (c->slot >= 0)
		a->unauth[c->slot][0] = '\0';
	c->slot = -1;
	if (c->reserved)
		a->reserved--;
	c->reserved = false;
	pthread_mutex_unlock(&a->state);
}

/* Takes an authenticated place for c (under a->state). All taken, the newest session wins:
 * the oldest one with no job running or queued is hung up on, so one key holder idling on
 * every place cannot keep the NAS out. Returns false when every place runs a job (busy). */
static bool
session_take(struct agent *a, struct conn_arg *c)
{
	unsigned max = a->o->max_conns ? a->o->max_conns : 4;
	struct conn_arg *s, *victim = NULL;

	if (a->authed >= max) {
		for (s = a->sessions; s; s = s->next)
			if (!s->in_job && !s->replaced)
				victim = s; /* the last idle one is the oldest */
		if (!victim)
			return false;
		victim->replaced = true;
		shutdown(victim->fd, SHUT_RDWR);
		log_info("agent: %s: replaced by a newer session (%s)", victim->peer, c->peer);
	}
	a->authed++;
	c->next = a->sessions;
	a->sessions = c;
	return true;
}

static void
session_release(struct agent *a, struct conn_arg *c)
{
	struct conn_arg **p;

	pthread_mutex_lock(&a->state);
	for (p = &a->sessions; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	a->authed--;
	pthread_mutex_unlock(&a->state);
}

static void *
conn_thread(void *p)
{
	struct conn_arg *c = p;
	struct agent *a = c->a;
	struct agent_session ss;
	char err[512], nas[AGENT_ADDR_MAX];
	bool full;
	int rc;

	/* The whole handshake within AGENT_HANDSHAKE_MS of the accept: it is one message. */
	rc = agent_server_handshake(c->fd, a->o->key, AGENT_HANDSHAKE_MS, NASTUNE_VERSION, c->peer,
				    &ss, nas, err, sizeof(err));
	if (rc < 0) {
		/* Hang up before the slot is free: otherwise the accept loop can greet the
		 * peer's next connection while this one is still open, and a peer would hold
		 * more than AGENT_UNAUTH_PER_PEER greeted connections at once. */
		close(c->fd);
		c->fd = -1;
		unauth_release(a, c);
		log_warnx("agent: refused %s: %s", c->peer, err);
		goto out;
	}
	unauth_release(a, c);
	pthread_mutex_lock(&a->state);
	full = !session_take(a, c);
	pthread_mutex_unlock(&a->state);
	if (full) {
		log_warnx("agent: %s: every session runs a job; refused as busy", c->peer);
		reply_error(&ss, "busy: every session of this agent is running a job");
		agent_session_clear(&ss);
		goto out;
	}
	log_info("agent: %s authenticated", c->peer);
	serve_session(a, c, &ss, nas);
	agent_session_clear(&ss);
	session_release(a, c);
out:
	if (c->fd >= 0)
		close(c->fd);
	pthread_mutex_lock(&a->state);
	a->conns--;
	pthread_mutex_unlock(&a->state);
	free(c);
	return NULL;
}

/* Takes an unauthenticated slot for peer: at most AGENT_UNAUTH_PER_PEER per peer (an IPv4
 * address or an IPv6 /64) and
 * AGENT_UNAUTH_MAX in all. Returns the slot, or -1 (the caller closes at once). */
static int
unauth_take(struct agent *a, const char *peer)
{
	int i, mine = 0, free_slot = -1;

	pthread_mutex_lock(&a->state);
	for (i = 0; i < AGENT_UNAUTH_MAX; i++) {
		if (!a->unauth[i][0])
			free_slot = free_slot < 0 ? i : free_slot;
		else if (strcmp(a->unauth[i], peer) == 0)
			mine++;
	}
	if (mine >= AGENT_UNAUTH_PER_PEER)
		free_slot = -1;
	if (free_slot >= 0) {
		snprintf(a->unauth[free_slot], sizeof(a->unauth[free_slot]), "%s", peer);
		a->conns++;
	}
	pthread_mutex_unlock(&a->state);
	return free_slot;
}

/* Runs c's connection in its own thread; c is counted in a->conns already. */
static void
start_conn(struct agent *a, struct conn_arg *c)
{
	pthread_t th;
	int one = 1;

	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (pthread_create(&th, NULL, conn_thread, c) != 0) {
		unauth_release(a, c);
		close(c->fd);
		free(c);
		pthread_mutex_lock(&a->state);
		a->conns--;
		pthread_mutex_unlock(&a->state);
		return;
	}
	pthread_detach(th);
}

static void
pending_drop(struct agent *a, size_t i, bool close_it)
{
	if (close_it)
		close(a->pend[i].fd);
	a->pend[i] = a->pend[--a->npend];
}

/* Reads a whole knock that has arrived on pending connection i, without waiting. Returns 1
 * when it was admitted (a reserved handshake started), 0 when more is to come, -1 to drop. */
static int
pending_knock(struct agent *a, size_t i)
{
	uint8_t hdr[4], *buf;
	char nk[2 * AGENT_NONCE_LEN + 1], err[128];
	struct conn_arg *c;
	json_t *msg = NULL;
	uint32_t len;
	ssize_t n;
	size_t k;
	bool ok, seen = false;

	n = recv(a->pend[i].fd, hdr, sizeof(hdr), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	if (n < (ssize_t)sizeof(hdr))
		return 0;
	memcpy(&len, hdr, sizeof(len));
	len = ntohl(len);
	if (len == 0 || len > AGENT_HANDSHAKE_MAX)
		return -1;
	buf = xmalloc(sizeof(hdr) + len);
	n = recv(a->pend[i].fd, buf, sizeof(hdr) + len, MSG_PEEK | MSG_DONTWAIT);
	if (n < (ssize_t)(sizeof(hdr) + len)) {
		free(buf);
		return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK ? -1 : 0;
	}
	n = recv(a->pend[i].fd, buf, sizeof(hdr) + len, MSG_DONTWAIT);
	ok = n == (ssize_t)(sizeof(hdr) + len) &&
	     agent_parse(buf + sizeof(hdr), len, &msg, err, sizeof(err)) == 0 &&
	     agent_knock_ok(a->o->key, msg, nk);
	json_decref(msg);
	free(buf);
	if (!ok)
		return -1;
	for (k = 0; k < AGENT_KNOCKS_SEEN && k < a->nknocks; k++)
		seen |= strcmp(a->knocks[k], nk) == 0;
	if (seen) {
		log_warnx("agent: %s: a knock seen before (replayed); closed", a->pend[i].peer);
		return -1;
	}
	memcpy(a->knocks[a->nknocks++ % AGENT_KNOCKS_SEEN], nk, sizeof(nk));
	pthread_mutex_lock(&a->state);
	ok = a->reserved < AGENT_RESERVED_MAX;
	if (ok) {
		a->reserved++;
		a->conns++;
	}
	pthread_mutex_unlock(&a->state);
	if (!ok)
		return -1;
	c = xcalloc(1, sizeof(*c));
	c->a = a;
	c->fd = a->pend[i].fd;
	c->slot = -1;
	c->reserved = true;
	snprintf(c->peer, sizeof(c->peer), "%s", a->pend[i].peer);
	log_info("agent: %s: knocked with the key; admitted past the handshake limits", c->peer);
	start_conn(a, c);
	return 1;
}

/* Looks at every pending connection once (readable ones with a whole knock are admitted,
 * late ones closed), waiting at most timeout_ms for one to become readable. */
static void
pending_poll(struct agent *a, int timeout_ms)
{
	struct pollfd p[AGENT_PENDING_MAX];
	long now;
	size_t i;

	if (!a->npend)
		return;
	for (i = 0; i < a->npend; i++)
		p[i] = (struct pollfd){ .fd = a->pend[i].fd, .events = POLLIN };
	if (poll(p, (nfds_t)a->npend, timeout_ms) < 0)
		return;
	now = agent_mono_ms();
	/* Backwards: pending_drop moves the last entry into the dropped one's place. */
	for (i = a->npend; i-- > 0;) {
		int r = p[i].revents ? pending_knock(a, i) : 0;

		if (r > 0)
			pending_drop(a, i, false);
		else if (r < 0 || now >= a->pend[i].deadline)
			pending_drop(a, i, true);
	}
}

/* Parks fd until it knocks or AGENT_KNOCK_WAIT_MS pass; full, the oldest parked one goes. */
static void
pending_add(struct agent *a, int fd, const char *peer)
{
	size_t i, oldest = 0;

	if (a->npend == AGENT_PENDING_MAX) {
		for (i = 1; i < a->npend; i++)
			if (a->pend[i].deadline < a->pend[oldest].deadline)
				oldest = i;
		pending_drop(a, oldest, true);
	}
	a->pend[a->npend].fd = fd;
	a->pend[a->npend].deadline = agent_mono_ms() + AGENT_KNOCK_WAIT_MS;
	snprintf(a->pend[a->npend].peer, sizeof(a->pend[a->npend].peer), "%s", peer);
	a->npend++;
	/* A knock is sent right after the connect: it is usually here already. */
	pending_poll(a, 0);
}

/* Accepts one pending connection; returns false when none is left. */
static bool
accept_one(struct agent *a, int lfd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?", bucket[INET6_ADDRSTRLEN + 8];
	struct conn_arg *c;
	int fd;

	fd = accept(lfd, (struct sockaddr *)&ss, &sl);
	if (fd < 0)
		return errno == EINTR || errno == ECONNABORTED;
	/* The listening socket is non-blocking; BSD accept() passes that on, Linux does not. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	else if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
	c = xcalloc(1, sizeof(*c));
	c->a = a;
	c->fd = fd;
	snprintf(c->peer, sizeof(c->peer), "%s", host);
	/* Counted per IPv4 address or IPv6 /64 (agent_addr_bucket), not per IPv6 address. */
	agent_addr_bucket(c->peer, bucket, sizeof(bucket));
	c->slot = unauth_take(a, bucket);
	if (c->slot < 0) {
		/* Nothing is said: a peer holding idle sockets gets no work out of us. Only a
		 * knock proving the key gets it in now. */
		log_debug("agent: %s: too many unauthenticated connections; waiting for a knock",
			  c->peer);
		pending_add(a, fd, c->peer);
		free(c);
		return true;
	}
	start_conn(a, c);
	return true;
}

int
agent_serve(const struct agent_opts *o, char *err, size_t errlen)
{
	struct agent a = { .o = o };
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST };
	struct addrinfo *ai = NULL;
	char addr[128], portstr[8], kid[17], osver[300];
	void *adv = NULL;
	struct utsname u;
	int port, lfd = -1, one = 1, rc;

	if (agent_parse_listen(o->listen, addr, sizeof(addr), &port) < 0) {
		snprintf(err, errlen,
			 "bad --listen \"%s\": expected ADDR:PORT, ADDR, :PORT or "
			 "[V6]:PORT",
			 o->listen);
		return -EINVAL;
	}
	snprintf(portstr, sizeof(portstr), "%d", port);
	if ((rc = getaddrinfo(addr, portstr, &hints, &ai)) != 0) {
		snprintf(err, errlen, "bad listen address %s: %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	lfd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(lfd, 64) < 0 ||
	    fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot listen on %s:%d: %s", addr, port, strerror(errno));
		if (lfd >= 0)
			close(lfd);
		freeaddrinfo(ai);
		return rc;
	}
	freeaddrinfo(ai);
	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_init(&a.lock, NULL);
	pthread_mutex_init(&a.state, NULL);
	gethostname(a.hostname, sizeof(a.hostname) - 1);
	agent_key_id(o->key, kid);
	uname(&u);
	log_info("agent: listening on %s:%d (key id %s)", addr, port, kid);
	if (o->advertise) {
		char t_os[80], t_ver[320], t_agent[64], t_kid[32];
		const char *txt[] = { "role=agent", t_os, t_ver, t_agent, t_kid };

		snprintf(osver, sizeof(osver), "%s", u.release);
		snprintf(t_os, sizeof(t_os), "os=%s", u.sysname);
		snprintf(t_ver, sizeof(t_ver), "os_version=%s", osver);
		snprintf(t_agent, sizeof(t_agent), "agent=%s", NASTUNE_VERSION);
		snprintf(t_kid, sizeof(t_kid), "key_id=%s", kid);
		adv = o->advertise(a.hostname, port, txt, 5);
	}
	while (!(o->stop && *o->stop)) {
		struct pollfd pfd[1 + AGENT_PENDING_MAX] = { { .fd = lfd, .events = POLLIN } };
		size_t i, n = 1;

		for (i = 0; i < a.npend; i++)
			pfd[n++] = (struct pollfd){ .fd = a.pend[i].fd, .events = POLLIN };
		/* Drain the backlog each time: a peer reconnecting in a loop must not keep
		 * the NAS's connection waiting behind its own. */
		if (poll(pfd, (nfds_t)n, a.npend ? 50 : 200) > 0 && pfd[0].revents)
			while (accept_one(&a, lfd) && !(o->stop && *o->stop))
				;
		pending_poll(&a, 0);
	}
	while (a.npend)
		pending_drop(&a, a.npend - 1, true);
	log_info("agent: stopping");
	if (adv && o->unadvertise)
		o->unadvertise(adv);
	close(lfd);
	/* Wait (bounded) for running jobs to notice the stop and clean their scratch. */
	for (int i = 0; i < 300; i++) {
		unsigned n;

		pthread_mutex_lock(&a.state);
		n = a.conns;
		pthread_mutex_unlock(&a.state);
		if (!n)
			break;
		usleep(100000);
	}
	json_decref(a.disk);
	return 0;
}
