#!/usr/bin/env bash
# Big directories over SMB: the metadata and big-dir workloads from client1 on a share of
# ENTRIES files, with Samba's defaults, with the large-directory recipe (smb.case_sensitive =
# yes, smb.name_case = lower: allowed for that share only) and with smb.fruit_metadata =
# netatalk. Prints each setting's medians and the ratio of a missing name's lookup, default
# over recipe. Not gated: the recipe changes what clients see, it is advice, not a target.
# Root only. Env: ENTRIES (20000), REPS (3). A private lab unless NASTUNE_LAB_PREFIX is set.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export NASTUNE=${NASTUNE:-$top/build/nastune}
export NASTUNE_LAB_PREFIX=${NASTUNE_LAB_PREFIX:-nbigd$$-}
export NASTUNE_LAB_STATE=${NASTUNE_LAB_STATE:-/var/tmp/nastune-lab-bigdir.$$}
LAB=$top/tests/lab/lab
ENTRIES=${ENTRIES:-20000}
REPS=${REPS:-3}
work=$(mktemp -d)

[[ $(id -u) = 0 ]] || { echo "bigdir bench: needs root (the lab)"; exit 1; }
cleanup() { "$LAB" apply "$top/profiles/demo.conf" >/dev/null 2>&1 || true
	rm -rf "$work" "${SROOT:-/nonexistent}/srv/big"
	[[ $NASTUNE_LAB_PREFIX != nbigd$$-* ]] || "$LAB" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
"$LAB" up --clients 1 >/dev/null 2>&1 || { echo "bigdir bench: lab up failed"; exit 1; }
SROOT=$("$LAB" root server)
S4=$("$LAB" addr server)

# conf KNOBS: demo.conf with a guest share Big that allows the semantics class, and KNOBS.
conf() {
	sed -e "s|^tuning = .*|tuning = { knobs = { smb = { $1 }; }; };|" \
		-e "s|^    comment = \"Read-only archive\"; }$|    comment = \"Read-only archive\"; },\n  { name = \"Big\"; path = \"/srv/big\"; protocols = [\"smb\"]; guest = true; allow = [\"semantics\"]; }|" \
		"$top/profiles/demo.conf"
}
# measure NAME KNOBS: prints "NAME metric median" lines for both workloads.
measure() {
	rm -rf "$SROOT/srv/big" && mkdir -m 1777 "$SROOT/srv/big"
	conf "$2" >"$work/$1.conf"
	"$LAB" apply "$work/$1.conf" >/dev/null 2>&1 || { echo "bigdir bench: apply $1 failed"; exit 1; }
	"$LAB" exec client1 "$NASTUNE" --root "$work/c1" --json bench --target "smb://$S4/Big" \
		--workload metadata,big-dir --entries "$ENTRIES" --repeat "$REPS" --warmup 0 \
		--cache hot --no-baseline >"$work/$1.json" 2>/dev/null 7>&- ||
		{ echo "bigdir bench: bench $1 failed"; exit 1; }
	python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(sys.argv[2], r["workload"] + "/" + r["metric"], r["unit"], "%.1f" % r["median"])
' "$work/$1.json" "$1" | tee -a "$work/all"
}
echo "uptime: $(uptime)"
measure default ""
measure recipe 'case_sensitive = "yes"; name_case = "lower";'
measure netatalk 'fruit_metadata = "netatalk";'
awk '$2 == "metadata/stat-miss-cold" { v[$1] = $4 }
	END { if (v["recipe"] > 0) printf "stat-miss-cold default/recipe: %.1fx (%d entries)\n", v["default"] / v["recipe"], '"$ENTRIES"' }' \
	"$work/all"
echo "uptime: $(uptime)"
