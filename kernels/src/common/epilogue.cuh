// Shared piece (kernels/src/common): the register-to-global epilogue of one warpgroup's 64 x N wgmma
// accumulator to an fp16 matrix, clipped to rows x cols (partial tiles), with a fusion functor applied
// to each pair of values before the conversion. The accumulator's fragment layout lives here only:
// thread t of the warpgroup holds rows 16*(t/32) + (t%32)/4 and +8, columns 8*j + 2*(t%4) + {0,1}.
// Two policies: storeAccF16 (registers -> global, clipped by hand) and storeAccTmaF16 (registers ->
// swizzled shared staging -> TMA store, clipped by the TMA engine; the warpgroup does not wait for
// the global writes). Fusions: NoFuse, AddBroadcast (adds a [rows x cols] fp16 matrix shared by many outputs: the
// linear-compression family's user-side result U[u(b)]).
#pragma once

#include <cstdint>
#include <string>  // hopper.cuh declares std::string helpers
#include <cuda_fp16.h>

#include "../hopper.cuh"
#include "tma.cuh"
#include "warpstage/trace.cuh"

namespace ws::kern {

// A fusion: `load(r, c)` fetches what the pair at (r, c), (r, c + 1) needs (issued in batches, before any
// store of the batch, so that the loads overlap instead of waiting one by one behind the stores);
// `apply(value, v0, v1)` changes the pair.
struct NoFuse {
    using Value = int;
    __device__ __forceinline__ Value load(int, int) const { return 0; }
    __device__ __forceinline__ void apply(Value, float&, float&) const {}
};

// out += src[r * ld + c] (fp16 source, read as pairs through the read-only path: ld and the columns
// must be even, and src must not change during the kernel).
struct AddBroadcast {
    const __half* src;
    int ld;
    using Value = __half2;
    __device__ __forceinline__ Value load(int r, int c) const
    {
        return __ldg(reinterpret_cast<const __half2*>(src + size_t(r) * ld + c));
    }
    __device__ __forceinline__ void apply(Value u, float& v0, float& v1) const
    {
        const float2 f = __half22float2(u);
        v0 += f.x;
        v1 += f.y;
    }
};

// The same through L2 only (ld.global.cg): for a source written during the kernel by other CTAs (the
// persistent rung's user tiles), after an acquire of their ready flag.
struct AddBroadcastL2 {
    const __half* src;
    int ld;
    using Value = __half2;
    __device__ __forceinline__ Value load(int r, int c) const
    {
        return __ldcg(reinterpret_cast<const __half2*>(src + size_t(r) * ld + c));
    }
    __device__ __forceinline__ void apply(Value u, float& v0, float& v1) const
    {
        const float2 f = __half22float2(u);
        v0 += f.x;
        v1 += f.y;
    }
};

// Stores the warpgroup's 64 x N block whose top-left is (row0, col0) of C (leading dimension ldc,
// even), clipped to rows x cols (cols even). Phase Store on the trace. The fusion's loads go in
// batches of kFuseBatch column groups x 2 rows (16 loads in flight per thread).
inline constexpr int kFuseBatch = 8;
template <int N, class Fuse, class Tr>
__device__ __forceinline__ void storeAccF16(float (&d)[N / 2], __half* C, int ldc, int rows, int cols, int row0,
                                            int col0, int tInWg, const Fuse& fuse, Tr& tr)
{
    static_assert((N / 8) % kFuseBatch == 0, "N/8 column groups must split into whole batches");
    tr.event(ws::trace::kind::Store);
    const int warp = tInWg >> 5, lane = tInWg & 31;
    const int r = row0 + warp * 16 + (lane >> 2);
    const int c = col0 + 2 * (lane & 3);
    const bool rowIn[2] = {r < rows, r + 8 < rows};
#pragma unroll
    for (int j0 = 0; j0 < N / 8; j0 += kFuseBatch) {
        typename Fuse::Value v[2][kFuseBatch];
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int jj = 0; jj < kFuseBatch; ++jj)
                if (rowIn[h] && c + 8 * (j0 + jj) < cols) v[h][jj] = fuse.load(r + 8 * h, c + 8 * (j0 + jj));
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            if (!rowIn[h]) continue;
            __half* p = C + size_t(r + 8 * h) * ldc + c;
#pragma unroll
            for (int jj = 0; jj < kFuseBatch; ++jj) {
                const int j = j0 + jj;
                if (c + 8 * j >= cols) break;
                float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
                fuse.apply(v[h][jj], v0, v1);
                *reinterpret_cast<__half2*>(p + 8 * j) = __floats2half2_rn(v0, v1);
            }
        }
    }
}

// The same block through the TMA engine (the GEMM ladder's storeAccTmaBf16 protocol, fp16, with the
// fusion and a 3-D destination): box by box (64 rows x 32 columns, 64-byte rows with the 64-byte
// swizzle: staging64Offset) into the warpgroup's two 4 KB staging buffers (`staging`, 512-byte
// aligned), each box handed to the TMA engine (tmC: fp16 {cols, rows, z} map, boxes {32, 64, 1},
// SWIZZLE_64B) at (col0 + 32c, row0, z) once written. Rows and columns past the tensor are dropped by
// the TMA engine; the fusion is evaluated only inside rows x cols. Thread kStoreIssuer of the
// warpgroup owns the bulk groups and must bulkWait<0>() before the kernel exits. barId: a named
// barrier of the warpgroup's 128 threads.
template <int N, class Fuse, class Tr>
__device__ __forceinline__ void storeAccTmaF16(float (&d)[N / 2], const CUtensorMap* tmC, uint8_t* staging, int rows,
                                               int cols, int row0, int col0, int z, int tInWg, uint32_t barId,
                                               const Fuse& fuse, Tr& tr)
{
    tr.event(ws::trace::kind::Store);
    const int warp = tInWg >> 5, lane = tInWg & 31;
    const int r0 = warp * 16 + (lane >> 2), t = lane & 3;
    const bool rowIn[2] = {row0 + r0 < rows, row0 + r0 + 8 < rows};
#pragma unroll
    for (int c = 0; c < N / kStoreBoxCols; ++c) {
        uint8_t* buf = staging + (c & 1) * kStoreBoxBytes;
        typename Fuse::Value v[2][4];
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const int cc = col0 + 8 * (4 * c + u) + 2 * t;
                if (rowIn[h] && cc < cols) v[h][u] = fuse.load(row0 + r0 + 8 * h, cc);
            }
        if (tInWg == kStoreIssuer) bulkWaitRead<1>();  // the store that last read `buf` (two boxes ago) is done
        storeBarrier(barId);
#pragma unroll
        for (int u = 0; u < 4; ++u) {  // 16-byte unit u of the 64-byte rows = accumulator column group 4c+u
            const int j = 4 * c + u;
            const int cc = col0 + 8 * j + 2 * t;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
                if (rowIn[h] && cc < cols) fuse.apply(v[h][u], v0, v1);
                *reinterpret_cast<__half2*>(buf + staging64Offset(r0 + 8 * h, u, 4 * t)) = __floats2half2_rn(v0, v1);
            }
        }
        fenceProxyAsync();  // the writes above, visible to the TMA engine
        storeBarrier(barId);
        if (tInWg == kStoreIssuer) {
            tmaStore3d(tmC, buf, col0 + c * kStoreBoxCols, row0, z);
            bulkCommit();
        }
    }
}

}  // namespace ws::kern
