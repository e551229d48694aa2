#!/usr/bin/env bash
# lce rungs 3-4 recorded as a user's program (per-warp timelines through <warpstage/trace.cuh>), for the lead after
# merging s6-lce4 (session 6): checks that both rungs still record and that the lanes carry the right roles --
# warps 4-7 "consumer WG0", 8-11 "consumer WG1" (session 5 showed WG0..WG7), warp 1 "epilogue", warp 0 "producer".
# Carry a folder B (default build-lce) holding: lce, warpstage-record, libwarpstage-inject.so (stripped is fine):
#   cmake --build build/default --target lce warpstage-record warpstage-inject
#   B=/work/main/build-lce; mkdir -p $B/scripts/device && cp build/default/kernels/lce/lce \
#     build/default/app/record/warpstage-record build/default/app/record/libwarpstage-inject.so $B/ \
#     && cp scripts/device/lce-record-check.sh $B/scripts/device/
#   run (carry build-lce):  cd build-lce && bash scripts/device/lce-record-check.sh 2>&1 | tee $OUT/rec.txt
# Success: "rung 3 record rc=0", "rung 4 record rc=0", a PASS line from lce in each, and for each rung the line
# "roles OK" (the role names per warp index of CTA 0 as listed above).
set -u
if ldd ./lce | grep -q "not found"; then  # no CUDA toolkit libraries: use the cuBLAS that PyTorch ships
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
for r in 3 4; do
    WARPSTAGE_INJECT_LIB=$PWD/libwarpstage-inject.so timeout 120 ./warpstage-record --no-stalls \
        --kernels 'lce(EpilogueWarp|UserFirst)' --launch-range 0:0 --trace-events 8192 -o /tmp/lce-rung$r.wstrace \
        -- ./lce --rung $r --check > /tmp/lce-rec$r.log 2>&1
    echo "rung $r record rc=$?"; grep -E "PASS|FAIL" /tmp/lce-rec$r.log
    python3 - /tmp/lce-rung$r.wstrace <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
k = c.execute("select min(kernel_id) from warps").fetchone()[0]
cta = c.execute("select min(cta_id) from warps where kernel_id = ?", (k,)).fetchone()[0]
rows = c.execute("select warp_index, role_name from warps where kernel_id = ? and cta_id = ? order by warp_index",
                 (k, cta)).fetchall()
print("  CTA", cta, "of launch", k, ":", rows)
want = {0: "producer", 1: "epilogue", **{w: "consumer WG0" for w in range(4, 8)}, **{w: "consumer WG1" for w in range(8, 12)}}
got = dict(rows)
print("  roles OK" if all(got.get(w) == n for w, n in want.items()) else "  roles WRONG")
PY
done
