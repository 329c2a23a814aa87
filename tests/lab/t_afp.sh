#!/bin/bash
# AFP from client1 against the lab server's afpd (netatalk 4 from the trixie root), with the
# lab's own DSI/AFP client (tests/lab/afp.py): no working netatalk client tool exists.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 15

PA=$(password alice)
afp() { on client1 "$AFP" "$SERVER" "$@"; }

st=$(afp status 2>&1)
grep -q '^versions: .*AFP3\.4' <<<"$st"
ok $? "DSIGetStatus: afpd answers with AFP 3.4" "$st"
grep -q '^uams: .*DHX2' <<<"$st"
ok $? "DSIGetStatus: DHX2 login offered" "$st"

vols=$(afp volumes 2>&1)
grep -qix 'public' <<<"$vols" && ! grep -qix 'media' <<<"$vols"
ok $? "guest sees Public and not Media" "$vols"
vols=$(afp -u alice -p "$PA" volumes 2>&1)
grep -qix media <<<"$vols" && grep -qix timemachine <<<"$vols" && grep -qix public <<<"$vols"
ok $? "alice (DHX2 login) sees Media, TimeMachine, Public" "$vols"
refuse "a wrong password is refused" afp -u alice -p wrong volumes
# Archive is smb+nfs only in demo.conf.
! grep -qix archive <<<"$vols"
ok $? "Archive is not an AFP volume" "$vols"

vol() { grep -ix "$1" <<<"$vols" | head -n1; }	# the name as the server spells it
src=$(randfile afp.bin 1500000)
name=t_afp.$$.bin
rw() {	# rw VOLUME AUTH...
	local v=$1 out
	shift
	out=$(afp "$@" put "$v" "$name" "$src" 2>&1) &&
		out=$(afp "$@" get "$v" "$name" "$WORK/back.bin" 2>&1) && cmp -s "$src" "$WORK/back.bin"
	ok $? "$v: write 1.5 MB and read it back identical" "$out"
	rm -f "$WORK/back.bin"
	grep_out "$v: the listing shows it" "^$name\$" afp "$@" ls "$v"
	out=$(afp "$@" rm "$v" "$name" 2>&1) && ! afp "$@" ls "$v" 2>/dev/null | grep -qx "$name"
	ok $? "$v: delete it, and it is gone" "$out"
}
rw "$(vol media)" -u alice -p "$PA"
rw "$(vol public)"
refuse "bob cannot open TimeMachine (alice only)" \
	afp -u bob -p "$(password bob)" ls "$(vol timemachine)"

grep -qx Media <<<"$vols" && grep -qx TimeMachine <<<"$vols"
ok $? "AFP volume names keep their case (Media, TimeMachine: afp.conf's volume name)" "$vols"
grep -q '^server: atlas$' <<<"$st"
ok $? "afpd announces the configured server name (atlas: afp.conf's server name)" "$st"
done_testing
