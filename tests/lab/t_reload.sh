#!/bin/bash
# A share added, renamed, removed + `lab apply` (nastune, reload through the pidfiles): the
# running daemons serve the new set at once, with no lab restart and no daemon restart.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 25

pidfiles=(run/samba/smbd.pid run/ganesha/ganesha.pid run/netatalk/afpd.pid run/avahi-daemon/pid)
pids_before=$(for f in "${pidfiles[@]}"; do server_pid "$f"; echo; done)

# with_share NAME PATH: demo.conf plus one guest share on smb, nfs and afp.
with_share() {
	sed 's|^shares = (|shares = (\n  { name = "'"$1"'"; path = "'"$2"'"; protocols = ["smb", "nfs", "afp"]; guest = true; },|' \
		"$DEMO"
}

# until_ok SECONDS CMD...: retries CMD (mDNS and reloads settle asynchronously).
until_ok() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 5; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	"$@"
}

smb_has() { on client1 smbclient -N -L "//$SERVER" 2>/dev/null | grep -qE "^\s+$1\s+Disk"; }
nfs_has() { on client1 nfs-ls "nfs://$SERVER$1" >/dev/null 2>&1; }
afp_has() { on client1 "$AFP" "$SERVER" volumes 2>/dev/null | grep -qix "$1"; }
mdns_has() { on client1 timeout 5 avahi-browse -tp _nfs._tcp 2>/dev/null | grep -q "atlas\\\\032$1;"; }
not() { ! "$@"; }

mkdir -p "$SROOT/srv/extra"
chmod 1777 "$SROOT/srv/extra"
echo extra >"$SROOT/srv/extra/hello.txt"

# Added.
with_share Extra /srv/extra >"$WORK/add.conf"
check "apply: share Extra added" "$LAB" apply "$WORK/add.conf"
check "added: smbd lists Extra" until_ok 5 smb_has Extra
check "added: guest writes to Extra over SMB" \
	on client1 smbclient -N "//$SERVER/Extra" -c "put $DEMO demo.conf; del demo.conf"
check "added: ganesha exports /srv/extra" until_ok 5 nfs_has /srv/extra
check "added: afpd offers the extra volume" until_ok 5 afp_has extra
check "added: client1 browses atlas Extra (_nfs._tcp)" until_ok 5 mdns_has Extra

# Renamed (and moved).
mv "$SROOT/srv/extra" "$SROOT/srv/renamed"
with_share Renamed /srv/renamed >"$WORK/rename.conf"
check "apply: Extra renamed to Renamed" "$LAB" apply "$WORK/rename.conf"
check "renamed: smbd lists Renamed" until_ok 5 smb_has Renamed
check "renamed: smbd no longer lists Extra" until_ok 5 not smb_has Extra
grep_out "renamed: the file is there over SMB" 'hello\.txt' \
	on client1 smbclient -N "//$SERVER/Renamed" -c ls
check "renamed: ganesha exports /srv/renamed" until_ok 5 nfs_has /srv/renamed
check "renamed: ganesha no longer exports /srv/extra" until_ok 5 not nfs_has /srv/extra
check "renamed: afpd offers the renamed volume" until_ok 5 afp_has renamed
check "renamed: afpd no longer offers extra" until_ok 5 not afp_has extra
check "renamed: client1 browses atlas Renamed" until_ok 5 mdns_has Renamed
check "renamed: atlas Extra is withdrawn" until_ok 5 not mdns_has Extra

# Removed.
check "apply: back to demo.conf (Renamed removed)" "$LAB" apply "$DEMO"
check "removed: smbd no longer lists Renamed" until_ok 5 not smb_has Renamed
check "removed: ganesha no longer exports /srv/renamed" until_ok 5 not nfs_has /srv/renamed
check "removed: afpd no longer offers renamed" until_ok 5 not afp_has renamed
check "removed: atlas Renamed is withdrawn" until_ok 5 not mdns_has Renamed
check "removed: the demo shares are still served (SMB Media)" smb_has Media
check "removed: the demo shares are still served (NFS /srv/public)" nfs_has /srv/public

pids_after=$(for f in "${pidfiles[@]}"; do server_pid "$f"; echo; done)
[[ $pids_before = "$pids_after" ]]
ok $? "smbd, ganesha, afpd and avahi were reloaded, not restarted" \
	"before: $(echo $pids_before) after: $(echo $pids_after)"
out=$("$LAB" status 2>&1)
! grep -q DOWN <<<"$out"
ok $? "every lab daemon is still running" "$out"
rm -rf "$SROOT/srv/renamed" "$SROOT/srv/extra"
done_testing
