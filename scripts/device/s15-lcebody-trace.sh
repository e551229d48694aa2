#!/usr/bin/env bash
# s15-lcebody call 2: why configuration 28 (the next tile's first k-steps under a tile's epilogue) did not gain --
# rung 4 at the benchmark point recorded as the bundled sample is (one traced launch, --no-stalls), as built (15),
# with LCE_TVAR=28 and with LCE_TVAR=30 (the split wgmmas alone); per recording trace_first_round.py (CTAs 0 and 60,
# 14 tiles) and trace_window.py (CTA 0's producer, epilogue warp and consumer warps over two steady tile ends).
# (Run once on 2026-12-02.) Build (Qt-free, the VM): ninja -C build/kchecks lce warpstage-record warpstage-inject at commit 3f80347 (the
# configurations 26-30); into /work/main/build-s15-lcebody/bins2.tar.xz: stripped lce, warpstage-record,
# libwarpstage-inject.so; plus lib.sh, this script, scripts/lce/trace_first_round.py and trace_window.py.
# Carry: ["build-s15-lcebody"]. Command: cd build-s15-lcebody && tar xJf bins2.tar.xz && BUDGET=80 timeout 90 bash s15-lcebody-trace.sh
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s15-lcebody-trace "${BUDGET:-80}"
ws_cuda_env
for v in 15 28 30; do  # (the files that come back: the summary and one analysis file per recording)
    [ "$(left)" -ge 15 ] || { note "SKIP record $v: $(left) s left"; continue; }
    LCE_TVAR=$v timeout 25 ./warpstage-record --rungs lce:4 --lce-iters 2:3 --no-stalls --lce-program "$PWD/lce" \
        -o "$L/r$v.wstrace" > "$L/record-$v.log" 2>&1
    note "record $v rc=$? | $(ls -la "$L/r$v.wstrace" 2>/dev/null | awk '{print $5}') bytes | $(tail -1 "$L/record-$v.log")"
    timeout 20 python3 ./trace_first_round.py "$L/r$v.wstrace" --ctas 0,60 --tiles 14 > "$OUT/ana-$v.txt" 2>&1
    head -3 "$OUT/ana-$v.txt" | tail -2 | tee -a "$S"
    timeout 20 python3 ./trace_window.py "$L/r$v.wstrace" --cta 0 --from 55 --to 80 --warps 0,1,4,8 \
        >> "$OUT/ana-$v.txt" 2>&1
done
echo "== end ($(left) s left)" | tee -a "$S"
