#!/bin/bash
# Honest cache labels: `bench --cache cold` drops the page cache of the machine it
# runs on. From client1 that is not the server's cache (the server may still hold the file),
# so the results say "client-cold"; on the server itself, against its own address, the drop
# reaches the cache smbd reads through, and they say "cold". (The lab's hosts share one
# kernel, but the label follows what a real deployment would have: whether the target's
# address is one of this host's own.)
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 3

CR=$WORK/creds
printf 'username = alice\npassword = %s\n' "$(password alice)" >"$CR"
chmod 600 "$CR"
quick=(--size 1M --repeat 1 --warmup 0 --entries 10 --cache cold --no-baseline --workload seq-read,metadata)
# labels HOST: nastune bench in HOST against the server's Media; prints "workload metric cache".
labels() {
	timeout 300 "$LAB" exec "$1" "$NASTUNE" --root "$WORK/$1" --json bench --target "smb://alice@$SERVER/Media" \
		--credentials "$CR" "${quick[@]}" 2>"$WORK/err" 7>&- |
		python3 -c 'import json,sys; d=json.load(sys.stdin); assert not d["errors"], d["errors"]; [print(r["workload"], r["metric"], r["cache"]) for r in d["results"]]'
}

out=$(labels client1)
grep -q '^seq-read read client-cold$' <<<"$out" && grep -q '^metadata stat-hit-cold client-cold$' <<<"$out" &&
	grep -q '^metadata list-hot hot$' <<<"$out" && ! grep -q ' cold$' <<<"$out"
ok $? "from client1 (as root, --cache cold): client-cold, never cold; the hot metadata pass stays hot" "$out$(cat "$WORK/err")"
out=$(labels server)
grep -q '^seq-read read cold$' <<<"$out" && grep -q '^metadata stat-hit-cold cold$' <<<"$out" &&
	! grep -q 'client-cold' <<<"$out"
ok $? "on the server against its own address $SERVER: cold" "$out$(cat "$WORK/err")"
out=$(timeout 300 "$LAB" exec client1 "$NASTUNE" --root "$WORK/client1" --json bench --target "smb://alice@$SERVER/Media" \
	--credentials "$CR" "${quick[@]}" 2>/dev/null 7>&- | python3 -c 'import json,sys; d=json.load(sys.stdin); print([r["note"] for r in d["results"] if r["metric"] == "list-cold"][0])')
grep -q "this client's page cache (not the server's)" <<<"$out"
ok $? "the metadata note says whose cache was dropped" "$out"

[[ $TAP_N = 3 ]] || echo "# ran $TAP_N tests, planned 3"
done_testing
