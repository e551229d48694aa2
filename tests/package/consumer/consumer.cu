// A producer/consumer kernel instrumented through the installed headers only (compile check).
#include <warpstage/trace_device.cuh>
#if __has_include(<warpstage/trace.cuh>)
#include <warpstage/trace.cuh>  // the user-facing header, when the installed tree has it
#endif

#include <cstdio>

template <bool Traced>
__global__ void scale(const float* in, float* out, int n, void* traceBuffer)
{
    __shared__ alignas(16) unsigned char staging[2][ws::trace::kTraceSmemPerWarp];
    ws::trace::CtaTrace<Traced> cta;
    ws::trace::WarpTrace<Traced> warp;
    const unsigned w = threadIdx.x / 32;
    cta.begin(traceBuffer);
    warp.begin(traceBuffer, w, w == 0 ? ws::trace::role::Producer : ws::trace::role::Consumer, 0, 0, staging[w]);
    warp.event(ws::trace::kind::Compute, 0);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
    warp.event(ws::trace::kind::Epilogue, 0);
    warp.end();
    cta.end(traceBuffer);
}

int main()
{
    // Compile only: instantiate both builds; running needs an sm_90 GPU.
    auto traced = &scale<true>;
    auto untraced = &scale<false>;
    std::printf("%p %p\n", reinterpret_cast<void*>(traced), reinterpret_cast<void*>(untraced));
    return 0;
}
