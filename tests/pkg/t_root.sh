#!/usr/bin/env bash
# The package on a real Debian 12: installs the .deb with apt into a pristine bookworm root
# (tests/pkg/bookworm-root, used through an overlay), then checks what an admin sees —
# --version, check on the example, the postinst hook (twice, then through
# dpkg-reconfigure, then with an invalid configuration and with a failing apply), remove,
# and a purge that restores the distribution's files and leaves nothing else behind (the
# overlay's upper layer is exactly what the package changed). Root only; CI runs it.
# shellcheck disable=SC2016 # single-quoted strings are for the chroot's shell
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../cli/lib.sh
. "$here/../cli/lib.sh"
# shellcheck source=lib.sh
. "$here/lib.sh"
PLAN=32

bail() { echo "1..1"; echo "not ok 1 - $1"; shift; for l in "$@"; do echo "# $l"; done; exit 1; }

# ---- outside: the package, the cached root, a private mount namespace ----

if [[ ${1:-} != --inside ]]; then
	if [[ $(id -u) -ne 0 ]]; then
		[[ -n ${CI:-} ]] && bail "the package install test needs root, and CI must run it"
		echo "1..1"
		echo "ok 1 - the package in a bookworm root # SKIP not root (debootstrap, chroot, overlays)"
		exit 0
	fi
	for c in dpkg-buildpackage debootstrap unshare; do
		command -v "$c" >/dev/null || bail "$c is missing — run: make deps"
	done
	pkg_deb_and_deps
	mkdir -p "$(dirname "$ROOT")" || bail "cannot make $(dirname "$ROOT")"
	exec 9>"$ROOT.lock"
	flock -w 900 9 || bail "another user of $ROOT held $ROOT.lock for 15 minutes"
	log=$(NASTUNE_PKG_ROOT_LOCKED=$ROOT "$here/bookworm-root" ensure "${deps[@]}" 2>&1) ||
		bail "the bookworm root could not be built" "$(tail -n 20 <<<"$log")"
	[[ -n $log ]] && sed 's/^/# /' <<<"$log"
	work=$(mktemp -d /var/tmp/nastune-pkg.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	# The mounts live and die with this namespace, whatever happens to the test.
	unshare --mount --propagation private bash "$0" --inside "$work" "$deb"
	exit $?
fi

# ---- inside: an overlay over the cached root ----

work=$2 deb=$3
m=$work/merged
# The upper layer on a tmpfs: an overlay cannot take its upper layer from another overlay
# (a container's root), and it all goes with the namespace.
mount -t tmpfs -o size=1g,mode=0755 tmpfs "$work" || bail "cannot mount a tmpfs on $work"
mkdir -p "$work/upper" "$work/work" "$m"
mount -t overlay overlay -o "lowerdir=$ROOT,upperdir=$work/upper,workdir=$work/work" "$m" ||
	bail "cannot mount an overlay over $ROOT"
if ! { mount -t proc proc "$m/proc" && mount -t sysfs sysfs "$m/sys" &&
	mount --rbind /dev "$m/dev"; }; then
	bail "cannot mount /proc, /sys and /dev in the root"
fi

plan $PLAN

# in_root CMD...: runs CMD in the root with a clean environment; sets $out (stdout and
# stderr together, as an admin sees them) and $rc.
in_root() {
	out=$(chroot "$m" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@" 2>&1)
	rc=$?
}
# postinst ARGS...: the maintainer script run by hand, with the environment dpkg gives it.
postinst() {
	in_root DPKG_MAINTSCRIPT_PACKAGE=nastune DPKG_MAINTSCRIPT_NAME=postinst \
		/var/lib/dpkg/info/nastune.postinst "$@"
	rc=$?
}
# diag TEXT: the last lines of TEXT as TAP diagnostics.
diag() { tail -n "${2:-15}" <<<"$1" | sed 's/^/#   /'; }
# check DESCRIPTION: ok/not ok from $rc, showing $out when it failed.
check() { ok "$rc" "$1"; [[ $rc -eq 0 && -z ${NASTUNE_PKG_VERBOSE:-} ]] || diag "$out"; }
has() { grep -qF -- "$1" <<<"$out"; }
gens() { chroot "$m" nastune --json status 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["generations"])' 2>/dev/null; }
fsum() { sha256sum "$m$1" 2>/dev/null | cut -d' ' -f1; }

cp "$deb" "$m/tmp/nastune.deb"
chmod 644 "$m/tmp/nastune.deb"

# -- install --
in_root apt-get install -y -q /tmp/nastune.deb
check "apt-get installs the package into a fresh bookworm root"
install_out=$out
grep -q "is still the shipped example, so nothing was applied" <<<"$install_out"
ok $? "postinst says the example is not applied, and where to start"
[[ ! -e $m/var/lib/nastune/state.db && $(fsum /etc/samba/smb.conf) = $(sha256sum <"$ROOT/etc/samba/smb.conf" | cut -d' ' -f1) ]]
ok $? "installing changes no configuration of the system"
in_root nastune --version
is "$out" "nastune $VERSION" "nastune --version"
in_root nastune check
check "nastune check passes on the installed example (data from /usr/share/nastune)"
in_root dpkg-query -W -f '${Conffiles}' nastune
grep -q '^ /etc/nastune/nastune.conf ' <<<"$out"
ok $? "/etc/nastune/nastune.conf is a conffile"
[[ -L $m/etc/systemd/system/multi-user.target.wants/nastune-retune.service &&
	! -e $m/etc/systemd/system/multi-user.target.wants/nastune-agent.service ]]
ok $? "nastune-retune.service is enabled, nastune-agent.service is not"
[[ -f $m/usr/share/man/man8/nastune.8.gz && -f $m/usr/share/man/man5/nastune.conf.5.gz &&
	-f $m/usr/share/bash-completion/completions/nastune && -x $m/usr/lib/nastune/apply-hook ]]
ok $? "man pages, bash completion and the apply hook are installed"

# -- the postinst hook with a site configuration --
cat >"$m/etc/nastune/nastune.conf" <<'CONF'
server = { name = "pkgtest"; };
protocols = { nfs = { server = "kernel"; }; };
users = ( { name = "backup"; } );
shares = (
  { name = "Media"; path = "/srv/media"; protocols = ["smb", "nfs"];
    nfs = { clients = ["192.0.2.0/24"]; }; },
  { name = "TimeMachine"; path = "/srv/tm"; valid_users = ["backup"];
    time_machine = { enabled = true; max_size = "1T"; }; }
);
CONF
# The admin makes the shared directories (exportfs refuses missing ones).
mkdir -p "$m/srv/media" "$m/srv/tm"
postinst configure "$VERSION"
check "postinst with a site configuration exits 0"
has "applied as generation 1"
ok $? "postinst applied it as generation 1"
[[ $(head -c 22 "$m/etc/samba/smb.conf") = "# Generated by nastune" &&
	-f $m/etc/exports.d/nastune.exports && -f $m/etc/avahi/services/nastune.service ]]
ok $? "smb.conf, exports.d/nastune.exports and the Avahi service are nastune's"
is "$(gens)" "[0, 1]" "generation 0 (the originals) and 1 are recorded"
before=$(fsum /etc/samba/smb.conf)$(stat -c %Y "$m/etc/samba/smb.conf")

postinst configure "$VERSION"
check "postinst run a second time exits 0"
has "nothing to do"
ok $? "the second run says there is nothing to do"
is "$(gens)" "[0, 1]" "the second run records no generation"
is "$(fsum /etc/samba/smb.conf)$(stat -c %Y "$m/etc/samba/smb.conf")" "$before" \
	"the second run leaves smb.conf untouched"
in_root dpkg-reconfigure nastune
check "dpkg-reconfigure nastune (a third run) exits 0"
is "$(gens)" "[0, 1]" "dpkg-reconfigure records no generation either"

# -- failures are reported, never fatal to the package --
cp "$m/etc/nastune/nastune.conf" "$work/good.conf"
printf 'server = { name = "bad name"; };\n' >"$m/etc/nastune/nastune.conf"
postinst configure "$VERSION"
check "postinst with an invalid configuration still exits 0"
has "/etc/nastune/nastune.conf:1: server.name" && has "is not valid (the errors are above); nothing was changed"
ok $? "the invalid configuration is reported with file:line and what happened"
# A change to apply (--if-changed with nothing to do never takes the lock), and the lock as
# a directory: apply fails at its first step (exit 1).
sed 's/"pkgtest"/"pkgtest2"/' "$work/good.conf" >"$m/etc/nastune/nastune.conf"
mv "$m/var/lib/nastune/lock" "$work/lock" && mkdir "$m/var/lib/nastune/lock"
postinst configure "$VERSION"
check "postinst with a failing apply still exits 0"
has "apply failed (exit 1"
ok $? "the failed apply is reported with its exit status"
rmdir "$m/var/lib/nastune/lock" && mv "$work/lock" "$m/var/lib/nastune/lock"
cp "$work/good.conf" "$m/etc/nastune/nastune.conf"
is "$(fsum /etc/samba/smb.conf)$(stat -c %Y "$m/etc/samba/smb.conf")" "$before" \
	"the failures left smb.conf untouched"

# -- remove keeps, purge restores --
in_root apt-get remove -y -q nastune
check "apt-get remove exits 0"
[[ ! -e $m/usr/sbin/nastune && -f $m/var/lib/nastune/state.db &&
	-f $m/etc/nastune/nastune.conf && $(fsum /etc/samba/smb.conf) = "${before:0:64}" ]]
ok $? "remove keeps the state, the configuration and the generated files"
in_root apt-get purge -y -q nastune
check "apt-get purge exits 0"
purge_out=$out
has "restored /etc/samba/smb.conf" && has "removed /etc/exports.d/nastune.exports (nastune created it)"
ok $? "purge says what it restored and removed"
cmp -s "$ROOT/etc/samba/smb.conf" "$m/etc/samba/smb.conf" &&
	[[ $(stat -c '%a %u %g' "$ROOT/etc/samba/smb.conf") = $(stat -c '%a %u %g' "$m/etc/samba/smb.conf") ]]
ok $? "purge restores the distribution's smb.conf, content, mode and owner"
[[ ! -e $m/etc/nastune && ! -e $m/var/lib/nastune && ! -e $m/etc/exports.d &&
	-z $(find "$m/etc/avahi/services" -name 'nastune*') ]]
ok $? "purge removes /etc/nastune, /var/lib/nastune and the files (and the directory) nastune created"
in_root dpkg-query -W -f '${db:Status-Abbrev}' nastune
[[ $rc -ne 0 || $out = "un " || -z ${out// /} ]]
ok $? "dpkg no longer knows the package"

# -- nothing else behind: every file the upper layer holds is package-manager
# bookkeeping or identical to the pristine root (a restored original) --
rm -f "$m/tmp/nastune.deb"
rmdir "$m/srv/media" "$m/srv/tm"
left=()
while IFS= read -r -d '' f; do
	p=${f#"$work/upper"}
	case $p in
	/var/lib/dpkg/* | /var/lib/apt/* | /var/log/* | /var/cache/apt/* | /var/cache/debconf/* | \
		/var/cache/ldconfig/* | /etc/ld.so.cache | /root/.*) continue ;;
	# exportfs's own lock files, from running it (the export table itself is checked).
	/var/lib/nfs/.etab.lock | /var/lib/nfs/export-lock) continue ;;
	esac
	if [[ -c $f ]]; then
		left+=("deleted from the distribution: $p")
	elif [[ -L $f ]]; then
		[[ $(readlink "$f") = $(readlink "$ROOT$p" 2>/dev/null) ]] || left+=("symlink: $p")
	elif ! cmp -s "$f" "$ROOT$p" ||
		[[ $(stat -c '%a %u %g' "$f") != $(stat -c '%a %u %g' "$ROOT$p") ]]; then
		left+=("file: $p")
	fi
done < <(find "$work/upper" \( -type f -o -type l -o -type c \) -print0)
is "${#left[@]}" 0 "purge leaves nothing behind but the restored originals"
for l in "${left[@]}"; do echo "#   $l"; done
mapfile -t dirs < <(cd "$work/upper" && find . -type d -empty | sed 's/^\.//' |
	while read -r d; do [[ -d $ROOT$d ]] || echo "$d"; done)
is "${#dirs[@]}" 0 "purge leaves no directory behind"
for d in "${dirs[@]}"; do echo "#   $d"; done
[[ -n ${NASTUNE_PKG_VERBOSE:-} ]] && { diag "$install_out" 40; diag "$purge_out" 40; }
exit 0
