#!/bin/bash
# Runs every injection-probe experiment on the device machine, each in its own process under `timeout 60`.
# From the repo root, after build.sh here: [ONLY="n1 t3 ..."] bash kernels/recorder/tools/inject_probe/run_all.sh [OUTDIR]
# Sinks go to /tmp/wsprobe/<experiment>/<pid>.txt; OUTDIR gets logs.tar.gz, small sink tarballs and summary.txt
# (at most 8 files come back from the device machine). Each run's key facts are also printed as it ends.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
B=$root/build-probe
LIB=$B/libwsinject.so
APP=$B/nvtx_app
PY="python3 $here/torch_probe.py"
out=${1:-${OUT:-/tmp/wsprobe-out}}
S=/tmp/wsprobe
rm -rf "$S" /tmp/wsprobe-logs; mkdir -p "$S" "$out/logs"
export PYTHONUNBUFFERED=1

# run NAME ENV... -- CMD...   (injection environment is added here)
run() {
    local name=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    mkdir -p "$S/$name"
    local t0=$(date +%s%N)
    local inj=(CUDA_INJECTION64_PATH="$LIB")
    [ -n "$NOINJ" ] && inj=()
    env -u CUDA_INJECTION64_PATH -u NVTX_INJECTION64_PATH "${inj[@]}" WARPSTAGE_SINK="$S/$name" "${envs[@]}" timeout ${TMO:-60} "$@" >"$out/logs/$name.log" 2>&1
    local rc=$?
    local t1=$(date +%s%N)
    echo "RC $rc WALL_MS $(( (t1 - t0) / 1000000 ))" >>"$out/logs/$name.log"
    echo "== $name rc=$rc $(( (t1 - t0) / 1000000 )) ms"
    grep -E "^(BENCH|CHILD|MAPS|TORCH|subprocess|spawn)" "$out/logs/$name.log" | sed 's/^/   /'
    echo "   sink files: $(ls "$S/$name" | wc -l), lines by type: $(cat "$S/$name"/*.txt 2>/dev/null | cut -d' ' -f1 | sort | uniq -c | tr -s ' \n' ' ')"
    for f in "$S/$name"/*.txt; do [ -f "$f" ] && awk '/^I cuda_init/ {split($3, a, "="); t0 = a[2]} /^H / {printf "   pid %s ppid %s %s:", $2, $3, $4}
        /^B / {printf " buf@%.0fms:%s", ($2 - t0) / 1e6, $3} /^E / {printf " %s", $2} /^M / {m++} /^N / {n++}
        END {printf " markers=%d own_nvtx=%d\n", m, n}' "$f"; done
}
# ONLY="n1 t3 ..." runs just those groups (prefixes n0 n1 n2 n5 n6 t3 t4 t7); default: all
want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }

echo "== info"
{
    nvidia-smi -L; date -u
    ldconfig -p | grep -i -E "cupti|nvtoolsext|nvtx"
    python3 -c "import torch, os; print('torch', torch.__version__, os.path.dirname(torch.__file__))"
    tl=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
    echo "ldd libtorch_cuda.so (nvtx/cupti):"; ldd "$tl/libtorch_cuda.so" | grep -i -E "nvtx|nvtoolsext|cupti"
    echo "torch libs containing NVTX_INJECTION64_PATH (i.e. an nvtx3 loader inside):"
    for f in "$tl"/*.so*; do c=$(grep -c -a NVTX_INJECTION64_PATH "$f"); [ "$c" != 0 ] && echo "  $(basename "$f")"; done
    sp=$(dirname "$(dirname "$tl")")
    echo "copies of libcupti / libnvToolsExt:"; find /usr /opt "$sp" -name 'libcupti.so*' -o -name 'libnvToolsExt*' 2>/dev/null | grep -v "\.a$"
} >"$out/logs/info.log" 2>&1
cat "$out/logs/info.log"

# --- 1: CUPTI markers, NVTX_INJECTION64_PATH = libcupti
run n0_nonvtx -- "$APP" basic   # always: tells which libcupti the injection binds to
CUPTI_LIB=$(sed -n 's/^I cupti_path=//p' "$S"/n0_nonvtx/*.txt | head -1)
echo "loaded libcupti: $CUPTI_LIB"
mkdir -p /tmp/cupticopy && cp "$CUPTI_LIB" /tmp/cupticopy/libcupti.so.13
if want n1; then
run n1_cupti_late NVTX_INJECTION64_PATH="$CUPTI_LIB" -- "$APP" basic
run n1_cupti_early NVTX_INJECTION64_PATH="$CUPTI_LIB" -- "$APP" basic early
run n1_copy_late NVTX_INJECTION64_PATH=/tmp/cupticopy/libcupti.so.13 -- "$APP" basic
run n1_copy_early NVTX_INJECTION64_PATH=/tmp/cupticopy/libcupti.so.13 -- "$APP" basic early
fi
if want n2; then
# --- 2: our own NVTX injection (and our lib forwarding NVTX to the libcupti it is bound to)
run n2_own_early NVTX_INJECTION64_PATH="$LIB" WS_NVTX=own -- "$APP" basic early
run n2_own_late NVTX_INJECTION64_PATH="$LIB" WS_NVTX=own -- "$APP" basic
run n2_fwd_early NVTX_INJECTION64_PATH="$LIB" WS_NVTX=cupti -- "$APP" basic early
fi
if want n6; then
# --- 6: API records and graphs
run n6_graph WS_DRIVER=1 -- "$APP" graph
run n6_graphtrace WS_GRAPH_TRACE=1 -- "$APP" graph
fi
if want n5; then
# --- 5: streaming and crash safety (32 MiB buffers, so only flushes complete them early)
for f in period:1000 thread:1000; do
    tag=${f%%:*}
    run n5_${tag}_return WS_FLUSH=$f WS_BUF_KB=32768 NVTX_INJECTION64_PATH="$LIB" -- "$APP" loop 2.5 return
    run n5_${tag}_exit WS_FLUSH=$f WS_BUF_KB=32768 NVTX_INJECTION64_PATH="$LIB" -- "$APP" loop 2.5 exit
    run n5_${tag}_abort WS_FLUSH=$f WS_BUF_KB=32768 NVTX_INJECTION64_PATH="$LIB" -- "$APP" loop 2.5 abort
    TMO="-s KILL 1.5" run n5_${tag}_kill WS_FLUSH=$f WS_BUF_KB=32768 NVTX_INJECTION64_PATH="$LIB" -- "$APP" loop 10 return
done
TMO="-s KILL 1.5" run n5_none_kill WS_FLUSH=none WS_BUF_KB=32768 NVTX_INJECTION64_PATH="$LIB" -- "$APP" loop 10 return
fi

# --- 3: PyTorch NVTX
if want t3; then
run t3_own NVTX_INJECTION64_PATH="$LIB" WS_NVTX=own -- $PY nvtx
TORCH_CUPTI=$(sed -n 's/^I cupti_path=//p' "$S"/t3_own/*.txt | head -1)
echo "libcupti bound in python: $TORCH_CUPTI"
run t3_fwd NVTX_INJECTION64_PATH="$LIB" WS_NVTX=cupti -- $PY nvtx
run t3_cupti_native NVTX_INJECTION64_PATH="$CUPTI_LIB" -- $PY nvtx
[ "$TORCH_CUPTI" != "$CUPTI_LIB" ] && run t3_cupti_bound NVTX_INJECTION64_PATH="$TORCH_CUPTI" -- $PY nvtx
V2=$(find /usr /opt -name 'libnvToolsExt.so*' 2>/dev/null | head -1)
if [ -n "$V2" ]; then
    run t3_v2 NVTX_INJECTION64_PATH="$LIB" WS_NVTX=own -- python3 -c "import ctypes; l=ctypes.CDLL('$V2'); l.nvtxRangePushA(b'v2-range'); l.nvtxMarkA(b'v2-mark'); l.nvtxRangePop()"
else
    echo "== t3_v2 skipped: no libnvToolsExt on this machine"
fi
fi
# --- 4: children
want t4 && run t4_children NVTX_INJECTION64_PATH="$LIB" -- $PY children
# --- 7: overhead, alternating
want t7 && for r in 1 2 3; do
    NOINJ=1 run t7_off_$r -- $PY bench
    run t7_on_$r NVTX_INJECTION64_PATH="$LIB" WS_NVTX=own -- $PY bench
done

# small files back first (at most 8 files come back), the analysis last and bounded
tar -C "$out" -czf "$out/logs.tar.gz" logs && mv "$out/logs" /tmp/wsprobe-logs
tar -C /tmp -czf "$out/sinks_small.tar.gz" --exclude='n5_*' wsprobe 2>/dev/null
for f in "$S"/n5_*/*.txt; do [ -f "$f" ] && grep -v "^[KR] " "$f" >"$f.nokr"; done
(cd /tmp && tar -czf "$out/sinks_n5_noKR.tar.gz" wsprobe/n5_*/*.nokr) 2>/dev/null
timeout 90 python3 "$here/analyze.py" "$S" "$S/../wsprobe-logs" | tee "$out/summary.txt"
ls -la "$out"
