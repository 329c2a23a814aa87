#!/usr/bin/env bash
# sysctl values restored exactly: nastune records the kernel's own value of a
# sys.* key before it first sets it, and puts exactly that value back when no generation
# sets the key any more (a key dropped, a rollback, a tune trial undone) — not a hard-coded
# default, and not left at the trial's value. Real kernel keys: net.ipv4.tcp_rmem/tcp_wmem
# are per network namespace, so this runs in a private one, with /etc and /var as overlays
# and /run a tmpfs in a private mount namespace: nastune runs without --root (sysctl is
# loaded only for the real system) and the host is not touched. Needs root, as in CI.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d /var/tmp/nastune-sysctl.XXXXXX); trap 'rm -rf "$tmp"' EXIT
plan 9

if [ "$(id -u)" -ne 0 ] || ! unshare -m -n true 2>/dev/null; then
	for i in $(seq 9); do echo "ok $i # SKIP needs root and namespaces (CI runs it as root)"; done
	exit 0
fi

mkdir -p "$tmp/etc.u" "$tmp/etc.w" "$tmp/var.u" "$tmp/var.w"
conf() {	# conf FILE KNOBS: a NAS with no shares whose tuning pins the given sys knobs
	cat >"$1" <<CONF
protocols = { smb = { enabled = false; }; nfs = { enabled = false; }; afp = { enabled = false; }; };
services = { backend = "pidfile"; };
tuning = { knobs = { sys = { $2 }; }; };
CONF
}
conf "$tmp/a.conf" 'tcp_rmem = "4096 131072 16777216";'
conf "$tmp/b.conf" 'tcp_wmem = "4096 65536 16777216";'

export top tmp NASTUNE
unshare -m -n --propagation private bash -s <<'INNER'
. "$top/tests/cli/lib.sh"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$tmp/etc.u,workdir=$tmp/etc.w" /etc || exit 1
mount -t overlay overlay -o "lowerdir=/var,upperdir=$tmp/var.u,workdir=$tmp/var.w" /var || exit 1
mount -t tmpfs tmpfs /run || exit 1
rm -rf /var/lib/nastune /etc/sysctl.d/90-nastune.conf
r=/proc/sys/net/ipv4/tcp_rmem w=/proc/sys/net/ipv4/tcp_wmem
val() { tr -s ' \t' '  ' <"$1"; }
# This kernel's own values: neither the knob table's "defaults" nor any candidate.
echo "4096 87380 5000000" >$r
echo "4096 20000 3000000" >$w

nt -c "$tmp/a.conf" apply; [ "$rc" = 0 ] || echo "$err" | sed "s/^/# /"; is "$rc" 0 "apply setting sys.tcp_rmem"
is "$(val $r)" "4096 131072 16777216" "the kernel has the configured tcp_rmem"
grep -qx 'net.ipv4.tcp_rmem = 4096 87380 5000000' /var/lib/nastune/sysctl.orig
ok $? "the kernel's own value was recorded before it was set"

# The next generation drops tcp_rmem and sets tcp_wmem (as a tune trial that moves on does).
nt -c "$tmp/b.conf" apply; is "$rc" 0 "apply dropping sys.tcp_rmem, setting sys.tcp_wmem"
is "$(val $r)" "4096 87380 5000000" "the dropped key is back at the kernel's own value"
is "$(val $w)" "4096 65536 16777216" "the new key is set"

nt -c "$tmp/b.conf" rollback 0; is "$rc" 0 "rollback to generation 0 (no sysctl file)"
is "$(val $w)" "4096 20000 3000000" "tcp_wmem is back at the kernel's own value, not a table default"
is "$(val $r)" "4096 87380 5000000" "tcp_rmem still at the kernel's own value"
INNER
