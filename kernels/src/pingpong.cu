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
#include <cstring>
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"

namespace ws::kern {
namespace r_pingpong {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kPpBM, BN = kPpBN, S = kPpStages, CL = kPpCluster, kSkew = kPpSkew;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2, kStage = kBytesA + kBytesB;
constexpr uint32_t kPartB = kBytesB / CL;  // the part of the B block each CTA of the pair loads
#ifndef WS_PP_TMA_STORE
#define WS_PP_TMA_STORE 1
#endif
constexpr bool kTmaStore = WS_PP_TMA_STORE;
// TMA-store epilogue (storeAccTmaBf16): each warpgroup writes its 64x256 tile as 8 boxes of 64x32
// through two 4 KB staging buffers of its own.
constexpr uint32_t kEpiBox = kStoreBoxBytes;
constexpr uint32_t kEpiBytes = kTmaStore ? 2 * 2 * kEpiBox : 0;  // 2 warpgroups x 2 buffers
constexpr int kSmem = S * kStage + kEpiBytes + 1024 + 128;        // + alignment + barrier area
constexpr int kWarps = kPpThreads / 32;
constexpr int kConsumerWarps = 8;
constexpr int kGoBar = 1;    // named barrier: "warpgroup 1 may start tile i" (warpgroup 0 has issued kSkew k-steps)
constexpr int kTakenBar = 2; // named barrier: "warpgroup 1 has taken its go for tile i" (keeps the two in step)
constexpr int kEpiBar0 = 3;  // named barriers 3, 4: warpgroup cw's epilogue steps
static_assert(kSkew >= 0 && kSkew < S, "the skew must leave warpgroup 0 a slot to wait on");
static_assert(kSmem + kWarps * ws::trace::kTraceSmemPerWarp <= 227 * 1024, "traced build must fit shared memory");

// The kernel's body, a template on tracing; the kernels below only call it. The tensor maps are the
// kernels' __grid_constant__ parameters, passed by reference (the TMA instructions take their addresses).
template <bool Traced>
__device__ __forceinline__ void pingpongBody(const CUtensorMap& tmA, const CUtensorMap& tmB, const CUtensorMap& tmC,
                                             __nv_bfloat16* __restrict__ C, int M, int N, int K, void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    uint8_t* smem = alignSmem1024(smemRaw);
    uint8_t* staging = smem + S * kStage;  // kEpiBytes of epilogue staging (TMA store)
    uint64_t* full = reinterpret_cast<uint64_t*>(staging + kEpiBytes);
    uint64_t* empty = full + S;
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int KT = (K + kBK - 1) / kBK;  // a partial last k-step: TMA zero-fills past K
    const uint32_t rank = CL > 1 ? clusterCtaRank() : 0u;
    const uint32_t peer = rank ^ 1u;
    const int cluster = int(blockIdx.x) / CL, numClusters = int(gridDim.x) / CL;
    // partial tiles at the edges: TMA zero-fills the loads past M, N and K, and clips the stores
    const int pairsM = (M + BM * CL - 1) / (BM * CL), tilesN = (N + BN - 1) / BN, numPairs = pairsM * tilesN;
    // the TMA store needs C's rows 16-byte aligned (N % 8 == 0); otherwise the clipped register stores
    const bool tmaStore = kTmaStore && (N & 7) == 0;
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
        if (tmaStore) tmaPrefetchDesc(&tmC);
        for (int s = 0; s < S; ++s) {
            mbarInit(&full[s], 1);
            mbarInit(&empty[s], kConsumerWarps * CL);  // the 8 consumer warps, in both CTAs
        }
        fenceBarrierInit();
    }
    clusterSync();  // the peer's barriers are initialised before anyone signals them

    auto coords = [&](int i, int& tm, int& tn) {
        int pm;
        tileCoords(cluster + i * numClusters, pairsM, tilesN, kGroupM / CL, pm, tn);
        tm = pm * CL + int(rank);
    };

    if (wg == 0) {
        setMaxNRegDec<40>();
        // Untraced, warps 1-3 have nothing to do: they leave now rather than sit at the final
        // cluster barrier (which waits only for threads that have not exited) for the whole
        // kernel, where the stall pass would sample them. Traced, they stay for the CTA record.
        if constexpr (!Traced)
            if (warp != 0) return;
        // producer: thread 0 issues; traced, all of warp 0 runs the loop (trace calls are warp-uniform)
        if (Traced ? warp == 0 : tid == 0) {
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
                        tmaLoad2d(st, &tmA, &full[slot], kt * kBK, tm * BM);
                        if constexpr (CL > 1)
                            tmaLoad2dMulticast(st + kBytesA + rank * kPartB, &tmB, &full[slot], kt * kBK,
                                               tn * BN + int(rank) * (BN / CL), uint16_t((1u << CL) - 1));
                        else
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
    } else {  // consumers: warpgroup cw owns rows 64*cw.. of every block
        setMaxNRegInc<232>();
        const int cw = wg - 1;
        const bool lane0 = laneId() == 0;
        const int goAt = (KT < kSkew ? KT : kSkew) - 1;  // warpgroup 0 signals after issuing this k-step
        int fill = 0;
        for (int i = 0; i < nLocal; ++i) {
            int tm, tn;
            coords(i, tm, tn);
            if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
            if (kSkew > 0 && cw == 1) {  // wait until warpgroup 0 is kSkew k-steps into this tile
                if constexpr (Traced) wt.event(tk::WaitOrder, fill);
                namedBarSync(kGoBar, 256);
                if (i + 1 < nLocal) namedBarArrive(kTakenBar, 256);
            }
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
                if (kSkew > 0 && cw == 0 && kt == goAt) {  // let warpgroup 1 start this tile
                    if (i > 0) {  // ... once it has taken the previous go (never two gos pending)
                        if constexpr (Traced) wt.event(tk::WaitOrder, fill);
                        namedBarSync(kTakenBar, 256);
                    }
                    namedBarArrive(kGoBar, 256);
                }
                if (kt > 0) {
                    const int prev = fill - 1;
                    if constexpr (Traced) wt.event(tk::MmaWait, prev, prev % S);
                    wgmmaWait<1>();
                    uint64_t tRel = 0;
                    if constexpr (Traced) tRel = wt.now();
                    if (lane0) {
                        mbarArrive(&empty[prev % S]);
                        if constexpr (CL > 1) mbarArriveCluster(&empty[prev % S], peer);
                    }
                    if constexpr (Traced) wt.eventAt(tRel, tk::Release, prev, prev % S);
                }
            }
            const int last = fill - 1;
            if constexpr (Traced) wt.event(tk::MmaWait, last, last % S);
            wgmmaWait<0>();
            fenceAcc(acc[0]);
            uint64_t tRel = 0;
            if constexpr (Traced) tRel = wt.now();
            if (lane0) {
                mbarArrive(&empty[last % S]);
                if constexpr (CL > 1) mbarArriveCluster(&empty[last % S], peer);
            }
            if constexpr (Traced) wt.eventAt(tRel, tk::Release, last, last % S);
            if constexpr (Traced) wt.event(tk::Store);
            if (tmaStore)
                storeAccTmaBf16<BN>(acc[0], &tmC, staging + cw * 2 * kEpiBox, tm * BM + cw * 64, tn * BN,
                                    tid & 127, kEpiBar0 + cw);
            else
                storeAccBf16<BN>(acc[0], C, N, M, N, tm * BM + cw * 64, tn * BN, tid & 127);
            if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
        }
        if (tmaStore)
            if ((tid & 127) == kStoreIssuer) bulkWait<0>();  // every bulk store of this warpgroup has landed in C
    }
    if constexpr (Traced) {
        wt.end();
        ct.end(trace);
    }
    clusterSync();  // no CTA leaves while its peer may still signal its barriers
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
    msg = encodeTmaK64(&tmA, a.a, a.m, a.k, BM);
    if (msg.empty()) msg = encodeTmaK64(&tmB, a.b, a.n, a.k, BN / CL);
    // C's map exists only where TMA can store (rows a multiple of 16 bytes); otherwise the kernel stores
    // from registers (same test there: N % 8) and never reads tmC.
    std::memset(&tmC, 0, sizeof tmC);
    if (msg.empty() && a.n % 8 == 0) msg = encodeTmaStoreSw64(&tmC, a.c, a.m, a.n, 64);
    if (!msg.empty()) {
        *err = msg.c_str();
        return cudaErrorInvalidValue;
    }
    auto* C = static_cast<__nv_bfloat16*>(a.c);
    // a.instrumented: the kernel that carries both bodies and picks one by the buffer (null: not recording)
    const bool inst = a.trace != nullptr || a.instrumented;
    auto kern = a.instrumented ? gemmPingpongDispatch : a.trace ? gemmPingpong<true> : gemmPingpong<false>;
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
