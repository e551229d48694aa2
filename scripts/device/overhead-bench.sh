#!/usr/bin/env bash
# Device call: recording overhead of `warpstage-record --no-stalls` on real PyTorch programs (issue 9), side by
# side in one call, alternating which of the pair runs first (ABBA) so that warm-up drift does not favour one side.
#   carry ["build-dev"] with stripped warpstage-record + libwarpstage-inject.so (see program-checks.sh)
#   run:  bash scripts/device/overhead-bench.sh [MLP_PAIRS] [BLOCK_PAIRS]
# Prints one line per pair: BENCH <program> <pair> off=<loop s> on=<loop s> ratio wall_off wall_on (ms), then
# a trial recording of `transformer_block.py sample` with its row counts.
set -u
OUT=${OUT:-/tmp/ws-out}; mkdir -p "$OUT/logs"
B=build-dev; P=tests/recorder/programs; T=/tmp/wsbench; mkdir -p $T
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export WARPSTAGE_INJECT_LIB=$PWD/$B/libwarpstage-inject.so
R=$B/warpstage-record
MLP_PAIRS=${1:-6}; BLOCK_PAIRS=${2:-10}
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader)"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
one() {  # one <tag> <log> <cmd...>: runs, prints wall ms
    local tag=$1 log=$2; shift 2
    local t0=$(date +%s%N); timeout 120 "$@" >$log 2>$log.err; local rc=$?
    echo "$(( ($(date +%s%N) - t0) / 1000000 )) $rc"
}
pairs() {  # pairs <name> <n> <program args...>
    local name=$1 n=$2; shift 2
    for i in $(seq 1 $n); do
        local off on
        if (( i % 2 )); then
            off=$(one off $OUT/logs/${name}_off_$i.log python3 "$@")
            on=$(one on $OUT/logs/${name}_on_$i.log $R --no-stalls -o $T/${name}_$i.ws -- python3 "$@")
        else
            on=$(one on $OUT/logs/${name}_on_$i.log $R --no-stalls -o $T/${name}_$i.ws -- python3 "$@")
            off=$(one off $OUT/logs/${name}_off_$i.log python3 "$@")
        fi
        lo=$(sed -n 's/BENCH loop_s=\([0-9.]*\).*/\1/p' $OUT/logs/${name}_off_$i.log)
        ln=$(sed -n 's/BENCH loop_s=\([0-9.]*\).*/\1/p' $OUT/logs/${name}_on_$i.log)
        echo "BENCH $name $i first=$( (( i % 2 )) && echo off || echo on) off=$lo on=$ln ratio=$(python3 -c "print(f'{$ln/$lo:.3f}')" 2>/dev/null) wall_off=${off% *}ms wall_on=${on% *}ms rc_on=${on#* }"
        rm -f $T/${name}_$i.ws
    done
}
pairs block $BLOCK_PAIRS $P/transformer_block.py bench 50
pairs mlp $MLP_PAIRS $P/torch_compare.py bench
echo "== trial recording of the sample program"
t0=$(date +%s%N); $R --no-stalls -o $T/sample.wstrace -- python3 $P/transformer_block.py sample > $OUT/logs/sample.log 2>&1; echo "record rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms"
tail -5 $OUT/logs/sample.log
ls -la $T/sample.wstrace
python3 - $T/sample.wstrace <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); q = lambda s: c.execute(s).fetchall()
print("schema", q("pragma user_version"), "runs", q("select id, kind, status, pid from runs"))
for t in ("kernels", "api_spans", "nvtx_ranges", "memops", "streams"):
    try: print(t, q(f"select count(*) from {t}")[0][0])
    except Exception as e: print(t, e)
print(q("select name, count(*), sum(end_ns-start_ns) from kernels group by name order by 3 desc limit 12"))
print(q("select name, count(*) from nvtx_ranges group by name"))
PY
tar -C $OUT -czf $OUT/logs.tar.gz logs && rm -rf $OUT/logs
echo "done $(date -u +%FT%TZ)"
