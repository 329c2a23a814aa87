#!/bin/bash
# A share user swaps the benchmark's scratch directory during its removal over SMB. alice
# benchmarks Media (root:nasusers 2775) over SMB; bob, who may rename anything at its root,
# puts alice's private directory in the scratch directory's place through his own SMB
# session at the exact moment the removal lists it (nastune stops itself there:
# NASTUNE_DEBUG_STOP=smb-list, and the watcher swaps and continues it). Every one of alice's
# files survives and the bench says the directory changed under it.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
RUNS=${RACE_RUNS:-3}
plan $((RUNS * 4))

MEDIA=$SROOT/srv/media
CR=$SROOT/etc/nastune/race.creds
cleanup() {
	rm -rf "$MEDIA"/.nastune-bench-* "$MEDIA/diary" "$MEDIA/parked" "$CR"
	rm -rf "$WORK"
}
trap cleanup EXIT
printf 'username = alice\npassword = %s\n' "$(password alice)" >"$CR"
chmod 600 "$CR"

# alice's diary: the same layout as anything a removal could meet, and private (0700).
diary() {
	rm -rf "$MEDIA/diary"
	mkdir -p "$MEDIA/diary/sub"
	echo "dear diary" >"$MEDIA/diary/letter"
	echo "photo" >"$MEDIA/diary/sub/photo"
	chown -R 29001:29000 "$MEDIA/diary"
	chmod 0700 "$MEDIA/diary" "$MEDIA/diary/sub"
}
# Where the diary is now (whatever name it has at Media's root), with its files listed.
diary_state() {
	local d
	for d in "$MEDIA"/* "$MEDIA"/.nastune-bench-*; do
		[[ -f $d/letter ]] || continue
		echo "$(cat "$d/letter") / $(cat "$d/sub/photo" 2>/dev/null)"
	done
}

# The watcher: at each stop, swap once when alice's scratch directory is at Media's root.
watch() { # PIDFILE
	local pid st d i
	for ((i = 0; i < 6000; i++)); do
		pid=$(cat "$1" 2>/dev/null)
		[[ -n $pid ]] && break
		sleep 0.01
	done
	[[ -n $pid ]] || return 1
	while kill -0 "$pid" 2>/dev/null; do
		st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
		if [[ $st != T ]]; then
			sleep 0.01
			continue
		fi
		if [[ ! -s $WORK/swapped ]]; then
			for d in "$MEDIA"/.nastune-bench-*; do
				[[ -d $d && $(stat -c %u "$d") = 29001 ]] || continue
				d=${d##*/}
				if on server smbclient //127.0.0.1/Media -U "bob%$(password bob)" \
					-c "rename \"$d\" parked; rename diary \"$d\"" >"$WORK/smbclient" 2>&1 &&
					[[ -f $MEDIA/$d/letter ]]; then
					echo "$d" >"$WORK/swapped"
				fi
				break
			done
		fi
		kill -CONT "$pid"
		sleep 0.01
	done
}

for ((run = 1; run <= RUNS; run++)); do
	rm -rf "$MEDIA"/.nastune-bench-* "$MEDIA/parked" "$WORK/swapped" "$WORK/pid"
	diary
	before=$(diary_state)
	(
		"$LAB" exec server env NASTUNE_DEBUG_STOP=smb-list sh -c 'echo $$ >"$1"; shift; exec "$@"' \
			sh "$WORK/pid" "$NASTUNE" --root "$SROOT" -c "$SROOT/etc/nastune/nastune.conf" \
			bench --target "smb://alice@127.0.0.1/Media" --credentials "$CR" \
			--workload seq-write --size 1M --repeat 1 --warmup 0 --cache hot --no-baseline \
			>"$WORK/out" 2>"$WORK/err" 7>&-
		echo $? >"$WORK/rc"
	) &
	bp=$!
	watch "$WORK/pid"
	wait "$bp"
	rc=$(<"$WORK/rc") out=$(<"$WORK/out") err=$(<"$WORK/err")
	after=$(diary_state)
	[[ -s $WORK/swapped ]]
	ok $? "run $run: bob swapped alice's diary in as the scratch directory was listed for removal" \
		"$(cat "$WORK/smbclient" 2>/dev/null; both)"
	[[ -n $before && $after = "$before" ]]
	ok $? "run $run: ... every file of the diary survives" "before: $before
after: $after
$(ls -laR "$MEDIA" | head -40)"
	[[ $rc != 0 ]] && grep -q "while it was being removed" <<<"$err"
	ok $? "run $run: ... and the bench says the directory changed during the removal" "$(both)"
	[[ $(find "$MEDIA" -maxdepth 1 -name 'parked' -printf x) = x ]]
	ok $? "run $run: ... the scratch directory bob moved away is still his to see (nothing else removed)" \
		"$(ls -la "$MEDIA")"
done
done_testing
