#!/usr/bin/env bash
# No peer can stall or lock out the NAS. 64 idle connections from 16 addresses fill
# every handshake place of the agent, and the NAS still gets in (it knocks with the key); one
# key holder idling on every authenticated place is replaced by the newest session, and an
# agent that is busy is reported as busy; a fake
# agent streaming progress cannot keep `bench` past its job's wall-time deadline; SIGTERM
# ends `bench` within 2 s whatever the agent does.
. "$(dirname "$0")/lib.sh"
plan 9
tmp=$(mktemp -d /tmp/nastune-agentlim.XXXXXX)
root=$tmp/root
base=$((24000 + $$ % 20000))
PA=$base PF=$((base + 1))
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir -p "$root/srv/data" "$tmp/a"
cat >"$tmp/nas.conf" <<'CONF'
shares = ( { name = "Data"; path = "/srv/data"; protocols = ["smb"]; guest = true; } );
protocols = { nfs = { enabled = false; }; };
CONF
nt --root "$root" pair >/dev/null
key=$root/var/lib/nastune/agent.key
"$NASTUNE" agent --listen "127.0.0.1:$PA" --token-file "$key" --mount "smb=$tmp/a" --no-advertise \
	>"$tmp/a.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do grep -q listening "$tmp/a.log" && break; sleep 0.1; done
quick=(--workload seq-write --size 1M --repeat 2 --warmup 0 --cache hot)
bench() { nt --root "$root" -c "$tmp/nas.conf" --json bench "$@" --clients-only "${quick[@]}"; }
results() { python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])["results"]))' "$out" 2>/dev/null || echo -; }

# --- 16 addresses x 4 idle connections: every unauthenticated place of the agent
srcs=$(seq -s, -f '127.0.0.%g' 2 17)
timeout 60 python3 "$top/tests/cli/agent_peer.py" --source "$srcs" "127.0.0.1:$PA" "$key" hold:64:16 \
	>"$tmp/hold.out" 2>&1 &
hp=$!
sleep 3
fails=0
for i in 1 2 3; do
	bench --client "127.0.0.1:$PA"
	{ [ "$rc" = 0 ] && [ "$(results)" = 1 ]; } || { fails=$((fails + 1)); last=$err; }
done
is "$fails" 0 "while 16 addresses hold 64 idle connections, the NAS benchmarks through the agent (3 of 3)"
grep -q "knocked with the key; admitted past the handshake limits" "$tmp/a.log"
ok $? "... it got in by knocking with the key (the agent logs it)" "${last:-}$(tail -n 5 "$tmp/a.log")"
wait "$hp"
grep -Eq "^held 64 connections; [0-9]+ got a hello" "$tmp/hold.out"
ok $? "... and the 64 connections were held throughout" "$(cat "$tmp/hold.out")"

# --- one key holder on every authenticated place: the newest session wins
timeout 60 python3 "$top/tests/cli/agent_peer.py" "127.0.0.1:$PA" "$key" authidle:4:6 >"$tmp/idle.out" 2>&1 &
ip=$!
for _ in $(seq 50); do grep -qs authenticated "$tmp/idle.out" && break; sleep 0.1; done
bench --client "127.0.0.1:$PA"
[ "$rc" = 0 ] && [ "$(results)" = 1 ]
ok $? "4 idle sessions of a key holder do not keep the NAS out: the oldest idle one gives way" "$err"
wait "$ip"
grep -q "^3 of 4 sessions still open" "$tmp/idle.out"
ok $? "... exactly one of them was replaced" "$(cat "$tmp/idle.out")"

# --- a fake agent (with the key): busy; streaming progress, never a result
fake() {
	start_fake "$tmp/fake.out" 150 --fake-agent "127.0.0.1:$PF" "$key" "${1:-stream}"
	fp=$FAKE_PID
}
fake busy
bench --client "127.0.0.1:$PF"
wait "$fp"
[ "$rc" = 1 ] && grep -q "agent .* is busy (busy: every session" <<<"$err" &&
	python3 -c 'import json,sys; e=json.loads(sys.argv[1])["errors"]; assert len(e)==1 and e[0]["busy"] is True, e' "$out"
ok $? "an agent that answers busy is reported as busy (\"busy\": true), not as an error in its answer" "$err"
fake
t0=$(date +%s.%N)
NASTUNE_AGENT_JOB_TIMEOUT=3 timeout -k 5 30 "$NASTUNE" --datadir "$top" --root "$root" -c "$tmp/nas.conf" \
	bench --client "127.0.0.1:$PF" --clients-only "${quick[@]}" >"$tmp/out" 2>"$tmp/err"
rc=$?
el=$(awk "BEGIN{print $(date +%s.%N) - $t0}")
kill "$fp" 2>/dev/null; wait "$fp" 2>/dev/null
[ "$rc" = 1 ] && grep -q "did not end within 3 s" "$tmp/err" && awk "BEGIN{exit !($el < 10)}"
ok $? "progress frames do not extend a job: bench gives up at its 3 s deadline (took ${el} s)" "$(cat "$tmp/err")"

fake
"$NASTUNE" --datadir "$top" --root "$root" -c "$tmp/nas.conf" \
	bench --client "127.0.0.1:$PF" --clients-only "${quick[@]}" >"$tmp/out" 2>"$tmp/err" &
bp=$!
for _ in $(seq 100); do grep -q "nas sent: job" "$tmp/fake.out" && break; sleep 0.1; done
sleep 0.5
t0=$(date +%s.%N)
kill -TERM "$bp"
for _ in $(seq 100); do kill -0 "$bp" 2>/dev/null || break; sleep 0.05; done
el=$(awk "BEGIN{print $(date +%s.%N) - $t0}")
kill -KILL "$bp" 2>/dev/null
wait "$bp"
rc=$?
kill "$fp" 2>/dev/null; wait "$fp" 2>/dev/null
awk "BEGIN{exit !($el < 2)}" && [ "$rc" = 1 ] && grep -q "interrupted by SIGTERM" "$tmp/err"
ok $? "SIGTERM during a stalled client job ends bench within 2 s (took ${el} s, exit $rc)" "$(cat "$tmp/err")"
kill -0 "${pids[0]}"
ok $? "the agent still runs after all that"
