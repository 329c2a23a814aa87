/* generation.c - generations on disk: each file's copy under the state directory, the
 * generation recorded with its files and hashes, the distribution's originals (generation 0)
 * kept once, old generations pruned, and a file put back from a kept copy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adopt.h"
#include "apply.h"
#include "buf.h"
#include "fsutil.h"
#include "hash.h"
#include "hwinfo.h"
#include "import.h"
#include "job.h"
#include "knobs.h"
#include "log.h"
#include "netif.h"
#include "paths.h"
#include "proc.h"
#include "profile.h"
#include "runrec.h"
#include "served.h"
#include "service.h"
#include "smbmod.h"
#include "state.h"
#include "timeutil.h"
#include "xmalloc.h"

int
gen_mkparent(const char *path)
{
	char *d = xstrdup(path), *s = strrchr(d, '/');
	int rc = 0;

	if (s && s != d) {
		*s = '\0';
		rc = fs_mkdir_p(d, 0755);
	}
	free(d);
	return rc;
}

static char *
gen_copy_path(const struct job *j, long id, const char *path)
{
	return paths_state(j->o->root, "generations/%ld/files%s", id, path);
}

/* Copies the installed file (or notes its absence) into generation id's store. */
static int
snapshot_file(const struct job *j, long id, const char *path, struct gen_file *gf)
{
	char *abs = fs_rooted(j->o->root, path), *copy, *data = NULL;
	struct stat st;
	size_t len = 0;
	int rc;

	memset(gf, 0, sizeof(*gf));
	gf->path = xstrdup(path);
	if (stat(abs, &st) < 0) {
		free(abs);
		return errno == ENOENT ? 0 : -errno;
	}
	rc = fs_read_file(abs, FILE_MAX, &data, &len);
	free(abs);
	if (rc < 0)
		return rc;
	gf->present = 1;
	gf->mode = st.st_mode & 07777;
	gf->uid = st.st_uid;
	gf->gid = st.st_gid;
	hash_sha256_hex(data, len, gf->sha256);
	copy = gen_copy_path(j, id, path);
	rc = gen_mkparent(copy);
	if (rc == 0)
		rc = fs_write_atomic(copy, data, len, 0600, 0);
	free(copy);
	free(data);
	return rc;
}

int
gen_store(struct job *j, struct generation *g, char **paths, size_t npaths, long *out_id)
{
	char created[32];
	size_t i;
	int rc = 0;

	if (g->id < 0) {
		long *ids;
		size_t n;

		if (state_generation_ids(j->st, &ids, &n) < 0) {
			generation_clear(g);
			return -EIO;
		}
		g->id = n ? ids[n - 1] + 1 : 0;
		free(ids);
	}
	timeutil_now_iso(created, sizeof(created));
	g->created = xstrdup(created);
	g->version = xstrdup(NASTUNE_VERSION);
	g->files = xcalloc(npaths ? npaths : 1, sizeof(*g->files));
	for (i = 0; i < npaths && rc == 0; i++, g->nfiles++)
		rc = snapshot_file(j, g->id, paths[i], &g->files[i]);
	if (rc == 0)
		rc = state_add_generation(j->st, g);
	if (rc == 0 && out_id)
		*out_id = g->id;
	generation_clear(g);
	return rc;
}

int
gen_record(struct job *j, long id, const char *reason, const char *inputs_hash,
	   const struct hwinfo *hw, char **paths, size_t npaths, long *out_id)
{
	struct generation g = { .id = id };

	g.reason = xstrdup(reason);
	snprintf(g.inputs_hash, sizeof(g.inputs_hash), "%s", inputs_hash);
	g.hw_text = hwinfo_text(hw);
	hwinfo_hash(hw, g.hw_hash);
	if (j->m && j->m->network.interface && netif_get_mtu(j->m->network.interface, &g.mtu) == 0)
		snprintf(g.mtu_iface, sizeof(g.mtu_iface), "%s", j->m->network.interface);
	else
		g.mtu = 0;
	return gen_store(j, &g, paths, npaths, out_id);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
gen_extend_originals(struct job *j)
{
	char **known = NULL;
	size_t nk = 0, n, i, k;
	long *ids;
	int rc = 0;

	if (state_generation_ids(j->st, &ids, &n) < 0)
		return -EIO;
	for (i = 0; i < n && rc == 0; i++) {
		struct generation g;

		if (state_get_generation(j->st, ids[i], &g) < 0) {
			rc = -EIO;
			break;
		}
		known = xreallocarray(known, nk + g.nfiles + 1, sizeof(*known));
		for (k = 0; k < g.nfiles; k++)
			known[nk++] = xstrdup(g.files[k].path);
		generation_clear(&g);
	}
	free(ids);
	if (nk)
		qsort(known, nk, sizeof(*known), cmp_str);
	for (i = 0; i < j->nch && rc == 0; i++) {
		struct gen_file gf = { 0 };
		const char *key = j->ch[i].path;

		if (!j->ch[i].f || (nk && bsearch(&key, known, nk, sizeof(*known), cmp_str)))
			continue;
		if ((rc = snapshot_file(j, 0, j->ch[i].path, &gf)) == 0 &&
		    (rc = state_add_generation_file(j->st, 0, &gf)) == 0)
			log_info("%s: first written now; its original joins generation 0",
				 j->ch[i].path);
		free(gf.path);
	}
	for (i = 0; i < nk; i++)
		free(known[i]);
	free(known);
	return rc;
}

void
gen_rm_tree(const char *path)
{
	char *argv[] = { "rm", "-rf", "--", (char *)path, NULL };

	(void)proc_run_argv(argv);
}

void
gen_prune(struct job *j)
{
	long *ids;
	size_t n, i, keep = APPLY_KEEP_GENERATIONS;

	if (state_generation_ids(j->st, &ids, &n) < 0)
		return;
	for (i = 0; i < n; i++) {
		char *dir;

		if (ids[i] == 0 || n - i <= keep)
			continue;
		dir = paths_generation(j->o->root, ids[i]);
		if (state_delete_generation(j->st, ids[i]) == 0)
			gen_rm_tree(dir);
		free(dir);
	}
	free(ids);
}

int
gen_put_copy(const char *abs, const char *copy, const char *sha, unsigned mode, unsigned uid,
	     unsigned gid)
{
	char *data = NULL, got[65];
	size_t len;
	int rc = fs_read_file(copy, FILE_MAX, &data, &len);

	if (rc == 0) {
		hash_sha256_hex(data, len, got);
		if (strcmp(got, sha) != 0)
			rc = -EBADMSG;
	}
	if (rc == 0 && (rc = gen_mkparent(abs)) == 0)
		rc = fs_write_atomic(abs, data, len, mode, 0);
	if (rc == 0 && geteuid() == 0 && chown(abs, uid, gid) < 0)
		rc = -errno;
	free(data);
	return rc;
}

int
gen_restore_file(struct job *j, const struct generation *g, const char *path)
{
	const struct gen_file *gf = NULL;
	char *abs = fs_rooted(j->o->root, path), *copy;
	size_t i;
	int rc;

	for (i = 0; i < g->nfiles; i++)
		if (strcmp(g->files[i].path, path) == 0)
			gf = &g->files[i];
	if (!gf || !gf->present) {
		rc = fs_remove_durable(abs);
		free(abs);
		return rc;
	}
	copy = gen_copy_path(j, g->id, path);
	if ((rc = gen_put_copy(abs, copy, gf->sha256, gf->mode, gf->uid, gf->gid)) < 0)
		log_warnx("cannot restore %s from generation %ld (%s): %s", abs, g->id, copy,
			  strerror(-rc));
	free(copy);
	free(abs);
	return rc;
}

enum svc
gen_svc_of_path(const char *path)
{
	if (strncmp(path, "/etc/samba/", 11) == 0)
		return SVC_SMB;
	if (strncmp(path, "/etc/exports", 12) == 0 || strncmp(path, "/etc/ganesha/", 13) == 0)
		return SVC_NFS;
	if (strncmp(path, "/etc/netatalk/", 14) == 0)
		return SVC_AFP;
	if (strncmp(path, "/etc/sysctl.d/", 14) == 0)
		return SVC_SYS;
	if (strncmp(path, "/etc/nastune/", 13) == 0 || strncmp(path, "/etc/ctdb/", 10) == 0)
		return SVC_SELF;
	return SVC_MDNS;
}

void
gen_inputs_hash(const struct model *m, const struct rendered *r, char out[65])
{
	struct hash_ctx *h = hash_new();
	char mtu[64];
	size_t i;

	hash_update(h, NASTUNE_VERSION, strlen(NASTUNE_VERSION) + 1);
	/* network.mtu is applied without a file: its settings are inputs of their own. */
	snprintf(mtu, sizeof(mtu), "mtu %d %d %s", (int)m->network.mtu_mode, m->network.mtu,
		 m->network.interface ? m->network.interface : "");
	hash_update(h, mtu, strlen(mtu) + 1);
	for (i = 0; i < m->network.peers.n; i++)
		hash_update(h, m->network.peers.v[i], strlen(m->network.peers.v[i]) + 1);
	for (i = 0; i < r->n; i++) {
		hash_update(h, r->f[i].path, strlen(r->f[i].path) + 1);
		hash_update(h, r->f[i].data, r->f[i].len);
		hash_update(h, "", 1);
	}
	hash_final_hex(h, out);
}
