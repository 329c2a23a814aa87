/* mdns.c - live Bonjour publication and browsing over avahi-daemon's client API. */
#include <errno.h>
#include <jansson.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/alternative.h>
#include <avahi-common/domain.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/timeval.h>

#include "log.h"
#include "mdns.h"
#include "timeutil.h"
#include "xmalloc.h"

const char *const mdns_default_types[] = {
	"_smb._tcp",	     "_afpovertcp._tcp", "_nfs._tcp", "_adisk._tcp",
	"_device-info._tcp", "_nastune._tcp",	 NULL,
};

#define NO_DAEMON_HINT                                                                             \
	"avahi-daemon is not running (or not reachable on the system D-Bus) — "                  \
	"start it (service avahi-daemon start) and try again"

static int
avahi_to_errno(int aerr)
{
	switch (aerr) {
	case AVAHI_ERR_NO_DAEMON:
	case AVAHI_ERR_DISCONNECTED:
	case AVAHI_ERR_DBUS_ERROR:
		return -ENOENT;
	case AVAHI_ERR_NO_MEMORY:
		return -ENOMEM;
	case AVAHI_ERR_INVALID_SERVICE_TYPE:
	case AVAHI_ERR_INVALID_SERVICE_NAME:
	case AVAHI_ERR_INVALID_RECORD:
	case AVAHI_ERR_INVALID_PORT:
		return -EINVAL;
	case AVAHI_ERR_TIMEOUT:
		return -ETIMEDOUT;
	case AVAHI_ERR_COLLISION:
		return -EADDRINUSE;
	default:
		return -EIO;
	}
}

/* ---- browse ---- */

struct browse {
	AvahiSimplePoll *poll;
	AvahiClient *client;
	bool resolve;
	size_t browsers, browsers_done;
	int resolving;
	struct mdns_service *v;
	size_t n;
	int error; /* avahi error of a failed browser; 0 */
};

static void
txt_copy(struct mdns_service *s, AvahiStringList *txt)
{
	AvahiStringList *l;
	size_t n = 0;

	for (l = txt; l; l = avahi_string_list_get_next(l))
		n++;
	s->txt = xcalloc(n ? n : 1, sizeof(*s->txt));
	/* Avahi keeps the list in reverse order of the record; restore the record's order. */
	for (l = txt; l; l = avahi_string_list_get_next(l)) {
		s->txt[n - 1 - s->ntxt] = xstrndup((const char *)avahi_string_list_get_text(l),
						   avahi_string_list_get_size(l));
		s->ntxt++;
	}
}

static struct mdns_service *
browse_add(struct browse *b, AvahiIfIndex iface, AvahiProtocol proto, const char *name,
	   const char *type, const char *domain, AvahiLookupResultFlags flags)
{
	struct mdns_service *s;
	char ifname[IF_NAMESIZE] = "";

	b->v = xreallocarray(b->v, b->n + 1, sizeof(*b->v));
	s = &b->v[b->n++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	s->type = xstrdup(type);
	s->domain = xstrdup(domain);
	if (iface >= 0 && if_indextoname((unsigned)iface, ifname))
		snprintf(s->iface, sizeof(s->iface), "%s", ifname);
	s->family = proto == AVAHI_PROTO_INET6 ? 6 : 4;
	s->local = flags & AVAHI_LOOKUP_RESULT_LOCAL;
	return s;
}

static void
resolve_cb(AvahiServiceResolver *r, AvahiIfIndex iface, AvahiProtocol proto, AvahiResolverEvent ev,
	   const char *name, const char *type, const char *domain, const char *host,
	   const AvahiAddress *addr, uint16_t port, AvahiStringList *txt,
	   AvahiLookupResultFlags flags, void *arg)
{
	struct browse *b = arg;

	if (ev == AVAHI_RESOLVER_FOUND) {
		struct mdns_service *s = browse_add(b, iface, proto, name, type, domain, flags);
		char a[AVAHI_ADDRESS_STR_MAX];

		s->host = xstrdup(host);
		avahi_address_snprint(a, sizeof(a), addr);
		s->address = xstrdup(a);
		s->port = port;
		txt_copy(s, txt);
	} else {
		log_debug("mdns: cannot resolve %s (%s): %s", name, type,
			  avahi_strerror(avahi_client_errno(b->client)));
	}
	avahi_service_resolver_free(r);
	b->resolving--;
}

static void
browse_cb(AvahiServiceBrowser *sb, AvahiIfIndex iface, AvahiProtocol proto, AvahiBrowserEvent ev,
	  const char *name, const char *type, const char *domain, AvahiLookupResultFlags flags,
	  void *arg)
{
	struct browse *b = arg;
	size_t i;

	(void)sb;
	switch (ev) {
	case AVAHI_BROWSER_NEW:
		if (!b->resolve) {
			browse_add(b, iface, proto, name, type, domain, flags);
		} else if (avahi_service_resolver_new(b->client, iface, proto, name, type, domain,
						      proto, 0, resolve_cb, b)) {
			b->resolving++;
		}
		break;
	case AVAHI_BROWSER_REMOVE:
		for (i = 0; i < b->n; i++)
			if (strcmp(b->v[i].name, name) == 0 && strcmp(b->v[i].type, type) == 0 &&
			    b->v[i].family == (proto == AVAHI_PROTO_INET6 ? 6 : 4))
				b->v[i].port = -1; /* dropped when collected */
		break;
	case AVAHI_BROWSER_ALL_FOR_NOW:
		b->browsers_done++;
		break;
	case AVAHI_BROWSER_FAILURE:
		b->error = avahi_client_errno(b->client);
		b->browsers_done++;
		break;
	case AVAHI_BROWSER_CACHE_EXHAUSTED:
		break;
	}
}

static int
svc_cmp(const void *pa, const void *pb)
{
	const struct mdns_service *a = pa, *b = pb;
	int c;

	if ((c = strcmp(a->type, b->type)) || (c = strcmp(a->name, b->name)))
		return c;
	if (a->family != b->family)
		return a->family - b->family;
	return strcmp(a->iface, b->iface);
}

static void
svc_release(struct mdns_service *s)
{
	size_t i;

	free(s->name);
	free(s->type);
	free(s->domain);
	free(s->host);
	free(s->address);
	for (i = 0; i < s->ntxt; i++)
		free(s->txt[i]);
	free(s->txt);
}

void
mdns_services_free(struct mdns_service *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		svc_release(&v[i]);
	free(v);
}

int
mdns_browse(const char *const *types, int family, bool resolve, int timeout_ms,
	    struct mdns_service **out, size_t *nout, char *err, size_t errlen)
{
	struct browse b = { .resolve = resolve };
	AvahiServiceBrowser **sbs = NULL;
	AvahiProtocol proto = family == 4   ? AVAHI_PROTO_INET
			      : family == 6 ? AVAHI_PROTO_INET6
					    : AVAHI_PROTO_UNSPEC;
	long deadline;
	size_t i, k;
	int aerr = 0, rc = 0;

	*out = NULL;
	*nout = 0;
	if (!types)
		types = mdns_default_types;
	if (!(b.poll = avahi_simple_poll_new()))
		fatalx("out of memory");
	/* No AVAHI_CLIENT_NO_FAIL: without a daemon this fails at once instead of waiting. */
	b.client = avahi_client_new(avahi_simple_poll_get(b.poll), 0, NULL, NULL, &aerr);
	if (!b.client) {
		snprintf(err, errlen,
			 aerr == AVAHI_ERR_NO_DAEMON ? NO_DAEMON_HINT
						     : "cannot connect to avahi-daemon: %s",
			 avahi_strerror(aerr));
		rc = avahi_to_errno(aerr);
		goto out;
	}
	for (i = 0; types[i]; i++)
		;
	sbs = xcalloc(i + 1, sizeof(*sbs));
	for (i = 0; types[i]; i++) {
		sbs[i] = avahi_service_browser_new(b.client, AVAHI_IF_UNSPEC, proto, types[i], NULL,
						   0, browse_cb, &b);
		if (!sbs[i]) {
			aerr = avahi_client_errno(b.client);
			snprintf(err, errlen, "cannot browse %s: %s", types[i],
				 avahi_strerror(aerr));
			rc = avahi_to_errno(aerr);
			goto out;
		}
		b.browsers++;
	}
	deadline = (long)timeutil_mono_ms() + timeout_ms;
	while (b.browsers_done < b.browsers || b.resolving > 0) {
		long left = deadline - (long)timeutil_mono_ms();

		if (left <= 0)
			break;
		if (avahi_simple_poll_iterate(b.poll, (int)(left < 100 ? left : 100)) != 0)
			break;
	}
	if (b.error && b.n == 0) {
		snprintf(err, errlen, "browsing failed: %s", avahi_strerror(b.error));
		rc = avahi_to_errno(b.error);
		goto out;
	}
	/* Drop removed instances, then sort for stable output. */
	for (i = k = 0; i < b.n; i++) {
		if (b.v[i].port < 0)
			svc_release(&b.v[i]);
		else
			b.v[k++] = b.v[i];
	}
	b.n = k;
	if (b.n)
		qsort(b.v, b.n, sizeof(*b.v), svc_cmp);
	*out = b.v;
	*nout = b.n;
	b.v = NULL;
	b.n = 0;
out:
	for (i = 0; sbs && sbs[i]; i++)
		avahi_service_browser_free(sbs[i]);
	free(sbs);
	if (b.client)
		avahi_client_free(b.client); /* also frees resolvers still pending */
	avahi_simple_poll_free(b.poll);
	mdns_services_free(b.v, b.n);
	return rc;
}

/* ---- publish ---- */

struct mdns_publisher {
	AvahiThreadedPoll *poll;
	AvahiClient *client;
	AvahiEntryGroup *group;
	AvahiTimeout *retry; /* recreates a client that failed with the daemon */
	char *name;
	struct mdns_record *recs;
	size_t nrecs;
	AvahiStringList **txt; /* per record */
	bool established;
	unsigned generation; /* registrations so far: 0 until the first */
	int error;	     /* avahi error that stopped registration; 0 */
};

static void register_all(struct mdns_publisher *p);
static void client_cb(AvahiClient *c, AvahiClientState state, void *arg);

static void
schedule_retry(struct mdns_publisher *p, unsigned ms)
{
	const AvahiPoll *api = avahi_threaded_poll_get(p->poll);
	struct timeval tv;

	avahi_elapse_time(&tv, ms, 0);
	api->timeout_update(p->retry, &tv);
}

/* The daemon went away and took the client with it (AVAHI_CLIENT_FAILURE, which NO_FAIL does
 * not prevent when the daemon exits): a new client waits for the daemon to return. Runs in the
 * poll thread, outside the old client's callbacks, so freeing it is allowed. */
static void
retry_cb(AvahiTimeout *t, void *arg)
{
	struct mdns_publisher *p = arg;
	const AvahiPoll *api = avahi_threaded_poll_get(p->poll);
	int aerr = 0;

	api->timeout_update(t, NULL);
	if (p->group) {
		avahi_entry_group_free(p->group);
		p->group = NULL;
	}
	if (p->client) {
		avahi_client_free(p->client);
		p->client = NULL;
	}
	p->client = avahi_client_new(api, AVAHI_CLIENT_NO_FAIL, client_cb, p, &aerr);
	if (!p->client) {
		log_debug("mdns: reconnecting: %s", avahi_strerror(aerr));
		schedule_retry(p, 1000);
	}
}

static void
rename_after_collision(struct mdns_publisher *p)
{
	char *alt = avahi_alternative_service_name(p->name);

	log_warnx("mdns: the name \"%s\" is taken on the network; publishing as \"%s\"", p->name,
		  alt);
	free(p->name);
	p->name = xstrdup(alt);
	avahi_free(alt);
}

static void
group_cb(AvahiEntryGroup *g, AvahiEntryGroupState state, void *arg)
{
	struct mdns_publisher *p = arg;

	(void)g;
	switch (state) {
	case AVAHI_ENTRY_GROUP_ESTABLISHED:
		p->established = true;
		log_info("mdns: published \"%s\" (%s%s)", p->name, p->recs[0].type,
			 p->nrecs > 1 ? ", ..." : "");
		break;
	case AVAHI_ENTRY_GROUP_COLLISION:
		p->established = false;
		rename_after_collision(p);
		register_all(p);
		break;
	case AVAHI_ENTRY_GROUP_FAILURE:
		p->established = false;
		p->error = avahi_client_errno(avahi_entry_group_get_client(g));
		log_warnx("mdns: registration of \"%s\" failed: %s", p->name,
			  avahi_strerror(p->error));
		break;
	case AVAHI_ENTRY_GROUP_UNCOMMITED:
	case AVAHI_ENTRY_GROUP_REGISTERING:
		break;
	}
}

/* (Re)creates the entry group with every record; runs in the poll thread or under its lock. */
static void
register_all(struct mdns_publisher *p)
{
	size_t i;
	int r = 0;

	if (!p->group) {
		p->group = avahi_entry_group_new(p->client, group_cb, p);
		if (!p->group) {
			p->error = avahi_client_errno(p->client);
			log_warnx("mdns: cannot create an entry group: %s",
				  avahi_strerror(p->error));
			return;
		}
	} else {
		avahi_entry_group_reset(p->group);
	}
	for (;;) {
		for (i = 0; i < p->nrecs; i++) {
			r = avahi_entry_group_add_service_strlst(
				p->group, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC, 0, p->name,
				p->recs[i].type, NULL, NULL, (uint16_t)p->recs[i].port, p->txt[i]);
			if (r < 0)
				break;
		}
		if (r != AVAHI_ERR_COLLISION)
			break;
		/* A local collision (another group on this host has the name). */
		avahi_entry_group_reset(p->group);
		rename_after_collision(p);
	}
	if (r < 0 || (r = avahi_entry_group_commit(p->group)) < 0) {
		p->error = r;
		log_warnx("mdns: cannot publish \"%s\": %s", p->name, avahi_strerror(r));
		return;
	}
	p->error = 0;
	p->generation++;
}

static void
client_cb(AvahiClient *c, AvahiClientState state, void *arg)
{
	struct mdns_publisher *p = arg;

	p->client = c; /* called from inside avahi_client_new, before it returns */
	switch (state) {
	case AVAHI_CLIENT_S_RUNNING:
		if (p->generation)
			log_info("mdns: avahi-daemon is back; registering \"%s\" again", p->name);
		register_all(p);
		break;
	case AVAHI_CLIENT_S_COLLISION:
	case AVAHI_CLIENT_S_REGISTERING:
		/* The host name changes: Avahi withdrew our records; they go back on RUNNING. */
		p->established = false;
		if (p->group)
			avahi_entry_group_reset(p->group);
		break;
	case AVAHI_CLIENT_FAILURE:
		if (p->established || p->group)
			log_warnx("mdns: lost avahi-daemon; waiting for it to come back");
		p->established = false;
		if (p->group) {
			avahi_entry_group_free(p->group);
			p->group = NULL;
		}
		if (p->retry)
			schedule_retry(p, 500);
		break;
	case AVAHI_CLIENT_CONNECTING:
		/* The daemon went away. With AVAHI_CLIENT_NO_FAIL the client reconnects by itself;
		 * the old group is dead. */
		if (p->established || p->group)
			log_warnx("mdns: lost avahi-daemon; waiting for it to come back");
		p->established = false;
		if (p->group) {
			avahi_entry_group_free(p->group);
			p->group = NULL;
		}
		break;
	}
}

static bool
txt_valid(const char *s)
{
	return *s && *s != '=' && strlen(s) <= 255;
}

/* Whether name and recs cannot be published as given; says why in err. */
static bool
records_invalid(const char *name, const struct mdns_record *recs, size_t nrecs, char *err,
		size_t errlen)
{
	size_t i, k;

	if (!avahi_is_valid_service_name(name)) {
		snprintf(err, errlen, "\"%s\" is not a valid service name (1-63 bytes)", name);
		return true;
	}
	for (i = 0; i < nrecs; i++) {
		if (!avahi_is_valid_service_type_strict(recs[i].type)) {
			snprintf(err, errlen, "\"%s\" is not a service type like _name._tcp",
				 recs[i].type);
			return true;
		}
		if (recs[i].port < 0 || recs[i].port > 65535) {
			snprintf(err, errlen, "port %d is out of range 0-65535", recs[i].port);
			return true;
		}
		for (k = 0; k < recs[i].ntxt; k++)
			if (!txt_valid(recs[i].txt[k])) {
				snprintf(err, errlen,
					 "TXT \"%s\" must be key=value, at most 255 bytes",
					 recs[i].txt[k]);
				return true;
			}
	}
	return false;
}

/* 0 when a client can reach avahi-daemon now, else the Avahi error. */
static int
daemon_reachable(void)
{
	AvahiSimplePoll *sp = avahi_simple_poll_new();
	AvahiClient *probe;
	int aerr = 0;

	if (!sp)
		fatalx("out of memory");
	probe = avahi_client_new(avahi_simple_poll_get(sp), 0, NULL, NULL, &aerr);
	if (probe)
		avahi_client_free(probe);
	avahi_simple_poll_free(sp);
	return probe ? 0 : aerr ? aerr : AVAHI_ERR_FAILURE;
}

int
mdns_publisher_start(const char *name, const struct mdns_record *recs, size_t nrecs, int wait_ms,
		     struct mdns_publisher **out, char *err, size_t errlen)
{
	struct mdns_publisher *p;
	long deadline;
	size_t i, k;
	int aerr = 0;

	*out = NULL;
	if (records_invalid(name, recs, nrecs, err, errlen))
		return -EINVAL;
	p = xcalloc(1, sizeof(*p));
	p->name = xstrdup(name);
	p->nrecs = nrecs;
	p->recs = xcalloc(nrecs ? nrecs : 1, sizeof(*p->recs));
	p->txt = xcalloc(nrecs ? nrecs : 1, sizeof(*p->txt));
	for (i = 0; i < nrecs; i++) {
		p->recs[i].type = xstrdup(recs[i].type);
		p->recs[i].port = recs[i].port;
		/* avahi_string_list_add prepends: add in reverse to keep the given order. */
		for (k = recs[i].ntxt; k-- > 0;)
			p->txt[i] = avahi_string_list_add(p->txt[i], recs[i].txt[k]);
	}
	if (!(p->poll = avahi_threaded_poll_new()))
		fatalx("out of memory");

	/* First a plain client: without a daemon it fails now, with the right error. */
	if ((aerr = daemon_reachable()) != 0) {
		snprintf(err, errlen,
			 aerr == AVAHI_ERR_NO_DAEMON ? NO_DAEMON_HINT
						     : "cannot connect to avahi-daemon: %s",
			 avahi_strerror(aerr));
		mdns_publisher_stop(p);
		return avahi_to_errno(aerr);
	}
	/* Then one that survives daemon restarts. */
	p->retry = avahi_threaded_poll_get(p->poll)->timeout_new(avahi_threaded_poll_get(p->poll),
								 NULL, retry_cb, p);
	p->client = avahi_client_new(avahi_threaded_poll_get(p->poll), AVAHI_CLIENT_NO_FAIL,
				     client_cb, p, &aerr);
	if (!p->client) {
		snprintf(err, errlen, "cannot connect to avahi-daemon: %s", avahi_strerror(aerr));
		mdns_publisher_stop(p);
		return avahi_to_errno(aerr);
	}
	if (avahi_threaded_poll_start(p->poll) < 0) {
		snprintf(err, errlen, "cannot start the Avahi event thread");
		mdns_publisher_stop(p);
		return -EAGAIN;
	}
	deadline = (long)timeutil_mono_ms() + wait_ms;
	for (;;) {
		bool done, failed;

		avahi_threaded_poll_lock(p->poll);
		done = p->established;
		failed = p->error != 0 && p->error != AVAHI_ERR_COLLISION;
		aerr = p->error;
		avahi_threaded_poll_unlock(p->poll);
		if (done)
			break;
		if (failed) {
			snprintf(err, errlen, "cannot publish \"%s\": %s", name,
				 avahi_strerror(aerr));
			mdns_publisher_stop(p);
			return avahi_to_errno(aerr);
		}
		if ((long)timeutil_mono_ms() >= deadline) {
			log_warnx("mdns: \"%s\" is not established after %d ms; still trying", name,
				  wait_ms);
			break;
		}
		usleep(20000);
	}
	*out = p;
	return 0;
}

bool
mdns_publisher_name(struct mdns_publisher *p, char *buf, size_t len)
{
	bool est;

	avahi_threaded_poll_lock(p->poll);
	snprintf(buf, len, "%s", p->name);
	est = p->established;
	avahi_threaded_poll_unlock(p->poll);
	return est;
}

void
mdns_publisher_stop(struct mdns_publisher *p)
{
	size_t i;

	if (!p)
		return;
	if (p->poll)
		avahi_threaded_poll_stop(p->poll);
	if (p->retry)
		avahi_threaded_poll_get(p->poll)->timeout_free(p->retry);
	if (p->group)
		avahi_entry_group_free(p->group); /* withdraws the records */
	if (p->client)
		avahi_client_free(p->client);
	if (p->poll)
		avahi_threaded_poll_free(p->poll);
	for (i = 0; i < p->nrecs; i++) {
		free((char *)p->recs[i].type);
		avahi_string_list_free(p->txt[i]);
	}
	free(p->recs);
	free(p->txt);
	free(p->name);
	free(p);
}

json_t *
mdns_services_json(const struct mdns_service *v, size_t n)
{
	json_t *arr = json_array();
	size_t i, k;

	for (i = 0; i < n; i++) {
		json_t *t = json_array();

		for (k = 0; k < v[i].ntxt; k++)
			json_array_append_new(t, json_string(v[i].txt[k]));
		json_array_append_new(
			arr,
			json_pack("{s:s, s:s, s:s, s:s, s:i, s:s?, s:s?, s:i, s:o, s:b}", "name",
				  v[i].name, "type", v[i].type, "domain", v[i].domain, "interface",
				  v[i].iface, "family", v[i].family, "host", v[i].host, "address",
				  v[i].address, "port", v[i].port, "txt", t, "local", v[i].local));
	}
	return arr;
}
