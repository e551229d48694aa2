// The recorder: pass 1 in this process, pass 2 in a child, one committed run per rung.
// See warpstage/recorder.h and docs/recording.md.
#include "warpstage/recorder.h"

#include "activity.h"
#include "host_info.h"
#include "cupti_api.h"
#include "gemm_data.h"
#include "ladder_tiles.h"
#include "warpstage/analysis.h"
#include "warpstage/decode.h"
#include "warpstage/ladder_sources.h"
#include "warpstage/rung_plan.h"
#include "warpstage/sink_reader.h"
#include "warpstage/stage_map.h"
#include "warpstage/store.h"
#include "warpstage/trace_format.h"

#include <cuda_runtime.h>

#include <cxxabi.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

extern char** environ;

#ifndef WARPSTAGE_SOURCE_DIR
#define WARPSTAGE_SOURCE_DIR ""
#endif

namespace ws::rec {

namespace {

std::string cudaText(cudaError_t e)
{
    return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

std::string demangle(const std::string& n)
{
    int status = 0;
    char* d = abi::__cxa_demangle(n.c_str(), nullptr, nullptr, &status);
    if (status != 0 || !d) return n;
    std::string s(d);
    std::free(d);
    return s;
}

bool fileExists(const std::string& p)
{
    struct stat st{};
    return ::stat(p.c_str(), &st) == 0;
}

std::string driverVersionText()
{
    // The kernel module's version ("580.159.04") where the driver exposes it; else the API number.
    if (std::string v = driverModuleVersion(); !v.empty()) return v;
    int v = 0;
    cudaDriverGetVersion(&v);
    return "CUDA driver API " + std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// External correlation ids: which launch of which rung.
enum LaunchTag : std::uint64_t { kTagWarmup = 0, kTagTraced = 1, kTagUntraced = 2 };
std::uint64_t externalId(int rungIndex, LaunchTag tag, int rep)
{
    return (std::uint64_t(rungIndex + 1) << 32) | (std::uint64_t(tag) << 16) | std::uint64_t(rep);
}

MemOpKind memKind(int copyKind)
{
    switch (copyKind) {
    case -1: return MemOpKind::Memset;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return MemOpKind::HtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return MemOpKind::DtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return MemOpKind::DtoD;
    default: return MemOpKind::Other;
    }
}

KernelLaunch launchFrom(const KernelActivity& k, const std::string& rung, bool traced)
{
    KernelLaunch l;
    l.name = demangle(k.name);
    l.variant = rung;
    l.traced = traced;
    for (int i = 0; i < 3; ++i) {
        l.grid[i] = k.grid[i];
        l.block[i] = k.block[i];
        l.cluster[i] = k.cluster[i];
    }
    l.dynamicSmemBytes = k.dynamicSmem;
    l.staticSmemBytes = k.staticSmem;
    l.registersPerThread = k.registers;
    l.start = TimeNs(k.start);
    l.end = TimeNs(k.end);
    l.correlationId = k.correlationId;
    l.streamId = k.streamId;
    return l;
}

std::string fmtDouble(double v, int prec = 3)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", prec, v);
    return buf;
}

// ---------------------------------------------------------------- stall child
struct StallOutcome {
    bool ok = false;
    std::string note;                       // for RunInfo::notes
    std::vector<StallSample> samples;
    std::int64_t total = 0, dropped = 0;
};

StallOutcome parseStallFile(const std::string& path)
{
    StallOutcome o;
    std::ifstream f(path);
    if (!f) {
        o.note = "stall pass wrote no result file";
        return o;
    }
    std::string line;
    std::map<std::tuple<std::string, std::uint64_t, std::string>, std::size_t> index;
    int period = 0, launches = 0;
    long long srcOk = 0, srcFail = 0;
    std::string status = "missing status";
    bool statusOk = false;
    while (std::getline(f, line)) {
        std::vector<std::string> c;
        std::size_t pos = 0;
        while (true) {
            const auto tab = line.find('\t', pos);
            c.push_back(line.substr(pos, tab == std::string::npos ? std::string::npos : tab - pos));
            if (tab == std::string::npos) break;
            pos = tab + 1;
        }
        if (c[0] == "status" && c.size() >= 3) {
            statusOk = c[1] == "ok";
            status = c[2];
        } else if (c[0] == "total" && c.size() >= 3) {
            o.total = std::atoll(c[1].c_str());
            o.dropped = std::atoll(c[2].c_str());
        } else if (c[0] == "config" && c.size() >= 3) {
            period = std::atoi(c[1].c_str());
            launches = std::atoi(c[2].c_str());
        } else if (c[0] == "source" && c.size() >= 3) {
            srcOk = std::atoll(c[1].c_str());
            srcFail = std::atoll(c[2].c_str());
        } else if (c[0] == "S" && c.size() >= 7) {
            const std::string& reason = c[5];
            if (!decode::keepStallReason(reason)) continue;
            StallSample s;
            s.functionName = demangle(c[1]);
            s.pcOffset = std::strtoull(c[2].c_str(), nullptr, 10);
            s.sourceFile = c[3];
            s.line = std::atoi(c[4].c_str());
            s.reason = reason;
            s.reasonLabel = decode::stallReasonLabel(reason);
            s.count = std::atoll(c[6].c_str());
            auto key = std::make_tuple(s.functionName, s.pcOffset, s.reason);
            if (auto it = index.find(key); it != index.end()) o.samples[it->second].count += s.count;
            else {
                index[key] = o.samples.size();
                o.samples.push_back(std::move(s));
            }
        }
    }
    if (!statusOk) {
        o.note = "stall pass failed: " + status;
        return o;
    }
    o.ok = true;
    o.note = "stalls: " + std::to_string(o.total) + " PC samples at a period of 2^" + std::to_string(period) + " cycles over "
        + std::to_string(launches) + " launch(es) of the untraced build, " + std::to_string(o.dropped) + " dropped; "
        + std::to_string(srcOk) + " PCs mapped to source lines, " + std::to_string(srcFail) + " not";
    return o;
}

// Runs the child; polls `stop`. Returns the exit code (or -signal), and fills `why` on trouble.
int runChild(const std::vector<std::string>& args, const std::atomic<bool>& stop, std::string& why)
{
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
    if (rc != 0) {
        why = std::string("cannot start the stall pass (") + args[0] + "): " + std::strerror(rc);
        return -1000;
    }
    int status = 0;
    for (;;) {
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) {
            why = std::string("waitpid: ") + std::strerror(errno);
            return -1000;
        }
        if (stop.load()) {
            kill(pid, SIGTERM);
            waitpid(pid, &status, 0);
            why = "interrupted";
            return -1001;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        why = std::string("stall pass killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
        return -WTERMSIG(status);
    }
    return -1000;
}

}  // namespace

std::string defaultSourceDir()
{
    return WARPSTAGE_SOURCE_DIR;
}

int checkEnvironment(int device, std::string& message)
{
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        message = "no usable CUDA driver/GPU: cudaGetDeviceCount failed with " + cudaText(e);
        return kExitNoGpu;
    }
    if (n == 0) {
        message = "no CUDA device found";
        return kExitNoGpu;
    }
    if (device < 0 || device >= n) {
        message = "device " + std::to_string(device) + " does not exist (" + std::to_string(n) + " found)";
        return kExitNoGpu;
    }
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess || p.major < 9) {
        message = std::string("device ") + std::to_string(device) + " (" + p.name + ", compute capability "
            + std::to_string(p.major) + "." + std::to_string(p.minor) + ") cannot run the ladder: it needs sm_90 (H100/H200)";
        return kExitNoGpu;
    }
    std::string err;
    if (!cupti::load(&err)) {
        message = err;
        return kExitNoCupti;
    }
    message = std::string(p.name);
    return kExitOk;
}

Result record(const Options& optIn, const Callbacks& cb, const std::atomic<bool>& stop)
{
    Result res;
    Options o = optIn;
    auto msg = [&](const std::string& level, const std::string& text) {
        if (cb.message) cb.message(level, text);
    };
    auto fail = [&](int code, const std::string& text) {
        res.exitCode = code;
        res.error = text;
        msg("error", text);
        return res;
    };

    // Every selected rung that can take the shape is recorded; one that cannot (K not a multiple of 8: 16-byte
    // rows) is skipped with its sentence (exit 10 at the end); none that can: exit 2, nothing run.
    const GemmRungPlan plan = planGemmRungs(o.rungs, o.shape);
    if (!plan.error.empty()) return fail(kExitUsage, plan.error);
    res.rungsSkipped = int(plan.skipped.size());
    if (plan.record.empty())
        return fail(kExitUsage, noRungTakesText(plan.skipped, std::to_string(o.shape.m) + "x" + std::to_string(o.shape.n) + "x"
                                                               + std::to_string(o.shape.k)));
    for (const auto& s : plan.skipped) msg("warning", skippedText(s));
    o.rungs = plan.record;
    if (o.repetitions < 1 || o.repetitions > 100) return fail(kExitUsage, "repetitions must be 1..100");
    if (o.output.empty()) return fail(kExitUsage, "no output file given");

    // The output: an existing file must be a Warpstage file of this version; a new one's folder writable.
    const bool existed = fileExists(o.output);
    try {
        if (existed) {
            const FileCheck fc = TraceStore::checkFile(o.output);
            if (fc.needsMigration)
                return fail(kExitOutput, o.output + ": schema version " + std::to_string(fc.fileVersion)
                                             + " is older than this recorder's; migrate it in the viewer first or choose a new file");
        } else {
            std::string dir = o.output.substr(0, o.output.find_last_of('/') == std::string::npos ? 0 : o.output.find_last_of('/'));
            if (dir.empty()) dir = ".";
            if (access(dir.c_str(), W_OK) != 0)
                return fail(kExitOutput, o.output + ": cannot create the file (folder '" + dir + "' is not writable or missing)");
        }
    } catch (const StoreError& e) {
        return fail(kExitOutput, e.what());
    }

    // No GPU / no CUPTI -> nothing written (checked before anything touches the output).
    std::string envMsg;
    if (const int ec = checkEnvironment(o.device, envMsg); ec != kExitOk) return fail(ec, envMsg);

    const auto& api = *cupti::load(nullptr);
    auto& act = ActivityCollector::instance();
    if (auto e = act.start(api); !e.empty()) return fail(kExitNoCupti, "CUPTI Activity API: " + e);

    cudaError_t ce = cudaSetDevice(o.device);
    if (ce == cudaSuccess) ce = cudaFree(nullptr);
    if (ce != cudaSuccess) return fail(kExitNoGpu, "CUDA context: " + cudaText(ce));

    // Device and versions, once.
    DeviceInfo dev;
    {
        cudaDeviceProp p{};
        cudaGetDeviceProperties(&p, o.device);
        dev.name = p.name;
        dev.computeMajor = p.major;
        dev.computeMinor = p.minor;
        dev.smCount = p.multiProcessorCount;
        cudaDeviceGetAttribute(&dev.smClockKHz, cudaDevAttrClockRate, o.device);
        cudaDeviceGetAttribute(&dev.memClockKHz, cudaDevAttrMemoryClockRate, o.device);
        dev.l2Bytes = p.l2CacheSize;
        dev.globalMemBytes = std::int64_t(p.totalGlobalMem);
    }
    int rtv = 0;
    cudaRuntimeGetVersion(&rtv);
    std::uint32_t cuptiV = 0;
    api.cuptiGetVersion(&cuptiV);
    const std::string driverText = driverVersionText();
    const std::string cudaTextV = std::to_string(rtv / 1000) + "." + std::to_string((rtv % 1000) / 10);
    const std::string cuptiText = "CUPTI API " + std::to_string(cuptiV) + " (" + api.libraryPath + ")";
    const std::string host = hostName();
    msg("info", "device " + dev.name + " (" + std::to_string(dev.smCount) + " SMs, " + std::to_string(dev.smClockKHz / 1000)
                    + " MHz), driver " + driverText + ", CUDA " + cudaTextV + ", " + cuptiText);
    if (o.selfExe.empty()) {
        char buf[4096];
        const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        if (n > 0) o.selfExe.assign(buf, std::size_t(n));
    }

    const int nR = int(o.rungs.size());
    auto progress = [&](int ri, const std::string& pass, const std::string& step, double within) {
        if (!cb.progress) return;
        ProgressEvent ev;
        ev.rung = o.rungs[std::size_t(ri)];
        ev.rungIndex = ri + 1;
        ev.rungCount = nR;
        ev.pass = pass;
        ev.step = step;
        ev.percent = 100.0 * (double(ri) + std::clamp(within, 0.0, 1.0)) / double(nR);
        cb.progress(ev);
    };

    GemmData data;
    progress(0, "setup", "allocate and fill A, B (" + std::to_string(o.shape.m) + "x" + std::to_string(o.shape.n) + "x"
                             + std::to_string(o.shape.k) + ")", 0.0);
    if (auto e = data.allocate(o.shape, 1); !e.empty()) return fail(kExitNoGpu, e);

    std::unique_ptr<TraceStore> store;
    auto openStore = [&]() -> bool {
        if (store) return true;
        try {
            store = std::make_unique<TraceStore>(TraceStore::openForWriting(o.output));
            return true;
        } catch (const StoreError& e) {
            fail(kExitOutput, e.what());
            return false;
        }
    };

    void* traceDev = nullptr;
    std::uint64_t traceDevBytes = 0;
    bool contextDead = false;
    bool interrupted = false;

    for (int ri = 0; ri < nR && !contextDead; ++ri) {
        if (stop.load()) {
            interrupted = true;
            break;
        }
        const std::string rung = o.rungs[std::size_t(ri)];
        const ladder::RungInfo* info = ladder::findRung(rung);
        RunRecord run;
        run.info.variant = rung;
        run.info.m = o.shape.m;
        run.info.n = o.shape.n;
        run.info.k = o.shape.k;
        run.info.device = dev;
        run.info.driverVersion = driverText;
        run.info.cudaVersion = cudaTextV;
        run.info.cuptiVersion = cuptiText;
        run.info.host = host;
        run.info.startedAt = isoNowUtc();
        run.info.commandLine = o.commandLine;
        run.info.hasTimeline = true;
        std::vector<std::string> notes, failures;

        ladder::TraceGeometry geom = ladder::traceGeometry(rung, o.shape, dev.smCount);
        // the tile configuration that runs (stream-K: one of kTiles per shape), first in the notes (tilegeom.h)
        const TileGeometry tiles = ladder::tileGeometryOf(ladder::launchTiles(rung, o.shape, dev.smCount));
        if (tiles.blockM > 0) notes.push_back(formatTileTag(tiles));
        if (o.testEventsPerWarp > 0) {  // tests only: a small capacity forces an overflow
            geom.eventsPerWarp = std::uint32_t(o.testEventsPerWarp);
            geom.bufferBytes = trace::bufferBytes(geom.numCtas, geom.warpsPerCta, geom.eventsPerWarp);
        }
        if (geom.bufferBytes > traceDevBytes) {
            if (traceDev) cudaFree(traceDev);
            traceDev = nullptr;
            traceDevBytes = 0;
            if ((ce = cudaMalloc(&traceDev, geom.bufferBytes)) != cudaSuccess) {
                failures.push_back("cannot allocate the " + std::to_string(geom.bufferBytes >> 20) + " MiB trace buffer: " + cudaText(ce));
            } else if ((ce = cudaMemset(traceDev, 0, geom.bufferBytes)) != cudaSuccess) {  // once, whole (ClearRanges)
                failures.push_back("cannot clear the trace buffer: " + cudaText(ce));
            } else {
                traceDevBytes = geom.bufferBytes;
            }
        }

        // --- pass 1
        std::vector<std::vector<unsigned char>> buffers;
        auto launchChecked = [&](std::uint64_t ext, void* tb, const char* what) -> bool {
            act.push(ext);
            const std::string le = ladder::launch(rung, o.shape, data.a(), data.b(), data.c(), nullptr, tb, dev.smCount);
            act.pop();
            if (!le.empty()) {
                failures.push_back(std::string(what) + " launch failed: " + le);
                return false;
            }
            const cudaError_t e = cudaDeviceSynchronize();
            if (e != cudaSuccess) {
                failures.push_back(std::string("kernel fault in the ") + what + " launch: " + cudaText(e));
                contextDead = true;  // sticky error: the context cannot run more work
                return false;
            }
            return true;
        };
        auto spot = [&](const char* what) {
            if (!o.checkResults) return;
            double rel = 0;
            const std::string bad = data.spotCheck(64, rel);
            if (!bad.empty()) failures.push_back(std::string("wrong result of the ") + what + " build: " + bad);
            else notes.push_back(std::string(what) + " result spot check: 64 elements of C vs fp64 host dot products, max rel. error "
                                 + fmtDouble(rel, 5));
        };

        bool okSoFar = failures.empty();
        if (okSoFar) {
            progress(ri, "timeline", "warm-up", 0.02);
            okSoFar = launchChecked(externalId(ri, kTagWarmup, 0), nullptr, "warm-up");
        }
        for (int rep = 0; okSoFar && rep < o.repetitions; ++rep) {
            if (stop.load()) break;
            progress(ri, "timeline", "traced launch " + std::to_string(rep + 1) + "/" + std::to_string(o.repetitions),
                     0.05 + 0.3 * rep / o.repetitions);
            trace::TraceBufferHeader h{};
            h.magic = trace::kMagic;
            h.version = trace::kFormatVersion;
            h.numCtas = geom.numCtas;
            h.warpsPerCta = geom.warpsPerCta;
            h.eventsPerWarp = geom.eventsPerWarp;
            h.stages = geom.stages;
            h.bytesPerKStep = geom.bytesPerKStep;
            // what the kernel does not rewrite: the CTA records, the region headers (trace::clearRanges)
            const trace::ClearRanges cr = trace::clearRanges(h.numCtas, h.warpsPerCta, h.eventsPerWarp);
            auto* td = static_cast<char*>(traceDev);
            if ((ce = cudaMemset(td + cr.ctaOffset, 0, cr.ctaBytes)) != cudaSuccess
                || (ce = cudaMemset2D(td + cr.headerOffset, cr.headerPitch, 0, cr.headerBytes, cr.headerRows))
                       != cudaSuccess
                || (ce = cudaMemcpy(traceDev, &h, sizeof h, cudaMemcpyHostToDevice)) != cudaSuccess
                || !data.poisonC().empty()) {
                failures.push_back("preparing the trace buffer: " + cudaText(ce));
                okSoFar = false;
                break;
            }
            if (!launchChecked(externalId(ri, kTagTraced, rep), traceDev, "traced")) {
                okSoFar = false;
                break;
            }
            if (rep == 0) spot("traced");
            buffers.emplace_back(geom.bufferBytes);
            if ((ce = cudaMemcpy(buffers.back().data(), traceDev, geom.bufferBytes, cudaMemcpyDeviceToHost)) != cudaSuccess) {
                failures.push_back("reading the trace buffer back: " + cudaText(ce));
                okSoFar = false;
                break;
            }
            // the events it wrote back to zero (trace_format.h, ClearRanges: the next launch's unfinished warps are
            // read up to their first zero event)
            if (const std::uint32_t n = trace::writtenEvents(buffers.back().data(), geom.bufferBytes, h.numCtas, h.warpsPerCta,
                                                             h.eventsPerWarp);
                n > 0
                && (ce = cudaMemset2D(td + cr.headerOffset + cr.headerBytes, cr.headerPitch, 0,
                                      std::size_t(n) * sizeof(trace::TraceEvent), cr.headerRows))
                       != cudaSuccess) {
                failures.push_back("clearing the trace buffer after the launch: " + cudaText(ce));
                okSoFar = false;
                break;
            }
            progress(ri, "timeline", "untraced launch " + std::to_string(rep + 1) + "/" + std::to_string(o.repetitions),
                     0.1 + 0.3 * rep / o.repetitions);
            data.poisonC();
            if (!launchChecked(externalId(ri, kTagUntraced, rep), nullptr, "untraced")) {
                okSoFar = false;
                break;
            }
            if (rep == 0) spot("untraced");
        }
        if (stop.load()) {
            interrupted = true;
            break;
        }

        act.flush();
        std::vector<KernelActivity> kacts;
        std::vector<MemActivity> macts;
        std::map<std::uint64_t, std::vector<std::uint32_t>> ext;
        std::uint64_t droppedRecords = 0;
        act.take(kacts, macts, ext, droppedRecords);
        if (droppedRecords) notes.push_back("CUPTI dropped " + std::to_string(droppedRecords) + " activity records");
        std::map<std::uint32_t, const KernelActivity*> byCorr;
        for (const auto& k : kacts) byCorr[k.correlationId] = &k;
        auto kernelFor = [&](std::uint64_t id) -> const KernelActivity* {
            auto it = ext.find(id);
            if (it == ext.end()) return nullptr;
            for (auto c : it->second)
                if (auto k = byCorr.find(c); k != byCorr.end()) return k->second;
            return nullptr;
        };
        for (const auto& m : macts) {
            MemOp op;
            op.kind = memKind(m.copyKind);
            op.bytes = std::int64_t(m.bytes);
            op.start = TimeNs(m.start);
            op.end = TimeNs(m.end);
            op.correlationId = m.correlationId;
            op.streamId = m.streamId;
            run.memOps.push_back(op);
        }

        progress(ri, "timeline", "decode", 0.4);
        decode::DecodeOptions dopt;
        dopt.keepCtas = o.keepCtas;
        dopt.keepSms = o.keepSms;
        dopt.deviceNsPerCycle = dev.smClockKHz > 0 ? 1e6 / dev.smClockKHz : 0;
        std::vector<WarpRole> roles;
        bool rungHasWaitOrder = false;
        for (std::size_t rep = 0; rep < buffers.size(); ++rep) {
            const KernelActivity* ka = kernelFor(externalId(ri, kTagTraced, int(rep)));
            KernelLaunch kl;
            if (ka) kl = launchFrom(*ka, rung, true);
            else {
                kl.name = ladder::kernelSymbol(rung, true);
                kl.variant = rung;
                failures.push_back("no CUPTI kernel record for traced launch " + std::to_string(rep + 1));
            }
            decode::DecodeReport rep_;
            try {
                KernelRecord kr = decode::decodeTrace(buffers[rep].data(), buffers[rep].size(), geom, kl, dopt, rep_);
                if (!rep_.ok) failures.push_back("traced launch " + std::to_string(rep + 1) + ": " + rep_.failureReason);
                for (const auto& w : rep_.warnings) notes.push_back("traced launch " + std::to_string(rep + 1) + ": " + w);
                if (tiles.blockM > 0)
                    for (const auto& w : checkTileCoordinates(tiles, kr.tiles, kr.ctas))
                        notes.push_back("traced launch " + std::to_string(rep + 1) + ": " + w);
                if (rep == 0) {
                    notes.push_back("clock: median " + fmtDouble(rep_.medianNsPerCycle, 6) + " ns/cycle ("
                                    + fmtDouble(rep_.medianNsPerCycle > 0 ? 1000.0 / rep_.medianNsPerCycle : 0, 1)
                                    + " MHz) from %globaltimer/clock64 per CTA, max slope error "
                                    + fmtDouble(rep_.maxSlopeRelError * 1e6, 1) + " ppm; CUPTI alignment offset "
                                    + std::to_string(rep_.alignment.offsetNs) + " ns, residual "
                                    + fmtDouble(rep_.alignment.residualNs, 1) + " ns");
                    if (rep_.ctasKept != rep_.ctasTotal)
                        notes.push_back("kept " + std::to_string(rep_.ctasKept) + " of " + std::to_string(rep_.ctasTotal)
                                        + " CTAs (--ctas/--sms)");
                    roles = decode::rolesByKind(kr);
                    rungHasWaitOrder = std::any_of(kr.intervals.begin(), kr.intervals.end(),
                                                   [](const Interval& iv) { return iv.kind == IntervalKind::WaitOrder; });
                }
                run.kernels.push_back(std::move(kr));
            } catch (const decode::DecodeError& e) {
                failures.push_back("traced launch " + std::to_string(rep + 1) + ": cannot decode the trace buffer: " + e.what());
                KernelRecord kr;
                kr.launch = kl;
                run.kernels.push_back(std::move(kr));
            }
        }
        buffers.clear();
        std::size_t firstUntraced = run.kernels.size();
        double untracedNs = 0;
        for (int rep = 0; rep < o.repetitions; ++rep) {
            const KernelActivity* ka = kernelFor(externalId(ri, kTagUntraced, rep));
            if (!ka) continue;
            KernelRecord kr;
            kr.launch = launchFrom(*ka, rung, false);
            if (untracedNs == 0) untracedNs = double(ka->end - ka->start);
            run.kernels.push_back(std::move(kr));
        }
        if (okSoFar && untracedNs == 0) notes.push_back("no CUPTI kernel record for the untraced launch: stall pass skipped");
        if (const KernelActivity* t = kernelFor(externalId(ri, kTagTraced, 0)); t && untracedNs > 0)
            notes.push_back("tracing cost: traced " + fmtDouble(double(t->end - t->start) / 1000.0, 1) + " us vs untraced "
                            + fmtDouble(untracedNs / 1000.0, 1) + " us (CUPTI)");

        // --- pass 2
        if (o.stalls && failures.empty() && !contextDead && untracedNs > 0 && firstUntraced < run.kernels.size()) {
            progress(ri, "stalls", "PC sampling (child process)", 0.5);
            // samples ~= launches * duration * clock * SMs / 2^period
            const double cyclesAllSms = untracedNs * (dev.smClockKHz / 1e6) * dev.smCount;
            int launches = 1;
            double p = std::log2(std::max(1.0, cyclesAllSms / double(o.stallTargetSamples)));
            if (p < 5) {
                launches = int(std::min(50.0, std::ceil(double(o.stallTargetSamples) * 32.0 / std::max(1.0, cyclesAllSms))));
                p = std::log2(std::max(1.0, launches * cyclesAllSms / double(o.stallTargetSamples)));
            }
            const int period = std::clamp(int(std::lround(p)), 5, 31);
            char tmpl[] = "/tmp/warpstage-stalls-XXXXXX";
            const int fd = mkstemp(tmpl);
            if (fd >= 0) close(fd);
            const std::string out = fd >= 0 ? std::string(tmpl) : std::string();
            act.disable();  // the child profiles; keep this process out of its way
            std::string why;
            const int rc = out.empty() ? -1000
                                       : runChild({o.selfExe, "--stall-pass", "--rung", rung, "--shape",
                                                   std::to_string(o.shape.m) + "x" + std::to_string(o.shape.n) + "x"
                                                       + std::to_string(o.shape.k),
                                                   "--period", std::to_string(period), "--launches", std::to_string(launches),
                                                   "--device", std::to_string(o.device), "--stall-out", out},
                                                  stop, why);
            if (auto e = act.enable(); !e.empty()) msg("warning", "re-enabling CUPTI activity: " + e);
            if (rc == -1001) {
                if (!out.empty()) unlink(out.c_str());
                interrupted = true;
                break;
            }
            StallOutcome so;
            if (rc == 0) so = parseStallFile(out);
            else if (rc > 0) {
                so = parseStallFile(out);
                so.ok = false;
                if (rc == kStallNoPermission || rc == kStallNotSupported) so.note = "stalls skipped: " + so.note.substr(so.note.find(':') + 2);
            } else {
                so.note = "stall pass failed: " + (why.empty() ? std::string("could not run") : why);
            }
            if (!out.empty()) unlink(out.c_str());
            notes.push_back(so.note);
            if (so.ok) {
                // The rung's source and helpers: built into the recorder (ladder_sources.h), or from --source-dir.
                const ladder::LadderSources src = ladder::ladderSources(info->sourceFile, o.sourceDir);
                const auto map = ladder::ladderStageMap(src);
                decode::assignStages(so.samples, map, roles, rungHasWaitOrder);
                std::int64_t mapped = 0, all = 0;
                std::set<std::string> pointedInto;
                for (auto& s : so.samples) {
                    all += s.count;
                    if (!s.stage.empty()) mapped += s.count;
                    // Store files repository-relative, as the viewer opens them and as run.sources names them.
                    if (map.matchesFile(s.sourceFile)) s.sourceFile = info->sourceFile;
                    else
                        for (const auto& e : ladder::embeddedSources())
                            if (s.sourceFile.size() > e.path.size() && s.sourceFile.ends_with(e.path)
                                && s.sourceFile[s.sourceFile.size() - e.path.size() - 1] == '/') {
                                s.sourceFile = std::string(e.path);
                                break;
                            }
                    if (!s.sourceFile.empty()) pointedInto.insert(s.sourceFile);
                }
                // The trace carries the texts it was mapped with, plus any other built-in file a sample points into.
                run.sources = src.files;
                for (const auto& p : pointedInto) {
                    bool have = false;
                    for (const auto& f : run.sources) have = have || f.path == p;
                    if (const ladder::EmbeddedSource* e = have ? nullptr : ladder::embeddedSource(p))
                        run.sources.push_back({p, sink::sha256Hex(std::string(e->text)), std::string(e->text)});
                }
                if (src.files.empty()) notes.push_back("stage mapping: " + src.problem);
                else notes.push_back("stage mapping: source " + info->sourceFile + " " + (o.sourceDir.empty() ? "built into the recorder" : "from " + o.sourceDir) + ", stored in the trace");
                notes.push_back("stage mapping: " + fmtDouble(all ? 100.0 * mapped / all : 0, 1) + "% of stall samples mapped to a pipeline stage");
                run.kernels[firstUntraced].stalls = std::move(so.samples);
                run.info.hasStalls = true;
            }
        } else if (!o.stalls) {
            notes.push_back("stalls skipped: --no-stalls");
        } else if (!failures.empty() || contextDead) {
            notes.push_back("stalls skipped: the timeline pass failed");
        }

        if (stop.load()) {
            interrupted = true;
            break;
        }
        if (!failures.empty()) {
            run.info.status = RunStatus::Failed;
            std::string r;
            for (const auto& f : failures) r += (r.empty() ? "" : "; ") + f;
            run.info.failureReason = r;
        }
        for (const auto& n : notes) run.info.notes += (run.info.notes.empty() ? "" : "\n") + n;

        progress(ri, "write", "write run", 0.9);
        if (!openStore()) return res;
        try {
            const RowId id = store->writeRun(run);
            ++res.runsWritten;
            if (run.info.status == RunStatus::Failed) {
                ++res.runsFailed;
                msg("error", rung + ": stored as FAILED: " + run.info.failureReason);
            }
            try {
                progress(ri, "write", "metrics", 0.95);
                store->writeMetrics(id, computeRunMetrics(*store, id));
            } catch (const std::exception& e) {
                msg("warning", rung + ": metrics not computed: " + e.what());
            }
            if (cb.runWritten) cb.runWritten(run.info, id);
            progress(ri, "write", "done", 1.0);
        } catch (const std::exception& e) {
            if (traceDev) cudaFree(traceDev);
            return fail(kExitOutput, o.output + ": writing the " + rung + " run failed: " + e.what());
        }
    }
    if (traceDev) cudaFree(traceDev);
    act.disable();
    if (interrupted || stop.load()) {
        res.exitCode = kExitInterrupted;
        res.error = "interrupted: " + std::to_string(res.runsWritten) + " run(s) committed before the signal are intact";
        msg("error", res.error);
        return res;
    }
    if (contextDead) msg("error", "a kernel fault stopped the recording; later rungs were not recorded");
    if (res.runsFailed > 0 || contextDead) {
        res.exitCode = kExitRunFailed;
    } else if (!plan.skipped.empty()) {
        res.exitCode = kExitRungsSkipped;
        res.error = std::to_string(plan.skipped.size()) + " rung(s) skipped: ";
        for (std::size_t i = 0; i < plan.skipped.size(); ++i) res.error += (i ? ", " : "") + plan.skipped[i].rung;
        res.error += " (they cannot take the shape; every other rung is recorded)";
    }
    return res;
}

}  // namespace ws::rec
