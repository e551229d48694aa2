// GPU test of the batched event form (<warpstage/trace.cuh>: Warp::eventsAt, session 11), which the ping-pong body's
// k-steps use: N events stamped earlier, staged by one call, must give exactly the trace of N eventAt() calls. A CTA
// of 8 warps, each recording a known number of events (CTA c, warp w: 40 + 37 w + c: regions ending anywhere in a
// half) as a mix of single eventAt() calls and batches of 2, 3 and 4 whose sizes cycle with a per-warp offset, so
// that over the run a batch starts at every position of a 32-event half: inside it (the one-test fast path), filling
// it exactly and crossing into the next half (the event-by-event path, which flushes where the half fills). Every
// event carries its own payload (clock = a synthetic value from warp and index, kstep = index, slot = warp,
// aux = index * 3 + CTA) and is checked on the host, all 16 bytes, in order, with the count, the role word and the
// end mark; then with a capacity of 50 and of 32 events (overflow: the count still exact, nothing past the
// capacity), and with a null buffer (not recording). Both engines: Warp<Staged> (the fast path) and Warp<Direct>
// (eventsAt = N eventAt calls).
// Exit: 0 passed, 1 failed, 77 no sm_90 device (SKIP; WARPSTAGE_REQUIRE_GPU=1 makes that a failure).
#include "warpstage/trace.cuh"

#include "common/gpu_skip.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kWarps = 8, kCtas = 4;
__host__ __device__ constexpr int eventsOf(int warp, int cta) { return 40 + 37 * warp + cta; }
__host__ __device__ constexpr std::uint64_t clockOf(int warp, int i)
{
    return (std::uint64_t(warp + 1) << 40) + 0x100000000ull + std::uint64_t(i) * 7u;
}
// batch sizes, cycled from a per-warp offset (1: a single eventAt)
__device__ constexpr int kSizes[8] = {4, 1, 2, 4, 3, 4, 4, 1};

__device__ __forceinline__ ws::trace::StampedEvent eventOf(int warp, int cta, int i)
{
    return {clockOf(warp, i), i, ws::trace::kind::Compute, std::uint8_t(warp), std::int16_t(i * 3 + cta)};
}

template <class Engine>
__global__ void batchKernel(void* buffer)
{
    extern __shared__ __align__(1024) std::uint8_t smem[];
    namespace wt = ws::trace;
    const int warp = threadIdx.x / 32, cta = blockIdx.x;
    wt::Warp<Engine> w;
    w.begin(buffer, warp, wt::role::Worker, std::uint8_t(warp / 4), std::uint8_t(warp % 4),
            smem + warp * wt::kTraceSmemPerWarp);
    const int n = eventsOf(warp, cta);
    int i = 0, g = warp + cta;
    while (i < n) {
        int size = kSizes[g++ % 8];
        if (size > n - i) size = 1;
        if (size == 1) {
            const wt::StampedEvent e = eventOf(warp, cta, i);
            w.eventAt(e.clock, e.kind, e.kstep, e.slot, e.aux);
        } else if (size == 2) {
            const wt::StampedEvent e[2] = {eventOf(warp, cta, i), eventOf(warp, cta, i + 1)};
            w.eventsAt(e);
        } else if (size == 3) {
            const wt::StampedEvent e[3] = {eventOf(warp, cta, i), eventOf(warp, cta, i + 1), eventOf(warp, cta, i + 2)};
            w.eventsAt(e);
        } else {
            const wt::StampedEvent e[4] = {eventOf(warp, cta, i), eventOf(warp, cta, i + 1), eventOf(warp, cta, i + 2),
                                           eventOf(warp, cta, i + 3)};
            w.eventsAt(e);
        }
        i += size;
    }
    w.end();
}

int g_fail = 0;
void check(bool ok, const std::string& what)
{
    if (!ok) {
        ++g_fail;
        if (g_fail <= 20) std::printf("FAIL %s\n", what.c_str());
    }
}

template <class Engine>
void launch(void* d)
{
    batchKernel<Engine><<<kCtas, kWarps * 32, kWarps * int(ws::trace::kTraceSmemPerWarp)>>>(d);
}

// One launch with capacity `cap`; checks every region. False on a CUDA error.
template <class Engine>
bool runCase(const char* mode, std::uint32_t cap)
{
    namespace wt = ws::trace;
    const std::uint64_t bytes = wt::bufferBytes(kCtas, kWarps, cap);
    void* d = nullptr;
    if (cudaMalloc(&d, bytes) != cudaSuccess) return false;
    cudaMemset(d, 0, bytes);
    wt::TraceBufferHeader h{};
    h.magic = wt::kMagic;
    h.version = wt::kFormatVersion;
    h.numCtas = kCtas;
    h.warpsPerCta = kWarps;
    h.eventsPerWarp = cap;
    cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
    launch<Engine>(d);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        std::printf("FAIL %s cap %u: %s\n", mode, cap, cudaGetErrorString(e));
        ++g_fail;
        cudaFree(d);
        return false;
    }
    std::vector<std::uint8_t> buf(bytes);
    cudaMemcpy(buf.data(), d, bytes, cudaMemcpyDeviceToHost);
    cudaFree(d);
    const int before = g_fail;
    for (int c = 0; c < kCtas; ++c)
        for (int w = 0; w < kWarps; ++w) {
            const std::string at = std::string(mode) + " cap " + std::to_string(cap) + " cta " + std::to_string(c)
                + " warp " + std::to_string(w);
            const auto off = wt::warpRegionOffset(kCtas, kWarps, cap, std::uint32_t(c), std::uint32_t(w));
            wt::WarpRegionHeader rh;
            std::memcpy(&rh, buf.data() + off, sizeof rh);
            const auto* ev = reinterpret_cast<const wt::TraceEvent*>(buf.data() + off + sizeof rh);
            check(rh.role == wt::role::Worker && rh.warpgroup == w / 4 && rh.roleIndex == w % 4, at + ": role word");
            const std::uint32_t n = std::uint32_t(eventsOf(w, c));
            check(rh.count == n + 1, at + ": count " + std::to_string(rh.count) + ", expected " + std::to_string(n + 1));
            for (std::uint32_t i = 0; i < n + 1 && i < cap; ++i) {
                const auto& x = ev[i];
                if (i == n) {
                    check(x.kind == wt::kEventEnd, at + ": last event is not the end mark");
                    continue;
                }
                const bool ok = x.clock == clockOf(w, int(i)) && x.kind == wt::kind::Compute
                    && x.kstep == std::int32_t(i) && x.slot == w && x.aux == std::int16_t(i * 3 + c);
                check(ok, at + ": event " + std::to_string(i) + " (kind " + std::to_string(x.kind) + ", kstep "
                              + std::to_string(x.kstep) + ", clock " + std::to_string(x.clock) + ")");
            }
            for (std::uint32_t i = n + 1; i < cap; ++i)  // nothing past the last event (the buffer was zeroed)
                if (ev[i].clock != 0 || ev[i].kind != 0) {
                    check(false, at + ": event written past the count at " + std::to_string(i));
                    break;
                }
            if (cap < n + 1) {  // overflow: the next region's header is intact (this warp wrote nothing past its own)
                const auto next = off + sizeof rh + std::uint64_t(cap) * sizeof(wt::TraceEvent);
                if (next + sizeof rh <= buf.size()) {
                    wt::WarpRegionHeader nh;
                    std::memcpy(&nh, buf.data() + next, sizeof nh);
                    check(nh.flags != 0, at + ": the next region's header was overwritten");
                }
            }
        }
    std::printf("%s %s, capacity %u: %d CTAs x %d warps, single and batched events, counts, payloads, order\n",
                g_fail == before ? "PASS" : "FAIL", mode, cap, kCtas, kWarps);
    return true;
}

template <class Engine>
void runAll(const char* mode)
{
    runCase<Engine>(mode, 4096);  // everything fits
    runCase<Engine>(mode, 50);    // overflow: counts exact, nothing past the capacity
    runCase<Engine>(mode, 32);    // the capacity at a half boundary
    launch<Engine>(nullptr);      // not recording: the kernel finishes and writes nothing
    const cudaError_t e = cudaDeviceSynchronize();
    check(e == cudaSuccess, std::string(mode) + " null buffer: " + cudaGetErrorString(e));
    std::printf("%s %s, null buffer: kernel finished (%s)\n", e == cudaSuccess ? "PASS" : "FAIL", mode,
                cudaGetErrorString(e));
}

}  // namespace

int main()
{
    const std::string why = ws::testing::gpuProblem(9);
    if (!why.empty()) return ws::testing::gpuUnavailableExit("gpu_trace_batch", why);
    runAll<ws::trace::Staged>("staged");
    runAll<ws::trace::Direct>("direct");
    std::printf("%s gpu_trace_batch (%d failure(s))\n", g_fail == 0 ? "PASS" : "FAIL", g_fail);
    return g_fail == 0 ? 0 : 1;
}
