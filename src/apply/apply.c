/* apply.c - safe installation of the rendered files, generations and rollback.
 *
 * Order of an apply: render (caller) -> compare -> [dry run stops here] -> lock -> recover an
 * interrupted apply -> back up the distro's files once (generation 0) -> validate candidates
 * -> journal -> install atomically -> reload -> check -> record the generation -> drop the
 * journal. The journal names the generation to go back to: if the process dies anywhere
 * between journal and record, the next run restores that generation before doing anything.
 *
 * A service is restarted instead of reloaded when a file change alters a line that sets a
 * restart-class knob's parameter (knob_restart_changes): decided by comparing the installed
 * file with its replacement, so apply, undo, rollback and journal recovery all decide alike
 * and no state is kept for it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

void
apply_crash_point(const char *step)
{
	debug_crash(step);
}

int
apply_fail(struct job *j, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->res->msg, sizeof(j->res->msg), fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- journal ---- */

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

/* The journal: the generation to restore (prev), and every file this apply writes (with the
 * SHA-256 of what it writes, "-" for a removal). Written durably before the first file is
 * installed (fs_write_atomic: the file, then its directory), so a power cut anywhere after
 * leaves a journal that names every file it may have changed. A file
 * that is not as prev recorded it (prev does not list it, or it was edited since) has its
 * state now (absent, or a copy under pending.keep) kept with the journal, and undoing puts
 * that back: undoing is "as before this apply", which restoring prev is not for such a file.
 * Restoring prev deleted a file it did not list: a dry-run tune's trials deleted a tuned.conf
 * written by hand and not applied yet (its trials write tuned.conf, and the last generation
 * had none), and a failed apply that enabled AFP deleted the distribution's afp.conf; and it
 * undid an edit made by hand since prev (a tuned.conf edited, then a dry-run tune). */
static int
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

/* Notes in the journal that service i is about to be stopped and started again: should the
 * process die in between, recovery starts it (the daemon would otherwise stay down). */
static void
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

/* The restart of service i came back: its note has done its work. Left in the journal, every
 * later trial's recovery would restart the service again (and note it again), though its
 * files say nothing new: a tune's windows restarted Ganesha and afpd at every switch once one
 * trial had restarted them. A failure here only costs one needless restart. */
static void
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

/* Dropped durably only after what ends the apply is (its generation, or the restored files):
 * a journal that a power cut brings back would otherwise undo a finished apply at the next
 * repair. */
static void
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

static void reload_services(struct job *j, unsigned mask, bool undoing);

/* Records what recover() put back as a new generation: g's configuration, hardware and MTU,
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

/* Restores the journal's generation for the journal's files, then reloads them (j->repair:
 * records that as a generation before dropping the journal). A journal whose apply recorded
 * a generation after it was written belongs to an apply that finished and died before
 * dropping it: it is only dropped. */
static int
recover(struct job *j)
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

/* ---- validation ---- */

/* The smb.conf texts testparm approved in this process, for a tune's trials: they switch
 * between the same two texts many times a window, and testparm is a large part of what a
 * switch costs. The key is the SHA-256 of what testparm reads: the text and every file
 * it includes (the site's local.conf, which an admin may edit during a tune), as testparm
 * finds them. A real apply (not a trial) always runs testparm. */
#define APPROVED_MAX 8
static char approved[APPROVED_MAX][65];
static size_t napproved;

void
apply_testparm_key(const struct rfile *f, char out[65])
{
	struct buf b;
	const char *line, *end = f->data + f->len;

	buf_init(&b);
	buf_add(&b, f->data, f->len);
	for (line = f->data; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line)), *p = line, *q;
		const char *stop = nl ? nl : end;
		char path[4096], *text = NULL;
		size_t len = 0;

		while (p < stop && (*p == ' ' || *p == '\t'))
			p++;
		if ((size_t)(stop - p) > 7 && strncasecmp(p, "include", 7) == 0) {
			for (p += 7; p < stop && (*p == ' ' || *p == '\t'); p++)
				;
			if (p < stop && *p == '=') {
				for (p++; p < stop && (*p == ' ' || *p == '\t'); p++)
					;
				for (q = stop;
				     q > p && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\r'); q--)
					;
				snprintf(path, sizeof(path), "%.*s", (int)(q - p), p);
				buf_addc(&b, '\0');
				buf_adds(&b, path);
				buf_addc(&b, '\0');
				if (fs_read_file(path, 1 << 20, &text, &len) == 0)
					buf_add(&b, text, len);
				else
					buf_adds(&b, "(unreadable)");
				free(text);
			}
		}
		line = nl ? nl + 1 : end;
	}
	hash_sha256_hex(b.data, b.len, out);
	buf_clear(&b);
}

static bool
smb_approved(const char *sum)
{
	for (size_t i = 0; i < napproved && i < APPROVED_MAX; i++)
		if (strcmp(approved[i], sum) == 0)
			return true;
	return false;
}

/* smb.conf through Samba's own parser. */
static int
validate_smb(struct job *j, const struct rfile *f, char *err, size_t errlen)
{
	char *cand, *out, *argv[] = { "testparm", "-s", "--suppress-prompt", NULL, NULL };
	struct proc p = PROC_INIT(argv);
	char *text = NULL, sum[65];
	int rc, st = 0;

	apply_testparm_key(f, sum);
	if (j->o->trial && smb_approved(sum)) {
		log_debug("smb.conf %.12s: testparm approved the same text and includes before",
			  sum);
		return 0;
	}
	cand = paths_state(j->o->root, "candidate-smb.conf");
	out = paths_state(j->o->root, "testparm.out");
	argv[3] = cand;
	if ((rc = fs_write_atomic(cand, f->data, f->len, 0600, 0)) < 0) {
		snprintf(err, errlen, "cannot write the candidate %s: %s", cand, strerror(-rc));
		goto out;
	}
	p.out = PROC_NULL;
	p.err = PROC_FILE;
	p.err_path = out;
	rc = proc_start(&p);
	/* Unvalidated, a text smbd would refuse or misread goes live: no validator, no apply. */
	if (rc == -ENOENT) {
		snprintf(err, errlen,
			 "testparm is not installed, so smb.conf cannot be validated — install "
			 "samba-common-bin");
		goto out;
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot run testparm: %s", strerror(-rc));
		goto out;
	}
	/* A failed wait leaves st unset: it must not read as testparm's approval. */
	if ((rc = proc_finish(&p)) < 0) {
		snprintf(err, errlen, "cannot wait for testparm: %s", strerror(-rc));
		goto out;
	}
	st = p.status;
	rc = 0;
	fs_read_file(out, 1 << 20, &text, NULL);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
	    (text && (strstr(text, "Unknown parameter") || strstr(text, "Ignoring unknown") ||
		      strstr(text, "ERROR")))) {
		char *nl;

		if (text && (nl = strstr(text, "Unknown parameter")))
			;
		else if (text && (nl = strstr(text, "ERROR")))
			;
		else
			nl = text;
		if (nl && *nl)
			snprintf(err, errlen, "testparm rejects it: %.300s", nl);
		else if (WIFEXITED(st))
			snprintf(err, errlen, "testparm rejects it (exit status %d, no message)",
				 WEXITSTATUS(st));
		else
			snprintf(err, errlen, "testparm was killed (signal %d)",
				 WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		for (nl = err; *nl; nl++)
			if (*nl == '\n')
				*nl = ' ';
		rc = -EINVAL;
	} else if (j->o->trial) {
		memcpy(approved[napproved++ % APPROVED_MAX], sum, sizeof(sum));
	}
out:
	free(text);
	unlink(cand);
	unlink(out);
	free(cand);
	free(out);
	return rc;
}

/* tuned.conf must load back: the next run reads it over nastune.conf. */
static int
validate_tuned(const struct rfile *f, char *err, size_t errlen)
{
	struct model *m = model_new();
	struct diag d;
	size_t i;
	int rc;

	diag_init(&d);
	m->tuning.allow_unsafe = true; /* policy is the loader's job; this checks syntax */
	rc = profile_load_tuned_string(m, f->path, f->data, &d);
	for (i = 0; rc < 0 && i < d.n && d.v[i].warning; i++)
		;
	if (rc < 0)
		snprintf(err, errlen, "it does not load back: line %d: %s",
			 i < d.n ? d.v[i].line : 0, i < d.n ? d.v[i].msg : "?");
	diag_clear(&d);
	model_free(m);
	return rc;
}

/* No checker exists for these formats; ours checks the structure they must have. */
static int
validate_structure(const struct rfile *f, char *err, size_t errlen)
{
	size_t i, depth = 0, tags = 0;

	if (memchr(f->data, '\0', f->len)) {
		snprintf(err, errlen, "contains a NUL byte");
		return -EINVAL;
	}
	if (strstr(f->path, "ganesha.conf")) {
		bool quoted = false;

		for (i = 0; i < f->len; i++) {
			if (f->data[i] == '"')
				quoted = !quoted;
			else if (!quoted && f->data[i] == '{')
				depth++;
			else if (!quoted && f->data[i] == '}' && depth-- == 0)
				break;
		}
		if (depth || quoted) {
			snprintf(err, errlen, "unbalanced braces or quotes");
			return -EINVAL;
		}
	} else if (strstr(f->path, ".service")) {
		for (i = 0; i + 1 < f->len; i++)
			if (f->data[i] == '<' && f->data[i + 1] != '!' && f->data[i + 1] != '?')
				tags++;
		if (!strstr(f->data, "<service-group>") || !strstr(f->data, "</service-group>") ||
		    tags % 2) {
			snprintf(err, errlen, "not a well-formed Avahi service group");
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- services ---- */

/* Reloads service i, or restarts it when a change needs that (restart_mask). A backend that
 * needs a start command and has none reloads instead; warn: say so when the daemon is running
 * (it may keep the old values). force: start it even when it is not running (undoing this
 * job's restart). Sets *restarted. Returns as the backend: 0, 1 (not running), -errno. */
static int
reload_or_restart(struct job *j, int i, bool force, bool warn, bool *restarted, char *err,
		  size_t errlen)
{
	const struct service_backend *be = service_backend(j->m, j->o->root, i);
	const struct service_desc *d = service_desc(j->m, i);
	const char *pidfile = service_pidfile(j->m, i), *start = service_start(j->m, i);
	int rc;

	*restarted = false;
	if (j->force_mask & (1u << i)) {
		/* An interrupted restart: whatever else changed, it must run again. */
		force = true;
		if (!(j->restart_mask & (1u << i)))
			snprintf(j->restart_why[i], sizeof(j->restart_why[i]),
				 "an interrupted "
				 "restart");
		j->restart_mask |= 1u << i;
	}
	if (!(j->restart_mask & (1u << i)))
		return be->reload(j->o->root, d, pidfile, err, errlen);
	if (be->needs_start && !start) {
		rc = be->reload(j->o->root, d, pidfile, err, errlen);
		if (rc == 0 && warn)
			log_warnx("%s: %s changed, which only a restart picks up, and services.%s."
				  "start is not set: reloaded instead, so the running %s may keep "
				  "the old value — set services.%s.start = \"...\" (the command "
				  "that starts %s) or restart %s yourself",
				  d->daemon, j->restart_why[i], svc_name(i), d->daemon, svc_name(i),
				  d->daemon, d->daemon);
		return rc;
	}
	journal_note_restart(j, i);
	rc = be->restart(j->o->root, d, pidfile, start, force, err, errlen);
	if (rc != 1)
		j->touched_mask |= 1u << i;
	*restarted = rc == 0;
	if (rc == 0)
		journal_forget_restart(j, i);
	return rc;
}

/* Puts services back without checking them, reporting no errors: journal recovery reloads,
 * or restarts what restart_mask names. undoing (a failed apply, its files restored): only
 * what this job restarted (touched_mask, started even when a failed restart left it stopped)
 * or a recovery owes a restart (owed_mask) runs other values than the restored files, so
 * only those restart; the rest reload. */
static void
reload_services(struct job *j, unsigned mask, bool undoing)
{
	unsigned touched = j->touched_mask;
	int i;

	if (undoing)
		j->restart_mask &= touched | j->owed_mask;
	for (i = 0; i < SVC_COUNT; i++) {
		const struct service_backend *be;
		const struct service_desc *d;
		char err[512] = "";
		bool restarted;

		if (!(mask & (1u << i)))
			continue;
		be = service_backend(j->m, j->o->root, i);
		d = service_desc(j->m, i);
		if (!be || strcmp(d->action, "none") == 0)
			continue;
		reload_or_restart(j, i, undoing && (touched & (1u << i)), !undoing, &restarted, err,
				  sizeof(err));
		if (restarted)
			log_info("%s: restarted (%s backend): %s changed", d->daemon, be->name,
				 j->restart_why[i]);
	}
}

/* Reloads (or restarts) and checks each affected service. Returns 0 or -1 with what failed
 * in err. */
static int
reload_and_check(struct job *j, char *err, size_t errlen)
{
	/* A tune switches trials hundreds of times: a line each only with -v. */
	void (*say)(const char *, ...) __attribute__((format(printf, 1, 2))) =
		j->o->trial ? log_debug : log_info;
	int i;

	for (i = 0; i < SVC_COUNT; i++) {
		const struct service_backend *be;
		const struct service_desc *d;
		const char *pidfile;
		bool restarted;
		int rc;

		if (!(j->svc_mask & (1u << i)))
			continue;
		be = service_backend(j->m, j->o->root, i);
		d = service_desc(j->m, i);
		if (strcmp(d->action, "none") == 0)
			continue; /* tuned.conf: read by nastune itself, next run */
		pidfile = service_pidfile(j->m, i);
		apply_crash_point("reload");
		rc = reload_or_restart(j, i, false, true, &restarted, err, errlen);
		if (rc == 1 && i == SVC_MDNS) {
			log_warnx("avahi-daemon is not running: the Bonjour records are written to "
				  "%s/etc/avahi/services and will be published when it starts",
				  j->o->root);
			continue;
		}
		if (rc == 1 && strcmp(d->action, "sysctl") == 0) {
			log_info("sysctl: %s not loaded into the kernel (%s); it takes effect at "
				 "boot",
				 RENDER_SYSCTL_PATH,
				 *j->o->root ? "--root is a staging "
					       "root"
					     : "none backend");
			continue;
		}
		if (rc == 1) {
			log_info("%s: not running (%s backend); its new files take effect when it "
				 "starts",
				 d->daemon, be->name);
			continue;
		}
		if (rc < 0)
			return -1;
		if ((rc = be->check(j->o->root, d, pidfile, j->listening[i],
				    restarted	  ? SVC_CHECK_RESTART
				    : j->o->trial ? SVC_CHECK_TRIAL
						  : SVC_CHECK_RELOAD,
				    err, errlen)) < 0)
			return -1;
		j->reloaded_mask |= 1u << i;
		if (restarted) {
			j->restarted_mask |= 1u << i;
			say("%s: restarted (%s backend): %s changed", d->daemon, be->name,
			    j->restart_why[i]);
		} else {
			say("%s: reloaded (%s backend)", d->daemon, be->name);
		}
	}
	return 0;
}

/* Which of the services in svc_mask listen now: they must listen again after the change. */
static void
note_listening(struct job *j)
{
	int i;

	for (i = 0; i < SVC_COUNT; i++)
		if (j->svc_mask & (1u << i))
			j->listening[i] = service_desc(j->m, i)->port &&
					  service_port_listening(service_desc(j->m, i)->port);
}

/* ---- the apply ---- */

static void
add_change(struct job *j, const struct rfile *f, const char *path, bool exists)
{
	struct change *c;

	j->ch = xreallocarray(j->ch, j->nch + 1, sizeof(*j->ch));
	c = &j->ch[j->nch++];
	c->f = f;
	c->path = xstrdup(path);
	c->abs = fs_rooted(j->o->root, path);
	c->exists = exists;
	j->svc_mask |= 1u << (f ? f->svc : gen_svc_of_path(path));
}

static void
job_release(struct job *j)
{
	bool opened = j->st != NULL;
	size_t i;

	for (i = 0; i < j->nch; i++) {
		free(j->ch[i].path);
		free(j->ch[i].abs);
	}
	free(j->ch);
	netif_mtu_report_clear(&j->mtu);
	state_close(j->st);
	j->st = NULL;
	/* The database as this job leaves it, for the next --if-changed; still under the lock
	 * (exclusive whenever the state was opened with it), so no generation moves meanwhile. */
	if (opened && j->lockfd >= 0)
		state_head_stamp_write(j->o->root);
	if (j->lockfd >= 0)
		close(j->lockfd);
	free(j->sdir);
}

/* Compares the rendered set with disk; stale nastune-owned files of the last generation too. */
static int
compute_changes(struct job *j, const struct rendered *r, const struct generation *last)
{
	size_t i, k;

	for (i = 0; i < r->n; i++) {
		char *abs = fs_rooted(j->o->root, r->f[i].path), *cur = NULL;
		size_t len = 0;
		int rc = fs_read_file(abs, FILE_MAX, &cur, &len);

		if (rc < 0 && rc != -ENOENT) {
			log_warnx("apply: cannot read %s: %s", abs, strerror(-rc));
			free(abs);
			return -1;
		}
		if (rc == -ENOENT || len != r->f[i].len || memcmp(cur, r->f[i].data, len) != 0) {
			add_change(j, &r->f[i], r->f[i].path, rc == 0);
			restart_note(j, r->f[i].path, rc == 0 ? cur : NULL, len, r->f[i].data,
				     r->f[i].len);
		}
		free(cur);
		free(abs);
	}
	for (i = 0; last && i < last->nfiles; i++) {
		const struct gen_file *gf = &last->files[i];
		bool rendered = false;
		struct stat st;
		char *abs;

		if (!gf->present || !render_optional_path(gf->path))
			continue;
		for (k = 0; k < r->n; k++)
			rendered |= strcmp(r->f[k].path, gf->path) == 0;
		abs = fs_rooted(j->o->root, gf->path);
		if (!rendered && stat(abs, &st) == 0)
			add_change(j, NULL, gf->path, true);
		free(abs);
	}
	return 0;
}

int
apply_undo(struct job *j, long prev, const char *step, const char *what, const char *cause)
{
	struct generation g;
	size_t i;
	int bad = 0;

	apply_fail(j, -EIO, "apply failed at %s: %s: %s", step, what, cause);
	log_warnx("%s; restoring generation %ld", j->res->msg, prev);
	if (state_get_generation(j->st, prev, &g) == 0) {
		char *p = paths_pending(j->o->root), *journal = NULL;

		if (fs_read_file(p, 1 << 20, &journal, NULL) < 0)
			journal = NULL;
		for (i = 0; i < j->nch; i++) {
			int rc = journal ? journal_restore_kept(j, journal, j->ch[i].path) : 1;

			if (rc == 1)
				rc = gen_restore_file(j, &g, j->ch[i].path);
			if (rc < 0)
				bad++;
		}
		free(journal);
		free(p);
		generation_clear(&g);
	} else {
		bad = 1;
	}
	if (bad) {
		log_warnx("could not restore every file of generation %ld; the journal is kept so "
			  "the next run retries",
			  prev);
		return -EIO;
	}
	if (!j->o->no_reload)
		reload_services(j, j->svc_mask, true);
	journal_drop(j);
	j->res->rolled_back = true;
	log_warnx("restored generation %ld; nothing else was changed", prev);
	return -EIO;
}

/* Refuses shares whose directory is missing or not a directory (under the root), naming
 * where each share is defined. Samba would refuse them at connect, Ganesha and afpd at
 * export; apply does not create them (README: a missing directory is most often an
 * unmounted disk or a typo). Returns 0 or -EINVAL with every one in the message. */
static int
check_share_dirs(struct job *j)
{
	const struct model *m = j->m;
	size_t i, used = 0, bad = 0;

	for (i = 0; i < m->n_shares; i++) {
		const struct share *s = &m->shares[i];
		const struct loc *l = s->loc_path.file ? &s->loc_path : &s->loc;
		char *abs;
		struct stat st;
		const char *why = NULL;

		if (!(s->protocols &
		      ((m->smb.enabled ? PROTO_SMB : 0) | (m->nfs.enabled ? PROTO_NFS : 0) |
		       (m->afp.enabled ? PROTO_AFP : 0))))
			continue;
		abs = fs_rooted(j->o->root, s->path);
		if (stat(abs, &st) < 0)
			why = errno == ENOENT ? "does not exist" : strerror(errno);
		else if (!S_ISDIR(st.st_mode))
			why = "is not a directory";
		if (why) {
			used += snprintf(j->res->msg + used,
					 used < sizeof(j->res->msg) ? sizeof(j->res->msg) - used
								    : 0,
					 "%s%s:%d: share \"%s\": "
					 "path %s %s: create it with the owner and mode its users "
					 "need (or mount its disk), or correct the path",
					 bad ? "\n" : "", l->file ? l->file : "?", l->line, s->name,
					 abs, why);
			bad++;
		}
		free(abs);
	}
	return bad ? -EINVAL : 0;
}

/* The VFS modules of a smb.conf about to change must be installed (smbmod.h). Reads only. */
static int
check_smb_modules(struct job *j, const struct rendered *r)
{
	size_t i, len;
	int rc;

	for (i = 0; i < r->n; i++) {
		const struct rfile *f = &r->f[i];
		char *cur, *abs;
		bool same;

		if (f->svc != SVC_SMB)
			continue;
		cur = restart_read_installed(j, f->path, &len);
		same = cur && len == f->len && memcmp(cur, f->data, len) == 0;
		free(cur);
		if (same)
			continue;
		abs = fs_rooted(j->o->root, f->path);
		rc = smbmod_check(abs, f->data, f->len, j->res->msg, sizeof(j->res->msg));
		free(abs);
		if (rc == 1)
			log_warnx("smbd is not installed: the VFS modules smb.conf names are not "
				  "checked");
		else if (rc < 0)
			return rc == -ENOENT ? -EINVAL : rc;
	}
	return 0;
}

/* What the configuration needs from this host, before anything (the lock and the state
 * directory included) is written. Returns 0, -EINVAL (refused), -errno. */
static int
precheck(struct job *j, const struct rendered *r)
{
	int rc = check_share_dirs(j);

	if (rc == 0 && !j->o->trial && !j->o->drop_unmanaged)
		rc = adopt_guard(j->o->root, r, j->res->msg, sizeof(j->res->msg));
	return rc < 0 ? rc : check_smb_modules(j, r);
}

static const unsigned svc_proto[SVC_COUNT] = {
	[SVC_SMB] = PROTO_SMB, [SVC_NFS] = PROTO_NFS, [SVC_AFP] = PROTO_AFP
};

/* Asks for every share over each protocol whose daemon this apply reloaded and that listens
 * on its port: only those serve the new files here (under --root with no daemons, or with
 * --no-reload, nothing is asked; a protocol whose files changed but was not reloaded is
 * listed as not proven, with why). Returns 0 or -ENOENT with the first refusal in the
 * message. */
static int
prove_served(struct job *j)
{
	struct apply_result *res = j->res;
	unsigned protos = 0;
	size_t i, k;
	int s;

	for (s = 0; s < SVC_COUNT; s++) {
		const struct service_desc *d = service_desc(j->m, s);
		const char *why = NULL;

		if (!svc_proto[s] || !(j->svc_mask & (1u << s)) || !model_uses(j->m, svc_proto[s]))
			continue;
		if (j->o->no_reload)
			why = "--no-reload";
		else if (!(j->reloaded_mask & (1u << s)))
			why = "not running";
		else if (!d->port || !service_port_listening(d->port))
			why = "not listening";
		if (!why) {
			protos |= svc_proto[s];
			continue;
		}
		for (k = 0; k < j->m->n_shares; k++) {
			struct served_proof *p;

			if (!(j->m->shares[k].protocols & svc_proto[s]))
				continue;
			res->proofs =
				xreallocarray(res->proofs, res->nproofs + 1, sizeof(*res->proofs));
			p = &res->proofs[res->nproofs++];
			p->share = xstrdup(j->m->shares[k].name);
			p->proto = svc_name(s);
			p->state = SERVED_SKIPPED;
			p->answer =
				xasprintf("%s was not reloaded by this apply (%s)", d->daemon, why);
		}
	}
	if (!protos)
		return 0;
	i = res->nproofs;
	if (served_prove(j->m, protos, &res->proofs, &res->nproofs) == 0)
		return 0;
	for (; i < res->nproofs; i++)
		if (res->proofs[i].state == SERVED_NO)
			break;
	snprintf(res->msg, sizeof(res->msg), "share \"%s\" is not served over %s: %s",
		 res->proofs[i].share, res->proofs[i].proto, res->proofs[i].answer);
	return -ENOENT;
}

/* Hands the job's changes and service masks to the result. */
static void
fill_result(struct job *j)
{
	struct apply_result *res = j->res;
	size_t i;

	res->changes = xcalloc(j->nch ? j->nch : 1, sizeof(*res->changes));
	for (i = 0; i < j->nch; i++) {
		struct apply_change *c = &res->changes[i];

		c->path = xstrdup(j->ch[i].path);
		c->abs = xstrdup(j->ch[i].abs);
		c->act = !j->ch[i].f	   ? APPLY_REMOVED
			 : j->ch[i].exists ? APPLY_UPDATED
					   : APPLY_CREATED;
		c->data = j->ch[i].f ? j->ch[i].f->data : NULL;
		c->len = j->ch[i].f ? j->ch[i].f->len : 0;
	}
	res->nchanges = j->nch;
	res->changed = j->svc_mask;
	res->needs_restart = j->restart_mask;
	memcpy(res->restart_why, j->restart_why, sizeof(res->restart_why));
}

void
apply_result_clear(struct apply_result *res)
{
	size_t i;

	if (!res)
		return;
	for (i = 0; i < res->nchanges; i++) {
		free(res->changes[i].path);
		free(res->changes[i].abs);
	}
	free(res->changes);
	netif_mtu_report_clear(&res->mtu);
	served_proofs_free(res->proofs, res->nproofs);
	memset(res, 0, sizeof(*res));
	res->generation = res->prev = -1;
}

/* Validates every changed file with its checker. Returns 0 or -EIO with the message. */
static int
validate_all(struct job *j)
{
	char err[1024];
	size_t i;
	int rc;

	for (i = 0; i < j->nch; i++) {
		if (!j->ch[i].f)
			continue;
		err[0] = '\0';
		if (j->ch[i].f->svc == SVC_SMB)
			rc = validate_smb(j, j->ch[i].f, err, sizeof(err));
		else if (strcmp(j->ch[i].f->path, RENDER_TUNED_PATH) == 0)
			rc = validate_tuned(j->ch[i].f, err, sizeof(err));
		else
			rc = validate_structure(j->ch[i].f, err, sizeof(err));
		if (rc < 0)
			return apply_fail(j, -EIO,
					  "apply failed at validate: %s: %s; nothing was changed",
					  j->ch[i].abs, err);
	}
	return 0;
}

/* Installs every change atomically. Returns 0 or -errno after undoing. */
static int
install_all(struct job *j, long prev)
{
	size_t i;
	int rc;

	for (i = 0; i < j->nch; i++) {
		struct change *c = &j->ch[i];

		if (!c->f) {
			rc = unlink(c->abs) < 0 && errno != ENOENT ? -errno : 0;
		} else {
			rc = gen_mkparent(c->abs);
			if (rc == 0)
				rc = fs_write_atomic(c->abs, c->f->data, c->f->len,
						     render_file_mode(c->path), 1);
		}
		if (rc < 0)
			return apply_undo(j, prev, "install", c->abs, strerror(-rc));
		log_debug("installed %s", c->abs);
		apply_crash_point("install");
	}
	return 0;
}

/* The dry run: reads only (the state directory may not even exist yet). */
static int
dry_run(struct job *j, const struct rendered *r)
{
	struct generation last = { 0 };
	bool have_last = false;
	char serr[512], *db = paths_state_db(j->o->root);
	struct stat st;
	int rc;

	if (stat(db, &st) == 0 && state_open(j->o->root, &j->st, serr, sizeof(serr)) == 0)
		have_last = state_last_generation(j->st, &last) == 0;
	free(db);
	rc = compute_changes(j, r, have_last ? &last : NULL);
	if (rc == 0)
		fill_result(j);
	generation_clear(&last);
	return rc;
}

/* The first run keeps the distro's own files once, restorable with `rollback 0`. */
static int
backup_originals(struct job *j, const struct rendered *r, const struct hwinfo *hw)
{
	char **bp = xcalloc(r->n + 1, sizeof(*bp));
	size_t i;
	int rc;

	for (i = 0; i < r->n; i++)
		bp[i] = r->f[i].path;
	rc = gen_record(j, 0, "original files", "", hw, bp, r->n, NULL);
	free(bp);
	if (rc < 0)
		return apply_fail(j, rc,
				  "apply failed at backup: cannot keep the original files under "
				  "%s: %s; nothing was changed",
				  j->sdir, strerror(-rc));
	return 0;
}

/* Records the applied set as a new generation, drops the journal and prunes. */
static int
record_applied(struct job *j, const struct rendered *r, const char *ihash, const struct hwinfo *hw,
	       long prev)
{
	char **paths = xcalloc(r->n + j->nch + 1, sizeof(*paths));
	size_t i, n = 0;
	int rc;

	for (i = 0; i < r->n; i++)
		paths[n++] = r->f[i].path;
	for (i = 0; i < j->nch; i++)
		if (!j->ch[i].f)
			paths[n++] = j->ch[i].path;
	rc = gen_record(j, -1, j->o->reason ? j->o->reason : "apply", ihash, hw, paths, n,
			&j->res->generation);
	free(paths);
	if (rc < 0)
		return apply_undo(j, prev, "record", j->sdir, strerror(-rc));
	apply_crash_point("record");
	journal_drop(j);
	gen_prune(j);
	return 0;
}

/* After the lock and recovery: compare, check, back up, validate, journal, install, reload,
 * prove, MTU, record. Returns 0 or -errno with the message. */
static int
apply_locked(struct job *j, const struct rendered *r, const char *ihash, const struct hwinfo *hw,
	     struct generation *last)
{
	const struct model *m = j->m;
	const struct apply_opts *o = j->o;
	bool have_last = state_last_generation(j->st, last) == 0;
	char err[1024] = "";
	long prev;
	int rc;

	if ((rc = compute_changes(j, r, have_last ? last : NULL)) < 0)
		return apply_fail(
			j, rc, "apply: cannot compare the rendered files with the installed ones");
	fill_result(j);
	if (o->trial && j->nch == 0 && have_last) {
		/* Only what the journal restored changed: reload (or restart) it. */
		note_listening(j);
		if (j->svc_mask && !o->no_reload && reload_and_check(j, err, sizeof(err)) < 0)
			return apply_fail(j, -EIO, "apply: trial: %s", err);
		return 0;
	}
	if (j->nch == 0 && !netmtu_managed(m) && have_last) {
		log_info("nothing to do: the installed files match the configuration");
		return 0;
	}
	if (!have_last) {
		if (j->nch == 0 && !netmtu_managed(m))
			log_info("nothing to do: the installed files match the configuration "
				 "(recording them as generation 0)");
		if ((rc = backup_originals(j, r, hw)) < 0)
			return rc;
		have_last = state_last_generation(j->st, last) == 0;
		if (j->nch == 0 && !netmtu_managed(m))
			return 0;
	}
	j->res->prev = prev = last->id;
	apply_crash_point("backup");
	if (j->nch) {
		if ((rc = validate_all(j)) < 0)
			return rc;
		apply_crash_point("validate");
		if ((rc = gen_extend_originals(j)) < 0)
			return apply_fail(j, rc,
					  "apply failed at backup: cannot keep an original file "
					  "under %s: %s; nothing was changed",
					  j->sdir, strerror(-rc));
		note_listening(j);
		if ((rc = journal_write(j, last)) < 0)
			return apply_fail(j, rc,
					  "apply failed at journal: %s/pending: %s; nothing was "
					  "changed",
					  j->sdir, strerror(-rc));
		apply_crash_point("journal");
		if ((rc = install_all(j, prev)) < 0)
			return rc;
		if (!o->no_reload && reload_and_check(j, err, sizeof(err)) < 0)
			return apply_undo(j, prev, "reload", "service", err);
		apply_crash_point("reloaded");
		if (o->trial) {
			/* Not recorded: the journal keeps naming the generation before the
			 * trials, so an interrupted tune (or apply_end_trials) restores it. */
			log_debug("trial installed (%zu file(s))", j->nch);
			return 0;
		}
		if (prove_served(j) < 0) {
			snprintf(err, sizeof(err), "%.1000s", j->res->msg);
			return apply_undo(j, prev, "prove", "served", err);
		}
	}
	if (netmtu_managed(m) && !o->trial && (rc = netmtu_step(j, last, prev)) != 0)
		return rc > 0 ? 0 : rc;
	return record_applied(j, r, ihash, hw, prev);
}

/* --if-changed's answer when it can be had without writing anything (the postinst path runs
 * it on every package install): the lock taken shared, no journal pending, the database read
 * in place, the last generation recorded these inputs and this hardware. False sends the
 * caller the long way (lock held exclusively, recovery, the same comparison), which also
 * covers a first apply, a busy lock and a database to migrate. */
static bool
unchanged_fast(struct job *j, const char *ihash, const char *hwhash)
{
	char *lock = paths_lock(j->o->root), *pending = paths_pending(j->o->root);
	struct state *st = NULL;
	struct generation last = { 0 };
	bool same = false;
	int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) < 0 || access(pending, F_OK) == 0 ||
	    errno != ENOENT)
		goto out;
	/* The head stamp spares opening SQLite (half of this path's cost); without a stamp
	 * written from this very database, unchanged since, the database is read. */
	if (state_head_stamp_read(j->o->root, &last) < 0 &&
	    (state_open_readonly(j->o->root, &st) < 0 || state_last_generation_head(st, &last) < 0))
		goto out;
	same = strcmp(last.inputs_hash, ihash) == 0 && strcmp(last.hw_hash, hwhash) == 0 &&
	       !netmtu_drifted(j->m, &last);
	if (same)
		log_info("nothing to do: configuration, templates, version and hardware are "
			 "unchanged since generation %ld",
			 last.id);
out:
	generation_clear(&last);
	state_close(st);
	if (fd >= 0)
		close(fd);
	free(pending);
	free(lock);
	return same;
}

int
apply_run(const struct model *m, const struct rendered *r, const struct apply_opts *o,
	  struct apply_result *res)
{
	struct apply_result own;
	struct job j = { .m = m, .o = o, .lockfd = -1, .res = res ? res : &own };
	struct generation last = { 0 };
	struct hwinfo hw = { 0 };
	char ihash[65], hwhash[65], serr[512];
	int rc;

	memset(j.res, 0, sizeof(*j.res));
	j.res->generation = j.res->prev = -1;
	j.sdir = paths_state_dir(o->root);
	if ((rc = precheck(&j, r)) < 0)
		goto out;
	if (o->dry_run) {
		rc = dry_run(&j, r);
		goto out;
	}
	gen_inputs_hash(m, r, ihash);
	if ((rc = runrec_read_hw(&hw)) < 0)
		log_warnx("cannot read the hardware fingerprint: %s", strerror(-rc));
	hwinfo_hash(&hw, hwhash);
	if (o->if_changed && !o->trial && unchanged_fast(&j, ihash, hwhash)) {
		rc = 0;
		goto out;
	}
	if ((rc = lock_acquire(&j, serr, sizeof(serr))) < 0) {
		apply_fail(&j, rc, "apply: %s", serr);
		goto out;
	}
	if (o->trial)
		lock_trials_hold(&j);
	apply_crash_point("locked");
	if ((rc = state_open(o->root, &j.st, serr, sizeof(serr))) < 0) {
		apply_fail(&j, -EIO, "apply: %s", serr);
		goto out;
	}
	if ((rc = recover(&j)) < 0) {
		apply_fail(&j, -EIO, "apply: an interrupted apply could not be undone (see above)");
		goto out;
	}
	if (o->if_changed && !o->trial && state_last_generation(j.st, &last) == 0 &&
	    strcmp(last.inputs_hash, ihash) == 0 && strcmp(last.hw_hash, hwhash) == 0 &&
	    !netmtu_drifted(m, &last)) {
		log_info("nothing to do: configuration, templates, version and hardware are "
			 "unchanged since generation %ld",
			 last.id);
		rc = 0;
		goto out;
	}
	generation_clear(&last);
	rc = apply_locked(&j, r, ihash, &hw, &last);
out:
	j.res->reloaded = j.reloaded_mask;
	j.res->restarted = j.restarted_mask;
	if (j.mtu_ran) {
		j.res->mtu_ran = true;
		j.res->mtu = j.mtu;
		memset(&j.mtu, 0, sizeof(j.mtu));
	}
	if (j.res == &own) {
		/* No caller to print it (tune's trials): log it. */
		if (rc < 0)
			log_warnx("%s", own.msg);
		apply_result_clear(&own);
	}
	generation_clear(&last);
	hwinfo_clear(&hw);
	job_release(&j);
	return rc;
}

int
apply_rollback(const struct model *m, long id, const struct apply_opts *o)
{
	struct job j = { .m = m, .o = o, .lockfd = -1 };
	struct generation target = { 0 }, last = { 0 };
	struct hwinfo hw = { 0 };
	char serr[512], err[512], reason[64], **paths = NULL;
	size_t i, k, npaths = 0;
	long newid;
	int status, failed = 0;

	j.sdir = paths_state_dir(o->root);
	if ((status = lock_acquire(&j, serr, sizeof(serr))) < 0) {
		log_warnx("rollback: %s", serr);
		goto out;
	}
	status = -EIO;
	if (state_open(o->root, &j.st, serr, sizeof(serr)) < 0) {
		log_warnx("rollback: %s", serr);
		goto out;
	}
	if (recover(&j) < 0)
		goto out;
	if (state_last_generation(j.st, &last) < 0) {
		log_warnx("rollback: no generation recorded yet — nothing to roll back to");
		status = -ENOENT;
		goto out;
	}
	if (id < 0)
		id = last.id - 1;
	if (id < 0 || state_get_generation(j.st, id, &target) < 0) {
		log_warnx("rollback: generation %ld does not exist — `nastune status` lists the "
			  "kept ones",
			  id);
		status = -ENOENT;
		goto out;
	}
	/* Every file either generation owns. */
	paths = xcalloc(last.nfiles + target.nfiles + 1, sizeof(*paths));
	for (i = 0; i < target.nfiles; i++)
		paths[npaths++] = target.files[i].path;
	for (i = 0; i < last.nfiles; i++) {
		for (k = 0; k < target.nfiles; k++)
			if (strcmp(target.files[k].path, last.files[i].path) == 0)
				break;
		if (k == target.nfiles)
			paths[npaths++] = last.files[i].path;
	}
	for (i = 0; i < npaths; i++)
		add_change(&j, NULL, paths[i], true);
	note_listening(&j);
	for (i = 0; i < npaths; i++)
		if (restart_restore_noting(&j, &target, NULL, paths[i]) < 0)
			failed++;
	if (failed) {
		log_warnx("rollback: %d file(s) could not be restored", failed);
		goto out;
	}
	if (!o->no_reload && reload_and_check(&j, err, sizeof(err)) < 0)
		log_warnx("rollback: files restored, but %s", err);
	if (netmtu_restore(&target) < 0)
		log_warnx("rollback: files restored, but not the MTU (see above)");
	runrec_read_hw(&hw);
	snprintf(reason, sizeof(reason), "rollback to %ld", id);
	if (gen_record(&j, -1, reason, target.inputs_hash, &hw, paths, npaths, &newid) < 0) {
		log_warnx("rollback: files restored but the new generation could not be recorded");
		goto out;
	}
	gen_prune(&j);
	log_info("rolled back to generation %ld (recorded as generation %ld)", id, newid);
	status = 0;
out:
	free(paths);
	generation_clear(&target);
	generation_clear(&last);
	hwinfo_clear(&hw);
	job_release(&j);
	return status;
}

int
apply_end_trials(const struct model *m, const struct apply_opts *o)
{
	struct job j = { .m = m, .o = o, .lockfd = -1 };
	char serr[512], err[1024] = "";
	int status;

	j.sdir = paths_state_dir(o->root);
	if ((status = lock_acquire(&j, serr, sizeof(serr))) < 0) {
		log_warnx("apply: %s", serr);
		goto out;
	}
	status = -EIO;
	if (state_open(o->root, &j.st, serr, sizeof(serr)) < 0) {
		log_warnx("apply: %s", serr);
		goto out;
	}
	if (recover(&j) < 0)
		goto out;
	/* recover() left a trial's services to the next trial: there is none, so they are
	 * reloaded (or restarted) here, back to the values before the trials. */
	if (j.svc_mask && !o->no_reload) {
		note_listening(&j);
		if (reload_and_check(&j, err, sizeof(err)) < 0) {
			log_warnx("the configuration before the trials is restored, but %s", err);
			goto out;
		}
	}
	status = 0;
out:
	lock_trials_release();
	job_release(&j);
	return status;
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
	if (recover(&j) < 0)
		goto out;
	*recorded = j.repaired_as;
	status = 1;
out:
	free(trials);
	free(p);
	job_release(&j);
	return status;
}
