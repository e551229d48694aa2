// Shared piece (kernels/src/common): the consumer's MMA step for fp16 operands with B MN-major
// (B's tile in shared memory is K rows of N contiguous elements, as TMA brings [K, N] row-major
// data), A K-major; and the GEMM ladder's bf16 k-step (A and B K-major: mmaIssueBf16). Trace: mmaIssue* /
// mmaWait open the phases of the same names.
#pragma once

#include <cstdint>
#include <string>  // hopper.cuh declares std::string helpers

#include "../hopper.cuh"
#include "wgmma_f16.cuh"
#include "warpstage/trace.cuh"

namespace ws::kern {

// Descriptor of an MN-major tile written by TMA with the 128-byte swizzle in boxes of 64 (MN) x
// BK (K) elements: each K row of a box is 128 bytes (64 fp16), 8-row groups 1024 B apart (stride
// byte offset), consecutive 64-wide MN blocks `mnBlockBytes` apart (leading byte offset), i.e.
// CuTe's Swizzle<3,4,3> o ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)). Advancing K by 16 adds 16 rows =
// 2048 bytes (whole swizzle atoms).
__device__ __forceinline__ uint64_t wgmmaDescSw128Mn(uint32_t addr, uint32_t mnBlockBytes)
{
    uint64_t d = 0;
    d |= uint64_t((addr & 0x3FFFF) >> 4);
    d |= uint64_t((mnBlockBytes & 0x3FFFF) >> 4) << 16;  // leading byte offset: next 64-wide MN block
    d |= uint64_t(1024 >> 4) << 32;                       // stride byte offset: next 8 K rows
    d |= uint64_t(1) << 62;                               // 128-byte swizzle
    return d;
}

template <int N>
__device__ __forceinline__ void wgmmaTileF16Nt(float (&d)[N / 2], uint64_t descA, uint64_t descB, int scaleD)
{
    if constexpr (N == 256) wgmma_m64n256k16_f16nt(d, descA, descB, scaleD);
    else wgmma_m64n128k16_f16nt(d, descA, descB, scaleD);
}

// One 64-deep k-step of a warpgroup: A = 64 rows x 64 K (K-major, 128-byte swizzle, 1024-aligned),
// B = N columns x 64 K as N/64 MN-major boxes of 64 x 64 (8 KB each, consecutive).
// accumulate = 0 on a tile's first k-step (the first wgmma overwrites the accumulator).
template <int N>
__device__ __forceinline__ void mmaKStepF16Nt(float (&acc)[N / 2], uint32_t aTile, uint32_t bTile, int accumulate)
{
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
        wgmmaTileF16Nt<N>(acc, wgmmaDescSw128(aTile + kk * 32), wgmmaDescSw128Mn(bTile + kk * 16 * 128, 64 * 64 * 2),
                          kk == 0 ? accumulate : 1);
}

// Fence, the k-step's wgmmas, commit (the phase MmaIssue).
template <int N, class Tr>
__device__ __forceinline__ void mmaIssue(float (&acc)[N / 2], uint32_t aTile, uint32_t bTile, bool first, int fill,
                                         int slot, Tr& tr)
{
    tr.event(ws::trace::kind::MmaIssue, fill, uint8_t(slot));
    wgmmaFence();
    mmaKStepF16Nt<N>(acc, aTile, bTile, first ? 0 : 1);
    wgmmaCommit();
}
// The same for a warpgroup that owns R blocks of 64 rows of the tile (A's rows 64r.. at aTile + r * 64 * 128,
// all sharing B): one commit for the k-step; only the first RB (a compile-time count: a run-time test
// between the wgmmas makes ptxas serialize them) are inside M -- a short last M tile takes RB < R.
template <int N, int R, int RB, class Tr>
__device__ __forceinline__ void mmaIssueRows(float (&acc)[R][N / 2], uint32_t aTile, uint32_t bTile, bool first,
                                             int fill, int slot, Tr& tr)
{
    static_assert(RB >= 1 && RB <= R, "1..R row blocks");
    tr.event(ws::trace::kind::MmaIssue, fill, uint8_t(slot));
    wgmmaFence();
#pragma unroll
    for (int r = 0; r < RB; ++r) mmaKStepF16Nt<N>(acc[r], aTile + r * 64 * 128, bTile, first ? 0 : 1);
    wgmmaCommit();
}
// The GEMM ladder's k-step (bf16, A and B both K-major, hopper.cuh's mmaKStep): fence, the wgmmas of MB blocks of
// 64 rows of A (64 * 128 bytes apart) times N columns of B, commit (the phase MmaIssue). first: the tile's first
// k-step (the wgmmas overwrite the accumulator).
template <int MB, int N, class Tr>
__device__ __forceinline__ void mmaIssueBf16(float (&acc)[MB][N / 2], uint32_t aTile, uint32_t bTile, bool first,
                                             int fill, int slot, Tr& tr)
{
    tr.event(ws::trace::kind::MmaIssue, fill, uint8_t(slot));
    wgmmaFence();
    mmaKStep<MB, N>(acc, aTile, bTile, first ? 0 : 1);
    wgmmaCommit();
}
// Wait until at most InFlight committed k-steps are still running (the phase MmaWait).
template <int InFlight, class Tr>
__device__ __forceinline__ void mmaWait(int fill, int slot, Tr& tr)
{
    tr.event(ws::trace::kind::MmaWait, fill, uint8_t(slot));
    wgmmaWait<InFlight>();
}

}  // namespace ws::kern
