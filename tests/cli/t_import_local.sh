#!/usr/bin/env bash
# import: what a box serves today as one nastune.conf; -o never over an existing file without
# --force; --check's exit status (0 nothing lost, 1 something lost, each named); the imported
# configuration applied over the files it came from passes apply's adoption guard.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plan 18
cases="$top/tests/golden/import/cases"
r="$tmp/office"; cp -r "$cases/office" "$r"

nt --root "$r" import
[ "$rc" = 0 ] && echo "$out" | grep -q 'name = "Backups"; path = "/srv/backups/tm"'
ok $? "import prints the configuration (exit $rc)" "$err"
echo "$err" | grep -q '^/etc/samba/smb.conf:36: kept as a site include: \[Projects\] force group = staff$'
ok $? "each line nastune.conf cannot say is named file:line" "$err"
[ ! -e "$r/etc/samba/smb.conf.d" ]; ok $? "without -o nothing is written"

nt --root "$r" import -o "$tmp/n.conf"
[ "$rc" = 0 ] && [ -s "$tmp/n.conf" ] && grep -q 'force group = staff' "$r/etc/samba/smb.conf.d/local.conf"
ok $? "-o writes the configuration and the site include" "$err"
cp "$tmp/n.conf" "$tmp/n.before"; echo "# mine" >>"$tmp/n.conf"
nt --root "$r" import -o "$tmp/n.conf"
[ "$rc" = 2 ] && echo "$err" | grep -q -- "$tmp/n.conf exists.*--force" && tail -n1 "$tmp/n.conf" | grep -qx '# mine'
ok $? "-o over an existing file without --force: exit 2, the file untouched" "$err"
nt --root "$r" import -o "$tmp/other.conf"
[ "$rc" = 2 ] && [ ! -e "$tmp/other.conf" ] && echo "$err" | grep -q 'local.conf exists'
ok $? "... nor over an existing site include: nothing written" "$err"
nt --root "$r" import -o "$tmp/n.conf" --force
[ "$rc" = 0 ] && cmp -s "$tmp/n.conf" "$tmp/n.before"
ok $? "--force replaces them" "$err"

nt --root "$r" -c "$tmp/n.conf" import --check
[ "$rc" = 0 ] && echo "$out" | grep -q 'served the same way'
ok $? "--check: the import loses nothing (exit $rc)" "$out$err"
nt --root "$r" import -o "$tmp/n2.conf" --force --check
is "$rc" 0 "-o FILE --check checks the file just written"

# Without a share, with other users, without Time Machine: each named, exit 1.
awk '/name = "Backups"/ { skip = 3 } skip { skip--; next } 1' "$tmp/n.conf" >"$tmp/noback.conf"
nt --root "$r" -c "$tmp/noback.conf" import --check
[ "$rc" = 1 ] && echo "$out" | grep -q "^/etc/samba/smb.conf:40: smb share 'Backups' (/srv/backups/tm): would no longer be served$"
ok $? "--check: a share left out is named with its file:line, exit 1" "$out$err"
# Scans keeps lines in the site include (its path with them): left out of nastune.conf, it
# is still served there, read-only.
sed '/name = "Scans"/d' "$tmp/n.conf" >"$tmp/noscans.conf"
nt --root "$r" -c "$tmp/noscans.conf" import --check
[ "$rc" = 1 ] && echo "$out" | grep -q "^/etc/samba/shares.conf:8: smb share 'Scans': writable, would be read-only$"
ok $? "--check: the site include's own section counts (a share left there, read-only)" "$out$err"
sed 's/valid_users = \["alice", "bob"\]/valid_users = ["alice"]/' "$tmp/n.conf" >"$tmp/users.conf"
nt --root "$r" -c "$tmp/users.conf" import --check
[ "$rc" = 1 ] && echo "$out" | grep -q "smb share 'Projects': valid users alice, bob, would be alice" &&
	echo "$out" | grep -q "afp volume 'Projects': valid users alice, bob, would be alice"
ok $? "--check: fewer users, over SMB and AFP, named" "$out$err"
sed 's/time_machine = { enabled = true; max_size = "2T"; };/time_machine = { enabled = true; max_size = "1T"; };/' "$tmp/n.conf" >"$tmp/tm.conf"
nt --root "$r" -c "$tmp/tm.conf" import --check
[ "$rc" = 1 ] && echo "$out" | grep -q "smb share 'Backups': Time Machine limit 2T, would be 1T"
ok $? "--check: a smaller Time Machine limit named" "$out$err"
sed 's#"192.168.10.0/24"#"192.168.10.0/25"#' "$tmp/n.conf" >"$tmp/nfs.conf"
nt --root "$r" -c "$tmp/nfs.conf" import --check
[ "$rc" = 1 ] && echo "$out" | grep -q "nfs export '/srv/projects': clients 192.168.10.0/24 rw, would be 192.168.10.0/24 rw, 192.168.10.0/25 rw"
ok $? "--check: other NFS clients named (/etc/exports stays in force beside nastune's)" "$out$err"

# An AFP volume without a volume name is shown in lower case: nastune's name differs.
r2="$tmp/lower"; cp -r "$cases/office" "$r2"; sed -i '/volume name = Projects/d' "$r2/etc/netatalk/afp.conf"
nt --root "$r2" import -o "$tmp/lower.conf" --check
[ "$rc" = 1 ] && echo "$out" | grep -q "^/etc/netatalk/afp.conf:8: afp volume 'projects': shown as 'projects', would be 'Projects'$" &&
	echo "$err" | grep -q "afp volume 'projects' is shown as 'Projects' from now on"
ok $? "--check: an AFP volume afpd shows in lower case is named, and import said so" "$out$err"

# The imported configuration applies over the files it came from; a config without them
# does not.
mkdir -p "$r"/srv/{public,scans,projects,backups/tm,backups/oldtm}
nt --root "$r" -c "$tmp/noback.conf" apply --no-reload
[ "$rc" = 2 ] && echo "$err" | grep -q "smb share 'Backups' (/srv/backups/tm): would no longer be served"
ok $? "apply without an imported share: exit 2, named" "$err"
nt --root "$r" -c "$tmp/n.conf" apply --no-reload
is "$rc" 0 "apply of the import passes the guard ($(echo "$err" | grep -m1 -E 'refuse|error|would no longer' ))"
grep -q 'include = /etc/samba/smb.conf.d/local.conf' "$r/etc/samba/smb.conf" && grep -q '^\[Scans\]' "$r/etc/samba/smb.conf"
ok $? "nastune's smb.conf serves the shares and includes the site include" "$err"
