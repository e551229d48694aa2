// SQLite store: migrating files of older schema versions (on a copy or in place), in one transaction.
#include "store_impl.h"
#include "store_packed.h"

#include <climits>
#include <map>
#include <tuple>

namespace ws {

using detail::Db;
using detail::Stmt;
using namespace detail;

namespace {

namespace fs = std::filesystem;

std::int64_t migrate1to2(const Db& db)
{
    const auto* chunks = detail::findTable("interval_chunks");
    db.exec(detail::createTableSql(*chunks, 2).c_str());
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
    ChunkWriter writer(&db, ChunkCodec::Raw);  // version 2 has raw chunks; 2 -> 3 compresses them
    std::vector<Interval> cur;
    RowId curWarp = 0, curKernel = 0;
    std::int64_t total = 0;
    auto flush = [&] {
        if (cur.empty())
            return;
        writer.writeWarp(curKernel, curWarp, [&](std::size_t i) -> const Interval& { return cur[i]; }, cur.size());
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

// Rewrites every raw chunk as a zstd chunk (same rows, same boundaries), validating it on the way.
std::int64_t recompressChunks(const Db& db)
{
    std::vector<RowId> ids;
    {
        Stmt s(db, "SELECT id FROM interval_chunks WHERE codec = 0 ORDER BY id");
        while (s.step())
            ids.push_back(s.i64(0));
    }
    Stmt sel(db, "SELECT warp_id, first_start_ns, count, starts, durations, kinds, slots, ksteps FROM interval_chunks "
                 "WHERE id = ?");
    Stmt upd(db, "UPDATE interval_chunks SET last_end_ns = ?, starts = ?, durations = ?, kinds = ?, slots = ?, "
                 "ksteps = ?, codec = ? WHERE id = ?");
    ChunkDecoder dec;
    ChunkWriter enc(nullptr, ChunkCodec::Zstd);
    std::int64_t total = 0;
    for (RowId id : ids) {
        sel.bind(1, id);
        if (!sel.step())
            fail(db.path(), "interval chunk " + str(id) + " vanished during migration");
        Lane lane;
        dec.decode(db.path(), id, sel.i64(0), sel.i64(1), sel.i64(2), static_cast<int>(ChunkCodec::Raw), sel.blob(3),
                   sel.blob(4), sel.blob(5), sel.blob(6), sel.blob(7), lane);
        sel.reset();
        const std::size_t n = lane.size();
        total += static_cast<std::int64_t>(n);
        // An empty chunk, or one with an interval of 2^31 ns or more (the lane clamps those), stays raw:
        // readers accept raw chunks in every version.
        if (n == 0 || std::find(lane.duration.begin(), lane.duration.end(), INT32_MAX) != lane.duration.end())
            continue;
        Interval iv;
        const auto& e = enc.encode([&](std::size_t i) -> const Interval& {
            iv.kind = lane.kind[i];
            iv.slot = lane.slot[i];
            iv.kstep = lane.kstep[i];
            iv.start = lane.start[i];
            iv.duration = lane.duration[i];
            return iv;
        }, 0, n);
        upd.bind(1, e.lastEnd);
        for (int i = 0; i < 5; ++i)
            upd.bindBlobStatic(2 + i, e.blob[i].data(), e.blob[i].size());
        upd.bind(7, static_cast<int>(enc.codec())).bind(8, id);
        upd.run();
    }
    return total;
}

// Version 3: program tables, new columns on runs / kernels / memops / interval_chunks; chunks compressed.
// Returns the number of intervals recompressed.
std::int64_t migrate2to3(const Db& db)
{
    for (const TableDef& t : schemaTables()) {
        if (!tableActive(t, 3))
            continue;
        if (!tableActive(t, 2)) {
            db.exec(createTableSql(t, 3).c_str());
            for (auto idx : t.indexes)
                db.exec(std::string(idx).c_str());
            continue;
        }
        for (const ColumnDef& c : t.columns)
            if (c.sinceVersion == 3)
                db.exec(("ALTER TABLE " + std::string(t.name) + " ADD COLUMN " + std::string(c.name) + " "
                         + std::string(c.decl)).c_str());
    }
    Stmt m(db, "UPDATE meta SET value = ? WHERE key = 'interval_encoding'");
    m.bind(1, kIntervalEncoding).run();
    return recompressChunks(db);
}

// Version 4: loads packed per CTA, per-CTA / per-warpgroup metrics packed per launch, tables phase_names,
// sources, source_texts. Every row moved is checked on the way (a bad row fails the migration).
void migrate3to4(const Db& db)
{
    for (const TableDef& t : schemaTables()) {
        if (!tableActive(t, 4) || tableActive(t, 3))
            continue;
        db.exec(createTableSql(t, 4).c_str());
        for (auto idx : t.indexes)
            db.exec(std::string(idx).c_str());
    }
    {
        Stmt orphan(db, "SELECT l.id, l.cta_id FROM loads l LEFT JOIN ctas c ON c.id = l.cta_id AND c.kernel_id = l.kernel_id "
                        "WHERE c.id IS NULL LIMIT 1");
        if (orphan.step())
            fail(db.path(), "load " + str(orphan.i64(0)) + " points at missing CTA " + str(orphan.i64(1)));
        Stmt neg(db, "SELECT id FROM loads WHERE ready_ns < issue_ns LIMIT 1");
        if (neg.step())
            fail(db.path(), "load " + str(neg.i64(0)) + " is ready before it was issued (negative duration)");
    }
    Stmt sel(db, "SELECT kernel_id, cta_id, slot, kstep, issue_ns, ready_ns, bytes FROM loads "
                 "ORDER BY kernel_id, cta_id, issue_ns, id");
    Stmt ins(db, "INSERT INTO load_chunks(kernel_id, cta_id, count, first_issue_ns, last_ready_ns, codec, data) "
                 "VALUES(?, ?, ?, ?, ?, ?, ?)");
    Zstd z;
    std::vector<LoadTransfer> cur;
    RowId chunkKernel = 0, chunkCta = 0;
    auto flush = [&] {
        if (cur.empty())
            return;
        const PackedLoads p = packLoads(db.path(), z, std::move(cur));
        ins.bind(1, chunkKernel).bind(2, chunkCta).bind(3, p.count).bind(4, p.firstIssue).bind(5, p.lastReady)
            .bind(6, kPackedCodecZstd).bindBlobStatic(7, p.data.data(), p.data.size());
        ins.run();
        cur.clear();
    };
    while (sel.step()) {
        if (sel.i64(0) != chunkKernel || sel.i64(1) != chunkCta) {
            flush();
            chunkKernel = sel.i64(0);
            chunkCta = sel.i64(1);
        }
        LoadTransfer x;
        x.slot = static_cast<std::int16_t>(std::clamp<std::int64_t>(sel.i64(2), INT16_MIN, INT16_MAX));
        x.kstep = static_cast<std::int32_t>(std::clamp<std::int64_t>(sel.i64(3), INT32_MIN, INT32_MAX));
        x.issue = sel.i64(4);
        x.ready = sel.i64(5);
        x.bytes = sel.i64(6);
        cur.push_back(x);
    }
    flush();
    db.exec("DROP TABLE loads");

    // Metrics of scopes cta:N / wg:N into metric_chunks; the rows are deleted.
    std::map<std::tuple<RowId, RowId, std::string>, MetricGroup> packed;
    std::vector<RowId> moved;
    {
        Stmt m(db, "SELECT id, run_id, kernel_id, scope, name, value, unit FROM metrics "
                   "WHERE scope LIKE 'cta:%' OR scope LIKE 'wg:%'");
        while (m.step()) {
            const auto ps = packedScope(m.text(3));
            if (!ps)
                continue;  // not canonical: stays a row
            packed[{m.i64(1), m.i64(2), ps->first}][MetricKey{ps->second, m.text(4)}] =
                MetricValue{m.isNull(5) ? std::numeric_limits<double>::quiet_NaN() : m.f64(5), m.text(6)};
            moved.push_back(m.i64(0));
        }
    }
    Stmt mi(db, "INSERT INTO metric_chunks(run_id, kernel_id, scope_prefix, count, codec, data) VALUES(?, ?, ?, ?, ?, ?)");
    for (const auto& [key, group] : packed) {
        const std::string data = packMetrics(db.path(), z, group);
        mi.bind(1, std::get<0>(key)).bind(2, std::get<1>(key)).bind(3, std::get<2>(key))
            .bind(4, static_cast<std::int64_t>(group.size())).bind(5, kPackedCodecZstd)
            .bindBlobStatic(6, data.data(), data.size());
        mi.run();
    }
    Stmt del(db, "DELETE FROM metrics WHERE id = ?");
    for (RowId id : moved)
        del.bind(1, id).run();
}

// Version 5: API call names, NVTX names and domains interned. Every distinct text goes once into `names`; the
// rows move with their ids into api_calls / nvtx_events; the old tables are dropped and views of the same names
// and columns take their place (docs/schema.md, "Version 5").
void migrate4to5(const Db& db)
{
    for (const TableDef& t : schemaTables()) {
        if (!tableActive(t, 5))
            continue;
        if (tableActive(t, 4)) {
            for (const ColumnDef& c : t.columns)
                if (c.sinceVersion == 5)
                    db.exec(("ALTER TABLE " + std::string(t.name) + " ADD COLUMN " + std::string(c.name) + " "
                             + std::string(c.decl)).c_str());
            continue;
        }
        db.exec(createTableSql(t, 5).c_str());
        for (auto idx : t.indexes)
            db.exec(std::string(idx).c_str());
    }
    db.exec("INSERT INTO names(name) SELECT name FROM api_spans UNION SELECT domain FROM nvtx_ranges "
            "UNION SELECT name FROM nvtx_ranges ORDER BY 1");
    db.exec("INSERT INTO api_calls(id, run_id, name_id, cbid, driver, start_ns, end_ns, thread_id, correlation_id, "
            "result) SELECT a.id, a.run_id, n.id, a.cbid, a.driver, a.start_ns, a.end_ns, a.thread_id, "
            "a.correlation_id, a.result FROM api_spans a JOIN names n ON n.name = a.name ORDER BY a.id");
    db.exec("INSERT INTO nvtx_events(id, run_id, kind, domain_id, name_id, start_ns, end_ns, thread_id, depth, color, "
            "category, closed) SELECT r.id, r.run_id, r.kind, d.id, n.id, r.start_ns, r.end_ns, r.thread_id, r.depth, "
            "r.color, r.category, r.closed FROM nvtx_ranges r JOIN names d ON d.name = r.domain "
            "JOIN names n ON n.name = r.name ORDER BY r.id");
    // Every row moved (a NULL name, which schema 4 does not allow, would have been left behind by the joins).
    const auto moved = [&](const char* from, const char* to) {
        Stmt a(db, (std::string("SELECT COUNT(*) FROM ") + from).c_str());
        Stmt b(db, (std::string("SELECT COUNT(*) FROM ") + to).c_str());
        if (!a.step() || !b.step() || a.i64(0) != b.i64(0))
            fail(db.path(), std::string("cannot migrate table '") + from + "': a row has no name");
    };
    moved("api_spans", "api_calls");
    moved("nvtx_ranges", "nvtx_events");
    // Each run's id range (what readers look up instead of a per-row index), where its ids are consecutive: a
    // run written by Warpstage is one transaction, so they are; otherwise the range stays 0, 0 (not known).
    for (const auto& [table, first, last] : {std::tuple{"api_calls", "api_first_id", "api_last_id"},
                                             std::tuple{"nvtx_events", "nvtx_first_id", "nvtx_last_id"}})
        db.exec((std::string("UPDATE runs SET ") + first + " = r.lo, " + last + " = r.hi FROM (SELECT run_id, "
                 "MIN(id) AS lo, MAX(id) AS hi, COUNT(*) AS n FROM " + table + " GROUP BY run_id) AS r "
                 "WHERE runs.id = r.run_id AND r.n = r.hi - r.lo + 1").c_str());
    // and an empty range (first = last + 1) for runs without such rows
    db.exec("UPDATE runs SET api_first_id = 1, api_last_id = 0 WHERE id NOT IN (SELECT run_id FROM api_calls)");
    db.exec("UPDATE runs SET nvtx_first_id = 1, nvtx_last_id = 0 WHERE id NOT IN (SELECT run_id FROM nvtx_events)");
    db.exec("DROP TABLE api_spans");
    db.exec("DROP TABLE nvtx_ranges");
    for (const ViewDef& v : schemaViews())
        if (viewActive(v, 5) && !viewActive(v, 4))
            db.exec(std::string(v.sql).c_str());
}

// Version 6: the table scope_spans (outer scopes of a warp, for bracket lanes), empty: older files have none.
void migrate5to6(const Db& db)
{
    for (const TableDef& t : schemaTables()) {
        if (!tableActive(t, 6) || tableActive(t, 5))
            continue;
        db.exec(createTableSql(t, 6).c_str());
        for (auto idx : t.indexes)
            db.exec(std::string(idx).c_str());
    }
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
        if (v < 3) {
            const std::int64_t n = migrate2to3(db);
            if (v == 2)
                r.intervalsMigrated += n;
        }
        if (v < 4)
            migrate3to4(db);
        if (v < 5)
            migrate4to5(db);
        if (v < 6)
            migrate5to6(db);
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
        out.exec("VACUUM");  // the copy is new: drop the pages the raw chunks left free
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

}  // namespace ws
