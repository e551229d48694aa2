// The host side that the TMA rungs 2-5 share (host code only; the kernels are the rungs' own): encode the two
// K-major tensor maps (boxes of BM and BN rows x 64 K), pick the traced or untraced instantiation, size the
// dynamic shared memory, launch. Rungs 6-7 have three tensor maps and their own launchers (pingpong.cu,
// streamk.cu).
#pragma once

#include <string>

#include "hopper.cuh"
#include "rungs.h"

namespace ws::kern {

// The kernel signature of rungs 2-5: (A's map, B's map, C, M, N, K, trace buffer or null).
using TmaRungKernel = void (*)(CUtensorMap, CUtensorMap, __nv_bfloat16*, int, int, int, void*);

// One CTA per output tile, blockIdx.x along N and blockIdx.y along M (partial tiles at the right and bottom).
inline dim3 tileGrid(const LaunchArgs& a, int bm, int bn) { return dim3((a.n + bn - 1) / bn, (a.m + bm - 1) / bm); }

// Encodes A's map (boxes of bm rows) and B's (bn rows), then launches `kern` on `grid` x `threads` with `smem`
// bytes of dynamic shared memory (the caller's SmemPlan::bytes(traced, warps)). A map that cannot be encoded comes
// back as cudaErrorInvalidValue with `err` set.
inline cudaError_t launchTmaRung(const LaunchArgs& a, const char** err, int bm, int bn, TmaRungKernel kern,
                                 dim3 grid, int threads, int smem)
{
    static thread_local std::string msg;
    CUtensorMap tmA, tmB;
    msg = encodeTmaK64(&tmA, a.a, a.m, a.k, bm);
    if (msg.empty()) msg = encodeTmaK64(&tmB, a.b, a.n, a.k, bn);
    if (!msg.empty()) {
        *err = msg.c_str();
        return cudaErrorInvalidValue;
    }
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    kern<<<grid, threads, smem, a.stream>>>(tmA, tmB, static_cast<__nv_bfloat16*>(a.c), a.m, a.n, a.k, a.trace);
    return cudaGetLastError();
}

// The kernel entry of a rung's traced or untraced instantiation (for cudaFuncGetName).
inline const void* kernelEntry(bool traced, TmaRungKernel tracedKern, TmaRungKernel untracedKern)
{
    return reinterpret_cast<const void*>(traced ? tracedKern : untracedKern);
}

}  // namespace ws::kern
