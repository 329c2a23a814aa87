#!/usr/bin/env bash
# MTU benchmark: in a private lab at 10 Gbit/s with offloads off (with them on, veth hides
# the MTU), TCP throughput (iperf3, server -> client like a NAS read) and an
# SMB sequential read, at MTU 1500 and at the MTU `nastune mtu auto` chooses. Prints medians
# of REPS runs and the ratio auto/1500.
# Root only. Env: REPS (5), SECS per iperf3 run (4), SMB_MIB file size (1024), LINK (10g).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export NASTUNE=${NASTUNE:-$top/build/nastune}
export NASTUNE_LAB_PREFIX=${NASTUNE_MTU_LAB_PREFIX:-nmtub$$-}	# private, per run
export NASTUNE_LAB_STATE=${NASTUNE_MTU_LAB_STATE:-/var/tmp/nastune-lab-mtubench.$$}
LAB=$top/tests/lab/lab
REPS=${REPS:-5}
SECS=${SECS:-4}
SMB_MIB=${SMB_MIB:-1024}
LINK=${LINK:-10g}

[[ $(id -u) = 0 ]] || { echo "mtu bench: needs root (the lab)"; exit 1; }
cleanup() { "$LAB" exec server pkill -x -F /run/lab/iperf3.pid iperf3 >/dev/null 2>&1 || true
	[[ ${NASTUNE_MTU_LAB_KEEP:-0} = 1 ]] || "$LAB" down >/dev/null 2>&1 || true; }
trap cleanup EXIT

"$LAB" up --link "$LINK" --offload off --server-mtu 1500 --client-mtu 9000 --switch-mtu 9216 \
	--clients 1 >/dev/null 2>&1 || { echo "mtu bench: lab up failed"; exit 1; }
S4=$("$LAB" addr server)
C1=$("$LAB" addr client1)
SROOT=$("$LAB" root server)
pw=$(grep '^alice:' "$NASTUNE_LAB_STATE/users" | cut -d: -f2-)

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
spread() { sort -g | awk '{a[NR]=$1} END {printf "%.0f..%.0f", a[1], a[NR]}'; }

"$LAB" exec server iperf3 -s -D -I /run/lab/iperf3.pid >/dev/null
sleep 0.3

# tcp: MB/s received by client1 from the server (-R), one line per run.
tcp() {
	local i
	for ((i = 0; i < REPS; i++)); do
		"$LAB" exec client1 iperf3 -c "$S4" -R -t "$SECS" -O 1 -J |
			python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e6))'
	done
}

# smb: MB/s of a hot sequential read of a SMB_MIB file from the Media share.
head -c $((SMB_MIB << 20)) /dev/urandom >"$SROOT/srv/media/mtu-bench.bin"
chmod 644 "$SROOT/srv/media/mtu-bench.bin"
smb() {
	local i s e
	for ((i = 0; i < REPS; i++)); do
		s=$(date +%s%N)
		"$LAB" exec client1 smbclient -U "alice%$pw" "//$S4/Media" \
			-c "get mtu-bench.bin /dev/null" >/dev/null 2>&1 || { echo 0; continue; }
		e=$(date +%s%N)
		awk "BEGIN{printf \"%.1f\\n\", $SMB_MIB * 1.048576 / (($e - $s) / 1e9)}"
	done
}

tcp >/tmp/mtu-bench-tcp1500.$$ ; smb >/tmp/mtu-bench-smb1500.$$
out=$("$LAB" exec server "$NASTUNE" mtu auto lab0 --peer "$C1" 2>&1) ||
	{ echo "mtu bench: mtu auto failed: $out"; exit 1; }
M=$("$LAB" exec server cat /sys/class/net/lab0/mtu)
tcp >/tmp/mtu-bench-tcpauto.$$ ; smb >/tmp/mtu-bench-smbauto.$$
rm -f "$SROOT/srv/media/mtu-bench.bin"

t1=$(median </tmp/mtu-bench-tcp1500.$$) ta=$(median </tmp/mtu-bench-tcpauto.$$)
s1=$(median </tmp/mtu-bench-smb1500.$$) sa=$(median </tmp/mtu-bench-smbauto.$$)
printf 'mtu: link %s, offloads off, %d runs each; mtu auto chose %s (client at 9000)\n' \
	"$LINK" "$REPS" "$M"
printf 'mtu-tcp: iperf3 server->client MB/s median %s (%s) at 1500, %s (%s) at %s; ratio %.2f\n' \
	"$t1" "$(spread </tmp/mtu-bench-tcp1500.$$)" "$ta" "$(spread </tmp/mtu-bench-tcpauto.$$)" \
	"$M" "$(awk "BEGIN{print $ta / $t1}")"
printf 'mtu-smb: %d MiB hot sequential read MB/s median %s (%s) at 1500, %s (%s) at %s; ratio %.2f\n' \
	"$SMB_MIB" "$s1" "$(spread </tmp/mtu-bench-smb1500.$$)" "$sa" \
	"$(spread </tmp/mtu-bench-smbauto.$$)" "$M" "$(awk "BEGIN{print ($s1 > 0) ? $sa / $s1 : 0}")"
rm -f /tmp/mtu-bench-*.$$
