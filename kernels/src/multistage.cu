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
// Built from the shared pieces: common/smem_plan.cuh (the carve), common/ring.cuh as a ring freed by the CTA
// barrier (initFull, issueLoad without a slot wait, waitData: the slot maths and parities), common/mma.cuh (the
// k-step), hopper.cuh's storeAccBf16 (the epilogue) and tma_rung_launch.cuh (the host side). The refill
// placement -- the rung's idea -- stays here.
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"  // before the common pieces: the ladder's trace layer (no module symbols)
#include "common/mma.cuh"
#include "common/ring.cuh"
#include "common/smem_plan.cuh"
#include "tma_rung_launch.cuh"

namespace ws::kern {
namespace r_multistage {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kMsBM, BN = kMsBN, S = kMsStages;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2, kStage = kBytesA + kBytesB;
using Plan = SmemPlan<kStage, S>;
using MsRing = Ring<S, 1, /*ReadyMarker=*/false>;
constexpr int kWarps = kMsThreads / 32;

template <bool Traced>
__global__ void __launch_bounds__(kMsThreads, 1) gemmMultistage(const __grid_constant__ CUtensorMap tmA,
                                                                const __grid_constant__ CUtensorMap tmB,
                                                                __nv_bfloat16* __restrict__ C, int M, int N,
                                                                int K, void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    const Plan smem(smemRaw);
    MsRing ring;
    ring.full = smem.full();
    const int tid = threadIdx.x, wg = tid / 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int KT = (K + kBK - 1) / kBK;  // a partial last k-step: TMA zero-fills past K

    ws::trace::WarpTrace<Traced> wt;
    ws::trace::CtaTrace<Traced> ct;
    if constexpr (Traced) {
        ct.begin(trace);
        wt.begin(trace, tid / 32, tr::Worker, wg, wg, smem.traceStaging(tid / 32));
        wt.event(tk::Setup);
    }
    if (tid == 0) {
        tmaPrefetchDesc(&tmA);
        tmaPrefetchDesc(&tmB);
        ring.initFull();
    }
    __syncthreads();

    // called by thread 0 (traced: by all of warp 0, trace calls are warp-uniform); thread 0 issues
    auto issue = [&](int fill) {
        ring.issueLoad(fill, kStage, tid == 0, wt, [&](int slot, uint64_t* bar) {
            uint8_t* st = smem.stage(slot);
            tmaLoad2d(st, &tmA, bar, fill * kBK, m0);
            tmaLoad2d(st + kBytesA, &tmB, bar, fill * kBK, n0);
        });
    };
    if (Traced ? tid < 32 : tid == 0)
        for (int f = 0; f < S - 1 && f < KT; ++f) issue(f);

    float acc[1][BN / 2];  // first k-step overwrites (accumulate = 0)
    for (int kt = 0; kt < KT; ++kt) {
        const int slot = MsRing::slot(kt);
        // the stage of k-step kt-1 is free (everyone passed the barrier below): refill it
        if ((Traced ? tid < 32 : tid == 0) && kt + S - 1 < KT) issue(kt + S - 1);
        ring.waitData(kt, wt);
        const uint32_t st = smemAddr(smem.stage(slot));
        mmaIssueBf16<1, BN>(acc, st + wg * 64 * 128, st + kBytesA, kt == 0, kt, slot, wt);
        mmaWait<0>(kt, slot, wt);
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
    return launchTmaRung(a, err, BM, BN, a.trace ? gemmMultistage<true> : gemmMultistage<false>,
                         tileGrid(a, BM, BN), kMsThreads, Plan::bytes(a.trace != nullptr, kWarps));
}

const void* kernelMultistage(bool traced)
{
    return kernelEntry(traced, gemmMultistage<true>, gemmMultistage<false>);
}

}  // namespace ws::kern
