// The kernel body of rungs 3 and 4 (epilogue_warp.cu, user_first.cu): ONE loop for both. Rung 4 is rung 3 with the
// user stage (UserStage = true): U = W_user . E_user's tiles are the first units of the same persistent walk.
// Tiles: cooperative 128 (M) x 256 (N) per CTA, each consumer warpgroup 64 rows; CTA pairs on vertically adjacent
// M tiles of one candidate, each CTA's producer loading half of the E tile and multicasting it to both. Warp 0: the
// producer; warp 1: the epilogue warp (EpilogueWarp, kernels/src/common/epilogue_warp.cuh: U TMA-loaded into the
// staging half ahead of time, the consumers add their accumulators to it in shared memory and hand it over, the
// warp TMA-stores it); warps 2-3 idle; warps 4-11 the two consumer warpgroups.
// Rung 4's user tiles go through the staging too: the consumers hand over fp16(acc) (epilogueStage), the epilogue warp
// TMA-stores the half into U, waits until the stores are complete and releases one ready flag per (user, M tile,
// N tile, half) (storeHalfPublish); the epilogue warp of a candidate tile acquires the flag of the half it is about
// to load (waitOrderFlag). (Session 5's consumers stored user tiles from registers, ~7 us per tile with neither
// warpgroup issuing MMAs; through the staging rung 4's sweep is ~3 % faster, docs/benchmarks.md.)
// No deadlock: every CTA pair is resident (the host refuses otherwise), each walks its units in increasing order with
// user units first (which wait for no flag), and only the epilogue warp waits for a flag, never holding ring slots.
// Template: S ring stages of 64-deep k-steps; Epi = false: a diagnostic without the candidate epilogue (output wrong;
// its user tiles are stored from registers by the consumers, storeAccF16, and published by them). NoLoad = true
// (with Epi = false; s8-lcespeed): a second diagnostic whose producer issues no TMA loads (each fill completes on the
// producer's arrive alone): the MMAs, ring barriers and walk without any memory traffic, i.e. what the main loop
// would take if loads were free.
// Trace: producer WaitSlot / IssueLoad; consumers WaitData / MmaIssue / MmaWait / Release per k-step, WaitOrder +
// Epilogue per tile; epilogue warp WaitData / Store / WaitOrder / Load per half; tile markers tileM = b * mTiles + tm,
// tileN = tn (+ 1000 for user tiles). Consumer lanes: "consumer WG0" / "consumer WG1".
#pragma once

#include <warpstage/trace.cuh>

#include <string>

#include "../src/common/epilogue.cuh"
#include "../src/common/epilogue_warp.cuh"
#include "../src/common/mma.cuh"
#include "../src/common/ring.cuh"
#include "../src/common/smem_plan.cuh"
#include "../src/common/tma.cuh"
#include "lce_rungs.h"

namespace ws::lce::epiwarp {
using namespace ws::kern;
namespace wt = ws::trace;

constexpr int BM = 128, BN = 256, BK = 64, CL = 2, kThreads = 384, kWarps = kThreads / 32, kConsumerWarps = 8;
using Staging = EpilogueStaging<BN>;
constexpr uint32_t kUserBar0 = 1;  // named barriers 1, 2: warpgroup cw's user-tile store
static_assert(BM == kUfTileM && BN == kUfTileN && CL == kUfCluster, "the walk of lce_shape.h is this kernel's");

constexpr uint32_t kBytesA = BM * BK * 2, kBoxB = 64 * BK * 2;  // W: 128 rows x 64 K; E: one 64 (N) x 64 (K) box
constexpr uint32_t kStage = kBytesA + BN / 64 * kBoxB;
template <int S, bool Epi>
using PlanOf = SmemPlan<kStage, S, Epi ? Staging::kBytes : 0u>;

struct Params {
    int M, N, kUser, kCand, userUnits, units, mTiles, mUnits, nTiles, epoch;
};
struct Unit {
    bool user;
    int b, tm, tn, K;  // b: the user (user tiles) or the candidate
};
// Unit u: user units first; inside each part (M unit of CL tiles, N tile, batch), M fastest; this CTA's M tile is
// the M unit's `rank`-th.
__device__ __forceinline__ Unit unitAt(int u, const Params& p, uint32_t rank)
{
    Unit x;
    x.user = u < p.userUnits;
    const int i = x.user ? u : u - p.userUnits;
    x.tm = (i % p.mUnits) * CL + int(rank);
    const int r = i / p.mUnits;
    x.tn = r % p.nTiles;
    x.b = r / p.nTiles;
    x.K = x.user ? p.kUser : p.kCand;
    return x;
}
// One flag per (user, M tile, N tile, half) (lce_shape.h: userFirstWalk).
__device__ __forceinline__ int flagIndex(const Params& p, int user, int tm, int tn, int cw)
{
    return ((user * p.mTiles + tm) * p.nTiles + tn) * 2 + cw;
}

template <int S, bool UserStage, bool Epi, bool NoLoad = false>
__device__ __forceinline__ void body(const CUtensorMap& tmWu, const CUtensorMap& tmEu, const CUtensorMap& tmWc,
                                     const CUtensorMap& tmEc, const CUtensorMap& tmU, const CUtensorMap& tmOut,
                                     __half* __restrict__ U, const int32_t* __restrict__ userOf,
                                     int* __restrict__ flags, const Params& p)
{
    static_assert(2 * S + Staging::kBarriers <= 16, "ring + epilogue barriers fit the barrier area");
    constexpr bool UserStaged = UserStage && Epi;  // user tiles through the staging (else register stores)
    using Plan = PlanOf<S, Epi>;
    extern __shared__ uint8_t smemRaw[];
    const Plan plan(smemRaw);
    Ring<S, CL> ring{plan.full(), plan.empty()};
    const uint32_t rank = clusterCtaRank();
    ring.peer = rank ^ 1u;
    const Staging staging(plan.epiStaging(), plan.empty() + S);
    wt::Cta cta;
    cta.pipeline(S, kStage);
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int cluster = int(blockIdx.x) / CL, clusters = int(gridDim.x) / CL;
    if (tid == 0) {
        if constexpr (UserStage) {
            tmaPrefetchDesc(&tmWu);
            tmaPrefetchDesc(&tmEu);
        }
        tmaPrefetchDesc(&tmWc);
        tmaPrefetchDesc(&tmEc);
        tmaPrefetchDesc(&tmU);
        tmaPrefetchDesc(&tmOut);
        staging.init();
        ring.init(kConsumerWarps);  // (its fenceBarrierInit covers the staging's barriers)
    }
    clusterSync();

    if (wg == 0) {
        setMaxNRegDec<40>();
        if (warp == 0) {  // producer
            wt::Warp<wt::Staged> w(cta, wt::role::Producer, 0, 0, wt::kNoUserRole, plan.traceStaging(0));
            const bool issuer = laneId() == 0;
            int fill = 0;
            for (int u = cluster; u < p.units; u += clusters) {
                const Unit x = unitAt(u, p, rank);
                const CUtensorMap* tmA = x.user ? &tmWu : &tmWc;
                const CUtensorMap* tmB = x.user ? &tmEu : &tmEc;
                w.tileBegin(x.b * p.mTiles + x.tm, int16_t(x.tn + (x.user ? 1000 : 0)));
                const int KT = (x.K + BK - 1) / BK;
                for (int kt = 0; kt < KT; ++kt, ++fill) {
                    const uint64_t tWait = ring.waitSlot(fill, w);
                    ring.issueLoad(fill, tWait, NoLoad ? 0u : kStage, issuer, w, [&](int s, uint64_t* bar) {
                        if constexpr (NoLoad) return;
                        uint8_t* st = plan.stage(s);
                        tmaLoad2d(st, tmA, bar, kt * BK, x.tm * BM);
                        constexpr int kBoxes = BN / 64 / CL;
#pragma unroll
                        for (int i = 0; i < kBoxes; ++i) {
                            const int q = int(rank) * kBoxes + i;
                            tmaLoad3dMulticast(st + kBytesA + q * kBoxB, tmB, bar, x.tn * BN + q * 64, kt * BK, x.b,
                                               uint16_t((1u << CL) - 1));
                        }
                    });
                }
                w.tileEnd();
            }
            w.end();
        } else if (warp == 1) {  // the epilogue warp: lane 0 issues, the whole warp runs the loop (trace calls)
            wt::Warp<wt::Staged> w(cta, wt::role::Epilogue, 0, 0, wt::kNoUserRole, plan.traceStaging(1));
            EpilogueWarp<BN> ew{staging, &tmOut, &tmU, laneId() == 0};
            for (int u = cluster; u < p.units; u += clusters) {
                const Unit x = unitAt(u, p, rank);
                if (!Epi || (x.user && !UserStaged)) continue;  // (else the consumers store user tiles themselves)
                w.tileBegin(x.b * p.mTiles + x.tm, int16_t(x.tn + (x.user ? 1000 : 0)));
                if (UserStaged && x.user) {  // into U[user] itself, then the half's ready flag
                    for (int cw = 0; cw < 2; ++cw)
                        if (x.tm * BM + cw * 64 < p.M)
                            ew.nextPublished(cw, x.tn * BN, x.tm * BM + cw * 64, x.b,
                                             &flags[flagIndex(p, x.b, x.tm, x.tn, cw)], p.epoch, w);
                    w.tileEnd();
                    continue;
                }
                const int user = userOf[x.b];
                for (int cw = 0; cw < 2; ++cw) {
                    if (x.tm * BM + cw * 64 >= p.M) continue;  // that warpgroup has no rows here: no epilogue
                    ew.next(cw, x.tn * BN, x.tm * BM + cw * 64, x.b, x.tn * BN, x.tm * BM + cw * 64, user,
                            [&](int n) {  // rung 4: U[user]'s rows of this half are published by their warpgroup
                                if constexpr (UserStage)
                                    waitOrderFlag(&flags[flagIndex(p, user, x.tm, x.tn, cw)], p.epoch, ew.issuer, n,
                                                  uint8_t(cw), w);
                            },
                            w);
                }
                w.tileEnd();
            }
            ew.finish(w);
            w.end();
        } else {  // warps 2-3: nothing to do; while recording they stay for the CTA record
            if (!cta.recording()) return;
            wt::Warp<wt::Staged> idle(cta, wt::role::Idle, 0, uint8_t(warp), wt::kNoUserRole, plan.traceStaging(warp));
            idle.end();
            cta.end();
            return;
        }
    } else {
        setMaxNRegInc<232>();
        const int cw = wg - 1, tInWg = tid & 127;
        // roleIndex = the consumer warpgroup (the lane reads "consumer WG0" / "consumer WG1")
        wt::Warp<wt::Staged> w(cta, wt::role::Consumer, uint8_t(wg), uint8_t(cw), wt::kNoUserRole,
                               plan.traceStaging(warp));
        const bool lane0 = laneId() == 0;
        const size_t mn = size_t(p.M) * p.N;
        int fill = 0, done = 0;
        for (int u = cluster; u < p.units; u += clusters) {
            const Unit x = unitAt(u, p, rank);
            w.tileBegin(x.b * p.mTiles + x.tm, int16_t(x.tn + (x.user ? 1000 : 0)));
            const bool active = x.tm * BM + cw * 64 < p.M;
            const int KT = (x.K + BK - 1) / BK;
            float acc[BN / 2];
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int s = Ring<S, CL>::slot(fill);
                ring.waitData(fill, w);
                const uint32_t st = smemAddr(plan.stage(s));
                if (active) mmaIssue<BN>(acc, st + cw * 64 * BK * 2, st + kBytesA, kt == 0, fill, s, w);
                if (kt > 0) {
                    mmaWait<1>(fill - 1, Ring<S, CL>::slot(fill - 1), w);
                    ring.release(fill - 1, lane0, w);
                }
            }
            mmaWait<0>(fill - 1, Ring<S, CL>::slot(fill - 1), w);
            fenceAcc(acc);
            ring.release(fill - 1, lane0, w);
            if (UserStage && x.user && !UserStaged) {
                if (active) {  // store this warpgroup's 64 rows of the user tile, then publish them
                    storeAccF16<BN>(acc, U + x.b * mn, p.N, p.M, p.N, x.tm * BM + cw * 64, x.tn * BN, tInWg, NoFuse{},
                                    w);
                    fenceProxyAsyncGlobal();  // the generic writes above, for the async proxy (the readers' TMA)
                    __threadfence();
                    storeBarrier(kUserBar0 + cw);
                    if (tInWg == 0) releaseFlag(&flags[flagIndex(p, x.b, x.tm, x.tn, cw)], p.epoch);
                }
            } else if (Epi && active) {
                staging.waitOrderStaged(cw, done, w);  // U's tile is in the half (and the last store read it)
                if (UserStaged && x.user) staging.epilogueStage(acc, cw, done, tInWg, w);  // the half is free
                else staging.epilogueAdd(acc, cw, done, tInWg, w);
                ++done;
            }
            w.tileEnd();
        }
        w.end();
    }
    cta.end();
    clusterSync();
}

// Host: the tensor maps both rungs use (W boxes of 64 (K) x 128 rows and E boxes of 64 (N) x 64 (K), 128-byte
// swizzle; U / out boxes of 32 x 64, 64-byte swizzle).
struct Maps {
    CUtensorMap wUser, eUser, wCand, eCand, u, out;
};
inline std::string encodeMaps(const Problem& p, bool userStage, Maps& m)
{
    const Shape& s = p.s;
    auto map2 = [&](CUtensorMap* t, const __half* base, int kp) {
        const uint64_t dims[2] = {uint64_t(kp), uint64_t(s.m)};
        const uint64_t strides[1] = {uint64_t(kp) * 2};
        const uint32_t box[2] = {BK, BM};
        return encodeTmaF16(t, base, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    };
    auto map3 = [&](CUtensorMap* t, const void* base, int inner, int mid, int outer, uint32_t b0, uint32_t b1,
                    CUtensorMapSwizzle sw) {
        const uint64_t dims[3] = {uint64_t(inner), uint64_t(mid), uint64_t(outer)};
        const uint64_t strides[2] = {uint64_t(inner) * 2, uint64_t(mid) * inner * 2};
        const uint32_t box[3] = {b0, b1, 1};
        return encodeTmaF16(t, base, 3, dims, strides, box, sw);
    };
    std::string err = map2(&m.wCand, p.wCandP, p.kCandP);
    if (err.empty()) err = map3(&m.eCand, p.eCand, s.n, s.kCand, s.b, 64, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    if (err.empty() && userStage) err = map2(&m.wUser, p.wUserP, p.kUserP);
    if (err.empty() && userStage)
        err = map3(&m.eUser, p.eUser, s.n, s.kUser, p.users, 64, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    if (!userStage) {
        m.wUser = m.wCand;
        m.eUser = m.eCand;
    }
    if (err.empty()) err = map3(&m.u, p.u, s.n, s.m, p.users, uint32_t(kStoreBoxCols), 64, CU_TENSOR_MAP_SWIZZLE_64B);
    if (err.empty())
        err = map3(&m.out, p.out, s.n, s.m, s.b, uint32_t(kStoreBoxCols), 64, CU_TENSOR_MAP_SWIZZLE_64B);
    return err;
}

}  // namespace ws::lce::epiwarp
