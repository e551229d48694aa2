// The epilogue staging of the transposed candidate (s8-lcespeed, transposed_rung3.cu): the same protocol as
// kernels/src/common/epilogue_warp.cuh's EpilogueStaging (U TMA-loaded into a warpgroup's half ahead of time, the
// consumers add their accumulator in place and hand it over, the epilogue warp TMA-stores it), for an accumulator that
// is out^T: each consumer warpgroup holds 64 (N) x TM (M) of out[b]^T, while out and U are [M][N] with N contiguous.
// A half is therefore [TM rows of M][64 columns of N] fp16: two boxes of 32 (N) x TM (M) in the 64-byte swizzle
// (staging64Offset), the TMA boxes {32, TM, 1} of tmU / tmOut. The consumers move the accumulator with
// ldmatrix / stmatrix .trans: the wgmma fragment (rows n, columns m) is their 8 x 8 fragment, and .trans stores it
// with rows m -- 8 consecutive n (16 bytes) per stored row.
#pragma once

#include <cstdint>

#include "../src/common/epilogue_warp.cuh"

namespace ws::lce {
using namespace ws::kern;

__device__ __forceinline__ void stmatrixX4Trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}
__device__ __forceinline__ void ldmatrixX4Trans(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr)
                 : "memory");
}

// Swz: the swizzle of U / out's boxes (64: two boxes of 32 N per half, rows of 64 bytes; 128: one box of 64 N, rows
// of 128 bytes); KB: pairs of column groups read ahead per batch in epilogueAdd; Diag (timing only, output wrong):
// 1 = the consumers skip the add (no ldmatrix / stmatrix), 2 = the epilogue warp moves no bytes (no U load, no store).
template <int TM, int Swz = 64, int KB = 2, int Diag = 0>
struct EpilogueStagingT {
    static_assert(Swz == 64 || Swz == 128, "64- or 128-byte swizzle");
    static constexpr int kBoxes = Swz == 64 ? 2 : 1;                  // boxes of Swz / 2 columns of N
    static constexpr int kBoxCols = Swz / 2;
    static constexpr uint32_t kBoxBytes = uint32_t(TM) * Swz;         // TM rows of Swz bytes
    static constexpr uint32_t kHalfBytes = kBoxes * kBoxBytes;
    static constexpr uint32_t kBytes = 2 * kHalfBytes;
    static constexpr int kBarriers = 4;
    static_assert(kBoxBytes % 512 == 0, "64-byte swizzle boxes start 512-byte aligned");
    uint8_t* base;
    uint64_t* uFull;   // [2]
    uint64_t* stFull;  // [2]

    __device__ __forceinline__ EpilogueStagingT(uint8_t* staging, uint64_t* barriers)
        : base(staging), uFull(barriers), stFull(barriers + 2)
    {
    }
    __device__ __forceinline__ uint8_t* half(int cw) const { return base + cw * kHalfBytes; }
    __device__ __forceinline__ void init() const
    {
        for (int h = 0; h < 2; ++h) {
            mbarInit(&uFull[h], 1);
            mbarInit(&stFull[h], 128);
        }
    }
    // Lane `lane` of consumer warp w's address for ldmatrix / stmatrix .x4.trans of column groups (of M) j, j + 1:
    // matrix i = lane / 8 covers n rows 16 w + 8 (i % 2) .. + 7 and m columns 8 (j + i / 2) .. + 7; the lane gives
    // stored row m = 8 (j + i / 2) + lane % 8, whose 8 n (16 bytes) are unit (n % 32) / 8 of box n / 32.
    __device__ __forceinline__ static uint32_t matrixAddr(uint32_t h, int tInWg, int j)
    {
        const int lane = tInWg & 31, w = tInWg >> 5, i = lane >> 3;
        const int m = 8 * (j + (i >> 1)) + (lane & 7), n0 = 16 * w + 8 * (i & 1);
        if constexpr (Swz == 128) return h + uint32_t(m * 128 + (((n0 >> 3) ^ (m & 7)) << 4));
        else return h + uint32_t((n0 >> 5) * kBoxBytes) + staging64Offset(m, (n0 & 31) >> 3, 0);
    }

    // ---- the epilogue warp
    template <class Tr>
    __device__ __forceinline__ void waitDataHalf(int cw, int n, Tr& tr) const
    {
        tr.event(ws::trace::kind::WaitData, n, uint8_t(cw));
        mbarWait(&stFull[cw], uint32_t(n & 1));
    }
    // (x, y, z) = (first n, first m, batch) of the half's box pair.
    template <class Tr>
    __device__ __forceinline__ void storeHalf(const CUtensorMap* tmOut, int cw, int n, int x, int y, int z,
                                              bool issuer, Tr& tr) const
    {
        tr.event(ws::trace::kind::Store, n, uint8_t(cw));
        if (issuer && !(Diag & 2)) {
#pragma unroll
            for (int c = 0; c < kBoxes; ++c) tmaStore3d(tmOut, half(cw) + c * kBoxBytes, x + c * kBoxCols, y, z);
            bulkCommit();
            bulkWaitRead<0>();
        }
        __syncwarp();
    }
    // (EpilogueWarp's flush names it; rung 3's tiles never carry a flag.) As storeHalf, then the stores complete and
    // *flag = epoch released.
    template <class Tr>
    __device__ __forceinline__ void storeHalfPublish(const CUtensorMap* tmDst, int cw, int n, int x, int y, int z,
                                                     int* flag, int epoch, bool issuer, Tr& tr) const
    {
        tr.event(ws::trace::kind::Store, n, uint8_t(cw));
        if (issuer) {
#pragma unroll
            for (int c = 0; c < kBoxes; ++c) tmaStore3d(tmDst, half(cw) + c * kBoxBytes, x + c * kBoxCols, y, z);
            bulkCommit();
            bulkWait<0>();
            fenceProxyAsyncGlobal();
            __threadfence();
            releaseFlag(flag, epoch);
        }
        __syncwarp();
    }
    // A tile without U (the transposed rung 4's user tiles): the half is free, uFull completes with no bytes.
    template <class Tr>
    __device__ __forceinline__ void loadStagingEmpty(int cw, int n, bool issuer, Tr& tr) const
    {
        tr.event(ws::trace::kind::Load, n, uint8_t(cw));
        if (issuer) mbarArrive(&uFull[cw]);
        __syncwarp();
    }
    template <class Tr>
    __device__ __forceinline__ void loadStaging(const CUtensorMap* tmU, int cw, int n, int x, int y, int z,
                                                bool issuer, Tr& tr) const
    {
        tr.event(ws::trace::kind::Load, n, uint8_t(cw));
        if (issuer && (Diag & 2)) mbarArrive(&uFull[cw]);
        else if (issuer) {
            mbarArriveExpectTx(&uFull[cw], kHalfBytes);
#pragma unroll
            for (int c = 0; c < kBoxes; ++c) tmaLoad3d(half(cw) + c * kBoxBytes, tmU, &uFull[cw], x + c * kBoxCols, y, z);
        }
        __syncwarp();
    }

    // ---- a consumer warpgroup
    template <class Tr>
    __device__ __forceinline__ void waitOrderStaged(int cw, int n, Tr& tr) const
    {
        tr.event(ws::trace::kind::WaitOrder, n);
        mbarWait(&uFull[cw], uint32_t(n & 1));
    }
    template <class Tr>
    __device__ __forceinline__ void epilogueAdd(const float (&acc)[TM / 2], int cw, int n, int tInWg, Tr& tr) const
    {
        tr.event(ws::trace::kind::Epilogue, n);
        const uint32_t h = smemAddr(half(cw));
        constexpr int kB = KB;  // pairs of column groups per batch (TM / 16 pairs in all)
        static_assert((TM / 8) % (2 * kB) == 0, "whole batches");
#pragma unroll
        for (int j0 = 0; !(Diag & 1) && j0 < TM / 8; j0 += 2 * kB) {
            uint32_t u[kB][4];
#pragma unroll
            for (int b = 0; b < kB; ++b) ldmatrixX4Trans(matrixAddr(h, tInWg, j0 + 2 * b), u[b][0], u[b][1], u[b][2], u[b][3]);
#pragma unroll
            for (int b = 0; b < kB; ++b) {
                const int j = j0 + 2 * b;
                stmatrixX4Trans(matrixAddr(h, tInWg, j), addHalf2(u[b][0], acc[4 * j], acc[4 * j + 1]),
                                addHalf2(u[b][1], acc[4 * j + 2], acc[4 * j + 3]),
                                addHalf2(u[b][2], acc[4 * j + 4], acc[4 * j + 5]),
                                addHalf2(u[b][3], acc[4 * j + 6], acc[4 * j + 7]));
            }
        }
        fenceProxyAsync();
        mbarArrive(&stFull[cw]);
    }
    // A tile without U: fp16(acc) into the half by stmatrix .trans, then the hand-off.
    template <class Tr>
    __device__ __forceinline__ void epilogueStage(const float (&acc)[TM / 2], int cw, int n, int tInWg, Tr& tr) const
    {
        tr.event(ws::trace::kind::Epilogue, n);
        const uint32_t h = smemAddr(half(cw));
#pragma unroll
        for (int j = 0; j < TM / 8; j += 2)
            stmatrixX4Trans(matrixAddr(h, tInWg, j), packHalf2(acc[4 * j], acc[4 * j + 1]),
                            packHalf2(acc[4 * j + 2], acc[4 * j + 3]), packHalf2(acc[4 * j + 4], acc[4 * j + 5]),
                            packHalf2(acc[4 * j + 6], acc[4 * j + 7]));
        fenceProxyAsync();
        mbarArrive(&stFull[cw]);
    }
};

}  // namespace ws::lce
