// Every metric of docs/metrics.md against hand-computed cases, including the edge cases
// (no loads, all overlap, zero-length intervals, one warp, time range, CTA / warpgroup selection).
#include "warpstage/analysis.h"

#include <QtTest>

#include <cmath>

using namespace ws;

namespace {

struct LaneBuilder {
    Lane lane;
    LaneBuilder(int cta, int warpIndex, WarpRole role)
    {
        lane.ctaIndex = cta;
        lane.warpIndex = warpIndex;
        lane.warpgroup = warpIndex / 4;
        lane.role = role;
        lane.warpId = 100 * cta + warpIndex + 1;
    }
    LaneBuilder& add(IntervalKind k, TimeNs s, TimeNs e, int kstep = -1, int slot = -1)
    {
        lane.start.push_back(s);
        lane.duration.push_back(static_cast<std::int32_t>(e - s));
        lane.kind.push_back(k);
        lane.slot.push_back(static_cast<std::int16_t>(slot));
        lane.kstep.push_back(kstep);
        return *this;
    }
};

Cta cta(int block, int sm, TimeNs s, TimeNs e)
{
    Cta c;
    c.blockLinear = block;
    c.smId = sm;
    c.start = s;
    c.end = e;
    return c;
}

LoadTransfer load(int cta, TimeNs issue, TimeNs ready, int kstep = -1)
{
    LoadTransfer l;
    l.ctaId = cta;
    l.issue = issue;
    l.ready = ready;
    l.kstep = kstep;
    l.slot = static_cast<std::int16_t>(kstep < 0 ? -1 : kstep % 2);
    return l;
}

// The worked example of docs/metrics.md.
KernelTrace example(bool withLoads = true)
{
    KernelTrace t;
    t.run.m = 1000;
    t.run.n = 1000;
    t.run.k = 50;
    t.launch.start = 0;
    t.launch.end = 100;
    t.ctas.push_back(cta(0, 0, 0, 100));
    t.lanes.push_back(LaneBuilder(0, 0, WarpRole::Producer).add(IntervalKind::WaitSlot, 20, 40).lane);
    t.lanes.push_back(LaneBuilder(0, 4, WarpRole::Consumer)
                          .add(IntervalKind::WaitData, 0, 10, 0)
                          .add(IntervalKind::MmaIssue, 10, 30, 0)
                          .add(IntervalKind::WaitData, 30, 50, 1)
                          .add(IntervalKind::MmaWait, 50, 90, 1)
                          .lane);
    if (withLoads) {
        t.loads.push_back(load(0, 0, 20, 0));
        t.loads.push_back(load(0, 40, 60, 1));
    }
    return t;
}

bool nan(double v) { return std::isnan(v); }

}  // namespace

class TestAnalysis : public QObject {
    Q_OBJECT
private slots:
    void workedExample()
    {
        const KernelMetrics m = analyze(example());
        const GroupMetrics& g = m.total;
        QCOMPARE(m.windowStart, TimeNs(0));
        QCOMPARE(m.windowEnd, TimeNs(100));
        QCOMPARE(g.computeLanes, std::int64_t(1));
        QCOMPARE(g.producerLanes, std::int64_t(1));
        QCOMPARE(g.computeNs, 60.0);
        QCOMPARE(g.computeWithLoadNs, 20.0);
        QCOMPARE(g.computeOverlapShare, 1.0 / 3.0);
        QCOMPARE(g.loadInFlightNs, 40.0);
        QCOMPARE(g.loadHiddenNs, 20.0);
        QCOMPARE(g.loadHiddenShare, 0.5);
        QCOMPARE(g.computeLaneNs, 100.0);
        QCOMPARE(g.producerLaneNs, 100.0);
        QCOMPARE(g.exposedLoadWaitNs, 30.0);
        QCOMPARE(g.exposedLoadWaitShare, 0.3);
        QCOMPARE(g.backPressureNs, 20.0);
        QCOMPARE(g.backPressureShare, 0.2);
        QCOMPARE(g.consumerBusyShare, 0.6);
        QCOMPARE(g.bubbleCount, std::int64_t(1));
        QCOMPARE(g.bubbleNs, 20.0);
        QCOMPARE(g.longestBubbleNs, 20.0);
        QCOMPARE(g.bubbleShare, 0.25);
        QCOMPARE(g.rampNs, 20.0);
        QCOMPARE(g.loadCount, std::int64_t(2));
        // loads in flight [0,20) and [40,60): mean 40/100
        QCOMPARE(g.meanLoadsInFlight, 0.4);
        // slots: no release intervals -> compute end of the k-step: [0,30) and [40,90)
        QCOMPARE(g.meanSlotsOccupied, 0.8);
        QCOMPARE(m.maxLoadsInFlight, std::int64_t(1));
        QCOMPARE(m.maxSlotsOccupied, std::int64_t(1));
        QCOMPARE(m.loadsInFlight.size(), std::size_t(4));
        QCOMPARE(m.loadsInFlight[0].t, TimeNs(0));
        QCOMPARE(m.loadsInFlight[0].value, 1.0);
        QCOMPARE(m.loadsInFlight[1].t, TimeNs(20));
        QCOMPARE(m.loadsInFlight[1].value, 0.0);
        QCOMPARE(m.loadsInFlight[3].t, TimeNs(60));
        QCOMPARE(m.slotsOccupied[1].t, TimeNs(30));
        QCOMPARE(m.slotsOccupied[3].t, TimeNs(90));
        // throughput: 2*1000*1000*50 flop / 100 ns = 1e6 GFLOP/s = 1000 TFLOP/s
        QCOMPARE(m.achievedTflops, 1000.0);
        // one SM: no tail
        QCOMPARE(m.smsUsed, 1);
        QCOMPARE(m.tailNs, 0.0);
        QCOMPARE(m.tailIdleShare, 0.0);
        // breakdowns
        QCOMPARE(m.perCta.size(), std::size_t(1));
        QCOMPARE(m.perCta[0].m.computeNs, 60.0);
        QCOMPARE(m.perWarpgroup.size(), std::size_t(2));
        QCOMPARE(m.perWarpgroup[0].warpgroup, 0);
        QCOMPARE(m.perWarpgroup[0].m.backPressureNs, 20.0);
        QCOMPARE(m.perWarpgroup[0].m.computeNs, 0.0);
        QCOMPARE(m.perWarpgroup[1].m.computeOverlapShare, 1.0 / 3.0);
    }

    void noLoads()
    {
        const KernelMetrics m = analyze(example(false));
        QCOMPARE(m.total.computeNs, 60.0);
        QCOMPARE(m.total.computeWithLoadNs, 0.0);
        QCOMPARE(m.total.computeOverlapShare, 0.0);
        QCOMPARE(m.total.loadInFlightNs, 0.0);
        QVERIFY(nan(m.total.loadHiddenShare));
        QCOMPARE(m.total.meanLoadsInFlight, 0.0);
        QCOMPARE(m.total.loadCount, std::int64_t(0));
        QVERIFY(m.loadsInFlight.empty());
        QCOMPARE(m.maxLoadsInFlight, std::int64_t(0));
        // waits do not need loads
        QCOMPARE(m.total.exposedLoadWaitNs, 30.0);
        // undefined values are not stored
        bool hidden = false;
        for (const Metric& x : toMetrics(m, 1, 2))
            hidden |= x.name == "load_hidden_share";
        QVERIFY(!hidden);
    }

    void allOverlap()
    {
        KernelTrace t = example(false);
        t.loads.push_back(load(0, 0, 100));
        t.loads.push_back(load(0, 10, 70));  // overlapping loads: union counts once
        const KernelMetrics m = analyze(t);
        QCOMPARE(m.total.computeOverlapShare, 1.0);
        QCOMPARE(m.total.loadInFlightNs, 100.0);
        QCOMPARE(m.total.loadHiddenNs, 60.0);
        QCOMPARE(m.total.loadHiddenShare, 0.6);
        QCOMPARE(m.maxLoadsInFlight, std::int64_t(2));
        QCOMPARE(m.total.meanLoadsInFlight, 1.6);  // (100 + 60) / 100
    }

    void zeroLengthIntervals()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 100;
        t.ctas.push_back(cta(0, 0, 0, 100));
        t.lanes.push_back(LaneBuilder(0, 4, WarpRole::Consumer)
                              .add(IntervalKind::WaitData, 10, 10)
                              .add(IntervalKind::MmaIssue, 20, 20)
                              .add(IntervalKind::MmaWait, 20, 20)
                              .lane);
        t.lanes.push_back(LaneBuilder(0, 0, WarpRole::Producer).add(IntervalKind::WaitSlot, 30, 30).lane);
        t.loads.push_back(load(0, 50, 50));
        const KernelMetrics m = analyze(t);
        QCOMPARE(m.total.computeNs, 0.0);
        QVERIFY(nan(m.total.computeOverlapShare));
        QCOMPARE(m.total.consumerBusyShare, 0.0);
        QCOMPARE(m.total.exposedLoadWaitNs, 0.0);
        QCOMPARE(m.total.backPressureNs, 0.0);
        QCOMPARE(m.total.backPressureShare, 0.0);
        QCOMPARE(m.total.loadInFlightNs, 0.0);
        QVERIFY(nan(m.total.loadHiddenShare));
        QCOMPARE(m.total.loadCount, std::int64_t(1));
        QCOMPARE(m.total.bubbleCount, std::int64_t(0));
        QVERIFY(nan(m.total.bubbleShare));
        QCOMPARE(m.total.rampNs, 100.0);
        QVERIFY(m.loadsInFlight.empty());
        QVERIFY(nan(m.achievedTflops));  // no shape
    }

    void oneWarp()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 50;
        t.run.m = t.run.n = t.run.k = 0;
        t.ctas.push_back(cta(0, 3, 0, 50));
        t.lanes.push_back(LaneBuilder(0, 0, WarpRole::Worker)
                              .add(IntervalKind::Load, 0, 20, 0)
                              .add(IntervalKind::Sync, 20, 25, 0)
                              .add(IntervalKind::Compute, 25, 45, 0)
                              .lane);
        t.loads.push_back(load(0, 0, 20, 0));
        const KernelMetrics m = analyze(t);
        QCOMPARE(m.total.computeLanes, std::int64_t(1));
        QCOMPARE(m.total.producerLanes, std::int64_t(0));
        QCOMPARE(m.total.computeNs, 20.0);
        QCOMPARE(m.total.computeOverlapShare, 0.0);  // synchronous: never overlaps
        QCOMPARE(m.total.loadHiddenShare, 0.0);
        QCOMPARE(m.total.exposedLoadWaitNs, 20.0);   // the worker's own load is exposed
        QCOMPARE(m.total.exposedLoadWaitShare, 0.4);
        QVERIFY(nan(m.total.backPressureShare));
        QCOMPARE(m.total.consumerBusyShare, 0.4);
        QCOMPARE(m.total.bubbleCount, std::int64_t(0));
        QCOMPARE(m.total.bubbleShare, 0.0);
        QCOMPARE(m.total.rampNs, 30.0);
        QCOMPARE(m.total.meanSlotsOccupied, 0.9);  // [0, 45): compute end of k-step 0
        QCOMPARE(m.smsUsed, 1);
    }

    void timeRange()
    {
        Selection s;
        s.t0 = 25;
        s.t1 = 75;
        const KernelMetrics m = analyze(example(), s);
        const GroupMetrics& g = m.total;
        QCOMPARE(m.windowStart, TimeNs(25));
        QCOMPARE(m.windowEnd, TimeNs(75));
        QCOMPARE(g.computeNs, 30.0);            // [25,30) + [50,75)
        QCOMPARE(g.computeWithLoadNs, 10.0);    // [50,60)
        QCOMPARE(g.loadInFlightNs, 20.0);       // [40,60)
        QCOMPARE(g.loadHiddenNs, 10.0);
        QCOMPARE(g.exposedLoadWaitNs, 20.0);    // [30,50)
        QCOMPARE(g.computeLaneNs, 50.0);
        QCOMPARE(g.backPressureNs, 15.0);       // [25,40)
        QCOMPARE(g.backPressureShare, 0.3);
        QCOMPARE(g.bubbleNs, 20.0);
        QCOMPARE(g.bubbleShare, 0.4);
        QCOMPARE(g.rampNs, 0.0);
        QCOMPARE(g.loadCount, std::int64_t(1));  // [0,20) ends before the window
        QCOMPARE(g.meanLoadsInFlight, 0.4);
        // an empty range
        s.t0 = 80;
        s.t1 = 80;
        const KernelMetrics e = analyze(example(), s);
        QCOMPARE(e.total.computeNs, 0.0);
        QVERIFY(nan(e.total.consumerBusyShare));
    }

    void ctaSelectionAndTail()
    {
        KernelTrace t = example();
        t.ctas.push_back(cta(7, 1, 0, 60));
        t.lanes.push_back(LaneBuilder(1, 4, WarpRole::Consumer).add(IntervalKind::MmaIssue, 0, 10).add(IntervalKind::MmaWait, 30, 60).lane);
        const KernelMetrics all = analyze(t);
        QCOMPARE(all.smsUsed, 2);
        QCOMPARE(all.tailNs, 40.0);
        QCOMPARE(all.tailIdleSmNs, 40.0);
        QCOMPARE(all.tailIdleShare, 0.2);
        QCOMPARE(all.perCta.size(), std::size_t(2));
        QCOMPARE(all.total.computeNs, 60.0 + 40.0);
        QCOMPARE(all.total.bubbleCount, std::int64_t(2));
        QCOMPARE(all.total.longestBubbleNs, 20.0);
        QCOMPARE(all.total.bubbleShare, 40.0 / (80.0 + 60.0));
        Selection s;
        s.ctaIndex = 1;
        const KernelMetrics one = analyze(t, s);
        QCOMPARE(one.perCta.size(), std::size_t(1));
        QCOMPARE(one.perCta[0].blockLinear, 7);
        QCOMPARE(one.perCta[0].smId, 1);
        QCOMPARE(one.total.computeNs, 40.0);
        QCOMPARE(one.total.computeWithLoadNs, 0.0);  // CTA 1 has no loads
        QCOMPARE(one.total.computeLaneNs, 60.0);
        QCOMPARE(one.tailNs, 40.0);                 // tail ignores the CTA selection
        s.ctaIndex = 5;                             // no such CTA
        QCOMPARE(analyze(t, s).total.computeNs, 0.0);
        // Range cutting the tail
        Selection r;
        r.t1 = 80;
        const KernelMetrics cut = analyze(t, r);
        QCOMPARE(cut.tailNs, 20.0);  // SM0 clipped to 80, SM1 ends at 60
        // Metric rows carry scopes
        bool sawCta = false, sawWg = false, sawKernel = false;
        for (const Metric& x : toMetrics(all, 3, 4)) {
            QCOMPARE(x.runId, RowId(3));
            QCOMPARE(x.kernelId, RowId(4));
            QVERIFY(!std::isnan(x.value));
            sawCta |= x.scope == "cta:7" && x.name == "compute_ns" && x.value == 40.0;
            sawWg |= x.scope == "wg:1" && x.name == "compute_ns" && x.value == 100.0;
            sawKernel |= x.scope == "kernel" && x.name == "tail_ns" && x.value == 40.0 && x.unit == "ns";
        }
        QVERIFY(sawCta && sawWg && sawKernel);
    }

    void warpgroups()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 100;
        t.ctas.push_back(cta(0, 0, 0, 100));
        t.lanes.push_back(LaneBuilder(0, 4, WarpRole::Consumer).add(IntervalKind::MmaWait, 0, 50).lane);
        t.lanes.push_back(LaneBuilder(0, 8, WarpRole::Consumer).add(IntervalKind::WaitOrder, 0, 50).add(IntervalKind::MmaWait, 50, 100).lane);
        t.loads.push_back(load(0, 40, 60));
        const KernelMetrics m = analyze(t);
        QCOMPARE(m.total.bubbleCount, std::int64_t(0));  // ping-pong: one of the two always computes
        QCOMPARE(m.total.consumerBusyShare, 0.5);
        QCOMPARE(m.total.loadHiddenShare, 1.0);
        QCOMPARE(m.perWarpgroup.size(), std::size_t(2));
        QCOMPARE(m.perWarpgroup[0].warpgroup, 1);
        QCOMPARE(m.perWarpgroup[0].m.rampNs, 50.0);
        QCOMPARE(m.perWarpgroup[0].m.loadHiddenShare, 0.5);  // A_c of WG1 only: [0,50)
        QCOMPARE(m.perWarpgroup[1].m.loadHiddenShare, 0.5);
        Selection s;
        s.warpgroup = 2;
        const KernelMetrics w2 = analyze(t, s);
        QCOMPARE(w2.total.computeLanes, std::int64_t(1));
        QCOMPARE(w2.total.computeNs, 50.0);
        QCOMPARE(w2.perWarpgroup.size(), std::size_t(1));
        QCOMPARE(w2.total.rampNs, 50.0);
    }

    void slotOccupancyUsesRelease()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 100;
        t.ctas.push_back(cta(0, 0, 0, 100));
        t.lanes.push_back(LaneBuilder(0, 4, WarpRole::Consumer)
                              .add(IntervalKind::MmaWait, 10, 30, 0)
                              .add(IntervalKind::Release, 40, 45, 0)
                              .lane);
        t.loads.push_back(load(0, 0, 10, 0));
        t.loads.push_back(load(0, 5, 20, 1));  // k-step 1: no release, no compute -> ready
        const KernelMetrics m = analyze(t);
        QCOMPARE(m.total.meanSlotsOccupied, (45.0 + 15.0) / 100.0);
        QCOMPARE(m.maxSlotsOccupied, std::int64_t(2));
        QCOMPARE(m.slotsOccupied.back().t, TimeNs(45));
        QCOMPARE(m.slotsOccupied.back().value, 0.0);
    }

    void windowWithoutLaunchTimes()
    {
        KernelTrace t = example();
        t.launch.start = t.launch.end = 0;
        const KernelMetrics m = analyze(t);
        QCOMPARE(m.windowStart, TimeNs(0));
        QCOMPARE(m.windowEnd, TimeNs(90));  // extent of the intervals
        QVERIFY(nan(m.achievedTflops));
    }

    void stalls()
    {
        KernelTrace t = example();
        auto sample = [](const char* reason, const char* label, std::int64_t n, WarpRole r, const char* stage) {
            StallSample s;
            s.reason = reason;
            s.reasonLabel = label;
            s.count = n;
            s.role = r;
            s.stage = stage;
            return s;
        };
        t.stalls = {sample("long_scoreboard", "long scoreboard", 30, WarpRole::Consumer, "wait_data"),
                    sample("barrier", "", 10, WarpRole::Producer, "wait_slot"),
                    sample("long_scoreboard", "", 20, WarpRole::Producer, "")};
        const KernelMetrics m = analyze(t);
        QCOMPARE(m.stallSamples, std::int64_t(60));
        QCOMPARE(m.stallsByReason.size(), std::size_t(2));
        QCOMPARE(m.stallsByReason[0].key, std::string("long_scoreboard"));
        QCOMPARE(m.stallsByReason[0].label, std::string("long scoreboard"));
        QCOMPARE(m.stallsByReason[0].samples, std::int64_t(50));
        QCOMPARE(m.stallsByReason[0].share, 50.0 / 60.0);
        QCOMPARE(m.stallsByReason[1].label, std::string("barrier"));  // no label: the key
        QCOMPARE(m.stallsByRoleStage.size(), std::size_t(3));
        QCOMPARE(m.stallsByRoleStage[0].key, std::string("consumer/wait_data"));
        QCOMPARE(m.stallsByRoleStage[1].key, std::string("producer/unknown"));
        QCOMPARE(m.stallsByRoleStage[2].share, 10.0 / 60.0);
        int rows = 0;
        for (const Metric& x : toMetrics(m, 1, 1))
            if (x.scope == "stall_stage:consumer/wait_data" && x.name == "share") {
                QCOMPARE(x.value, 0.5);
                ++rows;
            }
        QCOMPARE(rows, 1);
    }

    void emptyTrace()
    {
        const KernelMetrics m = analyze(KernelTrace{});
        QCOMPARE(m.total.computeNs, 0.0);
        QCOMPARE(m.smsUsed, 0);
        QVERIFY(m.perCta.empty());
        QVERIFY(!toMetrics(m, 1, 1).empty());
    }
};

QTEST_GUILESS_MAIN(TestAnalysis)
#include "tst_analysis.moc"
