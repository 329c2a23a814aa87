#!/usr/bin/env bash
# The client agent's folders (src/agent, src/bench, src/lib) build without libconfig, libnl
# and Avahi (it must build on macOS): their sources include none of their headers (nor the modules that wrap them), and
# they compile with only jansson, libcrypto, libsmbclient and libnfs on the include path,
# as strict C11 plus POSIX (no _GNU_SOURCE).
. "$(dirname "$0")/lib.sh"
plan 4
cd "$top"
agent_srcs=(src/agent/*.c src/bench/*.c src/lib/*.c)
bad=$(grep -lE '#include [<"](libconfig|netlink/|avahi-|profile\.h|netif\.h|mdns\.h|model\.h|state\.h)' "${agent_srcs[@]}")
[ -z "$bad" ]; ok $? "no agent source includes libconfig, libnl, Avahi or their wrappers${bad:+: $bad}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
flags="-std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude -DNASTUNE_VERSION=\"portable\" $(pkg-config --cflags jansson libcrypto smbclient libnfs)"
log=$tmp/build.log
okc=0
for s in "${agent_srcs[@]}"; do
	# shellcheck disable=SC2086
	cc $flags -c -o "$tmp/$(basename "$s" .c).o" "$s" >>"$log" 2>&1 || { okc=1; echo "# $s does not build" ; }
done
ok $okc "the agent's sources compile with only jansson, libcrypto, libsmbclient and libnfs"
[ $okc = 0 ] || sed 's/^/# /' "$log" | head -n 20
# A deliberately broken include is caught (the test can fail).
printf '#include <libconfig.h>\n' >"$tmp/bad.c"
[ -n "$(grep -lE '#include [<"](libconfig|netlink/|avahi-|profile\.h|netif\.h|mdns\.h|model\.h|state\.h)' "$tmp/bad.c")" ]
ok $? "the include check catches a libconfig include"
# Samba's libraries cost every process ~27 ms of relocations at start-up: nastune loads
# libsmbclient only when the SMB driver connects (apply, render, status stay fast).
libs=$(ldd "$NASTUNE" 2>&1)
! grep -q smbclient <<<"$libs" && grep -q libnfs <<<"$libs"
ok $? "nastune does not link libsmbclient (dlopen()ed by the SMB driver)" "$libs"

