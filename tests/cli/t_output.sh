#!/usr/bin/env bash
# Output that cannot be written is a failure: with stdout on a full device, a
# command that would succeed exits 1 and says why, instead of 0 with nothing delivered.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan 6

"$NASTUNE" --version >/dev/full 2>"$tmp/err"; is "$?" 1 "--version into a full device exits 1"
grep -q 'cannot write the output: No space left on device' "$tmp/err"; ok $? "and says why"
"$NASTUNE" --datadir "$top" -c "$top/profiles/demo.conf" knobs --json >/dev/full 2>"$tmp/err"
is "$?" 1 "knobs --json into a full device exits 1"
"$NASTUNE" --datadir "$top" -c "$top/profiles/demo.conf" knobs --json >"$tmp/out" 2>"$tmp/err"
is "$?" 0 "the same into a file exits 0"
printf 'server = { name = 3; };\n' >"$tmp/bad.conf"
"$NASTUNE" --datadir "$top" -c "$tmp/bad.conf" check >/dev/full 2>/dev/null
is "$?" 2 "an invalid configuration still exits 2 (not 1) with stdout full"
"$NASTUNE" --help >/dev/full 2>/dev/null; is "$?" 1 "--help into a full device exits 1"
