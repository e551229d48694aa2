// nvtx_app: an "unmodified" CUDA program for the injection probe. It knows nothing about Warpstage or CUPTI;
// it only uses the CUDA runtime and header-only NVTX v3.
//   nvtx_app basic [early]      NVTX push/pop, start/end, mark, a named domain, two threads; early: one NVTX mark
//                               before the first CUDA call (NVTX initialises before the CUDA injection loads)
//   nvtx_app graph              capture 3 kernels into a CUDA graph, instantiate, launch twice
//   nvtx_app loop SECS END      launch kernels for SECS seconds, then END = return | exit | abort
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__); std::exit(2); } } while (0)

__global__ void work(float* p, int n, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = p[i];
    for (int k = 0; k < iters; ++k) v = v * 1.0001f + 0.5f;
    p[i] = v;
}
__global__ void addOne(float* p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1.f;
}

static nvtxEventAttributes_t attr(const char* msg, unsigned color)
{
    nvtxEventAttributes_t a;
    std::memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = color;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = msg;
    return a;
}

int main(int argc, char** argv)
{
    const char* mode = argc > 1 ? argv[1] : "basic";
    const int n = 1 << 20;
    if (!std::strcmp(mode, "basic")) {
        if (argc > 2 && !std::strcmp(argv[2], "early")) nvtxMarkA("pre-cuda-mark");
        float* d = nullptr;
        CK(cudaMalloc(&d, n * sizeof(float)));
        CK(cudaMemset(d, 0, n * sizeof(float)));
        nvtxRangePushA("outer-push");
        work<<<n / 256, 256>>>(d, n, 200);
        nvtxRangePushA("inner-push");
        work<<<n / 256, 256>>>(d, n, 200);
        CK(cudaDeviceSynchronize());  // the inner range must contain both kernels' ends
        nvtxRangePop();
        nvtxRangePop();
        auto a = attr("startend-range", 0xff00ff00u);
        nvtxRangeId_t id = nvtxRangeStartEx(&a);
        addOne<<<n / 256, 256>>>(d, n);
        CK(cudaDeviceSynchronize());
        nvtxRangeEnd(id);
        nvtxMarkA("a-mark");
        nvtxDomainHandle_t dom = nvtxDomainCreateA("wsdomain");
        auto da = attr("domain-push", 0xffff0000u);
        nvtxDomainRangePushEx(dom, &da);
        addOne<<<n / 256, 256>>>(d, n);
        CK(cudaDeviceSynchronize());
        nvtxDomainRangePop(dom);
        auto th = [d, n](const char* outer, const char* inner) {
            nvtxRangePushA(outer);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            nvtxRangePushA(inner);
            addOne<<<n / 256, 256>>>(d, n);
            cudaStreamSynchronize(0);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            nvtxRangePop();
            nvtxRangePop();
        };
        std::thread t1(th, "thrA-outer", "thrA-inner"), t2(th, "thrB-outer", "thrB-inner");
        t1.join();
        t2.join();
        float h = 0;
        CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
        std::printf("basic done h=%g\n", h);
        CK(cudaFree(d));
        return 0;
    }
    if (!std::strcmp(mode, "graph")) {
        float* d = nullptr;
        CK(cudaMalloc(&d, n * sizeof(float)));
        cudaStream_t s;
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        addOne<<<n / 256, 256, 0, s>>>(d, n);
        work<<<n / 256, 256, 0, s>>>(d, n, 50);
        addOne<<<n / 256, 256, 0, s>>>(d, n);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        for (int r = 0; r < 2; ++r) CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        std::printf("graph done\n");
        return 0;
    }
    if (!std::strcmp(mode, "loop")) {
        double secs = argc > 2 ? std::atof(argv[2]) : 3.0;
        const char* end = argc > 3 ? argv[3] : "return";
        float* d = nullptr;
        CK(cudaMalloc(&d, n * sizeof(float)));
        auto t0 = std::chrono::steady_clock::now();
        long launched = 0;
        double lastPrint = 0;
        for (;;) {
            nvtxRangePushA("loop-batch");
            for (int i = 0; i < 100; ++i) work<<<n / 256, 256>>>(d, n, 20);
            launched += 100;
            CK(cudaStreamSynchronize(0));
            nvtxRangePop();
            double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (t - lastPrint >= 0.1) {
                std::printf("launched %ld t=%.3f\n", launched, t);
                std::fflush(stdout);
                lastPrint = t;
            }
            if (t >= secs) break;
        }
        std::printf("final launched %ld end=%s\n", launched, end);
        std::fflush(stdout);
        if (!std::strcmp(end, "exit")) std::exit(3);
        if (!std::strcmp(end, "abort")) std::abort();
        return 0;
    }
    std::printf("unknown mode\n");
    return 1;
}
