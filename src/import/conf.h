/* conf.h - inside src/import/: the conversion of the files in force into one nastune.conf,
 * shared by its files: the state it builds (struct cv), the helpers over it (conf.c), and one
 * reader per source (conf_smb.c, conf_afp.c, conf_nfs.c) and the text (conf_emit.c). */
#ifndef NASTUNE_IMPORT_CONF_H
#define NASTUNE_IMPORT_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "import.h"
#include "knobs.h"

#define SMB_FILE "/etc/samba/smb.conf"
/* profile_shares.c refuses these in share names (SHARE_FORBIDDEN) and these names. */
#define NAME_FORBIDDEN "\\/:*?\"<>|[]+=;,%#"

struct cshare {
	char *name, *path, *comment;
	unsigned protos;
	bool read_only, guest, tm;
	char *tm_max; /* as written; NULL none */
	struct strlist users, clients;
	bool fruit_vfs; /* its own vfs objects are the fruit stack nastune renders */
};

struct cv {
	const struct imp_input *in;
	struct imp_result *res;
	struct cshare *sh;
	size_t n;
	struct strlist users;
	char *name, *workgroup, *description, *model;
	struct strlist interfaces;
	char *min_protocol, *signing, *encryption, *cnid;
	bool apple, nfs_ganesha, v3, v4, versions_set;
	struct strlist knob_keys, knob_values; /* "smb.use_sendfile", "yes" */
	struct buf site_global;		       /* the site include's [global] lines */
	const char *site_section;	       /* the section the site buffer is in */
};

#define NOTE(cv, file, line, ...) diag_warning(&(cv)->res->notes, (file), (line), __VA_ARGS__)

/* Share names Samba reserves. */
extern const char *const cv_reserved[];

/* conf.c: values checked as nastune.conf accepts them, shares found or made, a line kept. */
bool cv_ifname_ok(const char *v);
bool cv_knob_set(struct cv *cv, const struct knob *k, const char *value, const char *file,
		 int line);
bool cv_netbios_ok(const char *v);
bool cv_path_ok(const char *v);
bool cv_share_name_ok(const char *v);
bool cv_user_ok(const char *v);
bool cv_word_in(const char *v, const char *const *words);
bool cv_words_into(const char *v, bool (*ok)(const char *), struct strlist *l);
const char *cv_value_or(const struct ini_section *sec, const char *key);
struct cshare *cv_share_by_name(struct cv *cv, const char *name);
struct cshare *cv_share_by_path(struct cv *cv, const char *path);
struct cshare *cv_share_new(struct cv *cv, const char *name, const char *path);
void cv_keep_smb(struct cv *cv, const char *section, const char *path, const char *key,
		 const char *value);
void cv_raw_where(const struct cv *cv, const char *section, const char *key, const char **file,
		  int *line);
void cv_set(char **dst, const char *v);

/* One reader per source, each into cv. */
void cv_smb_shares(struct cv *cv, const struct imp_served *srv);
void cv_smb_global(struct cv *cv);
void cv_smb_fruit_notes(struct cv *cv);
void cv_afp_all(struct cv *cv, const struct imp_served *srv);
void cv_nfs_all(struct cv *cv, const struct imp_served *srv);

/* conf_emit.c: cv as nastune.conf, into cv->res. */
void cv_emit(struct cv *cv);

#endif
