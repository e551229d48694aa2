// ws_rowsum: a warp-specialized kernel that is not a GEMM, instrumented with the public header
// <warpstage/trace.cuh> (issue 10), in a host program that knows nothing about Warpstage.
//
// One CTA per row of a long row-major matrix; 3 warps: warp 0 (role producer, "loader") brings the
// row into a 2-slot shared-memory ring, CHUNK floats per k-step, with cp.async.bulk (TMA 1-D) and
// mbarriers; warps 1 and 2 (role consumer, "reducer" 0/1) wait for each k-step, each sums half of it
// (user phase "reduce"), release the slot, and at the end add their partial sum into out[row] (user
// phase "combine"). The input holds small integers, so every float sum is exact and the host checks
// the result exactly.
//
//   ws_rowsum [--rows R] [--len L] [--iters N] [--time] [--staged]
//     runs the kernel N times (default 3), checks out[] after each run, prints "OK rows=R len=L" or
//     "WRONG ..." (exit 1); "control: null" when the control word is null after the runs (no recorder,
//     or a recorder that cleared it); --time: prints "TIME median_us=X min_us=Y runs=N" over N launches
//     (cudaEvent pairs around each launch); --staged: the kernel with the Staged trace engine
//     (wsRowSum<ws::trace::Staged>) instead of the default Direct one.
// Built twice by the tests: ws_rowsum (instrumented) and ws_rowsum_notrace (-DWARPSTAGE_TRACE=0).
#include <warpstage/trace.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

WARPSTAGE_PHASE_NAMES("reduce", "combine");
WARPSTAGE_ROLE_NAMES("loader", "reducer");

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__); std::exit(2); } } while (0)

namespace {

constexpr int kChunk = 2048;            // floats per k-step (8 KiB)
constexpr int kSlots = 2;
constexpr int kPhaseReduce = 0, kPhaseCombine = 1;  // WARPSTAGE_PHASE_NAMES order
constexpr int kRoleLoader = 0, kRoleReducer = 1;    // WARPSTAGE_ROLE_NAMES order

__device__ __forceinline__ std::uint32_t smemAddr(const void* p) { return std::uint32_t(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbarInit(std::uint64_t* bar, std::uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smemAddr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbarWait(std::uint64_t* bar, std::uint32_t parity)
{
    asm volatile(
        "{\n.reg .pred p;\nWAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
        "@!p bra WAIT_%=;\n}" ::"r"(smemAddr(bar)), "r"(parity) : "memory");
}
__device__ __forceinline__ void mbarArrive(std::uint64_t* bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smemAddr(bar)) : "memory");
}
__device__ __forceinline__ void mbarExpectTx(std::uint64_t* bar, std::uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smemAddr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulkLoad(void* dst, const void* src, std::uint32_t bytes, std::uint64_t* bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smemAddr(dst)), "l"(src), "r"(bytes), "r"(smemAddr(bar)) : "memory");
}

// Engine: ws::trace::Direct (default: lane 0 stores events to global memory) or ws::trace::Staged (events
// staged in kTraceSmemPerWarp bytes of shared memory per warp, copied out by TMA bulk copies).
template <class Engine>
__global__ void __launch_bounds__(96) wsRowSum(const float* __restrict__ in, float* __restrict__ out, int len)
{
    __shared__ alignas(128) float ring[kSlots][kChunk];
    __shared__ std::uint64_t full[kSlots], empty[kSlots];
    __shared__ alignas(16) unsigned char staging[std::is_same<Engine, ws::trace::Staged>::value ? 3 : 1][ws::trace::kTraceSmemPerWarp];
    namespace wt = ws::trace;
    wt::Cta cta;  // one load of warpstage_trace_control
    cta.pipeline(kSlots, kChunk * sizeof(float));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < kSlots; ++s) {
            mbarInit(&full[s], 1);
            mbarInit(&empty[s], 2);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const float* row = in + std::size_t(blockIdx.x) * len;
    const int steps = len / kChunk;
    if (warp == 0) {
        wt::Warp<Engine> w(cta, wt::role::Producer, 0, 0, kRoleLoader, staging[0]);
        for (int k = 0; k < steps; ++k) {
            const int s = k % kSlots;
            if (k >= kSlots) {
                w.phase(wt::phase::WaitSlot, k, std::uint8_t(s));
                mbarWait(&empty[s], ((k / kSlots) - 1) & 1);
            }
            w.loadIssue(k, std::uint8_t(s));
            if (lane == 0) {
                mbarExpectTx(&full[s], kChunk * sizeof(float));
                bulkLoad(ring[s], row + std::size_t(k) * kChunk, kChunk * sizeof(float), &full[s]);
            }
            __syncwarp();
        }
        w.phase(wt::phase::Other);
        w.end();
    } else {
        const int c = warp - 1;  // consumer 0 / 1
        wt::Warp<Engine> w(cta, wt::role::Consumer, 0, std::uint8_t(c), kRoleReducer,
                           staging[std::is_same<Engine, wt::Staged>::value ? warp : 0]);
        float acc = 0.f;
        for (int k = 0; k < steps; ++k) {
            const int s = k % kSlots;
            w.phase(wt::phase::WaitData, k, std::uint8_t(s));
            mbarWait(&full[s], (k / kSlots) & 1);
            w.loadReady(k, std::uint8_t(s));
            w.phase(wt::userPhase(kPhaseReduce), k, std::uint8_t(s));
            const float* chunk = ring[s] + c * (kChunk / 2);
            for (int i = lane; i < kChunk / 2; i += 32) acc += chunk[i];
            __syncwarp();
            w.phase(wt::phase::Release, k, std::uint8_t(s));
            if (lane == 0) mbarArrive(&empty[s]);
        }
        w.phase(wt::userPhase(kPhaseCombine));
        for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (lane == 0) atomicAdd(&out[blockIdx.x], acc);
        w.end();
    }
    cta.end();
}

}  // namespace

int main(int argc, char** argv)
{
    int rows = 264, len = 1 << 16, iters = 3;
    bool timing = false, staged = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--rows") && i + 1 < argc) rows = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--len") && i + 1 < argc) len = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--time")) timing = true;
        else if (!std::strcmp(argv[i], "--staged")) staged = true;
        else {
            std::fprintf(stderr, "usage: ws_rowsum [--rows R] [--len L (multiple of %d)] [--iters N] [--time] [--staged]\n", kChunk);
            return 64;
        }
    }
    if (rows < 1 || len < kChunk || len % kChunk != 0 || iters < 1) {
        std::fprintf(stderr, "ws_rowsum: --rows >= 1, --len a multiple of %d, --iters >= 1\n", kChunk);
        return 64;
    }
    std::vector<float> h(std::size_t(rows) * len);
    std::vector<double> want(rows, 0.0);
    for (int r = 0; r < rows; ++r)
        for (int i = 0; i < len; ++i) {
            const float v = float((r * 7 + i * 13) % 9) - 4.f;
            h[std::size_t(r) * len + i] = v;
            want[r] += v;
        }
    float *din = nullptr, *dout = nullptr;
    CK(cudaMalloc(&din, h.size() * sizeof(float)));
    CK(cudaMalloc(&dout, rows * sizeof(float)));
    CK(cudaMemcpy(din, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> got(rows);
    std::vector<float> times;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int it = 0; it < iters; ++it) {
        CK(cudaMemset(dout, 0, rows * sizeof(float)));
        CK(cudaEventRecord(e0));
        if (staged)
            wsRowSum<ws::trace::Staged><<<rows, 96>>>(din, dout, len);
        else
            wsRowSum<ws::trace::Direct><<<rows, 96>>>(din, dout, len);
        CK(cudaEventRecord(e1));
        CK(cudaGetLastError());
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        times.push_back(ms * 1000.f);
        CK(cudaMemcpy(got.data(), dout, rows * sizeof(float), cudaMemcpyDeviceToHost));
        for (int r = 0; r < rows; ++r)
            if (double(got[r]) != want[r]) {
                std::printf("WRONG run %d row %d: got %.1f want %.1f\n", it, r, double(got[r]), want[r]);
                return 1;
            }
    }
    std::printf("OK rows=%d len=%d iters=%d\n", rows, len, iters);
#if WARPSTAGE_TRACE
    ws::trace::Control ctl{};
    CK(cudaMemcpyFromSymbol(&ctl, warpstage_trace_control, sizeof ctl));
    std::printf("control: %s magic=0x%08x version=%u\n", ctl.buffer ? "set" : "null", ctl.magic, ctl.version);
#else
    std::printf("control: none (built with WARPSTAGE_TRACE=0)\n");
#endif
    if (timing) {
        std::sort(times.begin(), times.end());
        std::printf("TIME median_us=%.2f min_us=%.2f runs=%zu\n", double(times[times.size() / 2]), double(times.front()), times.size());
    }
    return 0;
}
