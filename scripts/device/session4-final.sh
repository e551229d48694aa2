#!/usr/bin/env bash
# Device call (session 4): the merged tree on schema 4, in one call. Carried:
#   build-dev/  stripped warpstage-record, libwarpstage-inject.so, warpstage-sink-dump, gpu_recorder,
#               gpu_record_program, gpu_record_user_kernel; unstripped ws_testapp, ws_rowsum (line info)
#   build-pkg/  the recorder + dev components installed with cmake --install (see package-checks.sh)
# Steps: the ladder recorder, program recording + stall pass, users' instrumented kernels (GPU tests, now writing
# schema 4); the installed recorder; the bundled PyTorch sample (kept in $OUT); 3+3 overhead pairs.
set -u
OUT=${OUT:-/tmp/ws-out}; mkdir -p "$OUT"
B=build-dev; P=tests/recorder/programs
BUILD=/work/main/build/default
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export WARPSTAGE_REQUIRE_GPU=1 WARPSTAGE_SOURCE_DIR=$PWD WARPSTAGE_INJECT_LIB=$PWD/$B/libwarpstage-inject.so
mkdir -p $BUILD/app/record $BUILD/tests/recorder
for f in warpstage-record libwarpstage-inject.so; do ln -sf $PWD/$B/$f $BUILD/app/record/$f; done
for f in ws_testapp ws_rowsum; do ln -sf $PWD/$B/$f $BUILD/tests/recorder/$f; done
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for t in gpu_recorder gpu_record_program gpu_record_user_kernel; do
    timeout 200 $B/$t > $OUT/$t.log 2>&1; echo "$t rc=$?"; grep -E "FAIL|PASS|passed|stalls:" $OUT/$t.log | tail -6
done
echo "== installed recorder"
WARPSTAGE_INJECT_LIB= timeout 150 bash scripts/device/package-checks.sh > $OUT/package.log 2>&1; echo "package-checks rc=$?"; tail -4 $OUT/package.log
echo "== the bundled PyTorch sample"
rm -f $OUT/transformer-block-h200.wstrace
t0=$(date +%s%N)
timeout 150 $B/warpstage-record --kernels 'flash' --launch-range 0:0 -o $OUT/transformer-block-h200.wstrace -- python3 $P/transformer_block.py sample > $OUT/sample.log 2>&1
echo "record rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms"; grep -E "SAMPLE|losses|stall pass:|stored" $OUT/sample.log
python3 - $OUT/transformer-block-h200.wstrace <<'PY'
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1]); q = lambda s: c.execute(s).fetchall()
print("bytes", os.path.getsize(sys.argv[1]), "schema", q("pragma user_version"), "runs", q("select id, kind, status, pid, has_stalls from runs"))
for t in ("kernels", "api_spans", "nvtx_ranges", "memops", "streams", "stall_samples"):
    print(" ", t, q(f"select count(*) from {t}")[0][0])
print("  nvtx names", q("select count(distinct name) from nvtx_ranges"), q("select name from nvtx_ranges where name not like 'aten%' group by name"))
print("  stalls on", q("select substr(k.name,1,90), k.launch_index, sum(s.count) from stall_samples s join kernels k on k.id = s.kernel_id group by k.id"))
PY
echo "== overhead, 3+3 pairs"
timeout 200 bash scripts/device/overhead-bench.sh 3 3 2>&1 | grep -E "^BENCH|==" | head -10
echo "done $(date -u +%FT%TZ)"
