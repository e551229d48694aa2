// CANDIDATES for rungs 3 and 4 (s8-lcespeed, LCE_KERNEL=t; not the rungs yet): rung 3's epilogue-warp kernel on the transposed
// main loop of transposed_probe.cu -- out[b]^T = E[b]^T . W^T, so N = 256 sits on the wgmma M side (two consumer
// warpgroups of 64 rows of N per CTA, CTA pairs on the two N halves of a 256-wide N tile sharing the W tile by
// multicast) and M = 433 on the wgmma N side as tiles of 224 (n224 wgmmas). The accumulator is out^T; the epilogue
// warp TMA-loads U's [M][N] tile into the staging ahead of time, the consumers add with ldmatrix / stmatrix .trans
// (transposed_staging.cuh) and the warp TMA-stores it. U comes from the cuBLAS user GEMM before it, as rung 3's.
// Every tile has the same work (no short M tile idling in a pair): rows of M past the tensor are zero-filled by TMA on
// load and dropped on store, as are columns of N and the K tail.
// Rung 4's candidate (lceUserFirstT, UserStage = true): the user tiles first in the same walk, stored into U through
// the staging by the epilogue warp and published by one ready flag per (user, M tile, N tile, CTA rank, half), as
// epiwarp_kernel.cuh's rung 4. Verified on the H200: rung 3's kernel as of 6b166bc (gpu_lce PASSED, session 8 call 6;
// since then the same code inside body<S, false>); rung 4's was written after the last device call and has NOT run
// (scripts/device/s8-lcespeed.sh is the call that checks both; docs/kernel-notes.md, "Session 8, s8-lcespeed").
#include <warpstage/trace.cuh>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../src/common/epilogue_warp.cuh"
#include "../src/common/mma.cuh"
#include "../src/common/ring.cuh"
#include "../src/common/smem_plan.cuh"
#include "../src/common/tma.cuh"
#include "lce_rungs.h"
#include "transposed_staging.cuh"
#include "wgmma_f16_tn224.cuh"

namespace ws::lce {
namespace tposed {
using namespace ws::kern;
namespace wt = ws::trace;

constexpr int kTileN = 128, kTileM = 224, BK = 64, kThreads = 384, kWarps = kThreads / 32;
constexpr uint32_t kBytesE = kTileN * BK * 2, kBytesWHalf = kTileM / 2 * BK * 2, kStage = kBytesE + 2 * kBytesWHalf;
// s9-lcet's epilogue variants (LCE_TVAR=V, timing runs): V -> (swizzle of U / out, read-ahead batch, diagnostic)
constexpr int kVarSwz[] = {64, 64, 128, 128, 64, 64, 64}, kVarKB[] = {2, 7, 2, 7, 2, 2, 2}, kVarDiag[] = {0, 0, 0, 0, 1, 2, 3};
template <int V>
using StagingV = EpilogueStagingT<kTileM, kVarSwz[V], kVarKB[V], kVarDiag[V]>;
using Staging = StagingV<0>;
template <int S>
using PlanOf = SmemPlan<kStage, S, Staging::kBytes>;

struct Params {
    int units, mTiles, nTiles, kSteps;  // kSteps: ceil(K_cand / 64)
    int userUnits, kStepsUser, epoch;   // the user stage (rung 4 candidate): user units first, ready flags
};
// One ready flag per (user, M tile, N tile, CTA rank, half): the user tile's half that warpgroup cw of the CTA with that
// rank stored into U (transposedFlagCount in lce_rungs.h).
__device__ __forceinline__ int flagIndexT(const Params& p, int user, int tm, int nt, uint32_t rank, int cw)
{
    return (((user * p.mTiles + tm) * p.nTiles + nt) * 2 + int(rank)) * 2 + cw;
}

// UserStage = false: rung 3's candidate (U from cuBLAS); true: rung 4's (the user tiles first in the same walk, their
// halves stored into U by the epilogue warp and published by ready flags, as epiwarp_kernel.cuh's rung 4).
template <int S, bool UserStage, int V>
__device__ __forceinline__ void body(const CUtensorMap& tmWu, const CUtensorMap& tmEu, const CUtensorMap& tmWc,
                                     const CUtensorMap& tmEc, const CUtensorMap& tmU, const CUtensorMap& tmOut,
                                     const int32_t* __restrict__ userOf, int* __restrict__ flags, const Params& p)
{
    using Staging = StagingV<V>;
    static_assert(2 * S + Staging::kBarriers <= 16, "ring + epilogue barriers fit the barrier area");
    using Plan = PlanOf<S>;
    extern __shared__ uint8_t smemRaw[];
    const Plan plan(smemRaw);
    Ring<S, 2> ring{plan.full(), plan.empty()};
    const uint32_t rank = clusterCtaRank();
    ring.peer = rank ^ 1u;
    const Staging staging(plan.epiStaging(), plan.empty() + S);
    wt::Cta cta;
    cta.pipeline(S, kStage);
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int cluster = int(blockIdx.x) / 2, clusters = int(gridDim.x) / 2;
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
        ring.init(8);
    }
    clusterSync();
    // unit u: user units first (UserStage), then candidates; in each part M tile fastest, then N tile (256 wide: this
    // CTA's half of it), then the user / candidate b
    auto unitOf = [&](int u, bool& user, int& tm, int& nt, int& n0, int& b) {
        user = UserStage && u < p.userUnits;
        const int i = user ? u : u - (UserStage ? p.userUnits : 0);
        tm = i % p.mTiles;
        const int r = i / p.mTiles;
        nt = r % p.nTiles;
        n0 = nt * 2 * kTileN + int(rank) * kTileN;
        b = r / p.nTiles;
    };

    if (wg == 0) {
        setMaxNRegDec<40>();
        if (warp == 0) {  // producer: E (this CTA's 128 N columns, two boxes) and half of W's 224 rows, multicast
            wt::Warp<wt::Staged> w(cta, wt::role::Producer, 0, 0, wt::kNoUserRole, plan.traceStaging(0));
            const bool issuer = laneId() == 0;
            int fill = 0;
            for (int u = cluster; u < p.units; u += clusters) {
                bool user;
                int tm, nt, n0, b;
                unitOf(u, user, tm, nt, n0, b);
                const CUtensorMap* tmA = user ? &tmEu : &tmEc;
                const CUtensorMap* tmB = user ? &tmWu : &tmWc;
                const int KT = user ? p.kStepsUser : p.kSteps;
                w.tileBegin(b * p.mTiles + tm, int16_t(n0 / kTileN + (user ? 1000 : 0)));
                for (int kt = 0; kt < KT; ++kt, ++fill) {
                    const uint64_t t = ring.waitSlot(fill, w);
                    ring.issueLoad(fill, t, kStage, issuer, w, [&](int s, uint64_t* bar) {
                        uint8_t* st = plan.stage(s);
#pragma unroll
                        for (int q = 0; q < 2; ++q) tmaLoad3d(st + q * (kBytesE / 2), tmA, bar, n0 + q * 64, kt * BK, b);
                        tmaLoad2dMulticast(st + kBytesE + rank * kBytesWHalf, tmB, bar, kt * BK,
                                           tm * kTileM + int(rank) * (kTileM / 2), uint16_t(3));
                    });
                }
                w.tileEnd();
            }
            w.end();
        } else if (warp == 1) {  // the epilogue warp
            wt::Warp<wt::Staged> w(cta, wt::role::Epilogue, 0, 0, wt::kNoUserRole, plan.traceStaging(1));
            EpilogueWarp<kTileM, Staging> ew{staging, &tmOut, &tmU, laneId() == 0};
            for (int u = cluster; u < p.units; u += clusters) {
                bool user;
                int tm, nt, n0, b;
                unitOf(u, user, tm, nt, n0, b);
                w.tileBegin(b * p.mTiles + tm, int16_t(n0 / kTileN + (user ? 1000 : 0)));
                if (user) {  // into U[b] itself, then the half's ready flag
                    for (int cw = 0; cw < 2; ++cw)
                        ew.nextPublished(cw, n0 + cw * 64, tm * kTileM, b, &flags[flagIndexT(p, b, tm, nt, rank, cw)],
                                         p.epoch, w);
                    w.tileEnd();
                    continue;
                }
                const int uo = userOf[b];
                for (int cw = 0; cw < 2; ++cw)
                    ew.next(cw, n0 + cw * 64, tm * kTileM, b, n0 + cw * 64, tm * kTileM, uo,
                            [&](int n) {
                                if constexpr (UserStage)
                                    waitOrderFlag(&flags[flagIndexT(p, uo, tm, nt, rank, cw)], p.epoch, ew.issuer, n,
                                                  uint8_t(cw), w);
                            },
                            w);
                w.tileEnd();
            }
            ew.finish(w);
            w.end();
        } else {
            if (!cta.recording()) return;
            wt::Warp<wt::Staged> idle(cta, wt::role::Idle, 0, uint8_t(warp), wt::kNoUserRole, plan.traceStaging(warp));
            idle.end();
            cta.end();
            return;
        }
    } else {
        setMaxNRegInc<232>();
        const int cw = wg - 1, tInWg = tid & 127;
        wt::Warp<wt::Staged> w(cta, wt::role::Consumer, uint8_t(wg), uint8_t(cw), wt::kNoUserRole,
                               plan.traceStaging(warp));
        const bool lane0 = laneId() == 0;
        int fill = 0, done = 0;
        for (int u = cluster; u < p.units; u += clusters) {
            bool user;
            int tm, nt, n0, b;
            unitOf(u, user, tm, nt, n0, b);
            w.tileBegin(b * p.mTiles + tm, int16_t(n0 / kTileN + (user ? 1000 : 0)));
            const int KT = user ? p.kStepsUser : p.kSteps;
            float acc[kTileM / 2];
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int s = Ring<S, 2>::slot(fill);
                ring.waitData(fill, w);
                const uint32_t st = smemAddr(plan.stage(s));
                w.event(wt::kind::MmaIssue, fill, uint8_t(s));
                wgmmaFence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk)
                    wgmma_m64n224k16_f16tn(acc, wgmmaDescSw128Mn(st + cw * (kBytesE / 2) + kk * 2048, kBytesE / 2),
                                           wgmmaDescSw128(st + kBytesE + kk * 32), (kt == 0 && kk == 0) ? 0 : 1);
                wgmmaCommit();
                if (kt > 0) {
                    mmaWait<1>(fill - 1, Ring<S, 2>::slot(fill - 1), w);
                    ring.release(fill - 1, lane0, w);
                }
            }
            mmaWait<0>(fill - 1, Ring<S, 2>::slot(fill - 1), w);
            fenceAcc(acc);
            ring.release(fill - 1, lane0, w);
            staging.waitOrderStaged(cw, done, w);
            if (user) staging.epilogueStage(acc, cw, done, tInWg, w);  // the half is free: fp16(acc) for U
            else staging.epilogueAdd(acc, cw, done, tInWg, w);
            ++done;
            w.tileEnd();
        }
        w.end();
    }
    cta.end();
    clusterSync();
}

template <int S, int V>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads, 1)
    lceEpilogueWarpT(const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                     const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                     const int32_t* __restrict__ userOf, const Params p)
{
    body<S, false, V>(tmWc, tmEc, tmWc, tmEc, tmU, tmOut, userOf, nullptr, p);
}
template <int S, int V>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads, 1)
    lceUserFirstT(const __grid_constant__ CUtensorMap tmWu, const __grid_constant__ CUtensorMap tmEu,
                  const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                  const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                  const int32_t* __restrict__ userOf, int* __restrict__ flags, const Params p)
{
    body<S, true, V>(tmWu, tmEu, tmWc, tmEc, tmU, tmOut, userOf, flags, p);
}

namespace {
template <int S, bool UserStage, int V>
std::string launch(Problem& p)
{
    const Shape& s = p.s;
    const char* what = UserStage ? "rung 4 (transposed)" : "rung 3 (transposed)";
    const auto kern = UserStage ? lceUserFirstT<S, V> : nullptr;
    const auto kern3 = lceEpilogueWarpT<S, V>;
    const void* k = UserStage ? reinterpret_cast<const void*>(kern) : reinterpret_cast<const void*>(kern3);
    const int smem = int(PlanOf<S>::bytes(true, kWarps));
    static_assert(PlanOf<S>::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");
    static int maxClusters = 0;
    if (maxClusters == 0) {
        if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
            return std::string(what) + ": cannot get " + std::to_string(smem) + " bytes of shared memory";
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(2 * 256, 1, 1);
        cfg.blockDim = dim3(kThreads, 1, 1);
        cfg.dynamicSmemBytes = size_t(smem);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, k, &cfg) != cudaSuccess || n <= 0) {
            cudaGetLastError();
            if (UserStage)  // the ready flags need every CTA pair resident
                return std::string(what) + ": cannot tell how many CTA pairs are resident (it needs all of them)";
            int sms = 0;
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
            n = sms / 2;
        }
        maxClusters = n;
    }
    // W: boxes of 64 (K) x 112 rows; E: 64 (N) x 64 (K), both 128-byte swizzle; U / out: 32 (N) x 224 (M), 64-byte
    auto map2 = [&](CUtensorMap* t, const __half* base, int kp) {
        const uint64_t dims[2] = {uint64_t(kp), uint64_t(s.m)};
        const uint64_t strides[1] = {uint64_t(kp) * 2};
        const uint32_t box[2] = {uint32_t(BK), uint32_t(kTileM / 2)};
        return encodeTmaF16(t, base, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    };
    auto map3 = [&](CUtensorMap* t, const void* base, int inner, int mid, int outer, uint32_t b0, uint32_t b1,
                    CUtensorMapSwizzle sw) {
        const uint64_t dims[3] = {uint64_t(inner), uint64_t(mid), uint64_t(outer)};
        const uint64_t strides[2] = {uint64_t(inner) * 2, uint64_t(mid) * inner * 2};
        const uint32_t box[3] = {b0, b1, 1};
        return encodeTmaF16(t, base, 3, dims, strides, box, sw);
    };
    CUtensorMap wc, ec, wu, eu, um, om;
    std::string err = map2(&wc, p.wCandP, p.kCandP);
    if (err.empty()) err = map3(&ec, p.eCand, s.n, s.kCand, s.b, 64, uint32_t(BK), CU_TENSOR_MAP_SWIZZLE_128B);
    if (err.empty() && UserStage) err = map2(&wu, p.wUserP, p.kUserP);
    if (err.empty() && UserStage)
        err = map3(&eu, p.eUser, s.n, s.kUser, p.users, 64, uint32_t(BK), CU_TENSOR_MAP_SWIZZLE_128B);
    constexpr uint32_t boxN = uint32_t(kVarSwz[V] / 2);
    constexpr CUtensorMapSwizzle swz = kVarSwz[V] == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    if (err.empty()) err = map3(&um, p.u, s.n, s.m, p.users, boxN, uint32_t(kTileM), swz);
    if (err.empty()) err = map3(&om, p.out, s.n, s.m, s.b, boxN, uint32_t(kTileM), swz);
    if (!err.empty()) return std::string(what) + ": " + err;
    Params q{};
    q.mTiles = (s.m + kTileM - 1) / kTileM;
    q.nTiles = (s.n + 2 * kTileN - 1) / (2 * kTileN);
    q.kSteps = (s.kCand + BK - 1) / BK;
    q.kStepsUser = (s.kUser + BK - 1) / BK;
    const long long perBatch = (long long)q.mTiles * q.nTiles;
    const long long userUnits = UserStage ? perBatch * p.users : 0;
    const long long units = userUnits + perBatch * s.b;
    if (units > 2147483647LL) return std::string(what) + ": too many tiles for 32-bit unit numbers";
    q.userUnits = int(userUnits);
    q.units = int(units);
    if (UserStage && transposedFlagCount(s) > lceFlagCount(s))
        return std::string(what) + ": the driver allocated too few ready flags for this shape";
    const long long clusters = units < maxClusters ? units : maxClusters;
    if constexpr (UserStage) {
        q.epoch = nextFlagEpoch();
        kern<<<unsigned(clusters * 2), kThreads, smem, p.stream>>>(wu, eu, wc, ec, um, om, p.userOf, p.flags, q);
    } else {
        kern3<<<unsigned(clusters * 2), kThreads, smem, p.stream>>>(wc, ec, um, om, p.userOf, q);
    }
    p.lastKernel = k;
    p.lastGrid = unsigned(clusters * 2);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string(what) + " launch: " + cudaGetErrorString(e);
    return {};
}
}  // namespace

}  // namespace tposed

namespace {
int tuneVariant()
{
    static const int v = [] {
        const char* e = std::getenv("LCE_TVAR");
        const int x = e ? std::atoi(e) : 0;
        if (x) std::fprintf(stderr, "lce: transposed epilogue variant %d\n", x);
        return x;
    }();
    return v;
}
}  // namespace

std::string runTransposedRung3(Problem& p)
{
    std::string err = userGemm(p, true);
    if (!err.empty()) return err;
    switch (tuneVariant()) {
    case 1: return tposed::launch<3, false, 1>(p);
    case 2: return tposed::launch<3, false, 2>(p);
    case 3: return tposed::launch<3, false, 3>(p);
    case 4: return tposed::launch<3, false, 4>(p);
    case 5: return tposed::launch<3, false, 5>(p);
    case 6: return tposed::launch<3, false, 6>(p);
    default: return tposed::launch<3, false, 0>(p);
    }
}
std::string runTransposedRung4(Problem& p)
{
    switch (tuneVariant()) {
    case 1: return tposed::launch<3, true, 1>(p);
    case 2: return tposed::launch<3, true, 2>(p);
    case 3: return tposed::launch<3, true, 3>(p);
    default: return tposed::launch<3, true, 0>(p);
    }
}

}  // namespace ws::lce
