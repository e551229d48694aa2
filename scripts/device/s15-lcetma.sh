#!/usr/bin/env bash
# s15-lcetma: is lce rung 4 limited by the SM's TMA issue rate? (s15-lcebody inferred it from traces: the producer
# spends 0.4-0.5 us issuing each ring stage; two extra TMA operations per stage cost 14-17 %.) One ncu launch each
# (--clock-control none; SourceCounters' per-SASS-line executed counts and stall samples, InstructionStats, WarpStateStats,
# SpeedOfLight, MemoryWorkloadAnalysis, plus every
# TMA / bulk-copy / L1TEX<->XBAR metric `ncu --query-metrics` lists on this machine) at the benchmark point of
#   a) rung 4 as built (lceUserFirst<4, 15>), b) the main loop alone (LCE_RUNG4_EPILOGUE=tnone4, lceTransposedProbe);
# then the TMA instructions' SASS counts per kernel (cuobjdump), ncu_tma_lines.py (executed counts and stall reasons
# of every UTMA* / UBLK* line), ncu_gap_summary.py (the kernel-level table) and the picked metrics.
# Build: none (main's lce). D=/work/main/build-s15-lcetma: a stripped copy of /work/main/build/kchecks/kernels/lce/lce
#   in bins.tar.xz; lib.sh, ncu_gap_summary.py, ncu_tma_lines.py and this script beside it.
# Carry: ["build-s15-lcetma"]. Command: cd build-s15-lcetma && tar xJf bins.tar.xz && BUDGET=58 timeout 64 bash s15-lcetma.sh
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s15-lcetma "${BUDGET:-58}"
ws_cuda_env
HERE=$(dirname "${BASH_SOURCE[0]}")
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { note "no ncu"; exit 1; }
note "env: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>&1 | head -1); $("$NCU" --version | tail -1); $(date -u)"
note "rung 4 alone: $(timeout 8 ./lce --time --rung 4 --warmup 10 --iters 30 2>&1 | grep -E 'TIME|FAIL')"
note "loop alone: $(LCE_RUNG4_EPILOGUE=tnone4 timeout 8 ./lce --time --rung 4 --warmup 10 --iters 30 2>&1 | grep -E 'TIME|FAIL')"
# the TMA instructions in the SASS, per kernel function
timeout 10 cuobjdump -sass ./lce > "$L/sass.txt" 2>&1
awk '/Function :/ {f=$3} f ~ /lceUserFirstILi4ELi15E|lceTransposedProbe/ && match($0, /(UTMA|UBLK)[A-Z0-9_.]*/) \
    {c[f " " substr($0, RSTART, RLENGTH)]++} END {for (k in c) print "  sass " k ": " c[k]}' "$L/sass.txt" | sort | tee -a "$S"
xz -T0 -c "$L/sass.txt" > "$OUT/sass.txt.xz"
# the metrics: every name with tma / bulk / async / xbar2l1tex / l1tex2xbar (counters: sum and % of peak; throughputs)
timeout 12 "$NCU" --query-metrics > "$L/metrics.txt" 2>&1
cp "$L/metrics.txt" "$OUT/metrics.txt"
grep -iE '^[a-z0-9_]*(tma|bulk|async|xbar2l1tex|l1tex2xbar|dshm|mio2|dsmem)[a-z0-9_]* ' "$L/metrics.txt" | head -70 \
    > "$L/picked.txt"
M=$(awk '$2=="Counter" {printf ",%s.sum,%s.avg.pct_of_peak_sustained_elapsed", $1, $1}
         $2=="Throughput" {printf ",%s.avg.pct_of_peak_sustained_elapsed", $1}
         $2=="Ratio" {printf ",%s.ratio", $1}' "$L/picked.txt")
M0=$(awk '$2=="Counter" {printf ",%s.sum", $1}' "$L/picked.txt")
note "metrics picked: $(awk '{print $1}' "$L/picked.txt" | tr '\n' ' ')"
BASE=gpu__time_duration.sum,sm__cycles_elapsed.avg,smsp__inst_executed.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
mkdir -p "$L/csv"
SECTIONS="--section SourceCounters --section InstructionStats --section WarpStateStats --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section LaunchStats"
FIRST=1  # 2 once a metric list with %-of-peak forms was refused
for c in rung4 loop; do
    [ "$(left)" -ge 14 ] || { note "SKIP ncu $c: $(left) s left"; continue; }
    E=X=0
    [ $c = loop ] && E=LCE_RUNG4_EPILOGUE=tnone4
    for try in $(seq $FIRST 2); do
        MM=$BASE$M
        [ $try = 2 ] && MM=$BASE$M0
        env $E timeout 25 "$NCU" --clock-control none --import-source no $SECTIONS -k regex:'lceUserFirst|lceTransposedProbe' \
            --launch-skip 1 -c 1 --metrics "$MM" -o "$L/$c" -f ./lce --time --rung 4 --warmup 3 --iters 1 \
            > "$L/ncu-$c.log" 2>&1
        rc=$?
        note "ncu $c (try $try) rc=$rc $(grep -E '==ERROR|==WARNING' "$L/ncu-$c.log" | head -2 | tr '\n' ' ' | cut -c1-300)"
        [ $rc = 0 ] && [ -f "$L/$c.ncu-rep" ] && break
        FIRST=2
    done
    [ -f "$L/$c.ncu-rep" ] || continue
    timeout 10 "$NCU" -i "$L/$c.ncu-rep" --page details --csv > "$L/csv/$c-details.csv" 2>/dev/null
    timeout 10 "$NCU" -i "$L/$c.ncu-rep" --page raw --csv > "$L/csv/$c-raw.csv" 2>/dev/null
    timeout 15 "$NCU" -i "$L/$c.ncu-rep" --page source --csv --print-source sass > "$L/csv/$c-source.csv" 2>/dev/null
done
python3 "$HERE/ncu_tma_lines.py" "$L/csv/rung4-source.csv" > "$OUT/tma-lines-rung4.txt" 2>&1
python3 "$HERE/ncu_tma_lines.py" "$L/csv/loop-source.csv" > "$OUT/tma-lines-loop.txt" 2>&1
python3 "$HERE/ncu_gap_summary.py" "$L/csv" --top 10 > "$OUT/summary-table.txt" 2>&1
# the picked metrics, rung 4 against the loop, from the raw pages (name, unit, value per report)
python3 - "$L/csv/rung4-raw.csv" "$L/csv/loop-raw.csv" > "$OUT/metrics-ab.txt" 2>&1 <<'PY'
import csv, re, sys
def raw(p):
    try:
        rows = list(csv.reader(open(p, newline="")))
    except OSError:
        return {}
    h = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if h is None or len(rows) < h + 3:
        return {}
    names, units, vals = rows[h], rows[h + 1], rows[h + 2]
    return {n: (u, v) for n, u, v in zip(names, units, vals)}
a, b = raw(sys.argv[1]), raw(sys.argv[2])
want = re.compile(r"tma|bulk|async|xbar2l1tex|l1tex2xbar|dsmem|gpu__time_duration.sum|sm__cycles_elapsed.avg$|"
                  r"smsp__inst_executed.sum$|gmma_cycles_active|l1tex__throughput|lsu_wavefronts|sass__inst_executed_per_opcode")
for n in sorted(set(a) | set(b)):
    if want.search(n):
        ua, va = a.get(n, ("", "-"))
        vb = b.get(n, ("", "-"))[1]
        print(f"{n:<88} {ua:<10} rung4 {va:>16}  loop {vb:>16}")
PY
cat "$OUT/tma-lines-rung4.txt" "$OUT/tma-lines-loop.txt" | grep -E "^==|executed .*samples|kernel:" | tee -a "$S"
grep -vE "^\s*$" "$OUT/metrics-ab.txt" | grep -E "tma|bulk|async|xbar|time_duration|cycles_elapsed" | head -60 | tee -a "$S"
(cd "$L" && tar -I 'xz -T0' -cf "$OUT/ncu.tar.xz" ./*.ncu-rep csv ncu-*.log picked.txt 2>/dev/null)
ls -la "$OUT" | tee -a "$S"
echo "== end ($(left) s left)" | tee -a "$S"
