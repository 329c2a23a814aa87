#!/bin/bash
# The benchmark engine through every driver against the lab server: every workload
# over SMB, NFS (v3) and AFP from client1, results for each, nothing left on the share; wrong
# credentials and a missing share give clear errors and leave nothing; a server killed
# mid-run gives a clear error in bounded time, and the next run removes what was left (what
# it can tell is the directory the killed run made: not over the lab's AFP, which has no file
# ids).
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 18

CR=$WORK/creds
printf 'username = alice\npassword = %s\n' "$(password alice)" >"$CR"
chmod 600 "$CR"
# ntc ARGS...: nastune bench in client1 (no configuration there); sets $out, $err, $rc.
ntc() {
	timeout "${T:-600}" "$LAB" exec client1 "$NASTUNE" --root "$WORK/c1" "$@" >"$WORK/out" 2>"$WORK/err" 7>&-
	rc=$?
	out=$(<"$WORK/out")
	err=$(<"$WORK/err")
}
scratch() { find "$SROOT/srv" -maxdepth 2 -name '.nastune-bench-*' 2>/dev/null; }
quick=(--size 4M --repeat 2 --warmup 0 --files 5 --entries 20 --tree-files 40 --video-seconds 0.3 --cache hot --no-baseline)

for url in "smb://alice@$SERVER/Media" "nfs://$SERVER/srv/media?version=3&uid=29001&gid=29000" "afp://alice@$SERVER/Media"; do
	p=${url%%:*}
	ntc --json bench --target "$url" --credentials "$CR" "${quick[@]}"
	python3 - "$out" <<'PY' >"$WORK/wl" 2>&1
import json, sys
d = json.loads(sys.argv[1])
want = {"seq-write", "seq-read", "copy-in-share", "mixed-rw", "small-files", "small-io", "random-io", "metadata", "video-frames", "big-dir", "source-tree"}
got = {r["workload"] for r in d["results"]}
assert not d["errors"], d["errors"]
assert got == want, sorted(want - got)
for r in d["results"]:
    assert r["median"] >= 0 and len(r["runs"]) == 2, r
print(len(d["results"]), "results")
PY
	[[ $rc = 0 ]]
	ok $? "$p: every workload through the $p driver from client1 ($(tail -n1 "$WORK/wl"))" "$(cat "$WORK/wl"; both)"
	[[ -z $(scratch) ]]
	ok $? "$p: nothing left on the share" "$(scratch)"
done
ntc --json bench --target "smb://$SERVER/Public" --workload seq-write,small-files,mixed-rw "${quick[@]}"
[[ $rc = 0 ]] && python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert not d["errors"] and len(d["results"]) >= 9' "$out" && [[ -z $(scratch) ]]
ok $? "smb as guest (Public): files inside the scratch directory it made, nothing left" "$(both)"
ntc --json bench --target "smb://alice@$SERVER/Media" --credentials "$CR" --workload copy-in-share "${quick[@]}"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert any("copychunk" in (r.get("note") or "") for r in d["results"]), d["results"]' "$out"
ok $? "smb: copy-in-share says it used the server-side copy (copychunk)" "$(both)"

# --- errors
printf 'username = alice\npassword = wrong\n' >"$WORK/bad"
chmod 600 "$WORK/bad"
ntc bench --target "smb://alice@$SERVER/Media" --credentials "$WORK/bad" --workload seq-write "${quick[@]}"
[[ $rc = 1 ]] && grep -q "logon failure for alice" <<<"$err" && [[ -z $(scratch) ]]
ok $? "wrong password: exit 1, says logon failure, nothing written" "$(both)"
ntc bench --target "afp://alice@$SERVER/Media" --credentials "$WORK/bad" --workload seq-write "${quick[@]}"
[[ $rc = 1 ]] && grep -qi "alice" <<<"$err" && [[ -z $(scratch) ]]
ok $? "wrong password over AFP: exit 1, names the login" "$(both)"
ntc bench --target "smb://alice@$SERVER/NoSuchShare" --credentials "$CR" --workload seq-write "${quick[@]}"
[[ $rc = 1 ]] && grep -qi "NoSuchShare" <<<"$err"
ok $? "a missing share: exit 1, named" "$(both)"
ntc bench --target "nfs://$SERVER/srv/nosuch?version=3" --workload seq-write "${quick[@]}"
[[ $rc = 1 ]] && grep -q "/srv/nosuch" <<<"$err"
ok $? "a missing export: exit 1, named" "$(both)"

# --- the server killed mid-run
# gone PID...: waits until the killed processes are reaped (lab up takes a zombie for alive).
gone() {
	local p i
	for p in "$@"; do
		for ((i = 0; i < 100; i++)); do [[ -e /proc/$p ]] || break; sleep 0.1; done
	done
}
# smbd: the child serving the connection dies (the parent smbd lives on, as after a crash of
# one session); afpd: the whole server dies and lab up restarts it.
kill_smb() { local m; m=$(server_pid run/samba/smbd.pid); pkill -9 -P "$m"; }
kill_afp() {
	local m kids
	m=$(server_pid run/netatalk/afpd.pid)
	kids=$(pgrep -P "$m")
	# shellcheck disable=SC2086 # a list of pids
	kill -9 $kids "$m"
	gone $kids "$m"
}
for p in smb afp; do
	url="$p://alice@$SERVER/Media"
	(
		kill_it() { "kill_$p"; }
		for ((i = 0; i < 300; i++)); do [[ -n $(scratch) ]] && break; sleep 0.1; done
		sleep 1
		kill_it
	) &
	t0=$(date +%s)
	T=120 ntc bench --target "$url" --credentials "$CR" --workload seq-write --size 2G --repeat 3 --warmup 0 --cache hot --no-baseline
	t=$(($(date +%s) - t0))
	wait
	[[ $rc = 1 && $t -lt 90 ]] && grep -qiE "connect|closed|reset|timed out|broken|server" <<<"$err"
	ok $? "$p: server killed mid-run: exit 1 in ${t}s with a clear error" "$(both)"
	out=$("$LAB" up 2>&1)
	ok $? "$p: lab up brings the server back (if it was down)" "$out"
	for ((i = 0; i < 20; i++)); do
		ntc bench --target "$url" --credentials "$CR" --workload seq-write "${quick[@]}"
		[[ $rc = 0 ]] && break
		sleep 1
	done
	if [[ $p = afp ]]; then
		# The lab's afpd hands out CNIDs anew ("cnid scheme = last": no file ids), so
		# nothing tells the killed run's directory from another one of that name: it
		# stays, and the next run says so (never by name alone).
		[[ $rc = 0 && -n $(scratch) ]] && grep -q "cannot be told apart from another directory of that name" <<<"$err"
		ok $? "$p: the next run works, and leaves the killed run's scratch alone, saying why (no file ids)" "$(scratch; both)"
		rm -rf $(scratch)
	else
		[[ $rc = 0 && -z $(scratch) ]]
		ok $? "$p: the next run works and removes the scratch the killed run left" "$(scratch; both)"
	fi
done
[[ $TAP_N = 18 ]] || echo "# ran $TAP_N tests, planned 18"
done_testing
