// The stall pass inside the program (docs/recording.md, "Stall pass for your kernels"): warpstage-record runs
// the program a second time with WARPSTAGE_STALL_KERNELS=REGEX (and WARPSTAGE_STALL_RANGE=A:B,
// WARPSTAGE_STALL_PERIOD=P). No Activity API in this run (PC sampling after the Activity API in one process
// crashed once on the H200). A driver-API launch callback counts the launches of every kernel name per
// device in call order; for a launch whose demangled name matches REGEX and whose index is in A:B it enables
// PC sampling on the context (once: KERNEL_SERIALIZED, start/stop control; pc_sampling_session.h), starts
// sampling at the call's entry, stops and drains at its exit (the launch is serialized), and streams
// StallSample records (pc, function, reason, count), a StallLaunch record and, the first time a sample points
// into a module, that module's cubin (captured at module load), for the recorder's SASS -> source lookup.
// Sampled launches of different threads take turns (one mutex from entry to exit). Around a sampled launch the
// context is synchronised (cuCtxSynchronize, from libcuda already in the process) before sampling starts and
// before it stops, so that the samples are this kernel's, all of them (WARPSTAGE_STALL_SYNC=0: no sync, relying
// on the serialized mode alone).
#include "inject_sink.h"

#include "cupti_api.h"
#include "pc_sampling_session.h"
#include "warpstage/sink_encode.h"

#include <cuda.h>
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

namespace ws::inject {

namespace {

using namespace ws::sink;
namespace pcs = ws::rec::pcs;

struct NameState {
    bool match = false;
    std::map<std::uint32_t, std::uint32_t> launches, sampled;  // per device
};

struct Active {  // the sampled launch this thread is inside of
    bool on = false;
    pcs::Session* session = nullptr;
    std::string name;
    std::uint32_t index = 0, device = 0, contextUid = 0;
};

// Never destroyed: used at exit and from callbacks while statics are torn down.
std::mutex& g_stateMu = *new std::mutex;   // names, sessions, cubins
std::mutex& g_launchMu = *new std::mutex;  // one sampled launch at a time
std::unordered_map<std::string, NameState>& g_names = *new std::unordered_map<std::string, NameState>;
std::map<CUcontext, pcs::Session*>& g_sessions = *new std::map<CUcontext, pcs::Session*>;
std::set<CUcontext>& g_failed = *new std::set<CUcontext>;
std::map<std::uint64_t, std::string>& g_cubins = *new std::map<std::uint64_t, std::string>;
std::set<std::uint64_t>& g_cubinsWritten = *new std::set<std::uint64_t>;
std::regex* g_re = nullptr;
long long g_first = -1, g_last = -1;
int g_period = 10;
bool g_sync = true;
thread_local Active t_active;
using CtxSyncFn = int (*)();
CtxSyncFn g_ctxSync = nullptr;
using IsCapturingFn = CUresult (*)(CUstream, CUstreamCaptureStatus*);
IsCapturingFn g_isCapturing = nullptr;

const rec::cupti::Api& linkedApi()
{
    static const rec::cupti::Api api = [] {
        rec::cupti::Api a;
#define WS_LINK(name) a.name = &::name;
        WS_CUPTI_FUNCTIONS(WS_LINK)
#undef WS_LINK
        a.libraryPath = "linked";
        return a;
    }();
    return api;
}

bool isLaunch(CUpti_CallbackId cbid)
{
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
        return true;
    default:
        return false;
    }
}

// A launch into a stream under capture becomes a graph node, not a launch: the timeline run records its kernels
// as graph launches (not counted), so this run neither counts nor samples it (and must not synchronise then).
bool capturing(CUpti_CallbackId cbid, const void* params)
{
    if (!g_isCapturing || !params) return false;
    CUstream s = nullptr;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: s = static_cast<const cuLaunchKernel_params*>(params)->hStream; break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: s = static_cast<const cuLaunchKernel_ptsz_params*>(params)->hStream; break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel: s = static_cast<const cuLaunchCooperativeKernel_params*>(params)->hStream; break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
        s = static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params)->hStream;
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
        const CUlaunchConfig* c = static_cast<const cuLaunchKernelEx_params*>(params)->config;
        s = c ? c->hStream : nullptr;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
        const CUlaunchConfig* c = static_cast<const cuLaunchKernelEx_ptsz_params*>(params)->config;
        s = c ? c->hStream : nullptr;
        break;
    }
    default: return false;
    }
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    return g_isCapturing(s, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE;
}

std::string demangled(const char* n)
{
    if (std::strncmp(n, "_Z", 2) != 0) return n;
    int status = 0;
    char* d = abi::__cxa_demangle(n, nullptr, nullptr, &status);
    if (status != 0 || !d) return n;
    std::string s(d);
    std::free(d);
    return s;
}

void note(std::int32_t code, const std::string& text)
{
    SinkWriter w;
    appendStallNote(w.out(), code, text);
}

void onModule(const CUpti_ResourceData* rd)
{
    const auto* md = static_cast<const CUpti_ModuleResourceData*>(rd->resourceDescriptor);
    if (!md || !md->pCubin || md->cubinSize == 0) return;
    const std::uint64_t crc = pcs::cubinCrc(linkedApi(), md->pCubin, md->cubinSize);
    if (crc == 0) return;
    std::lock_guard<std::mutex> lk(g_stateMu);
    if (!g_cubins.count(crc)) g_cubins.emplace(crc, std::string(md->pCubin, md->cubinSize));
}

void onEnter(CUpti_CallbackId cbid, const CUpti_CallbackData* cb)
{
    if (!cb->symbolName || !cb->context) return;
    if (capturing(cbid, cb->functionParams)) return;
    std::uint32_t device = 0;
    cuptiGetDeviceId(cb->context, &device);
    pcs::Session* session = nullptr;
    std::uint32_t index = 0;
    {
        std::lock_guard<std::mutex> lk(g_stateMu);
        auto [it, fresh] = g_names.try_emplace(cb->symbolName);
        NameState& ns = it->second;
        if (fresh) ns.match = std::regex_search(demangled(cb->symbolName), *g_re);
        if (!ns.match) return;
        index = ns.launches[device]++;
        if (g_first >= 0 && (index < g_first || index > g_last)) return;
        if (g_failed.count(cb->context)) return;
        auto s = g_sessions.find(cb->context);
        if (s == g_sessions.end()) {
            auto* fresh_ = new pcs::Session;
            std::string err;
            if (fresh_->open(linkedApi(), cb->context, g_period, &err) != pcs::OpenError::None) {
                fresh_->close();
                delete fresh_;
                g_failed.insert(cb->context);
                note(1, "device " + std::to_string(device) + ": " + err);
                return;
            }
            s = g_sessions.emplace(cb->context, fresh_).first;
        }
        session = s->second;
        ++ns.sampled[device];
    }
    g_launchMu.lock();
    if (g_sync && g_ctxSync) g_ctxSync();  // nothing launched before this one is still running when sampling starts
    const CUptiResult r = session->start();
    if (r != CUPTI_SUCCESS) {
        g_launchMu.unlock();
        note(int(r), "cuptiPCSamplingStart for " + demangled(cb->symbolName) + " launch " + std::to_string(index) + ": "
                         + rec::cupti::resultText(linkedApi(), r));
        return;
    }
    t_active = Active{true, session, cb->symbolName, index, device, cb->contextUid};
}

void onExit()
{
    Active a = t_active;
    t_active = Active{};
    if (g_sync && g_ctxSync) g_ctxSync();  // the kernel has ended before sampling stops
    const CUptiResult stopped = a.session->stop();
    std::map<std::tuple<std::string, std::uint64_t, std::uint64_t, std::string>, std::uint64_t> agg;
    const pcs::Totals t = a.session->drain([&](const char* fn, std::uint64_t pc, std::uint64_t crc, const std::string& reason,
                                               std::uint64_t n) { agg[{fn, pc, crc, reason}] += n; });
    g_launchMu.unlock();

    std::map<std::uint64_t, std::string> cubins;  // written with this launch's samples, the first time
    {
        std::lock_guard<std::mutex> lk(g_stateMu);
        for (const auto& [key, n] : agg) {
            const std::uint64_t crc = std::get<2>(key);
            if (g_cubinsWritten.count(crc)) continue;
            auto c = g_cubins.find(crc);
            if (c == g_cubins.end()) continue;
            g_cubinsWritten.insert(crc);
            cubins.emplace(crc, c->second);
        }
    }
    SinkWriter w;
    std::string& out = w.out();
    for (const auto& [crc, bytes] : cubins) {
        if (bytes.size() + 8 > kMaxRecordSize)
            appendStallNote(out, 0, "cubin " + std::to_string(crc) + " (" + std::to_string(bytes.size() >> 20)
                                        + " MiB) is larger than a sink record: its samples have no source lines");
        else
            appendStallCubin(out, crc, bytes);
    }
    const std::uint32_t nameId = w.string(a.name);
    for (const auto& [key, n] : agg) {
        const auto& [fn, pc, crc, reason] = key;
        StallSampleRec r{};
        r.pcOffset = pc;
        r.cubinCrc = crc;
        r.count = n;
        r.nameId = nameId;
        r.launchIndex = a.index;
        r.deviceId = a.device;
        r.functionId = w.string(fn);
        r.reasonId = w.string(reason);
        appendPod(out, RecType::StallSample, r);
    }
    StallLaunchRec l{};
    l.totalSamples = t.total;
    l.droppedSamples = t.dropped;
    l.nameId = nameId;
    l.launchIndex = a.index;
    l.deviceId = a.device;
    l.contextId = a.contextUid;
    l.status = std::int32_t(stopped);
    l.hardwareBufferFull = t.hardwareBufferFull ? 1 : 0;
    appendPod(out, RecType::StallLaunch, l);
}

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data)
{
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
        onModule(static_cast<const CUpti_ResourceData*>(data));
        return;
    }
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API || !isLaunch(cbid)) return;
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (cb->callbackSite == CUPTI_API_ENTER)
        onEnter(cbid, cb);
    else if (t_active.on)
        onExit();
}

}  // namespace

bool stallPassRequested()
{
    static const bool on = std::getenv("WARPSTAGE_STALL_KERNELS") != nullptr;
    return on;
}

void startStallPass()
{
    try {
        g_re = new std::regex(std::getenv("WARPSTAGE_STALL_KERNELS"));
    } catch (const std::regex_error& e) {
        note(1, std::string("bad WARPSTAGE_STALL_KERNELS: ") + e.what());
        return;
    }
    if (const char* r = std::getenv("WARPSTAGE_STALL_RANGE"); r && std::strchr(r, ':')) {
        g_first = std::atoll(r);
        g_last = std::atoll(std::strchr(r, ':') + 1);
    }
    if (const char* p = std::getenv("WARPSTAGE_STALL_PERIOD"); p && std::atoi(p) >= 5 && std::atoi(p) <= 31) g_period = std::atoi(p);
    if (const char* s = std::getenv("WARPSTAGE_STALL_SYNC"); s && !std::strcmp(s, "0")) g_sync = false;
    if (void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
        if (g_sync) g_ctxSync = reinterpret_cast<CtxSyncFn>(dlsym(h, "cuCtxSynchronize"));
        g_isCapturing = reinterpret_cast<IsCapturingFn>(dlsym(h, "cuStreamIsCapturing"));
    }
    CUpti_SubscriberHandle sub{};
    const CUptiResult r = cuptiSubscribe(&sub, onCallback, nullptr);
    if (r != CUPTI_SUCCESS) {
        note(int(r), "cuptiSubscribe: " + rec::cupti::resultText(linkedApi(), r)
                         + (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                                ? " (another CUPTI client in the program: the stall pass needs CUPTI's only subscriber slot)"
                                : std::string()));
        return;
    }
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
    for (CUpti_CallbackId cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid)
        if (isLaunch(cbid)) cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
}

void endStallPass()
{
    // From a signal handler the lock may be held by the interrupted thread: then no counts (the recorder
    // reads a stall sink without them as a process that did not end cleanly).
    std::unique_lock<std::mutex> lk(g_stateMu, std::try_to_lock);
    if (!lk.owns_lock()) return;
    SinkWriter w;
    for (const auto& [name, ns] : g_names) {
        if (!ns.match) continue;
        const std::uint32_t id = w.string(name);
        for (const auto& [dev, n] : ns.launches) {
            StallCountRec c{};
            c.nameId = id;
            c.deviceId = dev;
            c.launches = n;
            auto s = ns.sampled.find(dev);
            c.sampled = s == ns.sampled.end() ? 0 : s->second;
            appendPod(w.out(), RecType::StallCount, c);
        }
    }
}

}  // namespace ws::inject
