# tests/lib.sh - the TAP helpers every shell test shares (tests/cli, tests/lab, tests/pkg
# source it through their own lib.sh): plan, then ok, is, check, refuse, grep_out; diag and
# both show what a failing check saw. TAP_FAILED is 1 once a check failed (done_testing
# exits with it).
# shellcheck shell=bash disable=SC2034 # variables for the tests that source this
TAP_N=0
TAP_FAILED=0

plan() { echo "1..$1"; }

# diag TEXT [LINES]: TEXT's first LINES (15) lines as TAP diagnostics.
diag() { [[ -n ${1:-} ]] && printf '%s\n' "$1" | head -n "${2:-15}" | sed 's/^/# /'; return 0; }

# ok STATUS DESCRIPTION [OUTPUT [LINES]]: one TAP line; OUTPUT's first LINES (15) are shown
# as diagnostics on failure.
ok() {
	TAP_N=$((TAP_N + 1))
	if [[ $1 -eq 0 ]]; then
		echo "ok $TAP_N - $2"
	else
		echo "not ok $TAP_N - $2"
		TAP_FAILED=1
		diag "${3:-}" "${4:-15}"
	fi
	return 0
}

# is GOT WANT DESCRIPTION
is() {
	TAP_N=$((TAP_N + 1))
	if [[ $1 == "$2" ]]; then
		echo "ok $TAP_N - $3"
	else
		echo "not ok $TAP_N - $3"
		TAP_FAILED=1
		echo "#   got:  '$1'"
		echo "#   want: '$2'"
	fi
	return 0
}

# check DESCRIPTION CMD...: passes when CMD exits 0.
check() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1) && rc=0 || rc=$?
	ok "$rc" "$desc" "$out"
}

# refuse DESCRIPTION CMD...: passes when CMD fails (exits non-zero).
refuse() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1) && rc=1 || rc=0
	ok "$rc" "$desc" "$out"
}

# grep_out DESCRIPTION REGEX CMD...: passes when CMD's output matches REGEX (grep -E).
grep_out() {
	local desc=$1 re=$2 out
	shift 2
	out=$("$@" 2>&1)
	grep -qE -- "$re" <<<"$out"
	ok $? "$desc" "$out"
}

# both: the last command's $rc, $out and $err, for a failing check to show (20,000 bytes at
# most).
both() { printf 'rc=%s\nstdout:\n%s\nstderr:\n%s\n' "$rc" "$out" "$err" | head -c 20000; }

done_testing() { exit "$TAP_FAILED"; }
