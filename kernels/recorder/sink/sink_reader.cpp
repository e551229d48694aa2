// Sink files -> runs. See warpstage/sink_reader.h and docs/recording.md ("Record your program").
#include "warpstage/sink_reader.h"

#include <cxxabi.h>
#include <dirent.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <tuple>

namespace ws::sink {

const std::string& SinkProcess::str(std::uint32_t id) const
{
    static const std::string empty;
    auto it = strings.find(id);
    return it == strings.end() ? empty : it->second;
}

namespace {

template <class T>
bool takePod(const std::string& payload, T& out)
{
    if (payload.size() < sizeof(T)) return false;
    std::memcpy(&out, payload.data(), sizeof(T));
    return true;
}

bool takeStr(const std::string& p, std::size_t& off, std::string& out)
{
    std::uint32_t n = 0;
    if (off + 4 > p.size()) return false;
    std::memcpy(&n, p.data() + off, 4);
    off += 4;
    if (off + n > p.size()) return false;
    out.assign(p.data() + off, n);
    off += n;
    return true;
}

std::vector<std::string> splitNul(const std::string& s)
{
    std::vector<std::string> out;
    if (s.empty()) return out;
    std::size_t a = 0;
    for (;;) {
        const auto z = s.find('\0', a);
        out.push_back(s.substr(a, z == std::string::npos ? std::string::npos : z - a));
        if (z == std::string::npos) break;
        a = z + 1;
    }
    return out;
}

const char* signalName(int sig)
{
    switch (sig) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 3: return "SIGQUIT";
    case 4: return "SIGILL";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 8: return "SIGFPE";
    case 9: return "SIGKILL";
    case 11: return "SIGSEGV";
    case 13: return "SIGPIPE";
    case 14: return "SIGALRM";
    case 15: return "SIGTERM";
    default: return "signal";
    }
}

std::string fmtSeconds(double s)
{
    char b[32];
    std::snprintf(b, sizeof b, "%g", s);
    return b;
}

std::string uuidText(const std::uint8_t u[16])
{
    bool any = false;
    for (int i = 0; i < 16; ++i) any = any || u[i];
    if (!any) return "";
    char b[48];
    std::snprintf(b, sizeof b, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
                  u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return b;
}

std::string baseName(const std::string& p)
{
    const auto s = p.find_last_of('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

std::string joinArgs(const std::vector<std::string>& argv)
{
    std::string o;
    for (const auto& a : argv) {
        if (!o.empty()) o += ' ';
        const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`") == std::string::npos;
        if (plain) {
            o += a;
        } else {
            o += '\'';
            for (char c : a) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
            o += '\'';
        }
    }
    return o;
}

bool keepUnmatchedApi(const std::string& name)
{
    return name.find("GraphLaunch") != std::string::npos || name.find("Synchronize") != std::string::npos;
}

}  // namespace

std::string demangle(const std::string& n)
{
    if (n.rfind("_Z", 0) != 0) return n;
    int status = 0;
    char* d = abi::__cxa_demangle(n.c_str(), nullptr, nullptr, &status);
    if (status != 0 || !d) return n;
    std::string s(d);
    std::free(d);
    return s;
}

SinkProcess readSink(const std::string& path)
{
    SinkProcess s;
    s.path = path;
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        s.error = "cannot open";
        return s;
    }
    std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    s.bytes = data.size();
    if (data.size() < sizeof(FileHeader)) {
        if (data.empty() || std::memcmp(data.data(), kMagic, std::min(data.size(), sizeof kMagic)) == 0)
            s.truncated = true;
        else
            s.error = "not a Warpstage sink (bad magic)";
        return s;
    }
    FileHeader h{};
    std::memcpy(&h, data.data(), sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
        s.error = "not a Warpstage sink (bad magic)";
        return s;
    }
    if (h.version != kFormatVersion) {
        s.error = "sink format version " + std::to_string(h.version) + " (this reader knows " + std::to_string(kFormatVersion) + ")";
        return s;
    }
    std::size_t off = sizeof h;
    std::string payload;
    while (off < data.size()) {
        if (off + sizeof(RecHeader) > data.size()) {
            s.truncated = true;
            break;
        }
        RecHeader rh{};
        std::memcpy(&rh, data.data() + off, sizeof rh);
        if (rh.size > kMaxRecordSize) {
            s.error = "corrupt record at byte " + std::to_string(off) + " (size " + std::to_string(rh.size) + ")";
            break;
        }
        if (off + sizeof rh + rh.size > data.size()) {
            s.truncated = true;
            break;
        }
        payload.assign(data.data() + off + sizeof rh, rh.size);
        off += sizeof rh + rh.size;
        bool ok = true;
        switch (static_cast<RecType>(rh.type)) {
        case RecType::Process: {
            ProcessRec p{};
            ok = takePod(payload, p);
            std::size_t o = sizeof p;
            std::string args;
            ok = ok && takeStr(payload, o, s.exe) && takeStr(payload, o, s.cwd) && takeStr(payload, o, args);
            if (ok) {
                s.hasProcess = true;
                s.pid = p.pid;
                s.ppid = p.ppid;
                s.openedRealtimeNs = p.realtimeNs;
                s.openedCuptiNs = p.cuptiNs;
                s.argv.clear();
                std::size_t a = 0;
                while (a <= args.size() && !args.empty()) {
                    const auto z = args.find('\0', a);
                    s.argv.push_back(args.substr(a, z == std::string::npos ? std::string::npos : z - a));
                    if (z == std::string::npos) break;
                    a = z + 1;
                }
            }
            break;
        }
        case RecType::String: {
            std::uint32_t id = 0;
            ok = takePod(payload, id);
            if (ok) s.strings[id] = payload.substr(4);
            break;
        }
        case RecType::Device: {
            DeviceRec d{};
            if ((ok = takePod(payload, d))) s.devices.push_back(d);
            break;
        }
        case RecType::Context: {
            ContextRec c{};
            if ((ok = takePod(payload, c))) s.contexts.push_back(c);
            break;
        }
        case RecType::Kernel: {
            KernelRec k{};
            if ((ok = takePod(payload, k))) s.kernels.push_back(k);
            break;
        }
        case RecType::Mem: {
            MemRec m{};
            if ((ok = takePod(payload, m))) s.mem.push_back(m);
            break;
        }
        case RecType::Api: {
            ApiRec a{};
            if ((ok = takePod(payload, a))) s.api.push_back(a);
            break;
        }
        case RecType::Nvtx: {
            NvtxRec n{};
            if ((ok = takePod(payload, n))) s.nvtx.push_back(n);
            break;
        }
        case RecType::Flush: {
            FlushRec fr{};
            if ((ok = takePod(payload, fr))) {
                s.dropped += fr.dropped;
                ++s.flushes;
            }
            break;
        }
        case RecType::End: {
            if ((ok = takePod(payload, s.end))) s.ended = true;
            break;
        }
        case RecType::TraceLaunch: {
            SinkTrace t;
            std::size_t o = sizeof t.rec;
            std::string phases, roles;
            ok = takePod(payload, t.rec) && takeStr(payload, o, t.kernel) && takeStr(payload, o, phases)
                && takeStr(payload, o, roles) && takeStr(payload, o, t.sourcePath)
                && t.rec.bufferBytes <= (std::uint64_t(64) << 30);
            if (ok) {
                t.phaseNames = splitNul(phases);
                t.roleNames = splitNul(roles);
                s.traces.push_back(std::move(t));  // data grows as chunks arrive (a corrupt size allocates nothing)
            }
            break;
        }
        case RecType::TraceChunk: {
            TraceChunkRec c{};
            ok = takePod(payload, c);
            if (!ok) break;
            SinkTrace* t = nullptr;  // the latest launch of that correlation id
            for (auto it = s.traces.rbegin(); it != s.traces.rend() && !t; ++it)
                if (it->rec.correlationId == c.correlationId && it->rec.deviceId == c.deviceId) t = &*it;
            const std::uint64_t n = payload.size() - sizeof c;
            ok = t && c.offset <= t->rec.bufferBytes && n <= t->rec.bufferBytes - c.offset;
            if (ok) {
                if (t->data.size() < c.offset + n) t->data.resize(std::size_t(c.offset + n), '\0');
                std::memcpy(t->data.data() + c.offset, payload.data() + sizeof c, std::size_t(n));
                t->received += n;
            }
            break;
        }
        case RecType::TraceNote: {
            TraceNoteRec n{};
            if ((ok = takePod(payload, n))) s.traceNotes.push_back({n.correlationId, n.deviceId, payload.substr(sizeof n)});
            break;
        }
        case RecType::StallLaunch: {
            StallLaunchRec l{};
            if ((ok = takePod(payload, l))) s.stallLaunches.push_back(l);
            break;
        }
        case RecType::StallSample: {
            StallSampleRec x{};
            if ((ok = takePod(payload, x))) s.stallSamples.push_back(x);
            break;
        }
        case RecType::StallCount: {
            StallCountRec c{};
            if ((ok = takePod(payload, c))) s.stallCounts.push_back(c);
            break;
        }
        case RecType::StallCubin: {
            std::uint64_t crc = 0;
            if ((ok = takePod(payload, crc))) s.cubins[crc] = payload.substr(sizeof crc);
            break;
        }
        case RecType::StallNote: {
            std::int32_t code = 0;
            if ((ok = takePod(payload, code))) s.stallNotes.emplace_back(code, payload.substr(sizeof code));
            break;
        }
        default:
            break;  // unknown record types of a newer writer are skipped
        }
        if (!ok) {
            s.error = "corrupt record (type " + std::to_string(rh.type) + ", size " + std::to_string(rh.size) + ")";
            break;
        }
    }
    return s;
}

std::vector<SinkProcess> readSinkDir(const std::string& dir)
{
    std::vector<std::string> files;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string n = e->d_name;
            if (n.size() > 6 && n.compare(n.size() - 6, 6, ".wsink") == 0) files.push_back(dir + "/" + n);
        }
        closedir(d);
    }
    std::sort(files.begin(), files.end());
    std::vector<SinkProcess> out;
    for (const auto& f : files) out.push_back(readSink(f));
    return out;
}

std::string incompleteReason(const SinkProcess& s, const ProgramOutcome& o, bool isRoot)
{
    std::vector<std::string> why;
    if (isRoot) {
        if (o.timedOut)
            why.push_back("timeout after " + fmtSeconds(o.timeoutSeconds) + " s (the program was stopped)");
        else if (o.interrupted)
            why.push_back("recording interrupted (warpstage-record got SIGINT/SIGTERM and stopped the program)");
        if (o.exitSignal > 0)
            why.push_back(std::string("killed by ") + signalName(o.exitSignal) + " (signal " + std::to_string(o.exitSignal) + ")");
        else if (o.exitCode > 0)
            why.push_back("exit code " + std::to_string(o.exitCode));
    } else if (s.ended && s.end.reason == static_cast<std::uint32_t>(EndReason::Signal)) {
        why.push_back(std::string("killed by ") + signalName(s.end.signal) + " (signal " + std::to_string(s.end.signal) + ")");
    }
    if (!s.ended && why.empty())
        why.push_back("the process ended without a final flush (crashed, killed or _exit): its last second may be missing");
    if (s.truncated) why.push_back("sink truncated");
    if (!s.error.empty()) why.push_back("sink unreadable past a point: " + s.error);
    if (s.dropped > 0) why.push_back("CUPTI dropped " + std::to_string(s.dropped) + " records");
    std::string r;
    for (const auto& w : why) r += (r.empty() ? "" : "; ") + w;
    return r;
}

namespace {

struct PairedNvtx {
    NvtxRange range;
};

// Pairs one process's NVTX events (file order = call order per thread) into ranges.
std::vector<NvtxRange> pairNvtx(const SinkProcess& s, TimeNs lastTime, int* unbalanced)
{
    std::vector<NvtxRange> out;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<const NvtxRec*>> stacks;  // (tid, domain)
    std::map<std::uint64_t, const NvtxRec*> started;
    auto make = [&](const NvtxRec& e, NvtxKind kind) {
        NvtxRange r;
        r.kind = kind;
        r.domain = s.str(e.domainId);
        r.name = s.str(e.nameId);
        r.start = TimeNs(e.timestamp);
        r.end = r.start;
        r.threadId = e.threadId;
        r.color = e.color;
        r.category = e.category;
        return r;
    };
    for (const auto& e : s.nvtx) {
        switch (static_cast<NvtxOp>(e.op)) {
        case NvtxOp::Push: stacks[{e.threadId, e.domainId}].push_back(&e); break;
        case NvtxOp::Pop: {
            auto& st = stacks[{e.threadId, e.domainId}];
            if (st.empty()) {
                ++*unbalanced;
                break;
            }
            NvtxRange r = make(*st.back(), NvtxKind::PushPop);
            st.pop_back();
            r.depth = int(st.size());
            r.end = std::max(r.start, TimeNs(e.timestamp));
            out.push_back(std::move(r));
            break;
        }
        case NvtxOp::Start: started[e.rangeId] = &e; break;
        case NvtxOp::End: {
            auto it = started.find(e.rangeId);
            if (it == started.end()) {
                ++*unbalanced;
                break;
            }
            NvtxRange r = make(*it->second, NvtxKind::StartEnd);
            r.end = std::max(r.start, TimeNs(e.timestamp));
            started.erase(it);
            out.push_back(std::move(r));
            break;
        }
        case NvtxOp::Mark: {
            NvtxRange r = make(e, NvtxKind::Mark);
            r.depth = int(stacks[{e.threadId, e.domainId}].size());
            out.push_back(std::move(r));
            break;
        }
        default: break;
        }
    }
    for (auto& [key, st] : stacks)
        for (std::size_t i = 0; i < st.size(); ++i) {
            NvtxRange r = make(*st[i], NvtxKind::PushPop);
            r.depth = int(i);
            r.end = std::max(r.start, lastTime);
            r.closed = false;
            out.push_back(std::move(r));
        }
    for (auto& [id, e] : started) {
        NvtxRange r = make(*e, NvtxKind::StartEnd);
        r.end = std::max(r.start, lastTime);
        r.closed = false;
        out.push_back(std::move(r));
    }
    std::stable_sort(out.begin(), out.end(), [](const NvtxRange& a, const NvtxRange& b) { return a.start < b.start; });
    return out;
}

}  // namespace

ConvertResult toRuns(const std::vector<SinkProcess>& sinks, const ConvertOptions& opt)
{
    ConvertResult res;
    for (const auto& s : sinks) {
        if (!s.hasProcess) {
            res.warnings.push_back(s.path + ": " + (s.error.empty() ? "no process record (empty or cut-off sink)" : s.error)
                                   + ", skipped");
            continue;
        }
        if (s.kernels.empty() && s.mem.empty() && s.api.empty()) {
            ++res.processesWithoutCuda;
            continue;
        }
        // Time span of the process's records.
        TimeNs first = INT64_MAX, last = 0;
        auto span = [&](std::uint64_t a, std::uint64_t b) {
            if (a == 0) return;
            first = std::min(first, TimeNs(a));
            last = std::max(last, TimeNs(std::max(a, b)));
        };
        for (const auto& k : s.kernels) span(k.start, k.end);
        for (const auto& m : s.mem) span(m.start, m.end);
        for (const auto& a : s.api) span(a.start, a.end);
        for (const auto& n : s.nvtx) span(n.timestamp, n.timestamp);
        if (first == INT64_MAX) first = 0;

        int unbalanced = 0;
        std::vector<NvtxRange> nvtx = pairNvtx(s, last, &unbalanced);

        // Windows for --duration / --nvtx-range.
        std::vector<std::pair<TimeNs, TimeNs>> windows;
        bool filtered = false;
        if (opt.durationSeconds > 0) {
            filtered = true;
            windows.push_back({first, first + TimeNs(opt.durationSeconds * 1e9)});
        }
        if (!opt.nvtxRange.empty()) {
            std::vector<std::pair<TimeNs, TimeNs>> w;
            for (const auto& r : nvtx)
                if (r.name == opt.nvtxRange && r.kind != NvtxKind::Mark) {
                    if (!filtered) {
                        w.push_back({r.start, r.end});
                    } else {
                        for (const auto& d : windows)  // intersect with the duration window
                            if (r.start < d.second && r.end > d.first) w.push_back({std::max(r.start, d.first), std::min(r.end, d.second)});
                    }
                }
            filtered = true;
            windows = std::move(w);
        }
        auto inWindow = [&](TimeNs t) {
            if (!filtered) return true;
            for (const auto& w : windows)
                if (t >= w.first && t <= w.second) return true;
            return false;
        };
        auto overlaps = [&](TimeNs a, TimeNs b) {
            if (!filtered) return true;
            for (const auto& w : windows)
                if (a <= w.second && b >= w.first) return true;
            return false;
        };

        // Which correlation ids are kept (their API call is inside a window) and their device.
        std::map<std::uint32_t, const ApiRec*> apiByCorr;
        for (const auto& a : s.api) {
            auto [it, fresh] = apiByCorr.emplace(a.correlationId, &a);
            if (!fresh && it->second->driver && !a.driver) it->second = &a;  // prefer the runtime call
        }
        auto keepDeviceRecord = [&](std::uint32_t corr, std::uint64_t start) {
            if (!filtered) return true;
            auto it = apiByCorr.find(corr);
            return inWindow(it != apiByCorr.end() ? TimeNs(it->second->start) : TimeNs(start));
        };

        std::map<std::uint32_t, RunRecord> byDevice;
        std::map<std::uint32_t, std::uint32_t> corrDevice;
        for (const auto& k : s.kernels) {
            if (!keepDeviceRecord(k.correlationId, k.start)) continue;
            auto& run = byDevice[k.deviceId];
            KernelRecord kr;
            auto& l = kr.launch;
            l.name = demangle(s.str(k.nameId));
            for (int i = 0; i < 3; ++i) {
                l.grid[i] = k.grid[i];
                l.block[i] = k.block[i];
                l.cluster[i] = std::max(1, k.cluster[i]);
            }
            l.dynamicSmemBytes = k.dynamicSmem;
            l.staticSmemBytes = k.staticSmem;
            l.registersPerThread = k.registers;
            l.start = TimeNs(k.start);
            l.end = TimeNs(std::max(k.start, k.end));
            l.correlationId = k.correlationId;
            l.streamId = k.streamId;
            l.contextId = k.contextId;
            l.graphId = k.graphId;
            l.graphNodeId = k.graphNodeId;
            run.kernels.push_back(std::move(kr));
            corrDevice[k.correlationId] = k.deviceId;
        }
        for (const auto& m : s.mem) {
            if (!keepDeviceRecord(m.correlationId, m.start)) continue;
            auto& run = byDevice[m.deviceId];
            MemOp op;
            op.kind = m.kind <= 5 ? MemOpKind(m.kind) : MemOpKind::Other;
            op.bytes = std::int64_t(m.bytes);
            op.start = TimeNs(m.start);
            op.end = TimeNs(std::max(m.start, m.end));
            op.correlationId = m.correlationId;
            op.streamId = m.streamId;
            op.contextId = m.contextId;
            op.graphId = m.graphId;
            op.graphNodeId = m.graphNodeId;
            run.memOps.push_back(op);
            corrDevice.emplace(m.correlationId, m.deviceId);
        }
        // The primary device: lowest ordinal with records (or of the process's devices).
        std::uint32_t primary = 0;
        if (!byDevice.empty())
            primary = byDevice.begin()->first;
        else if (!s.devices.empty())
            primary = std::min_element(s.devices.begin(), s.devices.end(), [](auto& a, auto& b) { return a.id < b.id; })->id;
        std::size_t apiDropped = 0;
        std::set<std::uint32_t> apiSeen;
        for (const auto& a : s.api) {
            const std::string& name = s.str(a.nameId);
            auto dev = corrDevice.find(a.correlationId);
            const bool matched = dev != corrDevice.end();
            if (matched) {
                // one span per correlation id (the runtime call if both a runtime and a driver span carry it)
                if (apiByCorr[a.correlationId] != &a) continue;
            } else if (!keepUnmatchedApi(name) || !inWindow(TimeNs(a.start))) {
                ++apiDropped;
                continue;
            }
            ApiSpan sp;
            sp.name = name;
            sp.cbid = a.cbid;
            sp.driver = a.driver != 0;
            sp.start = TimeNs(a.start);
            sp.end = TimeNs(std::max(a.start, a.end));
            sp.threadId = a.threadId;
            sp.correlationId = a.correlationId;
            sp.result = a.result;
            byDevice[matched ? dev->second : primary].apiSpans.push_back(std::move(sp));
        }
        if (byDevice.empty()) {
            res.warnings.push_back("pid " + std::to_string(s.pid) + ": no record inside the recording window");
            continue;
        }
        // NVTX ranges go to the primary device's run.
        if (byDevice.count(primary) == 0) primary = byDevice.begin()->first;
        for (auto& r : nvtx)
            if (overlaps(r.start, r.end)) byDevice[primary].nvtx.push_back(std::move(r));

        const bool isRoot = s.pid == opt.outcome.rootPid;
        const std::string reason = incompleteReason(s, opt.outcome, isRoot);
        for (auto& [devId, run] : byDevice) {
            RunInfo& info = run.info;
            info.kind = RunKind::Program;
            info.pid = s.pid;
            info.parentPid = s.ppid;
            info.program = s.argv.empty() ? s.exe : s.argv.front();
            info.variant = baseName(info.program);
            info.workingDir = s.cwd;
            info.deviceOrdinal = int(devId);
            info.commandLine = opt.commandLine;
            info.host = opt.host;
            info.startedAt = opt.startedAt;
            info.driverVersion = opt.driverVersion;
            info.cuptiVersion = opt.cuptiVersion;
            info.hasTimeline = false;
            info.hasStalls = false;
            for (const auto& d : s.devices)
                if (d.id == devId) {
                    info.device.name = s.str(d.nameId);
                    info.device.computeMajor = d.ccMajor;
                    info.device.computeMinor = d.ccMinor;
                    info.device.smCount = d.smCount;
                    info.device.smClockKHz = d.coreClockKHz;
                    info.device.l2Bytes = d.l2Bytes;
                    info.device.globalMemBytes = d.globalMemBytes;
                    info.deviceUuid = uuidText(d.uuid);
                }
            if (isRoot) {
                info.exitCode = opt.outcome.exitCode;
                info.exitSignal = opt.outcome.exitSignal;
            } else if (s.ended && s.end.reason == std::uint32_t(EndReason::Signal)) {
                info.exitSignal = s.end.signal;
            }
            info.status = reason.empty() ? RunStatus::Complete : RunStatus::Incomplete;
            info.failureReason = reason;

            // Launch order and per-name launch index; streams.
            std::stable_sort(run.kernels.begin(), run.kernels.end(),
                             [](const KernelRecord& a, const KernelRecord& b) { return a.launch.start < b.launch.start; });
            std::map<std::string, int> perName;
            TimeNs lo = INT64_MAX, hi = 0;
            std::set<std::pair<std::uint32_t, std::uint32_t>> streams;
            for (auto& k : run.kernels) {
                k.launch.launchIndex = perName[k.launch.name]++;
                lo = std::min(lo, k.launch.start);
                hi = std::max(hi, k.launch.end);
                streams.insert({k.launch.contextId, k.launch.streamId});
            }
            std::stable_sort(run.memOps.begin(), run.memOps.end(), [](const MemOp& a, const MemOp& b) { return a.start < b.start; });
            for (const auto& m : run.memOps) {
                lo = std::min(lo, m.start);
                hi = std::max(hi, m.end);
                streams.insert({m.contextId, m.streamId});
            }
            std::stable_sort(run.apiSpans.begin(), run.apiSpans.end(), [](const ApiSpan& a, const ApiSpan& b) { return a.start < b.start; });
            for (const auto& a : run.apiSpans) {
                lo = std::min(lo, a.start);
                hi = std::max(hi, a.end);
            }
            for (const auto& n : run.nvtx) {
                lo = std::min(lo, n.start);
                hi = std::max(hi, n.end);
            }
            info.processStart = lo == INT64_MAX ? 0 : lo;
            info.processEnd = hi;
            for (const auto& [ctx, sid] : streams) {
                StreamInfo si;
                si.contextId = ctx;
                si.streamId = sid;
                for (const auto& c : s.contexts)
                    if (c.contextId == ctx && c.nullStreamId == sid) si.isDefault = true;
                run.streams.push_back(si);
            }
            std::string notes = "program run: pid " + std::to_string(s.pid) + " (parent " + std::to_string(s.ppid) + "), device "
                + std::to_string(devId) + "; process argv: " + joinArgs(s.argv) + "; exe " + s.exe;
            notes += "; " + std::to_string(run.kernels.size()) + " kernels, " + std::to_string(run.memOps.size()) + " memory ops, "
                + std::to_string(run.apiSpans.size()) + " API calls, " + std::to_string(run.nvtx.size()) + " NVTX ranges/marks";
            if (apiDropped && devId == primary)
                notes += "; " + std::to_string(apiDropped) + " API calls that launched nothing were not kept";
            if (unbalanced && devId == primary) notes += "; " + std::to_string(unbalanced) + " unbalanced NVTX pops/ends ignored";
            if (opt.durationSeconds > 0) notes += "; window: first " + fmtSeconds(opt.durationSeconds) + " s of the process";
            if (!opt.nvtxRange.empty())
                notes += "; window: NVTX ranges named '" + opt.nvtxRange + "' (" + std::to_string(windows.size()) + ")";
            info.notes = notes;
            if (attachTraces(s, devId, run, opt.sourceDirs) > 0) info.hasTimeline = true;
            res.runs.push_back(std::move(run));
        }
    }
    std::stable_sort(res.runs.begin(), res.runs.end(), [](const RunRecord& a, const RunRecord& b) {
        return std::tie(a.info.processStart, a.info.pid, a.info.deviceOrdinal) < std::tie(b.info.processStart, b.info.pid, b.info.deviceOrdinal);
    });
    return res;
}

}  // namespace ws::sink
