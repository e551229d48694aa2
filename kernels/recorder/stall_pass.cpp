// Pass 2, child process side: CUPTI PC sampling of a rung's untraced build.
// Started by the recorder as `<selfExe> --stall-pass --rung R --shape MxNxK --period P
// --launches L --device D --stall-out FILE`. Writes FILE (tab-separated, see
// parseStallFile in recorder.cpp) and exits 0, or kStallNoPermission /
// kStallNotSupported / kStallError with the reason in FILE.
#include "cupti_api.h"
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
    std::vector<char> cubin;
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
    CUpti_GetCubinCrcParams p{};
    p.size = CUpti_GetCubinCrcParamsSize;
    p.cubin = m.cubin.data();
    p.cubinSize = m.cubin.size();
    if (g_api->cuptiGetCubinCrc(&p) == CUPTI_SUCCESS) m.crc = p.cubinCrc;
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

    CUpti_PCSamplingEnableParams en{};
    en.size = CUpti_PCSamplingEnableParamsSize;
    en.ctx = ctx;
    r = api.cuptiPCSamplingEnable(&en);
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        return finish(a, kStallNoPermission, "PC sampling not permitted: " + cupti::resultText(api, r)
                                                 + " (needs root or NVreg_RestrictProfilingToAdminUsers=0)");
    if (r == CUPTI_ERROR_NOT_SUPPORTED || r == CUPTI_ERROR_NOT_COMPATIBLE || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED)
        return finish(a, kStallNotSupported, "PC sampling not supported here: " + cupti::resultText(api, r));
    if (r != CUPTI_SUCCESS) return finish(a, kStallError, "cuptiPCSamplingEnable: " + cupti::resultText(api, r));

    size_t nReasons = 0;
    CUpti_PCSamplingGetNumStallReasonsParams nr{};
    nr.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
    nr.ctx = ctx;
    nr.numStallReasons = &nReasons;
    if ((r = api.cuptiPCSamplingGetNumStallReasons(&nr)) != CUPTI_SUCCESS)
        return finish(a, kStallError, "stall reasons: " + cupti::resultText(api, r));
    std::vector<uint32_t> idx(nReasons);
    std::vector<std::vector<char>> names(nReasons, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE, 0));
    std::vector<char*> namePtrs(nReasons);
    for (size_t i = 0; i < nReasons; ++i) namePtrs[i] = names[i].data();
    CUpti_PCSamplingGetStallReasonsParams gr{};
    gr.size = CUpti_PCSamplingGetStallReasonsParamsSize;
    gr.ctx = ctx;
    gr.numStallReasons = nReasons;
    gr.stallReasonIndex = idx.data();
    gr.stallReasons = namePtrs.data();
    if ((r = api.cuptiPCSamplingGetStallReasons(&gr)) != CUPTI_SUCCESS)
        return finish(a, kStallError, "stall reason names: " + cupti::resultText(api, r));
    std::map<uint32_t, std::string> reasonName;
    for (size_t i = 0; i < nReasons; ++i) reasonName[idx[i]] = namePtrs[i];

    // Two separate buffers: the one in the configuration (CUPTI fills it at a range end)
    // and the one GetData fills. On the H200, one buffer used for both came back empty.
    const size_t collect = 20000;
    struct Buf {
        std::vector<CUpti_PCSamplingPCData> pcs;
        std::vector<CUpti_PCSamplingStallReason> reasons;
        CUpti_PCSamplingData data{};
        void init(size_t n, size_t nr)
        {
            pcs.assign(n, CUpti_PCSamplingPCData{});
            reasons.assign(n * nr, CUpti_PCSamplingStallReason{});
            for (size_t i = 0; i < n; ++i) {
                pcs[i].size = sizeof(CUpti_PCSamplingPCData);
                pcs[i].stallReason = reasons.data() + i * nr;
            }
            data = {};
            data.size = sizeof(CUpti_PCSamplingData);
            data.collectNumPcs = n;
            data.pPcData = pcs.data();
        }
    };
    Buf cfgBuf, getBuf;
    cfgBuf.init(collect, nReasons);
    getBuf.init(collect, nReasons);

    std::vector<CUpti_PCSamplingConfigurationInfo> cfg(7);
    for (auto& c : cfg) c = {};
    cfg[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    cfg[0].attributeData.stallReasonData.stallReasonCount = nReasons;
    cfg[0].attributeData.stallReasonData.pStallReasonIndex = idx.data();
    cfg[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    cfg[1].attributeData.samplingPeriodData.samplingPeriod = uint32_t(a.period);  // 2^period cycles
    cfg[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    cfg[2].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
    cfg[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    cfg[3].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    cfg[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    cfg[4].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    cfg[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    cfg[5].attributeData.samplingDataBufferData.samplingDataBuffer = &cfgBuf.data;
    cfg[6].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
    cfg[6].attributeData.scratchBufferSizeData.scratchBufferSize = size_t(64) << 20;
    CUpti_PCSamplingConfigurationInfoParams cp{};
    cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
    cp.ctx = ctx;
    cp.numAttributes = cfg.size();
    cp.pPCSamplingConfigurationInfo = cfg.data();
    if ((r = api.cuptiPCSamplingSetConfigurationAttribute(&cp)) != CUPTI_SUCCESS) {
        std::string which;
        for (const auto& c : cfg)
            if (c.attributeStatus != CUPTI_SUCCESS) which += " attr" + std::to_string(int(c.attributeType));
        return finish(a, kStallError, "PC sampling configuration:" + which + " " + cupti::resultText(api, r));
    }

    CUpti_PCSamplingStartParams sp{};
    sp.size = CUpti_PCSamplingStartParamsSize;
    sp.ctx = ctx;
    if ((r = api.cuptiPCSamplingStart(&sp)) != CUPTI_SUCCESS) {
        const int code = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? kStallNoPermission : kStallError;
        return finish(a, code, "cuptiPCSamplingStart: " + cupti::resultText(api, r));
    }
    for (int i = 0; i < a.launches; ++i) {
        le = ladder::launch(a.rung, a.shape, data.a(), data.b(), data.c(), nullptr, nullptr, 0);
        if (!le.empty()) return finish(a, kStallError, "launch under sampling: " + le);
    }
    ce = cudaDeviceSynchronize();
    CUpti_PCSamplingStopParams stp{};
    stp.size = CUpti_PCSamplingStopParamsSize;
    stp.ctx = ctx;
    r = api.cuptiPCSamplingStop(&stp);
    if (ce != cudaSuccess) return finish(a, kStallError, std::string("kernel under sampling: ") + cudaGetErrorString(ce));
    if (r != CUPTI_SUCCESS) return finish(a, kStallError, "cuptiPCSamplingStop: " + cupti::resultText(api, r));

    // Aggregate over launches: (function, pc, crc, reason) -> samples.
    std::map<std::tuple<std::string, std::uint64_t, std::uint64_t, std::string>, std::uint64_t> agg;
    std::uint64_t total = 0, dropped = 0, nonUsr = 0;
    int hwFull = 0, rounds = 0;
    auto consume = [&](const CUpti_PCSamplingData& d) {
        total += d.totalSamples;
        dropped += d.droppedSamples;
        nonUsr += d.nonUsrKernelsTotalSamples;
        hwFull |= d.hardwareBufferFull ? 1 : 0;
        for (size_t i = 0; i < d.totalNumPcs && i < d.collectNumPcs; ++i) {
            const auto& pc = d.pPcData[i];
            const std::string fnName = pc.functionName ? pc.functionName : "";
            for (size_t j = 0; j < pc.stallReasonCount; ++j) {
                if (pc.stallReason[j].samples == 0) continue;
                auto it = reasonName.find(pc.stallReason[j].pcSamplingStallReasonIndex);
                const std::string rn = it != reasonName.end() ? it->second : "reason_" + std::to_string(pc.stallReason[j].pcSamplingStallReasonIndex);
                agg[{fnName, pc.pcOffset, pc.cubinCrc, rn}] += pc.stallReason[j].samples;
            }
        }
    };
    std::uint64_t getRange = UINT64_MAX;
    size_t getPcs = 0;
    for (;;) {
        CUpti_PCSamplingGetDataParams gd{};
        gd.size = CUpti_PCSamplingGetDataParamsSize;
        gd.ctx = ctx;
        gd.pcSamplingData = &getBuf.data;
        getBuf.data.totalNumPcs = 0;
        r = api.cuptiPCSamplingGetData(&gd);
        if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) break;
        ++rounds;
        if (getBuf.data.totalNumPcs == 0 && getBuf.data.remainingNumPcs == 0) break;
        getRange = getBuf.data.rangeId;
        getPcs += getBuf.data.totalNumPcs;
        consume(getBuf.data);
        if (getBuf.data.remainingNumPcs == 0 || rounds > 1000) break;
    }
    // The range's data was also seen in the configuration buffer after Stop; use it only
    // when GetData returned nothing (never both: that would count samples twice).
    const char* source = "getdata";
    if (getPcs == 0 && cfgBuf.data.totalNumPcs > 0) {
        consume(cfgBuf.data);
        source = "config-buffer";
    }
    (void)getRange;

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
        if (mod) {
            CUpti_GetSassToSourceCorrelationParams sc{};
            sc.size = CUpti_GetSassToSourceCorrelationParamsSize;
            sc.cubin = mod->cubin.data();
            sc.cubinSize = mod->cubin.size();
            sc.functionName = fnName.c_str();
            sc.pcOffset = pc;
            if (api.cuptiGetSassToSourceCorrelation(&sc) == CUPTI_SUCCESS) {
                std::string file = sc.fileName ? sc.fileName : "";
                if (sc.dirName && *sc.dirName && !file.empty() && file[0] != '/') file = std::string(sc.dirName) + "/" + file;
                res = {file, int(sc.lineNumber)};
                std::free(sc.fileName);
                std::free(sc.dirName);
            }
        }
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

    CUpti_PCSamplingDisableParams dp{};
    dp.size = CUpti_PCSamplingDisableParamsSize;
    dp.ctx = ctx;
    api.cuptiPCSamplingDisable(&dp);
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
