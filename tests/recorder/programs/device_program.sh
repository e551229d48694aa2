#!/bin/bash
# Program recording on the GPU machine: warpstage-record -- PROGRAM end to end (native test app, crash,
# exit(3), --timeout, SIGKILL, children; PyTorch vs torch.profiler; recording overhead).
# Usage (repo root of the device checkout, binaries in B): bash device_program.sh B OUTDIR [steps...]
# B holds warpstage-record, libwarpstage-inject.so, warpstage-sink-dump, ws_testapp, torch_compare.py.
B=$(cd "$1" && pwd); OUT=${2:-/tmp/wsprog-out}; shift 2
STEPS=${*:-"basic crash exit3 hang kill children torch torchchildren bench"}
R=$B/warpstage-record; D=$B/warpstage-sink-dump; APP=$B/ws_testapp; PY="python3 $B/torch_compare.py"
T=/tmp/wsprog; rm -rf $T; mkdir -p $T $OUT/logs
export PYTHONUNBUFFERED=1
summary=$OUT/summary.txt; : >$summary
say() { echo "$*" | tee -a $summary; }
want() { [[ " $STEPS " == *" $1 "* ]]; }
# rec NAME TIMEOUT ARGS... : warpstage-record --keep-sinks -o $T/NAME.ws ARGS, then the dump of its sinks
rec() {
    local name=$1 tmo=$2; shift 2
    local t0=$(date +%s%N)
    timeout $tmo $R --keep-sinks -o $T/$name.ws "$@" >$OUT/logs/$name.out 2>$OUT/logs/$name.err
    local rc=$?
    local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    local sd=$(ls -d $T/.$name.ws.sinks-* 2>/dev/null | head -1)
    [ -n "$sd" ] && timeout 60 $D "$sd" >$OUT/logs/$name.dump.jsonl 2>&1
    local runs=$(python3 -c "import sqlite3,sys; c=sqlite3.connect('$T/$name.ws'); print(c.execute('select count(*) from runs').fetchone()[0], c.execute('select count(*) from kernels').fetchone()[0], c.execute('select status from runs').fetchall())" 2>&1 | tail -1)
    say "== $name rc=$rc ${ms}ms file(runs kernels statuses)=$runs"
    grep -h "stored\|error\|warning" $OUT/logs/$name.err | head -8 | sed 's/^/   /' | tee -a $summary >/dev/null
    [ -f $OUT/logs/$name.dump.jsonl ] && python3 - "$OUT/logs/$name.dump.jsonl" <<'PYEOF' | tee -a $summary
import json, sys
for line in open(sys.argv[1]):
    try: o = json.loads(line)
    except Exception: print("   ?", line.strip()[:200]); continue
    if o["type"] == "sink":
        print(f"   sink pid {o['pid']} ppid {o['ppid']} {o['bytes']} B flushes {o['flushes']} ended {o['ended']} sig {o['end_signal']} trunc {o['truncated']} kernels {o['kernels']} api {o['api']} nvtx {o['nvtx_events']} dropped {o['dropped']} {o['error']}")
    elif o["type"] == "run":
        kn = o["kernel_names"]; short = {k.split('(')[0][-40:]: v for k, v in list(kn.items())[:8]}
        print(f"   run pid {o['pid']} dev {o['device']} {o['device_name']} {o['uuid'][:12]} {o['status']} [{o['reason']}] exit {o['exit_code']}/{o['exit_signal']} kernels {o['kernels']} (no api {o['kernels_without_api']}, graph {o['graph_kernels']}) graphlaunch {o['graph_launch_api']} api {o['api']} htod {o['htod']} dtoh {o['dtoh']} memset {o['memset']} streams {o['streams']} nvtx push {o['nvtx_push']} se {o['nvtx_startend']} mark {o['nvtx_mark']} open {o['nvtx_open']} domains {o['domains']} span {o['span_ms']:.1f} ms")
        print(f"      nvtx names {o['nvtx_names'][:12]}  kernels {short}")
    elif o["type"] == "warning":
        print("   warning", o["text"][:200])
PYEOF
    return $rc
}
nvidia-smi -L | tee -a $summary
want basic && { rec basic 60 -- $APP basic; grep EXPECT $OUT/logs/basic.out | sed 's/^/   /' | tee -a $summary; }
want crash && rec crash 60 -- $APP crash
want exit3 && rec exit3 60 -- $APP exit3
want hang && rec hang 60 --timeout 3 -- $APP hang
if want kill; then
    ( sleep 3; pkill -9 -x ws_testapp ) &  # -x: not warpstage-record, whose command line names it too
    rec kill 60 -- $APP loop 10
    wait
    say "   loop printed: $(grep LAUNCHES $OUT/logs/kill.out | tail -1)"
fi
want children && rec children 60 -- $APP children
if want torch; then
    rec torch 120 -- $PY workload
    sd=$(ls -d $T/.torch.ws.sinks-* | head -1)
    timeout 60 $D --kernels --nvtx-range ws-measure "$sd" >$OUT/logs/torch.measure.jsonl
    timeout 120 $PY profile $T/prof.json >$OUT/logs/prof.log 2>&1; say "   profiler run rc=$?"
    timeout 60 $PY compare $OUT/logs/torch.measure.jsonl $T/prof.json >$OUT/logs/compare.txt 2>&1; say "   compare rc=$?"
    tail -40 $OUT/logs/compare.txt | tee -a $summary
fi
want torchchildren && rec torchchildren 120 -- $PY children
if want bench; then
    for i in 1 2 3; do
        t0=$(date +%s%N); timeout 120 $PY bench >$OUT/logs/bench_off_$i.log 2>&1; w0=$(( ($(date +%s%N) - t0) / 1000000 ))
        t0=$(date +%s%N); timeout 120 $R --no-stalls -o $T/bench_$i.ws -- $PY bench >$OUT/logs/bench_on_$i.log 2>$OUT/logs/bench_on_$i.err; rc=$?; w1=$(( ($(date +%s%N) - t0) / 1000000 ))
        say "BENCHPAIR $i off loop $(sed -n 's/BENCH loop_s=//p' $OUT/logs/bench_off_$i.log) wall ${w0}ms | on(rc $rc) loop $(sed -n 's/BENCH loop_s=//p' $OUT/logs/bench_on_$i.log) wall ${w1}ms"
    done
fi
tar -C $OUT -czf $OUT/logs.tar.gz logs && rm -rf $OUT/logs
say "done $(date -u)"
