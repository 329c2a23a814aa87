#!/bin/bash
# apply proves each share served from the server itself after the reload (SMB tree connect,
# NFS mount through libnfs, AFP FPOpenVol as guest) and lists the proofs in --json; a share
# the server refuses for a reason no pre-check sees (a site include in smb.conf.d that says
# `available = no`) fails the proof: the apply rolls back to the previous generation, reloads
# and exits 1 naming the share, the protocol and the server's answer.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 15

# nt CONF ARGS...: nastune inside the server host, on its root; sets $out, $err, $rc.
nt() {
	local conf=$1
	shift
	out=$(on server "$NASTUNE" --root "$SROOT" -c "$conf" "$@" 2>"$WORK/err") && rc=0 || rc=$?
	err=$(cat "$WORK/err")
}
json() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); p={(x["share"], x["protocol"]): x for x in d["proofs"]}; sys.exit(0 if eval(sys.argv[2]) else 1)' "$out" "$1"; }
sums() { (cd "$SROOT" && sha256sum etc/samba/smb.conf etc/ganesha/ganesha.conf etc/netatalk/afp.conf); }

# An added guest share on every protocol: every share answers on every protocol it uses.
mkdir -p "$SROOT/srv/served"
chmod 1777 "$SROOT/srv/served"
sed 's|^shares = (|shares = (\n  { name = "Served"; path = "/srv/served"; protocols = ["smb", "nfs", "afp"]; guest = true; },|' \
	"$DEMO" >"$WORK/add.conf"
nt "$WORK/add.conf" --json apply
ok "$rc" "apply of a new share on all protocols exits 0" "$err"
json 'd["generation"] is not None and set(d["reloaded"]) >= {"smbd", "ganesha.nfsd", "afpd"}'
ok $? "--json: a generation and the reloaded daemons" "$out"
json 'all(p[("Served", x)]["served"] is True for x in ("smb", "nfs", "afp"))'
ok $? "--json: the new share is proven over smb, nfs and afp" "$out"
json 'p[("Media", "smb")]["served"] is True and "access denied" in p[("Media", "smb")]["answer"]'
ok $? "a share with valid users: access denied for guest still proves it served" "$out"
json 'p[("Media", "nfs")]["served"] is True and p[("Public", "nfs")]["served"] is True and p[("Archive", "nfs")]["served"] is True'
ok $? "every NFS export mounts through libnfs (Media's from an address among its clients)" "$out"
json 'p[("Media", "afp")]["served"] is None and p[("Public", "afp")]["served"] is True'
ok $? "AFP: a guest volume is opened; a users-only volume is listed as not proven, with why" "$out"
json 'not any(x["served"] is False for x in d["proofs"])'
ok $? "no share is reported not served" "$out"

# A restart-class knob (nfs.threads: RPC_Ioq_ThrdMax): --json lists ganesha.nfsd as restarted,
# and the exports are proven through the restarted daemon.
sed 's|budget = "5m"; };|budget = "5m"; knobs = { nfs = { threads = "16"; }; }; };|' "$WORK/add.conf" >"$WORK/threads.conf"
nt "$WORK/threads.conf" --json apply
json 'd["restarted"] == ["ganesha.nfsd"] and "ganesha.nfsd" not in d["reloaded"] and all(x["served"] is True for x in d["proofs"] if x["protocol"] == "nfs")'
ok $? "--json: a restart-class knob lists ganesha.nfsd as restarted, and its exports proven after it" "$rc $out $err"
nt "$WORK/add.conf" apply
ok "$rc" "and back (restarted again)" "$err"

# A site include that switches Media off: testparm is happy, the reload works, only a tree
# connect shows it. The apply must roll back.
before=$(sums)
mkdir -p "$SROOT/etc/samba/smb.conf.d"
printf '[Media]\n\tavailable = no\n' >"$SROOT/etc/samba/smb.conf.d/local.conf"
sed 's/"Anyone on the LAN"/"Anyone, proven"/' "$WORK/add.conf" >"$WORK/changed.conf"
nt "$WORK/changed.conf" --json apply
ok "$([[ $rc = 1 ]]; echo $?)" "a share smbd refuses after the reload: apply exits 1" "$rc $err"
grep -q 'apply failed at prove: served: share "Media" is not served over smb: tree connect: .*NT_STATUS_BAD_NETWORK_NAME' <<<"$err"
ok $? "the failure names the share, the protocol and the server's answer" "$err"
json 'd["rolled_back"] is True and d["generation"] is None and p[("Media", "smb")]["served"] is False'
ok $? "--json: rolled back, no generation, Media over smb not served" "$out"
ok "$([[ $(sums) = "$before" ]]; echo $?)" "the previous generation's files are back" "$(sums)"
# A site include requiring SMB encryption: smbd refuses the guest session itself (logon
# failure), before any share is named, for a share that does not exist (Media, switched off)
# as for one that does. That answer proves nothing: not proven, never "served".
printf '[global]\n\tserver smb encrypt = required\n[Media]\n\tavailable = no\n' >"$SROOT/etc/samba/smb.conf.d/local.conf"
nt "$WORK/changed.conf" --json apply
json 'p[("Media", "smb")]["served"] is None and "logon failure" in p[("Media", "smb")]["answer"] and p[("Served", "smb")]["served"] is None'
ok $? "a guest session refused (encryption required): Media, switched off, is not proven (was: served)" "$rc $out $err"
rm -f "$SROOT/etc/samba/smb.conf.d/local.conf"
nt "$WORK/add.conf" apply
nt "$WORK/changed.conf" apply
ok "$rc" "without the site include the same apply is proven and exits 0" "$err"

rm -rf "$SROOT/srv/served"
"$LAB" apply "$DEMO" >/dev/null 2>&1
done_testing
