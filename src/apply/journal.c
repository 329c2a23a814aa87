/* journal.c - the journal an apply writes before it installs anything (the generation to go
 * back to, each file's kept copy, the restarts begun), its recovery by the next run when the
 * process died between journal and record, and what status and repair make of one left
 * behind (a mixed generation, stray paths). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
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

/* Where the journal keeps a file as it was before this apply, for a file the generation
 * before does not list. */
static char *
kept_copy_path(const struct job *j, const char *path)
{
	return paths_state(j->o->root, "pending.keep%s", path);
}

static const struct gen_file *
gen_find(const struct generation *g, const char *path)
{
	for (size_t i = 0; i < g->nfiles; i++)
		if (strcmp(g->files[i].path, path) == 0)
			return &g->files[i];
	return NULL;
}

int
journal_write(struct job *j, const struct generation *prev)
{
	struct buf b;
	char *p = paths_pending(j->o->root), *kdir = paths_state(j->o->root, "pending.keep");
	size_t i;
	int rc = 0;

	if (access(kdir, F_OK) == 0)
		gen_rm_tree(kdir);
	buf_init(&b);
	buf_printf(&b, "prev %ld\n", prev->id);
	if (j->o->trial)
		buf_printf(&b, "trial\n");
	for (i = 0; i < j->nch && rc == 0; i++) {
		struct gen_file gf = { 0 };
		char *abs, *copy, *data = NULL, sum[65] = "-";
		size_t len = 0;
		struct stat st;

		/* What it installs, so that what it left can be told apart (apply_interrupted). */
		if (j->ch[i].f)
			hash_sha256_hex(j->ch[i].f->data, j->ch[i].f->len, sum);
		buf_printf(&b, "file %s\nnew %s %s\n", j->ch[i].path, sum, j->ch[i].path);
		abs = fs_rooted(j->o->root, j->ch[i].path);
		if (stat(abs, &st) == 0 && (rc = fs_read_file(abs, FILE_MAX, &data, &len)) == 0) {
			const struct gen_file *was = gen_find(prev, j->ch[i].path);

			gf.present = 1;
			hash_sha256_hex(data, len, gf.sha256);
			if (was && was->present && strcmp(was->sha256, gf.sha256) == 0) {
				free(data);
				free(abs);
				continue; /* as prev has it: restoring prev puts it back */
			}
			copy = kept_copy_path(j, j->ch[i].path);
			if ((rc = gen_mkparent(copy)) == 0)
				rc = fs_write_atomic(copy, data, len, 0600, 0);
			free(copy);
			buf_printf(&b, "keep 1 %o %u %u %s %s\n", (unsigned)(st.st_mode & 07777),
				   (unsigned)st.st_uid, (unsigned)st.st_gid, gf.sha256,
				   j->ch[i].path);
		} else if (rc == 0 && errno == ENOENT) {
			const struct gen_file *was = gen_find(prev, j->ch[i].path);

			if (!was || was->present)
				buf_printf(&b, "keep 0 0 0 0 - %s\n", j->ch[i].path);
		} else if (rc == 0) {
			rc = -errno;
		}
		free(data);
		free(abs);
	}
	if (rc == 0)
		rc = fs_write_atomic(p, b.data, b.len, 0600, 0);
	buf_clear(&b);
	free(kdir);
	free(p);
	return rc;
}

int
journal_restore_kept(struct job *j, const char *journal, const char *path)
{
	const char *line = journal;
	size_t plen = strlen(path);

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t llen = end ? (size_t)(end - line) : strlen(line);
		unsigned present, mode, uid, gid;
		char sha[65], *abs, *copy;
		int n = 0, rc;

		if (sscanf(line, "keep %u %o %u %u %64s %n", &present, &mode, &uid, &gid, sha,
			   &n) != 5 ||
		    n <= 0 || llen - (size_t)n != plen || strncmp(line + n, path, plen) != 0) {
			line = end ? end + 1 : NULL;
			continue;
		}
		abs = fs_rooted(j->o->root, path);
		if (!present) {
			rc = fs_remove_durable(abs);
			free(abs);
			return rc;
		}
		copy = kept_copy_path(j, path);
		if ((rc = gen_put_copy(abs, copy, sha, mode & 07777, uid, gid)) < 0)
			log_warnx("cannot put %s back as it was before the apply (%s): %s", abs,
				  copy, strerror(-rc));
		free(copy);
		free(abs);
		return rc;
	}
	return 1;
}

void
journal_note_restart(struct job *j, int i)
{
	char *p = paths_pending(j->o->root), line[32];
	int fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);

	free(p);
	if (fd < 0)
		return; /* no journal: nothing to recover into */
	snprintf(line, sizeof(line), "restart %d\n", i);
	if (write(fd, line, strlen(line)) < 0 || fsync(fd) < 0)
		log_warnx("apply: cannot note the restart of a service in the journal: %s",
			  strerror(errno));
	close(fd);
}

void
journal_forget_restart(struct job *j, int i)
{
	char *p = paths_pending(j->o->root), *text = NULL, *line, *save = NULL, want[32];
	struct buf b;

	if (fs_read_file(p, 1 << 20, &text, NULL) < 0) {
		free(p);
		return;
	}
	snprintf(want, sizeof(want), "restart %d", i);
	buf_init(&b);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strcmp(line, want) != 0)
			buf_printf(&b, "%s\n", line);
	if (fs_write_atomic(p, b.data, b.len, 0600, 0) < 0)
		log_warnx("apply: cannot update the journal after restarting a service: %s", p);
	buf_clear(&b);
	free(text);
	free(p);
}

void
journal_drop(struct job *j)
{
	char *p = paths_pending(j->o->root), *kdir = paths_state(j->o->root, "pending.keep");
	int rc;

	if ((rc = fs_remove_durable(p)) < 0)
		log_warnx("cannot remove the journal %s: %s", p, strerror(-rc));
	if (access(kdir, F_OK) == 0)
		gen_rm_tree(kdir);
	free(kdir);
	free(p);
}

/* Records what journal_recover() put back as a new generation: g's configuration, hardware and MTU,
 * and the files of g and of the journal as they are now, so that status and the history
 * show the repair. Returns 0 or -errno. */
static int
record_repair(struct job *j, const struct generation *g, const char *journal)
{
	struct generation n = { .id = -1 };
	const char *line, *next;
	char **paths;
	size_t np = 0, cap = g->nfiles + 1, i;
	int rc;

	for (line = journal; (line = strstr(line, "\nfile ")); line++)
		cap++;
	paths = xcalloc(cap, sizeof(*paths));
	for (i = 0; i < g->nfiles; i++)
		paths[np++] = xstrdup(g->files[i].path);
	for (line = journal; line && *line; line = next) {
		size_t len = strcspn(line, "\n");
		char *path;

		next = line[len] ? line + len + 1 : NULL;
		if (strncmp(line, "file ", 5) != 0 || len <= 5)
			continue;
		path = xasprintf("%.*s", (int)(len - 5), line + 5);
		for (i = 0; i < np && strcmp(paths[i], path) != 0; i++)
			;
		if (i == np && np < cap)
			paths[np++] = path;
		else
			free(path);
	}
	n.reason = xasprintf("repair: generation %ld back after an interrupted %s", g->id,
			     strstr(journal, "\ntrial\n") ? "tune" : "apply");
	memcpy(n.inputs_hash, g->inputs_hash, sizeof(n.inputs_hash));
	memcpy(n.hw_hash, g->hw_hash, sizeof(n.hw_hash));
	n.hw_text = xstrdup(g->hw_text ? g->hw_text : "");
	memcpy(n.mtu_iface, g->mtu_iface, sizeof(n.mtu_iface));
	n.mtu = g->mtu;
	rc = gen_store(j, &n, paths, np, &j->repaired_as);
	for (i = 0; i < np; i++)
		free(paths[i]);
	free(paths);
	if (rc == 0)
		gen_prune(j);
	return rc;
}

/* The first path a journal line names that render never produces, or NULL: recovery
 * writes and removes as root, so the journal names nothing else. */
static const char *
journal_stray(const char *text)
{
	const char *line, *next, *path;

	for (line = text; line && *line; line = next) {
		size_t len = strcspn(line, "\n");
		char *one;
		bool known;

		next = line[len] ? line + len + 1 : NULL;
		if (strncmp(line, "file ", 5) == 0)
			path = line + 5;
		else if (strncmp(line, "keep ", 5) == 0 || strncmp(line, "new ", 4) == 0)
			path = memrchr(line, ' ', len) + 1;
		else
			continue;
		one = xasprintf("%.*s", (int)(len - (size_t)(path - line)), path);
		known = render_known_path(one);
		free(one);
		if (!known)
			return path;
	}
	return NULL;
}

int
journal_recover(struct job *j)
{
	char *p = paths_pending(j->o->root), *text = NULL, *line, *save = NULL, *journal = NULL;
	const char *stray;
	struct generation g = { 0 }, last = { 0 };
	long prev = -1;
	unsigned mask = 0;
	int rc, failed = 0;

	rc = fs_read_file(p, 1 << 20, &text, NULL);
	if (rc == -ENOENT) {
		free(p);
		return 0;
	}
	if (rc < 0 || sscanf(text, "prev %ld", &prev) != 1 ||
	    state_get_generation(j->st, prev, &g) < 0) {
		log_warnx("apply: %s is unreadable or names no known generation — remove it after "
			  "checking the files by hand",
			  p);
		free(text);
		free(p);
		return -1;
	}
	if (state_last_generation(j->st, &last) == 0 && last.id > prev) {
		log_info("an earlier apply recorded generation %ld and died before dropping its "
			 "journal: dropping it",
			 last.id);
		goto drop;
	}
	if ((stray = journal_stray(text))) {
		log_warnx("apply: %s names %.*s, which nastune never writes — remove it after "
			  "checking the files by hand",
			  p, (int)strcspn(stray, "\n"), stray);
		free(text);
		free(p);
		return -1;
	}
	journal = xstrdup(text); /* strtok_r below cuts text up */
	if (j->o->trial)
		log_debug("restoring generation %ld before the next trial", prev);
	else if (j->repair)
		log_info("restoring generation %ld", prev);
	else
		log_info("an earlier apply was interrupted: restoring generation %ld first", prev);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int svc;

		if (sscanf(line, "restart %d", &svc) == 1 && svc >= 0 && svc < SVC_COUNT) {
			/* It may have been stopped and never started again. */
			j->force_mask |= 1u << svc;
			mask |= 1u << svc;
			continue;
		}
		if (strncmp(line, "file ", 5) != 0)
			continue;
		if (restart_restore_noting(j, &g, journal, line + 5) < 0)
			failed++;
		mask |= 1u << gen_svc_of_path(line + 5);
	}
	/* The apply may have died after proving a new MTU and before recording it. At boot the
	 * network's own configuration sets it, and the link may not even exist yet. */
	if (!j->o->boot && netmtu_restore(&g) < 0)
		failed++;
	if (failed) {
		log_warnx("apply: could not restore %d item(s) of generation %ld; %s kept", failed,
			  prev, p);
		rc = -1;
		goto out;
	}
	/* A trial reloads (or restarts, restart_mask) these with its own changes; should it
	 * fail, its undo still owes them the restart. */
	j->owed_mask = j->restart_mask;
	if (j->o->trial) {
		j->svc_mask |= mask;
	} else {
		if (j->o->boot)
			mask &= 1u << SVC_SYS; /* the daemons start after this, on these files */
		if (!j->o->no_reload)
			reload_services(j, mask, false);
		/* Done: what follows decides from the restored files. */
		j->restart_mask = j->owed_mask = j->touched_mask = 0;
		memset(j->restart_why, 0, sizeof(j->restart_why));
	}
	if (j->repair && (rc = record_repair(j, &g, journal)) < 0) {
		log_warnx(
			"apply: generation %ld is restored, but the repair could not be recorded: "
			"%s; %s kept",
			prev, strerror(-rc), p);
		rc = -1;
		goto out;
	}
drop:
	journal_drop(j);
	rc = 0;
out:
	generation_clear(&g);
	generation_clear(&last);
	free(text);
	free(journal);
	free(p);
	return rc;
}

/* The journal's "keep" (the state before the apply) or "new" (what it installs) line for
 * path: 1 with sha ("-": absent), or 0 when it has none. */
static int
journal_sha(const char *journal, const char *kind, const char *path, char sha[65])
{
	const char *line, *next;
	size_t plen = strlen(path);

	for (line = journal; line && *line; line = next) {
		size_t len = strcspn(line, "\n");
		unsigned present = 1, mode, uid, gid;
		char sum[65];
		int n = 0;

		next = line[len] ? line + len + 1 : NULL;
		if (strcmp(kind, "keep") == 0 ? sscanf(line, "keep %u %o %u %u %64s %n", &present,
						       &mode, &uid, &gid, sum, &n) != 5
					      : sscanf(line, "new %64s %n", sum, &n) != 1)
			continue;
		if (n <= 0 || len - (size_t)n != plen || strncmp(line + n, path, plen) != 0)
			continue;
		snprintf(sha, 65, "%s", present ? sum : "-");
		return 1;
	}
	return 0;
}

/* The SHA-256 of the installed file at path under root, or "-" when it is absent. */
static void
installed_sha(const char *root, const char *path, char sha[65])
{
	char *abs = fs_rooted(root, path), *data = NULL;
	size_t len;
	int rc = fs_read_file(abs, FILE_MAX, &data, &len);

	if (rc == 0)
		hash_sha256_hex(data, len, sha);
	else
		snprintf(sha, 65, "%s", rc == -ENOENT ? "-" : "?");
	free(data);
	free(abs);
}

int
apply_interrupted(const char *root, struct apply_interruption *ai)
{
	char *p = paths_pending(root), *trials = paths_trials_lock(root);
	char *db = paths_state_db(root), *text = NULL, err[512] = "";
	struct generation g = { 0 }, last = { 0 };
	struct state *st = NULL;
	const char *line, *next;
	struct stat sb;
	struct tm tm;
	int lockfd = -1, rc;

	memset(ai, 0, sizeof(*ai));
	ai->prev = ai->recorded = -1;
	if (stat(p, &sb) < 0)
		goto none;
	/* Held shared while reading: no apply begins or ends meanwhile (one starting now waits
	 * 0.1 s). */
	{
		char *lp = paths_lock(root);

		lockfd = open(lp, O_RDONLY | O_CLOEXEC);
		free(lp);
	}
	if (lockfd >= 0 && flock(lockfd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK)
		goto none; /* an apply, rollback or repair runs now */
	if (lock_held(trials))
		goto none; /* a tune between two trials */
	if ((rc = fs_read_file(p, 1 << 20, &text, NULL)) == -ENOENT)
		goto none;
	if (gmtime_r(&sb.st_mtime, &tm))
		strftime(ai->when, sizeof(ai->when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (rc < 0) {
		snprintf(ai->why, sizeof(ai->why), "cannot read %s: %s", p, strerror(-rc));
		goto out;
	}
	for (line = text; line && *line; line = next) {
		size_t len = strcspn(line, "\n");
		int svc;

		next = line[len] ? line + len + 1 : NULL;
		if (sscanf(line, "prev %ld", &ai->prev) == 1)
			continue;
		if (len == 5 && strncmp(line, "trial", 5) == 0)
			ai->trial = true;
		else if (sscanf(line, "restart %d", &svc) == 1 && svc >= 0 && svc < SVC_COUNT)
			ai->restarts |= 1u << svc;
		else if (len > 5 && strncmp(line, "file ", 5) == 0) {
			ai->files = xreallocarray(ai->files, ai->nfiles + 1, sizeof(*ai->files));
			ai->files[ai->nfiles].path = xasprintf("%.*s", (int)(len - 5), line + 5);
			ai->files[ai->nfiles++].gen = APPLY_FILE_OTHER;
		}
	}
	if (ai->prev < 0) {
		snprintf(ai->why, sizeof(ai->why), "%s names no generation", p);
		goto out;
	}
	if (stat(db, &sb) < 0 || state_open(root, &st, err, sizeof(err)) < 0) {
		snprintf(ai->why, sizeof(ai->why), "cannot read the state %s: %s", db,
			 err[0] ? err : strerror(errno));
		goto out;
	}
	if (state_get_generation(st, ai->prev, &g) < 0) {
		snprintf(ai->why, sizeof(ai->why),
			 "%s names generation %ld, which the state does not keep", p, ai->prev);
		goto out;
	}
	if (state_last_generation(st, &last) == 0 && last.id > ai->prev)
		ai->recorded = last.id;
	for (size_t i = 0; i < ai->nfiles; i++) {
		struct apply_pending_file *f = &ai->files[i];
		const struct gen_file *gf = gen_find(&g, f->path);
		char cur[65], before[65], want[65];

		installed_sha(root, f->path, cur);
		if (!journal_sha(text, "keep", f->path, before))
			snprintf(before, sizeof(before), "%s",
				 gf && gf->present ? gf->sha256 : "-");
		if (journal_sha(text, "new", f->path, want) && strcmp(cur, want) == 0)
			f->gen = APPLY_FILE_NEW;
		else if (strcmp(cur, before) == 0)
			f->gen = APPLY_FILE_PREV;
	}
out:
	generation_clear(&g);
	generation_clear(&last);
	state_close(st);
	if (lockfd >= 0)
		close(lockfd);
	free(text);
	free(db);
	free(p);
	free(trials);
	return 1;
none:
	if (lockfd >= 0)
		close(lockfd);
	free(db);
	free(p);
	free(trials);
	return 0;
}

void
apply_interruption_clear(struct apply_interruption *ai)
{
	size_t i;

	if (!ai)
		return;
	for (i = 0; i < ai->nfiles; i++)
		free(ai->files[i].path);
	free(ai->files);
	memset(ai, 0, sizeof(*ai));
	ai->prev = ai->recorded = -1;
}

int
apply_repair(const struct model *m, const struct apply_opts *o, long *recorded)
{
	struct job j = { .m = m, .o = o, .lockfd = -1, .repair = true, .repaired_as = -1 };
	char serr[512], *p, *trials;
	struct stat sb;
	int status;

	*recorded = -1;
	j.sdir = paths_state_dir(o->root);
	p = paths_pending(o->root);
	trials = paths_trials_lock(o->root);
	if (stat(p, &sb) < 0) {
		status = 0;
		goto out;
	}
	if ((status = lock_acquire(&j, serr, sizeof(serr))) < 0) {
		log_warnx("repair: %s", serr);
		goto out;
	}
	if (lock_held(trials)) {
		log_info("a tune is trying settings now: it puts its configuration back itself");
		status = 0;
		goto out;
	}
	/* Under the lock: another repair, or an apply's own recovery, may have done it. */
	if (stat(p, &sb) < 0) {
		status = 0;
		goto out;
	}
	status = -EIO;
	if (state_open(o->root, &j.st, serr, sizeof(serr)) < 0) {
		log_warnx("repair: %s", serr);
		goto out;
	}
	if (journal_recover(&j) < 0)
		goto out;
	*recorded = j.repaired_as;
	status = 1;
out:
	free(trials);
	free(p);
	apply_job_release(&j);
	return status;
}
