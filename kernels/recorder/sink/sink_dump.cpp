// warpstage-sink-dump: prints what the sink files of a folder (warpstage-record --keep-sinks) turn into,
// one JSON object per line: a "run" summary per (process, device), with --kernels one "kernel" line per
// launch; a "stall" line per sink of the stall pass (launches sampled, samples, cubins, launch counts, notes).
// CUDA-free, no store: used by the device scripts and to look into sinks kept after a failed write.
//   warpstage-sink-dump [--kernels] [--root-pid N] [--nvtx-range NAME] [--duration S] DIR
#include "warpstage/sink_reader.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace {
std::string esc(const std::string& s)
{
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            o += ' ';
            continue;
        }
        o += c;
    }
    return o;
}
}  // namespace

int main(int argc, char** argv)
{
    bool kernels = false;
    std::string dir;
    ws::sink::ConvertOptions co;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--kernels") kernels = true;
        else if (a == "--root-pid" && i + 1 < argc) co.outcome.rootPid = std::atoll(argv[++i]), co.outcome.exitCode = 0;
        else if (a == "--nvtx-range" && i + 1 < argc) co.nvtxRange = argv[++i];
        else if (a == "--duration" && i + 1 < argc) co.durationSeconds = std::atof(argv[++i]);
        else if (a == "-h" || a == "--help") {
            std::printf("usage: warpstage-sink-dump [--kernels] [--root-pid N] [--nvtx-range NAME] [--duration S] DIR\n");
            return 0;
        } else dir = a;
    }
    if (dir.empty()) {
        std::fprintf(stderr, "warpstage-sink-dump: no folder given\n");
        return 2;
    }
    const auto sinks = ws::sink::readSinkDir(dir);
    for (const auto& s : sinks)
        std::printf("{\"type\":\"sink\",\"path\":\"%s\",\"pid\":%lld,\"ppid\":%lld,\"bytes\":%llu,\"flushes\":%llu,\"ended\":%s,\"end_signal\":%d,"
                    "\"truncated\":%s,\"error\":\"%s\",\"kernels\":%zu,\"api\":%zu,\"nvtx_events\":%zu,\"dropped\":%llu}\n",
                    esc(s.path).c_str(), (long long)s.pid, (long long)s.ppid, (unsigned long long)s.bytes, (unsigned long long)s.flushes,
                    s.ended ? "true" : "false", s.ended ? s.end.signal : 0, s.truncated ? "true" : "false", esc(s.error).c_str(),
                    s.kernels.size(), s.api.size(), s.nvtx.size(), (unsigned long long)s.dropped);
    for (const auto& s : sinks) {  // the stall pass's records (a .FILE.stalls-XXXXXX folder)
        if (s.stallSamples.empty() && s.stallLaunches.empty() && s.stallCounts.empty() && s.stallNotes.empty()) continue;
        unsigned long long samples = 0;
        for (const auto& x : s.stallSamples) samples += x.count;
        std::string counts, notes;
        for (const auto& c : s.stallCounts)
            counts += std::string(counts.empty() ? "" : ", ") + "\"" + esc(ws::sink::demangle(s.str(c.nameId))) + "@" + std::to_string(c.deviceId)
                + "\":[" + std::to_string(c.launches) + "," + std::to_string(c.sampled) + "]";
        for (const auto& [code, text] : s.stallNotes) notes += std::string(notes.empty() ? "" : ", ") + "\"" + esc(text) + "\"";
        std::printf("{\"type\":\"stall\",\"pid\":%lld,\"launches_sampled\":%zu,\"sample_records\":%zu,\"samples\":%llu,\"cubins\":%zu,"
                    "\"counts\":{%s},\"notes\":[%s]}\n",
                    (long long)s.pid, s.stallLaunches.size(), s.stallSamples.size(), samples, s.cubins.size(), counts.c_str(), notes.c_str());
    }
    const auto conv = ws::sink::toRuns(sinks, co);
    for (const auto& w : conv.warnings) std::printf("{\"type\":\"warning\",\"text\":\"%s\"}\n", esc(w).c_str());
    for (const auto& r : conv.runs) {
        std::map<std::string, int> names;
        std::set<std::uint32_t> apiCorr;
        int graphApi = 0, graphKernels = 0, withoutApi = 0;
        for (const auto& a : r.apiSpans) {
            apiCorr.insert(a.correlationId);
            if (a.name.find("GraphLaunch") != std::string::npos) ++graphApi;
        }
        for (const auto& k : r.kernels) {
            ++names[k.launch.name];
            if (k.launch.graphId) ++graphKernels;
            if (!apiCorr.count(k.launch.correlationId)) ++withoutApi;
        }
        int mem[6] = {0};
        for (const auto& m : r.memOps) ++mem[int(m.kind) < 6 ? int(m.kind) : 0];
        int push = 0, se = 0, mark = 0, open = 0;
        std::string nvtxNames, domains;
        std::set<std::string> seenNv, seenDom;
        for (const auto& n : r.nvtx) {
            push += n.kind == ws::NvtxKind::PushPop;
            se += n.kind == ws::NvtxKind::StartEnd;
            mark += n.kind == ws::NvtxKind::Mark;
            open += !n.closed;
            if (seenNv.insert(n.name).second && seenNv.size() <= 40) nvtxNames += (nvtxNames.empty() ? "\"" : ",\"") + esc(n.name) + "\"";
            if (!n.domain.empty() && seenDom.insert(n.domain).second) domains += (domains.empty() ? "\"" : ",\"") + esc(n.domain) + "\"";
        }
        std::string kn;
        int shown = 0;
        for (const auto& [n, c] : names)
            if (shown++ < 60) kn += (kn.empty() ? "\"" : ",\"") + esc(n.substr(0, 120)) + "\":" + std::to_string(c);
        std::printf("{\"type\":\"run\",\"pid\":%lld,\"ppid\":%lld,\"program\":\"%s\",\"device\":%d,\"device_name\":\"%s\",\"uuid\":\"%s\","
                    "\"status\":\"%s\",\"reason\":\"%s\",\"exit_code\":%d,\"exit_signal\":%d,\"kernels\":%zu,\"kernels_without_api\":%d,"
                    "\"graph_kernels\":%d,\"graph_launch_api\":%d,\"api\":%zu,\"htod\":%d,\"dtoh\":%d,\"dtod\":%d,\"memset\":%d,"
                    "\"streams\":%zu,\"nvtx_push\":%d,\"nvtx_startend\":%d,\"nvtx_mark\":%d,\"nvtx_open\":%d,\"nvtx_names\":[%s],"
                    "\"domains\":[%s],\"span_ms\":%.3f,\"kernel_names\":{%s}}\n",
                    (long long)r.info.pid, (long long)r.info.parentPid, esc(r.info.program).c_str(), r.info.deviceOrdinal,
                    esc(r.info.device.name).c_str(), r.info.deviceUuid.c_str(),
                    r.info.status == ws::RunStatus::Complete ? "complete" : "incomplete", esc(r.info.failureReason).c_str(),
                    r.info.exitCode, r.info.exitSignal, r.kernels.size(), withoutApi, graphKernels, graphApi, r.apiSpans.size(), mem[1],
                    mem[2], mem[3], mem[4], r.streams.size(), push, se, mark, open, nvtxNames.c_str(), domains.c_str(),
                    double(r.info.processEnd - r.info.processStart) / 1e6, kn.c_str());
        if (kernels)
            for (const auto& k : r.kernels)
                std::printf("{\"type\":\"kernel\",\"pid\":%lld,\"name\":\"%s\",\"start\":%lld,\"end\":%lld,\"corr\":%u,\"stream\":%u,"
                            "\"graph\":%u,\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"regs\":%d}\n",
                            (long long)r.info.pid, esc(k.launch.name).c_str(), (long long)k.launch.start, (long long)k.launch.end,
                            k.launch.correlationId, k.launch.streamId, k.launch.graphId, k.launch.grid[0], k.launch.grid[1],
                            k.launch.grid[2], k.launch.block[0], k.launch.block[1], k.launch.block[2], k.launch.registersPerThread);
    }
    return conv.runs.empty() ? 1 : 0;
}
