// Rung 4 — warp_specialized.
// IDEA: give loading and computing to different warps. Warp 0 (the producer) only issues
// TMA loads into a 4-slot ring; two consumer warpgroups only run wgmma. Each slot has a
// "full" mbarrier (the TMA completes its bytes on it) and an "empty" mbarrier (every
// consumer warp arrives once it no longer needs the slot). No CTA-wide barrier remains in
// the main loop: the producer runs ahead until the ring is full, and consumers keep one
// k-step of wgmma in flight while they wait for the next slot.
// Tile 128x256 per CTA (each consumer warpgroup 64x256), one tile per CTA.
// Trace: producer WaitSlot / IssueLoad per k-step; consumers WaitData / MmaIssue /
// MmaWait / Release per k-step, then Store. Warps 1-3 of the producer warpgroup are Idle.
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"

namespace ws::kern {
namespace r_warp_specialized {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kWsBM, BN = kWsBN, S = kWsStages;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2, kStage = kBytesA + kBytesB;
constexpr int kSmem = S * kStage + 1024 + 128;  // + barrier area
constexpr int kWarps = kWsThreads / 32;
constexpr int kConsumerWarps = 8;

template <bool Traced>
__global__ void __launch_bounds__(kWsThreads, 1) gemmWarpSpecialized(const __grid_constant__ CUtensorMap tmA,
                                                                     const __grid_constant__ CUtensorMap tmB,
                                                                     __nv_bfloat16* __restrict__ C, int M,
                                                                     int N, int K, void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    uint8_t* smem = alignSmem1024(smemRaw);
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + S * kStage);
    uint64_t* empty = full + S;
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int KT = (K + kBK - 1) / kBK;  // a partial last k-step: TMA zero-fills past K

    ws::trace::WarpTrace<Traced> wt;
    ws::trace::CtaTrace<Traced> ct;
    if constexpr (Traced) {
        ct.begin(trace);
        const uint8_t role = wg > 0 ? tr::Consumer : (warp == 0 ? tr::Producer : tr::Idle);
        wt.begin(trace, warp, role, wg, wg > 0 ? wg - 1 : 0,
                 reinterpret_cast<uint8_t*>(full) + 128 + warp * ws::trace::kTraceSmemPerWarp);
        wt.event(tk::Setup);
    }
    if (tid == 0) {
        tmaPrefetchDesc(&tmA);
        tmaPrefetchDesc(&tmB);
        for (int s = 0; s < S; ++s) {
            mbarInit(&full[s], 1);
            mbarInit(&empty[s], kConsumerWarps);
        }
        fenceBarrierInit();
    }
    __syncthreads();

    if (wg == 0) {
        // producer: thread 0 issues; traced, all of warp 0 runs the loop (trace calls are warp-uniform)
        if (Traced ? warp == 0 : tid == 0) {
            for (int kt = 0; kt < KT; ++kt) {
                const int slot = kt % S;
                uint64_t tWait = 0, tIssue = 0;
                if (kt >= S) {
                    if constexpr (Traced) tWait = wt.now();
                    mbarWait(&empty[slot], ((kt / S) - 1) & 1);
                }
                if constexpr (Traced) tIssue = wt.now();
                uint8_t* st = smem + slot * kStage;
                if (tid == 0) {
                    mbarArriveExpectTx(&full[slot], kStage);
                    tmaLoad2d(st, &tmA, &full[slot], kt * kBK, m0);
                    tmaLoad2d(st + kBytesA, &tmB, &full[slot], kt * kBK, n0);
                }
                if constexpr (Traced) {  // stored after the expect_tx (a release): see WarpTrace::now
                    if (kt >= S) wt.eventAt(tWait, tk::WaitSlot, kt, slot);
                    wt.eventAt(tIssue, tk::IssueLoad, kt, slot);
                }
            }
        }
    } else {  // consumers
        const int cw = wg - 1;
        float acc[1][BN / 2];
        for (int kt = 0; kt < KT; ++kt) {
            const int slot = kt % S;
            if constexpr (Traced) wt.event(tk::WaitData, kt, slot);
            mbarWait(&full[slot], (kt / S) & 1);
            if constexpr (Traced) wt.event(tk::MmaIssue, kt, slot);
            const uint32_t st = smemAddr(smem + slot * kStage);
            wgmmaFence();
            mmaKStep<1, BN>(acc, st + cw * 64 * 128, st + kBytesA, kt > 0);
            wgmmaCommit();
            if (kt > 0) {
                if constexpr (Traced) wt.event(tk::MmaWait, kt - 1, (kt - 1) % S);
                wgmmaWait<1>();  // k-step kt-1 done; kt stays in flight
                uint64_t tRel = 0;
                if constexpr (Traced) tRel = wt.now();
                if (laneId() == 0) mbarArrive(&empty[(kt - 1) % S]);
                if constexpr (Traced) wt.eventAt(tRel, tk::Release, kt - 1, (kt - 1) % S);
            }
        }
        if constexpr (Traced) wt.event(tk::MmaWait, KT - 1, (KT - 1) % S);
        wgmmaWait<0>();
        fenceAcc(acc[0]);
        uint64_t tRel = 0;
        if constexpr (Traced) tRel = wt.now();
        if (laneId() == 0) mbarArrive(&empty[(KT - 1) % S]);
        if constexpr (Traced) wt.eventAt(tRel, tk::Release, KT - 1, (KT - 1) % S);
        if constexpr (Traced) wt.event(tk::Store);
        storeAccBf16<BN>(acc[0], C, N, M, N, m0 + cw * 64, n0, tid & 127);
    }
    if constexpr (Traced) {
        wt.end();
        ct.end(trace);
    }
}
}  // namespace r_warp_specialized
using namespace r_warp_specialized;

cudaError_t launchWarpSpecialized(const LaunchArgs& a, const char** err)
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
    auto kern = a.trace ? gemmWarpSpecialized<true> : gemmWarpSpecialized<false>;
    const int smem = kSmem + (a.trace ? kWarps * int(ws::trace::kTraceSmemPerWarp) : 0);
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    kern<<<grid, kWsThreads, smem, a.stream>>>(tmA, tmB, C, a.m, a.n, a.k, a.trace);
    return cudaGetLastError();
}

const void* kernelWarpSpecialized(bool traced)
{
    return traced ? reinterpret_cast<const void*>(&gemmWarpSpecialized<true>)
                  : reinterpret_cast<const void*>(&gemmWarpSpecialized<false>);
}

}  // namespace ws::kern
