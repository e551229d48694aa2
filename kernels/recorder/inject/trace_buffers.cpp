// Trace buffers for users' instrumented kernels (<warpstage/trace.cuh>, issue 10), inside
// libwarpstage-inject.so: the recorder side of "the host program needs no change".
//
// A kernel compiled with the header has, in its module, the symbol warpstage_trace_control
// (ws::trace::Control: buffer pointer, magic, format version), and optionally warpstage_phase_names,
// warpstage_role_names and warpstage_trace_source. For every launch (CUPTI driver-API callbacks of
// cuLaunchKernel[Ex] / cuLaunchCooperativeKernel, which the runtime's launches go through too):
//
//   1. kernel name (demangled) matched against WARPSTAGE_TRACE_KERNELS (a std::regex, ECMAScript,
//      searched; unset = every instrumented kernel), its per-name launch index against
//      WARPSTAGE_TRACE_LAUNCHES "A:B" (inclusive; the index counts every launch of that name in the
//      context, as KernelLaunch::launchIndex does);
//   2. the module's control symbol, looked up once per function (cuFuncGetModule +
//      cuModuleGetGlobal, or cuKernelGetLibrary + cuLibraryGetGlobal for the runtime's CUkernel
//      handles): no symbol = not instrumented, nothing done; a format version this recorder cannot read
//      (isReadableVersion: newer than its own) = a TraceNote, nothing done (the kernel keeps running untraced); an
//      older one is traced under a buffer header of the kernel's version;
//   3. API_ENTER: cuCtxSynchronize (traced launches are serialized: nothing else runs while the control
//      word points at the buffer), a buffer of bufferBytes(grid, warps, WARPSTAGE_TRACE_EVENTS) bytes
//      (kept per context and reused), zeroed, its header written, the control word pointed at it,
//      cuCtxSynchronize;
//   4. API_EXIT: cuCtxSynchronize, the buffer copied back, the control word cleared, the raw buffer
//      streamed into the sink as TraceLaunch + TraceChunk records with the launch's correlation id.
// The recorder decodes them (sink_traces.cpp). Our own copies are made with CUPTI's MEMCPY/MEMSET
// activity switched off, so they do not appear in the program's timeline.
#include "trace_buffers.h"

#include "warpstage/sink_encode.h"
#include "warpstage/trace_format.h"

#include <cuda.h>
#include <cupti.h>

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

namespace ws::inject::tracebuf {

namespace {

using namespace ws::sink;

// Mirrors ws::trace::Control of trace.cuh (not included: it is a CUDA header).
struct Control {
    std::uint64_t buffer;
    std::uint32_t magic;
    std::uint32_t version;
};
static_assert(sizeof(Control) == 16);

struct FuncInfo {
    bool instrumented = false;
    CUdeviceptr control = 0;
    std::string name;        // mangled
    std::string demangled;
    std::vector<std::string> phaseNames, roleNames;
    std::string source;
    std::uint32_t version = 0;
};

struct CtxBuffer {
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
};

// The launch in flight between API_ENTER and API_EXIT on this thread.
struct Pending {
    bool active = false;
    const FuncInfo* fn = nullptr;
    CUcontext ctx = nullptr;
    CUdeviceptr buffer = 0;
    std::uint64_t bytes = 0;
    std::uint32_t ctas = 0, warps = 0, events = 0;
    std::uint32_t correlationId = 0;
    std::uint32_t streamId = 0;
};

SinkWriter g_write = nullptr;
std::mutex& g_mu = *new std::mutex;          // function cache, counters, notes
std::mutex& g_launchMu = *new std::mutex;    // held from ENTER to EXIT of a traced launch
// Per context and function: a runtime CUkernel handle is the same on every device, its globals are not.
std::map<std::pair<CUcontext, CUfunction>, FuncInfo>& g_funcs = *new std::map<std::pair<CUcontext, CUfunction>, FuncInfo>;
std::map<std::pair<CUcontext, std::string>, long long>& g_launchIdx = *new std::map<std::pair<CUcontext, std::string>, long long>;
std::map<CUcontext, CtxBuffer>& g_buffers = *new std::map<CUcontext, CtxBuffer>;
std::map<std::string, bool>& g_noted = *new std::map<std::string, bool>;
std::regex* g_regex = nullptr;
long long g_first = 0, g_last = -1;         // -1: no upper bound
std::uint32_t g_events = 2048;
std::uint64_t g_maxBytes = std::uint64_t(4096) << 20;
thread_local Pending t_pending;

void note(std::uint32_t corr, std::uint32_t device, const std::string& text, const std::string& onceKey = "")
{
    if (!onceKey.empty()) {
        std::lock_guard<std::mutex> lk(g_mu);
        if (g_noted[onceKey]) return;
        g_noted[onceKey] = true;
    }
    std::string out;
    appendTraceNote(out, corr, device, text);
    if (g_write) g_write(out);
}

std::string demangle(const char* n)
{
    if (!n) return "";
    int status = 0;
    char* d = abi::__cxa_demangle(n, nullptr, nullptr, &status);
    if (status != 0 || !d) return n;
    std::string s(d);
    std::free(d);
    return s;
}

std::vector<std::string> splitNames(const std::string& s)
{
    std::vector<std::string> out;
    std::size_t a = 0;
    while (a < s.size() && s[a] != '\0') {
        const auto z = s.find('\0', a);
        out.push_back(s.substr(a, z == std::string::npos ? std::string::npos : z - a));
        if (z == std::string::npos) break;
        a = z + 1;
    }
    return out;
}

// Our own memset/copies: kept out of the program's timeline.
struct QuietCopies {
    QuietCopies()
    {
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
    }
    ~QuietCopies()
    {
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    }
};

// A global of the function's module: the module (cuFuncGetModule) or, for the runtime's CUkernel
// handles, the library (cuKernelGetLibrary).
bool moduleGlobal(CUfunction f, const char* name, CUdeviceptr* ptr, std::size_t* bytes)
{
    CUmodule mod = nullptr;
    if (cuFuncGetModule(&mod, f) == CUDA_SUCCESS && mod && cuModuleGetGlobal(ptr, bytes, mod, name) == CUDA_SUCCESS) return true;
    CUlibrary lib = nullptr;
    if (cuKernelGetLibrary(&lib, reinterpret_cast<CUkernel>(f)) == CUDA_SUCCESS && lib
        && cuLibraryGetGlobal(ptr, bytes, lib, name) == CUDA_SUCCESS)
        return true;
    return false;
}

std::string readGlobalText(CUfunction f, const char* name)
{
    CUdeviceptr p = 0;
    std::size_t n = 0;
    if (!moduleGlobal(f, name, &p, &n) || n == 0 || n > (1u << 20)) return "";
    std::string s(n, '\0');
    if (cuMemcpyDtoH(s.data(), p, n) != CUDA_SUCCESS) return "";
    return s;
}

const FuncInfo& lookup(CUcontext ctx, CUfunction f, const char* symbolName)
{
    {
        std::lock_guard<std::mutex> lk(g_mu);
        auto it = g_funcs.find({ctx, f});
        if (it != g_funcs.end()) return it->second;
    }
    FuncInfo fi;
    const char* n = symbolName;
    if (!n || !*n) cuFuncGetName(&n, f);
    fi.name = n ? n : "";
    fi.demangled = demangle(n);
    CUdeviceptr ctl = 0;
    std::size_t bytes = 0;
    if (moduleGlobal(f, "warpstage_trace_control", &ctl, &bytes) && bytes >= sizeof(Control)) {
        cuCtxSynchronize();  // the program's copies in flight complete (and are recorded) before ours go quiet
        QuietCopies quiet;
        Control c{};
        if (cuMemcpyDtoH(&c, ctl, sizeof c) == CUDA_SUCCESS) {
            fi.control = ctl;
            fi.version = c.version;
            if (c.magic != trace::kMagic) {
                note(0, 0, "kernel " + fi.demangled + ": warpstage_trace_control has a wrong magic (not written by <warpstage/trace.cuh>): not traced",
                     "magic " + fi.name);
            } else if (!trace::isReadableVersion(c.version)) {
                note(0, 0, "kernel " + fi.demangled + " " + kTraceNoteVersionMismatch + " " + std::to_string(c.version)
                               + "; this recorder reads versions " + std::to_string(trace::kOldestFormatVersion) + " to "
                               + std::to_string(trace::kFormatVersion)
                               + ": not traced (rebuild the kernel against this Warpstage's <warpstage/trace.cuh>, or record with the matching warpstage-record)",
                     "version " + fi.name);
            } else {
                fi.instrumented = true;
                fi.phaseNames = splitNames(readGlobalText(f, "warpstage_phase_names"));
                fi.roleNames = splitNames(readGlobalText(f, "warpstage_role_names"));
                fi.source = readGlobalText(f, "warpstage_trace_source");
                fi.source.resize(std::strlen(fi.source.c_str()));
            }
        }
    }
    std::lock_guard<std::mutex> lk(g_mu);
    return g_funcs.emplace(std::make_pair(ctx, f), std::move(fi)).first->second;
}

std::uint32_t deviceOf(CUcontext ctx)
{
    std::uint32_t id = 0;
    cuptiGetDeviceId(ctx, &id);
    return id;
}

void onLaunchEnter(const CUpti_CallbackData* cb, CUfunction f, const unsigned grid[3], const unsigned block[3], CUstream stream)
{
    const FuncInfo& fn = lookup(cb->context, f, cb->symbolName);
    if (fn.name.empty()) return;
    long long idx = 0;
    {
        std::lock_guard<std::mutex> lk(g_mu);
        idx = g_launchIdx[{cb->context, fn.demangled}]++;
    }
    if (!fn.instrumented) return;
    const bool selected = (!g_regex || std::regex_search(fn.demangled, *g_regex) || std::regex_search(fn.name, *g_regex))
        && idx >= g_first && (g_last < 0 || idx <= g_last);
    const std::uint32_t dev = deviceOf(cb->context);
    if (!selected) {
        // An instrumented launch that is not traced must not start while a traced one holds the control word.
        std::lock_guard<std::mutex> wait(g_launchMu);
        return;
    }
    CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
    if (cuStreamIsCapturing(stream, &cap) == CUDA_SUCCESS && cap != CU_STREAM_CAPTURE_STATUS_NONE) {
        note(0, dev, "kernel " + fn.demangled + ": launches captured into a CUDA graph are not traced", "graph " + fn.name);
        return;
    }
    const std::uint32_t ctas = grid[0] * grid[1] * grid[2];
    const std::uint32_t warps = (block[0] * block[1] * block[2] + 31) / 32;
    std::uint32_t events = g_events;
    while (events > 64 && trace::bufferBytes(ctas, warps, events) > g_maxBytes) events /= 2;
    const std::uint64_t bytes = trace::bufferBytes(ctas, warps, events);
    if (bytes > g_maxBytes) {
        note(cb->correlationId, dev, "kernel " + fn.demangled + " launch #" + std::to_string(idx) + " not traced: even 64 events per warp need "
                                         + std::to_string(bytes >> 20) + " MiB (WARPSTAGE_TRACE_MAX_MB)");
        return;
    }
    if (events != g_events)
        note(cb->correlationId, dev, "kernel " + fn.demangled + " launch #" + std::to_string(idx) + ": capacity lowered to "
                                         + std::to_string(events) + " events per warp to fit " + std::to_string(g_maxBytes >> 20)
                                         + " MiB (--trace-events " + std::to_string(g_events) + " asked for)");
    g_launchMu.lock();  // released in onLaunchExit (same thread)
    CUresult r = cuCtxSynchronize();  // serialized: nothing of the program runs while the control word is set
    QuietCopies quiet;
    Pending p;
    p.fn = &fn;
    p.ctx = cb->context;
    p.ctas = ctas, p.warps = warps, p.events = events, p.bytes = bytes;
    p.correlationId = cb->correlationId;
    auto fail = [&](const char* what, CUresult r) {
        note(cb->correlationId, dev, "kernel " + fn.demangled + " launch #" + std::to_string(idx) + " not traced: " + what
                                         + " failed (CUDA error " + std::to_string(int(r)) + ")");
        g_launchMu.unlock();
    };
    if (r != CUDA_SUCCESS) return fail("cuCtxSynchronize", r);
    CtxBuffer& buf = g_buffers[cb->context];
    if (buf.bytes < bytes) {
        if (buf.ptr) cuMemFree(buf.ptr);
        buf = CtxBuffer{};
        if ((r = cuMemAlloc(&buf.ptr, bytes)) != CUDA_SUCCESS) return fail("allocating the trace buffer", r);
        buf.bytes = bytes;
        // zero once, whole: the event arrays stay zero where no launch wrote (trace_format.h, ClearRanges)
        if ((r = cuMemsetD8(buf.ptr, 0, bytes)) != CUDA_SUCCESS) return fail("clearing the new trace buffer", r);
    }
    p.buffer = buf.ptr;
    trace::TraceBufferHeader h{};
    h.magic = trace::kMagic;
    h.version = fn.version;  // the kernel's own (isReadableVersion): it writes only under a header of its version
    h.numCtas = ctas;
    h.warpsPerCta = warps;
    h.eventsPerWarp = events;
    // what the kernel does not rewrite: the CTA records and the warp regions' headers (trace::clearRanges)
    const trace::ClearRanges cr = trace::clearRanges(ctas, warps, events);
    if ((r = cuMemsetD8(p.buffer + cr.ctaOffset, 0, cr.ctaBytes)) != CUDA_SUCCESS
        || (r = cuMemsetD2D8(p.buffer + cr.headerOffset, cr.headerPitch, 0, cr.headerBytes, cr.headerRows)) != CUDA_SUCCESS)
        return fail("clearing the trace buffer", r);
    if ((r = cuMemcpyHtoD(p.buffer, &h, sizeof h)) != CUDA_SUCCESS) return fail("writing the buffer header", r);
    const std::uint64_t ptr = p.buffer;
    if ((r = cuMemcpyHtoD(fn.control, &ptr, sizeof ptr)) != CUDA_SUCCESS) return fail("setting the control word", r);
    if ((r = cuCtxSynchronize()) != CUDA_SUCCESS) return fail("cuCtxSynchronize", r);
    p.active = true;
    t_pending = p;
}

void onLaunchExit(const CUpti_CallbackData* cb)
{
    Pending p = t_pending;
    if (!p.active || p.correlationId != cb->correlationId) return;
    t_pending = Pending{};
    const std::uint32_t dev = deviceOf(p.ctx);
    const CUresult launched = cb->functionReturnValue ? *static_cast<const CUresult*>(cb->functionReturnValue) : CUDA_SUCCESS;
    std::string data(std::size_t(p.bytes), '\0');
    CUresult r = cuCtxSynchronize();
    QuietCopies quiet;
    const CUresult copied = r == CUDA_SUCCESS ? cuMemcpyDtoH(data.data(), p.buffer, p.bytes) : r;
    const std::uint64_t zero = 0;
    cuMemcpyHtoD(p.fn->control, &zero, sizeof zero);
    // the events this launch wrote back to zero, for the next launch's unfinished warps (trace_format.h, ClearRanges);
    // unreadable: all of it
    if (copied == CUDA_SUCCESS) {
        const trace::ClearRanges cr = trace::clearRanges(p.ctas, p.warps, p.events);
        const std::uint32_t n = trace::writtenEvents(data.data(), p.bytes, p.ctas, p.warps, p.events);
        if (n > 0)
            cuMemsetD2D8(p.buffer + cr.headerOffset + cr.headerBytes, cr.headerPitch, 0, std::size_t(n) * sizeof(trace::TraceEvent),
                         cr.headerRows);
    } else {
        cuMemsetD8(p.buffer, 0, p.bytes);
    }
    cuCtxSynchronize();
    g_launchMu.unlock();
    if (launched != CUDA_SUCCESS) {
        note(p.correlationId, dev, "kernel " + p.fn->demangled + ": the traced launch failed (CUDA error " + std::to_string(int(launched)) + ")");
        return;
    }
    if (copied != CUDA_SUCCESS) {
        note(p.correlationId, dev, "kernel " + p.fn->demangled + ": the trace buffer could not be read back (CUDA error "
                                       + std::to_string(int(copied)) + "; a kernel fault?)");
        return;
    }
    TraceLaunchRec rec{};
    rec.correlationId = p.correlationId;
    rec.deviceId = dev;
    cuptiGetContextId(p.ctx, &rec.contextId);
    rec.bufferBytes = p.bytes;
    rec.numCtas = p.ctas;
    rec.warpsPerCta = p.warps;
    rec.eventsPerWarp = p.events;
    rec.formatVersion = p.fn->version;
    std::string out;
    appendTraceLaunch(out, rec, p.fn->name, p.fn->phaseNames, p.fn->roleNames, p.fn->source, data.data(), data.size());
    if (g_write) g_write(out);
}

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data)
{
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        if (cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING || cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
            std::lock_guard<std::mutex> lk(g_mu);
            g_funcs.clear();  // handles may be reused by the next module
            if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
                const auto* rd = static_cast<const CUpti_ResourceData*>(data);
                g_buffers.erase(rd->context);  // freed with the context
            }
        }
        return;
    }
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (cb->callbackSite == CUPTI_API_EXIT) {
        onLaunchExit(cb);
        return;
    }
    unsigned grid[3], block[3];
    CUfunction f = nullptr;
    CUstream stream = nullptr;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
        const auto* a = static_cast<const cuLaunchKernel_params*>(cb->functionParams);
        f = a->f, stream = a->hStream;
        grid[0] = a->gridDimX, grid[1] = a->gridDimY, grid[2] = a->gridDimZ;
        block[0] = a->blockDimX, block[1] = a->blockDimY, block[2] = a->blockDimZ;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
        const auto* a = static_cast<const cuLaunchCooperativeKernel_params*>(cb->functionParams);
        f = a->f, stream = a->hStream;
        grid[0] = a->gridDimX, grid[1] = a->gridDimY, grid[2] = a->gridDimZ;
        block[0] = a->blockDimX, block[1] = a->blockDimY, block[2] = a->blockDimZ;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
        const auto* a = static_cast<const cuLaunchKernelEx_params*>(cb->functionParams);
        if (!a->config) return;
        f = a->f, stream = a->config->hStream;
        grid[0] = a->config->gridDimX, grid[1] = a->config->gridDimY, grid[2] = a->config->gridDimZ;
        block[0] = a->config->blockDimX, block[1] = a->config->blockDimY, block[2] = a->config->blockDimZ;
        break;
    }
    default:
        return;
    }
    if (f) onLaunchEnter(cb, f, grid, block, stream);
}

}  // namespace

void init(SinkWriter write)
{
    g_write = write;
    if (const char* off = std::getenv("WARPSTAGE_TRACE"); off && !std::strcmp(off, "0")) return;
    // Only with --kernels: a plain recording then subscribes to no CUPTI callback (no cost per launch, and the
    // process's one callback subscriber slot stays free for a profiler inside the program, e.g. torch.profiler).
    const char* re = std::getenv("WARPSTAGE_TRACE_KERNELS");
    if (!re || !*re) return;
    {
        try {
            g_regex = new std::regex(re);
        } catch (const std::regex_error& e) {
            note(0, 0, std::string("WARPSTAGE_TRACE_KERNELS '") + re + "' is not a regular expression (" + e.what() + "): nothing traced");
            return;
        }
    }
    if (const char* r = std::getenv("WARPSTAGE_TRACE_LAUNCHES"); r && *r) {
        char* end = nullptr;
        g_first = std::strtoll(r, &end, 10);
        g_last = (end && *end == ':') ? std::strtoll(end + 1, nullptr, 10) : g_first;
    }
    if (const char* n = std::getenv("WARPSTAGE_TRACE_EVENTS"); n && std::atol(n) >= 16) g_events = std::uint32_t(std::atol(n));
    if (const char* m = std::getenv("WARPSTAGE_TRACE_MAX_MB"); m && std::atol(m) >= 1) g_maxBytes = std::uint64_t(std::atol(m)) << 20;
    CUpti_SubscriberHandle sub = nullptr;
    const CUptiResult r = cuptiSubscribe(&sub, reinterpret_cast<CUpti_CallbackFunc>(onCallback), nullptr);
    if (r != CUPTI_SUCCESS) {
        const char* why = nullptr;
        cuptiGetResultString(r, &why);
        note(0, 0, std::string("instrumented kernels not traced: cannot subscribe to CUPTI callbacks (") + (why ? why : "?")
                       + "; another CUPTI subscriber in the process?)");
        return;
    }
    for (CUpti_CallbackId cbid : {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
                                  CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
                                  CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz})
        cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
}

}  // namespace ws::inject::tracebuf
