#!/bin/bash
# Self-tuning in the lab: planted known-bad settings are measured and fixed when
# safe (SMB encryption required, planted as a tuned value), unsafe ones stay and say why
# (strict sync with tuning.allow_unsafe = false), pinned ones are left alone, every knob has a
# decision; the winner is a generation that rollback undoes; --dry-run and --if-changed; a
# tune interrupted (SIGTERM) or killed (SIGKILL) leaves the configuration it started with.
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
lab_ready
plan 42

cleanup() { rm -f "$SROOT/etc/nastune/tuned.conf"; "$LAB" apply "$DEMO" >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT
both() { printf 'rc=%s\nstdout:\n%s\nstderr:\n%s\n' "$rc" "$out" "$err" | head -c 20000; }
CONF=$SROOT/etc/nastune/nastune.conf
CR=$SROOT/etc/nastune/tune.creds
printf 'username = alice\npassword = %s\n' "$(password alice)" >"$CR"
chmod 600 "$CR"
nts() {
	timeout 900 "$LAB" exec server "$NASTUNE" --root "$SROOT" -c "$CONF" "$@" >"$WORK/out" 2>"$WORK/err" 7>&-
	rc=$?
	out=$(<"$WORK/out")
	err=$(<"$WORK/err")
}
j() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if eval(sys.argv[2]) else 1)' "$out" "$1"; }
knob() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); k=[x for x in d["knobs"] if x["name"]==sys.argv[2]][0]; print(json.dumps(k))' "$out" "$1"; }
smbconf() { cat "$SROOT/etc/samba/smb.conf"; }
gens() { "$LAB" exec server "$NASTUNE" --root "$SROOT" -c "$CONF" --json status 7>&- | python3 -c 'import json,sys; print(json.load(sys.stdin)["generations"][-1])'; }
quick=(--size 32M --repeat 32 --credentials "$CR") # the pairs a test needs, not what a budget allows

# --- plant: encryption required (as if an earlier tune had chosen it); a pin; the defaults
cp "$DEMO" "$CONF"
sed -i 's|^tuning = .*|tuning = { goal = "throughput"; allow_unsafe = false; budget = "10m"; knobs = { smb = { multichannel = "yes"; }; }; };|' "$CONF"
printf 'knobs = { smb = { smb_encrypt = "required"; }; };\n' >"$SROOT/etc/nastune/tuned.conf"
nts apply
[[ $rc = 0 ]] && grep -q "server smb encrypt = required" <<<"$(smbconf)"
ok $? "planted: smb encrypt = required is in force (tuned.conf), multichannel pinned in nastune.conf" "$(both)"
pre=$(smbconf)
g0=$(gens)

# --- dry run: measures, reports, changes nothing
# testparm and smbd -b through wrappers that log each run: a trial validates each smb.conf text
# once, and smbd -b is asked once per process (they once ran at every switch).
# (under the server's root: the lab's /tmp is not the server's)
wrap="$SROOT/.t_tune-bin"
mkdir -p "$wrap"
for t in testparm smbd; do
	printf '#!/bin/sh\necho "$*" >>%s/%s.log\nexec %s "$@"\n' "$wrap" "$t" "$(command -v $t || echo /usr/sbin/$t)" >"$wrap/$t"
	chmod +x "$wrap/$t"; : >"$wrap/$t.log"
done
PATH="$wrap:$PATH" nts --json tune --dry-run --knobs smb.smb_encrypt "${quick[@]}"
[[ $rc = 0 ]] && j 'd["status"]=="dry-run"' && [[ $(smbconf) = "$pre" && $(gens) = "$g0" ]]
ok $? "tune --dry-run: reports, and the installed configuration and generations are unchanged" "$(both)"
tp=$(wc -l <"$wrap/testparm.log"); sb=$(grep -c -- '-b' "$wrap/smbd.log"); rm -rf "$wrap"
# smb_encrypt from required: off, desired and default/if_required (one text): at most 3 texts
# besides the start's, where every switch (a dozen and more) once ran both
[[ $tp -ge 1 && $tp -le 4 && $sb = 1 ]]
ok $? "its trials ran testparm once per smb.conf text ($tp runs) and smbd -b once ($sb), not at every switch" "$(both)"

# --- the tune
nts --json tune --knobs smb.smb_encrypt,smb.strict_sync,smb.multichannel,smb.use_sendfile "${quick[@]}"
nreload=$(grep -c 'smbd: reloaded' <<<"$err")
[[ $rc = 0 && $nreload -le 3 ]] && j 'd["status"]=="done"'
ok $? "tune exits 0, status done; its trials' reloads are not a line each, only with -v ($nreload lines: the applied winner's)" "$(both)"
k=$(knob smb.smb_encrypt)
python3 -c 'import json,sys; k=json.loads(sys.argv[1]); sys.exit(0 if k["before"]=="required" and k["after"] in ("default","off","if_required","desired") and k["applied"] and k["reason"].startswith("better") and k["effect"]>0.03 else 1)' "$k"
ok $? "encryption required -> $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["after"])' "$k"): measured better and applied ($(python3 -c 'import json,sys; k=json.loads(sys.argv[1]); print(k["reason"])' "$k"))" "$k"
grep -q 'smb.smb_encrypt = if_required: not measured: the same as .*"default" is "if_required"' <<<"$err" &&
	grep -q 'trying smb.smb_encrypt = .* (side by side with required, up to [0-9]* pairs)' <<<"$err"
ok $? "a value documented as the same as one measured is not measured again; candidates are measured side by side with the incumbent" "$(both)"
k=$(knob smb.strict_sync)
python3 -c 'import json,sys; k=json.loads(sys.argv[1]); sys.exit(0 if not k["applied"] and k["safety"]=="unsafe" and "lose data" in k["reason"] and "allow_unsafe" in k["reason"] else 1)' "$k"
ok $? "strict sync: unsafe, not tried with allow_unsafe = false, and says so" "$k"
k=$(knob smb.multichannel)
python3 -c 'import json,sys; k=json.loads(sys.argv[1]); sys.exit(0 if not k["applied"] and "pinned" in k["reason"] and "nastune.conf" in k["reason"] else 1)' "$k"
ok $? "multichannel: pinned in nastune.conf, left alone, with the file and line" "$k"
k=$(knob smb.use_sendfile)
python3 -c 'import json,sys; k=json.loads(sys.argv[1]); sys.exit(0 if k["reason"] and (k["applied"] == k["reason"].startswith("better")) else 1)' "$k"
ok $? "use sendfile: measured, with a decision ($(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["reason"])' "$k"))" "$k"
j 'len(d["knobs"])>=23 and all(x["reason"] for x in d["knobs"]) and all(set(x)>= {"name","safety","before","after","applied","reason","effect","interval","candidates"} for x in d["knobs"]) and all(x["verdict"] in ("better","worse","same","undecided","no effect beyond","not reached") and x["decided_by"]=="loopback" and x["candidates"] and (x["interval"] is None or all(abs(v) < 100 for v in x["interval"])) for x in d["knobs"] if x["tried"])'
ok $? "every knob of the table has a decision (name, safety, before, after, applied, reason, effect, interval); every knob tried a verdict, decided on loopback, with its candidates, and no infinite interval" "$(both)"
j 'd["before"]["median"]>0 and d["after"]["median"]>d["before"]["median"] and d["before"]["ci95_low"]<=d["before"]["median"]<=d["before"]["ci95_high"] and d["results"]'
ok $? "before/after scores with intervals, after better, with the results" "$(both)"
j 'd["after_protocols"]==["smb"] and d["unchanged_protocols"]==["nfs","afp"] and all(r["protocol"]=="smb" for r in d["results"]+d["results_before"])'
ok $? "SMB knobs on a NAS serving SMB, NFS and AFP: only SMB is measured at the start and in the after-score; NFS and AFP are named unchanged" "$(both)"
j 'any("client results are missing" in a["advice"] for a in d["advice"])'
ok $? "a loopback-only tune says that client results are missing" "$(both)"
! grep -q "server smb encrypt = required" <<<"$(smbconf)" && grep -q "smb_encrypt" "$SROOT/etc/nastune/tuned.conf" && [[ $(gens) -gt $g0 ]]
ok $? "applied: smb.conf no longer requires encryption, tuned.conf records the choice, a new generation" "$(smbconf | grep -i encrypt; cat "$SROOT/etc/nastune/tuned.conf")"
nts tune --if-changed "${quick[@]}"
[[ $rc = 0 ]] && grep -q "nothing to do: the hardware is unchanged since tune" <<<"$err"
ok $? "tune --if-changed right after: nothing to do" "$(both)"
nts report --tune
[[ $rc = 0 ]] && grep -q "^smb.smb_encrypt .* yes .*better" <<<"$out" && grep -q "^score" <<<"$out"
ok $? "report --tune: the stored tune as text, with each knob's decision" "$(both)"
nts report --tune --html "$WORK/tune.html"
[[ $rc = 0 ]] && python3 - "$WORK/tune.html" <<'PY'
import sys, html.parser
t = open(sys.argv[1]).read()
class P(html.parser.HTMLParser):
    pass
P().feed(t)
assert "<svg" in t and "smb.smb_encrypt" in t and "strict_sync" in t and "<script" not in t
PY
ok $? "report --tune --html: one self-contained page with the SVG chart and every knob" "$(both)"
nts rollback "$g0"
[[ $rc = 0 && $(smbconf) = "$pre" ]] && grep -q 'smb_encrypt = "required"' "$SROOT/etc/nastune/tuned.conf"
ok $? "rollback to the generation before the tune restores smb.conf and tuned.conf" "$(both)"

# --- interrupted tunes leave the configuration they started with
pre=$(smbconf)
( sleep 6; pkill -TERM -f "^$NASTUNE --root $SROOT -c $CONF tune" ) &
nts tune --knobs smb.use_sendfile,smb.aio_read_size,smb.aio_write_size,smb.socket_options --size 64M --repeat 64 --credentials "$CR"
wait
[[ $rc = 1 ]] && grep -q "interrupted by SIGTERM" <<<"$err" && grep -q "restoring the configuration in force before the tune" <<<"$err"
ok $? "SIGTERM mid-tune: exit 1, says it restores the configuration" "$(both)"
[[ $(smbconf) = "$pre" && ! -e $SROOT/var/lib/nastune/pending ]]
ok $? "... smb.conf is as before the tune, no journal left" "$(diff <(echo "$pre") <(smbconf))"
[[ -z $(find "$SROOT/srv" -maxdepth 2 -name '.nastune-bench-server-*') ]]
ok $? "... and no scratch directory is left on the shares"
( sleep 8; pkill -KILL -f "^$NASTUNE --root $SROOT -c $CONF tune" ) &
nts tune --knobs smb.use_sendfile,smb.aio_read_size,smb.aio_write_size,smb.socket_options --size 64M --repeat 64 --credentials "$CR"
wait
[[ $rc -ne 0 ]]
ok $? "SIGKILL mid-tune (exit $rc)" "$(both)"
killed_conf=$(smbconf)
nts --json status
j 'True'
ok $? "status still works after the kill" "$(both)"
nts apply
[[ $rc = 0 && $(smbconf) = "$pre" ]]
ok $? "the next apply restores the configuration the killed tune started from (journal)" "$(diff <(echo "$pre") <(smbconf); both)"
nts --json tune --knobs smb.use_sendfile --size 16M --repeat 8 --credentials "$CR" --dry-run
[[ $rc = 0 ]]
ok $? "a tune after the kill runs (and resumes what it can)" "$(both)"
[[ -z $(find "$SROOT/srv" -maxdepth 2 -name '.nastune-bench-server-*') ]]
ok $? "... and no scratch directory is left on the shares: its own kept one is removed at its end, the killed tune's by its start" "$(find "$SROOT/srv" -maxdepth 2 -name '.nastune-bench-*')"
[[ $(smbconf) = "$pre" ]]
ok $? "... dry run: configuration unchanged" "$(diff <(echo "$pre") <(smbconf))"
nts --json tune --dry-run --budget 25s --size 16M --repeat 8 --credentials "$CR"
# The contract (nastune(8)): the whole tune ends within the budget + 5%. Seen here: 18-25 s.
# Every knob is screened at once, so none is left "not tried: budget exhausted"; what the
# budget does not bound says so, with the runs that would.
[[ $rc = 0 ]] && j 'd["elapsed_s"] <= 25 * 1.05 and not any("budget exhausted" in k["reason"] or "inf" in k["reason"] for k in d["knobs"]) and sum(bool(k.get("design")) for k in d["knobs"]) >= 5 and all("would bound it" in k["reason"] for k in d["knobs"] if k["verdict"] == "undecided" and k.get("design")) and all(not k["tried"] and "never loaded into this kernel" in k["reason"] for k in d["knobs"] if k["name"].startswith("sys."))'
ok $? "--budget 25s: the tune stops in time (+5%), every knob screened, none 'budget exhausted'; sys.* not screened: their file is never loaded under --root ($(python3 -c 'import json,sys; print("%.1f" % json.loads(sys.argv[1])["elapsed_s"])' "$out" 2>/dev/null)s)" "$(both)"
# Runs of 1 GiB: the baselines (raw disk, TCP) fit in the time kept after the search (at the
# run size a 45 s tune at 512M took 49 s), and the first cold run of 1 GiB does not price the
# time-boxed ones (it planned 2.85 s a run where 0.4 s was true, and tried nothing).
nts --json tune --dry-run --knobs smb.use_sendfile --budget 15s --size 1G --repeat 8 --credentials "$CR"
[[ $rc = 0 ]] && j 'd["elapsed_s"] <= 15 * 1.05 and [k for k in d["knobs"] if k["name"] == "smb.use_sendfile"][0]["tried"] and any("raw disk" in (r.get("bottleneck") or "") for r in d["results"])'
ok $? "--size 1G --budget 15s: the baselines fit in the budget, and the knob is measured ($(python3 -c 'import json,sys; print("%.1f" % json.loads(sys.argv[1])["elapsed_s"])' "$out" 2>/dev/null)s)" "$(both)"
# --clients auto with no agent on the network: the knobs on the path are not tried, and say
# why; before, each client screen ran, failed, and left every such knob "failed".
pkill -f '[a]gent --token-file' 2>/dev/null
nts --json tune --dry-run --clients auto --knobs sys.rmem_max,smb.use_sendfile --budget 15s --size 16M --repeat 8 --credentials "$CR"
[[ $rc = 0 ]] && grep -q 'no client agent answered' <<<"$err" && j 'all("failed" not in k["reason"] for k in d["knobs"]) and "no client agent answered" in [k for k in d["knobs"] if k["name"] == "sys.rmem_max"][0]["reason"] and [k for k in d["knobs"] if k["name"] == "smb.use_sendfile"][0]["tried"]'
ok $? "--clients auto, no agent: the path's knobs not tried, saying no agent answered; the rest measured" "$(both)"
nts tune --knobs nosuch.knob
[[ $rc = 2 ]] && grep -q "unknown knob 'nosuch.knob'" <<<"$err"
ok $? "an unknown knob: exit 2, named" "$(both)"
nts tune --exhaustive
[[ $rc = 2 ]] && grep -q "needs --knobs" <<<"$err"
ok $? "--exhaustive without --knobs: exit 2" "$(both)"
nts tune --repeat 7
[[ $rc = 2 ]] && grep -q "repeat must be 8 to 400 (the most pairs of runs side by side" <<<"$err"
ok $? "--repeat 7: exit 2 (the first look is at 8 pairs)" "$(both)"

# --- an SMB-only NAS (the default: shares are SMB only): a change accepted, and the after-score
# is measured fresh, side by side with the starting configuration (it used to abort with
# "measuring the chosen configuration failed: no result to score")
sed -e 's/nfs = { enabled = true;/nfs = { enabled = false;/' -e 's/afp = { enabled = true;/afp = { enabled = false;/' "$DEMO" >"$CONF"
printf 'knobs = { smb = { smb_encrypt = "required"; }; };\n' >"$SROOT/etc/nastune/tuned.conf"
nts apply
nts --json tune --goal throughput --knobs smb.smb_encrypt,smb.use_sendfile "${quick[@]}" --budget 5m
[[ $rc = 0 ]] && j 'd["status"]=="done" and d["results"] and all(r["protocol"]=="smb" for r in d["results"]) and any(r.get("bottleneck") for r in d["results"]) and (d["after_pairs"]>0) == any(k["applied"] for k in d["knobs"])'
ok $? "SMB-only tune: exit 0, SMB results with their bottleneck, after-score paired afresh when something changed (improvement $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(round(100*d["improvement"],1), "%", d.get("improvement_interval"), "pairs", d["after_pairs"])' "$out" 2>/dev/null))" "$(both)"
j 'all(len(r["runs"])>=5 for r in d["results"]) and d["plan"]["candidates"]>=2 and d["plan"]["looks"] and d["elapsed_s"] <= 1.05*300'
ok $? "... each after result holds the runs of the pairing; the plan (candidates, looks) is reported; within the budget" "$(both)"

# --- a load that stops partway through a tune (two busy loops in the server's namespace,
# killed after 20 s) does not make placebo knobs win: sys.* values cannot change anything
# here (under --root the sysctl file is written but never loaded). At the default budget one
# tune in twenty may apply a placebo by design (the simulator counts that rate); a test that
# asserts none asks for 0.001, or it fails one run in twenty.
rm -f "$SROOT/etc/nastune/tuned.conf"
nts apply
for b in 1 2; do
	"$LAB" exec server sh -c "echo \$\$ >$WORK/busy.$b; exec sh -c 'while :; do :; done'" >/dev/null 2>&1 7>&- &
done
( sleep 20; for b in 1 2; do [[ -s $WORK/busy.$b ]] && kill "$(cat "$WORK/busy.$b")"; done ) &
nts --json tune --dry-run --goal throughput --knobs sys.rmem_max,sys.wmem_max,sys.tcp_rmem,sys.tcp_wmem "${quick[@]}" --repeat 16 --budget 5m --false-positives 0.001
wait
# (Not vacuous: at least two knobs were measured in windows. A window the tuner names
# unsteady counts: declining to decide on a busy machine is the right answer there.)
[[ $rc = 0 ]] && j 'not any(k["applied"] for k in d["knobs"]) and sum(k["tried"] and k["name"].startswith("sys.") for k in d["knobs"]) >= 2'
ok $? "a load that stops partway: no placebo knob wins ($(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("; ".join("%s %s" % (k["name"], k["verdict"]) for k in d["knobs"] if k["tried"]))' "$out" 2>/dev/null))" "rc=$rc; $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("\n".join("%s applied=%s: %s" % (k["name"], k["applied"], k["reason"]) for k in d["knobs"]))' "$out" 2>/dev/null || both)"

n=$(grep -c "sysctl: .* not loaded into the kernel" <<<"$err")
[[ $n -eq 1 ]]
ok $? "... the staging root's sysctl note said once in the tune, not at every trial ($n)" "$err"

# --- the same lab tuned repeatedly gives the same choice (a placebo among them: sys.rmem_max;
# the false-positive budget as above, or a placebo applied in one tune of three fails it one
# run in ten, as it once did in CI)
printf 'knobs = { smb = { smb_encrypt = "required"; }; };\n' >"$SROOT/etc/nastune/tuned.conf"
nts apply
choices=() whys=()
for r in 1 2 3; do
	nts --json tune --dry-run --goal throughput --knobs smb.smb_encrypt,sys.rmem_max "${quick[@]}" --repeat 24 --budget 5m --false-positives 0.001
	choices+=("$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(",".join("%s=%s" % (k["name"], k["after"]) for k in d["knobs"] if k["applied"]) or "unchanged")' "$out" 2>/dev/null || echo "rc=$rc")")
	# every knob's reason, each change's check on its own and the after-score (the log's
	# last lines once lost the reason a placebo was applied)
	whys+=("tune $r: rc=$rc $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("after %+.1f%% %s" % (100*d["improvement"], d.get("improvement_interval"))); print("\n".join("  %s applied=%s: %s" % (k["name"], k["applied"], k["reason"]) for k in d["knobs"] if k["tried"]))' "$out" 2>/dev/null || grep 'tune: ' <<<"$err" | tail -n 12)")
done
[[ ${choices[0]} = "${choices[1]}" && ${choices[1]} = "${choices[2]}" && ${choices[0]} != rc=* ]]
ok $? "tuned three times, the same choice: ${choices[*]}" "$(printf '%s\n' "${whys[@]}")" 60
[[ ${choices[0]} = smb.smb_encrypt=* ]]
ok $? "... and it is the planted bad value's fix (encryption required -> not required)" "${choices[*]}"
rm -f "$SROOT/etc/nastune/tuned.conf"
cp "$DEMO" "$CONF"	# SMB, NFS (Ganesha) and AFP again
nts apply

# --- a trial that restarted a daemon does not make every later trial restart it: the
# journal forgets a restart once it came back (it once restarted Ganesha at every AFP switch)
nts -v --json tune --dry-run --goal throughput --knobs nfs.ganesha_max_write,nfs.versions,afp.server_quantum "${quick[@]}" --repeat 8 --budget 5m
# The NFS and AFP screens take turns pair by pair: Ganesha restarts at most once a side of an
# NFS pair (two runs a restart) and around the tune (its start, the restore at the end), not
# at the AFP pairs' switches too (that would be one a side of every pair of both).
nfs_pairs=$(sed -n 's/.*NFS screen: \([0-9]*\) pairs.*/\1/p' <<<"$err" | tail -n1)
afp_pairs=$(sed -n 's/.*AFP screen: \([0-9]*\) pairs.*/\1/p' <<<"$err" | tail -n1)
g_all=$(grep -c 'ganesha.nfsd: restarted' <<<"$err")
a_all=$(grep -c 'afpd: restarted' <<<"$err")
[[ $rc = 0 && ${nfs_pairs:-0} -ge 1 && ${afp_pairs:-0} -ge 1 && $g_all -ge 2 && $a_all -ge 2 && $g_all -le $((2 * nfs_pairs + 4)) && $g_all -lt $((2 * (nfs_pairs + afp_pairs))) ]]
ok $? "a restart-class trial (Ganesha) is not restarted again at every later switch (Ganesha restarts: $g_all for $nfs_pairs NFS pairs; afpd: $a_all for $afp_pairs AFP pairs)" "$(both)"
[[ $rc = 0 ]] && j '[k for k in d["knobs"] if k["name"] == "nfs.versions"][0]["tried"]' &&
	grep -q 'nfs.versions = 4: not measured: the tune.s loopback NFS target mounts NFSv3' <<<"$err" &&
	! grep -q 'nfs.versions.*failed' <<<"$err$out"
ok $? "nfs.versions = 4 is not measured over the NFSv3 loopback target (it once failed the window: cannot mount)" "$(grep -i 'nfs.versions' <<<"$err$out")"
# --- smb_encrypt = desired with guest shares: libsmbclient's guest session cannot honour the
# share's encrypt-data flag (EINVAL at the first request); the driver then speaks SMB 2.1, as a
# guest signs and encrypts nothing anyway (the trial once failed "Public: connect: Invalid
# argument", and apply's proof called the guest shares not served)
printf 'knobs = { smb = { smb_encrypt = "desired"; }; };\n' >"$SROOT/etc/nastune/tuned.conf"
nts apply
a_rc=$rc a_err=$err
nts bench --target smb://127.0.0.1/Public --workload seq-read --size 8M --repeat 1 --cache hot --no-baseline
[[ $a_rc = 0 && $rc = 0 ]] && grep -q "server smb encrypt = desired" "$SROOT/etc/samba/smb.conf"
ok $? "smb_encrypt = desired applies with guest shares, and a guest measures Public" "apply: rc=$a_rc $a_err"$'\n'"$(both)"
rm -f "$SROOT/etc/nastune/tuned.conf"
nts apply
[[ $TAP_N = 42 ]] || echo "# ran $TAP_N tests, planned 42"
done_testing
