/* agent.c - the nastune agent on client machines: its listen address, the accept loop and
 * the connection threads (its facts are facts.c's, its jobs job.c's; the controller's
 * connection to it is src/measure/agentctl_conn.c).
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
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent.h"
#include "agent_state.h"
#include "bench.h"
#include "fsutil.h"
#include "log.h"
#include "xmalloc.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

#define IDLE_MS (10 * 60 * 1000) /* a controller silent this long is dropped */

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
	r = agent_run_job(a, ss, nas, msg);
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
			json_t *f = agent_facts(a, c->fd);

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
