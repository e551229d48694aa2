// SQL over traces benchmark (docs/benchmarks.md, "SQL over traces"): time of
//   SELECT kind, sum(dur_ns) FROM intervals WHERE kernel_id = K GROUP BY kind
// with the constraint pushed down into the virtual table (only launch K's chunks are decoded) and without
// (`kernel_id + 0 = K`: SQLite cannot hand the constraint over, every chunk of the file is decoded), with
// push-down but SQLite's sorter doing the grouping (`GROUP BY kind + 0`), and,
// for reference, TraceStore::loadKernel(K) summed in C++.
//
//   query_bench [--file PATH] [--kernel K] [--intervals N] [--repeat R]
//
// Without --file it writes a synthetic warp-specialized run of about N intervals (default 4.5 M) plus a
// second one of the same size (so a scan without push-down decodes twice as much) into a temporary file.
#include "warpstage/query.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace {

double now()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double cpu()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Timing {
    double wall = 1e30, cpu = 1e30;
    long long rows = 0, sum = 0;
};

// Runs `sql` on a fresh read-only connection, `repeat` times; the best wall and CPU time.
Timing timeQuery(const std::string& path, const std::string& sql, int repeat)
{
    Timing t;
    for (int r = 0; r < repeat; ++r) {
        sqlite3* db = nullptr;
        if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK
            || ws::registerQueryTables(db) != SQLITE_OK) {
            std::fprintf(stderr, "cannot open %s\n", path.c_str());
            std::exit(1);
        }
        const double w0 = now(), c0 = cpu();
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
            std::fprintf(stderr, "%s\n", sqlite3_errmsg(db));
            std::exit(1);
        }
        long long rows = 0, sum = 0;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            ++rows;
            sum += sqlite3_column_int64(st, 1);
        }
        if (rc != SQLITE_DONE) {
            std::fprintf(stderr, "%s\n", sqlite3_errmsg(db));
            std::exit(1);
        }
        sqlite3_finalize(st);
        const double w = now() - w0, c = cpu() - c0;
        sqlite3_close(db);
        t.wall = std::min(t.wall, w);
        t.cpu = std::min(t.cpu, c);
        t.rows = rows;
        t.sum = sum;
    }
    return t;
}

}  // namespace

int main(int argc, char** argv)
{
    std::string file;
    long long kernel = 0;
    long long intervals = 4'500'000;
    int repeat = 3;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--file" && i + 1 < argc)
            file = argv[++i];
        else if (a == "--kernel" && i + 1 < argc)
            kernel = std::atoll(argv[++i]);
        else if (a == "--intervals" && i + 1 < argc)
            intervals = std::atoll(argv[++i]);
        else if (a == "--repeat" && i + 1 < argc)
            repeat = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: %s [--file PATH] [--kernel K] [--intervals N] [--repeat R]\n", argv[0]);
            return 2;
        }
    }
    std::string tmp;
    try {
        if (file.empty()) {
            tmp = (std::filesystem::temp_directory_path() / ("query_bench_" + std::to_string(getpid()) + ".wstrace")).string();
            file = tmp;
            auto store = ws::TraceStore::openForWriting(file);
            for (int run = 0; run < 2; ++run) {
                ws::SyntheticParams p;
                p.pattern = ws::SyntheticPattern::WarpSpecialized;
                p.targetIntervals = intervals;
                p.seed = 1 + static_cast<std::uint64_t>(run);
                p.stallSamples = false;
                store.writeRun(ws::generateSynthetic(p));
            }
        }
        auto store = ws::TraceStore::openReadOnly(file);
        if (kernel <= 0) {  // the traced launch with the most intervals
            long long best = -1;
            for (const auto& r : store.runs())
                for (const auto& k : store.kernelSummaries(r.id))
                    if (k.intervalCount > best) {
                        best = k.intervalCount;
                        kernel = k.launch.id;
                    }
        }
        long long total = 0, mine = 0;
        for (const auto& r : store.runs())
            for (const auto& k : store.kernelSummaries(r.id)) {
                total += k.intervalCount;
                if (k.launch.id == kernel)
                    mine = k.intervalCount;
            }
        std::printf("file %s: %lld intervals in all, kernel %lld: %lld\n", file.c_str(), total, kernel, mine);

        const std::string k = std::to_string(kernel);
        const Timing push = timeQuery(file, "SELECT kind, sum(dur_ns) FROM intervals WHERE kernel_id = " + k + " GROUP BY kind", repeat);
        std::printf("push-down    (kernel_id = %s):     wall %.3f s  cpu %.3f s  %lld kinds  sum %lld ns\n", k.c_str(),
                    push.wall, push.cpu, push.rows, push.sum);
        const Timing sorted = timeQuery(file, "SELECT kind + 0 AS kind, sum(dur_ns) FROM intervals WHERE kernel_id = " + k + " GROUP BY 1", repeat);
        std::printf("push-down, SQLite sorts (GROUP BY kind + 0): wall %.3f s  cpu %.3f s  %lld kinds  sum %lld ns\n",
                    sorted.wall, sorted.cpu, sorted.rows, sorted.sum);
        const Timing scan = timeQuery(file, "SELECT kind, sum(dur_ns) FROM intervals WHERE kernel_id + 0 = " + k + " GROUP BY kind", repeat);
        std::printf("no push-down (kernel_id + 0 = %s): wall %.3f s  cpu %.3f s  %lld kinds  sum %lld ns\n", k.c_str(),
                    scan.wall, scan.cpu, scan.rows, scan.sum);

        double bw = 1e30, bc = 1e30;
        long long sum = 0;
        for (int r = 0; r < repeat; ++r) {
            const double w0 = now(), c0 = cpu();
            const ws::KernelTrace t = store.loadKernel(kernel);
            sum = 0;
            for (const auto& l : t.lanes)
                for (const auto d : l.duration)
                    sum += d;
            bw = std::min(bw, now() - w0);
            bc = std::min(bc, cpu() - c0);
        }
        std::printf("loadKernel + sum in C++ (reference): wall %.3f s  cpu %.3f s  sum %lld ns\n", bw, bc, sum);
        if (sum != push.sum || sum != scan.sum || sum != sorted.sum) {
            std::fprintf(stderr, "MISMATCH: the sums differ\n");
            return 1;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        if (!tmp.empty())
            std::filesystem::remove(tmp);
        return 1;
    }
    if (!tmp.empty())
        std::filesystem::remove(tmp);
    return 0;
}
