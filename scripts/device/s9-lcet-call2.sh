#!/usr/bin/env bash
# (HISTORY, as run on tree 8b1efb1: variants 7 and 8 were removed in 0f4df64; LCE_TVAR=7/8 now runs the default.)
# s9-lcet, device call 2: the transposed kernels as rungs 3-4 (default V=0 = {128-byte swizzle, read-ahead 7}) and the
# candidate V=7 (warps 1-3 add U from L2; the consumers only stage fp16(acc)), correctness first. Builds nothing.
# Carry build-lcet with lce, gpu_lce and this script; run: cd build-lcet && bash s9-lcet-call2.sh
# Success: "CHECK V=7 ... rc=0/0", "gpu_lce V=0 rc=0" (PASSED), TIME lines, "lce: OK" after each sweep.
set -u
export WARPSTAGE_REQUIRE_GPU=1
L=./lce
if ldd "$L" | grep -q "not found"; then
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
printf '#!/bin/sh\nexec timeout 60 %s "$@"\n' "$L" > lce-t; chmod +x lce-t
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== correctness of V=7 (benchmark point; M=1 N=200 B=9 per-user 4; N=264 M=257 per-user 1000 B=64)"
ok7=1
for r in 3 4; do
    LCE_TVAR=7 timeout 30 $L --check --rung $r > c7$r.txt 2>&1; a=$?
    LCE_TVAR=7 timeout 30 $L --check --rung $r --m 1 --n 200 --b 9 --per-user 4 >> c7$r.txt 2>&1; b=$?
    LCE_TVAR=7 timeout 30 $L --check --rung $r --m 257 --n 264 --b 64 --per-user 1000 >> c7$r.txt 2>&1; c=$?
    echo "CHECK V=7 r$r rc=$a/$b/$c"; grep -E "^FAIL" c7$r.txt | head -3
    [ $a$b$c = 000 ] || ok7=0
done
echo "== gpu_lce V=0 (the rungs as now built)"
timeout 100 ./gpu_lce ./lce-t > g0.txt 2>&1; echo "gpu_lce V=0 rc=$?"; grep -E "^FAIL|PASSED|FAILED" g0.txt | head -5
echo "== timing (benchmark point, median of 50 after 10); rungs 0-2 once"
for r in 0 1 2; do timeout 30 $L --time --rung $r --warmup 10 --iters 50 | grep TIME; done
VS="0 1 7 8"; [ $ok7 = 1 ] || VS="0 1 8"
for round in 1; do
    for V in $VS; do for r in 3 4; do
        [ $V -ge 4 ] && [ $V != 7 ] && [ $r = 4 ] && continue
        echo "R$round V=$V $(LCE_TVAR=$V timeout 30 $L --time --rung $r --warmup 10 --iters 50 2>/dev/null | grep TIME)"
    done; done
done
echo "== interleaved 3,4"
for V in 0 $([ $ok7 = 1 ] && echo 7); do echo "V=$V $(LCE_TVAR=$V timeout 40 $L --interleave 3,4 --warmup 10 --iters 60 2>/dev/null | grep -E 'INTERLEAVED|FAIL')"; done
echo "== tracing cost V=0"
for r in 3 4; do echo "V=0 $(timeout 40 $L --trace-cost --rung $r --warmup 5 --iters 30 2>/dev/null | grep -E 'TRACECOST|FAIL')"; done
echo "== torch"
timeout 100 python3 torch_reference.py --compile-cap 45 --iters 20 2>&1 | grep -E "^TORCH|^torch"
for V in $([ $ok7 = 1 ] && echo 7) 0; do
    echo "== sweep V=$V (checked)"
    ( LCE_TVAR=$V timeout 100 $L --sweep --check --time --warmup 2 --iters 5 | grep -E "SWEEP|FAIL|lce:" )
done
echo "== end"
