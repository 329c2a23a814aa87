#!/bin/bash
# NFS from the client hosts against the lab server's NFS-Ganesha (mount-free: libnfs tools).
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 13

ALICE="uid=29001&gid=29000"	# alice, group nasusers (tests/lab/lab); root is squashed
url() { echo "nfs://$SERVER/srv/$1"; }
cp_nfs() { local h=$1; shift; on "$h" nfs-cp "$@"; }

grep_out "nfs-ls lists the Archive export" 'README\.txt' on client1 nfs-ls "$(url archive)"
grep_out "nfs-ls over NFSv4 lists it too" 'README\.txt' on client1 nfs-ls "$(url archive)?version=4"

src=$(randfile nfs.bin 2000000)
name=t_nfs.$$.bin
check "Public: write 2 MB (NFSv3)" cp_nfs client1 "$src" "$(url public)/$name"
out=$(cp_nfs client1 "$(url public)/$name" "$WORK/back.bin" 2>&1) && cmp -s "$src" "$WORK/back.bin"
ok $? "Public: read it back identical" "$out"
owner=$(stat -c %u "$SROOT/srv/public/$name" 2>&1)
[[ $owner = 65534 ]]
ok $? "Public: all_squash made the file nobody's (uid $owner)"
rm -f "$WORK/back.bin" "$SROOT/srv/public/$name"

check "Media: alice writes 2 MB" cp_nfs client1 "$src" "$(url media)/$name?$ALICE"
out=$(cp_nfs client1 "$(url media)/$name?$ALICE" "$WORK/back.bin" 2>&1) &&
	cmp -s "$src" "$WORK/back.bin"
ok $? "Media: read it back identical" "$out"
grep_out "Media: the listing shows it with alice's uid" "29001 +29000 +2000000 $name" \
	on client1 nfs-ls "$(url media)?$ALICE"
rm -f "$WORK/back.bin" "$SROOT/srv/media/$name"

out=$(cp_nfs client1 "$src" "$(url archive)/$name" 2>&1) && rc=1 || rc=0
grep -q 'ROFS\|ACCES\|PERM' <<<"$out" || rc=1
[[ -e $SROOT/srv/archive/$name ]] && rc=1
ok $rc "Archive (read-only export) refuses writes" "$out"

# Restrict Media to client1 alone; client2 is outside the allowed network.
check "client2 lists Media while the whole lab network is allowed" \
	on client2 nfs-ls "$(url media)?$ALICE"
sed 's|nfs = { clients = \["198.18.0.0/15"\]; };|nfs = { clients = ["'"$("$LAB" addr client1)"'/32"]; };|' \
	"$DEMO" >"$WORK/restricted.conf"
if grep -q "$("$LAB" addr client1)/32" "$WORK/restricted.conf" &&
	out=$("$LAB" apply "$WORK/restricted.conf" 2>&1); then
	sleep 0.5
	check "restricted: client1 (allowed) still lists Media" on client1 nfs-ls "$(url media)?$ALICE"
	out=$(on client2 nfs-ls "$(url media)?$ALICE" 2>&1) && rc=1 || rc=0
	grep -q 'ACCES\|PERM\|NOENT' <<<"$out" || rc=1
	ok $rc "restricted: client2 (outside the allowed network) is refused" "$out"
	refuse "restricted: client2 cannot write to Media either" \
		cp_nfs client2 "$src" "$(url media)/$name?$ALICE"
else
	ok 1 "restricted: apply a Media export limited to client1" "$out"
	ok 1 "restricted: client2 (outside the allowed network) is refused"
	ok 1 "restricted: client2 cannot write to Media either"
fi
"$LAB" apply "$DEMO" >/dev/null 2>&1
done_testing
