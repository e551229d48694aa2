// softmax_ws: a warp-specialized softmax over long rows, instrumented with <warpstage/trace.cuh>.
//
// y[r, :] = exp(x[r, :] - max_r) / sum(exp(x[r, :] - max_r)) for rows too long to keep in shared memory.
// One CTA per row, five warps:
//   * warp 0, role Producer ("streamer"): streams the row through a 4-slot shared-memory ring with
//     cp.async.bulk (1-D TMA), TWICE: k-steps 0..steps-1 are pass 1, steps..2*steps-1 pass 2. A slot is
//     refilled as soon as the four consumers released it (mbarrier "empty"), so up to four chunks are in flight;
//   * warps 1-4, role Consumer ("softmax" 0-3): each takes a quarter of every chunk.
//     pass 1  wait for data, then an online max and sum (the sum rescaled whenever the max grows), release;
//     "combine" (a phase of our own): the four warps' (max, sum) pairs reduced through shared memory;
//     pass 2  wait for data, exp(x - max) / sum into registers, release the slot at once, then "write" (our
//             second phase): the results stored to y while the producer refills the slot.
// The math is marked phase::Compute (so that Warpstage's overlap metrics count it as compute); "combine" and
// "write" are user phases: they show under their names and count as neither compute nor waiting.
//
//   softmax_ws [--rows R] [--len L] [--iters N] [--seed S]
//     R rows (default 264) of L floats (default 65536, a multiple of 2048), N timed launches (default 5).
//     Prints the median launch time and bandwidth, checks the last launch against a CPU reference and prints
//     "PASS max_rel_err=..." (exit 0) or "FAIL ..." (exit 1). Exit 2: bad arguments; 3: no usable GPU or a CUDA error.
//
// Built with -DWARPSTAGE_TRACE=0 every trace call is compiled out; run without warpstage-record the trace calls
// cost one load of the control word per thread and a predicated branch each.
#include <warpstage/trace.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

WARPSTAGE_PHASE_NAMES("combine", "write");   // ws::trace::userPhase(0), userPhase(1)
WARPSTAGE_ROLE_NAMES("streamer", "softmax");  // display names of the producer and the consumers

namespace {

constexpr int kChunk = 2048;        // floats per k-step (8 KiB, one cp.async.bulk)
constexpr int kSlots = 4;           // ring slots
constexpr int kConsumers = 4;       // consumer warps
constexpr int kThreads = 32 * (1 + kConsumers);
constexpr int kPart = kChunk / kConsumers;  // floats of a chunk per consumer warp (512: 4 float4 per lane)
constexpr int kPhaseCombine = 0, kPhaseWrite = 1;  // WARPSTAGE_PHASE_NAMES order
constexpr int kRoleStreamer = 0, kRoleSoftmax = 1;  // WARPSTAGE_ROLE_NAMES order
constexpr int kConsumerBar = 1;     // named barrier of the 4 consumer warps (barrier 0 is __syncthreads)

// ---------------------------------------------------------------- minimal PTX wrappers (sm_90)
__device__ __forceinline__ std::uint32_t smemAddr(const void* p) { return std::uint32_t(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbarInit(std::uint64_t* bar, std::uint32_t arrivals)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smemAddr(bar)), "r"(arrivals) : "memory");
}
// Spins until the barrier's phase with parity `parity` has completed.
__device__ __forceinline__ void mbarWait(std::uint64_t* bar, std::uint32_t parity)
{
    asm volatile(
        "{\n.reg .pred done;\nSPIN_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra SPIN_%=;\n}" ::"r"(smemAddr(bar)), "r"(parity)
        : "memory");
}
__device__ __forceinline__ void mbarArrive(std::uint64_t* bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smemAddr(bar)) : "memory");
}
// Arrives and announces `bytes` that a bulk copy will deliver to this barrier.
__device__ __forceinline__ void mbarArriveExpectTx(std::uint64_t* bar, std::uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smemAddr(bar)), "r"(bytes) : "memory");
}
// 1-D TMA: `bytes` from global `src` to shared `dst`, completing on `bar`.
__device__ __forceinline__ void bulkCopyG2S(void* dst, const void* src, std::uint32_t bytes, std::uint64_t* bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smemAddr(dst)),
                 "l"(src), "r"(bytes), "r"(smemAddr(bar))
                 : "memory");
}
__device__ __forceinline__ void namedBarSync(std::uint32_t id, std::uint32_t threads)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// (max, sum of exp(x - max)) pairs: merge b into a.
__device__ __forceinline__ void mergeMaxSum(float& m, float& s, float m2, float s2)
{
    const float mm = fmaxf(m, m2);
    s = s * expf(m - mm) + s2 * expf(m2 - mm);
    m = mm;
}

__global__ void __launch_bounds__(kThreads) softmaxWs(const float* __restrict__ x, float* __restrict__ y, int len)
{
    __shared__ alignas(128) float ring[kSlots][kChunk];
    __shared__ std::uint64_t full[kSlots], empty[kSlots];
    __shared__ float partMax[kConsumers], partSum[kConsumers];
    namespace wt = ws::trace;
    wt::Cta cta;                                      // reads the control word: recording or not
    cta.pipeline(kSlots, kChunk * sizeof(float));     // ring slots, bytes per load (for the load metrics)

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < kSlots; ++s) {
            mbarInit(&full[s], 1);              // the producer's arrive (+ the copy's bytes)
            mbarInit(&empty[s], kConsumers);    // one arrive per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const std::size_t row = std::size_t(blockIdx.x) * std::size_t(len);
    const int steps = len / kChunk;  // chunks per pass
    const int total = 2 * steps;     // k-steps of both passes: the CTA-wide load counter

    if (warp == 0) {
        // ------------------------------------------------------------ producer: both passes, one ring
        wt::Warp<> w(cta, wt::role::Producer, 0, 0, kRoleStreamer);
        for (int k = 0; k < total; ++k) {
            const int s = k % kSlots;
            if (k >= kSlots) {
                w.phase(wt::phase::WaitSlot, k, std::uint8_t(s));    // wait until the consumers freed slot s
                mbarWait(&empty[s], ((k / kSlots) - 1) & 1);
            }
            w.loadIssue(k, std::uint8_t(s));                          // the load of k-step k into slot s
            if (lane == 0) {
                mbarArriveExpectTx(&full[s], kChunk * sizeof(float));
                bulkCopyG2S(ring[s], x + row + std::size_t(k % steps) * kChunk, kChunk * sizeof(float), &full[s]);
            }
            __syncwarp();
        }
        w.phase(wt::phase::Other);  // nothing left to load
        w.end();
    } else {
        // ------------------------------------------------------------ consumers
        const int c = warp - 1;
        wt::Warp<> w(cta, wt::role::Consumer, 0, std::uint8_t(c), kRoleSoftmax);
        float m = -INFINITY, sum = 0.f;
        for (int k = 0; k < steps; ++k) {  // pass 1: online max and sum
            const int s = k % kSlots;
            w.phase(wt::phase::WaitData, k, std::uint8_t(s));
            mbarWait(&full[s], (k / kSlots) & 1);
            w.loadReady(k, std::uint8_t(s));
            w.phase(wt::phase::Compute, k, std::uint8_t(s));
            const float4* part = reinterpret_cast<const float4*>(ring[s] + c * kPart);
#pragma unroll
            for (int j = 0; j < kPart / 128; ++j) {
                const float4 v = part[lane + 32 * j];
                const float mx = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
                if (mx > m) {
                    sum *= expf(m - mx);  // exp(-inf) = 0 on the first chunk
                    m = mx;
                }
                sum += expf(v.x - m) + expf(v.y - m) + expf(v.z - m) + expf(v.w - m);
            }
            __syncwarp();  // every lane has read the slot
            w.phase(wt::phase::Release, k, std::uint8_t(s));
            if (lane == 0) mbarArrive(&empty[s]);
        }

        w.phase(wt::userPhase(kPhaseCombine));  // the row's max and sum from 4 warps x 32 lanes
        for (int o = 16; o > 0; o /= 2) {
            const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
            const float s2 = __shfl_xor_sync(0xffffffffu, sum, o);
            mergeMaxSum(m, sum, m2, s2);
        }
        if (lane == 0) {
            partMax[c] = m;
            partSum[c] = sum;
        }
        namedBarSync(kConsumerBar, 32 * kConsumers);
        m = partMax[0];
        sum = partSum[0];
        for (int i = 1; i < kConsumers; ++i) mergeMaxSum(m, sum, partMax[i], partSum[i]);
        const float inv = 1.f / sum;

        for (int k = steps; k < total; ++k) {  // pass 2: normalize
            const int s = k % kSlots;
            w.phase(wt::phase::WaitData, k, std::uint8_t(s));
            mbarWait(&full[s], (k / kSlots) & 1);
            w.loadReady(k, std::uint8_t(s));
            w.phase(wt::phase::Compute, k, std::uint8_t(s));
            const float4* part = reinterpret_cast<const float4*>(ring[s] + c * kPart);
            float4 r[kPart / 128];
#pragma unroll
            for (int j = 0; j < kPart / 128; ++j) {
                const float4 v = part[lane + 32 * j];
                r[j] = make_float4(expf(v.x - m) * inv, expf(v.y - m) * inv, expf(v.z - m) * inv, expf(v.w - m) * inv);
            }
            __syncwarp();
            w.phase(wt::phase::Release, k, std::uint8_t(s));  // the slot is free before the results are written
            if (lane == 0) mbarArrive(&empty[s]);
            w.phase(wt::userPhase(kPhaseWrite), k, std::uint8_t(s));
            float4* out = reinterpret_cast<float4*>(y + row + std::size_t(k - steps) * kChunk + c * kPart);
#pragma unroll
            for (int j = 0; j < kPart / 128; ++j) out[lane + 32 * j] = r[j];
        }
        w.end();
    }
    cta.end();  // every thread: the CTA's end record (a barrier while recording)
}

#define CK(call)                                                                                          \
    do {                                                                                                  \
        const cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                          \
            std::fprintf(stderr, "softmax_ws: CUDA error '%s' in %s (line %d)\n", cudaGetErrorString(e_), #call, \
                         __LINE__);                                                                       \
            std::exit(3);                                                                                 \
        }                                                                                                 \
    } while (0)

int usage(const char* why)
{
    std::fprintf(stderr,
                 "softmax_ws: %s\nusage: softmax_ws [--rows R (>= 1)] [--len L (a multiple of %d)] [--iters N (>= 1)] "
                 "[--seed S]\n",
                 why, kChunk);
    return 2;
}

bool intArg(const char* s, long lo, long hi, int& out)
{
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) return false;
    out = int(v);
    return true;
}

}  // namespace

int main(int argc, char** argv)
{
    int rows = 264, len = 1 << 16, iters = 5, seed = 1;
    for (int i = 1; i < argc; ++i) {
        const bool hasValue = i + 1 < argc;
        if (!std::strcmp(argv[i], "--rows") && hasValue) {
            if (!intArg(argv[++i], 1, 1 << 20, rows)) return usage("--rows takes a number of rows from 1 to 1048576");
        } else if (!std::strcmp(argv[i], "--len") && hasValue) {
            if (!intArg(argv[++i], kChunk, 1 << 26, len) || len % kChunk != 0)
                return usage("--len takes a row length that is a multiple of 2048 floats (one TMA chunk)");
        } else if (!std::strcmp(argv[i], "--iters") && hasValue) {
            if (!intArg(argv[++i], 1, 100000, iters)) return usage("--iters takes a number of launches from 1 to 100000");
        } else if (!std::strcmp(argv[i], "--seed") && hasValue) {
            if (!intArg(argv[++i], 0, 1L << 30, seed)) return usage("--seed takes a non-negative number");
        } else {
            return usage(("unknown or incomplete argument '" + std::string(argv[i]) + "'").c_str());
        }
    }
    int dev = 0, n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        std::fprintf(stderr, "softmax_ws: no CUDA device\n");
        return 3;
    }
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, dev));
    if (prop.major < 9) {
        std::fprintf(stderr, "softmax_ws: needs an sm_90 GPU (TMA bulk copies); %s is sm_%d%d\n", prop.name, prop.major,
                     prop.minor);
        return 3;
    }

    const std::size_t count = std::size_t(rows) * std::size_t(len);
    std::vector<float> hx(count);
    std::mt19937 rng{std::uint32_t(seed)};
    std::uniform_real_distribution<float> dist(-8.f, 8.f);
    for (auto& v : hx) v = dist(rng);

    float *dx = nullptr, *dy = nullptr;
    CK(cudaMalloc(&dx, count * sizeof(float)));
    CK(cudaMalloc(&dy, count * sizeof(float)));
    CK(cudaMemcpy(dx, hx.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> us;
    for (int it = 0; it < iters; ++it) {
        CK(cudaMemset(dy, 0, count * sizeof(float)));
        CK(cudaEventRecord(e0));
        softmaxWs<<<rows, kThreads>>>(dx, dy, len);
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0.f;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        us.push_back(ms * 1000.f);
    }
    std::vector<float> hy(count);
    CK(cudaMemcpy(hy.data(), dy, count * sizeof(float), cudaMemcpyDeviceToHost));

    // CPU reference (double), relative error per element and each row's sum.
    double maxRel = 0.0, maxSumErr = 0.0;
    for (int r = 0; r < rows; ++r) {
        const float* xr = hx.data() + std::size_t(r) * len;
        const float* yr = hy.data() + std::size_t(r) * len;
        double mx = -INFINITY, s = 0.0, got = 0.0;
        for (int i = 0; i < len; ++i) mx = std::max(mx, double(xr[i]));
        for (int i = 0; i < len; ++i) s += std::exp(double(xr[i]) - mx);
        for (int i = 0; i < len; ++i) {
            const double want = std::exp(double(xr[i]) - mx) / s;
            const double rel = std::fabs(double(yr[i]) - want) / want;
            if (!(rel <= maxRel)) maxRel = rel;  // NaN sticks
            got += yr[i];
        }
        maxSumErr = std::max(maxSumErr, std::fabs(got - 1.0));
    }
    std::sort(us.begin(), us.end());
    const double med = us[us.size() / 2];
    const double gbs = 3.0 * double(count) * sizeof(float) / (med * 1e-6) / 1e9;  // read twice, written once
    std::printf("softmax_ws: %d rows x %d floats on %s, %d launches: median %.1f us (min %.1f), %.0f GB/s moved\n", rows,
                len, prop.name, iters, med, double(us.front()), gbs);
    const bool ok = maxRel <= 1e-4 && maxSumErr <= 1e-3;
    std::printf("%s max_rel_err=%.3g max_row_sum_err=%.3g (tolerance 1e-4, 1e-3)\n", ok ? "PASS" : "FAIL", maxRel,
                maxSumErr);
    CK(cudaFree(dx));
    CK(cudaFree(dy));
    return ok ? 0 : 1;
}
