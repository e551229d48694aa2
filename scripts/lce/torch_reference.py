#!/usr/bin/env python3
"""PyTorch forms of the linear-compression operation (issue 11), timed at one shape on the GPU, to set the
bar the `lce` rungs are compared with (docs/benchmarks.md):
    out[b] = W_cand @ E_cand[b] + W_user @ E_user[u(b)]     fp16 in, fp16 out
Forms: eager original (gather + concatenate along K + one batched matmul), eager decomposed (user GEMM once
per user, candidate GEMM, gather + add), the decomposed form on K padded to a multiple of 8 (the padded
tensors prepared once, untimed, as for the `lce` rungs), and torch.compile(mode="max-autotune-no-cudagraphs")
of the decomposed form, padded and not (each compile capped by --compile-cap seconds; a form whose compile
runs over is reported as such). Timing: CUDA events around each call, median of --iters after --warmup.
Each form is checked against an fp32 matmul reference (max |err| / rms of the reference).
Usage: python3 scripts/lce/torch_reference.py [--m 433 --n 256 --k-user 1178 --k-cand 866 --b 1024
       --per-user 70] [--iters 30] [--warmup 5] [--compile-cap 150] [--no-compile] [--compile-padded-only]"""
import argparse
import signal
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=433)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--k-user", type=int, default=1178)
    ap.add_argument("--k-cand", type=int, default=866)
    ap.add_argument("--b", type=int, default=1024)
    ap.add_argument("--per-user", type=int, default=70)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--compile-cap", type=float, default=150.0)
    ap.add_argument("--no-compile", action="store_true")
    # s10-lcespeed: compile only the K-padded form (the fastest in every H200 run so far), to fit a short device call
    ap.add_argument("--compile-padded-only", action="store_true")
    return ap.parse_args()


def original(w_cat, e_user, e_cand, u):
    x = torch.cat([e_user[u], e_cand], dim=1)  # [B, Ku + Kc, N]
    return torch.matmul(w_cat, x)


def decomposed(w_user, w_cand, e_user, e_cand, u):
    user = torch.matmul(w_user, e_user)  # [users, M, N]
    cand = torch.matmul(w_cand, e_cand)  # [B, M, N]
    return cand + user[u]


def time_ms(fn, args, warmup, iters):
    for _ in range(warmup):
        fn(*args)
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn(*args)
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts), min(ts), max(ts)


class CompileTimeout(Exception):
    pass


def main():
    a = parse()
    dev = "cuda"
    torch.manual_seed(1)
    users = (a.b + a.per_user - 1) // a.per_user
    flops = 2.0 * a.m * a.n * (a.k_cand * a.b + a.k_user * users)

    def rnd(*shape):
        return (torch.rand(*shape, device=dev) * 2 - 1).half()

    w_user, w_cand = rnd(a.m, a.k_user), rnd(a.m, a.k_cand)
    e_user, e_cand = rnd(users, a.k_user, a.n), rnd(a.b, a.k_cand, a.n)
    u = (torch.arange(a.b, device=dev) // a.per_user).to(torch.int64)
    w_cat = torch.cat([w_user, w_cand], dim=1).contiguous()
    pu, pc = (-a.k_user) % 8, (-a.k_cand) % 8
    w_user_p, w_cand_p = F.pad(w_user, (0, pu)).contiguous(), F.pad(w_cand, (0, pc)).contiguous()
    e_user_p = F.pad(e_user, (0, 0, 0, pu)).contiguous()
    e_cand_p = F.pad(e_cand, (0, 0, 0, pc)).contiguous()

    torch.backends.cuda.matmul.allow_tf32 = False
    ref = (torch.matmul(w_cand.float(), e_cand.float()) + torch.matmul(w_user.float(), e_user.float())[u])
    rms = ref.pow(2).mean().sqrt().item()

    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}; M={a.m} N={a.n} Ku={a.k_user} "
          f"Kc={a.k_cand} B={a.b} per-user={a.per_user} users={users}; {flops * 1e-9:.1f} GFLOP useful")
    forms = [
        ("eager original", original, (w_cat, e_user, e_cand, u)),
        ("eager decomposed", decomposed, (w_user, w_cand, e_user, e_cand, u)),
        ("eager decomposed, K padded", decomposed, (w_user_p, w_cand_p, e_user_p, e_cand_p, u)),
    ]
    if not a.no_compile:
        forms += [
            ("compiled decomposed", "compile", (w_user, w_cand, e_user, e_cand, u)),
            ("compiled decomposed, K padded", "compile", (w_user_p, w_cand_p, e_user_p, e_cand_p, u)),
        ][1 if a.compile_padded_only else 0:]
    rows = []
    for name, fn, args in forms:
        note = ""
        if fn == "compile":
            torch._dynamo.reset()
            cfn = torch.compile(decomposed, mode="max-autotune-no-cudagraphs")

            def on_alarm(signum, frame):
                raise CompileTimeout()

            signal.signal(signal.SIGALRM, on_alarm)
            signal.alarm(int(a.compile_cap))
            t0 = time.time()
            try:
                cfn(*args)
                torch.cuda.synchronize()
            except CompileTimeout:
                print(f"TORCH {name:32s} compile ran over its cap of {a.compile_cap:.0f} s: not timed", flush=True)
                continue
            finally:
                signal.alarm(0)
            note = f" (compiled in {time.time() - t0:.0f} s)"
            fn = cfn
        out = fn(*args)
        torch.cuda.synchronize()
        err = (out.float() - ref).abs().max().item() / rms
        med, lo, hi = time_ms(fn, args, a.warmup, a.iters)
        rows.append((name, med))
        print(f"TORCH {name:32s} {med:8.4f} ms  {flops / (med * 1e-3) * 1e-12:6.1f} TFLOP/s  min {lo:.4f} max {hi:.4f}"
              f"  max|err|/rms {err:.2e}{note}", flush=True)
    if rows:
        best = min(rows, key=lambda r: r[1])
        print(f"TORCH fastest: {best[0]} {best[1]:.4f} ms; the issue's goal for the top rung: <= {best[1] / 1.5:.4f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
