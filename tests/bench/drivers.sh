#!/usr/bin/env bash
# Driver benchmark: nastune's smb, nfs and afp drivers (through build/tests/drvtool-*)
# against the reference clients on the same files in one run, from client1 to the lab
# server: smbclient put/get for SMB, nfs-cp for NFSv3, nothing for AFP (no working netatalk
# client tool exists, FIELD.md). Wall time of whole processes (connect included) for both
# sides, 256 MiB files, driver and reference run alternately, median of 5; reads are hot
# (the server's page cache holds the file). Both sides copy a file: the put source and the
# get sink are files in tmpfs. drvtool overlaps its local file I/O with the transfer (two
# buffers, a thread), as smbclient does.
# Each pair's ratio is reference time / driver time; the figure is the median of the pairs'
# ratios (drift between pairs cancels), beside each side's median MB/s. The target is >= 1.0
# for SMB read and write and NFS read and write: below it the script prints FAILED with the
# ratio and exits 1 (make bench is the guard; no timed test in make check). Within a pair the
# order alternates (driver first, then reference first) so that neither always runs second.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/../lab/lib.sh"
# One driver per binary (drvtool-smb...), linked with only its protocol's library like the
# reference tools: whole-process times must not charge a driver with loading the others.
DRV=${DRVTOOL:-$TOPDIR/build/tests/drvtool}
DRV_SMB=$TOPDIR/build/tests/drvtool-smb DRV_NFS=$TOPDIR/build/tests/drvtool-nfs
DRV_AFP=$TOPDIR/build/tests/drvtool-afp
for d in "$DRV_SMB" "$DRV_NFS" "$DRV_AFP"; do
	[[ -x $d ]] || { echo "drivers: $d missing (make bench builds it)"; exit 1; }
done
# Each driver's transfers in the engine's request size for it (drvtool's default: 8 MiB for
# SMB, 1 MiB for the others); BENCH_DRIVER_BLOCK forces one.
BLK=(${BENCH_DRIVER_BLOCK:+--block "$BENCH_DRIVER_BLOCK"})
[[ -x $DRV ]] || { echo "drivers: $DRV missing (make build/tests/drvtool)"; exit 1; }
lab_ready >/dev/null
SIZE_MB=${BENCH_DRIVER_MB:-256}
REPS=${BENCH_DRIVER_REPS:-7}
BYTES=$((SIZE_MB * 1024 * 1024))

printf 'username = alice\npassword = %s\n' "$(password alice)" >"$WORK/alice.cred"
chmod 600 "$WORK/alice.cred"
# The local files (the put source, the get sink) live in tmpfs: disk writeback of a 256 MiB
# sink on the client would add noise that belongs to neither client.
SHM=$(mktemp -d /dev/shm/nastune-drv.XXXXXX)
src=$SHM/bench.bin
head -c "$BYTES" /dev/urandom >"$src"
name=bench_drv.$$.bin
trap 'rm -rf "$WORK" "$SHM"' EXIT

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
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
mbs() { awk "BEGIN{printf \"%.1f\", $BYTES / 1e6 / $1}"; }
missed=()
line() {	# line PROTO OP DRIVER_S [REF_S REFNAME PAIRS RATIO]
	if [[ -n ${4:-} ]]; then
		local ok
		ok=$(awk "BEGIN{print ($7 >= 1.0) ? \"met\" : \"MISSED\"}")
		printf '%-4s %-5s driver %7.1f MB/s  %-9s %7.1f MB/s  ratio %.3f (median of %d pairs, %s; target >= 1.0: %s)\n' \
			"$1" "$2" "$(mbs "$3")" "$5" "$(mbs "$4")" "$7" "$REPS" "$6" "$ok"
		[[ $ok = met ]] || missed+=("$1 $2 $7")
	else
		printf '%-4s %-5s driver %7.1f MB/s  (no reference client: %s)\n' "$1" "$2" "$(mbs "$3")" "$4$5"
	fi
}
# rate: the MB/s the last command reported for its transfer alone, if it reports one
# (drvtool: "= N MB/s"; smbclient: "(N KiloBytes/sec)" for get, "(N kb/s)" for put, both
# KiB of 1024 bytes).
rate() {
	sed -nE 's/.*= ([0-9.]+) MB\/s.*/\1/p; s/.*\(([0-9.]+) (KiloBytes\/sec|kb\/s)\).*/\1 KiB/p' "$WORK/last.out" |
		head -n 1 | awk '{print ($2 == "KiB") ? $1 * 1024 / 1e6 : $1}'
}
# pair NAME PREP -- DRIVER_CMD... -- REF_CMD...: runs the driver and the reference
# alternately REPS times (so that drift on this shared machine hits both alike), PREP (a
# function, or :) before each run outside the timing; sets NAME_d and NAME_r to the medians.
pair() {
	local _var=$1 prep=$2 i t d=() r=() drv=() ref=()
	shift 3
	while [[ $1 != -- ]]; do drv+=("$1"); shift; done
	shift
	ref=("$@")
	local dx=() rx=()
	for i in $(seq "$REPS"); do
		if ((i % 2)); then
			$prep; t=$(secs "${drv[@]}") || return 1; d+=("$t"); dx+=("$(rate)")
			$prep; t=$(secs "${ref[@]}") || return 1; r+=("$t"); rx+=("$(rate)")
		else
			$prep; t=$(secs "${ref[@]}") || return 1; r+=("$t"); rx+=("$(rate)")
			$prep; t=$(secs "${drv[@]}") || return 1; d+=("$t"); dx+=("$(rate)")
		fi
	done
	# the transfer alone, as each tool reports it (drvtool, smbclient), when both do
	printf -v "${_var}_dt" '%s' "$(printf '%s\n' "${dx[@]}" | grep . | median)"
	printf -v "${_var}_rt" '%s' "$(printf '%s\n' "${rx[@]}" | grep . | median)"
	printf -v "${_var}_d" '%s' "$(printf '%s\n' "${d[@]}" | median)"
	printf -v "${_var}_r" '%s' "$(printf '%s\n' "${r[@]}" | median)"
	# each pair's own ratio (reference time / driver time): their median, and the spread
	local pr
	pr=$(for i in "${!d[@]}"; do awk "BEGIN{print ${r[$i]} / ${d[$i]}}"; done | sort -g)
	printf -v "${_var}_q" '%s' "$(median <<<"$pr")"
	printf -v "${_var}_p" '%s' "$(awk '{a[NR]=$1} END {printf "%.2f-%.2f", a[1], a[NR]}' <<<"$pr")"
}
status=0

want() { [[ " ${BENCH_DRIVERS:-smb nfs afp} " == *" $1 "* ]]; }	# which to run (all)
if want smb; then
	SMB="smb://alice@$SERVER/Media"
	out_rm() { rm -f "$SHM/out.bin"; }
	# Reads go to a file in tmpfs on both sides, as for NFS: a client copying a file keeps the
	# data. Into /dev/null smbclient never touches it (the kernel discards its write), while
	# libsmbclient's API always copies into the caller's buffer; that ratio is printed beside.
	if pair sw : -- "$DRV_SMB" "${BLK[@]}" --credentials "$WORK/alice.cred" "$SMB" put "$src" "$name" \
		-- smbclient -A "$WORK/alice.cred" "//$SERVER/Media" -c "put $src $name" &&
		pair sr out_rm -- "$DRV_SMB" "${BLK[@]}" --credentials "$WORK/alice.cred" "$SMB" get "$name" "$SHM/out.bin" \
		-- smbclient -A "$WORK/alice.cred" "//$SERVER/Media" -c "get $name $SHM/out.bin" &&
		pair sn : -- "$DRV_SMB" "${BLK[@]}" --credentials "$WORK/alice.cred" "$SMB" get "$name" /dev/null \
		-- smbclient -A "$WORK/alice.cred" "//$SERVER/Media" -c "get $name /dev/null"; then
		line smb write "$sw_d" "$sw_r" smbclient "$sw_p" "$sw_q"
		line smb read "$sr_d" "$sr_r" smbclient "$sr_p" "$sr_q"
		printf '     (smb read into /dev/null: driver %.1f MB/s, smbclient %.1f MB/s, ratio %.2f)\n' \
			"$(mbs "$sn_d")" "$(mbs "$sn_r")" "$(awk "BEGIN{print $sn_r / $sn_d}")"
		# Without start-up and connect: what each tool reports for the transfer itself.
		for v in sw sr sn; do
			dt=${v}_dt rt=${v}_rt
			[[ -n ${!dt} && -n ${!rt} ]] || continue
			printf '     (smb %s, transfer phase only as each tool reports it: driver %.1f MB/s, smbclient %.1f MB/s, ratio %.2f)\n' \
				"$(case $v in sw) echo write ;; sr) echo read ;; *) echo "read into /dev/null" ;; esac)" \
				"${!dt}" "${!rt}" "$(awk "BEGIN{print ${!dt} / ${!rt}}")"
		done
	else
		status=1
	fi
	on client1 "$DRV" "${BLK[@]}" --credentials "$WORK/alice.cred" "$SMB" rm "$name" >/dev/null 2>&1

fi
if want nfs; then
	NFS="nfs://$SERVER/srv/media?uid=29001&gid=29000"
	NFSF="nfs://$SERVER/srv/media/$name?uid=29001&gid=29000"
	# Through the server (Ganesha caches directory entries: never delete behind its back);
	# nfs-cp refuses an existing target.
	nfs_rm() { on client1 "$DRV" "${BLK[@]}" "$NFS" rm "$name" >/dev/null 2>&1; }

	# nfs-cp never COMMITs: the like-for-like write is the driver's without flush (COMMIT);
	# the stable one is printed beside it. Reads go to a local file on both sides.
	if pair nw nfs_rm -- "$DRV_NFS" "${BLK[@]}" --no-flush "$NFS" put "$src" "$name" -- nfs-cp "$src" "$NFSF" &&
		pair nr out_rm -- "$DRV_NFS" "${BLK[@]}" "$NFS" get "$name" "$SHM/out.bin" -- nfs-cp "$NFSF" "$SHM/out.bin" &&
		pair nd : -- "$DRV_NFS" "${BLK[@]}" "$NFS" get "$name" /dev/null -- true &&
		pair nc nfs_rm -- "$DRV_NFS" "${BLK[@]}" "$NFS" put "$src" "$name" -- true; then
		line nfs write "$nw_d" "$nw_r" nfs-cp "$nw_p" "$nw_q"
		line nfs read "$nr_d" "$nr_r" nfs-cp "$nr_p" "$nr_q"
		printf '     (nfs write with COMMIT at the end: driver %.1f MB/s; read into /dev/null: %.1f MB/s)\n' \
			"$(mbs "$nc_d")" "$(mbs "$nd_d")"
	else
		status=1
	fi
	nfs_rm

fi
if want afp; then
	AFPU="afp://alice@$SERVER/Media"
	s3=0
	pair aw : -- "$DRV_AFP" "${BLK[@]}" --credentials "$WORK/alice.cred" "$AFPU" put "$src" "$name" -- true || s3=1
	pair ar : -- "$DRV_AFP" "${BLK[@]}" --credentials "$WORK/alice.cred" "$AFPU" get "$name" /dev/null -- true || s3=1
	dw=${aw_d:-} dr=${ar_d:-}
	[[ $s3 -eq 0 ]] && line afp write "$dw" "" "afp_speedtest does not work (FIELD.md)" &&
		line afp read "$dr" "" "afp_speedtest does not work (FIELD.md)"
	on client1 "$DRV" "${BLK[@]}" --credentials "$WORK/alice.cred" "$AFPU" rm "$name" >/dev/null 2>&1
	status=$((status | s3))
fi
echo "($SIZE_MB MiB files, $REPS alternating pairs, wall time per process from client1; reads hot)"
if ((${#missed[@]})); then
	for m in "${missed[@]}"; do
		set -- $m
		printf "drivers: FAILED: %s %s driver at %.3f of its reference client (target >= 1.0)\n" "$1" "$2" "$3"
	done
	status=1
fi
exit $status
