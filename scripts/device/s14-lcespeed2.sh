#!/usr/bin/env bash
# s14-lcespeed call 2: after call 1 (held pieces 21-23 correct but 0.8-11 % SLOWER than the rung, 15), two things:
#   1. whether the in-loop adds lose because both consumer warpgroups add in the same k-step: 24 = 15 and 25 = 21
#      with warpgroup 1's in-loop adds 3 k-steps after warpgroup 0's (Variant::stagger) -- gpu_lce and the 24-point
#      checked sweep of each, memcheck of 25 at an odd shape; interleaved 15 vs 24 / 25 / 15 (noise) at the benchmark
#      point, the better one at 512/1000 and 3072/70;
#   2. where 21's time goes: rung 4 recorded at the benchmark point as the bundled sample is (one traced launch,
#      8192 events per warp, no stall pass) with 15 and with 21, each read on the device by
#      trace_first_round.py (the CTAs' ends; the phases of 14 tiles of CTAs 0 and 60).
# (Run twice on 2026-12-02; the variants it times were removed afterwards: build commit ed1deb2 to run it again.)
# Build (Qt-free Release, the VM): ninja -C build/kchecks lce gpu_lce warpstage-record warpstage-inject; then
#   D=/work/main/build-s14-lcespeed; stripped lce, gpu_lce, warpstage-record, libwarpstage-inject.so in $D/bins.tar.xz,
#   plus lib.sh, this script and scripts/lce/trace_first_round.py.
# Carry: ["build-s14-lcespeed"]. Command: cd build-s14-lcespeed && tar xJf bins.tar.xz && BUDGET=100 timeout 110 bash s14-lcespeed2.sh
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s14-lcespeed2 "${BUDGET:-100}"
ws_cuda_env
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
note "env: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
for V in 25 24; do
    LCE_TVAR=$V timeout 25 ./gpu_lce ./lce-t > "$OUT/gpu_lce-$V.txt" 2>&1
    note "gpu_lce/$V rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce-$V.txt" | tail -1)"
    LCE_TVAR=$V timeout 15 $P --sweep --check --rung 4 > "$L/sweep-r4-$V.txt" 2>&1
    note "sweep rung 4/$V rc=$? | $(grep -c PASS "$L/sweep-r4-$V.txt") PASS | $(grep -E 'lce:' "$L/sweep-r4-$V.txt" | tail -1)"
done
LCE_TVAR=25 timeout 15 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-cand 29 --b 150 \
    --per-user 7 --k-user 130 > "$OUT/memcheck-25.txt" 2>&1
note "memcheck rung 4/25 rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$OUT/memcheck-25.txt" | tail -2 | tr '\n' ' ')"
RATIO=9
inter() {  # inter LABEL VA VB POINT...: one interleaved line; RATIO = its B/A
    local label=$1 va=$2 vb=$3 line
    shift 3
    RATIO=9
    [ "$(left)" -ge 8 ] || { note "SKIP $label: $(left) s left"; return; }
    line=$(LCE_TVAR=$va LCE_TVAR_B=$vb timeout 9 $P --interleave 4,4 --warmup 3 --iters 40 "$@" 2>&1 \
        | grep -E '^INTERLEAVED rung|FAIL' | head -2 | tr '\n' ' ')
    RATIO=$(echo "$line" | sed -n 's/.*= \([0-9.]*\) .*/\1/p')
    RATIO=${RATIO:-9}
    note "I $label: $line"
}
inter "15 vs 24 benchmark point" 15 24
R24=$RATIO
inter "15 vs 25 benchmark point" 15 25
R25=$RATIO
inter "15 vs 15 benchmark point (noise)" 15 15
BEST=24
awk "BEGIN{exit !($R25 < $R24)}" && BEST=25
inter "15 vs $BEST 512/1000" 15 $BEST --b 512 --per-user 1000
inter "15 vs $BEST 3072/70" 15 $BEST --b 3072
for v in 15 21; do
    [ "$(left)" -ge 15 ] || { note "SKIP record $v: $(left) s left"; continue; }
    LCE_R4UF=$v timeout 25 ./warpstage-record --rungs lce:4 --lce-iters 2:3 --no-stalls --lce-program "$PWD/lce" \
        -o "$L/r$v.wstrace" > "$OUT/record-$v.log" 2>&1
    note "record $v rc=$? | $(ls -la "$L/r$v.wstrace" 2>/dev/null | awk '{print $5}') bytes | $(tail -1 "$OUT/record-$v.log")"
    timeout 20 python3 ./trace_first_round.py "$L/r$v.wstrace" --ctas 0,60 --tiles 14 > "$OUT/tiles-$v.txt" 2>&1
    note "tiles $v rc=$? | $(head -3 "$OUT/tiles-$v.txt" | tr '\n' ' ')"
done
echo "== end ($(left) s left)" | tee -a "$S"
