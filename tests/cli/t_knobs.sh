#!/usr/bin/env bash
# knobs: `nastune knobs --json` shape, pinned vs tuned values and what tune may try, config
# and tuned.conf diagnostics, and apply + rollback carrying tuned.conf with the configs.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan 49

r="$tmp/root"; mkdir -p "$r/etc/nastune"; srvdirs "$r"
cat >"$tmp/nas.conf" <<'CONF'
shares = ( { name = "Data"; path = "/srv/data"; guest = true; protocols = ["smb", "nfs"]; } );
protocols = { nfs = { enabled = true; server = "kernel"; }; };
services = { backend = "none"; };
tuning = { knobs = { smb = {
  use_sendfile = "yes"; }; }; };
CONF
json() { echo "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); k={x['name']: x for x in d['knobs']}; sys.exit(0 if ($1) else 1)"; }

# --- the shape
nt --root "$r" -c "$tmp/nas.conf" knobs --json;  is "$rc" 0 "knobs --json exits 0"
json 'len(d["knobs"]) == 42 and len(k) == 42'; ok $? "42 knobs, unique names"
json 'all(set(x) == {"name","protocol","parameter","where","file","value","source","set_at","default","candidates","safety","unsafe_values","visible_values","changes","effect","workloads","why","tune"} for x in d["knobs"])'
ok $? "every knob has the same keys"
json 'all(set(x["tune"]) == {"allowed","reason","candidates"} and [c["value"] for c in x["tune"]["candidates"]] == x["candidates"] for x in d["knobs"])'
ok $? "tune lists each candidate with allowed/reason"
json 'all(x["safety"] in ("safe","unsafe","semantics") and x["effect"] in ("reload","restart","live") and x["source"] in ("unset","config","tuned") for x in d["knobs"])'
ok $? "safety, effect and source are from their fixed sets"
json 'set(w for x in d["knobs"] for w in x["workloads"]) <= {"seq-write","seq-read","copy-in-share","mixed-rw","small-files","small-io","random-io","metadata","video-frames","big-dir","source-tree"} and all(x["workloads"] for x in d["knobs"])'
ok $? "workloads use the benchmark's names"
json 'k["smb.aio_read_size"]["protocol"] == "smb" and k["smb.aio_read_size"]["parameter"] == "aio read size" and k["smb.aio_read_size"]["file"] == "/etc/samba/smb.conf" and k["sys.tcp_rmem"]["protocol"] is None and k["sys.tcp_rmem"]["file"] == "/etc/sysctl.d/90-nastune.conf" and k["net.mtu"]["file"] is None'
ok $? "protocol, parameter and file per knob"
json 'k["smb.use_sendfile"]["value"] == "yes" and k["smb.use_sendfile"]["source"] == "config" and k["smb.use_sendfile"]["set_at"].endswith("/nas.conf:5")'
ok $? "a pinned knob: value, source config, set_at file:line"
json 'k["smb.use_sendfile"]["tune"]["allowed"] is False and "pinned in nastune.conf" in k["smb.use_sendfile"]["tune"]["reason"]'
ok $? "tune may not touch a pinned knob, and says so"
json 'k["smb.strict_sync"]["safety"] == "unsafe" and k["smb.strict_sync"]["unsafe_values"] == ["no"] and [c["allowed"] for c in k["smb.strict_sync"]["tune"]["candidates"]] == [True, False] and "allow_unsafe" in k["smb.strict_sync"]["tune"]["candidates"][1]["reason"]'
ok $? "an unsafe value is refused without tuning.allow_unsafe"
json 'k["nfs.threads"]["tune"]["allowed"] is False and "not applicable" in k["nfs.threads"]["tune"]["reason"] and k["nfs.export_sync"]["tune"]["allowed"] is True'
ok $? "Ganesha knobs are not applicable under the kernel server"
json 'k["smb.aio_write_size"]["value"] is None and k["smb.aio_write_size"]["source"] == "unset" and k["smb.aio_write_size"]["default"] == "1"'
ok $? "an unset knob: no value, the daemon default shown"
nt --json --root "$r" -c "$tmp/nas.conf" knobs smb.strict_sync
json 'len(d["knobs"]) == 1 and d["allow_unsafe"] is False'; ok $? "global --json and a name filter"
nt --root "$r" -c "$tmp/nas.conf" knobs smb.nope;  is "$rc" 2 "an unknown knob name exits 2"
nt --root "$r" -c "$tmp/nas.conf" knobs
[ "$rc" = 0 ] && [ "$(echo "$out" | grep -cE '^(smb|nfs|afp|sys|net)\.[a-z_]+  \[')" = 42 ]
ok $? "the text listing shows every knob"

# --- the semantics class: values that change what clients see need a consent
nt --json --root "$r" -c "$tmp/nas.conf" knobs
json 'k["smb.case_sensitive"]["safety"] == "semantics" and k["smb.case_sensitive"]["visible_values"] == ["yes"] and "case-sensitive" in k["smb.case_sensitive"]["changes"] and [c["allowed"] for c in k["smb.case_sensitive"]["tune"]["candidates"]] == [True, False] and "tuning.allow" in k["smb.case_sensitive"]["tune"]["candidates"][1]["reason"] and k["smb.oplocks"]["safety"] == "safe" and k["smb.oplocks"]["changes"] is None'
ok $? "a semantics value is refused to tune without consent, and says what it would change"
nt --root "$r" -c "$tmp/nas.conf" knobs
echo "$out" | grep -q '^  changes:    names become case-sensitive' && echo "$out" | grep -q '^smb.fruit_metadata  \['
ok $? "the text listing names the class and what would change"
sed 's/^tuning = {/tuning = { allow = ["semantics"];/' "$tmp/nas.conf" >"$tmp/allow.conf"
nt --json --root "$r" -c "$tmp/allow.conf" knobs smb.case_sensitive smb.store_dos_attributes
json 'd["allow_semantics"] is True and all(c["allowed"] for c in k["smb.case_sensitive"]["tune"]["candidates"] + k["smb.store_dos_attributes"]["tune"]["candidates"])'
ok $? "tuning.allow = [\"semantics\"] lets tune try them"
cat >"$tmp/sem.conf" <<'CONF'
protocols = { smb = { apple = true; }; };
shares = ( { name = "Data"; path = "/srv/data"; guest = true;
    allow = ["semantics", "unsafe"]; } );
tuning = { allow = ["semantik"];
  knobs = { smb = { case_sensitive = "yes";
    ea_support = "no"; }; }; };
CONF
nt --root "$r" -c "$tmp/sem.conf" check;  is "$rc" 2 "bad consents exit 2"
echo "$err" | grep -q "^$tmp/sem.conf:3: shares\[0\].allow\[1\] \"unsafe\" is the whole server's"
ok $? "a share cannot allow unsafe: file:line"
echo "$err" | grep -q "^$tmp/sem.conf:4: tuning.allow\[0\] 'semantik' is not valid — did you mean 'semantics'?"
ok $? "an unknown class: file:line and did-you-mean"
echo "$err" | grep -q "^$tmp/sem.conf:6: tuning.knobs.smb.ea_support = no would reach only shares whose Apple support needs yes"
ok $? "a fruit share keeps ea support: the pin is refused, file:line"
! echo "$err" | grep -q 'case_sensitive'
ok $? "the share's own consent admits case_sensitive"
cat >"$tmp/nocons.conf" <<'CONF'
shares = ( { name = "Data"; path = "/srv/data"; guest = true; } );
tuning = { knobs = { smb = {
  case_sensitive = "yes"; name_case = "preserve"; }; }; };
CONF
nt --root "$r" -c "$tmp/nocons.conf" render -o "$tmp/nocons.out";  is "$rc" 2 "a semantics pin without consent exits 2"
echo "$err" | grep -q "^$tmp/nocons.conf:3: tuning.knobs.smb.case_sensitive = yes changes what clients see: names become case-sensitive.* — add \"semantics\" to tuning.allow" &&
	! echo "$err" | grep -q name_case && [ ! -e "$tmp/nocons.out" ]
ok $? "file:line, what would change and the fix; the default value needs none; nothing written"
printf 'knobs = { smb = { store_dos_attributes = "no"; oplocks = "no"; }; };\n' >"$r/etc/nastune/tuned.conf"
nt --root "$r" -c "$tmp/nas.conf" render --only smb
echo "$err" | grep -q "tuned.conf:1: warning: smb.store_dos_attributes = no changes what clients see" &&
	! echo "$out" | grep -q 'store dos attributes' && echo "$out" | grep -q '^	oplocks = no$'
ok $? "a tuned semantics value without consent is ignored with a warning; a safe one renders"
rm "$r/etc/nastune/tuned.conf"
sed 's/^tuning = {/tuning = { allow = ["unsafe"];/; s/use_sendfile = "yes";/use_sendfile = "yes"; strict_sync = "no";/' "$tmp/nas.conf" >"$tmp/unsafe.conf"
nt --root "$r" -c "$tmp/unsafe.conf" check;  is "$rc" 0 "tuning.allow = [\"unsafe\"] is allow_unsafe"

# --- configuration errors
cat >"$tmp/bad.conf" <<'CONF'
tuning = { knobs = {
  smb = { aio_read_sise = "1M";
    strict_sync = "no"; };
  sys = { tcp_rmem = "big"; }; }; };
CONF
nt --root "$r" -c "$tmp/bad.conf" check;  is "$rc" 2 "bad tuning.knobs exit 2"
echo "$err" | grep -q "^$tmp/bad.conf:2: unknown key 'aio_read_sise' in tuning.knobs.smb — did you mean 'aio_read_size'?"
ok $? "unknown knob: file:line and did-you-mean"
echo "$err" | grep -q "^$tmp/bad.conf:3: tuning.knobs.smb.strict_sync = no may lose data on power loss — set tuning.allow_unsafe = true"
ok $? "unsafe pin without allow_unsafe: file:line and the fix"
echo "$err" | grep -q "^$tmp/bad.conf:4: tuning.knobs.sys.tcp_rmem 'big' is not three ascending sizes"
ok $? "bad value: file:line and what is accepted"

printf 'knobs = {\n  smb = { use_sendfile = "no";\n    aio_read_size = "huge"; };\n};\n' >"$r/etc/nastune/tuned.conf"
nt --root "$r" -c "$tmp/nas.conf" check;  is "$rc" 2 "a bad tuned.conf exits 2"
echo "$err" | grep -q "^$r/etc/nastune/tuned.conf:3: knobs.smb.aio_read_size 'huge' is not a size"
ok $? "tuned.conf errors are file:line too"
echo "$err" | grep -q "^$r/etc/nastune/tuned.conf:2: warning: smb.use_sendfile is pinned in nastune.conf"
ok $? "a tuned value for a pinned knob is a warning"
rm "$r/etc/nastune/tuned.conf"

# --- apply + rollback: tuned.conf and the configs move together
nt --root "$r" -c "$tmp/nas.conf" apply;  is "$rc" 0 "first apply"
[ ! -e "$r/etc/nastune/tuned.conf" ] && [ ! -e "$r/etc/sysctl.d/90-nastune.conf" ]
ok $? "nothing tuned: no tuned.conf, no sysctl file"
# What tune will do: new knob values into tuned.conf (here written by hand, not canonical).
printf 'knobs = { smb = { aio_read_size = "1048576"; }; sys = { rmem_max = "16777216"; }; };\n' >"$r/etc/nastune/tuned.conf"
nt --json --root "$r" -c "$tmp/nas.conf" apply;  is "$rc" 0 "apply of the tuned knobs"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["generation"] == 2; assert set(d["changed"]) == {"/etc/samba/smb.conf", "/etc/nastune/tuned.conf", "/etc/sysctl.d/90-nastune.conf"}, d'
ok $? "smb.conf, tuned.conf and the sysctl file change in one generation"
grep -q '^	aio read size = 1048576$' "$r/etc/samba/smb.conf" && grep -q '^		aio_read_size = "1M";$' "$r/etc/nastune/tuned.conf" &&
	grep -q '^net.core.rmem_max = 16777216$' "$r/etc/sysctl.d/90-nastune.conf"
ok $? "the knob is in smb.conf, tuned.conf (canonical) and the sysctl file"
echo "$err" | grep -q "sysctl: /etc/sysctl.d/90-nastune.conf not loaded into the kernel (--root is a staging root)"
ok $? "the sysctl file is not loaded into this kernel under --root"
[ -f "$r/var/lib/nastune/generations/2/files/etc/nastune/tuned.conf" ]; ok $? "generation 2 keeps tuned.conf"
nt --root "$r" -c "$tmp/nas.conf" diff;  is "$rc" 0 "diff after apply: the installed files match"
nt --root "$r" -c "$tmp/nas.conf" rollback;  is "$rc" 0 "rollback to generation 1"
! grep -q 'aio read size' "$r/etc/samba/smb.conf" && [ ! -e "$r/etc/nastune/tuned.conf" ] && [ ! -e "$r/etc/sysctl.d/90-nastune.conf" ]
ok $? "rollback restores smb.conf and removes tuned.conf and the sysctl file together"
nt --json --root "$r" -c "$tmp/nas.conf" knobs smb.aio_read_size
json 'k["smb.aio_read_size"]["source"] == "unset"'; ok $? "after rollback the knob is back at the daemon default"
nt --root "$r" -c "$tmp/nas.conf" rollback 2;  is "$rc" 0 "rollback to the tuned generation"
grep -q '^	aio read size = 1048576$' "$r/etc/samba/smb.conf" && grep -q 'aio_read_size = "1M"' "$r/etc/nastune/tuned.conf"
ok $? "rollback 2 restores both the knob in smb.conf and tuned.conf"
# The user pins the knob afterwards: the pin wins and the next apply drops it from tuned.conf.
sed 's/use_sendfile = "yes";/use_sendfile = "yes"; aio_read_size = "64K";/' "$tmp/nas.conf" >"$tmp/pinned.conf"
nt --root "$r" -c "$tmp/pinned.conf" apply;  is "$rc" 0 "apply with the knob now pinned"
grep -q '^	aio read size = 65536$' "$r/etc/samba/smb.conf" && ! grep -q aio_read_size "$r/etc/nastune/tuned.conf" && grep -q rmem_max "$r/etc/nastune/tuned.conf"
ok $? "the pin wins; tuned.conf keeps only the other tuned knobs"
