/* view.c - what the local ctdbd says about the nodes and the public addresses, through the
 * ctdb tool's machine-readable output (-X: '|'-separated fields, a header line first). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "proc.h"
#include "xmalloc.h"

const char *
cluster_state_name(enum cluster_node_state s)
{
	static const char *const names[] = { "ok",     "unhealthy", "disconnected",
					     "banned", "inactive",  "unknown" };

	return (unsigned)s <= CN_UNKNOWN ? names[s] : "unknown";
}

/* Runs ctdb with args and keeps what it prints (stderr too, for the message). */
static int
capture(char *const argv[], char **out)
{
	struct proc p = PROC_INIT(argv);
	size_t len;
	int rc;

	p.err = PROC_TO_OUT;
	p.in = PROC_NULL;
	p.timeout_ms = 10000;
	rc = proc_capture(&p, 1 << 20, out, &len);
	if (!*out)
		*out = xstrdup("");
	return rc == 0 ? 0 : rc < 0 ? rc : -EIO;
}

/* Splits "|a|b|c|" into fields (in place); returns how many. */
static size_t
fields(char *line, char **f, size_t max)
{
	size_t n = 0;
	char *p = line;

	if (*p == '|')
		p++;
	while (*p && n < max) {
		char *bar = strchr(p, '|');

		f[n++] = p;
		if (!bar)
			break;
		*bar = '\0';
		p = bar + 1;
	}
	return n;
}

static int
node_index(const struct model *m, const char *addr)
{
	size_t i;

	for (i = 0; i < m->cluster.nodes.n; i++)
		if (strcmp(m->cluster.nodes.v[i], addr) == 0)
			return (int)i;
	return -1;
}

void
cluster_view_read(const struct model *m, struct cluster_view *v)
{
	char *text = NULL, *line, *save = NULL;
	size_t i, nn = m->cluster.nodes.n;
	int rc;

	memset(v, 0, sizeof(*v));
	v->state = xcalloc(nn + 1, sizeof(*v->state));
	v->holder = xcalloc(m->cluster.public_addresses.n + 1, sizeof(*v->holder));
	v->this_pnn = -1;
	for (i = 0; i < nn; i++)
		v->state[i] = CN_UNKNOWN;
	rc = capture((char *const[]){ "ctdb", "-X", "status", NULL }, &text);
	if (rc < 0) {
		snprintf(v->err, sizeof(v->err), "ctdb status: %.200s",
			 text && *text ? strtok(text, "\n") : "ctdbd does not answer");
		free(text);
		return;
	}
	v->reachable = true;
	/* |Node|IP|Disconnected|Unknown|Banned|Disabled|Unhealthy|Stopped|Inactive|... with the
	 * header naming the columns (their set and order differ between versions). */
	{
		int col[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
		static const char *const names[8] = { "IP",	   "Disconnected", "Banned",
						      "Unhealthy", "Inactive",	   "Disabled",
						      "Stopped",   "ThisNode" };

		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *f[24];
			size_t nf = fields(line, f, 24), c;
			int k;

#define FLAG(x) (col[x] >= 0 && (size_t)col[x] < nf && strcmp(f[col[x]], "1") == 0)
			if (nf && strcmp(f[0], "Node") == 0) {
				for (c = 0; c < nf; c++)
					for (k = 0; k < 8; k++)
						if (strcmp(f[c], names[k]) == 0)
							col[k] = (int)c;
				continue;
			}
			if (col[0] < 0 || (size_t)col[0] >= nf ||
			    (k = node_index(m, f[col[0]])) < 0)
				continue;
			if (FLAG(1))
				v->state[k] = CN_DISCONNECTED;
			else if (FLAG(2))
				v->state[k] = CN_BANNED;
			else if (FLAG(3))
				v->state[k] = CN_UNHEALTHY;
			else if (FLAG(4) || FLAG(5) || FLAG(6))
				v->state[k] = CN_INACTIVE;
			else
				v->state[k] = CN_OK;
			if (col[7] >= 0 && (size_t)col[7] < nf && strcmp(f[col[7]], "Y") == 0)
				v->this_pnn = k;
#undef FLAG
		}
	}
	free(text);
	/* |Public IP|Node| with the node's pnn (its line in the nodes file), -1 unassigned. */
	if (capture((char *const[]){ "ctdb", "-X", "ip", "all", NULL }, &text) == 0) {
		save = NULL;
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *f[4];
			long pnn;

			if (fields(line, f, 4) < 2 || strcmp(f[0], "Public IP") == 0)
				continue;
			pnn = strtol(f[1], NULL, 10);
			v->n_ips++;
			for (i = 0; i < m->cluster.public_addresses.n; i++) {
				const char *pa = m->cluster.public_addresses.v[i];

				if (strlen(f[0]) == strcspn(pa, "/") &&
				    strncmp(f[0], pa, strlen(f[0])) == 0 && pnn >= 0 &&
				    (size_t)pnn < nn)
					v->holder[i] = xstrdup(m->cluster.nodes.v[pnn]);
			}
		}
	}
	free(text);
}

void
cluster_view_clear(const struct model *m, struct cluster_view *v)
{
	size_t i;

	for (i = 0; v->holder && i < m->cluster.public_addresses.n; i++)
		free(v->holder[i]);
	free(v->holder);
	free(v->state);
	memset(v, 0, sizeof(*v));
}

int
cluster_nudge(void)
{
	char *argv[] = { "ctdb", "ipreallocate", NULL };
	struct proc p = PROC_INIT(argv);
	int rc;

	p.in = p.out = PROC_NULL;
	p.timeout_ms = 30000;
	rc = proc_run(&p);

	return rc == 0 ? 0 : rc < 0 ? rc : -EIO;
}

bool
cluster_public_held(const struct model *m, const struct cluster_view *v)
{
	size_t i;

	if (!v->reachable || v->n_ips != m->cluster.public_addresses.n)
		return false;
	for (i = 0; i < m->cluster.public_addresses.n; i++)
		if (!v->holder[i])
			return false;
	return true;
}

int
cluster_reloadips(void)
{
	char *argv[] = { "ctdb", "reloadips", "all", NULL };
	struct proc p = PROC_INIT(argv);
	int rc;

	p.in = p.out = PROC_NULL;
	p.timeout_ms = 60000;
	rc = proc_run(&p);
	return rc == 0 ? 0 : rc < 0 ? rc : -EIO;
}
