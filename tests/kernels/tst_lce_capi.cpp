// Test of liblce_capi (kernels/lce/lce_capi.h, s12-lcevs), two registrations of this program:
//   tst_lce_capi          any machine: bad arguments get LCE_E_ARG and a sentence before anything touches a GPU; then
//                         where no sm_90 GPU can run (tests/common/gpu_skip.h's gpuProblem), lce_open says so with
//                         LCE_E_NO_GPU and a sentence, and where one can, it opens.
//   gpu_lce_capi (--gpu)  the GPU path (SKIP 77 without an sm_90 GPU): every rung checked against the fp32 reference at
//                         an odd shape on a stream of the caller's, rung 4 launched on that stream then checked again,
//                         rungs 3-4 refusing N = 100 with LCE_E_REFUSED while rung 0 still passes.
// Exit: 0 passed, 1 failed, 77 skipped.
#include <cstdio>
#include <cstring>
#include <string>

#include <cuda_runtime.h>

#include "common/gpu_skip.h"
#include "lce_capi.h"

namespace {

int g_fail = 0;
char g_msg[512];

void expect(bool ok, const std::string& what)
{
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    std::fflush(stdout);
    if (!ok) ++g_fail;
}

bool has(const char* text, const char* part) { return std::strstr(text, part) != nullptr; }

void badArguments()
{
    LceProblem* p = reinterpret_cast<LceProblem*>(&g_fail);  // must be reset to NULL
    int rc = lce_open(0, 256, 1178, 866, 1024, 70, 0, 1, &p, g_msg, sizeof g_msg);
    expect(rc == LCE_E_ARG && p == nullptr && has(g_msg, "must be at least 1"),
           "lce_open with M = 0: LCE_E_ARG, *out NULL, a sentence (" + std::string(g_msg) + ")");
    rc = lce_open(433, 256, 1178, 866, 1024, -3, 0, 1, &p, g_msg, sizeof g_msg);
    expect(rc == LCE_E_ARG && p == nullptr, "lce_open with per_user = -3: LCE_E_ARG");
    rc = lce_open(433, 256, 1178, 866, 1024, 70, 0, 1, nullptr, g_msg, sizeof g_msg);
    expect(rc == LCE_E_ARG && has(g_msg, "out is NULL"), "lce_open with out NULL: LCE_E_ARG (" + std::string(g_msg) + ")");
    rc = lce_run(nullptr, 4, nullptr, g_msg, sizeof g_msg);
    expect(rc == LCE_E_ARG && has(g_msg, "NULL"), "lce_run on a NULL problem: LCE_E_ARG (" + std::string(g_msg) + ")");
    rc = lce_check(nullptr, 4, nullptr, g_msg, sizeof g_msg);
    expect(rc == LCE_E_ARG && has(g_msg, "NULL"), "lce_check on a NULL problem: LCE_E_ARG");
    char tiny[8];
    std::memset(tiny, 'x', sizeof tiny);
    rc = lce_run(nullptr, 4, nullptr, tiny, sizeof tiny);
    expect(rc == LCE_E_ARG && tiny[7] == '\0' && std::strlen(tiny) == 7, "a short msg buffer: truncated, terminated");
    expect(lce_run(nullptr, 4, nullptr, nullptr, 0) == LCE_E_ARG, "msg NULL: still the code");
    expect(lce_flops(nullptr) == 0.0, "lce_flops(NULL) = 0");
    lce_close(nullptr);
    expect(lce_api_version() == 1, "lce_api_version() = 1");
}

// The open at the benchmark point: LCE_E_NO_GPU and why where no sm_90 GPU can run, a problem where one can.
void openHere(const std::string& why)
{
    LceProblem* p = nullptr;
    const int rc = lce_open(433, 256, 1178, 866, 1024, 70, 0, 1, &p, g_msg, sizeof g_msg);
    if (!why.empty()) {
        expect(rc == LCE_E_NO_GPU && p == nullptr
                   && (has(g_msg, "no CUDA device") || has(g_msg, "needs an sm_90 GPU")),
               "no GPU here (" + why + "): lce_open answers LCE_E_NO_GPU with a sentence: " + g_msg);
        return;
    }
    expect(rc == LCE_OK && p != nullptr && has(g_msg, "M=433 N=256"), "an sm_90 GPU: lce_open opens (" + std::string(g_msg) + ")");
    expect(lce_flops(p) > 2.0 * 433 * 256 * 866 * 1024, "lce_flops at the benchmark point");
    lce_close(p);
}

void gpuPath()
{
    cudaStream_t st = nullptr;
    expect(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess, "a stream of the caller's");
    LceProblem* p = nullptr;
    int rc = lce_open(130, 200, 37, 29, 40, 20, 0, 7, &p, g_msg, sizeof g_msg);
    expect(rc == LCE_OK && p, "lce_open at an odd shape: " + std::string(g_msg));
    if (!p) return;
    for (int r = 0; r < 5; ++r) {
        rc = lce_check(p, r, st, g_msg, sizeof g_msg);
        expect(rc == LCE_OK && has(g_msg, "PASS rung"), "lce_check rung " + std::to_string(r) + ": " + g_msg);
    }
    bool ran = true;
    for (int i = 0; i < 3; ++i) ran = ran && lce_run(p, 4, st, g_msg, sizeof g_msg) == LCE_OK;
    expect(ran && cudaStreamSynchronize(st) == cudaSuccess, "lce_run rung 4 three times on the caller's stream");
    rc = lce_check(p, 4, st, g_msg, sizeof g_msg);
    expect(rc == LCE_OK, "rung 4 checked after those launches: " + std::string(g_msg));
    expect(lce_run(p, 5, st, g_msg, sizeof g_msg) == LCE_E_ARG, "lce_run rung 5: LCE_E_ARG");
    {  // two problems of one shape, other buffers: rung 4's launch keeps its tensor maps between calls (s15-lcebody)
       // and must re-encode them when the problem changes -- each check passes, in turn A, B, A
        LceProblem* q = nullptr;
        rc = lce_open(130, 200, 37, 29, 40, 20, 0, 8, &q, g_msg, sizeof g_msg);
        expect(rc == LCE_OK && q, "a second problem of the same shape: " + std::string(g_msg));
        if (q) {
            LceProblem* order[3] = {p, q, p};
            for (int i = 0; i < 3; ++i) {
                rc = lce_check(order[i], 4, st, g_msg, sizeof g_msg);
                expect(rc == LCE_OK && has(g_msg, "PASS rung"),
                       std::string("rung 4 on problem ") + "ABA"[i] + " after problem " + (i ? "ABA"[i - 1] : '-')
                           + ": " + g_msg);
            }
            lce_close(q);
        }
    }
    lce_close(p);
    p = nullptr;
    rc = lce_open(130, 100, 37, 29, 40, 20, 0, 7, &p, g_msg, sizeof g_msg);
    expect(rc == LCE_OK && p, "lce_open with N = 100");
    if (p) {
        rc = lce_run(p, 4, st, g_msg, sizeof g_msg);
        expect(rc == LCE_E_REFUSED && has(g_msg, "multiple of 8"), "N = 100: rung 4 refuses: " + std::string(g_msg));
        rc = lce_check(p, 0, st, g_msg, sizeof g_msg);
        expect(rc == LCE_OK, "N = 100: rung 0 passes: " + std::string(g_msg));
        lce_close(p);
    }
    cudaStreamDestroy(st);
}

}  // namespace

int main(int argc, char** argv)
{
    const bool gpu = argc > 1 && std::strcmp(argv[1], "--gpu") == 0;
    if (argc > 2 || (argc == 2 && !gpu)) {
        std::fprintf(stderr, "usage: tst_lce_capi [--gpu]\n");
        return 2;
    }
    const std::string why = ws::testing::gpuProblem(9);
    if (gpu) {
        if (!why.empty()) return ws::testing::gpuUnavailableExit("gpu_lce_capi", why);
        gpuPath();
    } else {
        badArguments();
        openHere(why);
    }
    std::printf("%s: %d failed\n", gpu ? "gpu_lce_capi" : "tst_lce_capi", g_fail);
    return g_fail ? 1 : 0;
}
