// ws_testapp: a small CUDA program of the tests' own, recorded by warpstage-record -- PROGRAM
// (tests/recorder/gpu_record_program.cpp, scripts in tests/recorder/programs/). It knows nothing about
// Warpstage: CUDA runtime + header-only NVTX v3 only.
//   ws_testapp basic            2 streams, H2D/D2H memcpys, a memset, named kernels, NVTX push/pop (nested),
//                               start/end, mark, a domain range, 2 threads, a CUDA graph launched twice;
//                               prints "EXPECT ..." lines with what must be recorded
//   ws_testapp crash            the basic work, then a segfault (SIGSEGV) after a NVTX push that never pops
//   ws_testapp exit3            the basic work, then exit(3) from a nested function
//   ws_testapp hang             one kernel, then sleeps forever (for --timeout)
//   ws_testapp loop SECS        launches small kernels for SECS seconds (for SIGKILL)
//   ws_testapp children         one kernel, then runs itself twice as a child ("basic"), waits, one more kernel
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__); std::exit(2); } } while (0)

__global__ void wsScale(float* p, int n, float f)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= f;
}
__global__ void wsAddOne(float* p, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1.f;
}
__global__ void wsGraphNode(float* p, int n, int k)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += float(k);
}
__global__ void wsSpin(float* p, int iters)
{
    float v = p[threadIdx.x];
    for (int k = 0; k < iters; ++k) v = v * 1.0001f + 0.5f;
    p[threadIdx.x] = v;
}

static void basic()
{
    const int n = 1 << 20;
    float* h = nullptr;
    float *d0 = nullptr, *d1 = nullptr;
    CK(cudaMallocHost(&h, n * sizeof(float)));
    for (int i = 0; i < n; ++i) h[i] = float(i % 7);
    CK(cudaMalloc(&d0, n * sizeof(float)));
    CK(cudaMalloc(&d1, n * sizeof(float)));
    cudaStream_t s0, s1;
    CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    nvtxRangePushA("ws-outer");
    CK(cudaMemcpyAsync(d0, h, n * sizeof(float), cudaMemcpyHostToDevice, s0));
    CK(cudaMemsetAsync(d1, 0, n * sizeof(float), s1));
    nvtxRangePushA("ws-inner");
    for (int r = 0; r < 3; ++r) {
        wsScale<<<n / 256, 256, 0, s0>>>(d0, n, 1.5f);
        wsAddOne<<<n / 256, 256, 0, s1>>>(d1, n);
    }
    CK(cudaStreamSynchronize(s0));
    CK(cudaStreamSynchronize(s1));
    nvtxRangePop();
    nvtxMarkA("ws-mark");
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xff00ff00u;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "ws-startend";
    const nvtxRangeId_t id = nvtxRangeStartEx(&a);
    // A CUDA graph: 3 kernels captured on s0, launched twice.
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < 3; ++k) wsGraphNode<<<n / 256, 256, 0, s0>>>(d0, n, k);
    CK(cudaStreamEndCapture(s0, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s0));
    CK(cudaGraphLaunch(ge, s0));
    CK(cudaStreamSynchronize(s0));
    nvtxRangeEnd(id);
    nvtxDomainHandle_t dom = nvtxDomainCreateA("ws-domain");
    a.message.ascii = "ws-domain-range";
    nvtxDomainRangePushEx(dom, &a);
    wsAddOne<<<n / 256, 256, 0, s1>>>(d1, n);
    CK(cudaStreamSynchronize(s1));
    nvtxDomainRangePop(dom);
    auto th = [d1, n](const char* name) {
        nvtxRangePushA(name);
        wsAddOne<<<n / 256, 256>>>(d1, n);
        cudaStreamSynchronize(0);
        nvtxRangePop();
    };
    std::thread t1(th, "ws-thread-a"), t2(th, "ws-thread-b");
    t1.join();
    t2.join();
    CK(cudaMemcpy(h, d0, n * sizeof(float), cudaMemcpyDeviceToHost));
    nvtxRangePop();  // ws-outer
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    std::printf("EXPECT kernels wsScale=3 wsAddOne=6 wsGraphNode=6 total=15\n");
    std::printf("EXPECT memops htod=1 dtoh=1 memset=1\n");
    std::printf("EXPECT nvtx push=5 startend=1 mark=1 domain=ws-domain\n");
    std::printf("EXPECT graphlaunch=2 streams>=3\n");
    std::fflush(stdout);
}

static void nestedExit(int depth)
{
    if (depth == 0) std::exit(3);
    nestedExit(depth - 1);
}

int main(int argc, char** argv)
{
    const char* mode = argc > 1 ? argv[1] : "basic";
    if (!std::strcmp(mode, "basic")) {
        basic();
        return 0;
    }
    if (!std::strcmp(mode, "crash")) {
        basic();
        nvtxRangePushA("ws-open-at-crash");
        std::printf("crashing now\n");
        std::fflush(stdout);
        volatile int* p = nullptr;
        *p = 1;
        return 0;
    }
    if (!std::strcmp(mode, "exit3")) {
        basic();
        nestedExit(3);
    }
    float* d = nullptr;
    CK(cudaMalloc(&d, 1024 * sizeof(float)));
    if (!std::strcmp(mode, "hang")) {
        wsSpin<<<1, 256>>>(d, 1000);
        CK(cudaDeviceSynchronize());
        std::printf("hanging\n");
        std::fflush(stdout);
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (!std::strcmp(mode, "loop")) {
        const double secs = argc > 2 ? std::atof(argv[2]) : 5;
        const auto t0 = std::chrono::steady_clock::now();
        long launches = 0;
        while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < secs) {
            for (int i = 0; i < 100; ++i) wsSpin<<<1, 32>>>(d, 10);
            launches += 100;
            CK(cudaDeviceSynchronize());
            if (launches % 10000 == 0) {
                std::printf("LAUNCHES %ld\n", launches);
                std::fflush(stdout);
            }
        }
        std::printf("LAUNCHES %ld done\n", launches);
        return 0;
    }
    if (!std::strcmp(mode, "children")) {
        wsSpin<<<1, 32>>>(d, 10);
        CK(cudaDeviceSynchronize());
        for (int c = 0; c < 2; ++c) {
            char* args[] = {argv[0], const_cast<char*>("basic"), nullptr};
            pid_t pid = 0;
            if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, args, environ) != 0) return 4;
            int st = 0;
            waitpid(pid, &st, 0);
            std::printf("CHILD %d status %d\n", int(pid), st);
        }
        wsSpin<<<1, 32>>>(d, 10);
        CK(cudaDeviceSynchronize());
        return 0;
    }
    std::printf("unknown mode %s\n", mode);
    return 2;
}
