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

}  // namespace ws::testing
