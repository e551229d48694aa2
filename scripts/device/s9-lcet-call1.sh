#!/usr/bin/env bash
# (HISTORY, s9-lcet call 1 as run on tree 36c800f: its V numbers are that tree's; since 4a67820 LCE_KERNEL is gone and
# variant 0 is {128-byte swizzle, read-ahead 7}, session 8's {64, 2} is variant 1: kernels/lce/lce_body.cuh.)
# s9-lcet, device call 1: the transposed rungs' epilogue variants (LCE_KERNEL=t LCE_TVAR=V, transposed_rung3.cu's
# kVarSwz / kVarKB / kVarDiag) side by side, correctness first. Builds nothing; ~3 minutes.
#   V: 0 as in session 8 (64-byte swizzle, 2 boxes of 32 N per half, read-ahead 2); 1 read-ahead 7; 2 128-byte
#   swizzle (one box of 64 N); 3 = 2 + read-ahead 7; diagnostics (output wrong): 4 no add in the consumers, 5 no U
#   load / no store by the epilogue warp, 6 both.
# Carry build-lcet with lce, gpu_lce and this script (scripts/device/); run: cd build-lcet && bash s9-lcet-call1.sh
# Success: "CHECK V=0..3 r3/r4 rc=0", "gpu_lce V=2 rc=0", TIME lines per variant (two rounds).
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
echo "== correctness (benchmark point and M=1 N=200 B=9 per-user 4)"
GOOD=""
for V in 0 1 2 3; do
    ok=1
    for r in 3 4; do
        LCE_KERNEL=t LCE_TVAR=$V timeout 30 $L --check --rung $r > c$V$r.txt 2>&1; rc=$?
        LCE_KERNEL=t LCE_TVAR=$V timeout 30 $L --check --rung $r --m 1 --n 200 --b 9 --per-user 4 >> c$V$r.txt 2>&1; rc2=$?
        echo "CHECK V=$V r$r rc=$rc/$rc2 $(grep -cE '^PASS' c$V$r.txt) PASS"; grep -E "^FAIL" c$V$r.txt | head -2
        [ $rc = 0 ] && [ $rc2 = 0 ] || ok=0
    done
    [ $ok = 1 ] && GOOD="$GOOD $V"
done
echo "good:$GOOD"
case " $GOOD " in *" 2 "*)
    LCE_KERNEL=t LCE_TVAR=2 timeout 100 ./gpu_lce ./lce-t > g2.txt 2>&1; echo "gpu_lce V=2 rc=$?"; grep -E "^FAIL|PASSED|FAILED" g2.txt | head -5;;
esac
echo "== timing (benchmark point, median of 50 after 10), two rounds"
for round in 1 2; do
    for V in 0 1 2 3 4 5 6; do
        case " $GOOD 4 5 6 " in *" $V "*) ;; *) continue;; esac
        for r in 3 4; do
            [ $V -ge 4 ] && [ $r = 4 ] && continue
            echo "R$round V=$V $(LCE_KERNEL=t LCE_TVAR=$V timeout 30 $L --time --rung $r --warmup 10 --iters 50 2>/dev/null | grep TIME)"
        done
    done
    echo "R$round tnone $(LCE_RUNG4_EPILOGUE=tnone timeout 30 $L --time --rung 4 --warmup 10 --iters 50 2>/dev/null | grep TIME)"
done
echo "== rung 4 at few candidates per user (B=1024), V=0 and 2, rung 3 beside"
for pu in 2 5; do for V in 0 2; do for r in 3 4; do
    echo "pu=$pu V=$V $(LCE_KERNEL=t LCE_TVAR=$V timeout 30 $L --time --rung $r --per-user $pu --warmup 5 --iters 20 2>/dev/null | grep TIME)"
done; done; done
echo "== interleaved 3,4 V=0 / V=2"
for V in 0 2; do echo "V=$V $(LCE_KERNEL=t LCE_TVAR=$V timeout 40 $L --interleave 3,4 --warmup 10 --iters 40 2>/dev/null | grep -E 'INTERLEAVED|FAIL')"; done
echo "== end"
