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
// Built from the shared pieces: common/smem_plan.cuh (the carve), common/ring.cuh (producer waitSlot / issueLoad,
// consumer waitData / release: the slot maths and parities), common/mma.cuh (the k-step), hopper.cuh's
// storeAccBf16 (the epilogue) and tma_rung_launch.cuh (the host side). The consumer loop -- wait, issue,
// wait for k-1, release k-1, then the drain -- is the rung's idea and stays spelled out here.
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"  // before the common pieces: the ladder's trace layer (no module symbols)
#include "common/mma.cuh"
#include "common/ring.cuh"
#include "common/smem_plan.cuh"
#include "tma_rung_launch.cuh"

namespace ws::kern {
namespace r_warp_specialized {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kWsBM, BN = kWsBN, S = kWsStages;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2, kStage = kBytesA + kBytesB;
using Plan = SmemPlan<kStage, S>;
using WsRing = Ring<S, 1, /*ReadyMarker=*/false>;
constexpr int kWarps = kWsThreads / 32;
constexpr int kConsumerWarps = 8;

template <bool Traced>
__global__ void __launch_bounds__(kWsThreads, 1) gemmWarpSpecialized(const __grid_constant__ CUtensorMap tmA,
                                                                     const __grid_constant__ CUtensorMap tmB,
                                                                     __nv_bfloat16* __restrict__ C, int M,
                                                                     int N, int K, void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    const Plan smem(smemRaw);
    WsRing ring;
    ring.full = smem.full();
    ring.empty = smem.empty();
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int KT = (K + kBK - 1) / kBK;  // a partial last k-step: TMA zero-fills past K

    ws::trace::WarpTrace<Traced> wt;
    ws::trace::CtaTrace<Traced> ct;
    if constexpr (Traced) {
        ct.begin(trace);
        const uint8_t role = wg > 0 ? tr::Consumer : (warp == 0 ? tr::Producer : tr::Idle);
        wt.begin(trace, warp, role, wg, wg > 0 ? wg - 1 : 0, smem.traceStaging(warp));
        wt.event(tk::Setup);
    }
    if (tid == 0) {
        tmaPrefetchDesc(&tmA);
        tmaPrefetchDesc(&tmB);
        ring.init(kConsumerWarps);  // empty: one arrival per consumer warp
    }
    __syncthreads();

    if (wg == 0) {
        // producer: thread 0 issues; traced, all of warp 0 runs the loop (trace calls are warp-uniform)
        if (Traced ? warp == 0 : tid == 0) {
            for (int kt = 0; kt < KT; ++kt) {
                const uint64_t tWait = ring.waitSlot(kt, wt);
                ring.issueLoad(kt, tWait, kStage, tid == 0, wt, [&](int slot, uint64_t* bar) {
                    uint8_t* st = smem.stage(slot);
                    tmaLoad2d(st, &tmA, bar, kt * kBK, m0);
                    tmaLoad2d(st + kBytesA, &tmB, bar, kt * kBK, n0);
                });
            }
        }
    } else {  // consumers
        const int cw = wg - 1;
        float acc[1][BN / 2];
        for (int kt = 0; kt < KT; ++kt) {
            const int slot = WsRing::slot(kt);
            ring.waitData(kt, wt);
            const uint32_t st = smemAddr(smem.stage(slot));
            mmaIssueBf16<1, BN>(acc, st + cw * 64 * 128, st + kBytesA, kt == 0, kt, slot, wt);
            if (kt > 0) {
                mmaWait<1>(kt - 1, WsRing::slot(kt - 1), wt);  // k-step kt-1 done; kt stays in flight
                ring.release(kt - 1, laneId() == 0, wt);
            }
        }
        mmaWait<0>(KT - 1, WsRing::slot(KT - 1), wt);  // drain: the last k-step
        fenceAcc(acc[0]);
        ring.release(KT - 1, laneId() == 0, wt);
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
    return launchTmaRung(a, err, BM, BN, a.trace ? gemmWarpSpecialized<true> : gemmWarpSpecialized<false>,
                         tileGrid(a, BM, BN), kWsThreads, Plan::bytes(a.trace != nullptr, kWarps));
}

const void* kernelWarpSpecialized(bool traced)
{
    return kernelEntry(traced, gemmWarpSpecialized<true>, gemmWarpSpecialized<false>);
}

}  // namespace ws::kern
