// libwarpstage-inject.so: the injection library of `warpstage-record -- PROGRAM` (docs/recording.md,
// "Record your program"). warpstage-record starts the program with
//   CUDA_INJECTION64_PATH = NVTX_INJECTION64_PATH = this library, WARPSTAGE_SINK = a folder;
// the CUDA driver calls InitializeInjection() at cuInit, NVTX calls InitializeInjectionNvtx2() at the
// first NVTX call. Children inherit the environment and load it themselves.
//
// Each process streams its records to $WARPSTAGE_SINK/<pid>-<ns>.wsink (warpstage/sink_format.h):
//   * CUPTI Activity API: DEVICE, CONTEXT, CONCURRENT_KERNEL, MEMCPY, MEMSET, and API records of the
//     runtime calls that launch, copy, set or synchronise plus the driver's launch calls (Triton and other
//     JITs launch with cuLaunchKernel: no runtime record) -- see enableApiRecords();
//     one write(2) per completed buffer (WARPSTAGE_BUFFER_KB, default 2048);
//   * a timer thread calls cuptiActivityFlushAll(0) every WARPSTAGE_FLUSH_MS (default 1000): CUPTI's own
//     periodic flush only hands back full buffers (device log, probe 2026-11-30);
//   * our own NVTX v3 injection (push/pop, start/end, mark, domain variants), stamped with
//     cuptiGetTimestamp() (the activity records' time base); it does not depend on which libcupti copy the
//     process loaded (torch brings its own), and catches ranges before CUDA initialises;
//   * atexit: cuptiActivityFlushAll(FORCED) + an End record; SIGTERM/SIGINT/SIGABRT/SIGSEGV/SIGBUS/SIGFPE
//     (only where the program left the default disposition): the same, then the default action.
// libcupti is linked by soname, so the copy already in the process (torch's) is the one used.
#include "inject_sink.h"
#include "trace_buffers.h"
#include "warpstage/sink_encode.h"

#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

using namespace ws::sink;

// Never destroyed: used from atexit, signal handlers and the flush thread while statics are torn down.
std::mutex& g_mu = *new std::mutex;
std::unordered_map<std::string, std::uint32_t>& g_strings = *new std::unordered_map<std::string, std::uint32_t>;
std::unordered_map<const void*, std::uint32_t>& g_namePtr = *new std::unordered_map<const void*, std::uint32_t>;
std::unordered_map<std::uint64_t, std::uint32_t>& g_apiNames = *new std::unordered_map<std::uint64_t, std::uint32_t>;
std::string& g_pending = *new std::string;  // NVTX events and their strings, not yet written (under g_mu)
std::uint32_t g_nextString = 1;
int g_fd = -1;
pid_t g_pid = 0;
std::once_flag g_openOnce;
std::atomic<bool> g_ended{false};
std::atomic<bool> g_cuptiUp{false};
std::atomic<bool> g_nvtxOff{false};  // --duration: the window is over
std::atomic<std::uint64_t> g_rangeId{1};
std::size_t g_bufBytes = 2u << 20;
bool g_keepDriver = true;
thread_local bool t_holdsLock = false;
thread_local int t_depth = 0;

struct Lock {
    Lock() { g_mu.lock(); t_holdsLock = true; }
    ~Lock() { t_holdsLock = false; g_mu.unlock(); }
};

std::uint64_t realNs()
{
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}
std::uint32_t osTid() { return std::uint32_t(syscall(SYS_gettid)); }
std::uint64_t cuptiNow()
{
    std::uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
}

void writeAll(const std::string& s)
{
    std::size_t off = 0;
    while (g_fd >= 0 && off < s.size()) {
        const ssize_t n = write(g_fd, s.data() + off, s.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        off += std::size_t(n);
    }
}

// Interns a string; a new one is appended to `out` as a String record. Caller holds g_mu.
std::uint32_t intern(std::string& out, std::string_view s)
{
    auto it = g_strings.find(std::string(s));
    if (it != g_strings.end()) return it->second;
    const std::uint32_t id = g_nextString++;
    g_strings.emplace(std::string(s), id);
    appendString(out, id, s);
    return id;
}

std::string readFile(const char* path)
{
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void onFork() { g_fd = -1; }
void atexitFlush();  // a forked child writes nothing into its parent's sink

bool openSink()
{
    std::call_once(g_openOnce, [] {
        const char* dir = std::getenv("WARPSTAGE_SINK");
        if (!dir || !*dir) return;
        g_pid = getpid();
        const std::string path = std::string(dir) + "/" + std::to_string(g_pid) + "-" + std::to_string(realNs()) + ".wsink";
        const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) return;
        if (const char* kb = std::getenv("WARPSTAGE_BUFFER_KB"); kb && std::atol(kb) >= 64) g_bufBytes = std::size_t(std::atol(kb)) << 10;
        if (const char* d = std::getenv("WARPSTAGE_DRIVER_API"); d && !std::strcmp(d, "0")) g_keepDriver = false;
        std::string out;
        appendFileHeader(out);
        ProcessRec p{};
        p.pid = g_pid;
        p.ppid = getppid();
        p.realtimeNs = realNs();
        p.cuptiNs = cuptiNow();
        char exe[4096] = {0};
        const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n < 0) exe[0] = 0;
        char cwd[4096] = {0};
        if (!getcwd(cwd, sizeof cwd - 1)) cwd[0] = 0;
        std::string cmd = readFile("/proc/self/cmdline");
        std::vector<std::string> argv;
        std::size_t a = 0;
        while (a < cmd.size()) {
            const auto z = cmd.find('\0', a);
            argv.push_back(cmd.substr(a, z == std::string::npos ? std::string::npos : z - a));
            if (z == std::string::npos) break;
            a = z + 1;
        }
        appendProcess(out, p, exe, cwd, argv);
        g_fd = fd;
        writeAll(out);
        pthread_atfork(nullptr, nullptr, onFork);
        // NVTX-only processes (and NVTX before cuInit) need the final write too; InitializeInjection registers
        // again, later, so that one runs first (before the CUDA runtime's own teardown); the second is a no-op.
        atexit(atexitFlush);
    });
    return g_fd >= 0 && getpid() == g_pid;
}

// ---------------------------------------------------------------- CUPTI activity
std::uint8_t memKind(std::uint32_t copyKind)
{
    switch (copyKind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return 1;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return 2;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return 3;
    default: return 5;
    }
}

bool keptDriverCall(std::uint32_t cbid)
{
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
        return true;
    default:
        return false;
    }
}

std::uint32_t apiName(std::string& out, bool driver, std::uint32_t cbid)
{
    const std::uint64_t key = (std::uint64_t(driver) << 32) | cbid;
    auto it = g_apiNames.find(key);
    if (it != g_apiNames.end()) return it->second;
    const char* name = nullptr;
    cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name);
    std::string n = name ? name : ("cbid " + std::to_string(cbid));
    if (const auto v = n.find("_v"); v != std::string::npos && v + 2 < n.size() && std::isdigit((unsigned char)n[v + 2])) n.resize(v);
    const std::uint32_t id = intern(out, n);
    g_apiNames.emplace(key, id);
    return id;
}

std::uint32_t kernelName(std::string& out, const char* name)
{
    if (!name) return 0;
    auto it = g_namePtr.find(name);
    if (it != g_namePtr.end()) return it->second;
    const std::uint32_t id = intern(out, name);
    g_namePtr.emplace(name, id);
    return id;
}

// API records: only the calls that launch work, copy, set memory or synchronise. PyTorch makes ~12 runtime
// calls per kernel (cudaGetDevice, cudaStreamIsCapturing, ...): recording all of them (RUNTIME + DRIVER
// kinds) cost 1.4x on a launch-bound training loop on the H200 (device log, 2026-11-30 05:00). Per-API
// enabling (cuptiActivityEnableRuntimeApi / EnableDriverApi, CUPTI 12.6+) is looked up at run time in the
// libcupti this library is bound to; without it, or with WARPSTAGE_API=all, the whole kinds are enabled.
bool wantedRuntimeApi(const char* n)
{
    return n && (std::strstr(n, "Launch") || std::strstr(n, "Memcpy") || std::strstr(n, "Memset") || std::strstr(n, "Synchronize"));
}

void enableApiRecords()
{
    using EnableApiFn = CUptiResult (*)(CUpti_CallbackId, std::uint8_t);
    EnableApiFn rt = nullptr, drv = nullptr;
    Dl_info di;
    if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &di) && di.dli_fname)
        if (void* h = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD)) {
            rt = reinterpret_cast<EnableApiFn>(dlsym(h, "cuptiActivityEnableRuntimeApi"));
            drv = reinterpret_cast<EnableApiFn>(dlsym(h, "cuptiActivityEnableDriverApi"));
        }
    const char* mode = std::getenv("WARPSTAGE_API");
    const bool all = mode && !std::strcmp(mode, "all");
    bool rtOk = rt && !all;
    if (rtOk) {
        int enabled = 0;
        for (CUpti_CallbackId cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && rtOk; ++cbid) {
            const char* name = nullptr;
            if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS || !wantedRuntimeApi(name)) continue;
            rtOk = rt(cbid, 1) == CUPTI_SUCCESS;
            ++enabled;
        }
        rtOk = rtOk && enabled > 0;
    }
    if (!rtOk) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (!g_keepDriver) return;
    bool drvOk = drv && !all;
    if (drvOk)
        for (CUpti_CallbackId cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && drvOk; ++cbid)
            if (keptDriverCall(cbid)) drvOk = drv(cbid, 1) == CUPTI_SUCCESS;
    if (!drvOk) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
}

void CUPTIAPI bufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* maxNumRecords)
{
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, g_bufBytes));
    *size = *buffer ? g_bufBytes : 0;
    *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext ctx, std::uint32_t streamId, std::uint8_t* buffer, std::size_t, std::size_t validSize)
{
    std::string out;
    out.reserve(validSize / 2 + 256);
    std::uint32_t nrec = 0;
    {
        Lock lk;
        out.swap(g_pending);  // NVTX events (and their strings) first
        CUpti_Activity* rec = nullptr;
        while (validSize && cuptiActivityGetNextRecord(buffer, validSize, &rec) == CUPTI_SUCCESS) {
            ++nrec;
            switch (rec->kind) {
            case CUPTI_ACTIVITY_KIND_KERNEL:
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
                auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(rec);
                KernelRec r{};
                r.start = k->start;
                r.end = k->end;
                r.graphNodeId = k->graphNodeId;
                r.deviceId = k->deviceId;
                r.contextId = k->contextId;
                r.streamId = k->streamId;
                r.correlationId = k->correlationId;
                r.graphId = k->graphId;
                r.nameId = kernelName(out, k->name);
                r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
                r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
                r.cluster[0] = int(k->clusterX), r.cluster[1] = int(k->clusterY), r.cluster[2] = int(k->clusterZ);
                r.registers = k->registersPerThread;
                r.staticSmem = k->staticSharedMemory;
                r.dynamicSmem = k->dynamicSharedMemory;
                appendPod(out, RecType::Kernel, r);
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(rec);
                MemRec r{};
                r.start = m->start, r.end = m->end, r.bytes = m->bytes, r.graphNodeId = m->graphNodeId;
                r.deviceId = m->deviceId, r.contextId = m->contextId, r.streamId = m->streamId;
                r.correlationId = m->correlationId, r.graphId = m->graphId;
                r.kind = memKind(m->copyKind);
                appendPod(out, RecType::Mem, r);
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(rec);
                MemRec r{};
                r.start = m->start, r.end = m->end, r.bytes = m->bytes, r.graphNodeId = m->graphNodeId;
                r.deviceId = m->deviceId, r.contextId = m->contextId, r.streamId = m->streamId;
                r.correlationId = m->correlationId, r.graphId = m->graphId;
                r.kind = 4;
                appendPod(out, RecType::Mem, r);
                break;
            }
            case CUPTI_ACTIVITY_KIND_RUNTIME:
            case CUPTI_ACTIVITY_KIND_DRIVER: {
                auto* a = reinterpret_cast<CUpti_ActivityAPI*>(rec);
                const bool driver = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER;
                if (driver && !keptDriverCall(a->cbid)) break;
                ApiRec r{};
                r.start = a->start, r.end = a->end;
                r.cbid = a->cbid, r.correlationId = a->correlationId, r.threadId = a->threadId;
                r.nameId = apiName(out, driver, a->cbid);
                r.result = std::int32_t(a->returnValue);
                r.driver = driver ? 1 : 0;
                appendPod(out, RecType::Api, r);
                break;
            }
            case CUPTI_ACTIVITY_KIND_DEVICE: {
                auto* d = reinterpret_cast<CUpti_ActivityDevice5*>(rec);
                DeviceRec r{};
                r.id = d->id;
                r.nameId = d->name ? intern(out, d->name) : 0;
                r.ccMajor = int(d->computeCapabilityMajor), r.ccMinor = int(d->computeCapabilityMinor);
                r.smCount = int(d->numMultiprocessors);
                r.coreClockKHz = int(d->coreClockRate);
                r.globalMemBytes = std::int64_t(d->globalMemorySize);
                r.l2Bytes = std::int64_t(d->l2CacheSize);
                std::memcpy(r.uuid, &d->uuid, sizeof r.uuid);
                appendPod(out, RecType::Device, r);
                break;
            }
            case CUPTI_ACTIVITY_KIND_CONTEXT: {
                auto* c = reinterpret_cast<CUpti_ActivityContext3*>(rec);
                ContextRec r{};
                r.contextId = c->contextId, r.deviceId = c->deviceId, r.nullStreamId = c->nullStreamId;
                appendPod(out, RecType::Context, r);
                break;
            }
            default:
                break;
            }
        }
        std::size_t dropped = 0;
        if (ctx) cuptiActivityGetNumDroppedRecords(ctx, streamId, &dropped);
        FlushRec f{realNs(), dropped, nrec, 0};
        appendPod(out, RecType::Flush, f);
        writeAll(out);  // one write(2) per completed buffer: on disk now, whatever happens to the process
    }
    std::free(buffer);
}

void writePending()
{
    Lock lk;
    if (g_pending.empty()) return;
    std::string s;
    s.swap(g_pending);
    writeAll(s);
}

void finish(EndReason why, int sig)
{
    if (getpid() != g_pid || g_fd < 0) return;
    if (g_ended.exchange(true)) return;
    if (g_cuptiUp.load()) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (ws::inject::stallPassRequested() && !t_holdsLock) ws::inject::endStallPass();
    std::string out;
    EndRec e{realNs(), cuptiNow(), std::uint32_t(why), sig};
    appendPod(out, RecType::End, e);
    Lock lk;
    g_pending += out;
    std::string s;
    s.swap(g_pending);
    writeAll(s);
}

void atexitFlush() { finish(EndReason::Exit, 0); }

struct sigaction g_oldActions[65];
void onFatalSignal(int sig)
{
    // Not async-signal-safe in general (CUPTI's flush allocates), but the process is ending anyway and the
    // alternative is losing the last second. Skipped if this very thread was inside our own writer.
    if (!t_holdsLock) finish(EndReason::Signal, sig);
    sigaction(sig, &g_oldActions[sig], nullptr);
    raise(sig);
}

void installSignalHandlers()
{
    for (int sig : {SIGTERM, SIGINT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGHUP}) {
        struct sigaction cur{};
        if (sigaction(sig, nullptr, &cur) != 0) continue;
        if (cur.sa_handler != SIG_DFL || (cur.sa_flags & SA_SIGINFO)) continue;  // the program's own handler stays
        struct sigaction sa{};
        sa.sa_handler = onFatalSignal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        g_oldActions[sig] = cur;
        sigaction(sig, &sa, nullptr);
    }
}

// ---------------------------------------------------------------- own NVTX injection
struct DomainH { std::uint32_t nameId; };
struct StringH { std::uint32_t id; };

void nvtxEvent(NvtxOp op, std::uint64_t rangeId, const DomainH* d, const char* name, std::uint32_t nameId,
               const nvtxEventAttributes_t* a)
{
    if (g_fd < 0 || g_ended.load() || g_nvtxOff.load(std::memory_order_relaxed)) return;
    NvtxRec r{};
    r.timestamp = cuptiNow();
    r.rangeId = rangeId;
    r.threadId = osTid();
    r.domainId = d ? d->nameId : 0;
    r.op = std::uint8_t(op);
    if (a) {
        if (a->colorType == NVTX_COLOR_ARGB) r.color = a->color;
        r.category = a->category;
    }
    Lock lk;
    if (name) nameId = intern(g_pending, name);
    r.nameId = nameId;
    appendPod(g_pending, RecType::Nvtx, r);
    if (g_pending.size() > (256u << 10)) {
        writeAll(g_pending);
        g_pending.clear();
    }
}

void attrName(const nvtxEventAttributes_t* a, const char** name, std::uint32_t* id)
{
    *name = nullptr;
    *id = 0;
    if (!a) return;
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) *name = a->message.ascii ? a->message.ascii : "";
    else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered)
        *id = reinterpret_cast<const StringH*>(a->message.registered)->id;
    else *name = "<unicode>";
}

int myPushA(const char* m) { nvtxEvent(NvtxOp::Push, 0, nullptr, m ? m : "", 0, nullptr); return t_depth++; }
int myPushEx(const nvtxEventAttributes_t* a)
{
    const char* n; std::uint32_t id; attrName(a, &n, &id);
    nvtxEvent(NvtxOp::Push, 0, nullptr, n, id, a);
    return t_depth++;
}
int myPop() { nvtxEvent(NvtxOp::Pop, 0, nullptr, nullptr, 0, nullptr); return t_depth > 0 ? --t_depth : -1; }
nvtxRangeId_t myStartA(const char* m) { const auto id = g_rangeId++; nvtxEvent(NvtxOp::Start, id, nullptr, m ? m : "", 0, nullptr); return id; }
nvtxRangeId_t myStartEx(const nvtxEventAttributes_t* a)
{
    const auto rid = g_rangeId++;
    const char* n; std::uint32_t id; attrName(a, &n, &id);
    nvtxEvent(NvtxOp::Start, rid, nullptr, n, id, a);
    return rid;
}
void myEnd(nvtxRangeId_t id) { nvtxEvent(NvtxOp::End, id, nullptr, nullptr, 0, nullptr); }
void myMarkA(const char* m) { nvtxEvent(NvtxOp::Mark, 0, nullptr, m ? m : "", 0, nullptr); }
void myMarkEx(const nvtxEventAttributes_t* a) { const char* n; std::uint32_t id; attrName(a, &n, &id); nvtxEvent(NvtxOp::Mark, 0, nullptr, n, id, a); }
nvtxDomainHandle_t myDomainCreateA(const char* name)
{
    auto* d = new DomainH{0};
    if (g_fd >= 0) {
        Lock lk;
        d->nameId = intern(g_pending, name ? name : "");
    }
    return reinterpret_cast<nvtxDomainHandle_t>(d);
}
void myDomainDestroy(nvtxDomainHandle_t) {}  // handles stay valid: events may still name them
nvtxStringHandle_t myRegisterStringA(nvtxDomainHandle_t, const char* s)
{
    auto* h = new StringH{0};
    if (g_fd >= 0) {
        Lock lk;
        h->id = intern(g_pending, s ? s : "");
    }
    return reinterpret_cast<nvtxStringHandle_t>(h);
}
const DomainH* dom(nvtxDomainHandle_t d) { return reinterpret_cast<const DomainH*>(d); }
int myDomainPushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a)
{
    const char* n; std::uint32_t id; attrName(a, &n, &id);
    nvtxEvent(NvtxOp::Push, 0, dom(d), n, id, a);
    return t_depth++;
}
int myDomainPop(nvtxDomainHandle_t d) { nvtxEvent(NvtxOp::Pop, 0, dom(d), nullptr, 0, nullptr); return t_depth > 0 ? --t_depth : -1; }
nvtxRangeId_t myDomainStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a)
{
    const auto rid = g_rangeId++;
    const char* n; std::uint32_t id; attrName(a, &n, &id);
    nvtxEvent(NvtxOp::Start, rid, dom(d), n, id, a);
    return rid;
}
void myDomainEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) { nvtxEvent(NvtxOp::End, id, dom(d), nullptr, 0, nullptr); }
void myDomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a)
{
    const char* n; std::uint32_t id; attrName(a, &n, &id);
    nvtxEvent(NvtxOp::Mark, 0, dom(d), n, id, a);
}

template <class F>
void setEntry(NvtxFunctionTable t, unsigned size, unsigned idx, F f)
{
    if (!t || idx >= size || !t[idx]) return;
    *t[idx] = reinterpret_cast<NvtxFunctionPointer>(f);
}

}  // namespace

namespace ws::inject {
SinkWriter::SinkWriter()
{
    g_mu.lock();
    t_holdsLock = true;
    m_out.swap(g_pending);  // NVTX events (and their strings) first
}
SinkWriter::~SinkWriter()
{
    writeAll(m_out);
    t_holdsLock = false;
    g_mu.unlock();
}
std::uint32_t SinkWriter::string(std::string_view s) { return intern(m_out, s); }
}  // namespace ws::inject

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable)
{
    if (!openSink()) return 0;  // not under warpstage-record: NVTX stays a no-op
    if (ws::inject::stallPassRequested()) return 0;  // the stall pass records no NVTX
    auto* cb = reinterpret_cast<const NvtxExportTableCallbacks*>(getExportTable(NVTX_ETID_CALLBACKS));
    if (!cb || !cb->GetModuleFunctionTable) return 0;
    NvtxFunctionTable t = nullptr;
    unsigned size = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &size)) {
        setEntry(t, size, NVTX_CBID_CORE_RangePushA, &myPushA);
        setEntry(t, size, NVTX_CBID_CORE_RangePushEx, &myPushEx);
        setEntry(t, size, NVTX_CBID_CORE_RangePop, &myPop);
        setEntry(t, size, NVTX_CBID_CORE_RangeStartA, &myStartA);
        setEntry(t, size, NVTX_CBID_CORE_RangeStartEx, &myStartEx);
        setEntry(t, size, NVTX_CBID_CORE_RangeEnd, &myEnd);
        setEntry(t, size, NVTX_CBID_CORE_MarkA, &myMarkA);
        setEntry(t, size, NVTX_CBID_CORE_MarkEx, &myMarkEx);
    }
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &size)) {
        setEntry(t, size, NVTX_CBID_CORE2_DomainCreateA, &myDomainCreateA);
        setEntry(t, size, NVTX_CBID_CORE2_DomainDestroy, &myDomainDestroy);
        setEntry(t, size, NVTX_CBID_CORE2_DomainRegisterStringA, &myRegisterStringA);
        setEntry(t, size, NVTX_CBID_CORE2_DomainRangePushEx, &myDomainPushEx);
        setEntry(t, size, NVTX_CBID_CORE2_DomainRangePop, &myDomainPop);
        setEntry(t, size, NVTX_CBID_CORE2_DomainRangeStartEx, &myDomainStartEx);
        setEntry(t, size, NVTX_CBID_CORE2_DomainRangeEnd, &myDomainEnd);
        setEntry(t, size, NVTX_CBID_CORE2_DomainMarkEx, &myDomainMarkEx);
    }
    return 1;
}

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void)
{
    if (!openSink()) return 1;  // not under warpstage-record: do nothing, let the program run
    if (ws::inject::stallPassRequested()) {  // the second run: PC sampling only, no Activity API
        ws::inject::startStallPass();
        atexit(atexitFlush);
        installSignalHandlers();
        return 1;
    }
    cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
    for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                 CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET})
        cuptiActivityEnable(k);
    enableApiRecords();
    // Per-warp trace buffers of instrumented kernels (issue 10): trace_buffers.cpp.
    ws::inject::tracebuf::init([](const std::string& records) {
        Lock lk;
        writeAll(records);
    });
    g_cuptiUp = true;
    atexit(atexitFlush);
    installSignalHandlers();
    long ms = 1000;
    if (const char* f = std::getenv("WARPSTAGE_FLUSH_MS"); f && std::atol(f) >= 50) ms = std::atol(f);
    // --duration S: stop collecting S seconds after CUDA initialised (the recorder cuts the exact window,
    // counted from the process's first record, afterwards; this only saves the cost of recording past it).
    double stopAfter = 0;
    if (const char* d = std::getenv("WARPSTAGE_DURATION_S"); d && std::atof(d) > 0) stopAfter = std::atof(d);
    std::thread([ms, stopAfter] {
        const auto t0 = std::chrono::steady_clock::now();
        bool stopped = false;
        while (!g_ended.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
            if (g_ended.load() || getpid() != g_pid) break;
            if (!stopped && stopAfter > 0
                && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > stopAfter) {
                stopped = true;
                g_nvtxOff = true;
                for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                             CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER})
                    cuptiActivityDisable(k);
            }
            cuptiActivityFlushAll(0);
            writePending();
        }
    }).detach();
    return 1;
}
