"""PyTorch side of the program-recording checks (run on the H200; tests/recorder/programs/device_program.sh).

  torch_compare.py workload          warm-up, then 30 MLP fwd+bwd+SGD steps inside the NVTX range 'ws-measure'
                                     (torch.cuda.nvtx), one record_function under emit_nvtx; what warpstage-record
                                     records of it is compared with torch.profiler below
  torch_compare.py profile OUT.json  the same steps under torch.profiler (CUDA activity); chrome trace to OUT.json
  torch_compare.py compare DUMP.jsonl TRACE.json   kernels in 'ws-measure' (warpstage-sink-dump --kernels
                                     --nvtx-range ws-measure) vs the profiler's: count and names per kernel, mean
                                     duration per name; prints COMPARE ... and exits 1 on a mismatch
  torch_compare.py children          a kernel here, one in a subprocess child
  torch_compare.py bench             the recording-overhead loop: 300 steps of a 4-layer MLP; prints BENCH loop_s=
  torch_compare.py ctest RECORD DUMP the ctest test gpu_record_torch: records `workload` with warpstage-record
                                     --keep-sinks, dumps the kernels inside 'ws-measure', runs `profile`, compares;
                                     exit 77 (SKIP) without torch or a CUDA GPU (1 with WARPSTAGE_REQUIRE_GPU=1)
"""
import json
import os
import subprocess
import sys
import time

STEPS = 30


def make():
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[m for _ in range(3) for m in (torch.nn.Linear(1024, 1024), torch.nn.GELU())],
                                torch.nn.Linear(1024, 16)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(512, 1024, device="cuda")
    t = torch.randint(0, 16, (512,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), t)
        loss.backward()
        opt.step()
    return step


def workload(profile_out=None):
    import torch
    step = make()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    if profile_out:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
            for _ in range(STEPS):
                step()
            torch.cuda.synchronize()
        prof.export_chrome_trace(profile_out)
        return
    torch.cuda.nvtx.range_push("ws-measure")
    for _ in range(STEPS):
        step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    with torch.autograd.profiler.emit_nvtx():
        with torch.autograd.profiler.record_function("ws-record-function"):
            step()
    torch.cuda.synchronize()
    print("WORKLOAD done", flush=True)


def compare(dump, trace):
    ours = {}
    for line in open(dump):
        o = json.loads(line)
        if o.get("type") == "kernel":
            ours.setdefault(o["name"], []).append((o["end"] - o["start"]) / 1000.0)
    theirs = {}
    for e in json.load(open(trace))["traceEvents"]:
        if e.get("cat") == "kernel":
            theirs.setdefault(e["name"], []).append(float(e["dur"]))
    n_ours = sum(len(v) for v in ours.values())
    n_theirs = sum(len(v) for v in theirs.values())
    names_equal = set(ours) == set(theirs)
    counts_equal = names_equal and all(len(ours[k]) == len(theirs[k]) for k in ours)
    rel = []
    for k in sorted(set(ours) & set(theirs)):
        a = sum(ours[k]) / len(ours[k])
        b = sum(theirs[k]) / len(theirs[k])
        rel.append(abs(a - b) / b if b > 0 else 0.0)
        print(f"  {len(ours[k]):4d} {len(theirs[k]):4d} ours {a:9.2f} us  profiler {b:9.2f} us  {100 * rel[-1]:5.1f}%  {k[:90]}")
    for k in sorted(set(ours) ^ set(theirs)):
        print(f"  ONLY IN {'warpstage' if k in ours else 'profiler'}: {k[:100]} x{len((ours if k in ours else theirs)[k])}")
    mean_rel = sum(rel) / len(rel) if rel else 1.0
    ok = counts_equal and n_ours > 0 and mean_rel <= 0.05
    print(f"COMPARE kernels warpstage={n_ours} profiler={n_theirs} names={len(ours)}/{len(theirs)} names_equal={names_equal} "
          f"counts_equal={counts_equal} mean_rel_duration_diff={100 * mean_rel:.2f}% -> {'PASS' if ok else 'FAIL'}", flush=True)
    return 0 if ok else 1


def child_kernel(tag):
    import torch
    x = torch.ones(1 << 20, device="cuda")
    print(f"CHILD {tag} pid={os.getpid()} ppid={os.getppid()} sum={float((x * 2).sum())}", flush=True)


def bench():
    import torch
    step = make()
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(300):
        step()
    torch.cuda.synchronize()
    print(f"BENCH loop_s={time.perf_counter() - t0:.4f}", flush=True)


def ctest(record, dump):
    import glob
    import shutil
    import tempfile

    def unavailable(why):
        if os.environ.get("WARPSTAGE_REQUIRE_GPU", "0") not in ("", "0"):
            print(f"FAIL: gpu_record_torch: WARPSTAGE_REQUIRE_GPU is set but the test cannot run: {why}")
            return 1
        print(f"SKIP: gpu_record_torch: {why}")
        return 77
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        return unavailable(f"no PyTorch ({e})")
    if not torch.cuda.is_available():
        return unavailable("torch.cuda.is_available() is False")
    d = tempfile.mkdtemp(prefix="gpu_record_torch-")
    out = os.path.join(d, "torch.wstrace")
    rc = subprocess.run([record, "--keep-sinks", "-o", out, "--", sys.executable, os.path.abspath(__file__), "workload"]).returncode
    if rc != 0:
        print(f"FAIL: warpstage-record exit {rc}; files in {d}")
        return 1
    sinks = glob.glob(os.path.join(d, ".torch.wstrace.sinks-*"))
    with open(os.path.join(d, "measure.jsonl"), "w") as f:
        subprocess.run([dump, "--kernels", "--nvtx-range", "ws-measure", sinks[0]], stdout=f, check=False)
    workload(os.path.join(d, "prof.json"))
    rc = compare(os.path.join(d, "measure.jsonl"), os.path.join(d, "prof.json"))
    if rc == 0:
        shutil.rmtree(d, ignore_errors=True)
    else:
        print(f"files kept in {d}")
    return rc


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "workload"
    if mode == "workload":
        workload()
    elif mode == "profile":
        workload(sys.argv[2])
    elif mode == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    elif mode == "child":
        child_kernel("subprocess")
    elif mode == "children":
        child_kernel("parent")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "child"])
        print("subprocess rc", r.returncode, flush=True)
    elif mode == "bench":
        bench()
    elif mode == "ctest":
        sys.exit(ctest(sys.argv[2], sys.argv[3]))


if __name__ == "__main__":
    main()
