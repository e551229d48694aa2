// What couples CTAs in the what-if replay beyond their SM slots (issue 13, docs/whatif.md "Cross-CTA ready flags",
// "Load bandwidth"): hand-made traces whose answers are worked out in the comments. An epilogue warp's wait on a
// ready flag that another CTA publishes (lce rung 4) ends after that CTA's Store, so a later publisher delays the
// waiter; two CTAs' loads on one SM that ask for more bytes per ns than the SM takes stretch their flights.
#include "warpstage/whatif.h"

#include "whatif_testutil.h"

#include <QtTest>

#include <string>

using namespace ws;
using K = IntervalKind;

namespace {

// lce rung 4 in miniature: B = 2 candidates, 2 per user (both read user 0), one M tile, one N tile.
// CTA 0 (SM 0) computed user 0's tile (tileM 0, tileN 1000): its epilogue warp completes the half's staging (Load
// n 0, half 0) at 10-20, waits for the consumers (Other 20-100) and stores the half into U, releasing the flag at
// the end of Store n 0 (100-200). CTA 1 (SM 1), candidate 1's tile (tileM 1, tileN 0): its epilogue warp waits on the
// flag from 10 to 210 (10 ns after the release: its wake-up), loads U (Load 210-220) and goes on (Other 220-250).
// The kernel ends 10 ns after CTA 1.
KernelTrace flagTrace(bool withTag)
{
    KernelTrace t;
    t.run.id = 1;
    t.run.variant = "lce_persistent";
    if (withTag)
        t.run.notes = "[ws-rung family=lce rung=4 name=persistent flops=1 bytes=1 compulsory=1 warmup=1 iters=1 "
                      "shape=128x128x64x64x2x2 setup=fillUniform]; hand-made";
    t.launch.id = 1;
    t.launch.traced = true;
    t.launch.start = 0;
    t.launch.end = 260;
    t.ctas.push_back(wstest::makeCta(0, 0, 0, 200));
    t.ctas.push_back(wstest::makeCta(1, 1, 0, 250));
    t.lanes.push_back(wstest::makeLane(0, 1, 0, WarpRole::Epilogue,
                                       {{K::Setup, 0, 10}, {K::Load, 10, 20, 0, 0}, {K::Other, 20, 100},
                                        {K::Store, 100, 200, 0, 0}}));
    t.lanes.push_back(wstest::makeLane(1, 1, 0, WarpRole::Epilogue,
                                       {{K::Setup, 0, 10}, {K::WaitOrder, 10, 210, 0, 0}, {K::Load, 210, 220, 0, 0},
                                        {K::Other, 220, 250}}));
    auto tile = [&](int cta, int m, int n, TimeNs s, TimeNs e) {
        TileSpan ts;
        ts.ctaId = cta;
        ts.warpId = t.lanes[std::size_t(cta)].warpId;
        ts.tileM = m;
        ts.tileN = n;
        ts.start = s;
        ts.end = e;
        t.tiles.push_back(ts);
    };
    tile(0, 0, 1000, 5, 100);
    tile(1, 1, 0, 5, 250);
    return t;
}

// Two CTAs of a producer and a consumer warp, one after the other on SM 0 (one slot), each one fill of 3500 bytes
// in flight for 100 ns: 35 B/ns, exactly the SM's load bandwidth at 1 GHz (35 B per cycle). Each CTA: IssueLoad
// 0-10, WaitData 0-100 (the load's ready), MmaIssue 100-150, Release 150-160; CTA 1 starts when CTA 0 ends (160).
KernelTrace bandwidthTrace()
{
    KernelTrace t;
    t.run.id = 1;
    t.run.variant = "hand_made_bandwidth";
    t.run.device.computeMajor = 9;
    t.run.device.smClockKHz = 1000000;  // 1 GHz: 35 B/ns per SM
    t.launch.id = 1;
    t.launch.traced = true;
    t.launch.start = 0;
    t.launch.end = 330;
    for (int c = 0; c < 2; ++c) {
        const TimeNs c0 = 160 * c;
        t.ctas.push_back(wstest::makeCta(c, 0, c0, c0 + 160));
        t.lanes.push_back(wstest::makeLane(c, 0, 0, WarpRole::Producer, {{K::IssueLoad, c0, c0 + 10, 0, 0}}));
        t.lanes.push_back(wstest::makeLane(c, 4, 1, WarpRole::Consumer,
                                           {{K::WaitData, c0, c0 + 100, 0, 0},
                                            {K::MmaIssue, c0 + 100, c0 + 150, 0, 0},
                                            {K::Release, c0 + 150, c0 + 160, 0, 0}}));
        LoadTransfer ld;
        ld.ctaId = c;
        ld.kstep = 0;
        ld.slot = 0;
        ld.issue = c0;
        ld.ready = c0 + 100;
        ld.bytes = 3500;
        t.loads.push_back(ld);
    }
    return t;
}

bool mentions(const std::vector<std::string>& v, const char* text)
{
    for (const std::string& n : v)
        if (n.find(text) != std::string::npos)
            return true;
    return false;
}

}  // namespace

class TestWhatIfCrossCta : public QObject {
    Q_OBJECT

private slots:
    void flagWaitPairsWithItsPublisher()
    {
        const KernelTrace t = flagTrace(true);
        const WhatIfModel model = WhatIfModel::build(t);
        QCOMPARE(model.summary().flagEdges, std::int64_t(1));
        QCOMPARE(model.summary().unexplainedWaits, std::int64_t(0));
        QVERIFY(!mentions(model.summary().missing, "flag"));
        // unchanged: every phase where it was recorded
        const WhatIfResult r = model.predict(WhatIfParams{});
        QCOMPARE(r.predictedNs, TimeNs(260));
        for (std::size_t l = 0; l < t.lanes.size(); ++l)
            for (std::size_t i = 0; i < t.lanes[l].size(); ++i) {
                QCOMPARE(r.predicted.lanes[l].start[i], t.lanes[l].start[i]);
                QCOMPARE(r.predicted.lanes[l].duration[i], t.lanes[l].duration[i]);
            }
    }

    void laterPublisherDelaysTheWaiter()
    {
        // --epilogue 2: CTA 0's Store runs 100-300, the flag is released at 300; CTA 1's wait ends 10 ns later (310),
        // Load 310-320, Other 320-350; the kernel ends at 350 + 10.
        const WhatIfModel model = WhatIfModel::build(flagTrace(true));
        WhatIfParams p;
        p.epilogue = 2.0;
        const WhatIfResult r = model.predict(p);
        QCOMPARE(r.predictedNs, TimeNs(360));
        QCOMPARE(r.predicted.lanes[1].start[2], TimeNs(310));
        // The critical path crosses from CTA 1's flag wait to CTA 0's Store (epilogue: 200 ns of it).
        bool crossed = false;
        for (const PathStep& s : r.path.steps)
            crossed = crossed || (s.ctaIndex == 0 && s.lane == 0 && s.cause == Cause::Epilogue && s.end == 300);
        QVERIFY(crossed);
        QCOMPARE(r.path.attributionNs[int(Cause::Epilogue)], 200.0);
        double sum = 0;
        for (double v : r.path.attributionNs)
            sum += v;
        QCOMPARE(sum, 360.0);
        // An earlier publisher lets the waiter go earlier: --epilogue 0.5 releases at 150, the wait ends at 160.
        p.epilogue = 0.5;
        const WhatIfResult e = model.predict(p);
        QCOMPARE(e.predictedNs, TimeNs(210));
    }

    void unpairedFlagWaitsSayWhatIsMissing()
    {
        // Without the run's shape tag the wait's flag is unknown: it keeps its recorded 200 ns and the graph says so.
        const WhatIfModel model = WhatIfModel::build(flagTrace(false));
        QCOMPARE(model.summary().flagEdges, std::int64_t(0));
        QCOMPARE(model.summary().unexplainedWaits, std::int64_t(1));
        QVERIFY(mentions(model.summary().missing, "flag's index"));
        QCOMPARE(model.predict(WhatIfParams{}).predictedNs, TimeNs(260));
        WhatIfParams p;
        p.epilogue = 2.0;
        QCOMPARE(model.predict(p).predictedNs, TimeNs(310));  // CTA 0 ends at 300; CTA 1 unchanged
    }

    void bandwidthKeepsTheUnchangedReplayExact()
    {
        const KernelTrace t = bandwidthTrace();
        const WhatIfModel model = WhatIfModel::build(t);
        QCOMPARE(model.summary().loadBytesPerNsPerSm, 35.0);
        QVERIFY(model.summary().bandwidth.find("35 B/ns per SM") != std::string::npos);
        QCOMPARE(model.predict(WhatIfParams{}).predictedNs, TimeNs(330));
    }

    void bandwidthStretchesSharedFlights()
    {
        const WhatIfModel model = WhatIfModel::build(bandwidthTrace());
        // --ctas-per-sm 2: both CTAs start at 0 and both fills fly at once, asking 2 x 35 B/ns of the SM's 35.
        // Without the bandwidth (the default since session 9: opt-in, `--load-bandwidth`) each keeps its 100 ns
        // flight: CTA ends at 160, kernel at 170.
        WhatIfParams p;
        QVERIFY(!p.loadBandwidth);
        QVERIFY(p.isDefault());
        p.slotsPerSm = 2;
        QCOMPARE(model.predict(p).predictedNs, TimeNs(170));
        p.loadBandwidth = false;  // `--no-load-bandwidth`: the same as the default
        QCOMPARE(model.predict(p).predictedNs, TimeNs(170));
        // With it: a flight stretched by s asks 3500 / (100 s) B/ns, so two ask 2 / s of the SM and the stretch
        // settles where s = 2 / s (the damped rounds are Newton's steps for it: 2, 1.5, 1.4167, 1.41422):
        // flights of round(100 x 1.41422) = 141 ns, CTAs end at 141 + 60 = 201, the kernel at 211.
        p.loadBandwidth = true;
        const WhatIfResult r = model.predict(p);
        QCOMPARE(r.predictedNs, TimeNs(211));
        QCOMPARE(r.predicted.loads.size(), std::size_t(2));
        QCOMPARE(r.predicted.loads[0].ready - r.predicted.loads[0].issue, TimeNs(141));
        // One CTA per SM (recorded placement, --load-latency 1.0 but --mma 2): no flight overlaps another; the
        // demand is what was recorded, nothing stretches (kernel: 2 x (100 + 100 + 10) + 10).
        WhatIfParams q;
        q.mma = 2.0;
        QCOMPARE(model.predict(q).predictedNs, TimeNs(430));
        q.loadBandwidth = true;
        QCOMPARE(model.predict(q).predictedNs, TimeNs(430));
        // turning the model on is a changed parameter (a replay, not the recorded kernel) but the one-CTA-per-SM
        // placement asks no more than recorded: still exact
        WhatIfParams on;
        on.loadBandwidth = true;
        QVERIFY(!on.isDefault());
        QCOMPARE(model.predict(on).predictedNs, TimeNs(330));
    }
};

QTEST_GUILESS_MAIN(TestWhatIfCrossCta)
#include "tst_whatif_crosscta.moc"
