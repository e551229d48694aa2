#!/usr/bin/env bash
# s12-lce call 3: why variant 14 (split user tiles) did not gain -- rung 4 at the benchmark point recorded as the
# bundled sample records it (one traced launch, 8192 events per warp, no stall pass), once as built (variant 11) and
# once with LCE_TVAR=14; the files come back xz-compressed (read them with python3's sqlite3, docs/kernel-notes/lce.md).
# Build (Qt-free, the VM): ninja -C build/kchecks lce warpstage-record warpstage-inject; then into
#   /work/main/build-s12lce/bins.tar.xz: stripped lce, warpstage-record, libwarpstage-inject.so; plus lib.sh and this.
# Carry: ["build-s12lce"]. Command: cd build-s12lce && tar xJf bins.tar.xz && BUDGET=60 timeout 70 bash s12-lce-trace.sh
# Success prints two "record 11 / 14 rc=0 | ... MB" lines and "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s12-lce-trace "${BUDGET:-60}"
ws_cuda_env
for v in 11 14; do
    [ "$(left)" -ge 15 ] || { note "SKIP record $v: $(left) s left"; continue; }
    E=X=0
    [ $v = 14 ] && E=LCE_TVAR=14
    env $E timeout 25 ./warpstage-record --rungs lce:4 --lce-iters 2:3 --no-stalls --lce-program "$PWD/lce" \
        -o "$OUT/r$v.wstrace" > "$OUT/record-$v.log" 2>&1
    rc=$?
    [ -f "$OUT/r$v.wstrace" ] && xz -T8 -6 "$OUT/r$v.wstrace"
    note "record $v rc=$rc | $(ls -la "$OUT/r$v.wstrace.xz" 2>/dev/null | awk '{print $5}') bytes | $(tail -1 "$OUT/record-$v.log")"
done
echo "== end ($(left) s left)" | tee -a "$S"
