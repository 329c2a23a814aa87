#!/usr/bin/env bash
# The package under a real systemd: Debian bookworm boots with systemd as PID 1 in a
# container, the .deb is installed there with apt beside samba, avahi and NFS-Ganesha, and
# the tests check what only a running systemd can show — the postinst hook applying an
# edited configuration, apply reloading through systemctl (smbd's main PID unchanged, the
# reload in its journal), a restart-class knob restarting Ganesha through systemctl restart
# (a new main PID), nastune-retune.service at boot tuning when due and doing nothing when
# nothing changed, nastune-agent.service starting once enabled, an apply killed between two
# installs repaired by nastune-repair.service before smbd starts at the next boot (and ordered
# before ctdb.service by systemd), and purge
# restoring generation 0 on the running system. Root only; CI runs it.
#
# The recipe (what works on these machines, where PID 1 is not systemd and cgroups are
# v1 with a v2 "unified" hierarchy):
#   - the root is tests/pkg/bookworm-root's cached bookworm (debootstrap minbase) plus
#     systemd, systemd-sysv, dbus, nfs-ganesha(-vfs) and what the .deb depends on; it is
#     the lower layer of an overlay whose upper layer is a tmpfs, so every run boots a
#     pristine system and the cache is never written;
#   - in the overlay: no policy-rc.d (the root's blocks daemons in chroots; this is a
#     booted system), and proc-fs-nfsd.mount, run-rpc_pipefs.mount and nfs-server.service
#     masked (no kernel nfsd here: they fail and keep the system "degraded");
#   - a network namespace with a veth pair up and 198.18.16.1/24 (benchmarking range):
#     with loopback only nmbd waits 90 s for an interface;
#   - `systemd-nspawn -D ROOT -b --register=no --keep-unit --network-namespace-path=NETNS`
#     started from a cgroup of its own (/sys/fs/cgroup/{systemd,unified}/NAME, or
#     /sys/fs/cgroup/NAME on a cgroup2-only host): without
#     systemd on the host nothing can register a machine or make a scope, so nspawn must
#     keep the cgroup it was started in, and that cgroup must be its alone;
#   - `--system-call-filter=open_by_handle_at`: Ganesha's VFS backend opens files by
#     handle, which nspawn's seccomp filter refuses by default (every NFS request then
#     fails NFS3ERR_PERM); the shares on a tmpfs of the host (`--bind=DIR:/srv`), because
#     an overlay gives no file handles without nfs_export=on (mounts fail MNT3ERR_ACCES);
#   - a file bound over /proc (here a swapped /proc/cpuinfo, a hardware change) is
#     mounted from inside the container: its source is a path in the container's root;
#   - commands run with `nsenter -t <container's PID 1> -a` (machinectl and systemd-run -M
#     need a host systemd), after `systemctl is-system-running` says running or degraded;
#   - `systemctl reboot` inside makes nspawn exit 133: the test boots it again on the
#     same overlay; power off with `systemctl poweroff`, or SIGRTMIN+4 to PID 1, and the
#     cgroup is killed as a last resort. The EXIT trap does that, removes the network
#     namespace and the cgroups; the mounts go with the test's private mount namespace.
# shellcheck disable=SC2016 # single-quoted strings are for the container's shell
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../cli/lib.sh
. "$here/../cli/lib.sh"
# shellcheck source=lib.sh
. "$here/lib.sh"
PLAN=49
# What the container needs beyond the root tests/pkg/t_root.sh uses (samba-vfs-modules:
# the Time Machine share's fruit stack).
CT_PKGS=(systemd systemd-sysv dbus nfs-ganesha nfs-ganesha-vfs samba-vfs-modules)
TAG=${NASTUNE_LAB_PREFIX:-}nastune-sd$$
BOOT_TIMEOUT=${NASTUNE_SD_BOOT_TIMEOUT:-300}

bail() { echo "1..1"; echo "not ok 1 - $1"; shift; for l in "$@"; do echo "# $l"; done; exit 1; }

# ---- outside: the package, the cached root, a private mount namespace ----

if [[ ${1:-} != --inside ]]; then
	if [[ $(id -u) -ne 0 ]]; then
		[[ -n ${CI:-} ]] && bail "the systemd test needs root, and CI must run it"
		echo "1..1"
		echo "ok 1 - the package under systemd # SKIP not root (nspawn, overlays, netns)"
		exit 0
	fi
	for c in systemd-nspawn nsenter ip debootstrap unshare dpkg-buildpackage; do
		command -v "$c" >/dev/null || bail "$c is missing — run: make deps"
	done
	pkg_deb_and_deps
	# Held for the whole run: the cache is the overlay's lower layer, and t_root.sh or
	# another run may want to extend it.
	mkdir -p "$(dirname "$ROOT")" || bail "cannot make $(dirname "$ROOT")"
	exec 9>"$ROOT.lock"
	flock -w 900 9 || bail "another user of $ROOT held $ROOT.lock for 15 minutes"
	log=$(NASTUNE_PKG_ROOT_LOCKED=$ROOT "$here/bookworm-root" ensure "${deps[@]}" \
		"${CT_PKGS[@]}" 2>&1) || bail "the bookworm root could not be built" "$(tail -n 20 <<<"$log")"
	[[ -n $log ]] && sed 's/^/# /' <<<"$log"
	work=$(mktemp -d /var/tmp/nastune-sd.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	unshare --mount --propagation private bash "$0" --inside "$work" "$deb"
	exit $?
fi

# ---- inside: an overlay over the cached root, a network namespace, a container ----

work=$2 deb=$3
m=$work/merged
netns=$TAG
# The container's own cgroup, in every hierarchy systemd uses: name=systemd and the v2
# "unified" one on a hybrid host like these, or the one v2 tree.
if [[ $(stat -fc %T /sys/fs/cgroup) = cgroup2fs ]]; then
	cgdirs=("/sys/fs/cgroup/$TAG") cgv2=/sys/fs/cgroup/$TAG
else
	cgdirs=("/sys/fs/cgroup/systemd/$TAG") cgv2=""
	if mountpoint -q /sys/fs/cgroup/unified; then
		cgdirs+=("/sys/fs/cgroup/unified/$TAG") cgv2=/sys/fs/cgroup/unified/$TAG
	fi
fi
nspawn_pid="" pid1=""
nspawn_extra=()	# more systemd-nspawn options for the next boot

# Stops the container if it runs (poweroff, then SIGRTMIN+4, then the cgroup killed),
# removes the network namespace and the cgroups. Safe to run twice.
cleanup() {
	if [[ -n $nspawn_pid ]] && kill -0 "$nspawn_pid" 2>/dev/null; then
		[[ -n $pid1 ]] && kill -s RTMIN+4 "$pid1" 2>/dev/null
		for _ in $(seq 150); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
		if kill -0 "$nspawn_pid" 2>/dev/null; then
			echo "# the container did not power off within 30 s: killing its cgroup"
			{ [[ -n $cgv2 ]] && echo 1 >"$cgv2/cgroup.kill"; } 2>/dev/null ||
				kill -9 "$nspawn_pid" 2>/dev/null
		fi
		wait "$nspawn_pid" 2>/dev/null
	fi
	nspawn_pid=""
	ip netns del "$netns" 2>/dev/null
	local d
	for d in "${cgdirs[@]}"; do
		[[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mount -t tmpfs -o size=1g,mode=0755 tmpfs "$work" || bail "cannot mount a tmpfs on $work"
mkdir -p "$work/upper" "$work/work" "$m"
mount -t overlay overlay -o "lowerdir=$ROOT,upperdir=$work/upper,workdir=$work/work" "$m" ||
	bail "cannot mount an overlay over $ROOT"
rm -f "$m/usr/sbin/policy-rc.d"
for u in proc-fs-nfsd.mount run-rpc_pipefs.mount nfs-server.service; do
	ln -sf /dev/null "$m/etc/systemd/system/$u"
done
echo nastune-sd >"$m/etc/hostname"
if ! { ip netns add "$netns" && ip -n "$netns" link add sd0 type veth peer name sd1 &&
	ip -n "$netns" addr add 198.18.16.1/24 dev sd0 && ip -n "$netns" link set lo up &&
	ip -n "$netns" link set sd0 up && ip -n "$netns" link set sd1 up; }; then
	bail "cannot make the network namespace $netns"
fi
# The shares live on a file system of their own, as on a NAS: Ganesha's VFS backend needs
# file handles, which an overlay gives only with nfs_export=on (its mount is refused
# MNT3ERR_ACCES otherwise). The guest share is writable by the guest account (tune
# measures it); the Time Machine share belongs to its user.
mkdir -p "$work/srv/media" "$work/srv/tm"
chown 65534:65534 "$work/srv/media" && chmod 1777 "$work/srv/media"
chown "$(awk -F: '$1 == "backup" {print $3 ":" $4}' "$m/etc/passwd")" "$work/srv/tm"
for d in "${cgdirs[@]}"; do
	mkdir -p "$d" || bail "cannot make the cgroup $d"
done

# boot: starts the container and waits for its systemd to finish booting. Sets pid1 and
# boot_state; returns 1 when it did not come up (the console log is shown).
boot() {
	local p st
	pid1="" boot_state=""
	# shellcheck disable=SC2016 # for the inner shell
	# Ganesha's VFS backend opens files by handle: nspawn's seccomp filter refuses
	# open_by_handle_at unless allowed (every NFS request then fails NFS3ERR_PERM).
	sh -c 'name=$1 dir=$2 ns=$3 w=$4 cgs=$5
		shift 5
		for d in $cgs; do echo $$ >"$d/cgroup.procs" || exit 1; done
		exec systemd-nspawn -q -D "$dir" -M "$name" -b --register=no --keep-unit \
			--network-namespace-path="/run/netns/$ns" --bind="$w/srv:/srv" \
			--system-call-filter=open_by_handle_at --console=pipe "$@"' \
		sh "$TAG" "$m" "$netns" "$work" "${cgdirs[*]}" "${nspawn_extra[@]}" </dev/null \
		>>"$work/console.log" 2>&1 &
	nspawn_pid=$!
	for _ in $(seq 100); do
		for p in $(pgrep -P "$nspawn_pid"); do
			[[ $(awk '/^NSpid:/ {print $NF}' "/proc/$p/status" 2>/dev/null) = 1 ]] &&
				pid1=$p
		done
		[[ -n $pid1 ]] && break
		kill -0 "$nspawn_pid" 2>/dev/null || break
		sleep 0.1
	done
	if [[ -z $pid1 ]]; then
		tail -n 20 "$work/console.log" | sed 's/^/#   console: /'
		return 1
	fi
	for _ in $(seq $((BOOT_TIMEOUT * 2))); do
		st=$(nsenter -t "$pid1" -a systemctl is-system-running 2>/dev/null)
		case $st in
		running | degraded) break ;;
		esac
		kill -0 "$nspawn_pid" 2>/dev/null || break
		sleep 0.5
	done
	boot_state=$st
	[[ $st = running || $st = degraded ]] && return 0
	echo "#   systemctl is-system-running: '$st' after ${BOOT_TIMEOUT} s"
	tail -n 20 "$work/console.log" | sed 's/^/#   console: /'
	return 1
}
# reboot: systemctl reboot inside; nspawn exits 133 and the container boots again.
reboot_ct() {
	local rc
	ct systemctl reboot
	wait "$nspawn_pid"
	rc=$?
	nspawn_pid=""
	[[ $rc -eq 133 ]] || { echo "#   nspawn exited $rc on reboot, not 133"; return 1; }
	boot
}
# ct CMD...: runs CMD in the container with a clean environment; sets $out (stdout and
# stderr together) and $rc.
ct() {
	out=$(nsenter -t "$pid1" -a /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@" 2>&1 </dev/null)
	rc=$?
}
diag() { tail -n "${2:-15}" <<<"$1" | sed 's/^/#   /'; }
check() { ok "$rc" "$1"; [[ $rc -eq 0 ]] || diag "$out"; }
has() { grep -qF -- "$1" <<<"$out"; }
prop() { nsenter -t "$pid1" -a systemctl show -P "$2" "$1" 2>/dev/null; }
# jcount UNIT REGEX: how many of UNIT's journal lines (all boots) match REGEX.
jcount() {
	nsenter -t "$pid1" -a journalctl -q --no-pager -o cat -u "$1" 2>/dev/null | grep -cE "$2"
}
sql() { nsenter -t "$pid1" -a sqlite3 -batch -noheader /var/lib/nastune/state.db "$1" 2>/dev/null; }
failed_units() { nsenter -t "$pid1" -a systemctl --failed --no-legend --plain 2>/dev/null |
	awk '{print $1}' | tr '\n' ' '; }

plan $PLAN

# -- boot --
boot
ok $? "bookworm boots with systemd as PID 1 in systemd-nspawn (state: ${boot_state:-none})"
if [[ -z $pid1 || -z $boot_state ]]; then
	echo "# the container did not boot: nothing else can be checked"
	for _ in $(seq $((PLAN - 1))); do ok 1 "skipped: no container"; done
	exit 1
fi
is "$(failed_units)" "" "no unit failed at boot"
ct systemctl is-active smbd nmbd avahi-daemon nfs-ganesha rpcbind
check "smbd, nmbd, avahi-daemon, nfs-ganesha and rpcbind run under systemd"

# -- install, and the postinst hook with an edited configuration --
cp "$deb" "$m/var/tmp/nastune.deb" && chmod 644 "$m/var/tmp/nastune.deb"
ct apt-get install -y -q /var/tmp/nastune.deb
check "apt-get installs the package in the running system"
has "is still the shipped example, so nothing was applied"
ok $? "postinst leaves the untouched example alone"
ct nastune --json status
backend=$(python3 -c 'import json,sys
print(" ".join(s["backend"] for s in json.load(sys.stdin)["services"]))' <<<"$out" 2>/dev/null)
[[ -n $backend && $backend = "systemd"* && $backend != *pidfile* ]]
ok $? "the service backend is systemd when PID 1 is systemd (status: $backend)"

site() {
	cat >"$m/etc/nastune/nastune.conf" <<CONF
server = { name = "sdtest"; };
protocols = { nfs = { server = "ganesha"; }; };
users = ( { name = "backup"; } );
shares = (
  { name = "Media"; path = "/srv/media"; protocols = ["smb", "nfs"]; guest = true;
    comment = "$1"; nfs = { clients = ["127.0.0.1", "198.18.16.0/24"]; }; },
  { name = "TimeMachine"; path = "/srv/tm"; valid_users = ["backup"];
    time_machine = { enabled = true; max_size = "1T"; }; }
);
tuning = { budget = "10s";$2 };
CONF
}
site "first" ""
ct dpkg-reconfigure nastune
check "postinst (dpkg-reconfigure) with an edited configuration exits 0"
has "applied as generation 1"
ok $? "postinst applied it as generation 1"
grep -q "comment = first" "$m/etc/samba/smb.conf" &&
	grep -q 'Path = "/srv/media"' "$m/etc/ganesha/ganesha.conf" &&
	[[ -f $m/etc/avahi/services/nastune.service ]]
r=$?
ok $r "smb.conf, ganesha.conf and the Avahi service are nastune's"
[[ $r -eq 0 ]] || { grep -n "comment\|Path" "$m/etc/samba/smb.conf" "$m/etc/ganesha/ganesha.conf"; ls "$m/etc/avahi/services"; } | sed 's/^/#   /' 
ct systemctl is-active smbd nfs-ganesha avahi-daemon
check "smbd, nfs-ganesha and avahi-daemon are active after the hook's apply"

# -- apply reloads through systemctl --
site "second" ""
reloads=$(jcount smbd '^Reloading ')
smb_pid=$(prop smbd MainPID)
ct nastune apply
check "apply of a changed share comment exits 0"
is "$(prop smbd MainPID)" "$smb_pid" "smbd's main PID is unchanged: reloaded, not restarted"
[[ $(jcount smbd '^Reloading ') -gt $reloads ]]
ok $? "smbd's journal shows systemd reloading it (systemctl reload-or-restart)"
is "$(nsenter -t "$pid1" -a testparm -s --parameter-name=comment --section-name=Media \
	2>/dev/null)" "second" "smbd's configuration has the new comment"

# -- a restart-class knob restarts through systemctl restart --
g_pid=$(prop nfs-ganesha MainPID)
starts=$(jcount nfs-ganesha '^Started ')
site "second" ' knobs = { nfs = { threads = "16"; }; };'
ct nastune apply
check "apply of nfs.threads (a restart-class knob) exits 0"
grep -q "RPC_Ioq_ThrdMax = 16" "$m/etc/ganesha/ganesha.conf"
ok $? "ganesha.conf sets RPC_Ioq_ThrdMax = 16"
new=$(prop nfs-ganesha MainPID)
[[ -n $new && $new != 0 && $new != "$g_pid" && $(prop nfs-ganesha ActiveState) = active ]]
ok $? "nfs-ganesha runs with a new main PID ($g_pid -> $new): restarted"
[[ $(jcount nfs-ganesha '^Started ') -gt $starts ]]
ok $? "nfs-ganesha's journal shows systemd starting it again (systemctl restart)"

# -- nastune-agent.service starts when enabled --
ct systemctl enable --now nastune-agent.service
check "systemctl enable --now nastune-agent.service exits 0"
[[ $(prop nastune-agent ActiveState) != active &&
	$(prop nastune-agent ConditionResult) = no ]]
ok $? "without /etc/nastune/agent.key the agent does not start (its condition is unmet)"
ct nastune pair --token-file /etc/nastune/agent.key
check "nastune pair makes /etc/nastune/agent.key"
ct systemctl restart nastune-agent.service
for _ in $(seq 50); do nsenter -t "$pid1" -n ss -Htln 'sport = :7048' 2>/dev/null | grep -q . &&
	break; sleep 0.2; done
[[ $(prop nastune-agent ActiveState) = active ]] &&
	nsenter -t "$pid1" -n ss -Htln 'sport = :7048' | grep -q .
ok $? "with the key the agent runs and listens on port 7048"

# -- nastune-retune.service at boot --
tunes() { sql "SELECT count(*) FROM tune_results WHERE json_extract(json, '\$.status') = 'done'"; }
tunes=$(tunes)
reboot_ct
ok $? "the container reboots (nspawn exits 133) and boots again (${boot_state:-none})"
# retune_wait: until this boot's nastune-retune.service has ended (it may still be tuning
# once the boot is done: it does not hold the boot).
retune_wait() {
	local st
	for _ in $(seq 1200); do
		st=$(prop nastune-retune ActiveState)
		[[ $st = activating || $st = active || $st = deactivating ]] || break
		sleep 0.5
	done
}
retune_ok() {
	retune_wait
	[[ $(prop nastune-retune Result) = success && $(prop nastune-retune ExecMainStatus) = 0 &&
		-n $(prop nastune-retune ExecMainExitTimestamp) ]]
	ok $? "$1"
	[[ $(prop nastune-retune Result) = success ]] ||
		diag "$(nsenter -t "$pid1" -a journalctl -b -q --no-pager -u nastune-retune.service)" 25
}
retune_ok "nastune-retune.service ran at boot and succeeded"
t1=$(tunes)
[[ -n $tunes && $t1 -gt $tunes ]]
ok $? "never tuned before, it tuned to the end ($tunes -> $t1 finished tunes)"
mu=$(prop multi-user.target ActiveEnterTimestampMonotonic)
te=$(prop nastune-retune ExecMainExitTimestampMonotonic)
[[ ${mu:-0} -gt 0 && ${te:-0} -gt $mu ]]
ok $? "the boot reached multi-user.target before the tune ended: the tune does not hold it"
[[ $(prop nastune-agent ActiveState) = active ]]
ok $? "the enabled agent started at boot"
g1=$(sql 'SELECT count(*) FROM generations')
reboot_ct
ok $? "a second reboot (${boot_state:-none})"
retune_ok "nastune-retune.service ran again and succeeded"
ct journalctl -b -q --no-pager -o cat -u nastune-retune.service
has "nothing to do: the hardware is unchanged since tune"
ok $? "with the hardware unchanged it says there is nothing to do"
[[ $(tunes) = "$t1" && $(sql 'SELECT count(*) FROM tune_results') = "$t1" && $(sql 'SELECT count(*) FROM generations') = "$g1" ]]
ok $? "and records no tune and no generation"

# A hardware change while powered off: the container boots with another CPU model in
# /proc/cpuinfo (part of the hardware fingerprint; the real one cannot change here).
# nspawn mounts what goes under /proc from inside the container: the source is the
# container's path.
ct systemctl poweroff
wait "$nspawn_pid"
nspawn_pid=""
mkdir -p "$m/var/lib/nastune-test"
sed 's/^model name.*/model name\t: nastune test CPU (swapped while off)/' /proc/cpuinfo \
	>"$m/var/lib/nastune-test/cpuinfo"
nspawn_extra=(--bind-ro=/var/lib/nastune-test/cpuinfo:/proc/cpuinfo)
boot
ok $? "powered off, it boots again with another CPU model (${boot_state:-none})"
retune_ok "nastune-retune.service ran at boot and succeeded"
ct journalctl -b -q --no-pager -o cat -u nastune-retune.service
t2=$(tunes)
[[ $t2 -gt $t1 ]] && ! has "nothing to do"
ok $? "the hardware changed, so it tuned again ($t1 -> $t2 finished tunes)"
[[ $t2 -gt $t1 ]] || diag "$out"

# -- a power cut between two installs, then a boot: repaired before smbd starts --
# The package is built with -DNDEBUG, without the crash points: the tree's own build (the
# same bookworm libraries), which has them, is killed inside the container right after
# its first install, as a power cut would stop it. smbd then notes, as it starts, the
# files it is about to read (a drop-in's ExecStartPre).
prev=$(sql 'SELECT max(id) FROM generations')
cp "$BUILD/nastune" "$m/var/tmp/nastune-crash"
mkdir -p "$m/etc/systemd/system/smbd.service.d"
printf '[Service]\nExecStartPre=/bin/sh -c "sha256sum %s >>/var/lib/nastune-test/at-smbd-start"\n' \
	"/etc/samba/smb.conf /etc/ganesha/ganesha.conf" >"$m/etc/systemd/system/smbd.service.d/zz-cut.conf"
site "third" ' knobs = { nfs = { threads = "8"; }; };'
ct env NASTUNE_DEBUG_CRASH=install /var/tmp/nastune-crash --datadir /usr/share/nastune apply
is "$rc" 137 "an apply of a new comment and nfs.threads killed after its first install"
grep -q "comment = third" "$m/etc/samba/smb.conf" && grep -q "RPC_Ioq_ThrdMax = 16" "$m/etc/ganesha/ganesha.conf"
ok $? "it left smb.conf new and ganesha.conf of generation $prev"
ct nastune status
[[ $rc -eq 1 ]] && has "INTERRUPTED: an apply was interrupted" && has "/etc/samba/smb.conf: new" &&
	has "/etc/ganesha/ganesha.conf: generation $prev" && has "\`nastune repair\`"
ok $? "status exits 1 naming each file's generation and \`nastune repair\` (exit $rc)"
[[ $rc -eq 1 ]] || diag "$out"
reboot_ct
ok $? "the container boots again (${boot_state:-none})"
[[ $(prop nastune-repair ConditionResult) = yes && $(prop nastune-repair Result) = success &&
	$(prop nastune-repair ExecMainStatus) = 0 ]]
ok $? "nastune-repair.service ran at boot (its journal was there) and succeeded"
# The order systemd computed, not the unit's text: before ctdb.service too (ctdbd reads the
# /etc/ctdb a repair puts back). ctdb is not installed here; systemd still records the edge
# on its name, both ways.
rb=$(prop nastune-repair Before) ca=$(prop ctdb.service After)
[[ " $rb " = *" ctdb.service "* && " $ca " = *" nastune-repair.service "* ]]
ok $? "systemd orders nastune-repair.service before ctdb.service (its Before=, ctdb's After=)"
[[ " $rb " = *" ctdb.service "* && " $ca " = *" nastune-repair.service "* ]] ||
	diag "nastune-repair Before=$rb
ctdb.service After=$ca"
jl=$(nsenter -t "$pid1" -a journalctl -b -q --no-pager -o short-monotonic -u nastune-repair.service \
	-u smbd.service 2>/dev/null)
sed -nE '/repaired:|Finished (nastune-repair|Repair an interrupted)|Starting (smbd|Samba SMB)|Started (smbd|Samba SMB)/ s/^/#   /p' <<<"$jl"
first() { grep -nE "$1" <<<"$jl" | head -n 1 | cut -d: -f1; }
rep=$(first 'repaired: generation') fin=$(first 'Finished (nastune-repair|Repair an interrupted)')
smb=$(first 'Starting (smbd|Samba SMB)')
rx=$(prop nastune-repair ExecMainExitTimestampMonotonic) sx=$(prop smbd InactiveExitTimestampMonotonic)
[[ -n $rep && -n $fin && -n $smb && $rep -lt $smb && $fin -lt $smb && ${rx:-0} -gt 0 && $rx -le ${sx:-0} ]]
ok $? "the journal shows the repair finished before smbd began to start (lines $rep, $fin < $smb; $rx <= $sx us)"
want=$(sql "SELECT sha256 || '  ' || path FROM files WHERE gen = $prev AND path IN
	('/etc/samba/smb.conf', '/etc/ganesha/ganesha.conf') ORDER BY path DESC")
is "$(tail -n 2 "$m/var/lib/nastune-test/at-smbd-start" 2>/dev/null)" "$want" \
	"when smbd started, smb.conf and ganesha.conf were both generation $prev's"
retune_wait
ct nastune status
[[ $rc -eq 0 ]] && ! has "INTERRUPTED" &&
	has "(repair: generation $prev back after an interrupted apply, nastune $VERSION)"
ok $? "status is clean afterwards and shows the repair as the generation in force (exit $rc)"
[[ $rc -eq 0 ]] || diag "$out"
rm -rf "$m/var/tmp/nastune-crash" "$m/etc/systemd/system/smbd.service.d"
ct systemctl daemon-reload

# Debugging: NASTUNE_SD_HOLD=SECONDS keeps the container up here (nsenter -t PID1 -a ...).
if [[ -n ${NASTUNE_SD_HOLD:-} ]]; then
	echo "# holding the container for $NASTUNE_SD_HOLD s: nsenter -t $pid1 -a bash" >&2
	sleep "$NASTUNE_SD_HOLD"
fi

# -- purge restores generation 0 on the running system --
reloads=$(jcount smbd '^Reloading ')
g_pid=$(prop nfs-ganesha MainPID)
ct apt-get purge -y -q nastune
check "apt-get purge exits 0"
cmp -s "$ROOT/etc/samba/smb.conf" "$m/etc/samba/smb.conf" &&
	cmp -s "$ROOT/etc/ganesha/ganesha.conf" "$m/etc/ganesha/ganesha.conf" &&
	[[ -z $(find "$m/etc/avahi/services" -name 'nastune*') ]]
ok $? "purge restores the distribution's smb.conf and ganesha.conf and removes the Avahi files"
[[ $(jcount smbd '^Reloading ') -gt $reloads && $(prop smbd ActiveState) = active ]]
ok $? "purge reloaded smbd through systemd, and it runs"
# Ganesha reads NFS_CORE_PARAM (nfs.threads is pinned above) only when it starts.
new=$(prop nfs-ganesha MainPID)
[[ -n $new && $new != 0 && $new != "$g_pid" && $(prop nfs-ganesha ActiveState) = active ]]
ok $? "purge restarted nfs-ganesha through systemd ($g_pid -> $new), and it runs"
[[ ! -e $m/etc/nastune && ! -e $m/var/lib/nastune &&
	-z $(find "$m/etc/systemd/system" -name 'nastune*') &&
	$(prop nastune-retune LoadState) = not-found ]]
ok $? "purge removes /etc/nastune, /var/lib/nastune and the units' links"

# -- power off --
ct systemctl poweroff
wait "$nspawn_pid"
rc=$?
nspawn_pid=""
is "$rc" 0 "systemctl poweroff stops the container (nspawn exits 0)"
exit 0
