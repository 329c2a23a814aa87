#!/usr/bin/env bash
# Sizes a newcomer can read: no source file in src/ over 1,000 lines (one idea per file; a
# file that is only a data table aside), no command file (src/cmd/*.c) over 400, no function
# anywhere in src/ over 100; every source file and header opens with what it owns. Tables
# are data, not functions: only function bodies count, found as the house style writes them
# (the name at column 0, the braces of the body alone on their lines at column 0).
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan 10
MAX_FILE=1000
MAX_CMD=400
MAX_FN=100
# Files still being cut down by the helper that owns them; one line, empty when none.
EXEMPT=""
# Files over MAX_FILE until they are split along their sections: a short list that only
# shrinks. DATA: files that are a table of data, not code, and may be long.
BIG=""
DATA=""

# fnlen FILE...: "LINES FILE:LINE NAME" for every function body.
fnlen() {
	awk '
		FNR == 1 { sig = ""; body = 0 }
		!body && /^[A-Za-z_][A-Za-z0-9_]*\(/ { sig = $0; sub(/\(.*/, "", sig); at = FNR; next }
		!body && /^\{$/ && sig != "" { body = 1; start = FNR; next }
		body && /^\}$/ { print FNR - start - 1, FILENAME ":" at, sig; body = 0; sig = "" }
	' "$@"
}
exempt() { local f; for f in $EXEMPT; do [[ $1 = "$f" ]] && return 0; done; return 1; }
inlist() { local f=$1 x; shift; for x in "$@"; do [[ $f = "$x" ]] && return 0; done; return 1; }
# bigfile FILE...: the files over MAX_FILE lines, but those in BIG and DATA.
bigfile() {
	local f n
	for f in "$@"; do
		# shellcheck disable=SC2086
		inlist "$f" $BIG $DATA && continue
		n=$(wc -l <"$f")
		[ "$n" -le $MAX_FILE ] || echo "$f ($n lines)"
	done
}
# bigcmd: the command files (src/cmd/*.c under the current directory) over MAX_CMD lines.
bigcmd() {
	local f n
	for f in src/cmd/*.c; do
		exempt "$f" && continue
		n=$(wc -l <"$f")
		[ "$n" -le $MAX_CMD ] || echo "$f ($n lines)"
	done
}

cd "$top" || exit 1
srcs=$(ls src/*/*.c src/*.c 2>/dev/null)
# shellcheck disable=SC2086
is "$(bigfile $srcs)" "" "no source file is over $MAX_FILE lines (but: $BIG; data: $DATA)"
# shellcheck disable=SC2086
stale=$(for f in $BIG; do [ -f "$f" ] && [ "$(wc -l <"$f")" -gt $MAX_FILE ] || echo "$f"; done)
is "$stale" "" "every file on the BIG list is still over $MAX_FILE lines (else drop it from the list)"
is "$(bigcmd)" "" "no command file is over $MAX_CMD lines"

# unopened FILE...: the files whose first line is not "/* NAME - what it owns" (NAME the
# file's own, optionally with its folder: "/* tune/mtu.c - ...").
unopened() {
	local f
	for f in "$@"; do
		head -n 1 "$f" | grep -qE "^/\* ([a-z_]+/)?${f##*/} - ." || echo "$f"
	done
}
# shellcheck disable=SC2046
is "$(unopened $(ls src/*/*.[ch] src/*.[ch] include/*.h 2>/dev/null))" "" \
	"every source file and header opens with what it owns"
printf '#include <stdio.h>\n' >"$tmp/bare.c"
printf '/* named.c - a file that says what it owns. */\n' >"$tmp/named.c"
is "$(unopened "$tmp/bare.c" "$tmp/named.c")" "$tmp/bare.c" \
	"a file without its opening comment is reported, one with it is not"

# shellcheck disable=SC2086
long=$(fnlen $srcs | while read -r n where name; do
	[ "$n" -le $MAX_FN ] && continue
	exempt "${where%%:*}" && continue
	echo "$where $name ($n lines)"
done)
is "$long" "" "no function in src/ is over $MAX_FN lines"

# shellcheck disable=SC2086
nfn=$(fnlen $srcs | wc -l)
nbody=$(cat $srcs | grep -c '^{$')
[ "$nfn" -ge $((nbody * 99 / 100)) ]
ok $? "the scan finds the functions ($nfn of the $nbody bodies opened at column 0)"

# The checks can fail: a long function and a long command file are reported.
{
	printf 'static int\nlong_one(int x)\n{\n'
	for i in $(seq 101); do printf '\tx += %d;\n' "$i"; done
	printf '\treturn x;\n}\n\nstatic const int table[] = {\n'
	for i in $(seq 200); do printf '\t%d,\n' "$i"; done
	printf '};\n'
} >"$tmp/long.c"
is "$(fnlen "$tmp/long.c" | awk '{ print $1, $3 }')" "102 long_one" \
	"a 102-line function is measured as such, and a 200-line table is no function"
mkdir -p "$tmp/src/cmd" && seq 401 | sed 's|^|// |' >"$tmp/src/cmd/cmd_big.c"
seq 400 | sed 's|^|// |' >"$tmp/src/cmd/cmd_ok.c"
is "$(cd "$tmp" && bigcmd)" "src/cmd/cmd_big.c (401 lines)" \
	"a 401-line command file is reported, a 400-line one is not"
seq 1001 | sed 's|^|// |' >"$tmp/src/cmd/big.c"
is "$(cd "$tmp" && bigfile src/cmd/big.c src/cmd/cmd_ok.c)" "src/cmd/big.c (1001 lines)" \
	"a 1,001-line file is reported, a 400-line one is not"
