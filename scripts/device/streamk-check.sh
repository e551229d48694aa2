#!/usr/bin/env bash
# Issue 14, the stream-K rung (rung 7, kernels/src/streamk.cu), in ONE device call: the schedule's CPU test,
# correctness of streamk (and pingpong beside it) on the full and partial-tile shapes against cuBLAS, traced
# and untraced (bit-for-bit agreement reported as WARN lines if not), compute-sanitizer memcheck (untraced,
# traced, register-store path) and racecheck on launches that go through the fixup, and ladder_bench cold
# (--rest-ms 250, the default) of streamk vs pingpong vs cuBLAS over the issue's sweep (33 shapes, the six
# named ones among them), then the geometric mean and minimum of streamk and pingpong vs cuBLAS.
#
# Build HERE (no GPU needed; Release, no Qt), then copy into an ignored folder of /work/main and carry it:
#   cmake -S . -B build/kchecks -G Ninja -DWARPSTAGE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build/kchecks --target gpu_ladder_correctness ladder_check ladder_bench tst_streamk_schedule
#   D=/work/main/build-s6-streamk; mkdir -p $D
#   cp build/kchecks/tests/kernels/{gpu_ladder_correctness,ladder_check,tst_streamk_schedule} \
#      build/kchecks/tests/bench/ladder_bench scripts/device/streamk-check.sh scripts/device/lib.sh $D/
# On the device (run tool, carry ["build-s6-streamk"]):  bash build-s6-streamk/streamk-check.sh [DIR]
# Logs: $OUT/*.log, $OUT/sweep.csv, $OUT/summary.txt (printed last). Success: every line of the summary
# rc=0, "0 failed", "ERROR SUMMARY: 0 errors" / "RACECHECK SUMMARY: 0 hazards", no WARN line for streamk.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh  # note, run, ws_cuda_env (carried alone: copy lib.sh beside it)
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
D=${1:-build-s6-streamk}
OUT=${OUT:-$PWD/out-streamk}
mkdir -p "$OUT"
S=$OUT/summary.txt
: >"$S"
ws_cuda_env
SWEEP() {  # the sweep: squares, LLM projections (M x N x K), short K, long K, non-multiples (33 shapes)
    SW=""
    for x in 1024 2048 4096 6144 8192 12288 16384; do SW="$SW --shape ${x}x${x}x${x}"; done
    for m in 128 512 2048 8192; do
        for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do SW="$SW --shape ${m}x${nk}"; done
    done
    SW="$SW --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384 --shape 2048x2048x32768"
    SW="$SW --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000 --shape 1x4096x4096 --shape 256x4096x4096"
    echo "$SW"
}
GEO() {  # geometric mean / min of the untraced rungs vs cuBLAS in a ladder_bench CSV
    python3 - "$1" <<'PY'
import csv, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["traced"] == "0" and r["variant"] in ("pingpong", "streamk")]
for v in ("pingpong", "streamk"):
    p = [(float(r["pct_cublas"]), r["shape"]) for r in rows if r["variant"] == v and r["pct_cublas"] and r["correct"] == "1"]
    if p:
        g = math.exp(sum(math.log(x) for x, _ in p) / len(p))
        print(f"{v}: {len(p)} shapes, geomean {g:.1f}% of cuBLAS, min {min(p)[0]:.1f}% ({min(p)[1]}), max {max(p)[0]:.1f}% ({max(p)[1]})")
bad = [r["shape"] + " " + r["variant"] for r in rows if r["correct"] != "1"]
print("incorrect:", bad if bad else "none")
PY
}
# Step 2 (after streamk joined the default rung list): every rung's correctness (--quick), the SASS check of the
# archive (streamk: HGMMA, UTMALDG, no trace code untraced), the six named shapes traced and untraced, and the
# sweep again (all rows into the CSV). Extra files to copy: libwarpstage_ladder.a ladder_manifest check_sass.py.
# At most 8 files come back from $OUT: the logs go to a scratch folder, the summary and CSVs to $OUT.
# Step 3 (for the lead; not run in session 6): gpu_ladder_trace for streamk (trace sanity incl. the overflow case:
# capacity 2 events per warp must not write outside the buffer). Copy build/kchecks/tests/kernels/gpu_ladder_trace too.
if [ "${2:-1}" = 3 ]; then
    note "env: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(date -u)"
    run trace 120 "$D/gpu_ladder_trace" --rung streamk --rung pingpong
    grep -h "^FAIL" "$OUT/trace.log" | head -20
    cat "$S"
    exit 0
fi
if [ "${2:-1}" = 2 ]; then
    L=/tmp/streamk-logs; mkdir -p $L
    OUTDIR=$OUT; OUT=$L
    note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
    run correctness-all 120 "$D/gpu_ladder_correctness" --quick
    grep -E "^device|ladder::rungs" "$L/correctness-all.log" | head -3 | tee -a "$S"
    note "traced/untraced bit differences (all rungs): $(grep -c "^WARN rung=" "$L/correctness-all.log")"
    run sass 60 python3 "$D/check_sass.py" --manifest "$D/ladder_manifest" --archive "$D/libwarpstage_ladder.a" --tool auto
    grep -E "streamk|^FAIL" "$L/sass.log" | head -12 | tee -a "$S"
    run named 150 "$D/ladder_bench" --rung pingpong --rung streamk --shape 4096x4096x4096 --shape 8192x8192x8192 \
        --shape 256x4096x4096 --shape 1x4096x4096 --shape 4096x4096x1024 --shape 1000x4096x1000 --target-ms 40 \
        --csv "$OUTDIR/named.csv"
    run sweep 200 "$D/ladder_bench" --rung pingpong --rung streamk $(SWEEP) --no-traced --target-ms 30 --csv "$OUTDIR/sweep.csv"
    GEO "$OUTDIR/sweep.csv" | tee -a "$S"
    sed -n '/^### Kernel ladder vs cuBLAS/,$p' "$L/named.log" | grep -E "^\|" | head -40
    grep -h "^FAIL" "$L/correctness-all.log" | head -20
    cp "$S" "$OUTDIR/summary.txt"
    cp "$L/correctness-all.log" "$L/sass.log" "$OUTDIR/"
    echo "=== summary"; cat "$S"
    exit 0
fi
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
run schedule 20 "$D/tst_streamk_schedule"
# Full shapes (4096^3 all data-parallel; 8192x8192x1024 and 8192^3: the last waves split) and the partial-tile
# set (256x4096x4096, 1x4096x4096, 1000x4096x1000: everything split; 8191x8193x4104; tiny ones).
run correctness 110 "$D/gpu_ladder_correctness" --rung streamk --rung pingpong
note "streamk traced/untraced bit differences: $(grep -c "WARN rung=streamk" "$OUT/correctness.log")"
run san-mem 50 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape 300x1000x1032
# The sweep: squares, LLM projections (M x N x K), short K, long K, non-multiples (33 shapes).
SW=""
for x in 1024 2048 4096 6144 8192 12288 16384; do SW="$SW --shape ${x}x${x}x${x}"; done
for m in 128 512 2048 8192; do
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do SW="$SW --shape ${m}x${nk}"; done
done
SW="$SW --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384 --shape 2048x2048x32768"
SW="$SW --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000 --shape 1x4096x4096 --shape 256x4096x4096"
run sweep 200 "$D/ladder_bench" --rung pingpong --rung streamk $SW --no-traced --target-ms 30 --csv "$OUT/sweep.csv"
# Sanitizers on launches that go through the fixup: 300x1000x1032 (8 pair tiles x 17 k-steps, 34 stream-K
# clusters) with the TMA store; N odd (register stores); traced; 256x4096x4096 (66 clusters).
run san-mem-oddn 50 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape 300x1001x1032
run san-mem-traced 50 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape 300x1000x1032 --traced
run san-race 70 compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape 300x1000x1032
run san-mem-256 60 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape 256x4096x4096
echo "=== sweep"
sed -n '/^### Kernel ladder vs cuBLAS/,$p' "$OUT/sweep.log" | grep -E "^\|" | head -80
python3 - "$OUT/sweep.csv" <<'PY' | tee -a "$S"
import csv, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["traced"] == "0" and r["variant"] in ("pingpong", "streamk")]
for v in ("pingpong", "streamk"):
    p = [(float(r["pct_cublas"]), r["shape"]) for r in rows if r["variant"] == v and r["pct_cublas"] and r["correct"] == "1"]
    if p:
        g = math.exp(sum(math.log(x) for x, _ in p) / len(p))
        print(f"{v}: {len(p)} shapes, geomean {g:.1f}% of cuBLAS, min {min(p)[0]:.1f}% ({min(p)[1]}), max {max(p)[0]:.1f}% ({max(p)[1]})")
bad = [r["shape"] + " " + r["variant"] for r in rows if r["correct"] != "1"]
print("incorrect:", bad if bad else "none")
PY
grep -h "^FAIL\|WARN rung=streamk" "$OUT/correctness.log" | head -20
echo "=== summary"
cat "$S"
