#!/bin/bash
# s10-wispeed: the what-if re-predict on a quiet CPU (issue 13's <= 100 ms for every 1M-interval ladder kernel),
# session 10's secant rounds (fin) against main before them (base, cd2bdfb), interleaved in one call. CPU only: no
# GPU is used; the H200 host's cores are quiet where the 2-core VM is not. Carried: build-wispeed/ with
# wispeed.tar.xz (both whatif_bench binaries, stripped, and the bundled ladder-h200-4096.wstrace).
#   bash build-wispeed/s10-wispeed.sh      (or scripts/device/s10-wispeed.sh from the merged tree)
# Prints per kernel and binary the re-predict wall p50 / p95 and CPU p50 / p95 with the replay on 2 threads
# (WARPSTAGE_WHATIF_THREADS=2: the VM's two cores) and the load average. Success: every "fin" line's p95 <= 100 ms.
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s10-wispeed 60
PACK=$(dirname "${BASH_SOURCE[0]}")/wispeed.tar.xz
[ -f "$PACK" ] || PACK=build-wispeed/wispeed.tar.xz
[ -f "$PACK" ] || { note "FAIL s10-wispeed: no wispeed.tar.xz (carry build-wispeed/)"; exit 2; }
W=$(mktemp -d /tmp/s10-wispeed.XXXX)
tar -xJf "$PACK" -C "$W" || { note "FAIL s10-wispeed: cannot unpack $PACK"; exit 2; }
if ldd "$W/fin/whatif_bench" | grep -q "not found"; then
    note "FAIL s10-wispeed: missing libraries: $(ldd "$W/fin/whatif_bench" | grep 'not found' | tr '\n' ' ')"
    exit 2
fi
note "load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for pass in 1 2; do
    for b in base fin; do
        [ "$(left)" -lt 8 ] && { note "SKIP $b pass $pass: budget"; continue; }
        lim=$(( $(left) / 2 > 25 ? 25 : $(left) / 2 ))
        WARPSTAGE_WHATIF_THREADS=2 timeout -k 3 "$lim" "$W/$b/whatif_bench" 1200000 "$W/ladder-h200-4096.wstrace" 15 \
            >"$L/$b-$pass.log" 2>&1
        rc=$?
        sed -E 's/^(.{28}) +([0-9]+) intervals.*predict p50 +([0-9.]+) ms p95 +([0-9.]+) ms.*CPU p50 ([0-9.]+) p95 ([0-9.]+) ms.*/\1 wall p50 \3 p95 \4  CPU p50 \5 p95 \6/' \
            "$L/$b-$pass.log" | sed "s/^/$b pass $pass rc=$rc: /" | tee -a "$S"
    done
done
cp "$L"/*.log "$OUT"/ 2>/dev/null
note "done in $((SECONDS - T0)) s"
