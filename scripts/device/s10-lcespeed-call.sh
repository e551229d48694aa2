#!/usr/bin/env bash
# (HISTORY, as run on tree 4b02f8a, 2026-12-01 ~02:19 UTC: variants 7-12 below exist only in that commit; since
# 44dfe5e variants 7-8 are s10-lcespeed-call2.sh's (a shared staging half), so on a later tree VARS must name what
# kVariant holds then. The numbers: docs/benchmarks.md, "s10-lcespeed".)
# s10-lcespeed, its one device call (issue 11: lce rungs 3-4's epilogue): correctness of the new kernel variants, an
# ncu count of rung 3's shared-memory bank conflicts, and the variants timed against the rungs in ONE process each
# (`LCE_TVAR_B=V lce --interleave R,R`: rung R as built vs rung R with variant V, pairs alternating), beside rungs
# 3-4 and the PyTorch forms of the same run. Builds nothing; ~140 s (BUDGET), every step under its own timeout.
# Variants (kernels/lce/lce_body.cuh, kVariant; all meant to be correct):
#   7  hand-off per warp: every thread fence.proxy.async, __syncwarp, lane 0 arrives (stFull expects 4)
#   8  hand-off by a named barrier of the warpgroup after every thread's fence, thread 0 arrives (expects 1)
#   9  the named barrier first, then thread 0 alone fences and arrives (a timing diagnostic: see epilogue_warp.cuh)
#   10 the last k-step as two n112 commit groups; columns 0-111 added while 112-223 still run on the tensor cores
#   11 = 10 + hand-off 7 (rung 4's instance has ptxas C7511: serialized wgmmas, expected slow)
#   12 = 10 with U read one ldmatrix ahead instead of 7
# Carry build-lcespeed (lce, gpu_lce, this script, lib.sh, torch_reference.py); run:
#   cd build-lcespeed && timeout 170 bash s10-lcespeed-call.sh
# Success: "CHECK V=.. rc=0/0 rc=0/0" per variant, "gpu_lce V=.. rc=0" (PASSED), an NCU block with the metrics,
# INTERLEAVED lines per variant and rung, TIME lines of rungs 3-4, TORCH lines and "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s10-lcespeed "${BUDGET:-140}"
ws_cuda_env
L=./lce
G=./gpu_lce
if ldd "$L" | grep -q "not found"; then  # no CUDA toolkit libraries: the cuBLAS that PyTorch ships
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
printf '#!/bin/sh\nexec timeout 30 %s "$@"\n' "$L" > lce-t
chmod +x lce-t
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
VARS=${VARS:-7 8 9 10 11 12}

echo "== correctness: rungs 3-4 --check at the benchmark point and at M=1 N=200 B=9 per-user 4 ($(left) s left)"
GOOD=""
for V in $VARS; do
    line="CHECK V=$V"
    ok=1
    for r in 3 4; do
        LCE_TVAR=$V timeout 20 $L --check --rung $r > c$V$r.txt 2>&1
        rc=$?
        LCE_TVAR=$V timeout 20 $L --check --rung $r --m 1 --n 200 --b 9 --per-user 4 >> c$V$r.txt 2>&1
        rc2=$?
        line="$line r$r rc=$rc/$rc2"
        [ $rc = 0 ] && [ $rc2 = 0 ] || { ok=0; grep -E "^FAIL" c$V$r.txt | head -2; }
    done
    echo "$line"
    [ $ok = 1 ] && GOOD="$GOOD $V"
done
echo "good:$GOOD"
echo "== timing: rungs 3-4 as built, median of 50 after 10 ($(left) s left)"
for r in 3 4; do timeout 15 $L --time --rung $r --warmup 10 --iters 50 2>/dev/null | grep TIME; done
echo "== each variant against the rung in one process (LCE_TVAR_B=V lce --interleave R,R; B = the variant)"
for round in 1; do
    for V in $GOOD; do for r in 3 4; do
        [ "$(left)" -lt 40 ] && break 3
        echo "R$round V=$V rung $r: $(LCE_TVAR_B=$V timeout 15 $L --interleave $r,$r --warmup 5 --iters 30 2>/dev/null |
            grep -E '^INTERLEAVED rung|FAIL')"
    done; done
done
echo "== ncu: rung 3 (variant 0) shared-memory stores and loads, one launch ($(left) s left)"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
    M=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
    M2=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
    M3=smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_shared_ld.sum,gpu__time_duration.sum
    timeout 25 "$NCU" --metrics "$M,$M2,$M3" -k regex:lceEpilogueWarp -c 1 $L --time --rung 3 --warmup 0 --iters 1 \
        > ncu.txt 2>&1
    rc=$?
    if [ $rc != 0 ] || ! grep -q "op_st.sum" ncu.txt; then
        echo "ncu (all metrics) rc=$rc: $(grep -iE "error|not found|invalid" ncu.txt | head -2)"
        timeout 20 "$NCU" --metrics "$M" -k regex:lceEpilogueWarp -c 1 $L --time --rung 3 --warmup 0 --iters 1 \
            > ncu.txt 2>&1
        echo "ncu (two metrics) rc=$?"
    fi
    grep -E "l1tex__|smsp__|gpu__time|==ERR|==WARN" ncu.txt | head -12
else
    echo "no ncu"
fi

echo "== gpu_lce --quick for the candidates ($(left) s left)"
for V in $GOOD; do
    case " 7 10 " in *" $V "*) ;; *) continue ;; esac
    [ "$(left)" -lt 55 ] && { echo "gpu_lce V=$V skipped ($(left) s left)"; continue; }
    LCE_TVAR=$V timeout 30 $G ./lce-t --quick > g$V.txt 2>&1
    echo "gpu_lce V=$V rc=$?"
    grep -E "^FAIL|PASSED|FAILED" g$V.txt | head -4
done

echo "== round 2 of the variants, if there is time ($(left) s left)"
for V in $GOOD; do for r in 3 4; do
    [ "$(left)" -lt 50 ] && break 2
    echo "R2 V=$V rung $r: $(LCE_TVAR_B=$V timeout 15 $L --interleave $r,$r --warmup 5 --iters 30 2>/dev/null |
        grep -E '^INTERLEAVED rung|FAIL')"
done; done
echo "== rung 4 vs rung 3 interleaved, as built and per variant 10 ($(left) s left)"
timeout 15 $L --interleave 3,4 --warmup 5 --iters 40 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL'
case " $GOOD " in *" 10 "*)
    echo "V=10 $(LCE_TVAR=10 timeout 15 $L --interleave 3,4 --warmup 5 --iters 40 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')" ;;
esac

echo "== PyTorch at the same point ($(left) s left)"
T=torch_reference.py
[ -f "$T" ] || T=scripts/lce/torch_reference.py
l=$(left)
if [ "$l" -ge 70 ]; then
    timeout $((l - 5)) python3 "$T" --compile-padded-only --compile-cap $((l - 25)) --iters 20 2>&1 | grep -E "^TORCH|^torch"
elif [ "$l" -ge 15 ]; then
    timeout $((l - 3)) python3 "$T" --no-compile --iters 20 2>&1 | grep -E "^TORCH|^torch"
fi
echo "== end ($(left) s left)"
