#!/usr/bin/env bash
# What comes from a peer or a config. An agent's host name, targets and error texts
# (an unauthenticated peer's too) print escaped in bench, history and report; an AFP path
# afp.conf cannot carry is refused with file:line; a missing testparm fails the apply with
# nothing changed; the state database is 0600 whatever the umask.
. "$(dirname "$0")/lib.sh"
plan 11
tmp=$(mktemp -d /tmp/nastune-untrusted.XXXXXX)
root=$tmp/root
PF=$((21000 + $$ % 20000))
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$root/srv/data" "$tmp/bin"

# --- an AFP path with ';' or '#': netatalk would end the value there
for c in ';' '#'; do
	cat >"$tmp/afp.conf" <<CONF
protocols = { afp = { enabled = true; }; nfs = { enabled = false; }; };
shares = (
  { name = "Media"; path = "/srv/a${c}b"; protocols = ["smb", "afp"]; guest = true; }
);
CONF
	nt --root "$root" -c "$tmp/afp.conf" apply --no-reload
	[ "$rc" = 2 ] && grep -q "^$tmp/afp.conf:3: share 'Media' path '/srv/a${c}b' holds ';' or '#'" <<<"$err" &&
		[ ! -e "$root/etc" ]
	ok $? "an AFP share path with '$c' is refused with file:line, exit 2, nothing written" "$err"
done
sed -i 's/"smb", "afp"/"smb"/' "$tmp/afp.conf"
nt -c "$tmp/afp.conf" check
is "$rc" 0 "the same path without afp is accepted (SMB and NFS carry it)"

cat >"$tmp/nas.conf" <<'CONF'
shares = ( { name = "Data"; path = "/srv/data"; protocols = ["smb"]; guest = true; } );
protocols = { nfs = { enabled = false; }; };
CONF
# --- no testparm: no apply (exit 1), nothing installed; state.db 0600 under umask 022
(umask 022; PATH=$tmp/bin "$NASTUNE" --datadir "$top" --root "$root" -c "$tmp/nas.conf" apply --no-reload) \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && grep -q "testparm is not installed" "$tmp/err" && [ ! -e "$root/etc/samba/smb.conf" ]
ok $? "apply without testparm fails (exit 1) and installs nothing" "$(cat "$tmp/err")"
is "$(stat -c %a "$root/var/lib/nastune/state.db")" 600 "state.db is created 0600 under umask 022"

# --- a peer's strings on the terminal
nt --root "$root" pair >/dev/null
fake() {
	timeout 60 python3 "$top/tests/cli/agent_peer.py" --fake-agent "127.0.0.1:$PF" \
		"$root/var/lib/nastune/agent.key" "$1" >"$tmp/fake.out" 2>&1 &
	local fp=$!
	for _ in $(seq 300); do grep -q listening "$tmp/fake.out" && break; sleep 0.1; done
	nt --root "$root" -c "$tmp/nas.conf" bench --client "127.0.0.1:$PF" --clients-only \
		--workload seq-write --size 1M --repeat 2 --warmup 0 --cache hot
	wait "$fp"
}
# clean TEXT: no escape or other control byte but the newlines between lines, no forged line.
clean() {
	! LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' <<<"$1" && ! grep -q '^generation 42' <<<"$1" &&
		grep -qF 'evil\x1b[2J\x1b[31m\x0ageneration 42 installed' <<<"$1"
}
fake evil
clean "$out" && clean "$err"
ok $? "bench: the agent's host name and target print escaped (stdout and stderr)" "$out$err"
nt --root "$root" history
clean "$out"
ok $? "history: the target prints escaped" "$out"
nt --root "$root" report
clean "$out"
ok $? "report: host name and target print escaped" "$out"
nt --root "$root" report --html "$tmp/r.html"
! LC_ALL=C grep -q $'\x1b' "$tmp/r.html"
ok $? "report --html holds no escape byte"
fake errpre
[ "$rc" = 1 ] && clean "$err"
ok $? "an unauthenticated peer's error text prints escaped" "$err"
nt --root "$root" history
! LC_ALL=C grep -q $'\x1b' <<<"$out$err"
ok $? "history after the refused peer holds no escape byte" "$out"
