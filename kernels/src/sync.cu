// Rung 1 — sync.
// IDEA: the textbook shared-memory tiled GEMM on CUDA cores. Each k-step the whole CTA
// loads a 128x32 slice of A and of B into shared memory (converting bf16 to fp32),
// __syncthreads, multiplies it with FFMA (8x8 outputs per thread), __syncthreads. Loads,
// math and barriers strictly alternate: nothing overlaps inside a CTA.
// Trace per warp and k-step: Load, Sync, Compute, Sync; then Epilogue, Store.
// Any shape with K a multiple of 8: loads past M, N or K read as zeros (a 16-byte piece of 8 bf16 is either
// inside K or past it), a partial tile's stores are clipped to C.
#include <cuda_bf16.h>

#include "rungs.h"
#include "warpstage/trace_device.cuh"

namespace ws::kern {
namespace r_sync {
using namespace geom;
namespace tk = ws::trace::kind;
namespace tr = ws::trace::role;

constexpr int BM = kSyncBM, BN = kSyncBN, BK = kSyncBK, PAD = 4;

__device__ __forceinline__ void unpack8(const uint4& v, float (&f)[8])
{
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float2 x = __bfloat1622float2(h[i]);
        f[2 * i] = x.x;
        f[2 * i + 1] = x.y;
    }
}

template <bool Traced>
__global__ void __launch_bounds__(kSyncThreads, 2) gemmSync(const __nv_bfloat16* __restrict__ A,
                                                         const __nv_bfloat16* __restrict__ B,
                                                         __nv_bfloat16* __restrict__ C, int M, int N, int K,
                                                         void* trace)
{
    __shared__ __align__(16) float As[BK][BM + PAD];
    __shared__ __align__(16) float Bs[BK][BN + PAD];
    __shared__ __align__(16) uint8_t traceStage[Traced ? (kSyncThreads / 32) * ws::trace::kTraceSmemPerWarp : 16];
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    ws::trace::WarpTrace<Traced> wt;
    ws::trace::CtaTrace<Traced> ct;
    if constexpr (Traced) {
        ct.begin(trace);
        wt.begin(trace, tid / 32, tr::Worker, tid / 128, 0,
                 traceStage + (tid / 32) * ws::trace::kTraceSmemPerWarp);
    }

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

    const int KT = (K + BK - 1) / BK;  // a partial last k-step reads zeros past K
    for (int kt = 0; kt < KT; ++kt) {
        if constexpr (Traced) wt.event(tk::Load, kt);
        const int k0 = kt * BK;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int c = tid + i * kSyncThreads;  // 512 chunks of 8 bf16 per operand
            const int r = c / 4, kq = (c % 4) * 8;
            const bool inK = k0 + kq < K;  // K % 8 == 0: the 8 elements are all inside K or all past it
            uint4 v = make_uint4(0u, 0u, 0u, 0u);  // what a load past M, N or K reads
            if (inK && m0 + r < M) v = *reinterpret_cast<const uint4*>(A + size_t(m0 + r) * K + k0 + kq);
            float f[8];
            unpack8(v, f);
#pragma unroll
            for (int j = 0; j < 8; ++j) As[kq + j][r] = f[j];
            v = make_uint4(0u, 0u, 0u, 0u);
            if (inK && n0 + r < N) v = *reinterpret_cast<const uint4*>(B + size_t(n0 + r) * K + k0 + kq);
            unpack8(v, f);
#pragma unroll
            for (int j = 0; j < 8; ++j) Bs[kq + j][r] = f[j];
        }
        if constexpr (Traced) wt.event(tk::Sync, kt);
        __syncthreads();
        if constexpr (Traced) wt.event(tk::Compute, kt);
#pragma unroll 4
        for (int k = 0; k < BK; ++k) {
            float a[8], b[8];
            *reinterpret_cast<float4*>(a) = *reinterpret_cast<const float4*>(&As[k][ty * 4]);
            *reinterpret_cast<float4*>(a + 4) = *reinterpret_cast<const float4*>(&As[k][64 + ty * 4]);
            *reinterpret_cast<float4*>(b) = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
            *reinterpret_cast<float4*>(b + 4) = *reinterpret_cast<const float4*>(&Bs[k][64 + tx * 4]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if constexpr (Traced) wt.event(tk::Sync, kt);
        __syncthreads();
    }

    if constexpr (Traced) wt.event(tk::Epilogue);
    // rows ty*4+i (i<4) and 64+ty*4+(i-4); columns tx*4.. and 64+tx*4..
    uint2 out[8][2];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            __nv_bfloat162 lo = __floats2bfloat162_rn(acc[i][4 * h], acc[i][4 * h + 1]);
            __nv_bfloat162 hi = __floats2bfloat162_rn(acc[i][4 * h + 2], acc[i][4 * h + 3]);
            out[i][h].x = *reinterpret_cast<uint32_t*>(&lo);
            out[i][h].y = *reinterpret_cast<uint32_t*>(&hi);
        }
    if constexpr (Traced) wt.event(tk::Store);
    // A whole tile with N % 4 == 0 (8-byte aligned rows of 4 outputs): vector stores; otherwise each element
    // inside C on its own (a partial tile, or rows whose 4-element groups are not 8-byte aligned).
    const bool whole = m0 + BM <= M && n0 + BN <= N && (N & 3) == 0;  // CTA-uniform
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int r = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int c = n0 + (h == 0 ? tx * 4 : 64 + tx * 4);
            if (whole) {
                *reinterpret_cast<uint2*>(C + size_t(r) * N + c) = out[i][h];
            } else if (r < M) {
                const __nv_bfloat16* v = reinterpret_cast<const __nv_bfloat16*>(&out[i][h]);
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (c + j < N) C[size_t(r) * N + c + j] = v[j];
            }
        }
    }
    if constexpr (Traced) {
        wt.end();
        ct.end(trace);
    }
}
}  // namespace r_sync
using namespace r_sync;

cudaError_t launchSync(const LaunchArgs& a, const char**)
{
    const dim3 grid((a.n + BN - 1) / BN, (a.m + BM - 1) / BM);  // partial tiles at the right and bottom
    const auto* A = static_cast<const __nv_bfloat16*>(a.a);
    const auto* B = static_cast<const __nv_bfloat16*>(a.b);
    auto* C = static_cast<__nv_bfloat16*>(a.c);
    if (a.trace) gemmSync<true><<<grid, kSyncThreads, 0, a.stream>>>(A, B, C, a.m, a.n, a.k, a.trace);
    else gemmSync<false><<<grid, kSyncThreads, 0, a.stream>>>(A, B, C, a.m, a.n, a.k, nullptr);
    return cudaGetLastError();
}

const void* kernelSync(bool traced)
{
    return traced ? reinterpret_cast<const void*>(&gemmSync<true>) : reinterpret_cast<const void*>(&gemmSync<false>);
}

}  // namespace ws::kern
