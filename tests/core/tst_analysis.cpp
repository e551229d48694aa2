// Every metric of docs/metrics.md against hand-computed cases, including the edge cases
// (no loads, all overlap, zero-length intervals, one warp, time range, CTA / warpgroup selection).
#include "analysis_reference.h"
#include "warpstage/analysis.h"

#include <QtTest>

#include <cmath>
#include <random>

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

// Random trace on a short time base (a few thousand ns), for the brute-force reference:
// 1-3 CTAs (some without a CTA span), lanes of every role, overlapping and zero-length
// intervals, loads of which some are never in flight, release intervals on some k-steps.
KernelTrace randomTrace(std::mt19937& rng)
{
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    KernelTrace t;
    const TimeNs T = uni(300, 1500);
    if (uni(0, 4) > 0) {
        t.launch.start = uni(0, 100);
        t.launch.end = T - uni(0, 200);
    }
    t.run.m = t.run.n = t.run.k = 64;
    const int nc = uni(1, 3);
    const WarpRole roles[] = {WarpRole::Producer, WarpRole::Consumer, WarpRole::Worker, WarpRole::Consumer,
                              WarpRole::Epilogue, WarpRole::Idle, WarpRole::Unknown};
    const IntervalKind kinds[] = {IntervalKind::WaitSlot, IntervalKind::IssueLoad, IntervalKind::WaitData,
                                  IntervalKind::MmaIssue, IntervalKind::MmaWait, IntervalKind::Release,
                                  IntervalKind::Load, IntervalKind::Compute, IntervalKind::Sync, IntervalKind::Setup};
    for (int c = 0; c < nc; ++c) {
        Cta x = cta(c, uni(-1, 2), uni(0, int(T) / 3), uni(int(T) / 2, int(T) + 50));
        if (uni(0, 5) == 0)
            x.end = x.start;  // no CTA span: extent of its lanes
        t.ctas.push_back(x);
        const int nl = uni(1, 4);
        for (int w = 0; w < nl; ++w) {
            LaneBuilder lb(c, w * 3 + uni(0, 2), roles[uni(0, 6)]);
            TimeNs s = uni(0, 100);
            const int ni = uni(0, 25);
            for (int i = 0; i < ni && s < T; ++i) {
                const TimeNs d = uni(0, 5) == 0 ? 0 : uni(1, 80);
                lb.add(kinds[uni(0, 9)], s, s + d, uni(0, 5) == 0 ? -1 : uni(0, 7));
                s += uni(0, 3) == 0 ? uni(0, int(d)) : d + uni(0, 40);  // sometimes overlapping
            }
            t.lanes.push_back(lb.lane);
        }
        const int nld = uni(0, 10);
        for (int i = 0; i < nld; ++i) {
            const TimeNs is = uni(0, int(T));
            t.loads.push_back(load(c, is, uni(0, 6) == 0 ? is : is + uni(1, 200), uni(-1, 7)));
        }
    }
    std::sort(t.loads.begin(), t.loads.end(), [](const LoadTransfer& x, const LoadTransfer& y) { return x.issue < y.issue; });
    return t;
}

bool same(double got, double want)
{
    if (std::isnan(want) || std::isnan(got))
        return std::isnan(want) && std::isnan(got);
    return std::abs(got - want) <= 1e-9 * std::max(1.0, std::abs(want));
}

// Every metric of a group against the reference; `where` names the case in failures.
void compareGroup(const GroupMetrics& g, const wsref::Group& r, const QString& where)
{
    using wsref::ratio;
    const struct {
        const char* name;
        double got, want;
    } rows[] = {
        {"compute_lanes", double(g.computeLanes), r.computeLanes},
        {"producer_lanes", double(g.producerLanes), r.producerLanes},
        {"compute_lane_ns", g.computeLaneNs, r.computeLaneNs},
        {"producer_lane_ns", g.producerLaneNs, r.producerLaneNs},
        {"compute_ns", g.computeNs, r.computeNs},
        {"compute_with_load_ns", g.computeWithLoadNs, r.computeWithLoadNs},
        {"compute_overlap_share", g.computeOverlapShare, ratio(r.computeWithLoadNs, r.computeNs)},
        {"load_in_flight_ns", g.loadInFlightNs, r.loadInFlightNs},
        {"load_hidden_ns", g.loadHiddenNs, r.loadHiddenNs},
        {"load_hidden_share", g.loadHiddenShare, ratio(r.loadHiddenNs, r.loadInFlightNs)},
        {"exposed_load_wait_ns", g.exposedLoadWaitNs, r.exposedNs},
        {"exposed_load_wait_share", g.exposedLoadWaitShare, ratio(r.exposedNs, r.computeLaneNs)},
        {"back_pressure_ns", g.backPressureNs, r.backPressureNs},
        {"back_pressure_share", g.backPressureShare, ratio(r.backPressureNs, r.producerLaneNs)},
        {"consumer_busy_share", g.consumerBusyShare, ratio(r.computeNs, r.computeLaneNs)},
        {"bubble_count", double(g.bubbleCount), r.bubbleCount},
        {"bubble_ns", g.bubbleNs, r.bubbleNs},
        {"longest_bubble_ns", g.longestBubbleNs, r.longestBubbleNs},
        {"bubble_share", g.bubbleShare, ratio(r.bubbleNs, r.computeSpanNs)},
        {"ramp_ns", g.rampNs, r.rampNs},
        {"mean_loads_in_flight", g.meanLoadsInFlight, ratio(r.loadsNs, r.liveCtaNs)},
        {"mean_slots_occupied", g.meanSlotsOccupied, ratio(r.slotsNs, r.liveCtaNs)},
        {"load_count", double(g.loadCount), r.loadCount},
    };
    for (const auto& row : rows)
        if (!same(row.got, row.want))
            QFAIL(qPrintable(QStringLiteral("%1: %2 = %3, brute force %4").arg(where, row.name).arg(row.got).arg(row.want)));
}

// A step series against per-ns values over [a, b): no point outside [a, b], the value at
// every ns is the reference's, and the series ends at 0.
void compareSeries(const std::vector<StepPoint>& series, const std::vector<int>& want, TimeNs a, TimeNs b,
                   const QString& where)
{
    for (const StepPoint& p : series)
        if (p.t < a || p.t > b)
            QFAIL(qPrintable(QStringLiteral("%1: step at %2 outside the window [%3, %4)").arg(where).arg(p.t).arg(a).arg(b)));
    if (!series.empty() && series.back().value != 0.0)
        QFAIL(qPrintable(where + ": series does not end at 0"));
    std::size_t j = 0;
    double v = 0;
    for (TimeNs x = a; x < b; ++x) {
        while (j < series.size() && series[j].t <= x)
            v = series[j++].value;
        const double w = want[std::size_t(x - a)];
        if (v != w)
            QFAIL(qPrintable(QStringLiteral("%1: %2 at t=%3, brute force %4").arg(where).arg(v).arg(x).arg(w)));
    }
}

// analyze() against the brute-force reference: totals, per CTA, per warpgroup, step series,
// maxima, tail, window.
void checkAgainstReference(const KernelTrace& t, const Selection& s, const QString& where)
{
    const KernelMetrics m = analyze(t, s);
    const wsref::Result r = wsref::analyze(t, s);
    QCOMPARE(m.windowStart, r.a);
    QCOMPARE(m.windowEnd, r.b);
    compareGroup(m.total, r.total, where + " total");
    QCOMPARE(m.perCta.size(), r.perCta.size());
    for (std::size_t i = 0; i < r.perCta.size(); ++i) {
        QCOMPARE(m.perCta[i].ctaIndex, r.perCtaIndex[i]);
        compareGroup(m.perCta[i].m, r.perCta[i], where + QStringLiteral(" cta %1").arg(r.perCtaIndex[i]));
    }
    QCOMPARE(m.perWarpgroup.size(), r.perWarpgroup.size());
    std::size_t i = 0;
    for (const auto& [wg, g] : r.perWarpgroup) {
        QCOMPARE(m.perWarpgroup[i].warpgroup, wg);
        compareGroup(m.perWarpgroup[i++].m, g, where + QStringLiteral(" wg %1").arg(wg));
    }
    compareSeries(m.loadsInFlight, r.loadsAt, r.a, r.b, where + " loadsInFlight");
    compareSeries(m.slotsOccupied, r.slotsAt, r.a, r.b, where + " slotsOccupied");
    QCOMPARE(double(m.maxLoadsInFlight), r.maxLoads);
    QCOMPARE(double(m.maxSlotsOccupied), r.maxSlots);
    QCOMPARE(double(m.smsUsed), r.smsUsed);
    QVERIFY2(same(m.tailNs, r.tailNs), qPrintable(where + " tail_ns"));
    QVERIFY2(same(m.tailIdleSmNs, r.tailIdleSmNs), qPrintable(where + " tail_idle_sm_ns"));
    QVERIFY2(same(m.tailIdleShare, r.tailIdleShare), qPrintable(where + " tail_idle_share"));
}

// The ranges checked on every trace: each edge before, inside and after the data, open
// edges, inverted and zero-length ranges.
std::vector<std::pair<std::optional<TimeNs>, std::optional<TimeNs>>> ranges(std::mt19937& rng, TimeNs end)
{
    auto at = [&] { return TimeNs(std::uniform_int_distribution<int>(-50, int(end) + 50)(rng)); };
    std::vector<std::pair<std::optional<TimeNs>, std::optional<TimeNs>>> out = {
        {std::nullopt, std::nullopt}, {at(), std::nullopt}, {std::nullopt, at()}, {-100, end + 100}};
    for (int i = 0; i < 6; ++i) {
        TimeNs x = at(), y = at();
        if (x > y)
            std::swap(x, y);
        out.push_back({x, y});
    }
    const TimeNs z = at();
    out.push_back({z, z});        // zero-length
    out.push_back({z + 10, z});   // inverted
    return out;
}

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

    // Every range metric against the brute-force reference (tests/core/analysis_reference.h) on
    // random traces (fixed seeds), with and without CTA / warpgroup selection.
    void rangeMatchesBruteForce()
    {
        std::mt19937 rng(20261130);
        int checked = 0;
        for (int trace = 0; trace < 150; ++trace) {
            const KernelTrace t = randomTrace(rng);
            TimeNs end = 0;
            for (const Lane& l : t.lanes)
                for (std::size_t i = 0; i < l.size(); ++i)
                    end = std::max(end, l.end(i));
            for (const auto& [t0, t1] : ranges(rng, std::max(end, t.launch.end))) {
                Selection s;
                s.t0 = t0;
                s.t1 = t1;
                const QString where = QStringLiteral("trace %1 range [%2, %3)")
                                          .arg(trace)
                                          .arg(t0 ? QString::number(*t0) : QStringLiteral("-"))
                                          .arg(t1 ? QString::number(*t1) : QStringLiteral("-"));
                checkAgainstReference(t, s, where);
                if (QTest::currentTestFailed())
                    return;
                s.ctaIndex = int(rng() % (t.ctas.size() + 1));  // one past the end: nothing selected
                checkAgainstReference(t, s, where + " cta");
                s.ctaIndex.reset();
                s.warpgroup = int(rng() % 4);
                checkAgainstReference(t, s, where + " wg");
                if (QTest::currentTestFailed())
                    return;
                ++checked;
            }
        }
        QCOMPARE(checked, 150 * 12);
    }

    // Hand-made window-edge cases: loads and intervals crossing one or both edges.
    void rangeEdgesBruteForce()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 200;
        t.ctas.push_back(cta(0, 0, 0, 200));
        t.ctas.push_back(cta(1, 1, 20, 150));
        t.lanes.push_back(LaneBuilder(0, 0, WarpRole::Producer).add(IntervalKind::WaitSlot, 10, 190).lane);  // both edges
        t.lanes.push_back(LaneBuilder(0, 4, WarpRole::Consumer)
                              .add(IntervalKind::MmaIssue, 30, 60, 0)     // crosses the start of [50, 120)
                              .add(IntervalKind::WaitData, 60, 70, 1)
                              .add(IntervalKind::MmaWait, 70, 80, 1)
                              .add(IntervalKind::MmaWait, 100, 140, 2)    // crosses the end
                              .add(IntervalKind::Release, 140, 160, 2)    // release after the end
                              .lane);
        t.lanes.push_back(LaneBuilder(1, 4, WarpRole::Worker).add(IntervalKind::Load, 0, 60, 0).add(IntervalKind::Compute, 60, 180, 0).lane);
        t.loads.push_back(load(0, 5, 90, 0));     // issued before the window, ready inside
        t.loads.push_back(load(0, 65, 170, 1));   // issued inside, ready after the end
        t.loads.push_back(load(0, 2, 198, 3));    // spans the whole window
        t.loads.push_back(load(0, 100, 100, 2));  // never in flight, occupies its slot until the release
        t.loads.push_back(load(1, 0, 60, 0));     // slot held to the end of the k-step's compute (180)
        std::sort(t.loads.begin(), t.loads.end(), [](const LoadTransfer& x, const LoadTransfer& y) { return x.issue < y.issue; });
        const std::pair<TimeNs, TimeNs> windows[] = {{50, 120}, {5, 90}, {90, 170}, {65, 65}, {0, 1}, {199, 200},
                                                     {100, 101}, {2, 198}, {-10, 5}, {170, 400}};
        for (const auto& [t0, t1] : windows) {
            Selection s;
            s.t0 = t0;
            s.t1 = t1;
            checkAgainstReference(t, s, QStringLiteral("edge window [%1, %2)").arg(t0).arg(t1));
            if (QTest::currentTestFailed())
                return;
        }
        // And the values themselves for [50, 120), by hand:
        Selection s;
        s.t0 = 50;
        s.t1 = 120;
        s.ctaIndex = 0;
        const KernelMetrics m = analyze(t, s);
        QCOMPARE(m.total.loadInFlightNs, 70.0);       // [50,120) covered by the whole-window load
        QCOMPARE(m.total.computeNs, 10.0 + 10.0 + 20.0);
        QCOMPARE(m.total.computeWithLoadNs, 40.0);
        QCOMPARE(m.total.backPressureNs, 70.0);
        // loads: [50,90) + [65,120) + [50,120) = 40 + 55 + 70; slots add [100,120) for k-step 2
        QCOMPARE(m.total.meanLoadsInFlight, (40.0 + 55.0 + 70.0) / 70.0);
        QCOMPARE(m.total.meanSlotsOccupied, (40.0 + 55.0 + 70.0 + 20.0) / 70.0);
        QCOMPARE(m.total.loadCount, std::int64_t(4));
        QCOMPARE(m.maxLoadsInFlight, std::int64_t(3));
        QCOMPARE(m.loadsInFlight.front().t, TimeNs(50));
        QCOMPARE(m.loadsInFlight.front().value, 2.0);
        QCOMPARE(m.loadsInFlight.back().t, TimeNs(120));
        QCOMPARE(m.loadsInFlight.back().value, 0.0);
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
        // a device of 8 SMs (run.device.smCount): the 6 that ran no CTA idle the whole span [0, 100)
        {
            KernelTrace big = t;
            big.run.device.smCount = 8;
            const KernelMetrics m = analyze(big);
            QCOMPARE(m.smsUsed, 2);
            QCOMPARE(m.tailNs, 40.0);
            QCOMPARE(m.tailIdleSmNs, 40.0 + 6 * 100.0);
            QCOMPARE(m.tailIdleShare, (40.0 + 600.0) / (8 * 100.0));
            big.run.device.smCount = 1;  // fewer than used (a bad count): the used SMs only
            QCOMPARE(analyze(big).tailIdleShare, 0.2);
        }
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
