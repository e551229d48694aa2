#!/usr/bin/env bash
# Session 14, lead: the recorder on the merged tree (packed k-step records through decodeTrace into a store):
# warpstage-record --rungs pingpong,streamk at a partial-tile shape and at 1024^3 (both passes), then gpu_recorder.
# Carry build-s14rec: bins.tar.xz (stripped warpstage-record, libwarpstage-inject.so, gpu_recorder of build/kchecks)
# and this script as rec.sh (it sources ../scripts/device/lib.sh from the tree).
# Run: cd build-s14rec && tar xJf bins.tar.xz && timeout 150 bash rec.sh   ($OUT: the two .wstrace files come back)
set -u
. ../scripts/device/lib.sh
ws_begin s14-rec 130
ws_cuda_env
export WARPSTAGE_SOURCE_DIR=$(cd .. && pwd)
step record-partial 40 "" ./warpstage-record --rungs pingpong,streamk --shape 300x1000x1032 -o "$OUT/rec-partial.wstrace"
step record-1024 40 "" ./warpstage-record --rungs pingpong,streamk --shape 1024x1024x1024 -o "$OUT/rec-1024.wstrace"
tail -4 "$L/record-1024.log" | tee -a "$S"
step gpu_recorder 80 "" ./gpu_recorder
grep -E "^FAIL|passed|failed|PASS" "$L/gpu_recorder.log" | tail -6 | tee -a "$S"
(cd "$L" && tar -czf "$OUT/logs.tar.gz" .)
ls -la "$OUT" | tee -a "$S"
