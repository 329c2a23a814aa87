/* agentctl_conn.c - the controller's connection to one agent: connect and handshake (with
 * the knock that gets past an agent's handshake limits), the agent's facts, a job sent and its
 * progress and results read back, and the --clients spec check. Finding agents and handing them
 * the shares' jobs is agentctl.c's. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"
#include "agentctl.h"
#include "bench.h"
#include "log.h"
#include "xmalloc.h"

struct agent_conn {
	int fd;
	struct agent_session ss;
	json_int_t next_id;
	char local[INET6_ADDRSTRLEN];
	char peer[300];
	bool asked;
	struct agent_facts facts;
};

static int
connect_once(const char *host, int port, const uint8_t key[AGENT_KEY_LEN], int timeout_ms,
	     bool knock, struct agent_conn **out, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL, *i;
	struct agent_conn *c;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char portstr[8], e2[384] = "";
	int fd = -1, rc = -EHOSTUNREACH, one = 1;

	*out = NULL;
	signal(SIGPIPE, SIG_IGN);
	snprintf(portstr, sizeof(portstr), "%d", port);
	if ((rc = getaddrinfo(host, portstr, &hints, &ai)) != 0) {
		snprintf(err, errlen, "%s: %s", host, gai_strerror(rc));
		return -EADDRNOTAVAIL;
	}
	rc = -EHOSTUNREACH;
	for (i = ai; i; i = i->ai_next) {
		int soerr = 0;
		socklen_t el = sizeof(soerr);

		fd = socket(i->ai_family, i->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		if (connect(fd, i->ai_addr, i->ai_addrlen) < 0 && errno != EINPROGRESS) {
			rc = -errno;
			close(fd);
			fd = -1;
			continue;
		}
		if ((rc = agent_wait_fd(fd, POLLOUT, agent_mono_ms() + timeout_ms)) < 0) {
			close(fd);
			fd = -1;
			if (rc == -EINTR)
				break;
			continue;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el);
		if (soerr) {
			rc = -soerr;
			close(fd);
			fd = -1;
			continue;
		}
		break;
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to the agent at %s:%d: %s", host, port,
			 strerror(-rc));
		return rc;
	}
	/* Blocking from here; agent_recv bounds every wait with poll. */
	{
		int fl = 0;

		ioctl(fd, FIONBIO, &fl);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c = xcalloc(1, sizeof(*c));
	c->fd = fd;
	c->next_id = 1;
	snprintf(c->peer, sizeof(c->peer), "%s", host);
	/* Our address as the agent sees it: named in the handshake and in every job target. */
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		inet_ntop(ss.ss_family,
			  ss.ss_family == AF_INET
				  ? (void *)&((struct sockaddr_in *)&ss)->sin_addr
				  : (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr,
			  c->local, sizeof(c->local));
	if (knock) {
		rc = agent_send_knock(fd, key);
	} else {
		char b;

		/* Closed before any hello: every handshake place is held (by idle sockets, say).
		 * The caller knocks. */
		rc = agent_wait_fd(fd, POLLIN, agent_mono_ms() + timeout_ms);
		if (rc == 0 && recv(fd, &b, 1, MSG_PEEK) == 0)
			rc = -EAGAIN;
		if (rc == -ETIMEDOUT)
			rc = 0; /* the handshake says so */
	}
	if (rc == 0)
		rc = agent_client_handshake(fd, key, c->local, timeout_ms, NULL, &c->ss, e2,
					    sizeof(e2));
	if (rc < 0) {
		snprintf(err, errlen, "agent %s:%d: %s", host, port,
			 rc == -EAGAIN ? "closed before its hello"
			 : e2[0]       ? e2
				       : strerror(-rc));
		close(fd);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int
agent_connect(const char *host, int port, const uint8_t key[AGENT_KEY_LEN], int timeout_ms,
	      struct agent_conn **out, char *err, size_t errlen)
{
	int rc = connect_once(host, port, key, timeout_ms, false, out, err, errlen);

	if (rc == -EAGAIN) {
		log_debug("bench: %s; knocking", err);
		rc = connect_once(host, port, key, timeout_ms, true, out, err, errlen);
		if (rc == -EAGAIN)
			rc = -ECONNRESET;
	}
	return rc;
}

const char *
agent_conn_local_addr(struct agent_conn *c)
{
	return c->local;
}

const char *
agent_conn_peer(struct agent_conn *c)
{
	return c->peer;
}

static void
prefix_err(struct agent_conn *c, char *err, size_t errlen)
{
	char tmp[512];

	snprintf(tmp, sizeof(tmp), "%s", err);
	snprintf(err, errlen, "agent %s: %s", c->peer, tmp);
}

/* -EBUSY with err when m is the agent saying it is busy ("busy: ..."), else 0. */
static int
busy(struct agent_conn *c, json_t *m, char *err, size_t errlen)
{
	const char *e = json_string_value(json_object_get(m, "error"));

	if (strcmp(agent_type(m), "error") != 0 || !e || strncmp(e, "busy", 4) != 0)
		return 0;
	snprintf(err, errlen, "agent %s is busy (%.200s)", c->peer, e);
	return -EBUSY;
}

int
agent_conn_facts(struct agent_conn *c, const struct agent_facts **out, char *err, size_t errlen)
{
	json_t *m;
	int rc;

	if (!c->asked) {
		m = json_pack("{s:s}", "type", "facts");
		rc = agent_session_send(&c->ss, m);
		json_decref(m);
		if (rc < 0) {
			snprintf(err, errlen, "%s: %s", c->peer, strerror(-rc));
			return rc;
		}
		/* The first answer measures the client's disk: allow for it. */
		if ((rc = agent_session_recv(&c->ss, 60000, &m, err, errlen)) < 0) {
			prefix_err(c, err, errlen);
			return rc;
		}
		if (strcmp(agent_type(m), "facts") != 0) {
			rc = busy(c, m, err, errlen);
			if (rc == 0) {
				snprintf(err, errlen, "%s answered \"%s\" to facts", c->peer,
					 agent_type(m));
				rc = -EBADMSG;
			}
			json_decref(m);
			return rc;
		}
		agent_facts_parse(m, &c->facts);
		c->asked = true;
		json_decref(m);
		if (c->facts.hostname) {
			char with[300];

			snprintf(with, sizeof(with), "%.64s (%.200s)", c->facts.hostname, c->peer);
			snprintf(c->peer, sizeof(c->peer), "%s", with);
		}
	}
	*out = &c->facts;
	return 0;
}

int
agent_conn_job(struct agent_conn *c, json_t *job, int job_timeout_ms,
	       void (*progress)(json_t *msg, void *arg), void *arg, struct bench_results *out,
	       char *err, size_t errlen)
{
	json_int_t id = c->next_id++;
	/* Wall time for the whole job: progress frames do not extend it. */
	long deadline = agent_mono_ms() + job_timeout_ms;
	json_t *m;
	int rc;

	json_object_set_new(job, "type", json_string("job"));
	json_object_set_new(job, "id", json_integer(id));
	if ((rc = agent_session_send(&c->ss, job)) < 0) {
		snprintf(err, errlen, "%s: cannot send the job: %s", c->peer, strerror(-rc));
		return rc == -EPIPE ? -ECONNRESET : rc;
	}
	for (;;) {
		const char *type;

		long left = deadline - agent_mono_ms();

		rc = left > 0 ? agent_session_recv(&c->ss, (int)left, &m, err, errlen) : -ETIMEDOUT;
		if (rc == -ETIMEDOUT) {
			snprintf(err, errlen,
				 "agent %s: the job did not end within %d s; given up (the agent "
				 "kept sending progress, or nothing)",
				 c->peer, job_timeout_ms / 1000);
			return rc;
		}
		if (rc == -ECONNRESET) {
			snprintf(err, errlen, "agent %s disappeared mid-job (connection closed)",
				 c->peer);
			return rc;
		}
		if (rc < 0) {
			/* An altered or replayed frame: the job's results are not taken. */
			prefix_err(c, err, errlen);
			return rc;
		}
		type = agent_type(m);
		if (strcmp(type, "progress") == 0) {
			if (progress)
				progress(m, arg);
			json_decref(m);
			continue;
		}
		if (strcmp(type, "result") == 0) {
			const json_t *res = json_object_get(m, "results");

			/* One job is one workload: a few metrics, each bounded in runs and
			 * strings by bench_result_from_json. */
			if (json_array_size(res) > AGENT_JOB_RESULTS_MAX) {
				snprintf(err, errlen,
					 "agent %s sent %zu results for one job, more than %d",
					 c->peer, json_array_size(res), AGENT_JOB_RESULTS_MAX);
				json_decref(m);
				return -EBADMSG;
			}
			rc = bench_results_from_json(res, out, err, errlen);
			json_decref(m);
			return rc;
		}
		if ((rc = busy(c, m, err, errlen)) < 0) {
			json_decref(m);
			return rc;
		}
		if (strcmp(type, "error") == 0) {
			snprintf(err, errlen, "agent %s: %s", c->peer,
				 json_string_value(json_object_get(m, "error"))
					 ? json_string_value(json_object_get(m, "error"))
					 : "error");
			json_decref(m);
			return -EIO;
		}
		snprintf(err, errlen, "agent %s sent an unexpected \"%s\"", c->peer, type);
		json_decref(m);
		return -EBADMSG;
	}
}

void
agent_close(struct agent_conn *c)
{
	json_t *m;

	if (!c)
		return;
	if (!c->ss.dead) {
		m = json_pack("{s:s}", "type", "bye");
		agent_session_send(&c->ss, m);
		json_decref(m);
	}
	agent_session_clear(&c->ss);
	close(c->fd);
	agent_facts_clear(&c->facts);
	free(c);
}

bool
agent_client_spec_ok(const char *spec)
{
	char host[256];
	int port;

	return strcmp(spec, "auto") == 0 ||
	       agent_parse_listen(spec, host, sizeof(host), &port) == 0;
}
