#!/usr/bin/env bash
# A cluster group in nastune.conf: what check refuses (file:line, exit 2, nothing written),
# what render adds for CTDB, and that one configuration renders the same on every node.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan 46

# conf FILE [CLUSTER-LINES...]: a valid cluster configuration, with a cluster group of the
# lines given (default: the good one).
conf() {
	local f=$1
	shift
	local protocols='protocols = { nfs = { enabled = true; server = "ganesha"; }; afp = { enabled = false; }; };'
	local shares='shares = ( { name = "Media"; path = "/cluster/srv/media"; protocols = ["smb", "nfs"]; valid_users = ["alice"]; nfs = { clients = ["192.0.2.0/24"]; }; } );'
	printf '%s\n' "${PROTOCOLS:-$protocols}" 'users = ( { name = "alice"; } );' \
		"${SHARES:-$shares}" >"$f"
	if (($#)); then
		printf '%s\n' "$@" >>"$f"
	else
		cat >>"$f" <<-'EOT'
		cluster = {
		  name = "nas";
		  nodes = ["10.9.0.1", "10.9.0.2", "10.9.0.3"];
		  public_addresses = ["192.0.2.50/24", "192.0.2.51/24 eth1"];
		  interface = "eth0";
		  lock = "/cluster/.ctdb/lock";
		  filesystem = "/cluster";
		};
		EOT
	fi
}

good=$tmp/good.conf
conf "$good"
export NASTUNE_CLUSTER_NODE=10.9.0.2
nt -c "$good" check
is "$rc" 0 "a cluster configuration checks on one of its nodes"; [[ $rc = 0 ]] || echo "# $err"

# This host must be one of the nodes; with no override, an address on no interface here.
NASTUNE_CLUSTER_NODE=10.9.0.7 nt -c "$good" check
is "$rc" 2 "a node list that does not name this host: exit 2"
grep -qE "^$good:[0-9]+: cluster.nodes names no address of this host" <<<"$err"
ok $? "... named with file:line" "$err"
(unset NASTUNE_CLUSTER_NODE; nt -c "$good" check; echo "$rc") | grep -qx 2
ok $? "... also when this host's own interfaces are looked at (10.9.0.x is on none)"
mkdir -p "$tmp/root/cluster/srv/media"
NASTUNE_CLUSTER_NODE=10.9.0.7 nt --root "$tmp/root" -c "$good" apply --no-reload
is "$rc" 2 "apply on a host outside the node list: exit 2"
is "$(find "$tmp/root" -type f | wc -l | tr -d ' ')" 0 "... and nothing was written"

# refuse NAME REGEX LINES...: check exits 2 with REGEX in a file:line message.
refuse() {
	local name=$1 re=$2 f=$tmp/$1.conf
	shift 2
	conf "$f" "$@"
	nt -c "$f" check
	[[ $rc = 2 ]] && grep -qE "^$f:[0-9]+: .*$re" <<<"$err"
	ok $? "check refuses $name (file:line, exit 2)" "rc $rc: $err"
}
refuse public-is-node "public address 10.9.0.3/24 is also node 10.9.0.3's address" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2", "10.9.0.3"];' \
	'  public_addresses = ["192.0.2.50/24", "10.9.0.3/24"]; interface = "eth0";' \
	'  lock = "/cluster/.ctdb/lock"; filesystem = "/cluster"; };'
refuse lock-outside "cluster.lock /var/lock/ctdb is outside the cluster file system" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50/24"]; interface = "eth0";' \
	'  lock = "/var/lock/ctdb"; filesystem = "/cluster"; };'
refuse share-outside "share 'Media' \\(/cluster/srv/media\\) is outside the cluster file system /gluster" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50/24"]; interface = "eth0";' \
	'  lock = "/gluster/.ctdb/lock"; filesystem = "/gluster"; };'
refuse no-lock "cluster.lock is missing" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50/24"]; interface = "eth0"; filesystem = "/cluster"; };'
refuse no-interface "public address 192.0.2.50/24 has no interface" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50/24"]; lock = "/cluster/l"; filesystem = "/cluster"; };'
refuse bad-public "is not a public address" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50"]; interface = "eth0"; lock = "/cluster/l";' \
	'  filesystem = "/cluster"; };'
SHARES='shares = ( { name = "TM"; path = "/cluster/tm"; protocols = ["smb"]; valid_users = ["alice"]; time_machine = { enabled = true; }; } );' \
refuse time-machine "Time Machine share, which nastune does not support on a cluster" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50/24"]; interface = "eth0"; lock = "/cluster/l";' \
	'  filesystem = "/cluster"; };'
PROTOCOLS='protocols = { nfs = { enabled = true; server = "kernel"; }; };' \
refuse kernel-nfs "a cluster serves NFS with NFS-Ganesha only" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50/24"]; interface = "eth0"; lock = "/cluster/l";' \
	'  filesystem = "/cluster"; };'

# A share at the cluster file system's root, or reaching nastune's record: its users could
# replace the record every node's root follows.
SHARES='shares = ( { name = "Media"; path = "/cluster"; protocols = ["smb"]; valid_users = ["alice"]; } );' \
refuse share-at-fs-root "share 'Media' \\(/cluster\\) is the cluster file system's root, which holds nastune's cluster record /cluster/.nastune" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50/24"]; interface = "eth0"; lock = "/cluster/l";' \
	'  filesystem = "/cluster"; };'
SHARES='shares = ( { name = "Media"; path = "/cluster/.nastune"; protocols = ["smb"]; valid_users = ["alice"]; } );' \
refuse share-on-record "share 'Media' \\(/cluster/.nastune\\) reaches nastune's cluster record" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50/24"]; interface = "eth0"; lock = "/cluster/l";' \
	'  filesystem = "/cluster"; };'
# Samba and netatalk trim a path's white space, exports do not: two directories, one share.
SHARES='shares = ( { name = "Media"; path = "/cluster/srv/media "; protocols = ["smb", "nfs"]; valid_users = ["alice"]; nfs = { clients = ["192.0.2.0/24"]; }; } );' \
refuse whitespace-path "shares\\[0\\].path '/cluster/srv/media ' has white space at the start or end of a name" \
	'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50/24"]; interface = "eth0"; lock = "/cluster/l";' \
	'  filesystem = "/cluster"; };'
nt -c "$good" render -o "$tmp/r0"
grep -qx '	veto files = /.nastune/' "$tmp/r0/etc/samba/smb.conf"
ok $? "smb.conf vetoes the record's name on a cluster"

# A helper lock needs no path on the file system.
conf "$tmp/helper.conf" 'cluster = { name = "nas"; nodes = ["10.9.0.1", "10.9.0.2"];' \
	'  public_addresses = ["192.0.2.50/24"]; interface = "eth0";' \
	'  lock = "!/usr/libexec/ctdb/ctdb_mutex_ceph_rados_helper ceph client.admin rbd lock";' \
	'  filesystem = "/cluster"; };'
NASTUNE_CLUSTER_NODE=10.9.0.1 nt -c "$tmp/helper.conf" check
is "$rc" 0 "a lock helper (\"!...\") is accepted"

# render: CTDB's files, clustering = yes, Bonjour moved aside and naming the cluster.
nt -c "$good" render -o "$tmp/r1"
is "$rc" 0 "render writes the cluster's files"
is "$(cat "$tmp/r1/etc/ctdb/nodes")" $'10.9.0.1\n10.9.0.2\n10.9.0.3' "nodes lists the private addresses"
is "$(cat "$tmp/r1/etc/ctdb/public_addresses")" $'192.0.2.50/24 eth0\n192.0.2.51/24 eth1' \
	"public_addresses: each with its interface, the group's by default"
grep -qx '	cluster lock = /cluster/.ctdb/lock' "$tmp/r1/etc/ctdb/ctdb.conf"
ok $? "ctdb.conf takes the cluster lock"
grep -qx '	clustering = yes' "$tmp/r1/etc/samba/smb.conf" &&
	grep -qx '	netbios name = NAS' "$tmp/r1/etc/samba/smb.conf"
ok $? "smb.conf: clustering = yes, the cluster's name"
[[ ! -e $tmp/r1/etc/avahi/services/nastune.service ]] &&
	grep -q '<host-name>nas.local</host-name>' "$tmp/r1/etc/nastune/cluster/avahi/nastune.service" &&
	[[ $(cat "$tmp/r1/etc/nastune/cluster/avahi/hosts") = "192.0.2.50 nas.local" ]]
ok $? "Bonjour is staged, naming nas.local, which is the first public address"
# One configuration, the same files on every node.
NASTUNE_CLUSTER_NODE=10.9.0.3 nt -c "$good" render -o "$tmp/r3"
diff -r "$tmp/r1" "$tmp/r3" >/dev/null
ok $? "node 1 and node 3 render byte-identical files"
# apply installs the event script executable (ctdb runs only executable ones).
nt --root "$tmp/root" cluster join
[[ $rc = 0 && $(stat -c %a "$tmp/root/etc/nastune/cluster.key") = 600 ]]
ok $? "cluster join makes this node's key, 0600" "$err"
NASTUNE_CLUSTER_NODE=10.9.0.2 nt --root "$tmp/root" -c "$good" apply --no-reload
is "$rc" 0 "apply on a node (--root, --no-reload)"; [[ $rc = 0 ]] || echo "# $err"
[[ -x $tmp/root/etc/ctdb/events/legacy/90.nastune.script ]]
ok $? "the event script is installed executable"

# ---- the record: root's by proof, signed, never run ----
r=$tmp/root
rec=$r/cluster/.nastune/cluster
sums() { (cd "$r" && find etc -type f -exec sha256sum {} + | sort -k2); }
[[ -f $rec/desired && $(stat -c %a "$rec") = 700 ]] && grep -q '"mac"' "$rec/desired"
ok $? "apply published a signed record in a 0700 directory"
id=$(jq -r .id "$rec/desired")
# follow NODE: `cluster follow` as node NODE of the same root; sets rc, out, err.
follow() { NASTUNE_CLUSTER_NODE=$1 nt --root "$r" -c "$good" cluster follow; }
NASTUNE_CLUSTER_NODE=10.9.0.2 nt --root "$r" -c "$good" status --json
[[ $rc = 1 && $(jq -r .cluster.consistent <<<"$out") = false ]]
ok $? "status exits 1 while nodes are inconsistent (two have applied nothing)" "$rc $out"

# A forged id: the text under a signed id replaced.
before=$(sums)
cp "$rec/config/$id.conf" "$tmp/saved.conf"
printf 'services = { backend = "pidfile"; nfs = { start = "/bin/touch %s/pwned"; }; };\n' "$tmp" >>"$rec/config/$id.conf"
follow 10.9.0.1
[[ $rc = 1 && ! -e $tmp/pwned && $(sums) = "$before" ]] &&
	grep -q "config/$id.conf is not configuration $id (its content hashes to" <<<"$err"
ok $? "follow refuses a configuration whose content is not its id, touching nothing" "$err"
cp "$tmp/saved.conf" "$rec/config/$id.conf"

# A mis-signed, then an unsigned desired.
cp "$rec/desired" "$tmp/desired.good"
jq '.from = "10.9.0.3"' "$tmp/desired.good" >"$rec/desired"
follow 10.9.0.1
[[ $rc = 1 && $(sums) = "$before" ]] && grep -q "desired is not signed with this node's key" <<<"$err"
ok $? "follow refuses a mis-signed desired, naming it" "$err"
NASTUNE_CLUSTER_NODE=10.9.0.2 nt --root "$r" -c "$good" status --json
[[ $rc = 1 && $(jq -r .cluster.consistent <<<"$out") = false ]] &&
	jq -r .cluster.record_error <<<"$out" | grep -q "not signed with this node's key"
ok $? "status exits 1 and names the refused record" "$rc $out"
jq 'del(.mac)' "$tmp/desired.good" >"$rec/desired"
follow 10.9.0.1
[[ $rc = 1 ]] && grep -q "desired is unsigned" <<<"$err"
ok $? "follow refuses an unsigned desired" "$err"
# A record signed with another cluster's key.
mkdir -p "$tmp/other/etc/nastune"
nt --root "$tmp/other" cluster join
cp "$tmp/desired.good" "$rec/desired"
cp "$r/etc/nastune/cluster.key" "$tmp/key.good"
cp "$tmp/other/etc/nastune/cluster.key" "$r/etc/nastune/cluster.key"
follow 10.9.0.1
[[ $rc = 1 ]] && grep -q "desired is not signed with this node's key" <<<"$err"
ok $? "a node with another key refuses the record" "$err"
cp "$tmp/key.good" "$r/etc/nastune/cluster.key"

# A truncated desired: status says corrupt (exit 1), apply publishes over it.
head -c 40 "$tmp/desired.good" >"$rec/desired"
NASTUNE_CLUSTER_NODE=10.9.0.2 nt --root "$r" -c "$good" status
[[ $rc = 1 ]] && grep -q "RECORD REFUSED: .*desired is truncated or garbled" <<<"$out"
ok $? "status names a truncated record and exits 1" "$rc $out"
NASTUNE_CLUSTER_NODE=10.9.0.2 nt --root "$r" -c "$good" apply --no-reload
[[ $rc = 0 && $(jq -r .generation "$rec/desired") = 2 ]] && grep -q "publishes its configuration over it" <<<"$err"
ok $? "apply publishes over a truncated record (generation 2)" "$rc $err"

# A FIFO among the nodes' reports blocks nothing.
mkfifo "$rec/nodes/10.9.0.3"
NASTUNE_CLUSTER_NODE=10.9.0.2 timeout 20 "$NASTUNE" --datadir "$top" --root "$r" -c "$good" --json status >"$tmp/st.json" 2>/dev/null
rc=$?
[[ $rc = 1 ]] && jq -r '.cluster.inconsistent[] | select(.address == "10.9.0.3") | .why' "$tmp/st.json" | grep -q "is not a regular file"
ok $? "a FIFO at nodes/ADDR: status returns (exit $rc) and names it" "$(cat "$tmp/st.json")"
rm -f "$rec/nodes/10.9.0.3"

# The record's strings reach the terminal escaped.
NASTUNE_CLUSTER_NODE=10.9.0.1 nt --root "$r" -c "$good" cluster follow
python3 - "$rec/nodes/10.9.0.1" <<'PY'
import json, sys
p = sys.argv[1]; d = json.load(open(p)); d["error"] = "\x1b]2;owned\x07"; json.dump(d, open(p, "w"))
PY
NASTUNE_CLUSTER_NODE=10.9.0.2 nt --root "$r" -c "$good" status
! grep -q $'\x1b' <<<"$out" && grep -q "10.9.0.1.*is not signed" <<<"$out"
ok $? "status escapes the record's strings and refuses an edited report" "$out"

# A configuration that changes what a node runs is refused by the others.
sed 's|^services.*||' "$good" >"$tmp/evil.conf"
printf 'services = { backend = "pidfile"; nfs = { start = "/bin/touch %s/pwned"; }; };\n' "$tmp" >>"$tmp/evil.conf"
NASTUNE_CLUSTER_NODE=10.9.0.2 nt --root "$r" -c "$tmp/evil.conf" apply --no-reload
before=$(sums)
follow 10.9.0.3
[[ $rc = 1 && ! -e $tmp/pwned ]] && grep -q "changes services.nfs.start, which a node takes from its own nastune.conf only: refused" <<<"$err"
ok $? "follow refuses a record that changes services.nfs.start" "$err"

# A follow that finds another running says so and exits non-zero.
exec 8>"$r/var/lib/nastune/cluster-follow.lock"
flock -n 8
follow 10.9.0.2
exec 8>&-
[[ $rc = 1 ]] && grep -q "another \`nastune cluster follow\` runs on this node" <<<"$err"
ok $? "a second follow exits 1 and says another runs" "$err"

# The record's directories must be root's alone: a 1777 cluster root, a user's .nastune, a
# user's .nastune under a 1777 root, a link; apply refuses before changing anything.
for c in sticky user both link; do
	r2=$tmp/$c
	mkdir -p "$r2/cluster/srv/media" "$r2/etc/nastune"
	cp "$r/etc/nastune/cluster.key" "$r2/etc/nastune/"
	case $c in
	sticky) chmod 1777 "$r2/cluster"; want="is writable by its group or others \(mode 1777\)" ;;
	user) mkdir -p "$r2/cluster/.nastune"; chown 65534 "$r2/cluster/.nastune"; want="/cluster/.nastune is owned by uid 65534, not root" ;;
	both) chmod 1777 "$r2/cluster"; mkdir -m 0777 "$r2/cluster/.nastune"; chown 65534 "$r2/cluster/.nastune"; want="is writable by its group or others \(mode 1777\)" ;;
	link) mkdir -p "$tmp/elsewhere"; ln -s "$tmp/elsewhere" "$r2/cluster/.nastune"; want="/cluster/.nastune is a symbolic link or not a directory" ;;
	esac
	NASTUNE_CLUSTER_NODE=10.9.0.2 nt --root "$r2" -c "$good" apply --no-reload
	[[ $rc = 1 && ! -e $r2/etc/samba/smb.conf && -z $(ls -A "$tmp/elsewhere" 2>/dev/null) &&
		-z $(ls -A "$r2/cluster/.nastune" 2>/dev/null) ]] &&
		grep -qE "$want" <<<"$err"
	ok $? "apply refuses a record under $c ($want), touching nothing" "$rc $err"
done
