#!/bin/bash
# smb.io_uring in the lab: tune tries it like any knob (a dry run over that knob alone) where
# this host's smbd and kernel can run io_uring, and applied, smbd serves the share through it
# (an smbd holds an io_uring descriptor during a transfer); where they cannot, tune leaves it
# with the reason. Short: 16 MiB files, 8 pairs (the fewest tune takes).
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 3

cleanup() { rm -f "$SROOT/etc/nastune/tuned.conf"; "$LAB" apply "$DEMO" >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT
CONF=$SROOT/etc/nastune/nastune.conf
CR=$SROOT/etc/nastune/tune.creds
printf 'username = alice\npassword = %s\n' "$(password alice)" >"$CR"
chmod 600 "$CR"
NTS_TIMEOUT=600
# Whether this host can run it, as nastune knobs (in the server) sees it.
nts --json knobs smb.io_uring
can=$(python3 -c 'import json,sys; print(int(json.load(sys.stdin)["knobs"][0]["tune"]["allowed"]))' <<<"$out")

nts --json tune --dry-run --knobs smb.io_uring --size 16M --repeat 8 --credentials "$CR"
k=$(python3 -c 'import json,sys; print(json.dumps([x for x in json.load(sys.stdin)["knobs"] if x["name"] == "smb.io_uring"][0]))' <<<"$out")
if [[ $can = 1 ]]; then
	[[ $rc = 0 ]] && python3 -c 'import json,sys; k=json.loads(sys.argv[1]); sys.exit(0 if k["tried"] else 1)' "$k"
	ok $? "tune tried smb.io_uring (this host runs it): $k" "$(both)"
else
	[[ $rc = 0 ]] && grep -q "cannot run it" <<<"$k"
	ok $? "tune left smb.io_uring with the reason this host cannot run it: $k" "$(both)"
fi

# Applied (where it can run): every vfs objects list ends with io_uring, and an smbd serving a
# transfer holds an io_uring descriptor.
if [[ $can = 1 ]]; then
	printf 'knobs = { smb = { io_uring = "yes"; }; };\n' >"$SROOT/etc/nastune/tuned.conf"
	nts apply
	[[ $rc = 0 ]] && ! grep 'vfs objects' "$SROOT/etc/samba/smb.conf" | grep -vq ' io_uring$'
	ok $? "applied: io_uring last in every vfs objects list, the shares proven served" "$(both)"
	head -c $((64 << 20)) /dev/urandom >"$SROOT/srv/media/io_uring.bin"
	on client1 smbclient -U "alice%$(password alice)" "//$SERVER/Media" \
		-c 'get io_uring.bin /dev/null; get io_uring.bin /dev/null; get io_uring.bin /dev/null' >/dev/null 2>&1 &
	seen=0
	for _ in $(seq 40); do
		for p in $(pgrep -x smbd); do
			grep -q "$SROOT/etc/samba/smb.conf" "/proc/$p/cmdline" 2>/dev/null || continue
			ls -l "/proc/$p/fd" 2>/dev/null | grep -q io_uring && seen=1
		done
		[[ $seen = 1 ]] && break
		sleep 0.05
	done
	wait
	rm -f "$SROOT/srv/media/io_uring.bin"
	ok $((1 - seen)) "an smbd of this lab holds an io_uring descriptor while it serves a read"
else
	ok 0 "# SKIP applied: this host cannot run io_uring"
	ok 0 "# SKIP io_uring descriptor: this host cannot run io_uring"
fi
done_testing
