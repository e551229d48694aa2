"""A launcher with one worker process per GPU, for warpstage-record's several-process check (issue 9):
    warpstage-record -o two.wstrace -- python3 two_gpu_workers.py [steps]
The launcher makes no CUDA call; worker i runs `steps` bf16 matmuls on cuda:i inside an NVTX range named
"worker i" and prints how many kernels it launched. Workers are plain subprocesses (not multiprocessing, whose
workers leave through os._exit)."""
import os
import subprocess
import sys


def worker(i, steps):
    import torch
    torch.cuda.set_device(i)
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(f"worker {i}")
    for _ in range(steps):
        c = a @ b
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"WORKER {i} pid {os.getpid()} device {torch.cuda.current_device()} matmuls {steps} sum {float(c.float().sum()):.1f}", flush=True)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]))
        return 0
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(i), str(steps)]) for i in range(2)]
    return max(p.wait() for p in procs)


if __name__ == "__main__":
    sys.exit(main())
