// Shared piece (kernels/src/common): the register-to-global epilogue of one warpgroup's 64 x N wgmma
// accumulator to an fp16 matrix, clipped to rows x cols (partial tiles), with a fusion functor applied
// to each pair of values before the conversion. The accumulator's fragment layout lives here only:
// thread t of the warpgroup holds rows 16*(t/32) + (t%32)/4 and +8, columns 8*j + 2*(t%4) + {0,1}.
// Fusions: NoFuse, AddBroadcast (adds a [rows x cols] fp16 matrix shared by many outputs: the
// linear-compression family's user-side result U[u(b)]).
#pragma once

#include <cstdint>
#include <cuda_fp16.h>

#include "warpstage/trace.cuh"

namespace ws::kern {

struct NoFuse {
    __device__ __forceinline__ void operator()(int, int, float&, float&) const {}
};

// out += src[r * ld + c] (fp16 source, read as pairs: ld and the columns must be even).
struct AddBroadcast {
    const __half* src;
    int ld;
    __device__ __forceinline__ void operator()(int r, int c, float& v0, float& v1) const
    {
        const float2 u = __half22float2(*reinterpret_cast<const __half2*>(src + size_t(r) * ld + c));
        v0 += u.x;
        v1 += u.y;
    }
};

// Stores the warpgroup's 64 x N block whose top-left is (row0, col0) of C (leading dimension ldc,
// even), clipped to rows x cols (cols even). Phase Store on the trace.
template <int N, class Fuse, class Tr>
__device__ __forceinline__ void storeAccF16(float (&d)[N / 2], __half* C, int ldc, int rows, int cols, int row0,
                                            int col0, int tInWg, const Fuse& fuse, Tr& tr)
{
    tr.event(ws::trace::kind::Store);
    const int warp = tInWg >> 5, lane = tInWg & 31;
    const int r = row0 + warp * 16 + (lane >> 2);
    const int c = col0 + 2 * (lane & 3);
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // rows r and r + 8
        const int rr = r + 8 * h;
        if (rr >= rows) continue;
        __half* p = C + size_t(rr) * ldc + c;
#pragma unroll
        for (int j = 0; j < N / 8; ++j) {
            if (c + 8 * j >= cols) break;
            float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
            fuse(rr, c + 8 * j, v0, v1);
            *reinterpret_cast<__half2*>(p + 8 * j) = __floats2half2_rn(v0, v1);
        }
    }
}

}  // namespace ws::kern
