#!/usr/bin/env bash
# Apply benchmark: median wall time of `apply --if-changed` with nothing changed for the demo
# config (target under 20 ms), beside the median of a full apply into a fresh root (the
# in-run reference), over 11 runs each.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
nastune=${NASTUNE:-$top/build/nastune}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timeit() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
n() { "$nastune" --datadir "$top" -c "$top/profiles/demo.conf" --root "$1" apply --no-reload "${@:2}"; }
full=$(for i in $(seq 11); do timeit n "$tmp/full$i"; done | median)
n "$tmp/same" >/dev/null 2>&1
noop=$(for i in $(seq 11); do timeit n "$tmp/same" --if-changed; done | median)
printf 'apply --if-changed, nothing changed: median %.1f ms (target < 20 ms: %s); full apply into a fresh root: median %.1f ms; ratio %.2f\n' \
	"$(awk "BEGIN{print $noop/1000}")" "$([ "$noop" -lt 20000 ] && echo met || echo MISSED)" \
	"$(awk "BEGIN{print $full/1000}")" "$(awk "BEGIN{print $noop/$full}")"
