// Proton import benchmark: a large generated Proton trace -> importProtonFile (streaming JSON reader,
// ProtonBuilder) -> one run in memory. Reports file size, time, scopes/s and peak RSS, to show that the
// memory follows the scopes kept and not the file (issue 12: "a 2 GB file (streamed, bounded memory)").
//
//   proton_bench [--mb N] [--file PATH] [--keep]
//
// The generated file has the shape of tests/fixtures/proton/gluon_ws.chrome_trace (a 1-warp load
// partition and 4 MMA warps, 16 k-steps per CTA, Proton's exact event layout with its args) repeated
// over as many CTAs as it takes to reach N MB (default 200). Peak RSS is getrusage's ru_maxrss of this
// process, measured after the file was written (the generator streams to disk and keeps nothing).
#include "warpstage/proton.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <sys/resource.h>

namespace {

double now()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

long maxRssKb()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

long currentRssKb()
{
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kb = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "VmRSS:", 6) == 0)
            kb = std::atol(line + 6);
    std::fclose(f);
    return kb;
}

// Writes Proton-shaped events until `bytes` are written; returns the number of scope events.
long long generate(const std::string& path, long long bytes)
{
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        std::perror(path.c_str());
        std::exit(1);
    }
    long long written = std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    long long events = 0;
    bool first = true;
    const auto ev = [&](const char* name, int sm, int cta, int warp, double ts, double dur) {
        written += std::fprintf(f,
                                "%s{\"args\":{\"Finalization Time (ns)\":224,\"Frequency (MHz)\":1000.0,\"call_stack\":"
                                "[\"ROOT\",\"ws_kernel\"]},\"cat\":\"ws_kernel\",\"cname\":\"cq_build_passed\",\"dur\":%.3f,"
                                "\"name\":\"%s\",\"ph\":\"X\",\"pid\":\"ws_kernel Core%d CTA%d\",\"tid\":\"warp %d (line 0)\","
                                "\"ts\":%.3f}",
                                first ? "" : ",", dur, name, sm, cta, warp, ts);
        first = false;
        ++events;
    };
    for (int cta = 0; written < bytes; ++cta) {
        const int sm = cta % 132;
        const double t0 = 16.0 * (cta / 132);   // waves of 132 CTAs, 16 "µs" apart
        for (int k = 0; k < 16; ++k) {
            ev("wait_empty", sm, cta, 6, t0 + 0.8 * k, 0.1);
            ev("tma_issue", sm, cta, 6, t0 + 0.8 * k + 0.12, 0.04);
        }
        for (int w = 0; w < 4; ++w) {
            for (int k = 0; k < 16; ++k) {
                ev("wait_ready", sm, cta, w, t0 + 0.17 + 0.8 * k, 0.11);
                ev("wgmma", sm, cta, w, t0 + 0.3 + 0.8 * k, 0.59);
            }
            ev("epilogue", sm, cta, w, t0 + 13.8, 1.5);
        }
    }
    std::fprintf(f, "]}\n");
    std::fclose(f);
    return events;
}

}  // namespace

int main(int argc, char** argv)
{
    long long mb = 200;
    std::string path = (std::filesystem::temp_directory_path() / "proton_bench.chrome_trace").string();
    bool keep = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = std::atoll(argv[++i]);
        else if (!std::strcmp(argv[i], "--file") && i + 1 < argc)
            path = argv[++i];
        else if (!std::strcmp(argv[i], "--keep"))
            keep = true;
        else {
            std::fprintf(stderr, "usage: proton_bench [--mb N] [--file PATH] [--keep]\n");
            return 2;
        }
    }
    if (mb <= 0) {
        std::fprintf(stderr, "proton_bench: --mb must be positive\n");
        return 2;
    }
    const double g0 = now();
    const long long events = generate(path, mb << 20);
    const double g1 = now();
    const auto size = static_cast<long long>(std::filesystem::file_size(path));
    const long rssBefore = currentRssKb();
    std::printf("generated %s: %.1f MB, %lld scope events in %.2f s; RSS before import %ld KiB\n", path.c_str(),
                static_cast<double>(size) / (1 << 20), events, g1 - g0, rssBefore);

    const double t0 = now();
    ws::ProtonImport imp = ws::importProtonFile(path, {});
    const double t1 = now();
    std::size_t intervals = 0, loads = 0;
    for (const auto& k : imp.run.kernels) {
        intervals += k.intervals.size();
        loads += k.loads.size();
    }
    const long peak = maxRssKb();
    std::printf("import: %.2f s, %.0f scope events/s, %.1f MB/s; %zu CTAs, %zu intervals, %zu loads inferred\n", t1 - t0,
                static_cast<double>(events) / (t1 - t0), static_cast<double>(size) / (1 << 20) / (t1 - t0),
                imp.run.kernels.at(0).ctas.size(), intervals, loads);
    std::printf("peak RSS %ld KiB = %.1f MB (file %.1f MB; %.1f bytes of peak RSS per interval kept)\n", peak,
                static_cast<double>(peak) / 1024, static_cast<double>(size) / (1 << 20),
                static_cast<double>(peak) * 1024.0 / static_cast<double>(intervals));
    if (!keep)
        std::filesystem::remove(path);
    return 0;
}
