// libFuzzer target, structure-aware: the bytes become the fields of one interval chunk
// (first_start_ns, count, and the five column blobs) of an otherwise valid trace, so the
// mutations reach the chunk decoder instead of SQLite's own page checks.
//
//   input = first_start (8 bytes LE) | count (4 bytes LE, signed) | 5 x (u16 LE length, bytes)
//
// Build: clang, -DWARPSTAGE_FUZZ=ON (target fuzz_chunks). Run: fuzz_chunks -max_total_time=60 WORK_DIR
#include "warpstage/analysis.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

std::string dir() { return std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path().string(); }

const std::string& templateBytes()
{
    static const std::string bytes = [] {
        const std::string p = dir() + "/warpstage_fuzz_chunks_template_" + std::to_string(getpid()) + ".wstrace";
        std::filesystem::remove(p);
        {
            ws::SyntheticParams sp;
            sp.ctas = 1;
            sp.smCount = 1;
            sp.consumerWarpgroups = 1;
            sp.kstepsPerTile = 2;
            sp.stallSamples = false;
            auto st = ws::TraceStore::openForWriting(p);
            st.writeRun(ws::generateSynthetic(sp));
        }
        // Small pages keep the per-input file copy cheap.
        sqlite3* db = nullptr;
        sqlite3_open(p.c_str(), &db);
        sqlite3_exec(db, "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;", nullptr, nullptr, nullptr);
        sqlite3_close(db);
        std::ifstream in(p, std::ios::binary);
        std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::filesystem::remove(p);
        return b;
    }();
    return bytes;
}

struct Reader {
    const std::uint8_t* p;
    std::size_t n;
    template <class T>
    T get()
    {
        T v{};
        const std::size_t k = std::min(sizeof(T), n);
        std::memcpy(&v, p, k);
        p += k;
        n -= k;
        return v;
    }
    std::string blob()
    {
        const std::size_t len = std::min<std::size_t>(get<std::uint16_t>(), n);
        std::string s(reinterpret_cast<const char*>(p), len);
        p += len;
        n -= len;
        return s;
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string path = dir() + "/warpstage_fuzz_chunks_" + std::to_string(getpid()) + ".wstrace";
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(templateBytes().data(), static_cast<std::streamsize>(templateBytes().size()));
    }
    Reader r{data, size};
    const auto first = r.get<std::int64_t>();
    const auto count = r.get<std::int32_t>();
    std::string blobs[5];
    for (auto& b : blobs)
        b = r.blob();
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) == SQLITE_OK) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db,
                               "UPDATE interval_chunks SET first_start_ns = ?, count = ?, starts = ?, durations = ?, kinds = ?, "
                               "slots = ?, ksteps = ? WHERE id = (SELECT MAX(id) FROM interval_chunks)",
                               -1, &st, nullptr)
            == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, first);
            sqlite3_bind_int64(st, 2, count);
            for (int i = 0; i < 5; ++i)
                sqlite3_bind_blob(st, 3 + i, blobs[i].data(), static_cast<int>(blobs[i].size()), SQLITE_TRANSIENT);
            sqlite3_step(st);
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    try {
        auto store = ws::TraceStore::openReadOnly(path);
        for (const auto& run : store.runs())
            for (const auto& k : store.kernels(run.id)) {
                const ws::KernelTrace t = store.loadKernel(k.id);
                (void)ws::analyze(t);
            }
    } catch (const ws::StoreError&) {
    }
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return 0;
}
