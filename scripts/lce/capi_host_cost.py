#!/usr/bin/env python3
"""Host cost of one rung call through liblce_capi (s15-lcebody): what a caller's thread spends in lce_run, the GPU
kept busy so that no call waits for it (the launches queue: ~0.4 ms each on the GPU, a few us each on the host).
Opens the benchmark point (or --m ... --per-user), runs --warmup calls, then --calls calls timed one by one with
time.perf_counter_ns, synchronising (lce_check's stream is not used) only between rounds; prints per round
"HOSTCOST <lib> rung R round I: median X us, p10 Y, p90 Z (N calls)".
Usage: python3 scripts/lce/capi_host_cost.py LIB [--rung 4] [--calls 200] [--rounds 3] [--warmup 20]
Exit: 0, 1 (the library failed), 2 (bad arguments)."""
import argparse
import ctypes
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--rung", type=int, default=4)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=20)
    for k, v in (("m", 433), ("n", 256), ("k-user", 1178), ("k-cand", 866), ("b", 1024), ("per-user", 70)):
        ap.add_argument("--" + k, type=int, default=v)
    a = ap.parse_args()
    if a.calls < 1 or a.rounds < 1 or a.warmup < 0:
        ap.error("--calls and --rounds must be >= 1, --warmup >= 0")
    try:
        lib = ctypes.CDLL(os.path.abspath(a.lib))
    except OSError as e:
        print(f"capi_host_cost.py: {a.lib}: cannot load it: {e}", file=sys.stderr)
        return 2
    lib.lce_open.argtypes = [ctypes.c_int] * 7 + [ctypes.c_ulonglong, ctypes.POINTER(ctypes.c_void_p),
                                                  ctypes.c_char_p, ctypes.c_size_t]
    lib.lce_run.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.lce_close.argtypes = [ctypes.c_void_p]
    lib.lce_close.restype = None
    msg = ctypes.create_string_buffer(1024)
    h = ctypes.c_void_p()
    if lib.lce_open(a.m, a.n, a.k_user, a.k_cand, a.b, a.per_user, 0, 1, ctypes.byref(h), msg, len(msg)) != 0:
        print(f"capi_host_cost.py: {msg.value.decode(errors='replace')}", file=sys.stderr)
        return 1
    run, rung, stream, size = lib.lce_run, a.rung, ctypes.c_void_p(0), len(msg)
    cudart = None
    for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
        try:
            cudart = ctypes.CDLL(name)
            break
        except OSError:
            pass
    sync = cudart.cudaDeviceSynchronize if cudart else (lambda: 0)
    for _ in range(a.warmup):
        if run(h, rung, stream, msg, size) != 0:
            print(f"capi_host_cost.py: lce_run: {msg.value.decode(errors='replace')}", file=sys.stderr)
            return 1
    sync()
    for r in range(a.rounds):
        ts = []
        for _ in range(a.calls):
            t0 = time.perf_counter_ns()
            rc = run(h, rung, stream, msg, size)
            ts.append(time.perf_counter_ns() - t0)
            if rc != 0:
                print(f"capi_host_cost.py: lce_run: {msg.value.decode(errors='replace')}", file=sys.stderr)
                return 1
        sync()
        ts.sort()
        q = lambda f: ts[min(len(ts) - 1, int(f * len(ts)))] / 1e3
        print(f"HOSTCOST {os.path.basename(a.lib)} rung {rung} round {r}: median {statistics.median(ts) / 1e3:.2f} us, "
              f"p10 {q(0.1):.2f}, p90 {q(0.9):.2f} ({len(ts)} calls)", flush=True)
    lib.lce_close(h)
    return 0


if __name__ == "__main__":
    sys.exit(main())
