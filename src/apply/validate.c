/* validate.c - the candidates checked before anything is installed: smb.conf through the real
 * testparm (its verdict cached by a key of the text and what it includes), tuned.conf read
 * back, every file's structure; and the checks of the whole apply (share directories, the
 * VFS modules smbd has). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <sys/wait.h>
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

int
validate_precheck(struct job *j, const struct rendered *r)
{
	int rc = check_share_dirs(j);

	if (rc == 0 && !j->o->trial && !j->o->drop_unmanaged)
		rc = adopt_guard(j->o->root, r, j->res->msg, sizeof(j->res->msg));
	return rc < 0 ? rc : check_smb_modules(j, r);
}

int
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
