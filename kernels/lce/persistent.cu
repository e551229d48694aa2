// Rung 4 -- persistent, both stages in one kernel.
// IDEA: the user GEMM U = W_user . E_user moves into the candidate kernel: one persistent launch
// walks the user tiles first, then the candidate tiles. A warpgroup that finishes a user tile stores
// it and publishes a ready flag for its 64 rows (release); a candidate tile's warpgroup acquires the
// flag of its user tile just before its epilogue adds U[u(b)] -- so the wait, if any, overlaps the
// candidate tile's own MMAs. Rung 3's separate cuBLAS launch and the gap between the two launches
// are gone. No deadlock: every CTA is resident (grid = the clusters that fit), each walks its units in
// increasing order and user units (which wait for nothing) come first.
// Everything else is rung 3 (CTA pairs multicasting E, fused add, TMA-store epilogue for candidate
// tiles); user tiles store with registers (generic proxy, so that the flag's release orders them).
// Flags hold the launch's epoch (a counter the host increments per launch): never reset.
// Trace: as rung 3, plus WaitOrder (the flag wait) before a candidate tile's Store; tile markers
// with tileM = unit's batch (user or candidate) * mTiles + tm, tileN = tn + 1000 for user tiles.
#include <warpstage/trace.cuh>

#include "../src/common/epilogue.cuh"
#include "../src/common/mma.cuh"
#include "../src/common/ring.cuh"
#include "../src/common/smem_plan.cuh"
#include "../src/common/tma.cuh"
#include "lce_rungs.h"

namespace ws::lce {
namespace r_persistent {
using namespace ws::kern;
namespace wt = ws::trace;

constexpr int BM = 128, BN = 256, BK = 64, S = 4, CL = 2, kThreads = 384, kWarps = kThreads / 32;
constexpr int kConsumerWarps = 8;
constexpr uint32_t kBytesA = BM * BK * 2, kBoxB = 64 * BK * 2, kStage = kBytesA + BN / 64 * kBoxB;
constexpr uint32_t kEpiBytes = 2 * 2 * kStoreBoxBytes;
using Plan = SmemPlan<kStage, S, kEpiBytes>;
constexpr uint32_t kEpiBar0 = 1;
static_assert(Plan::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");

struct Unit {
    bool user;
    int batch, tm, tn, K;
};

struct Params {
    int M, N, kUser, kCand, users, units, userUnits, mUnits, nTiles, epoch;
};

__device__ __forceinline__ Unit unitAt(int u, const Params& p, uint32_t rank)
{
    Unit x;
    x.user = u < p.userUnits;
    const int i = x.user ? u : u - p.userUnits;
    x.tm = (i % p.mUnits) * CL + int(rank);
    const int r = i / p.mUnits;
    x.tn = r % p.nTiles;
    x.batch = r / p.nTiles;
    x.K = x.user ? p.kUser : p.kCand;
    return x;
}

__device__ __forceinline__ void flagRelease(int* f, int v)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(f), "r"(v) : "memory");
}
__device__ __forceinline__ int flagAcquire(const int* f)
{
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
    return v;
}

__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(kThreads, 1)
    lcePersistent(const __grid_constant__ CUtensorMap tmWu, const __grid_constant__ CUtensorMap tmEu,
                  const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                  const __grid_constant__ CUtensorMap tmOut, __half* __restrict__ U, const int32_t* __restrict__ userOf,
                  int* __restrict__ flags, const Params p)
{
    extern __shared__ uint8_t smemRaw[];
    const Plan plan(smemRaw);
    Ring<S, CL> ring{plan.full(), plan.empty()};
    const uint32_t rank = clusterCtaRank();
    ring.peer = rank ^ 1u;
    wt::Cta cta;
    cta.pipeline(S, kStage);
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int mTiles = p.mUnits * CL;  // M tiles the walk covers (flag index); the last may lie past M
    const int cluster = int(blockIdx.x) / CL, clusters = int(gridDim.x) / CL;
    if (tid == 0) {
        tmaPrefetchDesc(&tmWu);
        tmaPrefetchDesc(&tmEu);
        tmaPrefetchDesc(&tmWc);
        tmaPrefetchDesc(&tmEc);
        tmaPrefetchDesc(&tmOut);
        ring.init(kConsumerWarps);
    }
    clusterSync();

    if (wg == 0) {
        setMaxNRegDec<40>();
        if (warp != 0) {
            if (!cta.recording()) return;
            wt::Warp<wt::Staged> idle(cta, wt::role::Idle, 0, uint8_t(warp), wt::kNoUserRole, plan.traceStaging(warp));
            idle.end();
            cta.end();
            return;
        }
        wt::Warp<wt::Staged> w(cta, wt::role::Producer, 0, 0, wt::kNoUserRole, plan.traceStaging(0));
        const bool issuer = laneId() == 0;
        int fill = 0;
        for (int u = cluster; u < p.units; u += clusters) {
            const Unit x = unitAt(u, p, rank);
            const CUtensorMap* tmA = x.user ? &tmWu : &tmWc;
            const CUtensorMap* tmB = x.user ? &tmEu : &tmEc;
            w.tileBegin(x.batch * mTiles + x.tm, int16_t(x.tn + (x.user ? 1000 : 0)));
            const int KT = (x.K + BK - 1) / BK;
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const uint64_t tWait = ring.waitSlot(fill, w);
                ring.issueLoad(fill, tWait, kStage, issuer, w, [&](int s, uint64_t* bar) {
                    uint8_t* st = plan.stage(s);
                    tmaLoad2d(st, tmA, bar, kt * BK, x.tm * BM);
                    constexpr int kBoxes = BN / 64 / CL;
#pragma unroll
                    for (int i = 0; i < kBoxes; ++i) {
                        const int q = int(rank) * kBoxes + i;
                        tmaLoad3dMulticast(st + kBytesA + q * kBoxB, tmB, bar, x.tn * BN + q * 64, kt * BK, x.batch,
                                           uint16_t((1u << CL) - 1));
                    }
                });
            }
            w.tileEnd();
        }
        w.end();
    } else {
        setMaxNRegInc<232>();
        const int cw = wg - 1, tInWg = tid & 127;
        wt::Warp<wt::Staged> w(cta, wt::role::Consumer, uint8_t(wg), uint8_t(warp - 4), wt::kNoUserRole,
                               plan.traceStaging(warp));
        const bool lane0 = laneId() == 0;
        int fill = 0;
        for (int u = cluster; u < p.units; u += clusters) {
            const Unit x = unitAt(u, p, rank);
            w.tileBegin(x.batch * mTiles + x.tm, int16_t(x.tn + (x.user ? 1000 : 0)));
            const int row0 = x.tm * BM + cw * 64;
            const bool active = row0 < p.M;
            const int KT = (x.K + BK - 1) / BK;
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
            // flag of (user, tm, tn, this warpgroup's 64 rows)
            const size_t mn = size_t(p.M) * p.N;
            if (x.user) {
                if (active)
                    storeAccF16<BN>(acc, U + x.batch * mn, p.N, p.M, p.N, row0, x.tn * BN, tInWg, NoFuse{}, w);
                __threadfence();
                storeBarrier(kEpiBar0 + cw);
                if (tInWg == 0)
                    flagRelease(&flags[((size_t(x.batch) * mTiles + x.tm) * p.nTiles + x.tn) * 2 + cw], p.epoch);
            } else if (active) {
                const int user = userOf[x.batch];
                w.event(wt::kind::WaitOrder);
                if (tInWg == 0) {
                    const int* f = &flags[((size_t(user) * mTiles + x.tm) * p.nTiles + x.tn) * 2 + cw];
                    while (flagAcquire(f) != p.epoch) {
                    }
                }
                storeBarrier(kEpiBar0 + cw);
                storeAccTmaF16<BN>(acc, &tmOut, plan.epiStaging() + cw * 2 * kStoreBoxBytes, p.M, p.N, row0,
                                   x.tn * BN, x.batch, tInWg, kEpiBar0 + cw, AddBroadcastL2{U + user * mn, p.N}, w);
            }
            w.tileEnd();
        }
        if (tInWg == kStoreIssuer) bulkWait<0>();
        w.end();
    }
    cta.end();
    clusterSync();
}
}  // namespace r_persistent

using namespace r_persistent;

std::string runPersistent(Problem& p)
{
    const Shape& s = p.s;
    CUtensorMap tmWu, tmEu, tmWc, tmEc, tmOut;
    auto map2 = [&](CUtensorMap* m, const __half* base, int kp, int rows) {
        const uint64_t dims[2] = {uint64_t(kp), uint64_t(rows)};
        const uint64_t strides[1] = {uint64_t(kp) * 2};
        const uint32_t box[2] = {BK, BM};
        return ws::kern::encodeTmaF16(m, base, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    };
    auto map3 = [&](CUtensorMap* m, const __half* base, int inner, int mid, int outer, uint32_t b0, uint32_t b1,
                    CUtensorMapSwizzle sw) {
        const uint64_t dims[3] = {uint64_t(inner), uint64_t(mid), uint64_t(outer)};
        const uint64_t strides[2] = {uint64_t(inner) * 2, uint64_t(mid) * inner * 2};
        const uint32_t box[3] = {b0, b1, 1};
        return ws::kern::encodeTmaF16(m, base, 3, dims, strides, box, sw);
    };
    std::string err = map2(&tmWu, p.wUserP, p.kUserP, s.m);
    if (err.empty()) err = map2(&tmWc, p.wCandP, p.kCandP, s.m);
    if (err.empty()) err = map3(&tmEu, p.eUser, s.n, s.kUser, p.users, 64, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    if (err.empty()) err = map3(&tmEc, p.eCand, s.n, s.kCand, s.b, 64, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    if (err.empty())
        err = map3(&tmOut, p.out, s.n, s.m, s.b, uint32_t(ws::kern::kStoreBoxCols), 64, CU_TENSOR_MAP_SWIZZLE_64B);
    if (!err.empty()) return "rung 4: " + err;
    const int smem = int(Plan::bytes(true, kWarps));
    static int maxClusters = 0;
    if (maxClusters == 0) {
        if (cudaFuncSetAttribute(lcePersistent, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
            return "rung 4: cannot get " + std::to_string(smem) + " bytes of shared memory";
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(CL * 256, 1, 1);
        cfg.blockDim = dim3(kThreads, 1, 1);
        cfg.dynamicSmemBytes = size_t(smem);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, lcePersistent, &cfg) != cudaSuccess || n <= 0) {
            cudaGetLastError();
            return "rung 4: cannot tell how many CTA pairs are resident (it needs all of them resident)";
        }
        maxClusters = n;
    }
    Params q;
    q.M = s.m;
    q.N = s.n;
    q.kUser = s.kUser;
    q.kCand = s.kCand;
    q.users = p.users;
    q.nTiles = (s.n + BN - 1) / BN;
    q.mUnits = ((s.m + BM - 1) / BM + CL - 1) / CL;
    q.userUnits = p.users * q.nTiles * q.mUnits;
    const long long units = (long long)q.userUnits + (long long)s.b * q.nTiles * q.mUnits;
    q.units = int(units);
    static int epoch = 0;
    q.epoch = ++epoch;
    long long clusters = units < maxClusters ? units : maxClusters;
    if (clusters > 1 && clusters % q.mUnits == 0) --clusters;
    lcePersistent<<<unsigned(clusters * CL), kThreads, smem, p.stream>>>(tmWu, tmEu, tmWc, tmEc, tmOut, p.u, p.userOf,
                                                                      p.flags, q);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 4 launch: ") + cudaGetErrorString(e);
    return {};
}

}  // namespace ws::lce
