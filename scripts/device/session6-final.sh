#!/usr/bin/env bash
# Device call (session 6, lead): the merged tree, in one call. Carried build-s6final/ (stripped): warpstage-record,
# libwarpstage-inject.so, warpstage-sink-dump, lce, gpu_lce_record, gpu_recorder, gpu_record_program,
# gpu_record_user_kernel; unstripped ws_testapp, ws_rowsum (line info); scripts/device/lce-record.sh.
# Steps: (1) the real multi-launch Proton fixture (scripts/device/proton-fixtures.sh, FIXTURES=triton_add_multi);
# (2) the recorder GPU tests on the merged tree; (3) scripts/device/lce-record.sh: gpu_lce_record, then
# `warpstage-record --rungs lce:all` at the benchmark point -> the bundled lce sample ($OUT/lce-h200.wstrace.xz).
set -u
REAL_OUT=${OUT:-/tmp/ws-out}; mkdir -p "$REAL_OUT"; L=/tmp/s6final; rm -rf $L; mkdir -p $L
B=$PWD/build-s6final; BUILD=/work/main/build/default
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $BUILD/app/record $BUILD/tests/recorder
for f in warpstage-record libwarpstage-inject.so warpstage-sink-dump; do ln -sf $B/$f $BUILD/app/record/$f; done
for f in ws_testapp ws_rowsum; do ln -sf $B/$f $BUILD/tests/recorder/$f; done
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "== 1. Proton multi-launch fixture"
OUT=$L FIXTURES="info triton_add_multi" timeout 200 bash scripts/device/proton-fixtures.sh 2>&1 | grep -E "==|rc=|PASS|FAIL|Triton|launch" | head -20
cp /tmp/proton/triton_add_multi.chrome_trace "$REAL_OUT/" 2>/dev/null && echo "fixture copied"
echo "== 2. recorder GPU tests"
( export WARPSTAGE_REQUIRE_GPU=1 WARPSTAGE_SOURCE_DIR=$PWD WARPSTAGE_INJECT_LIB=$B/libwarpstage-inject.so
  for t in ${TESTS-gpu_recorder gpu_record_program gpu_record_user_kernel}; do
    timeout 200 $B/$t > $L/$t.log 2>&1; echo "$t rc=$?"; grep -E "FAIL|PASS|passed" $L/$t.log | tail -4
  done )
echo "== 3. lce family recording"
( cd $B && export WARPSTAGE_INJECT_LIB=$B/libwarpstage-inject.so WARPSTAGE_SOURCE_DIR=/work/main && OUT=$L bash scripts/device/lce-record.sh ) 2>&1 | tee $L/lce-record.log | tail -40
if [ -f $L/lce-h200.wstrace ]; then xz -T0 -6 -k $L/lce-h200.wstrace && cp $L/lce-h200.wstrace.xz "$REAL_OUT/"; ls -la $L/lce-h200.wstrace*; fi
tar czf "$REAL_OUT/logs.tar.gz" -C /tmp s6final --exclude='*.wstrace' --exclude='*.xz' 2>/dev/null
echo "done $(date -u +%FT%TZ)"
