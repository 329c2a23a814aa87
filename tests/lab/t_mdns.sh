#!/bin/bash
# Bonjour with one owner: the records a client sees through its own avahi-daemon —
# each exactly once, with the exact TXT values — for SMB, AFP and dual Time Machine shares
# and NFS exports; renames and removals leave nothing stale; avahi-daemon restarts; a live
# `nastune mdns publish` that collides with another host and survives a daemon restart.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 30

cleanup() {
	on server "$NASTUNE" --root "$SROOT" mdns withdraw >/dev/null 2>&1
	pkill -f "avahi-publish -s atlas _nastune._tcp" 2>/dev/null
	"$LAB" up >/dev/null 2>&1	# avahi-daemon back if a test left it dead
	"$LAB" apply "$DEMO" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT

until_ok() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 4; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	"$@"
}
# nts ARGS...: nastune in the server on its root; sets $out, $err, $rc.
NTS_TIMEOUT=60
apply_conf() { cp "$1" "$WORK/cur.conf"; "$LAB" apply "$1" >"$WORK/apply.log" 2>&1; }

# browse: client1's view through avahi-browse, IPv4, resolved, one JSON line per record:
# {"type", "name", "addr", "port", "txt": sorted list}.
browse() {
	on client1 timeout 8 avahi-browse -rpt -k "$@" 2>/dev/null | python3 -c '
import json, sys, re
for line in sys.stdin:
    f = line.rstrip("\n").split(";")
    if f[0] != "=" or f[2] != "IPv4":
        continue
    name = re.sub(r"\\(\d{3})", lambda m: chr(int(m.group(1))), f[3])
    txt = re.findall(r"\"((?:[^\"\\\\]|\\\\.)*)\"", ";".join(f[9:]))
    print(json.dumps({"type": f[4], "name": name, "addr": f[7], "port": int(f[8]), "txt": sorted(txt)}))
'
}
# expect DESCRIPTION PYTHON-EXPR: the expression over r (the list of records) holds, within 8 s.
expect() {
	local desc=$1 expr=$2 i got
	for ((i = 0; i < 8; i++)); do
		got=$(browse -a)
		python3 -c 'import json,sys; r=[json.loads(l) for l in sys.argv[1].splitlines() if l]; sys.exit(0 if eval(sys.argv[2]) else 1)' "$got" "$expr" && break
		sleep 1
	done
	python3 -c 'import json,sys; r=[json.loads(l) for l in sys.argv[1].splitlines() if l]; sys.exit(0 if eval(sys.argv[2]) else 1)' "$got" "$expr"
	ok $? "$desc" "$got"
}

mkdir -p "$SROOT/srv/tmafp" "$SROOT/srv/tmboth"
chown 29001:29000 "$SROOT/srv/tmafp" "$SROOT/srv/tmboth"
chmod 0700 "$SROOT/srv/tmafp" "$SROOT/srv/tmboth"
# mkconf TMSMB_NAME [AFP on|off] [drop NFS share]: demo + three Time Machine shares.
mkconf() {
	local afp=${2:-on}
	python3 - "$DEMO" "$1" "$afp" "${3:-}" <<'PY'
import sys, re
demo, tmsmb, afp, drop = sys.argv[1:5]
s = open(demo).read()
s = re.sub(r'\{ name = "TimeMachine";.*?\}; \},\n', '', s, flags=re.S)
tm = ('  { name = "%s"; path = "/srv/tm"; protocols = ["smb"]; valid_users = ["alice"];\n'
      '    time_machine = { enabled = true; }; },\n' % tmsmb)
if afp == "on":
    tm += ('  { name = "TMafp"; path = "/srv/tmafp"; protocols = ["afp"]; valid_users = ["alice"];\n'
           '    time_machine = { enabled = true; }; },\n'
           '  { name = "TMboth"; path = "/srv/tmboth"; protocols = ["smb", "afp"]; valid_users = ["alice"];\n'
           '    time_machine = { enabled = true; max_size = "1T"; }; },\n')
else:
    s = s.replace('afp = { enabled = true;', 'afp = { enabled = false;')
    s = s.replace('"smb", "nfs", "afp"]', '"smb", "nfs"]')
    tm += ('  { name = "TMboth"; path = "/srv/tmboth"; protocols = ["smb"]; valid_users = ["alice"];\n'
           '    time_machine = { enabled = true; }; },\n')
s = s.replace('shares = (\n', 'shares = (\n' + tm, 1)
if drop:
    s = re.sub(r'\n[ \t]*\{ name = "%s";.*?\}(?=,?\n)' % drop, '', s, flags=re.S)
    s = re.sub(r',\s*\n\);', '\n);', s)
open(sys.stdout.fileno(), 'w').write(s)
PY
}

# --- static records, each once, exact TXT -------------------------------------------------------
mkconf TMsmb >"$WORK/tm.conf"
apply_conf "$WORK/tm.conf"
ok $? "apply: SMB, AFP and dual Time Machine shares + NFS exports" "$(cat "$WORK/apply.log")"
svc=$SROOT/etc/avahi/services/nastune.service
uuid() { python3 -c 'import sys,re; print(re.search(r"adVN=%s,adVF=0x[0-9a-f]+,adVU=([0-9A-F-]{36})" % sys.argv[2], open(sys.argv[1]).read()).group(1))' "$svc" "$1"; }
U1=$(uuid TMsmb) U2=$(uuid TMafp) U3=$(uuid TMboth)
[[ $U1 =~ ^[0-9A-F]{8}-[0-9A-F]{4}-5[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$ && $U1 != "$U2" && $U2 != "$U3" ]]
ok $? "each Time Machine disk has its own name-based adVU ($U1)"
expect "_adisk._tcp once, TXT exactly sys + dk0 SMB 0x82, dk1 AFP 0x81, dk2 both 0x83" \
	'[x["txt"] for x in r if x["type"]=="_adisk._tcp"] == [sorted(["sys=waMa=0,adVF=0x100", "dk0=adVN=TMsmb,adVF=0x82,adVU='"$U1"'", "dk1=adVN=TMafp,adVF=0x81,adVU='"$U2"'", "dk2=adVN=TMboth,adVF=0x83,adVU='"$U3"'"])] and [x["port"] for x in r if x["type"]=="_adisk._tcp"]==[9]'
expect "_smb._tcp exactly once (smbd registers nothing itself), port 445, name atlas" \
	'[(x["name"],x["port"],x["addr"]) for x in r if x["type"]=="_smb._tcp"] == [("atlas",445,"'"$SERVER"'")]'
expect "_afpovertcp._tcp exactly once (afpd zeroconf off), port 548" \
	'[(x["name"],x["port"]) for x in r if x["type"]=="_afpovertcp._tcp"] == [("atlas",548)]'
expect "_device-info._tcp once with the configured model" \
	'[(x["name"],x["port"],x["txt"]) for x in r if x["type"]=="_device-info._tcp"] == [("atlas",0,["model=TimeCapsule8,119"])]'
expect "_nfs._tcp: one per export with its path, each once" \
	'sorted((x["name"],x["port"],x["txt"][0]) for x in r if x["type"]=="_nfs._tcp") == [("atlas Archive",2049,"path=/srv/archive"),("atlas Media",2049,"path=/srv/media"),("atlas Public",2049,"path=/srv/public")]'
expect "no other NAS record from the server (7 in all)" \
	'len([x for x in r if x["addr"]=="'"$SERVER"'" and x["type"] in ("_smb._tcp","_afpovertcp._tcp","_adisk._tcp","_device-info._tcp","_nfs._tcp")]) == 7'

# nastune's own browser sees the same.
out=$(on client1 "$NASTUNE" --json mdns browse -4 2>&1)
got=$(browse -a)
python3 - "$out" "$got" <<'PY'
import json, sys
mine = {(s["type"], s["name"], s["port"], tuple(sorted(s["txt"]))) for s in json.loads(sys.argv[1])["services"] if s["address"] == "198.18.0.1"}
ref = {(x["type"], x["name"], x["port"], tuple(x["txt"])) for x in map(json.loads, sys.argv[2].splitlines()) if x["addr"] == "198.18.0.1" and x["type"] != "_nastune._tcp"}
sys.exit(0 if mine == ref and len(mine) == 7 else 1)
PY
ok $? "nastune mdns browse --json on client1 = avahi-browse (types, names, ports, TXT)" "$out"
nts status
[[ $rc = 0 ]] && grep -q "Bonjour, as clients see it" <<<"$out" && grep -qE "_adisk._tcp +atlas +$SERVER:9" <<<"$out"
ok $? "status lists the advertised records" "$(both)"

# --- renames and removals leave nothing stale ---------------------------------------------------
mkconf TMsmbNew >"$WORK/tm2.conf"
apply_conf "$WORK/tm2.conf"
expect "renamed Time Machine share: the client sees dk0=adVN=TMsmbNew (same adVU), not TMsmb" \
	'(lambda t: "dk0=adVN=TMsmbNew,adVF=0x82,adVU='"$U1"'" in t and not any("adVN=TMsmb," in v for v in t))([v for x in r if x["type"]=="_adisk._tcp" for v in x["txt"]])'
mkconf TMsmbNew off Archive >"$WORK/tm3.conf"
apply_conf "$WORK/tm3.conf"
ok $? "apply: AFP disabled, the Archive export removed" "$(cat "$WORK/apply.log")"
expect "AFP disabled: no _afpovertcp._tcp; TMboth is SMB only now (0x82); no dk for TMafp" \
	'not [x for x in r if x["type"]=="_afpovertcp._tcp"] and (lambda t: "dk1=adVN=TMboth,adVF=0x82,adVU='"$U3"'" in t and not any("TMafp" in v for v in t))([v for x in r if x["type"]=="_adisk._tcp" for v in x["txt"]])'
expect "removed export: no _nfs._tcp for Archive, the others stay" \
	'sorted(x["name"] for x in r if x["type"]=="_nfs._tcp") == ["atlas Media","atlas Public"]'
[[ $(ls "$SROOT"/etc/avahi/services/nastune-nfs-*.service | wc -l) = 2 ]] && ! grep -l "/srv/archive" "$SROOT"/etc/avahi/services/*.service
ok $? "... and its Avahi file is gone (2 NFS service files left)" "$(ls "$SROOT"/etc/avahi/services/)"
apply_conf "$WORK/tm.conf"

# --- avahi-daemon restarts; a live publisher comes back by itself -------------------------------
(on server sh -c "exec $NASTUNE --root $SROOT mdns publish --name nastune-live --port 7070 >/run/lab-pub.out 2>&1" &)
until_ok 5 grep -q "^published" "$SROOT/run/lab-pub.out"
expect "mdns publish: client1 sees the live _nastune._tcp record with version TXT" \
	'[(x["name"],x["port"]) for x in r if x["type"]=="_nastune._tcp" and x["addr"]=="'"$SERVER"'"] == [("nastune-live",7070)] and any(t.startswith("version=") for x in r if x["type"]=="_nastune._tcp" for t in x["txt"])'
on server sh -c 'kill $(cat /run/avahi-daemon/pid)'
until_ok 5 sh -c "! $LAB exec server sh -c 'kill -0 \$(cat /run/avahi-daemon/pid)' 2>/dev/null"
expect "avahi-daemon killed on the server: its records leave the client" \
	'not [x for x in r if x["addr"]=="'"$SERVER"'"]'
out=$("$LAB" up 2>&1)
ok $? "lab up restarts avahi-daemon" "$out"
expect "static records return by themselves (smb, adisk with 3 disks, nfs)" \
	'len([x for x in r if x["type"]=="_nfs._tcp" and x["addr"]=="'"$SERVER"'"])==3 and len([v for x in r if x["type"]=="_adisk._tcp" for v in x["txt"]])==4 and [x for x in r if x["type"]=="_smb._tcp"]'
expect "the live publication re-registered by itself" \
	'[(x["name"],x["port"]) for x in r if x["type"]=="_nastune._tcp" and x["addr"]=="'"$SERVER"'"] == [("nastune-live",7070)]'
grep -q "lost avahi-daemon" "$SROOT/run/lab-pub.out" && grep -q 'registering "nastune-live" again' "$SROOT/run/lab-pub.out"
ok $? "... and said so" "$(cat "$SROOT/run/lab-pub.out")"
nts mdns withdraw
[[ $rc = 0 ]] && until_ok 5 sh -c "! pgrep -f '[m]dns publish --name nastune-live' >/dev/null"
ok $? "mdns withdraw stops the publisher" "$(both)"
expect "... and its record leaves the client" 'not [x for x in r if x["type"]=="_nastune._tcp" and x["addr"]=="'"$SERVER"'"]'

# --- name collision with another host -----------------------------------------------------------
(on client2 sh -c 'exec avahi-publish -s atlas _nastune._tcp 7071 >/dev/null 2>&1' &) 2>/dev/null
expect "client2 publishes _nastune._tcp as \"atlas\"" '[x for x in r if x["type"]=="_nastune._tcp" and x["name"]=="atlas"]'
(on server sh -c "exec $NASTUNE --root $SROOT mdns publish --name atlas --port 7070 >/run/lab-pub2.out 2>&1" &)
until_ok 8 grep -q "^published" "$SROOT/run/lab-pub2.out"
grep -q 'the name "atlas" is taken on the network; publishing as "atlas #2"' "$SROOT/run/lab-pub2.out"
ok $? "the server's live record collides, is renamed to \"atlas #2\" and says so" "$(cat "$SROOT/run/lab-pub2.out")"
expect "client1 sees both: atlas (client2) and atlas #2 (server)" \
	'sorted((x["name"],x["port"]) for x in r if x["type"]=="_nastune._tcp") == [("atlas",7071),("atlas #2",7070)]'
nts mdns withdraw
pkill -f "avahi-publish -s atlas _nastune._tcp"

# --- no avahi-daemon ----------------------------------------------------------------------------
on server sh -c 'kill $(cat /run/avahi-daemon/pid)'
until_ok 5 sh -c "! $LAB exec server sh -c 'kill -0 \$(cat /run/avahi-daemon/pid)' 2>/dev/null"
nts mdns publish --name x --for 1
[[ $rc = 1 ]] && grep -q "avahi-daemon is not running .* start it" <<<"$err"
ok $? "mdns publish without a daemon: exit 1 with what to do" "$(both)"
nts mdns browse
[[ $rc = 1 ]] && grep -q "avahi-daemon is not running" <<<"$err"
ok $? "mdns browse without a daemon: exit 1, same message" "$(both)"
cp "$WORK/tm2.conf" "$SROOT/etc/nastune/nastune.conf"
nts apply
[[ $rc = 0 ]] && grep -q "adVN=TMsmbNew" "$svc" && [[ $(grep -c "avahi-daemon is not running" <<<"$err") = 1 ]]
ok $? "apply without avahi-daemon: file written, warned once, exit 0" "$(both)"
out=$("$LAB" up 2>&1)
expect "when avahi-daemon starts again the new records are published" \
	'"dk0=adVN=TMsmbNew,adVF=0x82,adVU='"$U1"'" in [v for x in r if x["type"]=="_adisk._tcp" for v in x["txt"]]'

[[ $TAP_N = 30 ]] || echo "# ran $TAP_N tests, planned 30"
done_testing
