// Shared piece (kernels/src/common): the epilogue warp -- an output staging tile in shared memory shared by the two
// consumer warpgroups of a cooperative 128 x BN tile and one epilogue warp (warp 1 of the producer warpgroup) that
// moves it: TMA-loads a fused operand U's tile into a warpgroup's half ahead of time, lets the warpgroup add its
// accumulator to it in place, TMA-stores the half and, once the stores have read it, loads the next U tile.
// The consumers hand their accumulators over and go straight on to the next tile's main loop.
// Layout: two halves (one per consumer warpgroup cw), each the warpgroup's 64 x C accumulator in TMA boxes; a staging
// layout (StagingRows<BN>: rows of the output, BN / 32 boxes of 64 rows x 32 columns, 64-byte swizzle; StagingCols<TM,
// Swz>: the accumulator transposed, rows of M, s9-lcet) says where, EpilogueStagingOf<Layout> is the protocol below.
// Protocol per half cw (n counts the tiles where warpgroup cw has rows, on both sides):
//   epilogue warp: [waitDataHalf(n - 1); storeHalf (TMA store, wait until read)]; [waitOrderFlag]; loadStaging(n)
//   consumer cw:   main loop; waitOrderStaged(n); epilogueAdd (+ hand-off: fence.proxy.async, arrive)
// A tile without U (EpilogueWarp::nextPublished: rung 4's user-stage tiles, stored into U itself): the epilogue warp
// completes uFull with no bytes (loadStagingEmpty) once the half is free; the consumers write fp16(acc) (epilogueStage);
// the warp stores the half, waits until the stores are complete and releases the tile's ready flag (storeHalfPublish).
// A tile whose U the consumers hold in registers (EpilogueWarp::nextStaged + epilogueAddPacked, s11-lceuser: rung 4's
// broadcast walk): as the tile without U, stored into tmOut, no flag.
// Barriers: uFull[2] (1 arrival + U's bytes), stFull[2] (128 arrivals: the warpgroup's threads).
// Method names are the stage names the stall pass's stage map reads (kernels/decode/stage_map.cpp:
// waitData, store, waitOrder, loadStaging, epilogue).
// Ready flags (waitOrderFlag / releaseFlag): a producer-consumer hand-off between CTAs of one persistent launch
// through global memory (the linear-compression family's rung 4: U's tiles computed earlier in the same kernel).
#pragma once

#include <cstdint>
#include <string>  // hopper.cuh declares std::string helpers
#include <type_traits>
#include <cuda_fp16.h>

#include "../hopper.cuh"
#include "tma.cuh"
#include "warpstage/trace.cuh"

namespace ws::kern {

// Publishes a flag (st.release.gpu) / reads it (ld.acquire.gpu).
__device__ __forceinline__ void releaseFlag(int* f, int v)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(f), "r"(v) : "memory");
}
__device__ __forceinline__ int acquireFlag(const int* f)
{
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
    return v;
}
// Generic-proxy global writes <-> async-proxy (TMA) accesses, both directions.
__device__ __forceinline__ void fenceProxyAsyncGlobal() { asm volatile("fence.proxy.async;" ::: "memory"); }

// Whole warp: `issuer` spins until *f == epoch (the producer CTA's writes before its releaseFlag are then
// visible), then fences so that this thread's TMA loads see them. Phase WaitOrder on the trace.
template <class Tr>
__device__ __forceinline__ void waitOrderFlag(const int* f, int epoch, bool issuer, int n, uint8_t slot, Tr& tr)
{
    tr.event(ws::trace::kind::WaitOrder, n, slot);
    if (issuer) {
        while (acquireFlag(f) != epoch) {
        }
        fenceProxyAsyncGlobal();
    }
    __syncwarp();
}

__device__ __forceinline__ void stmatrixX4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
                 "r"(r2), "r"(r3)
                 : "memory");
}
__device__ __forceinline__ uint32_t packHalf2(float a, float b)
{
    const __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&h);
}

__device__ __forceinline__ void ldmatrixX4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr)
                 : "memory");
}
__device__ __forceinline__ uint32_t addHalf2(uint32_t u, float a, float b)
{
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&u));
    return packHalf2(a + f.x, b + f.y);
}
__device__ __forceinline__ uint32_t addHalf2Half2(uint32_t u, uint32_t v)
{
    const __half2 h = __hadd2(*reinterpret_cast<const __half2*>(&u), *reinterpret_cast<const __half2*>(&v));
    return *reinterpret_cast<const uint32_t*>(&h);
}
// The staging half's address that lane `lane` of a consumer warp gives ldmatrix/stmatrix .x4 for the column groups
// j, j + 1 of its accumulator (matrix m = lane / 8: rows 8 (m % 2) .. + 7 of the warp's 16, column group j + m / 2).
__device__ __forceinline__ uint32_t stagingMatrixAddr(uint32_t half, int tInWg, int j)
{
    const int lane = tInWg & 31, m = lane >> 3;
    const int row = (tInWg >> 5) * 16 + 8 * (m & 1) + (lane & 7), jj = j + (m >> 1);
    return half + uint32_t((jj >> 2) * kStoreBoxBytes) + staging64Offset(row, jj & 3, 0);
}

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

// ---- Staging layouts (s9-lcet): where a consumer warpgroup's 64 x C accumulator (the wgmma fragment: rows
// 16 w + l / 4 (+ 8), columns 8 j + 2 (l % 4)) sits in its half of the staging, and the TMA boxes that move the half.
// A layout gives kCols (C), kBoxes boxes of kBoxCols x kBoxRows fp16 (the tensor map's box {kBoxCols, kBoxRows, 1},
// kBoxBytes each, swizzle kSwizzleBytes), kTrans (ldmatrix / stmatrix .trans) and matrixAddr(half, tInWg, j): lane
// tInWg % 32 of consumer warp tInWg / 32's address for the .x4 access of column groups j, j + 1.
//
// StagingRows<BN>: the accumulator is the output tile itself (rows = output rows): BN / 32 boxes of 64 rows x 32
// columns, 64-byte swizzle (staging64Offset) -- rung 3-4's layout until session 8, and any row-major GEMM's.
template <int BN>
struct StagingRows {
    static constexpr int kCols = BN, kBoxes = BN / kStoreBoxCols, kBoxCols = kStoreBoxCols, kBoxRows = 64;
    static constexpr uint32_t kBoxBytes = kStoreBoxBytes;
    static constexpr int kSwizzleBytes = 64;
    static constexpr bool kTrans = false;
    __device__ __forceinline__ static uint32_t matrixAddr(uint32_t half, int tInWg, int j)
    {
        return stagingMatrixAddr(half, tInWg, j);
    }
};
// StagingCols<TM, Swz>: the accumulator is the output tile TRANSPOSED (s8-lcespeed's transposed lce rungs: 64 rows
// of N x TM columns of M, while the output is [M][N] with N contiguous). The half is [TM rows of M][64 columns of N]:
// Swz = 64: two boxes of 32 N x TM rows (64-byte rows, 64-byte swizzle); Swz = 128: one box of 64 N x TM rows
// (128-byte rows, 128-byte swizzle). ldmatrix / stmatrix .trans store the wgmma fragment (rows n, columns m) with rows
// m, 8 consecutive n (16 bytes) per stored row. Bank conflicts: a stored 8 x 8 matrix is 8 consecutive m at one
// 16-byte unit; both swizzles put those 8 rows on 8 different 16-byte bank groups (conflict-free).
template <int TM, int Swz = 64>
struct StagingCols {
    static_assert(Swz == 64 || Swz == 128, "64- or 128-byte swizzle");
    static constexpr int kCols = TM, kBoxes = Swz == 64 ? 2 : 1, kBoxCols = Swz / 2, kBoxRows = TM;
    static constexpr uint32_t kBoxBytes = uint32_t(TM) * Swz;
    static constexpr int kSwizzleBytes = Swz;
    static constexpr bool kTrans = true;
    static_assert(kBoxBytes % 1024 == 0, "swizzled boxes start 1024-byte aligned");
    // matrix i = lane / 8 covers n rows 16 w + 8 (i % 2) .. + 7 and m columns 8 (j + i / 2) .. + 7; the lane gives
    // stored row m = 8 (j + i / 2) + lane % 8, whose 8 n (16 bytes) are unit n0 / 8 of the row.
    __device__ __forceinline__ static uint32_t matrixAddr(uint32_t half, int tInWg, int j)
    {
        const int lane = tInWg & 31, w = tInWg >> 5, i = lane >> 3;
        const int m = 8 * (j + (i >> 1)) + (lane & 7), n0 = 16 * w + 8 * (i & 1);
        if constexpr (Swz == 128) return half + uint32_t(m * 128 + (((n0 >> 3) ^ (m & 7)) << 4));
        else return half + uint32_t((n0 >> 5) * kBoxBytes) + staging64Offset(m, (n0 & 31) >> 3, 0);
    }
};

// The staging of the epilogue warp for a layout L (above). KB: pairs of column groups whose U is read ahead per
// batch in epilogueAdd.
// Shared (s10-lcespeed; false = every version before it): ONE half's bytes for both warpgroups, used in turn (U of
// warpgroup 0, its output, U of warpgroup 1, its output, ...: EpilogueWarp keeps one pending tile), so that the
// staging needs kHalfBytes instead of twice that (e.g. for one more ring stage).
// Pieces (s11-lcering; 1 = every version before it): a warpgroup's accumulator of Pieces x L::kCols columns goes
// through its half in Pieces turns (L is the layout of ONE piece, e.g. StagingCols<112> for a 224-column
// accumulator): the consumers add / stage piece 0 from the accumulator (epilogueAddAt / epilogueStageAt), keep the
// others as fp16 in registers (packAt) and add / stage them later (epilogueAddHeld / epilogueStageHeld), each a tile
// of its own on the barriers; the epilogue warp stores each piece into the rows it came from.
template <class L, int KB = 4, bool Shared = false, int Pieces = 1>
struct EpilogueStagingOf {
    using Layout = L;
    static constexpr bool kShared = Shared;
    static constexpr int kPieces = Pieces;
    static constexpr int kBoxes = L::kBoxes;
    static constexpr uint32_t kHalfBytes = kBoxes * L::kBoxBytes;  // one warpgroup's 64 x kCols
    static constexpr uint32_t kBytes = (Shared ? 1 : 2) * kHalfBytes;
    static constexpr int kBarriers = 4;
    static_assert((L::kCols / 8) % (2 * KB) == 0, "whole read-ahead batches");
    uint8_t* base;     // kBytes, 1024-byte aligned
    uint64_t* uFull;   // [2]
    uint64_t* stFull;  // [2]

    __device__ __forceinline__ EpilogueStagingOf(uint8_t* staging, uint64_t* barriers)
        : base(staging), uFull(barriers), stFull(barriers + 2)
    {
    }
    __device__ __forceinline__ uint8_t* half(int cw) const { return base + (Shared ? 0 : cw) * kHalfBytes; }
    // One thread, before the CTA (cluster) barrier that follows the ring's init.
    __device__ __forceinline__ void init() const
    {
        for (int h = 0; h < 2; ++h) {
            mbarInit(&uFull[h], 1);
            mbarInit(&stFull[h], 128);
        }
    }

    // ---- the epilogue warp (all 32 lanes; `issuer` = one lane issues)
    // Wait until warpgroup cw handed over its n-th tile (phase WaitData, slot = cw).
    template <class Tr>
    __device__ __forceinline__ void waitDataHalf(int cw, int n, Tr& tr) const
    {
        tr.event(ws::trace::kind::WaitData, n, uint8_t(cw));
        mbarWait(&stFull[cw], uint32_t(n & 1));
    }
    // TMA-store half cw at (x, y, z) of tmOut, box by box, and wait until the stores have read it (phase Store).
    template <class Tr>
    __device__ __forceinline__ void storeHalf(const CUtensorMap* tmOut, int cw, int n, int x, int y, int z,
                                              bool issuer, Tr& tr) const
    {
        tr.event(ws::trace::kind::Store, n, uint8_t(cw));
        if (issuer) {
#pragma unroll
            for (int c = 0; c < kBoxes; ++c) tmaStore3d(tmOut, half(cw) + c * L::kBoxBytes, x + c * L::kBoxCols, y, z);
            bulkCommit();
            bulkWaitRead<0>();  // the half may be written again
        }
        __syncwarp();
    }
    // TMA-load U's tile at (x, y, z) of tmU into half cw for the warpgroup's n-th tile (phase Load).
    template <class Tr>
    __device__ __forceinline__ void loadStaging(const CUtensorMap* tmU, int cw, int n, int x, int y, int z,
                                                bool issuer, Tr& tr) const
    {
        tr.event(ws::trace::kind::Load, n, uint8_t(cw));
        if (issuer) {
            mbarArriveExpectTx(&uFull[cw], kHalfBytes);
#pragma unroll
            for (int c = 0; c < kBoxes; ++c)
                tmaLoad3d(half(cw) + c * L::kBoxBytes, tmU, &uFull[cw], x + c * L::kBoxCols, y, z);
        }
        __syncwarp();
    }

    // ---- a consumer warpgroup (all 128 threads)
    // The hand-off of half(cw) to the epilogue warp: its generic-proxy writes made visible to the TMA store, then the
    // arrive.
    __device__ __forceinline__ void handOff(int cw) const
    {
        fenceProxyAsync();
        mbarArrive(&stFull[cw]);
    }
    // Wait until U's tile of the n-th tile is in the half (and so the previous store has read it): phase WaitOrder.
    template <class Tr>
    __device__ __forceinline__ void waitOrderStaged(int cw, int n, Tr& tr) const
    {
        tr.event(ws::trace::kind::WaitOrder, n);
        mbarWait(&uFull[cw], uint32_t(n & 1));
    }
    __device__ __forceinline__ static void ldm(uint32_t a, uint32_t (&u)[4])
    {
        if constexpr (L::kTrans) ldmatrixX4Trans(a, u[0], u[1], u[2], u[3]);
        else ldmatrixX4(a, u[0], u[1], u[2], u[3]);
    }
    __device__ __forceinline__ static void stm(uint32_t a, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
    {
        if constexpr (L::kTrans) stmatrixX4Trans(a, r0, r1, r2, r3);
        else stmatrixX4(a, r0, r1, r2, r3);
    }
    // half(cw) = fp16(acc + half(cw)), then the hand-off to the epilogue warp (phase Epilogue). The accumulator's
    // 8 x 8 fragments are ldmatrix / stmatrix's: .x4 moves two column groups x both row halves per instruction
    // (kCols / 16 of each per thread), U read KB instructions ahead of the writes. (Measured, H200, session 6 on
    // StagingRows<256>: scalar 4-byte accesses read pair by pair 0.02-0.03 ms slower at the benchmark point.)
    template <class Tr>
    __device__ __forceinline__ void epilogueAdd(const float (&acc)[L::kCols / 2], int cw, int n, int tInWg,
                                                Tr& tr) const
    {
        epilogueAddAt<0>(acc, cw, n, tInWg, tr);
    }
    // The same for the kCols columns from column group J0 of a wider accumulator (Pieces: piece J0 / (kCols / 8)).
    template <int J0, int NA, class Tr>
    __device__ __forceinline__ void epilogueAddAt(const float (&acc)[NA], int cw, int n, int tInWg, Tr& tr) const
    {
        static_assert(NA >= 4 * J0 + L::kCols / 2, "the columns are in the accumulator");
        tr.event(ws::trace::kind::Epilogue, n);
        const uint32_t h = smemAddr(half(cw));
#pragma unroll
        for (int j0 = 0; j0 < L::kCols / 8; j0 += 2 * KB) {
            uint32_t u[KB][4];
#pragma unroll
            for (int b = 0; b < KB; ++b) ldm(L::matrixAddr(h, tInWg, j0 + 2 * b), u[b]);
#pragma unroll
            for (int b = 0; b < KB; ++b) {
                const int j = j0 + 2 * b, a = 4 * (J0 + j);
                stm(L::matrixAddr(h, tInWg, j), addHalf2(u[b][0], acc[a], acc[a + 1]),
                    addHalf2(u[b][1], acc[a + 2], acc[a + 3]), addHalf2(u[b][2], acc[a + 4], acc[a + 5]),
                    addHalf2(u[b][3], acc[a + 6], acc[a + 7]));
            }
        }
        handOff(cw);
    }
    // A tile without U (the user stage's own tiles): fp16(acc) into the half by stmatrix, then the hand-off.
    template <class Tr>
    __device__ __forceinline__ void epilogueStage(const float (&acc)[L::kCols / 2], int cw, int n, int tInWg,
                                                  Tr& tr) const
    {
        epilogueStageAt<0>(acc, cw, n, tInWg, tr);
    }
    template <int J0, int NA, class Tr>
    __device__ __forceinline__ void epilogueStageAt(const float (&acc)[NA], int cw, int n, int tInWg, Tr& tr) const
    {
        static_assert(NA >= 4 * J0 + L::kCols / 2, "the columns are in the accumulator");
        tr.event(ws::trace::kind::Epilogue, n);
        const uint32_t h = smemAddr(half(cw));
#pragma unroll
        for (int j = 0; j < L::kCols / 8; j += 2) {
            const int a = 4 * (J0 + j);
            stm(L::matrixAddr(h, tInWg, j), packHalf2(acc[a], acc[a + 1]), packHalf2(acc[a + 2], acc[a + 3]),
                packHalf2(acc[a + 4], acc[a + 5]), packHalf2(acc[a + 6], acc[a + 7]));
        }
        handOff(cw);
    }
    // Pieces: the kCols columns from column group J0 of the accumulator as fp16 pairs, kept for a later
    // epilogueAddHeld / epilogueStageHeld (held[2 j .. 2 j + 3]: the .x4 access of column groups j, j + 1).
    template <int J0, int NA>
    __device__ __forceinline__ static void packAt(const float (&acc)[NA], uint32_t (&held)[L::kCols / 4])
    {
        static_assert(NA >= 4 * J0 + L::kCols / 2, "the columns are in the accumulator");
#pragma unroll
        for (int k = 0; k < L::kCols / 4; ++k) held[k] = packHalf2(acc[4 * J0 + 2 * k], acc[4 * J0 + 2 * k + 1]);
    }
    // half(cw) = held + half(cw) (fp16 + fp16, rounded once: exact sum, as the decomposed forms add), hand-off.
    // U is read KH ldmatrix ahead (few: this runs beside the main loop's accumulator and wgmmas).
    template <int KH = 1, class Tr>
    __device__ __forceinline__ void epilogueAddHeld(const uint32_t (&held)[L::kCols / 4], int cw, int n, int tInWg,
                                                    Tr& tr) const
    {
        static_assert((L::kCols / 8) % (2 * KH) == 0, "whole read-ahead batches");
        tr.event(ws::trace::kind::Epilogue, n);
        const uint32_t h = smemAddr(half(cw));
#pragma unroll
        for (int j0 = 0; j0 < L::kCols / 8; j0 += 2 * KH) {
            uint32_t u[KH][4];
#pragma unroll
            for (int b = 0; b < KH; ++b) ldm(L::matrixAddr(h, tInWg, j0 + 2 * b), u[b]);
#pragma unroll
            for (int b = 0; b < KH; ++b) {
                const int j = j0 + 2 * b;
                stm(L::matrixAddr(h, tInWg, j), addHalf2Half2(u[b][0], held[2 * j]),
                    addHalf2Half2(u[b][1], held[2 * j + 1]), addHalf2Half2(u[b][2], held[2 * j + 2]),
                    addHalf2Half2(u[b][3], held[2 * j + 3]));
            }
        }
        handOff(cw);
    }
    template <class Tr>
    __device__ __forceinline__ void epilogueStageHeld(const uint32_t (&held)[L::kCols / 4], int cw, int n, int tInWg,
                                                      Tr& tr) const
    {
        tr.event(ws::trace::kind::Epilogue, n);
        const uint32_t h = smemAddr(half(cw));
#pragma unroll
        for (int j = 0; j < L::kCols / 8; j += 2)
            stm(L::matrixAddr(h, tInWg, j), held[2 * j], held[2 * j + 1], held[2 * j + 2], held[2 * j + 3]);
        handOff(cw);
    }
    // half(cw) = fp16(acc + U) with U's tile in the thread's registers, u[i] = the fp16 pair of acc[2 i], acc[2 i + 1]
    // of the same fragment (packHalf2), then the hand-off: no U in the half, no ldmatrix (s11-lceuser: rung 4's
    // broadcast walk keeps its user tile in the consumers' registers).
    template <class Tr>
    __device__ __forceinline__ void epilogueAddPacked(const float (&acc)[L::kCols / 2],
                                                      const uint32_t (&u)[L::kCols / 4], int cw, int n, int tInWg,
                                                      Tr& tr) const
    {
        tr.event(ws::trace::kind::Epilogue, n);
        const uint32_t h = smemAddr(half(cw));
#pragma unroll
        for (int j = 0; j < L::kCols / 8; j += 2)
            stm(L::matrixAddr(h, tInWg, j), addHalf2(u[2 * j], acc[4 * j], acc[4 * j + 1]),
                addHalf2(u[2 * j + 1], acc[4 * j + 2], acc[4 * j + 3]),
                addHalf2(u[2 * j + 2], acc[4 * j + 4], acc[4 * j + 5]),
                addHalf2(u[2 * j + 3], acc[4 * j + 6], acc[4 * j + 7]));
        handOff(cw);
    }
    // Epilogue warp, a tile without U: the half is free (its previous store has read it): uFull completes with no
    // bytes (phase Load).
    template <class Tr>
    __device__ __forceinline__ void loadStagingEmpty(int cw, int n, bool issuer, Tr& tr) const
    {
        tr.event(ws::trace::kind::Load, n, uint8_t(cw));
        if (issuer) mbarArrive(&uFull[cw]);
        __syncwarp();
    }
    // Epilogue warp: TMA-store half cw as storeHalf does, then wait until the stores are COMPLETE and publish them:
    // *flag = epoch (release) for the readers in other CTAs, which TMA-load the tile after their acquire.
    template <class Tr>
    __device__ __forceinline__ void storeHalfPublish(const CUtensorMap* tmDst, int cw, int n, int x, int y, int z,
                                                     int* flag, int epoch, bool issuer, Tr& tr) const
    {
        tr.event(ws::trace::kind::Store, n, uint8_t(cw));
        if (issuer) {
#pragma unroll
            for (int c = 0; c < kBoxes; ++c) tmaStore3d(tmDst, half(cw) + c * L::kBoxBytes, x + c * L::kBoxCols, y, z);
            bulkCommit();
            bulkWait<0>();            // written to global memory (and so read from the half)
            fenceProxyAsyncGlobal();  // the async-proxy writes, ordered before the generic release below
            __threadfence();
            releaseFlag(flag, epoch);
        }
        __syncwarp();
    }
    // Epilogue warp: TMA-store half cw at (x, y, z) of tmDst and commit, no wait (phase Store; EpilogueWarp::publishNow
    // waits for both halves at once).
    template <class Tr>
    __device__ __forceinline__ void storeHalfIssue(const CUtensorMap* tmDst, int cw, int n, int x, int y, int z,
                                                   bool issuer, Tr& tr) const
    {
        tr.event(ws::trace::kind::Store, n, uint8_t(cw));
        if (issuer) {
#pragma unroll
            for (int c = 0; c < kBoxes; ++c) tmaStore3d(tmDst, half(cw) + c * L::kBoxBytes, x + c * L::kBoxCols, y, z);
            bulkCommit();
        }
        __syncwarp();
    }
};
// The row-major staging of a cooperative 128 x BN tile (the name and behaviour of sessions 5-8).
template <int BN>
using EpilogueStaging = EpilogueStagingOf<StagingRows<BN>, 4>;

// The epilogue warp's walk: for each tile where warpgroup cw has rows, next() stores the half's previous tile
// (waitDataHalf + storeHalf), runs `ready(n)` (e.g. waitOrderFlag: U's tile may not exist yet), then loads U's
// tile for the n-th; finish() stores what is left and waits until every store has landed.
// Staging: any EpilogueStagingOf<Layout> (default EpilogueStaging<BN>: StagingRows<BN>; the lce rungs 3-4 use
// StagingCols<224, ...>: their accumulator is out^T).
// kMode (s12-lce): 0 the code as before; kModeEager: a user tile's last pieces are published at once, both halves'
// stores under one completion wait (publishNow).
inline constexpr int kModeEager = 2;
struct EpilogueNoEager {};
// spPart[cw] = -2: the half's pending piece was stored and published by publishNow (flush skips it); -1 otherwise.
struct EpilogueEagerState {
    int spPart[2] = {-1, -1};
};
template <int BN, class Staging = EpilogueStaging<BN>, int kMode = 0>
struct EpilogueWarp : std::conditional_t<kMode != 0, EpilogueEagerState, EpilogueNoEager> {
    // (the base: kMode's state, an empty base otherwise -- the layout and the kernels' code as before; aggregate
    // initialization names it first: EpilogueWarp<...> ew{{}, staging, &tmOut, &tmU, issuer})
    const Staging& st;
    const CUtensorMap* tmOut;
    const CUtensorMap* tmU;
    bool issuer;
    int done[2] = {0, 0};
    int out[2][3] = {};            // (x, y, z) of the half's pending output
    int* flag[2] = {nullptr, nullptr};  // a user-stage tile: stored into tmU, then this flag released
    bool toU[2] = {false, false};       // Staging::kPieces > 1: a user-stage piece stored into tmU with no flag
    int epoch = 0;
    int pending = -1;  // Staging::kShared: the half whose tile is in the one buffer, not yet stored (-1: none)

    // Before half cw's next tile: store what occupies its bytes (its own previous tile, or with a shared buffer the
    // pending tile of either half).
    template <class Tr>
    __device__ __forceinline__ void flushBefore(int cw, Tr& tr)
    {
        if constexpr (Staging::kShared) {
            if (pending >= 0) flush(pending, tr);
            pending = cw;
        } else if (done[cw] > 0) {
            flush(cw, tr);
        }
    }
    template <class Tr>
    __device__ __forceinline__ void flush(int cw, Tr& tr) const
    {
        st.waitDataHalf(cw, done[cw] - 1, tr);
        if constexpr (kMode != 0) {
            if (this->spPart[cw] == -2) return;  // flushed by publishNow
        }
        if (flag[cw])
            st.storeHalfPublish(tmU, cw, done[cw] - 1, out[cw][0], out[cw][1], out[cw][2], flag[cw], epoch, issuer, tr);
        else if constexpr (Staging::kPieces > 1)
            st.storeHalf(toU[cw] ? tmU : tmOut, cw, done[cw] - 1, out[cw][0], out[cw][1], out[cw][2], issuer, tr);
        else
            st.storeHalf(tmOut, cw, done[cw] - 1, out[cw][0], out[cw][1], out[cw][2], issuer, tr);
    }
    // Output at (ox, oy, oz) of tmOut, U's tile at (ux, uy, uz) of tmU.
    template <class Tr, class Ready>
    __device__ __forceinline__ void next(int cw, int ox, int oy, int oz, int ux, int uy, int uz, Ready&& ready, Tr& tr)
    {
        flushBefore(cw, tr);
        ready(done[cw]);
        st.loadStaging(tmU, cw, done[cw], ux, uy, uz, issuer, tr);
        out[cw][0] = ox;
        out[cw][1] = oy;
        out[cw][2] = oz;
        flag[cw] = nullptr;
        if constexpr (Staging::kPieces > 1) toU[cw] = false;
        if constexpr (kMode != 0) this->spPart[cw] = -1;
        ++done[cw];
    }
    // A tile without U whose output goes to (x, y, z) of tmU, published by `f` = e (the user stage's tiles). With
    // Staging::kPieces > 1, f = nullptr for every piece but the last: stored into tmU, published with the last one.
    template <class Tr>
    __device__ __forceinline__ void nextPublished(int cw, int x, int y, int z, int* f, int e, Tr& tr)
    {
        flushBefore(cw, tr);
        st.loadStagingEmpty(cw, done[cw], issuer, tr);
        out[cw][0] = x;
        out[cw][1] = y;
        out[cw][2] = z;
        flag[cw] = f;
        if constexpr (Staging::kPieces > 1) toU[cw] = true;
        if constexpr (kMode != 0) this->spPart[cw] = -1;
        epoch = e;
        ++done[cw];
    }
    // kModeEager, after a user tile's last pieces (both halves pending with their flags: nextPublished): the halves'
    // stores issued one after the other, ONE wait until both are complete, then both flags -- instead of each half's
    // store + completion wait when its next tile comes (s12-lce's traces: a completion wait took 2.4-5 us in the first
    // round, and a candidate tile's half 1 waited behind half 0's).
    template <class Tr>
    __device__ __forceinline__ void publishNow(Tr& tr)
    {
        static_assert(kMode == kModeEager && !Staging::kShared, "EpilogueWarp<..., kModeEager> with a half per warpgroup");
        for (int cw = 0; cw < 2; ++cw) {
            st.waitDataHalf(cw, done[cw] - 1, tr);
            st.storeHalfIssue(tmU, cw, done[cw] - 1, out[cw][0], out[cw][1], out[cw][2], issuer, tr);
        }
        if (issuer) {
            bulkWait<0>();  // both halves written to global memory
            fenceProxyAsyncGlobal();
            __threadfence();
            for (int cw = 0; cw < 2; ++cw) releaseFlag(flag[cw], epoch);
        }
        __syncwarp();
        for (int cw = 0; cw < 2; ++cw) this->spPart[cw] = -2;  // (flush skips them from now on)
    }
    // A tile without U whose output goes to (x, y, z) of tmOut (the consumers add U from their registers:
    // epilogueAddPacked).
    template <class Tr>
    __device__ __forceinline__ void nextStaged(int cw, int x, int y, int z, Tr& tr)
    {
        nextPublished(cw, x, y, z, nullptr, 0, tr);
        if constexpr (Staging::kPieces > 1) toU[cw] = false;  // into tmOut
    }
    template <class Tr>
    __device__ __forceinline__ void finish(Tr& tr) const
    {
        if constexpr (Staging::kShared) {
            if (pending >= 0) flush(pending, tr);
        } else {
            for (int cw = 0; cw < 2; ++cw)
                if (done[cw] > 0) flush(cw, tr);
        }
        if (issuer) bulkWait<0>();  // every store has landed before the CTA ends
    }
};

}  // namespace ws::kern
