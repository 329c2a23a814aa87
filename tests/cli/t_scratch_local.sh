#!/usr/bin/env bash
# The benchmark removes only what it made, known by what it recorded (identity),
# never by a name. A private directory renamed by a share user to a stale-looking scratch name
# (this host, a dead pid) survives `bench` on a plain directory (owned by root or by another
# user) and on a mergerfs pool (FUSE, where the local driver once skipped its ownership check);
# a scratch directory a crashed run recorded is still cleaned up. Needs root (chown, FUSE).
. "$(dirname "$0")/lib.sh"
plan 6
tmp=$(mktemp -d /tmp/nastune-scratch.XXXXXX)
root=$tmp/root
cleanup() {
	mountpoint -q "$tmp/pool" && { fusermount -u "$tmp/pool" 2>/dev/null || umount -l "$tmp/pool"; }
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$root" "$tmp/share" "$tmp/b1" "$tmp/b2" "$tmp/pool"
dead=$(sh -c 'echo $$')
host=$(hostname | tr -c 'A-Za-z0-9.\n-' '_')
stale() { echo ".nastune-bench-$host-$dead-$1-0123456789abcdef"; }
# private DIR NAME UID: a 0700 directory of UID with a letter in it, renamed by a share user to
# NAME at the root of DIR.
private() {
	mkdir -m 0700 "$1/diary.$3"
	echo "dear diary" >"$1/diary.$3/letter"
	chown -R "$3:$3" "$1/diary.$3"
	mv "$1/diary.$3" "$1/$2"
}
survives() { [ "$(cat "$1/$2/letter" 2>/dev/null)" = "dear diary" ]; }
quick=(--workload seq-write --size 1M --repeat 1 --warmup 0 --cache hot)

# --- a plain directory
private "$tmp/share" "$(stale 1)" 0
private "$tmp/share" "$(stale 2)" 65534
nt --root "$root" bench --target "file://$tmp/share" "${quick[@]}"
[ "$rc" = 0 ] && survives "$tmp/share" "$(stale 1)"
ok $? "root's private directory renamed to a stale scratch name survives bench" "$err"
survives "$tmp/share" "$(stale 2)"
ok $? "another user's private directory renamed so survives bench" "$err"

# --- a mergerfs pool
if mergerfs -o allow_other,use_ino,category.create=mfs "$tmp/b1:$tmp/b2" "$tmp/pool" 2>"$tmp/mfs.err"; then
	private "$tmp/pool" "$(stale 3)" 65534
	nt --root "$root" bench --target "file://$tmp/pool" "${quick[@]}"
	[ "$rc" = 0 ] && survives "$tmp/pool" "$(stale 3)"
	ok $? "on a mergerfs pool (FUSE) another user's private directory so renamed survives bench" "$err"
	[ -z "$(find "$tmp/pool" -maxdepth 1 -name '.nastune-bench-*' ! -name "$(stale 3)")" ]
	ok $? "... and the benchmark's own scratch is gone from the pool" "$(ls -la "$tmp/pool")"
else
	ok 1 "mergerfs mounts a pool (tests/deps.sh installs mergerfs; /dev/fuse needed)" "$(cat "$tmp/mfs.err")"
	ok 1 "... (no pool)"
fi

# --- what a crashed run recorded is cleaned up; a record whose name now holds another
# directory is left alone and reported
mkdir -p "$tmp/crash"
nt --root "$root" bench --target "file://$tmp/crash" "${quick[@]}"
reg=$root/var/lib/nastune/scratch
[ -d "$reg" ] && [ "$(stat -c %a "$reg")" = 700 ] && [ -z "$(ls -A "$reg")" ]
ok $? "the scratch records live in a 0700 state directory, empty after a clean run" "$(ls -la "$reg" 2>&1)"
# A run killed mid-way leaves its scratch directory and its record.
"$NASTUNE" --datadir "$top" --root "$root" bench --target "file://$tmp/crash" \
	--workload small-files --files 20000 --size 1M --repeat 50 --warmup 0 --cache hot >/dev/null 2>&1 &
bp=$!
# Up to 30 s: a loaded machine can take seconds to start the run, record it and make the
# directory (the record comes first: killed between the two, there is nothing to remove).
for _ in $(seq 600); do
	[ -n "$(ls -A "$reg" 2>/dev/null)" ] &&
		[ -n "$(find "$tmp/crash" -maxdepth 1 -name '.nastune-bench-*')" ] && break
	sleep 0.05
done
kill -KILL "$bp"; wait "$bp" 2>/dev/null
left=$(find "$tmp/crash" -maxdepth 1 -name '.nastune-bench-*' | wc -l)
nt --root "$root" bench --target "file://$tmp/crash" "${quick[@]}"
[ "$left" -ge 1 ] && [ "$rc" = 0 ] && [ -z "$(find "$tmp/crash" -maxdepth 1 -name '.nastune-bench-*')" ] &&
	[ -z "$(ls -A "$reg")" ]
ok $? "a killed run's recorded scratch directory ($left) is removed by the next run" "$err"
