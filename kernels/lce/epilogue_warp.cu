// Rung 3 (since session 5; LCE_RUNG3_EPILOGUE=direct|tma|noadd|none select fused_epilogue.cu's earlier kernel):
// the epilogue handed to a warp of its own so that the consumer warpgroups go straight on to the next tile.
// Measured (H200, docs/benchmarks.md): correct at every shape gpu_lce checks; 0.450 ms against 0.526 ms for
// fused_epilogue.cu's register epilogue -- and level with rung 2 (cuBLAS, 0.453 ms).
// IDEA: measured, rung 3 spends 0.21 of its 0.52 ms in the epilogue, with neither consumer warpgroup issuing
// MMAs. Here a 64 KB shared staging tile (two 32 KB halves, one per consumer warpgroup, laid out as the
// TMA-store boxes: 64 rows x 32 columns, 64-byte swizzle) takes the output. An epilogue warp (warp 1 of the
// producer warpgroup, otherwise idle) TMA-loads U[u(b)]'s tile into a half before its warpgroup needs it;
// the warpgroup, once its MMAs are done, adds its accumulators to U in place (shared memory, no global
// latency), converts to fp16 and signals; the epilogue warp TMA-stores the half and, once the stores have
// read it, loads the next tile's U into it. The ring drops to 3 stages to make room (144 + 64 KB).
// Protocol per half cw (only tiles where warpgroup cw has rows inside M count, on both sides):
//   epilogue warp: [wait stFull[cw]; store the half; wait until read]; expect_tx + load U -> uFull[cw]
//   consumer cw:   mainloop; wait uFull[cw]; add in place; fence.proxy.async; arrive stFull[cw] (128)
#include <warpstage/trace.cuh>

#include "../src/common/epilogue.cuh"
#include "../src/common/mma.cuh"
#include "../src/common/ring.cuh"
#include "../src/common/smem_plan.cuh"
#include "../src/common/tma.cuh"
#include "lce_rungs.h"

namespace ws::lce {
namespace r_epiwarp {
using namespace ws::kern;
namespace wt = ws::trace;

constexpr int BM = 128, BN = 256, BK = 64, S = 3, CL = 2, kThreads = 384, kWarps = kThreads / 32;
constexpr int kConsumerWarps = 8;
constexpr uint32_t kBytesA = BM * BK * 2, kBoxB = 64 * BK * 2, kStage = kBytesA + BN / 64 * kBoxB;
constexpr int kBoxesPerHalf = BN / kStoreBoxCols;                  // 8 boxes of 64 x 32
constexpr uint32_t kHalfBytes = kBoxesPerHalf * kStoreBoxBytes;    // 32 KB: one warpgroup's 64 x 256
constexpr uint32_t kEpiBytes = 2 * kHalfBytes;
using Plan = SmemPlan<kStage, S, kEpiBytes>;
static_assert(Plan::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");
static_assert(2 * S + 4 <= 16, "ring + epilogue barriers fit the barrier area");

struct Tile {
    int b, tm, tn;
};
__device__ __forceinline__ Tile unitAt(int u, int mUnits, int nTiles, uint32_t rank)
{
    Tile x;
    x.tm = (u % mUnits) * CL + int(rank);
    const int r = u / mUnits;
    x.tn = r % nTiles;
    x.b = r / nTiles;
    return x;
}

__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(kThreads, 1)
    lceEpilogueWarp(const __grid_constant__ CUtensorMap tmW, const __grid_constant__ CUtensorMap tmE,
                    const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                    const int32_t* __restrict__ userOf, int M, int N, int K, int units)
{
    extern __shared__ uint8_t smemRaw[];
    const Plan plan(smemRaw);
    Ring<S, CL> ring{plan.full(), plan.empty()};
    const uint32_t rank = clusterCtaRank();
    ring.peer = rank ^ 1u;
    uint64_t* uFull = plan.empty() + S;  // [2]: U's tile of half cw has landed
    uint64_t* stFull = uFull + 2;        // [2]: half cw holds the finished output (128 arrivals)
    wt::Cta cta;
    cta.pipeline(S, kStage);
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int mTiles = (M + BM - 1) / BM, nTiles = (N + BN - 1) / BN, KT = (K + BK - 1) / BK;
    const int mUnits = (mTiles + CL - 1) / CL;
    const int cluster = int(blockIdx.x) / CL, clusters = int(gridDim.x) / CL;
    if (tid == 0) {
        tmaPrefetchDesc(&tmW);
        tmaPrefetchDesc(&tmE);
        tmaPrefetchDesc(&tmU);
        tmaPrefetchDesc(&tmOut);
        ring.init(kConsumerWarps);
        for (int h = 0; h < 2; ++h) {
            mbarInit(&uFull[h], 1);
            mbarInit(&stFull[h], 128);
        }
        fenceBarrierInit();
    }
    clusterSync();

    if (wg == 0) {
        setMaxNRegDec<40>();
        if (warp == 0) {  // producer
            wt::Warp<wt::Staged> w(cta, wt::role::Producer, 0, 0, wt::kNoUserRole, plan.traceStaging(0));
            const bool issuer = laneId() == 0;
            int fill = 0;
            for (int u = cluster; u < units; u += clusters) {
                const Tile x = unitAt(u, mUnits, nTiles, rank);
                w.tileBegin(x.b * mTiles + x.tm, int16_t(x.tn));
                for (int kt = 0; kt < KT; ++kt, ++fill) {
                    const uint64_t tWait = ring.waitSlot(fill, w);
                    ring.issueLoad(fill, tWait, kStage, issuer, w, [&](int s, uint64_t* bar) {
                        uint8_t* st = plan.stage(s);
                        tmaLoad2d(st, &tmW, bar, kt * BK, x.tm * BM);
                        constexpr int kBoxes = BN / 64 / CL;
#pragma unroll
                        for (int i = 0; i < kBoxes; ++i) {
                            const int q = int(rank) * kBoxes + i;
                            tmaLoad3dMulticast(st + kBytesA + q * kBoxB, &tmE, bar, x.tn * BN + q * 64, kt * BK, x.b,
                                               uint16_t((1u << CL) - 1));
                        }
                    });
                }
                w.tileEnd();
            }
            w.end();
        } else if (warp == 1) {  // the epilogue warp: lane 0 issues, the whole warp runs the loop (trace calls)
            wt::Warp<wt::Staged> w(cta, wt::role::Epilogue, 0, 0, wt::kNoUserRole, plan.traceStaging(1));
            const bool issuer = laneId() == 0;
            int done[2] = {0, 0};           // active tiles of half cw so far
            Tile last[2] = {{0, 0, 0}, {0, 0, 0}};
            auto storeHalf = [&](int cw) {  // the previous active tile of half cw: wait, store, wait until read
                w.event(wt::kind::WaitData, done[cw] - 1, uint8_t(cw));
                mbarWait(&stFull[cw], uint32_t((done[cw] - 1) & 1));
                w.event(wt::kind::Store, done[cw] - 1, uint8_t(cw));
                if (issuer) {
                    uint8_t* half = plan.epiStaging() + cw * kHalfBytes;
#pragma unroll
                    for (int c = 0; c < kBoxesPerHalf; ++c)
                        tmaStore3d(&tmOut, half + c * kStoreBoxBytes, last[cw].tn * BN + c * kStoreBoxCols,
                                   last[cw].tm * BM + cw * 64, last[cw].b);
                    bulkCommit();
                    bulkWaitRead<0>();  // the half may be written again
                }
                __syncwarp();
            };
            for (int u = cluster; u < units; u += clusters) {
                const Tile x = unitAt(u, mUnits, nTiles, rank);
                w.tileBegin(x.b * mTiles + x.tm, int16_t(x.tn));
                const int user = userOf[x.b];
                for (int cw = 0; cw < 2; ++cw) {
                    if (x.tm * BM + cw * 64 >= M) continue;  // that warpgroup has no rows here: no epilogue
                    if (done[cw] > 0) storeHalf(cw);
                    w.event(wt::kind::Load, done[cw], uint8_t(cw));
                    if (issuer) {
                        uint8_t* half = plan.epiStaging() + cw * kHalfBytes;
                        mbarArriveExpectTx(&uFull[cw], kHalfBytes);
#pragma unroll
                        for (int c = 0; c < kBoxesPerHalf; ++c)
                            tmaLoad3d(half + c * kStoreBoxBytes, &tmU, &uFull[cw], x.tn * BN + c * kStoreBoxCols,
                                      x.tm * BM + cw * 64, user);
                    }
                    __syncwarp();
                    last[cw] = x;
                    ++done[cw];
                }
                w.tileEnd();
            }
            for (int cw = 0; cw < 2; ++cw)
                if (done[cw] > 0) storeHalf(cw);
            if (issuer) bulkWait<0>();  // every store has landed before the CTA ends
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
        wt::Warp<wt::Staged> w(cta, wt::role::Consumer, uint8_t(wg), uint8_t(warp - 4), wt::kNoUserRole,
                               plan.traceStaging(warp));
        const bool lane0 = laneId() == 0;
        const int r0 = (tInWg >> 5) * 16 + ((tInWg & 31) >> 2), t = tInWg & 3;
        uint8_t* half = plan.epiStaging() + cw * kHalfBytes;
        int fill = 0, done = 0;
        for (int u = cluster; u < units; u += clusters) {
            const Tile x = unitAt(u, mUnits, nTiles, rank);
            w.tileBegin(x.b * mTiles + x.tm, int16_t(x.tn));
            const bool active = x.tm * BM + cw * 64 < M;
            float acc[BN / 2];
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int s = Ring<S, CL>::slot(fill);
                ring.waitData(fill, w);
                const uint32_t st = smemAddr(plan.stage(s));
                if (active) mmaIssue<BN>(acc, st + cw * 64 * 128, st + kBytesA, kt == 0, fill, s, w);
                if (kt > 0) {
                    mmaWait<1>(fill - 1, Ring<S, CL>::slot(fill - 1), w);
                    ring.release(fill - 1, lane0, w);
                }
            }
            mmaWait<0>(fill - 1, Ring<S, CL>::slot(fill - 1), w);
            fenceAcc(acc);
            ring.release(fill - 1, lane0, w);
            if (active) {
                w.event(wt::kind::WaitOrder, done);
                mbarWait(&uFull[cw], uint32_t(done & 1));  // U's tile is in the half (and the last store read it)
                w.event(wt::kind::Epilogue, done);
#pragma unroll
                for (int c = 0; c < kBoxesPerHalf; ++c) {
                    uint8_t* box = half + c * kStoreBoxBytes;
#pragma unroll
                    for (int q = 0; q < 4; ++q) {  // 16-byte unit q of the box's rows = accumulator column group 4c+q
                        const int j = 4 * c + q;
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            __half2* p = reinterpret_cast<__half2*>(box + staging64Offset(r0 + 8 * h, q, 4 * t));
                            const float2 uu = __half22float2(*p);
                            *p = __floats2half2_rn(acc[4 * j + 2 * h] + uu.x, acc[4 * j + 2 * h + 1] + uu.y);
                        }
                    }
                }
                fenceProxyAsync();  // the writes above, visible to the TMA engine's store
                mbarArrive(&stFull[cw]);
                ++done;
            }
            w.tileEnd();
        }
        w.end();
    }
    cta.end();
    clusterSync();
}
}  // namespace r_epiwarp

using namespace r_epiwarp;

std::string runFusedEpilogueWarp(Problem& p)
{
    const Shape& s = p.s;
    std::string err = userGemm(p, true);
    if (!err.empty()) return err;
    auto map3 = [&](CUtensorMap* m, const void* base, int inner, int mid, int outer, uint32_t b0, uint32_t b1,
                    CUtensorMapSwizzle sw) {
        const uint64_t dims[3] = {uint64_t(inner), uint64_t(mid), uint64_t(outer)};
        const uint64_t strides[2] = {uint64_t(inner) * 2, uint64_t(mid) * inner * 2};
        const uint32_t box[3] = {b0, b1, 1};
        return ws::kern::encodeTmaF16(m, base, 3, dims, strides, box, sw);
    };
    CUtensorMap tmW, tmE, tmU, tmOut;
    {
        const uint64_t dims[2] = {uint64_t(p.kCandP), uint64_t(s.m)};
        const uint64_t strides[1] = {uint64_t(p.kCandP) * 2};
        const uint32_t box[2] = {BK, BM};
        err = ws::kern::encodeTmaF16(&tmW, p.wCandP, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    }
    if (err.empty()) err = map3(&tmE, p.eCand, s.n, s.kCand, s.b, 64, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    if (err.empty())
        err = map3(&tmU, p.u, s.n, s.m, p.users, uint32_t(kStoreBoxCols), 64, CU_TENSOR_MAP_SWIZZLE_64B);
    if (err.empty())
        err = map3(&tmOut, p.out, s.n, s.m, s.b, uint32_t(kStoreBoxCols), 64, CU_TENSOR_MAP_SWIZZLE_64B);
    if (!err.empty()) return "rung 3 (epilogue warp): " + err;
    const int smem = int(Plan::bytes(true, kWarps));
    static int maxClusters = 0;
    if (maxClusters == 0) {
        if (cudaFuncSetAttribute(lceEpilogueWarp, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
            return "rung 3 (epilogue warp): cannot get " + std::to_string(smem) + " bytes of shared memory";
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(CL * 256, 1, 1);
        cfg.blockDim = dim3(kThreads, 1, 1);
        cfg.dynamicSmemBytes = size_t(smem);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, lceEpilogueWarp, &cfg) != cudaSuccess || n <= 0) {
            cudaGetLastError();
            int sms = 0;
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
            n = sms / CL;
        }
        maxClusters = n;
    }
    const int mTiles = (s.m + BM - 1) / BM, nTiles = (s.n + BN - 1) / BN;
    const int mUnits = (mTiles + CL - 1) / CL;
    const long long units = (long long)mUnits * nTiles * s.b;
    long long clusters = units < maxClusters ? units : maxClusters;
    if (clusters > 1 && clusters % mUnits == 0) --clusters;
    lceEpilogueWarp<<<unsigned(clusters * CL), kThreads, smem, p.stream>>>(tmW, tmE, tmU, tmOut, p.userOf, s.m, s.n,
                                                                        s.kCand, int(units));
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 3 (epilogue warp) launch: ") + cudaGetErrorString(e);
    return {};
}

}  // namespace ws::lce
