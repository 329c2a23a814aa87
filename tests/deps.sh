#!/usr/bin/env bash
# tests/deps.sh - every Debian package the build, the tests, the lab and the tools need.
# Run by `make deps` (and so by .ci/run) as root on Debian 12. Keep it idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(
	# build
	build-essential pkg-config clang libclang-rt-14-dev clang-format
	libconfig-dev libnl-3-dev libnl-route-3-dev libavahi-client-dev libsmbclient-dev
	libnfs-dev libsqlite3-dev libjansson-dev libssl-dev libcmocka-dev
	# tests: real daemons and their checkers (samba-vfs-modules is only a Recommends of
	# samba, and without it every share with fruit/streams_xattr/catia is refused)
	samba samba-vfs-modules samba-common-bin smbclient libnfs-utils nfs-ganesha nfs-ganesha-vfs rpcbind
	avahi-daemon avahi-utils dbus python3 diffutils
	# cli/t_apply_noop: the postinst no-op writes nothing, seen syscall by syscall
	strace
	# bench report test: the HTML page rendered headless to a PNG
	chromium
	# the lab: namespaces, links, shaping, the trixie root for afpd
	iproute2 ethtool iperf3 debootstrap util-linux procps psmisc kmod iputils-ping
	# MTU tests: a peer that drops all ICMP
	nftables
	# scratch-directory tests: a FUSE pool as OMV boxes build them (tests/cli/t_scratch_local.sh)
	mergerfs
	# the lab (tests/lab): trixie keys for debootstrap, nfs-common (ganesha's dirs), users'
	# password hashes (openssl), DHX2 login in the lab's AFP client (python3-cryptography)
	debian-archive-keyring gpgv wget nfs-common openssl python3-cryptography
	# clients nastune did not write (lab/t_indep): Samba's smbtorture, an SMB client that
	# speaks AAPL (impacket) and an mDNS stack that is not avahi (zeroconf)
	samba-testsuite python3-impacket python3-zeroconf
	# the cluster lab (tests/lab/t_cluster.sh): CTDB, and jq to read status --json
	ctdb jq
	# packaging (make deb, tests/pkg): the build and lint tools, the man page and unit
	# checkers (systemd for systemd-analyze; no systemd runs on the host: tests/pkg/t_systemd boots one in systemd-nspawn), completion, and sqlite3,
	# which the package's postrm uses
	dpkg-dev debhelper lintian fakeroot binutils man-db groff-base bash-completion systemd
	# tests/pkg/t_systemd.sh: boots the package's system with systemd as PID 1 (systemd-nspawn)
	systemd-container
	sqlite3
)
# Only what is missing is installed, so `make check` runs this every time: a package removed
# since the last run (samba-vfs-modules, say) comes back instead of failing the tests.
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "deps: installing ${missing[*]}"
if [ "${NASTUNE_DEPS_NO_UPDATE:-}" != 1 ]; then apt-get update -q; fi
apt-get install -y -q --no-install-recommends "${missing[@]}"
