#!/usr/bin/env bash
# The man pages: every command of main.c's table has a nastune(8) entry, every key
# profile.c (with its profile_*.c) accepts has a nastune.conf(5) entry and no entry names a key it does not
# accept (tests/pkg/doccheck, which is shown to catch each omission on altered copies);
# both pages format without a warning (man --warnings as lintian runs it, groff -ww); the
# version is the same everywhere; README shows the same postinst snippet as nastune(8).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../cli/lib.sh
. "$here/../cli/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan 23

DC=$here/doccheck
MAN8=$top/packaging/man/nastune.8
MAN5=$top/packaging/man/nastune.conf.5
MAIN=$top/src/cmd/main.c
PROFILE=("$top"/src/config/profile*.c)
VERSION=$(cat "$top/VERSION")
run() { out=$("$@" 2>&1); rc=$?; }
show() { [[ -z $out ]] || sed 's/^/#   /' <<<"$out"; }

run "$DC" commands "$MAIN" "$MAN8"
is "$rc" 0 "every command in src/cmd/main.c's table has an entry in nastune(8)"; show
run "$DC" keys "${PROFILE[@]}" "$MAN5"
is "$rc" 0 "every key src/config/profile*.c accept has an entry in nastune.conf(5), and no other"; show

# The checker itself, on altered copies: each omission must be caught and named.
sed '/^\.B check$/d' "$MAN8" >"$tmp/no-check.8"
run "$DC" commands "$MAIN" "$tmp/no-check.8"
[[ $rc -ne 0 ]] && grep -q "command 'check'" <<<"$out"
ok $? "a missing command entry is caught"
sed 's/^} commands\[\] = {$/&\n\t{ "frobnicate", cmd_frob, "", "" },/' "$MAIN" >"$tmp/main.c"
run "$DC" commands "$tmp/main.c" "$MAN8"
[[ $rc -ne 0 ]] && grep -q "command 'frobnicate'" <<<"$out"
ok $? "a new command without an entry is caught"
sed '/^const struct field pf_tuning_fields\[\] = {$/a\	{ "rounds", F_BOOL, .off = 0 },' \
	"${PROFILE[@]}" >"$tmp/profile.c"
run "$DC" keys "$tmp/profile.c" "$MAN5"
[[ $rc -ne 0 ]] && grep -q "key 'tuning.rounds'" <<<"$out"
ok $? "a new key without an entry is caught"
sed 's/^\.B shares\[\]\.nfs\.async$/.B shares[].nfs.asink/' "$MAN5" >"$tmp/stale.5"
run "$DC" keys "${PROFILE[@]}" "$tmp/stale.5"
[[ $rc -ne 0 ]] && grep -q "key 'shares\[\].nfs.async'" <<<"$out" &&
	grep -q "documents 'shares\[\].nfs.asink'" <<<"$out"
ok $? "a misspelt entry is caught both ways (missing key, stale entry)"
# A new table: placed by the row that names it, or an error when no row does.
sed '/^const struct field pf_tuning_fields\[\] = {$/i\
static const struct field rate_fields[] = {\
	{ "max", F_BOOL, .off = 0 },\
	{ NULL },\
};\
' "${PROFILE[@]}" >"$tmp/profile2.c"
run "$DC" keys "$tmp/profile2.c" "$MAN5"
[[ $rc -ne 0 ]] && grep -q "key table rate_fields is not known" <<<"$out"
ok $? "a key table the checker cannot place is an error, not skipped"
sed '/^const struct field pf_tuning_fields\[\] = {$/a\	{ "rate", F_GROUP, .sub = rate_fields },' \
	"$tmp/profile2.c" >"$tmp/profile3.c"
run "$DC" keys "$tmp/profile3.c" "$MAN5"
[[ $rc -ne 0 ]] && grep -q "key 'tuning.rate.max'" <<<"$out" && ! grep -q "rate_fields" <<<"$out"
ok $? "a group row places its table: its keys need entries too"

# Formatting, as lintian checks it and stricter.
for page in "$MAN8" "$MAN5" "$top/packaging/man/nastune-tune.7"; do
	# stdout is the formatted page; only the diagnostics matter.
	out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z \
		"$page" 2>&1 >/dev/null)
	rc=$?
	[[ $rc -eq 0 && -z $out ]]
	ok $? "man --warnings -l $(basename "$page"): no warning"; show
	run groff -man -ww -z "$page"
	[[ $rc -eq 0 && -z $out ]]
	ok $? "groff -man -ww -z $(basename "$page"): no warning"; show
done
printf '.TH X 8\n.SH NAME\nx \\- y\n.BX bogus\n' >"$tmp/bad.8"
run groff -man -ww -z "$tmp/bad.8"
[[ -n $out ]]
ok $? "the formatting check reports an undefined macro"

for page in "$MAN8" "$MAN5" "$top/packaging/man/nastune-tune.7"; do
	is "$(sed -n 's/^\.TH [^ ]* [0-9] "[^"]*" "nastune \([^"]*\)".*/\1/p' "$page")" "$VERSION" \
		"$(basename "$page") names nastune $VERSION"
done
if command -v dpkg-parsechangelog >/dev/null; then
	is "$(dpkg-parsechangelog -l "$top/packaging/debian/changelog" -S Version)" "$VERSION" \
		"packaging/debian/changelog is at VERSION"
else
	ok 1 "packaging/debian/changelog is at VERSION (dpkg-dev missing: run make deps)"
fi
grep -q 'nastune(8) and nastune.conf(5)' <<<"$("$NASTUNE" --help 2>/dev/null)"
ok $? "nastune --help points at both pages"

# nastune-tune(7) states the simulator's bounds that tests/unit/test_tuner.c asserts.
python3 - "$top/packaging/man/nastune-tune.7" "$top/tests/unit/test_tuner.c" <<'PY'
import re, sys
man = " ".join(open(sys.argv[1]).read().split())
test = open(sys.argv[2]).read()
pairs = [("at most 10 of 200", "accepted <= 10"), ("at least 180 of 200", "found >= 180"),
         ("removed in 100 of 100", "assert_int_equal(removed, 100)"),
         ("in 50 of 50 tunes when", "assert_int_equal(raised[0], 50)"),
         ("at least 45 of 50", "raised[1] >= 45"), ("at most 5 of 50", "raised[2] <= 5"),
         ("more than 20 of 200", "accepted > 20"), ("at most 2 of 200", "accepted <= 2"),
         ("at most 9 asserted", "pairs <= 100 * 9"),
         ("removed in at least 85 of 100", "{ 45, 85, 80 }"), ("both in at least 80", "{ 45, 85, 80 }"),
         ("both in at least 52", "{ 28, 50, 52 }")]
bad = [m for m, t in pairs if m not in man or t not in test]
for b in bad:
    print("# missing: %s" % b)
sys.exit(1 if bad else 0)
PY
ok $? "nastune-tune(7) states the bounds test_tuner asserts"

# The snippet other packages copy: the same in nastune(8) and README.md.
snippet=$(sed -n '/^if \[ "\$1" = configure \] && \[ \\-x/,/^fi$/p' "$MAN8" | sed 's/\\-/-/g')
[[ -n $snippet ]] && python3 -c 'import sys; sys.exit(sys.argv[1] not in open(sys.argv[2]).read())' \
	"$snippet" "$top/README.md"
ok $? "README.md shows the postinst snippet of nastune(8)"
grep -q '^## Packaging' "$top/README.md"
ok $? "README.md has a Packaging section"
