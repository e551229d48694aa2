#!/usr/bin/env bash
# Builds (on the dev machine, not the device) the binaries scripts/device/s10-tracecost.sh runs: base (this tree's
# defaults: main's kernels) and one variant per compile-time switch of pingpong_body.cuh, each variant's
# pingpong.cu / streamk.cu objects put into a COPY of the base archive by hand and the executables relinked by hand
# (session 9's lesson: a ninja relink can silently take the default objects), then the binaries' hashes compared
# (every variant must differ from base, and from every other).
# Usage: scripts/device/s10-tracecost-build.sh KCHECKS_BUILD_DIR DEST
#   KCHECKS_BUILD_DIR: a Qt-free Release build of this tree with ladder_bench gpu_ladder_trace gpu_ladder_correctness
#   gpu_trace_relay built (cmake -S . -B build/kchecks -G Ninja -DWARPSTAGE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release)
# DEST gets <variant>/{ladder_bench,gpu_ladder_trace,gpu_ladder_correctness[,gpu_trace_relay]} (stripped), the device
# script and lib.sh, and bins.tar.xz (the variants packed: what the device call carries with the script).
set -euo pipefail
B=$(cd "$1" && pwd)
D=$2
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mkdir -p "$D"
D=$(cd "$D" && pwd)
declare -A FLAGS=(
    [lean]="-DWS_PP_TRACE_LEAN_START=1"
    [wcopy]="-DWS_PP_TRACE_LEAN_START=2"
    [rend]="-DWS_PP_TRACE_RELAY=2"
)
EXES="ladder_bench gpu_ladder_trace gpu_ladder_correctness gpu_trace_relay"
exe_path() { case $1 in ladder_bench) echo tests/bench/ladder_bench ;; *) echo "tests/kernels/$1" ;; esac; }
link() {  # link EXE ARCHIVE OUT: the build's own link command with the archive replaced
    local cmd
    cmd=$(cd "$B" && ninja -t commands "$(exe_path "$1")" | tail -1)
    cmd=${cmd//kernels\/src\/libwarpstage_ladder.a/$2}
    cmd=${cmd//-o $(exe_path "$1") /-o $3 }
    (cd "$B" && eval "$cmd")
}
compile() {  # compile FILE OUTDIR FLAGS: the build's own nvcc command for kernels/src/FILE.cu, plus FLAGS
    python3 - "$B/compile_commands.json" "$1" "$2/$1.cu.o" "$3" <<'PY' | (cd "$B" && bash)
import json, shlex, sys
db, f, out, extra = sys.argv[1:]
for e in json.load(open(db)):
    if e["file"].endswith("kernels/src/" + f + ".cu"):
        a = shlex.split(e["command"])
        a = [x for x in a if x != "ccache"]
        i = a.index("-o")
        a[i + 1] = out
        print(" ".join(shlex.quote(x) for x in a[:1] + shlex.split(extra) + a[1:]))
        break
PY
}
mkdir -p "$D/base"
for e in $EXES; do cp "$B/$(exe_path "$e")" "$D/base/$e"; done
for v in "${!FLAGS[@]}"; do
    mkdir -p "$D/$v/obj"
    compile pingpong "$D/$v/obj" "${FLAGS[$v]}" &
    compile streamk "$D/$v/obj" "${FLAGS[$v]}"
    wait
    cp "$B/kernels/src/libwarpstage_ladder.a" "$D/$v/obj/libwarpstage_ladder.a"
    ar rcs "$D/$v/obj/libwarpstage_ladder.a" "$D/$v/obj/pingpong.cu.o" "$D/$v/obj/streamk.cu.o"
    for e in $EXES; do link "$e" "$D/$v/obj/libwarpstage_ladder.a" "$D/$v/$e"; done
done
for v in base "${!FLAGS[@]}"; do for e in $EXES; do strip "$D/$v/$e"; done; done
echo "hashes (ladder_bench, gpu_ladder_trace; every variant must differ from base and from each other):"
for v in base "${!FLAGS[@]}"; do echo "  $v $(sha256sum "$D/$v/ladder_bench" | cut -c1-16) $(sha256sum "$D/$v/gpu_ladder_trace" | cut -c1-16)"; done
n=$(for v in base "${!FLAGS[@]}"; do sha256sum "$D/$v/ladder_bench" | cut -c1-64; done | sort -u | wc -l)
[ "$n" = $((${#FLAGS[@]} + 1)) ] || { echo "FAIL: two variants have the same ladder_bench" >&2; exit 1; }
cp "$SRC/scripts/device/s10-tracecost.sh" "$SRC/scripts/device/lib.sh" "$SRC/scripts/device/trace_overhead_table.py" "$D/"
(cd "$D" && tar -cJf bins.tar.xz $(for v in base "${!FLAGS[@]}"; do for e in $EXES; do echo "$v/$e"; done; done))
ls -la "$D/bins.tar.xz"
echo "OK built $(( ${#FLAGS[@]} + 1 )) builds into $D"
