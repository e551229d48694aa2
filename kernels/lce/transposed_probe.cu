// A probe, not a rung (s8-lcespeed): the main loop of the TRANSPOSED formulation, without any epilogue (output not
// written), to measure whether it is faster than rungs 3-4's before anyone builds the whole kernel (docs/kernel-notes.md,
// "Session 8, s8-lcespeed", Next (1)).
//   out[b]^T (N x M) = E[b]^T (N x K) . W^T (K x M)
// puts N = 256 on the wgmma M side (no padding) and M = 433 on the wgmma N side, where any multiple of 8 is allowed:
// two tiles of n224 (448 columns) instead of rungs 3-4's 4 x 128 rows in lockstep pairs (512).
// CTA tile: 128 (N: two consumer warpgroups of 64) x 224 (M); A = E[b]^T, MN-major as TMA brings E (two 64 (N) x 64 (K)
// boxes, 128-byte swizzle; imm-trans-a = 1, wgmmaDescSw128Mn); B = W^T, K-major from W's rows (224 rows of 64 K, the
// usual K-major descriptor). CTA pairs on the two N halves of one (candidate, M tile) share the W tile: each loads 112 of
// its rows and multicasts them. Stage 16 + 28 = 44 KB; no staging, so 4 stages fit as well. The unit walk: user units
// first (as rung 4's), then candidates; unit = (batch, M tile), M fastest.
// Run: LCE_RUNG4_EPILOGUE=tnone (3 stages) / tnone4 (4 stages) lce --time --rung 4 -- compare with none / none4.
#include <cstdio>
#include <string>

#include "../src/common/mma.cuh"
#include "../src/common/ring.cuh"
#include "../src/common/smem_plan.cuh"
#include "../src/common/tma.cuh"
#include "lce_rungs.h"
#include "wgmma_f16_tn224.cuh"

namespace ws::lce {
namespace probe {
using namespace ws::kern;

constexpr int kTileN = 128, kTileM = 224, BK = 64, kThreads = 384;
constexpr uint32_t kBytesE = kTileN * BK * 2, kBytesWHalf = kTileM / 2 * BK * 2, kStage = kBytesE + 2 * kBytesWHalf;
static_assert(kBytesWHalf % 1024 == 0, "each W half starts on a swizzle atom");

struct Params {
    int units, userUnits, kUser, kCand, mTiles;
};
// The ring's trace calls, compiled away.
struct NoTrace {
    __device__ __forceinline__ uint64_t now() const { return 0; }
    template <class K>
    __device__ __forceinline__ void event(K, int, uint8_t) const
    {
    }
    template <class K>
    __device__ __forceinline__ void eventAt(uint64_t, K, int, uint8_t) const
    {
    }
};

template <int S>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads, 1)
    lceTransposedProbe(const __grid_constant__ CUtensorMap tmWu, const __grid_constant__ CUtensorMap tmEu,
                       const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                       float* __restrict__ sink, const Params p)
{
    using Plan = SmemPlan<kStage, S, 0>;
    extern __shared__ uint8_t smemRaw[];
    const Plan plan(smemRaw);
    Ring<S, 2> ring{plan.full(), plan.empty()};
    const uint32_t rank = clusterCtaRank();
    ring.peer = rank ^ 1u;
    NoTrace tr;
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int cluster = int(blockIdx.x) / 2, clusters = int(gridDim.x) / 2;
    if (tid == 0) ring.init(8);
    clusterSync();
    if (wg == 0) {
        setMaxNRegDec<40>();
        if (warp == 0) {
            const bool issuer = laneId() == 0;
            int fill = 0;
            for (int u = cluster; u < p.units; u += clusters) {
                const bool user = u < p.userUnits;
                const int i = user ? u : u - p.userUnits, tm = i % p.mTiles, b = i / p.mTiles;
                const CUtensorMap* tmA = user ? &tmEu : &tmEc;
                const CUtensorMap* tmB = user ? &tmWu : &tmWc;
                const int KT = ((user ? p.kUser : p.kCand) + BK - 1) / BK;
                for (int kt = 0; kt < KT; ++kt, ++fill) {
                    const uint64_t t = ring.waitSlot(fill, tr);
                    ring.issueLoad(fill, t, kStage, issuer, tr, [&](int s, uint64_t* bar) {
                        uint8_t* st = plan.stage(s);
#pragma unroll
                        for (int q = 0; q < 2; ++q)
                            tmaLoad3d(st + q * (kBytesE / 2), tmA, bar, int(rank) * kTileN + q * 64, kt * BK, b);
                        tmaLoad2dMulticast(st + kBytesE + rank * kBytesWHalf, tmB, bar, kt * BK,
                                           tm * kTileM + int(rank) * (kTileM / 2), uint16_t(3));
                    });
                }
            }
        }
    } else {
        setMaxNRegInc<232>();
        const int cw = wg - 1;
        const bool lane0 = laneId() == 0;
        int fill = 0;
        float keep = 0.f;
        for (int u = cluster; u < p.units; u += clusters) {
            const bool user = u < p.userUnits;
            const int KT = ((user ? p.kUser : p.kCand) + BK - 1) / BK;
            float acc[kTileM / 2];
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int s = Ring<S, 2>::slot(fill);
                ring.waitData(fill, tr);
                const uint32_t st = smemAddr(plan.stage(s));
                wgmmaFence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk)
                    wgmma_m64n224k16_f16tn(acc, wgmmaDescSw128Mn(st + cw * (kBytesE / 2) + kk * 2048, kBytesE / 2),
                                           wgmmaDescSw128(st + kBytesE + kk * 32), (kt == 0 && kk == 0) ? 0 : 1);
                wgmmaCommit();
                if (kt > 0) {
                    wgmmaWait<1>();
                    ring.release(fill - 1, lane0, tr);
                }
            }
            wgmmaWait<0>();
            ring.release(fill - 1, lane0, tr);
            keep += acc[0] + acc[kTileM / 2 - 1];
        }
        if (keep == 12345.f) sink[tid] = keep;  // (never: keeps the MMAs)
    }
    clusterSync();
}

template <int S>
std::string launch(Problem& p)
{
    const Shape& s = p.s;
    const auto kern = lceTransposedProbe<S>;
    const int smem = int(SmemPlan<kStage, S, 0>::bytes(false, kThreads / 32));
    static int maxClusters = 0;
    if (maxClusters == 0) {
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
            return "transposed probe: cannot get " + std::to_string(smem) + " bytes of shared memory";
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(2 * 256, 1, 1);
        cfg.blockDim = dim3(kThreads, 1, 1);
        cfg.dynamicSmemBytes = size_t(smem);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n <= 0) {
            cudaGetLastError();
            return "transposed probe: cannot tell how many CTA pairs are resident";
        }
        maxClusters = n;
    }
    // W boxes of 64 (K) x 112 rows (half the M tile), E boxes of 64 (N) x 64 (K); 128-byte swizzle
    auto mapW = [&](CUtensorMap* t, const __half* base, int kp) {
        const uint64_t dims[2] = {uint64_t(kp), uint64_t(s.m)};
        const uint64_t strides[1] = {uint64_t(kp) * 2};
        const uint32_t box[2] = {uint32_t(BK), uint32_t(kTileM / 2)};
        return encodeTmaF16(t, base, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    };
    auto mapE = [&](CUtensorMap* t, const __half* base, int k, int outer) {
        const uint64_t dims[3] = {uint64_t(s.n), uint64_t(k), uint64_t(outer)};
        const uint64_t strides[2] = {uint64_t(s.n) * 2, uint64_t(k) * s.n * 2};
        const uint32_t box[3] = {64, uint32_t(BK), 1};
        return encodeTmaF16(t, base, 3, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    };
    CUtensorMap wu, eu, wc, ec;
    std::string err = mapW(&wc, p.wCandP, p.kCandP);
    if (err.empty()) err = mapW(&wu, p.wUserP, p.kUserP);
    if (err.empty()) err = mapE(&ec, p.eCand, s.kCand, s.b);
    if (err.empty()) err = mapE(&eu, p.eUser, s.kUser, p.users);
    if (!err.empty()) return "transposed probe: " + err;
    if (s.n % kTileN != 0) return "transposed probe: N must be a multiple of 128 (a probe at the benchmark point)";
    Params q{};
    q.mTiles = (s.m + kTileM - 1) / kTileM;
    const int nHalves = s.n / kTileN;
    if (nHalves != 2) return "transposed probe: N must be 256 (one CTA pair per (batch, M tile))";
    q.userUnits = p.users * q.mTiles;
    q.units = q.userUnits + s.b * q.mTiles;
    q.kUser = s.kUser;
    q.kCand = s.kCand;
    const int clusters = q.units < maxClusters ? q.units : maxClusters;
    kern<<<unsigned(clusters * 2), kThreads, smem, p.stream>>>(wu, eu, wc, ec, reinterpret_cast<float*>(p.out), q);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("transposed probe launch: ") + cudaGetErrorString(e);
    return {};
}

}  // namespace probe

std::string runTransposedProbe(Problem& p, int stages)
{
    return stages == 4 ? probe::launch<4>(p) : probe::launch<3>(p);
}

}  // namespace ws::lce
