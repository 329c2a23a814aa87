/* afp_files.c - the AFP driver's file calls: open forks, pipelined reads and writes (AFP_DEPTH
 * requests of at most the server's quantum in flight), flush, close and the server-side copy. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "afp.h"
#include "xmalloc.h"

int
afp_open(struct bench_conn *c, const char *path, int flags, struct bench_file **out)
{
	struct msg m;
	uint16_t access = 0;
	int code;

	if (flags & BENCH_CREATE) {
		afp_msg_start(&m, FP_CREATEFILE, 0); /* soft create: fails when it exists */
		afp_msg_u16(&m, c->vid);
		afp_msg_u32(&m, ROOT_DID);
		afp_msg_path(&m, c, path);
		code = afp_do(c, &m, "create", path);
		if (code < 0)
			return code;
	}
	if (flags & BENCH_RD)
		access |= 0x01;
	if (flags & (BENCH_WR | BENCH_TRUNC))
		access |= 0x02;
	if (!access)
		access = 0x01;
	afp_msg_start(&m, FP_OPENFORK, 0); /* data fork */
	afp_msg_u16(&m, c->vid);
	afp_msg_u32(&m, ROOT_DID);
	afp_msg_u16(&m, 0);
	afp_msg_u16(&m, access);
	afp_msg_path(&m, c, path);
	code = afp_do(c, &m, "open", path);
	if (code < 0)
		return code;
	if (c->rlen < 4)
		return afpc_fail(c, EPROTO, "open", path, "malformed reply");
	*out = xcalloc(1, sizeof(**out));
	(*out)->fork = get16(c->rbuf + 2);
	(*out)->path = xstrdup(path);
	if ((flags & BENCH_TRUNC) && !(flags & BENCH_CREATE)) {
		afp_msg_start(&m, FP_SETFORKPARMS, 0);
		afp_msg_u16(&m, (*out)->fork);
		afp_msg_u16(&m, FILBIT_EXTDFLEN);
		afp_msg_u64(&m, 0);
		code = afp_do(c, &m, "truncate", path);
		if (code < 0) {
			struct msg cm;
			afp_msg_start(&cm, FP_CLOSEFORK, 0);
			afp_msg_u16(&cm, (*out)->fork);
			afp_msg(c, &cm, "close", path);
			free((*out)->path);
			free(*out);
			*out = NULL;
			return code;
		}
	}
	return 0;
}

ssize_t
afp_transfer(struct bench_conn *c, struct bench_file *f, uint8_t *buf, size_t len, uint64_t off,
	     bool write)
{
	struct pending pend[AFP_DEPTH] = { 0 };
	const char *op = write ? "write" : "read";
	size_t chunk = c->quantum, next = 0, done_to = len;
	int inflight = 0, i, rc;
	bool eof = false;
	int err = 0;

	if (c->dead)
		return -c->dead_err;
	/* Whole MiBs keep the server's disk I/O aligned; the quantum bounds each request. */
	if (chunk > (1u << 20))
		chunk = (chunk / (1u << 20)) * (1u << 20);
	while ((next < len && !eof && !err) || inflight > 0) {
		while (next < len && !eof && !err && inflight < AFP_DEPTH) {
			size_t n = len - next < chunk ? len - next : chunk;
			uint8_t h[20];

			for (i = 0; pend[i].used; i++)
				;
			h[0] = write ? FP_WRITEEXT : FP_READEXT;
			h[1] = 0;
			put16(h + 2, f->fork);
			put64(h + 4, off + next);
			put64(h + 12, n);
			rc = write ? dsi_send(c, DSI_WRITE, h, 20, buf + next, n, 20)
				   : dsi_send(c, DSI_COMMAND, h, 20, NULL, 0, 0);
			if (rc < 0)
				return dsi_fail(c, -rc, op);
			pend[i] = (struct pending){ .used = true,
						    .id = (uint16_t)rc,
						    .dst = write ? NULL : buf + next,
						    .want = n,
						    .off = next };
			inflight++;
			next += n;
		}
		uint16_t id;
		int32_t code;
		uint32_t rlen;
		int slot = dsi_next_reply(c, pend, AFP_DEPTH, &id, &code, &rlen);

		if (slot < -1)
			return dsi_fail(c, -slot, op);
		if (slot == -1)
			continue; /* not ours (a tickle's echo) */
		pend[slot].used = false;
		inflight--;
		if (write) {
			if (code && !err)
				err = code;
			continue;
		}
		if (code == AFPERR_EOF || (code == 0 && rlen < pend[slot].want)) {
			/* Short: end of file (netatalk answers EOF with what it read). A short
			 * non-EOF read is re-asked for the rest by a later call of ours. */
			if (pend[slot].off + rlen < done_to)
				done_to = pend[slot].off + rlen;
			if (code == AFPERR_EOF)
				eof = true;
		} else if (code && !err) {
			err = code;
		}
	}
	if (err)
		return afpc_fail_code(c, err, op, f->path);
	return (ssize_t)(write ? len : done_to);
}

ssize_t
afp_pread(struct bench_conn *c, struct bench_file *f, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	/* A short non-EOF answer is asked again for the rest; a short EOF one ends it. */
	while (got < len) {
		ssize_t n = afp_transfer(c, f, (uint8_t *)buf + got, len - got, off + got, false);

		if (n < 0)
			return n;
		if (n == 0)
			break;
		got += (size_t)n; /* short: ask again; 0 bytes then means end of file */
	}
	return (ssize_t)got;
}

ssize_t
afp_pwrite(struct bench_conn *c, struct bench_file *f, const void *buf, size_t len, uint64_t off)
{
	return afp_transfer(c, f, (uint8_t *)(uintptr_t)buf, len, off, true);
}

int
afp_flush(struct bench_conn *c, struct bench_file *f)
{
	struct msg m;

	afp_msg_start(&m, FP_FLUSHFORK, 0);
	afp_msg_u16(&m, f->fork);
	return afp_do(c, &m, "flush", f->path);
}

int
afp_close(struct bench_conn *c, struct bench_file *f)
{
	struct msg m;
	int rc;

	if (!f)
		return 0;
	afp_msg_start(&m, FP_CLOSEFORK, 0);
	afp_msg_u16(&m, f->fork);
	rc = afp_do(c, &m, "close", f->path);
	free(f->path);
	free(f);
	return rc;
}

int
afp_copy(struct bench_conn *c, const char *from, const char *to)
{
	char parent[1024], name[256];
	struct msg m;

	afp_split(to, parent, sizeof(parent), name, sizeof(name));
	afp_msg_start(&m, FP_COPYFILE, 0);
	afp_msg_u16(&m, c->vid);
	afp_msg_u32(&m, ROOT_DID);
	afp_msg_u16(&m, c->vid);
	afp_msg_u32(&m, ROOT_DID);
	afp_msg_path(&m, c, from);
	afp_msg_path(&m, c, parent);
	afp_msg_utf8name(&m, name);
	return afp_do(c, &m, "server-side copy (FPCopyFile)", from);
}
