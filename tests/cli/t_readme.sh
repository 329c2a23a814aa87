#!/usr/bin/env bash
# README.md is the users' page: at most 300 lines, the two set-up commands at the top. The
# contributors' HACKING.md holds the Architecture, naming every source file (src/**/*.c) and
# none that is gone, and the test map, a row with its time for every suite tests/run knows;
# the lab's README a row for every lab test. The files both link to exist. include/ holds
# only the headers more than one src/ folder uses.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan 13
README=$top/README.md
HACKING=$top/HACKING.md
MAX=300

n=$(wc -l <"$README")
[ "$n" -le $MAX ]
ok $? "README.md is at most $MAX lines ($n)"

# The first code lines are the two commands a newcomer types.
cmds=$(grep -m 2 -E '^    (apt-get|make)' "$README" | sed -E 's/ +#.*//; s/^ +//')
is "$cmds" "apt-get update && apt-get install -y make && make demo
make check" "README.md opens with make demo and make check"

# architecture FILE: the src/....c paths named in FILE's "## Architecture" section.
architecture() {
	awk '/^## / { on = ($0 == "## Architecture") } on' "$1" |
		grep -oE 'src/[a-z0-9_/]+\.c' | sort -u
}
# unnamed README ROOT: the source files under ROOT not named, and the named ones absent.
unnamed() {
	local named files
	named=$(architecture "$1")
	files=$(cd "$2" && find src -name '*.c' | sort)
	comm -23 <(echo "$files") <(echo "$named") | sed 's/^/not named: /'
	comm -13 <(echo "$files") <(echo "$named") | sed 's/^/named, absent: /'
}
is "$(unnamed "$HACKING" "$top")" "" "HACKING.md's Architecture names every src/**/*.c, none absent"

# The check can fail: a new file, and a file named but gone, are both reported.
mkdir -p "$tmp/src/x" && touch "$tmp/src/x/new.c"
printf '## Architecture\n`src/x/old.c`\n## Next\n`src/x/new.c`\n' >"$tmp/README.md"
is "$(unnamed "$tmp/README.md" "$tmp" | tr '\n' ';')" "not named: src/x/new.c;named, absent: src/x/old.c;" \
	"a file missing from the section, and one named but absent, are reported"

# Every relative link resolves.
bad=$(grep -oE '\]\([^)#:]+\)' "$README" "$HACKING" | sed -E 's/^[^:]*:\]\(//; s/\)$//' |
	while read -r l; do
		[ -e "$top/$l" ] || echo "$l"
	done)
is "$bad" "" "every file README.md and HACKING.md link to exists"

# suites FILE: the suites tests/run runs by default; unmapped FILE: those without a row in
# FILE's "## Tests" table that gives a time (a figure and "s").
suites() { sed -n 's/^\[ \${#suites\[@\]} -gt 0 \] || suites=(\(.*\))$/\1/p' "$1" | tr ' ' '\n'; }
unmapped() {
	local s
	for s in $(suites "$top/tests/run"); do
		awk '/^## / { on = ($0 == "## Tests") } on' "$1" |
			grep -qE "^\| \`$s\`.*\| [^|]*[0-9]+ s[^|]*\|$" || echo "$s"
	done
}
[ -n "$(suites "$top/tests/run")" ]; ok $? "tests/run names its suites ($(suites "$top/tests/run" | tr '\n' ' '))"
is "$(unmapped "$HACKING" | tr '\n' ' ')" "" "HACKING.md's test map has a row with a time for every suite"

# The same documents hold what the README sends the reader to.
for d in src/bench/README.md src/agent/README.md tests/lab/README.md; do
	[ -s "$top/$d" ] || echo "$d"
done | grep -q .
[ $? -ne 0 ]
ok $? "the side documents (src/bench, src/agent, tests/lab READMEs) exist"
grep -q '^## Tuning' "$README" && grep -q 'nastune-tune(7)' "$README"
ok $? "a Tuning section points to nastune-tune(7)"
# The lab's README has a row for every lab test, and none for a test that is gone.
labmap() {
	comm -3 <(cd "$top/tests/lab" && ls t_*.sh) <(awk '/^## / { on = ($0 == "## Tests") } on' \
		"$top/tests/lab/README.md" | grep -oE '^\| t_[a-z0-9_]+\.sh ' | cut -c3- | tr -d ' ' | sort)
}
is "$(labmap | tr -d '\t' | tr '\n' ' ')" "" "tests/lab/README.md's test table has a row for each tests/lab/t_*.sh, none absent"
# A test's name says which suite it is in: a cli test on a lab test's subject is *_local.
is "$(comm -12 <(cd "$top/tests/cli" && ls t_*.sh) <(cd "$top/tests/lab" && ls t_*.sh) | tr '\n' ' ')" "" \
	"no test name is in both tests/cli and tests/lab"

# lonely ROOT: the headers in ROOT/include that one folder of ROOT/src includes or none, and no
# other header there (agent.h brings agent_proto.h to whoever includes it); such a header
# belongs beside its code.
lonely() {
	local h n
	for h in "$1"/include/*.h; do
		grep -qF "#include \"${h##*/}\"" "$1"/include/*.h && continue
		n=$(grep -rlF "#include \"${h##*/}\"" "$1/src" | sed -E 's#/[^/]*$##' | sort -u | wc -l)
		[ "$n" -ge 2 ] || echo "${h##*/}"
	done
}
is "$(lonely "$top" | tr '\n' ' ')" "" "include/ holds only headers more than one src/ folder includes"
mkdir -p "$tmp/h/include" "$tmp/h/src/a" "$tmp/h/src/b"
touch "$tmp/h/include/one.h" "$tmp/h/include/two.h" "$tmp/h/include/three.h"
printf '#include "three.h"\n' >"$tmp/h/include/two.h"
printf '#include "one.h"\n#include "two.h"\n' >"$tmp/h/src/a/x.c"
printf '#include "two.h"\n' >"$tmp/h/src/b/y.c"
is "$(lonely "$tmp/h" | tr '\n' ' ')" "one.h " \
	"a header one folder includes is reported, not one another public header includes"
