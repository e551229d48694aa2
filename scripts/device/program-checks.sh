#!/usr/bin/env bash
# Device call for issue 9 (program recording), run from the repository root on the GPU machine with the
# stripped binaries of a local build carried in build-dev/ (see docs/device-log.md, session 3):
#   mkdir build-dev; cp build/default/app/record/{libwarpstage-inject.so,warpstage-record,warpstage-sink-dump} \
#      build/default/tests/recorder/{gpu_record_program,gpu_recorder,ws_testapp} \
#      tests/recorder/programs/{torch_compare.py,device_program.sh} build-dev/; strip build-dev/*
#   run: bash scripts/device/program-checks.sh   (carry ["build-dev"])
# The test binaries name warpstage-record and ws_testapp by their build paths: those are linked to build-dev.
set -u
OUT=${OUT:-/tmp/ws-out}; mkdir -p "$OUT"
B=build-dev
BUILD=${BUILD_PATH:-/work/main/build/default}
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export WARPSTAGE_REQUIRE_GPU=1 WARPSTAGE_SOURCE_DIR=$PWD WARPSTAGE_INJECT_LIB=$PWD/$B/libwarpstage-inject.so
mkdir -p $BUILD/app/record $BUILD/tests/recorder
ln -sf $PWD/$B/warpstage-record $BUILD/app/record/warpstage-record
ln -sf $PWD/$B/libwarpstage-inject.so $BUILD/app/record/libwarpstage-inject.so
ln -sf $PWD/$B/ws_testapp $BUILD/tests/recorder/ws_testapp
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader)"
echo "== gpu_record_program (native test program: streams, memcpy, NVTX, graph, crash/exit/timeout, children)"
timeout 150 $B/gpu_record_program > $OUT/gpu_record_program.log 2>&1; echo "gpu_record_program rc=$?"
grep -E "FAIL|PASS|passed|failed" $OUT/gpu_record_program.log | tail -12
echo "== gpu_recorder (the ladder's own path on schema 3, 1024^3, both passes)"
timeout 170 $B/gpu_recorder > $OUT/gpu_recorder.log 2>&1; echo "gpu_recorder rc=$?"; tail -6 $OUT/gpu_recorder.log
echo "== device_program.sh kill torch bench"
timeout 250 bash $B/device_program.sh $B $OUT kill torch bench > $OUT/device_program.log 2>&1; echo "device_program rc=$?"
for f in /tmp/wsprog/torch.ws /tmp/wsprog/kill.ws; do
  [ -f $f ] && python3 - "$f" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = lambda s: c.execute(s).fetchall()
print(sys.argv[1], "schema", q("pragma user_version")[0][0], "runs", q("select id, kind, status, pid, exit_code, exit_signal, substr(failure_reason,1,60) from runs"),
      "kernels", q("select count(*) from kernels")[0][0], "api", q("select count(*) from api_spans")[0][0],
      "nvtx", q("select count(*) from nvtx_ranges")[0][0], "streams", q("select count(*) from streams")[0][0],
      "launches with an api span", len({r for r in q("select run_id, correlation_id from kernels")} & {r for r in q("select run_id, correlation_id from api_spans")}))
PY
done
tail -45 $OUT/summary.txt
