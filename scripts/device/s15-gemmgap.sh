#!/usr/bin/env bash
# Session 15, s15-gemmgap, call 1 (diagnostic, builds nothing): where stream-K's weak shapes lose to cuBLAS.
#   1. ncu --set full (--clock-control none; source counters = per-SASS-line warp-stall sampling) of cuBLAS's kernels
#      (cublas_probe: the launch ladder_bench times) and of ours (ladder_bench's first streamk launch) at
#      256x4096x4096, 1024x1024x16384, 1024x1024x1024 and 4096x4096x4096 (a shape that loses more hot than cold);
#      exported per kernel as the details page (every section's metrics) and the source page (SASS lines with their
#      stall samples), summarised by ncu_gap_summary.py;
#   2. hot batches (ladder_bench --hot --heat-ms 1000) at 4096^3, 2048^3, 512x4096x4096 and 256x4096x4096 with
#      nvidia-smi sampling clocks, power and temperature every 50 ms; each output line of ladder_bench is stamped with
#      the time it was printed, so hot_clock_segments.py can say which samples belong to cuBLAS's and which to our
#      batches (cuBLAS, streamk, cuBLAS again per shape).
# Carry build-s15-gemmgap: bins.tar.xz (stripped ladder_bench, cublas_probe of /work/main/build/kchecks at main
#   1d2d620), lib.sh, this script, ncu_gap_summary.py, hot_clock_segments.py.
# Run: cd build-s15-gemmgap && tar xJf bins.tar.xz && BUDGET=170 timeout 180 bash s15-gemmgap.sh
# Success: PASS on every step line, the two tables printed last; $OUT: summary.txt, ncu-csv.tar.xz (details and
#   source pages), ncu-rep.tar.xz (the reports), hot.tar.xz (samples and stamped logs).
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s15-gemmgap 170
ws_cuda_env
HERE=$(dirname "${BASH_SOURCE[0]}")
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
note "ncu: $(ncu --version 2>&1 | tail -1)"

# --- 2 first (the card idle and cool at the start is the same for every later step; hot needs ~30 s)
Q=timestamp,clocks.sm,clocks.mem,power.draw,power.draw.instant,temperature.gpu,clocks_event_reasons.active,utilization.gpu
nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits -lms 50 > "$L/smi.csv" 2> "$L/smi.err" &
SMI=$!
stamp() { while IFS= read -r line; do printf '%s | %s\n' "$(date '+%Y/%m/%d %H:%M:%S.%N')" "$line"; done; }
for s in 4096x4096x4096 2048x2048x2048 512x4096x4096 256x4096x4096; do
    step "hot-$s" 20 "Kernel ladder vs cuBLAS" bash -c "stdbuf -oL ./ladder_bench --rung streamk --shape $s --hot \
        --heat-ms 1000 --target-ms 300 --no-traced --csv $L/hot-$s.csv 2>&1 | { $(declare -f stamp); stamp; }"
    sleep 2  # a visible idle gap between shapes in the samples
done
kill "$SMI" 2>/dev/null
wait "$SMI" 2>/dev/null
step hot-table 10 "shape" python3 "$HERE/hot_clock_segments.py" "$L/smi.csv" "$L"/hot-*.log
cat "$L/hot-table.log" >> "$S"
(cd "$L" && tar -I 'xz -T0' -cf "$OUT/hot.tar.xz" smi.csv smi.err hot-*.log hot-*.csv 2>/dev/null)

# --- 1: ncu, cuBLAS then ours
SHAPES="256x4096x4096 1024x1024x16384 1024x1024x1024 4096x4096x4096"
NCU="ncu --clock-control none --set full --import-source no"
for s in $SHAPES; do
    step "ncu-cublas-$s" 20 "" $NCU -k 'regex:nvjet|splitK|[Rr]educe' -o "$L/rep-cublas-$s" -f ./cublas_probe --shape "$s"
done
for s in $SHAPES; do
    step "ncu-ours-$s" 25 "" $NCU -k regex:gemmStreamk -c 1 -o "$L/rep-ours-$s" -f ./ladder_bench --rung streamk \
        --shape "$s" --no-traced --target-ms 1 --min-iters 1 --max-iters 2 --rest-ms 0 --csv /tmp/ncu.csv
done
mkdir -p "$L/csv"
for r in "$L"/rep-*.ncu-rep; do
    b=$(basename "$r" .ncu-rep)
    [ "$(left)" -lt 25 ] && { note "SKIP export of $b: out of time"; continue; }
    timeout 15 ncu -i "$r" --page details --csv > "$L/csv/$b-details.csv" 2> "$L/csv/$b-details.err"
    timeout 25 ncu -i "$r" --page source --csv --print-source sass > "$L/csv/$b-source.csv" 2> "$L/csv/$b-source.err"
done
step ncu-table 20 "kernel" python3 "$HERE/ncu_gap_summary.py" "$L/csv" --top 8
cat "$L/ncu-table.log" >> "$S"
(cd "$L/csv" && tar -I 'xz -T0' -cf "$OUT/ncu-csv.tar.xz" ./* 2>/dev/null)
(cd "$L" && tar -I 'xz -T0' -cf "$OUT/ncu-rep.tar.xz" ./*.ncu-rep 2>/dev/null)
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log 2>/dev/null)
ls -la "$OUT" | tee -a "$S"
echo "== end ($(left) s left)" | tee -a "$S"
