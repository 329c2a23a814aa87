#!/usr/bin/env bash
# The hardware fingerprint ignores what changes on an ordinary boot: a link that
# renegotiated or went down, a USB stick or DVD left in at boot. Alone, such a change leaves
# `apply --if-changed`, `status` and `tune --if-changed` at "unchanged"; a real change (a disk's
# firmware) still counts. /sys/class/net and /sys/block are replaced by tmpfs trees in a
# private mount namespace (and an empty network namespace, so that a tune which wrongly goes
# ahead reaches no server), so it needs root (CI runs it as root).
. "$(dirname "$0")/lib.sh"
plan 9
if [ "$(id -u)" != 0 ] || ! unshare -m -n true 2>/dev/null; then
	for i in $(seq 9); do echo "ok $i # SKIP needs root and unshare -m -n"; done
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
r=$tmp/root
mkdir -p "$r/srv/data" "$r/etc/samba"
cat >"$tmp/n.conf" <<CONF
shares = ( { name = "Data"; path = "/srv/data"; guest = true; } );
protocols = { nfs = { enabled = false; }; afp = { enabled = false; }; };
services = { backend = "pidfile"; smb = { pidfile = "/run/fake-smbd.pid"; }; mdns = { backend = "none"; }; };
CONF

# The steps run in one namespace; each prints "STEP rc" and its output to $tmp/log.
cat >"$tmp/steps.sh" <<'STEPS'
set -u
sysfs() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" >"$1"; }
mount -t tmpfs none /sys/class/net && mount -t tmpfs none /sys/block || exit 3
sysfs /sys/class/net/eth0/speed 1000
sysfs /sys/class/net/eth0/operstate up
sysfs /sys/block/sda/device/model "WDC WD40EFRX"
sysfs /sys/block/sda/device/rev 82.00A82
sysfs /sys/block/sda/queue/rotational 1
sysfs /sys/block/sda/removable 0
nt() { "$NASTUNE" --datadir "$TOP" --root "$R" -c "$CONF" "$@" >"$T/out.$1.$N" 2>&1; echo "$N $?" >>"$T/rcs"; N=$((N + 1)); }
N=0
nt apply
"$NASTUNE" --datadir "$TOP" --root "$R" -c "$CONF" --json status >"$T/status0.json" 2>/dev/null
# A tune that finished with this fingerprint, as `tune` records it.
hash=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hardware"]["hash"])' "$T/status0.json")
sqlite3 "$R/var/lib/nastune/state.db" \
	"INSERT INTO tune_results (created, gen, hw_hash, json) VALUES ('2026-01-01T00:00:00Z', 1, '$hash', '{\"status\":\"done\"}')"
# An ordinary boot: the switch port renegotiated, eth0 at 100; a stick and a DVD left in.
sysfs /sys/class/net/eth0/speed 100
sysfs /sys/class/net/eth0/operstate down
sysfs /sys/block/sdb/device/model "Cruzer Blade"
sysfs /sys/block/sdb/queue/rotational 0
sysfs /sys/block/sdb/removable 1
sysfs /sys/block/sr0/device/model DVD-RW
sysfs /sys/block/sr0/removable 1
nt apply --if-changed
"$NASTUNE" --datadir "$TOP" --root "$R" -c "$CONF" --json status >"$T/status1.json" 2>/dev/null
nt tune --if-changed
# A real change: the disk's firmware.
sysfs /sys/block/sda/device/rev 82.00A83
"$NASTUNE" --datadir "$TOP" --root "$R" -c "$CONF" --json status >"$T/status2.json" 2>/dev/null
nt apply --if-changed
STEPS
NASTUNE=$NASTUNE TOP=$top R=$r CONF=$tmp/n.conf T=$tmp unshare -m -n --propagation private bash "$tmp/steps.sh"
is "$?" 0 "the fake /sys trees are mounted in a private namespace"
rc_of() { awk -v n="$1" '$1 == n { print $2 }' "$tmp/rcs"; }
is "$(rc_of 0)" 0 "apply records generation 1 with eth0 at 1000 Mb/s and one disk"
grep -q "unchanged since generation 1" "$tmp/out.apply.1"
ok $? "link at 100 Mb/s and down, a USB stick and a DVD: apply --if-changed sees nothing changed"
[ "$(rc_of 1)" = 0 ] || sed 's/^/# /' "$tmp/out.apply.1"
st() { python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["hardware"]; print(h["retune_due"], repr(h["changed_since_apply"]))' "$1"; }
is "$(st "$tmp/status1.json")" "False ''" "status: unchanged, no re-tune due"
python3 -c 'import json,sys; a,b=(json.load(open(f))["hardware"] for f in sys.argv[1:]); sys.exit(0 if a["hash"]==b["hash"] and a["text"]==b["text"] and "speed" not in a["text"] and "sdb" not in b["text"] else 1)' \
	"$tmp/status0.json" "$tmp/status1.json"
ok $? "the fingerprint (hash and text) is the same, without speed or removable media"
grep -q "nothing to do: the hardware is unchanged since tune" "$tmp/out.tune.2"
ok $? "tune --if-changed: nothing to do" ; [ "$(rc_of 2)" = 0 ] || sed 's/^/# /' "$tmp/out.tune.2"
is "$(rc_of 2)" 0 "... and exits 0"
is "$(st "$tmp/status2.json")" "True '~ disk sda: fw=82.00A82 -> fw=82.00A83\\n'" \
	"a new disk firmware is a change: status says a re-tune is due"
! grep -q "unchanged since generation" "$tmp/out.apply.3"
ok $? "... and apply --if-changed applies again"
