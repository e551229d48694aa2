// Kernel engineer's quick probe (not a test; the real checks live in tests/kernels):
// every rung at the given shapes, untraced and traced, against cuBLAS (fp32 output of the
// same bf16 inputs), poisoned output, fresh random-normal inputs; then median times of
// rung (untraced, traced) and cuBLAS over rotated input sets. One line per rung/shape.
// Usage: ladder_probe [--time] [--reps N] MxNxK ...
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "warpstage/ladder.h"
#include "warpstage/trace_format.h"

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                       \
        }                                                                                       \
    } while (0)

using ws::ladder::Shape;

__global__ void fillNormal(__nv_bfloat16* p, size_t n, unsigned long long seed)
{
    size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    for (; i < n; i += size_t(gridDim.x) * blockDim.x) {
        unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
        float u1 = ((x & 0xFFFFFF) + 1) / 16777217.f, u2 = ((x >> 24) & 0xFFFFFF) / 16777216.f;
        p[i] = __float2bfloat16(sqrtf(-2.f * logf(u1)) * cospif(2.f * u2));
    }
}

struct Err { double rel; size_t nan; };

__global__ void diffKernel(const __nv_bfloat16* c, const float* ref, size_t n, double* acc, unsigned long long* bad)
{
    double d2 = 0, r2 = 0;
    unsigned long long nb = 0;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        float v = __bfloat162float(c[i]);
        if (!isfinite(v)) { ++nb; continue; }
        double d = double(v) - double(ref[i]);
        d2 += d * d;
        r2 += double(ref[i]) * double(ref[i]);
    }
    atomicAdd(&acc[0], d2);
    atomicAdd(&acc[1], r2);
    atomicAdd(bad, nb);
}

static Err compare(const __nv_bfloat16* c, const float* ref, size_t n, double* dAcc, unsigned long long* dBad)
{
    CK(cudaMemset(dAcc, 0, 2 * sizeof(double)));
    CK(cudaMemset(dBad, 0, sizeof(unsigned long long)));
    diffKernel<<<1024, 256>>>(c, ref, n, dAcc, dBad);
    CK(cudaGetLastError());
    double h[2];
    unsigned long long b;
    CK(cudaMemcpy(h, dAcc, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&b, dBad, sizeof b, cudaMemcpyDeviceToHost));
    return {std::sqrt(h[0] / std::max(h[1], 1e-30)), size_t(b)};
}

static bool parseShape(const char* s, Shape& out)
{
    return std::sscanf(s, "%dx%dx%d", &out.m, &out.n, &out.k) == 3;
}

int main(int argc, char** argv)
{
    bool doTime = false;
    int reps = 20;
    std::vector<Shape> shapes;
    std::vector<std::string> only;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--time")) doTime = true;
        else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--rung") && i + 1 < argc) only.push_back(argv[++i]);
        else {
            Shape s;
            if (!parseShape(argv[i], s)) { std::fprintf(stderr, "bad shape %s\n", argv[i]); return 2; }
            shapes.push_back(s);
        }
    }
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    std::printf("device %s, %d SMs\n", prop.name, sms);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { std::fprintf(stderr, "cublasCreate failed\n"); return 2; }
    double* dAcc; unsigned long long* dBad;
    CK(cudaMalloc(&dAcc, 2 * sizeof(double)));
    CK(cudaMalloc(&dBad, sizeof(unsigned long long)));
    int failures = 0;
    std::printf("%-17s %-16s %-9s %-10s %-10s %-9s %-9s %-9s %-7s %-6s\n", "rung", "shape", "untr.err", "traced.err",
                "overflow", "us", "us.traced", "cublas.us", "%cublas", "ovh%");
    for (const Shape& s : shapes) {
        const int nsets = doTime ? 3 : 1;
        const size_t na = size_t(s.m) * s.k, nb = size_t(s.n) * s.k, nc = size_t(s.m) * s.n;
        std::vector<__nv_bfloat16*> A(nsets), B(nsets);
        for (int i = 0; i < nsets; ++i) {
            CK(cudaMalloc(&A[i], na * 2));
            CK(cudaMalloc(&B[i], nb * 2));
            fillNormal<<<1024, 256>>>(A[i], na, 1234567ull * (i + 1) + s.m);
            fillNormal<<<1024, 256>>>(B[i], nb, 7654321ull * (i + 1) + s.n);
        }
        __nv_bfloat16* C; float* ref; __nv_bfloat16* Cb;
        CK(cudaMalloc(&C, nc * 2));
        CK(cudaMalloc(&Cb, nc * 2));
        CK(cudaMalloc(&ref, nc * 4));
        const float one = 1.f, zero = 0.f;
        // reference: fp32 output from the same bf16 inputs (column-major view: C^T = B A^T)
        if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &one, B[0], CUDA_R_16BF, s.k, A[0], CUDA_R_16BF,
                         s.k, &zero, ref, CUDA_R_32F, s.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
            != CUBLAS_STATUS_SUCCESS) { std::fprintf(stderr, "cublas ref failed\n"); return 2; }
        CK(cudaDeviceSynchronize());
        auto cublasBf16 = [&](int set) {
            return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &one, B[set], CUDA_R_16BF, s.k, A[set],
                                CUDA_R_16BF, s.k, &zero, Cb, CUDA_R_16BF, s.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        };
        float cublasUs = 0;
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        auto timeIt = [&](auto&& fn) {
            for (int w = 0; w < 3; ++w) fn(w % nsets);
            CK(cudaDeviceSynchronize());
            std::vector<float> t;
            for (int r = 0; r < reps; ++r) {
                CK(cudaEventRecord(e0));
                fn(r % nsets);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
                t.push_back(ms * 1000.f);
            }
            std::sort(t.begin(), t.end());
            return t[t.size() / 2];
        };
        if (doTime) {
            cublasUs = timeIt([&](int set) { cublasBf16(set); });
            cublasBf16(0);
            CK(cudaDeviceSynchronize());
            Err ce = compare(Cb, ref, nc, dAcc, dBad);
            std::printf("%-17s %-16s %-9.2e %-10s %-10s %-9.1f %-9s %-9.1f (%.1f TFLOP/s)\n", "cublas",
                        (std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k)).c_str(), ce.rel,
                        "-", "-", cublasUs, "-", cublasUs, s.flops() / cublasUs / 1e6);
        }
        for (const auto& r : ws::ladder::rungs()) {
            if (!only.empty() && std::find(only.begin(), only.end(), r.name) == only.end()) continue;
            char shapeStr[64];
            std::snprintf(shapeStr, sizeof shapeStr, "%dx%dx%d", s.m, s.n, s.k);
            std::string why = ws::ladder::checkShape(r.name, s);
            if (!why.empty()) {
                std::string l = ws::ladder::launch(r.name, s, A[0], B[0], C, nullptr);
                std::printf("%-17s %-16s refused: %s | launch: %s\n", r.name.c_str(), shapeStr, why.c_str(),
                            l.empty() ? "LAUNCHED (BUG)" : "refused");
                if (l.empty()) ++failures;
                continue;
            }
            // untraced
            CK(cudaMemset(C, 0xFF, nc * 2));
            std::string l = ws::ladder::launch(r.name, s, A[0], B[0], C, nullptr, nullptr, sms);
            if (!l.empty()) { std::printf("%-17s %-16s LAUNCH ERROR %s\n", r.name.c_str(), shapeStr, l.c_str()); ++failures; continue; }
            cudaError_t ke = cudaDeviceSynchronize();
            if (ke != cudaSuccess) { std::printf("%-17s %-16s KERNEL ERROR %s\n", r.name.c_str(), shapeStr, cudaGetErrorString(ke)); return 3; }
            Err eu = compare(C, ref, nc, dAcc, dBad);
            // traced
            ws::ladder::TraceGeometry g = ws::ladder::traceGeometry(r.name, s, sms);
            void* tb = nullptr;
            CK(cudaMalloc(&tb, g.bufferBytes));
            CK(cudaMemset(tb, 0, g.bufferBytes));
            ws::trace::TraceBufferHeader hdr{};
            hdr.magic = ws::trace::kMagic; hdr.version = ws::trace::kFormatVersion; hdr.numCtas = g.numCtas;
            hdr.warpsPerCta = g.warpsPerCta; hdr.eventsPerWarp = g.eventsPerWarp; hdr.stages = g.stages;
            hdr.bytesPerKStep = g.bytesPerKStep;
            CK(cudaMemcpy(tb, &hdr, sizeof hdr, cudaMemcpyHostToDevice));
            CK(cudaMemset(C, 0xFF, nc * 2));
            l = ws::ladder::launch(r.name, s, A[0], B[0], C, nullptr, tb, sms);
            if (!l.empty()) { std::printf("%-17s %-16s TRACED LAUNCH ERROR %s\n", r.name.c_str(), shapeStr, l.c_str()); ++failures; continue; }
            ke = cudaDeviceSynchronize();
            if (ke != cudaSuccess) { std::printf("%-17s %-16s TRACED KERNEL ERROR %s\n", r.name.c_str(), shapeStr, cudaGetErrorString(ke)); return 3; }
            Err et = compare(C, ref, nc, dAcc, dBad);
            // trace sanity: counts, CTA flags
            std::vector<char> hb(g.bufferBytes);
            CK(cudaMemcpy(hb.data(), tb, g.bufferBytes, cudaMemcpyDeviceToHost));
            size_t over = 0, zeroWarps = 0, badCta = 0, badEnd = 0;
            uint32_t maxCount = 0;
            for (uint32_t c = 0; c < g.numCtas; ++c) {
                auto* cr = reinterpret_cast<ws::trace::CtaRecord*>(hb.data() + sizeof(hdr)) + c;
                if (cr->flags != 3 || cr->globaltimerEnd < cr->globaltimerStart || cr->clockEnd < cr->clockStart) ++badCta;
                for (uint32_t w = 0; w < g.warpsPerCta; ++w) {
                    auto off = ws::trace::warpRegionOffset(g.numCtas, g.warpsPerCta, g.eventsPerWarp, c, w);
                    auto* wh = reinterpret_cast<ws::trace::WarpRegionHeader*>(hb.data() + off);
                    auto* ev = reinterpret_cast<ws::trace::TraceEvent*>(wh + 1);
                    maxCount = std::max(maxCount, wh->count);
                    if (wh->count > g.eventsPerWarp) ++over;
                    if (wh->count == 0 || !(wh->flags & 1)) ++zeroWarps;
                    else if (wh->count <= g.eventsPerWarp && ev[wh->count - 1].kind != ws::trace::kEventEnd) ++badEnd;
                }
            }
            CK(cudaFree(tb));
            const bool ok = eu.rel < 1e-2 && et.rel < 1e-2 && eu.nan == 0 && et.nan == 0 && over == 0 && zeroWarps == 0
                && badCta == 0 && badEnd == 0;
            if (!ok) ++failures;
            float us = 0, ust = 0;
            if (doTime) {
                // untraced and traced launches alternate, so clock/power drift hits both alike
                void* tb2 = nullptr;
                CK(cudaMalloc(&tb2, g.bufferBytes));
                CK(cudaMemcpy(tb2, &hdr, sizeof hdr, cudaMemcpyHostToDevice));
                for (int w = 0; w < 3; ++w) {
                    ws::ladder::launch(r.name, s, A[w % nsets], B[w % nsets], C, nullptr, nullptr, sms);
                    ws::ladder::launch(r.name, s, A[w % nsets], B[w % nsets], C, nullptr, tb2, sms);
                }
                CK(cudaDeviceSynchronize());
                std::vector<float> tu, tt;
                for (int rep = 0; rep < reps; ++rep) {
                    for (int traced = 0; traced < 2; ++traced) {
                        CK(cudaEventRecord(e0));
                        ws::ladder::launch(r.name, s, A[rep % nsets], B[rep % nsets], C, nullptr,
                                           traced ? tb2 : nullptr, sms);
                        CK(cudaEventRecord(e1));
                        CK(cudaEventSynchronize(e1));
                        float ms;
                        CK(cudaEventElapsedTime(&ms, e0, e1));
                        (traced ? tt : tu).push_back(ms * 1000.f);
                    }
                }
                std::sort(tu.begin(), tu.end());
                std::sort(tt.begin(), tt.end());
                us = tu[tu.size() / 2];
                ust = tt[tt.size() / 2];
                CK(cudaFree(tb2));
            }
            std::printf("%-17s %-16s %-9.2e %-10.2e ov%zu/z%zu/c%zu/e%zu max%u/%u %-9.1f %-9.1f %-9.1f %-7.1f %-6.1f %s nan=%zu/%zu %.1fTF\n",
                        r.name.c_str(), shapeStr, eu.rel, et.rel, over, zeroWarps, badCta, badEnd, maxCount,
                        g.eventsPerWarp, us, ust, cublasUs, doTime ? 100.0 * cublasUs / us : 0.0,
                        doTime ? 100.0 * (ust - us) / us : 0.0, ok ? "OK" : "FAIL", eu.nan, et.nan,
                        doTime ? s.flops() / us / 1e6 : 0.0);
            std::fflush(stdout);
        }
        for (int i = 0; i < nsets; ++i) { cudaFree(A[i]); cudaFree(B[i]); }
        cudaFree(C); cudaFree(Cb); cudaFree(ref);
    }
    std::printf("failures: %d\n", failures);
    return failures ? 1 : 0;
}
