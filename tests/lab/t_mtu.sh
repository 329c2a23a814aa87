#!/bin/bash
# MTU through netlink, proven end to end: real rtnetlink on real veth, real ICMP
# through the lab's bridge switch. Runs on a private lab instance (its own namespaces and
# state, torn down at the end) because it changes host and switch-port MTUs that other lab
# tests rely on; named per run so that concurrent runs cannot meet. NASTUNE_MTU_LAB_KEEP=1
# leaves it up for debugging.
export NASTUNE_LAB_PREFIX=${NASTUNE_MTU_LAB_PREFIX:-nmtu$$-}
export NASTUNE_LAB_STATE=${NASTUNE_MTU_LAB_STATE:-/var/tmp/nastune-lab-mtu.$$}
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"

cleanup() {
	[[ ${NASTUNE_MTU_LAB_KEEP:-0} = 1 ]] || "$LAB" down >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT

lab_ready --server-mtu 1500 --client-mtu 9000,client1=7936 --switch-mtu 9216 --clients 2
plan 57

C1=$("$LAB" addr client1)
C1_6=$("$LAB" addr -6 client1)
C2=$("$LAB" addr client2)
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# nt HOST ARGS...: nastune in HOST, bounded; sets $out, $err, $rc.
nt() {
	local h=$1
	shift
	timeout 60 "$LAB" exec "$h" "$NASTUNE" "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	out=$(<"$WORK/out")
	err=$(<"$WORK/err")
}
mtu_of() { "$LAB" exec "$1" cat /sys/class/net/lab0/mtu; }
set_mtu() { "$LAB" exec "$1" ip link set lab0 mtu "$2"; }
# df_ping HOST PEER SIZE: one don't-fragment echo of exactly SIZE bytes (IP packet) arrives?
df_ping() {
	local fam=-4 hdr=28
	[[ $2 = *:* ]] && fam=-6 hdr=48
	"$LAB" exec "$1" ping "$fam" -c 2 -i 0.2 -W 1 -M do -s $(($3 - hdr)) "$2" >/dev/null 2>&1
}
# json EXPR: evaluates a Python expression over $out parsed as JSON ("d"); status 0 if true.
json() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if eval(sys.argv[2]) else 1)' "$out" "$1" 2>&1; }
jget() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$out" "$1" 2>/dev/null; }
# wait_mtu HOST WANT SECONDS: polls until HOST's lab0 has MTU WANT.
wait_mtu() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[[ $(mtu_of "$1") = "$2" ]] && return 0
		sleep 0.1
	done
	return 1
}

# --- show -----------------------------------------------------------------------------------
nt server mtu show lab0
[[ $rc = 0 ]] && grep -qE '^lab0 +1500 +68 +65535 +veth' <<<"$out"
ok $? "mtu show lab0: MTU 1500, limits 68..65535 from IFLA_MIN/MAX_MTU, driver veth" "$(both)"
nt server --json mtu show lab0
json 'd["ok"] and len(d["interfaces"])==1 and (lambda i: i["name"]=="lab0" and i["mtu"]==1500 and i["min_mtu"]==68 and i["max_mtu"]==65535 and i["driver"]=="veth" and i["operstate"]=="up" and isinstance(i["speed_mbps"], int))(d["interfaces"][0])' >/dev/null
ok $? "mtu show --json: one object with mtu, min/max, driver, state, speed" "$(both)"
nt server mtu show
[[ $rc = 0 ]] && grep -q '^lo ' <<<"$out" && grep -q '^lab0 ' <<<"$out"
ok $? "mtu show without IFACE lists every link" "$(both)"
nt server mtu show nosuch0
[[ $rc = 2 ]] && grep -q "no interface named nosuch0" <<<"$err" && [[ -z $out ]]
ok $? "mtu show of an unknown interface: exit 2, named" "$(both)"

# --- set --------------------------------------------------------------------------------------
nt server mtu set lab0 70000
[[ $rc = 2 ]] && grep -q "outside the driver's limits (68..65535" <<<"$err"
ok $? "set above the driver's maximum: exit 2, limits in the message" "$(both)"
nt server mtu set lab0 60
[[ $rc = 2 ]] && grep -q "68..65535" <<<"$err"
ok $? "set below the driver's minimum: exit 2" "$(both)"
is_mtu=$(mtu_of server)
[[ $is_mtu = 1500 ]]
ok $? "refused values leave the MTU alone (1500, got $is_mtu)"
nt server mtu set lab0 jumbo
[[ $rc = 2 ]] && grep -q "not an MTU" <<<"$err"
ok $? "set with a non-number: exit 2" "$(both)"
nt server mtu set nosuch0 1500
[[ $rc = 2 ]] && grep -q "no interface named nosuch0" <<<"$err"
ok $? "set on an unknown interface: exit 2, named" "$(both)"
timeout 60 "$LAB" exec server "${NOBODY[@]}" "$NASTUNE" mtu set lab0 9000 >"$WORK/out" 2>"$WORK/err"
rc=$? out=$(<"$WORK/out") err=$(<"$WORK/err")
[[ $rc = 1 ]] && grep -q "needs root (CAP_NET_ADMIN)" <<<"$err" && [[ $(mtu_of server) = 1500 ]]
ok $? "set as nobody: exit 1, says it needs root, MTU unchanged" "$(both)"
nt server mtu set lab0 9000
[[ $rc = 0 && $(mtu_of server) = 9000 ]]
ok $? "set lab0 9000 over netlink: the kernel has 9000" "$(both)"
nt server --json mtu set lab0 1500
json 'd["ok"] and d["old_mtu"]==9000 and d["mtu"]==1500' >/dev/null && [[ $(mtu_of server) = 1500 ]]
ok $? "set --json back to 1500: {old_mtu: 9000, mtu: 1500}" "$(both)"
NASTUNE_DEBUG_SKIP_LIMITS=1 nt server mtu set lab0 70000
[[ $rc = 2 ]] && grep -q "kernel refused MTU 70000: mtu greater than device maximum" <<<"$err"
ok $? "the kernel's extended-ACK text is shown when it refuses" "$(both)"

# A stacked device cannot exceed its parent (the kernel has macvlan here; vlan if built).
if "$LAB" exec server ip link add mv0 link lab0 type macvlan 2>/dev/null; then
	nt server mtu set mv0 9000
	[[ $rc = 2 ]] && grep -q "mv0 is a macvlan on lab0 (MTU 1500) and cannot exceed its parent" <<<"$err"
	ok $? "a macvlan cannot exceed its parent: exit 2, says raise lab0" "$(both)"
	"$LAB" exec server ip link del mv0
else
	ok 0 "a stacked device cannot exceed its parent # SKIP no macvlan in this kernel"
fi
if "$LAB" exec server ip link add bond9 type bond 2>/dev/null &&
	"$LAB" exec server ip link add mv1 link lab0 type macvlan 2>/dev/null; then
	"$LAB" exec server ip link set mv1 master bond9
	nt server mtu set mv1 1400
	[[ $rc = 2 ]] && grep -q "member of bond bond9: set the MTU on bond9" <<<"$err"
	ok $? "a bond member is refused, pointing at the bond" "$(both)"
	"$LAB" exec server ip link del bond9
	"$LAB" exec server ip link del mv1 2>/dev/null
else
	"$LAB" exec server ip link del bond9 2>/dev/null
	ok 0 "a bond member is refused, pointing at the bond # SKIP no bonding in this kernel (unit-tested)"
fi

# --- probe: server at 9000, client1 at 7936 ----------------------------------------------------
set_mtu server 9000
t0=$(date +%s%N)
nt server --json mtu probe -i lab0 "$C1"
t=$((($(date +%s%N) - t0) / 1000000))
L4=$(jget 'd["peers"][0]["largest"]')
[[ $rc = 0 && $L4 =~ ^[0-9]+$ ]] && ((L4 >= 7936 && L4 <= 7940))
ok $? "probe IPv4 client1 at 7936 from 9000: largest $L4 (veth takes MTU+4)" "$(both)"
json 'd["peers"][0]["peer_mtu"]==7936' >/dev/null
ok $? "... and its replies come whole only up to 7936: the MTU client1 sends with (peer_mtu)" "$(both)"
df_ping server "$C1" "$L4" && ! df_ping server "$C1" $((L4 + 1))
ok $? "ping -M do agrees: $L4 bytes arrive, $((L4 + 1)) do not"
((t < 2000))
ok $? "one peer probed in well under 2 s ($t ms)"
nt server --json mtu probe -i lab0 "$C1_6"
L6=$(jget 'd["peers"][0]["largest"]')
[[ $rc = 0 && $L6 =~ ^[0-9]+$ ]] && ((L6 >= 7936 && L6 <= 7940)) && json 'd["peers"][0]["family"]==6 and d["peers"][0]["min"]==1280' >/dev/null
ok $? "probe IPv6 client1: largest $L6, searched from 1280" "$(both)"
df_ping server "$C1_6" "$L6" && ! df_ping server "$C1_6" $((L6 + 1))
ok $? "ping -6 -M do agrees: $L6 bytes arrive, $((L6 + 1)) do not"
nt server mtu probe "$C2"
[[ $rc = 0 ]] && grep -q "9000 bytes pass" <<<"$out"
ok $? "probe client2 (a 9000 host): all 9000 pass, text output, no -i needed" "$(both)"
t0=$(date +%s%N)
nt server --json mtu probe 198.18.0.99
t=$((($(date +%s%N) - t0) / 1000000))
json 'd["ok"] is False and d["peers"][0]["reachable"] is False and d["peers"][0]["largest"] is None' >/dev/null && [[ $rc = 1 ]]
ok $? "a silent address is 'unreachable' (exit 1), not MTU 0" "$(both)"
((t < 2000))
ok $? "unreachable is decided in bounded time ($t ms)"
nt server mtu probe "$C1" no.such.host.invalid
[[ $rc = 2 ]] && grep -q "cannot resolve peer 'no.such.host.invalid'" <<<"$err"
ok $? "an unresolvable peer: exit 2, named" "$(both)"
timeout 60 "$LAB" exec server "${NOBODY[@]}" "$NASTUNE" mtu probe "$C1" >"$WORK/out" 2>"$WORK/err"
rc=$? out=$(<"$WORK/out") err=$(<"$WORK/err")
read -r glo ghi </proc/sys/net/ipv4/ping_group_range
if ((65534 >= glo && 65534 <= ghi)); then
	[[ $rc = 0 ]] && grep -q "bytes pass" <<<"$out"
	ok $? "probe as nobody works through an unprivileged ping socket" "$(both)"
else
	[[ $rc = 1 ]] && grep -q "need root (CAP_NET_RAW) or a group in net.ipv4.ping_group_range" <<<"$err"
	ok $? "probe as nobody: exit 1, says root or ping_group_range" "$(both)"
fi
# The same search without root, through an unprivileged ping socket (the sysctl is per netns).
"$LAB" exec server sysctl -qw net.ipv4.ping_group_range="0 2147483647"
timeout 60 "$LAB" exec server "${NOBODY[@]}" "$NASTUNE" --json mtu probe -i lab0 "$C1" "$C1_6" \
	>"$WORK/out" 2>"$WORK/err"
rc=$? out=$(<"$WORK/out") err=$(<"$WORK/err")
"$LAB" exec server sysctl -qw net.ipv4.ping_group_range="$glo $ghi"
[[ $rc = 0 ]] && json "all(p['raw_socket'] is False and p['largest']==$L4 for p in d['peers'])" >/dev/null
ok $? "as nobody with ping_group_range open: ping sockets find the same $L4, IPv4 and IPv6" "$(both)"
set_mtu server 1500

# --- auto: server 9000-capable at 1500, client1 at 7936 -----------------------------------------
t0=$(date +%s%N)
nt server --json mtu auto lab0 --peer "$C1" --peer "$C1_6"
t=$((($(date +%s%N) - t0) / 1000000))
M=$(mtu_of server)
[[ $rc = 0 && $M = 7936 ]] && json "d['ok'] and d['old_mtu']==1500 and d['tried_mtu']==9216 and d['mtu']==7936 and d['changed'] and d['peers_mtu']==7936 and all(p['largest']>=7936 and p['peer_mtu']==7936 for p in d['peers'])" >/dev/null
ok $? "auto: 1500 -> $M, client1's own MTU, not the $L4 its veth receives (tried 9216) in $t ms" "$(both)"
df_ping server "$C1" "$M" && df_ping server "$C1_6" "$M"
ok $? "full-size ($M) don't-fragment packets reach client1, IPv4 and IPv6"
pgrep -f "nastune mtu auto" >/dev/null
ok $((!$?)) "no watchdog left behind after the confirm"
big=$(randfile big.bin $((256 << 20)))
pw=$(password alice)
out=$(timeout 120 "$LAB" exec client1 smbclient -U "alice%$pw" "//$("$LAB" addr server)/Media" \
	-c "put $big mtu.$$.bin; ls mtu.$$.bin; del mtu.$$.bin" 2>&1)
rc=$?
[[ $rc = 0 ]] && grep -qE "mtu\.$$\.bin +A? *268435456" <<<"$out"
ok $? "client1 puts 256 MiB over SMB to the server at MTU $M" "$out"
rm -f "$big"
nt server mtu auto lab0 --peer "$C1"
[[ $rc = 0 && $(mtu_of server) = "$M" ]] && grep -q "MTU $M kept" <<<"$out"
ok $? "auto again: nothing better, MTU $M kept" "$(both)"
# Server and client at 1500: the 4 bytes of veth slack carry nothing (TCP's MSS follows the
# smaller side), so auto stays at 1500; a 9000 client gives 9000, not 9004.
set_mtu server 1500
set_mtu client2 1500
nt server --json mtu auto lab0 --peer "$C2"
[[ $rc = 0 && $(mtu_of server) = 1500 ]] && json "d['changed'] is False and d['peers_mtu']==1500 and d['peers'][0]['largest']>1500" >/dev/null
ok $? "server and client at 1500: auto stays at 1500 (client2 receives $(jget 'd["peers"][0]["largest"]'), sends 1500)" "$(both)"
set_mtu client2 9000
nt server mtu auto lab0 --peer "$C2"
[[ $rc = 0 && $(mtu_of server) = 9000 ]] && grep -q "not above 9000: the MTU $C2 sends with itself" <<<"$out"
ok $? "a 9000 client: auto gives 9000, not 9004 ($(mtu_of server))" "$(both)"
set_mtu server 1500
nt server mtu set lab0 9000 --peer "$C1"
[[ $rc = 1 && $(mtu_of server) = 1500 ]] && grep -q "at most $L4 bytes, not 9000; MTU of lab0 restored to 1500" <<<"$err"
ok $? "set 9000 --peer client1 (a fixed network.mtu): not received, restored 1500, exit 1" "$(both)"
nt server mtu set lab0 7936 --peer "$C1" --peer "$C1_6"
[[ $rc = 0 && $(mtu_of server) = 7936 ]]
ok $? "set 7936 --peer client1: proven and kept" "$(both)"
set_mtu server 1500

# --- a peer that drops all ICMP ---------------------------------------------------------------
if command -v nft >/dev/null; then
	"$LAB" exec client2 nft -f - <<-'EOF'
	table inet nastune_mtu_test {
		chain input { type filter hook input priority 0; meta l4proto { icmp, ipv6-icmp } drop; }
	}
	EOF
	fw=$?
else
	"$LAB" exec client2 iptables -A INPUT -p icmp -j DROP
	fw=$?
fi
ok $fw "client2 drops all ICMP (nft or iptables in its namespace)"
nt server mtu auto lab0 --peer "$C2"
[[ $rc = 1 ]] && grep -q "peer $C2 ($C2) does not answer" <<<"$err" && grep -q "ICMP echo filtered" <<<"$err"
ok $? "auto towards an ICMP-dropping peer: exit 1, says unreachable or filtered" "$(both)"
[[ $(mtu_of server) = 1500 ]] && grep -q "left at 1500" <<<"$err"
ok $? "... and the MTU was never changed (still 1500)" "$(both)"
nt server --json mtu auto lab0 --peer "$C1" --peer "$C2"
[[ $rc = 1 && $(mtu_of server) = 1500 ]] && json 'd["ok"] is False and d["changed"] is False and d["tried_mtu"] is None' >/dev/null
ok $? "one silent peer among good ones still stops auto before any change" "$(both)"

# --- watchdog: the process dies between set and confirm -------------------------------------------
NASTUNE_DEBUG_CRASH=mtu-after-set timeout 60 "$LAB" exec server "$NASTUNE" mtu auto lab0 \
	--peer "$C1" >"$WORK/out" 2>"$WORK/err"
rc=$? err=$(<"$WORK/err")
[[ $rc = 137 ]] && grep -q "crashing at mtu-after-set" <<<"$err"
ok $? "debug hook SIGKILLs nastune right after the set (exit 137)" "$(both)"
wait_mtu server 1500 3
ok $? "the watchdog restored 1500 after the SIGKILL" "$(mtu_of server)"
NASTUNE_DEBUG_CRASH=hang-mtu-after-set NASTUNE_DEBUG_HANG_S=20 timeout 60 "$LAB" exec server \
	"$NASTUNE" mtu auto lab0 --peer "$C1" >"$WORK/out" 2>"$WORK/err" &
bg=$!
pid=
for ((i = 0; i < 50; i++)); do
	pid=$(grep -oE 'stalling at mtu-after-set \(pid [0-9]+\)' "$WORK/err" | grep -oE '[0-9]+')
	[[ -n $pid ]] && break
	sleep 0.1
done
[[ -n $pid && $(mtu_of server) = 9216 ]]
ok $? "auto stalls with the candidate 9216 set (pid ${pid:-none})" "$(cat "$WORK/err")"
[[ -n $pid ]] && kill -9 "$pid"
wait "$bg" 2>/dev/null
wait_mtu server 1500 3
ok $? "kill -9 from outside: the watchdog restored 1500" "$(mtu_of server) $(cat "$WORK/err")"
NASTUNE_DEBUG_CRASH=hang-mtu-after-set NASTUNE_DEBUG_HANG_S=3 NASTUNE_DEBUG_WATCHDOG_S=1 \
	timeout 60 "$LAB" exec server "$NASTUNE" mtu auto lab0 --peer "$C1" >"$WORK/out" 2>"$WORK/err"
rc=$? err=$(<"$WORK/err")
[[ $rc = 1 && $(mtu_of server) = 1500 ]] && grep -q "watchdog restored MTU 1500 before the change was confirmed" <<<"$err"
ok $? "a change not confirmed before the watchdog's deadline is undone, and reported" "$(both)"

# --- usage and privilege errors of auto --------------------------------------------------------
nt server mtu auto lab0
[[ $rc = 2 ]] && grep -q "at least one --peer" <<<"$err"
ok $? "auto without --peer: exit 2" "$(both)"
nt server mtu auto nosuch0 --peer "$C1"
[[ $rc = 2 ]] && grep -q "no interface named nosuch0" <<<"$err"
ok $? "auto on an unknown interface: exit 2" "$(both)"
timeout 60 "$LAB" exec server "${NOBODY[@]}" "$NASTUNE" mtu auto lab0 --peer "$C1" >"$WORK/out" 2>"$WORK/err"
rc=$? out=$(<"$WORK/out") err=$(<"$WORK/err")
[[ $rc = 1 && $(mtu_of server) = 1500 ]] && grep -qE "need(s)? root" <<<"$err"
ok $? "auto as nobody: exit 1, needs root, MTU unchanged" "$(both)"
nt server mtu bogus
[[ $rc = 2 ]]
ok $? "unknown mtu subcommand: exit 2" "$(both)"

# --- black hole: hosts at 9000, switch ports at 1500 ---------------------------------------------
out=$("$LAB" up --server-mtu 9000 --client-mtu 9000 --switch-mtu 1500 --clients 2 2>&1)
ok $? "lab: hosts at 9000, switch ports at 1500" "$out"
df_ping server "$C1" 1500 && ! df_ping server "$C1" 1501
ok $? "the black hole is real: 1500 passes, 1501 is dropped silently"
t0=$(date +%s%N)
nt server --json mtu auto lab0 --peer "$C1"
t=$((($(date +%s%N) - t0) / 1000000))
[[ $rc = 1 ]] && grep -q "black hole: peer $C1 ($C1) receives don't-fragment packets of at most 1500 bytes" <<<"$err"
ok $? "auto detects it: exit 1 naming client1 and 1500, the largest size that passed ($t ms)" "$(both)"
[[ $(mtu_of server) = 9000 ]] && json 'd["reason"]=="path_too_small" and d["reverted"] is True and d["mtu"]==9000 and d["tried_mtu"]==9216 and d["peers"][0]["largest"]==1500' >/dev/null
ok $? "... the candidate was reverted: MTU 9000 again, JSON says reverted" "$(both)"
grep -q "restored to 9000" <<<"$err" && grep -q "nastune mtu set lab0 1500" <<<"$err"
ok $? "... and the message says what was restored and how to fix it" "$(both)"
nt server mtu set lab0 1500
[[ $rc = 0 ]] && df_ping server "$C1" 1500
ok $? "following the advice (mtu set lab0 1500) gives a working path" "$(both)"
nt server mtu auto lab0 --peer "$C1" --peer "$("$LAB" addr -6 client1)"
[[ $rc = 0 && $(mtu_of server) = 1500 ]] && grep -q "MTU 1500 kept (tried 9216)" <<<"$out"
ok $? "auto from 1500 behind the 1500 switch: tries 9216, keeps 1500, exit 0" "$(both)"

# --- leave no process behind --------------------------------------------------------------------
sleep 0.2
! pgrep -f "$NASTUNE mtu" >/dev/null
ok $? "no nastune mtu process (or watchdog) left running" "$(pgrep -af "$NASTUNE mtu")"
[[ $TAP_N = 57 ]] || echo "# ran $TAP_N tests, planned 57"
done_testing
