# tests/lab/lib.sh - sourced by the lab's TAP tests (tests/lab/t_*.sh).
# Brings the lab up (idempotent) and offers TAP helpers. Tests run as root; in CI they
# never skip: a missing lab is a failure.
# shellcheck shell=bash disable=SC2034 # variables for the tests that source this
set -uo pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB=$TOPDIR/tests/lab/lab
AFP=$TOPDIR/tests/lab/afp.py
DEMO=$TOPDIR/profiles/demo.conf
export NASTUNE=${NASTUNE:-$TOPDIR/build/nastune}
WORK=$(mktemp -d /tmp/nastune-lab-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# One test at a time per lab, also across users of the machine (tests/lab/lab honours it).
LAB_STATE_DIR=${NASTUNE_LAB_STATE:-/var/tmp/nastune-lab}
mkdir -p "$(dirname "$LAB_STATE_DIR")"
exec 7>"$LAB_STATE_DIR.lock"
if ! flock -w 900 7; then
	echo "Bail out! another lab test held $LAB_STATE_DIR.lock for 15 minutes"
	exit 1
fi
export NASTUNE_LAB_LOCK_HELD=$LAB_STATE_DIR

# shellcheck source=tests/lib.sh
. "$TOPDIR/tests/lib.sh"

# gap STATUS DESCRIPTION REASON: a known gap outside the lab (e.g. a template), printed as
# a TAP comment and not counted (tests/run counts "not ok # TODO" as a failure). When it
# starts to pass, it says so: turn it into a real test then.
gap() {
	if [[ $1 -eq 0 ]]; then
		echo "# gap closed, make it a test: $2"
	else
		echo "# KNOWN GAP (not counted): $2 — $3"
	fi
}

# The lab with the demo configuration applied: the state every test starts from.
lab_ready() {
	local out
	if ! out=$("$LAB" up "$@" 2>&1); then
		echo "Bail out! lab up failed"
		diag "$out" 40
		exit 1
	fi
	# Knob values a tune test left (tuned.conf is read with every configuration) go first.
	rm -f "$("$LAB" root server)/etc/nastune/tuned.conf"
	if ! out=$("$LAB" apply "$DEMO" 2>&1); then
		echo "Bail out! lab apply $DEMO failed"
		diag "$out" 40
		exit 1
	fi
	SERVER=$("$LAB" addr server)
	SROOT=$("$LAB" root server)
	sleep 0.5	# let the daemons finish their reload
}

on() { local h=$1; shift; "$LAB" exec "$h" "$@" 7>&-; }	# daemons must not keep the lock

# A file of N random bytes under $WORK; prints its path.
randfile() {
	local f=$WORK/$1
	head -c "$2" /dev/urandom >"$f"
	echo "$f"
}

# Passwords of the lab's users (tests/lab/lab writes them).
password() { grep "^$1:" "$LAB_STATE_DIR/users" | cut -d: -f2-; }

# A pidfile's pid under the server root.
server_pid() { tr -dc '0-9' <"$SROOT/$1"; }

# nts ARGS...: nastune on the server with its root and the configuration applied there,
# bounded by NTS_TIMEOUT seconds (900); sets $rc, $out and $err.
nts() {
	timeout "${NTS_TIMEOUT:-900}" "$LAB" exec server "$NASTUNE" --root "$SROOT" \
		-c "$SROOT/etc/nastune/nastune.conf" "$@" >"$WORK/out" 2>"$WORK/err" 7>&-
	rc=$?
	out=$(<"$WORK/out")
	err=$(<"$WORK/err")
}
