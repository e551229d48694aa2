#!/usr/bin/env bash
# s10-lcestall (issue 11): lce rungs 3-4 recorded through the PROGRAM path with the stall pass; their stall samples
# must now carry role and stage (kernels/decode/program_stages.cpp: the stage map from the sources stored with the run,
# the roles from the run's traced launch). Prints each run's role/stage table and its "stage mapping:" note, then runs
# gpu_lce_record (small shape, all rungs: >= 90% of rungs 3-4's samples staged) with what is left of the budget.
# Builds nothing. <= 60 s (BUDGET). The carried folder B (default build-lcestall, this script's ../..) holds:
#   lce, warpstage-record, libwarpstage-inject.so, gpu_lce_record (stripped), and src/: the kernel sources the binaries
#   were built from (their line info names /work/main/build/kchecks/../../kernels/... or /work/wt-lcestall/...; the
#   script points WARPSTAGE_SOURCE_DIR at a folder that maps those paths to src/, so the recorder stores the texts the
#   lines refer to). To make it:
#     cmake -S . -B build/kchecks -G Ninja -DWARPSTAGE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release
#     cmake --build build/kchecks --target lce warpstage-record warpstage-inject gpu_lce_record
#     B=/work/main/build-lcestall; mkdir -p $B/scripts/device $B/src/kernels/src
#     cp build/kchecks/kernels/lce/lce build/kchecks/app/record/warpstage-record \
#        build/kchecks/app/record/libwarpstage-inject.so build/kchecks/tests/recorder/gpu_lce_record $B/
#     strip $B/lce $B/warpstage-record $B/libwarpstage-inject.so $B/gpu_lce_record
#     cp -r kernels/lce kernels/include $B/src/kernels/ && cp -r kernels/src/common kernels/src/*.cuh $B/src/kernels/src/
#     cp scripts/device/s10-lcestall.sh scripts/device/lib.sh $B/scripts/device/
#   run (carry build-lcestall):  bash build-lcestall/scripts/device/s10-lcestall.sh 2>&1 | tee $OUT/lcestall.txt
# Success: "PASS record34", then for runs lce_fused_epilogue and lce_persistent a table whose largest rows are
# consumer/wait_data, consumer/mma_wait, consumer/mma_issue, producer/wait_slot, "staged NN.N%" with NN >= 90, and
# "OK stages"; "PASS gpu_lce_record" (or "SKIP gpu_lce_record: out of time").
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
B=${B:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
ws_begin s10-lcestall 60
ws_cuda_env
if ldd "$B/lce" | grep -q "not found"; then  # no CUDA toolkit libraries: use the cuBLAS that PyTorch ships
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
# The line info's paths are those of the build (ccache: objects may come from another checkout's build): absolute
# /work/<checkout>/build/kchecks/../../kernels/... or /work/<checkout>/kernels/..., and relative ../../kernels/...;
# findSource tries DIR/<path without its leading / or ../> for each --source-dir / WARPSTAGE_SOURCE_DIR. So SRC maps
# work/main, work/wt-lcestall (with a real build/kchecks for the "..") and kernels to the carried src/.
SRC=$(mktemp -d /tmp/lcestall-src.XXXX)
# plus every /work/<checkout>/ the binaries name (ccache hands out objects compiled in another worktree: 03:08 UTC the
# merged lce named /work/wt-lcespeed/... and nothing was staged)
for c in $( (echo main; echo wt-lcestall; grep -aoh '/work/[A-Za-z0-9_.-]*/' "$B/lce" "$B/gpu_lce_record" 2>/dev/null | cut -d/ -f3) | sort -u); do
    mkdir -p "$SRC/work/$c/build/kchecks" && ln -s "$B/src/kernels" "$SRC/work/$c/kernels"
done
ln -s "$B/src/kernels" "$SRC/kernels"
export WARPSTAGE_SOURCE_DIR=$SRC WARPSTAGE_INJECT_LIB=$B/libwarpstage-inject.so
note "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
step record34 45 "." "$B/warpstage-record" --rungs lce:3,lce:4 --lce-program "$B/lce" --lce-iters 1:2 \
    -o "$OUT/lce34.wstrace"
tail -5 "$L/record34.log"
python3 - "$OUT/lce34.wstrace" <<'PY' | tee -a "$S"
import os, sqlite3, sys
if not os.path.isfile(sys.argv[1]):
    print("FAIL stages: no file", sys.argv[1]); sys.exit(0)
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
ok = True
try:
    runs = c.execute("select id, variant, notes from runs order by id").fetchall()
except sqlite3.Error as e:
    print("FAIL stages: cannot read", sys.argv[1], e); sys.exit(0)
if not runs: ok = False
for rid, variant, notes in runs:
    rows = c.execute("""select s.role, s.stage, sum(s.count) from stall_samples s join kernels k on k.id = s.kernel_id
                        where k.run_id = ? group by 1, 2 order by 3 desc""", (rid,)).fetchall()
    total = sum(r[2] for r in rows)
    staged = sum(r[2] for r in rows if r[1])
    print(f"run {rid} {variant}: {total} stall samples")
    for role, stage, n in rows:
        print(f"  {role + '/' + (stage or '(none)'):28s} {n:8d} {100.0 * n / max(total, 1):5.1f}%")
    pct = 100.0 * staged / max(total, 1)
    print(f"  staged {pct:.1f}%")
    for part in notes.split("; "):
        if part.startswith("stage mapping"): print("  note:", part)
    ok = ok and total > 0 and pct >= 90
print("OK stages" if ok else "FAIL stages")
PY
step gpu_lce_record 40 "PASSED" "$B/gpu_lce_record" "$B/warpstage-record" "$B/lce"
grep -E "^  [a-z]+/|^FAIL|PASSED|FAILED" "$L/gpu_lce_record.log" 2>/dev/null | head -40
rm -rf "$SRC"
note "s10-lcestall: done in $((SECONDS - T0)) s (budget $BUDGET s)"
