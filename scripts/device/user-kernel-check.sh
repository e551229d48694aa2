#!/usr/bin/env bash
# Device call for issue 10 (users' instrumented kernels, <warpstage/trace.cuh>), run from the repository root
# on the GPU machine with binaries of a local default build carried in build-dev/:
#   mkdir -p build-dev && cp build/default/app/record/{libwarpstage-inject.so,warpstage-record} \
#       build/default/tests/recorder/{gpu_record_user_kernel,ws_rowsum,ws_rowsum_notrace} build-dev/ \
#     && strip build-dev/warpstage-record build-dev/libwarpstage-inject.so build-dev/gpu_record_user_kernel
#   run: bash scripts/device/user-kernel-check.sh      (carry ["build-dev"])
# What it does:
#   1. gpu_record_user_kernel (WARPSTAGE_REQUIRE_GPU=1): the row-sum program alone and under warpstage-record
#      (all launches traced, --launch-range, overflow, no match); "PASS: 0 failure(s)" is success;
#      1b. the same with WARPSTAGE_TRACE=0 (the injection library traces nothing) must FAIL (rc=1);
#   2. the SASS check of the two builds (check_user_sass.py): "PASS" lines only, exit 0; 2b: a planted fault
#      (the traced binary given as the untraced one) must FAIL (rc=1);
#   3. cost of the instrumentation when NOT recording: ws_rowsum (instrumented, control word null) vs
#      ws_rowsum_notrace (-DWARPSTAGE_TRACE=0), for the Direct and the Staged engine (--staged), 11 alternating
#      rounds of 50 timed launches each, at two sizes; prints the median over rounds of each round's median launch
#      time, side by side, and the ratio; 3b: CUPTI durations of traced vs untraced launches while recording;
#   4. one recording kept in $OUT/rowsum.wstrace (with sinks) for a look in the viewer.
# The test binaries name warpstage-record, ws_rowsum and the kernel's source by their build paths: linked here.
set -u
OUT=${OUT:-/tmp/ws-out}; mkdir -p "$OUT"
B=$PWD/build-dev
BUILD=${BUILD_PATH:-/work/wt-trace/build/default}
SRC=${SOURCE_PATH:-/work/wt-trace}
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export WARPSTAGE_REQUIRE_GPU=1 WARPSTAGE_REQUIRE_SASS_CHECK=1 WARPSTAGE_INJECT_LIB=$B/libwarpstage-inject.so
mkdir -p $BUILD/app/record $BUILD/tests/recorder $SRC/tests/recorder/programs
ln -sf $B/warpstage-record $BUILD/app/record/warpstage-record
ln -sf $B/libwarpstage-inject.so $BUILD/app/record/libwarpstage-inject.so
ln -sf $B/ws_rowsum $BUILD/tests/recorder/ws_rowsum
[ "$SRC" -ef "$PWD" ] || ln -sf $PWD/tests/recorder/programs/ws_rowsum.cu $SRC/tests/recorder/programs/ws_rowsum.cu
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader)"

echo "== 1. gpu_record_user_kernel"
timeout 240 $B/gpu_record_user_kernel > $OUT/gpu_record_user_kernel.log 2>&1; echo "gpu_record_user_kernel rc=$?"
grep -E "FAIL|PASS|SKIP" $OUT/gpu_record_user_kernel.log | tail -20

echo "== 1b. the same test must go red when the injection library traces nothing (WARPSTAGE_TRACE=0): rc=1 expected"
WARPSTAGE_TRACE=0 timeout 240 $B/gpu_record_user_kernel > $OUT/gpu_record_user_kernel_off.log 2>&1; echo "gpu_record_user_kernel (tracing off) rc=$?"
grep -cE "^FAIL" $OUT/gpu_record_user_kernel_off.log | sed 's/^/FAIL lines: /'

echo "== 2. SASS: instrumented vs -DWARPSTAGE_TRACE=0"
python3 tests/recorder/check_user_sass.py --traced $B/ws_rowsum --untraced $B/ws_rowsum_notrace --kernel wsRowSum; echo "sass rc=$?"
echo "== 2b. the SASS check must go red on a traced binary posing as the untraced one: rc=1 expected"
python3 tests/recorder/check_user_sass.py --traced $B/ws_rowsum --untraced $B/ws_rowsum --kernel wsRowSum | grep FAIL; echo "sass (planted) rc=${PIPESTATUS[0]}"

echo "== 3. cost when not recording (median of 11 rounds x 50 launches; us per launch)"
for size in "264 65536" "1056 262144"; do
  set -- $size
  python3 - "$B" "$1" "$2" <<'PY'
import re, statistics, subprocess, sys
b, rows, n = sys.argv[1], sys.argv[2], sys.argv[3]
variants = [("Direct, not recording", "ws_rowsum", []), ("Direct, WARPSTAGE_TRACE=0", "ws_rowsum_notrace", []),
            ("Staged, not recording", "ws_rowsum", ["--staged"]), ("Staged, WARPSTAGE_TRACE=0", "ws_rowsum_notrace", ["--staged"])]
res = {v[0]: [] for v in variants}
for r in range(11):
    for name, exe, extra in variants:
        out = subprocess.run([f"{b}/{exe}", "--rows", rows, "--len", n, "--iters", "50", "--time"] + extra, capture_output=True, text=True).stdout
        m = re.search(r"TIME median_us=([0-9.]+)", out)
        if not m or "OK rows" not in out:
            print("FAILED RUN", exe, extra, out); sys.exit(1)
        res[name].append(float(m.group(1)))
med = {k: statistics.median(v) for k, v in res.items()}
print(f"rows={rows} len={n}:")
for eng in ("Direct", "Staged"):
    a, z = med[f"{eng}, not recording"], med[f"{eng}, WARPSTAGE_TRACE=0"]
    print(f"  {eng}: instrumented-not-recording {a:.2f} us | WARPSTAGE_TRACE=0 {z:.2f} us | ratio {a / z:.4f}")
for k, v in res.items():
    print(f"   rounds {k:28s}", " ".join(f"{x:.1f}" for x in v))
PY
done

echo "== 3b. cost while recording: CUPTI duration of traced vs untraced launches of the same run (--launch-range 2:3 of 6)"
for eng in "" "--staged"; do
  rm -f $OUT/cost$eng.wstrace
  $B/warpstage-record --no-stalls --kernels wsRowSum --launch-range 2:3 -o $OUT/cost$eng.wstrace -- $B/ws_rowsum --iters 6 $eng > /dev/null 2>&1
  python3 - "$OUT/cost$eng.wstrace" "${eng:-direct}" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("select launch_index, traced, end_ns - start_ns from kernels where name like '%wsRowSum%' order by launch_index").fetchall()
t = [d for i, tr, d in rows if tr]; u = [d for i, tr, d in rows if not tr and i > 0]
print(f"  {sys.argv[2]}: launches {[(i, tr, d) for i, tr, d in rows]}")
if t and u: print(f"  {sys.argv[2]}: traced mean {sum(t)/len(t)/1000:.2f} us vs untraced (launches 1,4,5) mean {sum(u)/len(u)/1000:.2f} us: ratio {sum(t)/len(t)/(sum(u)/len(u)):.3f}")
PY
done

echo "== 4. a recording to keep"
$B/warpstage-record --keep-sinks --kernels wsRowSum -o $OUT/rowsum.wstrace -- $B/ws_rowsum --iters 2 > $OUT/record.log 2>&1
echo "record rc=$?"; tail -5 $OUT/record.log
python3 - "$OUT/rowsum.wstrace" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = lambda s: c.execute(s).fetchall()
print("schema", q("pragma user_version")[0][0], "runs", q("select id, kind, status, substr(failure_reason,1,80) from runs"))
print("notes:", q("select notes from runs")[0][0][:1500])
PY
