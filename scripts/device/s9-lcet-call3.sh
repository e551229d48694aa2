#!/usr/bin/env bash
# (HISTORY, as run on tree 8b1efb1: variants 7 and 8 were removed in 0f4df64; LCE_TVAR=7/8 now runs the default.)
# s9-lcet, device call 3 (short, only if the machine is warm): variant 7 (warps 1-3 add U; the register split fixed
# after call 2's hang) -- correctness first (15 s caps), then timed beside V=0, interleaved per variant.
# Carry build-lcet; run: cd build-lcet && bash s9-lcet-call3.sh
set -u
L=./lce
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
ok=1
for r in 3 4; do
    LCE_TVAR=7 timeout 15 $L --check --rung $r > c7$r.txt 2>&1; a=$?
    LCE_TVAR=7 timeout 15 $L --check --rung $r --m 1 --n 200 --b 9 --per-user 4 >> c7$r.txt 2>&1; b=$?
    LCE_TVAR=7 timeout 15 $L --check --rung $r --m 257 --n 264 --b 64 --per-user 1000 >> c7$r.txt 2>&1; c=$?
    echo "CHECK V=7 r$r rc=$a/$b/$c"; grep -E "^FAIL" c7$r.txt | head -3
    [ $a$b$c = 000 ] || ok=0
done
[ $ok = 1 ] || { echo "V=7 not correct: no timing"; exit 0; }
for V in 0 7 8 0 7 8; do for r in 3 4; do
    [ $V = 8 ] && [ $r = 4 ] && continue
    echo "V=$V $(LCE_TVAR=$V timeout 15 $L --time --rung $r --warmup 10 --iters 50 2>/dev/null | grep TIME)"
done; done
for V in 0 7; do echo "V=$V $(LCE_TVAR=$V timeout 20 $L --interleave 3,4 --warmup 10 --iters 40 2>/dev/null | grep -E 'INTERLEAVED|FAIL')"; done
LCE_TVAR=7 timeout 20 $L --time --rung 4 --per-user 2 --warmup 5 --iters 20 | grep TIME
timeout 20 $L --time --rung 4 --per-user 2 --warmup 5 --iters 20 | grep TIME
echo "== end"
