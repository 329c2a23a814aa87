#!/bin/bash
# Client-assisted benchmarks in the lab: agents on client1 (1 Gbit/s, MTU 1500) and
# client2 (10 Gbit/s, MTU 9000), found over mDNS by the server, run seq-read over SMB against
# the server's shares with nastune's own driver; their results differ as their links do. A
# wrong key is refused on both sides; an agent killed mid-job is reported while the other
# finishes; malformed and oversized messages from the network leave the agent serving; idle
# unauthenticated connections from another client do not lock the server out.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready --link client1=1g,client2=10g,client3=10g,server=10g --offload off \
	--server-mtu 9000 --client-mtu client1=1500,client2=9000,client3=1500
plan 18

cleanup() {
	for h in client1 client2 client3; do kill_agent "$h"; done
	"$LAB" up >/dev/null 2>&1	# default links and MTUs for the tests after this one
	rm -rf "$WORK"
}
trap cleanup EXIT
C1=$("$LAB" addr client1) C2=$("$LAB" addr client2) C3=$("$LAB" addr client3)
# start_agent HOST KEYFILE: the agent in HOST with the lab users' credentials, logging to
# HOST's root (run/agent.log).
start_agent() {
	local r
	r=$("$LAB" root "$1")
	mkdir -p "$r/etc/nastune"
	install -m 600 "$2" "$r/etc/nastune/agent.key"
	printf 'username = alice\npassword = %s\n' "$(password alice)" >"$r/etc/nastune/creds"
	chmod 600 "$r/etc/nastune/creds"
	rm -f "$r/run/agent.log"	# "listening" must come from this agent
	(on "$1" sh -c "exec $NASTUNE agent --token-file $r/etc/nastune/agent.key --credentials $r/etc/nastune/creds >$r/run/agent.log 2>&1" &)
	until_log "$1" listening 5
}
until_log() {
	local r i
	r=$("$LAB" root "$1")
	for ((i = 0; i < $3 * 10; i++)); do grep -q "$2" "$r/run/agent.log" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
log_of() { cat "$("$LAB" root "$1")/run/agent.log"; }
# kill_agent HOST [SIGNAL]: the PID namespace is shared, so match the host's own key path.
kill_agent() { pkill "${2:--TERM}" -f "[a]gent --token-file $("$LAB" root "$1")/" 2>/dev/null; }

nts pair
ok $? "pair on the server" "$(both)"
KEY=$SROOT/var/lib/nastune/agent.key
start_agent client1 "$KEY"; ok $? "agent on client1 (1g, MTU 1500)" "$(log_of client1)"
start_agent client2 "$KEY"; ok $? "agent on client2 (10g, MTU 9000)" "$(log_of client2)"

# --- discovery and the two links
nts --json mdns browse --type _nastune._tcp -4
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
a = {s["address"]: s for s in d["services"] if "role=agent" in s["txt"]}
assert set(a) >= {sys.argv[2], sys.argv[3]}, a
for s in a.values():
    assert any(t.startswith("key_id=") for t in s["txt"]) and any(t.startswith("os=") for t in s["txt"]) and s["port"] == 7048
' "$out" "$C1" "$C2"
ok $? "the server sees both agents over mDNS (_nastune._tcp, role, os, key id, port 7048)" "$(both)"
nts --json bench --client auto --clients-only --protocol smb --workload seq-read --size 256M --repeat 3 --warmup 1 --cache hot
[[ $rc = 0 ]]
ok $? "bench --client auto --clients-only: exit 0" "$(both)"
python3 - "$out" "$C1" "$C2" <<'PY' >"$WORK/speeds" 2>&1
import json, sys
d, c1, c2 = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
by = {}
for r in d["results"]:
    assert r["workload"] == "seq-read" and r["protocol"] == "smb" and r["unit"] == "MB/s", r
    by.setdefault(r["client"], []).append(r["median"])
k1 = [k for k in by if k.endswith("(%s)" % c1)]
k2 = [k for k in by if k.endswith("(%s)" % c2)]
assert k1 and k2 and k1[0].startswith("client1") and k2[0].startswith("client2"), by
s1, s2 = max(by[k1[0]]), max(by[k2[0]])
print("client1 %.1f MB/s, client2 %.1f MB/s" % (s1, s2))
assert s1 <= 125, "client1 is above the gigabit ceiling"
assert s2 > 1.5 * s1, "client2 (10g) is not clearly faster"
facts = {a["hostname"]: a for a in d["agents"]}
assert facts["client1"]["nic"]["mtu"] == 1500 and facts["client2"]["nic"]["mtu"] == 9000, facts
# The MTU each sends with towards the NAS (its route's): what tune's MTU step may not exceed.
assert facts["client1"]["nic"]["path_mtu"] == 1500 and facts["client2"]["nic"]["path_mtu"] == 9000, facts
PY
ok $? "seq-read over SMB differs as the links do: $(cat "$WORK/speeds" | tail -n1)" "$(cat "$WORK/speeds"; both)"
grep -q "job 1: seq-read over smb on smb://$SERVER/" <<<"$(log_of client1)"
ok $? "client1's agent ran the job with nastune's SMB driver against the server's address" "$(log_of client1)"

# --- a wrong key
nts pair --token-file "$SROOT/var/lib/nastune/other.key"
start_agent client3 "$SROOT/var/lib/nastune/other.key"; ok $? "agent on client3 with another key"
nts bench --client "$C3" --clients-only --protocol smb --workload seq-read --size 16M --repeat 2 --warmup 0 --cache hot
[[ $rc = 1 ]] && grep -q "the agent refused us: authentication failed" <<<"$err"
ok $? "the server is refused by client3's agent: exit 1, says so" "$(both)"
grep -q "refused $SERVER: authentication failed" <<<"$(log_of client3)" && ! grep -q "job " <<<"$(log_of client3)"
ok $? "... client3's agent logs the refusal and ran no job" "$(log_of client3)"

# --- an agent killed mid-job
jobs1=$(log_of client1 | grep -c "job [0-9]*:")
(
	for ((i = 0; i < 600; i++)); do
		[[ $(log_of client1 | grep -c "job [0-9]*:") -gt $jobs1 ]] && break
		sleep 0.1
	done
	sleep 0.5
	kill_agent client1 -9
) 2>/dev/null &
nts --json bench --client "$C1" --client "$C2" --clients-only --protocol smb --workload seq-read --size 256M --repeat 5 --warmup 0 --cache hot
wait
[[ $rc = 1 ]] && grep -q "disappeared mid-job" <<<"$err"
ok $? "client1's agent killed mid-job: reported, exit 1" "$(both)"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert any(r["client"].startswith("client2") for r in d["results"]), d["results"]
assert any("disappeared mid-job" in e["message"] for e in d["errors"])
' "$out"
ok $? "... and client2's job finished" "$(both)"
# The killed job's scratch directory stays on the share: nothing can prove it was the agent's
# (it records nothing as a share user), so no later run removes it. The test removes it, as
# an administrator would, so that the suites after this one start from clean shares.
find "$SROOT/srv" -maxdepth 2 -name '.nastune-bench-client1-*' -exec rm -rf {} + 2>/dev/null

# --- NFS from an agent: the client does not know the server's users; the job goes by ids
nts --json bench --client "$C2" --clients-only --protocol nfs --workload seq-write --size 16M --repeat 2 --warmup 0 --cache hot
[[ $rc = 0 ]] && python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert not d["errors"] and any("/srv/media" in r["target"] for r in d["results"])' "$out"
ok $? "NFS jobs from an agent, to the users-only export as one of its users (uid, share gid)" "$(both)"

# --- hostile bytes from the network
peer() { on server timeout 20 python3 "$TOPDIR/tests/cli/agent_peer.py" "$C2:7048" "$KEY" "$1" 2>&1; }
out=$(peer bigframe)
grep -q "outside 1..1048576" <<<"$out"
ok $? "an oversized message to client2's agent is rejected" "$out"
out=$(peer garbage)
grep -q "malformed" <<<"$out"
ok $? "a malformed one too" "$out"
out=$(peer ok)
grep -q "reply: facts" <<<"$out"
ok $? "client2's agent still serves" "$out"
# --- another client holding idle unauthenticated connections to client2's agent
on client3 timeout 60 python3 "$TOPDIR/tests/cli/agent_peer.py" "$C2:7048" "$KEY" hold:40:20 >"$WORK/hold" 2>&1 &
hp=$!
sleep 3
nts --json bench --client "$C2" --clients-only --protocol smb --workload seq-read --size 16M --repeat 2 --warmup 0 --cache hot
[[ $rc = 0 ]] && python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["results"] and not d["errors"]' "$out"
ok $? "while client3 holds 40 idle unauthenticated connections to client2's agent, the server benchmarks through it" "$(both)"
wait "$hp"
grep -Eq "at most [1-4] at once" "$WORK/hold" && grep -q "refused $C3: no message from the peer in time" <<<"$(log_of client2)"
ok $? "... client3 had at most 4 in the handshake at once, and its idle ones were dropped at the deadline" "$(cat "$WORK/hold")"
[[ $TAP_N = 18 ]] || echo "# ran $TAP_N tests, planned 18"
done_testing
