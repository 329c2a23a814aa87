#!/bin/bash
# tune --clients and the NIC MTU: the server at MTU 1500 on a 10 Gbit/s link with offloads
# off (so the MTU matters), client1 capable of 9000 and running an agent.
# tune proves the largest MTU every peer receives, measures what the client gets, keeps it
# because the client is faster, records it in the generation, and rollback restores 1500.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready --link 10g --offload off --server-mtu 1500 --client-mtu 9000 --switch-mtu 9216
plan 12

C1=$("$LAB" addr client1)
CONF=$SROOT/etc/nastune/nastune.conf
R1=$("$LAB" root client1)
cleanup() {
	pkill -f "[a]gent --token-file $R1/" 2>/dev/null
	"$LAB" up >/dev/null 2>&1
	"$LAB" apply "$DEMO" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
both() { printf 'rc=%s\nstdout:\n%s\nstderr:\n%s\n' "$rc" "$out" "$err" | head -c 20000; }
nts() {
	timeout 900 "$LAB" exec server "$NASTUNE" --root "$SROOT" -c "$CONF" "$@" >"$WORK/out" 2>"$WORK/err" 7>&-
	rc=$?
	out=$(<"$WORK/out")
	err=$(<"$WORK/err")
}
mtu_of() { "$LAB" exec "$1" cat /sys/class/net/lab0/mtu; }

sed -e "s|^network = .*|network = { interface = \"lab0\"; mtu = \"keep\"; peers = [\"$C1\"]; };|" "$DEMO" >"$CONF"
nts apply
g0=$("$LAB" exec server "$NASTUNE" --root "$SROOT" -c "$CONF" --json status 7>&- | python3 -c 'import json,sys; print(json.load(sys.stdin)["generations"][-1])')
nts pair --force
mkdir -p "$R1/etc/nastune"
install -m 600 "$SROOT/var/lib/nastune/agent.key" "$R1/etc/nastune/agent.key"
printf 'username = alice\npassword = %s\n' "$(password alice)" >"$R1/etc/nastune/creds"
chmod 600 "$R1/etc/nastune/creds"
rm -f "$R1/run/agent.log"
(on client1 sh -c "exec $NASTUNE agent --token-file $R1/etc/nastune/agent.key --credentials $R1/etc/nastune/creds --no-advertise >$R1/run/agent.log 2>&1" &)
for ((i = 0; i < 50; i++)); do grep -q listening "$R1/run/agent.log" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$R1/run/agent.log"
ok $? "an agent on client1 (MTU 9000)"

printf 'username = alice\npassword = %s\n' "$(password alice)" >"$SROOT/etc/nastune/creds"
chmod 600 "$SROOT/etc/nastune/creds"
# On a 10 Gbit/s link the MTU step runs first, proves 9000 and measures one share over SMB
# through client1 at both MTUs for at most a quarter of the budget, so it fits in 6m.
nts --json tune --clients "$C1" --knobs net.mtu --goal throughput --size 128M --repeat 8 --budget 6m --credentials "$SROOT/etc/nastune/creds"
[[ $rc = 0 ]]
ok $? "tune --clients client1 --knobs net.mtu: exit 0" "$(both)"
tuned=$out
# The clients' passes before and after are reported; the trials' dozens of calls only at -v
# (make demo's tune once printed 300 such lines among its own).
n_agent=$(grep -c "bench: agent client1" <<<"$err") n_jobs=$(grep -c "bench: client1.* over smb on" <<<"$err")
(( n_agent >= 1 && n_agent <= 2 && n_jobs <= 6 * n_agent ))
ok $? "the trials' client calls stay out of the log ($n_agent agent lines, $n_jobs job lines)" "$err"
k=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(json.dumps([x for x in d["knobs"] if x["name"]=="net.mtu"][0]))' "$out" 2>/dev/null)
python3 -c 'import json,sys; k=json.loads(sys.argv[1]); sys.exit(0 if k["before"]=="1500" and k["after"]=="9000" and k["applied"] and k["verdict"]!="worse" and "proven to every peer" in k["reason"] and k["decided_by"]=="clients" else 1)' "$k"
ok $? "net.mtu: 1500 -> $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["after"])' "$k" 2>/dev/null), $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["reason"])' "$k" 2>/dev/null)" "$k"$'\n'"$(both)"
m=$(mtu_of server)
[[ $m = 9000 ]] && "$LAB" exec server ping -4 -c 2 -i 0.2 -W 1 -M do -s $((m - 28)) "$C1" >/dev/null 2>&1
ok $? "the server runs MTU $m and full-size don't-fragment echoes reach client1"
nts status
grep -q "MTU of lab0 with this generation: $m" <<<"$out"
ok $? "the tune's generation records MTU $m" "$(both)"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); a=d["clients_after"]; b=d["clients_before"]; sys.exit(0 if a and b and all(r["client"].startswith("client1") for r in a+b) else 1)' "$tuned"
ok $? "client results before and after are in the report, labelled client1" "$(both)"
# The demo shares: Media and Public (smb, nfs, afp), TimeMachine (smb, afp), Archive (smb, nfs):
# client1 is Linux, so no AFP, each share gets one of its own protocols.
python3 - "$tuned" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
c = [x for x in d["protocol_choice"] if x["client"].startswith("client1")][0]
assert c["class"] == "Linux" and c["protocol"] in ("smb", "nfs"), c
assert c["shares"], c
for s in c["shares"]:
    assert s["protocol"] in ("smb", "nfs") and s["why"], s
PY
ok $? "protocol choice for client1 [Linux]: one protocol per share, never AFP, each with why ($(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("; ".join("%s %s" % (s["share"], s["protocol"]) for x in d["protocol_choice"] for s in x["shares"]))' "$tuned" 2>/dev/null))" "$(both)"
# Like for like: SMB's writes are unflushed (libsmbclient has no flush), NFS's flushed with
# the figure without COMMIT beside, and the protocol choice compares those.
python3 - "$tuned" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
w = {r["protocol"]: r for r in d["clients_before"] if r["workload"] == "seq-write" and r["metric"] == "write"}
assert w["smb"]["durability"] == "unflushed" and "unflushed_runs" not in w["smb"], w["smb"]
assert w["nfs"]["durability"] == "flushed" and w["nfs"]["unflushed_median"] > 0, w["nfs"]
assert all(r["durability"] is None for r in d["clients_before"] if r["metric"] == "read")
c = [x for x in d["protocol_choice"] if x["client"].startswith("client1")][0]
assert c["writes"] == "unflushed" and "nfs" in c["scores_flushed"], c
assert "writes compared unflushed" in c["why"], c
PY
ok $? "client write results are labelled (smb unflushed, nfs flushed + unflushed figure); the choice compares unflushed" "$(both)"
# Advice from facts: client1 is Linux in 198.18.0.0/15 (Media's NFS clients): NFS 3 and 4
# and SMB, with what was measured; no AFP.
python3 - "$tuned" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
a = [x for x in d["advice"] if x["client"].startswith("client1")][0]
p = {o["protocol"]: o for o in a["protocols"]}
assert set(p) == {"nfs", "smb"}, a
assert p["nfs"]["versions"] == "3, 4" and "Media" in p["nfs"]["shares"], a
assert "measured_mbs" in p["nfs"] and "measured_mbs" in p["smb"], a
assert [x["protocol"] for x in a["not_offered"]] == ["afp"], a
assert a["knobs"]["smb.multichannel"]["value"] == "yes", a
c = [x for x in d["protocol_choice"] if x["client"].startswith("client1")][0]
assert a["use"] == c["protocol"], (a, c)
PY
ok $? "advice for client1: NFS 3, 4 and SMB with measured figures and the knobs in force, no AFP" "$(both)"
nts rollback "$g0"
[[ $rc = 0 && $(mtu_of server) = 1500 ]]
ok $? "rollback to the generation before the tune: MTU 1500 again" "$(both)"

# Server and client at 1500: veth takes 1504, but TCP's MSS follows the smaller side, so the
# tune does not try a larger MTU at all (client1's facts say 1500; its replies too).
"$LAB" exec client1 ip link set lab0 mtu 1500
nts --json tune --clients "$C1" --knobs net.mtu --goal throughput --size 32M --repeat 8 --credentials "$SROOT/etc/nastune/creds"
k=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(json.dumps([x for x in d["knobs"] if x["name"]=="net.mtu"][0]))' "$out" 2>/dev/null)
[[ $rc = 0 && $(mtu_of server) = 1500 ]] && python3 -c 'import json,sys; k=json.loads(sys.argv[1]); sys.exit(0 if not k["applied"] and "use MTU 1500 themselves" in k["reason"] else 1)' "$k"
ok $? "server and client at 1500: tune keeps 1500 ($(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["reason"])' "$k" 2>/dev/null))" "$k"$'\n'"$(both)"
"$LAB" exec client1 ip link set lab0 mtu 9000
done_testing
