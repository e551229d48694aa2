// libFuzzer target: arbitrary bytes as a trace file -> everything the viewer and
// `warpstage info` do with a file (open read-only, list, load every kernel, analyse,
// describe), plus migration of old-version files on a copy. Any StoreError is the
// expected outcome for a bad file; a crash, sanitizer report, leak or timeout is a bug.
//
// Build: clang, -DWARPSTAGE_FUZZ=ON (target fuzz_loader). Run:
//   fuzz_loader -max_total_time=120 -timeout=10 -rss_limit_mb=2048 CORPUS_WORK_DIR tests/fuzz/corpus
#include "warpstage/analysis.h"
#include "warpstage/report.h"
#include "warpstage/store.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace {

std::string scratch(const char* tag)
{
    static const std::string dir = std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path().string();
    return dir + "/warpstage_fuzz_" + std::to_string(getpid()) + "_" + tag + ".wstrace";
}

void removeAll(const std::string& p)
{
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        std::filesystem::remove(p + suffix, ec);
}

void readEverything(const std::string& path)
{
    auto st = ws::TraceStore::openReadOnly(path);
    for (const ws::RunSummary& r : st.runSummaries()) {
        st.memOps(r.info.id);
        st.metrics(r.info.id);
        st.loadSources(r.info.id);
        for (const ws::KernelSummary& k : st.kernelSummaries(r.info.id)) {
            const ws::KernelTrace t = st.loadKernel(k.launch.id);
            const ws::KernelMetrics m = ws::analyze(t);
            (void)ws::toMetrics(m, r.info.id, k.launch.id);
        }
        (void)st.loadProgram(r.info.id);  // NVTX ranges and API calls (schema 5: interned names, id ranges)
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string path = scratch("in");
    const std::string migrated = scratch("migrated");
    removeAll(path);
    removeAll(migrated);
    if (FILE* f = std::fopen(path.c_str(), "wb")) {
        if (size)
            std::fwrite(data, 1, size, f);
        std::fclose(f);
    } else {
        return 0;
    }
    try {
        readEverything(path);
    } catch (const ws::NeedsMigrationError&) {
        try {
            ws::TraceStore::migrateCopy(path, migrated);
            readEverything(migrated);
        } catch (const ws::StoreError&) {
        }
    } catch (const ws::StoreError&) {
    }
    try {
        (void)ws::describeFile(path, true);
    } catch (const ws::StoreError&) {
    }
    removeAll(path);
    removeAll(migrated);
    return 0;
}
