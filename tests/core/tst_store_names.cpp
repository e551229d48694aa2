// Schema 5: API call names, NVTX names and domains interned in `names`, the rows in api_calls / nvtx_events, found
// per run by the run's id range, and the views api_spans / nvtx_ranges that keep schema 4's columns for SQL users.
// Names round-trip through both writers, each text is stored once, a rolled-back run takes its names with it
// (the writer's cache forgets them), and the example queries of docs/schema.md run on a written file.
#include "testutil.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <set>
#include <string>
#include <vector>

using namespace ws;

namespace {

// Every row of a query as text ("a|b|c"), run on the file directly. Parameters ?1, ?2, ... (and :name ones in
// order) are bound to `params`.
std::vector<std::string> rows(const std::string& path, const std::string& sql, const std::vector<std::int64_t>& params = {},
                              std::string* error = nullptr)
{
    std::vector<std::string> out;
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
        if (error)
            *error = sqlite3_errmsg(db);
        sqlite3_close(db);
        return out;
    }
    for (std::size_t i = 0; i < params.size(); ++i)
        sqlite3_bind_int64(st, int(i) + 1, params[i]);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        std::string r;
        for (int c = 0; c < sqlite3_column_count(st); ++c) {
            if (c)
                r += '|';
            const auto* t = sqlite3_column_text(st, c);
            r += t ? reinterpret_cast<const char*>(t) : "NULL";
        }
        out.push_back(r);
    }
    if (rc != SQLITE_DONE && error)
        *error = sqlite3_errmsg(db);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

RunInfo programInfo()
{
    RunInfo i;
    i.kind = RunKind::Program;
    i.pid = 77;
    i.program = "python3";
    i.device.name = "NVIDIA H200";
    i.deviceOrdinal = 0;
    return i;
}

ApiSpan api(const std::string& name, int i)
{
    ApiSpan a;
    a.name = name;
    a.cbid = 211u + std::uint32_t(i % 3);
    a.driver = i % 2 == 1;
    a.start = 10'000 + std::int64_t(i) * 1'000;
    a.end = a.start + 200 + i;
    a.threadId = 11u + std::uint32_t(i % 2);
    a.correlationId = 500u + std::uint32_t(i);
    a.result = i == 2 ? 700 : 0;
    return a;
}

NvtxRange nvtx(const std::string& domain, const std::string& name, int i)
{
    NvtxRange r;
    r.kind = static_cast<NvtxKind>(i % 3);
    r.domain = domain;
    r.name = name;
    r.start = 5'000 + std::int64_t(i) * 2'000;
    r.end = r.kind == NvtxKind::Mark ? r.start : r.start + 1'500;
    r.threadId = 11;
    r.depth = i % 2;
    r.color = i ? 0xff0000ffu : 0u;
    r.category = i;
    r.closed = i != 3;
    return r;
}

// The texts: shared between API calls and NVTX, empty, non-ASCII, long.
const std::vector<std::string> kApiNames = {"cudaLaunchKernel", "", "cuLaunchKernelEx", "aten::linear",
                                            "cudaLaunchKernel", "\xc3\xbc" "ber::\xe2\x88\x91", std::string(300, 'k')};
const std::vector<std::pair<std::string, std::string>> kNvtx = {
    {"torch", "aten::linear"}, {"", "step"}, {"torch", ""}, {"app", "cudaLaunchKernel"}, {"", "step"}};

void compareApi(const std::vector<ApiSpan>& got, const std::vector<ApiSpan>& want)
{
    QCOMPARE(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        QCOMPARE(got[i].name, want[i].name);
        QCOMPARE(got[i].cbid, want[i].cbid);
        QCOMPARE(got[i].driver, want[i].driver);
        QCOMPARE(got[i].start, want[i].start);
        QCOMPARE(got[i].end, want[i].end);
        QCOMPARE(got[i].threadId, want[i].threadId);
        QCOMPARE(got[i].correlationId, want[i].correlationId);
        QCOMPARE(got[i].result, want[i].result);
    }
}

void compareNvtx(const std::vector<NvtxRange>& got, const std::vector<NvtxRange>& want)
{
    QCOMPARE(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        QCOMPARE(int(got[i].kind), int(want[i].kind));
        QCOMPARE(got[i].domain, want[i].domain);
        QCOMPARE(got[i].name, want[i].name);
        QCOMPARE(got[i].start, want[i].start);
        QCOMPARE(got[i].end, want[i].end);
        QCOMPARE(got[i].depth, want[i].depth);
        QCOMPARE(got[i].color, want[i].color);
        QCOMPARE(got[i].category, want[i].category);
        QCOMPARE(got[i].closed, want[i].closed);
    }
}

std::vector<ApiSpan> apis(int offset = 0)
{
    std::vector<ApiSpan> v;
    for (std::size_t i = 0; i < kApiNames.size(); ++i)
        v.push_back(api(kApiNames[i], int(i) + offset));
    return v;
}

std::vector<NvtxRange> ranges()
{
    std::vector<NvtxRange> v;
    for (std::size_t i = 0; i < kNvtx.size(); ++i)
        v.push_back(nvtx(kNvtx[i].first, kNvtx[i].second, int(i)));
    return v;
}

// docs/schema.md's fenced ```sql block that follows `heading`, split into statements.
std::vector<std::string> docQueries(const QString& heading)
{
    QFile f(QStringLiteral(WARPSTAGE_DOCS_DIR "/schema.md"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QString doc = QString::fromUtf8(f.readAll());
    const qsizetype h = doc.indexOf(heading);
    if (h < 0)
        return {};
    const qsizetype b = doc.indexOf(QStringLiteral("```sql\n"), h);
    const qsizetype e = doc.indexOf(QStringLiteral("\n```"), b + 7);
    if (b < 0 || e < 0)
        return {};
    QString code;  // without the comment lines (which may hold a ';')
    for (const QString& line : doc.mid(b + 7, e - b - 7).split(QLatin1Char('\n')))
        if (!line.trimmed().startsWith(QStringLiteral("--")))
            code += line + QLatin1Char('\n');
    std::vector<std::string> out;
    for (const QString& q : code.split(QLatin1Char(';')))
        if (!q.trimmed().isEmpty())
            out.push_back(q.trimmed().toStdString());
    return out;
}

}  // namespace

class TestStoreNames : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string file(const char* name) { return (m_dir.path() + "/" + name).toStdString(); }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // Both writers: every name reads back as written (through TraceStore and through the views), each distinct
    // text is one row of `names`, shared by API calls and NVTX, and the rows point at it.
    void namesRoundTrip()
    {
        const auto p = file("names.wstrace");
        RowId streamed, whole;
        {
            auto st = TraceStore::openForWriting(p);
            RunWriter w = st.beginRun(programInfo());
            w.addApiSpans(apis());
            w.addNvtxRanges(ranges());
            w.addApiSpans({api("cudaLaunchKernel", 20), api("late_name", 21)});  // a second call of the same run
            streamed = w.runId();
            w.commit();
            RunRecord rec;
            rec.info = programInfo();
            rec.apiSpans = apis(40);
            rec.nvtx = ranges();
            whole = st.writeRun(rec);
        }
        auto st = TraceStore::openReadOnly(p);
        std::vector<ApiSpan> want = apis();
        want.push_back(api("cudaLaunchKernel", 20));
        want.push_back(api("late_name", 21));
        compareApi(st.apiSpans(streamed), want);
        compareApi(st.apiSpans(whole), apis(40));
        compareNvtx(st.nvtxRanges(streamed), ranges());
        compareNvtx(st.nvtxRanges(whole), ranges());
        // each text once: the API names, the NVTX domains and names, "late_name"
        std::set<std::string> texts(kApiNames.begin(), kApiNames.end());
        for (const auto& [d, n] : kNvtx) {
            texts.insert(d);
            texts.insert(n);
        }
        texts.insert("late_name");
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM names"), static_cast<long long>(texts.size()));
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(DISTINCT name) FROM names"), static_cast<long long>(texts.size()));
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM api_calls WHERE name_id = (SELECT id FROM names WHERE "
                                        "name = 'cudaLaunchKernel')"),
                 5LL);
        // the views show the texts (what SQL users of schema 4 read)
        QCOMPARE(rows(p, "SELECT name FROM api_spans WHERE run_id = ?1 ORDER BY start_ns", {streamed}).back(),
                 std::string("late_name"));
        QCOMPARE(rows(p, "SELECT domain || '/' || name FROM nvtx_ranges WHERE run_id = ?1 ORDER BY id", {whole}),
                 (std::vector<std::string>{"torch/aten::linear", "/step", "torch/", "app/cudaLaunchKernel", "/step"}));
        QCOMPARE(rows(p, "SELECT name FROM api_spans WHERE length(name) = 300").size(), 2u);
    }

    // A run that is rolled back takes the names it added with it; the writer's cache must forget them, or the
    // next run would point at a row that is gone or, once the id is given to another text, at the wrong name.
    void rolledBackNamesForgotten()
    {
        const auto p = file("rollback-names.wstrace");
        RowId a, b;
        {
            auto st = TraceStore::openForWriting(p);
            {
                RunWriter w = st.beginRun(programInfo());
                w.addApiSpans({api("only_in_the_rolled_back_run", 0)});
                w.addNvtxRanges({nvtx("rolled_domain", "rolled_name", 0)});
                w.rollback();
            }
            {
                RunWriter w = st.beginRun(programInfo());
                w.addApiSpans({api("other", 0), api("only_in_the_rolled_back_run", 1)});
                w.addNvtxRanges({nvtx("d2", "n2", 0), nvtx("rolled_domain", "rolled_name", 1)});
                a = w.runId();
                w.commit();
            }
            // writeRun: the API calls are written, then a bad source file rolls the run back
            RunRecord bad;
            bad.info = programInfo();
            bad.apiSpans = {api("from_a_failed_writeRun", 0)};
            bad.sources = {{"", "", "text"}};
            QVERIFY_THROWS_EXCEPTION(StoreError, st.writeRun(bad));
            RunRecord good;
            good.info = programInfo();
            good.apiSpans = {api("yet_another", 0), api("from_a_failed_writeRun", 1)};
            b = st.writeRun(good);
        }
        auto st = TraceStore::openReadOnly(p);
        const auto x = st.apiSpans(a);
        QCOMPARE(x.size(), 2u);
        QCOMPARE(x[0].name, std::string("other"));
        QCOMPARE(x[1].name, std::string("only_in_the_rolled_back_run"));
        const auto n = st.nvtxRanges(a);
        QCOMPARE(n.size(), 2u);
        QCOMPARE(n[1].domain, std::string("rolled_domain"));
        QCOMPARE(n[1].name, std::string("rolled_name"));
        const auto y = st.apiSpans(b);
        QCOMPARE(y.size(), 2u);
        QCOMPARE(y[0].name, std::string("yet_another"));
        QCOMPARE(y[1].name, std::string("from_a_failed_writeRun"));
        QCOMPARE(st.runs().size(), 2u);
    }

    // A second writer (another connection) appends runs: the names the first one stored are found and reused.
    void namesSharedAcrossWriters()
    {
        const auto p = file("two-writers.wstrace");
        for (int round = 0; round < 2; ++round) {
            auto st = TraceStore::openForWriting(p);
            RunRecord rec;
            rec.info = programInfo();
            rec.apiSpans = apis(round);
            rec.nvtx = ranges();
            st.writeRun(rec);
        }
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM runs"), 2LL);
        const long long texts = wstest::rawQueryInt(p, "SELECT COUNT(*) FROM names");
        QCOMPARE(texts, wstest::rawQueryInt(p, "SELECT COUNT(*) FROM (SELECT name FROM api_spans UNION SELECT domain "
                                               "FROM nvtx_ranges UNION SELECT name FROM nvtx_ranges)"));
        auto st = TraceStore::openReadOnly(p);
        for (const RunSummary& r : st.runSummaries())
            QCOMPARE(st.apiSpans(r.info.id).size(), kApiNames.size());
    }

    // Runs interleaved with ladder runs and empty program runs: each run's id range holds its rows only, and a run
    // without API calls or NVTX ranges has an empty range (first = last + 1), not "unknown".
    void idRangesPerRun()
    {
        const auto p = file("ranges.wstrace");
        std::vector<RowId> ids;
        {
            auto st = TraceStore::openForWriting(p);
            for (int i = 0; i < 4; ++i) {
                RunRecord rec;
                rec.info = programInfo();
                if (i != 2) {
                    rec.apiSpans = apis(10 * i);
                    rec.nvtx = ranges();
                }
                ids.push_back(st.writeRun(rec));
                if (i == 1)
                    st.writeRun(wstest::smallRun());
            }
        }
        QCOMPARE(rows(p, "SELECT api_first_id, api_last_id, nvtx_first_id, nvtx_last_id FROM runs ORDER BY id"),
                 (std::vector<std::string>{"1|7|1|5", "8|14|6|10", "15|14|11|10", "15|14|11|10", "15|21|11|15"}));
        auto st = TraceStore::openReadOnly(p);
        QCOMPARE(st.apiSpans(ids[2]).size(), 0u);
        QCOMPARE(st.nvtxRanges(ids[2]).size(), 0u);
        compareApi(st.apiSpans(ids[3]), apis(30));
        compareApi(st.apiSpans(ids[0]), apis(0));
        // a range that is not known (0, 0: a hand-made file) still finds the rows, by run_id
        wstest::rawExec(p, "UPDATE runs SET api_first_id = 0, api_last_id = 0, nvtx_first_id = 0, nvtx_last_id = 0");
        auto again = TraceStore::openReadOnly(p);
        compareApi(again.apiSpans(ids[1]), apis(10));
        compareNvtx(again.nvtxRanges(ids[3]), ranges());
    }

    // The views have exactly schema 4's columns, in schema 4's order.
    void viewsKeepSchema4Columns()
    {
        const auto p = file("views.wstrace");
        {
            auto st = TraceStore::openForWriting(p);
        }
        auto cols = [&](const char* t) {
            std::string s;
            for (const std::string& c : rows(p, std::string("SELECT name FROM pragma_table_info('") + t + "')"))
                s += c + ",";
            return s;
        };
        QCOMPARE(cols("api_spans"), std::string("id,run_id,name,cbid,driver,start_ns,end_ns,thread_id,correlation_id,result,"));
        QCOMPARE(cols("nvtx_ranges"),
                 std::string("id,run_id,kind,domain,name,start_ns,end_ns,thread_id,depth,color,category,closed,"));
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view'"), 2LL);
    }

    // docs/schema.md's example queries, read from the page itself, on a written program recording: they run and
    // give what the recording holds.
    void docsProgramQueries()
    {
        const auto p = file("docs-queries.wstrace");
        RowId run;
        {
            auto st = TraceStore::openForWriting(p);
            RunWriter w = st.beginRun(programInfo());
            // kernel a: 3 launches of 10 us; kernel b: 1 launch of 50 us; one gap of 200 us (after the second
            // launch); the others 1 .. 11 us
            std::vector<KernelLaunch> ks;
            const TimeNs starts[] = {0, 15'000, 225'000, 290'000};
            for (int i = 0; i < 4; ++i) {
                KernelLaunch k;
                k.name = i == 2 ? "b" : "a";
                k.start = 1'000'000 + starts[i];
                k.end = k.start + (i == 2 ? 50'000 : 10'000);
                k.correlationId = 10u + std::uint32_t(i);
                ks.push_back(k);
            }
            w.addLaunches(ks);
            MemOp m;
            m.kind = MemOpKind::HtoD;
            m.start = 1'276'000;  // between b (ends 1'275'000) and the last launch (1'290'000)
            m.end = m.start + 3'000;
            w.addMemOps({m});
            std::vector<ApiSpan> as;
            for (int i = 0; i < 4; ++i) {
                ApiSpan a = api(i == 2 ? "cuLaunchKernelEx" : "cudaLaunchKernel", i);
                a.start = ks[std::size_t(i)].start - 3'000;
                a.end = a.start + 1'000;
                a.correlationId = ks[std::size_t(i)].correlationId;
                as.push_back(a);
            }
            as.push_back(api("cudaStreamSynchronize", 9));
            w.addApiSpans(as);
            w.addNvtxRanges({nvtx("torch", "forward", 0), nvtx("torch", "forward", 1), nvtx("", "step", 2)});
            run = w.runId();
            w.commit();
        }
        const auto qs = docQueries(QStringLiteral("Program runs (schema 3)"));
        QVERIFY2(qs.size() >= 4, "docs/schema.md: the program queries were not found");
        std::vector<std::vector<std::string>> got;
        for (const std::string& q : qs) {
            std::string err;
            got.push_back(rows(p, q, {}, &err));
            QVERIFY2(err.empty(), (err + " in: " + q).c_str());
        }
        // top kernels by total time: b (50 us, 1 launch), then a (3 launches, 30 us)
        QCOMPARE(got[0], (std::vector<std::string>{"b|1|50000|50000", "a|3|30000|10000"}));
        // idle gaps > 100 us: after the second launch (1'025'000 .. 1'225'000), not the 5 us ones
        QCOMPARE(got[1].size(), 1u);
        QVERIFY2(got[1][0].find("|1025000|1225000|200.0") != std::string::npos, got[1][0].c_str());
        // the API and NVTX examples (schema 5's views)
        const std::string all = [&] {
            std::string s;
            for (const auto& g : got)
                for (const auto& r : g)
                    s += r + "\n";
            return s;
        }();
        QVERIFY2(all.find("cudaLaunchKernel|3|") != std::string::npos, all.c_str());
        QVERIFY2(all.find("cuLaunchKernelEx|b|") != std::string::npos, all.c_str());
        QVERIFY2(all.find("torch|forward|2|") != std::string::npos, all.c_str());
        (void)run;
    }

    // The ladder examples run too (a synthetic ladder run; :t0 / :t1 bound to the whole time line).
    void docsLadderQueries()
    {
        const auto p = file("docs-ladder.wstrace");
        {
            auto st = TraceStore::openForWriting(p);
            st.writeRun(wstest::smallRun());
        }
        const auto qs = docQueries(QStringLiteral("Ladder runs:"));
        QVERIFY2(qs.size() >= 8, "docs/schema.md: the ladder queries were not found");
        for (const std::string& q : qs) {
            std::string err;
            const bool params = q.find(":t0") != std::string::npos;
            rows(p, q, params ? std::vector<std::int64_t>{0, std::int64_t(1) << 62} : std::vector<std::int64_t>{}, &err);
            QVERIFY2(err.empty(), (err + " in: " + q).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestStoreNames)
#include "tst_store_names.moc"
