#!/usr/bin/env bash
# Device call for the examples (issue 10: examples/softmax-ws, examples/gemm-2consumer), run from the repository
# root on the GPU machine. What it needs is made here (no GPU needed) and carried as build-examples/:
#
#   cmake --build build/default --target gpu_examples warpstage-record warpstage-inject warpstage-sink-dump \
#     && rm -rf build-examples && cmake --install build/default --component recorder --prefix build-examples/prefix --strip \
#     && cmake --install build/default --component dev --prefix build-examples/prefix \
#     && cp build/default/tests/package/gpu_examples build-examples/ && strip build-examples/gpu_examples
#   (and for step 4: cmake --build build/default --target ladder_bench && cp build/default/tests/bench/ladder_bench build-examples/)
#   run: bash scripts/device/examples-check.sh [--only 1,2,3,4]        (carry ["build-examples"])
#
# What it does:
#   1. gpu_examples (WARPSTAGE_REQUIRE_GPU=1): a fresh copy of the carried prefix (moved: nothing of this machine's
#      paths), both examples configured and built standalone against it with the device's nvcc, run alone (their own
#      PASS), recorded by the installed warpstage-record (--kernels), the recordings checked (no overflow, roles and
#      user phase names, interval and load counts, CTA spans inside CUPTI's kernel times, the source in the run).
#      Success: "gpu_examples rc=0" and "PASS: 0 failure(s)". The two recordings are copied to $OUT.
#   1b. the same test with WARPSTAGE_TRACE=0 (the injection library traces nothing) must go red: rc=1 expected.
#   2. cost of the instrumentation when not recording, per example: the instrumented build (control word null) vs
#      the -DWARPSTAGE_TRACE=0 build, default sizes, 6 alternating rounds (ABBA) of 20 launches; medians.
#   3. the recordings in $OUT: softmax_ws.wstrace (bundle candidate, 16 rows x 32768 floats, 2 launches) and
#      gemm_2consumer.wstrace (512 x 512 x 1024, 2 launches), with their sizes and run notes. No PNG here (no Qt):
#      render locally, e.g. `warpstage export $OUT/softmax_ws.wstrace --run 1 --kernel K --out examples/softmax-ws/picture.png`
#      (K from `warpstage info`).
#   4. the top rung's cost when instrumented but NOT recording (the traced pingpong build with a null trace buffer:
#      <warpstage/trace.cuh>'s runtime path) vs untraced vs traced, 4096^3 and 8192^3, 6 ABBA rounds in one run:
#      `ladder_bench --rung pingpong --idle-cost` (only when build-examples/ladder_bench is there); its last table
#      is the result ($OUT/idle_cost.log; the CSV, $OUT/idle_cost.csv, holds the untraced and traced rows only).
set -u
ONLY=${2:-1,2,3,4}; [ "${1:-}" = --only ] || ONLY=1,2,3,4
want() { [[ ",$ONLY," == *",$1,"* ]]; }
OUT=${OUT:-/tmp/ws-out}; mkdir -p "$OUT"
SRC=$PWD
B=$SRC/build-examples
if { want 1 || want 2; } && ! { [ -x "$B/gpu_examples" ] && [ -x "$B/prefix/bin/warpstage-record" ]; }; then
    echo "examples-check: build-examples/ incomplete (see the header of this script)"; exit 2
fi
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
unset WARPSTAGE_INJECT_LIB WARPSTAGE_SOURCE_DIR
export WARPSTAGE_REQUIRE_GPU=1 WARPSTAGE_EXAMPLES_PREFIX=$B/prefix WARPSTAGE_EXAMPLES_SRC=$SRC/examples \
       WARPSTAGE_CUDA_COMPILER=$(command -v nvcc) WARPSTAGE_CMAKE=$(command -v cmake)
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>&1)"

if want 1; then
echo "== 1. gpu_examples"
t0=$(date +%s)
WARPSTAGE_EXAMPLES_OUT=$OUT timeout 540 "$B/gpu_examples" >"$OUT/gpu_examples.log" 2>&1; rc=$?
echo "gpu_examples rc=$rc ($(( $(date +%s) - t0 )) s)"
grep -E "^(FAIL|PASS|SKIP)|alone:|recorded:" "$OUT/gpu_examples.log" | tail -30

echo "== 1b. with WARPSTAGE_TRACE=0 the injection library traces nothing: the test must FAIL (rc=1 expected)"
WARPSTAGE_TRACE=0 timeout 540 "$B/gpu_examples" >"$OUT/gpu_examples_off.log" 2>&1
echo "gpu_examples (tracing off) rc=$?; FAIL lines: $(grep -c '^FAIL' "$OUT/gpu_examples_off.log")"
fi

if want 2; then
echo "== 2. not recording: instrumented vs -DWARPSTAGE_TRACE=0 (median us per launch over 6 ABBA rounds x 20 launches)"
W=$(mktemp -d /tmp/ws-examples-cost.XXXXXX)
cp -a "$B/prefix" "$W/prefix"
ok=1
for ex in softmax-ws:SOFTMAX_WS gemm-2consumer:GEMM_2CONSUMER; do
    d=${ex%%:*}
    cmake -S "examples/$d" -B "$W/$d" -G Ninja -DCMAKE_PREFIX_PATH="$W/prefix" -D${ex##*:}_NOTRACE=ON >"$W/$d.log" 2>&1 \
        && cmake --build "$W/$d" >>"$W/$d.log" 2>&1 || { tail -5 "$W/$d.log"; ok=0; }
done
if [ "$ok" = 1 ]; then
python3 - "$W" <<'PY'
import re, statistics, subprocess, sys
w = sys.argv[1]
for name, exe in (("softmax_ws (264 x 65536 floats)", "softmax-ws/softmax_ws"), ("gemm_2consumer (2048^3)", "gemm-2consumer/gemm_2consumer")):
    res = {"instrumented": [], "WARPSTAGE_TRACE=0": []}
    order = ["instrumented", "WARPSTAGE_TRACE=0"]
    for r in range(6):
        for v in (order if r % 2 == 0 else order[::-1]):
            path = f"{w}/{exe}" + ("" if v == "instrumented" else "_notrace")
            out = subprocess.run([path, "--iters", "20"], capture_output=True, text=True).stdout
            m = re.search(r"median ([0-9.]+) us", out)
            if not m or "PASS" not in out:
                print("FAILED RUN", path, out); sys.exit(1)
            res[v].append(float(m.group(1)))
    a, z = statistics.median(res["instrumented"]), statistics.median(res["WARPSTAGE_TRACE=0"])
    print(f"  {name}: instrumented, not recording {a:.1f} us | WARPSTAGE_TRACE=0 {z:.1f} us | ratio {a / z:.4f}")
    for k, v in res.items(): print(f"     rounds {k:18s}", " ".join(f"{x:.1f}" for x in v))
PY
fi
rm -rf "$W"
fi

if want 3; then
echo "== 3. the recordings"
for f in softmax_ws gemm_2consumer; do
    if [ -f "$OUT/$f.wstrace" ]; then
        echo "$f.wstrace: $(du -k "$OUT/$f.wstrace" | cut -f1) KiB"
        python3 - "$OUT/$f.wstrace" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = lambda s: c.execute(s).fetchall()
print("  schema", q("pragma user_version")[0][0], "runs", q("select id, kind, status from runs"))
print("  traced launches", q("select count(*) from kernels where traced"))
print("  notes:", (q("select notes from runs")[0][0] or "")[:800])
PY
    else
        echo "FAIL: no $OUT/$f.wstrace"
    fi
done
fi

if want 4 && [ -x "$B/ladder_bench" ]; then
    echo "== 4. pingpong: untraced vs instrumented-not-recording vs traced (ladder_bench --idle-cost)"
    timeout 300 "$B/ladder_bench" --rung pingpong --idle-cost --shape 4096x4096x4096 --shape 8192x8192x8192 \
        --csv "$OUT/idle_cost.csv" >"$OUT/idle_cost.log" 2>&1
    echo "ladder_bench rc=$?"
    grep -E "idle cost|cublas" "$OUT/idle_cost.log"
    sed -n '/### Instrumented but not recording/,$p' "$OUT/idle_cost.log"
fi
