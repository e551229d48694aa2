// The dependency graph and the critical path (issue 13, docs/whatif.md): hand-made traces whose critical path is
// known, the attribution summing to the kernel time, the tail, and the reduced analysis of a kernel without
// loads or roles.
#include "warpstage/critpath.h"

#include "whatif_testutil.h"

#include <QtTest>

#include <numeric>

using namespace ws;
using K = IntervalKind;

namespace {

double sum(const CriticalPath& p)
{
    return std::accumulate(p.attributionNs.begin(), p.attributionNs.end(), 0.0);
}

double at(const CriticalPath& p, Cause c) { return p.attributionNs[int(c)]; }

}  // namespace

class TestCritPath : public QObject {
    Q_OBJECT

private slots:
    void causeNames()
    {
        QCOMPARE(QString::fromUtf8(causeName(Cause::LoadLatency).data()), QStringLiteral("load_latency"));
        QCOMPARE(QString::fromUtf8(causeName(Cause::BackPressure).data()), QStringLiteral("back_pressure"));
        QCOMPARE(QString::fromUtf8(causeName(Cause::Tail).data()), QStringLiteral("tail"));
        for (int c = 0; c < kCauseCount; ++c)
            QVERIFY(!causeLabel(Cause(c)).empty());
    }

    // The path, from the end: kernel end <- CTA end <- Store [345,400] <- Release k3 <- MmaIssue k3 <- WaitData k3
    // (bound by the load: issue 195 + flight 100, woken 10 later) <- load k3 in flight [195,295] <- IssueLoad k3
    // <- WaitSlot k3 (bound by the Release of k1 at 185, +10) <- MmaIssue k1 <- WaitData k1 (data there already:
    // its own 5 ns) <- Release k0 <- MmaIssue k0 <- WaitData k0 (bound: 10 + 100) <- load k0 [10,110] <- Setup
    // [0,10] <- CTA start <- launch (-5).
    void handMadePipeline()
    {
        const KernelTrace t = wstest::pipelineTrace();
        const CriticalPath p = criticalPath(t);
        QCOMPARE(p.kernelStart, TimeNs(-5));
        QCOMPARE(p.kernelEnd, TimeNs(410));
        QCOMPARE(sum(p), 415.0);
        QCOMPARE(at(p, Cause::Launch), 15.0);          // -5..0 and 400..410
        QCOMPARE(at(p, Cause::Prologue), 10.0);        // Setup
        QCOMPARE(at(p, Cause::LoadLatency), 215.0);    // 100 + 5 + 100 + 10
        QCOMPARE(at(p, Cause::MmaThroughput), 110.0);  // MmaIssue k0, Release k0, MmaIssue k1, MmaIssue k3, Release k3
        QCOMPARE(at(p, Cause::BackPressure), 10.0);
        QCOMPARE(at(p, Cause::Epilogue), 55.0);
        QCOMPARE(at(p, Cause::Tail), 0.0);
        QCOMPARE(p.graph.stages, 2);
        QCOMPARE(p.graph.dataEdges, std::int64_t(4));
        QCOMPARE(p.graph.slotEdges, std::int64_t(2));
        QCOMPARE(p.graph.unexplainedWaits, std::int64_t(0));
        QVERIFY(p.graph.hasProducer);
        QVERIFY(!p.graph.reduced);

        // Steps are contiguous, in time order, and name the phases the GUI highlights.
        QVERIFY(!p.steps.empty());
        QCOMPARE(p.steps.front().start, TimeNs(-5));
        QCOMPARE(p.steps.back().end, TimeNs(410));
        for (std::size_t i = 1; i < p.steps.size(); ++i)
            QCOMPARE(p.steps[i].start, p.steps[i - 1].end);
        bool flightK3 = false, waitSlotK3 = false, releaseK1 = false;
        for (const PathStep& s : p.steps) {
            if (s.what == PathStep::What::LoadFlight && s.kstep == 3) {
                flightK3 = true;
                QCOMPARE(s.start, TimeNs(195));
                QCOMPARE(s.end, TimeNs(295));
                QCOMPARE(s.lane, 0);
                QCOMPARE(t.lanes[0].kind[std::size_t(s.interval)], K::IssueLoad);
            }
            if (s.what == PathStep::What::Interval && s.lane == 0 && s.interval >= 0
                && t.lanes[0].kind[std::size_t(s.interval)] == K::WaitSlot) {
                waitSlotK3 = t.lanes[0].kstep[std::size_t(s.interval)] == 3;
                QCOMPARE(s.cause, Cause::BackPressure);
            }
            if (s.lane == 1 && s.interval >= 0 && t.lanes[1].kind[std::size_t(s.interval)] == K::Release
                && t.lanes[1].kstep[std::size_t(s.interval)] == 1)
                releaseK1 = true;
        }
        QVERIFY(flightK3);
        QVERIFY(waitSlotK3);
        QVERIFY(!releaseK1);  // the path leaves k1's Release at its start (the arrive), not through it
    }

    // Two SMs: SM 0 runs CTA 0 then CTA 2, SM 1 only CTA 1. The path goes launch -> CTA 0 -> CTA 2, and what
    // runs after SM 1 went idle (t = 100) is the tail.
    void tailAndWaves()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 205;
        t.ctas = {wstest::makeCta(0, 0, 0, 100), wstest::makeCta(2, 0, 102, 200), wstest::makeCta(1, 1, 0, 100)};
        t.lanes.push_back(wstest::makeLane(0, 0, 0, WarpRole::Unknown, {{K::Compute, 0, 100}}));
        t.lanes.push_back(wstest::makeLane(1, 0, 0, WarpRole::Unknown, {{K::Compute, 102, 200}}));
        t.lanes.push_back(wstest::makeLane(2, 0, 0, WarpRole::Unknown, {{K::Compute, 0, 90}}));
        const CriticalPath p = criticalPath(t);
        QCOMPARE(sum(p), 205.0);
        QCOMPARE(p.tailStart, TimeNs(100));
        QCOMPARE(at(p, Cause::Tail), 100.0);           // 100..200: CTA 2's gap and compute
        QCOMPARE(at(p, Cause::MmaThroughput), 100.0);  // CTA 0's compute
        QCOMPARE(at(p, Cause::Launch), 5.0);           // 200..205
        QCOMPARE(p.graph.slotsPerSm, 1);
        QCOMPARE(p.graph.smsUsed, 2);
        // The path passes through CTA 0 (blockLinear 0) and CTA 2, never CTA 1.
        bool cta0 = false, cta1 = false;
        for (const PathStep& s : p.steps) {
            cta0 = cta0 || s.ctaIndex == 0;
            cta1 = cta1 || s.ctaIndex == 2;
        }
        QVERIFY(cta0);
        QVERIFY(!cta1);
    }

    // No loads, no roles: the analysis still sums to the kernel time and says what it could not see.
    void reducedAnalysisSaysWhatIsMissing()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 60;
        t.ctas = {wstest::makeCta(0, 0, 0, 60)};
        t.lanes.push_back(wstest::makeLane(0, 0, 0, WarpRole::Unknown,
                                           {{K::WaitData, 0, 20, 0}, {K::Compute, 20, 50, 0}, {K::Other, 50, 60}}));
        const CriticalPath p = criticalPath(t);
        QCOMPARE(sum(p), 60.0);
        QVERIFY(p.graph.reduced);
        QString all;
        for (const std::string& m : p.graph.missing)
            all += QString::fromStdString(m) + "\n";
        QVERIFY2(all.contains("no warp roles"), qPrintable(all));
        QVERIFY2(all.contains("no loads recorded"), qPrintable(all));
        QVERIFY2(all.contains("1 waits whose dependency is not in the trace"), qPrintable(all));
        QCOMPARE(at(p, Cause::LoadLatency), 20.0);  // the wait, with its recorded duration
    }

    // A CTA barrier: the last warp to arrive sets when everyone leaves; the path goes through it.
    void barrierFollowsTheLastArrival()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 100;
        t.ctas = {wstest::makeCta(0, 0, 0, 100)};
        t.lanes.push_back(wstest::makeLane(0, 0, 0, WarpRole::Worker,
                                           {{K::Load, 0, 10, 0}, {K::Sync, 10, 45, 0}, {K::Compute, 45, 100, 0}}));
        t.lanes.push_back(wstest::makeLane(0, 1, 0, WarpRole::Worker,
                                           {{K::Load, 0, 40, 0}, {K::Sync, 40, 45, 0}, {K::Compute, 45, 90, 0}}));
        const CriticalPath p = criticalPath(t);
        QCOMPARE(p.graph.syncEdges, std::int64_t(2));
        QCOMPARE(sum(p), 100.0);
        QCOMPARE(at(p, Cause::LoadLatency), 40.0);  // warp 1's Load: the last arrival
        QCOMPARE(at(p, Cause::Ordering), 5.0);      // barrier wake-up 40 -> 45
        QCOMPARE(at(p, Cause::MmaThroughput), 55.0);
    }

    void untracedKernelRefused()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 10;
        QVERIFY_THROWS_EXCEPTION(WhatIfError, criticalPath(t));
        t.ctas = {wstest::makeCta(0, 0, 0, 10)};
        QVERIFY_THROWS_EXCEPTION(WhatIfError, criticalPath(t));
    }
};

QTEST_GUILESS_MAIN(TestCritPath)
#include "tst_critpath.moc"
