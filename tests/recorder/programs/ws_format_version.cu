// ws_format_version: a kernel that speaks trace-buffer format version WS_FORMAT_VERSION by hand, without
// <warpstage/trace.cuh> -- what a kernel built against another release's header looks like to the recorder: the
// documented ABI of trace_format.h (its control symbol `warpstage_trace_control`, 16 bytes: buffer, magic, version;
// the CTA records; one region per warp of plain events, no packed records) and nothing else.
//
// Built twice by the tests (gpu_record_format_versions): as version 1 (the oldest readable: it must be traced and
// decoded), and as kFormatVersion + 1 (newer than the recorder: it must run untraced and fail the run with a
// sentence). Each CTA: warp 0 (role worker) writes Setup, Compute (a ~20 us clock spin, long enough for the
// decoder's own clock calibration), Store, End; warp 1 declares role idle and ends. The kernel writes only when
// the host-filled header matches its version and the launch, as trace.cuh's engine does.
//
//   ws_format_version [--iters N]   prints "OK ctas=C iters=N" when out[] is right after each launch (exit 1 if not)
//                                    and "control: version=V"
#include <warpstage/trace_format.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef WS_FORMAT_VERSION
#define WS_FORMAT_VERSION 1
#endif

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__); std::exit(2); } } while (0)

namespace wt = ws::trace;

struct Control {  // trace.cuh's ws::trace::Control, by its documented layout
    void* buffer;
    std::uint32_t magic;
    std::uint32_t version;
};
static_assert(sizeof(Control) == 16);

extern "C" {
__device__ Control warpstage_trace_control = {nullptr, wt::kMagic, WS_FORMAT_VERSION};
}

namespace {

constexpr int kCtas = 4, kWarps = 2;
constexpr std::uint8_t kSetup = 1, kStore = 9, kCompute = 12;  // ws::IntervalKind
constexpr std::uint8_t kWorker = 4, kIdle = 5;                  // ws::WarpRole

__device__ std::uint64_t globaltimer()
{
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ void put(wt::TraceEvent* ev, std::uint32_t& n, std::uint8_t kind)
{
    wt::TraceEvent e{};
    e.clock = clock64();
    e.kstep = -1;
    e.slot = 0xFF;
    e.kind = kind;
    ev[n++] = e;
}

__global__ void wsFormatProbe(float* out)
{
    auto* h = static_cast<wt::TraceBufferHeader*>(*static_cast<void* volatile*>(&warpstage_trace_control.buffer));
    const bool on = h && h->magic == wt::kMagic && h->version == WS_FORMAT_VERSION && h->numCtas == gridDim.x
        && h->warpsPerCta == blockDim.x / 32 && h->eventsPerWarp >= 4;
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    auto* ctas = reinterpret_cast<wt::CtaRecord*>(reinterpret_cast<unsigned char*>(h) + sizeof(wt::TraceBufferHeader));
    if (on && threadIdx.x == 0) {
        ctas[blockIdx.x].globaltimerStart = globaltimer();
        ctas[blockIdx.x].clockStart = clock64();
        std::uint32_t sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        ctas[blockIdx.x].smId = sm;
        ctas[blockIdx.x].flags = 1;
    }
    __syncthreads();
    wt::WarpRegionHeader* rh = nullptr;
    wt::TraceEvent* ev = nullptr;
    std::uint32_t n = 0;
    if (on && lane == 0) {
        rh = reinterpret_cast<wt::WarpRegionHeader*>(reinterpret_cast<unsigned char*>(h)
                                                    + wt::warpRegionOffset(h->numCtas, h->warpsPerCta, h->eventsPerWarp, blockIdx.x, warp));
        ev = reinterpret_cast<wt::TraceEvent*>(rh + 1);
        rh->role = warp == 0 ? kWorker : kIdle;
        rh->warpgroup = 0;
        rh->roleIndex = 0;
        rh->flags = 1;
        put(ev, n, kSetup);
    }
    float v = float(threadIdx.x);
    if (warp == 0) {
        if (rh) put(ev, n, kCompute);
        const long long t0 = clock64();
        while (clock64() - t0 < 40000) v = v * 1.0f + 0.0f;  // ~20 us at ~2 GHz
        if (rh) put(ev, n, kStore);
        out[blockIdx.x * blockDim.x + threadIdx.x] = v * 2.0f;
    } else {
        out[blockIdx.x * blockDim.x + threadIdx.x] = v * 2.0f;
    }
    if (rh) {
        put(ev, n, wt::kEventEnd);
        rh->count = n;
    }
    __syncthreads();
    if (on && threadIdx.x == 0) {
        ctas[blockIdx.x].globaltimerEnd = globaltimer();
        ctas[blockIdx.x].clockEnd = clock64();
        __threadfence();
        ctas[blockIdx.x].flags = 3;
    }
}

}  // namespace

int main(int argc, char** argv)
{
    int iters = 2;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: ws_format_version [--iters N]\n");
            return 64;
        }
    }
    float* d = nullptr;
    const int n = kCtas * kWarps * 32;
    CK(cudaMalloc(&d, n * sizeof(float)));
    std::vector<float> got(n);
    for (int it = 0; it < iters; ++it) {
        CK(cudaMemset(d, 0, n * sizeof(float)));
        wsFormatProbe<<<kCtas, kWarps * 32>>>(d);
        CK(cudaGetLastError());
        CK(cudaMemcpy(got.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; ++i)
            if (got[i] != float(i % (kWarps * 32)) * 2.0f) {
                std::printf("WRONG launch %d element %d: %g\n", it, i, double(got[i]));
                return 1;
            }
    }
    Control c{};
    CK(cudaMemcpyFromSymbol(&c, warpstage_trace_control, sizeof c));
    std::printf("OK ctas=%d iters=%d\ncontrol: version=%u\n", kCtas, iters, c.version);
    return 0;
}
