// The family's fp32 reference and the comparison (what `lce --check` and the GPU test rely on).
// Deliberately plain: one thread per output column n and 8 rows, fp32 sums in k order, from the
// same fp16 inputs the rungs read.
#include "lce_rungs.h"

#include <cmath>
#include <cstdio>

namespace ws::lce {

namespace {

constexpr int kRowsPerThread = 8;

__global__ void referenceKernel(const __half* __restrict__ wUser, const __half* __restrict__ wCand,
                                const __half* __restrict__ eUser, const __half* __restrict__ eCand,
                                const int32_t* __restrict__ userOf, float* __restrict__ ref, int M, int N, int kUser,
                                int kCand)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    const int m0 = blockIdx.y * kRowsPerThread;
    const int b = blockIdx.z;
    if (n >= N) return;
    float acc[kRowsPerThread] = {};
    const __half* ec = eCand + size_t(b) * kCand * N + n;
    for (int k = 0; k < kCand; ++k) {
        const float e = __half2float(ec[size_t(k) * N]);
#pragma unroll
        for (int r = 0; r < kRowsPerThread; ++r)
            if (m0 + r < M) acc[r] += __half2float(wCand[size_t(m0 + r) * kCand + k]) * e;
    }
    const __half* eu = eUser + size_t(userOf[b]) * kUser * N + n;
    float accU[kRowsPerThread] = {};
    for (int k = 0; k < kUser; ++k) {
        const float e = __half2float(eu[size_t(k) * N]);
#pragma unroll
        for (int r = 0; r < kRowsPerThread; ++r)
            if (m0 + r < M) accU[r] += __half2float(wUser[size_t(m0 + r) * kUser + k]) * e;
    }
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r)
        if (m0 + r < M) ref[(size_t(b) * M + m0 + r) * N + n] = acc[r] + accU[r];
}

struct Stats {
    double sumSq;
    unsigned long long bad, nonFinite, firstBad;
    float maxErr;
};

__global__ void sumSquares(const float* __restrict__ ref, size_t n, Stats* st)
{
    double s = 0;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        s += double(ref[i]) * ref[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(&st->sumSq, s);
}

__global__ void compareKernel(const __half* __restrict__ out, const float* __restrict__ ref, size_t n, float absTol,
                              float relTol, Stats* st)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const float g = __half2float(out[i]), w = ref[i];
        if (!isfinite(g)) {
            atomicAdd(&st->nonFinite, 1ull);
            atomicMin(&st->firstBad, (unsigned long long)i);
            continue;
        }
        const float e = fabsf(g - w);
        if (e > absTol + relTol * fabsf(w)) {
            atomicAdd(&st->bad, 1ull);
            atomicMin(&st->firstBad, (unsigned long long)i);
        }
        // max of non-negative floats through their bit patterns
        atomicMax(reinterpret_cast<unsigned int*>(&st->maxErr), __float_as_uint(e));
    }
}

}  // namespace

std::string reference(const Problem& p, float* ref)
{
    const Shape& s = p.s;
    const dim3 grid((s.n + 127) / 128, (s.m + kRowsPerThread - 1) / kRowsPerThread, s.b);
    referenceKernel<<<grid, 128, 0, p.stream>>>(p.wUser, p.wCand, p.eUser, p.eCand, p.userOf, ref, s.m, s.n, s.kUser,
                                                s.kCand);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? std::string() : std::string("reference kernel: ") + cudaGetErrorString(e);
}

std::string compare(const Problem& p, const float* ref, CheckResult& r)
{
    const Shape& s = p.s;
    const size_t n = size_t(s.b) * s.m * s.n;
    Stats* st = nullptr;
    if (cudaMalloc(&st, sizeof(Stats)) != cudaSuccess) return "cudaMalloc failed for the check";
    Stats h{0, 0, 0, ~0ull, 0.f};
    cudaMemcpy(st, &h, sizeof h, cudaMemcpyHostToDevice);
    sumSquares<<<1024, 256, 0, p.stream>>>(ref, n, st);
    cudaMemcpyAsync(&h, st, sizeof h, cudaMemcpyDeviceToHost, p.stream);
    cudaStreamSynchronize(p.stream);
    r.rms = std::sqrt(h.sumSq / double(n));
    compareKernel<<<1024, 256, 0, p.stream>>>(p.out, ref, n, float(kAbsTol * r.rms), float(kRelTol), st);
    cudaMemcpyAsync(&h, st, sizeof h, cudaMemcpyDeviceToHost, p.stream);
    const cudaError_t e = cudaStreamSynchronize(p.stream);
    cudaFree(st);
    if (e != cudaSuccess) return std::string("check: ") + cudaGetErrorString(e);
    r.bad = h.bad;
    r.nonFinite = h.nonFinite;
    r.maxErr = h.maxErr;
    r.firstBad = h.firstBad == ~0ull ? -1 : (long long)h.firstBad;
    if (r.firstBad >= 0) {
        __half g;
        cudaMemcpy(&g, p.out + r.firstBad, sizeof g, cudaMemcpyDeviceToHost);
        cudaMemcpy(&r.want, ref + r.firstBad, sizeof(float), cudaMemcpyDeviceToHost);
        r.got = __half2float(g);
    }
    return {};
}

std::string checkRung(int rung, Problem& p, const float* ref, CheckResult& r)
{
    const Shape& s = p.s;
    cudaMemsetAsync(p.out, 0xFF, size_t(s.b) * s.m * s.n * 2, p.stream);  // NaN: unwritten outputs fail
    std::string err = runRung(rung, p);
    if (err.empty()) {
        const cudaError_t e = cudaStreamSynchronize(p.stream);
        if (e != cudaSuccess) err = cudaGetErrorString(e);
    }
    if (err.empty()) err = compare(p, ref, r);
    return err;
}

std::string checkVerdict(int rung, const std::string& err, const CheckResult& c)
{
    char buf[400];
    if (!err.empty())
        std::snprintf(buf, sizeof buf, "FAIL rung %d %s: %s", rung, rungName(rung), err.c_str());
    else if (!c.passed())
        std::snprintf(buf, sizeof buf,
                      "FAIL rung %d %s: %llu outside tolerance, %llu not finite (first at %lld: got %g, want %g; rms %g)",
                      rung, rungName(rung), (unsigned long long)c.bad, (unsigned long long)c.nonFinite,
                      (long long)c.firstBad, c.got, c.want, c.rms);
    else
        std::snprintf(buf, sizeof buf, "PASS rung %d %s: max |err| %.4g (tolerance %.0e*|ref| + %.0e*rms, rms %.3g)",
                      rung, rungName(rung), c.maxErr, kRelTol, kAbsTol, c.rms);
    return buf;
}

}  // namespace ws::lce
