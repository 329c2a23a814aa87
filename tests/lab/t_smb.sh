#!/bin/bash
# SMB from client1 against the lab server's smbd, configured by nastune from demo.conf.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 24

A="alice%$(password alice)"
B="bob%$(password bob)"
smb() { on client1 smbclient "$@"; }

list=$(smb -N -L "//$SERVER" 2>&1)
for s in Media TimeMachine Public Archive; do
	grep -qE "^\s+$s\s+Disk" <<<"$list"
	ok $? "smbclient -L lists $s" "$list"
done

check "guest logs in to Public" smb -N "//$SERVER/Public" -c ls
refuse "guest is refused on Media (valid users)" smb -N "//$SERVER/Media" -c ls
check "alice logs in to Media" smb -U "$A" "//$SERVER/Media" -c ls
refuse "a wrong password is refused" smb -U alice%wrong "//$SERVER/Media" -c ls
refuse "bob is refused on TimeMachine (alice only)" smb -U "$B" "//$SERVER/TimeMachine" -c ls

# Write, read back, delete on every writable share.
src=$(randfile smb.bin 3000000)
rw() {	# rw SHARE AUTH...
	local share=$1 name=t_smb.$$.bin out
	shift
	out=$(smb "$@" "//$SERVER/$share" -c "put $src $name; get $name $WORK/back.bin" 2>&1) &&
		cmp -s "$src" "$WORK/back.bin"
	ok $? "$share: write 3 MB and read it back identical" "$out"
	rm -f "$WORK/back.bin"
	out=$(smb "$@" "//$SERVER/$share" -c "del $name" 2>&1) &&
		! smb "$@" "//$SERVER/$share" -c "ls $name" >/dev/null 2>&1
	ok $? "$share: delete it, and it is gone" "$out"
}
rw Media -U "$A"
rw TimeMachine -U "$A"
rw Public -N
check "bob writes to Media too" smb -U "$B" "//$SERVER/Media" -c "put $src bob.$$; del bob.$$"

# Read-only share.
out=$(smb -N "//$SERVER/Archive" -c "put $src nope.bin" 2>&1)
grep -qE 'NT_STATUS_(ACCESS_DENIED|MEDIA_WRITE_PROTECTED)' <<<"$out" && [[ ! -e $SROOT/srv/archive/nope.bin ]]
ok $? "Archive refuses writes" "$out"
check "Archive is readable" smb -N "//$SERVER/Archive" -c "get README.txt $WORK/readme"

# Time Machine: the share's effective parameters, and the fruit module in the smbd that
# serves a live connection to it.
vfs=$(on server testparm -s --section-name=TimeMachine --parameter-name="vfs objects" \
	"$SROOT/etc/samba/smb.conf" 2>/dev/null)
grep -qE '^catia fruit streams_xattr$' <<<"$vfs"
ok $? "TimeMachine: vfs objects = catia fruit streams_xattr (testparm)" "$vfs"
tp=$(on server testparm -s --section-name=TimeMachine "$SROOT/etc/samba/smb.conf" 2>/dev/null)
grep -qE 'fruit:time machine = yes' <<<"$tp"
ok $? "TimeMachine: fruit:time machine = yes" "$tp"
grep -qE 'fruit:time machine max size = 2T' <<<"$tp"
ok $? "TimeMachine: fruit:time machine max size = 2T" "$tp"
(echo ls; sleep 3; echo quit) | on client1 smbclient -U "$A" "//$SERVER/TimeMachine" >/dev/null 2>&1 &
reader=$!
found=1
for _ in $(seq 20); do
	sleep 0.2
	for p in $(pgrep -x smbd); do
		grep -q '/vfs/fruit\.so' "/proc/$p/maps" 2>/dev/null && { found=0; break 2; }
	done
done
wait $reader
ok $found "the smbd serving TimeMachine has loaded vfs fruit"
global=$(on server testparm -s "$SROOT/etc/samba/smb.conf" 2>/dev/null | sed -n '/^\[global\]/,/^\[/p')
grep -q 'fruit:metadata = stream' <<<"$global"
ok $? "global fruit:metadata = stream" "$global"
grep -q 'multicast dns register = No' <<<"$global"
ok $? "smbd does not publish mDNS itself (nastune owns it)" "$global"
done_testing
