// The problem's buffers (lce_rungs.h's Problem): allocated and filled with the same random inputs for every rung
// (from the shape's seed), plus the layouts the rungs keep (concatenated, K padded) and rung 4's ready flags. Shared by
// the driver (lce_main.cu) and the library (lce_capi.cpp, s12-lcevs).
#include <vector>

#include "lce_rungs.h"

namespace ws::lce {

namespace {

__device__ __forceinline__ uint32_t hash32(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return uint32_t(x);
}

// Uniform in [-1, 1), a function of (seed, salt, index): the same inputs for every rung.
__global__ void fillUniform(__half* p, size_t n, uint64_t seed, uint64_t salt)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = __float2half(float(hash32(seed * 0x9E3779B97F4A7C15ull + salt * 0x632BE59BD9B4E019ull + i)) * 0x1p-31f - 1.f);
}

// dst[o * innerDst + i] = i < innerSrc ? src[o * innerSrc + i] : 0
__global__ void padCopy(__half* dst, const __half* src, size_t outer, size_t innerSrc, size_t innerDst)
{
    const size_t n = outer * innerDst;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const size_t o = i / innerDst, in = i - o * innerDst;
        dst[i] = in < innerSrc ? src[o * innerSrc + in] : __float2half(0.f);
    }
}

// wCat[m] = [wUser[m] | wCand[m]]
__global__ void concatRows(__half* dst, const __half* a, const __half* b, size_t rows, size_t ka, size_t kb)
{
    const size_t kt = ka + kb, n = rows * kt;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const size_t r = i / kt, k = i - r * kt;
        dst[i] = k < ka ? a[r * ka + k] : b[r * kb + (k - ka)];
    }
}

template <class T>
bool alloc(T*& p, size_t count)
{
    return cudaMalloc(reinterpret_cast<void**>(&p), count * sizeof(T)) == cudaSuccess;
}

}  // namespace

std::string allocate(Problem& p, const Shape& s)
{
    p.s = s;
    p.users = s.users();
    p.kUserP = padK(s.kUser);
    p.kCandP = padK(s.kCand);
    const size_t m = size_t(s.m), n = size_t(s.n), b = size_t(s.b), users = size_t(p.users);
    const size_t kt = size_t(s.kUser) + s.kCand;
    bool ok = alloc(p.wUser, m * s.kUser) && alloc(p.wCand, m * s.kCand) && alloc(p.eUser, users * s.kUser * n)
              && alloc(p.eCand, b * s.kCand * n) && alloc(p.userOf, b) && alloc(p.wCat, m * kt)
              && alloc(p.wUserP, m * p.kUserP) && alloc(p.wCandP, m * p.kCandP)
              && alloc(p.eUserP, users * p.kUserP * n) && alloc(p.eCandP, b * p.kCandP * n)
              && alloc(p.cat, b * kt * n) && alloc(p.u, users * m * n) && alloc(p.out, b * m * n)
              && alloc(p.flags, lceFlagCount(s));
    if (!ok) return "cudaMalloc failed (out of GPU memory?) for " + s.text();
    if (!p.stream && cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking) != cudaSuccess)
        return "cudaStreamCreate failed";
    if (!p.blas) {
        if (cublasCreate(&p.blas) != CUBLAS_STATUS_SUCCESS) return "cublasCreate failed";
        cublasSetStream(p.blas, p.stream);
    }
    cudaMemsetAsync(p.flags, 0, lceFlagCount(s) * sizeof(int), p.stream);
    const int G = 132 * 8, T = 256;
    fillUniform<<<G, T, 0, p.stream>>>(p.wUser, m * s.kUser, s.seed, 1);
    fillUniform<<<G, T, 0, p.stream>>>(p.wCand, m * s.kCand, s.seed, 2);
    fillUniform<<<G, T, 0, p.stream>>>(p.eUser, users * s.kUser * n, s.seed, 3);
    fillUniform<<<G, T, 0, p.stream>>>(p.eCand, b * s.kCand * n, s.seed, 4);
    const std::vector<int32_t> map = userMapping(s);
    cudaMemcpyAsync(p.userOf, map.data(), b * sizeof(int32_t), cudaMemcpyHostToDevice, p.stream);
    concatRows<<<G, T, 0, p.stream>>>(p.wCat, p.wUser, p.wCand, m, size_t(s.kUser), size_t(s.kCand));
    padCopy<<<G, T, 0, p.stream>>>(p.wUserP, p.wUser, m, size_t(s.kUser), size_t(p.kUserP));
    padCopy<<<G, T, 0, p.stream>>>(p.wCandP, p.wCand, m, size_t(s.kCand), size_t(p.kCandP));
    padCopy<<<G, T, 0, p.stream>>>(p.eUserP, p.eUser, users, size_t(s.kUser) * n, size_t(p.kUserP) * n);
    padCopy<<<G, T, 0, p.stream>>>(p.eCandP, p.eCand, b, size_t(s.kCand) * n, size_t(p.kCandP) * n);
    const cudaError_t e = cudaStreamSynchronize(p.stream);
    if (e != cudaSuccess) return std::string("input setup: ") + cudaGetErrorString(e);
    return {};
}

void release(Problem& p)
{
    for (void* q : {(void*)p.wUser, (void*)p.wCand, (void*)p.eUser, (void*)p.eCand, (void*)p.userOf, (void*)p.wCat,
                    (void*)p.wUserP, (void*)p.wCandP, (void*)p.eUserP, (void*)p.eCandP, (void*)p.cat, (void*)p.u,
                    (void*)p.out, (void*)p.flags})
        if (q) cudaFree(q);
    cublasHandle_t blas = p.blas;
    cudaStream_t stream = p.stream;
    p = Problem{};
    p.blas = blas;
    p.stream = stream;
}

}  // namespace ws::lce
