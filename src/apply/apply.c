/* apply.c - safe installation of the rendered files, generations and rollback: the steps
 * below in order, each in its own file of src/apply/ (job.h names them).
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

void
apply_job_release(struct job *j)
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
		reload_note_listening(j);
		if (j->svc_mask && !o->no_reload && reload_check(j, err, sizeof(err)) < 0)
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
		reload_note_listening(j);
		if ((rc = journal_write(j, last)) < 0)
			return apply_fail(j, rc,
					  "apply failed at journal: %s/pending: %s; nothing was "
					  "changed",
					  j->sdir, strerror(-rc));
		apply_crash_point("journal");
		if ((rc = install_all(j, prev)) < 0)
			return rc;
		if (!o->no_reload && reload_check(j, err, sizeof(err)) < 0)
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
	if ((rc = validate_precheck(&j, r)) < 0)
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
	if ((rc = journal_recover(&j)) < 0) {
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
	apply_job_release(&j);
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
	if (journal_recover(&j) < 0)
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
	reload_note_listening(&j);
	for (i = 0; i < npaths; i++)
		if (restart_restore_noting(&j, &target, NULL, paths[i]) < 0)
			failed++;
	if (failed) {
		log_warnx("rollback: %d file(s) could not be restored", failed);
		goto out;
	}
	if (!o->no_reload && reload_check(&j, err, sizeof(err)) < 0)
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
	apply_job_release(&j);
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
	if (journal_recover(&j) < 0)
		goto out;
	/* journal_recover() left a trial's services to the next trial: there is none, so they are
	 * reloaded (or restarted) here, back to the values before the trials. */
	if (j.svc_mask && !o->no_reload) {
		reload_note_listening(&j);
		if (reload_check(&j, err, sizeof(err)) < 0) {
			log_warnx("the configuration before the trials is restored, but %s", err);
			goto out;
		}
	}
	status = 0;
out:
	lock_trials_release();
	apply_job_release(&j);
	return status;
}
