#!/usr/bin/env bash
# Issue 9: a launcher with two workers on a two-GPU machine (kind nvidia-h200-x2), recorded into one file.
# Carry build-dev (see program-checks.sh) with tests/recorder/programs/two_gpu_workers.py copied into it.
set -u
OUT=${OUT:-/tmp/ws-out}; mkdir -p "$OUT"; B=build-dev
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export WARPSTAGE_INJECT_LIB=$PWD/$B/libwarpstage-inject.so NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
timeout 150 $B/warpstage-record -o /tmp/two.wstrace -- python3 $B/two_gpu_workers.py 50 > $OUT/two.out 2> $OUT/two.err
echo "warpstage-record rc=$?"; cat $OUT/two.out; grep -v "^\[" $OUT/two.err | tail -8
python3 - /tmp/two.wstrace <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); q = lambda s, *a: c.execute(s, a).fetchall()
for run, pid, ppid, dev, uuid, status in q("select id, pid, parent_pid, device_ordinal, device_uuid, status from runs"):
    k = q("select count(*), min(start_ns), max(end_ns) from kernels where run_id = ?", run)[0]
    gemm = q("select count(*) from kernels where run_id = ? and name like '%gemm%'", run)[0][0]
    nv = [r[0] for r in q("select name from nvtx_ranges where run_id = ?", run)]
    print(f"RUN {run} pid {pid} ppid {ppid} device {dev} {uuid[:12]} {status}: kernels {k[0]} (gemm-like {gemm}) span {(k[2]-k[1])/1e6 if k[0] else 0:.2f} ms nvtx {nv}")
ids = q("select correlation_id, run_id from kernels")
print("runs", len(q("select id from runs")), "devices", sorted({r[0] for r in q("select device_ordinal from runs")}),
      "distinct uuids", len({r[0] for r in q("select device_uuid from runs")}))
PY
