#!/usr/bin/env bash
# s9-lcet, for the lead's final call on the merged tree (builds nothing, ~40 s, its own timeouts): the lce rungs 3-4
# (the transposed body, kernels/lce/lce_body.cuh) correct and timed. Carry a folder with the merged tree's `lce` and
# `gpu_lce` (cmake --build build/default --target lce gpu_lce; strip both) and run from inside it:
#   cd build-final && bash ../scripts/device/s9-lcet-final.sh      (or LCE=path/to/lce GPU_LCE=path/to/gpu_lce)
# Success: "rung3 rc=0", "rung4 rc=0" (PASS lines), "gpu_lce rc=0" with "PASSED: 0 failure(s)", TIME lines for rungs
# 3-4 near 0.39 ms (s9-lcet call 2: 0.3917 / 0.3885), an INTERLEAVED line with 4/3 near 0.99-1.00, and "== end".
set -u
export WARPSTAGE_REQUIRE_GPU=1
L=${LCE:-./lce}
G=${GPU_LCE:-./gpu_lce}
if ldd "$L" | grep -q "not found"; then
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$L" > lce-t; chmod +x lce-t
for r in 3 4; do
    timeout 15 "$L" --check --rung $r > r$r.txt 2>&1; echo "rung$r rc=$?"; grep -E "^PASS|^FAIL" r$r.txt | head -2
done
timeout 60 "$G" ./lce-t --quick > g.txt 2>&1; echo "gpu_lce rc=$?"; grep -E "^FAIL|PASSED|FAILED" g.txt | head -4
for r in 3 4; do timeout 10 "$L" --time --rung $r --warmup 10 --iters 50 | grep TIME; done
timeout 10 "$L" --interleave 3,4 --warmup 5 --iters 30 | grep -E "INTERLEAVED|FAIL"
echo "== end"
