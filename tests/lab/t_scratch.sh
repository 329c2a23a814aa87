#!/bin/bash
# Over SMB, logged in as the owner of the files, the benchmark removes only what it
# made. alice's private directory (0700), renamed by another share user to a stale-looking
# scratch name (this host, a dead pid), survives `bench` and `tune`, on a plain directory and
# on a mergerfs pool (FUSE) shared over SMB; a tune's kept scratch directory swapped for a
# symlink to a sibling directory between calls (at a stop point of nastune's, so the swap
# comes every time) changes nothing outside the benchmark's own files (once, that sibling
# was emptied).
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 8

MEDIA=$SROOT/srv/media
CONF=$SROOT/etc/nastune/nastune.conf
CR=$SROOT/etc/nastune/scratch.creds
POOL=$SROOT/srv/pool
cleanup() {
	on server fusermount -u "$POOL" 2>/dev/null
	rm -rf "$MEDIA"/.nastune-bench-* "$MEDIA/victim" "$MEDIA/kept.away" "$CR" "$POOL" \
		"$SROOT/srv/pb1" "$SROOT/srv/pb2"
	"$LAB" apply "$DEMO" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
printf 'username = alice\npassword = %s\n' "$(password alice)" >"$CR"
chmod 600 "$CR"
cp "$DEMO" "$CONF"
dead=$(sh -c 'echo $$')
host=$(on server hostname | tr -c 'A-Za-z0-9.\n-' '_')
stale=".nastune-bench-$host-$dead-1-0123456789abcdef"
# alice's private directory, renamed (by bob, who may rename in Media) to the stale name.
mkdir -m 0700 "$MEDIA/diary"
echo "dear diary" >"$MEDIA/diary/letter"
chown -R 29001:29000 "$MEDIA/diary"
mv "$MEDIA/diary" "$MEDIA/$stale"
survives() { [[ $(cat "$MEDIA/$stale/letter" 2>/dev/null) = "dear diary" ]]; }

nts bench --target "smb://alice@127.0.0.1/Media" --credentials "$CR" --workload seq-write \
	--size 1M --repeat 1 --warmup 0 --cache hot --no-baseline
[[ $rc = 0 ]] && survives
ok $? "bench over SMB as alice: her private directory renamed to a stale scratch name survives" "$(both)"
nts --json tune --dry-run --knobs smb.use_sendfile --size 8M --repeat 8 --credentials "$CR"
[[ $rc = 0 ]] && survives
ok $? "tune over SMB as alice: it survives too" "$(both)"

# --- the kept directory swapped for a link between calls
mkdir -p "$MEDIA/victim/sub"
for f in a b sub/c; do echo "precious $f" >"$MEDIA/victim/$f"; done
chown -R 29001:29000 "$MEDIA/victim"
before=$(cd "$MEDIA/victim" && find . -printf '%p %s\n' | sort; cat a b sub/c)
# The tune stops itself (NASTUNE_DEBUG_STOP=kept-scratch) at the start of each call, just
# before it checks the kept directory; the first time that directory holds seq-read's file
# alone, it and a link to the sibling trade places in one rename (RENAME_EXCHANGE: an mv and
# an ln once left a moment with no directory, where the tune made a new one), and the tune
# goes on.
swap() {
	python3 -c 'import ctypes,os,sys
os.symlink("victim", sys.argv[2])
if ctypes.CDLL(None, use_errno=True).renameat2(-100, sys.argv[2].encode(), -100, sys.argv[1].encode(), 2):
	os.unlink(sys.argv[2]); sys.exit(1)' "$1" "$MEDIA/kept.away"
}
watch() { # PIDFILE
	local pid d i
	for ((i = 0; i < 6000; i++)); do
		pid=$(cat "$1" 2>/dev/null) && [[ -n $pid ]] && break
		sleep 0.01
	done
	while [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; do
		if [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != T ]]; then
			sleep 0.01
			continue
		fi
		if [[ ! -s $WORK/swapped ]]; then
			for d in "$MEDIA"/.nastune-bench-"$host"-*-tune-*; do
				[[ -d $d && ! -L $d && $(ls -A "$d") = kept-seq-read.dat ]] || continue
				swap "$d" && echo "swapped $d" >"$WORK/swapped"
			done
		fi
		kill -CONT "$pid"
		sleep 0.01
	done
}
rm -f "$WORK/swapped" "$WORK/pid"
(
	"$LAB" exec server env NASTUNE_DEBUG_STOP=kept-scratch sh -c 'echo $$ >"$1"; shift; exec "$@"' \
		sh "$WORK/pid" "$NASTUNE" --root "$SROOT" -c "$SROOT/etc/nastune/nastune.conf" --json \
		tune --dry-run --knobs smb.use_sendfile,smb.aio_read_size --size 8M --repeat 16 \
		--credentials "$CR" >"$WORK/out" 2>"$WORK/err" 7>&-
	echo $? >"$WORK/rc"
) &
tp=$!
watch "$WORK/pid"
wait "$tp"
rc=$(<"$WORK/rc") out=$(<"$WORK/out") err=$(<"$WORK/err")
after=$(cd "$MEDIA/victim" && find . -printf '%p %s\n' | sort; cat a b sub/c)
[[ -s $WORK/swapped ]]
ok $? "the kept directory was swapped for a link to a sibling as the next call began" "$(both)"
[[ $after = "$before" ]]
ok $? "... and nothing in the sibling changed" "$(diff <(echo "$before") <(echo "$after"); both)"
grep -q "no longer the scratch directory made there" <<<"$err"
ok $? "... the tune says the kept directory was replaced and left alone" "$(both)"
survives
ok $? "... and alice's private directory is still there" "$(ls -la "$MEDIA")"

# --- a mergerfs pool (the usual pooling on OMV boxes) shared over SMB
mkdir -p "$SROOT/srv/pb1" "$SROOT/srv/pb2" "$POOL"
chown 0:29000 "$SROOT/srv/pb1" "$SROOT/srv/pb2" "$POOL"
chmod 2775 "$SROOT/srv/pb1" "$SROOT/srv/pb2" "$POOL"
mfs=$(on server mergerfs -o allow_other,use_ino,category.create=ff "$SROOT/srv/pb1:$SROOT/srv/pb2" "$POOL" 2>&1)
sed 's|^shares = (|shares = (\n  { name = "Pool"; path = "/srv/pool"; protocols = ["smb"]; valid_users = ["alice"]; },|' \
	"$DEMO" >"$CONF"
nts apply
pool=$?
mkdir -m 0700 "$SROOT/srv/pb1/diary"
echo "dear diary" >"$SROOT/srv/pb1/diary/letter"
chown -R 29001:29000 "$SROOT/srv/pb1/diary"
mv "$SROOT/srv/pb1/diary" "$SROOT/srv/pb1/$stale"
nts --json tune --dry-run --knobs smb.use_sendfile --size 8M --repeat 8 --credentials "$CR"
[[ $pool = 0 && $rc = 0 ]] && j_pool=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(" ".join(d.get("targets", [])))' "$out" 2>/dev/null) &&
	grep -q "smb://127.0.0.1/Pool" <<<"$j_pool"
ok $? "tune over SMB as alice measures the mergerfs pool share (Pool)" "$mfs$(both)"
[[ $(cat "$SROOT/srv/pb1/$stale/letter" 2>/dev/null) = "dear diary" ]]
ok $? "... and her private directory renamed to a stale scratch name in the pool survives" "$(ls -la "$SROOT/srv/pb1"; both)"
done_testing
