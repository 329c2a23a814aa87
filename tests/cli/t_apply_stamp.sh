#!/usr/bin/env bash
# The head stamp (<state dir>/head) lets `apply --if-changed` answer without opening the
# state database, and is trusted only when written from that very database, unchanged since.
# A stamp that lies (an older one put back after generations changed, one copied from
# another root's database, one someone else could have written) is not trusted: the answer
# then comes from the database, as without a stamp.
. "$(dirname "$0")/lib.sh"
plan 14
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
conf=$top/profiles/demo.conf
sed 's/description = "nastune demo NAS"/description = "another NAS"/' "$conf" >"$tmp/c2.conf"
a=$tmp/a b=$tmp/b; srvdirs "$a"; srvdirs "$b"
head=var/lib/nastune/head
# dbopen ROOT CONF: whether --if-changed opened ROOT's state.db (0: it did); $err as nt's.
dbopen() {
	strace -f -qq -e trace=open,openat -o "$tmp/trace" "$NASTUNE" --datadir "$top" --root "$1" \
		-c "$2" apply --no-reload --if-changed >/dev/null 2>"$tmp/err"
	err=$(cat "$tmp/err")
	grep -q 'state\.db"' "$tmp/trace"
}

nt --root "$a" -c "$conf" apply --no-reload
[ -f "$a/$head" ] && [ "$(stat -c '%u %a' "$a/$head")" = "$(id -u) 600" ]
ok $? "an apply writes the stamp, 0600 and this user's (exit $rc)" "$err"
dbopen "$a" "$conf"; ok $(( ! $? )) "--if-changed answers from the stamp without opening the database"
echo "$err" | grep -q 'nothing to do'; ok $? "... and finds nothing to do" "$err"
# Commands that only read the database leave it (and so the stamp) as it was.
nt --root "$a" -c "$conf" status; nt --root "$a" -c "$conf" history
dbopen "$a" "$conf"; ok $(( ! $? )) "after status and history the stamp still answers" "$err"

# Generations changed behind the stamp: an older stamp put back.
cp -p "$a/$head" "$tmp/old"
nt --root "$a" -c "$tmp/c2.conf" apply --no-reload; is "$rc" 0 "a changed configuration is applied"
cp -p "$tmp/old" "$a/$head"
nt --root "$a" -c "$conf" apply --no-reload --if-changed
echo "$err" | grep -q "applied as generation 3"
ok $? "an older stamp put back is not trusted: the first configuration is applied again" "$err"

# Edited in the database behind the stamp (the newest generation's inputs hash).
cp -p "$a/$head" "$tmp/old"
sqlite3 "$a/var/lib/nastune/state.db" \
	"UPDATE generations SET inputs_hash = printf('%064d', 0) WHERE id = 3" || echo "sqlite3 failed"
cp -p "$tmp/old" "$a/$head"
dbopen "$a" "$conf"; ok $? "a generation changed in the database behind the stamp: the database is read"
echo "$err" | grep -q 'installed files match the configuration'
ok $? "... and finds the changed hash, not the stamp's" "$err"

# A stamp from another root's database (another inode): b holds generation 2 of c2.conf.
nt --root "$b" -c "$conf" apply --no-reload
nt --root "$b" -c "$tmp/c2.conf" apply --no-reload
cp -p "$a/$head" "$b/$head"
nt --root "$b" -c "$conf" apply --no-reload --if-changed
echo "$err" | grep -q "applied as generation 3"
ok $? "a stamp copied from another database is not trusted" "$err"

# A rollback by another command moves the head: the stamp follows it.
nt --root "$b" -c "$conf" rollback 2; is "$rc" 0 "rollback to generation 2"
nt --root "$b" -c "$conf" apply --no-reload --if-changed
echo "$err" | grep -q "applied as generation 5"; ok $? "after a rollback, --if-changed applies again" "$err"

# Someone else could have written it: read the database instead (same answer, slower).
chmod 0620 "$b/$head"
dbopen "$b" "$conf"; ok $? "a group-writable stamp is not trusted (the database is read)"
echo "$err" | grep -q 'nothing to do'; ok $? "... which still finds nothing to do" "$err"
rm -f "$b/$head"
dbopen "$b" "$conf"; ok $? "without a stamp the database is read" "$err"
