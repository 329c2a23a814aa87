#!/bin/bash
# Adopting a box that already serves: the lab server is given hand-written files nastune
# never wrote (an smb.conf of five shares: a Time Machine one, a guest one, one with valid
# users; Ganesha exports for two of them; an afp.conf; a Time Machine Bonjour record of its
# own) and no nastune state. `nastune import -o .../nastune.conf && nastune import --check
# && nastune apply` must leave every share served to the same clients: smbclient (each user
# and a guest, per share), nfs-ls and the lab's AFP client see the same before and after,
# and the Time Machine record is still published, by nastune.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 12

PA=$(password alice) PB=$(password bob)
SAVE=$WORK/saved.tar
PARTS=(etc/samba etc/ganesha etc/netatalk etc/avahi/services etc/nastune var/lib/nastune)
tar -C "$SROOT" -cf "$SAVE" "${PARTS[@]}" 2>/dev/null
# Ganesha's reload cannot renumber an export (a duplicate pseudo path): start it again.
restart_ganesha() {
	local pid
	pid=$(server_pid run/ganesha/ganesha.pid)
	[[ -n $pid ]] && kill "$pid" 2>/dev/null
	for _ in $(seq 50); do [[ -n $pid && -e /proc/$pid ]] || break; sleep 0.2; done
	on server /run/lab/start ganesha >/dev/null 2>&1
}
cleanup() {
	# Emptied, not removed: the server sees etc/samba and the others through bind mounts of
	# these very directories, and a new directory would leave its daemons on the old one.
	for p in "${PARTS[@]}"; do find "${SROOT:?}/$p" -mindepth 1 -delete 2>/dev/null; done
	tar -C "$SROOT" -xf "$SAVE"
	rm -rf "$SROOT/srv/projects"
	restart_ganesha
	"$LAB" reload >/dev/null 2>&1
	"$LAB" apply "$DEMO" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT

# --- the box as someone else left it ---------------------------------------------------------
mkdir -p "$SROOT/srv/projects" && chmod 0777 "$SROOT/srv/projects"
rm -rf "$SROOT/var/lib/nastune" "$SROOT/etc/nastune/nastune.conf" "$SROOT"/etc/avahi/services/nastune*.service
cat >"$SROOT/etc/samba/smb.conf" <<'EOF'
# smb.conf of the office NAS, by hand
[global]
   workgroup = WORKGROUP
   netbios name = ATLAS
   server string = Office NAS
   server role = standalone server
   map to guest = Bad User
   disable netbios = yes
   smb ports = 445
   multicast dns register = no
   vfs objects = catia fruit streams_xattr
   fruit:metadata = stream
   fruit:model = TimeCapsule8,119

[Media]
   path = /srv/media
   valid users = alice bob
   read only = no

[TimeMachine]
   path = /srv/tm
   valid users = alice
   read only = no
   fruit:time machine = yes
   fruit:time machine max size = 2T

[Public]
   comment = Anyone on the LAN
   path = /srv/public
   guest ok = yes
   read only = no

[Archive]
   path = /srv/archive
   guest ok = yes

[Projects]
   path = /srv/projects
   valid users = bob
   writable = yes
   create mask = 0664
EOF
cat >"$SROOT/etc/ganesha/ganesha.conf" <<'EOF'
# Ganesha exports of the office NAS
EXPORT {
	Export_Id = 10;
	Path = /srv/media;
	Pseudo = /srv/media;
	Access_Type = None;
	Squash = Root_Squash;
	FSAL { Name = VFS; }
	CLIENT { Clients = 198.18.0.0/15; Access_Type = RW; }
}
EXPORT {
	Export_Id = 11;
	Path = /srv/public;
	Pseudo = /srv/public;
	Access_Type = RW;
	Squash = All_Squash;
	Anonymous_Uid = 65534;
	Anonymous_Gid = 65534;
	FSAL { Name = VFS; }
}
EOF
cat >"$SROOT/etc/netatalk/afp.conf" <<'EOF'
; afp.conf of the office NAS
[Global]
	server name = atlas
	mimic model = TimeCapsule8,119
	uam list = uams_dhx2.so uams_guest.so
	cnid scheme = last

[Media]
	volume name = Media
	path = /srv/media
	valid users = alice bob
	cnid scheme = last

[TimeMachine]
	volume name = TimeMachine
	path = /srv/tm
	valid users = alice
	time machine = yes
	vol size limit = 2097152
	cnid scheme = last

[Public]
	volume name = Public
	path = /srv/public
	cnid scheme = last
EOF
cat >"$SROOT/etc/avahi/services/office-tm.service" <<'EOF'
<?xml version="1.0" standalone='no'?>
<!DOCTYPE service-group SYSTEM "avahi-service.dtd">
<service-group>
  <name replace-wildcards="yes">%h</name>
  <service><type>_smb._tcp</type><port>445</port></service>
  <service><type>_adisk._tcp</type><port>9</port>
    <txt-record>sys=waMa=0,adVF=0x100</txt-record>
    <txt-record>dk0=adVN=TimeMachine,adVF=0x82</txt-record>
  </service>
</service-group>
EOF
restart_ganesha
"$LAB" reload >/dev/null 2>&1
sleep 1

# --- what each client gets ------------------------------------------------------------------
SHARES=(Media TimeMachine Public Archive Projects)
smb_view() {
	local s u
	on client1 smbclient -N -g -L "//$SERVER" 2>/dev/null | awk -F'|' '$1 == "Disk" { print "list " $2 }' | sort
	for s in "${SHARES[@]}"; do
		for u in "alice%$PA" "bob%$PB" guest; do
			if [[ $u = guest ]]; then set -- -N; else set -- -U "$u"; fi
			if on client1 timeout 30 smbclient "//$SERVER/$s" "$@" -c ls >/dev/null 2>&1; then
				echo "smb $s ${u%%%*} yes"
			else
				echo "smb $s ${u%%%*} no"
			fi
		done
	done
}
nfs_view() {
	local s
	for s in media tm public archive projects; do
		if on client1 timeout 30 nfs-ls "nfs://$SERVER/srv/$s?uid=29001&gid=29000" >/dev/null 2>&1; then
			echo "nfs /srv/$s yes"
		else
			echo "nfs /srv/$s no"
		fi
	done
}
afp_view() {
	on client1 "$AFP" "$SERVER" volumes 2>&1 | sed 's/^/afp guest /' | sort
	on client1 "$AFP" "$SERVER" -u alice -p "$PA" volumes 2>&1 | sed 's/^/afp alice /' | sort
	on client1 "$AFP" "$SERVER" -u bob -p "$PB" volumes 2>&1 | sed 's/^/afp bob /' | sort
}
view() { smb_view; nfs_view; afp_view; }
tm_record() { on client1 timeout 20 avahi-browse -rtp _adisk._tcp 2>/dev/null | grep -c 'adVN=TimeMachine'; }

before=$(view)
grep -qx 'list Projects' <<<"$before" && grep -qx 'smb TimeMachine alice yes' <<<"$before" &&
	grep -qx 'smb TimeMachine bob no' <<<"$before" && grep -qx 'smb Public guest yes' <<<"$before" &&
	grep -qx 'nfs /srv/media yes' <<<"$before" && grep -qx 'nfs /srv/archive no' <<<"$before" &&
	grep -qix 'afp alice timemachine' <<<"$before"
ok $? "the hand-written files serve: five SMB shares, two exports, three AFP volumes" "$before" 60
[[ $(tm_record) -ge 1 ]]
ok $? "and the box's own Time Machine record is published"

# --- adopt it -------------------------------------------------------------------------------
CONF=$SROOT/etc/nastune/nastune.conf
mkdir -p "$SROOT/etc/nastune"
out=$(on server "$NASTUNE" --root "$SROOT" import -o "$CONF" 2>&1)
ok $? "nastune import -o $CONF" "$out" 40
grep -q '^/etc/samba/smb.conf:[0-9]*: kept as a site include: \[Projects\] create mask = 0664$' <<<"$out" &&
	grep -q "office-tm.service: stays in force" <<<"$out"
ok $? "it names what it keeps in the site include and the foreign Avahi file" "$out" 40
# What the lab needs and no file on the box says: its pidfile services and start commands.
sed -n '/^services = {/,/^};/p; /^network = /p' "$DEMO" >>"$CONF"
out=$(on server "$NASTUNE" --root "$SROOT" import --check 2>&1)
ok $? "nastune import --check: nothing served is lost" "$out" 40
out=$(on server "$NASTUNE" --root "$SROOT" apply 2>&1)
ok $? "nastune apply" "$out" 40
grep -q '^# Generated by nastune' "$SROOT/etc/samba/smb.conf" && grep -q '^\[Projects\]' "$SROOT/etc/samba/smb.conf" &&
	grep -q 'Path = "/srv/public"' "$SROOT/etc/ganesha/ganesha.conf"
ok $? "nastune's files are in force" "$(head -5 "$SROOT/etc/samba/smb.conf")"
sleep 1

after=$(view)
[[ $after = "$before" ]]
ok $? "every share is served to the same clients: SMB (per user and guest), NFS, AFP" \
	"$(diff <(echo "$before") <(echo "$after"))" 40
# The foreign record goes, as import advised; nastune's own must carry the Time Machine share.
rm -f "$SROOT/etc/avahi/services/office-tm.service"
"$LAB" reload >/dev/null 2>&1
sleep 2
grep -q 'adVN=TimeMachine' "$SROOT/etc/avahi/services/nastune.service"
ok $? "nastune's Bonjour file has the Time Machine disk" "$(cat "$SROOT/etc/avahi/services/nastune.service")"
n=$(tm_record)
[[ $n -ge 1 ]]
ok $? "the Time Machine record is still published ($n), by nastune" \
	"$(on client1 timeout 20 avahi-browse -rtp _adisk._tcp 2>&1)"

# The guard: the imported shares are nastune's now, but one added to smb.conf by hand since
# is not, and a configuration without it is refused.
cp "$SROOT/etc/samba/smb.conf" "$WORK/smb.ours"
printf '\n[Legacy]\n\tpath = /srv/projects\n' >>"$SROOT/etc/samba/smb.conf"
out=$(on server "$NASTUNE" --root "$SROOT" apply 2>&1)
rc=$?
[[ $rc = 2 ]] && grep -q "smb share 'Legacy' (/srv/projects): would no longer be served" <<<"$out"
ok $? "apply refuses to drop a share someone added by hand since (exit $rc)" "$out"
cmp -s "$SROOT/etc/samba/smb.conf" <(cat "$WORK/smb.ours"; printf '\n[Legacy]\n\tpath = /srv/projects\n')
ok $? "and leaves the file as it was"
done_testing
