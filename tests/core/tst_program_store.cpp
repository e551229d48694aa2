// Schema 3 program records in the store: every new field round-trips (writeRun and the streaming
// RunWriter), thousands of launches through the fast path, incomplete runs, streams seen only in
// launches, and bad rows on read (a StoreError naming the file and the problem, never a crash).
#include "testutil.h"
#include "warpstage/store.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <limits>
#include <string>

using namespace ws;

namespace {

RunInfo programInfo()
{
    RunInfo i;
    i.kind = RunKind::Program;
    i.variant = "";
    i.pid = 4242;
    i.parentPid = 4000;
    i.program = "/usr/bin/python3";
    i.workingDir = "/home/u/work";
    i.deviceOrdinal = 3;
    i.deviceUuid = "GPU-0123abcd-4567";
    i.processStart = 1'000;
    i.processEnd = 9'000'000'000LL;
    i.exitCode = 0;
    i.exitSignal = 0;
    i.device.name = "NVIDIA H200";
    i.commandLine = "warpstage-record -o x -- python3 train.py";
    return i;
}

KernelLaunch launch(int i)
{
    KernelLaunch k;
    k.name = i % 3 ? "ampere_sgemm_128x64_tn" : "elementwise_kernel<float>";
    k.grid[0] = 1 + i % 7;
    k.grid[1] = 2;
    k.block[0] = 256;
    k.cluster[0] = 1 + i % 2;
    k.dynamicSmemBytes = 1024 * (i % 5);
    k.staticSmemBytes = 48;
    k.registersPerThread = 90 + i % 3;
    k.start = 10'000 + std::int64_t(i) * 5'000;
    k.end = k.start + 1'000 + i % 11;
    k.correlationId = 100u + std::uint32_t(i);
    k.streamId = 7u + std::uint32_t(i % 3);
    k.contextId = 1;
    k.graphId = i % 4 == 0 ? 12u : 0u;
    k.graphNodeId = i % 4 == 0 ? (std::uint64_t(1) << 40) + std::uint64_t(i) : 0u;
    k.launchIndex = i / 3;
    return k;
}

MemOp memop(int i)
{
    MemOp m;
    m.kind = i % 2 ? MemOpKind::HtoD : MemOpKind::Memset;
    m.bytes = 4096LL * (i + 1);
    m.start = 3'000 + std::int64_t(i) * 50'000;
    m.end = m.start + 700;
    m.correlationId = 9000u + std::uint32_t(i);
    m.streamId = 99;  // a stream with no streams row
    m.contextId = 2;
    m.graphId = 5;
    m.graphNodeId = 77u + std::uint64_t(i);
    return m;
}

NvtxRange nvtx(int i)
{
    NvtxRange r;
    r.kind = static_cast<NvtxKind>(i % 3);
    r.domain = i % 2 ? "torch" : "";
    r.name = "step " + std::to_string(i);
    r.start = 2'000 + std::int64_t(i) * 10'000;
    r.end = r.kind == NvtxKind::Mark ? r.start : r.start + 20'000;
    r.threadId = 31337u + std::uint32_t(i % 2);
    r.depth = i % 4;
    r.color = 0xff00ff00u;
    r.category = -5 + i;
    r.closed = i % 5 != 4;
    return r;
}

ApiSpan api(int i)
{
    ApiSpan a;
    a.name = i % 2 ? "cudaLaunchKernel" : "cuLaunchKernelEx";
    a.cbid = 211u + std::uint32_t(i % 2);
    a.driver = i % 2 == 0;
    a.start = 9'000 + std::int64_t(i) * 5'000;
    a.end = a.start + 300;
    a.threadId = 4243;
    a.correlationId = 100u + std::uint32_t(i);
    a.result = i == 3 ? 700 : 0;
    return a;
}

StreamInfo stream(std::uint32_t id, bool isDefault, const char* name)
{
    StreamInfo s;
    s.contextId = 1;
    s.streamId = id;
    s.priority = isDefault ? 0 : -1;
    s.isDefault = isDefault;
    s.name = name;
    return s;
}

#define CHECK_RUN_EQ(a, b)                                                                                              \
    do {                                                                                                               \
        QCOMPARE(int((a).kind), int((b).kind));                                                                        \
        QCOMPARE((a).pid, (b).pid);                                                                                    \
        QCOMPARE((a).parentPid, (b).parentPid);                                                                        \
        QCOMPARE((a).program, (b).program);                                                                            \
        QCOMPARE((a).workingDir, (b).workingDir);                                                                      \
        QCOMPARE((a).deviceOrdinal, (b).deviceOrdinal);                                                                \
        QCOMPARE((a).deviceUuid, (b).deviceUuid);                                                                      \
        QCOMPARE((a).processStart, (b).processStart);                                                                  \
        QCOMPARE((a).processEnd, (b).processEnd);                                                                      \
        QCOMPARE((a).exitCode, (b).exitCode);                                                                          \
        QCOMPARE((a).exitSignal, (b).exitSignal);                                                                      \
    } while (0)

void compareLaunch(const KernelLaunch& a, const KernelLaunch& b)
{
    QCOMPARE(a.name, b.name);
    QCOMPARE(a.traced, b.traced);
    for (int d = 0; d < 3; ++d) {
        QCOMPARE(a.grid[d], b.grid[d]);
        QCOMPARE(a.block[d], b.block[d]);
        QCOMPARE(a.cluster[d], b.cluster[d]);
    }
    QCOMPARE(a.dynamicSmemBytes, b.dynamicSmemBytes);
    QCOMPARE(a.staticSmemBytes, b.staticSmemBytes);
    QCOMPARE(a.registersPerThread, b.registersPerThread);
    QCOMPARE(a.start, b.start);
    QCOMPARE(a.end, b.end);
    QCOMPARE(a.correlationId, b.correlationId);
    QCOMPARE(a.streamId, b.streamId);
    QCOMPARE(a.contextId, b.contextId);
    QCOMPARE(a.graphId, b.graphId);
    QCOMPARE(a.graphNodeId, b.graphNodeId);
    QCOMPARE(a.launchIndex, b.launchIndex);
}

}  // namespace

class TestProgramStore : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string file(const char* name) { return (m_dir.path() + "/" + name).toStdString(); }

    // A program run through the streaming writer, in several calls of each kind.
    RowId writeProgram(TraceStore& st, int launches, bool incomplete)
    {
        RunInfo info = programInfo();
        RunWriter w = st.beginRun(info);
        std::vector<KernelLaunch> ls;
        for (int i = 0; i < launches; ++i) {
            ls.push_back(launch(launches - 1 - i));  // out of order: readers sort by start
            if (ls.size() == 1000) {
                w.addLaunches(ls);
                ls.clear();
            }
        }
        w.addLaunches(ls);
        std::vector<MemOp> ms;
        for (int i = 0; i < 5; ++i)
            ms.push_back(memop(i));
        w.addMemOps(ms);
        w.addStreams({stream(7, true, ""), stream(8, false, "")});
        w.addStreams({stream(8, false, "loader")});  // a later name for the same stream updates it
        std::vector<NvtxRange> ns;
        for (int i = 9; i >= 0; --i)
            ns.push_back(nvtx(i));
        w.addNvtxRanges(ns);
        std::vector<ApiSpan> as;
        for (int i = 0; i < 6; ++i)
            as.push_back(api(i));
        w.addApiSpans(as);
        w.setProcessEnd(500, 8'000'000'000LL, incomplete ? -1 : 0, incomplete ? 9 : 0);
        if (incomplete)
            w.setIncomplete("the program was killed (SIGKILL)");
        const RowId id = w.runId();
        w.commit();
        return id;
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void namesRoundTrip()
    {
        QCOMPARE(runKindName(RunKind::Program), std::string_view("program"));
        QCOMPARE(runKindFromName("ladder").value(), RunKind::Ladder);
        QVERIFY(!runKindFromName("Program"));
        for (int i = 0; i < 3; ++i)
            QCOMPARE(nvtxKindFromName(nvtxKindName(NvtxKind(i))).value(), NvtxKind(i));
        QCOMPARE(nvtxKindName(NvtxKind::StartEnd), std::string_view("start_end"));
        QVERIFY(!nvtxKindFromName("bogus"));
    }

    void writeRunRoundTrip()
    {
        const auto p = file("writerun.wstrace");
        RunRecord rec;
        rec.info = programInfo();
        KernelRecord k;
        k.launch = launch(4);
        rec.kernels.push_back(k);
        rec.memOps.push_back(memop(1));
        rec.streams.push_back(stream(7, true, "main"));
        rec.nvtx.push_back(nvtx(1));
        rec.apiSpans.push_back(api(4));
        RowId id;
        {
            auto st = TraceStore::openForWriting(p);
            id = st.writeRun(rec);
        }
        auto st = TraceStore::openReadOnly(p);
        QCOMPARE(st.schemaVersion(), kSchemaVersion);
        const RunInfo r = st.run(id);
        CHECK_RUN_EQ(r, rec.info);
        QCOMPARE(int(r.status), int(RunStatus::Complete));
        const auto ks = st.kernels(id);
        QCOMPARE(ks.size(), std::size_t(1));
        compareLaunch(ks[0], rec.kernels[0].launch);
        const auto ms = st.memOps(id);
        QCOMPARE(ms.size(), std::size_t(1));
        QCOMPARE(ms[0].contextId, 2u);
        QCOMPARE(ms[0].graphId, 5u);
        QCOMPARE(ms[0].graphNodeId, std::uint64_t(78));
        QCOMPARE(ms[0].bytes, 8192);
        const auto ss = st.streams(id);
        QCOMPARE(ss.size(), std::size_t(1));
        QCOMPARE(ss[0].name, std::string("main"));
        QVERIFY(ss[0].isDefault);
        QCOMPARE(ss[0].runId, id);
        const auto ns = st.nvtxRanges(id);
        QCOMPARE(ns.size(), std::size_t(1));
        QCOMPARE(int(ns[0].kind), int(NvtxKind::StartEnd));
        QCOMPARE(ns[0].domain, std::string("torch"));
        QCOMPARE(ns[0].name, std::string("step 1"));
        QCOMPARE(ns[0].start, 12'000);
        QCOMPARE(ns[0].end, 32'000);
        QCOMPARE(ns[0].threadId, 31338u);
        QCOMPARE(ns[0].depth, 1);
        QCOMPARE(ns[0].color, 0xff00ff00u);
        QCOMPARE(ns[0].category, -4);
        QVERIFY(ns[0].closed);
        const auto as = st.apiSpans(id);
        QCOMPARE(as.size(), std::size_t(1));
        QCOMPARE(as[0].name, std::string("cuLaunchKernelEx"));
        QCOMPARE(as[0].cbid, 211u);
        QVERIFY(as[0].driver);
        QCOMPARE(as[0].start, 29'000);
        QCOMPARE(as[0].end, 29'300);
        QCOMPARE(as[0].threadId, 4243u);
        QCOMPARE(as[0].correlationId, 104u);
        QCOMPARE(as[0].result, 0);
    }

    void defaultsDescribeALadderRun()
    {
        const auto p = file("ladder.wstrace");
        RunRecord rec;
        rec.info.variant = "pingpong";
        {
            auto st = TraceStore::openForWriting(p);
            st.writeRun(rec);
        }
        const RunInfo r = TraceStore::openReadOnly(p).runs().at(0);
        QCOMPARE(int(r.kind), int(RunKind::Ladder));
        QCOMPARE(r.exitCode, -1);
        QCOMPARE(r.pid, 0);
    }

    void thousandsOfLaunchesStreamed()
    {
        const auto p = file("program.wstrace");
        RowId id;
        {
            auto st = TraceStore::openForWriting(p);
            id = writeProgram(st, 5000, false);
        }
        auto st = TraceStore::openReadOnly(p);
        const ProgramTrace t = st.loadProgram(id);
        CHECK_RUN_EQ(t.run, [] {
            RunInfo i = programInfo();
            i.processStart = 500;
            i.processEnd = 8'000'000'000LL;
            return i;
        }());
        QCOMPARE(t.kernels.size(), std::size_t(5000));
        for (int i = 0; i < 5000; ++i) {
            compareLaunch(t.kernels[std::size_t(i)], launch(i));
            QCOMPARE(t.kernels[std::size_t(i)].runId, id);
        }
        QCOMPARE(t.memOps.size(), std::size_t(5));
        QCOMPARE(t.nvtx.size(), std::size_t(10));
        for (std::size_t i = 1; i < t.nvtx.size(); ++i)
            QVERIFY(t.nvtx[i - 1].start <= t.nvtx[i].start);
        QCOMPARE(t.nvtx[9].name, std::string("step 9"));
        QVERIFY(!t.nvtx[4].closed);
        QCOMPARE(int(t.nvtx[2].kind), int(NvtxKind::Mark));
        QCOMPARE(t.nvtx[2].end, t.nvtx[2].start);
        QCOMPARE(t.apiSpans.size(), std::size_t(6));
        QCOMPARE(t.apiSpans[3].result, 700);
        QCOMPARE(t.apiSpans[3].correlationId, t.kernels[3].correlationId);
        // streams: 7 and 8 written (8 renamed), 9 seen only in launches, (2, 99) only in memops
        QCOMPARE(t.streams.size(), std::size_t(4));
        QCOMPARE(t.streams[0].streamId, 7u);
        QVERIFY(t.streams[0].isDefault);
        QCOMPARE(t.streams[1].streamId, 8u);
        QCOMPARE(t.streams[1].name, std::string("loader"));
        QCOMPARE(t.streams[1].priority, -1);
        QCOMPARE(t.streams[2].streamId, 9u);
        QCOMPARE(t.streams[2].contextId, 1u);
        QCOMPARE(t.streams[2].id, 0);
        QCOMPARE(t.streams[3].contextId, 2u);
        QCOMPARE(t.streams[3].streamId, 99u);
        QCOMPARE(st.streams(id).size(), std::size_t(2));
        QCOMPARE(t.firstStart(), 2'000);
        QCOMPARE(t.lastEnd(), t.kernels.back().end);
        const auto sums = st.runSummaries();
        QCOMPARE(sums.at(0).kernelCount, 5000);
    }

    // The bulk writers insert 32 rows per statement and the rest one by one: every field of every row
    // survives both paths (counts that are not multiples of 32, in several calls).
    void multiRowInsertsKeepEveryField()
    {
        const auto p = file("batched.wstrace");
        constexpr int kApi = 71, kNvtx = 40, kMem = 33;
        RowId id;
        {
            auto st = TraceStore::openForWriting(p);
            RunWriter w = st.beginRun(programInfo());
            std::vector<ApiSpan> as;
            for (int i = 0; i < kApi; ++i)
                as.push_back(api(i));
            w.addApiSpans(std::vector<ApiSpan>(as.begin(), as.begin() + 65));
            w.addApiSpans(std::vector<ApiSpan>(as.begin() + 65, as.end()));
            std::vector<NvtxRange> ns;
            for (int i = 0; i < kNvtx; ++i)
                ns.push_back(nvtx(i));
            w.addNvtxRanges(ns);
            std::vector<MemOp> ms;
            for (int i = 0; i < kMem; ++i)
                ms.push_back(memop(i));
            w.addMemOps(ms);
            id = w.runId();
            w.commit();
        }
        auto st = TraceStore::openReadOnly(p);
        const auto as = st.apiSpans(id);
        QCOMPARE(as.size(), std::size_t(kApi));
        for (int i = 0; i < kApi; ++i) {
            const ApiSpan& a = as[std::size_t(i)];
            const ApiSpan e = api(i);
            QCOMPARE(a.name, e.name);
            QCOMPARE(a.cbid, e.cbid);
            QCOMPARE(a.driver, e.driver);
            QCOMPARE(a.start, e.start);
            QCOMPARE(a.end, e.end);
            QCOMPARE(a.threadId, e.threadId);
            QCOMPARE(a.correlationId, e.correlationId);
            QCOMPARE(a.result, e.result);
            QCOMPARE(a.runId, id);
        }
        const auto ns = st.nvtxRanges(id);
        QCOMPARE(ns.size(), std::size_t(kNvtx));
        for (int i = 0; i < kNvtx; ++i) {
            const NvtxRange& r = ns[std::size_t(i)];
            const NvtxRange e = nvtx(i);
            QCOMPARE(int(r.kind), int(e.kind));
            QCOMPARE(r.domain, e.domain);
            QCOMPARE(r.name, e.name);
            QCOMPARE(r.start, e.start);
            QCOMPARE(r.end, e.end);
            QCOMPARE(r.threadId, e.threadId);
            QCOMPARE(r.depth, e.depth);
            QCOMPARE(r.color, e.color);
            QCOMPARE(r.category, e.category);
            QCOMPARE(r.closed, e.closed);
        }
        const auto ms = st.memOps(id);
        QCOMPARE(ms.size(), std::size_t(kMem));
        for (int i = 0; i < kMem; ++i) {
            const MemOp& m = ms[std::size_t(i)];
            const MemOp e = memop(i);
            QCOMPARE(int(m.kind), int(e.kind));
            QCOMPARE(m.bytes, e.bytes);
            QCOMPARE(m.start, e.start);
            QCOMPARE(m.end, e.end);
            QCOMPARE(m.correlationId, e.correlationId);
            QCOMPARE(m.streamId, e.streamId);
            QCOMPARE(m.contextId, e.contextId);
            QCOMPARE(m.graphId, e.graphId);
            QCOMPARE(m.graphNodeId, e.graphNodeId);
        }
        // a bad row anywhere in a batch refuses the whole call before anything is written
        {
            auto w = TraceStore::openForWriting(p);
            RunWriter rw = w.beginRun(programInfo());
            std::vector<ApiSpan> bad;
            for (int i = 0; i < 40; ++i)
                bad.push_back(api(i));
            bad[37].end = bad[37].start - 1;
            QVERIFY_THROWS_EXCEPTION(StoreError, rw.addApiSpans(bad));
            // a NaN alignment residual (SQLite binds it as NULL) in the middle of a 32-row INSERT
            std::vector<KernelLaunch> ls;
            for (int i = 0; i < 40; ++i)
                ls.push_back(launch(i));
            ls[20].alignResidualNs = std::numeric_limits<double>::quiet_NaN();
            QVERIFY_THROWS_EXCEPTION(StoreError, rw.addLaunches(ls));
            rw.commit();
            QCOMPARE(w.apiSpans(rw.runId()).size(), std::size_t(0));
            QCOMPARE(w.kernels(rw.runId()).size(), std::size_t(0));
        }
    }

    // The bulk writers' multi-row inserts (INSERT OR FAIL, no statement journal) keep the schema's
    // (run_id, ...) indexes: after any run, committed or rolled back, into a fresh file or one with
    // runs, each index is there, as the schema spells it, and holds every row. Schema 5: API calls and NVTX
    // ranges have no per-row index; each run's id range (runs.api_first_id ..) holds exactly its rows.
    void bulkIndexesKeptAcrossRuns()
    {
        const std::vector<std::pair<std::string, std::string>> indexes = {
            {"kernels_run", "CREATE INDEX kernels_run ON kernels(run_id)"},
            {"memops_run", "CREATE INDEX memops_run ON memops(run_id)"},
        };
        auto check = [&](const std::string& p, long long runs) {
            for (const auto& [name, sql] : indexes) {
                QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = '"
                                                    + name + "' AND sql = '" + sql + "'"),
                         1LL);
            }
            QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'"),
                     0LL);
            QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM runs"), runs);
            // every row is reachable through its index (what the viewer's range queries use)
            QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM kernels INDEXED BY kernels_run WHERE run_id > 0"),
                     wstest::rawQueryInt(p, "SELECT COUNT(*) FROM kernels"));
            QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM memops INDEXED BY memops_run WHERE run_id > 0"),
                     wstest::rawQueryInt(p, "SELECT COUNT(*) FROM memops"));
            // every row is in its run's id range, every id of a range is a row of that run, and no index is left
            for (const char* t : {"api", "nvtx"}) {
                const std::string table = std::string(t) == "api" ? "api_calls" : "nvtx_events";
                const std::string first = std::string(t) + "_first_id", last = std::string(t) + "_last_id";
                QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM " + table + " x JOIN runs r ON r.id = x.run_id "
                                                "AND x.id BETWEEN r." + first + " AND r." + last),
                         wstest::rawQueryInt(p, "SELECT COUNT(*) FROM " + table));
                QCOMPARE(wstest::rawQueryInt(p, "SELECT COALESCE(SUM(" + last + " - " + first + " + 1), 0) FROM runs"),
                         wstest::rawQueryInt(p, "SELECT COUNT(*) FROM " + table));
                QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = '"
                                                    + table + "'"),
                         0LL);
            }
            QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM api_spans"),
                     wstest::rawQueryInt(p, "SELECT COUNT(*) FROM api_calls"));
        };
        const auto p = file("bulk-indexes.wstrace");
        {
            auto st = TraceStore::openForWriting(p);
            writeProgram(st, 1500, false);  // a fresh file
        }
        check(p, 1);
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM api_spans WHERE run_id > 0"), 6LL);
        {
            auto st = TraceStore::openForWriting(p);
            writeProgram(st, 20, true);  // a file with a run
        }
        check(p, 2);
        QCOMPARE(wstest::rawQueryInt(p, "SELECT COUNT(*) FROM kernels INDEXED BY kernels_run WHERE run_id > 0"), 1520LL);

        const auto q = file("bulk-indexes-rollback.wstrace");
        {
            auto st = TraceStore::openForWriting(q);
            RunWriter w = st.beginRun(programInfo());
            w.addLaunches({launch(1), launch(2)});
            w.addApiSpans({api(1)});
            // destroyed without commit
        }
        check(q, 0);
        {
            auto st = TraceStore::openForWriting(q);
            RunWriter w = st.beginRun(programInfo());
            w.addNvtxRanges({nvtx(1)});
            w.rollback();
            writeProgram(st, 3, false);  // the same store writes on after a rollback
        }
        check(q, 1);
    }

    void incompleteRunKept()
    {
        const auto p = file("incomplete.wstrace");
        RowId id;
        {
            auto st = TraceStore::openForWriting(p);
            id = writeProgram(st, 10, true);
        }
        auto st = TraceStore::openReadOnly(p);
        const RunInfo r = st.run(id);
        QCOMPARE(int(r.status), int(RunStatus::Incomplete));
        QCOMPARE(r.failureReason, std::string("the program was killed (SIGKILL)"));
        QCOMPARE(r.exitCode, -1);
        QCOMPARE(r.exitSignal, 9);
        QCOMPARE(st.kernels(id).size(), std::size_t(10));
    }

    void rolledBackProgramLeavesNothing()
    {
        const auto p = file("rollback.wstrace");
        {
            auto st = TraceStore::openForWriting(p);
            writeProgram(st, 10, false);
            RunWriter w = st.beginRun(programInfo());
            w.addLaunches({launch(1), launch(2)});
            w.addNvtxRanges({nvtx(1)});
            w.addApiSpans({api(1)});
            w.addStreams({stream(3, false, "x")});
            // destroyed without commit
        }
        auto st = TraceStore::openReadOnly(p);
        QCOMPARE(st.runs().size(), std::size_t(1));
        const RowId id = st.runs()[0].id;
        QCOMPARE(st.kernels(id).size(), std::size_t(10));
        QCOMPARE(st.nvtxRanges(id).size(), std::size_t(10));
        QCOMPARE(st.apiSpans(id).size(), std::size_t(6));
        QCOMPARE(st.streams(id).size(), std::size_t(2));
    }

    void badRecordsRefusedOnWrite()
    {
        const auto p = file("badwrite.wstrace");
        auto st = TraceStore::openForWriting(p);
        RunWriter w = st.beginRun(programInfo());
        KernelLaunch k = launch(1);
        k.end = k.start - 1;
        QVERIFY_THROWS_EXCEPTION(StoreError, w.addLaunches({launch(0), k}));
        NvtxRange n = nvtx(1);
        n.end = n.start - 1;
        QVERIFY_THROWS_EXCEPTION(StoreError, w.addNvtxRanges({n}));
        ApiSpan a = api(1);
        a.end = a.start - 5;
        QVERIFY_THROWS_EXCEPTION(StoreError, w.addApiSpans({a}));
        QVERIFY_THROWS_EXCEPTION(StoreError, w.setProcessEnd(10, 5, 0, 0));
        w.rollback();
        QVERIFY_THROWS_EXCEPTION(StoreError, w.addLaunches({launch(0)}));
    }

    void badRowsOnRead_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("problem");
        QTest::newRow("nvtx negative") << "UPDATE nvtx_events SET end_ns = start_ns - 1 WHERE id = 3"
                                       << "NVTX range 3 ends before it starts";
        QTest::newRow("nvtx kind") << "UPDATE nvtx_events SET kind = 'weird' WHERE id = 2"
                                   << "NVTX range 2 has an unknown kind 'weird'";
        QTest::newRow("api negative") << "UPDATE api_calls SET end_ns = start_ns - 1 WHERE id = 4"
                                      << "API call 4 ends before it starts";
        // schema 5: interned names and the runs' id ranges
        QTest::newRow("api name missing") << "UPDATE api_calls SET name_id = 999 WHERE id = 4"
                                          << "API call 4 points at missing name 999";
        QTest::newRow("nvtx domain missing") << "UPDATE nvtx_events SET domain_id = 998 WHERE id = 2"
                                             << "NVTX range 2 points at missing name 998";
        QTest::newRow("nvtx name missing") << "UPDATE nvtx_events SET name_id = 997 WHERE id = 5"
                                           << "NVTX range 5 points at missing name 997";
        QTest::newRow("api range past the rows") << "UPDATE runs SET api_last_id = api_last_id + 1"
                                                 << "its API call range 1..7 does not match the rows";
        QTest::newRow("nvtx range of another run") << "UPDATE nvtx_events SET run_id = 77 WHERE id = 1"
                                                   << "its NVTX range 1..10 does not match the rows (id 1";
        QTest::newRow("view missing") << "DROP VIEW api_spans" << "view 'api_spans' missing";
        QTest::newRow("names missing") << "DROP VIEW api_spans; DROP VIEW nvtx_ranges; DROP TABLE names"
                                       << "table 'names' missing";
        QTest::newRow("launch negative") << "UPDATE kernels SET end_ns = start_ns - 1 WHERE id = 7"
                                         << "kernel 7 ends before it starts";
        QTest::newRow("memop negative") << "UPDATE memops SET end_ns = start_ns - 1 WHERE id = 2"
                                        << "memory operation 2 ends before it starts";
        QTest::newRow("table missing") << "DROP VIEW api_spans; DROP TABLE api_calls" << "table 'api_calls' missing";
        QTest::newRow("column missing") << "ALTER TABLE kernels DROP COLUMN launch_index"
                                        << "table 'kernels' lacks column 'launch_index'";
    }

    void badRowsOnRead()
    {
        QFETCH(QString, sql);
        QFETCH(QString, problem);
        const auto p = file(("bad-" + std::to_string(std::hash<std::string>()(sql.toStdString())) + ".wstrace").c_str());
        RowId id;
        {
            auto st = TraceStore::openForWriting(p);
            id = writeProgram(st, 20, false);
        }
        wstest::rawExec(p, sql.toStdString());
        const QByteArray before = wstest::fileHash(p);
        try {
            auto st = TraceStore::openReadOnly(p);
            st.loadProgram(id);
            QFAIL("a bad row was read");
        } catch (const StoreError& e) {
            QCOMPARE(e.path(), p);
            QVERIFY2(e.problem().find(problem.toStdString()) != std::string::npos, e.what());
        }
        QCOMPARE(wstest::fileHash(p), before);
    }
};

QTEST_GUILESS_MAIN(TestProgramStore)
#include "tst_program_store.moc"
