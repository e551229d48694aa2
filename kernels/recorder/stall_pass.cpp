// Pass 2, child process side: CUPTI PC sampling of a rung's untraced build.
// Started by the recorder as `<selfExe> --stall-pass --rung R --shape MxNxK --period P
// --launches L --device D --stall-out FILE`. Writes FILE (tab-separated, see
// parseStallFile in recorder.cpp) and exits 0, or kStallNoPermission /
// kStallNotSupported / kStallError with the reason in FILE.
#include "cupti_api.h"
#include "pc_sampling_session.h"
#include "gemm_data.h"
#include "warpstage/recorder.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace ws::rec {

namespace {

struct Module {
    std::string cubin;
    std::uint64_t crc = 0;
};
std::mutex g_modMutex;
std::vector<Module> g_modules;
const cupti::Api* g_api = nullptr;

void CUPTIAPI onResource(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata)
{
    if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_MODULE_LOADED) return;
    const auto* rd = static_cast<const CUpti_ResourceData*>(cbdata);
    const auto* md = static_cast<const CUpti_ModuleResourceData*>(rd->resourceDescriptor);
    if (!md || !md->pCubin || md->cubinSize == 0) return;
    Module m;
    m.cubin.assign(md->pCubin, md->pCubin + md->cubinSize);
    m.crc = pcs::cubinCrc(*g_api, m.cubin.data(), m.cubin.size());
    std::lock_guard<std::mutex> lk(g_modMutex);
    g_modules.push_back(std::move(m));
}

struct Args {
    std::string rung, out;
    ladder::Shape shape;
    int period = 10, launches = 1, device = 0;
};

int finish(const Args& a, int code, const std::string& status, const std::string& body = {})
{
    std::ofstream f(a.out, std::ios::trunc);
    f << "warpstage-stall-pass\t1\n";
    f << "status\t" << (code == 0 ? "ok" : "error") << '\t' << status << '\n';
    f << body;
    f.close();
    if (!f) {
        std::fprintf(stderr, "warpstage-record --stall-pass: cannot write %s\n", a.out.c_str());
        return kStallError;
    }
    return code;
}

std::string cleanField(std::string s)
{
    for (auto& ch : s)
        if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
    return s;
}

int run(const Args& a)
{
    std::string err;
    g_api = cupti::load(&err);
    if (!g_api) return finish(a, kStallError, err);
    const auto& api = *g_api;

    // Subscribe before the first CUDA call so every module load (and its cubin) is seen.
    CUpti_SubscriberHandle sub{};
    CUptiResult r = api.cuptiSubscribe(&sub, onResource, nullptr);
    if (r != CUPTI_SUCCESS) return finish(a, kStallError, "cuptiSubscribe: " + cupti::resultText(api, r));
    api.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);

    cudaError_t ce = cudaSetDevice(a.device);
    if (ce == cudaSuccess) ce = cudaFree(nullptr);
    if (ce != cudaSuccess) return finish(a, kStallError, std::string("CUDA init: ") + cudaGetErrorString(ce));
    using CtxGetCurrent = CUresult (*)(CUcontext*);
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess || !fn)
        return finish(a, kStallError, "cuCtxGetCurrent not available from the driver");
    CUcontext ctx = nullptr;
    reinterpret_cast<CtxGetCurrent>(fn)(&ctx);

    GemmData data;
    if (auto e = data.allocate(a.shape, 7); !e.empty()) return finish(a, kStallError, e);
    // Warm-up outside the sampling range (loads the module, so its cubin is captured).
    std::string le = ladder::launch(a.rung, a.shape, data.a(), data.b(), data.c(), nullptr, nullptr, 0);
    if (!le.empty()) return finish(a, kStallError, "warm-up launch: " + le);
    if ((ce = cudaDeviceSynchronize()) != cudaSuccess)
        return finish(a, kStallError, std::string("warm-up kernel: ") + cudaGetErrorString(ce));

    pcs::Session session;
    std::string openErr;
    switch (session.open(api, ctx, a.period, &openErr)) {
    case pcs::OpenError::None: break;
    case pcs::OpenError::NoPermission: return finish(a, kStallNoPermission, openErr);
    case pcs::OpenError::NotSupported: return finish(a, kStallNotSupported, openErr);
    case pcs::OpenError::Error: return finish(a, kStallError, openErr);
    }
    if ((r = session.start()) != CUPTI_SUCCESS) {
        const int code = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? kStallNoPermission : kStallError;
        return finish(a, code, "cuptiPCSamplingStart: " + cupti::resultText(api, r));
    }
    for (int i = 0; i < a.launches; ++i) {
        le = ladder::launch(a.rung, a.shape, data.a(), data.b(), data.c(), nullptr, nullptr, 0);
        if (!le.empty()) return finish(a, kStallError, "launch under sampling: " + le);
    }
    ce = cudaDeviceSynchronize();
    r = session.stop();
    if (ce != cudaSuccess) return finish(a, kStallError, std::string("kernel under sampling: ") + cudaGetErrorString(ce));
    if (r != CUPTI_SUCCESS) return finish(a, kStallError, "cuptiPCSamplingStop: " + cupti::resultText(api, r));

    // Aggregate over launches: (function, pc, crc, reason) -> samples.
    std::map<std::tuple<std::string, std::uint64_t, std::uint64_t, std::string>, std::uint64_t> agg;
    const pcs::Totals tot = session.drain([&](const char* fnName, std::uint64_t pc, std::uint64_t crc, const std::string& reason,
                                              std::uint64_t samples) { agg[{fnName, pc, crc, reason}] += samples; });
    const std::uint64_t total = tot.total, dropped = tot.dropped, nonUsr = tot.nonUser;
    const int hwFull = tot.hardwareBufferFull ? 1 : 0;
    const char* source = tot.source;

    // SASS -> source, once per (crc, function, pc).
    std::map<std::tuple<std::uint64_t, std::string, std::uint64_t>, std::pair<std::string, int>> srcCache;
    int srcOk = 0, srcFail = 0;
    auto sourceOf = [&](std::uint64_t crc, const std::string& fnName, std::uint64_t pc) -> std::pair<std::string, int> {
        auto key = std::make_tuple(crc, fnName, pc);
        if (auto it = srcCache.find(key); it != srcCache.end()) return it->second;
        std::pair<std::string, int> res{"", 0};
        const Module* mod = nullptr;
        {
            std::lock_guard<std::mutex> lk(g_modMutex);
            for (const auto& m : g_modules)
                if (m.crc == crc) mod = &m;
        }
        if (mod) res = pcs::sourceOf(api, mod->cubin, fnName, pc);
        (res.second > 0 ? srcOk : srcFail)++;
        srcCache[key] = res;
        return res;
    };

    std::string body;
    char line[256];
    std::snprintf(line, sizeof line, "total\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%d\n", total, dropped, nonUsr, hwFull);
    body += line;
    std::snprintf(line, sizeof line, "config\t%d\t%d\t%s\t%zu\n", a.period, a.launches, source, g_modules.size());
    body += line;
    for (const auto& [key, count] : agg) {
        const auto& [fnName, pc, crc, reason] = key;
        const auto src = sourceOf(crc, fnName, pc);
        body += "S\t" + cleanField(fnName) + '\t' + std::to_string(pc) + '\t' + cleanField(src.first) + '\t'
            + std::to_string(src.second) + '\t' + cleanField(reason) + '\t' + std::to_string(count) + '\n';
    }
    std::snprintf(line, sizeof line, "source\t%d\t%d\n", srcOk, srcFail);
    body += line;

    session.close();
    api.cuptiUnsubscribe(sub);
    return finish(a, 0, "ok", body);
}

}  // namespace

int maybeRunStallPass(int argc, char** argv)
{
    bool stall = false;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--stall-pass") == 0) stall = true;
    if (!stall) return -1;
    Args a;
    for (int i = 1; i + 1 < argc; ++i) {
        const std::string k = argv[i];
        const std::string v = argv[i + 1];
        if (k == "--rung") a.rung = v;
        else if (k == "--stall-out") a.out = v;
        else if (k == "--period") a.period = std::atoi(v.c_str());
        else if (k == "--launches") a.launches = std::atoi(v.c_str());
        else if (k == "--device") a.device = std::atoi(v.c_str());
        else if (k == "--shape") {
            if (std::sscanf(v.c_str(), "%dx%dx%d", &a.shape.m, &a.shape.n, &a.shape.k) != 3) a.shape = {};
        }
    }
    if (a.out.empty() || a.rung.empty() || a.shape.m <= 0 || a.period < 5 || a.period > 31 || a.launches < 1) {
        std::fprintf(stderr, "warpstage-record --stall-pass: internal mode, started by warpstage-record itself\n");
        return kStallError;
    }
    try {
        return run(a);
    } catch (const std::exception& e) {
        return finish(a, kStallError, std::string("exception: ") + e.what());
    }
}

}  // namespace ws::rec
