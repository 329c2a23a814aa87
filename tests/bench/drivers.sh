#!/usr/bin/env bash
# Driver benchmark: nastune's smb, nfs and afp drivers (through build/tests/drvtool-*)
# against the reference clients on the same files in one run, from client1 to the lab
# server: smbclient put/get for SMB, nfs-cp for NFSv3, nothing for AFP (no working netatalk
# client tool exists: afp_speedtest and afp_lantest do not complete a run). Wall time of whole processes (connect included) for both
# sides, 256 MiB files; reads are hot (the server's page cache holds the file). Both sides
# copy a file: the put source and the get sink are files in tmpfs. drvtool overlaps its local
# file I/O with the transfer (two buffers, a thread), as smbclient does; for NFS it reads, then
# sends (receives, then writes), as nfs-cp does.
#
# The verdict (SMB read and write, NFS read and write; target >= 1.0): driver and reference
# run as a pair, back to back, the order alternating pair by pair so that neither always runs
# second; a pair's ratio is reference time / driver time (drift between pairs cancels). The
# figure is the median of the pairs' ratios, with a distribution-free 95% interval for that
# median (order statistics of the sign test: no assumption on the shape of the noise). Pairs
# are added, at least MIN (11) and at most MAX (41), until the stricter 99% interval lies
# wholly above or wholly below the target (decided early), or BOX seconds (35) of pairs have
# run. The comparison FAILS (exit 1) only when the 95% interval's upper end is below the
# target: the evidence says the driver is slower (a driver exactly at the reference fails
# about one run in twenty: the early looks at 99% add little to the final one's 2.5%). A
# median below the target whose interval still reaches it prints "not shown short" and
# passes: more pairs, not another run, would decide it. A few noisy pairs (the machine is
# shared) cannot fail it; a driver clearly behind its reference does.
# Small work (BENCH_DRIVERS=small runs it alone): BENCH_SMALL_FILES (100) files of 66 KB out
# and back in one connection, a listing and a stat of each, against smbclient's mput, mget, ls
# and allinfo, and NFS's listing and a get of BENCH_SMALL_NFS (20) files, one process each,
# against nfs-ls and nfs-cp; gated the same way, in files a second.
# BENCH_DRIVER_HANDICAP='smb-write=0.2 nfs-read=0.1' (or one number for all) adds that many
# seconds to each timed run of those drivers: the way to see the guard fail.
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
# Each driver's transfers in the engine's request size for it (drvtool's default: SMB 2 MiB
# reads and 1 MiB writes, AFP 8 MiB, NFS 1 MiB); BENCH_DRIVER_BLOCK forces one.
BLK=(${BENCH_DRIVER_BLOCK:+--block "$BENCH_DRIVER_BLOCK"})
[[ -x $DRV ]] || { echo "drivers: $DRV missing (make build/tests/drvtool)"; exit 1; }
lab_ready >/dev/null
SIZE_MB=${BENCH_DRIVER_MB:-256}
# The gated comparisons: MIN..MAX pairs, time-boxed (see the top); the others, printed for
# information only, REPS pairs each.
MIN=${BENCH_DRIVER_MIN:-11} MAX=${BENCH_DRIVER_MAX:-41} BOX=${BENCH_DRIVER_BOX:-35}
REPS=${BENCH_DRIVER_REPS:-5}
TARGET=1.0
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

# secs HANDICAP CMD...: wall seconds of CMD inside client1 (exit status checked), plus a
# sleep of HANDICAP seconds inside the timing (0: none). $EPOCHREALTIME: no process of the
# clock's own inside the interval.
secs() {
	local t0 t1 h=$1
	shift
	t0=$EPOCHREALTIME
	[[ $h = 0 ]] || sleep "$h"
	if ! on client1 "$@" >"$WORK/last.out" 2>&1; then
		echo "drivers: failed: $*" >&2
		sed 's/^/    /' "$WORK/last.out" >&2
		echo fail
		return 1
	fi
	t1=$EPOCHREALTIME
	echo $(( ${t1/[.,]/} - ${t0/[.,]/} )) | awk '{printf "%.6f", $1 / 1e6}'
}
# handicap LABEL: BENCH_DRIVER_HANDICAP's seconds for driver LABEL (smb-write...), else 0.
handicap() {
	local w
	for w in ${BENCH_DRIVER_HANDICAP:-}; do
		[[ $w = *=* ]] || { echo "$w"; return; }
		[[ ${w%%=*} = "$1" ]] && { echo "${w#*=}"; return; }
	done
	echo 0
}
# shellcheck source=tests/bench/lib/stats.sh
. "$TOPDIR/tests/bench/lib/stats.sh"
mbs() { awk "BEGIN{printf \"%.1f\", $BYTES / 1e6 / $1}"; }
ops() { awk "BEGIN{printf \"%.1f\", $1 / $2}"; }	# ops COUNT SECONDS: a second
missed=()
# verdict VAR PROTO OP: the words " ratio ... target >= 1.0: met" for VAR's pair figures (pair
# sets them); a SHORT one is added to missed under PROTO OP.
verdict() {
	local n m lo hi all v
	read -r n m lo hi <<<"$(eval "echo \"\$${1}_ci\"")"
	all=$(eval "echo \"\$${1}_p\"")
	v=$(awk -v m="$m" -v lo="$lo" -v hi="$hi" -v t="$TARGET" 'BEGIN {
		if (hi != "inf" && hi < t) print "SHORT"
		else if (m >= t) print "met"
		else print "not shown short" }')
	[[ $v != SHORT ]] || missed+=("$2 $3 $m $lo $hi $n")
	printf '  ratio %.3f (median of %d pairs, %s, all pairs %s; target >= %s: %s)' \
		"$m" "$n" "$([[ $hi = inf ]] && echo "no 95% interval: it takes 6 pairs" ||
			printf '95%% interval %.3f-%.3f' "$lo" "$hi")" "$all" "$TARGET" "$v"
}
line() {	# line PROTO OP DRIVER_S [REF_S REFNAME VAR]: VAR's pair figures (pair sets them)
	if [[ -n ${4:-} ]]; then
		printf '%-4s %-5s driver %7.1f MB/s  %-9s %7.1f MB/s' "$1" "$2" "$(mbs "$3")" "$5" "$(mbs "$4")"
		verdict "$6" "$1" "$2"
		echo
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
# pair NAME LABEL PREP -- DRIVER_CMD... -- REF_CMD...: runs the driver and the reference
# as pairs, alternating which runs first (so that drift on this shared machine hits both
# alike), PREP (a function, or :) before each run outside the timing. A LABEL of a gated
# comparison (smb-write...) runs MIN..MAX pairs within BOX seconds as the top says; "-" runs
# REPS. Sets NAME_d and NAME_r to the medians of each side's seconds, NAME_dt and NAME_rt to
# those of the transfer rates the tools report, NAME_ci to "N MEDIAN LO HI" of the pairs'
# ratios (reference time / driver time) and NAME_p to their whole range.
pair() {
	local _var=$1 label=$2 prep=$3 i t d=() r=() drv=() ref=() h=0 gated=0 start=$SECONDS
	local dx=() rx=() ci lo hi
	shift 4
	while [[ $1 != -- ]]; do drv+=("$1"); shift; done
	shift
	ref=("$@")
	[[ $label = - ]] || { gated=1; h=$(handicap "$label"); }
	for ((i = 1; ; i++)); do
		if ((i % 2)); then
			$prep; t=$(secs "$h" "${drv[@]}") || return 1; d+=("$t"); dx+=("$(rate)")
			$prep; t=$(secs 0 "${ref[@]}") || return 1; r+=("$t"); rx+=("$(rate)")
		else
			$prep; t=$(secs 0 "${ref[@]}") || return 1; r+=("$t"); rx+=("$(rate)")
			$prep; t=$(secs "$h" "${drv[@]}") || return 1; d+=("$t"); dx+=("$(rate)")
		fi
		if ((!gated)); then
			((i < REPS)) || break
			continue
		fi
		((i >= MIN)) || continue
		((i < MAX && SECONDS - start < BOX)) || break
		# decided either way: the 99% interval lies wholly on one side of the target
		read -r _ _ lo hi <<<"$(for k in "${!d[@]}"; do echo "${r[$k]} ${d[$k]}"; done |
			awk '{print $1 / $2}' | sort -g | interval 0.005)"
		awk -v lo="$lo" -v hi="$hi" -v t="$TARGET" 'BEGIN {exit !(lo > t || (hi != "inf" && hi < t))}' && break
	done
	# the transfer alone, as each tool reports it (drvtool, smbclient), when both do
	printf -v "${_var}_dt" '%s' "$(printf '%s\n' "${dx[@]}" | grep . | median)"
	printf -v "${_var}_rt" '%s' "$(printf '%s\n' "${rx[@]}" | grep . | median)"
	printf -v "${_var}_d" '%s' "$(printf '%s\n' "${d[@]}" | median)"
	printf -v "${_var}_r" '%s' "$(printf '%s\n' "${r[@]}" | median)"
	local pr
	pr=$(for i in "${!d[@]}"; do echo "${r[$i]} ${d[$i]}"; done | awk '{print $1 / $2}' | sort -g)
	ci=$(interval 0.025 <<<"$pr")
	printf -v "${_var}_ci" '%s' "$ci"
	printf -v "${_var}_p" '%s' "$(awk '{a[NR]=$1} END {printf "%.2f-%.2f", a[1], a[NR]}' <<<"$pr")"
}
status=0
out_rm() { rm -f "$SHM/out.bin"; }	# the read sink, before each read (SMB and NFS)

want() { [[ " ${BENCH_DRIVERS:-smb nfs afp small} " == *" $1 "* ]]; }	# which to run (all)
if want smb; then
	SMB="smb://alice@$SERVER/Media"
	# Reads go to a file in tmpfs on both sides, as for NFS: a client copying a file keeps the
	# data. Into /dev/null smbclient never touches it (the kernel discards its write), while
	# libsmbclient's API always copies into the caller's buffer; that ratio is printed beside.
	if pair sw smb-write : -- "$DRV_SMB" "${BLK[@]}" --credentials "$WORK/alice.cred" "$SMB" put "$src" "$name" \
		-- smbclient -A "$WORK/alice.cred" "//$SERVER/Media" -c "put $src $name" &&
		pair sr smb-read out_rm -- "$DRV_SMB" "${BLK[@]}" --credentials "$WORK/alice.cred" "$SMB" get "$name" "$SHM/out.bin" \
		-- smbclient -A "$WORK/alice.cred" "//$SERVER/Media" -c "get $name $SHM/out.bin" &&
		pair sn - : -- "$DRV_SMB" "${BLK[@]}" --credentials "$WORK/alice.cred" "$SMB" get "$name" /dev/null \
		-- smbclient -A "$WORK/alice.cred" "//$SERVER/Media" -c "get $name /dev/null"; then
		line smb write "$sw_d" "$sw_r" smbclient sw
		line smb read "$sr_d" "$sr_r" smbclient sr
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

	# nfs-cp COMMITs once, at close (libnfs 4.0's close does when the file was written): the
	# like-for-like write is the driver's without flush(), whose close COMMITs the same way;
	# the one with flush() as well is printed beside it. Reads go to a local file on both
	# sides.
	if pair nw nfs-write nfs_rm -- "$DRV_NFS" "${BLK[@]}" --no-flush "$NFS" put "$src" "$name" -- nfs-cp "$src" "$NFSF" &&
		pair nr nfs-read out_rm -- "$DRV_NFS" "${BLK[@]}" "$NFS" get "$name" "$SHM/out.bin" -- nfs-cp "$NFSF" "$SHM/out.bin" &&
		pair nd - : -- "$DRV_NFS" "${BLK[@]}" "$NFS" get "$name" /dev/null -- true &&
		pair nc - nfs_rm -- "$DRV_NFS" "${BLK[@]}" "$NFS" put "$src" "$name" -- true; then
		line nfs write "$nw_d" "$nw_r" nfs-cp nw
		line nfs read "$nr_d" "$nr_r" nfs-cp nr
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
	pair aw - : -- "$DRV_AFP" "${BLK[@]}" --credentials "$WORK/alice.cred" "$AFPU" put "$src" "$name" -- true || s3=1
	pair ar - : -- "$DRV_AFP" "${BLK[@]}" --credentials "$WORK/alice.cred" "$AFPU" get "$name" /dev/null -- true || s3=1
	dw=${aw_d:-} dr=${ar_d:-}
	[[ $s3 -eq 0 ]] && line afp write "$dw" "" "no working reference client" &&
		line afp read "$dr" "" "no working reference client"
	on client1 "$DRV" "${BLK[@]}" --credentials "$WORK/alice.cred" "$AFPU" rm "$name" >/dev/null 2>&1
	status=$((status | s3))
fi
# Small work, as the small-files and metadata workloads do it: SMALLN files of 66 KB out and
# back in one connection, a listing of them, a stat of each; against smbclient ("prompt
# off; mput *", "mget *", "ls", "allinfo" of each name) and libnfs's nfs-ls and nfs-cp (one
# process a file, the driver too: nfs-cp takes one file). Ratios as above, in files a second.
line_small() {	# line_small PROTO OP COUNT DRIVER_S REF_S REFNAME VAR
	printf '%-4s %-6s driver %8.1f files/s  %-9s %8.1f files/s' "$1" "$2" "$(ops "$3" "$4")" \
		"$6" "$(ops "$3" "$5")"
	verdict "$7" "$1" "$2"
	echo
}
if want small; then
	SMALLN=${BENCH_SMALL_FILES:-100} NFSN=${BENCH_SMALL_NFS:-20}
	small=$SHM/small back=$SHM/back sdir=bench_small.$$
	mkdir -p "$small" "$back"
	for ((i = 1; i <= SMALLN; i++)); do head -c 66000 /dev/urandom >"$small/f$i"; done
	back_rm() { rm -f "$back"/*; }
	# mput into an empty directory on both sides: files created, as the workload's are
	smb_fresh() { on client1 "${SC[@]}" -c "deltree $sdir; mkdir $sdir" >/dev/null 2>&1; }
	SC=(smbclient -A "$WORK/alice.cred" "//$SERVER/Media")
	SMB="smb://alice@$SERVER/Media"
	DS=("$DRV_SMB" --credentials "$WORK/alice.cred" "$SMB")
	allinfo="cd $sdir"
	for ((i = 1; i <= SMALLN; i++)); do allinfo+="; allinfo f$i"; done
	if on client1 "${DS[@]}" mput "$small" "$sdir" >/dev/null &&
		pair ssp smb-mput smb_fresh -- "${DS[@]}" mput "$small" "$sdir" \
			-- "${SC[@]}" -c "prompt off; cd $sdir; lcd $small; mput *" &&
		pair ssg smb-mget back_rm -- "${DS[@]}" mget "$sdir" "$back" \
			-- "${SC[@]}" -c "prompt off; cd $sdir; lcd $back; mget *" &&
		pair ssl smb-list : -- "${DS[@]}" ls "$sdir" -- "${SC[@]}" -c "ls $sdir/*" &&
		pair sss smb-stat : -- "${DS[@]}" mstat "$sdir" -- "${SC[@]}" -c "$allinfo"; then
		line_small smb mput "$SMALLN" "$ssp_d" "$ssp_r" smbclient ssp
		line_small smb mget "$SMALLN" "$ssg_d" "$ssg_r" smbclient ssg
		line_small smb list "$SMALLN" "$ssl_d" "$ssl_r" smbclient ssl
		line_small smb stat "$SMALLN" "$sss_d" "$sss_r" smbclient sss
	else
		status=1
	fi
	on client1 "${SC[@]}" -c "deltree $sdir" >/dev/null 2>&1
	NFSD="nfs://$SERVER/srv/media"
	ids="uid=29001&gid=29000"
	DN=("$DRV_NFS" "$NFSD?$ids")
	one_get_d="for i in \$(seq $NFSN); do ${DN[*]@Q} get $sdir/f\$i $back/f\$i >/dev/null || exit 1; done"
	one_get_r="for i in \$(seq $NFSN); do nfs-cp '$NFSD/$sdir/f'\$i'?$ids' $back/f\$i >/dev/null || exit 1; done"
	if on client1 "${DN[@]}" mput "$small" "$sdir" >/dev/null &&
		pair snl nfs-list : -- "${DN[@]}" ls "$sdir" -- nfs-ls "$NFSD/$sdir?$ids" &&
		pair sng nfs-get back_rm -- sh -c "$one_get_d" -- sh -c "$one_get_r"; then
		line_small nfs list "$SMALLN" "$snl_d" "$snl_r" nfs-ls snl
		line_small nfs get1 "$NFSN" "$sng_d" "$sng_r" nfs-cp sng
	else
		status=1
	fi
	for ((i = 1; i <= SMALLN; i++)); do on client1 "${DN[@]}" rm "$sdir/f$i" >/dev/null 2>&1; done
	on client1 "${DN[@]}" rmdir "$sdir" >/dev/null 2>&1
	echo "(small work: $SMALLN files of 66 KB in one connection; nfs get1: $NFSN files, one process each on both sides)"
fi
echo "($SIZE_MB MiB files; pairs alternating which runs first: $MIN to $MAX within ${BOX} s for the gated, $REPS for the rest; wall time per process from client1; reads hot; SHORT only when the 95% interval lies below the target)"
if ((${#missed[@]})); then
	for m in "${missed[@]}"; do
		set -- $m
		printf "drivers: FAILED: %s %s driver at %.3f of its reference client (95%% interval %.3f-%.3f over %d pairs, wholly below the target >= %s)\n" \
			"$1" "$2" "$3" "$4" "$5" "$6" "$TARGET"
	done
	status=1
fi
exit $status
