// liblce_capi (lce_capi.h): the driver's problem and rungs (lce_rungs.h: allocate, runRung, reference, checkRung)
// behind a C API for another process's timing loop (s12-lcevs: scripts/lce/torch_reference.py --vs-lce). The problem
// keeps its own stream for the setup; each call runs on the caller's stream (cuBLAS's too, rungs 0-3).
#include "lce_capi.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "lce_rungs.h"

using namespace ws::lce;

struct LceProblem {
    Problem p;
    cudaStream_t own = nullptr;  // allocate()'s stream (the setup), destroyed at close
    std::string refused[kRungs];  // refusal() per rung, once
};

namespace {

int say(int code, char* msg, size_t size, const std::string& text)
{
    if (msg && size > 0) {
        const size_t n = text.size() < size - 1 ? text.size() : size - 1;
        std::memcpy(msg, text.data(), n);
        msg[n] = '\0';
    }
    return code;
}

// "" or why the current device cannot run the rungs.
int deviceProblem(std::string& why)
{
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();
        why = std::string("no CUDA device (cudaGetDeviceCount: ")
              + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")";
        return LCE_E_NO_GPU;
    }
    int dev = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        cudaGetLastError();
        why = "cannot read the current device's properties";
        return LCE_E_NO_GPU;
    }
    if (prop.major != 9) {
        why = "needs an sm_90 GPU (the rungs are built for sm_90a); device " + std::to_string(dev) + " is sm_"
              + std::to_string(prop.major) + std::to_string(prop.minor) + " (" + prop.name + ")";
        return LCE_E_NO_GPU;
    }
    return LCE_OK;
}

// The caller's stream for this call: the problem's launches and its cuBLAS handle.
void useStream(LceProblem* h, void* stream)
{
    h->p.stream = static_cast<cudaStream_t>(stream);
    cublasSetStream(h->p.blas, h->p.stream);
}

void destroy(LceProblem* h)
{
    cudaDeviceSynchronize();
    h->p.stream = h->own;
    release(h->p);  // keeps blas and stream
    if (h->p.blas) cublasDestroy(h->p.blas);
    if (h->own) cudaStreamDestroy(h->own);
    delete h;
}

}  // namespace

extern "C" {

int lce_api_version(void) { return 1; }

int lce_open(int m, int n, int k_user, int k_cand, int b, int per_user, int shuffled, unsigned long long seed,
             LceProblem** out, char* msg, size_t msg_size)
{
    if (!out) return say(LCE_E_ARG, msg, msg_size, "lce_open: out is NULL");
    *out = nullptr;
    Shape s;
    s.m = m;
    s.n = n;
    s.kUser = k_user;
    s.kCand = k_cand;
    s.b = b;
    s.perUser = per_user;
    s.shuffled = shuffled != 0;
    s.seed = seed;
    if (m < 1 || n < 1 || k_user < 1 || k_cand < 1 || b < 1 || per_user < 1)
        return say(LCE_E_ARG, msg, msg_size, "lce_open: " + refusal(0, s));
    std::string why;
    const int dev = deviceProblem(why);
    if (dev != LCE_OK) return say(dev, msg, msg_size, "lce_open: " + why);
    if (!(why = refusal(0, s)).empty()) return say(LCE_E_REFUSED, msg, msg_size, "lce_open: " + why);
    auto* h = new (std::nothrow) LceProblem;
    if (!h) return say(LCE_E_CUDA, msg, msg_size, "lce_open: out of host memory");
    std::string err = allocate(h->p, s);  // creates the problem's stream and cuBLAS handle, synchronises
    h->own = h->p.stream;
    if (!err.empty()) {
        destroy(h);
        return say(LCE_E_CUDA, msg, msg_size, "lce_open: " + err);
    }
    for (int r = 0; r < kRungs; ++r) h->refused[r] = refusal(r, s);
    *out = h;
    return say(LCE_OK, msg, msg_size, "lce_open: " + s.text());
}

int lce_run(LceProblem* h, int rung, void* stream, char* msg, size_t msg_size)
{
    if (!h) return say(LCE_E_ARG, msg, msg_size, "lce_run: the problem is NULL");
    if (rung < 0 || rung >= kRungs) return say(LCE_E_ARG, msg, msg_size, "lce_run: there are rungs 0 to 4");
    if (!h->refused[rung].empty())
        return say(LCE_E_REFUSED, msg, msg_size, "lce_run: rung " + std::to_string(rung) + " refuses: " + h->refused[rung]);
    useStream(h, stream);
    const std::string err = runRung(rung, h->p);
    if (!err.empty()) return say(LCE_E_CUDA, msg, msg_size, "lce_run: " + err);
    if (msg && msg_size > 0) msg[0] = '\0';
    return LCE_OK;
}

int lce_check(LceProblem* h, int rung, void* stream, char* msg, size_t msg_size)
{
    if (!h) return say(LCE_E_ARG, msg, msg_size, "lce_check: the problem is NULL");
    if (rung < 0 || rung >= kRungs) return say(LCE_E_ARG, msg, msg_size, "lce_check: there are rungs 0 to 4");
    if (!h->refused[rung].empty())
        return say(LCE_E_REFUSED, msg, msg_size,
                   "lce_check: rung " + std::to_string(rung) + " refuses: " + h->refused[rung]);
    useStream(h, stream);
    const Shape& s = h->p.s;
    float* ref = nullptr;
    if (cudaMalloc(&ref, size_t(s.b) * s.m * s.n * sizeof(float)) != cudaSuccess) {
        cudaGetLastError();
        return say(LCE_E_CUDA, msg, msg_size, "lce_check: no memory for the reference");
    }
    std::string err = reference(h->p, ref);
    CheckResult c;
    if (err.empty()) err = checkRung(rung, h->p, ref, c);
    cudaFree(ref);
    const std::string line = checkVerdict(rung, err, c);
    return say(!err.empty() ? LCE_E_CUDA : c.passed() ? LCE_OK : LCE_E_CHECK, msg, msg_size, line);
}

double lce_flops(const LceProblem* h) { return h ? h->p.s.flops() : 0.0; }

void lce_close(LceProblem* h)
{
    if (h) destroy(h);
}

}  // extern "C"
