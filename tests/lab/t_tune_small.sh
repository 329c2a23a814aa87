#!/bin/bash
# Small work tuned on a big directory over SMB: metadata measures the large-directory recipe
# (case sensitive = yes) against Samba's default; a small-files tune measures the case knob
# without the semantics consent, reports it "better, not applied" with its effect and what it
# would change, and installs nothing of that class; with the share's consent the same tune
# applies it to that share.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 7

cleanup() { rm -f "$SROOT/etc/nastune/tuned.conf"; "$LAB" apply "$DEMO" >/dev/null 2>&1; rm -rf "$SROOT/srv/big" "$WORK"; }
trap cleanup EXIT
both() { printf 'rc=%s\nstdout:\n%s\nstderr:\n%s\n' "$rc" "$out" "$err" | head -c 20000; }
mkdir -p "$SROOT/srv/big" && chmod 1777 "$SROOT/srv/big"
CONF=$SROOT/etc/nastune/nastune.conf
# Lookups of missing names scan the directory, so the recipe's gain grows with it: at 2000
# entries a missing name still costs several times the case-sensitive one, and the directory
# is made in seconds (creates scan it too).
ENTRIES=2000

# conf ALLOW KNOBS: SMB only, the guest share Big first (the tune measures it), ALLOW in its
# group, KNOBS in tuning.knobs.smb.
conf() {
	sed -e 's/nfs = { enabled = true;/nfs = { enabled = false;/' \
		-e 's/afp = { enabled = true;/afp = { enabled = false;/' \
		-e "s|^shares = ($|shares = (\n  { name = \"Big\"; path = \"/srv/big\"; protocols = [\"smb\"]; guest = true; $1 },|" \
		-e "s|^tuning = .*|tuning = { goal = \"small-files\"; knobs = { smb = { $2 }; }; };|" "$DEMO"
}
rm -f "$SROOT/etc/nastune/tuned.conf"
conf "" "" >"$CONF"
nts apply
grep -q '^\[Big\]' "$SROOT/etc/samba/smb.conf"
ok $? "Big served over SMB, no consent" "$(both)"

# miss: stat-miss-hot's median in us, from a metadata run on Big.
miss() {
	nts --json bench --target smb://127.0.0.1/Big --workload metadata --entries "$ENTRIES" --repeat 1 --warmup 0
	python3 -c 'import json,sys; print([r["median"] for r in json.loads(sys.argv[1])["results"] if r["metric"]=="stat-miss-hot"][0])' "$out"
}
dflt=$(miss)
conf 'allow = ["semantics"];' 'case_sensitive = "yes";' >"$CONF"
nts apply
recipe=$(miss)
python3 -c 'import sys; sys.exit(0 if float(sys.argv[2]) * 1.5 < float(sys.argv[1]) else 1)' "$dflt" "$recipe"
ok $? "metadata, $ENTRIES entries: a missing name costs $dflt us by default, $recipe us case-sensitive" "$(both)"

# decided KEY: the case knob's decision in the tune document, one field.
case_knob() { python3 -c 'import json,sys; k=[x for x in json.loads(sys.argv[1])["knobs"] if x["name"]=="smb.case_sensitive"][0]; print(eval(sys.argv[2]))' "$out" "$1"; }
tune() { nts --json tune --goal small-files --knobs smb.case_sensitive --entries "$ENTRIES" --tree-files 64 --budget 60s --repeat 32; }

conf "" "" >"$CONF"
nts apply
tune
[ "$rc" = 0 ] && [ "$(case_knob 'k["verdict"], k["applied"], k["effect"] > 0.03, k["interval"][0] > 0')" = "('better', False, True, True)" ]
ok $? "without consent: case sensitive = yes measured better, with its interval, not applied" "$(both)"
[ "$(case_knob 'k["withheld"]["value"]')" = yes ] && case_knob 'k["withheld"]["changes"]' | grep -q "names become case-sensitive" &&
	case_knob 'k["reason"]' | grep -q "better, not applied: yes measured +"
ok $? "the report names what it would change for the clients" "$(both)"
! grep -qi 'case sensitive' "$SROOT/etc/samba/smb.conf" && ! grep -qs case_sensitive "$SROOT/etc/nastune/tuned.conf"
ok $? "nothing of the semantics class installed: smb.conf and tuned.conf without it" "$(grep -i case "$SROOT/etc/samba/smb.conf"; cat "$SROOT/etc/nastune/tuned.conf" 2>&1)"

conf 'allow = ["semantics"];' "" >"$CONF"
nts apply
tune
[ "$rc" = 0 ] && [ "$(case_knob 'k["verdict"], k["applied"], "withheld" in k')" = "('better', True, False)" ]
ok $? "with Big's consent: decided better and applied" "$(both)"
tp() { on server testparm -s --section-name="$1" --parameter-name="$2" "$SROOT/etc/samba/smb.conf" 2>/dev/null; }
[ "$(tp Big 'case sensitive')" = Yes ] && [ "$(tp Public 'case sensitive')" = Auto ] && grep -q case_sensitive "$SROOT/etc/nastune/tuned.conf"
ok $? "installed: Big case sensitive, Public keeps auto, tuned.conf records it" "$(grep -A12 '^\[Big\]' "$SROOT/etc/samba/smb.conf")"
done_testing
