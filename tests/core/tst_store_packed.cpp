// Schema 4's packed tables: loads per CTA (load_chunks), per-CTA / per-warpgroup metrics (metric_chunks),
// user phase names and recorded source text. Round trips on random data, and damaged chunks give a
// clear StoreError, never a crash.
#include "testutil.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

using namespace ws;

namespace {

using LoadKey = std::tuple<std::int32_t, TimeNs, TimeNs, std::int16_t, std::int32_t, std::int64_t>;
LoadKey key(const LoadTransfer& x) { return {x.ctaId, x.issue, x.ready, x.slot, x.kstep, x.bytes}; }

std::vector<LoadKey> sortedKeys(const std::vector<LoadTransfer>& v)
{
    std::vector<LoadKey> out;
    for (const LoadTransfer& x : v)
        out.push_back(key(x));
    std::sort(out.begin(), out.end());
    return out;
}

// Random loads over `ctas` CTAs: any order, extreme values included (negative k-steps, huge times,
// slot -1, zero latency, bytes jumping around).
std::vector<LoadTransfer> randomLoads(std::mt19937_64& rng, int ctas, int n)
{
    std::vector<LoadTransfer> v;
    std::uniform_int_distribution<std::int64_t> t(-(std::int64_t(1) << 50), std::int64_t(1) << 50);
    std::uniform_int_distribution<int> small(-1, 9);
    for (int i = 0; i < n; ++i) {
        LoadTransfer x;
        x.ctaId = static_cast<std::int32_t>(rng() % static_cast<unsigned>(ctas));
        x.issue = i % 7 == 0 ? t(rng) : 1'000'000 + 37 * i + small(rng);
        x.ready = x.issue + (i % 5 == 0 ? 0 : static_cast<TimeNs>(rng() % 100000));
        x.slot = static_cast<std::int16_t>(i % 11 == 0 ? INT16_MIN : small(rng));
        x.kstep = i % 13 == 0 ? INT32_MAX : (i % 17 == 0 ? INT32_MIN : i / 3);
        x.bytes = i % 3 == 0 ? 32768 : static_cast<std::int64_t>(rng() % 1000000) - 500000;
        v.push_back(x);
    }
    return v;
}

}  // namespace

class TestStorePacked : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string file(const char* n) { return (m_dir.path() + "/" + n).toStdString(); }

    void expectError(const std::string& p, std::initializer_list<const char*> parts, RowId kernelId = 1, RowId runId = 1)
    {
        try {
            auto st = TraceStore::openReadOnly(p);
            (void)st.loadKernel(kernelId);
            (void)st.metrics(runId);
            (void)st.loadSources(runId);
            QFAIL("no error for a damaged file");
        } catch (const StoreError& e) {
            const std::string what = e.what();
            for (const char* part : parts)
                QVERIFY2(what.find(part) != std::string::npos, what.c_str());
            QVERIFY2(what.rfind(p + ": ", 0) == 0, what.c_str());
        }
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // Packed loads read back exactly as written (as a multiset: the loader sorts by issue), on random data.
    void randomLoadsRoundTrip()
    {
        std::mt19937_64 rng(42);
        for (int round = 0; round < 4; ++round) {
            RunRecord r = wstest::smallRun(5, 4);
            KernelRecord& k = r.kernels[0];
            k.loads = randomLoads(rng, 5, round == 0 ? 1 : 300 * round);
            const auto p = file(("loads" + std::to_string(round) + ".wstrace").c_str());
            {
                auto st = TraceStore::openForWriting(p);
                st.writeRun(r);
            }
            auto st = TraceStore::openReadOnly(p);
            const KernelTrace t = st.loadKernel(1);
            QCOMPARE(t.loads.size(), k.loads.size());
            // local CTA index -> the loaded CTA order
            std::vector<LoadTransfer> expected = k.loads;
            for (LoadTransfer& x : expected) {
                const auto it = std::find_if(t.ctas.begin(), t.ctas.end(),
                                             [&](const Cta& c) { return c.blockLinear == k.ctas[std::size_t(x.ctaId)].blockLinear; });
                x.ctaId = static_cast<std::int32_t>(it - t.ctas.begin());
            }
            QVERIFY(sortedKeys(t.loads) == sortedKeys(expected));
            QVERIFY(std::is_sorted(t.loads.begin(), t.loads.end(),
                                   [](const LoadTransfer& a, const LoadTransfer& b) { return a.issue < b.issue; }));
            QCOMPARE(st.kernelSummaries(1)[0].loadCount, std::int64_t(k.loads.size()));
            // one chunk per CTA that has loads, nothing in a row-per-load table
            QVERIFY(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM load_chunks") <= 5);
            QCOMPARE(wstest::rawQueryInt(p, "SELECT SUM(count) FROM load_chunks"), (long long)k.loads.size());
            QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'loads'"), 0LL);
        }
    }

    void loadReadyBeforeIssueRefused()
    {
        RunRecord r = wstest::smallRun();
        r.kernels[0].loads.push_back(LoadTransfer{0, 0, 1, 2000, 1999, 0});
        const auto p = file("badload.wstrace");
        auto st = TraceStore::openForWriting(p);
        QVERIFY_THROWS_EXCEPTION(StoreError, st.writeRun(r));
        QVERIFY(st.runs().empty());
    }

    void damagedLoadChunk_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("message");
        QTest::newRow("corrupt frame") << "UPDATE load_chunks SET data = X'28b52ffd2000ff' || substr(data, 8)"
                                       << "load chunk";
        QTest::newRow("not zstd") << "UPDATE load_chunks SET data = X'00010203'" << "corrupt zstd frame";
        QTest::newRow("truncated") << "UPDATE load_chunks SET data = substr(data, 1, length(data) - 3)" << "zstd frame";
        QTest::newRow("trailing bytes") << "UPDATE load_chunks SET data = data || X'00'" << "trailing bytes";
        QTest::newRow("count too large") << "UPDATE load_chunks SET count = count + 1" << "truncated or bad blob";
        QTest::newRow("count too small") << "UPDATE load_chunks SET count = count - 1" << "trailing bytes after";
        QTest::newRow("negative count") << "UPDATE load_chunks SET count = -5" << "bad load count";
        QTest::newRow("unknown codec") << "UPDATE load_chunks SET codec = 7" << "unknown codec 7";
        QTest::newRow("missing CTA") << "UPDATE load_chunks SET cta_id = 999" << "points at missing CTA 999";
        QTest::newRow("time overflow") << "UPDATE load_chunks SET first_issue_ns = 9223372036854775800" << "out of range";
    }
    void damagedLoadChunk()
    {
        QFETCH(QString, sql);
        QFETCH(QString, message);
        const auto p = file("damaged-load.wstrace");
        std::filesystem::remove(p);
        RunRecord r = wstest::smallRun(2, 6);
        QVERIFY(!r.kernels[0].loads.empty());
        {
            auto st = TraceStore::openForWriting(p);
            st.writeRun(r);
        }
        wstest::rawExec(p, sql.toStdString());
        expectError(p, {message.toUtf8().constData()});
    }

    // A payload whose columns do not add up (the frame itself is valid) is refused too.
    void inconsistentLoadPayload()
    {
        const auto p = file("payload.wstrace");
        RunRecord r = wstest::smallRun(1, 3);
        {
            auto st = TraceStore::openForWriting(p);
            st.writeRun(r);
        }
        // Swap the frame for one of another chunk with a different count.
        const auto q = file("payload2.wstrace");
        RunRecord r2 = wstest::smallRun(1, 7);
        {
            auto st = TraceStore::openForWriting(q);
            st.writeRun(r2);
        }
        wstest::rawExec(p, "ATTACH '" + q + "' AS o; UPDATE load_chunks SET data = (SELECT data FROM o.load_chunks LIMIT 1)");
        expectError(p, {"load chunk"});
    }

    // cta:N and wg:N metrics are packed; they read back with every other metric, and writing again
    // replaces one by one.
    void metricsPackedRoundTrip()
    {
        const auto p = file("metrics.wstrace");
        RunRecord r = wstest::smallRun(3, 3);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        r.metrics = {{0, 1, "kernel", "achieved_tflops", 512.5, "TFLOP/s"},
                     {0, 1, "cta:0", "compute_ns", 100, "ns"},
                     {0, 1, "cta:2", "compute_ns", 300, "ns"},
                     {0, 1, "cta:10", "bubble_share", 0.25, "ratio"},
                     {0, 1, "cta:2", "undefined_thing", nan, "ratio"},
                     {0, 1, "wg:1", "compute_ns", -7.5, "ns"},
                     {0, 1, "cta:007", "odd_scope", 1, ""},     // not canonical: stays a row
                     {0, 0, "run", "note_metric", 3, "count"}};
        RowId run;
        {
            auto st = TraceStore::openForWriting(p);
            run = st.writeRun(r);
        }
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM metric_chunks"), 2LL);
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM metrics"), 3LL);
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM metrics WHERE scope = 'kernel'"), 1LL);
        auto find = [](const std::vector<Metric>& ms, const std::string& scope, const std::string& name) -> const Metric* {
            for (const Metric& m : ms)
                if (m.scope == scope && m.name == name)
                    return &m;
            return nullptr;
        };
        {
            auto st = TraceStore::openReadOnly(p);
            const auto ms = st.metrics(run);
            QCOMPARE(ms.size(), r.metrics.size());
            for (const Metric& w : r.metrics) {
                const Metric* m = find(ms, w.scope, w.name);
                QVERIFY2(m, (w.scope + " " + w.name).c_str());
                QCOMPARE(m->unit, w.unit);
                QCOMPARE(m->runId, run);
                QCOMPARE(m->kernelId, w.kernelId == 0 ? RowId(0) : st.kernels(run)[0].id);
                if (std::isnan(w.value))
                    QVERIFY(std::isnan(m->value));
                else
                    QCOMPARE(m->value, w.value);
            }
            QVERIFY(std::is_sorted(ms.begin(), ms.end(), [](const Metric& a, const Metric& b) { return a.kernelId < b.kernelId; }));
        }
        {
            auto st = TraceStore::openForWriting(p);
            st.writeMetrics(run, {{run, 1, "cta:2", "compute_ns", 333, "ns"}, {run, 1, "cta:5", "compute_ns", 5, "ns"}});
        }
        auto st = TraceStore::openReadOnly(p);
        const auto ms = st.metrics(run);
        QCOMPARE(ms.size(), r.metrics.size() + 1);
        QCOMPARE(find(ms, "cta:2", "compute_ns")->value, 333.0);
        QCOMPARE(find(ms, "cta:0", "compute_ns")->value, 100.0);
        QCOMPARE(find(ms, "cta:5", "compute_ns")->value, 5.0);
        QCOMPARE(find(ms, "cta:10", "bubble_share")->value, 0.25);
    }

    void damagedMetricChunk_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("message");
        QTest::newRow("not zstd") << "UPDATE metric_chunks SET data = X'0102'" << "metric chunk";
        QTest::newRow("count") << "UPDATE metric_chunks SET count = count + 1" << "do not match the row count";
        QTest::newRow("codec") << "UPDATE metric_chunks SET codec = 0" << "unknown codec 0";
        QTest::newRow("trailing") << "UPDATE metric_chunks SET data = data || X'ff'" << "trailing bytes";
    }
    void damagedMetricChunk()
    {
        QFETCH(QString, sql);
        QFETCH(QString, message);
        const auto p = file("damaged-metric.wstrace");
        std::filesystem::remove(p);
        RunRecord r = wstest::smallRun(2, 3);
        r.metrics = {{0, 1, "cta:0", "compute_ns", 1, "ns"}, {0, 1, "cta:1", "compute_ns", 2, "ns"}};
        {
            auto st = TraceStore::openForWriting(p);
            st.writeRun(r);
        }
        wstest::rawExec(p, sql.toStdString());
        expectError(p, {"metric chunk", message.toUtf8().constData()});
    }

    // Names of user phases: written from KernelRecord (writeRun and RunWriter), read in loadKernel.
    void phaseNamesRoundTrip()
    {
        const auto p = file("phases.wstrace");
        RunRecord r = wstest::smallRun();
        r.kernels[0].phaseNames = {"softmax max", "", "exp+sum"};
        RowId run2;
        {
            auto st = TraceStore::openForWriting(p);
            st.writeRun(r);
            RunWriter w = st.beginRun(r.info);
            KernelRecord k = r.kernels[0];
            k.phaseNames = {"only one"};
            w.addKernel(k);
            w.addKernel(r.kernels[0]);
            w.commit();
            run2 = w.runId();
        }
        auto st = TraceStore::openReadOnly(p);
        QCOMPARE(st.loadKernel(1).phaseNames, r.kernels[0].phaseNames);
        const auto ks = st.kernels(run2);
        QCOMPARE(ks.size(), std::size_t(2));
        QCOMPARE(st.loadKernel(ks[0].id).phaseNames, std::vector<std::string>{"only one"});
        QCOMPARE(wstest::rawQueryInt(p, "SELECT code FROM phase_names WHERE name = 'exp+sum'"), 66LL);
        // a kernel without names reads none
        RunRecord plain = wstest::smallRun();
        const auto q = file("phases-none.wstrace");
        TraceStore::openForWriting(q).writeRun(plain);
        QVERIFY(TraceStore::openReadOnly(q).loadKernel(1).phaseNames.empty());
        // a code outside the user range is a clear error
        wstest::rawExec(p, "UPDATE phase_names SET code = 13 WHERE name = 'exp+sum'");
        expectError(p, {"phase name of kernel 1 has code 13"});
    }

    // Intervals of user phases keep their code through the store; codes reserved for future standard kinds
    // (14..63) and device markers (240..) read as other.
    void userPhaseKindsKept()
    {
        RunRecord r = wstest::smallRun(1, 3);
        KernelRecord& k = r.kernels[0];
        k.phaseNames = {"a", "b", "c"};
        const std::uint8_t codes[] = {std::uint8_t(kUserPhaseBase + 2), 20, 245, std::uint8_t(kUserPhaseBase + kMaxUserPhases - 1)};
        for (std::size_t i = 0; i < 4; ++i)
            k.intervals[i].kind = static_cast<IntervalKind>(codes[i]);
        const auto p = file("userkinds.wstrace");
        TraceStore::openForWriting(p).writeRun(r);
        const KernelTrace t = TraceStore::openReadOnly(p).loadKernel(1);
        std::map<int, int> count;  // kind code -> intervals
        for (const Lane& l : t.lanes)
            for (IntervalKind kind : l.kind)
                ++count[int(kind)];
        std::map<int, int> expected;
        for (const Interval& iv : k.intervals) {
            const int c = int(iv.kind);
            ++expected[c < kIntervalKindCount || isUserPhase(iv.kind) ? c : int(IntervalKind::Other)];
        }
        QCOMPARE(count, expected);
        QCOMPARE(count[kUserPhaseBase + 2], 1);
        QCOMPARE(count[kUserPhaseBase + kMaxUserPhases - 1], 1);
        QCOMPARE(count.count(20), std::size_t(0));
        QCOMPARE(count.count(245), std::size_t(0));
        QCOMPARE(t.phaseNames, k.phaseNames);
    }

    void tooManyPhaseNamesRefused()
    {
        RunRecord r = wstest::smallRun();
        r.kernels[0].phaseNames.assign(kMaxUserPhases + 1, "x");
        auto st = TraceStore::openForWriting(file("phases-many.wstrace"));
        QVERIFY_THROWS_EXCEPTION(StoreError, st.writeRun(r));
    }

    // Source files: per run, text stored once per content, checked against its sha256.
    void sourcesRoundTrip()
    {
        const auto p = file("sources.wstrace");
        const std::string big(200000, 'x');
        RunRecord r = wstest::smallRun();
        r.sources = {{"kernels/src/a.cu", "", "__global__ void a() {}\n"},
                     {"/abs/b.cuh", "", big},
                     {"empty.h", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", ""}};
        RowId r1, r2;
        {
            auto st = TraceStore::openForWriting(p);
            r1 = st.writeRun(r);
            RunWriter w = st.beginRun(r.info);
            w.addSources({{"copy-of-b.cuh", "", big}});
            w.commit();
            r2 = w.runId();
        }
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM sources"), 4LL);
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM source_texts"), 3LL);  // b stored once
        QVERIFY(wstest::rawQueryInt(p, "SELECT SUM(length(data)) FROM source_texts") < 2000);
        auto st = TraceStore::openReadOnly(p);
        const auto s1 = st.loadSources(r1);
        QCOMPARE(s1.size(), std::size_t(3));
        QCOMPARE(s1[0].path, std::string("/abs/b.cuh"));  // sorted by path
        QCOMPARE(s1[0].text, big);
        QCOMPARE(s1[2].path, std::string("kernels/src/a.cu"));
        QCOMPARE(s1[2].sha256, std::string("86fb1afadfd3b303d55b87dd53aaaf3cea1507180d15ed998fa9ed1476d7d948"));
        QCOMPARE(s1[1].text, std::string());
        QCOMPARE(st.loadSources(r2).size(), std::size_t(1));
        QVERIFY(st.loadSource(r1, "kernels/src/a.cu").has_value());
        QCOMPARE(st.loadSource(r1, "kernels/src/a.cu")->text, r.sources[0].text);
        QVERIFY(!st.loadSource(r2, "kernels/src/a.cu").has_value());
        QVERIFY(st.loadSources(999).empty());
        // adding to an existing run
        {
            auto w = TraceStore::openForWriting(p);
            w.writeSources(r2, {{"new.cu", "", "int x;"}});
            QVERIFY_THROWS_EXCEPTION(StoreError, w.writeSources(999, {{"new.cu", "", "int x;"}}));
        }
        QCOMPARE(TraceStore::openReadOnly(p).loadSources(r2).size(), std::size_t(2));
    }

    void sourceWithWrongHashRefused()
    {
        RunRecord r = wstest::smallRun();
        r.sources = {{"a.cu", "0000000000000000000000000000000000000000000000000000000000000000", "text"}};
        const auto p = file("sources-bad.wstrace");
        auto st = TraceStore::openForWriting(p);
        try {
            st.writeRun(r);
            QFAIL("a source whose sha256 does not match its text was written");
        } catch (const StoreError& e) {
            QVERIFY2(std::string(e.what()).find("does not match its text") != std::string::npos, e.what());
        }
        QVERIFY(st.runs().empty());
    }

    void damagedSource_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("message");
        QTest::newRow("text changed") << "UPDATE source_texts SET data = (SELECT data FROM source_texts WHERE size = 6), "
                                         "size = 6 WHERE size <> 6" << "does not match its sha256";
        QTest::newRow("size") << "UPDATE source_texts SET size = size + 1" << "bytes";
        QTest::newRow("missing text") << "DELETE FROM source_texts" << "is missing";
        QTest::newRow("corrupt") << "UPDATE source_texts SET data = X'28b52ffd'" << "zstd";
        QTest::newRow("codec") << "UPDATE source_texts SET codec = 3" << "unknown codec 3";
    }
    void damagedSource()
    {
        QFETCH(QString, sql);
        QFETCH(QString, message);
        const auto p = file("damaged-source.wstrace");
        std::filesystem::remove(p);
        RunRecord r = wstest::smallRun();
        r.sources = {{"a.cu", "", "kernel text that is long enough to compress a little, a little, a little"},
                     {"b.cu", "", "int y;"}};
        TraceStore::openForWriting(p).writeRun(r);
        wstest::rawExec(p, sql.toStdString());
        expectError(p, {"source file", message.toUtf8().constData()});
    }

    // A synthetic run's metrics (from the analysis) and loads survive the packing unchanged.
    void syntheticRunKeepsEverything()
    {
        SyntheticParams sp;
        sp.ctas = 4;
        sp.smCount = 2;
        sp.kstepsPerTile = 5;
        sp.tilesPerCta = 2;
        const RunRecord r = generateSynthetic(sp);
        const auto p = file("synthetic.wstrace");
        const RowId run = TraceStore::openForWriting(p).writeRun(r);
        auto st = TraceStore::openReadOnly(p);
        QCOMPARE(st.metrics(run).size(), r.metrics.size());
        std::size_t loads = 0;
        for (const KernelLaunch& k : st.kernels(run))
            loads += st.loadKernel(k.id).loads.size();
        std::size_t expected = 0;
        for (const KernelRecord& k : r.kernels)
            expected += k.loads.size();
        QCOMPARE(loads, expected);
    }
};

QTEST_GUILESS_MAIN(TestStorePacked)
#include "tst_store_packed.moc"
