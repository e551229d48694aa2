#!/usr/bin/env bash
# s15-lceuntraced (issue 11): rungs 3-4's untraced launches run kernels compiled without trace code
# (lceEpilogueWarpUntraced / lceUserFirstUntraced, lce_body.cuh's Traced = false) against main's, where the untraced
# launch ran the traced kernel with no buffer attached.
#   1. correctness of the branch's build: gpu_lce; `lce --sweep --check`; tst_lce_capi --gpu;
#   2. A/B in ONE process: `LCE_TRACED_A=1 lce --interleave 4,4` (A: the traced kernels, no buffer -- machine code
#      byte-identical to main's kernels, scripts/kernels/cmp_cubin_functions.py; B: the untraced kernels), then 3,3;
#   3. A/B across processes: main's `lce --time --rung 4` and the branch's alternating ABAB (4 each), rung 3 ABBA;
#   4. `lce --trace-cost --rung 3|4` of the branch (now against the truly untraced kernels) and of main (the old way);
#   5. if rung 4 got faster and time is left: rung 4 through the branch's liblce_capi.so against PyTorch's eager form in
#      one torch process (torch_reference.py --vs-lce --no-compile; no compiled form: no time for inductor here).
# Carry build-s15-lceuntraced: bins.tar.xz (base/lce = main's build/kchecks lce, stripped; new/lce, new/gpu_lce,
#   new/liblce_capi.so, new/tst_lce_capi of the branch's Qt-free Release build, stripped), lib.sh, torch_reference.py,
#   this script. Run: cd build-s15-lceuntraced && tar xJf bins.tar.xz && BUDGET=66 timeout 70 bash s15-lceuntraced.sh
# Success: PASS on the three correctness steps, INTERLEAVED lines with INTERLEAVED_TRACED_A, TIME lines for base and
# new, TRACECOST lines, the table printed last ("== A/B").
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s15-lceuntraced 66
ws_cuda_env
export LD_LIBRARY_PATH=$PWD/new:$LD_LIBRARY_PATH  # liblce_capi.so for tst_lce_capi
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
B=./base/lce N=./new/lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$N" > lce-t && chmod +x lce-t

echo "== correctness ($(left) s left)"
step gpu_lce 25 "PASSED" ./new/gpu_lce ./lce-t
step sweep 20 "lce: OK" $N --sweep --check --warmup 1 --iters 2
step gpu_lce_capi 12 "gpu_lce_capi: 0 failed" ./new/tst_lce_capi --gpu

echo "== one process ($(left) s left)"
I4=$(LCE_TRACED_A=1 timeout 8 $N --interleave 4,4 --warmup 5 --iters 60 2>&1 | grep -E '^INTERLEAVED|FAIL')
note "I44: $I4"
I3=$(LCE_TRACED_A=1 timeout 8 $N --interleave 3,3 --warmup 5 --iters 40 2>&1 | grep -E '^INTERLEAVED|FAIL')
note "I33: $I3"

echo "== processes ABAB ($(left) s left)"
: > "$L/abab.txt"
for i in 1 2 3 4; do
    for who in base new; do
        bin=$B; [ $who = new ] && bin=$N
        t=$(timeout 6 $bin --time --rung 4 --warmup 10 --iters 30 2>&1 | grep -E '^TIME|FAIL')
        note "r4 $who $i: $t"
        echo "4 $who $(echo "$t" | grep -oE '[0-9.]+ ms' | head -1 | cut -d' ' -f1)" >> "$L/abab.txt"
    done
done
for who in base new new base; do
    bin=$B; [ $who = new ] && bin=$N
    t=$(timeout 6 $bin --time --rung 3 --warmup 10 --iters 30 2>&1 | grep -E '^TIME|FAIL')
    note "r3 $who: $t"
    echo "3 $who $(echo "$t" | grep -oE '[0-9.]+ ms' | head -1 | cut -d' ' -f1)" >> "$L/abab.txt"
done

echo "== tracing cost ($(left) s left)"
for r in 4 3; do
    note "new  $(timeout 8 $N --trace-cost --rung $r --warmup 5 --iters 30 2>&1 | grep -E 'TRACECOST|FAIL')"
done
note "base $(timeout 8 $B --trace-cost --rung 4 --warmup 5 --iters 30 2>&1 | grep -E 'TRACECOST|FAIL')"

echo "== A/B ($(left) s left)" | tee -a "$S"
note "one process (LCE_TRACED_A=1, A = traced kernels without a buffer = main's code, B = untraced kernels):"
note "  rung 4: $(echo "$I4" | grep '^INTERLEAVED rung')"
note "  rung 3: $(echo "$I3" | grep '^INTERLEAVED rung')"
med() { sort -n | awk '{a[NR] = $1} END {if (NR) printf "%.4f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for r in 4 3; do
    mb=$(awk -v r=$r '$1 == r && $2 == "base" && $3 != "" {print $3}' "$L/abab.txt" | med)
    mn=$(awk -v r=$r '$1 == r && $2 == "new" && $3 != "" {print $3}' "$L/abab.txt" | med)
    note "  processes rung $r: base $(awk -v r=$r '$1 == r && $2 == "base" {printf "%s ", $3}' "$L/abab.txt")-> median ${mb:-?}; new $(awk -v r=$r '$1 == r && $2 == "new" {printf "%s ", $3}' "$L/abab.txt")-> median ${mn:-?}; new/base $(awk -v a="${mb:-0}" -v b="${mn:-0}" 'BEGIN {if (a > 0) printf "%.4f", b / a; else print "?"}')"
done
faster=$(echo "$I4" | awk '/^INTERLEAVED rung/{print ($12 < 1.0) ? 1 : 0}')
if [ "${faster:-0}" = 1 ] && [ "$(left)" -ge 22 ] && [ -f torch_reference.py ]; then
    echo "== rung 4 vs PyTorch eager, one torch process ($(left) s left)"
    PYTHONUNBUFFERED=1 timeout "$(($(left) - 2))" python3 ./torch_reference.py --no-compile --iters 20 \
        --vs-lce ./new/liblce_capi.so --lce-rung 4 --pairs 50 --pair-warmup 10 > "$OUT/torch.txt" 2>&1
    note "torch: rc=$?"
    grep -E "^TORCH|^VSLCE|Error|error:" "$OUT/torch.txt" | tail -12 | tee -a "$S"
else
    note "SKIP torch: faster=${faster:-?}, $(left) s left"
fi
(cd "$L" && tar -czf "$OUT/logs.tar.gz" . 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
