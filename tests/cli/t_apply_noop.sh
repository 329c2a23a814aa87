#!/usr/bin/env bash
# `apply --if-changed` with nothing to do (the postinst path, run on every package install)
# touches nothing: no write to the state database, no WAL or index file made and removed, no
# lock file created or rewritten. Checked without timing: the state directory's entries (inode,
# size, mtime to the nanosecond) and the directory's own mtime before and after, and, under
# strace, no open for writing and no write, rename, unlink, mkdir or truncate at all. A journal
# left pending, or a changed configuration, still takes the long way.
. "$(dirname "$0")/lib.sh"
plan 7
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
r=$tmp/root; srvdirs "$r"
conf=$top/profiles/demo.conf
sdir=$r/var/lib/nastune
snap() { (cd "$sdir" && stat -c '%n %i %s %.9Y' . * | sort); }

nt --root "$r" -c "$conf" apply --no-reload; is "$rc" 0 "a first apply records generation 1"
before=$(snap)
nt --root "$r" -c "$conf" apply --no-reload --if-changed
ok $(( rc != 0 )) "--if-changed with nothing to do exits 0" "$err"
is "$(snap)" "$before" "the state directory is as it was: no database write, no lock rewrite, no WAL made"

# Everything that could change a file, made visible: opens with a write flag, writes to
# anything but stdout/stderr, renames, unlinks, directories made, truncations.
strace -f -qq -e trace=open,openat,creat,write,pwrite64,writev,pwritev,pwritev2,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat,rmdir,truncate,ftruncate,link,linkat,symlink,symlinkat,fchmod,fchmodat,fchown,fchownat,utimensat \
	-o "$tmp/trace" "$NASTUNE" --datadir "$top" --root "$r" -c "$conf" apply --no-reload --if-changed 2>/dev/null
touched=$(grep -vE '^[0-9]+ +(open|openat)\([^)]*O_RDONLY[^)]*\)' "$tmp/trace" |
	grep -vE '^[0-9]+ +(write|writev)\([12],' | grep -vE '^[0-9]+ +\+\+\+|^[0-9]+ +---' |
	grep -E 'O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|^[0-9]+ +(creat|write|pwrite|writev|pwritev|rename|unlink|mkdir|rmdir|truncate|ftruncate|link|symlink|fchmod|fchown|utimensat)')
ok $([ -z "$touched" ]; echo $?) "under strace: no open for writing, no write, rename, unlink, mkdir or truncate" "$touched"

# A journal left by an interrupted apply is never skipped: the long way restores it.
printf 'prev 1\n' >"$sdir/pending"
nt --root "$r" -c "$conf" apply --no-reload --if-changed
[ ! -e "$sdir/pending" ]; ok $? "a pending journal is recovered, not skipped (exit $rc)" "$err"

# A changed configuration is applied.
sed 's/description = "nastune demo NAS"/description = "another NAS"/' "$conf" >"$tmp/c.conf"
nt --root "$r" -c "$tmp/c.conf" apply --no-reload --if-changed
is "$rc" 0 "--if-changed applies a changed configuration"
echo "$err" | grep -q "applied as generation 2"; ok $? "... as generation 2" "$err"
