// SQLite store: write -> read gives the same data; read-only never changes the file;
// one transaction per run (streaming writer, rollback, crash); chunking; validation on write.
#include "testutil.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>
#include <cerrno>
#include <cstring>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ws;

namespace {

// The record's intervals of local warp w, sorted by start (stable).
std::vector<Interval> warpIntervals(const KernelRecord& k, RowId w)
{
    std::vector<Interval> v;
    for (const Interval& iv : k.intervals)
        if (iv.warpId == w)
            v.push_back(iv);
    std::stable_sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
    return v;
}

// What a process without write permission on the file finds (exit code for runUnprivileged):
// 0 it reads both runs and openForWriting refuses with a StoreError naming the problem; 1 it
// cannot read the file; 2 openForWriting opened it; 3 the refusal does not say "read-only";
// 4 any other exception.
int readOnlyFileChecks(const std::string& path)
{
    try {
        if (TraceStore::openReadOnly(path).runs().size() != 2)
            return 1;
        try {
            auto st = TraceStore::openForWriting(path);
            return 2;
        } catch (const NeedsMigrationError&) {
            return 4;
        } catch (const StoreError& e) {
            if (e.problem().find("read-only") == std::string::npos)
                return 3;
        }
        return 0;
    } catch (...) {
        return 4;
    }
}

// Runs f in a child process without the right to ignore file permissions and returns its exit
// code. As root (CI and the GPU machine run as root) the child first enters a new user namespace:
// it keeps its uid outside, so a root-owned file's owner bits apply, but it loses every capability
// there (CAP_DAC_OVERRIDE included). Returns -1 and says why in `why` if that is impossible.
template <class F>
int runUnprivileged(F f, QString& why)
{
    const pid_t pid = fork();
    if (pid < 0) {
        why = QStringLiteral("fork failed: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
        return -1;
    }
    if (pid == 0) {
        if (geteuid() == 0 && unshare(CLONE_NEWUSER) != 0)
            _exit(100 + (errno & 0x1f));
        _exit(f());
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        why = QStringLiteral("the unprivileged child did not exit normally");
        return -1;
    }
    const int code = WEXITSTATUS(status);
    if (code >= 100) {
        why = QStringLiteral("cannot drop the right to ignore file permissions: unshare(CLONE_NEWUSER) failed: %1 "
                             "(user namespaces disabled?)")
                  .arg(QString::fromLocal8Bit(std::strerror(code - 100)));
        return -1;
    }
    return code;
}

}  // namespace

class TestStore : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string file(const char* name) { return (m_dir.path() + "/" + name).toStdString(); }

    // Compares a loaded trace with the record it came from.
    void compareKernel(const KernelRecord& k, const KernelTrace& t)
    {
        QCOMPARE(t.ctas.size(), k.ctas.size());
        QCOMPARE(t.lanes.size(), k.warps.size());
        QCOMPARE(t.intervalCount(), k.intervals.size());
        QCOMPARE(t.launch.name, k.launch.name);
        QCOMPARE(t.launch.start, k.launch.start);
        QCOMPARE(t.launch.end, k.launch.end);
        QCOMPARE(t.launch.traced, k.launch.traced);
        QCOMPARE(t.launch.grid[0], k.launch.grid[0]);
        QCOMPARE(t.launch.block[0], k.launch.block[0]);
        QCOMPARE(t.launch.dynamicSmemBytes, k.launch.dynamicSmemBytes);
        // CTAs sorted by (SM, start)
        for (std::size_t i = 1; i < t.ctas.size(); ++i)
            QVERIFY(std::tie(t.ctas[i - 1].smId, t.ctas[i - 1].start) <= std::tie(t.ctas[i].smId, t.ctas[i].start));
        // Map loaded CTA -> record CTA via blockLinear (unique in these tests)
        std::map<int, std::size_t> recCta;
        for (std::size_t i = 0; i < k.ctas.size(); ++i)
            recCta[k.ctas[i].blockLinear] = i;
        for (const Cta& c : t.ctas) {
            const Cta& r = k.ctas[recCta.at(c.blockLinear)];
            QCOMPARE(c.smId, r.smId);
            QCOMPARE(c.start, r.start);
            QCOMPARE(c.end, r.end);
            QCOMPARE(c.tileM, r.tileM);
            QCOMPARE(c.tileN, r.tileN);
            QCOMPARE(c.nsPerCycle, r.nsPerCycle);
        }
        // Lanes: ordered (CTA order, warp index); intervals identical to the record's (sorted per warp)
        for (std::size_t li = 0; li < t.lanes.size(); ++li) {
            const Lane& l = t.lanes[li];
            if (li > 0)
                QVERIFY(std::tie(t.lanes[li - 1].ctaIndex, t.lanes[li - 1].warpIndex) < std::tie(l.ctaIndex, l.warpIndex));
            const std::size_t rc = recCta.at(t.ctas[static_cast<std::size_t>(l.ctaIndex)].blockLinear);
            RowId rw = -1;
            for (std::size_t w = 0; w < k.warps.size(); ++w)
                if (static_cast<std::size_t>(k.warps[w].ctaId) == rc && k.warps[w].warpIndex == l.warpIndex)
                    rw = static_cast<RowId>(w);
            QVERIFY(rw >= 0);
            const Warp& W = k.warps[static_cast<std::size_t>(rw)];
            QCOMPARE(l.warpgroup, W.warpgroup);
            QCOMPARE(l.role, W.role);
            QCOMPARE(l.roleName, W.roleName);
            const auto ref = warpIntervals(k, rw);
            QCOMPARE(l.size(), ref.size());
            for (std::size_t i = 0; i < ref.size(); ++i) {
                QCOMPARE(l.start[i], ref[i].start);
                QCOMPARE(TimeNs(l.duration[i]), std::min<TimeNs>(ref[i].duration, INT32_MAX));
                QCOMPARE(l.kind[i], ref[i].kind);
                QCOMPARE(l.slot[i], ref[i].slot);
                QCOMPARE(l.kstep[i], ref[i].kstep);
            }
        }
        // Loads: sorted by issue, same multiset
        QCOMPARE(t.loads.size(), k.loads.size());
        for (std::size_t i = 1; i < t.loads.size(); ++i)
            QVERIFY(t.loads[i - 1].issue <= t.loads[i].issue);
        auto key = [&](const LoadTransfer& x, int block) {
            return std::make_tuple(block, x.kstep, x.slot, x.issue, x.ready, x.bytes);
        };
        std::vector<std::tuple<int, int, int, TimeNs, TimeNs, std::int64_t>> a, b;
        for (const auto& x : k.loads)
            a.push_back(key(x, k.ctas[static_cast<std::size_t>(x.ctaId)].blockLinear));
        for (const auto& x : t.loads)
            b.push_back(key(x, t.ctas[static_cast<std::size_t>(x.ctaId)].blockLinear));
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        QVERIFY(a == b);
        QCOMPARE(t.tiles.size(), k.tiles.size());
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void roundTripSmall()
    {
        const auto path = file("small.wstrace");
        const RunRecord rec = wstest::smallRun();
        RowId runId;
        {
            auto st = TraceStore::openForWriting(path);
            QVERIFY(!st.isReadOnly());
            runId = st.writeRun(rec);
        }
        auto st = TraceStore::openReadOnly(path);
        QCOMPARE(st.schemaVersion(), kSchemaVersion);
        const auto runs = st.runs();
        QCOMPARE(runs.size(), std::size_t(1));
        const RunInfo& r = runs[0];
        QCOMPARE(r.id, runId);
        QCOMPARE(r.variant, rec.info.variant);
        QCOMPARE(r.m, 256);
        QCOMPARE(r.synthetic, true);
        QCOMPARE(r.device.name, rec.info.device.name);
        QCOMPARE(r.device.smCount, 4);
        QCOMPARE(r.notes, rec.info.notes);
        QCOMPARE(r.status, RunStatus::Complete);
        const auto kernels = st.kernels(runId);
        QCOMPARE(kernels.size(), std::size_t(1));
        const KernelTrace t = st.loadKernel(kernels[0].id);
        compareKernel(rec.kernels[0], t);
        QCOMPARE(t.run.id, runId);
        // Tiles: warp ids are the loaded warps' ids, CTA index into ctas
        for (const TileSpan& ts : t.tiles) {
            QVERIFY(ts.ctaId >= 0 && ts.ctaId < RowId(t.ctas.size()));
            const auto it = std::find_if(t.lanes.begin(), t.lanes.end(), [&](const Lane& l) { return l.warpId == ts.warpId; });
            QVERIFY(it != t.lanes.end());
            QCOMPARE(it->role, WarpRole::Consumer);
        }
        // Stall samples
        QCOMPARE(t.stalls.size(), std::size_t(1));
        QCOMPARE(t.stalls[0].count, std::int64_t(7));
        QCOMPARE(t.stalls[0].role, WarpRole::Consumer);
        QCOMPARE(t.stalls[0].stage, std::string("wait_data"));
        QCOMPARE(t.stalls[0].pcOffset, std::uint64_t(0x40));
        // Mem ops and metrics (Metric::kernelId index 1 -> real kernel id)
        const auto mops = st.memOps(runId);
        QCOMPARE(mops.size(), std::size_t(1));
        QCOMPARE(mops[0].kind, MemOpKind::HtoD);
        QCOMPARE(mops[0].bytes, std::int64_t(1 << 20));
        const auto ms = st.metrics(runId);
        QCOMPARE(ms.size(), std::size_t(2));
        bool sawKernel = false, sawRun = false;
        for (const Metric& m : ms) {
            if (m.name == "custom_metric") {
                QCOMPARE(m.kernelId, kernels[0].id);
                QCOMPARE(m.value, 42.5);
                sawKernel = true;
            } else if (m.name == "run_metric") {
                QCOMPARE(m.kernelId, RowId(0));
                sawRun = true;
            }
        }
        QVERIFY(sawKernel && sawRun);
        // Summaries
        const auto ks = st.kernelSummaries(runId);
        QCOMPARE(ks[0].intervalCount, std::int64_t(rec.kernels[0].intervals.size()));
        QCOMPARE(ks[0].ctaCount, std::int64_t(2));
        QCOMPARE(ks[0].warpCount, std::int64_t(4));
        QCOMPARE(ks[0].loadCount, std::int64_t(6));
        QCOMPARE(ks[0].stallSampleCount, std::int64_t(7));
        const auto rs = st.runSummaries();
        QCOMPARE(rs[0].kernelCount, std::int64_t(1));
        QCOMPARE(rs[0].intervalCount, std::int64_t(rec.kernels[0].intervals.size()));
        // Writing through a read-only store is refused
        QVERIFY_THROWS_EXCEPTION(StoreError, st.writeRun(rec));
    }

    // Schema 6: the outer scopes of a warp (bracket lanes) come back with the lane's warp id, name, depth
    // and times, sorted by (warp, depth, start); a kernel without scopes loads none.
    void scopeSpansRoundTrip()
    {
        const auto path = file("scopes.wstrace");
        RunRecord rec = wstest::smallRun();
        KernelRecord& k = rec.kernels[0];
        QVERIFY(k.warps.size() >= 2);
        const TimeNs t0 = k.launch.start;
        k.scopes = {{1, 1, "load_and_add", t0 + 20, t0 + 80},
                    {1, 0, "kernel", t0 + 10, t0 + 90},
                    {0, 0, "outer \u00b5 scope", t0 + 5, t0 + 5}};  // zero-length scopes are kept
        const std::vector<Warp> warps = k.warps;
        rec.kernels.push_back(rec.kernels[0]);  // k dangles from here
        rec.kernels[1].scopes.clear();
        RowId runId;
        {
            auto st = TraceStore::openForWriting(path);
            runId = st.writeRun(rec);
        }
        QCOMPARE(wstest::rawQueryInt(path, "SELECT COUNT(*) FROM scope_spans"), 3LL);
        auto st = TraceStore::openReadOnly(path);
        const auto kernels = st.kernels(runId);
        QCOMPARE(kernels.size(), std::size_t(2));
        const KernelTrace t = st.loadKernel(kernels[0].id);
        QCOMPARE(t.scopes.size(), std::size_t(3));
        auto laneOf = [&](RowId warpId) -> const Lane* {
            for (const Lane& l : t.lanes)
                if (l.warpId == warpId)
                    return &l;
            return nullptr;
        };
        // warp ids grow with the local index (written in order): local warp 0 first
        const Lane* l0 = laneOf(t.scopes[0].warpId);
        QVERIFY(l0);
        QCOMPARE(l0->warpIndex, warps[0].warpIndex);
        QCOMPARE(l0->ctaIndex >= 0, true);
        QCOMPARE(t.scopes[0].name, std::string("outer \u00b5 scope"));
        QCOMPARE(t.scopes[0].start, t0 + 5);
        QCOMPARE(t.scopes[0].end, t0 + 5);
        QCOMPARE(t.scopes[1].name, std::string("kernel"));
        QCOMPARE(t.scopes[1].depth, 0);
        QCOMPARE(t.scopes[1].start, t0 + 10);
        QCOMPARE(t.scopes[1].end, t0 + 90);
        QCOMPARE(t.scopes[2].name, std::string("load_and_add"));
        QCOMPARE(t.scopes[2].depth, 1);
        QCOMPARE(t.scopes[2].warpId, t.scopes[1].warpId);
        QVERIFY(t.scopes[1].warpId != t.scopes[0].warpId);
        const Lane* l1 = laneOf(t.scopes[1].warpId);
        QVERIFY(l1);
        QCOMPARE(l1->warpIndex, warps[1].warpIndex);
        QVERIFY(st.loadKernel(kernels[1].id).scopes.empty());
    }

    void roundTripSyntheticAllPatterns_data()
    {
        QTest::addColumn<int>("pattern");
        QTest::newRow("sync") << int(SyntheticPattern::Sync);
        QTest::newRow("multistage") << int(SyntheticPattern::Multistage);
        QTest::newRow("warp_specialized") << int(SyntheticPattern::WarpSpecialized);
        QTest::newRow("pingpong") << int(SyntheticPattern::Pingpong);
    }
    void roundTripSyntheticAllPatterns()
    {
        QFETCH(int, pattern);
        SyntheticParams p;
        p.pattern = static_cast<SyntheticPattern>(pattern);
        p.ctas = 10;
        p.smCount = 4;  // several waves
        p.tilesPerCta = 2;
        p.kstepsPerTile = 8;
        const RunRecord rec = generateSynthetic(p);
        const auto path = file(("syn_" + std::to_string(pattern) + ".wstrace").c_str());
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(rec);
        }
        auto st = TraceStore::openReadOnly(path);
        const auto runs = st.runs();
        QCOMPARE(runs.size(), std::size_t(1));
        QVERIFY(runs[0].synthetic);
        const auto kernels = st.kernels(runs[0].id);
        QCOMPARE(kernels.size(), rec.kernels.size());
        const auto traced = std::find_if(kernels.begin(), kernels.end(), [](const KernelLaunch& k) { return k.traced; });
        QVERIFY(traced != kernels.end());
        const KernelTrace t = st.loadKernel(traced->id);
        compareKernel(rec.kernels[0], t);
        // The traced launch gets the stall samples of the untraced launch of the same rung.
        QVERIFY(!t.stalls.empty());
        QCOMPARE(t.stalls.size(), rec.kernels[1].stalls.size());
        QVERIFY(st.stallSamples(traced->id).empty());
    }

    void manyChunksUnsortedInterleaved()
    {
        // One warp with 3 chunks of intervals, given in reverse order and interleaved with another warp.
        RunRecord rec = wstest::smallRun(1, 1);
        KernelRecord& k = rec.kernels[0];
        k.intervals.clear();
        const int n = 20000;
        for (int i = n - 1; i >= 0; --i) {
            k.intervals.push_back({1, IntervalKind::MmaWait, std::int16_t(i % 7 - 1), i - 5, 1000 + 3 * TimeNs(i), i % 3});
            if (i % 10 == 0)
                k.intervals.push_back({0, IntervalKind::IssueLoad, 0, i, 1000 + 3 * TimeNs(i) + 1, 1});
        }
        // zero-length and huge (clamped) intervals, equal starts keep their input order
        k.intervals.push_back({0, IntervalKind::Setup, -1, -1, 999, 0});
        k.intervals.push_back({0, IntervalKind::Other, -1, -1, 999, TimeNs(1) << 40});
        k.launch.end = 1000 + 3 * n + 100;
        k.ctas[0].end = k.launch.end;
        const auto path = file("chunks.wstrace");
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(rec);
        }
        auto st = TraceStore::openReadOnly(path);
        const auto t = st.loadKernel(st.kernels(st.runs()[0].id)[0].id);
        compareKernel(k, t);
        const Lane& prod = t.lanes[0];
        QCOMPARE(prod.kind[0], IntervalKind::Setup);
        QCOMPARE(prod.duration[1], INT32_MAX);
        QCOMPARE(t.lanes[1].size(), std::size_t(n));
    }

    void readOnlyNeverChangesTheFile()
    {
        const auto path = file("ro.wstrace");
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(wstest::smallRun());
            st.writeRun(wstest::smallRun(3, 2));
        }
        // At rest: one self-contained file, no side files.
        QVERIFY(!std::filesystem::exists(path + "-wal"));
        QVERIFY(!std::filesystem::exists(path + "-shm"));
        const QByteArray before = wstest::fileHash(path);
        const auto mtime = std::filesystem::last_write_time(path);
        {
            auto st = TraceStore::openReadOnly(path);
            QVERIFY(st.isReadOnly());
            for (const RunInfo& r : st.runs())
                for (const KernelLaunch& k : st.kernels(r.id))
                    QVERIFY(st.loadKernel(k.id).intervalCount() > 0);
            QVERIFY(TraceStore::checkFile(path).fileVersion == kSchemaVersion);
        }
        QCOMPARE(wstest::fileHash(path), before);
        QVERIFY(std::filesystem::last_write_time(path) == mtime);
        QVERIFY(!std::filesystem::exists(path + "-wal"));
        QVERIFY(!std::filesystem::exists(path + "-shm"));

        // Also a read-only file, checked by a process that has to respect the permission bits
        // (as root: in a user namespace, see runUnprivileged).
        std::filesystem::permissions(path, std::filesystem::perms::owner_read, std::filesystem::perm_options::replace);
        QString why;
        const int code = runUnprivileged([&] { return readOnlyFileChecks(path); }, why);
        std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                                     std::filesystem::perm_options::replace);
        QCOMPARE(wstest::fileHash(path), before);
        QVERIFY(!std::filesystem::exists(path + "-wal"));
        QVERIFY(!std::filesystem::exists(path + "-journal"));
        if (code < 0)
            QSKIP(qPrintable("read-only permission case not checked: " + why));
        QCOMPARE(code, 0);  // see readOnlyFileChecks for what each code means
    }

    void appendRuns()
    {
        const auto path = file("append.wstrace");
        for (int i = 0; i < 3; ++i) {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(wstest::smallRun(1 + i, 2));
        }
        auto st = TraceStore::openReadOnly(path);
        const auto runs = st.runs();
        QCOMPARE(runs.size(), std::size_t(3));
        for (int i = 0; i < 3; ++i)
            QCOMPARE(st.kernelSummaries(runs[std::size_t(i)].id)[0].ctaCount, std::int64_t(1 + i));
    }

    void streamingWriterCommitAndRollback()
    {
        const auto path = file("stream.wstrace");
        const RunRecord rec = wstest::smallRun();
        {
            auto st = TraceStore::openForWriting(path);
            {
                RunWriter w = st.beginRun(rec.info);
                const RowId kid = w.addKernel(rec.kernels[0]);
                w.addMemOps(rec.memOps);
                w.addMetrics({{0, kid, "kernel", "m1", 3.0, "ns"}});
                w.setHasStalls(true);
                w.setNotes("streamed");
                // a second run cannot start while one is open
                QVERIFY_THROWS_EXCEPTION(StoreError, st.writeRun(rec));
                w.commit();
                QVERIFY_THROWS_EXCEPTION(StoreError, w.addKernel(rec.kernels[0]));
            }
            {
                RunWriter w = st.beginRun(rec.info);
                w.addKernel(rec.kernels[0]);
                // destroyed without commit: rolled back
            }
            {
                RunWriter w = st.beginRun(rec.info);
                w.addKernel(rec.kernels[0]);
                w.setFailed("event buffer overflow in CTA 3");
                w.commit();
            }
        }
        auto st = TraceStore::openReadOnly(path);
        const auto runs = st.runs();
        QCOMPARE(runs.size(), std::size_t(2));
        QCOMPARE(runs[0].notes, std::string("streamed"));
        QVERIFY(runs[0].hasStalls);
        QCOMPARE(st.metrics(runs[0].id).size(), std::size_t(1));
        QCOMPARE(runs[1].status, RunStatus::Failed);
        QCOMPARE(runs[1].failureReason, std::string("event buffer overflow in CTA 3"));
        compareKernel(rec.kernels[0], st.loadKernel(st.kernels(runs[0].id)[0].id));
    }

    void crashMidRunLeavesEarlierRunsIntact_data()
    {
        QTest::addColumn<bool>("sigkill");
        QTest::addColumn<bool>("firstWrite");  // the stream is the connection's first write
        QTest::newRow("_exit") << false << false;
        QTest::newRow("SIGKILL") << true << false;
        QTest::newRow("SIGKILL, first write of the connection") << true << true;
    }
    void crashMidRunLeavesEarlierRunsIntact()
    {
        QFETCH(bool, sigkill);
        QFETCH(bool, firstWrite);
        const auto path = file(!sigkill ? "crash_exit.wstrace" : firstWrite ? "crash_first.wstrace" : "crash_kill.wstrace");
        const RunRecord rec = wstest::smallRun();
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(rec);
        }
        const pid_t pid = fork();
        if (pid == 0) {
            // Child: append a committed run, then die in the middle of another one.
            try {
                auto st = TraceStore::openForWriting(path);
                if (!firstWrite)
                    st.writeRun(rec);
                RunWriter w = st.beginRun(rec.info);
                w.addKernel(rec.kernels[0]);
                w.addKernel(rec.kernels[0]);
                for (int i = 0; firstWrite && i < 3000; ++i)  // more than SQLite's page cache holds
                    w.addKernel(rec.kernels[0]);
                if (sigkill)
                    raise(SIGKILL);
                _exit(3);  // no destructors, no rollback, no close
            } catch (...) {
                _exit(4);
            }
        }
        int status = 0;
        QCOMPARE(waitpid(pid, &status, 0), pid);
        if (sigkill)
            QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        else
            QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 3);
        // Reading works (hot WAL recovered), earlier runs intact, no partial run.
        {
            auto st = TraceStore::openReadOnly(path);
            const auto runs = st.runs();
            QCOMPARE(runs.size(), std::size_t(firstWrite ? 1 : 2));
            for (const RunInfo& r : runs) {
                const auto ks = st.kernels(r.id);
                QCOMPARE(ks.size(), std::size_t(1));
                compareKernel(rec.kernels[0], st.loadKernel(ks[0].id));
            }
        }
        // And the file can be appended to again.
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(rec);
        }
        QCOMPARE(TraceStore::openReadOnly(path).runs().size(), std::size_t(firstWrite ? 2 : 3));
    }

    // A writeRun killed under the rollback journal (the first write on an existing file, see
    // refusedWritesLeaveFileIdentical) leaves a hot journal: read-only opening says what to do,
    // and the next writer rolls it back to the file as it was.
    void killedFirstWriteLeavesHotJournal()
    {
        const auto path = file("hot_journal.wstrace");
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(wstest::smallRun());
        }
        const QByteArray before = wstest::fileHash(path);
        const pid_t pid = fork();
        if (pid == 0) {
            // what a killed writeRun leaves: a big transaction under the rollback journal, with
            // pages already spilled into the file
            sqlite3* db = nullptr;
            sqlite3_open(path.c_str(), &db);
            sqlite3_exec(db, "PRAGMA cache_size = 10; BEGIN IMMEDIATE; CREATE TABLE scratch(x);", nullptr, nullptr, nullptr);
            for (int i = 0; i < 5000; ++i)
                sqlite3_exec(db, "INSERT INTO scratch VALUES(randomblob(500))", nullptr, nullptr, nullptr);
            raise(SIGKILL);
            _exit(3);
        }
        int status = 0;
        QCOMPARE(waitpid(pid, &status, 0), pid);
        QVERIFY(WIFSIGNALED(status));
        QVERIFY(std::filesystem::exists(path + "-journal"));
        try {
            TraceStore::openReadOnly(path);
            QFAIL("opened a file with a hot journal read-only");
        } catch (const StoreError& e) {
            QVERIFY2(e.problem().find("interrupted write") != std::string::npos, e.what());
        }
        { auto st = TraceStore::openForWriting(path); }
        QVERIFY(!std::filesystem::exists(path + "-journal"));
        QCOMPARE(wstest::fileHash(path), before);
        QCOMPARE(TraceStore::openReadOnly(path).runs().size(), std::size_t(1));
    }

    void invalidRecordsAreRefusedAtomically_data()
    {
        QTest::addColumn<int>("damage");
        QTest::newRow("interval -> missing warp") << 0;
        QTest::newRow("negative interval duration") << 1;
        QTest::newRow("warp -> missing CTA") << 2;
        QTest::newRow("load ready before issue") << 3;
        QTest::newRow("kernel ends before start") << 4;
        QTest::newRow("metric -> missing kernel") << 5;
        QTest::newRow("CTA ends before start") << 6;
        QTest::newRow("scope -> missing warp") << 7;
        QTest::newRow("scope ends before start") << 8;
    }
    void invalidRecordsAreRefusedAtomically()
    {
        QFETCH(int, damage);
        const auto path = file(("invalid_" + std::to_string(damage) + ".wstrace").c_str());
        RunRecord rec = wstest::smallRun();
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(rec);
        }
        const QByteArray good = wstest::fileHash(path);
        KernelRecord& k = rec.kernels[0];
        switch (damage) {
        case 0: k.intervals[3].warpId = 99; break;
        case 1: k.intervals[3].duration = -1; break;
        case 2: k.warps[1].ctaId = 7; break;
        case 3: k.loads[0].ready = k.loads[0].issue - 1; break;
        case 4: k.launch.end = k.launch.start - 1; break;
        case 5: rec.metrics.push_back({0, 5, "kernel", "x", 1, ""}); break;
        case 6: k.ctas[1].end = k.ctas[1].start - 1; break;
        case 7: k.scopes.push_back({99, 0, "kernel", k.launch.start, k.launch.end}); break;
        case 8: k.scopes.push_back({0, 0, "kernel", k.launch.end, k.launch.start}); break;
        }
        {
            auto st = TraceStore::openForWriting(path);
            try {
                st.writeRun(rec);
                QFAIL("invalid record was written");
            } catch (const StoreError& e) {
                QCOMPARE(e.path(), path);
                QVERIFY(!e.problem().empty());
            }
            QCOMPARE(st.runs().size(), std::size_t(1));
        }
        QCOMPARE(TraceStore::openReadOnly(path).runs().size(), std::size_t(1));
        // a refused write leaves the file byte-identical, with no side files
        QCOMPARE(wstest::fileHash(path), good);
        QVERIFY(!std::filesystem::exists(path + "-wal"));
        QVERIFY(!std::filesystem::exists(path + "-shm"));
    }

    // Writes that are refused leave an existing file byte-identical, with no side files: opening
    // for writing and closing, a run, metrics or stall stages refused, and openForWriting on a file
    // that is not a Warpstage trace. A committed write then switches the connection to WAL (the
    // -wal file exists while it is open).
    void refusedWritesLeaveFileIdentical()
    {
        const auto path = file("refused.wstrace");
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(wstest::smallRun());
        }
        const QByteArray good = wstest::fileHash(path);
        auto unchanged = [&](const char* what) {
            QVERIFY2(wstest::fileHash(path) == good, what);
            QVERIFY2(!std::filesystem::exists(path + "-wal"), what);
            QVERIFY2(!std::filesystem::exists(path + "-shm"), what);
            QVERIFY2(!std::filesystem::exists(path + "-journal"), what);
        };
        { auto st = TraceStore::openForWriting(path); }
        unchanged("open for writing, then close");
        {
            auto st = TraceStore::openForWriting(path);
            RunRecord bad = wstest::smallRun();
            bad.kernels[0].loads[1].ready = bad.kernels[0].loads[1].issue - 1;
            QVERIFY_THROWS_EXCEPTION(StoreError, st.writeRun(bad));
            QVERIFY_THROWS_EXCEPTION(StoreError, st.writeMetrics(12345, {{12345, 0, "kernel", "a", 1.0, "ns"}}));
            const RowId run = st.runs()[0].id;
            QVERIFY_THROWS_EXCEPTION(StoreError, st.updateStallStages(run, {{run + 100, {}}}, "\nnot this"));
        }
        unchanged("run, metrics and stall stages refused");
        // (a streaming run switches to WAL in beginRun, see TraceStore::Impl::useWal: rolled back,
        // it leaves the runs as they were but not the header's change counter)
        // a committed run: WAL from then on, and the file at rest again after close
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(wstest::smallRun(1, 2));
            st.writeRun(wstest::smallRun(1, 3));
            QVERIFY(std::filesystem::exists(path + "-wal"));
        }
        QVERIFY(wstest::fileHash(path) != good);
        QVERIFY(!std::filesystem::exists(path + "-wal"));
        QVERIFY(!std::filesystem::exists(path + "-shm"));
        QCOMPARE(TraceStore::openReadOnly(path).runs().size(), std::size_t(3));

        // not a Warpstage trace: refused, untouched
        const auto other = file("other_app.db");
        wstest::rawExec(other, "CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes(text) VALUES('x');");
        const QByteArray otherHash = wstest::fileHash(other);
        QVERIFY_THROWS_EXCEPTION(StoreError, TraceStore::openForWriting(other));
        QCOMPARE(wstest::fileHash(other), otherHash);
        QVERIFY(!std::filesystem::exists(other + "-wal"));
        QVERIFY(!std::filesystem::exists(other + "-journal"));
    }

    void metricsUpsert()
    {
        const auto path = file("metrics.wstrace");
        auto st = TraceStore::openForWriting(path);
        const RowId run = st.writeRun(wstest::smallRun());
        st.writeMetrics(run, {{run, 0, "kernel", "a", 1.0, "ns"}, {run, 0, "kernel", "b", std::nan(""), "ratio"}});
        st.writeMetrics(run, {{run, 0, "kernel", "a", 2.0, "ns"}});
        int seen = 0;
        for (const Metric& m : st.metrics(run)) {
            if (m.name == "a") {
                QCOMPARE(m.value, 2.0);
                ++seen;
            }
            if (m.name == "b") {
                QVERIFY(std::isnan(m.value));  // NULL in the file
                ++seen;
            }
        }
        QCOMPARE(seen, 2);
        QVERIFY_THROWS_EXCEPTION(StoreError, st.writeMetrics(run + 100, {{0, 0, "kernel", "a", 1.0, "ns"}}));
    }

    void stallStagesUpdateOrNothing()
    {
        const auto path = file("stages.wstrace");
        SyntheticParams p;
        p.ctas = 4;
        p.smCount = 4;
        p.kstepsPerTile = 8;
        auto st = TraceStore::openForWriting(path);
        const RowId run = st.writeRun(generateSynthetic(p));
        RowId kernel = 0;
        for (const auto& k : st.kernels(run))
            if (!st.stallSamples(k.id).empty()) kernel = k.id;
        QVERIFY(kernel != 0);
        const std::vector<StallSample> before = st.stallSamples(kernel);
        std::vector<StallSample> after = before;
        for (auto& smp : after) {
            smp.stage = "wait_order";
            smp.role = WarpRole::Producer;
        }
        st.updateStallStages(run, {{kernel, after}}, "\nrestaged");
        for (const auto& smp : st.stallSamples(kernel)) {
            QCOMPARE(smp.stage, std::string("wait_order"));
            QCOMPARE(smp.role, WarpRole::Producer);
        }
        QVERIFY(st.run(run).notes.find("\nrestaged") != std::string::npos);
        // samples that do not match the stored ones (one missing, or another PC) change nothing
        std::vector<StallSample> shorter(before.begin(), before.end() - 1);
        QVERIFY_THROWS_EXCEPTION(StoreError, st.updateStallStages(run, {{kernel, shorter}}, "\nnot this"));
        std::vector<StallSample> otherPc = before;
        otherPc.back().pcOffset += 16;
        QVERIFY_THROWS_EXCEPTION(StoreError, st.updateStallStages(run, {{kernel, otherPc}}, "\nnot this"));
        QVERIFY_THROWS_EXCEPTION(StoreError, st.updateStallStages(run + 100, {{kernel, before}}, "\nnot this"));
        QCOMPARE(st.stallSamples(kernel).front().stage, std::string("wait_order"));
        QVERIFY(st.run(run).notes.find("not this") == std::string::npos);
        auto ro = TraceStore::openReadOnly(path);
        QVERIFY_THROWS_EXCEPTION(StoreError, ro.updateStallStages(run, {{kernel, before}}, ""));
    }

    void lookups()
    {
        const auto path = file("lookups.wstrace");
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(wstest::smallRun());
        }
        auto st = TraceStore::openReadOnly(path);
        QVERIFY_THROWS_EXCEPTION(StoreError, st.run(12345));
        QVERIFY_THROWS_EXCEPTION(StoreError, st.kernel(12345));
        QVERIFY_THROWS_EXCEPTION(StoreError, st.loadKernel(12345));
        QVERIFY(st.kernels(12345).empty());
    }
};

QTEST_GUILESS_MAIN(TestStore)
#include "tst_store.moc"
