// whatif_bench: how long the what-if model takes to build and to re-predict (issue 13, docs/benchmarks.md).
//   whatif_bench [INTERVALS] [TRACE.wstrace]
// A synthetic warp-specialized kernel of about INTERVALS intervals (default 1,000,000) and, if given, every
// traced kernel of TRACE. Prints the median of 9 re-predictions without and with the predicted timeline.
#include "warpstage/store.h"
#include "warpstage/synthetic.h"
#include "warpstage/whatif.h"

#include <algorithm>
#include <chrono>
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
    std::vector<double> bare, full;
    TimeNs predicted = 0;
    for (int i = 0; i < 9; ++i) {
        p.loadLatency = 0.5 + 0.1 * i;  // a slider moving
        const auto a = clock::now();
        predicted = m.predict(p, false).predictedNs;
        const auto b = clock::now();
        m.predict(p, true);
        const auto c = clock::now();
        bare.push_back(ms(a, b));
        full.push_back(ms(b, c));
    }
    std::sort(bare.begin(), bare.end());
    std::sort(full.begin(), full.end());
    const GraphSummary& g = m.summary();
    std::printf("%-28s %9zu intervals  build %7.1f ms (CPU %.1f ms)  predict %6.1f ms (median of 9; min %.1f max %.1f)  "
                "with timeline %6.1f ms  [last prediction %.1f us; %d CTAs, %d warps, %lld unexplained waits]\n",
                name.c_str(), t.intervalCount(), ms(t0, t1), buildCpu, bare[4], bare.front(), bare.back(), full[4],
                double(predicted) / 1e3, g.ctas, g.lanes, (long long)g.unexplainedWaits);
}

}  // namespace

int main(int argc, char** argv)
{
    const long long n = argc > 1 ? std::atoll(argv[1]) : 1000000;
    const std::string tmp = (std::filesystem::temp_directory_path() / "whatif_bench.wstrace").string();
    std::filesystem::remove(tmp);
    {
        SyntheticParams sp;
        sp.pattern = SyntheticPattern::WarpSpecialized;
        sp.targetIntervals = n;
        sp.stallSamples = false;
        auto st = TraceStore::openForWriting(tmp);
        st.writeRun(generateSynthetic(sp));
    }
    {
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
                if (k.traced)
                    bench(r.variant, st.loadKernel(k.id));
    }
    return 0;
}
