// A CANDIDATE for rung 3 (s8-lcespeed, LCE_KERNEL=t; not the rung): rung 3's epilogue-warp kernel on the transposed
// main loop of transposed_probe.cu -- out[b]^T = E[b]^T . W^T, so N = 256 sits on the wgmma M side (two consumer
// warpgroups of 64 rows of N per CTA, CTA pairs on the two N halves of a 256-wide N tile sharing the W tile by
// multicast) and M = 433 on the wgmma N side as tiles of 224 (n224 wgmmas). The accumulator is out^T; the epilogue
// warp TMA-loads U's [M][N] tile into the staging ahead of time, the consumers add with ldmatrix / stmatrix .trans
// (transposed_staging.cuh) and the warp TMA-stores it. U comes from the cuBLAS user GEMM before it, as rung 3's.
// Every tile has the same work (no short M tile idling in a pair): rows of M past the tensor are zero-filled by TMA on
// load and dropped on store, as are columns of N and the K tail.
#include <warpstage/trace.cuh>

#include <cstdio>
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
using Staging = EpilogueStagingT<kTileM>;
template <int S>
using PlanOf = SmemPlan<kStage, S, Staging::kBytes>;

struct Params {
    int units, mTiles, nTiles, kSteps;  // kSteps: ceil(K_cand / 64)
};

template <int S>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads, 1)
    lceEpilogueWarpT(const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                     const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                     const int32_t* __restrict__ userOf, const Params p)
{
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
        tmaPrefetchDesc(&tmWc);
        tmaPrefetchDesc(&tmEc);
        tmaPrefetchDesc(&tmU);
        tmaPrefetchDesc(&tmOut);
        staging.init();
        ring.init(8);
    }
    clusterSync();
    // unit u: M tile fastest, then N tile (256 wide: this CTA's half of it), then the candidate
    auto unitOf = [&](int u, int& tm, int& n0, int& b) {
        tm = u % p.mTiles;
        const int r = u / p.mTiles;
        n0 = (r % p.nTiles) * 2 * kTileN + int(rank) * kTileN;
        b = r / p.nTiles;
    };

    if (wg == 0) {
        setMaxNRegDec<40>();
        if (warp == 0) {  // producer: E (this CTA's 128 N columns, two boxes) and half of W's 224 rows, multicast
            wt::Warp<wt::Staged> w(cta, wt::role::Producer, 0, 0, wt::kNoUserRole, plan.traceStaging(0));
            const bool issuer = laneId() == 0;
            int fill = 0;
            for (int u = cluster; u < p.units; u += clusters) {
                int tm, n0, b;
                unitOf(u, tm, n0, b);
                w.tileBegin(b * p.mTiles + tm, int16_t(n0 / kTileN));
                for (int kt = 0; kt < p.kSteps; ++kt, ++fill) {
                    const uint64_t t = ring.waitSlot(fill, w);
                    ring.issueLoad(fill, t, kStage, issuer, w, [&](int s, uint64_t* bar) {
                        uint8_t* st = plan.stage(s);
#pragma unroll
                        for (int q = 0; q < 2; ++q) tmaLoad3d(st + q * (kBytesE / 2), &tmEc, bar, n0 + q * 64, kt * BK, b);
                        tmaLoad2dMulticast(st + kBytesE + rank * kBytesWHalf, &tmWc, bar, kt * BK,
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
                int tm, n0, b;
                unitOf(u, tm, n0, b);
                w.tileBegin(b * p.mTiles + tm, int16_t(n0 / kTileN));
                const int user = userOf[b];
                for (int cw = 0; cw < 2; ++cw)
                    ew.next(cw, n0 + cw * 64, tm * kTileM, b, n0 + cw * 64, tm * kTileM, user, [](int) {}, w);
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
            int tm, n0, b;
            unitOf(u, tm, n0, b);
            w.tileBegin(b * p.mTiles + tm, int16_t(n0 / kTileN));
            float acc[kTileM / 2];
            for (int kt = 0; kt < p.kSteps; ++kt, ++fill) {
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
            staging.epilogueAdd(acc, cw, done, tInWg, w);
            ++done;
            w.tileEnd();
        }
        w.end();
    }
    cta.end();
    clusterSync();
}

namespace {
template <int S>
std::string launch(Problem& p)
{
    const Shape& s = p.s;
    const auto kern = lceEpilogueWarpT<S>;
    const int smem = int(PlanOf<S>::bytes(true, kWarps));
    static_assert(PlanOf<S>::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");
    static int maxClusters = 0;
    if (maxClusters == 0) {
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
            return "rung 3 (transposed): cannot get " + std::to_string(smem) + " bytes of shared memory";
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(2 * 256, 1, 1);
        cfg.blockDim = dim3(kThreads, 1, 1);
        cfg.dynamicSmemBytes = size_t(smem);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n <= 0) {
            cudaGetLastError();
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
    CUtensorMap wc, ec, um, om;
    std::string err = map2(&wc, p.wCandP, p.kCandP);
    if (err.empty()) err = map3(&ec, p.eCand, s.n, s.kCand, s.b, 64, uint32_t(BK), CU_TENSOR_MAP_SWIZZLE_128B);
    if (err.empty()) err = map3(&um, p.u, s.n, s.m, p.users, 32, uint32_t(kTileM), CU_TENSOR_MAP_SWIZZLE_64B);
    if (err.empty()) err = map3(&om, p.out, s.n, s.m, s.b, 32, uint32_t(kTileM), CU_TENSOR_MAP_SWIZZLE_64B);
    if (!err.empty()) return "rung 3 (transposed): " + err;
    Params q{};
    q.mTiles = (s.m + kTileM - 1) / kTileM;
    q.nTiles = (s.n + 2 * kTileN - 1) / (2 * kTileN);
    q.kSteps = (s.kCand + BK - 1) / BK;
    const long long units = (long long)q.mTiles * q.nTiles * s.b;
    if (units > 2147483647LL) return "rung 3 (transposed): too many tiles for 32-bit unit numbers";
    q.units = int(units);
    const long long clusters = units < maxClusters ? units : maxClusters;
    kern<<<unsigned(clusters * 2), kThreads, smem, p.stream>>>(wc, ec, um, om, p.userOf, q);
    p.lastKernel = reinterpret_cast<const void*>(kern);
    p.lastGrid = unsigned(clusters * 2);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 3 (transposed) launch: ") + cudaGetErrorString(e);
    return {};
}
}  // namespace

}  // namespace tposed

std::string runTransposedRung3(Problem& p)
{
    std::string err = userGemm(p, true);
    if (!err.empty()) return err;
    return tposed::launch<3>(p);
}

}  // namespace ws::lce
