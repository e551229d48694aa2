// whatif_bench: how long the what-if model takes to build and to re-predict (issue 13, docs/benchmarks.md).
//   whatif_bench [INTERVALS] [TRACE.wstrace] [REPS]      (INTERVALS 0: no synthetic kernel; environment
//   WHATIF_BENCH_ONLY=VARIANT: only the TRACE's kernels of that variant, e.g. tma_sync; WHATIF_BENCH_LOAD_BANDWIDTH=1:
//   the predictions with --load-bandwidth, the opt-in model)
// A synthetic warp-specialized kernel of about INTERVALS intervals (default 1,000,000) and, if given, every
// traced kernel of TRACE. Prints the median (p50) and the p95 (nearest rank) of REPS (default 21) re-predictions
// without the predicted timeline, with their CPU time (the process's: the replay may use several threads; on the
// shared build machine the wall clock also measures the other processes) and their wall split (replay with the
// resource rounds, critical path walk: WhatIfResult::timing), and the median with the timeline (wall, including
// freeing the result; its CPU; and WhatIfResult::timing.timelineMs, the filling of the predicted timeline).
#include "warpstage/store.h"
#include "warpstage/synthetic.h"
#include "warpstage/whatif.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

using namespace ws;

namespace {

double ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// This thread's CPU time: on the shared build machine the wall clock mostly measures the other processes.
double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

double processCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

int g_reps = 21;

double nearestRank(const std::vector<double>& sorted, double q)
{
    std::size_t k = std::size_t(std::ceil(q * double(sorted.size())));
    return sorted[std::min(sorted.size(), std::max<std::size_t>(1, k)) - 1];
}

void bench(const std::string& name, const KernelTrace& t)
{
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const double cpu0 = threadCpuMs();
    const WhatIfModel m = WhatIfModel::build(t);
    const double buildCpu = threadCpuMs() - cpu0;
    const auto t1 = clock::now();
    WhatIfParams p;
    p.stages = 6;
    p.mma = 0.8;
    p.loadBandwidth = std::getenv("WHATIF_BENCH_LOAD_BANDWIDTH") != nullptr;
    std::vector<double> bare, full, cpu, replay, path, fullCpu, timeline;
    TimeNs predicted = 0;
    int rounds = 0;
    for (int i = 0; i < g_reps; ++i) {
        p.loadLatency = 0.5 + 0.1 * (i % 9);  // a slider moving
        const auto a = clock::now();
        const double c0 = processCpuMs();
        const WhatIfResult res = m.predict(p, false);
        predicted = res.predictedNs;
        rounds = res.timing.resourceRounds;
        const double c1 = processCpuMs();
        replay.push_back(res.timing.replayMs);
        path.push_back(res.timing.pathMs);
        const auto b = clock::now();
        const double c2 = processCpuMs();
        timeline.push_back(m.predict(p, true).timing.timelineMs);
        fullCpu.push_back(processCpuMs() - c2);
        const auto c = clock::now();
        bare.push_back(ms(a, b));
        full.push_back(ms(b, c));
        cpu.push_back(c1 - c0);
    }
    std::sort(bare.begin(), bare.end());
    std::sort(full.begin(), full.end());
    std::sort(cpu.begin(), cpu.end());
    std::sort(replay.begin(), replay.end());
    std::sort(path.begin(), path.end());
    std::sort(fullCpu.begin(), fullCpu.end());
    std::sort(timeline.begin(), timeline.end());
    const GraphSummary& g = m.summary();
    std::printf("%-28s %9zu intervals  build %7.1f ms (CPU %.1f ms)  predict p50 %6.1f ms p95 %6.1f ms (of %d; min %.1f "
                "max %.1f; CPU p50 %.1f p95 %.1f ms; replay p50 %.1f, path p50 %.1f ms)  with timeline p50 %6.1f ms (CPU p50 %.1f; "
                "timeline part p50 %.1f ms)  [last prediction %.1f us, %d resource rounds; %d CTAs, %d warps, %lld unexplained waits]\n",
                name.c_str(), t.intervalCount(), ms(t0, t1), buildCpu, nearestRank(bare, 0.5), nearestRank(bare, 0.95),
                g_reps, bare.front(), bare.back(), nearestRank(cpu, 0.5), nearestRank(cpu, 0.95),
                nearestRank(replay, 0.5), nearestRank(path, 0.5),
                nearestRank(full, 0.5), nearestRank(fullCpu, 0.5), nearestRank(timeline, 0.5), double(predicted) / 1e3, rounds, g.ctas, g.lanes, (long long)g.unexplainedWaits);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv)
{
    const long long n = argc > 1 ? std::atoll(argv[1]) : 1000000;
    if (argc > 3)
        g_reps = std::max(1, std::atoi(argv[3]));
    const std::string tmp = (std::filesystem::temp_directory_path() / "whatif_bench.wstrace").string();
    std::filesystem::remove(tmp);
    const char* only = std::getenv("WHATIF_BENCH_ONLY");
    if (n > 0) {
        SyntheticParams sp;
        sp.pattern = SyntheticPattern::WarpSpecialized;
        sp.targetIntervals = n;
        sp.stallSamples = false;
        auto st = TraceStore::openForWriting(tmp);
        st.writeRun(generateSynthetic(sp));
    }
    if (n > 0) {
        const TraceStore st = TraceStore::openReadOnly(tmp);
        for (const KernelLaunch& k : st.kernels(st.runs()[0].id))
            if (k.traced)
                bench("synthetic warp_specialized", st.loadKernel(k.id));
    }
    std::filesystem::remove(tmp);
    if (argc > 2) {
        const TraceStore st = TraceStore::openReadOnly(argv[2]);
        for (const RunInfo& r : st.runs())
            for (const KernelLaunch& k : st.kernels(r.id))
                if (k.traced && (!only || r.variant == only))
                    bench(r.variant, st.loadKernel(k.id));
    }
    return 0;
}
