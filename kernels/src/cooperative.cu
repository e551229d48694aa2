// Rung 5 — cooperative.
// IDEA: a persistent grid and a register shift. One CTA per SM walks output tiles (grouped
// order, so concurrently running CTAs share A and B blocks in L2) instead of one CTA per
// tile: the ring and barriers are set up once, and the producer already loads the next
// tile while the consumers run the epilogue of the current one. The producer warpgroup
// gives registers away with setmaxnreg.dec (40 per thread) and the two consumer
// warpgroups, which share each 128x256 tile (64x256 each), take them with setmaxnreg.inc
// (232 per thread), so the 128 fp32 accumulators per thread fit without spilling.
// Trace: TileBegin/TileEnd markers around each tile (kstep = tileM, aux = tileN); producer
// WaitSlot / IssueLoad; consumers WaitData / MmaIssue / MmaWait / Release, then Store.
// kstep is the CTA-wide fill counter, running across tiles.
// Built from the shared pieces: common/smem_plan.cuh (the carve), common/ring.cuh (producer waitSlot / issueLoad,
// consumer waitData / release: the slot maths and parities over the CTA-wide fill counter), common/mma.cuh (the
// k-step), hopper.cuh's tileCoords (the grouped order) and storeAccBf16 (the epilogue), tma_rung_launch.cuh (the
// host side). The persistent tile walk and the register shift -- the rung's idea -- stay here.
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"  // before the common pieces: the ladder's trace layer (no module symbols)
#include "common/mma.cuh"
#include "common/ring.cuh"
#include "common/smem_plan.cuh"
#include "tma_rung_launch.cuh"

namespace ws::kern {
namespace r_cooperative {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kCoopBM, BN = kCoopBN, S = kCoopStages;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2, kStage = kBytesA + kBytesB;
using Plan = SmemPlan<kStage, S>;
using CoopRing = Ring<S, 1, /*ReadyMarker=*/false>;
constexpr int kWarps = kCoopThreads / 32;
constexpr int kConsumerWarps = 8;

template <bool Traced>
__global__ void __launch_bounds__(kCoopThreads, 1) gemmCooperative(const __grid_constant__ CUtensorMap tmA,
                                                                   const __grid_constant__ CUtensorMap tmB,
                                                                   __nv_bfloat16* __restrict__ C, int M, int N,
                                                                   int K, void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    const Plan smem(smemRaw);
    CoopRing ring;
    ring.full = smem.full();
    ring.empty = smem.empty();
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int KT = (K + kBK - 1) / kBK;  // a partial last k-step: TMA zero-fills past K
    const int tilesM = (M + BM - 1) / BM, tilesN = (N + BN - 1) / BN, numTiles = tilesM * tilesN;  // edge tiles partial

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
        setMaxNRegDec<40>();
        // producer: thread 0 issues; traced, all of warp 0 runs the loop (trace calls are warp-uniform)
        if (Traced ? warp == 0 : tid == 0) {
            int fill = 0;
            for (int tile = blockIdx.x; tile < numTiles; tile += gridDim.x) {
                int tm, tn;
                tileCoords(tile, tilesM, tilesN, kGroupM, tm, tn);
                if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
                for (int kt = 0; kt < KT; ++kt, ++fill) {
                    const uint64_t tWait = ring.waitSlot(fill, wt);
                    ring.issueLoad(fill, tWait, kStage, tid == 0, wt, [&](int slot, uint64_t* bar) {
                        uint8_t* st = smem.stage(slot);
                        tmaLoad2d(st, &tmA, bar, kt * kBK, tm * BM);
                        tmaLoad2d(st + kBytesA, &tmB, bar, kt * kBK, tn * BN);
                    });
                }
                if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
            }
        }
    } else {  // consumers
        setMaxNRegInc<232>();
        const int cw = wg - 1;
        const bool lane0 = laneId() == 0;
        int fill = 0;
        for (int tile = blockIdx.x; tile < numTiles; tile += gridDim.x) {
            int tm, tn;
            tileCoords(tile, tilesM, tilesN, kGroupM, tm, tn);
            if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
            float acc[1][BN / 2];  // first k-step overwrites (accumulate = 0)
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int slot = CoopRing::slot(fill);
                ring.waitData(fill, wt);
                const uint32_t st = smemAddr(smem.stage(slot));
                mmaIssueBf16<1, BN>(acc, st + cw * 64 * 128, st + kBytesA, kt == 0, fill, slot, wt);
                if (kt > 0) {  // one k-step in flight: the previous one's slot is free once its wgmmas are done
                    mmaWait<1>(fill - 1, CoopRing::slot(fill - 1), wt);
                    ring.release(fill - 1, lane0, wt);
                }
            }
            mmaWait<0>(fill - 1, CoopRing::slot(fill - 1), wt);  // drain: the tile's last k-step
            fenceAcc(acc[0]);
            ring.release(fill - 1, lane0, wt);
            if constexpr (Traced) wt.event(tk::Store);
            storeAccBf16<BN>(acc[0], C, N, M, N, tm * BM + cw * 64, tn * BN, tid & 127);
            if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
        }
    }
    if constexpr (Traced) {
        wt.end();
        ct.end(trace);
    }
}
}  // namespace r_cooperative
using namespace r_cooperative;

cudaError_t launchCooperative(const LaunchArgs& a, const char** err)
{
    return launchTmaRung(a, err, BM, BN, a.trace ? gemmCooperative<true> : gemmCooperative<false>,
                         dim3(a.gridCtas), kCoopThreads, Plan::bytes(a.trace != nullptr, kWarps));
}

const void* kernelCooperative(bool traced)
{
    return kernelEntry(traced, gemmCooperative<true>, gemmCooperative<false>);
}

}  // namespace ws::kern
