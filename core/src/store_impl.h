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
#include <unordered_map>
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
inline unsigned char* putVarintRaw(unsigned char* p, std::uint64_t v)
{
    while (v >= 0x80) {
        *p++ = static_cast<unsigned char>((v & 0x7f) | 0x80);
        v >>= 7;
    }
    *p++ = static_cast<unsigned char>(v);
    return p;
}

// Encodes interval chunks (codec Raw: the version-2 blobs; codec Zstd: schema 3, see ChunkCodec in
// schema.h) and, given a database, inserts them.
class ChunkWriter {
public:
    struct Encoded {
        TimeNs first = 0;
        TimeNs lastEnd = 0;
        std::int64_t count = 0;
        std::string_view blob[5];  // starts, durations, kinds, slots, ksteps (valid until the next encode)
    };

    // db == nullptr: encode only. An insert into a version-2 table (migration 1 -> 2) uses ChunkCodec::Raw.
    ChunkWriter(const Db* db, ChunkCodec codec);
    ~ChunkWriter();
    ChunkWriter(const ChunkWriter&) = delete;
    ChunkWriter& operator=(const ChunkWriter&) = delete;

    ChunkCodec codec() const noexcept { return m_codec; }

    // Encodes at(off .. off+cnt-1) (sorted by start) as one chunk.
    template <class At>
    const Encoded& encode(At at, std::size_t off, std::size_t cnt)
    {
        unsigned char *ps = m_starts.data(), *pd = m_durations.data(), *pk = m_kinds.data(), *pl = m_slots.data(),
                      *pq = m_ksteps.data();
        const bool delta = m_codec != ChunkCodec::Raw;
        const TimeNs first = at(off).start;
        TimeNs prev = first;       // raw: previous start; zstd: previous end
        std::int64_t prevKstep = -1;
        TimeNs lastEnd = std::numeric_limits<TimeNs>::min();
        for (std::size_t i = off; i < off + cnt; ++i) {
            const Interval& x = at(i);
            const TimeNs end = static_cast<TimeNs>(static_cast<std::uint64_t>(x.start) + static_cast<std::uint64_t>(x.duration));
            if (delta) {
                ps = putVarintRaw(ps, zigzag(static_cast<std::int64_t>(static_cast<std::uint64_t>(x.start)
                                                                       - static_cast<std::uint64_t>(prev))));
                prev = end;
                pq = putVarintRaw(pq, zigzag(static_cast<std::int64_t>(x.kstep) - prevKstep));
                prevKstep = x.kstep;
            } else {
                ps = putVarintRaw(ps, static_cast<std::uint64_t>(x.start - prev));
                prev = x.start;
                pq = putVarintRaw(pq, zigzag(x.kstep));
            }
            pd = putVarintRaw(pd, zigzag(x.duration));
            *pk++ = static_cast<unsigned char>(x.kind);
            pl = putVarintRaw(pl, zigzag(x.slot));
            lastEnd = std::max(lastEnd, end);
        }
        return finish(first, lastEnd, cnt, ps, pd, pk, pl, pq);
    }

    // Inserts the intervals of one warp (at(0..n-1), sorted by start) as chunks of kChunkIntervals.
    template <class At>
    void writeWarp(RowId kernelId, RowId warpId, At at, std::size_t n)
    {
        std::int64_t chunkIndex = 0;
        for (std::size_t off = 0; off < n; off += kChunkIntervals, ++chunkIndex)
            insert(kernelId, warpId, chunkIndex, encode(at, off, std::min<std::size_t>(kChunkIntervals, n - off)));
    }

private:
    const Encoded& finish(TimeNs first, TimeNs lastEnd, std::size_t cnt, unsigned char* ps, unsigned char* pd,
                          unsigned char* pk, unsigned char* pl, unsigned char* pq);
    void insert(RowId kernelId, RowId warpId, std::int64_t chunkIndex, const Encoded& e);

    const Db* m_db;
    ChunkCodec m_codec;
    std::unique_ptr<Stmt> m_ins;
    // Worst case 10 bytes per varint.
    std::vector<unsigned char> m_starts, m_durations, m_kinds, m_slots, m_ksteps;
    std::string m_payload;
    std::string m_z;
    void* m_cctx = nullptr;  // ZSTD_CCtx
    Encoded m_enc;
};

// Decodes one chunk row and appends it to `lane`. Throws StoreError on any inconsistency, naming the
// chunk. `scratch` holds a decompressed payload (reuse it across calls).
struct ChunkDecoder {
    ChunkDecoder();
    ~ChunkDecoder();
    ChunkDecoder(const ChunkDecoder&) = delete;
    ChunkDecoder& operator=(const ChunkDecoder&) = delete;
    void decode(const std::string& path, RowId chunkId, RowId warpId, TimeNs firstStart, std::int64_t count,
                std::int64_t codec, std::string_view starts, std::string_view durations, std::string_view kinds,
                std::string_view slots, std::string_view ksteps, Lane& lane);

private:
    void* m_dctx = nullptr;  // ZSTD_DCtx
    std::string m_buf;
};

// --- row readers (store_read.cpp)
extern const char* const kRunColumns;
RunInfo readRun(const Stmt& s);
extern const char* const kKernelColumns;
extern const char* const kInsertKernelSql;  // 26 parameters: run_id, then the launch (bindLaunch)
extern const char* const kInsertKernelHead;  // kInsertKernelSql without its VALUES
// Binds run_id and the launch to parameters base+1 .. base+26.
void bindLaunch(Stmt& s, RowId runId, const KernelLaunch& L, int base = 0);
// "HEAD VALUES(?, ...), ..." with `rows` rows of `cols` parameters each.
std::string multiRowInsert(const char* head, int cols, int rows);
// Rows per multi-row INSERT of the bulk writers (RunWriter::addLaunches, addApiSpans, ...): one VM run per
// batch instead of per row. 26 columns x 32 rows stays under SQLite's 32766 parameters.
inline constexpr int kInsertBatchRows = 32;
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

    // The bulk writers' statements, prepared once and reused for every record of every call.
    std::unique_ptr<Stmt> launchStmt, memopStmt, nvtxStmt, apiStmt;
    std::unique_ptr<Stmt> launchBatch, memopBatch, nvtxBatch, apiBatch;
    Stmt& cached(std::unique_ptr<Stmt>& s, const char* sql)
    {
        if (!s)
            s = std::make_unique<Stmt>(db, sql);
        return *s;
    }
    // Inserts `rows` through `batch` (kInsertBatchRows rows per statement) and `one` (the rest);
    // bind(stmt, base, row) binds one row's parameters base+1 .. base+cols; check(row) runs first.
    template <class Row, class Check, class Bind>
    void insertRows(std::unique_ptr<Stmt>& one, std::unique_ptr<Stmt>& batch, const char* head, int cols,
                    const std::vector<Row>& rows, Check check, Bind bind)
    {
        for (const Row& r : rows)
            check(r);
        std::size_t i = 0;
        if (rows.size() >= static_cast<std::size_t>(detail::kInsertBatchRows)) {
            if (!batch)
                batch = std::make_unique<Stmt>(db, detail::multiRowInsert(head, cols, detail::kInsertBatchRows).c_str());
            for (; i + detail::kInsertBatchRows <= rows.size(); i += detail::kInsertBatchRows) {
                for (int k = 0; k < detail::kInsertBatchRows; ++k)
                    bind(*batch, k * cols, rows[i + static_cast<std::size_t>(k)]);
                batch->run();
            }
        }
        if (i < rows.size()) {
            if (!one)
                one = std::make_unique<Stmt>(db, detail::multiRowInsert(head, cols, 1).c_str());
            for (; i < rows.size(); ++i) {
                bind(*one, 0, rows[i]);
                one->run();
            }
        }
    }

    // Schema 5: API call names, NVTX names and domains are interned in `names` (docs/schema.md). nameIds caches
    // text -> id for this connection. A rolled-back transaction takes the names it inserted with it, so every
    // rollback of a write calls forgetNames().
    std::unordered_map<std::string, RowId> nameIds;
    std::unique_ptr<Stmt> nameSel, nameIns;
    RowId nameId(const std::string& name);
    void forgetNames() noexcept { nameIds.clear(); }

    // Schema 5: the largest ids of api_calls / nvtx_events when the open run began; writeRangesOf() writes the
    // run's id ranges into its runs row before the commit.
    RowId apiBase = 0, nvtxBase = 0;
    static RowId maxId(const Db& db, const char* table);
    void writeRangesOf(RowId runId);

    RowId insertRun(const RunInfo& r);
    void insertLaunches(RowId runId, const std::vector<KernelLaunch>& launches);
    void insertStreams(RowId runId, const std::vector<StreamInfo>& streams);
    void insertNvtx(RowId runId, const std::vector<NvtxRange>& ranges);
    void insertApiSpans(RowId runId, const std::vector<ApiSpan>& spans);
    RowId insertKernel(RowId runId, const KernelRecord& k);
    void insertMemOps(RowId runId, const std::vector<MemOp>& ops);
    void insertMetrics(RowId runId, const std::vector<Metric>& ms, const std::vector<RowId>* kernelIds);
    void insertSources(RowId runId, const std::vector<SourceFile>& sources);
};

}  // namespace ws
