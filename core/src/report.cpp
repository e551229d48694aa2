#include "warpstage/report.h"
#include "warpstage/runfamily.h"
#include "warpstage/tilegeom.h"

#include "warpstage/program.h"

#include "warpstage/store.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace ws {

std::string jsonEscape(const std::string& s)
{
    std::string out;
    out.reserve(s.size() + 8);
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    return out;
}

namespace {

std::string num(double v)
{
    if (!std::isfinite(v))
        return "null";
    char buf[64];
    if (v == std::floor(v) && std::fabs(v) < 1e15)
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string q(const std::string& s) { return "\"" + jsonEscape(s) + "\""; }

std::string human(double v, const std::string& unit)
{
    char buf[64];
    if (!std::isfinite(v))
        return "—";
    if (unit == "ratio")
        std::snprintf(buf, sizeof buf, "%.1f %%", v * 100);
    else if (unit == "ns" && std::fabs(v) >= 1e6)
        std::snprintf(buf, sizeof buf, "%.3f ms", v / 1e6);
    else if (unit == "ns" && std::fabs(v) >= 1e3)
        std::snprintf(buf, sizeof buf, "%.2f us", v / 1e3);
    else if (unit == "TFLOP/s")
        std::snprintf(buf, sizeof buf, "%.1f TFLOP/s", v);
    else
        std::snprintf(buf, sizeof buf, "%s %s", num(v).c_str(), unit.c_str());
    return buf;
}

const char* statusName(RunStatus s)
{
    return s == RunStatus::Failed ? "failed" : s == RunStatus::Incomplete ? "incomplete" : "complete";
}

// A program run (schema 3): the process, how it ended, its launches and its ten most expensive kernels
// (thousands of launches: never one line each).
void describeProgramRun(std::ostringstream& o, const TraceStore& store, const RunSummary& rs)
{
    const RunInfo& r = rs.info;
    o << "\nrun " << r.id << ": program " << (r.program.empty() ? "?" : r.program) << "  pid " << r.pid
      << (r.parentPid ? "  parent " + std::to_string(r.parentPid) : std::string()) << "  device " << r.deviceOrdinal << "  "
      << (r.synthetic ? "SYNTHETIC" : "recorded") << "  " << statusName(r.status)
      << (r.status == RunStatus::Failed && !r.failureReason.empty() ? ": " + r.failureReason : std::string()) << "\n";
    o << "  exit: "
      << (r.exitSignal ? "signal " + std::to_string(r.exitSignal)
                       : r.exitCode >= 0 ? "code " + std::to_string(r.exitCode) : std::string("unknown (still running when stopped)"))
      << "\n";
    o << "  device: " << (r.device.name.empty() ? "?" : r.device.name) << "  driver " << r.driverVersion << "  CUDA "
      << r.cudaVersion << "\n";
    if (!r.startedAt.empty() || !r.host.empty())
        o << "  recorded: " << r.startedAt << " on " << r.host << "\n";
    if (!r.commandLine.empty())
        o << "  command: " << r.commandLine << "\n";
    if (!r.workingDir.empty())
        o << "  working directory: " << r.workingDir << "\n";
    if (!r.notes.empty())
        o << "  notes: " << r.notes << "\n";
    ProgramTrace p;
    p.kernels = store.kernels(r.id);
    p.memOps = store.memOps(r.id);
    std::int64_t traced = 0;
    for (const auto& k : p.kernels)
        traced += k.traced ? 1 : 0;
    const auto stats = kernelStats(p);
    o << "  launches: " << p.kernels.size() << " (" << stats.size() << " kernels, " << traced
      << " with a per-warp timeline), memory operations: " << p.memOps.size() << ", GPU busy "
      << human(static_cast<double>(gpuBusyNs(p)), "ns") << "\n";
    for (std::size_t i = 0; i < stats.size() && i < 10; ++i) {
        const KernelStats& s = stats[i];
        o << "    " << s.launches << " x " << s.family << "  total " << human(static_cast<double>(s.totalNs), "ns") << "  ("
          << static_cast<int>(s.share * 1000 + 0.5) / 10.0 << " %)\n";
    }
    if (stats.size() > 10)
        o << "    ... " << stats.size() - 10 << " more kernels\n";
    // A family rung (warpstage-record --rungs lce:...): achieved TFLOP/s and bytes against the H200 roofline.
    if (const RungReport rr = rungReport(r, p.kernels); rr.tagged)
        o << "  roofline (" << RooflineLimits{}.name << "): " << rr.text << "\n";
}

}  // namespace

std::string describeFile(const std::string& path, bool json)
{
    const TraceStore store = TraceStore::openReadOnly(path);
    const auto runs = store.runSummaries();
    std::ostringstream o;
    if (json) {
        o << "{\n  \"file\": " << q(path) << ",\n  \"schema_version\": " << store.schemaVersion() << ",\n  \"runs\": [";
        bool firstRun = true;
        for (const RunSummary& rs : runs) {
            const RunInfo& r = rs.info;
            o << (firstRun ? "\n" : ",\n");
            firstRun = false;
            o << "    {\"id\": " << r.id << ", \"kind\": " << q(r.kind == RunKind::Program ? "program" : "ladder")
              << ", \"pid\": " << r.pid << ", \"program\": " << q(r.program) << ", \"exit_code\": " << r.exitCode
              << ", \"exit_signal\": " << r.exitSignal << ", \"launches\": " << rs.kernelCount << ", \"variant\": " << q(r.variant) << ", \"m\": " << r.m << ", \"n\": " << r.n
              << ", \"k\": " << r.k << ", \"synthetic\": " << (r.synthetic ? "true" : "false") << ", \"status\": "
              << q(statusName(r.status)) << ", \"failure_reason\": " << q(r.failureReason)
              << ", \"device\": " << q(r.device.name) << ", \"sm_count\": " << r.device.smCount
              << ", \"driver\": " << q(r.driverVersion) << ", \"cuda\": " << q(r.cudaVersion)
              << ", \"cupti\": " << q(r.cuptiVersion) << ", \"host\": " << q(r.host) << ", \"started_at\": "
              << q(r.startedAt) << ", \"command_line\": " << q(r.commandLine) << ", \"notes\": " << q(r.notes)
              << ", \"has_timeline\": " << (r.hasTimeline ? "true" : "false") << ", \"has_stalls\": "
              << (r.hasStalls ? "true" : "false") << ", \"interval_count\": " << rs.intervalCount;
            if (const auto g = tileGeometryOf(r))  // tilegeom.h; null where the file has no [ws-tiles] tag
                o << ", \"tiles\": {\"block_m\": " << g->blockM << ", \"block_n\": " << g->blockN
                  << ", \"cluster_m\": " << g->clusterM << ", \"stages\": " << g->stages << ", \"config\": " << g->config
                  << ", \"pick\": " << q(g->pick) << ", \"tiles_m\": " << g->tilesM << ", \"tiles_n\": " << g->tilesN
                  << ", \"k_steps\": " << g->kSteps << ", \"walkers\": " << g->walkers << ", \"work_tiles\": "
                  << g->workTiles << ", \"dp_tiles\": " << g->dpTiles << ", \"sk_clusters\": " << g->skClusters
                  << ", \"sk_iters\": " << g->skIters << "}";
            else
                o << ", \"tiles\": null";
            if (r.kind == RunKind::Program) {  // the family (core/runfamily.h) and, for a tagged rung, its roofline
                const RunFamilyInfo fam = familyOf(r);
                o << ", \"family\": " << q(std::string(familyKey(fam.family))) << ", \"rung\": " << fam.rung;
                if (const RungReport rr = rungReport(r, store.kernels(r.id)); rr.ok)
                    o << ", \"roofline\": {\"ms_per_iteration\": " << num(rr.point.seconds * 1e3) << ", \"iterations\": "
                      << rr.iterationNs.size() << ", \"launches_per_iteration\": " << rr.launchesPerIteration
                      << ", \"useful_flops\": " << num(rr.tag.usefulFlops) << ", \"bytes_moved\": " << num(rr.tag.bytesMoved)
                      << ", \"tflops\": " << num(rr.point.tflops) << ", \"tbps\": " << num(rr.point.tbps)
                      << ", \"intensity\": " << num(rr.point.intensity) << ", \"ridge\": " << num(rr.point.ridge)
                      << ", \"bound\": " << q(rr.point.computeBound ? "compute" : "memory")
                      << ", \"fraction_of_roof\": " << num(rr.point.fractionOfRoof) << "}";
            }
            o << ",\n     \"kernels\": [";
            bool firstK = true;
            for (const KernelSummary& ks : store.kernelSummaries(r.id)) {
                const KernelLaunch& k = ks.launch;
                o << (firstK ? "\n" : ",\n");
                firstK = false;
                o << "       {\"id\": " << k.id << ", \"name\": " << q(k.name) << ", \"variant\": " << q(k.variant)
                  << ", \"traced\": " << (k.traced ? "true" : "false") << ", \"grid\": [" << k.grid[0] << ", "
                  << k.grid[1] << ", " << k.grid[2] << "], \"block\": [" << k.block[0] << ", " << k.block[1] << ", "
                  << k.block[2] << "], \"cluster\": [" << k.cluster[0] << ", " << k.cluster[1] << ", " << k.cluster[2]
                  << "], \"start_ns\": " << k.start << ", \"end_ns\": " << k.end << ", \"duration_ns\": "
                  << (k.end - k.start) << ", \"ctas\": " << ks.ctaCount << ", \"warps\": " << ks.warpCount
                  << ", \"intervals\": " << ks.intervalCount << ", \"loads\": " << ks.loadCount
                  << ", \"stall_samples\": " << ks.stallSampleCount << "}";
            }
            o << (firstK ? "],\n" : "\n     ],\n");
            o << "     \"metrics\": [";
            bool firstM = true;
            for (const Metric& m : store.metrics(r.id)) {
                o << (firstM ? "\n" : ",\n");
                firstM = false;
                o << "       {\"kernel_id\": " << m.kernelId << ", \"scope\": " << q(m.scope) << ", \"name\": "
                  << q(m.name) << ", \"value\": " << num(m.value) << ", \"unit\": " << q(m.unit) << "}";
            }
            o << (firstM ? "]}" : "\n     ]}");
        }
        o << (firstRun ? "]\n}\n" : "\n  ]\n}\n");
        return o.str();
    }

    o << path << ": Warpstage trace, schema version " << store.schemaVersion() << ", " << runs.size()
      << (runs.size() == 1 ? " run\n" : " runs\n");
    for (const RunSummary& rs : runs) {
        const RunInfo& r = rs.info;
        if (r.kind == RunKind::Program) {
            describeProgramRun(o, store, rs);
            continue;
        }
        o << "\nrun " << r.id << ": " << (r.variant.empty() ? "(no variant)" : r.variant) << "  " << r.m << "x" << r.n
          << "x" << r.k << "  " << (r.synthetic ? "SYNTHETIC" : "recorded")
          << (r.status == RunStatus::Failed ? "  FAILED: " + r.failureReason : std::string()) << "\n";
        o << "  device: " << (r.device.name.empty() ? "?" : r.device.name) << " (" << r.device.smCount << " SMs)"
          << "  driver " << r.driverVersion << "  CUDA " << r.cudaVersion << (r.cuptiVersion.rfind("CUPTI", 0) == 0 ? "  " : "  CUPTI ") << r.cuptiVersion << "\n";
        if (!r.startedAt.empty() || !r.host.empty())
            o << "  recorded: " << r.startedAt << " on " << r.host << "\n";
        if (!r.commandLine.empty())
            o << "  command: " << r.commandLine << "\n";
        if (!r.notes.empty())
            o << "  notes: " << r.notes << "\n";
        // the tile configuration that ran (tilegeom.h: the recorder's [ws-tiles] tag; older files have none)
        if (const auto g = tileGeometryOf(r))
            o << "  tiles: " << tileGeometryText(*g) << "\n";
        else
            o << "  tiles: " << kTileConfigNotRecorded << "\n";
        o << "  timeline: " << (r.hasTimeline ? "yes" : "no") << ", stalls: " << (r.hasStalls ? "yes" : "no")
          << ", intervals: " << rs.intervalCount << "\n";
        const auto metrics = store.metrics(r.id);
        for (const KernelSummary& ks : store.kernelSummaries(r.id)) {
            const KernelLaunch& k = ks.launch;
            o << "  kernel " << k.id << ": " << k.name << (k.traced ? "  [traced]" : "") << "\n";
            o << "    grid " << k.grid[0] << "x" << k.grid[1] << "x" << k.grid[2] << ", block " << k.block[0] << "x"
              << k.block[1] << "x" << k.block[2] << ", " << human(static_cast<double>(k.end - k.start), "ns") << ", "
              << ks.ctaCount << " CTAs, " << ks.warpCount << " warps, " << ks.intervalCount << " intervals, "
              << ks.loadCount << " loads, " << ks.stallSampleCount << " stall samples\n";
            for (const Metric& m : metrics)
                if (m.kernelId == k.id && m.scope == "kernel")
                    o << "    " << m.name << " = " << human(m.value, m.unit) << "\n";
        }
        for (const Metric& m : metrics)
            if (m.kernelId == 0)
                o << "  " << m.scope << " " << m.name << " = " << human(m.value, m.unit) << "\n";
    }
    return o.str();
}

}  // namespace ws
