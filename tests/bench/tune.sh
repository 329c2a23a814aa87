#!/usr/bin/env bash
# Tune decision quality (issue 9): on a knob subset with a planted bad value (SMB encryption
# required) and neutral ones, in a private lab, `nastune tune` (coordinate descent) against
# `nastune tune --exhaustive` (every combination). Prints the tuned configuration's score
# against the exhaustive best (target >= 0.95) and the tune's time against the exhaustive
# time (target <= 0.30). Both scores come from the same run of measurements of each tune.
# Root only. Env: KNOBS, SIZE (32M), REPEAT (5).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export NASTUNE=${NASTUNE:-$top/build/nastune}
export NASTUNE_LAB_PREFIX=${NASTUNE_TUNE_LAB_PREFIX:-ntuneb$$-}
export NASTUNE_LAB_STATE=${NASTUNE_TUNE_LAB_STATE:-/var/tmp/nastune-lab-tunebench.$$}
LAB=$top/tests/lab/lab
KNOBS=${KNOBS:-smb.smb_encrypt,smb.server_signing,smb.use_sendfile}
SIZE=${SIZE:-32M}
REPEAT=${REPEAT:-5}
[[ $(id -u) = 0 ]] || { echo "tune bench: needs root (the lab)"; exit 1; }
cleanup() { [[ ${NASTUNE_TUNE_LAB_KEEP:-0} = 1 ]] || "$LAB" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
"$LAB" up --clients 1 >/dev/null 2>&1 || { echo "tune bench: lab up failed"; exit 1; }
SROOT=$("$LAB" root server)
CONF=$SROOT/etc/nastune/nastune.conf
cp "$top/profiles/demo.conf" "$CONF"
printf 'username = alice\npassword = %s\n' "$(grep '^alice:' "$NASTUNE_LAB_STATE/users" | cut -d: -f2-)" >"$SROOT/etc/nastune/creds"
chmod 600 "$SROOT/etc/nastune/creds"
nt() { "$LAB" exec server "$NASTUNE" --root "$SROOT" -c "$CONF" "$@"; }
plant() {
	printf 'knobs = { smb = { smb_encrypt = "required"; server_signing = "required"; }; };\n' \
		>"$SROOT/etc/nastune/tuned.conf"
	nt apply >/dev/null 2>&1
}
common=(--knobs "$KNOBS" --size "$SIZE" --repeat "$REPEAT" --budget 1h --goal throughput
	--credentials "$SROOT/etc/nastune/creds")
plant
t0=$(date +%s.%N)
nt --json tune --dry-run "${common[@]}" >/tmp/tune-bench-desc.$$ 2>/dev/null
t1=$(date +%s.%N)
plant
nt --json tune --dry-run --exhaustive "${common[@]}" >/tmp/tune-bench-grid.$$ 2>/dev/null
t2=$(date +%s.%N)
python3 - /tmp/tune-bench-desc.$$ /tmp/tune-bench-grid.$$ "$t0" "$t1" "$t2" <<'PY'
import json, sys
desc, grid = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
t0, t1, t2 = map(float, sys.argv[3:6])
tuned = desc["after"]["median"]
best = max(g["median"] for g in grid["grid"])
chosen = {k["name"]: k["after"] for k in desc["knobs"] if k["applied"]}
print("tune-quality: descent chose %s, score %.1f; exhaustive best %.1f of %d combinations; "
      "ratio %.2f (target >= 0.95)" % (chosen or "no change", tuned, best, len(grid["grid"]), tuned / best))
print("tune-time: descent %.0fs, exhaustive %.0fs; ratio %.2f (target <= 0.30)" % (t1 - t0, t2 - t1, (t1 - t0) / (t2 - t1)))
PY
rm -f /tmp/tune-bench-desc.$$ /tmp/tune-bench-grid.$$
