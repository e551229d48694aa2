// Schema migration: an old (version 1, one row per interval) file is migrated on a copy
// (the original stays byte-identical) or in place after consent; newer files are refused.
#include "testutil.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <map>

#include <filesystem>

using namespace ws;

namespace {

// What schemas 6, 5 and 3 added, removed again with plain SQL (docs/schema.md, "versions").
constexpr const char* kDropVersion3Sql =
    "DROP TABLE scope_spans; "
    "DROP VIEW api_spans; DROP VIEW nvtx_ranges; DROP TABLE api_calls; DROP TABLE nvtx_events; DROP TABLE names; "
    "ALTER TABLE runs DROP COLUMN api_first_id; ALTER TABLE runs DROP COLUMN api_last_id; "
    "ALTER TABLE runs DROP COLUMN nvtx_first_id; ALTER TABLE runs DROP COLUMN nvtx_last_id; "
    "DROP TABLE streams; "
    "ALTER TABLE runs DROP COLUMN kind; ALTER TABLE runs DROP COLUMN pid; ALTER TABLE runs DROP COLUMN parent_pid; "
    "ALTER TABLE runs DROP COLUMN program; ALTER TABLE runs DROP COLUMN working_dir; "
    "ALTER TABLE runs DROP COLUMN device_ordinal; ALTER TABLE runs DROP COLUMN device_uuid; "
    "ALTER TABLE runs DROP COLUMN process_start_ns; ALTER TABLE runs DROP COLUMN process_end_ns; "
    "ALTER TABLE runs DROP COLUMN exit_code; ALTER TABLE runs DROP COLUMN exit_signal; "
    "ALTER TABLE kernels DROP COLUMN context_id; ALTER TABLE kernels DROP COLUMN graph_id; "
    "ALTER TABLE kernels DROP COLUMN graph_node_id; ALTER TABLE kernels DROP COLUMN launch_index; "
    "ALTER TABLE memops DROP COLUMN context_id; ALTER TABLE memops DROP COLUMN graph_id; "
    "ALTER TABLE memops DROP COLUMN graph_node_id; ";

// Builds a version-1 file by hand: write a current file, then rewrite the interval storage
// as the old row-per-interval table with plain SQL (independent of the store's migration code).
void makeVersion1(const std::string& path, const RunRecord& rec)
{
    {
        auto st = TraceStore::openForWriting(path);
        st.writeRun(rec);
    }
    // Decode the chunks through the store to get the rows to insert.
    std::vector<std::tuple<RowId, int, int, int, TimeNs, TimeNs>> rows;
    // Schema 4 packs loads and per-CTA / per-warpgroup metrics: version 1 had them as rows.
    std::string unpack = "CREATE TABLE loads(id INTEGER PRIMARY KEY, kernel_id INTEGER NOT NULL, cta_id INTEGER NOT NULL, "
                         "slot INTEGER NOT NULL DEFAULT -1, kstep INTEGER NOT NULL DEFAULT -1, issue_ns INTEGER NOT NULL, "
                         "ready_ns INTEGER NOT NULL, bytes INTEGER NOT NULL DEFAULT 0); "
                         "CREATE INDEX loads_kernel ON loads(kernel_id); ";
    {
        auto st = TraceStore::openReadOnly(path);
        const RowId run = st.runs()[0].id;
        for (const KernelLaunch& k : st.kernels(run)) {
            const KernelTrace t = st.loadKernel(k.id);
            for (const Lane& l : t.lanes)
                for (std::size_t i = 0; i < l.size(); ++i)
                    rows.emplace_back(l.warpId, int(l.kind[i]), l.slot[i], l.kstep[i], l.start[i], l.duration[i]);
            for (const LoadTransfer& x : t.loads)
                unpack += "INSERT INTO loads(kernel_id, cta_id, slot, kstep, issue_ns, ready_ns, bytes) VALUES("
                    + std::to_string(k.id) + "," + std::to_string(t.ctas[std::size_t(x.ctaId)].id) + ","
                    + std::to_string(x.slot) + "," + std::to_string(x.kstep) + "," + std::to_string(x.issue) + ","
                    + std::to_string(x.ready) + "," + std::to_string(x.bytes) + "); ";
        }
        for (const Metric& m : st.metrics(run))
            if (m.scope.rfind("cta:", 0) == 0 || m.scope.rfind("wg:", 0) == 0)
                unpack += "INSERT INTO metrics(run_id, kernel_id, scope, name, value, unit) VALUES(" + std::to_string(run)
                    + "," + std::to_string(m.kernelId) + ",'" + m.scope + "','" + m.name + "',"
                    + (std::isnan(m.value) ? std::string("NULL") : QString::number(m.value, 'g', 17).toStdString())
                    + ",'" + m.unit + "'); ";
    }
    unpack += "DROP TABLE load_chunks; DROP TABLE metric_chunks; DROP TABLE phase_names; DROP TABLE sources; "
              "DROP TABLE source_texts; ";
    std::string sql = "BEGIN; " + unpack + "CREATE TABLE intervals(id INTEGER PRIMARY KEY, warp_id INTEGER NOT NULL, kind INTEGER NOT NULL, "
                      "slot INTEGER NOT NULL DEFAULT -1, kstep INTEGER NOT NULL DEFAULT -1, start_ns INTEGER NOT NULL, "
                      "duration_ns INTEGER NOT NULL); ";
    // Warps in reverse order (migration has to group and sort); within a warp the writer's order
    // (it decides the order of intervals with equal starts).
    std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return std::get<0>(x) > std::get<0>(y); });
    for (const auto& row : rows) {
        const auto& [w, kind, slot, kstep, s, d] = row;
        sql += "INSERT INTO intervals(warp_id, kind, slot, kstep, start_ns, duration_ns) VALUES(" + std::to_string(w) + ","
            + std::to_string(kind) + "," + std::to_string(slot) + "," + std::to_string(kstep) + "," + std::to_string(s)
            + "," + std::to_string(d) + "); ";
    }
    sql += "DROP TABLE interval_chunks; " + std::string(kDropVersion3Sql) + "PRAGMA user_version = 1; COMMIT; VACUUM;";
    wstest::rawExec(path, sql);
}

// What a fixture holds (tests/core/fixtures/README.md): counts and the interval checksum.
struct Contents {
    std::int64_t runs = 0, kernels = 0, traced = 0, ctas = 0, warps = 0, intervals = 0, loads = 0, stallSamples = 0,
                 metrics = 0;
    std::uint64_t checksum = 0;
};

std::uint64_t fnv(std::uint64_t h, std::int64_t v)
{
    for (int i = 0; i < 8; ++i) {
        h ^= static_cast<std::uint64_t>(v >> (8 * i)) & 0xff;
        h *= 1099511628211ULL;
    }
    return h;
}

Contents contentsOf(const TraceStore& st)
{
    Contents c;
    for (const RunInfo& r : st.runs()) {
        ++c.runs;
        c.metrics += static_cast<std::int64_t>(st.metrics(r.id).size());
        for (const KernelSummary& k : st.kernelSummaries(r.id)) {
            ++c.kernels;
            c.ctas += k.ctaCount;
            c.warps += k.warpCount;
            c.loads += k.loadCount;
            c.stallSamples += k.stallSampleCount;
            if (!k.launch.traced)
                continue;
            ++c.traced;
            const KernelTrace t = st.loadKernel(k.launch.id);
            c.intervals += static_cast<std::int64_t>(t.intervalCount());
            for (const Lane& l : t.lanes) {
                if (l.size() == 0)
                    continue;
                std::uint64_t h = 1469598103934665603ULL;
                h = fnv(h, t.ctas[static_cast<std::size_t>(l.ctaIndex)].blockLinear);
                h = fnv(h, l.warpIndex);
                for (std::size_t i = 0; i < l.size(); ++i) {
                    h = fnv(h, l.start[i]);
                    h = fnv(h, l.duration[i]);
                    h = fnv(h, static_cast<std::int64_t>(l.kind[i]));
                    h = fnv(h, l.slot[i]);
                    h = fnv(h, l.kstep[i]);
                }
                c.checksum += h;
            }
        }
    }
    return c;
}

// What make_schema_fixtures printed when it made the fixtures (tests/core/fixtures/README.md).
void compareWithFixtureRecord(const Contents& c)
{
    QCOMPARE(c.runs, std::int64_t(2));
    QCOMPARE(c.kernels, std::int64_t(4));
    QCOMPARE(c.traced, std::int64_t(2));
    QCOMPARE(c.ctas, std::int64_t(5));
    QCOMPARE(c.warps, std::int64_t(32));
    QCOMPARE(c.intervals, std::int64_t(688));
    QCOMPARE(c.loads, std::int64_t(32));
    QCOMPARE(c.stallSamples, std::int64_t(400000));
    QCOMPARE(c.metrics, std::int64_t(3));
    QCOMPARE(c.checksum, std::uint64_t(0x2585e5beeb29e673ULL));
}

std::string fixture(const char* name) { return std::string(WARPSTAGE_FIXTURES_DIR) + "/" + name; }

}  // namespace

class TestMigration : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string file(const char* n) { return (m_dir.path() + "/" + n).toStdString(); }

    RunRecord record()
    {
        SyntheticParams p;
        p.ctas = 3;
        p.smCount = 2;
        p.kstepsPerTile = 6;
        p.tilesPerCta = 2;
        return generateSynthetic(p);
    }

    // The migrated file holds exactly what the current writer would have written.
    void compareWithFresh(const std::string& migrated, const RunRecord& rec)
    {
        const auto fresh = migrated + ".fresh";
        {
            auto st = TraceStore::openForWriting(fresh);
            st.writeRun(rec);
        }
        auto a = TraceStore::openReadOnly(migrated);
        auto b = TraceStore::openReadOnly(fresh);
        QCOMPARE(a.schemaVersion(), kSchemaVersion);
        const auto ka = a.kernels(a.runs()[0].id), kb = b.kernels(b.runs()[0].id);
        QCOMPARE(ka.size(), kb.size());
        for (std::size_t i = 0; i < ka.size(); ++i) {
            const KernelTrace ta = a.loadKernel(ka[i].id), tb = b.loadKernel(kb[i].id);
            QCOMPARE(ta.intervalCount(), tb.intervalCount());
            QCOMPARE(ta.lanes.size(), tb.lanes.size());
            for (std::size_t l = 0; l < ta.lanes.size(); ++l) {
                QVERIFY(ta.lanes[l].start == tb.lanes[l].start);
                QVERIFY(ta.lanes[l].duration == tb.lanes[l].duration);
                QVERIFY(ta.lanes[l].kind == tb.lanes[l].kind);
                QVERIFY(ta.lanes[l].slot == tb.lanes[l].slot);
                QVERIFY(ta.lanes[l].kstep == tb.lanes[l].kstep);
            }
            QCOMPARE(ta.loads.size(), tb.loads.size());
            for (std::size_t j = 0; j < ta.loads.size(); ++j) {
                QCOMPARE(ta.loads[j].issue, tb.loads[j].issue);
                QCOMPARE(ta.loads[j].ready, tb.loads[j].ready);
                QCOMPARE(ta.loads[j].ctaId, tb.loads[j].ctaId);
                QCOMPARE(ta.loads[j].kstep, tb.loads[j].kstep);
            }
            QCOMPARE(ta.stalls.size(), tb.stalls.size());
        }
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void oldFileIsDetectedNotChanged()
    {
        const auto v1 = file("old1.wstrace");
        makeVersion1(v1, record());
        const QByteArray before = wstest::fileHash(v1);
        const FileCheck c = TraceStore::checkFile(v1);
        QCOMPARE(c.fileVersion, 1);
        QVERIFY(c.needsMigration);
        try {
            TraceStore::openReadOnly(v1);
            QFAIL("opened an old file without migration");
        } catch (const NeedsMigrationError& e) {
            QCOMPARE(e.fileVersion(), 1);
            QCOMPARE(e.path(), v1);
            QVERIFY(e.problem().find("older Warpstage") != std::string::npos);
        }
        // Writing never migrates silently either.
        QVERIFY_THROWS_EXCEPTION(NeedsMigrationError, TraceStore::openForWriting(v1));
        QCOMPARE(wstest::fileHash(v1), before);
    }

    void migrateCopyLeavesOriginalUntouched()
    {
        const RunRecord rec = record();
        const auto v1 = file("old2.wstrace");
        makeVersion1(v1, rec);
        const QByteArray before = wstest::fileHash(v1);
        const auto dst = file("old2.migrated.wstrace");
        const MigrationResult r = TraceStore::migrateCopy(v1, dst);
        QCOMPARE(r.fromVersion, 1);
        QCOMPARE(r.toVersion, kSchemaVersion);
        QCOMPARE(r.source, v1);
        QCOMPARE(r.destination, dst);
        QCOMPARE(r.intervalsMigrated, std::int64_t(rec.kernels[0].intervals.size()));
        QCOMPARE(wstest::fileHash(v1), before);
        QCOMPARE(TraceStore::checkFile(v1).fileVersion, 1);
        QVERIFY(!std::filesystem::exists(v1 + "-wal"));
        compareWithFresh(dst, rec);
        // the copy is a normal current file: it can be appended to
        {
            auto st = TraceStore::openForWriting(dst);
            st.writeRun(rec);
        }
        QCOMPARE(TraceStore::openReadOnly(dst).runs().size(), std::size_t(2));
        // never overwrite an existing destination
        QVERIFY_THROWS_EXCEPTION(StoreError, TraceStore::migrateCopy(v1, dst));
    }

    void migrateInPlaceAfterConsent()
    {
        const RunRecord rec = record();
        const auto v1 = file("old3.wstrace");
        makeVersion1(v1, rec);
        const MigrationResult r = TraceStore::migrateInPlace(v1);
        QCOMPARE(r.destination, v1);
        QCOMPARE(TraceStore::checkFile(v1).fileVersion, kSchemaVersion);
        compareWithFresh(v1, rec);
    }

    void brokenOldFileIsRefusedAndCopyRemoved()
    {
        const auto v1 = file("old4.wstrace");
        makeVersion1(v1, record());
        wstest::rawExec(v1, "UPDATE intervals SET warp_id = 99999 WHERE id = 5");
        const auto dst = file("old4.migrated.wstrace");
        try {
            TraceStore::migrateCopy(v1, dst);
            QFAIL("migrated a broken file");
        } catch (const StoreError& e) {
            QVERIFY2(e.problem().find("missing warp 99999") != std::string::npos, e.what());
        }
        QVERIFY(!std::filesystem::exists(dst));
        const auto v1b = file("old5.wstrace");
        makeVersion1(v1b, record());
        wstest::rawExec(v1b, "UPDATE intervals SET duration_ns = -3 WHERE id = 7");
        QVERIFY_THROWS_EXCEPTION(StoreError, TraceStore::migrateInPlace(v1b));
        QCOMPARE(TraceStore::checkFile(v1b).fileVersion, 1);  // rolled back, still version 1
    }

    void damagedOldFile()
    {
        const auto v1 = file("old6.wstrace");
        makeVersion1(v1, record());
        wstest::rawExec(v1, "DROP TABLE intervals");
        QVERIFY_THROWS_EXCEPTION(StoreError, TraceStore::checkFile(v1));
        try {
            TraceStore::openReadOnly(v1);
            QFAIL("opened");
        } catch (const NeedsMigrationError&) {
            QFAIL("a damaged old file is not migratable");
        } catch (const StoreError& e) {
            QVERIFY2(e.problem().find("table 'intervals' missing") != std::string::npos, e.what());
        }
    }

    // A real version-1 file (tests/core/fixtures/schema-v1.wstrace, made once and kept): detected,
    // migrated on a copy that holds exactly what was recorded, the source left byte-identical.
    void realVersion1Fixture()
    {
        const auto src = fixture("schema-v1.wstrace");
        QVERIFY2(std::filesystem::exists(src), src.c_str());
        QCOMPARE(wstest::fileHash(src).toHex(),
                 QByteArray("b0d1ca2a2f8b8c466211edb08be0195cec8f9d2c3d32b5b91a8ebf2e40fdc8cd"));  // the kept file
        const auto v1 = file("fixture-v1.wstrace");  // work on a copy: a bug must not damage the fixture
        std::filesystem::copy_file(src, v1);
        const QByteArray before = wstest::fileHash(v1);
        const FileCheck c = TraceStore::checkFile(v1);
        QCOMPARE(c.fileVersion, 1);
        QVERIFY(c.needsMigration);
        QVERIFY_THROWS_EXCEPTION(NeedsMigrationError, TraceStore::openReadOnly(v1));
        QVERIFY_THROWS_EXCEPTION(NeedsMigrationError, TraceStore::openForWriting(v1));
        QCOMPARE(wstest::fileHash(v1), before);
        const auto dst = file("fixture-v1.migrated.wstrace");
        const MigrationResult r = TraceStore::migrateCopy(v1, dst);
        QCOMPARE(r.fromVersion, 1);
        QCOMPARE(r.toVersion, kSchemaVersion);
        QCOMPARE(r.intervalsMigrated, std::int64_t(688));
        QCOMPARE(wstest::fileHash(v1), before);
        for (const char* side : {"-wal", "-shm", "-journal"})
            QVERIFY2(!std::filesystem::exists(v1 + side), side);
        QCOMPARE(TraceStore::checkFile(dst).fileVersion, kSchemaVersion);
        auto st = TraceStore::openReadOnly(dst);
        QCOMPARE(st.schemaVersion(), kSchemaVersion);
        compareWithFixtureRecord(contentsOf(st));
        // run and kernel rows survive as they were
        const auto runs = st.runs();
        QCOMPARE(runs[0].variant, std::string("warp_specialized"));
        QCOMPARE(runs[1].variant, std::string("sync"));
        QVERIFY(runs[0].synthetic);
        bool sawMetric = false;
        for (const Metric& m : st.metrics(runs[0].id))
            sawMetric |= m.name == "fixture_metric" && m.value == 42.5 && m.kernelId == st.kernels(runs[0].id)[0].id;
        QVERIFY(sawMetric);
        // the migrated copy is a normal current file
        {
            auto w = TraceStore::openForWriting(dst);
            w.writeRun(record());
        }
        QCOMPARE(TraceStore::openReadOnly(dst).runs().size(), std::size_t(3));
    }

    // The current-version fixture (tests/core/fixtures/schema-v2.wstrace, made by the writer of
    // schema 2) holds the same data: opened directly while 2 is current, migrated once it is not.
    void version2Fixture()
    {
        const auto src = fixture("schema-v2.wstrace");
        QVERIFY2(std::filesystem::exists(src), src.c_str());
        QCOMPARE(wstest::fileHash(src).toHex(),
                 QByteArray("5c4b33544b5c6be3dd31a910450dbdeffe7c1e329929dc7d68ec922c89dad857"));
        const auto v2 = file("fixture-v2.wstrace");
        std::filesystem::copy_file(src, v2);
        const QByteArray before = wstest::fileHash(v2);
        const FileCheck c = TraceStore::checkFile(v2);
        QCOMPARE(c.fileVersion, 2);
        std::string current = v2;
        if (kSchemaVersion == 2) {
            QVERIFY(!c.needsMigration);
        } else {
            QVERIFY(c.needsMigration);
            current = file("fixture-v2.migrated.wstrace");
            const MigrationResult r = TraceStore::migrateCopy(v2, current);
            QCOMPARE(r.fromVersion, 2);
            // every chunk recompressed (zstd), none left raw
            QVERIFY(r.intervalsMigrated > 0);
            QCOMPARE(r.intervalsMigrated, wstest::rawQueryInt(v2, "SELECT SUM(count) FROM interval_chunks"));
            QCOMPARE(wstest::rawQueryInt(current, "SELECT COUNT(*) FROM interval_chunks WHERE codec <> 1"), 0);
        }
        compareWithFixtureRecord(contentsOf(TraceStore::openReadOnly(current)));
        QCOMPARE(wstest::fileHash(v2), before);
        // schema 3: the migrated runs are ladder runs with the program tables present and empty
        auto st = TraceStore::openReadOnly(current);
        QCOMPARE(st.schemaVersion(), kSchemaVersion);
        for (const RunInfo& r : st.runs()) {
            QCOMPARE(int(r.kind), int(RunKind::Ladder));
            QCOMPARE(r.exitCode, -1);
            const ProgramTrace p = st.loadProgram(r.id);
            QCOMPARE(p.kernels.size(), st.kernels(r.id).size());
            QVERIFY(p.nvtx.empty());
            QVERIFY(p.apiSpans.empty());
            for (const KernelLaunch& k : p.kernels)
                QCOMPARE(k.launchIndex, 0);
        }
        {  // and it can hold a program run
            auto w = TraceStore::openForWriting(current);
            RunRecord prog;
            prog.info.kind = RunKind::Program;
            prog.nvtx.push_back(NvtxRange{});
            prog.apiSpans.push_back(ApiSpan{});
            prog.streams.push_back(StreamInfo{});
            const RowId id = w.writeRun(prog);
            QCOMPARE(TraceStore::openReadOnly(current).loadProgram(id).nvtx.size(), std::size_t(1));
        }
    }

    // The version-3 fixture (tests/core/fixtures/schema-v3.wstrace, made by the writer of schema 3):
    // migrated to 4 on a copy, loads packed per CTA, the `loads` table gone, the source untouched.
    void version3Fixture()
    {
        const auto src = fixture("schema-v3.wstrace");
        QVERIFY2(std::filesystem::exists(src), src.c_str());
        QCOMPARE(wstest::fileHash(src).toHex(),
                 QByteArray("76ae8d30a728b5501effa522a811f7c459a3ea38e72986f6edd7b0cc881bf880"));
        const auto v3 = file("fixture-v3.wstrace");
        std::filesystem::copy_file(src, v3);
        const QByteArray before = wstest::fileHash(v3);
        const FileCheck c = TraceStore::checkFile(v3);
        QCOMPARE(c.fileVersion, 3);
        QVERIFY(c.needsMigration);
        QVERIFY_THROWS_EXCEPTION(NeedsMigrationError, TraceStore::openReadOnly(v3));
        const auto dst = file("fixture-v3.migrated.wstrace");
        const MigrationResult r = TraceStore::migrateCopy(v3, dst);
        QCOMPARE(r.fromVersion, 3);
        QCOMPARE(r.toVersion, kSchemaVersion);
        QCOMPARE(wstest::fileHash(v3), before);
        compareWithFixtureRecord(contentsOf(TraceStore::openReadOnly(dst)));
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'loads'"), 0LL);
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT SUM(count) FROM load_chunks"), 32LL);
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM load_chunks"),
                 wstest::rawQueryInt(v3, "SELECT COUNT(DISTINCT cta_id) FROM loads"));
        // every load as it was, row for row
        auto st = TraceStore::openReadOnly(dst);
        for (const RunInfo& run : st.runs())
            for (const KernelLaunch& k : st.kernels(run.id)) {
                const KernelTrace t = st.loadKernel(k.id);
                for (const LoadTransfer& x : t.loads) {
                    const std::string q = "SELECT COUNT(*) FROM loads WHERE kernel_id = " + std::to_string(k.id)
                        + " AND cta_id = " + std::to_string(t.ctas[std::size_t(x.ctaId)].id) + " AND slot = "
                        + std::to_string(x.slot) + " AND kstep = " + std::to_string(x.kstep) + " AND issue_ns = "
                        + std::to_string(x.issue) + " AND ready_ns = " + std::to_string(x.ready) + " AND bytes = "
                        + std::to_string(x.bytes);
                    QVERIFY2(wstest::rawQueryInt(v3, q) >= 1, q.c_str());
                }
            }
        // the new tables are there and empty; the file takes phase names and sources
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM phase_names"), 0LL);
        {
            auto w = TraceStore::openForWriting(dst);
            w.writeSources(1, {{"a.cu", "", "text"}});
        }
        QCOMPARE(TraceStore::openReadOnly(dst).loadSources(1).size(), std::size_t(1));
    }

    // The version-4 fixture (made by the writer of schema 4, kept for the migrations to come): opened directly
    // while 4 is current, holding what the generator wrote.
    void version4Fixture()
    {
        const auto src = fixture("schema-v4.wstrace");
        QVERIFY2(std::filesystem::exists(src), src.c_str());
        QCOMPARE(wstest::fileHash(src).toHex(),
                 QByteArray("244b9e1814b43caac18b3e767772272ca1350176411fc14472cbe5937930339f"));
        const auto v4 = file("fixture-v4.wstrace");
        std::filesystem::copy_file(src, v4);
        const FileCheck c = TraceStore::checkFile(v4);
        QCOMPARE(c.fileVersion, 4);
        std::string current = v4;
        if (kSchemaVersion == 4) {
            QVERIFY(!c.needsMigration);
        } else {
            QVERIFY(c.needsMigration);
            current = file("fixture-v4.migrated.wstrace");
            QCOMPARE(TraceStore::migrateCopy(v4, current).fromVersion, 4);
        }
        compareWithFixtureRecord(contentsOf(TraceStore::openReadOnly(current)));
        QCOMPARE(wstest::rawQueryInt(v4, "SELECT SUM(count) FROM load_chunks"), 32LL);
    }

    // The version-4 program fixture (tests/core/fixtures/schema-v4-program.wstrace, written by the RunWriter of
    // schema 4): migrateCopy to 5 interns the names; api_spans and nvtx_ranges, views now, give exactly the rows
    // the schema-4 tables held (every column, same ids); TraceStore reads the same; the original is untouched.
    void version4ProgramFixture()
    {
        const auto src = fixture("schema-v4-program.wstrace");
        QVERIFY2(std::filesystem::exists(src), src.c_str());
        QCOMPARE(wstest::fileHash(src).toHex(),
                 QByteArray("99f22572c81c6df1975bfd9ca4a03b431b02fc4bb74bae70eb4dad469377b284"));
        const auto v4 = file("fixture-v4-program.wstrace");
        std::filesystem::copy_file(src, v4);
        QCOMPARE(TraceStore::checkFile(v4).fileVersion, 4);
        const QByteArray before = wstest::fileHash(v4);
        const auto dst = file("fixture-v4-program.migrated.wstrace");
        const MigrationResult r = TraceStore::migrateCopy(v4, dst);
        QCOMPARE(r.fromVersion, 4);
        QCOMPARE(r.toVersion, kSchemaVersion);
        QCOMPARE(wstest::fileHash(v4), before);
        auto text = [](const std::string& path, const char* sql) {
            sqlite3* db = nullptr;
            std::string out = "(error)";
            if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
                sqlite3_stmt* st = nullptr;
                if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
                    out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
                sqlite3_finalize(st);
            }
            sqlite3_close(db);
            return out;
        };
        const char* apiRows = "SELECT group_concat(x, ';') FROM (SELECT id || '|' || run_id || '|' || name || '|' || cbid "
                              "|| '|' || driver || '|' || start_ns || '|' || end_ns || '|' || thread_id || '|' || "
                              "correlation_id || '|' || result AS x FROM api_spans ORDER BY id)";
        const char* nvtxRows = "SELECT group_concat(x, ';') FROM (SELECT id || '|' || run_id || '|' || kind || '|' || "
                               "domain || '|' || name || '|' || start_ns || '|' || end_ns || '|' || thread_id || '|' || "
                               "depth || '|' || color || '|' || category || '|' || closed AS x FROM nvtx_ranges ORDER BY id)";
        QCOMPARE(text(dst, apiRows), text(v4, apiRows));
        QCOMPARE(text(dst, nvtxRows), text(v4, nvtxRows));
        QVERIFY(text(v4, apiRows).find("|cudaStreamGetCaptureInfo|") != std::string::npos);
        // each text once; the run's id ranges found; no per-row index left behind
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM names"), 9LL);
        QCOMPARE(text(dst, "SELECT api_first_id || '..' || api_last_id || ' ' || nvtx_first_id || '..' || nvtx_last_id "
                           "FROM runs WHERE id = 1"),
                 std::string("1..40 1..15"));
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('api_spans_run', "
                                          "'nvtx_ranges_run')"),
                 0LL);
        {
            auto a = TraceStore::openReadOnly(dst);
            const ProgramTrace p = a.loadProgram(1);
            QCOMPARE(p.kernels.size(), std::size_t(12));
            QCOMPARE(p.apiSpans.size(), std::size_t(40));
            QCOMPARE(p.nvtx.size(), std::size_t(15));
            QCOMPARE(p.apiSpans[13].result, 700);
            QCOMPARE(p.apiSpans[7].name, std::string(""));
            QCOMPARE(p.apiSpans[5].name, std::string("cudaLaunchKernel"));
            QCOMPARE(p.nvtx[4].closed, false);
            QCOMPARE(p.nvtx[1].domain, std::string("torch"));
            QCOMPARE(p.nvtx[1].name, std::string("step"));
            QCOMPARE(int(p.nvtx[2].kind), int(NvtxKind::Mark));
        }
        {  // the migrated file takes a new program run, which finds the names already there
            auto w = TraceStore::openForWriting(dst);
            RunRecord prog;
            prog.info.kind = RunKind::Program;
            ApiSpan a;
            a.name = "cudaStreamGetCaptureInfo";
            prog.apiSpans = {a};
            NvtxRange n;
            n.domain = "torch";
            n.name = "aten::addmm";
            prog.nvtx = {n};
            const RowId id = w.writeRun(prog);
            QCOMPARE(w.apiSpans(id).size(), std::size_t(1));
        }
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM names"), 9LL);
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM api_spans"), 41LL);
    }

    // Per-CTA / per-warpgroup metric rows of a version-3 file move into metric_chunks and read back the same.
    void version3MetricsPacked()
    {
        const auto v3 = file("fixture-v3-metrics.wstrace");
        std::filesystem::copy_file(fixture("schema-v3.wstrace"), v3);
        wstest::rawExec(v3, "INSERT INTO metrics(run_id, kernel_id, scope, name, value, unit) VALUES "
                            "(1, 1, 'cta:0', 'compute_ns', 10.5, 'ns'), (1, 1, 'cta:1', 'compute_ns', 11, 'ns'), "
                            "(1, 1, 'cta:1', 'bubble_share', NULL, 'ratio'), (1, 1, 'wg:1', 'compute_ns', 7, 'ns'), "
                            "(1, 1, 'cta:01', 'odd', 1, ''), (1, 0, 'cta:3', 'run_wide', 2, 'count')");
        const auto before = TraceStore::checkFile(v3);
        QCOMPARE(before.fileVersion, 3);
        const auto dst = file("fixture-v3-metrics.migrated.wstrace");
        TraceStore::migrateCopy(v3, dst);
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM metrics WHERE scope LIKE 'cta:%' OR scope LIKE 'wg:%'"), 1LL);
        // the five canonical rows above and the fixture's own cta:1 metric of run 2
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT SUM(count) FROM metric_chunks"), 6LL);
        auto st = TraceStore::openReadOnly(dst);
        std::map<std::string, Metric> got;
        for (const Metric& m : st.metrics(1))
            got[std::to_string(m.kernelId) + " " + m.scope + " " + m.name] = m;
        QCOMPARE(got.at("1 cta:0 compute_ns").value, 10.5);
        QCOMPARE(got.at("1 cta:1 compute_ns").value, 11.0);
        QVERIFY(std::isnan(got.at("1 cta:1 bubble_share").value));
        QCOMPARE(got.at("1 cta:1 bubble_share").unit, std::string("ratio"));
        QCOMPARE(got.at("1 wg:1 compute_ns").value, 7.0);
        QCOMPARE(got.at("1 cta:01 odd").value, 1.0);
        QCOMPARE(got.at("0 cta:3 run_wide").value, 2.0);
        QCOMPARE(got.size(), std::size_t(wstest::rawQueryInt(v3, "SELECT COUNT(*) FROM metrics WHERE run_id = 1")));
    }

    void brokenVersion3Loads_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("message");
        QTest::newRow("ready before issue") << "UPDATE loads SET ready_ns = issue_ns - 1 WHERE id = 3"
                                            << "load 3 is ready before it was issued";
        QTest::newRow("missing CTA") << "UPDATE loads SET cta_id = 4242 WHERE id = 5" << "load 5 points at missing CTA 4242";
    }
    void brokenVersion3Loads()
    {
        QFETCH(QString, sql);
        QFETCH(QString, message);
        const auto v3 = file("fixture-v3-broken.wstrace");
        std::filesystem::remove(v3);
        std::filesystem::copy_file(fixture("schema-v3.wstrace"), v3);
        wstest::rawExec(v3, sql.toStdString());
        const auto dst = file("fixture-v3-broken.migrated.wstrace");
        try {
            TraceStore::migrateCopy(v3, dst);
            QFAIL("migrated a broken file");
        } catch (const StoreError& e) {
            QVERIFY2(e.problem().find(message.toStdString()) != std::string::npos, e.what());
        }
        QVERIFY(!std::filesystem::exists(dst));
        QVERIFY_THROWS_EXCEPTION(StoreError, TraceStore::migrateInPlace(v3));
        QCOMPARE(TraceStore::checkFile(v3).fileVersion, 3);  // rolled back
    }

    // WARPSTAGE_CHUNK_CODEC=raw (docs/schema.md): the migration keeps raw chunks, flagged as raw, and they read the same.
    void version2FixtureRawChunks()
    {
        const auto v2 = file("fixture-v2-raw.wstrace");
        std::filesystem::copy_file(fixture("schema-v2.wstrace"), v2);
        const auto dst = file("fixture-v2-raw.migrated.wstrace");
        qputenv("WARPSTAGE_CHUNK_CODEC", "raw");
        const MigrationResult r = TraceStore::migrateCopy(v2, dst);
        qunsetenv("WARPSTAGE_CHUNK_CODEC");
        QVERIFY(r.intervalsMigrated > 0);
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM interval_chunks WHERE codec <> 0"), 0);
        compareWithFixtureRecord(contentsOf(TraceStore::openReadOnly(dst)));
    }

    // 5 -> 6 adds the empty table scope_spans: a schema-5 file (a current one with the table dropped by plain
    // SQL) needs migration, migrates on a copy (original untouched), reads the same, and the copy takes runs with
    // scopes.
    void version5To6AddsScopeSpans()
    {
        const auto v5 = file("v5.wstrace");
        const RunRecord rec = record();
        {
            auto st = TraceStore::openForWriting(v5);
            st.writeRun(rec);
        }
        wstest::rawExec(v5, "BEGIN; DROP TABLE scope_spans; PRAGMA user_version = 5; COMMIT; VACUUM;");
        const FileCheck c = TraceStore::checkFile(v5);
        QCOMPARE(c.fileVersion, 5);
        QVERIFY(c.needsMigration);
        const QByteArray before = wstest::fileHash(v5);
        const auto dst = file("v5.migrated.wstrace");
        const MigrationResult r = TraceStore::migrateCopy(v5, dst);
        QCOMPARE(r.fromVersion, 5);
        QCOMPARE(r.toVersion, 6);
        QCOMPARE(wstest::fileHash(v5), before);
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'scope_spans'"), 1LL);
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'scope_spans_kernel'"), 1LL);
        QCOMPARE(wstest::rawQueryInt(dst, "SELECT COUNT(*) FROM scope_spans"), 0LL);
        compareWithFresh(dst, rec);
        RowId runId = 0;
        {
            auto st = TraceStore::openForWriting(dst);
            RunRecord withScopes = rec;
            withScopes.kernels[0].scopes = {{0, 0, "kernel", withScopes.kernels[0].launch.start,
                                             withScopes.kernels[0].launch.end}};
            runId = st.writeRun(withScopes);
        }
        auto st = TraceStore::openReadOnly(dst);
        QVERIFY(st.loadKernel(st.kernels(st.runs().front().id)[0].id).scopes.empty());
        const KernelTrace t = st.loadKernel(st.kernels(runId)[0].id);
        QCOMPARE(t.scopes.size(), std::size_t(1));
        QCOMPARE(t.scopes[0].name, std::string("kernel"));
    }

    void newerVersionRefused()
    {
        const auto p = file("newer.wstrace");
        {
            auto st = TraceStore::openForWriting(p);
            st.writeRun(record());
        }
        wstest::rawExec(p, "PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
        const QByteArray before = wstest::fileHash(p);
        for (int i = 0; i < 3; ++i) {
            try {
                if (i == 0)
                    TraceStore::openReadOnly(p);
                else if (i == 1)
                    TraceStore::openForWriting(p);
                else
                    TraceStore::migrateInPlace(p);
                QFAIL("opened a newer file");
            } catch (const NeedsMigrationError&) {
                QFAIL("newer is not 'needs migration'");
            } catch (const StoreError& e) {
                QVERIFY2(e.problem().find("newer Warpstage") != std::string::npos, e.what());
            }
        }
        QCOMPARE(wstest::fileHash(p), before);
    }
};

QTEST_GUILESS_MAIN(TestMigration)
#include "tst_migration.moc"
