#!/usr/bin/env bash
# apply over a box that already serves: a share the installed files serve, the configuration
# lacks and no nastune generation installed is not dropped without --drop-unmanaged; the
# distribution's stock shares (Debian's smb.conf: [homes] read-only, [printers], [print$])
# are not in the way of a first apply; the package hooks never pass the flag.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plan 14
conf="$top/profiles/demo.conf"
stock=/usr/share/samba/smb.conf

# Debian's own smb.conf, as samba installs it, and netatalk's afp.conf ([Homes]): a first
# apply replaces them.
r="$tmp/stock"; mkdir -p "$r/etc/samba" "$r/etc/netatalk"; cp "$stock" "$r/etc/samba/smb.conf"; srvdirs "$r"
cp "$top/tests/golden/import/cases/netatalk-stock/etc/netatalk/afp.conf" "$r/etc/netatalk/afp.conf"
nt --root "$r" -c "$conf" apply --no-reload
is "$rc" 0 "a first apply over the stock smb.conf ([homes], [printers], [print\$]) and afp.conf ([Homes]) proceeds"

# A hand-written one serving a share of its own and a writable [homes].
r="$tmp/hand"; mkdir -p "$r/etc/samba"; srvdirs "$r"
printf '[global]\n\tworkgroup = HOME\n[homes]\n\tread only = no\n[Photos]\n\tpath = /srv/photos\n[printers]\n\tpath = /var/spool/samba\n\tprintable = yes\n' >"$r/etc/samba/smb.conf"
before=$(sha256sum <"$r/etc/samba/smb.conf")
nt --root "$r" -c "$conf" apply --no-reload
is "$rc" 2 "apply over a share served today that the configuration lacks exits 2"
echo "$err" | grep -q "/etc/samba/smb.conf:5: smb share 'Photos' (/srv/photos): would no longer be served" &&
	echo "$err" | grep -q "smb share 'homes': would no longer be served"
ok $? "it names each share with file:line (a writable [homes] counts)" "$err"
echo "$err" | grep -q 'nastune import' && echo "$err" | grep -q -- '--drop-unmanaged'
ok $? "and says how out: nastune import, add them, or --drop-unmanaged" "$err"
echo "$err" | grep -q "'printers'"; [ $? -ne 0 ]
ok $? "[printers] is not counted" "$err"
is "$(sha256sum <"$r/etc/samba/smb.conf")" "$before" "nothing is written"
[ ! -e "$r/var/lib/nastune" ]; ok $? "not even the state directory"
nt --root "$r" -c "$conf" apply --no-reload --dry-run
is "$rc" 2 "a dry run says the same"
nt --root "$r" -c "$conf" apply --no-reload --drop-unmanaged
is "$rc" 0 "--drop-unmanaged accepts the loss"

# What nastune installed itself is its to drop.
r="$tmp/own"; mkdir -p "$r/etc/samba"; echo "[global]" >"$r/etc/samba/smb.conf"; srvdirs "$r"
printf 'shares = ( { name = "Data"; path = "/srv/data"; guest = true; protocols = ["smb"]; } );\n' >"$tmp/data.conf"
nt --root "$r" -c "$tmp/data.conf" apply --no-reload
r1=$rc
nt --root "$r" -c "$conf" apply --no-reload
[ "$r1" = 0 ] && [ "$rc" = 0 ] && ! grep -q '^\[Data\]' "$r/etc/samba/smb.conf"
ok $? "a share an earlier generation installed is dropped without the flag" "$err"
# ... but what generation 0 kept is not nastune's: rolled back to, it counts again.
r="$tmp/back"; mkdir -p "$r/etc/samba"; srvdirs "$r"
printf '[global]\n[Old]\n\tpath = /srv/old\n' >"$r/etc/samba/smb.conf"
nt --root "$r" -c "$tmp/data.conf" apply --no-reload --drop-unmanaged
nt --root "$r" -c "$tmp/data.conf" rollback 0
grep -q '^\[Old\]' "$r/etc/samba/smb.conf"; ok $? "(rollback 0 brought the distribution's share back)"
nt --root "$r" -c "$conf" apply --no-reload
is "$rc" 2 "after rollback 0 the distribution's own share counts again"

# Another tool's ganesha.conf numbers its exports itself: Ganesha's reload cannot move a path
# to nastune's Export_Id (a duplicate pseudo path), so the first apply restarts it.
r="$tmp/gan"; mkdir -p "$r/etc/ganesha"; srvdirs "$r"
printf 'NFS_CORE_PARAM {\n\tProtocols = 3, 4;\n}\nEXPORT {\n\tExport_Id = 10;\n\tPath = /srv/media;\n\tPseudo = /srv/media;\n\tProtocols = 3, 4;\n\tAccess_Type = RW;\n\tFSAL { Name = VFS; }\n}\n' >"$r/etc/ganesha/ganesha.conf"
nt --root "$r" -c "$conf" apply --dry-run
echo "$out" | grep -q 'would restart ganesha.nfsd (pidfile backend): Export_Id changed'
ok $? "an export whose Export_Id nastune changes restarts Ganesha, not a reload" "$out"

! grep -rq -- '--drop-unmanaged' "$top/packaging/apply-hook" "$top/packaging/debian" "$top/packaging/systemd"
ok $? "no package hook or unit passes --drop-unmanaged"
