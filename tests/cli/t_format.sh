#!/usr/bin/env bash
# The tree is formatted with its .clang-format: `make format-check` names every
# file `make format` would change, and a file formatted otherwise is caught.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan 2

out=$(make -s -C "$top" format-check 2>&1); rc=$?
is "$rc" 0 "make format-check: every C file as .clang-format has it"
[ "$rc" = 0 ] || echo "$out" | grep -m 10 'warning:' | sed 's/^/# /'
# The check can fail: a function written on one line is reported.
cp "$top/.clang-format" "$tmp/"
printf 'int\nf(void)\n{\n\treturn 0;\n}\n' >"$tmp/good.c"
printf 'int f(void) { return 0; }\n' >"$tmp/bad.c"
(cd "$tmp" && clang-format --dry-run -Werror good.c >/dev/null 2>&1 &&
	! clang-format --dry-run -Werror bad.c >/dev/null 2>&1)
ok $? "clang-format accepts a formatted file and refuses an unformatted one"
