# tests/cli/lib.sh - sourced by the cli tests (and the pkg tests): the shared TAP helpers
# (tests/lib.sh), then nastune run with the source tree's data. Source it, call plan N, then
# ok/is.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NASTUNE=${NASTUNE:-$top/build/nastune}
# shellcheck source=tests/lib.sh
. "$top/tests/lib.sh"
# nt ARGS...: runs nastune with the source tree's data; sets $out, $err, $rc.
nt() {
	local o e
	o=$(mktemp); e=$(mktemp)
	"$NASTUNE" --datadir "$top" "$@" >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o"); err=$(cat "$e")
	rm -f "$o" "$e"
}
# srvdirs ROOT: the share directories of profiles/demo.conf and the tests' /srv/data under
# ROOT (apply refuses a share whose directory is missing).
srvdirs() {
	mkdir -p "$1"/srv/{media,tm,public,archive,data}
}

# start_fake OUT SECS ARGS...: runs `timeout SECS python3 agent_peer.py ARGS` in the background
# with its output in OUT until it says it listens, up to three starts (the port may still be
# held for a moment by the one before); FAKE_PID gets its pid.
start_fake() {
	local out=$1 secs=$2
	shift 2
	for _ in 1 2 3; do
		timeout "$secs" python3 "$top/tests/cli/agent_peer.py" "$@" >"$out" 2>&1 &
		FAKE_PID=$!
		for _ in $(seq 300); do
			grep -q listening "$out" && return 0
			kill -0 "$FAKE_PID" 2>/dev/null || break
			sleep 0.1
		done
		cat "$out" >&2
		wait "$FAKE_PID" 2>/dev/null
		sleep 0.5
	done
}
