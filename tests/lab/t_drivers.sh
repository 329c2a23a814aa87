#!/bin/bash
# The benchmark drivers (smb, nfs, afp) from client1 against the lab server, through
# build/tests/drvtool (every vtable call, without the engine) and the single-driver builds
# (drvtool-nfs, -smb, -afp): data integrity, metadata
# calls, server-side copy, errors that name their cause, and a server killed mid-transfer.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
DRV=${DRVTOOL:-$TOPDIR/build/tests/drvtool}
if [[ ! -x $DRV ]]; then
	echo "Bail out! $DRV is missing: make build/tests/drvtool"
	exit 1
fi
lab_ready
plan 68

PA=$(password alice)
printf 'username = alice\npassword = %s\n' "$PA" >"$WORK/alice.cred"
printf 'username = alice\npassword = not-%s\n' "$PA" >"$WORK/wrong.cred"
printf 'username = bob\npassword = %s\n' "$(password bob)" >"$WORK/bob.cred"
chmod 600 "$WORK"/*.cred
ALICE_IDS="uid=29001&gid=29000"	# alice and nasusers on the server (tests/lab/lab)
S=t_drv.$$			# scratch directory on every share; removed at the end
drv() { on client1 timeout 120 "$DRV" "$@"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
src=$(randfile src.bin 3000000)

# A file left behind by a failed run of this test is removed from the server's side too
# (after the test: Ganesha caches directory entries).
cleanup_server() { rm -rf "$SROOT"/srv/{media,public,tm}/t_drv.* 2>/dev/null; }
trap 'cleanup_server; rm -rf "$WORK"' EXIT

# suite NAME URL [OPTS...]: every call through one driver on one writable share.
suite() {
	local name=$1 url=$2 out rc back
	shift 2
	local -a o=("$@")
	check "$name: mkdir $S/sub (nested)" drv "${o[@]}" "$url" mkdir "$S" &&
		drv "${o[@]}" "$url" mkdir "$S/sub" >/dev/null 2>&1
	out=$(drv "${o[@]}" "$url" put "$src" "$S/sub/f.bin" 2>&1) &&
		out+=$(drv "${o[@]}" "$url" get "$S/sub/f.bin" "$WORK/back.bin" 2>&1) &&
		[[ $(sha "$src") = $(sha "$WORK/back.bin") ]]
	ok $? "$name: write 3 MB and read it back identical (sha256)" "$out"
	rm -f "$WORK/back.bin"
	grep_out "$name: stat gives the size" '^file 3000000$' drv "${o[@]}" "$url" stat "$S/sub/f.bin"
	grep_out "$name: the listing shows it with its size" '^f\.bin	3000000$' \
		drv "${o[@]}" "$url" ls "$S/sub"
	out=$(drv "${o[@]}" "$url" mv "$S/sub/f.bin" "$S/g.bin" 2>&1) &&
		[[ $(drv "${o[@]}" "$url" stat "$S/sub/f.bin" 2>&1) = missing ]] &&
		out+=$(drv "${o[@]}" "$url" stat "$S/g.bin" 2>&1) && grep -q '^file 3000000$' <<<"$out"
	ok $? "$name: rename across directories (old name gone, new one there)" "$out"
	out=$(drv "${o[@]}" "$url" copy "$S/g.bin" "$S/copy.bin" 2>&1)
	rc=$?
	case $name in
	nfs*)
		grep -q 'no server-side copy' <<<"$out" && [[ $rc -eq 3 ]]
		ok $? "$name: copy says there is no server-side copy (libnfs 4.0 has no NFSv4.2 COPY)" "$out"
		out=$(stat -c '%a %u' "$SROOT/srv/media/$S" 2>&1)
		[[ $out =~ ^[0-7]?700\ 29001$ ]]	# the share's setgid bit may come along
		ok $? "$name: the directory it made is alice's alone (mode 700, uid 29001): no other user of the export can plant names in it" "$out"
		;;
	*)
		diag "$out"
		back=$WORK/copy.bin
		[[ $rc -eq 0 ]] && grep -qE 'server-side \((copychunk|FPCopyFile)\)' <<<"$out" &&
			out+=$(drv "${o[@]}" "$url" get "$S/copy.bin" "$back" 2>&1) &&
			[[ $(sha "$src") = $(sha "$back") ]]
		ok $? "$name: server-side copy, and the copy is identical" "$out"
		rm -f "$back"
		;;
	esac
	# Within 2% of what the server's filesystem says (a unit error is off by 2x or more).
	out=$(drv "${o[@]}" "$url" space 2>&1)
	want=$(df -B1 --output=avail "$SROOT/srv" | tail -n1 | tr -d ' ')
	got=$(sed -n 's/^\([0-9]*\) bytes free$/\1/p' <<<"$out")
	[[ -n $got ]] && awk -v g="$got" -v w="$want" 'BEGIN { exit !(g > 0.98 * w && g < 1.02 * w) }'
	ok $? "$name: free space as the server's filesystem has it ($got vs df $want)" "$out"
	refuse "$name: rmdir of a non-empty directory fails" drv "${o[@]}" "$url" rmdir "$S"
	out=$(drv "${o[@]}" "$url" seqwrite "$S/seq.bin" 64 2>&1) &&
		out+=$'\n'$(drv "${o[@]}" "$url" seqread "$S/seq.bin" 2>&1) &&
		grep -q '^seqread: 67108864 bytes' <<<"$out"
	ok $? "$name: seqwrite + seqread 64 MiB" "$out"
	diag "$out"
	mkdir -p "$WORK/m" "$WORK/mback"
	for i in 1 2 3; do head -c $((66000 + i)) /dev/urandom >"$WORK/m/f$i"; done
	out=$(drv "${o[@]}" "$url" mput "$WORK/m" "$S/m" 2>&1) &&
		grep -q '^mput: 3 files, 198006 bytes' <<<"$out" &&
		out+=$'\n'$(drv "${o[@]}" "$url" mget "$S/m" "$WORK/mback" 2>&1) &&
		grep -q '^mget: 3 files, 198006 bytes' <<<"$out" &&
		out+=$'\n'$(drv "${o[@]}" "$url" mstat "$S/m" 2>&1) &&
		grep -q '^mstat: 3 files, 198006 bytes' <<<"$out" &&
		diff -r "$WORK/m" "$WORK/mback" >/dev/null
	ok $? "$name: mput, mget and mstat of 3 small files (the driver benchmark's small work), identical back" "$out"
	for i in 1 2 3; do drv "${o[@]}" "$url" rm "$S/m/f$i" >/dev/null 2>&1; done
	drv "${o[@]}" "$url" rmdir "$S/m" >/dev/null 2>&1
	rm -rf "$WORK/m" "$WORK/mback"
	out=""
	for f in g.bin copy.bin seq.bin; do
		drv "${o[@]}" "$url" stat "$S/$f" >/dev/null 2>&1 || continue
		out+=$(drv "${o[@]}" "$url" rm "$S/$f" 2>&1) || break
	done
	out+=$(drv "${o[@]}" "$url" rmdir "$S/sub" 2>&1) &&
		out+=$(drv "${o[@]}" "$url" rmdir "$S" 2>&1) &&
		[[ $(drv "${o[@]}" "$url" stat "$S" 2>&1) = missing ]]
	ok $? "$name: delete files, rmdir, and the scratch directory is gone" "$out"
}

SMB=smb://alice@$SERVER/Media
NFS="nfs://$SERVER/srv/media?$ALICE_IDS"
AFPU=afp://alice@$SERVER/Media

suite smb "$SMB" --credentials "$WORK/alice.cred"
suite nfs "$NFS"
suite afp "$AFPU" --credentials "$WORK/alice.cred"

# The single-driver builds the driver benchmark times (drvtool-nfs...): only their own
# protocol's library linked, the same bytes back, and other schemes refused.
for p in nfs afp smb; do
	one=$TOPDIR/build/tests/drvtool-$p
	case $p in nfs) url=$NFS o=() lib=libnfs ;; afp) url=$AFPU o=(--credentials "$WORK/alice.cred") lib=libcrypto ;;
	smb) url=$SMB o=(--credentials "$WORK/alice.cred") lib=libc.so ;; esac	# dlopen()s it
	libs=$(ldd "$one" 2>&1)
	out=$(on client1 timeout 120 "$one" "${o[@]}" "$url" put "$src" "$S.one.$p" 2>&1) &&
		out+=$(on client1 timeout 120 "$one" "${o[@]}" "$url" get "$S.one.$p" "$WORK/one.bin" 2>&1) &&
		[[ $(sha "$src") = $(sha "$WORK/one.bin") ]] &&
		on client1 "$one" "${o[@]}" "$url" rm "$S.one.$p" >/dev/null 2>&1 &&
		grep -q "$lib" <<<"$libs" &&
		! grep -qE "libsmbclient|libnfs|libavahi|libnl|libconfig|libsqlite" <<<"$(grep -v "$lib" <<<"$libs")" &&
		! on client1 "$one" "file:///tmp" info >/dev/null 2>&1
	ok $? "drvtool-$p: a round trip with only $lib linked (smb: libsmbclient loaded at connect); other schemes refused" "$out"$'\n'"$libs"
done

# Guests on the public shares: a round trip each.
guest() {	# guest NAME URL
	local out
	out=$(drv "$2" put "$src" "$S.guest" 2>&1) &&
		out+=$(drv "$2" get "$S.guest" "$WORK/back.bin" 2>&1) &&
		cmp -s "$src" "$WORK/back.bin" && out+=$(drv "$2" rm "$S.guest" 2>&1)
	ok $? "$1: guest write, read back identical, delete" "$out"
	rm -f "$WORK/back.bin"
}
guest "smb Public" "smb://$SERVER/Public"
guest "nfs public (NFSv3, all_squash)" "nfs://$SERVER/srv/public"
guest "afp Public" "afp://$SERVER/Public"

# NFSv4: reads work through libnfs 4.0; writes do not (the driver must say why).
drv "$NFS" seqwrite "$S.v4" 8 >/dev/null 2>&1
V4="nfs://$SERVER/srv/media?version=4&$ALICE_IDS"
grep_out "nfs v4: stat of a file written over v3" '^file 8388608$' drv "$V4" stat "$S.v4"
grep_out "nfs v4: the listing shows it" "^$S\\.v4	8388608\$" drv "$V4" ls
grep_out "nfs v4: seqread 8 MiB" '^seqread: 8388608 bytes' drv "$V4" seqread "$S.v4"
out=$(drv "$V4" seqwrite "$S.v4w" 1 2>&1) && rc=0 || rc=$?
[[ $rc -ne 0 ]] && grep -q 'NFSv4.*libnfs 4.0 cannot send NFSv4 WRITEs.*NFSv3' <<<"$out"
ok $? "nfs v4: a write fails with a sentence naming libnfs 4.0 and the way out (v3)" "$out"
gap "$([[ $rc -eq 0 ]]; echo $?)" "NFSv4 writes through the nfs driver" "libnfs 4.0 cannot encode NFSv4 WRITE"
drv "$NFS" rm "$S.v4w" >/dev/null 2>&1
drv "$NFS" rm "$S.v4" >/dev/null 2>&1
v4dir() { drv "$V4" mkdir "$S.v4d" && drv "$V4" rmdir "$S.v4d"; }
check "nfs v4: a new directory and its removal" v4dir

# Errors: one sentence naming the cause, and a non-zero exit.
fails_with() {	# fails_with DESCRIPTION REGEX CMD...: CMD fails and says REGEX
	local desc=$1 re=$2 out rc
	shift 2
	out=$("$@" 2>&1) && rc=0 || rc=$?
	[[ $rc -ne 0 ]] && grep -qE -- "$re" <<<"$out"
	ok $? "$desc" "exit $rc: $out"
}
fails_with "smb: wrong password names the logon failure" \
	"$SERVER/Media: connect: logon failure for alice \(wrong password\?\)" \
	drv --credentials "$WORK/wrong.cred" "$SMB" ls
fails_with "afp: wrong password names the logon failure" \
	"$SERVER/Media: login: logon failure for alice \(wrong password\?\)" \
	drv --credentials "$WORK/wrong.cred" "$AFPU" ls
fails_with "smb: a missing share is named" "no share \"Nope\" on $SERVER" \
	drv --credentials "$WORK/alice.cred" "smb://alice@$SERVER/Nope" ls
fails_with "nfs: a missing export is named (v3)" "no export \"/srv/nope\" \(NFSv3\)" \
	drv "nfs://$SERVER/srv/nope" ls
fails_with "nfs: a missing export is named (v4)" "no export \"/srv/nope\" \(NFSv4\)" \
	drv "nfs://$SERVER/srv/nope?version=4" ls
fails_with "afp: a missing volume is named" "no volume \"Nope\" on $SERVER" \
	drv --credentials "$WORK/alice.cred" "afp://alice@$SERVER/Nope" ls
fails_with "smb: guest on a valid-users share is refused as such" \
	"access denied for guest" drv "smb://$SERVER/Media" ls
fails_with "smb: bob on TimeMachine (alice only) is refused" "access denied for bob" \
	drv --credentials "$WORK/bob.cred" "smb://$SERVER/TimeMachine" ls
fails_with "nfs: root is squashed on Media, and the sentence says what to do" \
	"permission denied for uid 0 .*uid=N" drv "nfs://$SERVER/srv/media" seqwrite "$S.root" 1
fails_with "nfs: the read-only Archive export refuses a write" "read-only" \
	drv "nfs://$SERVER/srv/archive" seqwrite "$S.ro" 1
fails_with "smb: the read-only Archive share refuses a write" "access denied|read-only" \
	drv "smb://$SERVER/Archive" seqwrite "$S.ro" 1
fails_with "missing file: stat says missing, exit 1" "^missing$" \
	drv --credentials "$WORK/alice.cred" "$SMB" stat "$S.none"
fails_with "a password in the URL is refused" "password in the URL" \
	drv "smb://alice:x@$SERVER/Media" ls

# A server that dies during a large write: a clear error, well within a bound, no hang.
# kill_during NAME KILLCMD URL [OPTS...]: starts a 4 GiB seqwrite, runs KILLCMD after 1 s.
kill_during() {
	local name=$1 killcmd=$2 url=$3 t0 t1 out rc
	shift 3
	t0=$(date +%s)
	on client1 timeout 150 "$DRV" "$@" "$url" seqwrite "$S.kill" 4096 >"$WORK/kill.out" 2>&1 &
	local pid=$!
	sleep 1.5
	eval "$killcmd"
	wait $pid
	rc=$?
	t1=$(date +%s)
	out=$(cat "$WORK/kill.out")
	[[ $rc -eq 1 ]] && grep -qiE 'closed the connection|reset|did not answer|timed out|broken pipe|connection|shut' <<<"$out"
	ok $? "$name: killed mid-write: exit 1 with a sentence on the connection" "exit $rc: $out"
	[[ $((t1 - t0)) -le 60 ]]
	ok $? "$name: ... within 60 s (took $((t1 - t0)) s)" "$out"
	diag "$name: $out"
	UP_OUT=$("$LAB" up 7>&- 2>&1)	# repairs whatever died
}
smbd_main=$(server_pid run/samba/smbd.pid)
before=$(pgrep -P "$smbd_main" | sort)
kill_smb_clients() {
	local p
	for p in $(pgrep -P "$smbd_main"); do
		grep -qx "$p" <<<"$before" || kill -9 "$p"
	done
}
kill_during smb kill_smb_clients "$SMB" --credentials "$WORK/alice.cred"
check "smb: the share works again after the kill" drv --credentials "$WORK/alice.cred" "$SMB" ls

# gone PID...: waits (up to 10 s) until the killed processes are reaped, so that `lab up`
# does not take a zombie for a live daemon.
gone() {
	local p i
	for p in "$@"; do
		for i in $(seq 100); do [[ -e /proc/$p ]] || break; sleep 0.1; done
	done
}
kill_ganesha() {
	local m
	m=$(server_pid run/ganesha/ganesha.pid)
	kill -9 "$m"
	gone "$m"
}
kill_during nfs kill_ganesha "$NFS"
ok=1
for _ in $(seq 20); do out=$(drv "$NFS" ls 2>&1) && { ok=0; break; }; sleep 1; done
ok $ok "nfs: the export works again after lab up restarted ganesha" "$UP_OUT"$'\n'"$out"

kill_afpd() {
	local m
	m=$(server_pid run/netatalk/afpd.pid)
	local kids
	kids=$(pgrep -P "$m")
	# shellcheck disable=SC2086 # a list of pids
	kill -9 $kids "$m"
	gone $kids "$m"
}
kill_during afp kill_afpd "$AFPU" --credentials "$WORK/alice.cred"
ok=1
for _ in $(seq 20); do out=$(drv --credentials "$WORK/alice.cred" "$AFPU" ls 2>&1) && { ok=0; break; }; sleep 1; done
ok $ok "afp: the volume works again after lab up restarted afpd" "$UP_OUT"$'\n'"$out"

# Leftovers of the killed writes are removed through the drivers themselves.
drv --credentials "$WORK/alice.cred" "$SMB" rm "$S.kill" >/dev/null 2>&1
drv "$NFS" rm "$S.kill" >/dev/null 2>&1
drv --credentials "$WORK/alice.cred" "$AFPU" rm "$S.kill" >/dev/null 2>&1
left=$(ls -d "$SROOT"/srv/{media,public,tm}/t_drv.* 2>/dev/null)
[[ -z $left ]]
ok $? "no files left behind on the shares" "$left"
done_testing
