// Core store benchmark: synthetic trace -> SQLite ingest rate, load rate, RAM per interval.
//
//   core_bench [--intervals N] [--pattern warp_specialized|pingpong|sync|multistage] [--file PATH] [--keep]
//
// Phase 1 (this process): generate a synthetic run, write it with TraceStore::writeRun (one
// transaction, WAL) and time the write. Phase 2 (a fresh child process, so freed memory of
// phase 1 does not hide allocations): open read-only, loadKernel, time it, and measure the
// resident-set growth (VmRSS from /proc/self/status) and the exact bytes of the columnar arrays.
#include "warpstage/analysis.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

double now()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// CPU seconds (user + system) of this process: robust when other jobs share the machine.
double cpu()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long rssKiB()
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::atol(line.c_str() + 6);
    return -1;
}

template <class V>
std::size_t capBytes(const V& v)
{
    return v.capacity() * sizeof(typename V::value_type);
}

int loadPhase(const std::string& file)
{
    const long rss0 = rssKiB();
    const double t0 = now();
    auto store = ws::TraceStore::openReadOnly(file);
    const auto runs = store.runs();
    const auto kernels = store.kernels(runs.front().id);
    ws::RowId traced = 0;
    for (const auto& k : kernels)
        if (k.traced)
            traced = k.id;
    const double t1 = now();
    const double c1 = cpu();
    ws::KernelTrace trace = store.loadKernel(traced);
    const double t2 = now();
    const double c2 = cpu();
    const long rss1 = rssKiB();
    const auto n = static_cast<double>(trace.intervalCount());
    std::size_t arrays = 0, overhead = sizeof(trace);
    for (const auto& l : trace.lanes) {
        arrays += capBytes(l.start) + capBytes(l.duration) + capBytes(l.kind) + capBytes(l.slot) + capBytes(l.kstep);
        overhead += sizeof(l) + l.roleName.capacity();
    }
    overhead += capBytes(trace.ctas) + capBytes(trace.loads) + capBytes(trace.tiles) + capBytes(trace.lanes);
    for (const auto& s : trace.stalls)
        overhead += sizeof(s) + s.functionName.capacity() + s.sourceFile.capacity() + s.reason.capacity()
            + s.reasonLabel.capacity() + s.stage.capacity();
    std::printf("load:   %.0f intervals, %zu lanes, %zu loads in %.3f s wall, %.3f s CPU (open %.3f s) -> %.2f M intervals/s wall, %.2f M/s per CPU-second\n", n,
                trace.lanes.size(), trace.loads.size(), t2 - t1, c2 - c1, t1 - t0, n / (t2 - t1) / 1e6, n / (c2 - c1) / 1e6);
    std::printf("memory: interval arrays %.2f B/interval; whole KernelTrace (loads, tiles, stalls, lanes) %.2f B/interval\n",
                arrays / n, (arrays + overhead) / n);
    std::printf("memory: RSS growth during open+load %.2f B/interval (%.1f MiB, includes SQLite's page cache)\n",
                (rss1 - rss0) * 1024.0 / n, (rss1 - rss0) / 1024.0);
    const double t3 = now(), c3 = cpu();
    const ws::KernelMetrics m = ws::analyze(trace);
    const double t4 = now(), c4 = cpu();
    std::printf("analyze: whole kernel in %.3f s wall, %.3f s CPU (load_hidden_share %.3f, %zu per-CTA rows)\n", t4 - t3,
                c4 - c3, m.total.loadHiddenShare, m.perCta.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    std::int64_t intervals = 10'000'000;
    std::string file = (std::filesystem::temp_directory_path() / "warpstage_core_bench.db").string();
    std::string pattern = "warp_specialized";
    bool keep = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--load-only" && i + 1 < argc)
            return loadPhase(argv[i + 1]);
        if (a == "--intervals" && i + 1 < argc)
            intervals = std::atoll(argv[++i]);
        else if (a == "--file" && i + 1 < argc)
            file = argv[++i];
        else if (a == "--pattern" && i + 1 < argc)
            pattern = argv[++i];
        else if (a == "--keep")
            keep = true;
        else {
            std::fprintf(stderr, "usage: %s [--intervals N] [--pattern P] [--file PATH] [--keep]\n", argv[0]);
            return 2;
        }
    }
    ws::SyntheticParams p;
    p.targetIntervals = intervals;
    if (pattern == "sync")
        p.pattern = ws::SyntheticPattern::Sync;
    else if (pattern == "multistage")
        p.pattern = ws::SyntheticPattern::Multistage;
    else if (pattern == "pingpong")
        p.pattern = ws::SyntheticPattern::Pingpong;
    double t0 = now();
    const ws::RunRecord rec = ws::generateSynthetic(p);
    double t1 = now();
    std::size_t n = 0, lanes = 0;
    for (const auto& k : rec.kernels) {
        n += k.intervals.size();
        lanes += k.warps.size();
    }
    std::printf("generate: %zu intervals over %zu lanes, %zu loads (%s) in %.3f s\n", n, lanes,
                rec.kernels.front().loads.size(), pattern.c_str(), t1 - t0);
    std::filesystem::remove(file);
    t0 = now();
    const double c0 = cpu();
    double tw = 0;
    {
        auto store = ws::TraceStore::openForWriting(file);
        store.writeRun(rec);
        tw = now();
    }  // closing checkpoints the WAL into the file
    t1 = now();
    const double c1 = cpu();
    const auto size = std::filesystem::file_size(file);
    std::printf("ingest: writeRun (commit) %.3f s, close (WAL checkpoint) %.3f s\n", tw - t0, t1 - tw);
    std::printf("ingest: %.3f s wall, %.3f s CPU -> %.2f M intervals/s wall, %.2f M/s per CPU-second (one transaction, WAL, incl. %zu load rows; file %.1f MiB, %.2f B/interval)\n",
                t1 - t0, c1 - c0, n / (t1 - t0) / 1e6, n / (c1 - c0) / 1e6, rec.kernels.front().loads.size(), size / 1048576.0,
                static_cast<double>(size) / n);
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "--load-only", file.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!keep)
        std::filesystem::remove(file);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
