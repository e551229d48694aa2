// Internal: what the store's source files share (store.cpp: open/check; store_chunks.cpp: the
// interval-chunk codec; store_read.cpp: readers; store_write.cpp: writers; store_migrate.cpp:
// migrations). Not installed, not part of the public API.
#pragma once

#include "warpstage/store.h"

#include "schema.h"
#include "sqlite_util.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ws {
namespace detail {

[[noreturn]] void fail(const std::string& path, const std::string& problem);
std::string str(std::int64_t v);

// --- enum <-> text (store.cpp)
const char* statusName(RunStatus s);
RunStatus statusFromName(const std::string& s);
const char* memOpKindName(MemOpKind k);
MemOpKind memOpKindFromName(const std::string& s);
WarpRole roleFromText(const std::string& s);

// --- file checks and schema (store.cpp)
struct HeaderInfo {
    std::uintmax_t fileSize = 0;
    bool walMode = false;
};
// Checks the file before SQLite sees it (not a directory, SQLite magic, not truncated).
HeaderInfo checkHeader(const std::string& path, bool mustExist);
// Throws when an interrupted write left a hot rollback journal beside the file.
void failIfHotJournal(const std::string& path);
std::set<std::string> tableNames(const Db& db);
bool tableActive(const TableDef& t, int version);
// Returns the file's schema version after checking it is a Warpstage file this build can read or
// migrate (every table and column of that version present). Throws for newer / foreign files.
int inspectVersion(const Db& db);
void createSchema(const Db& db);
// meta.interval_encoding of the current version.
inline constexpr const char* kIntervalEncoding = "chunk-v2: LEB128 varints; codec 1 = zstd over them, see docs/schema.md";

// --- interval chunk codec (store_chunks.cpp)
struct ChunkBuffers {
    // Worst case 10 bytes per varint.
    std::vector<unsigned char> starts, durations, kinds, slots, ksteps;
    ChunkBuffers()
        : starts(10 * kChunkIntervals), durations(10 * kChunkIntervals), kinds(kChunkIntervals),
          slots(10 * kChunkIntervals), ksteps(10 * kChunkIntervals)
    {
    }
};

inline unsigned char* putVarintRaw(unsigned char* p, std::uint64_t v)
{
    while (v >= 0x80) {
        *p++ = static_cast<unsigned char>((v & 0x7f) | 0x80);
        v >>= 7;
    }
    *p++ = static_cast<unsigned char>(v);
    return p;
}

template <class At>
void writeWarpChunks(Stmt& ins, RowId kernelId, RowId warpId, At at, std::size_t n, ChunkBuffers& b)
{
    std::int64_t chunkIndex = 0;
    for (std::size_t off = 0; off < n; off += kChunkIntervals, ++chunkIndex) {
        const std::size_t cnt = std::min<std::size_t>(kChunkIntervals, n - off);
        unsigned char *ps = b.starts.data(), *pd = b.durations.data(), *pk = b.kinds.data(), *pl = b.slots.data(),
                      *pq = b.ksteps.data();
        const TimeNs first = at(off).start;
        TimeNs prev = first;
        TimeNs lastEnd = std::numeric_limits<TimeNs>::min();
        for (std::size_t i = off; i < off + cnt; ++i) {
            const Interval& x = at(i);
            ps = putVarintRaw(ps, static_cast<std::uint64_t>(x.start - prev));
            prev = x.start;
            pd = putVarintRaw(pd, zigzag(x.duration));
            *pk++ = static_cast<unsigned char>(x.kind);
            pl = putVarintRaw(pl, zigzag(x.slot));
            pq = putVarintRaw(pq, zigzag(x.kstep));
            lastEnd = std::max(lastEnd, x.start + x.duration);
        }
        ins.bind(1, kernelId).bind(2, warpId).bind(3, chunkIndex).bind(4, first).bind(5, lastEnd)
            .bind(6, static_cast<std::int64_t>(cnt))
            .bindBlobStatic(7, b.starts.data(), static_cast<std::size_t>(ps - b.starts.data()))
            .bindBlobStatic(8, b.durations.data(), static_cast<std::size_t>(pd - b.durations.data()))
            .bindBlobStatic(9, b.kinds.data(), static_cast<std::size_t>(pk - b.kinds.data()))
            .bindBlobStatic(10, b.slots.data(), static_cast<std::size_t>(pl - b.slots.data()))
            .bindBlobStatic(11, b.ksteps.data(), static_cast<std::size_t>(pq - b.ksteps.data()));
        ins.run();
    }
}

extern const char* const kInsertChunkSql;

// Decodes one chunk row and appends it to `lane`. Throws StoreError on any inconsistency.
void decodeChunk(const std::string& path, RowId chunkId, RowId warpId, TimeNs firstStart, std::int64_t count,
                 std::string_view starts, std::string_view durations, std::string_view kinds, std::string_view slots,
                 std::string_view ksteps, Lane& lane);

// --- row readers (store_read.cpp)
extern const char* const kRunColumns;
RunInfo readRun(const Stmt& s);
extern const char* const kKernelColumns;
extern const char* const kInsertKernelSql;  // 26 parameters: run_id, then the launch (bindLaunch)
void bindLaunch(Stmt& s, RowId runId, const KernelLaunch& L);
KernelLaunch readKernel(const Stmt& s, const std::string& path);
extern const char* const kStallColumns;
StallSample readStall(const Stmt& s, const std::string& path);

}  // namespace detail

struct TraceStore::Impl {
    using Db = detail::Db;
    using Stmt = detail::Stmt;

    Db db;
    bool writable = false;
    bool inRun = false;  // a RunWriter holds the transaction
    bool wal = false;    // journal_mode is WAL (see useWal)

    // Writes run in WAL mode, except a first writeRun / writeMetrics / updateStallStages on an
    // existing file: switching the journal mode rewrites the file header (change counter), so a
    // refused or rolled-back first write would still change the file. That one runs under the
    // rollback journal (the mode a file at rest has), which leaves the file byte-identical when
    // rolled back; its commit switches to WAL. A file this store created is in WAL mode from
    // the start, and beginRun() switches before a stream (a long recording that may be killed:
    // after a crash in WAL mode read-only viewers still open the file, while a hot rollback
    // journal needs a writer first). Best effort: a file another connection holds stays in
    // rollback mode.
    void useWal() noexcept
    {
        if (wal || !writable)
            return;
        try {
            Stmt s(db, "PRAGMA journal_mode = WAL");
            wal = s.step() && s.text(0) == "wal";
        } catch (...) {
            return;
        }
        if (wal)
            sqlite3_exec(db.get(), "PRAGMA synchronous = NORMAL", nullptr, nullptr, nullptr);
    }

    ~Impl()
    {
        if (writable && wal && db) {
            // Leave the file at rest as one self-contained file (no -wal/-shm),
            // so read-only viewers never need to create side files. Fails
            // harmlessly (busy) when another connection has it open.
            sqlite3_exec(db.get(), "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr);
        }
    }

    // addLaunches' statement, prepared once and reused for every launch of every call.
    std::unique_ptr<Stmt> launchStmt;

    RowId insertRun(const RunInfo& r);
    void insertLaunches(RowId runId, const std::vector<KernelLaunch>& launches);
    void insertStreams(RowId runId, const std::vector<StreamInfo>& streams);
    void insertNvtx(RowId runId, const std::vector<NvtxRange>& ranges);
    void insertApiSpans(RowId runId, const std::vector<ApiSpan>& spans);
    RowId insertKernel(RowId runId, const KernelRecord& k);
    void insertMemOps(RowId runId, const std::vector<MemOp>& ops);
    void insertMetrics(RowId runId, const std::vector<Metric>& ms, const std::vector<RowId>* kernelIds);
};

}  // namespace ws
