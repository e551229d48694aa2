// Rung 3 — multistage.
// IDEA: software pipelining without specialization. A ring of 4 shared-memory stages is
// filled ahead of use by the same warps that compute: at the top of each k-step thread 0
// issues the TMA loads of the k-step 3 ahead into the stage the CTA just finished, then
// everyone waits for the current stage, runs wgmma on it, waits for the math, and syncs
// (the sync is what frees the stage for the next refill). Loads now fly while the tensor
// cores work, but each k-step still ends in a CTA-wide barrier.
// Tile 128x256: two warpgroups, each 64x256 (one m64n256k16 wgmma per k16).
// Trace: thread 0's warp IssueLoad (kstep = fill index, slot); every warp WaitData,
// MmaIssue, MmaWait, Sync per k-step; then Store.
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"

namespace ws::kern {
namespace r_multistage {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kMsBM, BN = kMsBN, S = kMsStages;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2, kStage = kBytesA + kBytesB;
constexpr int kSmem = S * kStage + 1024 + 128;  // + barrier area
constexpr int kWarps = kMsThreads / 32;

template <bool Traced>
__global__ void __launch_bounds__(kMsThreads, 1) gemmMultistage(const __grid_constant__ CUtensorMap tmA,
                                                                const __grid_constant__ CUtensorMap tmB,
                                                                __nv_bfloat16* __restrict__ C, int M, int N,
                                                                int K, void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    uint8_t* smem = alignSmem1024(smemRaw);
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + S * kStage);
    const int tid = threadIdx.x, wg = tid / 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int KT = (K + kBK - 1) / kBK;  // a partial last k-step: TMA zero-fills past K

    ws::trace::WarpTrace<Traced> wt;
    ws::trace::CtaTrace<Traced> ct;
    if constexpr (Traced) {
        ct.begin(trace);
        wt.begin(trace, tid / 32, tr::Worker, wg, wg,
                 reinterpret_cast<uint8_t*>(full) + 128 + (tid / 32) * ws::trace::kTraceSmemPerWarp);
        wt.event(tk::Setup);
    }
    if (tid == 0) {
        tmaPrefetchDesc(&tmA);
        tmaPrefetchDesc(&tmB);
        for (int s = 0; s < S; ++s) mbarInit(&full[s], 1);
        fenceBarrierInit();
    }
    __syncthreads();

    // called by thread 0 (traced: by all of warp 0, trace calls are warp-uniform); thread 0 issues
    auto issue = [&](int fill) {
        const int slot = fill % S;
        uint8_t* st = smem + slot * kStage;
        uint64_t t = 0;
        if constexpr (Traced) t = wt.now();
        if (tid == 0) {
            mbarArriveExpectTx(&full[slot], kStage);
            tmaLoad2d(st, &tmA, &full[slot], fill * kBK, m0);
            tmaLoad2d(st + kBytesA, &tmB, &full[slot], fill * kBK, n0);
        }
        if constexpr (Traced) wt.eventAt(t, tk::IssueLoad, fill, slot);
    };
    if (Traced ? tid < 32 : tid == 0)
        for (int f = 0; f < S - 1 && f < KT; ++f) issue(f);

    float acc[1][BN / 2];  // first k-step overwrites (accumulate = 0)
    for (int kt = 0; kt < KT; ++kt) {
        const int slot = kt % S;
        // the stage of k-step kt-1 is free (everyone passed the barrier below): refill it
        if ((Traced ? tid < 32 : tid == 0) && kt + S - 1 < KT) issue(kt + S - 1);
        if constexpr (Traced) wt.event(tk::WaitData, kt, slot);
        mbarWait(&full[slot], (kt / S) & 1);
        if constexpr (Traced) wt.event(tk::MmaIssue, kt, slot);
        const uint32_t st = smemAddr(smem + slot * kStage);
        wgmmaFence();
        mmaKStep<1, BN>(acc, st + wg * 64 * 128, st + kBytesA, kt > 0);
        wgmmaCommit();
        if constexpr (Traced) wt.event(tk::MmaWait, kt, slot);
        wgmmaWait<0>();
        fenceAcc(acc[0]);
        uint64_t tSync = 0;
        if constexpr (Traced) tSync = wt.now();
        __syncthreads();
        if constexpr (Traced) wt.eventAt(tSync, tk::Sync, kt, slot);
    }

    if constexpr (Traced) wt.event(tk::Store);
    storeAccBf16<BN>(acc[0], C, N, M, N, m0 + wg * 64, n0, tid & 127);
    if constexpr (Traced) {
        wt.end();
        ct.end(trace);
    }
}
}  // namespace r_multistage
using namespace r_multistage;

cudaError_t launchMultistage(const LaunchArgs& a, const char** err)
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
    auto kern = a.trace ? gemmMultistage<true> : gemmMultistage<false>;
    const int smem = kSmem + (a.trace ? kWarps * int(ws::trace::kTraceSmemPerWarp) : 0);
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    kern<<<grid, kMsThreads, smem, a.stream>>>(tmA, tmB, C, a.m, a.n, a.k, a.trace);
    return cudaGetLastError();
}

const void* kernelMultistage(bool traced)
{
    return traced ? reinterpret_cast<const void*>(&gemmMultistage<true>)
                  : reinterpret_cast<const void*>(&gemmMultistage<false>);
}

}  // namespace ws::kern
