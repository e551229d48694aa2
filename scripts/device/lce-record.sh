#!/usr/bin/env bash
# The bundled lce recording (issue 11), in ONE call that builds nothing: `warpstage-record --rungs lce:all` at the
# benchmark point (M=433 N=256 K_user=1178 K_cand=866 B=1024, 70 candidates per user) into $OUT/lce-h200.wstrace,
# one program run per rung through the lce driver (3 warmup + 10 timed iterations each; rungs 3-4: their first
# launch traced per warp with 8,192 events per warp, and its stall samples). First gpu_lce_record checks the
# path at a small shape. Expected file size: 13-16 MB (rungs 3-4: ~6-7 MB per traced launch, session 5's
# device log; rungs 0-2 and the iterations: a few hundred launches, kilobytes).
# Make the carried folder here (a build with CUDA; the device copies the main checkout, not a worktree):
#   cmake --build build/default --target warpstage-record warpstage-inject lce gpu_lce_record
#   mkdir -p /work/main/build-lcefam/scripts/device
#   cp build/default/app/record/warpstage-record build/default/app/record/libwarpstage-inject.so \
#      build/default/kernels/lce/lce build/default/tests/recorder/gpu_lce_record /work/main/build-lcefam/
#   strip /work/main/build-lcefam/{warpstage-record,lce,gpu_lce_record}
#   cp scripts/device/lce-record.sh /work/main/build-lcefam/scripts/device/
#   run (carry build-lcefam):  cd build-lcefam && bash scripts/device/lce-record.sh 2>&1 | tee $OUT/lce-record.txt
# Success: "gpu_lce_record rc=0" (its last line "PASSED: 0 failure(s)"), "record rc=0" with "5 run(s) written",
# five lines "run N lce_<rung> complete ..." whose launches are a multiple of 13 iterations (rung 0: gatherConcat +
# the cuBLAS GEMM; rungs 1-2: user GEMM, candidate GEMM, addGathered; rung 3: cuBLAS user GEMM + lceEpilogueWarp;
# rung 4: 13 x lceUserFirst alone), traced = 1 and warps > 0 for rungs 3-4 (stalls=1), and "SIZE <bytes>" of 13-16 MB.
# (Since s9-lcet the kernels are the transposed body's, ws::lce::body::lceEpilogueWarp<3, 0> / lceUserFirst<3, 0>: the
# same names, so the same --kernels regexes; 132 CTAs of 12 warps walking ~32 units each as before, 14 k-steps per
# candidate unit as before, so the traced launch should be about as large -- not measured yet.) Then, on the lead's machine: `warpstage info lce-h200.wstrace`
# prints the roofline line of every rung (the numbers the LCE-NUMBER: tokens in resources/teaching/lce_*.md want).
set -u
export WARPSTAGE_REQUIRE_GPU=1
B=${B:-.}
if ldd "$B/lce" | grep -q "not found"; then  # no CUDA toolkit libraries: use the cuBLAS that PyTorch ships
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== gpu_lce_record (small shape, every rung)"
timeout 300 "$B/gpu_lce_record" "$B/warpstage-record" "$B/lce"
echo "gpu_lce_record rc=$?"
echo "== warpstage-record --rungs lce:all at the benchmark point"
F=${OUT:-/tmp}/lce-h200.wstrace
rm -f "$F"
timeout 420 "$B/warpstage-record" --rungs lce:all --lce-iters 3:10 --lce-program "$B/lce" -o "$F"
echo "record rc=$?"
echo "SIZE $(stat -c %s "$F" 2>/dev/null || echo missing)"
python3 - "$F" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for rid, variant, status, stalls, notes in db.execute("select id, variant, status, has_stalls, notes from runs order by id"):
    n, traced = db.execute("select count(*), sum(traced) from kernels where run_id=? and name not like '%fillUniform%' "
                           "and name not like '%padCopy%' and name not like '%concatRows%'", (rid,)).fetchone()
    iv = db.execute("select count(*) from warps w join kernels k on w.kernel_id=k.id where k.run_id=?", (rid,)).fetchone()[0]
    names = [r[0][:60] for r in db.execute("select distinct name from kernels where run_id=? and name not like '%fillUniform%' "
                                           "and name not like '%padCopy%' and name not like '%concatRows%'", (rid,))]
    print(f"run {rid} {variant} {status} stalls={stalls} launches={n} traced={traced} warps={iv}")
    print(f"   kernels: {names}")
    print(f"   notes: {notes[:300]}")
PY
