#!/usr/bin/env bash
# The agent and its protocol on this host: pairing, keys, two agents answering one
# controller, a wrong key refused on both sides with no job run, malformed and oversized
# messages rejected while the agent keeps serving, an agent killed mid-job. Every
# message after the handshake is authenticated (altered and replayed frames refused through a
# man in the middle, tests/cli/agent_mitm.py), jobs run only against the NAS, fake agents are
# refused by the NAS, idle unauthenticated connections cannot lock the NAS out. The agents run
# their jobs on directories through --mount (the posix driver), so no lab is needed; the lab
# test (tests/lab/t_agent.sh) covers discovery and real protocols.
. "$(dirname "$0")/lib.sh"
plan 54
tmp=$(mktemp -d /tmp/nastune-agent.XXXXXX)
root=$tmp/root
base=$((20000 + $$ % 20000))
PA=$base PB=$((base + 1)) PC=$((base + 2)) PW=$((base + 3))
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir -p "$root/srv/data" "$tmp/a" "$tmp/b" "$tmp/c" "$tmp/w"
cat >"$tmp/nas.conf" <<'CONF'
shares = ( { name = "Data"; path = "/srv/data"; protocols = ["smb"]; guest = true; } );
protocols = { nfs = { enabled = false; }; };
CONF
# agent NAME PORT KEY DIR: starts an agent in the background, logging to $tmp/NAME.log.
agent() {
	"$NASTUNE" agent --listen "127.0.0.1:$2" --token-file "$3" --mount "smb=$4" --no-advertise \
		>"$tmp/$1.log" 2>&1 &
	pids+=($!)
	disown $!
	for _ in $(seq 300); do grep -q listening "$tmp/$1.log" && return 0; sleep 0.1; done
	return 1
}
bench() { nt --root "$root" -c "$tmp/nas.conf" "$@"; }
quick=(--workload seq-write --size 1M --repeat 2 --warmup 0 --cache hot)

# --- pairing and keys
nt --root "$root" pair
key=$root/var/lib/nastune/agent.key
hex=$(cat "$key" 2>/dev/null)
[ "$rc" = 0 ] && [ "$(stat -c %a "$key")" = 600 ] && [ ${#hex} = 64 ] && grep -q "echo $hex > /etc/nastune/agent.key && nastune agent --token-file /etc/nastune/agent.key" <<<"$out"
ok $? "pair: a 0600 key under var/lib/nastune and the one-line command to start an agent with it"
nt --root "$root" pair
[ "$rc" = 2 ] && grep -q -- "--force" <<<"$err" && [ "$(cat "$key")" = "$hex" ]
ok $? "pair again: refused (exit 2, --force named), the key is unchanged"
nt --root "$root" --json pair --force
[ "$rc" = 0 ] && [ "$(cat "$key")" != "$hex" ] && python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert len(d["key"])==64 and len(d["key_id"])==16' "$out"
ok $? "pair --force: a new key (JSON with key and key_id)"
install -m 600 "$key" "$tmp/key"
nt agent --token-file "$tmp/nokey"
[ "$rc" = 2 ] && grep -q "nastune pair" <<<"$err"
ok $? "agent without a key file: exit 2, says to run nastune pair"
install -m 644 "$key" "$tmp/loose"
nt agent --token-file "$tmp/loose"
[ "$rc" = 2 ] && grep -q "chmod 600" <<<"$err"
ok $? "agent with a world-readable key: exit 2, says chmod 600"
nt agent --listen nonsense:port --token-file "$tmp/key"
is "$rc" 2 "agent --listen with a bad port: exit 2"
nt agent --mount ftp=/x --token-file "$tmp/key"
is "$rc" 2 "agent --mount with an unknown protocol: exit 2"
nt --root "$root" -c "$tmp/nas.conf" bench --client "h:99999" --clients-only
[ "$rc" = 2 ] && grep -q "'h:99999' is not HOST" <<<"$err" && [ ! -e "$root/var/lib/nastune/state.db" ]
ok $? "bench --client with a bad port: exit 2 naming the value, nothing written"

# --- two agents, one controller
agent a "$PA" "$tmp/key" "$tmp/a"; ok $? "agent a listens"
agent b "$PB" "$tmp/key" "$tmp/b"; ok $? "agent b listens"
bench --json bench --client "127.0.0.1:$PA" --client "127.0.0.1:$PB" --clients-only "${quick[@]}"
is "$rc" 0 "bench --client a --client b --clients-only exits 0"
python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
rs = d["results"]
assert len(rs) == 2, rs
for r in rs:
    assert r["client"].endswith("(127.0.0.1)") and r["client"] != "loopback", r["client"]
    assert r["protocol"] == "smb (os mount)" and r["workload"] == "seq-write" and r["unit"] == "MB/s"
    assert len(r["runs"]) == 2 and r["median"] > 0
assert len(d["agents"]) == 2 and all(a["agent_version"] and a["nic"]["name"] == "lo" and a["disk"]["write_mbs"] > 0 for a in d["agents"])
assert d["errors"] == []
PY
ok $? "each agent's result is labelled with its client, with facts (NIC, disk) per agent" 
grep -q "job 1: seq-write over posix on file://$tmp/a" "$tmp/a.log" && grep -q "job 1 done" "$tmp/b.log"
ok $? "both agents ran the job on their own mount"
[ -z "$(ls -A "$tmp/a")$(ls -A "$tmp/b")" ]
ok $? "... and left nothing behind in it"
bench --json bench --client "127.0.0.1:$PA" --clients-only --workload big-dir,source-tree \
	--entries 30 --tree-files 20 --repeat 2 --warmup 0 --cache hot
[ "$rc" = 0 ] && python3 -c '
import json, sys
d = json.loads(sys.argv[1])
got = {(r["workload"], r["metric"]) for r in d["results"] if r["client"].endswith("(127.0.0.1)")}
assert got == {("big-dir", m) for m in ("lookup-miss", "lookup-hit", "create", "list")} | {("source-tree", "stat-cold"), ("source-tree", "stat-hot")}, got
assert all(r["unit"] == "ops/s" and r["median"] > 0 and r["clat_ns"]["N"] > 0 for r in d["results"])
notes = {r["workload"]: r["note"] for r in d["results"]}
assert notes["big-dir"].startswith("30 entries") and notes["source-tree"].startswith("20 files"), notes
' "$out"
ok $? "big-dir and source-tree through an agent, with the --entries and --tree-files asked" "$out"
bench --json bench --client "127.0.0.1:$PA" "${quick[@]}" --protocol smb,posix
# No smbd on this host: the loopback SMB run fails, the loopback posix and the agent's runs work.
[ "$rc" = 1 ] && python3 -c '
import json, sys
d = json.loads(sys.argv[1])
cl = sorted({(r["client"], r["protocol"]) for r in d["results"]})
assert ("loopback", "posix") in cl and any(c.endswith("(127.0.0.1)") and p == "smb (os mount)" for c, p in cl), cl
assert [e["protocol"] for e in d["errors"]] == ["smb"] and "client" not in d["errors"][0], d["errors"]
' "$out"
ok $? "without --clients-only the loopback runs come too, labelled loopback, beside the agent's"

# --- a wrong key
jobs_before=$(grep -c "job [0-9]*:" "$tmp/a.log")
nt --root "$root" pair --token-file "$tmp/other.key"
bench bench --client "127.0.0.1:$PA" --clients-only --token-file "$tmp/other.key" "${quick[@]}"
[ "$rc" = 1 ] && grep -q "the agent refused us: authentication failed" <<<"$err"
ok $? "a controller with another key: exit 1, says the agent refused it" 
grep -q "refused 127.0.0.1: authentication failed: the controller does not hold this agent's key" "$tmp/a.log"
ok $? "... and the agent logs the refusal with the reason"
[ "$(grep -c "job [0-9]*:" "$tmp/a.log")" = "$jobs_before" ]
ok $? "... and no job ran (its log has only the $jobs_before earlier ones)"

# --- malformed, oversized, out of order
peer() { timeout 20 python3 "$top/tests/cli/agent_peer.py" "$PA" "$tmp/key" "$1" 2>&1; }
out=$(peer bigframe)
grep -q "reply: error message length 2097152 is outside 1..1048576" <<<"$out" && grep -q "reply: closed" <<<"$out"
ok $? "a 2 MiB length prefix: rejected with the limit named, connection closed" "$out"
out=$(peer garbage)
grep -q "reply: error malformed message" <<<"$out"
ok $? "a body that is not JSON: rejected as malformed" 
out=$(peer badjob)
grep -q "options.size must be an integer from 0 to" <<<"$out" && grep -q 'unknown workload "nope"' <<<"$out"
ok $? "a job with a 1 PiB size or an unknown workload: refused with the reason" "$out"
out=$(peer unknown)
grep -q 'unknown message type "shell"' <<<"$out" && grep -q "reply: facts" <<<"$out"
ok $? "an unknown message type: refused, and the connection still answers facts" "$out"
out=$(peer preauth)
grep -q "reply: error authentication failed" <<<"$out"
ok $? "a job before authenticating: only an error, then the connection is closed" "$out"
grep -q '"job" message before authentication' "$tmp/a.log"
ok $? "... logged by the agent"
# --- after the handshake every message is authenticated
out=$(peer badmac)
grep -q "reply: error message 0 failed authentication" <<<"$out" && grep -q "reply: closed" <<<"$out"
ok $? "an authenticated session: a frame with a wrong MAC is refused and the connection closed" "$out"
out=$(peer replay)
grep -q "reply: facts" <<<"$out" && grep -q "sequence number 0 where 1 was due (replayed or reordered)" <<<"$out" && grep -q "reply: closed" <<<"$out"
ok $? "the same authentic frame sent twice: answered once, the copy refused as replayed" "$out"
out=$(peer force)
grep -q 'reply: error "force" is never accepted from the network' <<<"$out"
ok $? "a job with force from the network: refused" "$out"
out=$(peer elsewhere)
[ "$(grep -c "is not the NAS that authenticated (127.0.0.1)" <<<"$out")" = 2 ]
ok $? "a job against another address, or a host name: refused (only the authenticated NAS's address)" "$out"
out=$(peer fileout)
[ "$(grep -c "file:// targets are accepted only for this agent's --mount paths" <<<"$out")" = 2 ]
ok $? "file:// jobs outside the agent's --mount list (as smb, and as posix on /etc): refused" "$out"
out=$(peer wrongnas)
grep -q "reply: error refused: you connect from another address than you name" <<<"$out" &&
	grep -q "names itself 198.51.100.7" "$tmp/a.log"
ok $? "a key holder naming another address than its own in the handshake: refused, logged" "$out"
[ "$(grep -c "job [0-9]*:" "$tmp/a.log")" = "$jobs_before" ]
ok $? "... and none of these ran a job" "$(grep "job [0-9]*:" "$tmp/a.log")"

# A man in the middle (tests/cli/agent_mitm.py, no key) between the NAS and agent a.
PM=$((base + 4)) PF=$((base + 5))
# mitm ACTION [RUNS]: bench through the relay RUNS times (default 1); $out/$err/$rc of the last.
mitm() {
	: >"$tmp/mitm.log"
	python3 "$top/tests/cli/agent_mitm.py" "$PM" "$PA" "$1" "$tmp/mitm.log" 2>>"$tmp/mitm.log" &
	local mp=$!
	for _ in $(seq 300); do grep -q listening "$tmp/mitm.log" && break; sleep 0.1; done
	for _ in $(seq "${2:-1}"); do
		bench --json bench --client "127.0.0.1:$PM" --clients-only "${quick[@]}"
	done
	kill "$mp"; wait "$mp" 2>/dev/null
}
jobs() { grep -c "job [0-9]*:" "$tmp/a.log"; }
results() { python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])["results"]))' "$out"; }
n0=$(jobs)
mitm pass
[ "$rc" = 0 ] && [ "$(results)" = 1 ] && [ "$(jobs)" = $((n0 + 1)) ]
ok $? "through a relay that changes nothing, the job runs (the control for the next tests)" "$err"
n0=$(jobs)
mitm flip-c2a:2
[ "$rc" = 1 ] && grep -q "flipped a bit of c2a frame 2" "$tmp/mitm.log" && [ "$(jobs)" = "$n0" ] &&
	grep -q "message 1 failed authentication (altered in flight" "$tmp/a.log" && [ "$(results)" = 0 ]
ok $? "a job altered in flight (one bit): the agent refuses it, no job runs, the NAS reports it (exit 1)" "$err"
n0=$(jobs)
mitm replay-c2a:2
[ "$(jobs)" = $((n0 + 1)) ] && grep -q "replayed c2a frame 2" "$tmp/mitm.log" &&
	grep -q "sequence number 1 where 2 was due (replayed or reordered); refused" "$tmp/a.log"
ok $? "a job frame replayed in flight: the job runs once, the copy is refused" "$(tail -n 3 "$tmp/a.log")"
n0=$(jobs)
mitm old-c2a:2 2
[ "$rc" = 1 ] && grep -q "replaced c2a frame 2 with the first connection's" "$tmp/mitm.log" &&
	[ "$(jobs)" = $((n0 + 1)) ] && [ "$(results)" = 0 ]
ok $? "a job frame recorded on one connection and replayed into the next: refused, not run" "$err"
mitm flip-a2c:3
[ "$rc" = 1 ] && grep -q "flipped a bit of a2c frame 3" "$tmp/mitm.log" && [ "$(results)" = 0 ] &&
	grep -q "failed authentication (altered in flight" <<<"$err"
ok $? "a message from the agent altered in flight: the NAS refuses it and takes no result from it" "$err"
mitm replay-a2c:2
[ "$rc" = 1 ] && grep -q "replayed or reordered" <<<"$err" && [ "$(results)" = 0 ]
ok $? "a message from the agent replayed in flight: the NAS refuses it" "$err"

# A fake agent (holds the key file's name, not the key's proof) is refused by the NAS.
fake() {
	local fp
	start_fake "$tmp/fake.out" 30 --fake-agent "127.0.0.1:$PF" "$tmp/key" "$1"
	fp=$FAKE_PID
	bench --json bench --client "127.0.0.1:$PF" --clients-only "${quick[@]}"
	wait "$fp"
}
fake good
grep -q "nas sent: facts" "$tmp/fake.out"
ok $? "a fake agent with the right proof gets the NAS's first request (the control)" "$(cat "$tmp/fake.out")"
for mode in badproof reflect noproof; do
	fake "$mode"
	[ "$rc" = 1 ] && [ "$(grep "nas sent" "$tmp/fake.out")" = "nas sent: closed" ] &&
		grep -Eq "its proof is wrong|instead of its proof" <<<"$err" && [ "$(results)" = 0 ]
	ok $? "a fake agent ($mode): the NAS refuses it, sends it nothing and hangs up (exit 1)" "$(cat "$tmp/fake.out"; echo "$err")"
done

# Idle unauthenticated connections from another address do not lock the NAS out.
timeout 40 python3 "$top/tests/cli/agent_peer.py" --source 127.0.0.2 "127.0.0.1:$PA" "$tmp/key" hold:40:14 >"$tmp/hold.out" 2>&1 &
hp=$!
sleep 2
bench --json bench --client "127.0.0.1:$PA" --clients-only "${quick[@]}"
[ "$rc" = 0 ] && [ "$(results)" = 1 ]
ok $? "while 127.0.0.2 holds 40 idle unauthenticated connections, the NAS benchmarks through the agent" "$err"
wait "$hp"
grep -Eq "at most [1-4] at once" "$tmp/hold.out" && grep -q "refused 127.0.0.2: connection closed by the peer\|refused 127.0.0.2: no message from the peer in time" "$tmp/a.log" &&
	python3 -c 'import re,sys; t=float(re.search(r"longest lived ([0-9.]+) s", sys.argv[1]).group(1)); assert 0 < t < 13, t' "$(cat "$tmp/hold.out")"
ok $? "... at most 4 of them are in the handshake at once, and idle ones are dropped (not held for the 14 s)" "$(cat "$tmp/hold.out")"
out=$(peer ok)
grep -q "reply: facts" <<<"$out"
ok $? "after all that the agent still serves (facts over a fresh connection)" "$out"
kill -0 "${pids[0]}"
ok $? "agent a is still running"

# --- over IPv6, in a private network namespace (lo with two /64s): the NAS at 2001:db8:2::1,
# a neighbour holding 17 addresses of 2001:db8:1::/64. Jobs name the NAS as [v6] in their
# targets; unauthenticated connections count per /64, so 17 addresses x 4 cannot take all 64
# handshake slots.
nsp=""
if unshare -n sleep 300 2>/dev/null & then
	nsp=$!
	pids+=("$nsp")
	sleep 0.2
fi
inns() { nsenter --net="/proc/$nsp/ns/net" "$@"; }
srcs=$(for i in $(seq 10 26); do printf '2001:db8:1::%d,' "$i"; done)
srcs=${srcs%,}
addrs_up() {
	local a
	inns ip link set lo up 2>/dev/null && inns ip addr add 2001:db8:2::1/64 dev lo nodad || return 1
	for a in ${srcs//,/ }; do inns ip addr add "$a/64" dev lo nodad || return 1; done
}
if [ -n "$nsp" ] && addrs_up; then
	mkdir -p "$tmp/v6"
	# nsenter execs the agent, so $! is the agent itself (through the inns function it would
	# be a subshell, and the cleanup would leave the agent running).
	nsenter --net="/proc/$nsp/ns/net" "$NASTUNE" agent --listen "[::]:$PW" --token-file "$tmp/key" --mount "smb=$tmp/v6" \
		--no-advertise >"$tmp/v6.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 300); do grep -q listening "$tmp/v6.log" && break; sleep 0.1; done
	v6bench() {
		out=$(inns "$NASTUNE" --datadir "$top" --root "$root" -c "$tmp/nas.conf" --json bench \
			--client "[2001:db8:2::1]:$PW" --clients-only "${quick[@]}" 2>"$tmp/v6.err")
		rc=$?
		err=$(cat "$tmp/v6.err")
	}
	v6bench
	[ "$rc" = 0 ] && [ "$(results)" = 1 ] && grep -q "on smb://\[2001:db8:2::1\]/Data" <<<"$err"
	ok $? "an agent reached over IPv6 runs the NAS's job (the target names the NAS as [2001:db8:2::1])" "$err"
	timeout 40 nsenter --net="/proc/$nsp/ns/net" python3 "$top/tests/cli/agent_peer.py" --source "$srcs" \
		"[2001:db8:2::1]:$PW" "$tmp/key" hold:68:12 >"$tmp/hold6.out" 2>&1 &
	hp=$!
	sleep 2
	v6bench
	[ "$rc" = 0 ] && [ "$(results)" = 1 ]
	ok $? "while 17 addresses of one IPv6 /64 hold 68 idle connections, the NAS (another /64) benchmarks through the agent" "$err"
	wait "$hp"
	grep -Eq "at most [1-4] at once" "$tmp/hold6.out"
	ok $? "... the /64 has at most 4 connections in the handshake at once" "$(cat "$tmp/hold6.out")"
else
	for d in "IPv6 job target" "IPv6 /64 bound" "IPv6 /64 count"; do
		ok 0 "# SKIP $d: no private network namespace (unshare -n) here"
	done
fi

# --- an agent killed mid-job; the other one finishes
agent c "$PC" "$tmp/key" "$tmp/c"; ok $? "agent c listens"
(
	for _ in $(seq 100); do grep -q "job 1:" "$tmp/c.log" && break; sleep 0.05; done
	kill -9 "$(pgrep -f "agent --listen 127.0.0.1:$PC")"
) 2>/dev/null &
bench --json bench --client "127.0.0.1:$PC" --client "127.0.0.1:$PB" --clients-only --workload seq-write --size 64M --repeat 30 --warmup 0 --cache hot
wait $! 2>/dev/null
[ "$rc" = 1 ] && grep -q "disappeared mid-job" <<<"$err"
ok $? "agent c killed mid-job: exit 1, reported as disappeared mid-job" "$err"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert any("disappeared mid-job" in e["message"] for e in d["errors"]), d["errors"]
assert len(d["results"]) == 1 and len(d["results"][0]["runs"]) == 30, d["results"]
' "$out"
ok $? "... and agent b's job still ran to the end (its result is in the run)"
[ -n "$(ls -A "$tmp/c")" ]
ok $? "the killed agent left its scratch behind (as SIGKILL must)..."
agent c2 "$PC" "$tmp/key" "$tmp/c"
bench bench --client "127.0.0.1:$PC" --clients-only "${quick[@]}"
[ "$rc" = 0 ] && [ -z "$(ls -A "$tmp/c")" ]
ok $? "... and the next job on that mount removes it (stale scratch of a dead process)" "$(ls -A "$tmp/c")"
