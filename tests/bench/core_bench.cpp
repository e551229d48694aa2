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

// System (kernel) CPU seconds of this process: page faults, write(2) into the page cache, fsync.
double cpuSys()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
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

// Loads every traced launch of every run (the bundled sample: one per rung).
int loadAll(const std::string& file)
{
    const double t0 = now();
    const double c0 = cpu();
    auto store = ws::TraceStore::openReadOnly(file);
    double n = 0;
    int launches = 0;
    for (const auto& r : store.runs())
        for (const auto& k : store.kernels(r.id))
            if (k.traced) {
                n += static_cast<double>(store.loadKernel(k.id).intervalCount());
                ++launches;
            }
    const double t1 = now();
    const double c1 = cpu();
    std::printf("load-all: %.0f intervals of %d traced launches in %.3f s wall, %.3f s CPU -> %.2f M intervals/s wall, "
                "%.2f M/s per CPU-second; file %.1f MiB, %.2f B/interval\n",
                n, launches, t1 - t0, c1 - c0, n / (t1 - t0) / 1e6, n / (c1 - c0) / 1e6,
                std::filesystem::file_size(file) / 1048576.0, static_cast<double>(std::filesystem::file_size(file)) / n);
    return 0;
}

// migrateCopy (schema 2 -> 3: compresses the chunks, then VACUUM) and the bytes per interval before and after.
int migrate(const std::string& src, const std::string& dst)
{
    std::filesystem::remove(dst);
    const double t0 = now();
    const ws::MigrationResult r = ws::TraceStore::migrateCopy(src, dst);
    const double t1 = now();
    std::int64_t n = 0;
    for (const auto& s : ws::TraceStore::openReadOnly(dst).runSummaries())
        n += s.intervalCount;
    const auto a = static_cast<double>(std::filesystem::file_size(src));
    const auto b = static_cast<double>(std::filesystem::file_size(dst));
    std::printf("migrate: schema %d -> %d, %lld intervals recompressed in %.3f s; %lld intervals: %.1f MiB (%.2f B/interval) "
                "-> %.1f MiB (%.2f B/interval)\n",
                r.fromVersion, r.toVersion, static_cast<long long>(r.intervalsMigrated), t1 - t0,
                static_cast<long long>(n), a / 1048576.0, a / double(n), b / 1048576.0, b / double(n));
    return loadAll(dst);
}

// A program recording: 10,000 launches, 50,000 API calls, 20,000 NVTX ranges, 5,000 copies, 16 streams, written
// through the streaming RunWriter (one transaction), then opened and loaded as the viewer does.
int programBench(const std::string& file, int scale)
{
    std::filesystem::remove(file);
    const int launches = 10'000 * scale, apis = 50'000 * scale, ranges = 20'000 * scale, copies = 5'000 * scale;
    ws::RunInfo info;
    info.kind = ws::RunKind::Program;
    info.program = "python3";
    info.commandLine = "python3 train.py";
    std::vector<ws::KernelLaunch> ks(static_cast<std::size_t>(launches));
    const char* names[] = {"ampere_sgemm_128x64_tn", "void at::native::vectorized_elementwise_kernel<4, float>",
                           "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>", "nccl_AllReduce_RING_LL"};
    for (int i = 0; i < launches; ++i) {
        auto& k = ks[std::size_t(i)];
        k.name = names[i % 4];
        k.start = 1'000'000 + std::int64_t(i) * 20'000;
        k.end = k.start + 15'000 + (i % 97) * 10;
        k.correlationId = std::uint32_t(2 * i + 1);
        k.streamId = std::uint32_t(7 + i % 4);
        k.contextId = 1;
        k.grid[0] = 132;
        k.block[0] = 256;
        k.launchIndex = i / 4;
    }
    std::vector<ws::ApiSpan> as(static_cast<std::size_t>(apis));
    for (int i = 0; i < apis; ++i) {
        auto& a = as[std::size_t(i)];
        a.name = i % 5 == 0 ? "cudaLaunchKernel" : "cudaStreamGetCaptureInfo";
        a.cbid = 211;
        a.start = 900'000 + std::int64_t(i) * 4'000;
        a.end = a.start + 2'500;
        a.threadId = 4242;
        a.correlationId = std::uint32_t(i);
    }
    std::vector<ws::NvtxRange> ns(static_cast<std::size_t>(ranges));
    for (int i = 0; i < ranges; ++i) {
        auto& r = ns[std::size_t(i)];
        r.name = "aten::linear";
        r.domain = "torch";
        r.start = 800'000 + std::int64_t(i) * 10'000;
        r.end = r.start + 9'000;
        r.depth = i % 3;
        r.threadId = 4242;
    }
    std::vector<ws::MemOp> ms(static_cast<std::size_t>(copies));
    for (int i = 0; i < copies; ++i) {
        auto& m = ms[std::size_t(i)];
        m.kind = ws::MemOpKind::HtoD;
        m.bytes = 1 << 20;
        m.start = 1'010'000 + std::int64_t(i) * 40'000;
        m.end = m.start + 3'000;
        m.streamId = 20;
        m.contextId = 1;
    }
    std::vector<ws::StreamInfo> ss(16);
    for (std::uint32_t i = 0; i < 16; ++i) {
        ss[i].contextId = 1;
        ss[i].streamId = 7 + i;
    }
    const double records = double(launches + apis + ranges + copies + 16);
    // the recorder flushes in batches as CUPTI hands buffers over: cut them before the clock starts
    auto batches = [](auto& all) {
        std::vector<std::decay_t<decltype(all)>> out;
        for (std::size_t i = 0; i < all.size(); i += 1000)
            out.emplace_back(all.begin() + long(i), all.begin() + long(std::min(all.size(), i + 1000)));
        return out;
    };
    const auto kb = batches(ks);
    const auto ab = batches(as);
    const auto nb = batches(ns);
    const auto mb = batches(ms);
    const double tc = now();
    double t0 = 0, c0 = 0, s0 = 0, tcommit = 0;
    ws::RowId id = 0;
    {
        auto store = ws::TraceStore::openForWriting(file);
        t0 = now();
        c0 = cpu();
        s0 = cpuSys();
        auto w = store.beginRun(info);
        for (const auto& b : kb)
            w.addLaunches(b);
        for (const auto& b : ab)
            w.addApiSpans(b);
        for (const auto& b : nb)
            w.addNvtxRanges(b);
        for (const auto& b : mb)
            w.addMemOps(b);
        w.addStreams(ss);
        w.setProcessEnd(800'000, ks.back().end, 0, 0);
        id = w.runId();
        w.commit();
        tcommit = now();
    }
    const double t1 = now();
    const double c1 = cpu();
    const double s1 = cpuSys();
    std::printf("program write: create file %.3f s; beginRun .. commit %.3f s -> %.2f M records/s; close (WAL "
                "checkpoint) %.3f s\n", t0 - tc, tcommit - t0, records / (tcommit - t0) / 1e6, t1 - tcommit);
    std::printf("program write: %.0f records (%d launches, %d API calls, %d NVTX ranges, %d copies, 16 streams) in "
                "%.3f s wall, %.3f s CPU (%.3f s system) -> %.2f M records/s wall, %.2f M records per CPU-second "
                "(beginRun .. close); file %.1f MiB\n",
                records, launches, apis, ranges, copies, t1 - t0, c1 - c0, s1 - s0, records / (t1 - t0) / 1e6,
                records / (c1 - c0) / 1e6,
                std::filesystem::file_size(file) / 1048576.0);
    if (std::getenv("WARPSTAGE_BENCH_WRITE_ONLY")) {  // for profiling the write alone (perf record)
        std::filesystem::remove(file);
        return 0;
    }
    const double t2 = now();
    auto store = ws::TraceStore::openReadOnly(file);
    const auto sums = store.runSummaries();
    const double t3 = now();
    const ws::ProgramTrace p = store.loadProgram(id);
    const double t4 = now();
    std::printf("program open: openReadOnly + runSummaries %.3f s; loadProgram %.3f s (%zu launches, %zu API calls, "
                "%zu NVTX ranges, %zu copies, %zu streams); open to data %.3f s\n",
                t3 - t2, t4 - t3, p.kernels.size(), p.apiSpans.size(), p.nvtx.size(), p.memOps.size(), p.streams.size(),
                t4 - t2);
    (void)sums;
    if (std::getenv("WARPSTAGE_BENCH_KEEP"))  // leave the recording for a look (sqlite3, dbstat)
        std::printf("program file kept: %s\n", file.c_str());
    else
        std::filesystem::remove(file);
    return 0;
}

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
        if (a == "--load-all" && i + 1 < argc)
            return loadAll(argv[i + 1]);
        if (a == "--migrate" && i + 2 < argc)
            return migrate(argv[i + 1], argv[i + 2]);
        if (a == "--program")
            return programBench((std::filesystem::temp_directory_path() / "warpstage_program_bench.db").string(),
                                i + 1 < argc ? std::max(1, std::atoi(argv[i + 1])) : 1);
        if (a == "--intervals" && i + 1 < argc)
            intervals = std::atoll(argv[++i]);
        else if (a == "--file" && i + 1 < argc)
            file = argv[++i];
        else if (a == "--pattern" && i + 1 < argc)
            pattern = argv[++i];
        else if (a == "--keep")
            keep = true;
        else {
            std::fprintf(stderr, "usage: %s [--intervals N] [--pattern P] [--file PATH] [--keep]\n"
                                 "       %s --migrate SRC DST | --load-all FILE | --program [SCALE]\n", argv[0], argv[0]);
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
