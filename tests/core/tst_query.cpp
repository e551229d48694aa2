// SQL over traces (warpstage/query.h): the virtual tables against TraceStore::loadKernel (counts, sums, rows),
// push-down against a full scan, the pruning itself (a damaged chunk that cannot match is never read), the
// runner's formats and errors, and the loadable extension.
#include "warpstage/query.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include "testutil.h"

#include <sqlite3.h>

#include <QTemporaryDir>
#include <QtTest>

#include <QRegularExpression>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

using Row = std::vector<std::string>;
using Rows = std::vector<Row>;

namespace {

// A read-only connection with the virtual tables (through registerQueryTables, or the extension).
struct Conn {
    sqlite3* db = nullptr;
    explicit Conn(const std::string& path, bool viaExtension = false)
    {
        if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
            qFatal("cannot open %s", path.c_str());
        if (!viaExtension) {
            if (ws::registerQueryTables(db) != SQLITE_OK)
                qFatal("registerQueryTables failed");
        }
    }
    ~Conn() { sqlite3_close(db); }
    // All rows as text ("NULL" for NULL); error: one row {"ERROR", message}.
    Rows rows(const std::string& sql) const
    {
        Rows out;
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
            return {{"ERROR", sqlite3_errmsg(db)}};
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            Row r;
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                const auto* t = sqlite3_column_text(st, c);
                r.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
            }
            out.push_back(std::move(r));
        }
        if (rc != SQLITE_DONE)
            out = {{"ERROR", sqlite3_errmsg(db)}};
        sqlite3_finalize(st);
        return out;
    }
    std::string plan(const std::string& sql) const
    {
        std::string s;
        for (const Row& r : rows("EXPLAIN QUERY PLAN " + sql))
            s += r.back() + "\n";
        return s;
    }
};

std::string sorted(Rows r)
{
    std::sort(r.begin(), r.end());
    std::string s;
    for (const Row& x : r) {
        for (const auto& v : x)
            s += v + "|";
        s += "\n";
    }
    return s;
}

// Per kind: count and sum of durations, from loadKernel.
std::map<int, std::pair<long long, long long>> perKind(const ws::KernelTrace& t)
{
    std::map<int, std::pair<long long, long long>> m;
    for (const ws::Lane& l : t.lanes)
        for (std::size_t i = 0; i < l.size(); ++i) {
            auto& e = m[static_cast<int>(l.kind[i])];
            ++e.first;
            e.second += l.duration[i];
        }
    return m;
}

void comparePerKind(const Conn& c, const ws::TraceStore& store, ws::RowId kernel)
{
    const ws::KernelTrace t = store.loadKernel(kernel);
    const auto want = perKind(t);
    const std::string k = std::to_string(kernel);
    // grouped by the virtual table (kind by kind), and by SQLite's sorter (kind + 0)
    for (const char* q : {"SELECT kind, count(*), sum(dur_ns) FROM intervals WHERE kernel_id = %1 GROUP BY kind",
                          "SELECT kind + 0, count(*), sum(dur_ns) FROM intervals WHERE kernel_id = %1 GROUP BY 1",
                          "SELECT kind, count(*), sum(dur_ns) FROM intervals WHERE kernel_id = %1 ORDER BY kind"}) {
        std::string sql = q;
        sql.replace(sql.find("%1"), 2, k);
        const Rows got = c.rows(sql);
        if (sql.find("ORDER BY") != std::string::npos)
            continue;  // an aggregate without GROUP BY: one row, checked below
        QCOMPARE(got.size(), want.size());
        std::size_t i = 0;
        for (const auto& [kind, cs] : want) {
            QCOMPARE(got[i][0], std::to_string(kind));
            QCOMPARE(got[i][1], std::to_string(cs.first));
            QCOMPARE(got[i][2], std::to_string(cs.second));
            ++i;
        }
    }
    // total count and the per-name grouping
    long long n = 0;
    for (const auto& [kind, cs] : want)
        n += cs.first;
    QCOMPARE(c.rows("SELECT count(*) FROM intervals WHERE kernel_id = " + k)[0][0], std::to_string(n));
    const Rows byName = c.rows("SELECT kind_name, count(*) FROM intervals WHERE kernel_id = " + k + " GROUP BY kind_name");
    std::map<std::string, long long> names;
    for (const auto& [kind, cs] : want)
        names[std::string(ws::intervalKindName(static_cast<ws::IntervalKind>(kind)))] += cs.first;
    QCOMPARE(byName.size(), names.size());
    std::size_t i = 0;
    for (const auto& [name, cnt] : names) {
        QCOMPARE(byName[i][0], name);
        QCOMPARE(byName[i][1], std::to_string(cnt));
        ++i;
    }
    // loads: count, sums of latency and bytes
    long long lat = 0, bytes = 0;
    for (const ws::LoadTransfer& l : t.loads) {
        lat += l.ready - l.issue;
        bytes += l.bytes;
    }
    const Rows loads = c.rows("SELECT count(*), coalesce(sum(latency_ns), 0), coalesce(sum(bytes), 0) FROM loads WHERE kernel_id = " + k);
    QCOMPARE(loads[0][0], std::to_string(t.loads.size()));
    QCOMPARE(loads[0][1], std::to_string(lat));
    QCOMPARE(loads[0][2], std::to_string(bytes));
}

std::string makeSynthetic(const QTemporaryDir& dir, long long target = 0)
{
    const std::string path = dir.filePath(QStringLiteral("synthetic.wstrace")).toStdString();
    auto store = ws::TraceStore::openForWriting(path);
    int seed = 1;
    for (auto pat : {ws::SyntheticPattern::WarpSpecialized, ws::SyntheticPattern::Pingpong, ws::SyntheticPattern::Multistage}) {
        ws::SyntheticParams p;
        p.pattern = pat;
        p.ctas = 2;
        p.smCount = 2;
        p.kernelStart = 1'000'000 + (seed - 1) * 1'000'000'000LL;  // the runs follow each other in time
        p.kstepsPerTile = 24;
        p.targetIntervals = target;
        p.seed = static_cast<std::uint64_t>(seed++);
        store.writeRun(ws::generateSynthetic(p));
    }
    return path;
}

// The bundled sample at the store's current schema: the build migrates a copy when the committed file is older.
std::string samplePath() { return std::string(WARPSTAGE_SAMPLES_DIR) + "/ladder-h200-4096.wstrace"; }

std::vector<ws::RowId> tracedKernels(const ws::TraceStore& store)
{
    std::vector<ws::RowId> out;
    for (const auto& r : store.runs())
        for (const auto& k : store.kernelSummaries(r.id))
            if (k.intervalCount > 0)
                out.push_back(k.launch.id);
    return out;
}

std::string query(const std::string& path, const std::string& sql, ws::QueryFormat f)
{
    std::ostringstream out;
    ws::runQuery(path, sql, f, out);
    return out.str();
}

}  // namespace

class TestQuery : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::string m_synthetic;  // three runs, several chunks per warp

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // > 8192 intervals per busy warp: two chunks each, so time bounds meet chunk edges
        m_synthetic = makeSynthetic(m_dir, 250'000);
    }

    void syntheticMatchesLoadKernel()
    {
        const auto store = ws::TraceStore::openReadOnly(m_synthetic);
        const Conn c(m_synthetic);
        const auto kernels = tracedKernels(store);
        QCOMPARE(kernels.size(), std::size_t(3));
        for (ws::RowId k : kernels)
            comparePerKind(c, store, k);
    }

    void rowsMatchLoadKernel()
    {
        // Every row of one launch, with its warp's and CTA's columns, against the decoded arrays.
        const auto store = ws::TraceStore::openReadOnly(m_synthetic);
        const ws::RowId k = tracedKernels(store)[1];
        const ws::KernelTrace t = store.loadKernel(k);
        Rows want;
        for (const ws::Lane& l : t.lanes) {
            const ws::Cta& cta = t.ctas[static_cast<std::size_t>(l.ctaIndex)];
            for (std::size_t i = 0; i < l.size(); ++i)
                want.push_back({std::to_string(l.warpId), std::to_string(cta.id), std::to_string(cta.smId),
                                std::to_string(cta.blockLinear), std::to_string(l.warpIndex), std::to_string(l.warpgroup),
                                std::to_string(static_cast<int>(l.kind[i])), std::to_string(l.start[i]),
                                std::to_string(l.end(i)), std::to_string(l.duration[i]), std::to_string(l.kstep[i]),
                                std::to_string(l.slot[i])});
        }
        const Conn c(m_synthetic);
        const Rows got = c.rows("SELECT warp_id, cta_id, sm, cta, warp, warpgroup, kind, start_ns, end_ns, dur_ns, kstep, slot "
                                "FROM intervals WHERE kernel_id = " + std::to_string(k));
        QCOMPARE(got.size(), want.size());
        QVERIFY(sorted(got) == sorted(want));
        // loads, row by row
        Rows wantLoads;
        for (const ws::LoadTransfer& l : t.loads) {
            const ws::Cta& cta = t.ctas[static_cast<std::size_t>(l.ctaId)];
            wantLoads.push_back({std::to_string(cta.id), std::to_string(cta.blockLinear), std::to_string(l.slot),
                                 std::to_string(l.kstep), std::to_string(l.issue), std::to_string(l.ready),
                                 std::to_string(l.bytes)});
        }
        QVERIFY(!wantLoads.empty());
        const Rows gotLoads = c.rows("SELECT cta_id, cta, slot, kstep, issue_ns, ready_ns, bytes FROM loads WHERE kernel_id = "
                                     + std::to_string(k));
        QVERIFY(sorted(gotLoads) == sorted(wantLoads));
        // a role from the warps table
        QCOMPARE(c.rows("SELECT count(DISTINCT role) > 1 FROM intervals WHERE kernel_id = " + std::to_string(k))[0][0],
                 std::string("1"));
    }

    void sampleMatchesLoadKernel()
    {
        const std::string path = samplePath();
        if (!std::filesystem::exists(path))
            QFAIL(qPrintable(QString::fromStdString("bundled sample missing: " + path)));
        const auto store = ws::TraceStore::openReadOnly(path);
        const Conn c(path);
        const auto kernels = tracedKernels(store);
        QCOMPARE(kernels.size(), std::size_t(6));
        for (ws::RowId k : kernels)
            comparePerKind(c, store, k);
        // chunk_metrics = the packed cta:N / wg:N metrics of TraceStore::metrics
        const ws::RowId run = store.runs().front().id;
        long long packed = 0;
        double sum = 0;
        for (const ws::Metric& m : store.metrics(run))
            if (m.scope.rfind("cta:", 0) == 0 || m.scope.rfind("wg:", 0) == 0) {
                ++packed;
                if (!std::isnan(m.value) && m.name == "bubble_ns")
                    sum += m.value;
            }
        QVERIFY(packed > 0);
        QCOMPARE(c.rows("SELECT count(*) FROM chunk_metrics WHERE run_id = " + std::to_string(run))[0][0], std::to_string(packed));
        QCOMPARE(std::stod(c.rows("SELECT total(value) FROM chunk_metrics WHERE name = 'bubble_ns' AND run_id = "
                                  + std::to_string(run))[0][0]),
                 sum);
    }

    void pushDownSameRowsAsFullScan_data()
    {
        QTest::addColumn<QString>("table");
        QTest::addColumn<QString>("where");  // %K: a launch, %W: a warp, %C: a CTA, %T0/%T1: chunk edges
        for (const char* w : {"kernel_id = %K", "kernel_id IN (%K, %K2)", "warp_id = %W", "cta_id = %C", "cta = 1",
                              "warp = 4", "kernel_id = %K AND cta = 1 AND warp = 4", "start_ns >= %T0",
                              "start_ns > %T0", "start_ns <= %T0", "start_ns < %T0", "start_ns >= %T1",
                              "start_ns <= %T1", "start_ns > %T1", "start_ns < %T1",
                              "kernel_id = %K AND start_ns BETWEEN %T0 AND %T1", "start_ns >= %T0 + 0.5",
                              "start_ns < %T1 - 0.5", "start_ns > NULL", "start_ns < 'abc'",
                              "warp_id = %W AND start_ns >= %T0 - 2000 AND start_ns < %T1 + 2000"})
            QTest::newRow(w) << "intervals" << w;
        for (const char* w : {"kernel_id = %K", "cta_id = %LC", "cta = 1", "issue_ns >= %L0", "issue_ns > %L0",
                              "issue_ns <= %L0", "issue_ns < %L1", "kernel_id = %K AND issue_ns BETWEEN %L0 AND %L1"})
            QTest::newRow((std::string("loads: ") + w).c_str()) << "loads" << w;
    }

    void pushDownSameRowsAsFullScan()
    {
        QFETCH(QString, table);
        QFETCH(QString, where);
        const Conn c(m_synthetic);
        // Values at chunk edges: the first start of a warp's second chunk, the last end of a first chunk
        auto one = [&](const std::string& sql) { return QString::fromStdString(c.rows(sql).at(0).at(0)); };
        const QString k = one("SELECT min(kernel_id) FROM interval_chunks WHERE chunk_index = 1");
        const QString k2 = one("SELECT max(kernel_id) FROM interval_chunks");
        const QString w = one("SELECT min(warp_id) FROM interval_chunks WHERE chunk_index = 1 AND kernel_id = " + k.toStdString());
        const QString t0 = one("SELECT first_start_ns FROM interval_chunks WHERE chunk_index = 1 AND warp_id = " + w.toStdString());
        const QString t1 = one("SELECT last_end_ns FROM interval_chunks WHERE chunk_index = 0 AND warp_id = " + w.toStdString());
        const QString cta = one("SELECT cta_id FROM warps WHERE id = " + w.toStdString());
        const QString lc = one("SELECT min(cta_id) FROM load_chunks WHERE kernel_id = " + k.toStdString());
        const QString l0 = one("SELECT first_issue_ns FROM load_chunks WHERE cta_id = " + lc.toStdString());
        const QString l1 = one("SELECT (first_issue_ns + last_ready_ns) / 2 FROM load_chunks WHERE cta_id = " + lc.toStdString());
        QString cond = where;
        cond.replace(QLatin1String("%K2"), k2).replace(QLatin1String("%K"), k).replace(QLatin1String("%W"), w)
            .replace(QLatin1String("%T0"), t0).replace(QLatin1String("%T1"), t1).replace(QLatin1String("%LC"), lc)
            .replace(QLatin1String("%C"), cta).replace(QLatin1String("%L0"), l0).replace(QLatin1String("%L1"), l1);
        // The same condition with every column turned into an expression ("+ 0"): SQLite cannot push it down.
        QString full = cond;
        for (const char* col : {"kernel_id", "warp_id", "cta_id", "start_ns", "issue_ns"})
            full.replace(QRegularExpression(QStringLiteral("\\b%1\\b").arg(QLatin1String(col))), QStringLiteral("(%1 + 0)").arg(QLatin1String(col)));
        full.replace(QRegularExpression(QStringLiteral("^cta = |\\bAND cta = ")), QStringLiteral(" AND (cta + 0) = "))
            .replace(QRegularExpression(QStringLiteral("(^| AND )warp = ")), QStringLiteral(" AND (warp + 0) = "));
        if (full.startsWith(QLatin1String(" AND ")))
            full = full.mid(5);
        // Order-independent fingerprint of the rows (the full rows are compared in rowsMatchLoadKernel).
        const std::string cols = table == QLatin1String("intervals")
            ? "count(*), total(kernel_id), total(warp_id * 31 + kind), total(start_ns % 1000003), total(dur_ns), "
              "total(slot * 7 + kstep), total((start_ns % 1009) * warp_id), total(cta * 13 + warp + sm)"
            : "count(*), total(kernel_id), total(cta_id * 31 + slot), total(issue_ns % 1000003), "
              "total(ready_ns % 1000033), total(kstep), total(bytes), total(cta + sm)";
        const std::string fast = "SELECT " + cols + " FROM " + table.toStdString() + " WHERE " + cond.toStdString();
        const std::string slow = "SELECT " + cols + " FROM " + table.toStdString() + " WHERE " + full.toStdString();
        const std::string fastPlan = c.plan(fast), slowPlan = c.plan(slow);
        QVERIFY2(fastPlan != slowPlan, qPrintable(QString::fromStdString(fastPlan + " | " + slow)));
        const Rows a = c.rows(fast), b = c.rows(slow);
        QVERIFY2(a.at(0).at(0) != "ERROR", a[0].back().c_str());
        QVERIFY2(b.at(0).at(0) != "ERROR", b[0].back().c_str());
        QCOMPARE(a, b);
        if (!where.contains(QLatin1String("NULL")) && !where.contains(QLatin1String("'abc'")) && !where.startsWith(QLatin1String("start_ns <")))
            QVERIFY2(a[0][0] != "0", qPrintable(QString::fromStdString(fast)));
    }

    void pushDownIsInThePlan()
    {
        const Conn c(m_synthetic);
        // idxNum: bit 0 launch, 1 warp_id, 2 cta_id, 3 cta, 4 warp, 5 lower time bound, 6 upper; 1024 grouped by kind
        auto has = [&](const std::string& sql, const char* what) {
            const std::string p = c.plan(sql);
            if (p.find(what) == std::string::npos)
                qWarning("plan of %s: %s", sql.c_str(), p.c_str());
            return p.find(what) != std::string::npos;
        };
        QVERIFY(has("SELECT * FROM intervals WHERE kernel_id = 1", "VIRTUAL TABLE INDEX 1:"));
        QVERIFY(has("SELECT * FROM intervals WHERE warp_id = 7 AND start_ns > 5 AND start_ns <= 9", "VIRTUAL TABLE INDEX 98:"));
        QVERIFY(has("SELECT * FROM intervals WHERE cta_id = 7 AND cta = 1 AND warp = 2", "VIRTUAL TABLE INDEX 28:"));
        QVERIFY(has("SELECT * FROM intervals WHERE kernel_id + 0 = 1", "VIRTUAL TABLE INDEX 0:"));
        // a rowid constraint is SQLite's to check (the rowid is the row's number in the scan)
        QVERIFY(has("SELECT * FROM loads WHERE rowid = 3", "VIRTUAL TABLE INDEX 0:"));
        QCOMPARE(c.rows("SELECT count(*) FROM loads WHERE rowid = 3")[0][0], std::string("1"));
        QCOMPARE(c.rows("SELECT count(*) FROM intervals WHERE kernel_id = 1 AND rowid < 10")[0][0], std::string("10"));
        QVERIFY(has("SELECT * FROM loads WHERE kernel_id = 1 AND cta_id = 2 AND issue_ns >= 0", "VIRTUAL TABLE INDEX 37:"));
        const std::string grouped = c.plan("SELECT kind, sum(dur_ns) FROM intervals WHERE kernel_id = 1 GROUP BY kind");
        QVERIFY2(grouped.find("TEMP B-TREE") == std::string::npos, grouped.c_str());  // no sorter
        QVERIFY(c.plan("SELECT kind, sum(dur_ns) FROM intervals WHERE kernel_id IN (1, 2) GROUP BY kind").find("TEMP B-TREE")
                != std::string::npos);  // two launches: SQLite groups
    }

    void prunedChunksAreNotDecoded()
    {
        // Damage every interval and load chunk of the last launch: queries that cannot match it never read them.
        const std::string path = m_dir.filePath(QStringLiteral("damaged.wstrace")).toStdString();
        std::filesystem::copy_file(m_synthetic, path, std::filesystem::copy_options::overwrite_existing);
        const Conn probe(m_synthetic);
        const std::string last = probe.rows("SELECT max(kernel_id) FROM interval_chunks")[0][0];
        const std::string first = probe.rows("SELECT min(kernel_id) FROM interval_chunks")[0][0];
        const std::string lastStart = probe.rows("SELECT min(first_start_ns) FROM interval_chunks WHERE kernel_id = " + last)[0][0];
        const std::string firstEnd = probe.rows("SELECT max(last_end_ns) FROM interval_chunks WHERE kernel_id = " + first)[0][0];
        const std::string loadStart = probe.rows("SELECT min(first_issue_ns) FROM load_chunks WHERE kernel_id = " + last)[0][0];
        QVERIFY(std::stoll(lastStart) > std::stoll(firstEnd));  // the runs follow each other in time
        wstest::rawExec(path, "UPDATE interval_chunks SET starts = x'28b52ffd00' WHERE kernel_id = " + last
                                  + "; UPDATE load_chunks SET data = x'28b52ffd00' WHERE kernel_id = " + last);
        const Conn c(path);
        QVERIFY(c.rows("SELECT count(*) FROM intervals WHERE kernel_id = " + first)[0][0] != "ERROR");
        QVERIFY(c.rows("SELECT count(*) FROM intervals WHERE start_ns <= " + firstEnd)[0][0] != "ERROR");
        QVERIFY(c.rows("SELECT count(*) FROM intervals WHERE warp_id = (SELECT min(id) FROM warps WHERE kernel_id = " + first + ")")[0][0] != "ERROR");
        QVERIFY(c.rows("SELECT count(*) FROM loads WHERE kernel_id = " + first)[0][0] != "ERROR");
        QVERIFY(c.rows("SELECT count(*) FROM loads WHERE issue_ns < " + std::to_string(std::stoll(loadStart) - 1))[0][0] != "ERROR");
        // ... and a query that reads them says which chunk is damaged
        const Rows bad = c.rows("SELECT count(*) FROM intervals WHERE kernel_id = " + last);
        QCOMPARE(bad[0][0], std::string("ERROR"));
        QVERIFY2(bad[0][1].find("intervals: ") == 0 && bad[0][1].find("interval chunk") != std::string::npos, bad[0][1].c_str());
        QCOMPARE(c.rows("SELECT count(*) FROM loads")[0][0], std::string("ERROR"));
    }

    void formats()
    {
        const std::string sql = "SELECT 1 AS a, 'x,\"y\"' AS b, NULL AS c, 2.5 AS d UNION ALL SELECT 10, 'z', 3, -1";
        QCOMPARE(query(m_synthetic, sql, ws::QueryFormat::Csv), std::string("a,b,c,d\n1,\"x,\"\"y\"\"\",,2.5\n10,z,3,-1\n"));
        QCOMPARE(query(m_synthetic, sql, ws::QueryFormat::Json),
                 std::string("[\n  {\"a\": 1, \"b\": \"x,\\\"y\\\"\", \"c\": null, \"d\": 2.5},\n"
                             "  {\"a\": 10, \"b\": \"z\", \"c\": 3, \"d\": -1}\n]\n"));
        QCOMPARE(query(m_synthetic, sql, ws::QueryFormat::Table),
                 std::string("a   b      c     d\n"
                             "--  -----  ----  ---\n"
                             " 1  x,\"y\"  NULL  2.5\n"
                             "10  z         3   -1\n"
                             "(2 rows)\n"));
        QCOMPARE(query(m_synthetic, "SELECT 1 AS a WHERE 0", ws::QueryFormat::Json), std::string("[]\n"));
        QCOMPARE(query(m_synthetic, "SELECT 1 AS a WHERE 0", ws::QueryFormat::Table), std::string("a\n-\n(0 rows)\n"));
        // the virtual tables are there, and a trailing ';' is fine
        std::ostringstream out;
        QVERIFY(ws::runQuery(m_synthetic, "SELECT count(*) FROM intervals; ", ws::QueryFormat::Csv, out) == 1);
    }

    void badSql_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("message");
        QTest::newRow("syntax") << "SELEC 1" << "syntax error";
        QTest::newRow("column") << "SELECT nope FROM intervals" << "no such column: nope";
        QTest::newRow("table") << "SELECT * FROM nope" << "no such table: nope";
        QTest::newRow("two") << "SELECT 1; SELECT 2" << "more than one SQL statement";
        QTest::newRow("empty") << "  -- nothing\n" << "no SQL statement";
        QTest::newRow("write") << "DELETE FROM runs" << "read-only";
        QTest::newRow("pragma write") << "PRAGMA user_version = 9" << "read-only";
        QTest::newRow("create") << "CREATE TABLE t(x)" << "read-only";
        QTest::newRow("runtime") << "SELECT * FROM intervals WHERE kernel_id = abs(-9223372036854775807 - 1)" << "integer overflow";
    }

    void badSql()
    {
        QFETCH(QString, sql);
        QFETCH(QString, message);
        const QByteArray before = wstest::fileHash(m_synthetic);
        try {
            std::ostringstream out;
            ws::runQuery(m_synthetic, sql.toStdString(), ws::QueryFormat::Table, out);
            QFAIL("no QueryError");
        } catch (const ws::QueryError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
        }
        QCOMPARE(wstest::fileHash(m_synthetic), before);
    }

    void badFiles()
    {
        std::ostringstream out;
        QVERIFY_THROWS_EXCEPTION(ws::StoreError,
                                 ws::runQuery(m_dir.filePath(QStringLiteral("missing.wstrace")).toStdString(), "SELECT 1",
                                              ws::QueryFormat::Table, out));
        const std::string text = m_dir.filePath(QStringLiteral("text.wstrace")).toStdString();
        {
            std::ofstream f(text);
            f << "not a trace\n";
        }
        QVERIFY_THROWS_EXCEPTION(ws::StoreError, ws::runQuery(text, "SELECT 1", ws::QueryFormat::Table, out));
    }

    void extensionLoads()
    {
#ifndef WARPSTAGE_SQLITE_EXTENSION_PATH
        QSKIP("the extension is not built");
#else
        Conn c(m_synthetic, true);
        QCOMPARE(c.rows("SELECT count(*) FROM intervals")[0][0], std::string("ERROR"));  // not there before loading
        QCOMPARE(sqlite3_enable_load_extension(c.db, 1), SQLITE_OK);
        char* err = nullptr;
        const int rc = sqlite3_load_extension(c.db, WARPSTAGE_SQLITE_EXTENSION_PATH, nullptr, &err);
        const std::string msg = err ? err : "";
        sqlite3_free(err);
        QVERIFY2(rc == SQLITE_OK, msg.c_str());
        const Conn ref(m_synthetic);
        for (const char* q : {"SELECT kernel_id, kind, kind_name, count(*), sum(dur_ns) FROM intervals GROUP BY 1, 2",
                              "SELECT kind, sum(dur_ns) FROM intervals WHERE kernel_id = 1 GROUP BY kind",
                              "SELECT kernel_id, count(*), sum(latency_ns), max(bytes) FROM loads GROUP BY 1",
                              "SELECT count(*) FROM chunk_metrics"}) {
            const Rows a = c.rows(q);
            QVERIFY(!a.empty() && a[0][0] != "ERROR");
            QVERIFY(a == ref.rows(q));
        }
        // the second entry point name works too
        Conn d(m_synthetic, true);
        sqlite3_enable_load_extension(d.db, 1);
        QCOMPARE(sqlite3_load_extension(d.db, WARPSTAGE_SQLITE_EXTENSION_PATH, "sqlite3_warpstage_init", nullptr), SQLITE_OK);
        QVERIFY(d.rows("SELECT count(*) FROM intervals") == ref.rows("SELECT count(*) FROM intervals"));
#endif
    }
};

QTEST_GUILESS_MAIN(TestQuery)
#include "tst_query.moc"
