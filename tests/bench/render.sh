#!/usr/bin/env bash
# Render benchmark: a generated configuration with 1000 shares (SMB+NFS+AFP, 100 Time Machine).
# Prints the median wall time of `nastune render` (load, validate, render to stdout) over 11 runs (target: under 50 ms) and,
# as the in-run reference, the median time of `testparm -s` loading the smb.conf it produced.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
nastune=${NASTUNE:-$top/build/nastune}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
{
	echo 'protocols = { afp = { enabled = true; }; nfs = { enabled = true; server = "ganesha"; }; };'
	echo 'users = ( { name = "alice"; } );'
	echo 'shares = ('
	for i in $(seq 1 1000); do
		sep=","; [ "$i" = 1000 ] && sep=""
		if [ $((i % 10)) = 0 ]; then
			echo "  { name = \"TM$i\"; path = \"/srv/tm/$i\"; protocols = [\"smb\", \"afp\"]; valid_users = [\"alice\"]; time_machine = { enabled = true; max_size = \"1T\"; }; }$sep"
		else
			echo "  { name = \"Share$i\"; path = \"/srv/share/$i\"; protocols = [\"smb\", \"nfs\", \"afp\"]; comment = \"share $i\"; nfs = { clients = [\"198.18.0.0/15\"]; }; }$sep"
		fi
	done
	echo ');'
} >"$tmp/big.conf"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timeit() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
"$nastune" --datadir "$top" -c "$tmp/big.conf" render -o "$tmp/out"
r=$(for i in $(seq 11); do timeit "$nastune" --datadir "$top" -c "$tmp/big.conf" render; done | median)
w=$(for i in $(seq 3); do timeit "$nastune" --datadir "$top" -c "$tmp/big.conf" render -o "$tmp/out"; done | median)
t=$(for i in $(seq 5); do timeit testparm -s "$tmp/out/etc/samba/smb.conf"; done | median)
printf 'render-1000-shares: median %.1f ms (target < 50 ms: %s); testparm on the same smb.conf %.1f ms; ratio render/testparm %.2f\n' \
	"$(awk "BEGIN{print $r/1000}")" "$([ "$r" -lt 50000 ] && echo met || echo MISSED)" \
	"$(awk "BEGIN{print $t/1000}")" "$(awk "BEGIN{print $r/$t}")"
printf 'render-1000-shares -o DIR (1000+ files, each written atomically with fsync): median %.1f ms\n' "$(awk "BEGIN{print $w/1000}")"
