#!/bin/bash
# The semantics class served for real: without consent a knob that changes what clients see is
# refused (exit 2, file:line, nothing written); with a share's consent Samba's large-directory
# recipe (case sensitive = yes, names forced to lower case) reaches that share's section only,
# and smbclient on client1 sees it: the share stores new names in lower case, finds them
# whatever case is typed, and no longer opens a name on disk in another case, while a share
# that did not consent keeps names as given and still folds case.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 9

cleanup() { "$LAB" apply "$DEMO" >/dev/null 2>&1; rm -rf "$SROOT/srv/big" "$WORK"; }
trap cleanup EXIT
mkdir -p "$SROOT/srv/big" && chmod 1777 "$SROOT/srv/big"

# conf CONSENT: demo.conf with a share Big, the recipe pinned, and CONSENT in Big's group.
conf() {
	sed -e "s|^tuning = .*|tuning = { goal = \"small-files\"; knobs = { smb = { case_sensitive = \"yes\"; name_case = \"lower\"; }; }; };|" \
		-e "s|^    comment = \"Read-only archive\"; }$|    comment = \"Read-only archive\"; },\n  { name = \"Big\"; path = \"/srv/big\"; protocols = [\"smb\"]; guest = true; $1 }|" \
		"$DEMO"
}
conf "" >"$WORK/refused.conf"
conf 'allow = ["semantics"];' >"$WORK/big.conf"
grep -q '"Big"' "$WORK/big.conf"
ok $? "the test's configurations add the share Big" "$(cat "$WORK/big.conf")"

before=$(sha256sum <"$SROOT/etc/samba/smb.conf")
"$LAB" apply "$WORK/refused.conf" >"$WORK/log" 2>&1
rc=$?
grep -qE "refused.conf:[0-9]+: tuning.knobs.smb.case_sensitive = yes changes what clients see: names become case-sensitive" "$WORK/log" &&
	[ "$rc" = 2 ] && [ "$before" = "$(sha256sum <"$SROOT/etc/samba/smb.conf")" ]
ok $? "without consent: exit 2, file:line naming what would change, smb.conf untouched" "rc $rc; $(cat "$WORK/log")"

check "with Big's consent: applied" "$LAB" apply "$WORK/big.conf"
tp() { on server testparm -s --section-name="$1" --parameter-name="$2" "$SROOT/etc/samba/smb.conf" 2>/dev/null; }
[ "$(tp Big 'case sensitive')" = Yes ] && [ "$(tp Big 'preserve case')" = No ] &&
	[ "$(tp Big 'default case')" = lower ] && [ "$(tp Public 'case sensitive')" = Auto ]
ok $? "testparm: Big is case sensitive with lower-case names, Public keeps auto" \
	"$(grep -A12 '^\[Big\]' "$SROOT/etc/samba/smb.conf")"

src=$(randfile sem.txt 1000)
smb() { on client1 smbclient -N "//$SERVER/$1" -c "$2" 2>&1; }
out=$(smb Big "put $src MixedCase.TXT")
[ -f "$SROOT/srv/big/mixedcase.txt" ] && [ ! -e "$SROOT/srv/big/MixedCase.TXT" ]
ok $? "Big stores a new name in lower case (preserve case = no)" "$out; $(ls -a "$SROOT/srv/big")"
# allinfo opens the name itself (a listing's wildcard match folds case whatever the share).
out=$(smb Big "allinfo MIXEDCASE.TXT")
grep -q 'attributes:' <<<"$out" && ! grep -q NT_STATUS <<<"$out"
ok $? "Big lowers a typed name before its exact lookup: any case finds mixedcase.txt" "$out"
echo old >"$SROOT/srv/big/Legacy.TXT"
out=$(smb Big "allinfo Legacy.TXT")
grep -q NT_STATUS_OBJECT_NAME_NOT_FOUND <<<"$out"
ok $? "Big no longer opens a name on disk that is not lower case (case sensitive = yes)" "$out"
out=$(smb Public "put $src MixedCase.$$.TXT; allinfo mixedcase.$$.txt; del MixedCase.$$.TXT")
[ -z "$(ls "$SROOT/srv/public" | grep -x "MixedCase.$$.TXT")" ] && grep -q 'attributes:' <<<"$out" &&
	! grep -q NT_STATUS_OBJECT_NAME_NOT_FOUND <<<"$out"
ok $? "Public (no consent) keeps the case given and still folds case in lookups" "$out"
"$LAB" apply "$DEMO" >/dev/null 2>&1
! grep -q 'case sensitive' "$SROOT/etc/samba/smb.conf"
ok $? "back to demo.conf: no case line left" "$(grep -n case "$SROOT/etc/samba/smb.conf")"
done_testing
