# tests/pkg/lib.sh - sourced by t_root.sh and t_systemd.sh, which install the built package
# into the cached bookworm root. Needs here, top (tests/cli/lib.sh) and bail() from the
# caller; sets VERSION, BUILD (absolute) and ROOT (the cached root).
# shellcheck shell=bash disable=SC2034 # deb, deps and these are for the caller
VERSION=$(cat "$top/VERSION")
BUILD=${BUILD:-build}
[[ $BUILD = /* ]] || BUILD=$top/$BUILD
ROOT=$("$here/bookworm-root" path)

# pkg_deb_and_deps: sets deb to the built .deb (built here when the tree is newer, as when a
# test runs alone: t_deb.sh builds it just before) and deps to the packages it depends on or
# recommends, which go into the cached root once so warm runs never download.
pkg_deb_and_deps() {
	local log
	deb=$BUILD/deb/nastune_${VERSION}_$(dpkg --print-architecture).deb
	if [[ ! -f $deb ]] || [[ -n $(find "$top/src" "$top/packaging" "$top/profiles" \
		"$top/templates" "$top/Makefile" -newer "$deb" -print -quit) ]]; then
		log=$(make -C "$top" B="$BUILD" deb 2>&1) || bail "make deb failed" "$(tail -n 20 <<<"$log")"
	fi
	mapfile -t deps < <(dpkg-deb -f "$deb" Depends Recommends | sed 's/^[A-Za-z]*: //' |
		tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/ //g' | grep -v '^$' | sort -u)
}
