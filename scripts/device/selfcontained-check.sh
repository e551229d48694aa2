#!/usr/bin/env bash
# Device call for self-contained traces (issue 10, session 5; docs/recording.md "Where the source comes from" and
# "Stall pass for your kernels"): the recorder, copied to /tmp and started there with no WARPSTAGE_SOURCE_DIR and
# the repository's kernel sources hidden, still maps the ladder's stall samples to stages (the sources are built in)
# and stores the sources in the trace, identical (SHA-256) to the repository's files; a user program's stall pass
# stores the source its samples point into, found through --source-dir (its line-info path does not exist here).
# Build here, then carry build-dev:
#   cmake --build build/default --target warpstage-record warpstage-inject ws_testapp
#   rm -rf build-dev; mkdir build-dev
#   cp build/default/app/record/{libwarpstage-inject.so,warpstage-record} build/default/tests/recorder/ws_testapp build-dev/
#   strip build-dev/warpstage-record          # ws_testapp is NOT stripped: its -lineinfo gives the source lines
#   run: bash scripts/device/selfcontained-check.sh        (carry ["build-dev"])
# Success: the last line says "selfcontained-check: PASS"; before it, per ladder run "stage mapping: source
# kernels/src/R.cu built into the recorder, stored in the trace", a mapped share well above 0% (it was 0% before),
# "sha256 ok" for kernels/src/R.cu, hopper.cuh and wgmma_ops.cuh; for ws_testapp a stored ws_testapp.cu with "sha256 ok".
set -u
REPO=$PWD
B=$REPO/build-dev
W=/tmp/ws-selfcontained; rm -rf "$W"; mkdir -p "$W"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
unset WARPSTAGE_SOURCE_DIR
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
# The sources the recorder must not need: hidden while it runs, put back on exit.
mv kernels/src kernels/src.hidden-by-selfcontained-check
trap 'mv "$REPO/kernels/src.hidden-by-selfcontained-check" "$REPO/kernels/src"' EXIT
cp "$B/warpstage-record" "$B/libwarpstage-inject.so" "$B/ws_testapp" "$W/"
cd "$W"
./warpstage-record --rungs tma_sync,pingpong --shape 2048x2048x2048 -o "$W/ladder.wstrace"; echo "ladder rc=$?"
mkdir -p "$W/srcdir"; cp "$REPO/tests/recorder/programs/ws_testapp.cu" "$W/srcdir/"
WARPSTAGE_INJECT_LIB=$W/libwarpstage-inject.so ./warpstage-record -o "$W/app.wstrace" --kernels '^wsScale' \
    --source-dir "$W/srcdir" -- ./ws_testapp basic; echo "program rc=$?"
mv "$REPO/kernels/src.hidden-by-selfcontained-check" "$REPO/kernels/src"; trap - EXIT
python3 - "$REPO" "$W/ladder.wstrace" "$W/app.wstrace" <<'PY'
import hashlib, re, sqlite3, sys
repo, ladder, app = sys.argv[1:4]
ok = True
def sha(p): return hashlib.sha256(open(p, "rb").read()).hexdigest()
c = sqlite3.connect(ladder)
for rid, variant, notes in c.execute("select id, variant, notes from runs"):
    m = [l for l in re.split(r"[\n;] *", notes) if "stage mapping" in l]
    print("ladder run", rid, variant, "|", " | ".join(m))
    pct = [float(x) for l in m for x in re.findall(r"([0-9.]+)% of stall samples mapped", l)]
    if not any("built into the recorder" in l for l in m) or not pct or pct[0] < 30: ok = False; print("  FAIL: mapping")
    rows = dict(c.execute("select path, sha256 from sources where run_id = ?", (rid,)).fetchall())
    for f in ("kernels/src/%s.cu" % variant, "kernels/src/hopper.cuh", "kernels/src/wgmma_ops.cuh"):
        good = rows.get(f) == sha(f"{repo}/{f}")
        print("  ", f, "sha256 ok" if good else "MISSING or different: %r" % rows.get(f))
        ok = ok and good
a = sqlite3.connect(app)
for rid, notes in a.execute("select id, notes from runs"):
    rows = a.execute("select path, sha256 from sources where run_id = ?", (rid,)).fetchall()
    lines = [l for l in re.split(r"; ", notes) if "source" in l]
    print("program run", rid, "|", " | ".join(lines)[:600])
    for p, s in rows: print("  ", p, "sha256 ok" if s == sha(f"{repo}/tests/recorder/programs/ws_testapp.cu") and p.endswith("ws_testapp.cu") else "stored: " + s)
    if any(p.endswith("ws_testapp.cu") and s == sha(f"{repo}/tests/recorder/programs/ws_testapp.cu") for p, s in rows): break
else:
    ok = False; print("  FAIL: no run stored ws_testapp.cu")
print("selfcontained-check:", "PASS" if ok else "FAIL")
PY
