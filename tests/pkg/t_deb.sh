#!/usr/bin/env bash
# make deb: dpkg-buildpackage -b from a staged copy of the tree, lintian without errors,
# and a package that holds what it should: version, relationships, the conffile, the
# files at their Debian paths, a binary built for /usr/share/nastune without apply's
# test-only crash points, and maintainer scripts that parse. t_root.sh then installs it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../cli/lib.sh
. "$here/../cli/lib.sh"
BUILD=${BUILD:-build}
[[ $BUILD = /* ]] || BUILD=$top/$BUILD
VERSION=$(cat "$top/VERSION")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan 17

for c in dpkg-buildpackage dh lintian; do
	if ! command -v "$c" >/dev/null; then
		echo "Bail out! $c is missing — run: make deps"
		exit 1
	fi
done

before=$(sha256sum "$BUILD/nastune" 2>/dev/null)
log=$(make -C "$top" B="$BUILD" deb 2>&1); rc=$?
is "$rc" 0 "make deb builds the package and lintian finds no error"
[[ $rc -eq 0 ]] || tail -n 25 <<<"$log" | sed 's/^/#   /'
grep -q '^lintian --fail-on error' <<<"$log"
ok $? "make deb ran lintian"
tags=$(grep -E '^[EWIPX]: ' <<<"$log")
! grep -q '^E: ' <<<"$tags"
ok $? "lintian: no error tag"
[[ -z $tags ]] || sed 's/^/#   lintian /' <<<"$tags"

is "$(sha256sum "$BUILD/nastune" 2>/dev/null)" "$before" \
	"the package build leaves the tree's own build alone (a staged copy, its own make)"
deb=$BUILD/deb/nastune_${VERSION}_$(dpkg --print-architecture).deb
[[ -f $deb ]]; ok $? "the .deb is in $(basename "$BUILD")/deb/"
[[ ! -e $top/debian ]]; ok $? "the tree keeps no top-level debian/ (the build stages a copy)"
field() { dpkg-deb -f "$deb" "$1" 2>/dev/null; }
is "$(field Version)" "$VERSION" "the package version is VERSION"
case ", $(field Depends), " in
*", sqlite3, "*", libconfig9"*) r=0 ;; *) r=1 ;; esac
ok $r "Depends: sqlite3 (purge reads the manifest) and the shared libraries"
is "$(field Recommends)" "avahi-daemon, nfs-kernel-server | nfs-ganesha-vfs, samba" \
	"Recommends: the daemons nastune configures"
is "$(field Suggests)" "netatalk" "Suggests: netatalk"

dpkg-deb -e "$deb" "$tmp/ctl" && dpkg-deb -x "$deb" "$tmp/x"
is "$(cat "$tmp/ctl/conffiles")" "/etc/nastune/nastune.conf" "the example configuration is the only conffile"
missing=""
for f in /usr/sbin/nastune /usr/lib/nastune/apply-hook /usr/share/nastune/nastune.conf.example \
	/usr/share/nastune/profiles/default.conf /usr/share/nastune/templates/smb.conf.mustache \
	/lib/systemd/system/nastune-retune.service /lib/systemd/system/nastune-agent.service \
	/usr/share/man/man8/nastune.8.gz /usr/share/man/man5/nastune.conf.5.gz \
	/usr/share/man/man7/nastune-tune.7.gz \
	/usr/share/bash-completion/completions/nastune /usr/share/doc/nastune/copyright; do
	[[ -e $tmp/x$f ]] || missing+=" $f"
done
is "$missing" "" "the package holds the files at their Debian paths"
grep -qx 'ExecStart=/usr/sbin/nastune tune --if-changed' \
	"$tmp/x/lib/systemd/system/nastune-retune.service"
ok $? "the retune unit runs /usr/sbin/nastune tune --if-changed"
# Whole output first: grep -q would stop reading and fail the pipeline with SIGPIPE.
strs=$(strings "$tmp/x/usr/sbin/nastune")
grep -qx /usr/share/nastune <<<"$strs"
ok $? "the binary looks for its data in /usr/share/nastune"
# apply.c's fault-test crash points go with NDEBUG (netif.c's test hooks are not guarded).
[[ -n $strs ]] && ! grep -q "debug crash at" <<<"$strs"
ok $? "apply's test-only crash points are compiled out of the package (NDEBUG)"
bad=""
for s in postinst prerm postrm; do
	[[ -x $tmp/ctl/$s ]] && sh -n "$tmp/ctl/$s" || bad+=" $s"
done
is "$bad" "" "postinst, prerm and postrm are executable and parse"
grep -q 'apply-hook' "$tmp/ctl/postinst" && grep -q 'restore_originals' "$tmp/ctl/postrm" &&
	grep -q 'deb-systemd-helper purge' "$tmp/ctl/postrm"
ok $? "postinst calls the hook; postrm restores the originals and drops the units' state"
