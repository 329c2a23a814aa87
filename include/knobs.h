/* knobs.h - every tunable nastune knows, as one static table read by render, tune and report.
 * Pure: no I/O. A knob's value lives in the model (model.h: struct knob_setting), set by
 * nastune.conf's tuning.knobs (pinned) or by tune through /etc/nastune/tuned.conf. */
#ifndef NASTUNE_KNOBS_H
#define NASTUNE_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The file-sharing protocols, as bits: a knob's protocol, a share's set (model.h). */
#define PROTO_SMB (1u << 0)
#define PROTO_NFS (1u << 1)
#define PROTO_AFP (1u << 2)

/* Stable ids; the table in knobs.c is indexed by them. Names are in the table. */
enum knob_id {
	KNOB_SMB_SERVER_SIGNING,
	KNOB_SMB_SMB_ENCRYPT,
	KNOB_SMB_MULTICHANNEL,
	KNOB_SMB_USE_SENDFILE,
	KNOB_SMB_AIO_READ_SIZE,
	KNOB_SMB_AIO_WRITE_SIZE,
	KNOB_SMB_MIN_RECEIVEFILE_SIZE,
	KNOB_SMB_SOCKET_OPTIONS,
	KNOB_SMB_STRICT_SYNC,
	KNOB_SMB_IO_URING,
	KNOB_NFS_EXPORT_SYNC,
	KNOB_NFS_THREADS,
	KNOB_NFS_GANESHA_MAX_READ,
	KNOB_NFS_GANESHA_MAX_WRITE,
	KNOB_NFS_VERSIONS,
	KNOB_AFP_SERVER_QUANTUM,
	KNOB_AFP_DSIREADBUF,
	KNOB_AFP_TCPRCVBUF,
	KNOB_AFP_TCPSNDBUF,
	KNOB_SYS_RMEM_MAX,
	KNOB_SYS_WMEM_MAX,
	KNOB_SYS_TCP_RMEM,
	KNOB_SYS_TCP_WMEM,
	KNOB_NET_MTU,
	/* small files and metadata */
	KNOB_SMB_CASE_SENSITIVE,
	KNOB_SMB_NAME_CASE,
	KNOB_SMB_STORE_DOS_ATTRIBUTES,
	KNOB_SMB_EA_SUPPORT,
	KNOB_SMB_FRUIT_METADATA,
	KNOB_SMB_AAPL_MAX_ACCESS,
	KNOB_SMB_AAPL_FINDER_INFO,
	KNOB_SMB_AAPL_RSIZE,
	KNOB_SMB_STRICT_LOCKING,
	KNOB_SMB_OPLOCKS,
	KNOB_SMB_LEASES,
	KNOB_SMB_STAT_CACHE,
	KNOB_NFS_ENTRIES_HWMARK,
	KNOB_NFS_DIR_CHUNK,
	KNOB_NFS_ATTR_EXPIRATION,
	KNOB_AFP_CNID_SCHEME,
	KNOB_AFP_VOL_DBPATH,
	KNOB_AFP_EA,
	KNOB_COUNT
};

/* Where a value came from. */
enum knob_src {
	KNOB_UNSET,  /* the daemon's own default: nothing is rendered */
	KNOB_CONFIG, /* pinned in nastune.conf (or its preset): tune never changes it */
	KNOB_TUNED,  /* chosen by tune, kept in /etc/nastune/tuned.conf */
};

/* Where a knob renders. */
enum knob_place {
	KNOB_AT_SMB_GLOBAL,	 /* smb.conf [global] */
	KNOB_AT_SMB_VFS,	 /* smb.conf: last of every "vfs objects" list */
	KNOB_AT_SMB_SHARE,	 /* smb.conf: every share section the value may reach */
	KNOB_AT_EXPORTS,	 /* exports(5) options of every kernel export */
	KNOB_AT_GANESHA_CORE,	 /* ganesha.conf NFS_CORE_PARAM */
	KNOB_AT_GANESHA_EXPORT,	 /* ganesha.conf every EXPORT block the value may reach */
	KNOB_AT_GANESHA_MDCACHE, /* ganesha.conf MDCACHE */
	KNOB_AT_AFP_GLOBAL,	 /* afp.conf [Global] */
	KNOB_AT_AFP_VOLUME,	 /* afp.conf every volume section the value may reach */
	KNOB_AT_SYSCTL,		 /* /etc/sysctl.d/90-nastune.conf */
	KNOB_AT_NETLINK,	 /* not rendered: netif sets it (network.mtu) */
};

/* How a change takes effect. */
enum knob_effect {
	KNOB_RELOAD,  /* the daemon rereads it (SIGHUP, exportfs -ra); new connections see it */
	KNOB_RESTART, /* only a daemon restart picks it up */
	KNOB_LIVE,    /* immediate (sysctl -p, netlink) */
};

enum knob_safety {
	KNOB_SAFE,	/* no value can lose acknowledged data or change what clients see */
	KNOB_UNSAFE,	/* some values (knob.unsafe) may lose data on power loss */
	KNOB_SEMANTICS, /* some values (knob.visible) change what clients see: names, case,
			 * DOS attributes, extended attributes, Finder metadata, locks */
};

/* Shares whose fruit stack needs the daemon's default of a knob: the renderer never writes
 * the knob's value into them, whatever the consent. */
enum knob_keep {
	KNOB_KEEP_NONE,
	KNOB_KEEP_FRUIT, /* every share served with vfs_fruit (Time Machine, smb.apple) */
	KNOB_KEEP_TM,	 /* Time Machine shares */
};

/* Value syntax. */
enum knob_kind {
	KNOB_ENUM,     /* one of knob.words (case-insensitive, stored as spelled there) */
	KNOB_SIZE,     /* units.h size within [min, max]; stored as "1M", rendered in bytes */
	KNOB_INT,      /* decimal integer within [min, max] */
	KNOB_TRIPLE,   /* "min default max" sizes for tcp_rmem/tcp_wmem, ascending; bytes */
	KNOB_SOCKOPTS, /* Samba socket options: known words, SO_RCVBUF=N / SO_SNDBUF=N */
	KNOB_VERSIONS, /* NFS versions: "3,4", "3" or "4" */
	KNOB_PATH,     /* an absolute path without blanks, quotes, ';' or '#' */
};

/* Benchmark workloads a knob can affect (names as the bench engine spells them). */
enum knob_workload {
	WL_SEQ_WRITE = 1u << 0,
	WL_SEQ_READ = 1u << 1,
	WL_COPY_IN_SHARE = 1u << 2,
	WL_MIXED_RW = 1u << 3,
	WL_SMALL_FILES = 1u << 4,
	WL_SMALL_IO = 1u << 5,
	WL_RANDOM_IO = 1u << 6,
	WL_METADATA = 1u << 7,
	WL_VIDEO_FRAMES = 1u << 8,
	WL_BIG_DIR = 1u << 9,
	WL_SOURCE_TREE = 1u << 10,
};
#define WL_COUNT 11
/* The workloads of small work: many names, little data. */
#define WL_META (WL_SMALL_FILES | WL_METADATA | WL_BIG_DIR | WL_SOURCE_TREE)
#define WL_BULK (WL_SEQ_WRITE | WL_SEQ_READ | WL_COPY_IN_SHARE | WL_VIDEO_FRAMES)
#define WL_ALL ((1u << WL_COUNT) - 1)

struct knob {
	enum knob_id id;
	const char *name;  /* "smb.use_sendfile": <group>.<key> in tuning.knobs / tuned.conf */
	unsigned proto;	   /* PROTO_*, or 0 for the host (sys.*, net.*) */
	const char *param; /* as the daemon spells it: "use sendfile", "MaxRead" */
	enum knob_place place;
	const char *where; /* human: "smb.conf [global]" */
	enum knob_kind kind;
	const char *const *words;      /* KNOB_ENUM */
	uint64_t min, max;	       /* KNOB_SIZE, KNOB_INT, KNOB_TRIPLE, KNOB_SOCKOPTS buffers */
	const char *const *candidates; /* what tune tries, NULL-terminated; the first is the
					* daemon's default when it has one (dflt), else the
					* simplest value */
	const char *dflt; /* the daemon's default as a value, or NULL (e.g. "the OS's") */
	enum knob_effect effect;
	enum knob_safety safety;
	const char *const *unsafe; /* values that may lose data; NULL when safe */
	/* KNOB_SEMANTICS: the values that change what clients see (NULL: every value but
	 * dflt), and what changes for the clients, one sentence. */
	const char *const *visible;
	const char *changes;
	enum knob_keep keep;
	unsigned workloads; /* WL_* */
	const char *why;    /* one line */
};

/* One line a knob renders: a value may set several parameters together (smb.name_case). */
struct knob_line {
	const char *param;
	char value[256];
};
#define KNOB_LINES_MAX 3

/* The row for id, or NULL when id is out of range. */
const struct knob *knob_get(enum knob_id id);
/* The row named exactly name ("smb.use_sendfile"), or NULL. */
const struct knob *knob_find(const char *name);
/* Iteration: for (k = knob_first(); k; k = knob_next(k)). */
const struct knob *knob_first(void);
const struct knob *knob_next(const struct knob *k);
/* The key half of k->name ("use_sendfile" of "smb.use_sendfile"), pointing into it. */
const char *knob_key(const struct knob *k);
/* The file a place renders into (without --root), or NULL for KNOB_AT_NETLINK. */
const char *knob_place_file(enum knob_place p);
/* "reload", "restart", "live"; "safe", "unsafe", "semantics". */
const char *knob_effect_name(enum knob_effect e);
const char *knob_safety_name(enum knob_safety s);
const char *knob_src_name(enum knob_src s);
/* "seq-write" ... for a single WL_* bit, NULL otherwise. */
const char *knob_workload_name(unsigned bit);

/* Checks value's syntax and range for k and writes its canonical form into out ("1m" ->
 * "1M", "YES" -> "yes", "4,3" -> "3,4"). Returns 0, or -EINVAL with "— fix" text in why
 * (what is accepted). Pure. */
int knob_parse(const struct knob *k, const char *value, char *out, size_t outlen, char *why,
	       size_t whylen);
/* The value as the daemon reads it in its file ("1M" -> "1048576" for sizes, "3,4" ->
 * "3, 4" for Ganesha); writes into out. value must be canonical (knob_parse). */
void knob_render_value(const struct knob *k, const char *value, char *out, size_t outlen);
/* Whether a change of the file at path (as installed, without --root:
 * "/etc/ganesha/ganesha.conf") needs a daemon restart: for each knob with effect KNOB_RESTART
 * that renders into path, the lines setting its param (key before '=' trimmed, compared
 * case-insensitively; "key = value;" and "key = value" alike; comments skip) are collected
 * from cur and next, and their distinct values compared in order of first appearance. Only
 * distinct values count, so an export added with the same Protocols as the others is not a
 * change. cur or next NULL: no such file (no lines). Writes the params that differ,
 * ", "-separated, into changed (when changedlen > 0). Returns how many differ. Pure. */
int knob_restart_changes(const char *path, const char *cur, size_t curlen, const char *next,
			 size_t nextlen, char *changed, size_t changedlen);
/* The lines value renders, as the daemon reads them, into lines (KNOB_LINES_MAX); returns
 * how many. Most knobs render one line, knob_render_value's; smb.name_case sets Samba's
 * default case, preserve case and short preserve case together. value must be canonical. */
size_t knob_render_lines(const struct knob *k, const char *value, struct knob_line *lines);
/* true when value is in k->unsafe. */
bool knob_value_unsafe(const struct knob *k, const char *value);
/* true when k is of class KNOB_SEMANTICS and value changes what clients see (value in
 * k->visible, or, without that list, any value but k->dflt). */
bool knob_value_visible(const struct knob *k, const char *value);
/* What value of k would change for the clients, one sentence (static), or NULL when it
 * changes nothing they see. */
const char *knob_client_change(const struct knob *k, const char *value);

#endif
