// Rung 3 -- fused epilogue.
// IDEA: the candidate GEMM is our own TMA + wgmma kernel, and the broadcast add of the user side
// U[u(b)] (U = W_user . E_user, one cuBLAS launch, K padded) happens in its epilogue: the
// accumulator gets U added in registers before the one fp16 store. Rung 2's separate gather + add
// (read C and U, write out: ~0.7 GB at the benchmark point) and its launch are gone.
// Layout: out[b] (M x N) = W_cand (M x K) . E_cand[b] (K x N). W_cand is the wgmma A operand
// (K-major, rows padded to a multiple of 8 so TMA may read them); E_cand[b] is B, read as it is
// stored: MN-major ([K, N], N contiguous: imm-trans-b), through a 3-D tensor map {N, K, B} whose
// out-of-bounds zero fill covers the K tail (866 = 13 x 64 + 34) and N tails. The CTA tile is
// 128 (M) x 256 (N) of one candidate; each consumer warpgroup owns 64 rows; a warpgroup whose rows
// are all past M (the 4th M tile at M = 433 has 49 rows) skips its MMAs. Persistent grid, tile order
// m fastest (the 4 CTAs reading one E_cand[b] run together: E_cand comes from DRAM once), and an
// odd-stride grid so that every CTA gets its share of the short M tiles.
// Built from the shared pieces (kernels/src/common): SmemPlan, Ring, mmaIssue/mmaWait, storeAccF16 +
// AddBroadcast. Instrumented with the public <warpstage/trace.cuh> as a user's kernel would be:
// recorded with `warpstage-record --kernels lceFusedEpilogue -- lce --rung 3 --time`.
// Trace: producer WaitSlot / IssueLoad per k-step; consumers WaitData (+ load ready) / MmaIssue /
// MmaWait / Release per k-step and Store per tile; tile markers (tileM = b * mTiles + tm, tileN = tn).
#include <warpstage/trace.cuh>

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
using Plan = SmemPlan<kStage, S>;
static_assert(Plan::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");

struct Tile {
    int b, tm, tn;
};
__device__ __forceinline__ Tile tileAt(int t, int mTiles, int nTiles)
{
    Tile x;
    x.tm = t % mTiles;
    const int r = t / mTiles;
    x.tn = r % nTiles;
    x.b = r / nTiles;
    return x;
}

__global__ void __launch_bounds__(kThreads, 1)
    lceFusedEpilogue(const __grid_constant__ CUtensorMap tmW, const __grid_constant__ CUtensorMap tmE,
                     __half* __restrict__ out, const __half* __restrict__ U, const int32_t* __restrict__ userOf,
                     int M, int N, int K, int tiles)
{
    extern __shared__ uint8_t smemRaw[];
    const Plan plan(smemRaw);
    const Ring<S> ring{plan.full(), plan.empty()};
    wt::Cta cta;
    cta.pipeline(S, kStage);
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int mTiles = (M + BM - 1) / BM, nTiles = (N + BN - 1) / BN, KT = (K + BK - 1) / BK;
    if (tid == 0) {
        tmaPrefetchDesc(&tmW);
        tmaPrefetchDesc(&tmE);
        ring.init(kConsumerWarps);
    }
    __syncthreads();

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
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            const Tile x = tileAt(t, mTiles, nTiles);
            w.tileBegin(x.b * mTiles + x.tm, int16_t(x.tn));
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const uint64_t tWait = ring.waitSlot(fill, w);
                ring.issueLoad(fill, tWait, kStage, issuer, w, [&](int s, uint64_t* bar) {
                    uint8_t* st = plan.stage(s);
                    tmaLoad2d(st, &tmW, bar, kt * BK, x.tm * BM);
#pragma unroll
                    for (int q = 0; q < BN / 64; ++q)
                        tmaLoad3d(st + kBytesA + q * kBoxB, &tmE, bar, x.tn * BN + q * 64, kt * BK, x.b);
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
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            const Tile x = tileAt(t, mTiles, nTiles);
            w.tileBegin(x.b * mTiles + x.tm, int16_t(x.tn));
            const int row0 = x.tm * BM + cw * 64;
            const bool active = row0 < M;  // warp-uniform: this warpgroup has rows inside M
            float acc[BN / 2];
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int s = Ring<S>::slot(fill);
                ring.waitData(fill, w);
                const uint32_t st = smemAddr(plan.stage(s));
                if (active) mmaIssue<BN>(acc, st + cw * 64 * 128, st + kBytesA, kt == 0, fill, s, w);
                if (kt > 0) {  // one k-step in flight: the previous one is done -> its slot is free
                    mmaWait<1>(fill - 1, Ring<S>::slot(fill - 1), w);
                    ring.release(fill - 1, lane0, w);
                }
            }
            mmaWait<0>(fill - 1, Ring<S>::slot(fill - 1), w);
            fenceAcc(acc);
            ring.release(fill - 1, lane0, w);
            if (active)
                storeAccF16<BN>(acc, out + size_t(x.b) * M * N, N, M, N, row0, x.tn * BN, tid & 127,
                                AddBroadcast{U + size_t(userOf[x.b]) * M * N, N}, w);
            w.tileEnd();
        }
        w.end();
    }
    cta.end();
}
}  // namespace r_fused

using namespace r_fused;

std::string runFusedEpilogue(Problem& p)
{
    const Shape& s = p.s;
    std::string err = userGemm(p, true);
    if (!err.empty()) return err;
    CUtensorMap tmW, tmE;
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
    if (!err.empty()) return "rung 3: " + err;
    const int mTiles = (s.m + BM - 1) / BM, nTiles = (s.n + BN - 1) / BN;
    const long long tiles = (long long)mTiles * nTiles * s.b;
    static int sms = 0;
    if (sms == 0) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    int grid = int(tiles < sms ? tiles : sms);
    if (grid > 1 && grid % mTiles == 0) --grid;  // an odd stride: each CTA walks through every M tile
    // Traced or not is decided at run time (the control word); ask for the traced build's shared memory
    // so that a recording launch fits.
    const int smem = int(Plan::bytes(true, kWarps));
    static bool attrSet = false;
    if (!attrSet) {
        if (cudaFuncSetAttribute(lceFusedEpilogue, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
            return "rung 3: cannot get " + std::to_string(smem) + " bytes of shared memory";
        attrSet = true;
    }
    lceFusedEpilogue<<<grid, kThreads, smem, p.stream>>>(tmW, tmE, p.out, p.u, p.userOf, s.m, s.n, s.kCand,
                                                         int(tiles));
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 3 launch: ") + cudaGetErrorString(e);
    return {};
}

}  // namespace ws::lce
