// libwsinject.so: a probe CUPTI injection library (CUDA_INJECTION64_PATH) that is also an NVTX injection
// library (NVTX_INJECTION64_PATH). Throwaway experiment for the injection-based recorder, not the recorder.
//
// Each process writes one text file $WARPSTAGE_SINK/<pid>.txt (default /tmp), appended with write(2) as soon as
// CUPTI hands back a completed buffer. Line types (first token):
//   H pid ppid exe            I key=value (init facts)        T cupti realtime monotonic (clock comparison)
//   B mono_ns nrec dropped    E event (atexit, destructor, flush thread, errors)
//   K start end corr stream graphId graphNodeId name          (kernel)
//   C copyKind bytes start end corr graphId graphNodeId       (memcpy)      S bytes start end corr (memset)
//   R|D cbid start end corr tid name                          (runtime / driver API)
//   G start end corr graphId stream                           (graph trace)
//   M flags ts id objKind tid domain name                     (CUPTI marker)  MD id color category
//   N op ts tid depth domain name                             (our own NVTX injection)
// Environment:
//   WARPSTAGE_SINK=dir   WS_FLUSH=period:MS|thread:MS|none (default period:1000)   WS_DRIVER=1
//   WS_GRAPH_TRACE=1 (enable GRAPH_TRACE before kernels)   WS_NO_MARKER=1
//   WS_NVTX=own|cupti   what InitializeInjectionNvtx2 does when NVTX loads this library:
//     own: record ranges ourselves; cupti: forward to InitializeInjectionNvtx2 of the libcupti this library
//     is linked to (so CUPTI makes MARKER records). (Wrapping CUPTI's table entries with ours was tried here
//     and recursed forever: CUPTI's handlers call back through the NVTX table. Not kept.)
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {
int g_fd = -1;
std::once_flag g_sinkOnce;
std::mutex g_nvtxMutex;
std::string& g_nvtxPending = *new std::string;  // own NVTX lines not yet written (never destroyed: used at exit)
std::atomic<bool> g_cuptiUp{false};
size_t g_bufBytes = 4u << 20;

uint64_t monoNs()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}
uint64_t realNs()
{
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}
unsigned tid() { return unsigned(syscall(SYS_gettid)); }

void writeAll(const std::string& s)
{
    size_t off = 0;
    while (off < s.size()) {
        ssize_t n = write(g_fd, s.data() + off, s.size() - off);
        if (n <= 0) return;
        off += size_t(n);
    }
}
void line(const char* fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0 && g_fd >= 0) writeAll(std::string(buf, std::min<size_t>(size_t(n), sizeof buf - 1)));
}

void openSink()
{
    std::call_once(g_sinkOnce, [] {
        const char* dir = getenv("WARPSTAGE_SINK");
        std::string path = std::string(dir && *dir ? dir : "/tmp") + "/" + std::to_string(getpid()) + ".txt";
        g_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        char exe[512] = {0};
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n < 0) exe[0] = 0;
        line("H %d %d %s\n", int(getpid()), int(getppid()), exe);
        Dl_info di;
        if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &di) && di.dli_fname)
            line("I cupti_path=%s\n", di.dli_fname);
        if (const char* p = getenv("NVTX_INJECTION64_PATH")) line("I nvtx_injection=%s\n", p);
    });
}

void clockLine(const char* when)
{
    uint64_t c = 0;
    uint64_t r0 = realNs(), m0 = monoNs();
    cuptiGetTimestamp(&c);
    uint64_t r1 = realNs();
    line("T %s cupti=%" PRIu64 " realtime=%" PRIu64 " monotonic=%" PRIu64 " cupti-realtime=%" PRId64 " cupti-monotonic=%" PRId64 "\n",
         when, c, (r0 + r1) / 2, m0, int64_t(c - (r0 + r1) / 2), int64_t(c - m0));
}

void flushNvtxPending()
{
    std::string s;
    {
        std::lock_guard<std::mutex> lk(g_nvtxMutex);
        s.swap(g_nvtxPending);
    }
    if (!s.empty()) writeAll(s);
}

// ---------------------------------------------------------------- CUPTI activity
void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords)
{
    *buffer = static_cast<uint8_t*>(aligned_alloc(8, g_bufBytes));
    *size = *buffer ? g_bufBytes : 0;
    *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext ctx, uint32_t streamId, uint8_t* buffer, size_t, size_t validSize)
{
    std::string out;
    out.reserve(validSize);
    char b[1200];
    size_t nrec = 0;
    CUpti_Activity* rec = nullptr;
    while (cuptiActivityGetNextRecord(buffer, validSize, &rec) == CUPTI_SUCCESS) {
        ++nrec;
        int n = 0;
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(rec);
            n = snprintf(b, sizeof b, "K %" PRIu64 " %" PRIu64 " %u %u %u %" PRIu64 " %.900s\n", k->start, k->end, k->correlationId,
                         k->streamId, k->graphId, k->graphNodeId, k->name ? k->name : "?");
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(rec);
            n = snprintf(b, sizeof b, "C %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %u %" PRIu64 "\n", unsigned(m->copyKind), m->bytes,
                         m->start, m->end, m->correlationId, m->graphId, m->graphNodeId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(rec);
            n = snprintf(b, sizeof b, "S %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n", m->bytes, m->start, m->end, m->correlationId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
            auto* a = reinterpret_cast<CUpti_ActivityAPI*>(rec);
            const char* name = nullptr;
            cuptiGetCallbackName(rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
                                 a->cbid, &name);
            n = snprintf(b, sizeof b, "%c %u %" PRIu64 " %" PRIu64 " %u %u %s\n", rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? 'R' : 'D',
                         unsigned(a->cbid), a->start, a->end, a->correlationId, a->threadId, name ? name : "?");
            break;
        }
        case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
            auto* g = reinterpret_cast<CUpti_ActivityGraphTrace2*>(rec);
            n = snprintf(b, sizeof b, "G %" PRIu64 " %" PRIu64 " %u %u %u\n", g->start, g->end, g->correlationId, g->graphId, g->streamId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MARKER: {
            auto* m = reinterpret_cast<CUpti_ActivityMarker2*>(rec);
            n = snprintf(b, sizeof b, "M 0x%x %" PRIu64 " %u %u %u %s %.900s\n", unsigned(m->flags), m->timestamp, m->id,
                         unsigned(m->objectKind), m->objectId.pt.threadId, m->domain ? m->domain : "-", m->name ? m->name : "-");
            break;
        }
        case CUPTI_ACTIVITY_KIND_MARKER_DATA: {
            auto* m = reinterpret_cast<CUpti_ActivityMarkerData2*>(rec);
            n = snprintf(b, sizeof b, "MD %u 0x%x %u\n", m->id, m->color, m->category);
            break;
        }
        default:
            n = snprintf(b, sizeof b, "U %d\n", int(rec->kind));
            break;
        }
        if (n > 0) out.append(b, std::min<size_t>(size_t(n), sizeof b - 1));
    }
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(ctx, streamId, &dropped);
    int n = snprintf(b, sizeof b, "B %" PRIu64 " %zu %zu\n", monoNs(), nrec, dropped);
    out.append(b, size_t(n));
    writeAll(out);  // one write(2) per completed buffer: on disk as soon as CUPTI hands it back
    free(buffer);
    flushNvtxPending();
}

void atexitFlush()
{
    line("E atexit-begin %" PRIu64 "\n", monoNs());
    clockLine("exit");
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    flushNvtxPending();
    line("E atexit-end %" PRIu64 "\n", monoNs());
}

__attribute__((destructor)) void onUnload()
{
    if (g_fd < 0) return;
    flushNvtxPending();
    line("E destructor %" PRIu64 "\n", monoNs());
}

void enableKind(CUpti_ActivityKind k, const char* name)
{
    CUptiResult r = cuptiActivityEnable(k);
    const char* s = nullptr;
    cuptiGetResultString(r, &s);
    line("I enable %s=%s\n", name, r == CUPTI_SUCCESS ? "ok" : (s ? s : "error"));
}

// ---------------------------------------------------------------- own NVTX injection
thread_local int t_depth = 0;
std::atomic<uint64_t> g_rangeId{1};

uint64_t nowTs()
{
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
}
void nvtxEvent(const char* op, int depth, const char* domain, const char* name)
{
    char b[600];
    int n = snprintf(b, sizeof b, "N %s %" PRIu64 " %u %d %s %.500s\n", op, nowTs(), tid(), depth, domain ? domain : "-", name ? name : "-");
    if (n <= 0) return;
    std::lock_guard<std::mutex> lk(g_nvtxMutex);
    g_nvtxPending.append(b, std::min<size_t>(size_t(n), sizeof b - 1));
    if (g_nvtxPending.size() > (64u << 10)) {
        writeAll(g_nvtxPending);
        g_nvtxPending.clear();
    }
}
const char* attrName(const nvtxEventAttributes_t* a)
{
    if (!a) return "-";
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) return a->message.ascii;
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) return reinterpret_cast<const char*>(a->message.registered);
    return "<non-ascii>";
}
const char* domName(nvtxDomainHandle_t d) { return d ? reinterpret_cast<const char*>(d) : "-"; }

int myPushA(const char* m) { nvtxEvent("push", ++t_depth, nullptr, m); return t_depth - 1; }
int myPushEx(const nvtxEventAttributes_t* a) { nvtxEvent("push", ++t_depth, nullptr, attrName(a)); return t_depth - 1; }
int myPop() { nvtxEvent("pop", t_depth, nullptr, nullptr); if (t_depth > 0) --t_depth; return t_depth; }
nvtxRangeId_t startCommon(const char* m)
{
    uint64_t id = g_rangeId++;
    char b[40];
    snprintf(b, sizeof b, "start:%" PRIu64, id);
    nvtxEvent(b, 0, nullptr, m);
    return id;
}
nvtxRangeId_t myStartA(const char* m) { auto id = startCommon(m); return id; }
nvtxRangeId_t myStartEx(const nvtxEventAttributes_t* a) { auto id = startCommon(attrName(a)); return id; }
void myEnd(nvtxRangeId_t id)
{
    char b[40];
    snprintf(b, sizeof b, "end:%" PRIu64, uint64_t(id));
    nvtxEvent(b, 0, nullptr, nullptr);
}
void myMarkA(const char* m) { nvtxEvent("mark", t_depth, nullptr, m); }
void myMarkEx(const nvtxEventAttributes_t* a) { nvtxEvent("mark", t_depth, nullptr, attrName(a)); }
nvtxDomainHandle_t myDomainCreateA(const char* n) { return reinterpret_cast<nvtxDomainHandle_t>(strdup(n ? n : "")); }
void myDomainDestroy(nvtxDomainHandle_t) {}
nvtxStringHandle_t myRegisterStringA(nvtxDomainHandle_t, const char* s) { return reinterpret_cast<nvtxStringHandle_t>(strdup(s ? s : "")); }
int myDomainPushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { nvtxEvent("push", ++t_depth, domName(d), attrName(a)); return t_depth - 1; }
int myDomainPop(nvtxDomainHandle_t d) { nvtxEvent("pop", t_depth, domName(d), nullptr); if (t_depth > 0) --t_depth; return t_depth; }
nvtxRangeId_t myDomainStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a)
{
    uint64_t id = g_rangeId++;
    char b[40];
    snprintf(b, sizeof b, "start:%" PRIu64, id);
    nvtxEvent(b, 0, domName(d), attrName(a));
    return id;
}
void myDomainEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    char b[40];
    snprintf(b, sizeof b, "end:%" PRIu64, uint64_t(id));
    nvtxEvent(b, 0, domName(d), nullptr);
}
void myDomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { nvtxEvent("mark", t_depth, domName(d), attrName(a)); }

template <class F>
void setEntry(NvtxFunctionTable t, unsigned size, unsigned idx, F f)
{
    if (!t || idx >= size || !t[idx]) return;
    *t[idx] = reinterpret_cast<NvtxFunctionPointer>(f);
}

using CuptiNvtxInit = int (*)(NvtxGetExportTableFunc_t);
int forwardToCupti(NvtxGetExportTableFunc_t get)
{
    Dl_info di;
    if (!dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &di) || !di.dli_fname) return 0;
    void* h = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    auto f = h ? reinterpret_cast<CuptiNvtxInit>(dlsym(h, "InitializeInjectionNvtx2")) : nullptr;
    int r = f ? f(get) : -1;
    line("I nvtx_forward lib=%s rc=%d\n", di.dli_fname, r);
    return r;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable)
{
    openSink();
    const char* mode = getenv("WS_NVTX");
    std::string m = mode ? mode : "own";
    line("I nvtx_init mode=%s t=%" PRIu64 " cupti_up=%d\n", m.c_str(), monoNs(), int(g_cuptiUp.load()));
    if (m == "cupti") return forwardToCupti(getExportTable) > 0 ? 1 : 0;
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
        line("I nvtx_core_table size=%u\n", size);
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
        line("I nvtx_core2_table size=%u\n", size);
    }
    return 1;
}

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void)
{
    openSink();
    line("I cuda_init t=%" PRIu64 "\n", monoNs());
    clockLine("init");
    if (const char* kb = getenv("WS_BUF_KB")) g_bufBytes = size_t(atol(kb)) << 10;
    cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
    if (getenv("WS_GRAPH_TRACE")) enableKind(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "GRAPH_TRACE");
    enableKind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL");
    enableKind(CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY");
    enableKind(CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET");
    enableKind(CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME");
    if (getenv("WS_DRIVER")) enableKind(CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER");
    if (!getenv("WS_NO_MARKER")) {
        enableKind(CUPTI_ACTIVITY_KIND_MARKER, "MARKER");
        enableKind(CUPTI_ACTIVITY_KIND_MARKER_DATA, "MARKER_DATA");
    }
    std::string flush = getenv("WS_FLUSH") ? getenv("WS_FLUSH") : "period:1000";
    unsigned ms = flush.find(':') != std::string::npos ? unsigned(atoi(flush.c_str() + flush.find(':') + 1)) : 1000;
    if (flush.rfind("period", 0) == 0) {
        CUptiResult r = cuptiActivityFlushPeriod(ms);
        line("I flush_period %u rc=%d\n", ms, int(r));
    } else if (flush.rfind("thread", 0) == 0) {
        std::thread([ms] {
            for (;;) {
                std::this_thread::sleep_for(std::chrono::milliseconds(ms));
                cuptiActivityFlushAll(0);
                flushNvtxPending();
            }
        }).detach();
        line("I flush_thread %u\n", ms);
    }
    atexit(atexitFlush);
    g_cuptiUp = true;
    return 1;
}
