#include "cupti_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace ws::rec::cupti {

const Api* load(std::string* error)
{
    static Api api;
    static std::string loadError;
    static bool ok = false;
    static std::once_flag once;
    std::call_once(once, [] {
        std::vector<std::string> candidates;
        if (const char* env = std::getenv("WARPSTAGE_CUPTI_LIB"); env && *env) candidates.emplace_back(env);
        for (const char* n : {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                              "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so.13",
                              "/usr/local/cuda/lib/libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"})
            candidates.emplace_back(n);
        void* h = nullptr;
        std::string tried;
        for (const auto& c : candidates) {
            h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (h) {
                api.libraryPath = c;
                break;
            }
            if (!tried.empty()) tried += ", ";
            tried += c;
        }
        if (!h) {
            loadError = "CUPTI library not found (tried " + tried
                + "); install the CUDA toolkit's CUPTI or set WARPSTAGE_CUPTI_LIB to libcupti.so";
            return;
        }
#define WS_CUPTI_RESOLVE(name)                                                                   \
    api.name = reinterpret_cast<decltype(api.name)>(dlsym(h, #name));                           \
    if (!api.name) {                                                                             \
        loadError = api.libraryPath + " lacks " #name " (CUPTI too old? need CUDA 12.x/13.x)"; \
        return;                                                                                  \
    }
        WS_CUPTI_FUNCTIONS(WS_CUPTI_RESOLVE)
#undef WS_CUPTI_RESOLVE
        ok = true;
    });
    if (!ok) {
        if (error) *error = loadError;
        return nullptr;
    }
    return &api;
}

std::string resultText(const Api& api, CUptiResult r)
{
    const char* s = nullptr;
    if (api.cuptiGetResultString) api.cuptiGetResultString(r, &s);
    return std::string(s ? s : "CUPTI error") + " (" + std::to_string(int(r)) + ")";
}

}  // namespace ws::rec::cupti
