#!/usr/bin/env bash
# smb.io_uring where Samba has no io_uring module (a stand-in smbd on PATH whose module
# directory lacks io_uring.so): `knobs` says tune may not try it and why; `check` and `apply`
# refuse it set to "yes" with the file:line, the reason and the fix (exit 2), and apply writes
# nothing. Rendering it (io_uring last in vfs objects, testparm) is the golden tests' job.
. "$(dirname "$0")/lib.sh"
plan 7
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/modules/vfs"
cat >"$tmp/bin/smbd" <<EOS
#!/bin/sh
printf 'Paths:\n   MODULESDIR: %s\nBuiltin modules:\n   vfs_default vfs_posixacl\n' "$tmp/modules"
EOS
chmod +x "$tmp/bin/smbd"
touch "$tmp/modules/vfs/catia.so" "$tmp/modules/vfs/fruit.so" "$tmp/modules/vfs/streams_xattr.so"
export PATH="$tmp/bin:$PATH"

nt -c "$top/profiles/demo.conf" knobs smb.io_uring
is "$rc" 0 "knobs smb.io_uring exits 0"
echo "$out" | grep -q "tune: .*this host cannot run it: this Samba has no io_uring module"
ok $? "knobs: tune may not try it, and says why" "$out"
nt -c "$top/profiles/demo.conf" --json knobs smb.io_uring
python3 -c 'import json,sys; t=json.load(sys.stdin)["knobs"][0]["tune"]; sys.exit(not (t["allowed"] is False and "no io_uring module" in t["reason"]))' <<<"$out"
ok $? "knobs --json: not allowed, with the reason" "$out"

printf 'profile = "demo";\ntuning = { knobs = { smb = { io_uring = "yes"; }; }; };\n' >"$tmp/u.conf"
nt -c "$tmp/u.conf" check
is "$rc" 2 "check refuses smb.io_uring = yes here (exit 2)"
echo "$err" | grep -q "u.conf:2: smb.io_uring = \"yes\" cannot work on this host: this Samba has no io_uring module .* set it to \"no\""
ok $? "... naming file:line, the reason and the fix" "$err"
r=$tmp/root; srvdirs "$r"
nt --root "$r" -c "$tmp/u.conf" apply --no-reload
is "$rc" 2 "apply refuses it (exit 2)"
[ ! -e "$r/etc" ] && [ ! -e "$r/var" ]; ok $? "... and writes nothing" "$(find "$r" -maxdepth 3)"
