// Rung 2 — tma_sync.
// IDEA: the fast units, still no overlap. One warpgroup computes a 128x128 tile with
// wgmma tensor-core instructions reading shared memory, fed by the TMA copy engine into
// ONE buffer: thread 0 issues the k-step's two tile loads on an mbarrier, every warp waits
// for the data, issues its wgmmas, waits for them, and the CTA syncs before the buffer
// is refilled. Load and math take turns.
// Trace: warp 0 IssueLoad; every warp WaitData, MmaIssue, MmaWait, Sync per k-step; then
// Epilogue, Store.
// Built from the shared pieces: common/smem_plan.cuh (the carve), common/ring.cuh as a ring of ONE stage
// freed by the CTA barrier (initFull, issueLoad without a slot wait, waitData), common/mma.cuh (the k-step),
// hopper.cuh's storeAccBf16 (the epilogue) and tma_rung_launch.cuh (the host side). The loop stays here.
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"  // before the common pieces: the ladder's trace layer (no module symbols)
#include "common/mma.cuh"
#include "common/ring.cuh"
#include "common/smem_plan.cuh"
#include "tma_rung_launch.cuh"

namespace ws::kern {
namespace r_tma_sync {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kTmaSyncBM, BN = kTmaSyncBN;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2;
using Plan = SmemPlan<kBytesA + kBytesB, 1>;  // one buffer: A's tile, then B's
using OneBuffer = Ring<1, 1, /*ReadyMarker=*/false>;
constexpr int kWarps = kTmaSyncThreads / 32;

template <bool Traced>
__global__ void __launch_bounds__(kTmaSyncThreads) gemmTmaSync(const __grid_constant__ CUtensorMap tmA,
                                                               const __grid_constant__ CUtensorMap tmB,
                                                               __nv_bfloat16* __restrict__ C, int M, int N, int K,
                                                               void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    const Plan smem(smemRaw);
    uint8_t* sA = smem.stage(0);
    uint8_t* sB = sA + kBytesA;
    OneBuffer buf;
    buf.full = smem.full();
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    ws::trace::WarpTrace<Traced> wt;
    ws::trace::CtaTrace<Traced> ct;
    if constexpr (Traced) {
        ct.begin(trace);
        wt.begin(trace, tid / 32, tr::Worker, 0, 0, smem.traceStaging(tid / 32));
        wt.event(tk::Setup);
    }
    if (tid == 0) {
        tmaPrefetchDesc(&tmA);
        tmaPrefetchDesc(&tmB);
        buf.initFull();
    }
    __syncthreads();

    float acc[2][BN / 2];  // no zeroing: the first k-step's wgmma overwrites (accumulate = 0)
    const int KT = (K + kBK - 1) / kBK;  // a partial last k-step: TMA zero-fills past K
    for (int kt = 0; kt < KT; ++kt) {
        if (Traced ? tid < 32 : tid == 0)  // thread 0 issues; traced, all of warp 0 records (warp-uniform)
            buf.issueLoad(kt, kBytesA + kBytesB, tid == 0, wt, [&](int, uint64_t* bar) {
                tmaLoad2d(sA, &tmA, bar, kt * kBK, m0);
                tmaLoad2d(sB, &tmB, bar, kt * kBK, n0);
            });
        buf.waitData(kt, wt);
        mmaIssueBf16<2, BN>(acc, smemAddr(sA), smemAddr(sB), kt == 0, kt, 0, wt);
        mmaWait<0>(kt, 0, wt);
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
    return launchTmaRung(a, err, BM, BN, a.trace ? gemmTmaSync<true> : gemmTmaSync<false>, tileGrid(a, BM, BN),
                         kTmaSyncThreads, Plan::bytes(a.trace != nullptr, kWarps));
}

const void* kernelTmaSync(bool traced) { return kernelEntry(traced, gemmTmaSync<true>, gemmTmaSync<false>); }

}  // namespace ws::kern
