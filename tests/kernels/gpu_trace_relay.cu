// GPU test of the relay engine (<warpstage/trace_relay.cuh>, session 9): a CTA of 12 warps like the ping-pong
// body's, warp 1 the relay, every other warp a source recording a known number of events (0, 1, 31, 32, 33, 63,
// 64, 65, 200, 1000 ...: every place a half starts or ends) with a known payload (kstep = index, slot = warp,
// aux = index * 3 + warp), some with pauses between events and some in a tight loop (so a source outruns the relay
// and waits for a half to be freed). Checked on the host, per warp of every CTA: the count, every event's payload
// and order, the end mark last, the role word; the relay warp's own events. Then the same with a capacity of 50
// events (overflow): counts still exact, nothing written past the capacity (the next region's header intact), and
// a null buffer (not recording) and a header that does not match the launch (the sources cannot tell: the relay
// must still free every half, or they would wait forever) run through without writing.
// Every case twice (session 10): the sources end with end() (the relay copies their last partial half and writes their
// region header) and with endOwn() (relayRun<true>: each source copies its own last half, in parallel).
// Exit: 0 passed, 1 failed, 77 no sm_90 device (SKIP; WARPSTAGE_REQUIRE_GPU=1 makes that a failure).
#include "warpstage/trace_device.cuh"

#include "common/gpu_skip.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kWarps = 12, kRelay = 1, kCtas = 6;
__host__ __device__ constexpr int eventsOf(int warp, int cta)
{
    // per warp: 0, -, 1, 31, 32, 33, 63, 64, 65, 200, 0 (only the end mark), 1000; CTA c shifts by c
    constexpr int n[kWarps] = {0, 0, 1, 31, 32, 33, 63, 64, 65, 200, 0, 1000};
    return n[warp] + (warp == 10 ? 0 : cta);
}

template <bool SourcesEnd>
__global__ void relayKernel(void* buffer)
{
    extern __shared__ __align__(1024) std::uint8_t smem[];
    namespace wt = ws::trace;
    const int warp = threadIdx.x / 32, cta = blockIdx.x;
    auto* rs = reinterpret_cast<wt::RelayShared*>(smem + kRelay * wt::kTraceSmemPerWarp + wt::kTraceSmemPerWarp / 2);
    wt::RelayedWarp w;
    w.begin(buffer, warp, warp == 0 ? wt::role::Producer : wt::role::Consumer, std::uint8_t(warp / 4),
            std::uint8_t(warp % 4), smem + warp * wt::kTraceSmemPerWarp);
    if (warp != kRelay) w.attach(rs, warp);
    if (threadIdx.x == 0) rs->init();
    __syncthreads();
    if (warp == kRelay) {
        w.event(wt::kind::Setup, -7);
        wt::relayRun<SourcesEnd>(buffer, rs, ((1u << kWarps) - 1u) & ~(1u << kRelay), wt::RelayShared::smem(smem));
        w.endRelay(buffer);
    } else {
        const int n = eventsOf(warp, cta);
        for (int i = 0; i < n; ++i) {
            w.event(wt::kind::Compute, i, std::uint8_t(warp), std::int16_t(i * 3 + warp));
            if (warp % 3 == 0 && i % 7 == 0) __nanosleep(200 * (warp + 1));  // uneven pace; warp 11: tight loop
        }
        if constexpr (SourcesEnd) w.endOwn(buffer);
        else w.end();
    }
    __syncthreads();
}

int g_fail = 0;
void check(bool ok, const std::string& what)
{
    if (!ok) {
        ++g_fail;
        if (g_fail <= 20) std::printf("FAIL %s\n", what.c_str());
    }
}

// One launch with capacity `cap`; checks every region (mismatch: the header names one CTA too many, so nothing may
// be written). Returns false on a CUDA error.
bool runCase(std::uint32_t cap, bool mismatch = false, bool sourcesEnd = false)
{
    const char* mode = sourcesEnd ? "relay (sources end)" : "relay";
    namespace wt = ws::trace;
    const std::uint64_t bytes = wt::bufferBytes(kCtas, kWarps, cap);
    void* d = nullptr;
    if (cudaMalloc(&d, bytes) != cudaSuccess) return false;
    cudaMemset(d, 0, bytes);
    wt::TraceBufferHeader h{};
    h.magic = wt::kMagic;
    h.version = wt::kFormatVersion;
    h.numCtas = kCtas + (mismatch ? 1 : 0);
    h.warpsPerCta = kWarps;
    h.eventsPerWarp = cap;
    cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
    const int smemBytes = kWarps * int(wt::kTraceSmemPerWarp);
    if (sourcesEnd) relayKernel<true><<<kCtas, kWarps * 32, smemBytes>>>(d);
    else relayKernel<false><<<kCtas, kWarps * 32, smemBytes>>>(d);
    cudaError_t e = cudaDeviceSynchronize();
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
    if (mismatch) {
        bool clean = true;
        for (std::size_t i = sizeof h; i < buf.size(); ++i) clean = clean && buf[i] == 0;
        check(clean, "header mismatch: something was written after the header");
        std::printf("%s %s, header not matching the launch: kernel finished, nothing written\n",
                    g_fail == before ? "PASS" : "FAIL", mode);
        return true;
    }
    for (int c = 0; c < kCtas; ++c) {
        for (int w = 0; w < kWarps; ++w) {
            const std::string at = std::string(mode) + " cap " + std::to_string(cap) + " cta " + std::to_string(c) + " warp " + std::to_string(w);
            const auto off = wt::warpRegionOffset(kCtas, kWarps, cap, std::uint32_t(c), std::uint32_t(w));
            wt::WarpRegionHeader rh;
            std::memcpy(&rh, buf.data() + off, sizeof rh);
            const auto* ev = reinterpret_cast<const wt::TraceEvent*>(buf.data() + off + sizeof rh);
            check(rh.flags == 1 && rh.warpgroup == w / 4 && rh.roleIndex == w % 4, at + ": role word");
            const std::uint32_t n = w == kRelay ? 1u : std::uint32_t(eventsOf(w, c));  // relay: its Setup
            check(rh.count == n + 1, at + ": count " + std::to_string(rh.count) + ", expected " + std::to_string(n + 1));
            for (std::uint32_t i = 0; i < n + 1 && i < cap; ++i) {
                const auto& x = ev[i];
                if (i == n) {
                    check(x.kind == wt::kEventEnd, at + ": last event is not the end mark");
                } else if (w == kRelay) {
                    check(x.kind == wt::kind::Setup && x.kstep == -7, at + ": relay's own event");
                } else {
                    const bool ok = x.kind == wt::kind::Compute && x.kstep == std::int32_t(i) && x.slot == w
                        && x.aux == std::int16_t(i * 3 + w);
                    check(ok, at + ": event " + std::to_string(i) + " payload (kind " + std::to_string(x.kind)
                                  + ", kstep " + std::to_string(x.kstep) + ")");
                }
                if (i > 0) check(x.clock >= ev[i - 1].clock && x.clock != 0, at + ": clock order at " + std::to_string(i));
            }
            for (std::uint32_t i = n + 1; i < cap; ++i) {  // nothing past the last event (the buffer was zeroed)
                if (ev[i].clock != 0 || ev[i].kind != 0) {
                    check(false, at + ": event written past the count at " + std::to_string(i));
                    break;
                }
            }
        }
    }
    std::printf("%s %s, capacity %u: %d CTAs x %d warps, counts, payloads, order, end marks\n",
                g_fail == before ? "PASS" : "FAIL", mode, cap, kCtas, kWarps);
    return true;
}

}  // namespace

int main()
{
    const std::string why = ws::testing::gpuProblem(9);
    if (!why.empty()) return ws::testing::gpuUnavailableExit("gpu_trace_relay", why);
    for (const bool own : {false, true}) {
        runCase(4096, false, own);  // everything fits
        runCase(50, false, own);    // overflow: counts exact, nothing past the capacity
        runCase(32, false, own);    // the capacity at a half boundary
        runCase(4096, true, own);
        // not recording: a null buffer; the kernel must finish and write nothing
        if (own) relayKernel<true><<<kCtas, kWarps * 32, kWarps * int(ws::trace::kTraceSmemPerWarp)>>>(nullptr);
        else relayKernel<false><<<kCtas, kWarps * 32, kWarps * int(ws::trace::kTraceSmemPerWarp)>>>(nullptr);
        const cudaError_t e = cudaDeviceSynchronize();
        check(e == cudaSuccess, std::string("null buffer: ") + cudaGetErrorString(e));
        std::printf("%s %s, null buffer: kernel finished (%s)\n", e == cudaSuccess ? "PASS" : "FAIL",
                    own ? "relay (sources end)" : "relay", cudaGetErrorString(e));
    }
    std::printf("%s gpu_trace_relay (%d failure(s))\n", g_fail == 0 ? "PASS" : "FAIL", g_fail);
    return g_fail == 0 ? 0 : 1;
}
