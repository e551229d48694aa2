// Rung 6 — pingpong.
// IDEA: the two consumer warpgroups work on DIFFERENT tiles and are kept out of step, so
// that one's epilogue can run while the other keeps the tensor cores busy: warpgroup 1 starts
// every tile kPpSkew k-steps after warpgroup 0 (an ordering barrier per tile). (Measured: the
// ring's 4 shared stages allow only this short head start, and most of it dissolves during the
// tile: warpgroup 1's store begins a median 0.24 us after warpgroup 0's; docs/kernel-notes.md.)
// The epilogue is a TMA store: the warpgroup converts its accumulators to bf16 into a small
// shared-memory staging buffer, box by box, and the TMA engine writes each box to C while the
// warpgroup goes on to its next tile. Rung 5's register-to-global stores keep both warpgroups
// busy ~3x longer per tile, tensor cores idle: that is where this rung's speed comes from.
// The tiles: each warpgroup owns a 64x256 output tile; the CTA's two tiles sit on top of
// each other, so they share each k-step's B block in the ring. (A textbook pingpong with a
// whole 128x128 tile per warpgroup reads ~25% more shared memory per FLOP: it ran at 0.87x
// rung 5 on the H200, docs/kernel-notes.md.)
// What else it takes: CTA pairs (clusters of 2) compute vertically adjacent 128x256 blocks
// that share their B block; each CTA's producer loads half of it and multicasts it to both
// CTAs (TMA .multicast::cluster), so B's L2 traffic halves. A slot is free only when the
// consumers of BOTH CTAs released it. Persistent grid of clusters, grouped tile order for
// L2, setmaxnreg (producer 40, consumers 232).
// Trace: TileBegin/TileEnd markers (kstep = tileM, aux = tileN); consumers WaitOrder (the
// ordering barrier), WaitData / MmaIssue / MmaWait / Release per k-step, Store (staging the
// TMA store); producer WaitSlot / IssueLoad. kstep is the CTA-wide fill counter.
// Where: the body (roles, ring, ordering barrier, drain, store) is pingpong_body.cuh, shared with rung 7;
// this file is the rung's walk (whole pair tiles) and its launcher.
#include <cstdlib>
#include <cstring>
#include <string>

#include "pingpong_body.cuh"

namespace ws::kern {
namespace r_pingpong {
using namespace pp;

// The whole rung: the ping-pong body (pingpong_body.cuh) over pingpong's tile walk (every cluster takes whole
// pair tiles cluster, cluster + clusters, ...) with the plain store as its epilogue.
template <bool Traced>
__device__ __forceinline__ void pingpongBody(const CUtensorMap& tmA, const CUtensorMap& tmB, const CUtensorMap& tmC,
                                             __nv_bfloat16* __restrict__ C, int M, int N, int K, void* trace)
{
    const DpWalk walk{int(blockIdx.x) / CL, int(gridDim.x) / CL, pairsM(M) * tilesN(N), (K + kBK - 1) / kBK};
    StoreC store;
    body<Traced>(tmA, tmB, tmC, C, M, N, trace, walk, store);
}

template <bool Traced>
__global__ void __cluster_dims__(kPpCluster, 1, 1) __launch_bounds__(kPpThreads, 1)
    gemmPingpong(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                 const __grid_constant__ CUtensorMap tmC, __nv_bfloat16* __restrict__ C, int M, int N, int K,
                 void* trace)
{
    pingpongBody<Traced>(tmA, tmB, tmC, C, M, N, K, trace);
}

// Instrumented once, recording or not at run time: the kernel decides once, at its start, which body runs
// (a null buffer: the untraced body, no trace instruction on its path; a buffer: the traced body). This is
// the pattern docs/your-kernels.md recommends where even ~1% matters: the per-event checks of the header's
// runtime path cost the top rung 1.06-1.13% when not recording (device log, session 5).
__global__ void __cluster_dims__(kPpCluster, 1, 1) __launch_bounds__(kPpThreads, 1)
    gemmPingpongDispatch(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                         const __grid_constant__ CUtensorMap tmC, __nv_bfloat16* __restrict__ C, int M, int N,
                         int K, void* trace)
{
    if (trace != nullptr)
        pingpongBody<true>(tmA, tmB, tmC, C, M, N, K, trace);
    else
        pingpongBody<false>(tmA, tmB, tmC, C, M, N, K, trace);
}
}  // namespace r_pingpong
using namespace r_pingpong;

int pingpongMaxClusters()
{
    static int cached = -1;
    if (cached >= 0) return cached;
    int n = 0;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(CL * 256, 1, 1);
    cfg.blockDim = dim3(kPpThreads, 1, 1);
    cfg.dynamicSmemBytes = kSmem;
    if (cudaFuncSetAttribute(gemmPingpong<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem) == cudaSuccess
        && cudaOccupancyMaxActiveClusters(&n, gemmPingpong<false>, &cfg) == cudaSuccess && n > 0)
        cached = n;
    else {
        cudaGetLastError();
        cached = 0;  // unknown: the caller falls back to SMs / 2
    }
    return cached;
}

cudaError_t launchPingpong(const LaunchArgs& a, const char** err)
{
    static thread_local std::string msg;
    CUtensorMap tmA, tmB, tmC;
    msg = encodeMaps(a, tmA, tmB, tmC);
    if (!msg.empty()) {
        *err = msg.c_str();
        return cudaErrorInvalidValue;
    }
    auto* C = static_cast<__nv_bfloat16*>(a.c);
    // a.instrumented: the kernel that carries both bodies and picks one by the buffer (null: not recording)
    const bool inst = a.trace != nullptr || a.instrumented;
    // WARPSTAGE_PINGPONG_IDLE=traced (session 14, s14-tracestruct): --idle-cost launches the traced body itself with the
    // null buffer (every trace call on its path, as streamk's idle launch), not the dispatch kernel (the untraced body)
    static const bool idleTraced = [] {
        const char* e = std::getenv("WARPSTAGE_PINGPONG_IDLE");
        return e && std::strcmp(e, "traced") == 0;
    }();
    auto kern = a.instrumented ? (idleTraced ? gemmPingpong<true> : gemmPingpongDispatch)
                               : a.trace ? gemmPingpong<true> : gemmPingpong<false>;
    const int smem = kSmem + (inst ? kWarps * int(ws::trace::kTraceSmemPerWarp) : 0);
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    kern<<<a.gridCtas, kPpThreads, smem, a.stream>>>(tmA, tmB, tmC, C, a.m, a.n, a.k, a.trace);
    return cudaGetLastError();
}

const void* kernelPingpong(bool traced)
{
    return traced ? reinterpret_cast<const void*>(&gemmPingpong<true>)
                  : reinterpret_cast<const void*>(&gemmPingpong<false>);
}

}  // namespace ws::kern
