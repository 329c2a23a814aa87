/* drv_afp.c - the AFP benchmark driver: a small AFP-over-DSI client of its own (no maintained
 * C AFP library exists), enough for the engine's calls against netatalk 3/4.
 *
 * DSI frames every message with a 16-byte header; AFP calls ride in DSICommand, file data
 * in DSIWrite. Objects are named by the volume's root directory (ID 2) plus a UTF-8 path
 * (type 3) whose components are separated by NUL bytes, so nested paths need no directory-ID
 * lookups. Large reads and writes keep AFP_DEPTH requests of at most the server's quantum
 * outstanding. Every length read off the wire is bounded, every receive and send has a
 * timeout (a silent or dead server fails the call), and the server's tickles are answered.
 * Logins: "No User Authent" (guest), "Cleartxt Passwrd", or DHX2 (what Macs use: DH key
 * agreement and CAST5-CBC, from OpenSSL's legacy provider in a private library context). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "afp.h"
#include "xmalloc.h"

void
afp_split(const char *path, char *parent, size_t plen, char *name, size_t nlen)
{
	const char *slash = strrchr(path, '/');

	if (slash) {
		snprintf(parent, plen, "%.*s", (int)(slash - path), path);
		snprintf(name, nlen, "%s", slash + 1);
	} else {
		parent[0] = '\0';
		snprintf(name, nlen, "%s", path);
	}
}

void
afp_msg_utf8name(struct msg *m, const char *name)
{
	size_t n = strlen(name);

	afp_msg_u8(m, PATH_UTF8);
	afp_msg_u32(m, 0x08000103);
	afp_msg_u16(m, (uint16_t)(n > 0xffff ? 0xffff : n));
	afp_msg_bytes(m, name, n);
}

static int
afp_mkdir(struct bench_conn *c, const char *path)
{
	struct msg m;

	afp_msg_start(&m, FP_CREATEDIR, 0);
	afp_msg_u16(&m, c->vid);
	afp_msg_u32(&m, ROOT_DID);
	afp_msg_path(&m, c, path);
	return afp_do(c, &m, "mkdir", path);
}

static int
afp_delete(struct bench_conn *c, const char *path, const char *op)
{
	struct msg m;

	afp_msg_start(&m, FP_DELETE, 0);
	afp_msg_u16(&m, c->vid);
	afp_msg_u32(&m, ROOT_DID);
	afp_msg_path(&m, c, path);
	return afp_do(c, &m, op, path);
}

/* FPDelete removes files and empty directories alike; rmdir and unlink check the type so
 * each keeps its POSIX meaning. */
static int
afp_rmdir(struct bench_conn *c, const char *path)
{
	struct bench_stat st;
	int rc = afp_stat(c, path, &st);

	if (rc < 0)
		return rc;
	if (!st.is_dir)
		return afpc_fail(c, ENOTDIR, "rmdir", path, "not a directory");
	return afp_delete(c, path, "rmdir");
}

static int
afp_unlink(struct bench_conn *c, const char *path)
{
	struct bench_stat st;
	int rc = afp_stat(c, path, &st);

	if (rc < 0)
		return rc;
	if (st.is_dir)
		return afpc_fail(c, EISDIR, "delete", path, "is a directory");
	return afp_delete(c, path, "delete");
}

static int
afp_rename(struct bench_conn *c, const char *from, const char *to)
{
	char parent[1024], name[256];
	struct msg m;
	int code;

	afp_split(to, parent, sizeof(parent), name, sizeof(name));
	afp_msg_start(&m, FP_MOVEANDRENAME, 0);
	afp_msg_u16(&m, c->vid);
	afp_msg_u32(&m, ROOT_DID);
	afp_msg_u32(&m, ROOT_DID);
	afp_msg_path(&m, c, from);
	afp_msg_path(&m, c, parent);
	afp_msg_utf8name(&m, name);
	code = afp_msg(c, &m, "rename", from);
	if (code == AFPERR_EXIST) {
		/* POSIX rename replaces the target; AFP refuses. Replace a file only. */
		struct bench_stat st;
		if (afp_stat(c, to, &st) == 0 && !st.is_dir && afp_delete(c, to, "rename") == 0)
			code = afp_msg(c, &m, "rename", from);
	}
	if (IS_ERRNO(code))
		return code;
	return code ? afpc_fail_code(c, code, "rename", from) : 0;
}

/* Parameters of a FPGetFileDirParms/FPEnumerateExt2 entry: size (files) and UTF-8 name. */
static int
parse_params(const uint8_t *p, size_t len, bool is_dir, uint64_t *size, char *name, size_t namelen)
{
	size_t q = 0;
	uint16_t noff, n;

	*size = 0;
	if (is_dir) {
		/* DirBitmap NodeID | UTF8Name: node id(4), name offset(2), pad(4) */
		if (len < 10)
			return -EPROTO;
		noff = get16(p + 4);
	} else {
		/* FileBitmap ExtDataForkLen | UTF8Name: size(8), name offset(2), pad(4) */
		if (len < 14)
			return -EPROTO;
		*size = get64(p);
		noff = get16(p + 8);
	}
	if (!name)
		return 0;
	q = noff;
	if (q + 6 > len)
		return -EPROTO;
	n = get16(p + q + 4);
	if (q + 6 + n > len || n >= namelen)
		return -EPROTO;
	memcpy(name, p + q + 6, n);
	name[n] = '\0';
	return 0;
}

int
afp_stat(struct bench_conn *c, const char *path, struct bench_stat *st)
{
	struct msg m;
	int code;

	afp_msg_start(&m, FP_GETFILEDIRPARMS, 0);
	afp_msg_u16(&m, c->vid);
	afp_msg_u32(&m, ROOT_DID);
	afp_msg_u16(&m, FILBIT_EXTDFLEN | FILBIT_UTF8NAME);
	afp_msg_u16(&m, DIRBIT_NODEID | DIRBIT_UTF8NAME);
	afp_msg_path(&m, c, path);
	code = afp_do(c, &m, "stat", path);
	if (code < 0)
		return code;
	/* FileBitmap(2) DirBitmap(2) flags(1) pad(1) params */
	if (c->rlen < 6)
		return afpc_fail(c, EPROTO, "stat", path, "malformed reply");
	memset(st, 0, sizeof(*st));
	st->uid = -1;
	st->is_dir = c->rbuf[4] & 0x80;
	if (parse_params(c->rbuf + 6, c->rlen - 6, st->is_dir, &st->size, NULL, 0) < 0)
		return afpc_fail(c, EPROTO, "stat", path, "malformed reply");
	/* A directory's node id is its CNID, the volume's own name for it: an identity only
	 * where the CNIDs persist (with "cnid scheme = last" they are handed out anew). */
	if (st->is_dir && c->file_ids && c->rlen >= 10) {
		st->has_id = true;
		st->dev = c->vid;
		st->ino = get32(c->rbuf + 6);
	}
	return 0;
}

static int
afp_list(struct bench_conn *c, const char *path,
	 int (*fn)(const char *name, const struct bench_stat *st, void *arg), void *arg)
{
	uint32_t start = 1;
	struct msg m;

	for (;;) {
		int code;
		uint16_t count, i;
		size_t p = 6;

		afp_msg_start(&m, FP_ENUMERATEEXT2, 0);
		afp_msg_u16(&m, c->vid);
		afp_msg_u32(&m, ROOT_DID);
		afp_msg_u16(&m, FILBIT_EXTDFLEN | FILBIT_UTF8NAME);
		afp_msg_u16(&m, DIRBIT_NODEID | DIRBIT_UTF8NAME);
		afp_msg_u16(&m, 200);
		afp_msg_u32(&m, start);
		afp_msg_u32(&m, AFP_MAX_REPLY / 2);
		afp_msg_path(&m, c, path);
		code = afp_msg(c, &m, "list", path);
		if (code == AFPERR_NOOBJ) {
			/* No (more) entries; at the start, an empty directory or none at all. */
			struct bench_stat st;
			int rc = start > 1 ? 0 : afp_stat(c, path, &st);
			if (rc == 0 && start == 1 && !st.is_dir)
				rc = afpc_fail(c, ENOTDIR, "list", path, "not a directory");
			return rc;
		}
		if (IS_ERRNO(code))
			return code;
		if (code)
			return afpc_fail_code(c, code, "list", path);
		if (c->rlen < 6)
			return afpc_fail(c, EPROTO, "list", path, "malformed reply");
		count = get16(c->rbuf + 4);
		if (count == 0)
			return 0;
		/* Copy out: fn may call the driver, which reuses rbuf. */
		uint8_t *d = xmalloc(c->rlen);
		uint32_t dlen = c->rlen;
		memcpy(d, c->rbuf, dlen);
		for (i = 0; i < count; i++) {
			struct bench_stat st = { .uid = -1 };
			char name[1024];
			uint16_t len;
			int rc;

			if (p + 4 > dlen || (len = get16(d + p)) < 4 || p + len > dlen) {
				free(d);
				return afpc_fail(c, EPROTO, "list", path, "malformed entry");
			}
			st.is_dir = d[p + 2] & 0x80;
			if (parse_params(d + p + 4, len - 4, st.is_dir, &st.size, name,
					 sizeof(name)) < 0) {
				free(d);
				return afpc_fail(c, EPROTO, "list", path, "malformed entry");
			}
			rc = fn(name, &st, arg);
			if (rc) {
				free(d);
				return rc;
			}
			p += len;
		}
		free(d);
		start += count;
	}
}

static int
afp_space(struct bench_conn *c, const char *path, uint64_t *free_bytes)
{
	struct msg m;
	int code;

	afp_msg_start(&m, FP_GETVOLPARMS, 0);
	afp_msg_u16(&m, c->vid);
	afp_msg_u16(&m, VOLBIT_XBFREE);
	code = afp_do(c, &m, "free space", path);
	if (code < 0)
		return code;
	if (c->rlen < 10)
		return afpc_fail(c, EPROTO, "free space", path, "malformed reply");
	*free_bytes = get64(c->rbuf + 2);
	return 0;
}

const struct bench_driver bench_drv_afp = {
	.name = "afp",
	.scheme = "afp",
	.connect = afp_connect,
	.disconnect = afp_disconnect,
	.error = afp_error,
	.mkdir = afp_mkdir,
	.rmdir = afp_rmdir,
	.unlink = afp_unlink,
	.rename = afp_rename,
	.stat = afp_stat,
	.list = afp_list,
	.space = afp_space,
	.open = afp_open,
	.pread = afp_pread,
	.pwrite = afp_pwrite,
	.read_block = AFP_BLOCK,
	.write_block = AFP_BLOCK,
	.flush = afp_flush,
	.close = afp_close,
	.copy = afp_copy,
	.copy_method = "FPCopyFile",
	.concurrent = true,
};
