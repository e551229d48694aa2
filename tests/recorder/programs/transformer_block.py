#!/usr/bin/env python3
"""A small pre-norm transformer block trained for a few steps: the program behind the bundled PyTorch sample
(issue 9) and the non-launch-bound workload of the recording-overhead benchmark.

    python3 transformer_block.py sample          # 3 steps, NVTX ranges per step and phase, and per op (emit_nvtx)
    python3 transformer_block.py bench [STEPS]   # larger shape, 5 warm-up + STEPS timed steps; prints BENCH loop_s=

bf16 autocast, fused AdamW, scaled_dot_product_attention (flash kernels on Hopper). Random data from a fixed seed.
The loss is printed so that a run can be checked for sanity (finite, falling).
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        with torch.autograd.profiler.record_function("attention"):
            q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        with torch.autograd.profiler.record_function("mlp"):
            x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return x


def make(batch, seq, d, heads):
    torch.manual_seed(0)
    model = Block(d, heads).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(batch, seq, d, device="cuda")
    target = torch.randn(batch, seq, d, device="cuda")
    return model, opt, x, target


def step(model, opt, x, target, i, nvtx):
    if nvtx:
        torch.cuda.nvtx.range_push(f"step {i}")
        torch.cuda.nvtx.range_push("forward")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.mse_loss(model(x).float(), target)
    if nvtx:
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("backward")
    loss.backward()
    if nvtx:
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("optimizer")
    opt.step()
    opt.zero_grad(set_to_none=True)
    if nvtx:
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
    return loss


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "sample"
    if mode == "sample":
        model, opt, x, target = make(batch=4, seq=512, d=1024, heads=16)
        # emit_nvtx: every autograd op becomes an NVTX range too ("aten::linear", ...), nested in the step ranges
        with torch.autograd.profiler.emit_nvtx():
            losses = [float(step(model, opt, x, target, i, nvtx=True).detach()) for i in range(3)]
        torch.cuda.synchronize()
        print("losses", " ".join(f"{v:.5f}" for v in losses))
        ok = all(v == v and v < 1e4 for v in losses) and losses[-1] < losses[0]
        print("SAMPLE", "ok" if ok else "BAD")
        return 0 if ok else 1
    if mode == "bench":
        steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
        model, opt, x, target = make(batch=8, seq=1024, d=2048, heads=16)
        for i in range(5):
            step(model, opt, x, target, i, nvtx=False)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(steps):
            loss = step(model, opt, x, target, i, nvtx=False)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        print(f"BENCH loop_s={dt:.4f} steps={steps} loss={float(loss):.5f}")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
