#!/usr/bin/env bash
# RUN in session 17 (call 1; docs/benchmarks/tracing-cost-2.md, its ncu table). As prepared:
# PREPARED, NOT RUN (session 16: too little device time was left to start a machine). Session 16, lead: ncu of lce rung 4's three launches in `lce --trace-cost --rung 4 --warmup 0 --iters 1` --
# the traced kernel without a buffer (the first call: control word still null), the untraced kernel, the traced
# kernel recording -- to see which unit the trace's ~18 MB per launch competes with (calls 1-5: the cost follows the
# bytes copied out, not the flushes, the fence's place, L2 eviction or the copying warp). ncu's defaults: caches
# flushed and clocks locked per kernel; sections SpeedOfLight, MemoryWorkloadAnalysis, WarpStateStats, SchedulerStats
# and the DRAM / L2 / L1-XBAR byte counters. Carry build-s16ncu: lce (stripped, main's final tree), lib.sh, this script.
# Output: $OUT/ab.txt (the metrics of the three launches side by side where the recording one differs by >= 2 %).
# Run: cd build-s16ncu && BUDGET=60 timeout 70 bash s16-lcencu.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s16-lcencu 60
ws_cuda_env
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { note "no ncu"; exit 1; }
note "env: $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $("$NCU" --version | tail -1); $(date -u)"
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum
M=$M,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
M=$M,smsp__inst_executed.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg
timeout 45 "$NCU" --import-source no --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --metrics "$M" -k regex:lceUserFirst -c 3 -o "$L/r" -f \
    ./lce --trace-cost --rung 4 --warmup 0 --iters 1 > "$L/ncu.log" 2>&1
note "ncu rc=$? $(grep -E '==ERROR|==WARNING|TRACECOST' "$L/ncu.log" | head -3 | tr '\n' ' ' | cut -c1-300)"
timeout 10 "$NCU" -i "$L/r.ncu-rep" --page raw --csv > "$L/raw.csv" 2>/dev/null
cp "$L/raw.csv" "$OUT/raw.csv" 2>/dev/null
python3 - "$L/raw.csv" > "$OUT/ab.txt" 2>&1 <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
hdr, units, data = rows[0], rows[1], rows[2:]
ki = hdr.index("Kernel Name")
print("launches:", [d[ki][:60] for d in data])
for j, name in enumerate(hdr):
    vals = []
    for d in data:
        try: vals.append(float(d[j].replace(",", "")))
        except (ValueError, IndexError): vals = None; break
    if not vals or len(vals) < 3: continue
    a, u, t = vals[0], vals[1], vals[2]  # traced no buffer, untraced, traced recording
    if u == 0 and t == 0: continue
    rel = (t - u) / u * 100 if u else float("inf")
    if abs(rel) >= 2: print(f"{name:90s} {units[j]:>10s}  nobuf {a:14.4g}  untraced {u:14.4g}  traced {t:14.4g}  {rel:+8.1f} %")
PY
head -80 "$OUT/ab.txt" | tee -a "$S"
