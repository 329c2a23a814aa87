#!/bin/bash
# Link speed and MTU: iperf3 through the switch at --link 1g stays under the gigabit
# payload ceiling (117.7 MB/s at MTU 1500), and per-port MTUs behave like real hardware.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
plan 10

restore() { "$LAB" up >/dev/null 2>&1; }	# back to the defaults for the next test
trap 'restore; rm -rf "$WORK"' EXIT

lab_ready --link 1g
grep_out "--link 1g puts tbf at 1 Gbit/s on client1's port" 'tbf .*rate 1Gbit' \
	on client1 tc qdisc show dev lab0
grep_out "... and on the switch side of the server's port" 'tbf .*rate 1Gbit' \
	tc -n "${NASTUNE_LAB_PREFIX:-nlab-}switch" qdisc show dev sw-server

# iperf3 MB/s (1e6 bytes) received, client1 -> server, median of 3 runs of 3 s.
iperf() {
	local out rates=()
	for _ in 1 2 3; do
		on server iperf3 -s -1 -D -p 5301 >/dev/null 2>&1
		sleep 0.3
		out=$(on client1 iperf3 -c "$SERVER" -p 5301 -t 3 -J "$@" 2>&1) || { echo "0 iperf3 failed"; return; }
		rates+=("$(/usr/bin/python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e6))' <<<"$out")")
	done
	printf '%s\n' "${rates[@]}" | sort -n | sed -n 2p
}
# The shaper's job is the ceiling: never above it (+10% for measurement), and a link that
# carries bulk traffic. How close it gets below depends on the CPU left over (offloads off
# costs a lot per packet, and other work on the machine takes the rest): make bench measures.
within() { awk -v r="$1" -v c="$2" 'BEGIN { exit !(r >= c * 0.5 && r <= c * 1.1) }'; }

r=$(iperf)
echo "# iperf3 client1 -> server at --link 1g: $r MB/s (ceiling 117.7)"
within "$r" 117.7
ok $? "iperf3 at --link 1g: $r MB/s is at most 110% and at least 50% of 117.7 MB/s"
r=$(iperf -R)
echo "# iperf3 server -> client1 at --link 1g: $r MB/s"
within "$r" 117.7
ok $? "iperf3 reverse at --link 1g: $r MB/s is at most 110% and at least 50% of 117.7 MB/s"

lab_ready --link 1g --offload off
r=$(iperf)
echo "# iperf3 client1 -> server at --link 1g, offloads off: $r MB/s"
within "$r" 117.7
ok $? "iperf3 at --link 1g with offloads off: $r MB/s is at most 110% and at least 50% of 117.7 MB/s"
grep_out "--offload off turns TSO off on lab0" 'tcp-segmentation-offload: off' \
	on client1 ethtool -k lab0

# Jumbo frames end to end, then a switch port that drops them: a silent loss, which only a
# don't-fragment probe at full size shows.
lab_ready --server-mtu 9000 --client-mtu 9000
check "MTU 9000 everywhere: a DF ping of 8972 bytes gets through" \
	on client1 ping -c 2 -W 1 -M "do" -s 8972 "$SERVER"
lab_ready --server-mtu 9000 --client-mtu 9000 --switch-mtu client1=1500
check "switch port of client1 at 1500: small pings still pass" \
	on client1 ping -c 2 -W 1 "$SERVER"
refuse "switch port of client1 at 1500: the 8972-byte DF ping is lost" \
	on client1 ping -c 2 -W 1 -M "do" -s 8972 "$SERVER"
lab_ready --server-mtu 9000 --client-mtu client1=1500,client2=9000
grep_out "per-host --client-mtu: client1 1500, client2 9000" 'client1 .*mtu 1500 .*client2 .*mtu 9000 ' \
	bash -c "'$LAB' status | tr '\n' ' '"
done_testing
