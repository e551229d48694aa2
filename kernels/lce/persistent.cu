// Rung 4 until session 5's third pass, now behind LCE_RUNG4=pingpong (rung 4 is user_first.cu: rung 3's kernel
// with the user stage folded in, 0.452-0.457 ms against this kernel's 0.564-0.566 ms) -- persistent ping-pong,
// both stages in one kernel.
// IDEA: the two consumer warpgroups work on DIFFERENT tiles, alternately: warpgroup 0 takes the CTA's
// even units, warpgroup 1 its odd ones, so while one converts, adds U[u(b)] and stores its tile (the
// epilogue that rung 3 runs with the tensor cores idle, 0.21 of its 0.52 ms), the other issues the MMAs of
// the next tile. The order: the producer fills one ring unit after unit (shared pieces' Ring), and an order
// barrier (the GEMM ladder's pingpong.cu idea: a named-barrier arrive / sync pair between the warpgroups)
// lets a warpgroup start its unit once the other's previous unit has all its data -- so the next unit's
// MMAs start while the current one's last k-steps run, and its owner's epilogue runs under them. One
// persistent launch also does the
// user GEMM U = W_user . E_user: user tiles come first in every CTA's walk; a warpgroup that finishes a user
// tile stores it and publishes its ready flag (release); a candidate tile's warpgroup acquires its user
// tile's flag just before the epilogue adds U -- by then the other warpgroup's MMAs cover the wait.
// Tiles: a warpgroup owns a whole 128 (M) x 128 (N) tile (two m64n128k16 per k16 sharing B; 128
// accumulator registers); the 4th M tile at M = 433 has 49 rows, so its second row block is skipped.
// CTA pairs (clusters of 2) take the two N halves of the same (batch, M tile): each CTA loads its own
// E tile and half of the W tile, multicast to both (W is shared by all candidates; E_cand[b] is read from
// L2 by the 4 M tiles that run side by side). The epilogue stores from registers (rung 3's measured
// choice), U's loads batched. No deadlock: every CTA is resident (grid = the clusters that fit), each
// walks its units in increasing order, user units (which wait for nothing) first, and a flag wait comes
// after the warpgroup has released all its slots. Flags hold the launch's epoch (never reset).
// Trace: as rung 3's first kernel (fused_epilogue.cu), plus WaitOrder twice: the order barrier before a unit's
// first WaitData, and the ready-flag wait before a candidate tile's Store; tile markers with tileM = unit's
// batch (user or candidate) * mTiles + tm, tileN = tn + 1000 for user tiles.
// Measured (H200, docs/benchmarks.md): correct at every shape gpu_lce checks, 0.559 ms -- slower than rung 3
// (0.450); docs/kernel-notes.md says why that is likely (half the tile per CTA: 1.5x the L2 traffic per FLOP)
// and which measurement decides (LCE_RUNG4_EPILOGUE=none).
// Built from the shared pieces: SmemPlan, Ring, mmaIssueRows/mmaWait, storeAccF16 + AddBroadcastL2.
#include <warpstage/trace.cuh>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

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

constexpr int BM = 128, BN = 128, BK = 64, S = 6, CL = 2, kThreads = 384, kWarps = kThreads / 32;
constexpr int kConsumerWarps = 4;  // a slot is read by one warpgroup: the one whose unit it holds
constexpr uint32_t kBytesA = BM * BK * 2, kHalfA = kBytesA / CL, kBoxB = 64 * BK * 2, kStage = kBytesA + BN / 64 * kBoxB;
using Plan = SmemPlan<kStage, S>;
constexpr uint32_t kEpiBar0 = 1;  // named barriers 1, 2: warpgroup cw's epilogue
// Named barriers 3, 4: the order barrier. Warpgroup cw may wait on the data of its unit j only once every
// fill of unit j - 1 (the other warpgroup's) has landed: a consumer that skips the other's fills could
// otherwise wait on a slot two phases behind, where the mbarrier's parity would answer "ready" for stale
// data. The owner of unit j - 1 arrives on kGoBar0 + (the other cw) after its last waitData; the owner of
// unit j syncs on kGoBar0 + cw before its first. (The same pair of calls as the GEMM ladder's pingpong.cu.)
constexpr uint32_t kGoBar0 = 3;
static_assert(Plan::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");
static_assert(BM == kPpTileM && BN == kPpTileN && CL == kPpCluster, "the walk of lce_shape.h is this kernel's");

struct Unit {
    bool user;
    int batch, tm, tn, K;
};

struct Params {
    int M, N, kUser, kCand, users, units, userUnits, mTiles, nPairs, epoch;
};

// Unit u of the walk: (batch, M tile, pair of N tiles), M fastest; this CTA's N tile is the pair's `rank`.
__device__ __forceinline__ Unit unitAt(int u, const Params& p, uint32_t rank)
{
    Unit x;
    x.user = u < p.userUnits;
    const int i = x.user ? u : u - p.userUnits;
    x.tm = i % p.mTiles;
    const int r = i / p.mTiles;
    x.tn = (r % p.nPairs) * CL + int(rank);
    x.batch = r / p.nPairs;
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

// Epi = false: a diagnostic (LCE_RUNG4_EPILOGUE=none, output wrong): no candidate epilogue at all, so that the
// ping-pong's mainloop can be timed alone (as rung 3's "none" variant).
template <bool Epi>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(kThreads, 1)
    lcePersistent(const __grid_constant__ CUtensorMap tmWu, const __grid_constant__ CUtensorMap tmEu,
                  const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                  __half* __restrict__ out, __half* __restrict__ U, const int32_t* __restrict__ userOf,
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
    const int nTiles = p.nPairs * CL;  // N tiles the walk covers (flag index); the last may lie past N
    const int cluster = int(blockIdx.x) / CL, clusters = int(gridDim.x) / CL;
    if (tid == 0) {
        tmaPrefetchDesc(&tmWu);
        tmaPrefetchDesc(&tmEu);
        tmaPrefetchDesc(&tmWc);
        tmaPrefetchDesc(&tmEc);
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
            w.tileBegin(x.batch * p.mTiles + x.tm, int16_t(x.tn + (x.user ? 1000 : 0)));
            const int KT = (x.K + BK - 1) / BK;
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const uint64_t tWait = ring.waitSlot(fill, w);
                ring.issueLoad(fill, tWait, kStage, issuer, w, [&](int s, uint64_t* bar) {
                    uint8_t* st = plan.stage(s);
                    // this CTA's half of the W tile (64 rows), to both CTAs of the pair
                    tmaLoad2dMulticast(st + rank * kHalfA, tmA, bar, kt * BK, x.tm * BM + int(rank) * (BM / CL),
                                       uint16_t((1u << CL) - 1));
#pragma unroll
                    for (int q = 0; q < BN / 64; ++q)
                        tmaLoad3d(st + kBytesA + q * kBoxB, tmB, bar, x.tn * BN + q * 64, kt * BK, x.batch);
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
        const size_t mn = size_t(p.M) * p.N;
        int fill = 0;  // the CTA's fill counter: this warpgroup skips the other one's k-steps
        int j = 0;
        for (int u = cluster; u < p.units; u += clusters, ++j) {
            const Unit x = unitAt(u, p, rank);
            const int KT = (x.K + BK - 1) / BK;
            if ((j & 1) != cw) {  // the other warpgroup's unit
                fill += KT;
                continue;
            }
            w.tileBegin(x.batch * p.mTiles + x.tm, int16_t(x.tn + (x.user ? 1000 : 0)));
            const int rowsLeft = p.M - x.tm * BM;
            const int rowBlocks = rowsLeft >= 64 ? 2 : 1;  // rowsLeft > 0: tm < mTiles
            const bool active = x.tn * BN < p.N;           // warp-uniform: the tile has columns inside N
            float acc[2][BN / 2];
            const bool hasNext = u + clusters < p.units;  // the other warpgroup has a unit after this one
            if (j > 0) {  // unit j - 1's fills have all landed (its owner says so)
                w.event(wt::kind::WaitOrder, fill);
                namedBarSync(kGoBar0 + cw, 256);
            }
            // The mainloop, one instance per row-block count (RB = 0: a tile past N, no MMAs): the count must be
            // a compile-time constant inside the wgmma group (ptxas serializes wgmmas behind a run-time test).
            auto mainloop = [&](auto rb) {
                constexpr int RB = decltype(rb)::value;
                for (int kt = 0; kt < KT; ++kt, ++fill) {
                    const int s = Ring<S, CL>::slot(fill);
                    ring.waitData(fill, w);
                    if (kt == KT - 1 && hasNext) namedBarArrive(kGoBar0 + (1 - cw), 256);
                    const uint32_t st = smemAddr(plan.stage(s));
                    if constexpr (RB > 0) mmaIssueRows<BN, 2, RB>(acc, st, st + kBytesA, kt == 0, fill, s, w);
                    if (kt > 0) {
                        mmaWait<1>(fill - 1, Ring<S, CL>::slot(fill - 1), w);
                        ring.release(fill - 1, lane0, w);
                    }
                }
                mmaWait<0>(fill - 1, Ring<S, CL>::slot(fill - 1), w);
                fenceAcc(acc[0]);
                fenceAcc(acc[1]);
                ring.release(fill - 1, lane0, w);
            };
            if (!active) mainloop(std::integral_constant<int, 0>{});
            else if (rowBlocks == 2) mainloop(std::integral_constant<int, 2>{});
            else mainloop(std::integral_constant<int, 1>{});
            if (x.user) {
                if (active) {
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        if (h < rowBlocks)
                            storeAccF16<BN>(acc[h], U + x.batch * mn, p.N, p.M, p.N, x.tm * BM + h * 64, x.tn * BN,
                                            tInWg, NoFuse{}, w);
                }
                __threadfence();
                storeBarrier(kEpiBar0 + cw);
                if (tInWg == 0)
                    flagRelease(&flags[(size_t(x.batch) * p.mTiles + x.tm) * nTiles + x.tn], p.epoch);
            } else if (Epi && active) {
                const int user = userOf[x.batch];
                w.event(wt::kind::WaitOrder);
                if (tInWg == 0) {
                    const int* f = &flags[(size_t(user) * p.mTiles + x.tm) * nTiles + x.tn];
                    while (flagAcquire(f) != p.epoch) {
                    }
                }
                storeBarrier(kEpiBar0 + cw);
                const AddBroadcastL2 add{U + user * mn, p.N};
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    if (h < rowBlocks)
                        storeAccF16<BN>(acc[h], out + x.batch * mn, p.N, p.M, p.N, x.tm * BM + h * 64, x.tn * BN,
                                        tInWg, add, w);
            }
            w.tileEnd();
        }
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
    CUtensorMap tmWu, tmEu, tmWc, tmEc;
    auto map2 = [&](CUtensorMap* m, const __half* base, int kp, int rows) {  // W: boxes of 64 K x 64 rows
        const uint64_t dims[2] = {uint64_t(kp), uint64_t(rows)};
        const uint64_t strides[1] = {uint64_t(kp) * 2};
        const uint32_t box[2] = {BK, BM / CL};
        return ws::kern::encodeTmaF16(m, base, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    };
    auto map3 = [&](CUtensorMap* m, const __half* base, int inner, int mid, int outer) {  // E: 64 N x 64 K boxes
        const uint64_t dims[3] = {uint64_t(inner), uint64_t(mid), uint64_t(outer)};
        const uint64_t strides[2] = {uint64_t(inner) * 2, uint64_t(mid) * inner * 2};
        const uint32_t box[3] = {64, BK, 1};
        return ws::kern::encodeTmaF16(m, base, 3, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    };
    std::string err = map2(&tmWu, p.wUserP, p.kUserP, s.m);
    if (err.empty()) err = map2(&tmWc, p.wCandP, p.kCandP, s.m);
    if (err.empty()) err = map3(&tmEu, p.eUser, s.n, s.kUser, p.users);
    if (err.empty()) err = map3(&tmEc, p.eCand, s.n, s.kCand, s.b);
    if (!err.empty()) return "rung 4: " + err;
    const int smem = int(Plan::bytes(true, kWarps));
    static const bool epi = [] {
        const char* e = std::getenv("LCE_RUNG4_EPILOGUE");
        const bool none = e && std::strcmp(e, "none") == 0;
        if (none) std::fprintf(stderr, "lce: rung 4 variant: no candidate epilogue (output wrong, timing only)\n");
        return !none;
    }();
    const auto kern = epi ? lcePersistent<true> : lcePersistent<false>;
    static int maxClusters[2] = {0, 0};
    if (maxClusters[epi] == 0) {
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
            return "rung 4: cannot get " + std::to_string(smem) + " bytes of shared memory";
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(CL * 256, 1, 1);
        cfg.blockDim = dim3(kThreads, 1, 1);
        cfg.dynamicSmemBytes = size_t(smem);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n <= 0) {
            cudaGetLastError();
            return "rung 4: cannot tell how many CTA pairs are resident (it needs all of them resident)";
        }
        maxClusters[epi] = n;
    }
    const PingpongWalk walk = pingpongWalk(s, maxClusters[epi]);  // lce_shape.cpp: units, odd cluster stride
    Params q;
    q.M = s.m;
    q.N = s.n;
    q.kUser = s.kUser;
    q.kCand = s.kCand;
    q.users = p.users;
    q.mTiles = walk.mTiles;
    q.nPairs = walk.nPairs;
    q.userUnits = walk.userUnits;
    q.units = walk.units;
    q.epoch = nextFlagEpoch();
    const int clusters = walk.clusters;
    kern<<<unsigned(clusters * CL), kThreads, smem, p.stream>>>(tmWu, tmEu, tmWc, tmEc, p.out, p.u,
                                                                      p.userOf, p.flags, q);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 4 launch: ") + cudaGetErrorString(e);
    return {};
}

}  // namespace ws::lce
