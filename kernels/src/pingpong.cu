// Rung 6 — pingpong.
// IDEA: two consumer warpgroups on DIFFERENT tiles, taking turns. Each consumer warpgroup
// owns a whole 128x128 tile (two m64n128k16 wgmmas per k16). The producer loads the
// CTA's tiles in order into one 6-slot ring; consumer warpgroup 0 takes the even local
// tiles, warpgroup 1 the odd ones. An ordering barrier (a pair of named barriers) lets
// only one warpgroup issue its main loop at a time: when warpgroup 0 has issued the last
// wgmma of its tile it signals warpgroup 1, which starts its main loop while warpgroup 0
// waits for its math and writes its epilogue. So one tile's epilogue overlaps the other
// tile's tensor-core work, and the tensor cores never wait for an epilogue.
// Persistent grid, grouped tile order, setmaxnreg (producer 40, consumers 232).
// Trace: TileBegin/TileEnd markers (kstep = tileM, aux = tileN); consumers WaitOrder
// (waiting for their turn), WaitData / MmaIssue / MmaWait / Release per k-step, Store;
// producer WaitSlot / IssueLoad. kstep is the CTA-wide fill counter.
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"

namespace ws::kern {
namespace r_pingpong {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kPpBM, BN = kPpBN, S = kPpStages;
constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2, kStage = kBytesA + kBytesB;
constexpr int kSmem = S * kStage + 1024 + 128;
constexpr int kOrderBar0 = 1;  // named barrier ids 1, 2: "consumer warpgroup w may start its main loop"

template <bool Traced>
__global__ void __launch_bounds__(kPpThreads, 1) gemmPingpong(const __grid_constant__ CUtensorMap tmA,
                                                              const __grid_constant__ CUtensorMap tmB,
                                                              __nv_bfloat16* __restrict__ C, int M, int N, int K,
                                                              void* trace)
{
    extern __shared__ uint8_t smemRaw[];
    uint8_t* smem = alignSmem1024(smemRaw);
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + S * kStage);
    uint64_t* empty = full + S;
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
    const int KT = K / kBK;
    const int tilesM = M / BM, tilesN = N / BN, numTiles = tilesM * tilesN;
    // tiles of this CTA: blockIdx.x + i * gridDim.x, i < nLocal
    const int nLocal = (numTiles - int(blockIdx.x) + int(gridDim.x) - 1) / int(gridDim.x);

    ws::trace::WarpTrace<Traced> wt;
    ws::trace::CtaTrace<Traced> ct;
    if constexpr (Traced) {
        ct.begin(trace);
        const uint8_t role = wg > 0 ? tr::Consumer : (warp == 0 ? tr::Producer : tr::Idle);
        wt.begin(trace, warp, role, wg, wg > 0 ? wg - 1 : 0);
        wt.event(tk::Setup);
    }
    if (tid == 0) {
        tmaPrefetchDesc(&tmA);
        tmaPrefetchDesc(&tmB);
        for (int s = 0; s < S; ++s) {
            mbarInit(&full[s], 1);
            mbarInit(&empty[s], 4);  // the 4 warps of the one warpgroup that consumes the fill
        }
        fenceBarrierInit();
    }
    __syncthreads();

    if (wg == 0) {
        setMaxNRegDec<40>();
        if (tid == 0) {  // producer: every local tile, in order
            int fill = 0;
            for (int i = 0; i < nLocal; ++i) {
                int tm, tn;
                tileCoords(int(blockIdx.x) + i * int(gridDim.x), tilesM, tilesN, kGroupM, tm, tn);
                if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
                for (int kt = 0; kt < KT; ++kt, ++fill) {
                    const int slot = fill % S;
                    if (fill >= S) {
                        if constexpr (Traced) wt.event(tk::WaitSlot, fill, slot);
                        mbarWait(&empty[slot], ((fill / S) - 1) & 1);
                    }
                    if constexpr (Traced) wt.event(tk::IssueLoad, fill, slot);
                    uint8_t* st = smem + slot * kStage;
                    mbarArriveExpectTx(&full[slot], kStage);
                    tmaLoad2d(st, &tmA, &full[slot], kt * kBK, tm * BM);
                    tmaLoad2d(st + kBytesA, &tmB, &full[slot], kt * kBK, tn * BN);
                }
                if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
            }
        }
    } else {  // consumers: warpgroup cw takes local tiles i = cw, cw + 2, ...
        setMaxNRegInc<232>();
        const int cw = wg - 1;
        const int tIn = tid & 127;
        for (int i = cw; i < nLocal; i += 2) {
            int tm, tn;
            tileCoords(int(blockIdx.x) + i * int(gridDim.x), tilesM, tilesN, kGroupM, tm, tn);
            if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
            if (i > 0) {  // wait for the other warpgroup to finish issuing its main loop
                if constexpr (Traced) wt.event(tk::WaitOrder, i * KT);
                namedBarSync(kOrderBar0 + cw, 256);
            }
            float acc[2][BN / 2];  // first k-step overwrites (accumulate = 0)
            int fill = i * KT;
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int slot = fill % S;
                if constexpr (Traced) wt.event(tk::WaitData, fill, slot);
                mbarWait(&full[slot], (fill / S) & 1);
                if constexpr (Traced) wt.event(tk::MmaIssue, fill, slot);
                const uint32_t st = smemAddr(smem + slot * kStage);
                wgmmaFence();
                mmaKStep<2, BN>(acc, st, st + kBytesA, kt > 0);
                wgmmaCommit();
                if (kt > 0) {
                    const int prev = fill - 1;
                    if constexpr (Traced) wt.event(tk::MmaWait, prev, prev % S);
                    wgmmaWait<1>();
                    if constexpr (Traced) wt.event(tk::Release, prev, prev % S);
                    if (laneId() == 0) mbarArrive(&empty[prev % S]);
                }
            }
            // main loop issued: the other warpgroup may start its tile (if it has one)
            if (i + 1 < nLocal) namedBarArrive(kOrderBar0 + (1 - cw), 256);
            const int last = fill - 1;
            if constexpr (Traced) wt.event(tk::MmaWait, last, last % S);
            wgmmaWait<0>();
            fenceAcc(acc[0]);
            fenceAcc(acc[1]);
            if constexpr (Traced) wt.event(tk::Release, last, last % S);
            if (laneId() == 0) mbarArrive(&empty[last % S]);
            if constexpr (Traced) wt.event(tk::Store);
            storeAccBf16<BN>(acc[0], C, N, tm * BM, tn * BN, tIn);
            storeAccBf16<BN>(acc[1], C, N, tm * BM + 64, tn * BN, tIn);
            if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
        }
    }
    if constexpr (Traced) {
        wt.end();
        ct.end(trace);
    }
}
}  // namespace r_pingpong
using namespace r_pingpong;

cudaError_t launchPingpong(const LaunchArgs& a, const char** err)
{
    static thread_local std::string msg;
    CUtensorMap tmA, tmB;
    msg = encodeTmaK64(&tmA, a.a, a.m, a.k, BM);
    if (msg.empty()) msg = encodeTmaK64(&tmB, a.b, a.n, a.k, BN);
    if (!msg.empty()) {
        *err = msg.c_str();
        return cudaErrorInvalidValue;
    }
    auto* C = static_cast<__nv_bfloat16*>(a.c);
    auto kern = a.trace ? gemmPingpong<true> : gemmPingpong<false>;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (e != cudaSuccess) return e;
    kern<<<a.gridCtas, kPpThreads, kSmem, a.stream>>>(tmA, tmB, C, a.m, a.n, a.k, a.trace);
    return cudaGetLastError();
}

const void* kernelPingpong(bool traced)
{
    return traced ? reinterpret_cast<const void*>(&gemmPingpong<true>)
                  : reinterpret_cast<const void*>(&gemmPingpong<false>);
}

}  // namespace ws::kern
