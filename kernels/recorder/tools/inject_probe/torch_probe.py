"""PyTorch side of the injection probe (an unmodified program from the recorder's point of view).

  torch_probe.py nvtx      torch.cuda.nvtx range_push/pop + mark, then emit_nvtx() with record_function; prints
                           which nvtx / cupti libraries the process has mapped
  torch_probe.py children  a kernel here, then a subprocess child and a multiprocessing 'spawn' child, each with a kernel
  torch_probe.py bench     small MLP forward+backward+SGD, 200 timed iterations (one nvtx range each); prints loop time
"""
import os
import sys
import time


def maps(tag):
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1] if len(line.split()) >= 6 else ""
            low = p.lower()
            if any(k in low for k in ("nvtx", "nvtoolsext", "cupti", "wsinject")):
                libs.add(p)
    for p in sorted(libs):
        print(f"MAPS {tag} {p}")


def child_work(tag):
    import torch
    x = torch.ones(1 << 20, device="cuda")
    print(f"CHILD {tag} pid={os.getpid()} ppid={os.getppid()} sum={float((x * 2).sum())}", flush=True)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "nvtx"
    if mode == "child":
        child_work(sys.argv[2] if len(sys.argv) > 2 else "sub")
        return
    import torch
    if mode == "nvtx":
        print("TORCH", torch.__version__, torch.__file__)
        maps("after-import")
        torch.cuda.nvtx.range_push("torch-outer")
        a = torch.randn(512, 512, device="cuda")
        torch.cuda.nvtx.range_push("torch-inner")
        b = a @ a
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.mark("torch-mark")
        torch.cuda.nvtx.range_pop()
        model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).cuda()
        with torch.autograd.profiler.emit_nvtx():
            with torch.autograd.profiler.record_function("my_record_function"):
                y = model(torch.randn(64, 256, device="cuda")).sum()
                y.backward()
        torch.cuda.synchronize()
        maps("after-cuda")
        print("NVTX done", float(b[0, 0]))
    elif mode == "children":
        import multiprocessing as mp
        import subprocess
        child_work("parent")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "child", "subprocess"])
        print("subprocess rc", r.returncode, flush=True)
        ctx = mp.get_context("spawn")
        p = ctx.Process(target=child_work, args=("spawn",))
        p.start()
        p.join()
        print("spawn exitcode", p.exitcode, flush=True)
    elif mode == "bench":
        torch.manual_seed(0)
        model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(1024, 1024), torch.nn.GELU())],
                                    torch.nn.Linear(1024, 10)).cuda()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        x = torch.randn(256, 1024, device="cuda")
        t = torch.randint(0, 10, (256,), device="cuda")

        def step(i):
            torch.cuda.nvtx.range_push("iter")
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), t)
            loss.backward()
            opt.step()
            torch.cuda.nvtx.range_pop()
            if i % 20 == 0:
                loss.item()

        for i in range(10):
            step(i)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(200):
            step(i)
        torch.cuda.synchronize()
        print(f"BENCH loop_s={time.perf_counter() - t0:.4f}", flush=True)


if __name__ == "__main__":
    main()
