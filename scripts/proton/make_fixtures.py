#!/usr/bin/env python3
"""Make real Triton Proton intra-kernel traces (Chrome-trace JSON) for Warpstage's importer tests.

Runs on an H100/H200 with Triton (3.6 when written) and PyTorch. One fixture per process:

    python3 scripts/proton/make_fixtures.py FIXTURE OUTDIR

FIXTURE is one of
  triton_add       a Triton (tl) kernel with nested scopes (kernel > load_and_add > load_x/load_y)
  gluon_pipelined  a Gluon TMA + wgmma matmul, 2-slot software pipeline, scopes tma_issue / tma_wait /
                   wgmma_wait / wgmma_issue / epilogue in the k-loop (one warpgroup does everything)
  gluon_ws         a Gluon warp-specialized TMA + wgmma matmul: a 1-warp load partition (scopes wait_empty,
                   tma_issue) and a 4-warp MMA partition (wait_ready, wgmma, epilogue) over a 3-slot ring
  triton_add_multi the same Triton add kernel launched three times in one Proton session (4 CTAs each,
                   8 Ki floats): one file with several launches of one kernel (Proton writes them one
                   after the other, on one time base)
  info             print versions, clocks and the signatures of the Proton/Gluon calls used here

Each writes OUTDIR/<fixture>.chrome_trace (Proton's own file) and checks the kernel's result against torch.
"""
import inspect
import os
import sys

import torch
import triton
import triton.language as tl
import triton.profiler as proton
import triton.profiler.language as pl


def info():
    print("triton", triton.__version__, "torch", torch.__version__)
    p = torch.cuda.get_device_properties(0)
    print("device", p.name, "SMs", p.multi_processor_count, "clock_rate_khz", getattr(p, "clock_rate", "n/a"))
    for name, fn in [("proton.start", proton.start), ("proton.mode.Default", proton.mode.Default)]:
        try:
            print(name, inspect.signature(fn))
        except Exception as e:  # noqa: BLE001
            print(name, "?", e)
    try:
        from triton.experimental.gluon import language as gl
        from triton.experimental.gluon.language.nvidia.hopper import tma, mbarrier, warpgroup_mma
        print("gl.warp_specialize", inspect.signature(gl.warp_specialize))
        print("tma", [n for n in dir(tma) if not n.startswith("_")])
        print("mbarrier", [n for n in dir(mbarrier) if not n.startswith("_")])
        print("warpgroup_mma", inspect.signature(warpgroup_mma))
        print("gl.NVMMADistributedLayout", inspect.signature(gl.NVMMADistributedLayout))
    except Exception as e:  # noqa: BLE001
        print("gluon introspection failed:", e)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pl.enter_scope("kernel")
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    with pl.scope("load_and_add"):
        with pl.scope("load_x"):
            x = tl.load(x_ptr + offs, mask=mask)
        with pl.scope("load_y"):
            y = tl.load(y_ptr + offs, mask=mask)
        z = x + y
    with pl.scope("store"):
        tl.store(out_ptr + offs, z, mask=mask)
    pl.exit_scope("kernel")


def triton_add(outdir):
    pl.enable_semantic("triton")
    n = 32 * 1024
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    proton.start(os.path.join(outdir, "triton_add"), data="trace", backend="instrumentation")
    add_kernel[(triton.cdiv(n, 2048), )](x, y, out, n, BLOCK=2048, num_warps=4)
    torch.cuda.synchronize()
    proton.finalize()
    torch.testing.assert_close(out, x + y)
    print("triton_add: PASS")


def triton_add_multi(outdir):
    pl.enable_semantic("triton")
    n = 8 * 1024
    xs = [torch.rand(n, device="cuda") for _ in range(3)]
    y = torch.rand(n, device="cuda")
    outs = [torch.empty_like(y) for _ in range(3)]
    proton.start(os.path.join(outdir, "triton_add_multi"), data="trace", backend="instrumentation")
    for x, out in zip(xs, outs):
        add_kernel[(triton.cdiv(n, 2048), )](x, y, out, n, BLOCK=2048, num_warps=4)
    torch.cuda.synchronize()
    proton.finalize()
    for x, out in zip(xs, outs):
        torch.testing.assert_close(out, x + y)
    print("triton_add_multi: PASS")


def gluon_defs():
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import (mbarrier, tma, warpgroup_mma,
                                                                  warpgroup_mma_init, warpgroup_mma_wait,
                                                                  fence_async_shared)
    tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
    tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global

    @gluon.jit
    def pipelined(a_desc, b_desc, c_desc, mma_layout: gl.constexpr):
        BM: gl.constexpr = c_desc.block_type.shape[0]
        BN: gl.constexpr = c_desc.block_type.shape[1]
        BK: gl.constexpr = a_desc.block_type.shape[1]
        K = a_desc.shape[1]
        pl.enter_scope("kernel")
        a_s = gl.allocate_shared_memory(a_desc.dtype, [2] + a_desc.block_type.shape, a_desc.layout)
        b_s = gl.allocate_shared_memory(b_desc.dtype, [2] + b_desc.block_type.shape, b_desc.layout)
        bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
        mbarrier.init(bars.index(0), count=1)
        mbarrier.init(bars.index(1), count=1)
        off_m = gl.program_id(0) * BM
        off_n = gl.program_id(1) * BN
        acc = warpgroup_mma_init(gl.zeros((BM, BN), dtype=gl.float32, layout=mma_layout))
        # prologue: load k-step 0 into slot 0
        mbarrier.expect(bars.index(0), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma_load(a_desc, [off_m, 0], bars.index(0), a_s.index(0))
        tma_load(b_desc, [0, off_n], bars.index(0), b_s.index(0))
        steps = gl.cdiv(K, BK)
        for k in range(steps):
            slot = k % 2
            phase = (k // 2) & 1
            with pl.scope("tma_wait"):
                mbarrier.wait(bars.index(slot), phase)
            with pl.scope("wgmma_wait"):
                acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
            if k + 1 < steps:
                nxt = (k + 1) % 2
                with pl.scope("tma_issue"):
                    mbarrier.expect(bars.index(nxt), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
                    tma_load(a_desc, [off_m, (k + 1) * BK], bars.index(nxt), a_s.index(nxt))
                    tma_load(b_desc, [(k + 1) * BK, off_n], bars.index(nxt), b_s.index(nxt))
            with pl.scope("wgmma_issue"):
                acc = warpgroup_mma(a_s.index(slot), b_s.index(slot), acc, is_async=True)
        with pl.scope("wgmma_last_wait"):
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        with pl.scope("epilogue"):
            c_s = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
            c_s.store(acc.to(c_desc.dtype))
            fence_async_shared()
            tma_store(c_desc, [off_m, off_n], c_s)
            tma.store_wait(0)
        pl.exit_scope("kernel")

    @gluon.jit
    def ws_load(a_desc, b_desc, a_s, b_s, ready, empty, off_m, off_n, K):
        BK: gl.constexpr = a_desc.block_type.shape[1]
        S: gl.constexpr = a_s.type.shape[0]
        for k in range(gl.cdiv(K, BK)):
            slot = k % S
            phase = (k // S) & 1
            with pl.scope("wait_empty"):
                mbarrier.wait(empty.index(slot), phase ^ 1)
            with pl.scope("tma_issue"):
                mbarrier.expect(ready.index(slot), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
                tma_load(a_desc, [off_m, k * BK], ready.index(slot), a_s.index(slot))
                tma_load(b_desc, [k * BK, off_n], ready.index(slot), b_s.index(slot))

    @gluon.jit
    def ws_mma(c_desc, a_s, b_s, ready, empty, off_m, off_n, K, BK: gl.constexpr, mma_layout: gl.constexpr):
        BM: gl.constexpr = c_desc.block_type.shape[0]
        BN: gl.constexpr = c_desc.block_type.shape[1]
        S: gl.constexpr = a_s.type.shape[0]
        acc = gl.zeros((BM, BN), dtype=gl.float32, layout=mma_layout)
        for k in range(gl.cdiv(K, BK)):
            slot = k % S
            phase = (k // S) & 1
            with pl.scope("wait_ready"):
                mbarrier.wait(ready.index(slot), phase)
            with pl.scope("wgmma"):
                acc = warpgroup_mma(a_s.index(slot), b_s.index(slot), acc)  # synchronous: the slot is free after
            mbarrier.arrive(empty.index(slot), count=1)
        with pl.scope("epilogue"):
            c_s = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
            c_s.store(acc.to(c_desc.dtype))
            fence_async_shared()
            tma_store(c_desc, [off_m, off_n], c_s)
            tma.store_wait(0)

    @gluon.jit
    def ws_kernel(a_desc, b_desc, c_desc, mma_layout: gl.constexpr, S: gl.constexpr):
        BM: gl.constexpr = c_desc.block_type.shape[0]
        BN: gl.constexpr = c_desc.block_type.shape[1]
        BK: gl.constexpr = a_desc.block_type.shape[1]
        K = a_desc.shape[1]
        a_s = gl.allocate_shared_memory(a_desc.dtype, [S] + a_desc.block_type.shape, a_desc.layout)
        b_s = gl.allocate_shared_memory(b_desc.dtype, [S] + b_desc.block_type.shape, b_desc.layout)
        ready = gl.allocate_shared_memory(gl.int64, [S, 1], mbarrier.MBarrierLayout())
        empty = gl.allocate_shared_memory(gl.int64, [S, 1], mbarrier.MBarrierLayout())
        for i in gl.static_range(S):
            mbarrier.init(ready.index(i), count=1)
            mbarrier.init(empty.index(i), count=1)
        off_m = gl.program_id(0) * BM
        off_n = gl.program_id(1) * BN
        # Triton 3.6: a list of (partition function, its arguments); the first is the default partition
        # (num_warps warps), the others are workers with the warp counts and register budgets that follow.
        gl.warp_specialize(
            [(ws_mma, (c_desc, a_s, b_s, ready, empty, off_m, off_n, K, BK, mma_layout)),
             (ws_load, (a_desc, b_desc, a_s, b_s, ready, empty, off_m, off_n, K))],
            [1],
            [40],
        )

    return gl, pipelined, ws_kernel


def gluon_run(which, outdir):
    gl, pipelined, ws_kernel = gluon_defs()
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    try:
        pl.enable_semantic("gluon")
    except Exception as e:  # noqa: BLE001
        print("pl.enable_semantic('gluon'):", e)
    M = N = int(os.environ.get("FIXTURE_MN", "256"))  # 4 CTAs: a small test fixture
    K = 1024
    BM, BN, BK = 128, 128, 64
    torch.manual_seed(0)
    A = torch.randn(M, K, device="cuda", dtype=torch.float16)
    B = torch.randn(K, N, device="cuda", dtype=torch.float16)
    C = torch.empty(M, N, device="cuda", dtype=torch.float16)
    la = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.float16)
    lb = gl.NVMMASharedLayout.get_default_for([BK, BN], gl.float16)
    lc = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float16)
    a_d = TensorDescriptor.from_tensor(A, [BM, BK], la)
    b_d = TensorDescriptor.from_tensor(B, [BK, BN], lb)
    c_d = TensorDescriptor.from_tensor(C, [BM, BN], lc)
    mma_layout = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 128, 16])
    grid = (M // BM, N // BN)
    proton.start(os.path.join(outdir, which), data="trace", backend="instrumentation")
    if which == "gluon_pipelined":
        pipelined[grid](a_d, b_d, c_d, mma_layout, num_warps=4)
    else:
        ws_kernel[grid](a_d, b_d, c_d, mma_layout, 3, num_warps=4)
    torch.cuda.synchronize()
    proton.finalize()
    ref = (A.float() @ B.float()).half()
    torch.testing.assert_close(C, ref, rtol=2e-2, atol=1e-1)
    print(which + ": PASS")


if __name__ == "__main__":
    fixture, outdir = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else ".")
    os.makedirs(outdir, exist_ok=True)
    if fixture == "info":
        info()
    elif fixture == "triton_add":
        triton_add(outdir)
    elif fixture == "triton_add_multi":
        triton_add_multi(outdir)
    elif fixture in ("gluon_pipelined", "gluon_ws"):
        gluon_run(fixture, outdir)
    else:
        sys.exit("unknown fixture " + fixture)
