#!/usr/bin/env bash
# Runs on the device machine (the `run` tool), from the repository root, with the build
# directory carried (default build-rec). Records the bundled sample (the whole ladder at
# 4096^3, every CTA, stall pass), runs the recorder's GPU test, and leaves compressed
# results in $OUT. Usage: kernels/recorder/tools/device_record.sh [build-dir]
set -u
B=${1:-build-rec}
OUT=${OUT:-/tmp/ws-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export WARPSTAGE_SOURCE_DIR=$PWD
export WARPSTAGE_REQUIRE_GPU=1   # a GPU test that cannot run here fails instead of skipping
REC=$B/app/record/warpstage-record
WORK=/tmp/ws-sample
rm -rf "$WORK"; mkdir -p "$WORK"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader)"

echo "== gpu_recorder (1024^3, all rungs, both passes; append, SM subset, overflow, interrupt)"
timeout 110 "$B/tests/recorder/gpu_recorder" > "$OUT/gpu_recorder.log" 2>&1
echo "gpu_recorder rc=$?"; tail -25 "$OUT/gpu_recorder.log"

echo "== sample: whole ladder, 4096^3, every CTA, stall pass"
SAMPLE=$WORK/ladder-h200-4096.wstrace
cd "$WORK"
CMD=("$OLDPWD/$REC" -o ladder-h200-4096.wstrace -r all -s 4096x4096x4096)
start=$(date +%s)
timeout 280 "${CMD[@]}" 2> "$OUT/record.log"
rc=$?
cd - > /dev/null
echo "warpstage-record rc=$rc in $(( $(date +%s) - start )) s"; grep -v "^\[" "$OUT/record.log" | tail -20
python3 kernels/recorder/tools/summarize.py "$SAMPLE" > "$OUT/summary.txt" 2>&1; cat "$OUT/summary.txt" | cut -c1-400
if [ -f "$SAMPLE" ]; then
  (cd "$WORK" && tar -cf - ladder-h200-4096.wstrace | xz -9 -T16 --block-size=24MiB > "$OUT/ladder-h200-4096.tar.xz")
  ls -l "$SAMPLE" "$OUT/ladder-h200-4096.tar.xz"
  size=$(stat -c %s "$OUT/ladder-h200-4096.tar.xz")
  if [ "$size" -gt 15000000 ]; then
    split -b 15000000 -d "$OUT/ladder-h200-4096.tar.xz" "$OUT/ladder-h200-4096.tar.xz.part"
    rm "$OUT/ladder-h200-4096.tar.xz"; ls -l "$OUT"
  fi
fi
echo "== done $(date -u +%FT%TZ)"
