/* smbmod.h - the Samba VFS modules a smb.conf names, checked against the installed smbd. */
#ifndef NASTUNE_SMBMOD_H
#define NASTUNE_SMBMOD_H

#include <stddef.h>

/* The Debian package that ships Samba's loadable VFS modules. */
#define SMBMOD_PACKAGE "samba-vfs-modules"

/* Checks that every module the "vfs objects" lines of the smb.conf text conf names is built
 * into smbd or present as MODULESDIR/vfs/NAME.so (MODULESDIR from `smbd -b`). path labels
 * the text in messages. Returns 0; 1 when smbd is not installed (nothing to check against);
 * -ENOENT with err naming path:line, the module and the package to install; -errno when smbd
 * cannot be asked. */
int smbmod_check(const char *path, const char *conf, size_t len, char *err, size_t errlen);

#endif
