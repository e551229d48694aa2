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
--vs-lce PATH (s12-lcevs): PATH is liblce_capi.so (kernels/lce/lce_capi.h: the `lce` driver's problem and rungs
behind a C API). After the forms are timed as above, `lce` rung --lce-rung (4) runs in THIS process on torch's current
stream: checked against the fp32 reference as `lce --check` does (before and after the timing), then timed
INTERLEAVED with each K-padded form that was timed (eager, and compiled when it was): --pairs pairs after
--pair-warmup, one launch of each per pair, the order flipped every pair, CUDA events around each launch, so both see
the same clocks. Prints per form the medians, torch/rung (the rung's speed-up: ratio of the medians, and the median
of the per-pair ratios) and in how many pairs the rung was faster (VSLCE lines; the TORCH lines are as without it).
The library's inputs are its own (random from seed 1, as `lce`), at the same shape as torch's.
Usage: python3 scripts/lce/torch_reference.py [--m 433 --n 256 --k-user 1178 --k-cand 866 --b 1024
       --per-user 70] [--iters 30] [--warmup 5] [--compile-cap 150] [--no-compile] [--compile-padded-only]
       [--vs-lce PATH/liblce_capi.so [--lce-rung 4] [--pairs 50] [--pair-warmup 10]]
Exit: 0, 1 (a check failed or the library failed), 2 (bad arguments, or --vs-lce PATH is not a loadable liblce_capi)."""
import argparse
import ctypes
import os
import signal
import statistics
import sys
import time

torch = None  # imported in main() after the arguments are checked (a bad --vs-lce path is reported without torch)
F = None


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
    # s12-lcevs: an lce rung against the padded forms, interleaved in this process (module docstring)
    ap.add_argument("--vs-lce", metavar="PATH", help="liblce_capi.so (build/kchecks/kernels/lce/liblce_capi.so)")
    ap.add_argument("--lce-rung", type=int, default=4, choices=range(5), metavar="{0..4}")
    ap.add_argument("--pairs", type=int, default=50)
    ap.add_argument("--pair-warmup", type=int, default=10)
    ap.add_argument("--pairs-csv", metavar="PATH", help="every timed pair: form, pair, torch_first, torch_ms, rung_ms")
    a = ap.parse_args()
    if a.vs_lce is not None:
        why = lce_path_problem(a.vs_lce)
        if why:
            ap.error(f"--vs-lce {a.vs_lce}: {why}")
    if a.pairs < 1 or a.pair_warmup < 0:
        ap.error("--pairs must be at least 1 and --pair-warmup at least 0")
    return a


def lce_path_problem(path):
    """Why PATH cannot be liblce_capi.so, before torch is imported ("" if it may be)."""
    if not os.path.exists(path):
        return "no such file"
    if not os.path.isfile(path):
        return "not a file"
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as e:
        return f"cannot read it ({e.strerror})"
    if head != b"\x7fELF":
        return "not a shared library (no ELF header)"
    return ""


class LceError(Exception):
    pass


class Lce:
    """liblce_capi through ctypes (kernels/lce/lce_capi.h)."""

    def __init__(self, path):
        try:
            self.lib = ctypes.CDLL(os.path.abspath(path))
        except OSError as e:
            hint = ""
            if "libcublas" in str(e) or "libcudart" in str(e):
                hint = (" (the CUDA libraries it links: put the folder of torch's nvidia cuBLAS / the toolkit's lib64 "
                        "on LD_LIBRARY_PATH, as scripts/device/s12-lcevs.sh does)")
            raise LceError(f"cannot load it: {e}{hint}")
        try:
            lib = self.lib
            lib.lce_api_version.restype = ctypes.c_int
            lib.lce_open.argtypes = [ctypes.c_int] * 7 + [ctypes.c_ulonglong, ctypes.POINTER(ctypes.c_void_p),
                                                          ctypes.c_char_p, ctypes.c_size_t]
            lib.lce_run.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
            lib.lce_check.argtypes = lib.lce_run.argtypes
            lib.lce_close.argtypes = [ctypes.c_void_p]
            lib.lce_close.restype = None
        except AttributeError as e:
            raise LceError(f"not liblce_capi ({e})")
        if lib.lce_api_version() != 1:
            raise LceError(f"liblce_capi API version {lib.lce_api_version()}, this script speaks 1")
        self.msg = ctypes.create_string_buffer(1024)
        self.h = ctypes.c_void_p()

    def text(self):
        return self.msg.value.decode(errors="replace")

    def open(self, a):
        rc = self.lib.lce_open(a.m, a.n, a.k_user, a.k_cand, a.b, a.per_user, 0, 1, ctypes.byref(self.h), self.msg,
                               len(self.msg))
        if rc != 0:
            raise LceError(self.text())
        return self.text()

    def check(self, rung, stream):
        """(passed, the PASS / FAIL line)"""
        rc = self.lib.lce_check(self.h, rung, ctypes.c_void_p(stream), self.msg, len(self.msg))
        if rc not in (0, 5):  # LCE_OK, LCE_E_CHECK
            raise LceError(self.text())
        return rc == 0, self.text()

    def runner(self, rung, stream):
        run, h, s, msg, size = self.lib.lce_run, self.h, ctypes.c_void_p(stream), self.msg, len(self.msg)

        def go():
            if run(h, rung, s, msg, size) != 0:
                raise LceError(self.text())
        return go

    def close(self):
        if self.h:
            self.lib.lce_close(self.h)
            self.h = ctypes.c_void_p()


def loaded_libraries(*names):
    """Where this process loaded each library from (/proc/self/maps): two copies of the CUDA runtime would show."""
    found = {n: set() for n in names}
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                for n in names:
                    if os.path.basename(path).startswith(n):
                        found[n].add(path)
    except OSError:
        pass
    return "; ".join(f"{n}: {', '.join(sorted(p)) or 'not loaded'}" for n, p in found.items())


def interleave(fn, args, run_lce, warmup, pairs, spin=0):
    """fn(*args) and run_lce() alternately on the current stream: pairs (torch, lce), (lce, torch), ... each launch
    between two CUDA events, synchronised after each pair. Returns the torch and lce times (ms) of the timed pairs and
    whether torch went first in each. spin > 0: each pair queued behind a kernel that spins that many cycles
    (torch.cuda._sleep), so that both launches are enqueued before the card reaches them: GPU time alone, no host
    launch time in the first launch's span."""
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    tt, tl, tf = [], [], []
    torch.cuda.synchronize()
    for i in range(warmup + pairs):
        torch_first = i % 2 == 0
        if spin:
            torch.cuda._sleep(spin)
        ev[0].record()
        if torch_first:
            fn(*args)
        else:
            run_lce()
        ev[1].record()
        if torch_first:
            run_lce()
        else:
            fn(*args)
        ev[2].record()
        ev[2].synchronize()
        first, second = ev[0].elapsed_time(ev[1]), ev[1].elapsed_time(ev[2])
        if i >= warmup:
            tt.append(first if torch_first else second)
            tl.append(second if torch_first else first)
            tf.append(torch_first)
    return tt, tl, tf


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
    global torch, F
    a = parse()
    import torch as _torch
    import torch.nn.functional as _F
    torch, F = _torch, _F
    dev = "cuda"
    lce = None
    if a.vs_lce is not None:
        try:
            lce = Lce(a.vs_lce)
        except LceError as e:
            print(f"torch_reference.py: --vs-lce {a.vs_lce}: {e}", file=sys.stderr)
            return 2
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
    stream = torch.cuda.current_stream().cuda_stream
    if lce:
        try:
            print(f"VSLCE liblce_capi {os.path.abspath(a.vs_lce)}: {lce.open(a)}")
            ok, line = lce.check(a.lce_rung, stream)
        except LceError as e:
            print(f"VSLCE FAIL liblce_capi: {e}", flush=True)
            return 1
        print(f"VSLCE check in this process before the timing: {line}", flush=True)
        if not ok:
            return 1
        print(f"VSLCE {loaded_libraries('libcudart', 'libcublas.', 'libcublasLt')}", flush=True)
    rows = []
    timed = {}
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
        timed[name] = (fn, args)
        print(f"TORCH {name:32s} {med:8.4f} ms  {flops / (med * 1e-3) * 1e-12:6.1f} TFLOP/s  min {lo:.4f} max {hi:.4f}"
              f"  max|err|/rms {err:.2e}{note}", flush=True)
    if rows:
        best = min(rows, key=lambda r: r[1])
        print(f"TORCH fastest: {best[0]} {best[1]:.4f} ms; the issue's goal for the top rung: <= {best[1] / 1.5:.4f} ms")
    if lce:
        return versus(a, lce, timed, rows, stream, flops)
    return 0


def versus(a, lce, timed, rows, stream, flops):
    """--vs-lce: the rung interleaved with the padded forms (and the fastest form, if it is neither), then checked."""
    r = a.lce_rung
    names = [n for n in ("eager decomposed, K padded", "compiled decomposed, K padded") if n in timed]
    if rows:
        best = min(rows, key=lambda x: x[1])[0]
        if best not in names:
            names.append(best)
    if "compiled decomposed, K padded" not in timed:
        print("VSLCE note: the compiled K-padded form was not timed (--no-compile or its compile ran over)")
    print(f"VSLCE rung {r} vs each form: {a.pairs} pairs after {a.pair_warmup}, order flipped every pair, one stream "
          f"(torch's current), CUDA events around each launch; speed-up = torch ms / rung {r} ms")
    run_lce = lce.runner(r, stream)
    csv = []
    try:
        for name in names:
            fn, args = timed[name]
            tt, tl, tf = interleave(fn, args, run_lce, a.pair_warmup, a.pairs)
            csv += [f'"{name}",{i},{int(f)},{t:.5f},{l:.5f}' for i, (t, l, f) in enumerate(zip(tt, tl, tf))]
            mt, ml = statistics.median(tt), statistics.median(tl)
            pair = statistics.median([t / l for t, l in zip(tt, tl)])
            wins = sum(l < t for t, l in zip(tt, tl))
            print(f"VSLCE {name:32s} {mt:8.4f} ms  rung {r} {ml:8.4f} ms ({flops / (ml * 1e-3) * 1e-12:5.1f} TFLOP/s)"
                  f"  speed-up: medians {mt / ml:.3f}x, per-pair median {pair:.3f}x  (rung {r} faster in {wins} of "
                  f"{len(tt)} pairs; torch min {min(tt):.4f} max {max(tt):.4f}, rung min {min(tl):.4f} "
                  f"max {max(tl):.4f})", flush=True)
            # the first launch of a pair starts on an idle card (its host-side launch time counts), the second right
            # after the other's kernels: the medians by position say how much of a difference that makes
            med = lambda xs, first: statistics.median([x for x, f in zip(xs, tf) if f == first] or [float("nan")])
            print(f"VSLCE   by position: torch first: torch {med(tt, True):.4f} rung {r} {med(tl, True):.4f} ms;  "
                  f"rung {r} first: rung {r} {med(tl, False):.4f} torch {med(tt, False):.4f} ms", flush=True)
            if hasattr(torch.cuda, "_sleep"):
                tt, tl, tf = interleave(fn, args, run_lce, a.pair_warmup, a.pairs, spin=2_000_000)
                csv += [f'"{name} (queued)",{i},{int(f)},{t:.5f},{l:.5f}' for i, (t, l, f) in enumerate(zip(tt, tl, tf))]
                mt, ml = statistics.median(tt), statistics.median(tl)
                pair = statistics.median([t / l for t, l in zip(tt, tl)])
                print(f"VSLCE   queued behind a ~1 ms spin (GPU time alone): torch {mt:.4f} ms  rung {r} {ml:.4f} ms  "
                      f"speed-up: medians {mt / ml:.3f}x, per-pair median {pair:.3f}x  (rung {r} faster in "
                      f"{sum(l < t for t, l in zip(tt, tl))} of {len(tt)} pairs)", flush=True)
        ok, line = lce.check(r, stream)
    except LceError as e:
        print(f"VSLCE FAIL liblce_capi: {e}", flush=True)
        return 1
    print(f"VSLCE check in this process after the pairs: {line}", flush=True)
    if a.pairs_csv:
        with open(a.pairs_csv, "w") as f:
            f.write("form,pair,torch_first,torch_ms,rung_ms\n" + "\n".join(csv) + "\n")
    lce.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
