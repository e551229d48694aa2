// What a GPU test does when it cannot run here (no GPU, no sm_90 device, no CUPTI).
//
// By default it prints "SKIP: <program>: <why>" and exits 77, which ctest reports as skipped
// (SKIP_RETURN_CODE 77): on a machine without a GPU (CI) the GPU tests are listed as skipped.
// On the GPU machine the scripts set WARPSTAGE_REQUIRE_GPU=1: the same situation is then a
// failure (exit 1, "FAIL: ..."), so a broken driver, a missing CUPTI or a test that wrongly
// believes there is no GPU turns the run red instead of quietly skipping it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>

namespace ws::testing {

inline constexpr int kSkipExitCode = 77;

inline bool gpuRequired()
{
    const char* v = std::getenv("WARPSTAGE_REQUIRE_GPU");
    return v && *v && std::strcmp(v, "0") != 0;
}

// Prints why and returns the exit code the test must return: 77 (skip), or 1 when
// WARPSTAGE_REQUIRE_GPU is set.
inline int gpuUnavailableExit(const char* program, const std::string& why)
{
    if (gpuRequired()) {
        std::printf("FAIL: %s: WARPSTAGE_REQUIRE_GPU is set but the test cannot run: %s\n", program, why.c_str());
        std::fflush(stdout);
        return 1;
    }
    std::printf("SKIP: %s: %s\n", program, why.c_str());
    std::fflush(stdout);
    return kSkipExitCode;
}

// Why no CUDA device can run the test here ("" if one can), asked of the driver through dlopen so that the test
// itself needs no CUDA: no libcuda.so.1, no device, or (minMajor > 0) no device of at least that compute capability.
inline std::string gpuProblem(int minMajor = 0)
{
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return "no CUDA driver (libcuda.so.1)";
    using InitFn = int (*)(unsigned);
    using CountFn = int (*)(int*);
    using AttrFn = int (*)(int*, int, int);
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
    auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
    auto attr = reinterpret_cast<AttrFn>(dlsym(lib, "cuDeviceGetAttribute"));
    int n = 0, major = 0;
    if (!init || !count || init(0) != 0 || count(&n) != 0 || n == 0) return "no CUDA device";
    if (minMajor > 0
        && (!attr || attr(&major, 75 /*CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR*/, 0) != 0 || major < minMajor))
        return "needs an sm_" + std::to_string(minMajor) + "0 GPU";
    return "";
}

}  // namespace ws::testing
