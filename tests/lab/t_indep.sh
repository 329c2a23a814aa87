#!/bin/bash
# Clients nastune did not write confirm, from client1, what a Mac will see:
#  - Samba's own smbtorture (vfs.fruit) and impacket negotiate AAPL with the Time Machine
#    share as macOS does: the capabilities, the Time Machine volume flag and the model;
#    Apple metadata, resource forks and the server-side copyfile work;
#  - smbclient reads the Time Machine volume size (fruit:time machine max size), the way
#    smbtorture's Timemachine-volsize does;
#  - python-zeroconf, an mDNS stack that shares nothing with avahi or nastune, browses and
#    resolves every record nastune publishes, TXT included.
# Every SMB check also runs against a share without vfs_fruit (a site include), where it
# must fail: the checks can tell a fruit share from a plain one.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 19
PY=/usr/bin/python3	# where Debian's python3-zeroconf and python3-impacket live
HERE=$TOPDIR/tests/lab
ALICE=$(password alice)
LOCAL=$SROOT/etc/samba/smb.conf.d/local.conf

cleanup() {
	rm -f "$LOCAL"
	"$LAB" apply "$DEMO" >/dev/null 2>&1
	"$LAB" reload >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT

# The control: the Time Machine directory again, as a share without any VFS module.
mkdir -p "$(dirname "$LOCAL")"
printf '[NoFruit]\n\tpath = /srv/tm\n\tread only = no\n\tvalid users = alice\n\tvfs objects =\n' >"$LOCAL"
"$LAB" reload >/dev/null 2>&1
sleep 0.5

caps() { on client1 timeout 60 "$PY" "$HERE/smb_aapl.py" caps "$SERVER" alice "$ALICE" "$1" 2>&1; }
torture() { local s=$1; shift; on client1 timeout 300 smbtorture "//$SERVER/$s" -U "alice%$ALICE" --option=torture:osx=yes "$@" 2>&1; }
smbc() { local s=$1; shift; on client1 timeout 60 smbclient "//$SERVER/$s" -U "alice%$ALICE" "$@" 2>&1; }

# --- AAPL, as a Mac negotiates it (impacket) ----------------------------------------------------
out=$(caps TimeMachine)
[[ $out == '{"server_caps": 7, "volume_caps": 4, "model": "TimeCapsule8,119"}' ]]
ok $? "impacket: AAPL on TimeMachine: caps 7 (readdir attrs, copyfile, UNIX), full-sync volume, model TimeCapsule8,119" "$out"
out=$(caps Media)
[[ $out == '{"server_caps": 7, "volume_caps": 0, "model": "TimeCapsule8,119"}' ]]
ok $? "impacket: Media (not Time Machine) has no full-sync volume flag" "$out"
out=$(caps NoFruit)
[[ $out == '{"aapl": null}' ]]
ok $? "control: a share without fruit answers with no AAPL context" "$out"

# --- smbtorture's vfs.fruit ---------------------------------------------------------------------
# torture:osx=yes skips the reply-size check tied to Samba's selftest model name
# ("MacSamba"); the model is checked above. Samba's selftest share also sets fruit:nfs_aces,
# so the AAPL test and the nine tests that call its enable_aapl() expect capability 8 too
# (NFS ACEs) — nastune leaves it off on purpose (README, "What a Mac negotiates").
PASS="File without AFP_AfpInfo|copy-chunk streams|copyfile|create delete-on-close AFP_AfpInfo|create delete-on-close AFP_AfpResource|creating rsrc with read-only access|delete|delete AFP_AfpInfo by writing all 0|delete_trigger_convert_sharing_violation|null afpinfo|read metadata|resource fork IO|setinfo delete-on-close AFP_AfpInfo|setinfo delete-on-close AFP_AfpResource|setinfo eof AFP_AfpInfo|stream names|write metadata|writing_afpinfo"
NEEDS_NFS_ACE="empty_stream|fsync_resource_fork|opening and creating resource fork|read open rsrc after rename|readdir_attr with names with illegal ntfs characters|rename_dir_openfile|setinfo eof AFP_AfpResource|setinfo eof stream|truncate resource fork to 0 bytes"
# verdicts OUTPUT: "RESULT: NAME" lines, sorted.
verdicts() { grep -E '^(success|failure|skip|error): ' <<<"$1" | sed 's/ \[$//' | sort; }
want=$( { tr '|' '\n' <<<"$PASS" | sed 's/^/success: /'
	tr '|' '\n' <<<"$NEEDS_NFS_ACE" | sed 's/^/failure: /'
	echo "failure: SMB2/CREATE context AAPL"
	printf 'skip: %s\n' "NFS ACE entries" "OS X AppleDouble file conversion" \
		"OS X AppleDouble file conversion without embedded xattr" "invalid AFP_AfpInfo"; } | sort)
tm=$(torture TimeMachine vfs.fruit)
got=$(verdicts "$tm")
[[ $got == "$want" ]]
ok $? "smbtorture vfs.fruit on TimeMachine: the 18 tests that need no NFS ACEs pass (metadata, resource forks, streams, copyfile)" "$(diff <(echo "$want") <(echo "$got"))"
# reasons OUTPUT: the text of each "failure: NAME [" ... "]" block, one per line.
reasons() { awk '/^failure: .* \[$/ { f = 1; next } f && /^\]$/ { f = 0; next } f' <<<"$1"; }
r=$(reasons "$tm")
[[ $(grep -c 'unexpected server_caps: 7$' <<<"$r") = 1 && $(grep -c 'enable_aapl failed$' <<<"$r") = 9 &&
	$(wc -l <<<"$r") = 10 && $(grep -c 'bad AAPL caps' <<<"$tm") = 9 ]]
ok $? "... and the other ten fail only at the capability check: 7 where Samba's selftest has 15 (+NFS ACEs)" "$r"
grep -qx 'success: copyfile' <<<"$got" && grep -q 'Open stream testfsctl2.dat:AFP_Resource' <<<"$tm"
ok $? "fruit:copyfile: the server copies a file with its resource fork and streams in one request" "$tm"
nf=$(torture NoFruit vfs.fruit)
grep -q 'unexpectedly no AAPL capabilities were returned' <<<"$nf" &&
	[[ $(verdicts "$nf" | grep -c '^success') = 0 ]]
ok $? "control: on a share without fruit smbtorture gets no AAPL and none of the 18 passes" "$(verdicts "$nf")"

# --- the Time Machine volume size ---------------------------------------------------------------
# smbtorture's Timemachine-volsize calls enable_aapl() first, so here it stops at the
# capability check (asserted below); smbclient does its steps: a sparsebundle with an
# Info.plist band size of 8 KiB and two bands, then the volume's size and free space.
out=$(torture TimeMachine vfs.fruit_timemachine)
grep -q 'Timemachine-volsize' <<<"$out" && grep -q 'enable_aapl failed' <<<"$out"
ok $? "smbtorture's Timemachine-volsize stops at its AAPL capability check, not at the size" "$out"
du_line() { smbc "$1" -c du | grep -E 'blocks of size'; }
KIB_2T=$((2 << 30))	# profiles/demo.conf: time_machine.max_size = "2T", in KiB
out=$(du_line TimeMachine)
[[ $out =~ ^[[:space:]]*${KIB_2T}\ blocks\ of\ size\ 1024\.\ ${KIB_2T}\ blocks\ available ]]
ok $? "the TimeMachine volume is 2 TiB (max_size), all free, whatever the disk" "$out"
printf '<dict>\n        <key>band-size</key>\n        <integer>8192</integer>\n</dict>\n' >"$WORK/Info.plist"
: >"$WORK/empty"
smbc TimeMachine -c "deltree test.sparsebundle; mkdir test.sparsebundle; put $WORK/Info.plist test.sparsebundle\\Info.plist; mkdir test.sparsebundle\\bands; put $WORK/empty test.sparsebundle\\bands\\1; put $WORK/empty test.sparsebundle\\bands\\2" >/dev/null
out=$(du_line TimeMachine)
smbc TimeMachine -c "deltree test.sparsebundle" >/dev/null
[[ $out =~ ^[[:space:]]*${KIB_2T}\ blocks\ of\ size\ 1024\.\ $((KIB_2T - 16))\ blocks\ available ]]
ok $? "two 8 KiB bands in a sparsebundle: 16 KiB of the 2 TiB in use, as a Mac computes it" "$out"
out=$(du_line NoFruit)
[[ $out =~ blocks\ of\ size ]] && ! [[ $out =~ ^[[:space:]]*${KIB_2T}\  ]]
ok $? "control: the same directory without fruit shows the disk's size" "$out"

# --- Bonjour through python-zeroconf ------------------------------------------------------------
TYPES=(_smb._tcp _adisk._tcp _device-info._tcp _nfs._tcp _afpovertcp._tcp)
zc() { on client1 timeout 30 "$PY" "$HERE/mdns_zeroconf.py" 4 "${TYPES[@]}" 2>"$WORK/zc.err"; }
# server_recs JSON-LINES: the server's records as "type|name|port|txt;txt" lines, sorted;
# only records that resolved to the server's IPv4 address count.
server_recs() {
	"$PY" -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    if sys.argv[1] in r["addresses"]:
        print("%s|%s|%s|%s" % (r["type"], r["name"], r["port"], ";".join(r["txt"])))
' "$SERVER" | sort
}
svc=$SROOT/etc/avahi/services/nastune.service
U=$(grep -o 'adVN=TimeMachine,adVF=0x83,adVU=[0-9A-F-]*' "$svc" | sed 's/.*adVU=//')
for _ in 1 2 3 4; do	# a busy machine can be slow to answer; the records do not change
	all=$(zc)
	recs=$(server_recs <<<"$all")
	[[ $(wc -l <<<"$recs") -ge 7 ]] && break
done
grep -qx "_smb._tcp|atlas|445|" <<<"$recs"
ok $? "zeroconf on client1: _smb._tcp atlas port 445, resolved to $SERVER" "$all"
[[ $U =~ ^[0-9A-F]{8}-[0-9A-F]{4}-5[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$ ]] &&
	grep -qx "_adisk._tcp|atlas|9|dk0=adVN=TimeMachine,adVF=0x83,adVU=$U;sys=waMa=0,adVF=0x100" <<<"$recs"
ok $? "zeroconf: _adisk._tcp TXT exactly sys=waMa=0,adVF=0x100 and dk0=adVN=TimeMachine,adVF=0x83 (SMB+AFP),adVU=$U" "$recs"
grep -qx "_device-info._tcp|atlas|0|model=TimeCapsule8,119" <<<"$recs"
ok $? "zeroconf: _device-info._tcp model=TimeCapsule8,119" "$recs"
[[ $(grep '^_nfs._tcp|' <<<"$recs") == $'_nfs._tcp|atlas Archive|2049|path=/srv/archive\n_nfs._tcp|atlas Media|2049|path=/srv/media\n_nfs._tcp|atlas Public|2049|path=/srv/public' ]]
ok $? "zeroconf: one _nfs._tcp per export, port 2049, TXT path=" "$recs"
grep -qx "_afpovertcp._tcp|atlas|548|" <<<"$recs" && [[ $(wc -l <<<"$recs") = 7 ]]
ok $? "zeroconf: _afpovertcp._tcp port 548 while AFP is on, and nothing else (7 records)" "$recs"
# The same set through client1's avahi-daemon: two mDNS stacks agree.
ab=$(on client1 timeout 8 avahi-browse -arptk 2>/dev/null | "$PY" -c '
import re, sys
for line in sys.stdin:
    f = line.rstrip("\n").split(";")
    if f[0] != "=" or f[2] != "IPv4" or f[7] != sys.argv[1] or f[4] not in sys.argv[2:]:
        continue
    name = re.sub(r"\\(\d{3})", lambda m: chr(int(m.group(1))), f[3])
    txt = sorted(t for t in re.findall(r"\"((?:[^\"\\\\]|\\\\.)*)\"", ";".join(f[9:])) if t)
    print("%s|%s|%s|%s" % (f[4], name, f[8], ";".join(txt)))
' "$SERVER" "${TYPES[@]}" | sort -u)
[[ $ab == "$recs" ]]
ok $? "zeroconf and avahi-browse on client1 see the same records, TXT included" "$(diff <(echo "$ab") <(echo "$recs"))"

# AFP off: the AFP record goes, the Time Machine disk is SMB only (0x82).
sed 's/afp = { enabled = true;/afp = { enabled = false;/; s/"smb", "nfs", "afp"\]/"smb", "nfs"]/; s/"smb", "afp"\]/"smb"]/' \
	"$DEMO" >"$WORK/noafp.conf"
out=$("$LAB" apply "$WORK/noafp.conf" 2>&1)
ok $? "apply: the demo with AFP off" "$out"
for _ in 1 2 3 4 5; do
	recs=$(zc | server_recs)
	grep -q '^_afpovertcp' <<<"$recs" || break
	sleep 1
done
! grep -q '^_afpovertcp' <<<"$recs" &&
	grep -qx "_adisk._tcp|atlas|9|dk0=adVN=TimeMachine,adVF=0x82,adVU=$U;sys=waMa=0,adVF=0x100" <<<"$recs" &&
	[[ $(wc -l <<<"$recs") = 6 ]]
ok $? "zeroconf after AFP is turned off: no _afpovertcp._tcp, dk0 adVF=0x82, the same adVU" "$recs"

[[ $TAP_N = 19 ]] || echo "# ran $TAP_N tests, planned 19"
done_testing
