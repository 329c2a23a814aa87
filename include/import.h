/* import.h - what a box serves today, read from the files in force (smb.conf as testparm
 * resolves it, kernel exports, NFS-Ganesha EXPORT blocks, afp.conf, Avahi service files),
 * turned into one nastune.conf, and compared share by share with what another set of files
 * serves. The parsers are pure (text in, struct out, diagnostics into struct diag); reading
 * the files and running testparm is import_read's (src/import/read.c). */
#ifndef NASTUNE_IMPORT_H
#define NASTUNE_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "diag.h"
#include "model.h"

/* Reads the file at path (as the text names it, without any root) for an include; returns
 * 0 with *text (caller frees) or -errno. NULL: includes are kept as plain entries. */
typedef int (*imp_read_fn)(void *ctx, const char *path, char **text, size_t *len);

/* ---- smb.conf and afp.conf: Samba's ini syntax (ini.c) ---- */

struct ini_entry {
	char *key;  /* as written, trimmed */
	char *norm; /* lower case, without blanks ("readonly"): how Samba matches names */
	char *value;
	const char *file; /* into ini.files */
	int line;
};

struct ini_section {
	char *name;
	const char *file;
	int line;
	struct ini_entry *v;
	size_t n;
};

/* Sections in order of first appearance; a section named again is continued, as smbd
 * does. Entries before any section land in "global". */
struct ini {
	struct ini_section *s;
	size_t n;
	struct strlist files; /* every file read, the first one first */
};

/* Parses text (file names it in diagnostics); "include = PATH" lines are followed through rd
 * (a value with a '%' substitution is kept as an entry). Comments start a line with '#' or
 * ';'; a line ending in '\' continues. Returns 0, or -EINVAL after a diag error (the rest is
 * parsed). Release with ini_clear. */
int ini_parse(struct ini *ini, const char *file, const char *text, size_t len, imp_read_fn rd,
	      void *rdctx, struct diag *d);
void ini_clear(struct ini *ini);
/* The section named name (case-insensitive), or NULL. */
const struct ini_section *ini_section(const struct ini *ini, const char *name);
/* The last entry of sec whose name matches key ("read only" matches "readonly"), or NULL. */
const struct ini_entry *ini_get(const struct ini_section *sec, const char *key);
/* Samba's boolean words; -1 when v is none of them. */
int ini_bool(const char *v);
/* A parameter name as Samba matches it: lower case, without blanks; into out. */
void ini_norm(const char *key, char *out, size_t outlen);

/* ---- exports(5) (exports.c) ---- */

struct exp_client {
	char *host; /* "*" for an entry without one */
	char *opts; /* the options in force, comma-separated ("" none) */
};

struct exp_entry {
	char *path;
	struct exp_client *c;
	size_t nc;
	const char *file;
	int line;
};

struct exports {
	struct exp_entry *v;
	size_t n;
	struct strlist files;
};

/* Parses one exports file into e (appending). Returns 0 or -EINVAL after a diag error. */
int exports_parse(struct exports *e, const char *file, const char *text, size_t len,
		  struct diag *d);
void exports_clear(struct exports *e);
/* Whether the comma-separated opts hold word (exactly, or as "word=..."). */
bool exports_opt(const char *opts, const char *word);

/* ---- NFS-Ganesha's block syntax (ganesha.c) ---- */

struct gan_kv {
	char *key;
	char *value; /* unquoted; a list joined with ", " */
	int line;
};

struct gan_block {
	char *name;
	const char *file;
	int line;
	struct gan_kv *kv;
	size_t nkv;
	struct gan_block *sub;
	size_t nsub;
};

struct ganesha {
	struct gan_block top; /* its sub are the file's blocks */
	struct strlist files;
};

/* Parses text; "%include PATH" is followed through rd. Returns 0 or -EINVAL after a diag
 * error. Release with ganesha_clear. */
int ganesha_parse(struct ganesha *g, const char *file, const char *text, size_t len, imp_read_fn rd,
		  void *rdctx, struct diag *d);
void ganesha_clear(struct ganesha *g);
/* The last value of key in b (case-insensitive), or NULL. */
const struct gan_kv *ganesha_get(const struct gan_block *b, const char *key);
/* Whether an EXPORT of cur and one of next have one Path and two Export_Ids (a box adopted
 * from another tool's ganesha.conf): Ganesha's reload adds the new export before it drops
 * the old one and refuses it as a duplicate pseudo path, so only a restart serves it. Pure;
 * includes are not followed. */
bool ganesha_ids_moved(const char *cur, size_t curlen, const char *next, size_t nextlen);

/* ---- Avahi service files (avahi.c) ---- */

/* The service types ("_smb._tcp") one service file publishes, into types. Pure. */
void avahi_service_types(const char *text, size_t len, struct strlist *types);

/* ---- what a set of files serves (shares.c) ---- */

struct imp_share {
	char *name;	/* SMB share or AFP volume name; for NFS the export path */
	unsigned proto; /* one PROTO_* bit */
	char *path;
	bool read_only;
	bool guest;
	struct strlist users; /* valid users, sorted */
	bool tm;
	uint64_t tm_max;	/* bytes; 0: no limit */
	struct strlist clients; /* NFS: who may mount it, sorted */
	char *pseudo;		/* NFS-Ganesha: the NFSv4 path clients mount; NULL: the path */
	/* A share a distribution package ships that serves no one's data yet: [printers] and
	 * other printable shares, [print$], a read-only [homes] (samba's stock one), and an AFP
	 * [Homes] with nothing but its basedir regex (netatalk's stock one). */
	bool stock;
	char *file; /* where it is defined (owned) */
	int line;
};

struct imp_served {
	struct imp_share *v;
	size_t n;
};

/* Appends what each file set serves. */
void imp_served_smb(struct imp_served *s, const struct ini *smb);
void imp_served_afp(struct imp_served *s, const struct ini *afp);
void imp_served_exports(struct imp_served *s, const struct exports *e);
void imp_served_ganesha(struct imp_served *s, const struct ganesha *g);
void imp_served_clear(struct imp_served *s);
/* The share of protocol proto named name (case-insensitive; NFS: the path), or NULL. */
const struct imp_share *imp_served_find(const struct imp_served *s, unsigned proto,
					const char *name);

/* imp_served_compare's flags. */
#define IMP_CMP_SKIP_STOCK (1u << 0) /* shares with stock set are not compared */
#define IMP_CMP_GONE_ONLY (1u << 1)  /* only shares no longer served at all */

/* What from old is lost or changed in new, one "file:line: ..." line each into out ("smb share
 * 'Media' (/srv/media): would no longer be served"; "nfs export '/srv/a': clients ..., would
 * be ..."). Returns how many differences. Pure. */
size_t imp_served_compare(const struct imp_served *old, const struct imp_served *new,
			  unsigned flags, struct buf *out);

/* ---- the files in force, read (read.c) ---- */

struct imp_input {
	bool have_smb, have_afp, have_ganesha;
	struct ini smb;	    /* as `testparm -s` prints the installed smb.conf */
	struct ini smb_raw; /* the installed smb.conf as written, includes followed: lines */
	struct ini afp;
	struct exports exports; /* /etc/exports and /etc/exports.d/ *.exports */
	struct ganesha ganesha;
	struct strlist avahi;	    /* Avahi service files not nastune's */
	struct strlist avahi_types; /* per file, the types it publishes (", "-joined) */
};

/* What nastune renders as a site include when imported shares need one. */
#define IMPORT_SMB_SITE "/etc/samba/smb.conf.d/local.conf"

/* Reads the files in force under root ("" the real system). smb.conf goes through
 * `testparm -s` (its includes resolved as smbd resolves them); the rest through the pure
 * parsers, their includes read under root. Missing files are simply absent. Returns 0, or
 * -errno after a diag error (testparm refuses the file). Release with import_input_clear. */
int import_read(const char *root, struct imp_input *in, struct diag *d);
/* An imp_read_fn for includes: the path under root (a char *), else as written (an include
 * outside the root, as the daemon reads it). */
int import_read_include(void *root, const char *path, char **text, size_t *len);
void import_input_clear(struct imp_input *in);
/* What the files in force serve (import_read's input). */
void import_served(const struct imp_input *in, struct imp_served *s);

/* ---- the nastune.conf (conf.c) ---- */

struct imp_result {
	struct buf conf;   /* nastune.conf */
	struct buf site;   /* the smb.conf site include (IMPORT_SMB_SITE); empty: none needed */
	struct diag notes; /* each line kept or not expressible, "file:line: ..." (warnings) */
};

/* Builds the configuration from in. Pure. Release with import_result_clear. */
void import_conf(const struct imp_input *in, struct imp_result *res);
void import_result_clear(struct imp_result *res);

/* ---- the round trip (check.c) ---- */

struct rendered;
/* What the files in force (in) serve against what would be served once r is installed under
 * root: r's files, the site include and every file nastune leaves alone (/etc/exports, the
 * other exports.d files, a server's file nastune does not render). One "file:line: ..."
 * line per difference into out; returns how many. */
size_t import_check(const char *root, const struct imp_input *in, const struct rendered *r,
		    struct buf *out);

#endif
