#!/usr/bin/env bash
# 10g lab benchmark: a private lab at 10 Gbit/s with offloads off (veth cannot hide the wire
# then), client1 reading a hot SIZE file from the server through each of nastune's
# drivers (SMB, NFSv3, AFP: build/tests/drvtool-*, in the engine's seq-read request size for
# each; the transfer's own rate, connect excluded as iperf3's -O 1 excludes its start)
# against iperf3 on the same path (server -> client, as a read). ROUNDS rounds (5), each
# iperf3 then every protocol in turn; per round the best protocol's MB/s over iperf3's. Prints
# each protocol's median, iperf3's, and the best protocol's median ratio; the target is >= 0.9
# (exit 1 below it). --json prints the same figures as one JSON object. Root only.
# Env: ROUNDS (5), SECS per iperf3 run (4), SIZE_MB (1024), BLOCK (each driver's), LINK (10g).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export NASTUNE=${NASTUNE:-$top/build/nastune}
export NASTUNE_LAB_PREFIX=${NASTUNE_10G_LAB_PREFIX:-n10g$$-} # private, per run
export NASTUNE_LAB_STATE=${NASTUNE_10G_LAB_STATE:-/var/tmp/nastune-lab-10g.$$}
LAB=$top/tests/lab/lab
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-4}
SIZE_MB=${SIZE_MB:-1024}
BLOCK=${BLOCK:-}
LINK=${LINK:-10g}
TARGET=0.9
json=0
[[ ${1:-} = --json ]] && json=1

[[ $(id -u) = 0 ]] || { echo "lab10g: needs root (the lab)"; exit 1; }
tmp=$(mktemp -d)
cleanup() {
	"$LAB" exec server pkill -x -F /run/lab/iperf3.pid iperf3 >/dev/null 2>&1 || true
	[[ -n ${SROOT:-} ]] && rm -f "$SROOT/srv/media/lab10g.bin"
	[[ ${NASTUNE_10G_LAB_KEEP:-0} = 1 ]] ||
		{ "$LAB" down >/dev/null 2>&1; rm -f "$NASTUNE_LAB_STATE.lock"; } || true
	rm -rf "$tmp"
}
trap cleanup EXIT
"$LAB" up --link "$LINK" --offload off --clients 1 >"$tmp/up" 2>&1 ||
	{ echo "lab10g: lab up failed"; tail -5 "$tmp/up"; exit 1; }
S=$("$LAB" addr server)
SROOT=$("$LAB" root server)
pw=$(grep '^alice:' "$NASTUNE_LAB_STATE/users" | cut -d: -f2-)
printf 'username = alice\npassword = %s\n' "$pw" >"$tmp/alice.cred"
chmod 600 "$tmp/alice.cred"
"$LAB" exec server iperf3 -s -D -I /run/lab/iperf3.pid >/dev/null
sleep 0.3
declare -A url=(
	[smb]="smb://alice@$S/Media"
	[nfs]="nfs://$S/srv/media?version=3&uid=29001&gid=29000"
	[afp]="afp://alice@$S/Media"
)
protos=(smb nfs afp)
for p in "${protos[@]}"; do
	[[ -x $top/build/tests/drvtool-$p ]] || { echo "lab10g: build/tests/drvtool-$p missing (make bench builds it)"; exit 1; }
done
# The file, written on the server's side and read once there: hot in its page cache.
f=lab10g.bin
head -c $((SIZE_MB << 20)) /dev/urandom >"$SROOT/srv/media/$f"
chown 29001:29000 "$SROOT/srv/media/$f"
cat "$SROOT/srv/media/$f" >/dev/null

# tcp: MB/s client1 receives from the server (-R) in one SECS run.
tcp() {
	"$LAB" exec client1 iperf3 -c "$S" -R -t "$SECS" -O 1 -J |
		python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e6))'
}
# proto P: the MB/s of one read of the file through P's driver, as drvtool reports it.
proto() {
	local cred=()
	[[ $1 = nfs ]] || cred=(--credentials "$tmp/alice.cred")
	"$LAB" exec client1 "$top/build/tests/drvtool-$1" ${BLOCK:+--block "$BLOCK"} "${cred[@]}" "${url[$1]}" \
		get "$f" /dev/null 2>"$tmp/err.$1" | sed -nE 's/.*= ([0-9.]+) MB\/s.*/\1/p' | grep . ||
		{ sed 's/^/lab10g: /' "$tmp/err.$1" >&2; echo 0; }
}
for i in $(seq "$ROUNDS"); do
	echo "tcp $(tcp)"
	for p in "${protos[@]}"; do echo "$p $(proto "$p")"; done
done >"$tmp/rounds"
python3 - "$tmp/rounds" "$ROUNDS" "$LINK" "${SIZE_MB}MiB" "$TARGET" "$json" "${BLOCK:-the driver default}" <<'PY'
import json, statistics, sys
path, rounds, link, size, target, as_json, block = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6] == "1", sys.argv[7]
rows = [l.split() for l in open(path) if l.strip()]
per = len(rows) // rounds
tcp, by = [], {}
for r in range(rounds):
    rnd = rows[r * per:(r + 1) * per]
    tcp.append(float(rnd[0][1]))
    for name, v in rnd[1:]:
        by.setdefault(name, []).append(float(v))
med = {p: statistics.median(v) for p, v in by.items()}
best = max(med, key=med.get)
ratios = [b / t if t > 0 else 0 for b, t in zip(by[best], tcp)]
ratio = statistics.median(ratios)
doc = {"link": link, "offload": "off", "size": size, "block": block, "rounds": rounds,
       "iperf3_mbs": {"median": statistics.median(tcp), "runs": tcp},
       "protocols": {p: {"median_mbs": med[p], "runs": by[p]} for p in by},
       "best": best, "ratio": round(ratio, 3), "ratio_runs": [round(x, 3) for x in ratios],
       "target": target, "met": ratio >= target}
if as_json:
    print(json.dumps(doc, indent=1))
else:
    print("lab10g: link %s, offloads off, a hot %s file read in %s requests, %d rounds (iperf3, then each protocol)" % (link, size, block, rounds))
    print("lab10g: iperf3 server->client median %.1f MB/s (%.0f..%.0f)" % (doc["iperf3_mbs"]["median"], min(tcp), max(tcp)))
    for p in by:
        print("lab10g: %-3s read median %.1f MB/s (%.0f..%.0f)" % (p, med[p], min(by[p]), max(by[p])))
    print("lab10g: best protocol %s against iperf3 on the same path: ratio %.2f (rounds %.2f..%.2f; target >= %.1f: %s)"
          % (best, ratio, min(ratios), max(ratios), target, "met" if doc["met"] else "MISSED"))
    if not doc["met"]:
        print("lab10g: FAILED: %s at %.2f of iperf3 (target >= %.1f)" % (best, ratio, target))
sys.exit(0 if doc["met"] else 1)
PY
