/* target.c - benchmark targets as URLs, and their credentials (never from argv). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "bench_driver.h"
#include "xmalloc.h"

static const char *const schemes[] = { "smb", "nfs", "afp", "file", "null" };

static const char *
expected_form(const char *scheme)
{
	if (strcmp(scheme, "smb") == 0)
		return "smb://[user@]host[:port]/share[/dir]";
	if (strcmp(scheme, "nfs") == 0)
		return "nfs://host[:port]/export/path[?version=3|4][&uid=N&gid=N]";
	if (strcmp(scheme, "afp") == 0)
		return "afp://[user@]host[:port]/volume[/dir]";
	if (strcmp(scheme, "file") == 0)
		return "file:///absolute/path";
	return "null://[name]";
}

/* Decodes %XX escapes in place; returns -1 on a malformed escape. */
static int
pct_decode(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (*s != '%') {
			*w++ = *s;
			continue;
		}
		if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]))
			return -1;
		char hex[3] = { s[1], s[2], 0 };
		*w++ = (char)strtol(hex, NULL, 16);
		s += 2;
	}
	*w = '\0';
	return 0;
}

/* A uid or gid in decimal, or -1. */
static int
parse_id(const char *s)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return (*end || errno || v > 0x7fffffffL) ? -1 : (int)v;
}

static int
fail(struct bench_target *t, char *err, size_t errlen, const char *url, const char *why)
{
	char shown[256];
	const char *a = strstr(url, "://"), *at, *colon;

	/* Never echo a password back, even a refused one. */
	snprintf(shown, sizeof(shown), "%s", url);
	if (a && (at = strchr(a + 3, '@')) && (colon = memchr(a + 3, ':', at - a - 3)) &&
	    !memchr(a + 3, '/', at - a - 3) && (size_t)(at - url) < sizeof(shown))
		snprintf(shown + (colon - url), sizeof(shown) - (colon - url), ":***%s", at);
	snprintf(err, errlen, "bad target \"%s\": %s (expected %s)", shown, why,
		 t->scheme ? expected_form(t->scheme)
			   : "smb://, nfs://, afp://, file:// or null://");
	bench_target_clear(t);
	return -EINVAL;
}

/* The login part of a URL, p up to end ("user", "DOMAIN;user", "guest") into t. Returns NULL,
 * or why it is refused. */
static const char *
parse_login(struct bench_target *t, const char *p, const char *end)
{
	char *auth = xstrndup(p, end - p), *semi;

	if (strchr(auth, ':')) {
		free(auth);
		return "a password in the URL would show in the process list; use --credentials "
		       "FILE or the prompt";
	}
	if (pct_decode(auth) < 0 || !*auth) {
		free(auth);
		return "bad user name";
	}
	if ((semi = strchr(auth, ';'))) { /* as smbclient and Windows write it */
		*semi = '\0';
		t->domain = xstrdup(auth);
		t->user = xstrdup(semi + 1);
		free(auth);
	} else if (strcasecmp(auth, "guest") == 0) {
		/* The guest login, as smbclient's and the Finder's "Guest": no user name to log
		 * in with, no password to ask for (AFP's "No User Authent"). */
		t->guest = true;
		free(auth);
	} else {
		t->user = auth;
	}
	return NULL;
}

/* The host and port, p up to end ("host", "host:port", "[v6]", "[v6]:port"), into t.
 * Returns 0, or -1 when either is malformed. */
static int
parse_hostport(struct bench_target *t, const char *p, const char *end)
{
	char *hostport = xstrndup(p, end - p);
	int rc = 0;

	if (hostport[0] == '[') { /* [v6 address][:port] */
		char *close = strchr(hostport, ']');

		if (!close) {
			free(hostport);
			return -1;
		}
		t->host = xstrndup(hostport + 1, close - hostport - 1);
		if (close[1] == ':')
			t->port = atoi(close + 2), rc = (t->port <= 0 || t->port > 65535) ? -1 : 0;
		else if (close[1])
			rc = -1;
	} else {
		char *colon = strrchr(hostport, ':');

		if (colon) {
			char *tail;
			long port = strtol(colon + 1, &tail, 10);

			if (*tail || port <= 0 || port > 65535)
				rc = -1;
			t->port = (int)port;
			*colon = '\0';
		}
		t->host = xstrdup(hostport);
	}
	free(hostport);
	return rc < 0 || !t->host || !*t->host ? -1 : 0;
}

/* The URL's query, "&"-separated options (nfs: version=3|4, uid=N, gid=N), into t. Returns
 * 0, or -1 with why. query is cut up. */
static int
parse_query(struct bench_target *t, char *query, char *why, size_t whylen)
{
	bool nfs = strcmp(t->scheme, "nfs") == 0;
	char *save = NULL, *kv;

	for (kv = strtok_r(query, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
		if (nfs && strcmp(kv, "version=3") == 0)
			t->nfs_version = 3;
		else if (nfs && strcmp(kv, "version=4") == 0)
			t->nfs_version = 4;
		else if (nfs && (strncmp(kv, "uid=", 4) == 0 || strncmp(kv, "gid=", 4) == 0) &&
			 parse_id(kv + 4) >= 0)
			*(kv[0] == 'u' ? &t->nfs_uid : &t->nfs_gid) = parse_id(kv + 4);
		else {
			snprintf(why, whylen, "unknown option \"%s\"", kv);
			return -1;
		}
	}
	return 0;
}

int
bench_target_parse(const char *url, struct bench_target *t, char *err, size_t errlen)
{
	const char *p, *auth_end, *path;
	char *query = NULL;
	size_t i;
	int rc;

	memset(t, 0, sizeof(*t));
	t->nfs_uid = t->nfs_gid = -1;
	p = strstr(url, "://");
	if (!p)
		return fail(t, err, errlen, url, "no scheme");
	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if ((size_t)(p - url) == strlen(schemes[i]) &&
		    strncmp(url, schemes[i], p - url) == 0)
			t->scheme = xstrdup(schemes[i]);
	if (!t->scheme)
		return fail(t, err, errlen, url, "unknown scheme");
	t->url = xstrdup(url);
	t->subdir = xstrdup("");
	p += 3;

	if (strcmp(t->scheme, "file") == 0) {
		if (*p != '/')
			return fail(t, err, errlen, url, "the path must be absolute");
		t->share = xstrdup(p);
		if (pct_decode(t->share) < 0)
			return fail(t, err, errlen, url, "malformed %-escape");
		return 0;
	}
	if (strcmp(t->scheme, "null") == 0) {
		t->share = xstrdup(p);
		return 0;
	}

	path = strchr(p, '/');
	if (!path)
		return fail(t, err, errlen, url, "no share, export or volume");
	auth_end = memchr(p, '@', path - p);
	if (auth_end) {
		const char *why = parse_login(t, p, auth_end);

		if (why)
			return fail(t, err, errlen, url, why);
		p = auth_end + 1;
	}
	if (parse_hostport(t, p, path) < 0)
		return fail(t, err, errlen, url, "bad host or port");

	/* path: /share[/sub...][?query] */
	const char *q = strchr(path, '?');
	char *rest = q ? xstrndup(path + 1, q - path - 1) : xstrdup(path + 1);
	if (q)
		query = xstrdup(q + 1);
	while (*rest && rest[strlen(rest) - 1] == '/')
		rest[strlen(rest) - 1] = '\0';
	if (pct_decode(rest) < 0) {
		free(rest);
		free(query);
		return fail(t, err, errlen, url, "malformed %-escape");
	}
	if (strcmp(t->scheme, "nfs") == 0) {
		/* The export is the whole path: libnfs mounts it and works below. */
		t->share = xasprintf("/%s", rest);
		free(rest);
	} else {
		char *slash = strchr(rest, '/');
		if (slash) {
			*slash = '\0';
			free(t->subdir);
			t->subdir = xstrdup(slash + 1);
		}
		t->share = rest;
		if (!*t->share) {
			free(query);
			return fail(t, err, errlen, url, "no share or volume name");
		}
	}
	if (strstr(t->subdir, "..") || (t->share && strstr(t->share, "/../"))) {
		free(query);
		return fail(t, err, errlen, url, "\"..\" is not allowed in the path");
	}
	if (query) {
		char why[160];

		rc = parse_query(t, query, why, sizeof(why));
		free(query);
		if (rc < 0)
			return fail(t, err, errlen, url, why);
	}
	return 0;
}

void
bench_target_clear(struct bench_target *t)
{
	free(t->url);
	free(t->scheme);
	free(t->user);
	if (t->password) {
		explicit_bzero(t->password, strlen(t->password));
		free(t->password);
	}
	free(t->domain);
	free(t->host);
	free(t->share);
	free(t->subdir);
	memset(t, 0, sizeof(*t));
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int
bench_target_credentials(struct bench_target *t, const char *file, char *err, size_t errlen)
{
	struct stat sb;
	char line[512];
	int fd, lineno = 0;
	FILE *fp;

	if (t->guest) /* guest@ in the URL: the credentials are for the other targets */
		return 0;

	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", file, strerror(e));
		return -e;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", file);
		close(fd);
		return -EINVAL;
	}
	if (sb.st_mode & 077) {
		snprintf(err, errlen, "%s: readable by others (mode %03o); chmod 600 %s", file,
			 (unsigned)(sb.st_mode & 0777), file);
		close(fd);
		return -EPERM;
	}
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *k, *v, *eq;

		lineno++;
		k = trim(line);
		if (!*k || *k == '#' || *k == ';')
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			snprintf(err, errlen,
				 "%s:%d: expected \"key = value\" (username, password, "
				 "domain)",
				 file, lineno);
			fclose(fp);
			explicit_bzero(line, sizeof(line));
			return -EINVAL;
		}
		*eq = '\0';
		k = trim(k);
		v = trim(eq + 1);
		if (strcmp(k, "username") == 0 || strcmp(k, "user") == 0) {
			if (!t->user)
				t->user = xstrdup(v);
		} else if (strcmp(k, "password") == 0) {
			free(t->password);
			t->password = xstrdup(v);
		} else if (strcmp(k, "domain") == 0 || strcmp(k, "workgroup") == 0) {
			free(t->domain);
			t->domain = xstrdup(v);
		} else {
			snprintf(err, errlen,
				 "%s:%d: unknown key \"%s\" (username, password, domain)", file,
				 lineno, k);
			fclose(fp);
			explicit_bzero(line, sizeof(line));
			return -EINVAL;
		}
	}
	explicit_bzero(line, sizeof(line));
	fclose(fp);
	return 0;
}

bool
bench_target_on_this_host(const struct bench_target *t)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL, *a;
	bool here = false;

	if (!t->host)
		return true;
	if (getaddrinfo(t->host, "0", &hints, &ai) != 0)
		return false;
	/* bind() succeeds only for an address assigned here (EADDRNOTAVAIL otherwise); port 0
	 * takes any free port, and the socket is closed at once without sending. */
	for (a = ai; a && !here; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);

		if (fd < 0)
			continue;
		here = bind(fd, a->ai_addr, a->ai_addrlen) == 0;
		close(fd);
	}
	freeaddrinfo(ai);
	return here;
}

int
bench_target_prompt(struct bench_target *t)
{
	struct termios old, quiet;
	char line[256];
	FILE *tty;
	int rc = 0;

	if (!t->user || t->password)
		return 0;
	tty = fopen("/dev/tty", "r+e");
	if (!tty)
		return -ENOTTY;
	fprintf(tty, "Password for %s@%s: ", t->user, t->host ? t->host : "");
	fflush(tty);
	if (tcgetattr(fileno(tty), &old) < 0) {
		fclose(tty);
		return -ENOTTY;
	}
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	tcsetattr(fileno(tty), TCSAFLUSH, &quiet);
	if (fgets(line, sizeof(line), tty)) {
		line[strcspn(line, "\r\n")] = '\0';
		t->password = xstrdup(line);
	} else {
		rc = -EIO;
	}
	tcsetattr(fileno(tty), TCSAFLUSH, &old);
	fputc('\n', tty);
	fclose(tty);
	explicit_bzero(line, sizeof(line));
	return rc;
}

char *
bench_url_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = xmalloc(3 * strlen(s) + 1), *w = out;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~/", c)) {
			*w++ = (char)c;
		} else {
			*w++ = '%';
			*w++ = hex[c >> 4];
			*w++ = hex[c & 15];
		}
	}
	*w = '\0';
	return out;
}
