/* fsutil.h - the only way nastune reads and writes files. */
#ifndef NASTUNE_FSUTIL_H
#define NASTUNE_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

/* Reads a whole file (at most max bytes) into a malloc'd NUL-terminated buffer the caller
 * frees. Returns 0 or -errno (-EFBIG when larger than max). */
int fs_read_file(const char *path, size_t max, char **out, size_t *len);

/* Writes atomically: temp file in the same directory, write loop, fsync, fchmod/fchown,
 * rename over path, fsync the directory. On failure the temp file is removed and path is
 * untouched. mode/uid/gid: when an old file exists and keep_owner is set, its mode and owner
 * are preserved instead. Returns 0 or -errno. */
int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode, int keep_owner);

/* fs_write_atomic for name in the open directory dirfd (the temp file created there without
 * following links, renamed over name, dirfd fsync'd): for directories opened and proven
 * by handle, where a path could be swapped between the check and the write. */
int fs_write_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode);

/* Removes path and fsyncs its directory, so that a crash cannot bring it back. Returns 0
 * (also when it did not exist) or -errno. */
int fs_remove_durable(const char *path);

/* mkdir -p with mode for every created component, each one made durable (its parent
 * directory fsync'd). Returns 0 or -errno. */
int fs_mkdir_p(const char *path, mode_t mode);

/* root + abs ("/etc/x"), or abs when root is NULL or "". Caller frees. */
char *fs_rooted(const char *root, const char *abs);

#endif
