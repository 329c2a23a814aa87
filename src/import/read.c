/* read.c - the files in force under a root, read for import: smb.conf through testparm (its
 * defaults and includes resolved by Samba itself) and as written (for file:line), kernel
 * exports, Ganesha's configuration, afp.conf and the Avahi service files nastune did not
 * write. Includes are read at the path they name, as the daemons (and testparm) read them. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/wait.h>

#include "fsutil.h"
#include "import.h"
#include "proc.h"
#include "xmalloc.h"

#define IMPORT_MAX_FILE (4u << 20)

int
import_read_include(void *root, const char *path, char **text, size_t *len)
{
	char *abs = fs_rooted(root, path);
	int rc = fs_read_file(abs, IMPORT_MAX_FILE, text, len);

	if (rc == -ENOENT && root && *(const char *)root)
		rc = fs_read_file(path, IMPORT_MAX_FILE, text, len);
	free(abs);
	return rc;
}

/* Reads root + path; returns 0, -ENOENT, or -errno after a diag error. */
static int
read_rooted(const char *root, const char *path, char **text, size_t *len, struct diag *d)
{
	char *abs = fs_rooted(root, path);
	int rc = fs_read_file(abs, IMPORT_MAX_FILE, text, len);

	if (rc < 0 && rc != -ENOENT)
		diag_error(d, path, 0, "cannot read it: %s", strerror(-rc));
	free(abs);
	return rc;
}

/* The path an "include = PATH" line names, or NULL (another line, or a substitution that
 * only smbd can expand). Caller frees. */
static char *
include_of(const char *l, size_t n)
{
	const char *e = l + n, *q;

	while (l < e && isspace((unsigned char)*l))
		l++;
	if ((size_t)(e - l) < 8 || strncasecmp(l, "include", 7) != 0)
		return NULL;
	for (l += 7; l < e && isspace((unsigned char)*l); l++)
		;
	if (l == e || *l != '=')
		return NULL;
	for (l++; l < e && isspace((unsigned char)*l); l++)
		;
	for (q = e; q > l && isspace((unsigned char)q[-1]); q--)
		;
	return q > l && !memchr(l, '%', (size_t)(q - l)) ? xstrndup(l, (size_t)(q - l)) : NULL;
}

/* text with its includes inlined, each read under root: testparm would read them on the
 * host, outside the root. */
static void
inline_includes(const char *root, const char *text, size_t len, int depth, struct buf *out)
{
	const char *s = text, *end = text + len;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		char *inc = depth < 10 ? include_of(s, n) : NULL, *t = NULL;
		size_t tl;

		if (inc && import_read_include((void *)root, inc, &t, &tl) == 0) {
			inline_includes(root, t, tl, depth + 1, out);
			buf_addc(out, '\n');
		} else if (!inc) {
			buf_add(out, s, n);
			buf_addc(out, '\n');
		}
		free(t);
		free(inc);
		s = nl ? nl + 1 : end;
	}
}

/* The smb.conf testparm reads: the installed one, or under a root a copy with its includes
 * inlined from the root (in *tmp, which the caller removes). */
static char *
testparm_input(const char *root, const char *text, size_t len, char **tmp)
{
	struct buf b;
	int fd;

	*tmp = NULL;
	if (!root || !*root)
		return xstrdup("/etc/samba/smb.conf");
	buf_init(&b);
	inline_includes(root, text, len, 0, &b);
	*tmp = xasprintf("%s/nastune-import-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if ((fd = mkstemp(*tmp)) < 0 || proc_write_all(fd, b.data ? b.data : "", b.len) < 0) {
		if (fd >= 0)
			close(fd);
		free(*tmp);
		*tmp = NULL;
		buf_clear(&b);
		return fs_rooted(root, "/etc/samba/smb.conf");
	}
	close(fd);
	buf_clear(&b);
	return xstrdup(*tmp);
}

static int
read_smb(const char *root, struct imp_input *in, struct diag *d)
{
	char *argv[] = { "testparm", "-s", "--suppress-prompt", NULL, NULL };
	struct proc p = PROC_INIT(argv);
	char *text = NULL, *out = NULL, *abs = NULL, *tmp = NULL;
	size_t len = 0, olen = 0;
	int rc;

	if ((rc = read_rooted(root, "/etc/samba/smb.conf", &text, &len, d)) < 0)
		goto out;
	ini_parse(&in->smb_raw, "/etc/samba/smb.conf", text, len, import_read_include, (void *)root,
		  d);
	argv[3] = abs = testparm_input(root, text, len, &tmp);
	p.err = PROC_NULL;
	p.timeout_ms = 60000;
	rc = proc_capture(&p, IMPORT_MAX_FILE, &out, &olen);
	if (rc == -ENOENT) {
		diag_error(
			d, "/etc/samba/smb.conf", 0,
			"testparm is not installed, so what Samba makes of the file is unknown — "
			"install samba-common-bin");
		goto out;
	}
	if (rc != 0) {
		diag_error(d, "/etc/samba/smb.conf", 0,
			   "testparm -s refuses it (exit status %d) — fix it as testparm says, "
			   "then import again",
			   rc);
		rc = -EINVAL;
		goto out;
	}
	ini_parse(&in->smb, "/etc/samba/smb.conf", out, olen, NULL, NULL, d);
	in->have_smb = true;
out:
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(out);
	free(text);
	free(abs);
	return rc == -ENOENT && !in->have_smb && len == 0 ? 0 : rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in root + dir ending in suffix, sorted (the order exportfs and avahi read them). */
static void
list_dir(const char *root, const char *dir, const char *suffix, struct strlist *out)
{
	char *abs = fs_rooted(root, dir);
	DIR *dp = opendir(abs);
	struct dirent *de;
	size_t sl = strlen(suffix);

	free(abs);
	if (!dp)
		return;
	while ((de = readdir(dp))) {
		size_t n = strlen(de->d_name);

		if (de->d_name[0] != '.' && n > sl && strcmp(de->d_name + n - sl, suffix) == 0)
			strlist_add(out, de->d_name);
	}
	closedir(dp);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

static int
read_exports(const char *root, struct imp_input *in, struct diag *d)
{
	struct strlist names = { 0 };
	char *text = NULL, *path;
	size_t len, i;
	int rc = 0;

	if (read_rooted(root, "/etc/exports", &text, &len, d) == 0 &&
	    exports_parse(&in->exports, "/etc/exports", text, len, d) < 0)
		rc = -EINVAL;
	free(text);
	list_dir(root, "/etc/exports.d", ".exports", &names);
	for (i = 0; i < names.n; i++) {
		path = xasprintf("/etc/exports.d/%s", names.v[i]);
		text = NULL;
		if (read_rooted(root, path, &text, &len, d) == 0 &&
		    exports_parse(&in->exports, path, text, len, d) < 0)
			rc = -EINVAL;
		free(text);
		free(path);
	}
	strlist_clear(&names);
	return rc;
}

static int
read_ini(const char *root, const char *path, struct ini *ini, bool *have, struct diag *d)
{
	char *text = NULL;
	size_t len;
	int rc = read_rooted(root, path, &text, &len, d);

	if (rc == 0) {
		rc = ini_parse(ini, path, text, len, import_read_include, (void *)root, d);
		*have = true;
	}
	free(text);
	return rc == -ENOENT ? 0 : rc;
}

static void
read_avahi(const char *root, struct imp_input *in)
{
	struct strlist names = { 0 };
	size_t i, k;

	list_dir(root, "/etc/avahi/services", ".service", &names);
	for (i = 0; i < names.n; i++) {
		char *path = xasprintf("/etc/avahi/services/%s", names.v[i]), *abs, *text = NULL;
		struct strlist types = { 0 };
		struct buf b;
		size_t len;

		abs = fs_rooted(root, path);
		if (strncmp(names.v[i], "nastune", 7) != 0 &&
		    fs_read_file(abs, IMPORT_MAX_FILE, &text, &len) == 0) {
			avahi_service_types(text, len, &types);
			buf_init(&b);
			for (k = 0; k < types.n; k++)
				buf_printf(&b, "%s%s", k ? ", " : "", types.v[k]);
			strlist_add(&in->avahi, path);
			strlist_add(&in->avahi_types, b.data ? b.data : "");
			buf_clear(&b);
			strlist_clear(&types);
		}
		free(text);
		free(abs);
		free(path);
	}
	strlist_clear(&names);
}

int
import_read(const char *root, struct imp_input *in, struct diag *d)
{
	char *text = NULL;
	size_t len;
	int rc = 0, r;

	memset(in, 0, sizeof(*in));
	if ((r = read_smb(root, in, d)) < 0)
		rc = r;
	if ((r = read_exports(root, in, d)) < 0)
		rc = r;
	if ((r = read_rooted(root, "/etc/ganesha/ganesha.conf", &text, &len, d)) == 0) {
		in->have_ganesha = true;
		if (ganesha_parse(&in->ganesha, "/etc/ganesha/ganesha.conf", text, len,
				  import_read_include, (void *)root, d) < 0)
			rc = -EINVAL;
	} else if (r != -ENOENT) {
		rc = r;
	}
	free(text);
	if ((r = read_ini(root, "/etc/netatalk/afp.conf", &in->afp, &in->have_afp, d)) < 0)
		rc = r;
	read_avahi(root, in);
	return rc;
}

void
import_input_clear(struct imp_input *in)
{
	ini_clear(&in->smb);
	ini_clear(&in->smb_raw);
	ini_clear(&in->afp);
	exports_clear(&in->exports);
	ganesha_clear(&in->ganesha);
	strlist_clear(&in->avahi);
	strlist_clear(&in->avahi_types);
	memset(in, 0, sizeof(*in));
}

void
import_served(const struct imp_input *in, struct imp_served *s)
{
	size_t i;

	if (in->have_smb)
		imp_served_smb(s, &in->smb);
	/* testparm's lines say nothing of the files: each share where it is written. */
	for (i = 0; i < s->n; i++) {
		const struct ini_section *sec = ini_section(&in->smb_raw, s->v[i].name);

		free(s->v[i].file);
		s->v[i].file = xstrdup(sec ? sec->file : "/etc/samba/smb.conf");
		s->v[i].line = sec ? sec->line : 0;
	}
	if (in->have_afp)
		imp_served_afp(s, &in->afp);
	imp_served_exports(s, &in->exports);
	if (in->have_ganesha)
		imp_served_ganesha(s, &in->ganesha);
}
