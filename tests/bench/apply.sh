#!/usr/bin/env bash
# Apply benchmark: `apply --if-changed` with nothing changed (the postinst path: every package
# install runs it) against a bare `nastune --version`, the same binary's start-up and nothing
# else, run alternately PAIRS times (default 31) in one window; the ratio of the medians must
# stay <= 1.5 (exit 1 when above). A full apply into a fresh root is printed beside it.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
nastune=${NASTUNE:-$top/build/nastune}
PAIRS=${BENCH_APPLY_PAIRS:-31}
LIMIT=1.5
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timeit() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
n() { "$nastune" --datadir "$top" -c "$top/profiles/demo.conf" --root "$1" apply --no-reload "${@:2}"; }
for r in same full{1..5}; do mkdir -p "$tmp/$r"/srv/{media,tm,public,archive}; done
n "$tmp/same" >/dev/null 2>&1 || { echo "apply: the first apply into $tmp/same failed"; exit 1; }
n "$tmp/same" --if-changed 2>&1 | grep -q 'nothing to do' ||
	{ echo "apply: --if-changed did not find nothing to do"; exit 1; }
for i in $(seq "$PAIRS"); do
	echo "v $(timeit "$nastune" --version)"
	echo "n $(timeit n "$tmp/same" --if-changed)"
done >"$tmp/pairs"
bare=$(awk '$1 == "v" {print $2}' "$tmp/pairs" | median)
noop=$(awk '$1 == "n" {print $2}' "$tmp/pairs" | median)
full=$(for i in $(seq 5); do timeit n "$tmp/full$i"; done | median)
ratio=$(awk "BEGIN{printf \"%.2f\", $noop / $bare}")
ok=$(awk "BEGIN{print ($ratio <= $LIMIT) ? \"met\" : \"MISSED\"}")
printf 'apply --if-changed, nothing changed: median %.1f ms; bare nastune --version %.1f ms; ratio %s (%d alternating pairs; target <= %s: %s); full apply into a fresh root %.1f ms\n' \
	"$(awk "BEGIN{print $noop/1000}")" "$(awk "BEGIN{print $bare/1000}")" "$ratio" "$PAIRS" \
	"$LIMIT" "$ok" "$(awk "BEGIN{print $full/1000}")"
[[ $ok = met ]] || { echo "apply: FAILED: the no-op is ${ratio}x a bare start (limit ${LIMIT}x)"; exit 1; }
