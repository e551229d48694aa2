// Rung 4 (since session 5's third pass; LCE_RUNG4=pingpong selects persistent.cu's earlier ping-pong kernel):
// rung 3's epilogue-warp kernel with the user stage folded in -- ONE persistent launch, no cuBLAS user GEMM.
// IDEA: rung 3 (epilogue_warp.cu) is already persistent over candidate tiles with full-size tiles per consumer
// warpgroup (64 x 256 each, 128 x 256 per CTA, CTA pairs sharing E_cand by multicast), and its epilogue warp
// stores a tile while the consumers run the next tile's mainloop. What it still pays for is a second launch:
// U = W_user . E_user by cuBLAS before it (a dependent kernel, its own tail). Here the user tiles are the
// first units of the same walk: a consumer warpgroup that finishes a user tile stores it from registers
// (storeAccF16, no fusion), fences and publishes the tile's ready flag (release); the epilogue warp acquires
// the flag of U[u(b)]'s tile before it TMA-loads that tile into the staging half -- one tile ahead of its
// consumers, so the wait hides under their mainloop. Everything else is rung 3's code path.
// No deadlock: every CTA pair is resident (grid = the clusters that fit; refused otherwise), each walks its
// units in increasing order, user units (which wait for nothing but the ring) first; a flag wait is done by
// the epilogue warp only, never while holding ring slots. Flags hold the launch's epoch (never reset).
// Protocol per half cw (candidate tiles where warpgroup cw has rows inside M; user tiles skip the halves):
//   epilogue warp: [wait stFull[cw]; store the half; wait until read]; acquire flag; expect_tx + load U -> uFull[cw]
//   consumer cw:   mainloop; wait uFull[cw]; add in place; fence.proxy.async; arrive stFull[cw] (128)
// Trace: rung 3's, plus WaitOrder on the epilogue warp around the flag acquire; user tiles' tileN = tn + 1000.
#include <warpstage/trace.cuh>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../src/common/epilogue.cuh"
#include "../src/common/mma.cuh"
#include "../src/common/ring.cuh"
#include "../src/common/smem_plan.cuh"
#include "../src/common/tma.cuh"
#include "lce_rungs.h"

namespace ws::lce {
namespace r_userfirst {
using namespace ws::kern;
namespace wt = ws::trace;

constexpr int BM = 128, BN = 256, BK = 64, CL = 2, kThreads = 384, kWarps = kThreads / 32;
constexpr int kConsumerWarps = 8;
constexpr uint32_t kBytesA = BM * BK * 2, kBoxB = 64 * BK * 2, kStage = kBytesA + BN / 64 * kBoxB;
constexpr int kBoxesPerHalf = BN / kStoreBoxCols;                  // 8 boxes of 64 x 32
constexpr uint32_t kHalfBytes = kBoxesPerHalf * kStoreBoxBytes;    // 32 KB: one warpgroup's 64 x 256
constexpr uint32_t kEpiBytes = 2 * kHalfBytes;
constexpr uint32_t kUserBar0 = 1;  // named barriers 1, 2: warpgroup cw's user-tile store
// S = 3 ring stages beside the 64 KB staging (the default); the diagnostics without the candidate epilogue
// (LCE_RUNG4_EPILOGUE=none: same ring; none4: 4 stages in the staging's room) tell the ring's cost from the
// epilogue's.
template <int S, bool Epi>
using PlanOf = SmemPlan<kStage, S, Epi ? kEpiBytes : 0u>;
static_assert(BM == kUfTileM && BN == kUfTileN && CL == kUfCluster, "the walk of lce_shape.h is this kernel's");
static_assert(PlanOf<3, true>::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");
static_assert(PlanOf<4, false>::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");

struct Params {
    int M, N, kUser, kCand, userUnits, units, mTiles, mUnits, nTiles, epoch;
};
struct Unit {
    bool user;
    int b, tm, tn, K;  // b: the user (user tiles) or the candidate
};
// Unit u: user units first; inside each part (M unit of CL tiles, N tile, batch), M fastest; this CTA's M tile
// is the M unit's `rank`-th (rung 3's walk).
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
// One flag per (user, M tile, N tile, half): each consumer warpgroup publishes its own 64 rows, and the epilogue
// warp waits only for the half it loads. Only halves with rows inside M get one (tm < mTiles).
__device__ __forceinline__ int flagIndex(const Params& p, int user, int tm, int tn, int cw)
{
    return ((user * p.mTiles + tm) * p.nTiles + tn) * 2 + cw;
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
// Generic-proxy global writes (another CTA's user tile) <-> this thread's async-proxy (TMA) reads.
__device__ __forceinline__ void fenceProxyAsyncAll() { asm volatile("fence.proxy.async;" ::: "memory"); }

// Epi = false: a diagnostic (output wrong): no candidate epilogue, the user tiles as usual.
template <int S, bool Epi>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(kThreads, 1)
    lceUserFirst(const __grid_constant__ CUtensorMap tmWu, const __grid_constant__ CUtensorMap tmEu,
                 const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                 const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                 __half* __restrict__ U, const int32_t* __restrict__ userOf, int* __restrict__ flags, const Params p)
{
    static_assert(2 * S + 4 <= 16, "ring + epilogue barriers fit the barrier area");
    using Plan = PlanOf<S, Epi>;
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
    const int cluster = int(blockIdx.x) / CL, clusters = int(gridDim.x) / CL;
    if (tid == 0) {
        tmaPrefetchDesc(&tmWu);
        tmaPrefetchDesc(&tmEu);
        tmaPrefetchDesc(&tmWc);
        tmaPrefetchDesc(&tmEc);
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
            for (int u = cluster; u < p.units; u += clusters) {
                const Unit x = unitAt(u, p, rank);
                const CUtensorMap* tmA = x.user ? &tmWu : &tmWc;
                const CUtensorMap* tmB = x.user ? &tmEu : &tmEc;
                w.tileBegin(x.b * p.mTiles + x.tm, int16_t(x.tn + (x.user ? 1000 : 0)));
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
            const bool issuer = laneId() == 0;
            int done[2] = {0, 0};  // active candidate tiles of half cw so far
            Unit last[2] = {};
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
            for (int u = cluster; u < p.units; u += clusters) {
                const Unit x = unitAt(u, p, rank);
                if (x.user || !Epi) continue;  // the consumers store user tiles themselves
                w.tileBegin(x.b * p.mTiles + x.tm, int16_t(x.tn));
                const int user = userOf[x.b];
                for (int cw = 0; cw < 2; ++cw) {
                    if (x.tm * BM + cw * 64 >= p.M) continue;  // that warpgroup has no rows here: no epilogue
                    if (done[cw] > 0) storeHalf(cw);
                    // U[user]'s rows of this half are in global memory (their warpgroup published them)
                    w.event(wt::kind::WaitOrder, done[cw], uint8_t(cw));
                    if (issuer) {
                        const int* f = &flags[flagIndex(p, user, x.tm, x.tn, cw)];
                        while (flagAcquire(f) != p.epoch) {
                        }
                        fenceProxyAsyncAll();  // ... and visible to the TMA loads below
                    }
                    __syncwarp();
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
        const size_t mn = size_t(p.M) * p.N;
        uint8_t* half = plan.epiStaging() + cw * kHalfBytes;
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
                if (active) mmaIssue<BN>(acc, st + cw * 64 * 128, st + kBytesA, kt == 0, fill, s, w);
                if (kt > 0) {
                    mmaWait<1>(fill - 1, Ring<S, CL>::slot(fill - 1), w);
                    ring.release(fill - 1, lane0, w);
                }
            }
            mmaWait<0>(fill - 1, Ring<S, CL>::slot(fill - 1), w);
            fenceAcc(acc);
            ring.release(fill - 1, lane0, w);
            if (x.user) {
                if (active) {  // store this warpgroup's 64 rows of the user tile, then publish them
                    storeAccF16<BN>(acc, U + x.b * mn, p.N, p.M, p.N, x.tm * BM + cw * 64, x.tn * BN, tInWg, NoFuse{},
                                    w);
                    fenceProxyAsyncAll();  // the generic writes above, for the async proxy (the readers' TMA)
                    __threadfence();
                    storeBarrier(kUserBar0 + cw);
                    if (tInWg == 0) flagRelease(&flags[flagIndex(p, x.b, x.tm, x.tn, cw)], p.epoch);
                }
            } else if (Epi && active) {
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
                            __half2* pp = reinterpret_cast<__half2*>(box + staging64Offset(r0 + 8 * h, q, 4 * t));
                            const float2 uu = __half22float2(*pp);
                            *pp = __floats2half2_rn(acc[4 * j + 2 * h] + uu.x, acc[4 * j + 2 * h + 1] + uu.y);
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
}  // namespace r_userfirst
}  // namespace ws::lce

namespace ws::lce {
using namespace r_userfirst;

std::string runUserFirst(Problem& p)
{
    const Shape& s = p.s;
    auto map2 = [&](CUtensorMap* m, const __half* base, int kp) {  // W: boxes of 64 K x 128 rows
        const uint64_t dims[2] = {uint64_t(kp), uint64_t(s.m)};
        const uint64_t strides[1] = {uint64_t(kp) * 2};
        const uint32_t box[2] = {BK, BM};
        return ws::kern::encodeTmaF16(m, base, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    };
    auto map3 = [&](CUtensorMap* m, const void* base, int inner, int mid, int outer, uint32_t b0, uint32_t b1,
                    CUtensorMapSwizzle sw) {
        const uint64_t dims[3] = {uint64_t(inner), uint64_t(mid), uint64_t(outer)};
        const uint64_t strides[2] = {uint64_t(inner) * 2, uint64_t(mid) * inner * 2};
        const uint32_t box[3] = {b0, b1, 1};
        return ws::kern::encodeTmaF16(m, base, 3, dims, strides, box, sw);
    };
    CUtensorMap tmWu, tmEu, tmWc, tmEc, tmU, tmOut;
    std::string err = map2(&tmWu, p.wUserP, p.kUserP);
    if (err.empty()) err = map2(&tmWc, p.wCandP, p.kCandP);
    if (err.empty()) err = map3(&tmEu, p.eUser, s.n, s.kUser, p.users, 64, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    if (err.empty()) err = map3(&tmEc, p.eCand, s.n, s.kCand, s.b, 64, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    if (err.empty())
        err = map3(&tmU, p.u, s.n, s.m, p.users, uint32_t(kStoreBoxCols), 64, CU_TENSOR_MAP_SWIZZLE_64B);
    if (err.empty())
        err = map3(&tmOut, p.out, s.n, s.m, s.b, uint32_t(kStoreBoxCols), 64, CU_TENSOR_MAP_SWIZZLE_64B);
    if (!err.empty()) return "rung 4 (user first): " + err;
    const UserFirstWalk walk = userFirstWalk(s, 1);  // lce_shape.cpp: tiles, units, flags (clusters below)
    if (walk.flags > lceFlagCount(s))
        return "rung 4 (user first): the driver allocated too few ready flags for this shape";
    if (walk.units > 2147483647LL) return "rung 4 (user first): too many tiles for 32-bit unit numbers";
    static const int variant = [] {  // 0: the rung; 1, 2: the diagnostics without the candidate epilogue
        const char* e = std::getenv("LCE_RUNG4_EPILOGUE");
        const int v = !e ? 0 : std::strcmp(e, "none") == 0 ? 1 : std::strcmp(e, "none4") == 0 ? 2 : 0;
        if (v) std::fprintf(stderr, "lce: rung 4 variant %s: no candidate epilogue (output wrong, timing only)\n", e);
        return v;
    }();
    const auto kern = variant == 0 ? lceUserFirst<3, true> : variant == 1 ? lceUserFirst<3, false> : lceUserFirst<4, false>;
    const int smem = int(variant == 0   ? PlanOf<3, true>::bytes(true, kWarps)
                         : variant == 1 ? PlanOf<3, false>::bytes(true, kWarps)
                                        : PlanOf<4, false>::bytes(true, kWarps));
    static int maxClusters = 0;
    if (maxClusters == 0) {
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
            return "rung 4 (user first): cannot get " + std::to_string(smem) + " bytes of shared memory";
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(CL * 256, 1, 1);
        cfg.blockDim = dim3(kThreads, 1, 1);
        cfg.dynamicSmemBytes = size_t(smem);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n <= 0) {
            cudaGetLastError();
            return "rung 4 (user first): cannot tell how many CTA pairs are resident (it needs all of them resident)";
        }
        maxClusters = n;
    }
    const UserFirstWalk w = userFirstWalk(s, maxClusters);
    Params q;
    q.M = s.m;
    q.N = s.n;
    q.kUser = s.kUser;
    q.kCand = s.kCand;
    q.mTiles = w.mTiles;
    q.mUnits = w.mUnits;
    q.nTiles = w.nTiles;
    q.userUnits = int(w.userUnits);
    q.units = int(w.units);
    q.epoch = nextFlagEpoch();
    const long long clusters = w.clusters;
    kern<<<unsigned(clusters * CL), kThreads, smem, p.stream>>>(tmWu, tmEu, tmWc, tmEc, tmU, tmOut, p.u,
                                                                      p.userOf, p.flags, q);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 4 (user first) launch: ") + cudaGetErrorString(e);
    return {};
}

}  // namespace ws::lce
