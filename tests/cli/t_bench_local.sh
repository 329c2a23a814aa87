#!/usr/bin/env bash
# bench, report, history: the posix driver on temp directories with small sizes, the --json
# shape, storage, reports (the HTML page rendered by headless Chromium), signals, stale
# scratch, Time Machine and free-space refusals, bad arguments.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
bgpid=
cleanup() {
	[ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null
	mountpoint -q "$tmp/small" 2>/dev/null && umount "$tmp/small"
	mountpoint -q "$tmp/ext4" 2>/dev/null && umount "$tmp/ext4"
	rm -rf "$tmp"
}
trap cleanup EXIT
plan 61

root="$tmp/root"
data="$tmp/data"
mkdir -p "$data"
quick=(--size 1M --repeat 2 --warmup 0 --files 5 --entries 20 --tree-files 20 --video-seconds 0.2 --cache hot
	--no-baseline)
scratch_left() { find "$1" -maxdepth 1 -name '.nastune-bench-*' | wc -l; }

# --- arguments
nt bench --help; is "$rc" 0 "bench --help exits 0"
echo "$out" | grep -q "seq-write seq-read copy-in-share mixed-rw small-files small-io random-io metadata video-frames big-dir source-tree"
ok $? "bench --help lists the workloads by their stable names"
nt --root "$root" bench --target ftp://host/x;   is "$rc" 2 "an unknown URL scheme exits 2"
echo "$err" | grep -q 'bad target "ftp://host/x": unknown scheme'; ok $? "the bad URL is named"
nt --root "$root" bench --target file://relative; is "$rc" 2 "a relative file:// URL exits 2"
nt --root "$root" bench --target 'smb://u:secret@h/s'; is "$rc" 2 "a password in the URL exits 2"
echo "$err" | grep -q secret; [ $? -ne 0 ]; ok $? "the refused password is not echoed"
nt --root "$root" bench --target "file://$data" --workload seq; is "$rc" 2 "an unknown workload exits 2"
nt --root "$root" bench --target "file://$data" --protocol ftp; is "$rc" 2 "an unknown protocol exits 2"
nt --root "$root" bench --target "file://$data" --repeat 0;  is "$rc" 2 "--repeat 0 exits 2"
nt --root "$root" bench --target "file://$data" --size 1Q;   is "$rc" 2 "a bad --size exits 2"
# Absurd sizes: refused at once, the value named (1.99999P once parsed as 1.017P).
for sz in 17T 1.99999P 99999999999999999999; do
	nt --root "$root" bench --target "file://$data" --size "$sz"
	[ "$rc" -eq 2 ] && echo "$err" | grep -q -- "--size '$sz' is not a size from 4K to 16T"
	ok $? "--size $sz exits 2 at once, naming the value and the bounds"
done
nt --root "$root" bench --target "file://$data" --video h264@30; is "$rc" 2 "an unknown video format exits 2"
nt --root "$root" history; is "$rc" 1 "history before any run exits 1"
echo "$err" | grep -q "no benchmark runs yet"; ok $? "history says there are no runs yet"

# --- a full run on the posix driver, --json
nt --json --root "$root" bench --target "file://$data" "${quick[@]}"
is "$rc" 0 "bench of every workload on a temp dir exits 0"
echo "$out" >"$tmp/run1.json"
python3 - "$tmp/run1.json" "file://$data" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d["run"], int) and d["run"] == 1, d["run"]
res = d["results"]
keys = {"target", "protocol", "workload", "metric", "unit", "median", "ci95_low", "ci95_high",
        "runs", "bottleneck", "client"}
wls = set()
for r in res:
    assert keys <= set(r), set(r) ^ keys
    assert r["target"] == sys.argv[2] and r["protocol"] == "posix" and r["client"] == "loopback"
    assert len(r["runs"]) == 2 and all(isinstance(x, (int, float)) for x in r["runs"])
    assert r["ci95_low"] <= r["median"] <= r["ci95_high"], r
    assert r["unit"] in ("MB/s", "us", "files/s", "fps", "frames", "ops/s"), r["unit"]
    assert r["bottleneck"] is None or isinstance(r["bottleneck"], str)
    wls.add(r["workload"])
assert wls == {"seq-write", "seq-read", "copy-in-share", "mixed-rw", "small-files", "small-io",
               "random-io", "metadata", "video-frames", "big-dir", "source-tree"}, wls
mb = [r for r in res if r["unit"] == "MB/s"]
assert mb and all(r["median"] > 0 for r in mb)
copy = [r for r in res if r["workload"] == "copy-in-share"][0]
assert "copy_file_range" in copy["note"] or "read+write" in copy["note"], copy["note"]
assert d["errors"] == [] and isinstance(d["hw_hash"], str) and len(d["hw_hash"]) == 64
PY
ok $? "--json prints {run, results: [{target, protocol, workload, metric, unit, median, ci95_low, ci95_high, runs, bottleneck, client}]}"
is "$(scratch_left "$data")" 0 "no scratch directory is left after a run"
is "$(ls -A "$data" | wc -l)" 0 "nothing else is left in the target either"

# --- with baselines: disk baseline and a bottleneck named
nt --json --root "$root" bench --target "file://$data" --workload seq-write --size 4M --repeat 2 \
	--warmup 0 --cache hot
is "$rc" 0 "bench with the raw disk baseline exits 0"
echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
b = {x["name"]: x for x in d["baselines"]}
assert b["disk-write"]["value"] > 0 and b["disk-read"]["value"] > 0, b
r = d["results"][0]
assert r["bottleneck"] and any(w in r["bottleneck"] for w in ("disk-bound", "overhead", "page cache")), r
'
ok $? "raw disk baselines are stored and the result names its bottleneck"

# --- history and report
nt --root "$root" history; is "$rc" 0 "history exits 0"
is "$(echo "$out" | grep -cE "^ +[12] ")" 2 "history lists both runs"
nt --json --root "$root" history
echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [r["run"] for r in d["runs"]] == [1, 2] and d["runs"][0]["results"] > 20
assert d["runs"][0]["targets"] == [sys.argv[1]]' "file://$data"
ok $? "history --json lists runs with their result counts and targets"
nt --root "$root" report; is "$rc" 0 "report exits 0"
echo "$out" | grep -q "^run 2,"; ok $? "report shows the latest run by default"
nt --root "$root" report --run 1
echo "$out" | grep -q "video-frames   write-fps" && echo "$out" | grep -q "^run 1,"
ok $? "report --run 1 shows run 1 with its video verdicts"
nt --root "$root" report --run 99; is "$rc" 2 "report of an unknown run exits 2"
nt --root "$root" report --run 1 --html "$tmp/report.html"; is "$rc" 0 "report --html exits 0"
grep -q "<svg" "$tmp/report.html" && ! grep -qiE "<script|(src|href)=" "$tmp/report.html"
ok $? "the HTML page has SVG charts and no scripts or external resources"

# The page rendered by headless Chromium: a non-trivial PNG, not all one colour.
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chrome" ]; then
	timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$tmp/chrome" --window-size=1000,1400 \
		--screenshot="$tmp/report.png" "file://$tmp/report.html" >/dev/null 2>&1
	python3 - "$tmp/report.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000, len(data)
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, t = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if t == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and ctype in (2, 6), (depth, ctype)
        bpp = 3 if ctype == 2 else 4
    elif t == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colours, i = {}, 0
for y in range(h):
    f = raw[i]; line = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, stride, bpp * 2):
            k = bytes(line[x:x + 3]); colours[k] = colours.get(k, 0) + 1
    prev = line
total = sum(colours.values())
top = max(colours.values())
assert len(colours) >= 8, len(colours)
assert top / total < 0.97, top / total   # not (almost) all background
PY
	ok $? "Chromium renders the report to a PNG with real content"
else
	ok 0 "# SKIP chromium is not installed (tests/deps.sh installs it)"
fi

# --- targets from the configuration
mkdir -p "$root/srv/data" "$root/srv/tm" "$root/srv/ro"
cat >"$tmp/nas.conf" <<'CONF'
shares = (
  { name = "Data"; path = "/srv/data"; protocols = ["smb", "afp"]; guest = true; },
  { name = "TM"; path = "/srv/tm"; protocols = ["smb"]; valid_users = ["nobody"];
    time_machine = { enabled = true; }; },
  { name = "RO"; path = "/srv/ro"; protocols = ["smb"]; read_only = true; guest = true; }
);
users = ( { name = "nobody"; } );
protocols = { nfs = { enabled = false; }; afp = { enabled = true; }; };
CONF
# (with the disk baseline, which names the directory measured)
nt --json --root "$root" -c "$tmp/nas.conf" bench --protocol posix --workload seq-write \
	--size 1M --repeat 2 --warmup 0 --cache hot
is "$rc" 0 "bench without --target exits 0"
echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = {r["target"] for r in d["results"]}
assert t == {"file:///srv/data"}, t' "$root"
ok $? "targets come from the configuration: file:// of each share path as written (not under --root), not the Time Machine share"
echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
w = {b["where"] for b in d["baselines"] if b["name"].startswith("disk")}
assert w == {sys.argv[1] + "/srv/data"}, w' "$root"
ok $? "the file:// target shown as written is measured under --root"
# No smbd answers on this host's loopback: the SMB target fails with a clear error, and the
# run goes on with the others.
nt --json --root "$root" -c "$tmp/nas.conf" bench --protocol smb,posix --workload seq-write "${quick[@]}"
[ "$rc" -eq 1 ] && echo "$err" | grep -q "smb://127.0.0.1/Data seq-write: .*127.0.0.1" &&
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert [r["protocol"] for r in d["results"]]==["posix"] and d["errors"][0]["protocol"]=="smb"' "$out"
ok $? "a target whose server does not answer: named with the cause, exit 1, the others still run"

# --- Time Machine
nt --root "$root" -c "$tmp/nas.conf" bench --target "file://$root/srv/tm" "${quick[@]}"
is "$rc" 2 "benchmarking the Time Machine share is refused"
echo "$err" | grep -q "Time Machine share TM; refusing.*--force"; ok $? "the refusal says why and how to override"
nt --root "$root" -c "$tmp/nas.conf" bench --target "file://$root/srv/tm" --workload seq-write --force "${quick[@]}"
is "$rc" 0 "--force benchmarks it anyway"
nt --root "$root" -c "$tmp/nas.conf" bench --target "file://$root/srv/ro" --size 4M --repeat 1 --warmup 0 --cache hot
[ "$rc" -eq 2 ] && echo "$err" | grep -q "is the read-only share RO; refusing" && [ -z "$(ls -A "$root/srv/ro")" ]
ok $? "a --target into a read-only share is refused (exit 2), nothing written, baseline included"
mkdir -p "$tmp/mac/Mac.sparsebundle"
nt --root "$root" bench --target "file://$tmp/mac" --workload seq-write "${quick[@]}"
is "$rc" 1 "a directory holding a sparsebundle is refused as a Time Machine destination"
echo "$err" | grep -q "looks like a Time Machine share (it holds Mac.sparsebundle)"; ok $? "the marker is named"

# --- a scratch-looking name is not scratch: only what a run recorded is ever removed (what a
# crashed run left: tests/cli/t_scratch_local.sh)
sleep 0 & dead=$!; wait $dead
host=$(hostname)
mkdir -p "$data/.nastune-bench-$host-$dead-1/sf" "$data/.nastune-bench-otherhost-1-1"
echo x >"$data/.nastune-bench-$host-$dead-1/sf/f"
nt --root "$root" bench --target "file://$data" --workload seq-write "${quick[@]}"
is "$rc" 0 "bench with scratch-looking names present exits 0"
[ -e "$data/.nastune-bench-$host-$dead-1/sf/f" ] && [ -d "$data/.nastune-bench-otherhost-1-1" ]
ok $? "names no run recorded are left alone (this host's dead pid, another host's)"
rm -rf "$data/.nastune-bench-otherhost-1-1" "$data/.nastune-bench-$host-$dead-1"

# --- SIGINT and SIGTERM mid-run leave no scratch
for sig in INT TERM; do
	"$NASTUNE" --root "$root" bench --target "file://$data" --workload video-frames \
		--video-seconds 30 --repeat 1 --warmup 0 --cache hot --no-baseline \
		>/dev/null 2>"$tmp/sig.err" &
	bgpid=$!
	for _ in $(seq 100); do [ "$(scratch_left "$data")" -gt 0 ] && break; sleep 0.05; done
	sleep 0.3
	kill -"$sig" "$bgpid"
	wait "$bgpid"; src=$?; bgpid=
	is "$src" 1 "SIG$sig mid-run exits 1"
	grep -q "interrupted by SIG$sig; scratch directories removed" "$tmp/sig.err" &&
		[ "$(scratch_left "$data")" -eq 0 ]
	ok $? "SIG$sig mid-run leaves no scratch directory and says so"
done

# --- not enough space: a small tmpfs (root), else a size no disk has
mkdir -p "$tmp/small"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=16m tmpfs "$tmp/small" 2>/dev/null; then
	nt --root "$root" bench --target "file://$tmp/small" --workload seq-write --size 8M \
		--repeat 1 --warmup 0 --cache hot --no-baseline
else
	nt --root "$root" bench --target "file://$tmp/small" --workload seq-write --size 1P \
		--repeat 1 --warmup 0 --cache hot --no-baseline
fi
is "$rc" 1 "too little free space exits 1"
echo "$err" | grep -q "not enough free space on file://$tmp/small for seq-write: .* free, need .*nothing was written"
ok $? "the refusal names the target, what is free and what is needed"
is "$(ls -A "$tmp/small" | wc -l)" 0 "nothing was written to the small filesystem"

# --- refusals with the raw disk baseline on write nothing: an ext4 image, whose lifetime write
# counter sees every block written (also files written and deleted again)
mkdir -p "$tmp/ext4"
if [ "$(id -u)" -eq 0 ] && truncate -s 64M "$tmp/ext4.img" && mkfs.ext4 -q -F "$tmp/ext4.img" &&
	mount -o loop,noatime "$tmp/ext4.img" "$tmp/ext4" 2>/dev/null; then
	dev=$(basename "$(findmnt -no SOURCE "$tmp/ext4")")
	written() { sync -f "$tmp/ext4"; cat "/sys/fs/ext4/$dev/lifetime_write_kbytes"; }
	mkdir "$tmp/ext4/share"; sync -f "$tmp/ext4"
	w0=$(written)
	# 32M: the baseline alone would fit in ~50M free; the workload needs 2 x 32M + 64M.
	nt --root "$root" bench --target "file://$tmp/ext4/share" --workload seq-write --size 32M \
		--repeat 1 --warmup 0 --cache hot
	is "$rc" 1 "a nearly full disk is refused with the baseline on"
	echo "$err" | grep -q "raw disk baseline of $tmp/ext4/share: not enough free space" &&
		echo "$err" | grep -q "for seq-write: .*nothing was written"
	ok $? "the baseline and the workload both refuse for want of space"
	is "$(written)" "$w0" "not one block was written to the filesystem"
	mkdir "$tmp/ext4/share/Mac.sparsebundle"; w0=$(written)
	nt --root "$root" bench --target "file://$tmp/ext4/share" --workload seq-write --size 4M \
		--repeat 1 --warmup 0 --cache hot
	[ "$rc" -eq 1 ] && echo "$err" | grep -q "raw disk baseline of .*looks like a Time Machine share"
	ok $? "a Time Machine destination is refused by the baseline too"
	is "$(written)" "$w0" "not one block was written to the Time Machine destination"
	is "$(ls -A "$tmp/ext4/share")" "Mac.sparsebundle" "its directory is unchanged"
	umount "$tmp/ext4"
else
	for _ in 1 2 3 4 5 6; do ok 0 "# SKIP needs root and a loop device"; done
fi

# --- a share user plants the baseline's once predictable name (<host>-<pid>-disk) and the
# first scratch directory's as symlinks to files outside the share; in a new pid namespace
# nastune is pid 1, so the plant is exact
host=$(hostname)
mkdir -p "$tmp/planted" "$tmp/outside"
echo precious >"$tmp/outside/victim"
ln -s "$tmp/outside/victim" "$tmp/planted/.nastune-bench-$host-1-disk"
ln -s "$tmp/outside" "$tmp/planted/.nastune-bench-$host-1-1"
if [ "$(id -u)" -eq 0 ] && unshare -pf true 2>/dev/null; then
	o=$(unshare -pf "$NASTUNE" --datadir "$top" --root "$root" bench \
		--target "file://$tmp/planted" --workload seq-write,small-files --size 4M \
		--files 5 --repeat 1 --warmup 0 --cache hot 2>&1); rc=$?
	is "$rc" 0 "bench with planted symlinks (baseline on) exits 0" 
	[ "$(cat "$tmp/outside/victim")" = precious ] && [ "$(ls -A "$tmp/outside")" = victim ]
	ok $? "nothing outside the share was written, truncated or created"
	[ -L "$tmp/planted/.nastune-bench-$host-1-disk" ] && [ "$(ls -A "$tmp/planted" | wc -l)" -eq 2 ]
	ok $? "the planted names are left as they were and nothing else remains"
else
	for _ in 1 2 3; do ok 0 "# SKIP needs root and pid namespaces"; done
fi
