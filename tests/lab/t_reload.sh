#!/bin/bash
# A share added, renamed, removed + `lab apply` (nastune, reload through the pidfiles): the
# running daemons serve the new set at once, with no lab restart and no daemon restart.
# Then knobs only a restart picks up (nfs.threads, nfs.versions, afp.server_quantum, planted in
# tuned.conf): ganesha.nfsd and afpd are restarted through services.<svc>.start (the lab's
# /run/lab/start in demo.conf) and serve the new values; a reload-class knob restarts
# nothing; without a start command the apply warns and reloads; rollback restarts again;
# tune's trials restart, and the end of the trials restarts back.
# A Ganesha that listens before it serves: the apply waits until MOUNT answers.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 56

pidfiles=(run/samba/smbd.pid run/ganesha/ganesha.pid run/netatalk/afpd.pid run/avahi-daemon/pid)
pids_before=$(for f in "${pidfiles[@]}"; do server_pid "$f"; echo; done)

# with_share NAME PATH: demo.conf plus one guest share on smb, nfs and afp.
with_share() {
	sed 's|^shares = (|shares = (\n  { name = "'"$1"'"; path = "'"$2"'"; protocols = ["smb", "nfs", "afp"]; guest = true; },|' \
		"$DEMO"
}

# until_ok SECONDS CMD...: retries CMD (mDNS and reloads settle asynchronously).
until_ok() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 5; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	"$@"
}

smb_has() { on client1 smbclient -N -L "//$SERVER" 2>/dev/null | grep -qE "^\s+$1\s+Disk"; }
nfs_has() { on client1 nfs-ls "nfs://$SERVER$1" >/dev/null 2>&1; }
afp_has() { on client1 "$AFP" "$SERVER" volumes 2>/dev/null | grep -qix "$1"; }
mdns_has() { on client1 timeout 5 avahi-browse -tp _nfs._tcp 2>/dev/null | grep -q "atlas\\\\032$1;"; }
not() { ! "$@"; }

mkdir -p "$SROOT/srv/extra"
chmod 1777 "$SROOT/srv/extra"
echo extra >"$SROOT/srv/extra/hello.txt"

# Added.
with_share Extra /srv/extra >"$WORK/add.conf"
check "apply: share Extra added" "$LAB" apply "$WORK/add.conf"
check "added: smbd lists Extra" until_ok 5 smb_has Extra
check "added: guest writes to Extra over SMB" \
	on client1 smbclient -N "//$SERVER/Extra" -c "put $DEMO demo.conf; del demo.conf"
check "added: ganesha exports /srv/extra" until_ok 5 nfs_has /srv/extra
check "added: afpd offers the extra volume" until_ok 5 afp_has extra
check "added: client1 browses atlas Extra (_nfs._tcp)" until_ok 5 mdns_has Extra

# Renamed (and moved).
mv "$SROOT/srv/extra" "$SROOT/srv/renamed"
with_share Renamed /srv/renamed >"$WORK/rename.conf"
check "apply: Extra renamed to Renamed" "$LAB" apply "$WORK/rename.conf"
check "renamed: smbd lists Renamed" until_ok 5 smb_has Renamed
check "renamed: smbd no longer lists Extra" until_ok 5 not smb_has Extra
grep_out "renamed: the file is there over SMB" 'hello\.txt' \
	on client1 smbclient -N "//$SERVER/Renamed" -c ls
check "renamed: ganesha exports /srv/renamed" until_ok 5 nfs_has /srv/renamed
check "renamed: ganesha no longer exports /srv/extra" until_ok 5 not nfs_has /srv/extra
check "renamed: afpd offers the renamed volume" until_ok 5 afp_has renamed
check "renamed: afpd no longer offers extra" until_ok 5 not afp_has extra
check "renamed: client1 browses atlas Renamed" until_ok 5 mdns_has Renamed
check "renamed: atlas Extra is withdrawn" until_ok 5 not mdns_has Extra

# Removed.
check "apply: back to demo.conf (Renamed removed)" "$LAB" apply "$DEMO"
check "removed: smbd no longer lists Renamed" until_ok 5 not smb_has Renamed
check "removed: ganesha no longer exports /srv/renamed" until_ok 5 not nfs_has /srv/renamed
check "removed: afpd no longer offers renamed" until_ok 5 not afp_has renamed
check "removed: atlas Renamed is withdrawn" until_ok 5 not mdns_has Renamed
check "removed: the demo shares are still served (SMB Media)" smb_has Media
check "removed: the demo shares are still served (NFS /srv/public)" nfs_has /srv/public

pids_after=$(for f in "${pidfiles[@]}"; do server_pid "$f"; echo; done)
[[ $pids_before = "$pids_after" ]]
ok $? "smbd, ganesha, afpd and avahi were reloaded, not restarted" \
	"before: $(echo $pids_before) after: $(echo $pids_after)"
out=$("$LAB" status 2>&1)
! grep -q DOWN <<<"$out"
ok $? "every lab daemon is still running" "$out"
rm -rf "$SROOT/srv/renamed" "$SROOT/srv/extra"

# --- restart-class knobs
cleanup() { rm -f "$SROOT/etc/nastune/tuned.conf"; "$LAB" apply "$DEMO" >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT
gpid() { server_pid run/ganesha/ganesha.pid; }
apid() { server_pid run/netatalk/afpd.pid; }
spid() { server_pid run/samba/smbd.pid; }
# gone PID: exited (a zombie init has not reaped yet counts as gone).
gone() { [[ ! -r /proc/$1/stat ]] || sed 's/.*) //' "/proc/$1/stat" | grep -q '^[ZX]'; }
tuned() { printf 'knobs = { %s };\n' "$1" >"$SROOT/etc/nastune/tuned.conf"; }
# lapply [CONFIG]: lab apply, output in $log.
lapply() { "$LAB" apply "${1:-$DEMO}" >"$WORK/apply.log" 2>&1; rc=$?; log=$(<"$WORK/apply.log"); }
ns() { "$LAB" exec server "$NASTUNE" --root "$SROOT" -c "$DEMO" "$@" 7>&-; }
gen() { ns --json status 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["generations"][-1])'; }
PA=$(password alice)
nfs_read() {
	rm -f "$WORK/readme.nfs"
	on client1 nfs-cp "nfs://$SERVER/srv/archive/README.txt" "$WORK/readme.nfs" &&
		cmp -s "$WORK/readme.nfs" "$SROOT/srv/archive/README.txt"
}
nfs_versions() { on client1 rpcinfo -p "$SERVER" | awk '$1 == 100003 && $3 == "tcp" { print $2 }' | sort -u | tr '\n' ' '; }
quantum() { on client1 "$AFP" "$SERVER" quantum 2>&1 | sed -n 's/^server quantum: //p'; }
afp_login() { on client1 "$AFP" "$SERVER" -u alice -p "$PA" volumes 2>/dev/null | grep -qix media; }

g0=$(gen)
G0=$(gpid) A0=$(apid) S0=$(spid)
q0=$(quantum) v0=$(nfs_versions)
[[ $q0 = 1048576 && $v0 = "3 4 " ]]
ok $? "before: afpd offers the default server quantum, ganesha registers NFS v3 and v4" "quantum '$q0' versions '$v0'"

# A reload-class knob: smbd reloads, nothing restarts.
tuned 'smb = { use_sendfile = "yes"; };'
lapply
[[ $rc = 0 ]] && grep -q "smbd: reloaded (pidfile backend)" <<<"$log" && ! grep -q restarted <<<"$log"
ok $? "smb.use_sendfile (reload class): smbd reloaded, nothing restarted" "$log"
[[ $(gpid) = "$G0" && $(apid) = "$A0" && $(spid) = "$S0" ]]
ok $? "... ganesha, afpd and smbd keep their pids" "before $G0 $A0 $S0 after $(gpid) $(apid) $(spid)"

# nfs.threads: ganesha.nfsd restarts, and serves.
tuned 'smb = { use_sendfile = "yes"; }; nfs = { threads = "16"; };'
lapply
[[ $rc = 0 ]] && grep -q "ganesha.nfsd: restarted (pidfile backend): RPC_Ioq_ThrdMax changed" <<<"$log"
ok $? "nfs.threads = 16: the apply restarts ganesha.nfsd, naming RPC_Ioq_ThrdMax" "$log"
G1=$(gpid)
[[ -n $G1 && $G1 != "$G0" ]] && gone "$G0" && ! gone "$G1"
ok $? "... a new ganesha.nfsd runs ($G0 -> $G1), the old one is gone"
grep -q "RPC_Ioq_ThrdMax = 16;" "$SROOT/etc/ganesha/ganesha.conf"
ok $? "... with RPC_Ioq_ThrdMax = 16 in the file it started from" "$(cat "$SROOT/etc/ganesha/ganesha.conf")"
check "... client1 reads a file over NFS from the restarted ganesha" until_ok 10 nfs_read
[[ $(apid) = "$A0" && $(spid) = "$S0" ]]
ok $? "... afpd and smbd were not restarted" "before $A0 $S0 after $(apid) $(spid)"

# nfs.versions: a restart makes the running ganesha register NFSv3 alone (what only its start
# reads: NFS_CORE_PARAM Protocols).
tuned 'smb = { use_sendfile = "yes"; }; nfs = { threads = "16"; versions = "3"; };'
lapply
[[ $rc = 0 ]] && grep -q "ganesha.nfsd: restarted (pidfile backend): Protocols changed" <<<"$log"
ok $? "nfs.versions = 3: the apply restarts ganesha.nfsd, naming Protocols" "$log"
G2=$(gpid)
[[ -n $G2 && $G2 != "$G1" ]] && gone "$G1"
ok $? "... a new ganesha.nfsd ($G1 -> $G2)"
v=$(nfs_versions)
[[ $v = "3 " ]]
ok $? "... the running ganesha registers NFS version 3 only (rpcinfo from client1: '$v')"
check "... and still serves NFSv3" until_ok 10 nfs_read

# afp.server_quantum: afpd restarts and offers the new quantum; ganesha is left alone.
tuned 'smb = { use_sendfile = "yes"; }; nfs = { threads = "16"; versions = "3"; }; afp = { server_quantum = "4M"; };'
lapply
[[ $rc = 0 ]] && grep -q "afpd: restarted (pidfile backend): server quantum changed" <<<"$log" &&
	! grep -q "ganesha.nfsd: restarted" <<<"$log"
ok $? "afp.server_quantum = 4M: the apply restarts afpd (only), naming server quantum" "$log"
A1=$(apid)
[[ -n $A1 && $A1 != "$A0" ]] && gone "$A0" && [[ $(gpid) = "$G2" ]]
ok $? "... a new afpd ($A0 -> $A1), ganesha keeps its pid"
q=$(quantum)
[[ $q = 4194304 ]]
ok $? "... the running afpd offers server quantum 4194304 (DSIOpenSession from client1: '$q')"
check "... alice logs in to the restarted afpd (DHX2) and sees Media" until_ok 10 afp_login

# No start command: the apply reloads and warns; the running ganesha keeps its NFS_CORE_PARAM
# Protocols (still v3 only), which only a start reads.
sed '/start = "\/run\/lab\/start/d' "$DEMO" >"$WORK/nostart.conf"
tuned 'smb = { use_sendfile = "yes"; }; nfs = { threads = "16"; }; afp = { server_quantum = "4M"; };'
lapply "$WORK/nostart.conf"
[[ $rc = 0 ]] && grep -q 'ganesha.nfsd: Protocols changed, which only a restart picks up, and services.nfs.start is not set: reloaded instead.*set services.nfs.start = "..."' <<<"$log" &&
	grep -q "ganesha.nfsd: reloaded (pidfile backend)" <<<"$log" && ! grep -q restarted <<<"$log"
ok $? "no services.nfs.start: the apply succeeds, reloads ganesha.nfsd and says how to restart it" "$log"
v=$(nfs_versions)
[[ $(gpid) = "$G2" && $v = "3 " ]]
ok $? "... same ganesha pid, still registering NFSv3 only although the file says 3, 4 ('$v')"

# Rollback to the generation before the knobs: both daemons restart to the old values.
ns rollback "$g0" >"$WORK/rb.log" 2>&1
rc=$?
log=$(<"$WORK/rb.log")
[[ $rc = 0 ]] && grep -q "ganesha.nfsd: restarted (pidfile backend): RPC_Ioq_ThrdMax changed" <<<"$log" &&
	grep -q "afpd: restarted (pidfile backend): server quantum changed" <<<"$log" &&
	grep -q "smbd: reloaded" <<<"$log"
ok $? "rollback $g0: ganesha.nfsd and afpd restarted, smbd reloaded" "$log"
[[ $(gpid) != "$G2" && $(apid) != "$A1" && $(spid) = "$S0" ]] && gone "$G2" && gone "$A1"
ok $? "... new ganesha and afpd pids, smbd's kept"
v=$(nfs_versions) q=$(quantum)
[[ $v = "3 4 " && $q = 1048576 ]]
ok $? "... the running daemons are back to NFS v3 and v4 and quantum 1048576 ('$v', '$q')"
check "... client1 reads over NFS again" until_ok 10 nfs_read
check "... alice logs in over AFP again" until_ok 10 afp_login
! grep -q "RPC_Ioq_ThrdMax" "$SROOT/etc/ganesha/ganesha.conf" && [[ ! -e $SROOT/etc/nastune/tuned.conf ]]
ok $? "... the files are generation $g0's (no RPC_Ioq_ThrdMax, no tuned.conf)"
lapply
[[ $rc = 0 ]] && grep -q "nothing to do" <<<"$log"
ok $? "demo.conf applied after the rollback: nothing to do" "$log"

# tune's trials of a restart-class knob restart afpd with each value, and the end of the
# trials restarts it with the value in force before them (a dry run keeps that one); -v, since
# a trial's restart is a line only then.
CR=$SROOT/etc/nastune/reload.creds
printf 'username = alice\npassword = %s\n' "$PA" >"$CR"
chmod 600 "$CR"
A2=$(apid)
ns -v tune --dry-run --knobs afp.server_quantum --size 16M --repeat 8 --credentials "$CR" >"$WORK/tune.log" 2>&1
rc=$?
log=$(<"$WORK/tune.log")
[[ $rc = 0 ]] && [[ $(grep -c "afpd: restarted (pidfile backend): server quantum changed" <<<"$log") -ge 4 ]]
ok $? "tune --dry-run --knobs afp.server_quantum: afpd restarted for each trial and after them" "$log"
q=$(quantum)
[[ $q = 1048576 && $(apid) != "$A2" ]] && gone "$A2" && ! grep -q quantum "$SROOT/etc/netatalk/afp.conf"
ok $? "... after the trials the running afpd is back to quantum 1048576 ('$q'), the file too"
rm -f "$CR"

# A Ganesha that listens before it serves (as one started by systemd, Type=forking, does for a
# moment): a stand-in holds port 2049 and the pidfile for 4 s, answering nothing, then the real
# one starts. The apply returns only once MOUNT answers, so a client reads at its first try.
cat >"$SROOT/run/lab/slowstart" <<'EOF2'
#!/bin/sh
rm -f /run/ganesha/ganesha.pid
( python3 -c '
import os, socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 2049)); s.listen(64); s.settimeout(0.1)
open("/run/ganesha/ganesha.pid", "w").write(str(os.getpid()))
held, end = [], time.time() + 4
while time.time() < end:
    try: held.append(s.accept()[0])
    except socket.timeout: pass
' && exec /run/lab/start ganesha ) </dev/null >/dev/null 2>&1 &
EOF2
chmod 755 "$SROOT/run/lab/slowstart"
sed 's|/run/lab/start ganesha|/run/lab/slowstart|' "$DEMO" >"$WORK/slow.conf"
tuned 'nfs = { threads = "8"; };'
t0=$(date +%s.%N)
lapply "$WORK/slow.conf"
t1=$(date +%s.%N)
[[ $rc = 0 ]] && grep -q "ganesha.nfsd: restarted (pidfile backend): RPC_Ioq_ThrdMax changed" <<<"$log"
ok $? "a Ganesha 4 s slow to serve after it listens: the apply restarts it and exits 0" "$log"
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 4) }'
ok $? "... the apply waited for MOUNT to answer ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
check "... client1 reads a file over NFS at its first try" nfs_read
out=$("$LAB" status 2>&1)
! grep -q DOWN <<<"$out"
ok $? "every lab daemon is running at the end" "$out"
done_testing
