// SQLite store: opening/validating files, writing runs, loading kernels
// columnar, migrating old versions. Schema: schema.cpp; docs: docs/schema.md.
#include "warpstage/store.h"

#include "schema.h"
#include "sqlite_util.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

namespace ws {

using detail::Db;
using detail::Stmt;

StoreError::StoreError(std::string path, std::string problem)
    : std::runtime_error(path + ": " + problem), m_path(std::move(path)), m_problem(std::move(problem))
{
}

NeedsMigrationError::NeedsMigrationError(std::string path, int fileVersion)
    : StoreError(std::move(path),
                 "written by an older Warpstage (schema version " + std::to_string(fileVersion)
                     + ", current is " + std::to_string(kSchemaVersion)
                     + "); it must be migrated first (on a copy, or in place after you agree)"),
      m_fileVersion(fileVersion)
{
}

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const std::string& problem) { throw StoreError(path, problem); }

std::string str(std::int64_t v) { return std::to_string(v); }

// --- enum <-> text --------------------------------------------------------
const char* statusName(RunStatus s) { return s == RunStatus::Failed ? "failed" : "complete"; }
RunStatus statusFromName(const std::string& s) { return s == "failed" ? RunStatus::Failed : RunStatus::Complete; }

const char* memOpKindName(MemOpKind k)
{
    switch (k) {
    case MemOpKind::HtoD: return "htod";
    case MemOpKind::DtoH: return "dtoh";
    case MemOpKind::DtoD: return "dtod";
    case MemOpKind::Memset: return "memset";
    case MemOpKind::Other: return "other";
    default: return "unknown";
    }
}
MemOpKind memOpKindFromName(const std::string& s)
{
    for (int i = 0; i <= 5; ++i)
        if (s == memOpKindName(static_cast<MemOpKind>(i)))
            return static_cast<MemOpKind>(i);
    return MemOpKind::Unknown;
}
WarpRole roleFromText(const std::string& s) { return warpRoleFromName(s).value_or(WarpRole::Unknown); }

// --- file header checks, before SQLite sees the file ------------------------
struct HeaderInfo {
    std::uintmax_t fileSize = 0;
    bool walMode = false;
};

HeaderInfo checkHeader(const std::string& path, bool mustExist)
{
    HeaderInfo h;
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
        if (mustExist)
            fail(path, "no such file");
        return h;
    }
    if (fs::is_directory(st))
        fail(path, "is a directory, not a trace file");
    if (!fs::is_regular_file(st))
        fail(path, "is not a regular file");
    h.fileSize = fs::file_size(path, ec);
    if (ec)
        fail(path, "cannot read the file size (" + ec.message() + ")");
    if (h.fileSize == 0)
        return h;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        fail(path, "cannot open the file for reading");
    unsigned char hdr[100] = {};
    in.read(reinterpret_cast<char*>(hdr), sizeof hdr);
    const auto got = static_cast<std::size_t>(in.gcount());
    static const char magic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
    if (got < 16 || std::memcmp(hdr, magic, 16) != 0)
        fail(path, "not an SQLite database (and so not a Warpstage trace)");
    if (got < 100)
        fail(path, "truncated file (" + str(static_cast<std::int64_t>(h.fileSize)) + " bytes, shorter than an SQLite header)");
    unsigned pageSize = (unsigned(hdr[16]) << 8) | hdr[17];
    if (pageSize == 1)
        pageSize = 65536;
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)))
        fail(path, "damaged SQLite header (page size " + str(pageSize) + ")");
    h.walMode = hdr[18] == 2 || hdr[19] == 2;
    auto be32 = [&](int o) {
        return (std::uint32_t(hdr[o]) << 24) | (std::uint32_t(hdr[o + 1]) << 16) | (std::uint32_t(hdr[o + 2]) << 8) | hdr[o + 3];
    };
    const std::uint32_t pages = be32(28);
    const bool sizeValid = pages != 0 && be32(24) == be32(92);
    std::error_code ec2;
    const bool hasWal = fs::exists(path + "-wal", ec2) && fs::file_size(path + "-wal", ec2) > 0;
    if (sizeValid && !hasWal && std::uintmax_t(pages) * pageSize > h.fileSize)
        fail(path, "truncated file (" + str(static_cast<std::int64_t>(h.fileSize)) + " bytes, the header says "
                       + str(static_cast<std::int64_t>(std::uintmax_t(pages) * pageSize)) + ")");
    return h;
}

// A write killed under the rollback journal (Impl::useWal) leaves '<file>-journal' beside the
// file; SQLite has to roll it back before anyone reads, which a read-only connection cannot do.
void failIfHotJournal(const std::string& path)
{
    std::error_code ec;
    if (fs::exists(path + "-journal", ec) && fs::file_size(path + "-journal", ec) > 0)
        fail(path, "an interrupted write left its rollback journal beside the file ('"
                       + fs::path(path).filename().string() + "-journal'); open the file for writing once "
                       "(e.g. append a run) to roll that write back, then it reads normally");
}

// --- schema inspection ------------------------------------------------------
std::set<std::string> tableNames(const Db& db)
{
    std::set<std::string> names;
    Stmt s(db, "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (s.step())
        names.insert(s.text(0));
    return names;
}

bool tableActive(const detail::TableDef& t, int version) { return version >= t.sinceVersion && version <= t.untilVersion; }

void requireTables(const Db& db, int version)
{
    const auto names = tableNames(db);
    if (!names.count("runs"))
        fail(db.path(), names.empty() ? "not a Warpstage trace (the database is empty, table 'runs' missing)"
                                      : "not a Warpstage trace (table 'runs' missing)");
    for (const auto& t : detail::schemaTables()) {
        if (!tableActive(t, version))
            continue;
        if (!names.count(std::string(t.name)))
            fail(db.path(), "damaged Warpstage trace (table '" + std::string(t.name) + "' missing)");
        std::set<std::string> cols;
        Stmt s(db, ("SELECT name FROM pragma_table_info('" + std::string(t.name) + "')").c_str());
        while (s.step())
            cols.insert(s.text(0));
        for (const auto& c : t.columns)
            if (!cols.count(std::string(c.name)))
                fail(db.path(), "damaged Warpstage trace (table '" + std::string(t.name) + "' lacks column '"
                                    + std::string(c.name) + "')");
    }
}

// Returns the file's schema version after checking it is a Warpstage file
// this build can read or migrate. Throws for newer / foreign files.
int inspectVersion(const Db& db)
{
    const auto v = db.pragmaInt("PRAGMA user_version");
    if (v > kSchemaVersion)
        fail(db.path(), "written by a newer Warpstage (schema version " + str(v) + ", this build reads up to "
                            + str(kSchemaVersion) + "); please update Warpstage");
    if (v < kOldestMigratableVersion) {
        const auto names = tableNames(db);
        if (names.empty())
            fail(db.path(), "not a Warpstage trace (the database is empty, table 'runs' missing)");
        if (!names.count("runs"))
            fail(db.path(), "not a Warpstage trace (table 'runs' missing)");
        fail(db.path(), "not a Warpstage trace (schema version " + str(v) + " is unknown)");
    }
    requireTables(db, static_cast<int>(v));
    return static_cast<int>(v);
}

void createSchema(const Db& db)
{
    db.exec("PRAGMA page_size = 16384");
    db.exec("BEGIN IMMEDIATE");
    try {
        for (const auto& t : detail::schemaTables()) {
            if (!tableActive(t, kSchemaVersion))
                continue;
            db.exec(detail::createTableSql(t).c_str());
            for (auto idx : t.indexes)
                db.exec(std::string(idx).c_str());
        }
        {
            Stmt s(db, "INSERT INTO interval_kinds(id, name, label) VALUES(?, ?, ?)");
            for (int i = 0; i < kIntervalKindCount; ++i) {
                const auto k = static_cast<IntervalKind>(i);
                s.bind(1, i).bind(2, intervalKindName(k)).bind(3, intervalKindLabel(k)).run();
            }
        }
        {
            Stmt s(db, "INSERT INTO meta(key, value) VALUES(?, ?)");
            s.bind(1, "application").bind(2, "warpstage").run();
            s.bind(1, "created_by").bind(2, std::string("warpstage ") + WARPSTAGE_VERSION).run();
            s.bind(1, "interval_encoding").bind(2, "chunk-v1: LEB128 varints, see docs/schema.md").run();
        }
        db.exec(("PRAGMA application_id = " + str(kApplicationId)).c_str());
        db.exec(("PRAGMA user_version = " + str(kSchemaVersion)).c_str());
        db.exec("COMMIT");
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

// --- interval chunk encoding -------------------------------------------------
struct ChunkBuffers {
    // Worst case 10 bytes per varint.
    std::vector<unsigned char> starts, durations, kinds, slots, ksteps;
    ChunkBuffers()
        : starts(10 * detail::kChunkIntervals), durations(10 * detail::kChunkIntervals), kinds(detail::kChunkIntervals),
          slots(10 * detail::kChunkIntervals), ksteps(10 * detail::kChunkIntervals)
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

// Inserts the intervals of one warp (at(0..n-1), sorted by start) as chunks.
template <class At>
void writeWarpChunks(Stmt& ins, RowId kernelId, RowId warpId, At at, std::size_t n, ChunkBuffers& b)
{
    std::int64_t chunkIndex = 0;
    for (std::size_t off = 0; off < n; off += detail::kChunkIntervals, ++chunkIndex) {
        const std::size_t cnt = std::min<std::size_t>(detail::kChunkIntervals, n - off);
        unsigned char *ps = b.starts.data(), *pd = b.durations.data(), *pk = b.kinds.data(), *pl = b.slots.data(),
                      *pq = b.ksteps.data();
        const TimeNs first = at(off).start;
        TimeNs prev = first;
        TimeNs lastEnd = std::numeric_limits<TimeNs>::min();
        for (std::size_t i = off; i < off + cnt; ++i) {
            const Interval& x = at(i);
            ps = putVarintRaw(ps, static_cast<std::uint64_t>(x.start - prev));
            prev = x.start;
            pd = putVarintRaw(pd, detail::zigzag(x.duration));
            *pk++ = static_cast<unsigned char>(x.kind);
            pl = putVarintRaw(pl, detail::zigzag(x.slot));
            pq = putVarintRaw(pq, detail::zigzag(x.kstep));
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

const char* kInsertChunkSql =
    "INSERT INTO interval_chunks(kernel_id, warp_id, chunk_index, first_start_ns, last_end_ns, count, starts, "
    "durations, kinds, slots, ksteps) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

// Decodes one chunk row and appends it to `lane`. Throws StoreError on any inconsistency.
void decodeChunk(const std::string& path, RowId chunkId, RowId warpId, TimeNs firstStart, std::int64_t count,
                 std::string_view starts, std::string_view durations, std::string_view kinds, std::string_view slots,
                 std::string_view ksteps, Lane& lane)
{
    const std::string where = "interval chunk " + str(chunkId) + " of warp " + str(warpId);
    if (count < 0 || count > detail::kMaxChunkIntervals)
        fail(path, where + ": bad interval count " + str(count));
    const auto n = static_cast<std::size_t>(count);
    if (kinds.size() != n)
        fail(path, where + ": truncated or bad blob (kinds has " + str(static_cast<std::int64_t>(kinds.size()))
                       + " bytes, expected " + str(count) + ")");
    auto sizeOk = [n](std::string_view b) { return b.size() >= n && b.size() <= 10 * n; };
    if (!sizeOk(starts) || !sizeOk(durations) || !sizeOk(slots) || !sizeOk(ksteps))
        fail(path, where + ": truncated or bad blob (column sizes do not match " + str(count) + " intervals)");

    const std::size_t old = lane.size();
    lane.start.resize(old + n);
    lane.duration.resize(old + n);
    lane.kind.resize(old + n);
    lane.slot.resize(old + n);
    lane.kstep.resize(old + n);

    auto u8 = [](std::string_view b) { return reinterpret_cast<const unsigned char*>(b.data()); };
    const unsigned char *ps = u8(starts), *pe_s = ps + starts.size();
    const unsigned char *pd = u8(durations), *pe_d = pd + durations.size();
    const unsigned char *pl = u8(slots), *pe_l = pl + slots.size();
    const unsigned char *pk = u8(ksteps), *pe_k = pk + ksteps.size();
    const unsigned char* pkind = u8(kinds);

    TimeNs cur = firstStart;
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t d, dur, sl, ks;
        if (!detail::getVarint(ps, pe_s, d) || !detail::getVarint(pd, pe_d, dur) || !detail::getVarint(pl, pe_l, sl)
            || !detail::getVarint(pk, pe_k, ks))
            fail(path, where + ": truncated or bad blob (interval " + str(static_cast<std::int64_t>(i)) + ")");
        TimeNs s;
        if (d > static_cast<std::uint64_t>(std::numeric_limits<TimeNs>::max())
            || __builtin_add_overflow(cur, static_cast<TimeNs>(d), &s))
            fail(path, where + ": timestamp out of range");
        cur = s;
        const std::int64_t du = detail::unzigzag(dur);
        if (du < 0)
            fail(path, where + ": negative duration (" + str(du) + " ns) at " + str(s) + " ns");
        TimeNs e;
        if (__builtin_add_overflow(s, du, &e))
            fail(path, where + ": interval end out of range");
        const std::int64_t slot = detail::unzigzag(sl);
        const std::int64_t kstep = detail::unzigzag(ks);
        if (slot < INT16_MIN || slot > INT16_MAX)
            fail(path, where + ": slot " + str(slot) + " out of range");
        if (kstep < INT32_MIN || kstep > INT32_MAX)
            fail(path, where + ": k-step " + str(kstep) + " out of range");
        const unsigned k = pkind[i];
        const std::size_t j = old + i;
        lane.start[j] = s;
        lane.duration[j] = static_cast<std::int32_t>(std::min<std::int64_t>(du, INT32_MAX));
        lane.kind[j] = k < static_cast<unsigned>(kIntervalKindCount) ? static_cast<IntervalKind>(k) : IntervalKind::Other;
        lane.slot[j] = static_cast<std::int16_t>(slot);
        lane.kstep[j] = static_cast<std::int32_t>(kstep);
    }
    if (ps != pe_s || pd != pe_d || pl != pe_l || pk != pe_k)
        fail(path, where + ": bad blob (trailing bytes after " + str(count) + " intervals)");
    if (old > 0 && n > 0 && lane.start[old] < lane.start[old - 1])
        fail(path, where + ": chunks out of order (starts before the previous chunk)");
}

// --- row readers -------------------------------------------------------------
const char* kRunColumns =
    "id, variant, m, n, k, synthetic, status, failure_reason, device_name, compute_major, compute_minor, sm_count, "
    "sm_clock_khz, mem_clock_khz, l2_bytes, global_mem_bytes, driver_version, cuda_version, cupti_version, host, "
    "started_at, command_line, notes, has_timeline, has_stalls";

RunInfo readRun(const Stmt& s)
{
    RunInfo r;
    r.id = s.i64(0);
    r.variant = s.text(1);
    r.m = s.i32(2);
    r.n = s.i32(3);
    r.k = s.i32(4);
    r.synthetic = s.i64(5) != 0;
    r.status = statusFromName(s.text(6));
    r.failureReason = s.text(7);
    r.device.name = s.text(8);
    r.device.computeMajor = s.i32(9);
    r.device.computeMinor = s.i32(10);
    r.device.smCount = s.i32(11);
    r.device.smClockKHz = s.i32(12);
    r.device.memClockKHz = s.i32(13);
    r.device.l2Bytes = s.i64(14);
    r.device.globalMemBytes = s.i64(15);
    r.driverVersion = s.text(16);
    r.cudaVersion = s.text(17);
    r.cuptiVersion = s.text(18);
    r.host = s.text(19);
    r.startedAt = s.text(20);
    r.commandLine = s.text(21);
    r.notes = s.text(22);
    r.hasTimeline = s.i64(23) != 0;
    r.hasStalls = s.i64(24) != 0;
    return r;
}

const char* kKernelColumns =
    "id, run_id, name, variant, traced, grid_x, grid_y, grid_z, block_x, block_y, block_z, cluster_x, cluster_y, "
    "cluster_z, dynamic_smem_bytes, static_smem_bytes, registers_per_thread, start_ns, end_ns, correlation_id, "
    "stream_id, align_residual_ns, dropped_events";

KernelLaunch readKernel(const Stmt& s, const std::string& path)
{
    KernelLaunch k;
    k.id = s.i64(0);
    k.runId = s.i64(1);
    k.name = s.text(2);
    k.variant = s.text(3);
    k.traced = s.i64(4) != 0;
    for (int i = 0; i < 3; ++i) {
        k.grid[i] = s.i32(5 + i);
        k.block[i] = s.i32(8 + i);
        k.cluster[i] = s.i32(11 + i);
    }
    k.dynamicSmemBytes = s.i32(14);
    k.staticSmemBytes = s.i32(15);
    k.registersPerThread = s.i32(16);
    k.start = s.i64(17);
    k.end = s.i64(18);
    k.correlationId = static_cast<std::uint32_t>(s.i64(19));
    k.streamId = static_cast<std::uint32_t>(s.i64(20));
    k.alignResidualNs = s.f64(21);
    k.droppedEvents = s.i64(22);
    if (k.end < k.start)
        fail(path, "kernel " + str(k.id) + " ends before it starts (negative duration)");
    return k;
}

const char* kStallColumns =
    "kernel_id, pc_offset, function_name, source_file, line, reason, reason_label, count, role, stage";

StallSample readStall(const Stmt& s, const std::string& path)
{
    StallSample x;
    x.kernelId = s.i64(0);
    x.pcOffset = static_cast<std::uint64_t>(s.i64(1));
    x.functionName = s.text(2);
    x.sourceFile = s.text(3);
    x.line = s.i32(4);
    x.reason = s.text(5);
    x.reasonLabel = s.text(6);
    x.count = s.i64(7);
    x.role = roleFromText(s.text(8));
    x.stage = s.text(9);
    if (x.count < 0)
        fail(path, "stall sample of kernel " + str(x.kernelId) + " has a negative count");
    return x;
}

}  // namespace

// =============================================================================
struct TraceStore::Impl {
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

    RowId insertRun(const RunInfo& r);
    RowId insertKernel(RowId runId, const KernelRecord& k);
    void insertMemOps(RowId runId, const std::vector<MemOp>& ops);
    void insertMetrics(RowId runId, const std::vector<Metric>& ms, const std::vector<RowId>* kernelIds);
};

TraceStore::TraceStore(TraceStore&&) noexcept = default;
TraceStore& TraceStore::operator=(TraceStore&&) noexcept = default;
TraceStore::~TraceStore() = default;

TraceStore TraceStore::openReadOnly(const std::string& path)
{
    const HeaderInfo h = checkHeader(path, true);
    if (h.fileSize == 0)
        fail(path, "empty file, not a Warpstage trace");
    TraceStore st;
    st.m_impl = std::make_unique<Impl>();
    st.m_path = path;
    st.m_readOnly = true;
    auto& db = st.m_impl->db;
    db.open(path, SQLITE_OPEN_READONLY, "mode=ro");
    db.exec("PRAGMA cell_size_check = ON");
    int version = 0;
    try {
        version = inspectVersion(db);
    } catch (const StoreError& e) {
        failIfHotJournal(path);
        // A WAL-mode file in a directory we cannot write: SQLite cannot create
        // the -shm index. With no -wal present the file is self-contained, so
        // read it as immutable.
        std::error_code ec;
        if (!h.walMode || fs::exists(path + "-wal", ec) || e.problem().find("cannot open") == std::string::npos)
            throw;
        db.open(path, SQLITE_OPEN_READONLY, "mode=ro&immutable=1");
        version = inspectVersion(db);
    }
    if (version < kSchemaVersion)
        throw NeedsMigrationError(path, version);
    st.m_version = version;
    return st;
}

TraceStore TraceStore::openForWriting(const std::string& path)
{
    const HeaderInfo h = checkHeader(path, false);
    (void)h;
    TraceStore st;
    st.m_impl = std::make_unique<Impl>();
    st.m_path = path;
    st.m_readOnly = false;
    auto& db = st.m_impl->db;
    db.open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    const auto version = db.pragmaInt("PRAGMA user_version");
    bool created = false;
    if (version == 0 && tableNames(db).empty()) {
        createSchema(db);
        created = true;
    } else {
        const int v = inspectVersion(db);
        if (v < kSchemaVersion)
            throw NeedsMigrationError(path, v);
        Stmt mode(db, "PRAGMA journal_mode");  // asks, changes nothing
        st.m_impl->wal = mode.step() && mode.text(0) == "wal";
    }
    // SQLite silently opens a file it may not write read-only; every write would then fail.
    if (sqlite3_db_readonly(db.get(), "main") == 1)
        fail(path, "cannot write to the file: it is read-only (no write permission)");
    st.m_impl->writable = true;
    st.m_version = kSchemaVersion;
    if (created)
        st.m_impl->useWal();  // an existing file switches after its first commit (Impl::useWal)
    return st;
}

FileCheck TraceStore::checkFile(const std::string& path)
{
    const HeaderInfo h = checkHeader(path, true);
    if (h.fileSize == 0)
        fail(path, "empty file, not a Warpstage trace");
    Db db;
    db.open(path, SQLITE_OPEN_READONLY, "mode=ro");
    int v = 0;
    try {
        v = inspectVersion(db);
    } catch (const StoreError& e) {
        failIfHotJournal(path);
        std::error_code ec;
        if (!h.walMode || fs::exists(path + "-wal", ec) || e.problem().find("cannot open") == std::string::npos)
            throw;
        db.open(path, SQLITE_OPEN_READONLY, "mode=ro&immutable=1");
        v = inspectVersion(db);
    }
    FileCheck c;
    c.fileVersion = v;
    c.needsMigration = v < kSchemaVersion;
    return c;
}

// --- migration -----------------------------------------------------------------
namespace {

std::int64_t migrate1to2(const Db& db)
{
    const auto* chunks = detail::findTable("interval_chunks");
    db.exec(detail::createTableSql(*chunks).c_str());
    for (auto idx : chunks->indexes)
        db.exec(std::string(idx).c_str());
    {
        Stmt orphan(db, "SELECT i.id, i.warp_id FROM intervals i LEFT JOIN warps w ON w.id = i.warp_id "
                        "WHERE w.id IS NULL LIMIT 1");
        if (orphan.step())
            fail(db.path(), "interval " + str(orphan.i64(0)) + " points at missing warp " + str(orphan.i64(1)));
        Stmt neg(db, "SELECT id, duration_ns FROM intervals WHERE duration_ns < 0 LIMIT 1");
        if (neg.step())
            fail(db.path(), "interval " + str(neg.i64(0)) + " has a negative duration (" + str(neg.i64(1)) + " ns)");
    }
    Stmt sel(db, "SELECT w.kernel_id, i.warp_id, i.kind, i.slot, i.kstep, i.start_ns, i.duration_ns "
                 "FROM intervals i JOIN warps w ON w.id = i.warp_id ORDER BY i.warp_id, i.start_ns, i.id");
    Stmt ins(db, kInsertChunkSql);
    ChunkBuffers buf;
    std::vector<Interval> cur;
    RowId curWarp = 0, curKernel = 0;
    std::int64_t total = 0;
    auto flush = [&] {
        if (cur.empty())
            return;
        writeWarpChunks(ins, curKernel, curWarp, [&](std::size_t i) -> const Interval& { return cur[i]; }, cur.size(), buf);
        total += static_cast<std::int64_t>(cur.size());
        cur.clear();
    };
    while (sel.step()) {
        const RowId warp = sel.i64(1);
        if (warp != curWarp) {
            flush();
            curWarp = warp;
            curKernel = sel.i64(0);
        }
        Interval iv;
        iv.warpId = warp;
        const auto kind = sel.i64(2);
        iv.kind = kind >= 0 && kind < kIntervalKindCount ? static_cast<IntervalKind>(kind) : IntervalKind::Other;
        iv.slot = static_cast<std::int16_t>(std::clamp<std::int64_t>(sel.i64(3), INT16_MIN, INT16_MAX));
        iv.kstep = static_cast<std::int32_t>(std::clamp<std::int64_t>(sel.i64(4), INT32_MIN, INT32_MAX));
        iv.start = sel.i64(5);
        iv.duration = sel.i64(6);
        cur.push_back(iv);
    }
    flush();
    db.exec("DROP TABLE intervals");
    return total;
}

MigrationResult migrateOpenDb(const Db& db, const std::string& src, const std::string& dst)
{
    MigrationResult r;
    r.source = src;
    r.destination = dst;
    db.exec("BEGIN IMMEDIATE");
    try {
        const int v = inspectVersion(db);
        r.fromVersion = v;
        if (v < 2)
            r.intervalsMigrated += migrate1to2(db);
        db.exec(("PRAGMA application_id = " + str(kApplicationId)).c_str());
        db.exec(("PRAGMA user_version = " + str(kSchemaVersion)).c_str());
        db.exec("COMMIT");
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
    r.toVersion = kSchemaVersion;
    return r;
}

}  // namespace

MigrationResult TraceStore::migrateCopy(const std::string& src, const std::string& dst)
{
    checkFile(src);  // throws for foreign / newer / damaged files
    std::error_code ec;
    if (fs::exists(dst, ec))
        fail(dst, "already exists; choose a new file name for the migrated copy");
    {
        Db in;
        in.open(src, SQLITE_OPEN_READONLY, "mode=ro");
        Db out;
        out.open(dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        sqlite3_backup* b = sqlite3_backup_init(out.get(), "main", in.get(), "main");
        if (!b)
            out.fail(sqlite3_errcode(out.get()), "copying " + src);
        const int rc = sqlite3_backup_step(b, -1);
        sqlite3_backup_finish(b);
        if (rc != SQLITE_DONE) {
            out.close();
            fs::remove(dst, ec);
            in.fail(rc, "copying to " + dst);
        }
    }
    try {
        Db out;
        out.open(dst, SQLITE_OPEN_READWRITE);
        auto r = migrateOpenDb(out, src, dst);
        out.exec("PRAGMA journal_mode = DELETE");
        return r;
    } catch (...) {
        fs::remove(dst, ec);
        throw;
    }
}

MigrationResult TraceStore::migrateInPlace(const std::string& path)
{
    checkFile(path);
    Db db;
    db.open(path, SQLITE_OPEN_READWRITE);
    return migrateOpenDb(db, path, path);
}

// --- reading -------------------------------------------------------------------
std::vector<RunInfo> TraceStore::runs() const
{
    std::vector<RunInfo> out;
    Stmt s(m_impl->db, (std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id").c_str());
    while (s.step())
        out.push_back(readRun(s));
    return out;
}

RunInfo TraceStore::run(RowId runId) const
{
    Stmt s(m_impl->db, (std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?").c_str());
    s.bind(1, runId);
    if (!s.step())
        fail(m_path, "no run " + str(runId));
    return readRun(s);
}

std::vector<RunSummary> TraceStore::runSummaries() const
{
    std::vector<RunSummary> out;
    Stmt q(m_impl->db,
           "SELECT COUNT(*), COALESCE(MIN(start_ns), 0), COALESCE(MAX(end_ns), 0), "
           "(SELECT COALESCE(SUM(c.count), 0) FROM interval_chunks c JOIN kernels k2 ON k2.id = c.kernel_id "
           "WHERE k2.run_id = ?1) FROM kernels WHERE run_id = ?1");
    for (RunInfo& r : runs()) {
        RunSummary s;
        s.info = std::move(r);
        q.reset();
        q.bind(1, s.info.id);
        if (q.step()) {
            s.kernelCount = q.i64(0);
            s.start = q.i64(1);
            s.end = q.i64(2);
            s.intervalCount = q.i64(3);
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<KernelLaunch> TraceStore::kernels(RowId runId) const
{
    std::vector<KernelLaunch> out;
    Stmt s(m_impl->db,
           (std::string("SELECT ") + kKernelColumns + " FROM kernels WHERE run_id = ? ORDER BY start_ns, id").c_str());
    s.bind(1, runId);
    while (s.step())
        out.push_back(readKernel(s, m_path));
    return out;
}

KernelLaunch TraceStore::kernel(RowId kernelId) const
{
    Stmt s(m_impl->db, (std::string("SELECT ") + kKernelColumns + " FROM kernels WHERE id = ?").c_str());
    s.bind(1, kernelId);
    if (!s.step())
        fail(m_path, "no kernel " + str(kernelId));
    return readKernel(s, m_path);
}

std::vector<KernelSummary> TraceStore::kernelSummaries(RowId runId) const
{
    std::vector<KernelSummary> out;
    Stmt q(m_impl->db,
           "SELECT (SELECT COUNT(*) FROM ctas WHERE kernel_id = ?1), (SELECT COUNT(*) FROM warps WHERE kernel_id = ?1), "
           "(SELECT COALESCE(SUM(count), 0) FROM interval_chunks WHERE kernel_id = ?1), "
           "(SELECT COUNT(*) FROM loads WHERE kernel_id = ?1), "
           "(SELECT COALESCE(SUM(count), 0) FROM stall_samples WHERE kernel_id = ?1)");
    for (KernelLaunch& k : kernels(runId)) {
        KernelSummary s;
        s.launch = std::move(k);
        q.reset();
        q.bind(1, s.launch.id);
        if (q.step()) {
            s.ctaCount = q.i64(0);
            s.warpCount = q.i64(1);
            s.intervalCount = q.i64(2);
            s.loadCount = q.i64(3);
            s.stallSampleCount = q.i64(4);
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<MemOp> TraceStore::memOps(RowId runId) const
{
    std::vector<MemOp> out;
    Stmt s(m_impl->db, "SELECT id, run_id, kind, bytes, start_ns, end_ns, correlation_id, stream_id FROM memops "
                       "WHERE run_id = ? ORDER BY start_ns, id");
    s.bind(1, runId);
    while (s.step()) {
        MemOp m;
        m.id = s.i64(0);
        m.runId = s.i64(1);
        m.kind = memOpKindFromName(s.text(2));
        m.bytes = s.i64(3);
        m.start = s.i64(4);
        m.end = s.i64(5);
        m.correlationId = static_cast<std::uint32_t>(s.i64(6));
        m.streamId = static_cast<std::uint32_t>(s.i64(7));
        if (m.end < m.start)
            fail(m_path, "memory operation " + str(m.id) + " ends before it starts (negative duration)");
        out.push_back(m);
    }
    return out;
}

std::vector<Metric> TraceStore::metrics(RowId runId) const
{
    std::vector<Metric> out;
    Stmt s(m_impl->db, "SELECT run_id, kernel_id, scope, name, value, unit FROM metrics WHERE run_id = ? "
                       "ORDER BY kernel_id, id");
    s.bind(1, runId);
    while (s.step()) {
        Metric m;
        m.runId = s.i64(0);
        m.kernelId = s.i64(1);
        m.scope = s.text(2);
        m.name = s.text(3);
        m.value = s.isNull(4) ? std::numeric_limits<double>::quiet_NaN() : s.f64(4);
        m.unit = s.text(5);
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<StallSample> TraceStore::stallSamples(RowId kernelId) const
{
    std::vector<StallSample> out;
    Stmt s(m_impl->db,
           (std::string("SELECT ") + kStallColumns + " FROM stall_samples WHERE kernel_id = ? ORDER BY id").c_str());
    s.bind(1, kernelId);
    while (s.step())
        out.push_back(readStall(s, m_path));
    return out;
}

std::vector<StallSample> TraceStore::stallSamplesForRung(RowId kernelId) const
{
    const KernelLaunch k = kernel(kernelId);
    std::vector<StallSample> out = stallSamples(kernelId);
    if (k.variant.empty())
        return out;
    Stmt s(m_impl->db, "SELECT id FROM kernels WHERE run_id = ? AND variant = ? AND traced = 0 AND id <> ? ORDER BY id");
    s.bind(1, k.runId).bind(2, k.variant).bind(3, kernelId);
    std::vector<RowId> others;
    while (s.step())
        others.push_back(s.i64(0));
    for (RowId o : others) {
        auto more = stallSamples(o);
        out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
    return out;
}

KernelTrace TraceStore::loadKernel(RowId kernelId, const LoadOptions& options) const
{
    const Db& db = m_impl->db;
    KernelTrace t;
    t.launch = kernel(kernelId);
    t.run = run(t.launch.runId);

    // CTAs, sorted (SM, start, block)
    {
        Stmt s(db, "SELECT id, block_linear, sm_id, start_ns, end_ns, tile_m, tile_n, ns_per_cycle FROM ctas "
                   "WHERE kernel_id = ?");
        s.bind(1, kernelId);
        while (s.step()) {
            Cta c;
            c.id = s.i64(0);
            c.kernelId = kernelId;
            c.blockLinear = s.i32(1);
            c.smId = s.i32(2);
            c.start = s.i64(3);
            c.end = s.i64(4);
            c.tileM = s.i32(5);
            c.tileN = s.i32(6);
            c.nsPerCycle = s.f64(7);
            if (c.end < c.start)
                fail(m_path, "CTA " + str(c.id) + " ends before it starts (negative duration)");
            t.ctas.push_back(c);
        }
    }
    std::sort(t.ctas.begin(), t.ctas.end(), [](const Cta& a, const Cta& b) {
        return std::tie(a.smId, a.start, a.blockLinear, a.id) < std::tie(b.smId, b.start, b.blockLinear, b.id);
    });
    std::unordered_map<RowId, std::int32_t> ctaIndex;
    ctaIndex.reserve(t.ctas.size());
    for (std::size_t i = 0; i < t.ctas.size(); ++i)
        ctaIndex.emplace(t.ctas[i].id, static_cast<std::int32_t>(i));

    // Warps -> lanes, ordered (CTA order, warp index)
    {
        Stmt s(db, "SELECT id, cta_id, warp_index, warpgroup, role, role_name FROM warps WHERE kernel_id = ?");
        s.bind(1, kernelId);
        while (s.step()) {
            Lane l;
            l.warpId = s.i64(0);
            const RowId cta = s.i64(1);
            auto it = ctaIndex.find(cta);
            if (it == ctaIndex.end())
                fail(m_path, "warp " + str(l.warpId) + " points at missing CTA " + str(cta));
            l.ctaIndex = it->second;
            l.warpIndex = s.i32(2);
            l.warpgroup = s.i32(3);
            l.role = roleFromText(s.text(4));
            l.roleName = s.text(5);
            t.lanes.push_back(std::move(l));
        }
    }
    std::sort(t.lanes.begin(), t.lanes.end(), [](const Lane& a, const Lane& b) {
        return std::tie(a.ctaIndex, a.warpIndex, a.warpId) < std::tie(b.ctaIndex, b.warpIndex, b.warpId);
    });
    std::unordered_map<RowId, std::int32_t> laneIndex;
    laneIndex.reserve(t.lanes.size());
    for (std::size_t i = 0; i < t.lanes.size(); ++i)
        laneIndex.emplace(t.lanes[i].warpId, static_cast<std::int32_t>(i));
    auto laneOf = [&](RowId warp, RowId chunk) -> Lane& {
        auto it = laneIndex.find(warp);
        if (it == laneIndex.end())
            fail(m_path, "interval chunk " + str(chunk) + " points at missing warp " + str(warp));
        return t.lanes[static_cast<std::size_t>(it->second)];
    };

    if (options.intervals) {
        // Exact reservation: no growth slack (RAM per interval), bounded by
        // the bytes actually present (a lying count cannot allocate much).
        {
            Stmt s(db, "SELECT warp_id, MIN(id), SUM(MAX(count, 0)), SUM(length(kinds)) FROM interval_chunks "
                       "WHERE kernel_id = ? GROUP BY warp_id");
            s.bind(1, kernelId);
            while (s.step()) {
                Lane& l = laneOf(s.i64(0), s.i64(1));
                const auto n = static_cast<std::size_t>(std::max<std::int64_t>(0, std::min(s.i64(2), s.i64(3))));
                l.start.reserve(n);
                l.duration.reserve(n);
                l.kind.reserve(n);
                l.slot.reserve(n);
                l.kstep.reserve(n);
            }
        }
        Stmt s(db, "SELECT id, warp_id, first_start_ns, count, starts, durations, kinds, slots, ksteps "
                   "FROM interval_chunks WHERE kernel_id = ? ORDER BY warp_id, chunk_index, id");
        s.bind(1, kernelId);
        while (s.step()) {
            const RowId chunk = s.i64(0);
            const RowId warp = s.i64(1);
            Lane& l = laneOf(warp, chunk);
            decodeChunk(m_path, chunk, warp, s.i64(2), s.i64(3), s.blob(4), s.blob(5), s.blob(6), s.blob(7), s.blob(8),
                        l);
        }
    }

    if (options.loads) {
        Stmt s(db, "SELECT id, cta_id, slot, kstep, issue_ns, ready_ns, bytes FROM loads WHERE kernel_id = ? "
                   "ORDER BY id");
        s.bind(1, kernelId);
        while (s.step()) {
            LoadTransfer x;
            const RowId id = s.i64(0);
            auto it = ctaIndex.find(s.i64(1));
            if (it == ctaIndex.end())
                fail(m_path, "load " + str(id) + " points at missing CTA " + str(s.i64(1)));
            x.ctaId = it->second;
            x.slot = static_cast<std::int16_t>(std::clamp<std::int64_t>(s.i64(2), INT16_MIN, INT16_MAX));
            x.kstep = s.i32(3);
            x.issue = s.i64(4);
            x.ready = s.i64(5);
            x.bytes = s.i64(6);
            if (x.ready < x.issue)
                fail(m_path, "load " + str(id) + " is ready before it was issued (negative duration)");
            t.loads.push_back(x);
        }
        std::stable_sort(t.loads.begin(), t.loads.end(),
                         [](const LoadTransfer& a, const LoadTransfer& b) { return a.issue < b.issue; });
    }

    if (options.tiles) {
        Stmt s(db, "SELECT id, cta_id, warp_id, tile_m, tile_n, start_ns, end_ns FROM tiles WHERE kernel_id = ? "
                   "ORDER BY start_ns, id");
        s.bind(1, kernelId);
        while (s.step()) {
            TileSpan x;
            const RowId id = s.i64(0);
            auto it = ctaIndex.find(s.i64(1));
            if (it == ctaIndex.end())
                fail(m_path, "tile " + str(id) + " points at missing CTA " + str(s.i64(1)));
            x.ctaId = it->second;
            if (!s.isNull(2)) {
                x.warpId = s.i64(2);
                if (!laneIndex.count(x.warpId))
                    fail(m_path, "tile " + str(id) + " points at missing warp " + str(x.warpId));
            }
            x.tileM = s.i32(3);
            x.tileN = s.i32(4);
            x.start = s.i64(5);
            x.end = s.i64(6);
            if (x.end < x.start)
                fail(m_path, "tile " + str(id) + " ends before it starts (negative duration)");
            t.tiles.push_back(x);
        }
    }

    if (options.stalls)
        t.stalls = stallSamplesForRung(kernelId);
    return t;
}

// --- writing -------------------------------------------------------------------
RowId TraceStore::Impl::insertRun(const RunInfo& r)
{
    Stmt s(db, "INSERT INTO runs(variant, m, n, k, synthetic, status, failure_reason, device_name, compute_major, "
               "compute_minor, sm_count, sm_clock_khz, mem_clock_khz, l2_bytes, global_mem_bytes, driver_version, "
               "cuda_version, cupti_version, host, started_at, command_line, notes, has_timeline, has_stalls) "
               "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, r.variant).bind(2, r.m).bind(3, r.n).bind(4, r.k).bind(5, r.synthetic ? 1 : 0)
        .bind(6, statusName(r.status)).bind(7, r.failureReason).bind(8, r.device.name)
        .bind(9, r.device.computeMajor).bind(10, r.device.computeMinor).bind(11, r.device.smCount)
        .bind(12, r.device.smClockKHz).bind(13, r.device.memClockKHz).bind(14, r.device.l2Bytes)
        .bind(15, r.device.globalMemBytes).bind(16, r.driverVersion).bind(17, r.cudaVersion).bind(18, r.cuptiVersion)
        .bind(19, r.host).bind(20, r.startedAt).bind(21, r.commandLine).bind(22, r.notes)
        .bind(23, r.hasTimeline ? 1 : 0).bind(24, r.hasStalls ? 1 : 0);
    s.run();
    return sqlite3_last_insert_rowid(db.get());
}

RowId TraceStore::Impl::insertKernel(RowId runId, const KernelRecord& k)
{
    const std::string& path = db.path();
    const KernelLaunch& L = k.launch;
    if (L.end < L.start)
        fail(path, "cannot write kernel '" + L.name + "': it ends before it starts");
    RowId kernelId;
    {
        Stmt s(db, "INSERT INTO kernels(run_id, name, variant, traced, grid_x, grid_y, grid_z, block_x, block_y, "
                   "block_z, cluster_x, cluster_y, cluster_z, dynamic_smem_bytes, static_smem_bytes, "
                   "registers_per_thread, start_ns, end_ns, correlation_id, stream_id, align_residual_ns, "
                   "dropped_events) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        s.bind(1, runId).bind(2, L.name).bind(3, L.variant).bind(4, L.traced ? 1 : 0);
        for (int i = 0; i < 3; ++i) {
            s.bind(5 + i, L.grid[i]).bind(8 + i, L.block[i]).bind(11 + i, L.cluster[i]);
        }
        s.bind(14, L.dynamicSmemBytes).bind(15, L.staticSmemBytes).bind(16, L.registersPerThread)
            .bind(17, L.start).bind(18, L.end).bind(19, static_cast<std::int64_t>(L.correlationId))
            .bind(20, static_cast<std::int64_t>(L.streamId)).bind(21, L.alignResidualNs).bind(22, L.droppedEvents);
        s.run();
        kernelId = sqlite3_last_insert_rowid(db.get());
    }
    const std::string where = "cannot write kernel '" + L.name + "'";

    std::vector<RowId> ctaIds(k.ctas.size());
    {
        Stmt s(db, "INSERT INTO ctas(kernel_id, block_linear, sm_id, start_ns, end_ns, tile_m, tile_n, ns_per_cycle) "
                   "VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
        for (std::size_t i = 0; i < k.ctas.size(); ++i) {
            const Cta& c = k.ctas[i];
            if (c.end < c.start)
                fail(path, where + ": CTA " + str(static_cast<std::int64_t>(i)) + " ends before it starts");
            s.bind(1, kernelId).bind(2, c.blockLinear).bind(3, c.smId).bind(4, c.start).bind(5, c.end)
                .bind(6, c.tileM).bind(7, c.tileN).bind(8, c.nsPerCycle);
            s.run();
            ctaIds[i] = sqlite3_last_insert_rowid(db.get());
        }
    }
    auto ctaRow = [&](RowId local, const char* what) {
        if (local < 0 || static_cast<std::size_t>(local) >= ctaIds.size())
            fail(path, where + ": " + what + " points at missing CTA " + str(local));
        return ctaIds[static_cast<std::size_t>(local)];
    };
    std::vector<RowId> warpIds(k.warps.size());
    {
        Stmt s(db, "INSERT INTO warps(kernel_id, cta_id, warp_index, warpgroup, role, role_name) VALUES(?, ?, ?, ?, ?, ?)");
        for (std::size_t i = 0; i < k.warps.size(); ++i) {
            const Warp& w = k.warps[i];
            s.bind(1, kernelId).bind(2, ctaRow(w.ctaId, "a warp")).bind(3, w.warpIndex).bind(4, w.warpgroup)
                .bind(5, warpRoleName(w.role)).bind(6, w.roleName);
            s.run();
            warpIds[i] = sqlite3_last_insert_rowid(db.get());
        }
    }

    // Intervals: group by warp (counting sort on pointers unless already grouped), sort each by start.
    if (!k.intervals.empty()) {
        const std::size_t nw = k.warps.size();
        std::vector<std::size_t> counts(nw + 1, 0);
        bool grouped = true;
        RowId prevWarp = -1;
        for (const Interval& iv : k.intervals) {
            if (iv.warpId < 0 || static_cast<std::size_t>(iv.warpId) >= nw)
                fail(path, where + ": an interval points at missing warp " + str(iv.warpId));
            if (iv.duration < 0)
                fail(path, where + ": an interval has a negative duration (" + str(iv.duration) + " ns)");
            if (iv.warpId < prevWarp)
                grouped = false;
            prevWarp = iv.warpId;
            ++counts[static_cast<std::size_t>(iv.warpId) + 1];
        }
        std::partial_sum(counts.begin(), counts.end(), counts.begin());
        Stmt ins(db, kInsertChunkSql);
        ChunkBuffers buf;
        auto byStart = [](const Interval* x, const Interval* y) { return x->start < y->start; };
        if (grouped) {
            // The usual case (the recorder and the generator write warp by warp): no copy.
            for (std::size_t w = 0; w < nw; ++w) {
                const std::size_t b = counts[w], e = counts[w + 1];
                if (b == e)
                    continue;
                const Interval* first = k.intervals.data() + b;
                bool sorted = true;
                for (std::size_t i = 1; i < e - b && sorted; ++i)
                    sorted = first[i - 1].start <= first[i].start;
                if (sorted) {
                    writeWarpChunks(ins, kernelId, warpIds[w], [first](std::size_t i) -> const Interval& { return first[i]; },
                                    e - b, buf);
                } else {
                    std::vector<const Interval*> order(e - b);
                    for (std::size_t i = 0; i < e - b; ++i)
                        order[i] = first + i;
                    std::stable_sort(order.begin(), order.end(), byStart);
                    writeWarpChunks(ins, kernelId, warpIds[w], [&order](std::size_t i) -> const Interval& { return *order[i]; },
                                    e - b, buf);
                }
            }
        } else {
            std::vector<const Interval*> order(k.intervals.size());
            std::vector<std::size_t> fill(counts.begin(), counts.end() - 1);
            for (const Interval& iv : k.intervals)
                order[fill[static_cast<std::size_t>(iv.warpId)]++] = &iv;
            for (std::size_t w = 0; w < nw; ++w) {
                const std::size_t b = counts[w], e = counts[w + 1];
                if (b == e)
                    continue;
                const Interval** first = order.data() + b;
                if (!std::is_sorted(first, first + (e - b), byStart))
                    std::stable_sort(first, first + (e - b), byStart);
                writeWarpChunks(ins, kernelId, warpIds[w], [first](std::size_t i) -> const Interval& { return *first[i]; },
                                e - b, buf);
            }
        }
    }

    if (!k.tiles.empty()) {
        Stmt s(db, "INSERT INTO tiles(kernel_id, cta_id, warp_id, tile_m, tile_n, start_ns, end_ns) VALUES(?, ?, ?, ?, ?, ?, ?)");
        for (const TileSpan& x : k.tiles) {
            if (x.end < x.start)
                fail(path, where + ": a tile ends before it starts");
            s.bind(1, kernelId).bind(2, ctaRow(x.ctaId, "a tile"));
            if (x.warpId < 0) {
                s.bindNull(3);
            } else {
                if (static_cast<std::size_t>(x.warpId) >= warpIds.size())
                    fail(path, where + ": a tile points at missing warp " + str(x.warpId));
                s.bind(3, warpIds[static_cast<std::size_t>(x.warpId)]);
            }
            s.bind(4, x.tileM).bind(5, x.tileN).bind(6, x.start).bind(7, x.end);
            s.run();
        }
    }
    if (!k.loads.empty()) {
        Stmt s(db, "INSERT INTO loads(kernel_id, cta_id, slot, kstep, issue_ns, ready_ns, bytes) VALUES(?, ?, ?, ?, ?, ?, ?)");
        for (const LoadTransfer& x : k.loads) {
            if (x.ready < x.issue)
                fail(path, where + ": a load is ready before it was issued");
            s.bind(1, kernelId).bind(2, ctaRow(x.ctaId, "a load")).bind(3, static_cast<int>(x.slot)).bind(4, x.kstep)
                .bind(5, x.issue).bind(6, x.ready).bind(7, x.bytes);
            s.run();
        }
    }
    if (!k.stalls.empty()) {
        Stmt s(db, "INSERT INTO stall_samples(kernel_id, pc_offset, function_name, source_file, line, reason, "
                   "reason_label, count, role, stage) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (const StallSample& x : k.stalls) {
            if (x.count < 0)
                fail(path, where + ": a stall sample has a negative count");
            s.bind(1, kernelId).bind(2, static_cast<std::int64_t>(x.pcOffset)).bind(3, x.functionName)
                .bind(4, x.sourceFile).bind(5, x.line).bind(6, x.reason).bind(7, x.reasonLabel).bind(8, x.count)
                .bind(9, warpRoleName(x.role)).bind(10, x.stage);
            s.run();
        }
    }
    return kernelId;
}

void TraceStore::Impl::insertMemOps(RowId runId, const std::vector<MemOp>& ops)
{
    if (ops.empty())
        return;
    Stmt s(db, "INSERT INTO memops(run_id, kind, bytes, start_ns, end_ns, correlation_id, stream_id) VALUES(?, ?, ?, ?, ?, ?, ?)");
    for (const MemOp& m : ops) {
        if (m.end < m.start)
            fail(db.path(), "cannot write a memory operation that ends before it starts");
        s.bind(1, runId).bind(2, memOpKindName(m.kind)).bind(3, m.bytes).bind(4, m.start).bind(5, m.end)
            .bind(6, static_cast<std::int64_t>(m.correlationId)).bind(7, static_cast<std::int64_t>(m.streamId));
        s.run();
    }
}

void TraceStore::Impl::insertMetrics(RowId runId, const std::vector<Metric>& ms, const std::vector<RowId>* kernelIds)
{
    if (ms.empty())
        return;
    Stmt s(db, "INSERT INTO metrics(run_id, kernel_id, scope, name, value, unit) VALUES(?, ?, ?, ?, ?, ?) "
               "ON CONFLICT(run_id, kernel_id, scope, name) DO UPDATE SET value = excluded.value, unit = excluded.unit");
    for (const Metric& m : ms) {
        RowId kid = m.kernelId;
        if (kernelIds && kid != 0) {
            if (kid < 1 || static_cast<std::size_t>(kid) > kernelIds->size())
                fail(db.path(), "cannot write metric '" + m.name + "': it points at missing kernel " + str(kid));
            kid = (*kernelIds)[static_cast<std::size_t>(kid - 1)];
        }
        s.bind(1, runId).bind(2, kid).bind(3, m.scope).bind(4, m.name);
        if (m.value != m.value)
            s.bindNull(5);
        else
            s.bind(5, m.value);
        s.bind(6, m.unit);
        s.run();
    }
}

RowId TraceStore::writeRun(const RunRecord& rec)
{
    if (m_readOnly || !m_impl->writable)
        fail(m_path, "opened read-only; cannot write a run");
    if (m_impl->inRun)
        fail(m_path, "a streaming run is still open; commit it before writing another run");
    const Db& db = m_impl->db;
    db.exec("BEGIN IMMEDIATE");
    try {
        const RowId runId = m_impl->insertRun(rec.info);
        std::vector<RowId> kernelIds;
        kernelIds.reserve(rec.kernels.size());
        for (const KernelRecord& k : rec.kernels)
            kernelIds.push_back(m_impl->insertKernel(runId, k));
        m_impl->insertMemOps(runId, rec.memOps);
        m_impl->insertMetrics(runId, rec.metrics, &kernelIds);
        db.exec("COMMIT");
        m_impl->useWal();
        return runId;
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

void TraceStore::writeMetrics(RowId runId, const std::vector<Metric>& ms)
{
    if (m_readOnly || !m_impl->writable)
        fail(m_path, "opened read-only; cannot write metrics");
    if (m_impl->inRun)
        fail(m_path, "a streaming run is still open; commit it before writing metrics");
    const Db& db = m_impl->db;
    db.exec("BEGIN IMMEDIATE");
    try {
        Stmt chk(db, "SELECT 1 FROM runs WHERE id = ?");
        chk.bind(1, runId);
        if (!chk.step())
            fail(m_path, "cannot write metrics: no run " + str(runId));
        m_impl->insertMetrics(runId, ms, nullptr);
        db.exec("COMMIT");
        m_impl->useWal();
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

void TraceStore::updateStallStages(RowId runId, const std::map<RowId, std::vector<StallSample>>& byKernel,
                                   const std::string& note)
{
    if (m_readOnly || !m_impl->writable)
        fail(m_path, "opened read-only; cannot update stall samples");
    if (m_impl->inRun)
        fail(m_path, "a streaming run is still open; commit it before updating stall samples");
    const Db& db = m_impl->db;
    db.exec("BEGIN IMMEDIATE");
    try {
        Stmt sel(db, "SELECT id, pc_offset, line FROM stall_samples WHERE kernel_id = ? ORDER BY id");
        Stmt kernelRun(db, "SELECT run_id FROM kernels WHERE id = ?");
        Stmt upd(db, "UPDATE stall_samples SET role = ?, stage = ? WHERE id = ?");
        for (const auto& [kernelId, samples] : byKernel) {
            kernelRun.bind(1, kernelId);
            if (!kernelRun.step() || kernelRun.i64(0) != runId)
                fail(m_path, "cannot update stall samples: kernel " + str(kernelId) + " is not in run " + str(runId));
            kernelRun.reset();
            std::vector<RowId> ids;
            sel.bind(1, kernelId);
            for (std::size_t i = 0; sel.step(); ++i) {
                if (i >= samples.size() || static_cast<std::uint64_t>(sel.i64(1)) != samples[i].pcOffset
                    || sel.i64(2) != samples[i].line)
                    fail(m_path, "cannot update stall samples of kernel " + str(kernelId)
                                     + ": they do not match the stored ones");
                ids.push_back(sel.i64(0));
            }
            sel.reset();
            if (ids.size() != samples.size())
                fail(m_path, "cannot update stall samples of kernel " + str(kernelId) + ": " + str(ids.size())
                                 + " stored, " + str(samples.size()) + " given");
            for (std::size_t i = 0; i < ids.size(); ++i) {
                upd.bind(1, warpRoleName(samples[i].role)).bind(2, samples[i].stage).bind(3, ids[i]);
                upd.run();
            }
        }
        if (!note.empty()) {
            Stmt n(db, "UPDATE runs SET notes = notes || ? WHERE id = ?");
            n.bind(1, note).bind(2, runId);
            n.run();
        }
        db.exec("COMMIT");
        m_impl->useWal();
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

RunWriter TraceStore::beginRun(const RunInfo& info)
{
    if (m_readOnly || !m_impl->writable)
        fail(m_path, "opened read-only; cannot write a run");
    if (m_impl->inRun)
        fail(m_path, "a streaming run is already open");
    m_impl->useWal();
    const Db& db = m_impl->db;
    db.exec("BEGIN IMMEDIATE");
    RowId id;
    try {
        id = m_impl->insertRun(info);
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
    m_impl->inRun = true;
    return RunWriter(this, id);
}

// --- RunWriter -------------------------------------------------------------------
RunWriter::RunWriter(TraceStore* store, RowId runId) : m_store(store), m_runId(runId), m_open(true) {}

RunWriter::RunWriter(RunWriter&& o) noexcept
    : m_store(std::exchange(o.m_store, nullptr)), m_runId(o.m_runId), m_open(std::exchange(o.m_open, false))
{
}

RunWriter::~RunWriter()
{
    if (m_open)
        rollback();
}

namespace {
void requireOpen(bool open, TraceStore* st)
{
    if (!open || !st)
        throw StoreError(st ? st->path() : std::string("(no file)"), "the run was already committed or rolled back");
}
}  // namespace

RowId RunWriter::addKernel(const KernelRecord& kernel)
{
    requireOpen(m_open, m_store);
    return m_store->m_impl->insertKernel(m_runId, kernel);
}

void RunWriter::addMemOps(const std::vector<MemOp>& ops)
{
    requireOpen(m_open, m_store);
    m_store->m_impl->insertMemOps(m_runId, ops);
}

void RunWriter::addMetrics(const std::vector<Metric>& metrics)
{
    requireOpen(m_open, m_store);
    m_store->m_impl->insertMetrics(m_runId, metrics, nullptr);
}

void RunWriter::setFailed(const std::string& reason)
{
    requireOpen(m_open, m_store);
    Stmt s(m_store->m_impl->db, "UPDATE runs SET status = 'failed', failure_reason = ? WHERE id = ?");
    s.bind(1, reason).bind(2, m_runId).run();
}

void RunWriter::setNotes(const std::string& notes)
{
    requireOpen(m_open, m_store);
    Stmt s(m_store->m_impl->db, "UPDATE runs SET notes = ? WHERE id = ?");
    s.bind(1, notes).bind(2, m_runId).run();
}

void RunWriter::setHasStalls(bool hasStalls)
{
    requireOpen(m_open, m_store);
    Stmt s(m_store->m_impl->db, "UPDATE runs SET has_stalls = ? WHERE id = ?");
    s.bind(1, hasStalls ? 1 : 0).bind(2, m_runId).run();
}

void RunWriter::commit()
{
    requireOpen(m_open, m_store);
    m_store->m_impl->db.exec("COMMIT");
    m_open = false;
    m_store->m_impl->inRun = false;
    m_store->m_impl->useWal();
}

void RunWriter::rollback()
{
    if (!m_open || !m_store)
        return;
    sqlite3_exec(m_store->m_impl->db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    m_open = false;
    m_store->m_impl->inRun = false;
}

}  // namespace ws
