/* profile_keys.h - inside src/config/: what the files that read nastune.conf share. They
 * alone include libconfig (profile.c and profile_*.c): the small helpers over a setting, the
 * key tables and their walker (profile_keys.c), the value checks (profile_values.c), and the
 * groups one file reads for another's table. */
#ifndef NASTUNE_CONFIG_PROFILE_KEYS_H
#define NASTUNE_CONFIG_PROFILE_KEYS_H

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>

#include "knobs.h"
#include "load.h"
#include "model.h"

/* An error at the place s was read from. */
#define ERR(ld, s, ...) diag_error((ld)->d, pf_sfile(ld, s), pf_sline(s), __VA_ARGS__)

enum kind { K_ANY, K_STR, K_BOOL, K_INT, K_GROUP, K_LIST };

/* How a key's value is read. */
enum ftype {
	F_STR,	   /* a string, checked by check then pf_check_text, into a char * */
	F_WORD,	   /* one of words (any case), kept as the canonical word, into a char * */
	F_ENUM,	   /* one of words, kept as its index, into an enum */
	F_BOOL,	   /* true/false, into a bool */
	F_STRLIST, /* a list of strings, each checked by check, into a struct strlist */
	F_GROUP,   /* a group with keys of its own: sub, over the same base */
	F_FUNC,	   /* anything else: load reads it, once its kind is checked */
};

struct field;

/* A value check: true, or false after saying why at s; what is "group.key" (or "...[i]"). */
typedef bool (*value_check)(struct ld *, const config_setting_t *s, const char *what,
			    const char *v);
/* Reads the present key s, of the row's kind, into base; what is "group.key". */
typedef void (*key_loader)(struct ld *, config_setting_t *s, const char *what,
			   const struct field *f, void *base);

/* One key of a group, as Redis's config table: its name, how it is read and checked, and
 * where its value goes, an offset into the group's base (the model, a share, a service's
 * settings). The table's order is the order its keys are read in (so the order of the
 * diagnostics) and the order "did you mean" considers them in. A new group is one more
 * table and an F_GROUP row in its parent's (or an F_FUNC row naming it in .sub: a list of
 * groups is .kind = K_LIST); tests/pkg/doccheck follows the rows to hold nastune.conf(5)
 * to the tables. */
struct field {
	const char *key;
	enum ftype type;
	size_t off;		  /* the value, in base */
	value_check check;	  /* F_STR: before pf_check_text; F_STRLIST: every entry */
	size_t maxlen;		  /* F_STR: pf_check_text's limit; 0: check alone decides */
	const char *forbid;	  /* F_STR: characters pf_check_text refuses */
	const char *const *words; /* F_WORD, F_ENUM */
	size_t loc_off;		  /* F_STRLIST: where the list's struct loc goes; 0: nowhere */
	const struct field *sub;  /* F_GROUP; F_FUNC: the table its loader reads (documented) */
	key_loader load;	  /* F_FUNC */
	enum kind kind;		  /* F_FUNC: what s must be (K_ANY: load checks it) */
	const char *missing;	  /* F_FUNC: the fix when the key is absent; NULL: optional */
	int arg;		  /* F_FUNC: the loader's own */
};

/* F_ENUM writes an int. */
_Static_assert(sizeof(enum nfs_server) == sizeof(int) && sizeof(enum tune_goal) == sizeof(int),
	       "F_ENUM fields must be int-sized");

#define M(pf_member) offsetof(struct model, pf_member)
#define SH(pf_member) offsetof(struct share, pf_member)
#define FIELD_PTR(base, off, type) ((type *)(void *)((char *)(base) + (off)))

/* profile_keys.c: a setting's place, its kind, and a group read through its table. */
bool pf_check_text(struct ld *ld, const config_setting_t *s, const char *what, const char *v,
		   size_t maxlen, const char *forbid);
const char *pf_check_word(struct ld *ld, const config_setting_t *s, const char *what, const char *v,
			  const char *const *allowed);
const char *const *pf_field_keys(const struct field *fields, const char **v, size_t n);
const char *pf_intern_file(struct model *m, const char *f);
bool pf_is_kind(const config_setting_t *s, enum kind k);
bool pf_kind_ok(struct ld *ld, const config_setting_t *s, enum kind k, const char *what);
void pf_load_fields(struct ld *ld, const config_setting_t *g, const char *where, bool top,
		    const struct field *fields, void *base);
void pf_load_group(struct ld *ld, const config_setting_t *g, const char *where,
		   const struct field *fields, void *base);
struct loc pf_loc_of(struct ld *ld, const config_setting_t *s);
config_setting_t *pf_member(struct ld *ld, const config_setting_t *g, const char *key, enum kind k,
			    const char *where);
void pf_read_strlist(struct ld *ld, const config_setting_t *s, const char *what,
		     struct strlist *dst,
		     bool (*fn)(struct ld *, const config_setting_t *, const char *, const char *));
void pf_set_str(char **dst, const char *v);
const char *pf_sfile(const struct ld *ld, const config_setting_t *s);
int pf_sline(const config_setting_t *s);
const char *pf_type_name(int t);
void pf_unknown_keys(struct ld *ld, const config_setting_t *g, const char *where,
		     const char *const *known);

/* profile_values.c: the value checks more than one group uses. */
bool pf_check_ifname(struct ld *ld, const config_setting_t *s, const char *what, const char *v);
bool pf_check_nfs_client(struct ld *ld, const config_setting_t *s, const char *what, const char *v);
bool pf_check_peer(struct ld *ld, const config_setting_t *s, const char *what, const char *v);
bool pf_check_username(struct ld *ld, const config_setting_t *s, const char *what, const char *v);
bool pf_is_ipaddr(const char *v, int *family);
void pf_set_knob(struct ld *ld, enum knob_id id, const char *value, enum knob_src src,
		 const config_setting_t *s);

/* The groups one file reads for another's table. */
bool pf_check_cluster_name(struct ld *ld, const config_setting_t *s, const char *what,
			   const char *v);
void pf_load_allow(struct ld *ld, config_setting_t *s, const char *what, struct model *m,
		   struct share *sh);
void pf_load_shares(struct ld *ld, config_setting_t *l, const char *what, const struct field *f,
		    void *base);
extern const struct field pf_share_fields[];
extern const struct field pf_service_fields[];
extern const struct field pf_tuned_fields[];
extern const struct field pf_tuning_fields[];
extern const struct field pf_cluster_fields[];
void pf_load_cluster(struct ld *ld, config_setting_t *g, const char *what, const struct field *f,
		     void *base);

#endif
