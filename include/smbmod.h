/* smbmod.h - the Samba VFS modules a smb.conf names, checked against the installed smbd. */
#ifndef NASTUNE_SMBMOD_H
#define NASTUNE_SMBMOD_H

#include <stddef.h>

/* The Debian package that ships Samba's loadable VFS modules. */
#define SMBMOD_PACKAGE "samba-vfs-modules"

/* Checks that every module the "vfs objects" lines of the smb.conf text conf names is built
 * into smbd or present as MODULESDIR/vfs/NAME.so (MODULESDIR from `smbd -b`), and that the
 * kernel lets io_uring run when one names it (smbmod_kernel_io_uring). path labels
 * the text in messages. Returns 0; 1 when smbd is not installed (nothing to check against);
 * -ENOENT with err naming path:line, the module and the package to install; -errno when smbd
 * cannot be asked. */
int smbmod_check(const char *path, const char *conf, size_t len, char *err, size_t errlen);

/* Whether this kernel lets smbd (root) use io_uring: kernel.io_uring_disabled (read under
 * procroot, NULL for the real /proc) below 2 and an io_uring_setup that succeeds here. Returns
 * 1, or 0 with the reason in why. */
int smbmod_kernel_io_uring(const char *procroot, char *why, size_t whylen);
/* Whether smbd can run vfs_io_uring on this host: the module built in or installed in
 * MODULESDIR/vfs, and smbmod_kernel_io_uring. Returns 1, or 0 with the reason in why. */
int smbmod_io_uring(char *why, size_t whylen);

#endif
