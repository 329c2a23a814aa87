#!/usr/bin/env bash
# Apply benchmark: `apply --if-changed` with nothing changed (the postinst path: every package
# install runs it) against a bare `nastune --version`, the same binary's start-up and nothing
# else, alternately in one window: PAIRS pairs (default 41) of BATCH runs (5) of each side,
# timed as a batch (a 15 ms run preempted once or not at all on a loaded machine is a ratio
# of 0.8 or 2.0; five in a row average that out). The figure is the median of the pairs' own
# ratios (a pair runs back to back, so load that comes and goes on this shared machine hits
# both sides alike), with a distribution-free 95% interval for it (lib/stats.sh, as
# drivers.sh); the limit is 1.5, and the gate FAILS (exit 1) when the whole interval lies
# above it: a median above whose interval still reaches 1.5 says "not shown over". Times come
# from bash's $EPOCHREALTIME: no `date` process inside the timed interval to pad both sides
# alike and so flatter the ratio. A full apply into a fresh root is printed beside it.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
nastune=${NASTUNE:-$top/build/nastune}
PAIRS=${BENCH_APPLY_PAIRS:-41}
BATCH=${BENCH_APPLY_BATCH:-5}
LIMIT=${BENCH_APPLY_LIMIT:-1.5} # another limit: the way to see the gate fail
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/bench/lib/stats.sh
. "$top/tests/bench/lib/stats.sh"
# Microseconds CMD took, run in this shell (no fork but CMD's own).
timeit() {
	local s=$EPOCHREALTIME e
	"$@" >/dev/null 2>&1
	e=$EPOCHREALTIME
	echo $(( ${e/[.,]/} - ${s/[.,]/} ))
}
# Microseconds BATCH runs of CMD took, one after the other.
batch() {
	local i
	for ((i = 0; i < BATCH; i++)); do "$@" >/dev/null 2>&1; done
}
n() { "$nastune" --datadir "$top" -c "$top/profiles/demo.conf" --root "$1" apply --no-reload "${@:2}"; }
for r in same full{1..5}; do mkdir -p "$tmp/$r"/srv/{media,tm,public,archive}; done
n "$tmp/same" >/dev/null 2>&1 || { echo "apply: the first apply into $tmp/same failed"; exit 1; }
n "$tmp/same" --if-changed 2>&1 | grep -q 'nothing to do' ||
	{ echo "apply: --if-changed did not find nothing to do"; exit 1; }
# Each pair in both orders by turns, so that neither side always runs second.
for i in $(seq "$PAIRS"); do
	if ((i % 2)); then
		v=$(timeit batch "$nastune" --version)
		n=$(timeit batch n "$tmp/same" --if-changed)
	else
		n=$(timeit batch n "$tmp/same" --if-changed)
		v=$(timeit batch "$nastune" --version)
	fi
	echo "$v $n"
done >"$tmp/pairs"
bare=$(awk -v b="$BATCH" '{print $1 / b}' "$tmp/pairs" | median)
noop=$(awk -v b="$BATCH" '{print $2 / b}' "$tmp/pairs" | median)
read -r _ ratio lo hi <<<"$(awk '{print $2 / $1}' "$tmp/pairs" | sort -g | interval 0.025)"
full=$(for i in $(seq 5); do timeit n "$tmp/full$i"; done | median)
ok=$(awk -v m="$ratio" -v lo="$lo" -v l="$LIMIT" 'BEGIN {
	if (lo > l) print "OVER"; else if (m <= l) print "met"; else print "not shown over" }')
printf 'apply --if-changed, nothing changed: median %.1f ms; bare nastune --version %.1f ms; ratio %.2f (median of %d pairs of %d runs each, 95%% interval %.2f-%.2f; target <= %s: %s); full apply into a fresh root %.1f ms\n' \
	"$(awk "BEGIN{print $noop/1000}")" "$(awk "BEGIN{print $bare/1000}")" "$ratio" "$PAIRS" "$BATCH" \
	"$lo" "$hi" "$LIMIT" "$ok" "$(awk "BEGIN{print $full/1000}")"
[[ $ok != OVER ]] || { printf 'apply: FAILED: the no-op is %.2fx a bare start (95%% interval %.2f-%.2f, wholly above the limit %sx)\n' "$ratio" "$lo" "$hi" "$LIMIT"; exit 1; }
