#!/usr/bin/env bash
# The two layers (README "Architecture"): the core library (libnastune.a: every folder of
# src/ but src/cmd/) never includes cli.h or a command's header and never calls a
# cli_/cmd_ function, so a core file calling up into a command fails to link for unit tests,
# drvtool and the fuzzers, which link the library alone.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
b=$top/${BUILD:-build}
lib=$b/libnastune.a
plan 12

# upward FILE...: the "object: symbol" pairs of undefined cli_/cmd_ references.
upward() { nm -A -u "$@" 2>/dev/null | awk '$NF ~ /^(cli|cmd)_/ { n = split($1, p, ":"); print p[n - 1] ": " $NF }' | sort -u; }

[ -f "$lib" ]; ok $? "the core library $lib is built"
members=$(ar t "$lib" 2>/dev/null)
bad=$(echo "$members" | grep -E '^(main|cli|cmd_[a-z_]*)\.o$')
is "$bad" "" "libnastune.a holds no command-layer object (main, cli, cmd_*)"

cd "$top" || exit 1
core=$(ls src/*.c src/*/*.[ch] include/*.h 2>/dev/null | grep -Ev '^src/cmd/')
# upinclude FILE...: the files that include cli.h or a command's header, spelt "cli.h",
# <cli.h> or with a directory ("../cmd/cli.h"): cli.h lives in src/cmd/, off the core's
# include path, but a path to it would still reach it.
upinclude() { grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]*/)?(cli|cmd_[a-z_]*)\.h[">]' "$@"; }
bad=$(upinclude $core)
is "$bad" "" "no core file includes cli.h or a command's header"
printf '#include <cli.h>\n' >"$tmp/a.c"
printf '#  include "../cmd/cli.h"\n' >"$tmp/b.c"
printf '#include "cmd_bench.h"\n' >"$tmp/c.c"
printf '#include "clip.h"\n#include "mycli.h"\n' >"$tmp/d.c"
is "$(cd "$tmp" && upinclude a.c b.c c.c d.c | tr '\n' ' ')" "a.c b.c c.c " \
	"the include check sees <cli.h>, a path to cli.h and a command's header (not clip.h)"

bad=$(upward "$lib")
is "$bad" "" "no object of libnastune.a calls a cli_/cmd_ function"
# Whatever its name: no symbol the library needs is one the command layer defines.
cmdobj=$(ls "$b"/obj/cmd/*.o 2>/dev/null)
[ -n "$cmdobj" ] && bad=$(comm -12 <(nm -u "$lib" 2>/dev/null | awk '{ print $NF }' | sort -u) \
	<(nm -g --defined-only $cmdobj 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u))
r=$?; [ $r -eq 0 ] && [ -z "$bad" ]
ok $? "no symbol libnastune.a needs is defined by the command layer (any name)" "$bad"

# The checks can fail: a core object calling up into the command layer is reported, and a
# program linking the library alone (as the unit tests do) does not link.
cat >"$tmp/upcall.c" <<'C'
int cli_pretend_helper(int x);
int core_pretend(int x);
int core_pretend(int x) { return cli_pretend_helper(x) + 1; }
C
cat >"$tmp/main.c" <<'C'
int core_pretend(int x);
int main(void) { return core_pretend(1); }
C
cc -c -o "$tmp/upcall.o" "$tmp/upcall.c" && cp "$lib" "$tmp/lib.a" && ar rs "$tmp/lib.a" "$tmp/upcall.o" 2>/dev/null
is "$(upward "$tmp/lib.a" | grep pretend)" "upcall.o: cli_pretend_helper" \
	"a core object calling a cli_ function is reported"
cc -o "$tmp/prog" "$tmp/main.c" "$tmp/upcall.o" 2>"$tmp/ld.err"
r=$?; [ $r -ne 0 ] && grep -q "undefined reference to .cli_pretend_helper" "$tmp/ld.err"
ok $? "linking it without the command layer fails (undefined reference to cli_pretend_helper)"

# The binary has both layers; the unit tests have no command in them.
nm "$b/nastune" 2>/dev/null | grep -q ' T cmd_bench$'; ok $? "the binary links the command layer"
bad=""
for t in "$b"/tests/test_*; do
	[ -x "$t" ] || continue
	nm "$t" 2>/dev/null | grep -qE ' T (cli|cmd)_' && bad="$bad $(basename "$t")"
done
is "$bad" "" "unit tests link the core library alone"

# One name per source file: libnastune.a keeps its members by name (ar r), and a reader finds
# a file by it. dupnames DIR: the .c base names under DIR/src held more than once.
dupnames() { (cd "$1" && find src -name '*.c' -printf '%f\n' | sort | uniq -d); }
is "$(dupnames "$top")" "" "no two source files share a name"
mkdir -p "$tmp/dup/src/a" "$tmp/dup/src/b" && touch "$tmp/dup/src/a/x.c" "$tmp/dup/src/b/x.c"
is "$(dupnames "$tmp/dup")" "x.c" "... and a name held twice is reported"
