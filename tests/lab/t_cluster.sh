#!/bin/bash
# A three-node CTDB cluster configured by nastune (tests/lab/cluster.conf), one client:
# clustered smbd on every node and one healthy cluster; a file written over SMB through a
# public address read back, the same bytes, through that address over SMB and NFS within
# 60 s of its node losing its link; the others name that node and it rejoins when healed;
# a configuration applied on one node only is named inconsistent by the others, and a
# cluster-wide apply puts every node on it again; a tune on one node measures through a
# public address and its choice becomes every node's generation; an apply one node fails
# or does not answer names it and rolls every node back; Bonjour shows the cluster on
# public addresses only, published once; the node taking an address puts NFS-Ganesha in a
# real grace (an NFSv4 OPEN through it is refused, then works); a share user who replaces
# nastune's record under a writable root is refused by every node, and over SMB finds the
# record by no route on any share; two applies at once, one winner; new public addresses
# taken into service.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
plan 47

CONF=$TOPDIR/tests/lab/cluster.conf
NODES=(node1 node2 node3)
PUBLIC=(198.18.0.31 198.18.0.32 198.18.0.33)
t0=$SECONDS
if ! out=$("$LAB" up --cluster 3 --clients 1 2>&1); then
	echo "Bail out! lab up --cluster 3 failed"
	diag "$out" 40
	exit 1
fi
# The lab's other tests stand on the single server: leave no cluster behind.
trap '[[ -n ${v4pid:-} ]] && kill "$v4pid" 2>/dev/null; "$LAB" down >/dev/null 2>&1; rm -rf "$WORK"' EXIT
echo "# lab up --cluster 3 in $((SECONDS - t0)) s"
nt() { local h=$1; shift; "$LAB" nastune "$h" "$@" 7>&-; }
addr() { "$LAB" addr "$1"; }
A="alice%$(password alice)"

# wait_for SECONDS CMD...: polls CMD every half second; true once it succeeds.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	while ((SECONDS < end)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}
all_ok() { [[ $(on "$1" ctdb -X status | grep -c '|0|0|0|0|0|0|0|0|[YN]|$') = "$2" ]]; }

wait_for 60 all_ok node1 3
ok $? "ctdb: three nodes OK" "$(on node1 ctdb status 2>&1)"
for h in "${NODES[@]}"; do
	# smbd with clustering = yes keeps its databases in CTDB: its locking.tdb is CTDB's.
	tp=$(on "$h" testparm -s --parameter-name=clustering "$("$LAB" root "$h")/etc/samba/smb.conf" 2>/dev/null)
	dbmap=$(on "$h" ctdb getdbmap 2>&1)
	[[ $tp = Yes && $dbmap = *'name:locking.tdb '* &&
		$(on "$h" ss -Hltn 'sport = :445') = *LISTEN* ]]
	ok $? "$h: clustered smbd (clustering = yes, locking.tdb in CTDB, listening)" "$tp $dbmap"
done
js=$(nt node2 status --json 2>/dev/null)
[[ $(jq -r '.cluster.consistent' <<<"$js") = true && $(jq -r '[.cluster.nodes[].state] | join(",")' <<<"$js") = ok,ok,ok ]]
ok $? "status --json on node2: three nodes ok, consistent" "$js"

# bench on a node measures through a public address it holds, as clients reach it.
holds_public() { [[ $(on node1 ip -o -4 addr show lab0) =~ 198\.18\.0\.3[1-3]/ ]]; }
wait_for 30 holds_public
bj=$(nt node1 --json bench --protocol smb --workload seq-write --size 4M --repeat 1 2>/dev/null)
[[ $(jq -r '[.. | .target? // empty | select(startswith("smb://"))] | unique | join(",")' \
	<<<"$bj" 2>/dev/null) =~ ^smb://198\.18\.0\.3[1-3]/ ]]
ok $? "bench on node1 measures through a public address it holds" "$bj"

# Bonjour: the cluster's records resolve to the first public address, and only there.
bonjour=$(on client1 avahi-browse -rtp _smb._tcp 2>/dev/null | grep '^=;lab0;IPv4;nascluster;')
[[ $(wc -l <<<"$bonjour") = 1 && $(cut -d';' -f8 <<<"$bonjour") = "${PUBLIC[0]}" ]]
ok $? "Bonjour: _smb._tcp 'nascluster' published once, at ${PUBLIC[0]}" "$bonjour"
all=$(on client1 avahi-browse -artp 2>/dev/null | grep '^=;lab0;IPv4;')
bad=$(grep -vE ";(${PUBLIC[0]//./\\.}|${PUBLIC[1]//./\\.}|${PUBLIC[2]//./\\.});" <<<"$all" |
	grep -E ';198\.18\.0\.2[1-3];' || true)
[[ -n $all && -z $bad ]]
ok $? "no record points at a node's own address" "$all"

# The node holding the first public address fails.
holder=$(on node1 ctdb -X ip all | awk -F'|' -v ip="${PUBLIC[0]}" '$2 == ip { print "node" $3 + 1 }')
src=$(randfile cluster.bin 4000000)
out=$(on client1 smbclient -U "$A" "//${PUBLIC[0]}/Media" -c "put $src failover.bin" 2>&1)
ok $? "client1 writes 4 MB over SMB through ${PUBLIC[0]} (held by $holder)" "$out"
# NFSv4 through it (the lab's nodes keep a 20 s grace): once the holder is out of the grace
# its start began, an OPEN works; after the takeover, the new holder refuses OPENs with
# NFS4ERR_GRACE (its clients' reclaims go first) until its grace ends.
on node1 sh -c 'echo grace >/cluster/srv/public/grace.txt && chmod 644 /cluster/srv/public/grace.txt'
v4() { on client1 timeout 3 nfs-cat "nfs://${PUBLIC[0]}/cluster/srv/public/grace.txt?version=4" 2>&1; }
v4ok() { [[ $(v4) = grace ]]; }
wait_for 45 v4ok
ok $? "before the cut, an NFSv4 OPEN through ${PUBLIC[0]} works (no grace on $holder)" "$(v4)"
"$LAB" fail "$holder" 7>&-
t1=$SECONDS
# From the cut: every NFSv4 try, until one works after one was refused for the grace.
(
	end=$((SECONDS + 100)) graced=0
	while ((SECONDS < end)); do
		r=$(v4 | tr "\n" " ")
		echo "$((SECONDS - t1)) s: $r"
		[[ $r = *NFS4ERR_GRACE* ]] && graced=1
		[[ $r = 'grace ' && $graced = 1 ]] && break
		sleep 0.5
	done
) >"$WORK/v4.log" &
v4pid=$!
smb_back() {
	on client1 smbclient -U "$A" "//${PUBLIC[0]}/Media" -c "get failover.bin $WORK/smb.back" &&
		cmp -s "$src" "$WORK/smb.back"
}
wait_for 60 smb_back
ok $? "after $holder loses its link, the same bytes come back over SMB through ${PUBLIC[0]} ($((SECONDS - t1)) s)"
nfs_back() {
	on client1 nfs-cat "nfs://${PUBLIC[0]}/cluster/srv/media/failover.bin?version=3" >"$WORK/nfs.back" &&
		cmp -s "$src" "$WORK/nfs.back"
}
wait_for $((60 - (SECONDS - t1))) nfs_back
ok $? "... and over NFS, within 60 s of the cut ($((SECONDS - t1)) s)"
others=()
for h in "${NODES[@]}"; do [[ $h = "$holder" ]] || others+=("$h"); done
for h in "${others[@]}"; do
	st=$(nt "$h" status --json 2>/dev/null | jq -r --arg a "$(addr "$holder")" \
		'.cluster.nodes[] | select(.address == $a) | .state')
	[[ -n $st && $st != ok ]]
	ok $? "$h names $holder $st" "$st"
done
moved=$(nt "${others[0]}" status --json 2>/dev/null | jq -r --arg p "${PUBLIC[0]}/24" \
	'.cluster.public_addresses[] | select(.address == $p) | .node')
[[ -n $moved && $moved != "$(addr "$holder")" && $moved != null ]]
ok $? "status: ${PUBLIC[0]} moved to $moved" "$moved"
# CTDB's takeip ran nastune's hook, which asked Ganesha over D-Bus for a grace period (the
# lab's Ganesha is Graceless, so it logs that it skips it).
for h in "${NODES[@]}"; do [[ $(addr "$h") = "$moved" ]] && taker=$h; done
glog=$(grep 'dbus_heartbeat\] nfs_start_grace' "$("$LAB" root "${taker:-node1}")/var/log/ganesha/ganesha.log")
grep -q "NFS Server Now IN GRACE" <<<"$glog" && grep -q "recovery event 5 nodeid -1 ip ${PUBLIC[0]}\$" <<<"$glog"
ok $? "the node that took ${PUBLIC[0]} put Ganesha in grace for it over D-Bus" "$glog"
wait "$v4pid"
v4log=$(<"$WORK/v4.log")
grep -q NFS4ERR_GRACE <<<"$v4log" && [[ $(tail -1 <<<"$v4log") = *': grace ' ]]
ok $? "an NFSv4 OPEN through ${PUBLIC[0]} is refused during that grace (NFS4ERR_GRACE), works after ($(grep -m1 NFS4ERR_GRACE <<<"$v4log" | cut -d: -f1) to $(tail -1 <<<"$v4log" | cut -d: -f1))" "$v4log" 40
bonjour=$(on client1 avahi-browse -rtp _smb._tcp 2>/dev/null | grep '^=;lab0;IPv4;nascluster;')
[[ $(wc -l <<<"$bonjour") = 1 && $(cut -d';' -f8 <<<"$bonjour") = "${PUBLIC[0]}" ]]
ok $? "Bonjour follows: still once, at ${PUBLIC[0]}, from its new holder" "$bonjour"

"$LAB" heal "$holder" 7>&-
wait_for 90 all_ok "$holder" 3
ok $? "$holder rejoins when healed: three nodes OK again" "$(on "$holder" ctdb status 2>&1)"

# A configuration applied on one node only: the others name it.
sed 's/nastune lab cluster"/nastune lab cluster, node2 alone"/' "$CONF" >"$WORK/alone.conf"
out=$(nt node2 -c "$WORK/alone.conf" apply --this-node 2>&1)
ok $? "node2 applies a configuration on its own (apply --this-node)" "$out"
for h in node1 node3; do
	js=$(nt "$h" status --json 2>/dev/null)
	[[ $(jq -r '.cluster.consistent' <<<"$js") = false &&
		$(jq -r '[.cluster.inconsistent[].address] | join(",")' <<<"$js") = "$(addr node2)" ]]
	ok $? "$h: status names node2 inconsistent" "$js"
done

# A knob in tuned.conf (where a tune's choices go) applied as one generation: a
# cluster-wide apply from one node must reach every node. smb encrypt = required is the
# bad value the tune below removes.
printf 'knobs = {\n\tsmb = {\n\t\taio_read_size = "1";\n\t\tsmb_encrypt = "required";\n\t};\n};\n' >"$WORK/tuned.conf"
cp "$WORK/tuned.conf" "$("$LAB" root node3)/etc/nastune/tuned.conf"
out=$(nt node3 -c "$CONF" apply 2>&1)
ok $? "node3 applies the cluster's configuration with knobs, cluster-wide" "$out"
js=$(nt node1 status --json 2>/dev/null)
[[ $(jq -r '.cluster.consistent' <<<"$js") = true ]]
ok $? "node1: every node runs one configuration again" "$js"
same=0
for h in "${NODES[@]}"; do
	c=$(<"$("$LAB" root "$h")/etc/samba/smb.conf")
	[[ $c = *'aio read size = 1'* && $c = *'smb encrypt = required'* ]] || same=1
done
ok $same "the knobs are in every node's smb.conf"

# A tune on node1 measures through the public address it holds and its choice becomes
# every node's, as one cluster generation.
wait_for 30 holds_public
before=$(nt node2 status --json 2>/dev/null | jq -r '.cluster.desired.generation')
CR=$("$LAB" root node1)/etc/nastune/tune.creds
printf 'username = alice\npassword = %s\n' "$(password alice)" >"$CR"
chmod 600 "$CR"
t1=$SECONDS
tj=$(nt node1 --json tune --goal throughput --budget 60s --knobs smb.smb_encrypt --size 8M \
	--credentials "$CR" 2>"$WORK/tune.err")
rc=$?
terr=$(grep -v 'reloaded (pidfile' "$WORK/tune.err")
[[ $rc = 0 ]] && jq -e '[.targets[], (.. | .target? // empty)] | map(strings) |
	(all(test("^(smb|nfs)://198\\.18\\.0\\.3[1-3]/")) and any(startswith("smb://")))' \
	<<<"$tj" >/dev/null 2>&1
ok $? "tune on node1 ($((SECONDS - t1)) s) measures through a public address, not loopback" "$terr
$tj"
k=$(jq -c '.knobs[] | select(.name == "smb.smb_encrypt")' <<<"$tj" 2>/dev/null)
after=$(jq -r '.after' <<<"$k")
[[ $(jq -r '.applied' <<<"$k") = true && $(jq -r '.before' <<<"$k") = required && -n $after &&
	$after != required ]]
ok $? "... and chooses smb encrypt = $after over the planted required ($(jq -r '.reason' <<<"$k" | cut -c1-60))" "$k"
js=$(nt node2 status --json 2>/dev/null)
jq -e --argjson b "$before" --arg a "$(addr node1)" '.cluster.consistent == true and
	.cluster.desired.generation > $b and .cluster.desired.from == $a and
	([.cluster.nodes[].generation] | unique) == [.cluster.desired.id]' <<<"$js" >/dev/null
ok $? "node2: every node on the tune's cluster generation $(jq -r '.cluster.desired.generation' <<<"$js"), consistent" "$js"
js=$(nt node1 status --json 2>/dev/null)
jq -e '.generation.id as $g | [.cluster.nodes[] | select(.this_node) | .local_generation] == [$g]' \
	<<<"$js" >/dev/null
ok $? "node1's record names the tune's local generation $(jq -r '.generation.id' <<<"$js")" "$js"
want=$(grep 'smb encrypt' "$("$LAB" root node1)/etc/samba/smb.conf")
same=0
for h in "${NODES[@]}"; do
	c=$(<"$("$LAB" root "$h")/etc/samba/smb.conf")
	[[ $c != *'smb encrypt = required'* && $c = *'aio read size = 1'* &&
		$(grep 'smb encrypt' <<<"$c") = "$want" ]] || same=1
done
ok $same "the tune's choice is in every node's smb.conf (${want:-no smb encrypt line}; aio read size kept)"

# A node whose apply fails (node3's testparm refuses every smb.conf): the apply names it,
# exits 1, and every node ends on the previous configuration; the -c FILE is left as it was.
r3=$("$LAB" root node3)
before=$(nt node1 status --json 2>/dev/null | jq -r '.cluster.desired.id')
sum3=$(md5sum <"$r3/etc/samba/smb.conf")
printf '#!/bin/sh\necho "ERROR: planted on node3" >&2\nexit 1\n' >"$r3/testparm.fail"
chmod +x "$r3/testparm.fail"
on node3 mount --bind "$r3/testparm.fail" /usr/bin/testparm
sed 's/nastune lab cluster"/nastune lab cluster, v3"/' "$CONF" >"$WORK/v3.conf"
cp "$WORK/v3.conf" "$WORK/v3.orig"
aj=$(nt node1 -c "$WORK/v3.conf" --json apply --cluster-wait 30 2>"$WORK/apply.err")
rc=$?
on node3 umount /usr/bin/testparm
out=$(<"$WORK/apply.err")
[[ $rc = 1 ]] &&
	grep -qE "node $(addr node3) did not apply configuration [0-9a-f]+: .*testparm rejects it: ERROR: planted on node3" <<<"$out" &&
	grep -q "rolling every node back to configuration $before" <<<"$out" &&
	jq -e --arg a "$(addr node3)" '[.cluster.nodes[] | select(.result != "applied") | .address] == [$a]
		and .cluster.rolled_back_to != null' <<<"$aj" >/dev/null
ok $? "an apply node3 fails (its testparm refuses) exits 1 naming node3 and why" "$out
$aj"
js=$(nt node2 status --json 2>/dev/null)
jq -e --arg b "$before" '.cluster.consistent == true and .cluster.desired.id == $b and
	([.cluster.nodes[].generation] | unique) == [$b]' <<<"$js" >/dev/null &&
	! grep -q 'v3' "$("$LAB" root node1)/etc/samba/smb.conf" "$("$LAB" root node2)/etc/samba/smb.conf" &&
	[[ $(md5sum <"$r3/etc/samba/smb.conf") = "$sum3" ]] && cmp -s "$WORK/v3.conf" "$WORK/v3.orig"
ok $? "every node is back on the previous configuration, node3's untouched; the -c file intact" "$js"

# A node that cannot follow (node3 has lost its cluster file system: its /cluster is empty
# for nastune, so it cannot even report) is named, and every node goes back to the
# cluster's previous configuration.
mv "$r3/cluster" "$r3/cluster.away" && mkdir "$r3/cluster"
out=$(nt node1 -c "$WORK/v3.conf" apply --cluster-wait 15 2>&1)
rc=$?
rmdir "$r3/cluster" && mv "$r3/cluster.away" "$r3/cluster"
[[ $rc = 1 ]] && grep -qE "node $(addr node3) did not (apply configuration|answer within)" <<<"$out"
ok $? "an apply node3 cannot follow exits 1 naming node3" "$out"
js=$(nt node2 status --json 2>/dev/null)
[[ $(jq -r '.cluster.desired.id' <<<"$js") = "$before" && $(jq -r '.cluster.consistent' <<<"$js") = true ]] &&
	! grep -q 'v3' "$("$LAB" root node1)/etc/samba/smb.conf" "$("$LAB" root node2)/etc/samba/smb.conf"
ok $? "every node is back on the previous configuration" "$js"
# A user who can write the cluster file system's root (made 0777) moves nastune's record
# away and writes one of their own, with a Ganesha start command: every node refuses it,
# runs nothing of it, and status names the refusal; with the record restored, all follow.
C=$("$LAB" root node1)/cluster
uid=$(grep "^alice:" "$("$LAB" root node1)/etc/passwd" | cut -d: -f3)
chmod 0777 "$C"
on node1 setpriv --reuid="$uid" --regid="$uid" --clear-groups sh -c '
	mv /cluster/.nastune /cluster/.moved || exit 1
	mkdir -p /cluster/.nastune/cluster/config /cluster/.nastune/cluster/nodes &&
	echo "services = { backend = \"pidfile\"; nfs = { start = \"touch /tmp/nastune-record-ran\"; }; };" \
		>/cluster/.nastune/cluster/config/0123456789abcdef.conf &&
	echo "{\"id\": \"0123456789abcdef\", \"generation\": 999, \"from\": \"198.18.0.21\"}" \
		>/cluster/.nastune/cluster/desired'
ok $? "alice (uid $uid) renames the record away and writes her own under a 0777 root"
bad=""
for h in "${NODES[@]}"; do
	out=$(nt "$h" cluster follow 2>&1)
	[[ $? = 1 && $out = *"is writable by its group or others (mode 0777)"* ]] || bad="$bad $h: $out"
done
for h in "${NODES[@]}"; do on "$h" test -e /tmp/nastune-record-ran && bad="$bad $h ran it"; done
[[ -z $bad ]]
ok $? "every node refuses the replaced record and runs nothing of it" "$bad"
js=$(nt node2 status --json 2>/dev/null)
rc=$?
[[ $rc = 1 && $(jq -r '.cluster.consistent' <<<"$js") = false ]] &&
	jq -r '.cluster.record_error' <<<"$js" | grep -q 'writable by its group or others'
ok $? "status exits 1 and names the refusal" "$js"
[[ -d $C/.moved ]] && rm -rf "$C/.nastune" && mv "$C/.moved" "$C/.nastune"
chmod 0755 "$C"
bad=""
for h in "${NODES[@]}"; do out=$(nt "$h" cluster follow 2>&1) || bad="$bad $h: $out"; done
js=$(nt node2 status --json 2>/dev/null)
[[ $? = 0 && -z $bad && $(jq -r '.cluster.consistent' <<<"$js") = true ]]
ok $? "with the record restored, every node follows and the cluster is consistent again" "$bad $js"

# The same attack over SMB, through a public address: a site share (local.conf, which check
# never sees) at the cluster file system's root, made 0777 again, and the two of
# nastune.conf. smb.conf vetoes the record's name, so alice finds it by no route: by name,
# in another case, or by its 8.3 name (Probe, a share without the veto, tells that name and
# shows these routes work where nothing vetoes them). The record stays as it was.
for h in "${NODES[@]}"; do
	r=$("$LAB" root "$h")
	mkdir -p "$r/etc/samba/smb.conf.d" "$r/run/probe/.nastune"
	printf '[Root]\n\tpath = /cluster\n\tread only = no\n\tvalid users = alice\n[Probe]\n\tpath = /run/probe\n\tveto files = /none/\n\tvalid users = alice\n' \
		>"$r/etc/samba/smb.conf.d/local.conf"
	on "$h" smbcontrol smbd reload-config
done
record() {
	(cd "$C/.nastune" && find . -printf '%P %y %m %U\n' | sort && find . -type f -exec sha256sum {} + | sort)
}
rec0=$(record)
gen0=$(nt node1 status --json 2>/dev/null | jq -r '.cluster.desired.generation')
chmod 0777 "$C"
echo '{"id": "0123456789abcdef", "generation": 999, "from": "198.18.0.21"}' >"$WORK/desired"
smb() { on client1 smbclient -U "$A" "//$1/$2" -c "$3" 2>&1; }
# refused IP SHARE CMD: CMD fails on SHARE as a vetoed name does (not found or denied).
refused() {
	local o
	o=$(smb "$@")
	[[ $o =~ NT_STATUS_(OBJECT_NAME_NOT_FOUND|OBJECT_PATH_NOT_FOUND|NO_SUCH_FILE|ACCESS_DENIED) ]] ||
		bad="$bad
[$2] $3: $o"
}
short=$(smb "${PUBLIC[0]}" Probe 'altname .nastune' | tail -1)
[[ $short =~ ^[A-Z0-9_]{1,8}~[A-Z0-9]$ ]] && smb "${PUBLIC[0]}" Probe "ls $short" | grep -q ' \.nastune '
ok $? "Probe: without the veto, .nastune is listed through its 8.3 name $short" "$short"
bad=""
for ip in "${PUBLIC[@]}"; do
	o=$(smb "$ip" Root ls)
	[[ $o = *' srv '* && $o != *nastune* ]] || bad="$bad
$ip: $o"
	refused "$ip" Root 'get .nastune/cluster/desired /dev/null'
done
[[ -z $bad ]]
ok $? "Root at every public address: the listing has srv, not .nastune; desired cannot be read" "$bad"
bad=""
for c in 'ls .nastune' 'ls .NASTUNE' "ls $short" 'ls .nastune/cluster/*' 'get .nastune/cluster/desired /dev/null' \
	"get $short/cluster/desired /dev/null" 'rename .nastune moved' 'rename .NaStUnE moved' "rename $short moved" \
	'mkdir .nastune' "put $WORK/desired .nastune/cluster/desired"; do
	refused "${PUBLIC[0]}" Root "$c"
done
[[ -z $bad ]]
ok $? "Root (the 0777 file system root): every route to the record is refused" "$bad"
bad=""
for s in Media Public; do
	for c in 'mkdir .nastune' "put $WORK/desired .nastune" 'ls .nastune'; do refused "${PUBLIC[0]}" "$s" "$c"; done
done
[[ -z $bad ]]
ok $? "Media and Public: .nastune cannot be made, put or listed" "$bad"
# A writable root is refused by every node (above): the record is judged once it is 0755.
rec1=$(record)
chmod 0755 "$C"
bad=""
for h in "${NODES[@]}"; do
	js=$(nt "$h" status --json 2>/dev/null) && [[ $(jq -r '.cluster.consistent' <<<"$js") = true ]] ||
		bad="$bad $h: $js"
done
[[ -z $bad && $rec1 = "$rec0" &&
	$(nt node1 status --json 2>/dev/null | jq -r '.cluster.desired.generation') = "$gen0" ]]
ok $? "the record is unchanged (generation $gen0, the same bytes); status exits 0 on every node" "$bad
$(diff <(echo "$rec0") <(echo "$rec1"))"
for h in "${NODES[@]}"; do
	rm -rf "$("$LAB" root "$h")/etc/samba/smb.conf.d/local.conf" "$("$LAB" root "$h")/run/probe"
	on "$h" smbcontrol smbd reload-config
done

# Two applies started together on two nodes: one wins, the other names it and follows.
sed 's/nastune lab cluster"/nastune lab cluster, from node1"/' "$CONF" >"$WORK/c1.conf"
sed 's/nastune lab cluster"/nastune lab cluster, from node2"/' "$CONF" >"$WORK/c2.conf"
nt node1 -c "$WORK/c1.conf" apply >"$WORK/a1.out" 2>&1 &
p1=$!
nt node2 -c "$WORK/c2.conf" apply >"$WORK/a2.out" 2>&1 &
p2=$!
wait "$p1"; r1=$?
wait "$p2"; r2=$?
if ((r1 == 0)); then win=node1 lose=node2 lo=$WORK/a2.out; else win=node2 lose=node1 lo=$WORK/a1.out; fi
[[ $((r1 + r2)) = 1 ]] && grep -q "node $(addr "$win") published configuration [0-9a-f]* (cluster generation [0-9]*) first" "$lo"
ok $? "two applies at once: $win wins (exit 0), $lose exits 1 naming it" "$r1 $r2 $(cat "$WORK/a1.out" "$WORK/a2.out")"
consistent_on() { [[ $(nt node3 status --json 2>/dev/null | jq -r --arg a "$(addr "$1")" '.cluster.consistent and .cluster.desired.from == $a') = true ]]; }
wait_for 60 consistent_on "$win"
ok $? "every node ends on $win's configuration (status consistent)" "$(nt node3 status 2>&1)"

# A change of public addresses is taken into service: 198.18.0.33 becomes .34.
sed 's|"198.18.0.33/24"|"198.18.0.34/24"|' "$CONF" >"$WORK/pub.conf"
t1=$SECONDS
out=$(nt node1 -c "$WORK/pub.conf" apply 2>&1)
rc=$?
took=$((SECONDS - t1))
js=$(nt node2 status --json 2>/dev/null)
[[ $rc = 0 ]] && ((took <= 60)) && jq -e '.cluster.consistent == true and
	([.cluster.public_addresses[] | select(.node == null)] | length) == 0 and
	([.cluster.public_addresses[].address] | index("198.18.0.34/24") != null and
		index("198.18.0.33/24") == null)' <<<"$js" >/dev/null
ok $? "apply moves the cluster from 198.18.0.33 to 198.18.0.34 in $took s (at most 60), every address held" "$out
$js"
bad=""
for ip in 198.18.0.31 198.18.0.32 198.18.0.34; do
	on client1 smbclient -U "$A" "//$ip/Media" -c "get failover.bin $WORK/pub.back" >/dev/null 2>&1 &&
		cmp -s "$src" "$WORK/pub.back" || bad="$bad $ip"
done
[[ -z $bad ]]
ok $? "client1 reads a file through each new address over SMB" "failed through:$bad"
done_testing
