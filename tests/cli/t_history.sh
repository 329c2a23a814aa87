#!/usr/bin/env bash
# History one can scan: every commit after BASE, the last commit before the work
# on the layout (whose subjects run to hundreds of characters and cannot be rewritten), has
# a subject of at most 72 characters, as git's own convention has it; the why goes in the
# body. Needs the repository's history (CI's clone has all of it); outside a git checkout
# (a release tarball) there is nothing to check.
. "$(dirname "$0")/lib.sh"
plan 3
BASE=db88821
MAX=72
# Subjects over MAX that landed before this check did, by hash prefix; never add to it.
KNOWN="adb1f64"

# Lengths in characters, not bytes ("—" is one).
export LC_ALL=C.UTF-8

# toolong: the "hash subject" lines of stdin whose subject is over MAX and not KNOWN.
toolong() {
	local h s k
	while IFS=' ' read -r h s; do
		[ ${#s} -le $MAX ] && continue
		for k in $KNOWN; do [[ $h = "$k"* ]] && continue 2; done
		echo "$h (${#s}): $s"
	done
}

# Whoever owns the checkout (CI's clone, a root test run in a user's tree).
g() { git -c safe.directory='*' -C "$top" "$@"; }

if [ ! -e "$top/.git" ]; then
	for i in 1 2; do ok 0 "commit subjects # SKIP not a git checkout"; done
elif ! g rev-parse -q --verify "$BASE^{commit}" >/dev/null; then
	ok 1 "the base commit $BASE is in the history (a shallow clone? fetch it all)"
	ok 1 "commit subjects after $BASE are at most $MAX characters"
else
	ok 0 "the base commit $BASE is in the history"
	log=$(g log --no-merges --format='%H %s' "$BASE..HEAD")
	n=$(grep -c . <<<"$log")
	short=$(while IFS=' ' read -r h s; do [ ${#s} -le $MAX ] && echo; done <<<"$log" | wc -l)
	echo "# $short of $n subjects after $BASE are at most $MAX characters"
	is "$(toolong <<<"$log")" "" "commit subjects after $BASE are at most $MAX characters"
fi

# The check can fail: a 73-character subject is reported, a 72-character one is not, even
# with a dash of three bytes in it.
s72=$(printf 'area — %065d' 0) s73=$(printf 'area: %067d' 0)
is "$(printf '1111111 %s\n2222222 %s\n' "$s72" "$s73" | toolong | cut -d' ' -f1-2)" \
	"2222222 (73):" "a 73-character subject is reported, a 72-character one (with a dash) is not"
