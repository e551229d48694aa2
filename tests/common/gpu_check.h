// The GPU tests' soft assertion: CHECK(cond, printf-style message) counts a failure and prints it, and the test
// goes on (a GPU run is expensive: one call reports every failure). main returns g_failures != 0.
#pragma once

#include <cstdio>

namespace {
int g_failures = 0;
#define CHECK(cond, ...)                                                 \
    do {                                                                 \
        if (!(cond)) {                                                   \
            ++g_failures;                                                \
            std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
            std::printf(__VA_ARGS__);                                    \
            std::printf("\n");                                           \
        }                                                                \
    } while (0)
}  // namespace
