// Rung 3 -- fused epilogue (this file: the first kernel; the rung now runs epilogue_warp.cu, measured faster).
// IDEA: the candidate GEMM is our own TMA + wgmma kernel, and the broadcast add of the user side
// U[u(b)] (U = W_user . E_user, one cuBLAS launch, K padded) happens in its epilogue: the
// accumulator gets U added in registers before the one fp16 store. Rung 2's separate gather + add
// (read C and U, write out: ~0.7 GB at the benchmark point) and its launch are gone.
// Layout: out[b] (M x N) = W_cand (M x K) . E_cand[b] (K x N). W_cand is the wgmma A operand
// (K-major, rows padded to a multiple of 8 so TMA may read them); E_cand[b] is B, read as it is
// stored: MN-major ([K, N], N contiguous: imm-trans-b), through a 3-D tensor map {N, K, B} whose
// out-of-bounds zero fill covers the K tail (866 = 13 x 64 + 34) and N tails. The CTA tile is
// 128 (M) x 256 (N) of one candidate; each consumer warpgroup owns 64 rows; a warpgroup whose rows
// are all past M (the 4th M tile at M = 433 has 49 rows) skips its MMAs. Persistent grid of CTA pairs
// (clusters of 2 on vertically adjacent M tiles of one candidate, each CTA loading half of the E_cand
// tile and multicasting it to both), unit order m fastest (the CTAs reading one E_cand[b] run
// together: E_cand comes from DRAM once), and an odd-stride grid so that every cluster gets its share
// of the short M tiles. The epilogue stores from registers; U's loads go in batches of 16 per thread.
// Measured (docs/benchmarks.md, H200): 0.52 ms at the benchmark point, 0.31 ms with no epilogue at
// all: the epilogue is not overlapped with the MMAs, and that is what rung 4's missing ping-pong is
// for. The TMA-store epilogue (LCE_RUNG3_EPILOGUE=tma) measured slower here (0.56 ms): its per-box
// barriers put the U loads' latency back in series.
// Built from the shared pieces (kernels/src/common): SmemPlan, Ring, mmaIssue/mmaWait, storeAccF16 +
// AddBroadcast. Instrumented with the public <warpstage/trace.cuh> as a user's kernel would be:
// recorded with `warpstage-record --kernels lceFusedEpilogue -- lce --rung 3 --time`.
// Trace: producer WaitSlot / IssueLoad per k-step; consumers WaitData (+ load ready) / MmaIssue /
// MmaWait / Release per k-step and Store per tile; tile markers (tileM = b * mTiles + tm, tileN = tn).
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
namespace r_fused {
using namespace ws::kern;
namespace wt = ws::trace;

constexpr int BM = 128, BN = 256, BK = 64, S = 4, kThreads = 384, kWarps = kThreads / 32;
constexpr int kConsumerWarps = 8;
constexpr uint32_t kBytesA = BM * BK * 2;  // W_cand: 128 rows x 64 K
constexpr uint32_t kBoxB = 64 * BK * 2;    // E_cand: one 64 (N) x 64 (K) box
constexpr uint32_t kStage = kBytesA + BN / 64 * kBoxB;
constexpr uint32_t kEpiBytes = 2 * 2 * kStoreBoxBytes;  // TMA-store staging: 2 warpgroups x 2 boxes of 4 KB
using Plan = SmemPlan<kStage, S, kEpiBytes>;
constexpr uint32_t kEpiBar0 = 1;  // named barriers 1, 2: consumer warpgroup cw's epilogue steps
static_assert(Plan::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");

struct Tile {
    int b, tm, tn;
};
// Unit u of the walk (one tile, or one pair of vertically adjacent tiles for CTA pairs): m fastest.
__device__ __forceinline__ Tile unitAt(int u, int mUnits, int nTiles)
{
    Tile x;
    x.tm = u % mUnits;
    const int r = u / mUnits;
    x.tn = r % nTiles;
    x.b = r / nTiles;
    return x;
}

// Epilogues: the fused add through the TMA engine, the fused add with register-to-global stores (the
// rung's: measured faster), and two diagnostics (LCE_RUNG3_EPILOGUE, timing only: the output is then wrong): the direct store without
// the add, and no store at all. They measure what the fused add and the store cost.
enum Epi { kEpiFusedTma = 0, kEpiFused = 1, kEpiNoAdd = 2, kEpiNone = 3 };
constexpr int kEpis = 4;

// CL = 2: CTA pairs (a cluster) compute vertically adjacent M tiles of the same candidate; each CTA's
// producer loads half of the E_cand tile and multicasts it to both, halving E_cand's L2 traffic.
template <int CL, int EPI>
__global__ void __launch_bounds__(kThreads, 1)
    lceFusedEpilogue(const __grid_constant__ CUtensorMap tmW, const __grid_constant__ CUtensorMap tmE,
                     const __grid_constant__ CUtensorMap tmOut, __half* __restrict__ out, const __half* __restrict__ U, const int32_t* __restrict__ userOf,
                     int M, int N, int K, int units)
{
    extern __shared__ uint8_t smemRaw[];
    const Plan plan(smemRaw);
    Ring<S, CL> ring{plan.full(), plan.empty()};
    const uint32_t rank = CL > 1 ? clusterCtaRank() : 0u;
    ring.peer = rank ^ 1u;
    wt::Cta cta;
    cta.pipeline(S, kStage);
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int mTiles = (M + BM - 1) / BM, nTiles = (N + BN - 1) / BN, KT = (K + BK - 1) / BK;
    const int mUnits = (mTiles + CL - 1) / CL;
    const int cluster = int(blockIdx.x) / CL, clusters = int(gridDim.x) / CL;
    if (tid == 0) {
        tmaPrefetchDesc(&tmW);
        tmaPrefetchDesc(&tmE);
        if constexpr (EPI == kEpiFusedTma) tmaPrefetchDesc(&tmOut);
        ring.init(kConsumerWarps);
    }
    if constexpr (CL > 1) clusterSync();  // the peer's barriers are initialised before anyone signals them
    else __syncthreads();

    if (wg == 0) {
        setMaxNRegDec<40>();
        if (warp != 0) {  // warps 1-3 have nothing to do; while recording they stay for the CTA record
            if (!cta.recording()) return;
            wt::Warp<wt::Staged> idle(cta, wt::role::Idle, 0, uint8_t(warp), wt::kNoUserRole, plan.traceStaging(warp));
            idle.end();
            cta.end();
            return;
        }
        wt::Warp<wt::Staged> w(cta, wt::role::Producer, 0, 0, wt::kNoUserRole, plan.traceStaging(0));
        const bool issuer = laneId() == 0;
        int fill = 0;
        for (int u = cluster; u < units; u += clusters) {
            Tile x = unitAt(u, mUnits, nTiles);
            x.tm = x.tm * CL + int(rank);
            w.tileBegin(x.b * mTiles + x.tm, int16_t(x.tn));
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const uint64_t tWait = ring.waitSlot(fill, w);
                ring.issueLoad(fill, tWait, kStage, issuer, w, [&](int s, uint64_t* bar) {
                    uint8_t* st = plan.stage(s);
                    tmaLoad2d(st, &tmW, bar, kt * BK, x.tm * BM);
                    constexpr int kBoxes = BN / 64 / CL;  // this CTA's share of the E_cand boxes
#pragma unroll
                    for (int i = 0; i < kBoxes; ++i) {
                        const int q = int(rank) * kBoxes + i;
                        if constexpr (CL > 1)
                            tmaLoad3dMulticast(st + kBytesA + q * kBoxB, &tmE, bar, x.tn * BN + q * 64, kt * BK, x.b,
                                               uint16_t((1u << CL) - 1));
                        else
                            tmaLoad3d(st + kBytesA + q * kBoxB, &tmE, bar, x.tn * BN + q * 64, kt * BK, x.b);
                    }
                });
            }
            w.tileEnd();
        }
        w.end();
    } else {
        setMaxNRegInc<232>();
        const int cw = wg - 1;
        wt::Warp<wt::Staged> w(cta, wt::role::Consumer, uint8_t(wg), uint8_t(warp - 4), wt::kNoUserRole,
                               plan.traceStaging(warp));
        const bool lane0 = laneId() == 0;
        int fill = 0;
        for (int u = cluster; u < units; u += clusters) {
            Tile x = unitAt(u, mUnits, nTiles);
            x.tm = x.tm * CL + int(rank);
            w.tileBegin(x.b * mTiles + x.tm, int16_t(x.tn));
            const int row0 = x.tm * BM + cw * 64;
            const bool active = row0 < M;  // warp-uniform: this warpgroup has rows inside M
            float acc[BN / 2];
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int s = Ring<S, CL>::slot(fill);
                ring.waitData(fill, w);
                const uint32_t st = smemAddr(plan.stage(s));
                if (active) mmaIssue<BN>(acc, st + cw * 64 * 128, st + kBytesA, kt == 0, fill, s, w);
                if (kt > 0) {  // one k-step in flight: the previous one is done -> its slot is free
                    mmaWait<1>(fill - 1, Ring<S, CL>::slot(fill - 1), w);
                    ring.release(fill - 1, lane0, w);
                }
            }
            mmaWait<0>(fill - 1, Ring<S, CL>::slot(fill - 1), w);
            fenceAcc(acc);
            ring.release(fill - 1, lane0, w);
            if (active) {
                __half* o = out + size_t(x.b) * M * N;
                if constexpr (EPI == kEpiFusedTma)
                    storeAccTmaF16<BN>(acc, &tmOut, plan.epiStaging() + cw * 2 * kStoreBoxBytes, M, N, row0,
                                       x.tn * BN, x.b, tid & 127, kEpiBar0 + cw,
                                       AddBroadcast{U + size_t(userOf[x.b]) * M * N, N}, w);
                else if constexpr (EPI == kEpiFused)
                    storeAccF16<BN>(acc, o, N, M, N, row0, x.tn * BN, tid & 127,
                                    AddBroadcast{U + size_t(userOf[x.b]) * M * N, N}, w);
                else if constexpr (EPI == kEpiNoAdd)
                    storeAccF16<BN>(acc, o, N, M, N, row0, x.tn * BN, tid & 127, NoFuse{}, w);
            }
            w.tileEnd();
        }
        if constexpr (EPI == kEpiFusedTma)
            if ((tid & 127) == kStoreIssuer) bulkWait<0>();  // every bulk store of this warpgroup has landed
        w.end();
    }
    cta.end();
    if constexpr (CL > 1) clusterSync();  // no CTA leaves while its peer may still signal its barriers
}
}  // namespace r_fused

using namespace r_fused;

namespace {
using KernelFn = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, __half*, const __half*, const int32_t*, int, int, int, int);
template <int CL, int EPI>
KernelFn kernelFor()
{
    return reinterpret_cast<KernelFn>(&lceFusedEpilogue<CL, EPI>);
}
// Variant from the environment (experiments; the defaults are the rung): LCE_RUNG3_CLUSTER=1|2,
// LCE_RUNG3_EPILOGUE=direct|tma|noadd|none, or =warp: the epilogue-warp kernel of epilogue_warp.cu.
struct Variant {
    int cluster = 2, epi = kEpiFused;
};
Variant variant()
{
    static Variant v = [] {
        Variant r;
        if (const char* c = std::getenv("LCE_RUNG3_CLUSTER")) r.cluster = std::atoi(c) == 1 ? 1 : 2;
        if (const char* e = std::getenv("LCE_RUNG3_EPILOGUE"))
            r.epi = std::strcmp(e, "tma") == 0     ? kEpiFusedTma
                    : std::strcmp(e, "noadd") == 0 ? kEpiNoAdd
                    : std::strcmp(e, "none") == 0  ? kEpiNone
                                                   : kEpiFused;
        static const char* names[kEpis] = {"fused, TMA store", "fused, direct store", "noadd (output wrong)",
                                           "none (output wrong)"};
        if (r.cluster != 2 || r.epi != kEpiFused)
            std::fprintf(stderr, "lce: rung 3 variant: cluster %d, epilogue %s\n", r.cluster, names[r.epi]);
        return r;
    }();
    return v;
}
}  // namespace

std::string runFusedEpilogue(Problem& p)
{
    static const bool epilogueWarp = [] {
        // The epilogue-warp kernel is the rung (measured faster, session 5: docs/benchmarks.md); any other
        // LCE_RUNG3_EPILOGUE value selects this file's register / TMA-store / diagnostic epilogues.
        const char* e = std::getenv("LCE_RUNG3_EPILOGUE");
        const bool on = !e || !*e || std::strcmp(e, "warp") == 0;
        if (!on) std::fprintf(stderr, "lce: rung 3 variant: this file's kernel (epilogue %s)\n", e);
        return on;
    }();
    if (epilogueWarp) return runFusedEpilogueWarp(p);
    const Shape& s = p.s;
    std::string err = userGemm(p, true);
    if (!err.empty()) return err;
    CUtensorMap tmW, tmE, tmOut;
    {
        const uint64_t dims[2] = {uint64_t(p.kCandP), uint64_t(s.m)};
        const uint64_t strides[1] = {uint64_t(p.kCandP) * 2};
        const uint32_t box[2] = {BK, BM};
        err = ws::kern::encodeTmaF16(&tmW, p.wCandP, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    }
    if (err.empty()) {
        const uint64_t dims[3] = {uint64_t(s.n), uint64_t(s.kCand), uint64_t(s.b)};
        const uint64_t strides[2] = {uint64_t(s.n) * 2, uint64_t(s.kCand) * s.n * 2};
        const uint32_t box[3] = {64, BK, 1};
        err = ws::kern::encodeTmaF16(&tmE, p.eCand, 3, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    }
    if (err.empty()) {
        const uint64_t dims[3] = {uint64_t(s.n), uint64_t(s.m), uint64_t(s.b)};
        const uint64_t strides[2] = {uint64_t(s.n) * 2, uint64_t(s.m) * s.n * 2};
        const uint32_t box[3] = {uint32_t(ws::kern::kStoreBoxCols), 64, 1};
        err = ws::kern::encodeTmaF16(&tmOut, p.out, 3, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_64B);
    }
    if (!err.empty()) return "rung 3: " + err;
    const Variant v = variant();
    static const KernelFn table[2][kEpis] = {
        {kernelFor<1, 0>(), kernelFor<1, 1>(), kernelFor<1, 2>(), kernelFor<1, 3>()},
        {kernelFor<2, 0>(), kernelFor<2, 1>(), kernelFor<2, 2>(), kernelFor<2, 3>()}};
    const KernelFn kern = table[v.cluster - 1][v.epi];
    const int CL = v.cluster;
    const int mTiles = (s.m + BM - 1) / BM, nTiles = (s.n + BN - 1) / BN;
    const int mUnits = (mTiles + CL - 1) / CL;
    const long long units = (long long)mUnits * nTiles * s.b;
    // Traced or not is decided at run time (the control word); ask for the traced build's shared memory
    // so that a recording launch fits.
    const int smem = int(Plan::bytes(true, kWarps));
    static bool attrSet[2][kEpis] = {};
    if (!attrSet[CL - 1][v.epi]) {
        if (cudaFuncSetAttribute(reinterpret_cast<const void*>(kern), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 smem) != cudaSuccess)
            return "rung 3: cannot get " + std::to_string(smem) + " bytes of shared memory";
        attrSet[CL - 1][v.epi] = true;
    }
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(CL);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.blockDim = dim3(kThreads, 1, 1);
    cfg.dynamicSmemBytes = size_t(smem);
    cfg.stream = p.stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    static int maxClusters[3] = {0, 0, 0};
    if (maxClusters[CL] == 0) {
        cfg.gridDim = dim3(unsigned(CL * 256), 1, 1);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n <= 0) {
            cudaGetLastError();
            int sms = 0;
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
            n = sms / CL;
        }
        maxClusters[CL] = n;
    }
    long long clusters = units < maxClusters[CL] ? units : maxClusters[CL];
    if (clusters > 1 && clusters % mUnits == 0) --clusters;  // an odd stride: each cluster walks every M unit
    cfg.gridDim = dim3(unsigned(clusters * CL), 1, 1);
    cudaError_t e = cudaLaunchKernelEx(&cfg, kern, tmW, tmE, tmOut, p.out, static_cast<const __half*>(p.u),
                                       static_cast<const int32_t*>(p.userOf), s.m, s.n, s.kCand, int(units));
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 3 launch: ") + cudaGetErrorString(e);
    return {};
}

}  // namespace ws::lce
