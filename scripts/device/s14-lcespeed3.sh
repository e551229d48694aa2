#!/usr/bin/env bash
# s14-lcespeed call 3: is lce rung 4's main loop L2-bound? (the brief's question before any cluster-of-4 work; the
# notes argue "no" from s8's noload probe). ncu (clocks not locked) on ONE launch each at the benchmark point of
#   a) rung 4 as built (variant 15), b) the transposed main loop alone with 4 stages (LCE_RUNG4_EPILOGUE=tnone4:
#   no epilogue, output wrong), sections SpeedOfLight + MemoryWorkloadAnalysis + ComputeWorkloadAnalysis, and the
#   tensor-pipe / L2 / shared-memory metrics whose names `ncu --query-metrics` lists on this machine.
# Build: none (main's lce: the kernels are main's). D=/work/main/build-s14-lcespeed; strip a copy of
#   /work/main/build/kchecks/kernels/lce/lce into $D/bins.tar.xz; lib.sh and this script beside it.
# Carry: ["build-s14-lcespeed"]. Command: cd build-s14-lcespeed && tar xJf bins.tar.xz && BUDGET=60 timeout 70 bash s14-lcespeed3.sh
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s14-lcespeed3 "${BUDGET:-60}"
ws_cuda_env
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { note "no ncu"; exit 1; }
note "env: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>&1 | head -1); $("$NCU" --version | tail -1)"
note "rung 4 alone: $(timeout 10 ./lce --time --rung 4 --warmup 10 --iters 30 2>&1 | grep -E 'TIME|FAIL')"
note "loop alone: $(LCE_RUNG4_EPILOGUE=tnone4 timeout 10 ./lce --time --rung 4 --warmup 10 --iters 30 2>&1 | grep -E 'TIME|FAIL')"
timeout 15 "$NCU" --query-metrics > "$L/metrics.txt" 2>&1
MET=$(grep -oE '^(sm__pipe_tensor_op_gmma_cycles_active|sm__pipe_tensor_op_hmma_cycles_active|sm__inst_executed_pipe_tensor_op_gmma|lts__t_sectors_srcunit_tex_op_read|lts__t_bytes|l1tex__data_pipe_lsu_wavefronts_mem_shared|smsp__cycles_active|l1tex__m_xbar2l1tex_read_bytes|lts__d_sectors_fill_sysmem|dram__bytes_read|dram__bytes_write)\b' "$L/metrics.txt" | sort -u)
note "metrics found: $(echo $MET | tr '\n' ' ')"
M=""
for m in $MET; do
    case $m in
    sm__pipe_tensor*) M="$M,$m.avg.pct_of_peak_sustained_active" ;;
    lts__t_bytes|l1tex__m_xbar2l1tex_read_bytes|dram__bytes_read|dram__bytes_write) M="$M,$m.sum,$m.sum.per_second" ;;
    lts__t_sectors_srcunit_tex_op_read) M="$M,$m.sum" ;;
    l1tex__data_pipe_lsu_wavefronts_mem_shared) M="$M,$m.sum,$m.avg.pct_of_peak_sustained_elapsed" ;;
    *) M="$M,$m.sum" ;;
    esac
done
M="${M#,},gpu__time_duration.sum,lts__t_sectors.avg.pct_of_peak_sustained_elapsed"
for c in rung4 loop; do
    [ "$(left)" -ge 10 ] || { note "SKIP $c: $(left) s left"; continue; }
    E=X=0
    [ $c = loop ] && E=LCE_RUNG4_EPILOGUE=tnone4
    env $E timeout 25 "$NCU" --clock-control none -k regex:'lceUserFirst|lceTransposedProbe' --launch-skip 1 -c 1 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --metrics "$M" \
        ./lce --time --rung 4 --warmup 3 --iters 1 > "$OUT/ncu-$c.txt" 2>&1
    note "ncu $c rc=$?"
    grep -E "Throughput|Busy|Bandwidth|Hit Rate|Duration|pct_of_peak|per_second|\.sum |==ERR|==WARN" "$OUT/ncu-$c.txt" \
        | grep -vE "^\s*$" | head -40 | sed 's/^/  /' | tee -a "$S"
done
echo "== end ($(left) s left)" | tee -a "$S"
