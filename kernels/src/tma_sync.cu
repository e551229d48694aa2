// Rung 2 — tma_sync.
// IDEA: the fast units, still no overlap. One warpgroup computes a 128x128 tile with
// wgmma tensor-core instructions reading shared memory, fed by the TMA copy engine into
// ONE buffer: thread 0 issues the k-step's two tile loads on an mbarrier, every warp waits
// for the data, issues its wgmmas, waits for them, and the CTA syncs before the buffer
// is refilled. Load and math take turns.
// Trace: warp 0 IssueLoad; every warp WaitData, MmaIssue, MmaWait, Sync per k-step; then
// Epilogue, Store.
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"

namespace ws::kern {
namespace r_tma_sync {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kTmaSyncBM, BN = kTmaSyncBN;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2;
constexpr int kSmem = kBytesA + kBytesB + 1024 + 128;  // + barrier area
constexpr int kWarps = kTmaSyncThreads / 32;

template <bool Traced>
__global__ void __launch_bounds__(kTmaSyncThreads) gemmTmaSync(const __grid_constant__ CUtensorMap tmA,
                                                               const __grid_constant__ CUtensorMap tmB,
                                                               __nv_bfloat16* __restrict__ C, int M, int N, int K,
                                                               void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    uint8_t* smem = alignSmem1024(smemRaw);
    uint8_t* sA = smem;
    uint8_t* sB = smem + kBytesA;
    uint64_t* full = reinterpret_cast<uint64_t*>(sB + kBytesB);
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    ws::trace::WarpTrace<Traced> wt;
    ws::trace::CtaTrace<Traced> ct;
    if constexpr (Traced) {
        ct.begin(trace);
        wt.begin(trace, tid / 32, tr::Worker, 0, 0,
                 reinterpret_cast<uint8_t*>(full) + 128 + (tid / 32) * ws::trace::kTraceSmemPerWarp);
        wt.event(tk::Setup);
    }
    if (tid == 0) {
        tmaPrefetchDesc(&tmA);
        tmaPrefetchDesc(&tmB);
        mbarInit(full, 1);
        fenceBarrierInit();
    }
    __syncthreads();

    float acc[2][BN / 2];  // no zeroing: the first k-step's wgmma overwrites (accumulate = 0)
    const int KT = (K + kBK - 1) / kBK;  // a partial last k-step: TMA zero-fills past K
    for (int kt = 0; kt < KT; ++kt) {
        if (Traced ? tid < 32 : tid == 0) {  // thread 0 issues; traced, all of warp 0 records (warp-uniform)
            uint64_t t = 0;
            if constexpr (Traced) t = wt.now();
            if (tid == 0) {
                mbarArriveExpectTx(full, kBytesA + kBytesB);
                tmaLoad2d(sA, &tmA, full, kt * kBK, m0);
                tmaLoad2d(sB, &tmB, full, kt * kBK, n0);
            }
            if constexpr (Traced) wt.eventAt(t, tk::IssueLoad, kt, 0);
        }
        if constexpr (Traced) wt.event(tk::WaitData, kt, 0);
        mbarWait(full, kt & 1);
        if constexpr (Traced) wt.event(tk::MmaIssue, kt, 0);
        wgmmaFence();
        mmaKStep<2, BN>(acc, smemAddr(sA), smemAddr(sB), kt > 0);
        wgmmaCommit();
        if constexpr (Traced) wt.event(tk::MmaWait, kt, 0);
        wgmmaWait<0>();
        fenceAcc(acc[0]);
        fenceAcc(acc[1]);
        uint64_t tSync = 0;
        if constexpr (Traced) tSync = wt.now();
        __syncthreads();  // every warpgroup member is done reading the buffer before it is refilled
        if constexpr (Traced) wt.eventAt(tSync, tk::Sync, kt, 0);
    }

    if constexpr (Traced) wt.event(tk::Store);
    storeAccBf16<BN>(acc[0], C, N, M, N, m0, n0, tid);
    storeAccBf16<BN>(acc[1], C, N, M, N, m0 + 64, n0, tid);
    if constexpr (Traced) {
        wt.end();
        ct.end(trace);
    }
}
}  // namespace r_tma_sync
using namespace r_tma_sync;

cudaError_t launchTmaSync(const LaunchArgs& a, const char** err)
{
    static thread_local std::string msg;
    CUtensorMap tmA, tmB;
    msg = encodeTmaK64(&tmA, a.a, a.m, a.k, BM);
    if (msg.empty()) msg = encodeTmaK64(&tmB, a.b, a.n, a.k, BN);
    if (!msg.empty()) {
        *err = msg.c_str();
        return cudaErrorInvalidValue;
    }
    auto* C = static_cast<__nv_bfloat16*>(a.c);
    const dim3 grid((a.n + BN - 1) / BN, (a.m + BM - 1) / BM);  // partial tiles at the edges
    auto kern = a.trace ? gemmTmaSync<true> : gemmTmaSync<false>;
    const int smem = kSmem + (a.trace ? kWarps * int(ws::trace::kTraceSmemPerWarp) : 0);
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    kern<<<grid, kTmaSyncThreads, smem, a.stream>>>(tmA, tmB, C, a.m, a.n, a.k, a.trace);
    return cudaGetLastError();
}

const void* kernelTmaSync(bool traced)
{
    return traced ? reinterpret_cast<const void*>(&gemmTmaSync<true>)
                  : reinterpret_cast<const void*>(&gemmTmaSync<false>);
}

}  // namespace ws::kern
