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
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"

namespace ws::kern {
namespace r_cooperative {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kCoopBM, BN = kCoopBN, S = kCoopStages;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2, kStage = kBytesA + kBytesB;
constexpr int kSmem = S * kStage + 1024 + 128;  // + barrier area
constexpr int kWarps = kCoopThreads / 32;
constexpr int kConsumerWarps = 8;

template <bool Traced>
__global__ void __launch_bounds__(kCoopThreads, 1) gemmCooperative(const __grid_constant__ CUtensorMap tmA,
                                                                   const __grid_constant__ CUtensorMap tmB,
                                                                   __nv_bfloat16* __restrict__ C, int M, int N,
                                                                   int K, void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    uint8_t* smem = alignSmem1024(smemRaw);
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + S * kStage);
    uint64_t* empty = full + S;
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int KT = (K + kBK - 1) / kBK;  // a partial last k-step: TMA zero-fills past K
    const int tilesM = (M + BM - 1) / BM, tilesN = (N + BN - 1) / BN, numTiles = tilesM * tilesN;  // edge tiles partial

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
        setMaxNRegDec<40>();
        // producer: thread 0 issues; traced, all of warp 0 runs the loop (trace calls are warp-uniform)
        if (Traced ? warp == 0 : tid == 0) {
            int fill = 0;
            for (int tile = blockIdx.x; tile < numTiles; tile += gridDim.x) {
                int tm, tn;
                tileCoords(tile, tilesM, tilesN, kGroupM, tm, tn);
                if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
                for (int kt = 0; kt < KT; ++kt, ++fill) {
                    const int slot = fill % S;
                    uint64_t tWait = 0, tIssue = 0;
                    if (fill >= S) {
                        if constexpr (Traced) tWait = wt.now();
                        mbarWait(&empty[slot], ((fill / S) - 1) & 1);
                    }
                    if constexpr (Traced) tIssue = wt.now();
                    uint8_t* st = smem + slot * kStage;
                    if (tid == 0) {
                        mbarArriveExpectTx(&full[slot], kStage);
                        tmaLoad2d(st, &tmA, &full[slot], kt * kBK, tm * BM);
                        tmaLoad2d(st + kBytesA, &tmB, &full[slot], kt * kBK, tn * BN);
                    }
                    if constexpr (Traced) {  // stored after the expect_tx (a release): see WarpTrace::now
                        if (fill >= S) wt.eventAt(tWait, tk::WaitSlot, fill, slot);
                        wt.eventAt(tIssue, tk::IssueLoad, fill, slot);
                    }
                }
                if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
            }
        }
    } else {  // consumers
        setMaxNRegInc<232>();
        const int cw = wg - 1;
        int fill = 0;
        for (int tile = blockIdx.x; tile < numTiles; tile += gridDim.x) {
            int tm, tn;
            tileCoords(tile, tilesM, tilesN, kGroupM, tm, tn);
            if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
            float acc[1][BN / 2];  // first k-step overwrites (accumulate = 0)
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int slot = fill % S;
                if constexpr (Traced) wt.event(tk::WaitData, fill, slot);
                mbarWait(&full[slot], (fill / S) & 1);
                if constexpr (Traced) wt.event(tk::MmaIssue, fill, slot);
                const uint32_t st = smemAddr(smem + slot * kStage);
                wgmmaFence();
                mmaKStep<1, BN>(acc, st + cw * 64 * 128, st + kBytesA, kt > 0);
                wgmmaCommit();
                if (kt > 0) {
                    const int prev = fill - 1;
                    if constexpr (Traced) wt.event(tk::MmaWait, prev, prev % S);
                    wgmmaWait<1>();
                    uint64_t tRel = 0;
                    if constexpr (Traced) tRel = wt.now();
                    if (laneId() == 0) mbarArrive(&empty[prev % S]);
                    if constexpr (Traced) wt.eventAt(tRel, tk::Release, prev, prev % S);
                }
            }
            const int last = fill - 1;
            if constexpr (Traced) wt.event(tk::MmaWait, last, last % S);
            wgmmaWait<0>();
            fenceAcc(acc[0]);
            uint64_t tRel = 0;
            if constexpr (Traced) tRel = wt.now();
            if (laneId() == 0) mbarArrive(&empty[last % S]);
            if constexpr (Traced) wt.eventAt(tRel, tk::Release, last, last % S);
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
    static thread_local std::string msg;
    CUtensorMap tmA, tmB;
    msg = encodeTmaK64(&tmA, a.a, a.m, a.k, BM);
    if (msg.empty()) msg = encodeTmaK64(&tmB, a.b, a.n, a.k, BN);
    if (!msg.empty()) {
        *err = msg.c_str();
        return cudaErrorInvalidValue;
    }
    auto* C = static_cast<__nv_bfloat16*>(a.c);
    auto kern = a.trace ? gemmCooperative<true> : gemmCooperative<false>;
    const int smem = kSmem + (a.trace ? kWarps * int(ws::trace::kTraceSmemPerWarp) : 0);
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    kern<<<a.gridCtas, kCoopThreads, smem, a.stream>>>(tmA, tmB, C, a.m, a.n, a.k, a.trace);
    return cudaGetLastError();
}

const void* kernelCooperative(bool traced)
{
    return traced ? reinterpret_cast<const void*>(&gemmCooperative<true>)
                  : reinterpret_cast<const void*>(&gemmCooperative<false>);
}

}  // namespace ws::kern
