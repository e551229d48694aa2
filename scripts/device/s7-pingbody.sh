#!/usr/bin/env bash
# Session 7, s7-pingbody (issue 14) in ONE device call, <= 170 s of wall time (every step under `timeout`, each
# limited to what is left of the budget): pingpong and streamk now share one ping-pong body (pingpong_body.cuh);
# streamk records its own phases (WaitPartial, Fixup); ladder_bench has a hot mode (--hot).
#   1. gpu_ladder_correctness --rung pingpong --rung streamk: full + partial-tile shapes, traced + untraced, traces
#      decode sanely, streamk's WaitPartial/Fixup counts consistent (and > 0 where tiles are split);
#   2. compute-sanitizer memcheck on one streamk launch through the fixup (300x1000x1032: 34 stream-K clusters);
#   3. check_sass.py on the archive with the device's cuobjdump (HGMMA, UTMALDG, multicast, TMA store, no trace code
#      untraced), plus the SASS dump's per-kernel opcode counts (sass.txt);
#   4. ladder_bench pingpong + streamk + cuBLAS on the six named shapes, untraced, cold (250 ms idle before each
#      batch) and hot (200 ms of back-to-back launches before each batch);
#   5. if time is left: the 33-shape sweep, cold, streamk vs cuBLAS (untraced).
#
# Build HERE (no GPU needed; Release, no Qt), then copy into the ignored folder of /work/main:
#   cmake -S . -B build/kchecks -G Ninja -DWARPSTAGE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build/kchecks --target warpstage_ladder gpu_ladder_correctness ladder_check ladder_bench \
#       ladder_manifest
#   D=/work/main/build-s7-pingbody; mkdir -p $D
#   cp build/kchecks/tests/kernels/{gpu_ladder_correctness,ladder_check,ladder_manifest} \
#      build/kchecks/tests/bench/ladder_bench build/kchecks/kernels/src/libwarpstage_ladder.a \
#      tests/kernels/check_sass.py scripts/sass_opdiff.py scripts/device/s7-pingbody.sh scripts/device/lib.sh $D/
# On the device (run tool, carry ["build-s7-pingbody"]):
#   bash build-s7-pingbody/s7-pingbody.sh build-s7-pingbody
# Back in $OUT (5 files): summary.txt (PASS/FAIL per check, then the markdown tables), named-cold.csv,
# named-hot.csv, sweep-cold.csv, logs.tar.gz (every step's full log).
# Success: every check line starts with PASS; "0 failed" in correctness; "ERROR SUMMARY: 0 errors"; "OK: 0 failure(s)".
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh  # note, run, ws_cuda_env (carried alone: copy lib.sh beside it)
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
D=${1:-build-s7-pingbody}
ws_begin s7-pingbody 160  # seconds for all steps (the call's limit: 170; the tables and the tarball take ~2 s)
ws_cuda_env
SIX="--shape 4096x4096x4096 --shape 8192x8192x8192 --shape 256x4096x4096 --shape 1x4096x4096 --shape 4096x4096x1024 --shape 1000x4096x1000"
SWEEP() {  # the issue's sweep: squares, LLM projections (M x N x K), short K, long K, non-multiples (33 shapes)
    local sw=""
    for x in 1024 2048 4096 6144 8192 12288 16384; do sw="$sw --shape ${x}x${x}x${x}"; done
    for m in 128 512 2048 8192; do
        for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do sw="$sw --shape ${m}x${nk}"; done
    done
    sw="$sw --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384 --shape 2048x2048x32768"
    sw="$sw --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000 --shape 1x4096x4096 --shape 256x4096x4096"
    echo "$sw"
}

note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
# 1. correctness (s6: 140 checks in well under a minute for the two rungs)
step correctness 75 " 0 failed" "$D/gpu_ladder_correctness" --rung pingpong --rung streamk
note "    streamk traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=streamk.*differ" "$L/correctness.log")"
note "    $(grep -E "^(PASS|FAIL) rung=streamk shape=256x4096x4096 .*stream-K phases" "$L/correctness.log" | head -1)"
note "    stream-K phase checks: $(grep -c "stream-K phases" "$L/correctness.log") lines, $(grep -c "stream-K phases.*) split" "$L/correctness.log") with a split (expected: the split shapes, e.g. 256x4096x4096, 1x4096x4096)"
# 2. memcheck on a launch through the fixup (partials written, flags, finisher adds)
step memcheck 30 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
    "$D/ladder_check" --rung streamk --shape 300x1000x1032
# 3. SASS of the archive (device cuobjdump)
step sass 40 "^OK: 0 failure" python3 "$D/check_sass.py" --manifest "$D/ladder_manifest" \
    --archive "$D/libwarpstage_ladder.a" --tool auto --dump "$L/sass"
python3 "$D/sass_opdiff.py" "$L/sass" "$L/sass" --file pingpong.cu.o.sm_90.sass --file streamk.cu.o.sm_90.sass \
    --loop >"$L/sass-counts.txt" 2>&1 || true
# 4. the six named shapes, cold then hot (untraced: the tracing cost is s7-tracecost's)
step named-cold 45 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung pingpong --rung streamk $SIX --no-traced \
    --target-ms 30 --csv "$OUT/named-cold.csv"
step named-hot 45 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung pingpong --rung streamk $SIX --no-traced \
    --target-ms 30 --hot --heat-ms 200 --csv "$OUT/named-hot.csv"
# 5. the sweep, cold, streamk vs cuBLAS, with what is left
if [ "$(left)" -ge 30 ]; then
    step sweep-cold 200 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk $(SWEEP) --no-traced \
        --target-ms 20 --csv "$OUT/sweep-cold.csv"
else
    note "SKIP sweep-cold: $(left)s left"
fi

# Tables (ready to paste into docs/benchmarks.md, "Session 7, s7-pingbody").
python3 - "$OUT" >>"$S" 2>&1 <<'PY'
import csv, math, os, sys
out = sys.argv[1]
def rows(name):
    p = os.path.join(out, name)
    return [r for r in csv.DictReader(open(p))] if os.path.exists(p) else []
def by(rs):
    d = {}
    for r in rs:
        if r["traced"] == "0":
            d[(r["shape"], r["variant"])] = r
    return d
cold, hot = by(rows("named-cold.csv")), by(rows("named-hot.csv"))
six = ["4096x4096x4096", "8192x8192x8192", "256x4096x4096", "1x4096x4096", "4096x4096x1024", "1000x4096x1000"]
def cb(d, s):
    xs = [float(d[(s, v)]["median_ms"]) for v in ("cublas", "cublas_after") if (s, v) in d]
    return min(xs) if xs else None
def cell(d, s, v):
    r = d.get((s, v))
    if not r or not r["median_ms"]:
        return "n/a", None
    ok = "" if r["correct"] == "1" else " **WRONG**"
    pct = float(r["pct_cublas"]) if r["pct_cublas"] else None
    return f"{float(r['median_ms']):.4f} ({pct:.1f} %){ok}" if pct else f"{float(r['median_ms']):.4f}", pct
print("\n### Cold vs hot, the six named shapes (ms, % of cuBLAS in the same mode; untraced; medians)\n")
print("| shape | cuBLAS cold ms | pingpong cold | streamk cold | cuBLAS hot ms | pingpong hot | streamk hot | cuBLAS hot/cold |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
pc = {("cold", "pingpong"): [], ("cold", "streamk"): [], ("hot", "pingpong"): [], ("hot", "streamk"): []}
for s in six:
    line = [s.replace("x", "×")]
    for mode, d in (("cold", cold), ("hot", hot)):
        c = cb(d, s)
        line.append(f"{c:.4f}" if c else "n/a")
        for v in ("pingpong", "streamk"):
            txt, pct = cell(d, s, v)
            line.append(txt)
            if pct:
                pc[(mode, v)].append((pct, s))
    cc, ch = cb(cold, s), cb(hot, s)
    line.append(f"{ch / cc:.3f}" if cc and ch else "n/a")
    print("| " + " | ".join(line) + " |")
print()
for (mode, v), p in pc.items():
    if p:
        g = math.exp(sum(math.log(x) for x, _ in p) / len(p))
        mn = min(p)
        print(f"- {v} {mode}: geometric mean {g:.1f} % of cuBLAS over {len(p)} shapes, minimum {mn[0]:.1f} % ({mn[1]})")
sw = [r for r in rows("sweep-cold.csv") if r["traced"] == "0" and r["variant"] == "streamk"]
if sw:
    p = [(float(r["pct_cublas"]), r["shape"]) for r in sw if r["pct_cublas"] and r["correct"] == "1"]
    bad = [r["shape"] for r in sw if r["correct"] != "1"]
    g = math.exp(sum(math.log(x) for x, _ in p) / len(p)) if p else float("nan")
    print(f"\n### Sweep, cold, streamk vs cuBLAS: {len(p)} of 33 shapes timed; geometric mean {g:.1f} %, minimum "
          f"{min(p)[0]:.1f} % ({min(p)[1]}), maximum {max(p)[0]:.1f} % ({max(p)[1]}); incorrect: {bad if bad else 'none'}\n")
    print("| shape | cuBLAS ms | streamk ms | % of cuBLAS |")
    print("|---|---:|---:|---:|")
    d = by(rows("sweep-cold.csv"))
    for r in sw:
        c = cb(d, r["shape"])
        print(f"| {r['shape'].replace('x', '×')} | {c:.4f} | {float(r['median_ms']):.4f} | {r['pct_cublas']} |" if c else
              f"| {r['shape']} | n/a | {r['median_ms']} | {r['pct_cublas']} |")
else:
    print("\n(sweep: no CSV; see logs)")
PY
note ""
note "SASS opcode counts (device cuobjdump): $(grep -c instructions "$L/sass-counts.txt" 2>/dev/null) kernels in $L/sass-counts.txt (in logs.tar.gz)"
grep -h "^FAIL" "$L/correctness.log" 2>/dev/null | head -20 | tee -a "$S"
note "total: $((SECONDS - T0))s"
tar -czf "$OUT/logs.tar.gz" -C "$L" --exclude=sass . 2>/dev/null
echo "=== summary"
cat "$S"
