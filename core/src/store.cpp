// SQLite store: errors, file checks, schema inspection and creation, opening files.
// Readers: store_read.cpp; writers: store_write.cpp; migrations: store_migrate.cpp; interval
// chunk codec: store_chunks.cpp. Schema: schema.cpp; docs: docs/schema.md.
#include "store_impl.h"

#include <cstdio>
#include <cstring>
#include <fstream>

namespace ws {

using detail::Db;
using detail::Stmt;
using namespace detail;

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
namespace detail {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const std::string& problem) { throw StoreError(path, problem); }

std::string str(std::int64_t v) { return std::to_string(v); }

// --- enum <-> text --------------------------------------------------------
const char* statusName(RunStatus s)
{
    switch (s) {
    case RunStatus::Failed: return "failed";
    case RunStatus::Incomplete: return "incomplete";
    default: return "complete";
    }
}
RunStatus statusFromName(const std::string& s)
{
    if (s == "failed")
        return RunStatus::Failed;
    if (s == "incomplete")
        return RunStatus::Incomplete;
    return RunStatus::Complete;
}

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

bool tableActive(const TableDef& t, int version) { return version >= t.sinceVersion && version <= t.untilVersion; }

void requireTables(const Db& db, int version)
{
    const auto names = tableNames(db);
    if (!names.count("runs"))
        fail(db.path(), names.empty() ? "not a Warpstage trace (the database is empty, table 'runs' missing)"
                                      : "not a Warpstage trace (table 'runs' missing)");
    for (const auto& t : schemaTables()) {
        if (!tableActive(t, version))
            continue;
        if (!names.count(std::string(t.name)))
            fail(db.path(), "damaged Warpstage trace (table '" + std::string(t.name) + "' missing)");
        std::set<std::string> cols;
        Stmt s(db, ("SELECT name FROM pragma_table_info('" + std::string(t.name) + "')").c_str());
        while (s.step())
            cols.insert(s.text(0));
        for (const auto& c : t.columns)
            if (columnActive(c, version) && !cols.count(std::string(c.name)))
                fail(db.path(), "damaged Warpstage trace (table '" + std::string(t.name) + "' lacks column '"
                                    + std::string(c.name) + "')");
    }
    std::set<std::string> views;
    {
        Stmt s(db, "SELECT name FROM sqlite_master WHERE type = 'view'");
        while (s.step())
            views.insert(s.text(0));
    }
    for (const auto& v : schemaViews())
        if (viewActive(v, version) && !views.count(std::string(v.name)))
            fail(db.path(), "damaged Warpstage trace (view '" + std::string(v.name) + "' missing)");
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
        for (const auto& t : schemaTables()) {
            if (!tableActive(t, kSchemaVersion))
                continue;
            db.exec(createTableSql(t, kSchemaVersion).c_str());
            for (auto idx : t.indexes)
                db.exec(std::string(idx).c_str());
        }
        for (const auto& v : schemaViews())
            if (viewActive(v, kSchemaVersion))
                db.exec(std::string(v.sql).c_str());
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
            s.bind(1, "interval_encoding").bind(2, kIntervalEncoding).run();
        }
        db.exec(("PRAGMA application_id = " + str(kApplicationId)).c_str());
        db.exec(("PRAGMA user_version = " + str(kSchemaVersion)).c_str());
        db.exec("COMMIT");
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}


}  // namespace detail

namespace fs = std::filesystem;

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
    // A run is one transaction: with SQLite's default 2 MiB page cache a large run spills dirty pages
    // to the journal mid-transaction and re-reads index pages; 64 MiB keeps a program run in memory.
    db.exec("PRAGMA cache_size = -65536");
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


}  // namespace ws
