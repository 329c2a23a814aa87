/* afp.h - the AFP driver's own client inside src/bench/: the DSI and AFP constants, the
 * connection and file state, and the calls its files share (DSI framing and request building
 * in afp_dsi.c, login in afp_login.c, the connection in afp_conn.c, file data in afp_files.c,
 * the namespace calls and the driver's table in drv_afp.c). */
#ifndef NASTUNE_BENCH_AFP_H
#define NASTUNE_BENCH_AFP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

#include "bench_driver.h"

#define AFP_PORT 548
#define AFP_TIMEOUT_S 20	   /* per receive/send: a silent server fails the call */
#define AFP_TICKLE_S 30		   /* send our own tickle before a call after this much quiet */
#define AFP_DEPTH 4		   /* reads/writes in flight */
#define AFP_MAX_REPLY (256 * 1024) /* bound on any non-data reply */
#define AFP_MAX_QUANTUM (8 * 1024 * 1024)
#define AFP_MIN_QUANTUM 4096
/* The engine's bulk request to the driver: AFP_DEPTH quanta in flight drain at the end of
 * each call, so a call of one 1 MiB quantum (the engine's default block) had one request in
 * flight; 8 MiB calls keep the pipe full for all but the last of eight. */
#define AFP_BLOCK (8u << 20)

enum {
	DSI_CLOSE = 1,
	DSI_COMMAND = 2,
	DSI_STATUS = 3,
	DSI_OPEN = 4,
	DSI_TICKLE = 5,
	DSI_WRITE = 6,
	DSI_ATTN = 8,
};

enum {
	FP_CLOSEVOL = 2,
	FP_CLOSEFORK = 4,
	FP_COPYFILE = 5,
	FP_CREATEDIR = 6,
	FP_CREATEFILE = 7,
	FP_DELETE = 8,
	FP_FLUSHFORK = 11,
	FP_GETVOLPARMS = 17,
	FP_LOGIN = 18,
	FP_LOGINCONT = 19,
	FP_LOGOUT = 20,
	FP_MOVEANDRENAME = 23,
	FP_OPENVOL = 24,
	FP_OPENFORK = 26,
	FP_SETFORKPARMS = 31,
	FP_GETFILEDIRPARMS = 34,
	FP_READEXT = 60,
	FP_WRITEEXT = 61,
	FP_ENUMERATEEXT2 = 68,
};

/* AFP result codes are -5000 and below; anything between is a -errno of ours. */
#define IS_ERRNO(code) ((code) < 0 && (code) > -5000)
#define AFPERR_AUTHCONT (-5001)
#define AFPERR_EOF (-5009)
#define AFPERR_NOOBJ (-5018)
#define AFPERR_EXIST (-5017)

#define ROOT_DID 2
#define PATH_UTF8 3
#define FILBIT_EXTDFLEN 0x0800
#define FILBIT_UTF8NAME 0x2000
#define DIRBIT_NODEID 0x0100
#define DIRBIT_UTF8NAME 0x2000
#define VOLBIT_ATTR 0x0001
#define VOLATTR_FILEIDS 0x0004 /* afpd: only with a persistent CNID scheme (dbd) */
#define VOLBIT_VID 0x0020
#define VOLBIT_XBFREE 0x0200

struct bench_conn {
	const struct bench_target *t;
	int fd;
	uint16_t reqid;
	uint16_t vid;
	bool file_ids; /* the volume's CNIDs are persistent (kSupportsFileIDs) */
	bool vol_open, logged_in, dead;
	int dead_err;	  /* why it is dead, errno */
	uint32_t quantum; /* the server's request quantum: bound on one request */
	time_t last_send;
	char err[512];
	uint8_t *rbuf; /* the last non-data reply */
	uint32_t rlen;
};

struct bench_file {
	uint16_t fork;
	char *path;
};

/* A request waiting for its reply during a pipelined transfer. */
struct pending {
	bool used;
	uint16_t id;
	uint8_t *dst; /* reads: where the data goes; NULL: into rbuf */
	size_t want;  /* reads: bytes asked for */
	uint64_t off; /* offset in the file */
};

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static inline void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static inline uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* A request under construction. */
struct msg {
	uint8_t b[1024];
	size_t n;
	bool over;
};

/* The user the connection logs in as, "guest" without one. */
const char *afp_who(const struct bench_conn *c);

/* Records "host/volume/path: op: reason" and returns -err. */
int afpc_fail(struct bench_conn *c, int err, const char *op, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* An AFP result code as -errno with a sentence. */
int afpc_fail_code(struct bench_conn *c, int code, const char *op, const char *path);

/* A transport failure: the connection is unusable from now on. */
int dsi_fail(struct bench_conn *c, int e, const char *op);

/* Sends all of iov within the timeout; returns 0 or -errno. */
int dsi_send_iov(struct bench_conn *c, struct iovec *iov, int iovcnt);

/* Sends one DSI request (header, then up to two payload parts); returns its id or -errno. */
int dsi_send(struct bench_conn *c, uint8_t cmd, const void *a, size_t alen, const void *b,
	     size_t blen, uint32_t write_off);

/* Answers what the server asks in between (tickles, attentions) and reads the next reply:
 * its header into *id, *code and *len; the payload into a matching pending read's buffer,
 * else into c->rbuf. Returns the pending slot (or -1 when none matched), or -errno. */
int dsi_next_reply(struct bench_conn *c, struct pending *pend, int npend, uint16_t *id,
		   int32_t *code, uint32_t *len);

/* One request and its reply. Returns the AFP result code (0, or negative AFP codes like
 * -5018) with the reply in c->rbuf/c->rlen, or a DSI transport failure as -errno below
 * -100000 is impossible, so: transport failures set c->dead and return INT32_MIN. */
#define DSI_BROKEN INT32_MIN
int32_t dsi_call(struct bench_conn *c, uint8_t cmd, const void *a, size_t alen, const void *b,
		 size_t blen, uint32_t write_off, const char *op);

/* Append big-endian integers and raw bytes to m; what does not fit sets m->over. */
void afp_msg_u8(struct msg *m, uint8_t v);
void afp_msg_u16(struct msg *m, uint16_t v);
void afp_msg_u32(struct msg *m, uint32_t v);
void afp_msg_u64(struct msg *m, uint64_t v);
void afp_msg_bytes(struct msg *m, const void *p, size_t n);

/* A Pascal string: length byte, bytes (at most 255). */
void afp_msg_pstr(struct msg *m, const char *s);

/* A type-3 (UTF-8) AFP path: hint, length, components separated by NUL bytes. The
 * target's subdirectory comes first; "" names the volume's root directory itself. */
void afp_msg_path(struct msg *m, struct bench_conn *c, const char *path);

/* Starts m afresh with an AFP command byte and its flag byte. */
void afp_msg_start(struct msg *m, uint8_t cmd, uint8_t flag);

/* Sends m as an AFP command; returns the AFP code, or -errno with the error recorded. */
int afp_msg(struct bench_conn *c, struct msg *m, const char *op, const char *path);

/* Like afp_msg, but any AFP error becomes -errno with a sentence. */
int afp_do(struct bench_conn *c, struct msg *m, const char *op, const char *path);

/* Reads a counted list of Pascal strings at off of the status block into out (a
 * comma-separated string). */
bool afp_status_list(const uint8_t *d, uint32_t len, uint16_t off, char *out, size_t outlen);

/* Whether the comma-separated list holds item. */
bool afp_has_item(const char *list, const char *item);

/* Logs in with AFP version ver by the best of the methods uams the server offers that the
 * target allows; returns 0 or -errno with c->err set. */
int afp_login(struct bench_conn *c, const char *ver, const char *uams);

/* The driver's calls (struct bench_driver); drv_afp.c's table names them. */
void afp_disconnect(struct bench_conn *c);

int afp_connect(const struct bench_target *t, struct bench_conn **out, char *err, size_t errlen);

const char *afp_error(struct bench_conn *c);

/* Splits path into its parent and its last component (both into bufs). */
void afp_split(const char *path, char *parent, size_t plen, char *name, size_t nlen);

/* A UTF-8 name as FPCopyFile and FPMoveAndRename take it: type, hint, length, bytes. */
void afp_msg_utf8name(struct msg *m, const char *name);

int afp_stat(struct bench_conn *c, const char *path, struct bench_stat *st);

int afp_open(struct bench_conn *c, const char *path, int flags, struct bench_file **out);

/* Pipelined FPReadExt/FPWriteExt: up to AFP_DEPTH requests of at most one quantum each. */
ssize_t afp_transfer(struct bench_conn *c, struct bench_file *f, uint8_t *buf, size_t len,
		     uint64_t off, bool write);

ssize_t afp_pread(struct bench_conn *c, struct bench_file *f, void *buf, size_t len, uint64_t off);

ssize_t afp_pwrite(struct bench_conn *c, struct bench_file *f, const void *buf, size_t len,
		   uint64_t off);

int afp_flush(struct bench_conn *c, struct bench_file *f);

int afp_close(struct bench_conn *c, struct bench_file *f);

int afp_copy(struct bench_conn *c, const char *from, const char *to);

#endif
