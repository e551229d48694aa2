// Rung 6 — pingpong.
// IDEA: two consumer warpgroups on DIFFERENT tiles, taking turns. Each consumer warpgroup
// owns a whole 128x128 tile (two m64n128k16 wgmmas per k16). The producer loads the
// CTA's tiles in order into one 6-slot ring; consumer warpgroup 0 takes the even local
// tiles, warpgroup 1 the odd ones. An ordering barrier (a pair of named barriers) lets
// only one warpgroup issue its main loop at a time: when warpgroup 0 has issued the last
// wgmma of its tile it signals warpgroup 1, which starts its main loop while warpgroup 0
// waits for its math and writes its epilogue. So one tile's epilogue overlaps the other
// tile's tensor-core work, and the tensor cores never wait for an epilogue.
// What else it takes: CTA pairs (clusters of 2) work on horizontally adjacent tiles that
// share their A block; each CTA's producer loads half of that A block and multicasts it to
// both CTAs (TMA .multicast::cluster), halving A's L2 traffic. A slot is free only when the
// consumers of BOTH CTAs released it (each consumer warp arrives on the local and on the
// peer's empty barrier). Persistent grid of clusters, grouped tile order for L2,
// setmaxnreg (producer 40, consumers 232).
// Trace: TileBegin/TileEnd markers (kstep = tileM, aux = tileN); consumers WaitOrder
// (waiting for their turn), WaitData / MmaIssue / MmaWait / Release per k-step, Store;
// producer WaitSlot / IssueLoad. kstep is the CTA-wide fill counter.
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"

namespace ws::kern {
namespace r_pingpong {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kPpBM, BN = kPpBN, S = kPpStages, CL = kPpCluster;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2, kStage = kBytesA + kBytesB;
constexpr uint32_t kHalfA = kBytesA / CL;  // the part of the A block each CTA of the pair loads
constexpr int kSmem = S * kStage + 1024 + 128;  // + barrier area
constexpr int kWarps = kPpThreads / 32;
constexpr int kOrderBar0 = 1;  // named barrier ids 1, 2: "consumer warpgroup w may start its main loop"
#ifndef WS_PP_INFLIGHT
#define WS_PP_INFLIGHT 1
#endif
constexpr int kInFlight = WS_PP_INFLIGHT;  // k-steps of wgmma left in flight while waiting
static_assert(kInFlight >= 1 && kInFlight < S, "the ring must hold the k-steps in flight");

template <bool Traced>
__global__ void __cluster_dims__(kPpCluster, 1, 1) __launch_bounds__(kPpThreads, 1)
    gemmPingpong(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                 __nv_bfloat16* __restrict__ C, int M, int N, int K, void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    uint8_t* smem = alignSmem1024(smemRaw);
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + S * kStage);
    uint64_t* empty = full + S;
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int KT = K / kBK;
    const uint32_t rank = CL > 1 ? clusterCtaRank() : 0u;
    const uint32_t peer = rank ^ 1u;
    const int cluster = int(blockIdx.x) / CL, numClusters = int(gridDim.x) / CL;
    const int tilesM = M / BM, pairsN = N / (BN * CL), numPairs = tilesM * pairsN;
    // pair tiles of this cluster: cluster + i * numClusters, i < nLocal (the same for both CTAs)
    const int nLocal = (numPairs - cluster + numClusters - 1) / numClusters;

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
            mbarInit(&empty[s], 4 * CL);  // the 4 warps of the consuming warpgroup, in both CTAs
        }
        fenceBarrierInit();
    }
    clusterSync();  // the peer's barriers are initialised before anyone signals them

    auto coords = [&](int i, int& tm, int& tn) {
        int pn;
        tileCoords(cluster + i * numClusters, tilesM, pairsN, kGroupM, tm, pn);
        tn = pn * CL + int(rank);
    };

    if (wg == 0) {
        setMaxNRegDec<40>();
        // producer: thread 0 issues; traced, all of warp 0 runs the loop (trace calls are warp-uniform)
        if (Traced ? warp == 0 : tid == 0) {  // every local tile, in order
            int fill = 0;
            for (int i = 0; i < nLocal; ++i) {
                int tm, tn;
                coords(i, tm, tn);
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
                        if constexpr (CL > 1)
                            tmaLoad2dMulticast(st + rank * kHalfA, &tmA, &full[slot], kt * kBK,
                                               tm * BM + int(rank) * (BM / CL), uint16_t((1u << CL) - 1));
                        else
                            tmaLoad2d(st, &tmA, &full[slot], kt * kBK, tm * BM);
                        tmaLoad2d(st + kBytesA, &tmB, &full[slot], kt * kBK, tn * BN);
                    }
                    if constexpr (Traced) {  // written after the expect_tx (a release): see WarpTrace::now
                        if (fill >= S) wt.eventAt(tWait, tk::WaitSlot, fill, slot);
                        wt.eventAt(tIssue, tk::IssueLoad, fill, slot);
                    }
                }
                if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
            }
        }
    } else {  // consumers: warpgroup cw takes local tiles i = cw, cw + 2, ...
        setMaxNRegInc<232>();
        const int cw = wg - 1;
        const int tIn = tid & 127;
        const bool lane0 = laneId() == 0;
        for (int i = cw; i < nLocal; i += 2) {
            int tm, tn;
            coords(i, tm, tn);
            if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
            if (i > 0) {  // wait for the other warpgroup to finish issuing its main loop
                if constexpr (Traced) wt.event(tk::WaitOrder, i * KT);
                namedBarSync(kOrderBar0 + cw, 256);
            }
            float acc[2][BN / 2];  // first k-step overwrites (accumulate = 0)
            int fill = i * KT;
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int slot = fill % S;
                if constexpr (Traced) wt.event(tk::WaitData, fill, slot);
                mbarWait(&full[slot], (fill / S) & 1);
                if constexpr (Traced) wt.event(tk::MmaIssue, fill, slot);
                const uint32_t st = smemAddr(smem + slot * kStage);
                wgmmaFence();
                mmaKStep<2, BN>(acc, st, st + kBytesA, kt > 0);
                wgmmaCommit();
                if (kt >= kInFlight) {  // keep kInFlight k-steps of wgmma queued behind this one
                    const int prev = fill - kInFlight;
                    if constexpr (Traced) wt.event(tk::MmaWait, prev, prev % S);
                    wgmmaWait<kInFlight>();
                    uint64_t tRel = 0;
                    if constexpr (Traced) tRel = wt.now();
                    if (lane0) {
                        mbarArrive(&empty[prev % S]);
                        if constexpr (CL > 1) mbarArriveCluster(&empty[prev % S], peer);
                    }
                    if constexpr (Traced) wt.eventAt(tRel, tk::Release, prev, prev % S);
                }
            }
            // main loop issued: the other warpgroup may start its tile (if it has one)
            if (i + 1 < nLocal) namedBarArrive(kOrderBar0 + (1 - cw), 256);
            // drain: the last min(kInFlight, KT) fills are still to be waited for and released
            const int first = fill - (KT < kInFlight ? KT : kInFlight);
            if constexpr (Traced) wt.event(tk::MmaWait, first, first % S);
            wgmmaWait<0>();
            fenceAcc(acc[0]);
            fenceAcc(acc[1]);
            for (int f = first; f < fill; ++f) {
                uint64_t tRel = 0;
                if constexpr (Traced) tRel = wt.now();
                if (lane0) {
                    mbarArrive(&empty[f % S]);
                    if constexpr (CL > 1) mbarArriveCluster(&empty[f % S], peer);
                }
                if constexpr (Traced) wt.eventAt(tRel, tk::Release, f, f % S);
            }
            if constexpr (Traced) wt.event(tk::Store);
            storeAccBf16<BN>(acc[0], C, N, tm * BM, tn * BN, tIn);
            storeAccBf16<BN>(acc[1], C, N, tm * BM + 64, tn * BN, tIn);
            if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
        }
    }
    if constexpr (Traced) {
        wt.end();
        ct.end(trace);
    }
    clusterSync();  // no CTA leaves while its peer may still signal its barriers
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
    CUtensorMap tmA, tmB;
    msg = encodeTmaK64(&tmA, a.a, a.m, a.k, BM / CL);
    if (msg.empty()) msg = encodeTmaK64(&tmB, a.b, a.n, a.k, BN);
    if (!msg.empty()) {
        *err = msg.c_str();
        return cudaErrorInvalidValue;
    }
    auto* C = static_cast<__nv_bfloat16*>(a.c);
    auto kern = a.trace ? gemmPingpong<true> : gemmPingpong<false>;
    const int smem = kSmem + (a.trace ? kWarps * int(ws::trace::kTraceSmemPerWarp) : 0);
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    kern<<<a.gridCtas, kPpThreads, smem, a.stream>>>(tmA, tmB, C, a.m, a.n, a.k, a.trace);
    return cudaGetLastError();
}

const void* kernelPingpong(bool traced)
{
    return traced ? reinterpret_cast<const void*>(&gemmPingpong<true>)
                  : reinterpret_cast<const void*>(&gemmPingpong<false>);
}

}  // namespace ws::kern
