#!/bin/bash
# network.mtu through apply and rollback: the MTU is proven against network.peers,
# recorded in the generation, restored by rollback and by the recovery of an interrupted
# apply. A private lab, like t_mtu.sh, because it changes host and switch-port MTUs.
export NASTUNE_LAB_PREFIX=${NASTUNE_MTU_LAB_PREFIX:-nmta$$-}
export NASTUNE_LAB_STATE=${NASTUNE_MTU_LAB_STATE:-/var/tmp/nastune-lab-mtua.$$}
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"

cleanup() {
	[[ ${NASTUNE_MTU_LAB_KEEP:-0} = 1 ]] || "$LAB" down >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT

lab_ready --server-mtu 1500 --client-mtu 9000 --switch-mtu 9216 --clients 1
plan 25

C1=$("$LAB" addr client1)
CONF=$SROOT/etc/nastune/nastune.conf
mkdir -p "$(dirname "$CONF")"

mtu_of() { "$LAB" exec "$1" cat /sys/class/net/lab0/mtu; }
# conf MTU [extra share name]: the demo config with network.mtu = MTU and client1 as peer.
conf() {
	sed -e "s|^network = .*|network = { interface = \"lab0\"; mtu = $1; peers = [\"$C1\"]; };|" \
		"$DEMO" >"$CONF"
	if [[ -n ${2:-} ]]; then
		python3 - "$CONF" "$2" <<'PY'
import sys
p, name = sys.argv[1], sys.argv[2]
s = open(p).read()
s = s.replace('shares = (', 'shares = (\n  { name = "%s"; path = "/srv/public"; protocols = ["smb"]; guest = true; },' % name, 1)
open(p, 'w').write(s)
PY
	fi
}
# nt ARGS...: nastune in the server on its root, bounded; sets $out, $err, $rc.
nt() {
	timeout 120 "$LAB" exec server "$NASTUNE" --root "$SROOT" -c "$CONF" "$@" >"$WORK/out" 2>"$WORK/err" 7>&-
	rc=$?
	out=$(<"$WORK/out")
	err=$(<"$WORK/err")
}
json() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if eval(sys.argv[2]) else 1)' "$out" "$1" 2>&1; }
gens() { "$LAB" exec server "$NASTUNE" --root "$SROOT" -c "$CONF" --json status 7>&- | python3 -c 'import json,sys; print(json.load(sys.stdin)["generations"][-1])'; }

# --- a fixed MTU, proven ----------------------------------------------------------------------
conf 9000
nt apply --dry-run
[[ $rc = 0 ]] && grep -q "would set the MTU of lab0 to 9000 and prove it (now 1500)" <<<"$out" && [[ $(mtu_of server) = 1500 ]]
ok $? "apply --dry-run says what it would do with the MTU and does nothing" "$(both)"
g0=$(gens)
nt --json apply
[[ $rc = 0 && $(mtu_of server) = 9000 ]] && json 'd["mtu"]["interface"]=="lab0" and d["mtu"]["old"]==1500 and d["mtu"]["final"]==9000 and d["mtu"]["changed"] and d["mtu"]["peers"][0]["largest"]>=9000' >/dev/null
ok $? "apply with network.mtu = 9000: set, proven to client1 (JSON old/final/peers)" "$(both)"
g1=$(gens)
[[ $g1 -gt $g0 ]]
ok $? "... recorded as a new generation ($g0 -> $g1) although no file changed" "$(both)"
nt status
[[ $rc = 0 ]] && grep -q "MTU of lab0 with this generation: 9000" <<<"$out"
ok $? "status shows the generation's MTU" "$(both)"
"$LAB" exec server ping -4 -c 2 -i 0.2 -W 1 -M do -s $((9000 - 28)) "$C1" >/dev/null 2>&1
ok $? "a full-size (9000) don't-fragment echo reaches client1"
nt apply
[[ $rc = 0 && $(gens) = "$g1" ]] && grep -q "nothing to do: .*MTU 9000 on lab0 is proven" <<<"$err"
ok $? "apply again: proven again, nothing recorded" "$(both)"
nt apply --if-changed
[[ $rc = 0 && $(gens) = "$g1" ]] && grep -q "nothing to do" <<<"$err"
ok $? "apply --if-changed: nothing to do" "$(both)"
"$LAB" exec server ip link set lab0 mtu 1500
nt apply --if-changed
[[ $rc = 0 && $(mtu_of server) = 9000 ]]
ok $? "--if-changed notices an MTU changed by hand and sets 9000 again" "$(both)"

# --- rollback restores the MTU ------------------------------------------------------------------
nt rollback 0
[[ $rc = 0 && $(mtu_of server) = 1500 ]] && grep -q "MTU of lab0 restored to 1500" <<<"$err"
ok $? "rollback 0: the original MTU 1500 comes back with the original files" "$(both)"
g=$(gens)
nt apply
[[ $rc = 0 && $(mtu_of server) = 9000 && $(gens) = $((g + 1)) ]]
ok $? "apply again: 9000, generation $((g + 1))" "$(both)"
nt rollback
[[ $rc = 0 && $(mtu_of server) = 1500 ]]
ok $? "rollback (to the one before, $g): MTU 1500" "$(both)"

# --- auto ---------------------------------------------------------------------------------------
out=$("$LAB" up --server-mtu 1500 --client-mtu 7936 --switch-mtu 9216 --clients 1 2>&1)
ok $? "lab: client1 at 7936" "$out"
conf '"auto"'
g=$(gens)
nt --json apply
final=$(mtu_of server)
[[ $rc = 0 && $final = 7936 ]] && json 'd["mtu"]["final"]==7936 and d["mtu"]["tried"]==9216 and d["mtu"]["peers_mtu"]==7936 and d["mtu"]["peers"][0]["largest"]>=7936' >/dev/null
ok $? "apply with mtu = \"auto\": tried 9216, settled at $final, the 7936 client's own MTU (not what its veth receives)" "$(both)"
"$LAB" exec server ping -4 -c 2 -i 0.2 -W 1 -M do -s $((final - 28)) "$C1" >/dev/null 2>&1
ok $? "... and full-size ($final) don't-fragment echoes reach client1"
nt rollback "$g"
[[ $rc = 0 && $(mtu_of server) = 1500 ]]
ok $? "rollback $g: 1500 again" "$(both)"

# --- a black hole: apply fails, files and MTU stay as they were --------------------------------
out=$("$LAB" up --server-mtu 1500 --client-mtu 9000 --switch-mtu 1500 --clients 1 2>&1)
ok $? "lab: switch ports at 1500, client at 9000" "$out"
cp "$SROOT/etc/samba/smb.conf" "$WORK/smb.before"
conf 9000 Extra
nt apply
[[ $rc = 1 && $(mtu_of server) = 1500 ]] && grep -q "apply failed at mtu: lab0: .*$C1" <<<"$err"
ok $? "mtu = 9000 behind a 1500 switch: exit 1 naming the step and the peer; MTU 1500" "$(both)"
cmp -s "$WORK/smb.before" "$SROOT/etc/samba/smb.conf" && grep -q "restored generation" <<<"$err"
ok $? "... and smb.conf (which gained a share) is restored" "$(diff "$WORK/smb.before" "$SROOT/etc/samba/smb.conf" | head)"
! "$LAB" exec server smbclient -N -L //127.0.0.1 2>/dev/null | grep -q Extra
ok $? "... smbd does not serve the share of the failed apply"

# --- an apply killed after the MTU was proven, before it was recorded ---------------------------
out=$("$LAB" up --server-mtu 1500 --client-mtu 9000 --switch-mtu 9216 --clients 1 2>&1)
ok $? "lab: switch ports back at 9216" "$out"
g=$(gens)
NASTUNE_DEBUG_CRASH=mtu timeout 120 "$LAB" exec server env NASTUNE_DEBUG_CRASH=mtu "$NASTUNE" --root "$SROOT" -c "$CONF" apply >/dev/null 2>&1 7>&-
[[ $(mtu_of server) = 9000 && $(gens) = "$g" && -f $SROOT/var/lib/nastune/pending ]]
ok $? "killed at the crash point 'mtu': MTU 9000 and smb.conf changed, not recorded, journal left"
conf '"keep"'
nt apply
[[ $rc = 0 && $(mtu_of server) = 1500 ]] && grep -q "an earlier apply was interrupted" <<<"$err" && grep -q "MTU of lab0 restored to 1500" <<<"$err"
ok $? "the next apply recovers first: MTU of the last generation (1500) restored" "$(both)"
cmp -s "$WORK/smb.before" "$SROOT/etc/samba/smb.conf"
ok $? "... and its files (the share of the killed apply is gone)" "$(diff "$WORK/smb.before" "$SROOT/etc/samba/smb.conf" | head)"

# --- errors --------------------------------------------------------------------------------------
sed -e 's|^network = .*|network = { interface = "nosuch0"; mtu = 9000; };|' "$DEMO" >"$CONF"
nt apply
[[ $rc = 1 ]] && grep -q "nosuch0" <<<"$err" && cmp -s "$WORK/smb.before" "$SROOT/etc/samba/smb.conf"
ok $? "an unknown interface: exit 1 naming it, files unchanged" "$(both)"

sleep 0.2
! pgrep -f "$NASTUNE --root $SROOT" >/dev/null
ok $? "no nastune process (or MTU watchdog) left running" "$(pgrep -af "$NASTUNE --root $SROOT")"
[[ $TAP_N = 25 ]] || echo "# ran $TAP_N tests, planned 25"
done_testing
