// Rung 7 — stream-K.
// IDEA: the last wave is split along K. Pingpong hands each cluster whole 256x256 pair tiles; when the
// tiles do not fill the machine evenly (256x4096x4096: 16 pair tiles on 66 clusters), most SMs sit idle
// through the whole run or the last wave. Here a work unit is (pair tile, k-begin, k-end): whole waves stay
// data-parallel, and the k-steps of the remaining tiles are divided evenly among ALL clusters, each taking a
// contiguous range that may cross tile boundaries (streamk_schedule.h, a pure host/device function).
// A cluster whose piece does not reach its tile's last k-step writes its fp32 partial (each warpgroup its
// 64x256 accumulators) to a workspace slot and releases a flag (the launch's epoch, st.release.gpu: no
// memset between launches); the cluster computing the tile's last k-steps (the finisher) acquires the
// flags of the earlier pieces (ld.acquire.gpu spin), adds their partials in cluster order (deterministic:
// traced = untraced bit for bit) and stores C. Each cluster walks its range backwards, so the pieces a
// finisher waits for are the first things their clusters compute.
// Everything else is pingpong's: CTA pairs sharing B by TMA multicast, two consumer warpgroups on
// vertically adjacent 64x256 tiles kept out of step, TMA-store epilogue, setmaxnreg.
// Trace: pingpong's events, plus, on a finisher, WaitOrder (waiting for the partials' flags) and Epilogue
// (adding the partials); TileBegin (kstep = tileM, aux = tileN) marks every unit. (Dedicated WaitPartial /
// Fixup phases: not yet, docs/kernel-notes.md.)
#include <cstring>
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "streamk_schedule.h"
#include "warpstage/trace_device.cuh"

namespace ws::kern {
namespace r_streamk {
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
constexpr int kFixBar0 = 5;  // named barriers 5, 6: warpgroup cw's partial written / flags seen
constexpr int kSlotFloats = 64 * BN;  // one warpgroup's fp32 partial
static_assert(kSkew >= 0 && kSkew < S, "the skew must leave warpgroup 0 a slot to wait on");
static_assert(kSmem + kWarps * ws::trace::kTraceSmemPerWarp <= 227 * 1024, "traced build must fit shared memory");

// The schedule and the fixup workspace (host: launchStreamk).
struct SkParams {
    sk::Plan plan;
    float* partials;   // per CTA and consumer warpgroup: one 64x256 fp32 partial (slot = blockIdx.x * 2 + cw)
    uint32_t* flags;   // per slot: the epoch of the launch whose partial the slot holds
    uint32_t epoch;    // this launch's (host counter, never 0)
};

__device__ __forceinline__ void flagRelease(uint32_t* f, uint32_t v)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(f), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t flagAcquire(const uint32_t* f)
{
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
    return v;
}

// The kernel's body, a template on tracing; the kernels below only call it. The tensor maps are the
// kernels' __grid_constant__ parameters, passed by reference (the TMA instructions take their addresses).
template <bool Traced>
__device__ __forceinline__ void streamkBody(const CUtensorMap& tmA, const CUtensorMap& tmB, const CUtensorMap& tmC,
                                            __nv_bfloat16* __restrict__ C, int M, int N, int K, void* trace,
                                            const SkParams& P)
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
    const int cluster = int(blockIdx.x) / CL;
    // partial tiles at the edges: TMA zero-fills the loads past M, N and K, and clips the stores
    const int pairsM = (M + BM * CL - 1) / (BM * CL), tilesN = (N + BN - 1) / BN;
    // the TMA store needs C's rows 16-byte aligned (N % 8 == 0); otherwise the clipped register stores
    const bool tmaStore = kTmaStore && (N & 7) == 0;
    // units of this cluster (the same for both CTAs): its data-parallel tiles, then its stream-K range backwards
    const sk::Plan& plan = P.plan;
    const int nDp = sk::dpCount(plan, cluster);
    const int nLocal = sk::unitCount(plan, cluster);
    sk::SkCursor cursor = sk::skBegin(plan, cluster);
    auto unitAt = [&](int i) {  // called with i = 0, 1, 2, ... in order
        sk::Unit u;
        if (i < nDp) u = sk::dpUnit(plan, cluster, i);
        else sk::skNext(plan, cursor, u);
        return u;
    };

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

    auto coords = [&](int tile, int& tm, int& tn) {
        int pm;
        tileCoords(tile, pairsM, tilesN, kGroupM / CL, pm, tn);
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
                const sk::Unit u = unitAt(i);
                int tm, tn;
                coords(u.tile, tm, tn);
                if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
                for (int kt = u.kb; kt < u.ke; ++kt, ++fill) {
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
        const int t = tid & 127;
        int fill = 0;
        for (int i = 0; i < nLocal; ++i) {
            const sk::Unit u = unitAt(i);
            const int KU = u.ke - u.kb;  // k-steps of this unit
            const int goAt = (KU < kSkew ? KU : kSkew) - 1;  // warpgroup 0 signals after issuing this k-step
            int tm, tn;
            coords(u.tile, tm, tn);
            if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
            if (kSkew > 0 && cw == 1) {  // wait until warpgroup 0 is kSkew k-steps into this tile
                if constexpr (Traced) wt.event(tk::WaitOrder, fill);
                namedBarSync(kGoBar, 256);
                if (i + 1 < nLocal) namedBarArrive(kTakenBar, 256);
            }
            float acc[1][BN / 2];  // first k-step overwrites (accumulate = 0)
            for (int kt = 0; kt < KU; ++kt, ++fill) {
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
            const int mySlot = int(blockIdx.x) * 2 + cw;
            if (u.ke != KT) {  // a piece short of the tile's last k-step: write the partial, raise the flag
                if constexpr (Traced) wt.event(tk::Store);
                float* dst = P.partials + size_t(mySlot) * kSlotFloats;
#pragma unroll
                for (int j = 0; j < BN / 2; ++j) __stcg(dst + j * 128 + t, acc[0][j]);
                namedBarSync(kFixBar0 + cw, 128);  // the warpgroup's 128 threads have written
                if (t == 0) {
                    __threadfence();
                    flagRelease(P.flags + mySlot, P.epoch);
                }
                if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
                continue;
            }
            if (u.kb > 0) {  // the finisher: add the earlier pieces' partials, in cluster order
                int first, lastC;
                sk::contributors(plan, u.tile, first, lastC);
                if constexpr (Traced) wt.event(tk::WaitOrder, fill);
                if (t == 0)
                    for (int c = first; c < lastC; ++c)
                        while (flagAcquire(P.flags + (c * CL + int(rank)) * 2 + cw) != P.epoch) {
                        }
                namedBarSync(kFixBar0 + cw, 128);
                if constexpr (Traced) wt.event(tk::Epilogue);
                for (int c = first; c < lastC; ++c) {
                    const float* src = P.partials + size_t((c * CL + int(rank)) * 2 + cw) * kSlotFloats;
#pragma unroll
                    for (int j = 0; j < BN / 2; ++j) acc[0][j] += __ldcg(src + j * 128 + t);
                }
            }
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
    gemmStreamk(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                const __grid_constant__ CUtensorMap tmC, __nv_bfloat16* __restrict__ C, int M, int N, int K,
                void* trace, const SkParams P)
{
    streamkBody<Traced>(tmA, tmB, tmC, C, M, N, K, trace, P);
}

}  // namespace r_streamk
using namespace r_streamk;

// The fixup workspace: grown on demand (flags zeroed when it grows), one per process; launches on one
// stream at a time (two concurrent launches would share the slots).
namespace {
float* g_partials = nullptr;
uint32_t* g_flags = nullptr;
size_t g_slots = 0;
uint32_t g_epoch = 0;

cudaError_t ensureWorkspace(size_t slots, cudaStream_t stream)
{
    if (slots <= g_slots) return cudaSuccess;
    if (g_partials) cudaFree(g_partials);
    if (g_flags) cudaFree(g_flags);
    g_partials = nullptr;
    g_flags = nullptr;
    g_slots = 0;
    cudaError_t e = cudaMalloc(&g_partials, slots * kSlotFloats * sizeof(float));
    if (e == cudaSuccess) e = cudaMalloc(&g_flags, slots * sizeof(uint32_t));
    if (e == cudaSuccess) e = cudaMemsetAsync(g_flags, 0, slots * sizeof(uint32_t), stream);  // before the kernel
    if (e == cudaSuccess) g_slots = slots;
    return e;
}
}  // namespace

cudaError_t launchStreamk(const LaunchArgs& a, const char** err)
{
    static thread_local std::string msg;
    CUtensorMap tmA, tmB, tmC;
    msg = encodeTmaK64(&tmA, a.a, a.m, a.k, BM);
    if (msg.empty()) msg = encodeTmaK64(&tmB, a.b, a.n, a.k, BN / CL);
    std::memset(&tmC, 0, sizeof tmC);
    if (msg.empty() && a.n % 8 == 0) msg = encodeTmaStoreSw64(&tmC, a.c, a.m, a.n, 64);
    if (!msg.empty()) {
        *err = msg.c_str();
        return cudaErrorInvalidValue;
    }
    SkParams P;
    const int pairsM = (a.m + BM * CL - 1) / (BM * CL), tilesN = (a.n + BN - 1) / BN;
    P.plan = sk::plan(pairsM * tilesN, (a.k + kBK - 1) / kBK, a.gridCtas / CL);
    cudaError_t e = P.plan.skIters > 0 ? ensureWorkspace(size_t(a.gridCtas) * 2, a.stream) : cudaSuccess;
    if (e != cudaSuccess) return e;
    P.partials = g_partials;
    P.flags = g_flags;
    if (++g_epoch == 0) ++g_epoch;  // 0 is the value of a fresh flag
    P.epoch = g_epoch;
    auto* C = static_cast<__nv_bfloat16*>(a.c);
    auto kern = a.trace ? gemmStreamk<true> : gemmStreamk<false>;
    const int smem = kSmem + (a.trace ? kWarps * int(ws::trace::kTraceSmemPerWarp) : 0);
    e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    kern<<<a.gridCtas, kPpThreads, smem, a.stream>>>(tmA, tmB, tmC, C, a.m, a.n, a.k, a.trace, P);
    return cudaGetLastError();
}

const void* kernelStreamk(bool traced)
{
    return traced ? reinterpret_cast<const void*>(&gemmStreamk<true>)
                  : reinterpret_cast<const void*>(&gemmStreamk<false>);
}

}  // namespace ws::kern
