#!/usr/bin/env bash
# Device call for the program stall pass (issue 9, "Stall pass"; docs/recording.md, "Stall pass for your kernels").
# Run from the repository root on the H200 with the stripped binaries of a local build carried in build-dev/:
#   cmake --build build/default --target warpstage-record warpstage-inject warpstage-sink-dump gpu_record_program \
#         ws_testapp gpu_recorder
#   rm -rf build-dev; mkdir build-dev
#   cp build/default/app/record/{libwarpstage-inject.so,warpstage-record,warpstage-sink-dump} \
#      build/default/tests/recorder/{gpu_record_program,gpu_recorder,ws_testapp} \
#      tests/recorder/programs/torch_compare.py build-dev/; strip build-dev/{warpstage-record,warpstage-sink-dump,gpu_record_program,gpu_recorder}
#   run: bash scripts/device/stall-pass-check.sh     (carry ["build-dev"])
# ws_testapp is NOT stripped: its -lineinfo is what the source lines come from.
# Success: "gpu_record_program rc=0" (its stall lines: samples on wsScale calls 1 and 2, 0 on call 0, most with a
# line), "gpu_recorder rc=0" (the ladder's pass 2 after its move to pc_sampling_session.*), the sqlite summary
# of /tmp/wsstall/app.ws showing samples only on wsScale (launch_index by call order 1, 2) with ws_testapp.cu lines,
# and for torch: a run with has_stalls=1 (or a note saying why not, e.g. another CUPTI client).
set -u
OUT=${OUT:-/tmp/ws-out}; mkdir -p "$OUT"
B=build-dev
# The test binaries name warpstage-record and ws_testapp by their build paths: those are linked to build-dev.
BUILD=$(strings $B/gpu_record_program | grep -m1 '/app/record/warpstage-record$' | sed 's|/app/record/warpstage-record$||')
BUILD=${BUILD:-/work/main/build/default}
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export WARPSTAGE_REQUIRE_GPU=1 WARPSTAGE_SOURCE_DIR=$PWD WARPSTAGE_INJECT_LIB=$PWD/$B/libwarpstage-inject.so
mkdir -p $BUILD/app/record $BUILD/tests/recorder
ln -sf $PWD/$B/warpstage-record $BUILD/app/record/warpstage-record
ln -sf $PWD/$B/libwarpstage-inject.so $BUILD/app/record/libwarpstage-inject.so
ln -sf $PWD/$B/ws_testapp $BUILD/tests/recorder/ws_testapp
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) build path $BUILD"

summary() {  # stall samples per launch of a recorded file
  python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = lambda s: c.execute(s).fetchall()
for r in q("select id, status, has_stalls, substr(notes, instr(notes, 'stall'), 400) from runs"): print("run", r)
for r in q("""select k.name, k.launch_index, k.correlation_id, count(s.id), coalesce(sum(s.count), 0),
                     coalesce(sum(case when s.line > 0 then s.count end), 0), group_concat(distinct s.source_file)
              from kernels k left join stall_samples s on s.kernel_id = k.id group by k.id
              having count(s.id) > 0 or k.name like 'wsScale%' order by k.name, k.correlation_id limit 40"""):
    print("  launch", r)
for r in q("""select reason, sum(count) from stall_samples group by reason order by 2 desc limit 6"""): print("  reason", r)
for r in q("""select source_file, line, sum(count) from stall_samples where line > 0 group by 1, 2 order by 3 desc limit 6"""):
    print("  line", r)
PY
}

echo "== 1. warpstage-record --kernels '^wsScale' --launch-range 1:2 -- ws_testapp basic"
rm -rf /tmp/wsstall; mkdir -p /tmp/wsstall
timeout 60 $B/warpstage-record --keep-sinks -o /tmp/wsstall/app.ws --kernels '^wsScale' --launch-range 1:2 -- $B/ws_testapp basic \
  > $OUT/app.out 2> $OUT/app.err; echo "record rc=$?"; grep -E "stall|warning|error" $OUT/app.err | head -20
[ -f /tmp/wsstall/app.ws ] && summary /tmp/wsstall/app.ws
for d in /tmp/wsstall/.app.ws.stalls-*; do [ -d "$d" ] && $B/warpstage-sink-dump "$d" | grep '"type":"stall"'; done

echo "== 2. the same with WARPSTAGE_STALL_SYNC=0 (no cuCtxSynchronize around the sampled launch: serialized mode alone)"
WARPSTAGE_STALL_SYNC=0 timeout 60 $B/warpstage-record -o /tmp/wsstall/sync.ws --kernels '^wsScale' -- $B/ws_testapp basic \
  > $OUT/sync.out 2> $OUT/sync.err; echo "record rc=$?"; grep -E "stall pass: [0-9]|warning|error" $OUT/sync.err | head -8

echo "== 3. gpu_record_program (the ctest GPU test: program recording + the stall pass)"
timeout 200 $B/gpu_record_program > $OUT/gpu_record_program.log 2>&1; echo "gpu_record_program rc=$?"
grep -E "FAIL|stalls:|passed|failed" $OUT/gpu_record_program.log | tail -16

echo "== 4. gpu_recorder (the ladder's pass 2 on the shared PC sampling session)"
timeout 170 $B/gpu_recorder > $OUT/gpu_recorder.log 2>&1; echo "gpu_recorder rc=$?"; tail -6 $OUT/gpu_recorder.log

echo "== 5. PyTorch: the MLP workload with --kernels on its GEMMs, launches 0:4"
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  timeout 150 $B/warpstage-record -o /tmp/wsstall/torch.ws --kernels 'gemm|Kernel' --launch-range 0:4 -- python3 $B/torch_compare.py workload \
    > $OUT/torch.out 2> $OUT/torch.err; echo "record rc=$?"; grep -E "stall|warning|error" $OUT/torch.err | head -12
  [ -f /tmp/wsstall/torch.ws ] && summary /tmp/wsstall/torch.ws | head -30
else
  echo "no torch with CUDA here: skipped"
fi
