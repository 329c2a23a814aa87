#!/usr/bin/env bash
# Driver benchmark: nastune's smb, nfs and afp drivers (through build/tests/drvtool) against
# the reference clients on the same files in one run, from client1 to the lab server:
# smbclient put/get for SMB, nfs-cp for NFSv3, nothing for AFP (no working netatalk client
# tool exists, FIELD.md). Wall time of whole processes (connect included) for both sides,
# 256 MiB files, median of 3; reads are hot (the server's page cache holds the file).
# Prints each ratio driver MB/s / reference MB/s; the target is >= 1.0.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/../lab/lib.sh"
DRV=${DRVTOOL:-$TOPDIR/build/tests/drvtool}
[[ -x $DRV ]] || { echo "drivers: $DRV missing (make build/tests/drvtool)"; exit 1; }
lab_ready >/dev/null
SIZE_MB=${BENCH_DRIVER_MB:-256}
REPS=${BENCH_DRIVER_REPS:-3}
BYTES=$((SIZE_MB * 1024 * 1024))

printf 'username = alice\npassword = %s\n' "$(password alice)" >"$WORK/alice.cred"
chmod 600 "$WORK/alice.cred"
src=$(randfile bench.bin "$BYTES")
name=bench_drv.$$.bin
trap 'rm -rf "$WORK"' EXIT

# secs CMD...: wall seconds of CMD inside client1 (exit status checked).
secs() {
	local t0 t1
	t0=$(date +%s%N)
	if ! on client1 "$@" >"$WORK/last.out" 2>&1; then
		echo "drivers: failed: $*" >&2
		sed 's/^/    /' "$WORK/last.out" >&2
		echo fail
		return 1
	fi
	t1=$(date +%s%N)
	awk "BEGIN{printf \"%.4f\", ($t1 - $t0) / 1e9}"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# rep CMD...: the median wall time over REPS runs.
rep() {
	local i
	for i in $(seq "$REPS"); do secs "$@" || return 1; echo; done | median
}
mbs() { awk "BEGIN{printf \"%.1f\", $BYTES / 1e6 / $1}"; }
line() {	# line PROTO OP DRIVER_S [REF_S REFNAME]
	if [[ -n ${4:-} ]]; then
		printf '%-4s %-5s driver %7.1f MB/s  %-9s %7.1f MB/s  ratio %.2f (target >= 1.0: %s)\n' \
			"$1" "$2" "$(mbs "$3")" "$5" "$(mbs "$4")" "$(awk "BEGIN{print $4 / $3}")" \
			"$(awk "BEGIN{print ($4 / $3 >= 1.0) ? \"met\" : \"MISSED\"}")"
	else
		printf '%-4s %-5s driver %7.1f MB/s  (no reference client: %s)\n' "$1" "$2" "$(mbs "$3")" "$4$5"
	fi
}
status=0

SMB="smb://alice@$SERVER/Media"
dw=$(rep "$DRV" --credentials "$WORK/alice.cred" "$SMB" put "$src" "$name") || status=1
rw=$(rep smbclient -A "$WORK/alice.cred" "//$SERVER/Media" -c "put $src $name") || status=1
dr=$(rep "$DRV" --credentials "$WORK/alice.cred" "$SMB" get "$name" /dev/null) || status=1
rr=$(rep smbclient -A "$WORK/alice.cred" "//$SERVER/Media" -c "get $name /dev/null") || status=1
[[ $status -eq 0 ]] && line smb write "$dw" "$rw" smbclient && line smb read "$dr" "$rr" smbclient
on client1 "$DRV" --credentials "$WORK/alice.cred" "$SMB" rm "$name" >/dev/null 2>&1

NFS="nfs://$SERVER/srv/media?uid=29001&gid=29000"
NFSF="nfs://$SERVER/srv/media/$name?uid=29001&gid=29000"
s2=0
# Through the server (Ganesha caches directory entries: never delete behind its back).
nfs_rm() { on client1 "$DRV" "$NFS" rm "$name" >/dev/null 2>&1; }
# nfs-cp never COMMITs: the like-for-like write is the driver's without flush (COMMIT);
# the stable one is printed beside it.
dw=$(for i in $(seq "$REPS"); do nfs_rm; secs "$DRV" --no-flush "$NFS" put "$src" "$name" || exit 1; echo; done | median) || s2=1
dwc=$(for i in $(seq "$REPS"); do nfs_rm; secs "$DRV" "$NFS" put "$src" "$name" || exit 1; echo; done | median) || s2=1
# nfs-cp refuses an existing target: remove it before each run, outside the timing.
rw=$(for i in $(seq "$REPS"); do nfs_rm; secs nfs-cp "$src" "$NFSF" || exit 1; echo; done | median) || s2=1
dr=$(rep "$DRV" "$NFS" get "$name" /dev/null) || s2=1
rr=$(for i in $(seq "$REPS"); do rm -f "$WORK/nfs.out"; secs nfs-cp "$NFSF" "$WORK/nfs.out" || exit 1; echo; done | median) || s2=1
# Same local sink for the driver's read as nfs-cp's (a file, not /dev/null).
dr2=$(for i in $(seq "$REPS"); do rm -f "$WORK/nfs.out"; secs "$DRV" "$NFS" get "$name" "$WORK/nfs.out" || exit 1; echo; done | median) || s2=1
[[ $s2 -eq 0 ]] && line nfs write "$dw" "$rw" nfs-cp && line nfs read "$dr2" "$rr" nfs-cp &&
	printf '     (nfs write with COMMIT at the end: driver %.1f MB/s; read into /dev/null: %.1f MB/s)\n' \
		"$(mbs "$dwc")" "$(mbs "$dr")"
nfs_rm
rm -f "$WORK/nfs.out"
status=$((status | s2))

AFPU="afp://alice@$SERVER/Media"
s3=0
dw=$(rep "$DRV" --credentials "$WORK/alice.cred" "$AFPU" put "$src" "$name") || s3=1
dr=$(rep "$DRV" --credentials "$WORK/alice.cred" "$AFPU" get "$name" /dev/null) || s3=1
[[ $s3 -eq 0 ]] && line afp write "$dw" "" "afp_speedtest does not work (FIELD.md)" &&
	line afp read "$dr" "" "afp_speedtest does not work (FIELD.md)"
on client1 "$DRV" --credentials "$WORK/alice.cred" "$AFPU" rm "$name" >/dev/null 2>&1
status=$((status | s3))
echo "($SIZE_MB MiB files, median of $REPS, wall time per process from client1; reads hot)"
exit $status
