#!/usr/bin/env bash
# make install / uninstall: DESTDIR and PREFIX honoured, exactly the expected files with
# their modes, the example configuration installed once and never over the site's, the
# data directory compiled in (and a PREFIX change rebuilding the binary), the systemd
# units valid for systemd-analyze, and the bash completion following the command table.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../cli/lib.sh
. "$here/../cli/lib.sh"
BUILD=${BUILD:-build}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan 25

mk() { out=$(make -C "$top" "$@" 2>&1); rc=$?; [[ $rc -eq 0 ]] || tail -n 15 <<<"$out" | sed 's/^/#   /'; }

# --- DESTDIR, default PREFIX (the build the other suites use: nothing recompiled) ---
D=$tmp/dest
mk B="$BUILD" DESTDIR="$D" install
is "$rc" 0 "make install DESTDIR=... exits 0"
expected=$(
	cd "$top" || exit 1
	echo /etc/nastune/nastune.conf
	echo /usr/local/sbin/nastune
	echo /usr/local/lib/nastune/apply-hook
	for f in packaging/systemd/*.service; do echo "/usr/local/lib/systemd/system/${f##*/}"; done
	echo /usr/local/share/bash-completion/completions/nastune
	echo /usr/local/share/man/man5/nastune.conf.5
	echo /usr/local/share/man/man7/nastune-tune.7
	echo /usr/local/share/man/man8/nastune.8
	echo /usr/local/share/nastune/nastune.conf.example
	for f in profiles/*.conf; do echo "/usr/local/share/nastune/$f"; done
	for f in templates/*.mustache; do echo "/usr/local/share/nastune/$f"; done
)
got=$(cd "$D" && find . -type f -o -type l | sed 's/^\.//' | sort)
is "$got" "$(sort <<<"$expected")" "install writes exactly the binary, data, hook, units, man pages, completion and example"
modes=$(cd "$D" && find . -type f -printf '%m %p\n' | sort -k2)
bad=$(awk '($2 ~ /sbin\/nastune$|apply-hook$/ && $1 != 755) ||
	($2 !~ /sbin\/nastune$|apply-hook$/ && $1 != 644)' <<<"$modes")
is "$bad" "" "the binary and the hook are 0755, everything else 0644"
! grep -rlE '@[A-Z]+@' "$D/usr/local/lib" "$D/usr/local/share" >/dev/null
ok $? "no @PLACEHOLDER@ is left in the installed hook and units"
grep -qx 'ExecStart=/usr/local/sbin/nastune tune --if-changed' \
	"$D/usr/local/lib/systemd/system/nastune-retune.service"
ok $? "the retune unit runs the installed binary: nastune tune --if-changed"
cmp -s "$top/packaging/nastune.conf.example" "$D/etc/nastune/nastune.conf"
ok $? "the example configuration is installed as /etc/nastune/nastune.conf"

echo '# the site edited this' >>"$D/etc/nastune/nastune.conf"
mk B="$BUILD" DESTDIR="$D" install
grep -q '^# the site edited this' "$D/etc/nastune/nastune.conf"
ok $? "a second install keeps the site's configuration"
mk B="$BUILD" DESTDIR="$D" uninstall
is "$rc" 0 "make uninstall exits 0"
is "$(cd "$D" && find . -type f | sort)" "./etc/nastune/nastune.conf" \
	"uninstall removes everything install wrote but the edited configuration"
rm -rf "$D"
mk B="$BUILD" DESTDIR="$D" install && mk B="$BUILD" DESTDIR="$D" uninstall
is "$(find "$D" -type f | wc -l)" 0 "install then uninstall leaves no file while the example is untouched"

# --- PREFIX without DESTDIR: the binary finds its data where it was installed ---
P=$tmp/prefix
mk B="$tmp/b" PREFIX="$P" SYSCONFDIR="$P/etc" install
is "$rc" 0 "make install PREFIX=... SYSCONFDIR=... exits 0"
out=$(cd / && "$P/sbin/nastune" -c "$P/etc/nastune/nastune.conf" check 2>&1); rc=$?
is "$rc" 0 "the installed binary checks the installed example with its compiled-in data directory"
[[ $rc -eq 0 ]] || echo "# $out"
# The same build directory with another PREFIX must rebuild, not reuse a binary that looks
# under the first one (which is gone).
P2=$tmp/prefix2
mk B="$tmp/b" PREFIX="$P2" SYSCONFDIR="$P2/etc" install
rm -rf "$P"
out=$(cd / && "$P2/sbin/nastune" -c "$P2/etc/nastune/nastune.conf" check 2>&1); rc=$?
is "$rc" 0 "changing PREFIX rebuilds the binary with the new data directory"
[[ $rc -eq 0 ]] || echo "# $out"

# --- systemd units: systemd-analyze verify, offline, including the man pages they name ---
if command -v systemd-analyze >/dev/null; then
	for u in "$P2"/lib/systemd/system/*.service; do
		out=$(cd / && MANPATH=$P2/share/man systemd-analyze verify "$u" 2>&1); rc=$?
		[[ $rc -eq 0 && -z $out ]]
		ok $? "systemd-analyze verify ${u##*/}: no error, no warning"
		[[ -z $out ]] || sed 's/^/#   /' <<<"$out"
	done
else
	for u in "$top"/packaging/systemd/*.service; do
		ok 0 "systemd-analyze verify ${u##*/} # SKIP systemd-analyze is not installed"
	done
fi
unit() { grep -E "^$2=" "$P2/lib/systemd/system/$1" | tail -n1 | cut -d= -f2-; }
is "$(unit nastune-retune.service Type)" exec "retune is Type=exec (a oneshot would hold the boot while it tunes)"
is "$(unit nastune-retune.service After | grep -o network-online.target)$(unit nastune-retune.service Wants)" \
	"network-online.targetnetwork-online.target" "retune runs after the network is up"
is "$(unit nastune-retune.service WantedBy)" multi-user.target "retune runs at boot once enabled"
case $(unit nastune-agent.service ExecStart) in
"$P2/sbin/nastune agent "*) r=0 ;; *) r=1 ;; esac
ok $r "the agent unit runs nastune agent"

# --- bash completion: commands from the table, options from each command's usage ---
if [[ -f /usr/share/bash-completion/bash_completion ]]; then
	comp() {
		PATH=$P2/sbin:$PATH bash -c '
			. /usr/share/bash-completion/bash_completion
			. "$1"; shift
			COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
			COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			_nastune 2>/dev/null; printf "%s\n" "${COMPREPLY[@]}" | sort' \
			bash "$P2/share/bash-completion/completions/nastune" "$@"
	}
	table=$(grep -oE '\{ ?"[a-z][a-z0-9-]*", cmd_' "$top/src/cmd/main.c" | cut -d'"' -f2 | sort)
	is "$(comp nastune '')" "$table" "nastune <TAB> offers every command of the table"
	is "$(comp nastune -c x --json ap)" apply "a command after global options completes"
	grep -qx -- --if-changed <<<"$(comp nastune apply --)"
	ok $? "nastune apply --<TAB> offers --if-changed"
	is "$(comp nastune mtu '' | tr '\n' ' ')" "auto probe set show " "nastune mtu <TAB> offers its subcommands"
	is "$(comp nastune render --only smb,n)" "smb,nfs" "--only completes a comma-separated list"
else
	for _ in 1 2 3 4 5; do ok 0 "bash completion # SKIP bash-completion is not installed"; done
fi
