// What-if replay of 2-CTA clusters, dedicated epilogue warps and --tile-order (issue 13, docs/whatif.md "Clusters",
// "Tile order"): hand-made traces whose answers are worked out by hand in the comments. A cluster pair's producer
// waits for the later of both CTAs' releases; the unchanged replay of a pair stays exact; the critical path crosses
// to the partner CTA; an epilogue warp waits for the consumers' hand-off; tiles dealt in a new order move the
// kernel's end where the deal says.
#include "warpstage/whatif.h"

#include "whatif_testutil.h"

#include <QtTest>

#include <string>

using namespace ws;
using K = IntervalKind;

namespace {

// Two CTAs of one 2x1x1 cluster, both started at 0, a 1-slot ring, 3 fills, flights of 100 ns. CTA 0's consumer is
// slow (MMA 60 ns), CTA 1's fast (MMA 20 ns) but with a long store, so CTA 1 ends last. Both producers wait for
// the later release of the pair (CTA 0's), 10 ns after it.
KernelTrace clusterTrace()
{
    KernelTrace t;
    t.run.id = 1;
    t.run.variant = "hand_made_cluster";
    t.launch.id = 1;
    t.launch.traced = true;
    t.launch.start = 0;
    t.launch.end = 610;
    t.launch.grid[0] = 2;
    t.launch.cluster[0] = 2;
    t.ctas.push_back(wstest::makeCta(0, 0, 0, 540));
    t.ctas.push_back(wstest::makeCta(1, 1, 0, 600));
    for (int c = 0; c < 2; ++c) {
        t.lanes.push_back(wstest::makeLane(c, 0, 0, WarpRole::Producer,
                                           {{K::IssueLoad, 0, 10, 0, 0},
                                            {K::WaitSlot, 10, 170, 1, 0},
                                            {K::IssueLoad, 170, 180, 1, 0},
                                            {K::WaitSlot, 180, 340, 2, 0},
                                            {K::IssueLoad, 340, 350, 2, 0}}));
        for (int k = 0; k < 3; ++k) {
            LoadTransfer ld;
            ld.ctaId = c;
            ld.kstep = k;
            ld.slot = 0;
            ld.issue = k == 0 ? 0 : k == 1 ? 170 : 340;
            ld.ready = ld.issue + 100;
            t.loads.push_back(ld);
        }
    }
    t.lanes.push_back(wstest::makeLane(0, 4, 1, WarpRole::Consumer,
                                       {{K::WaitData, 0, 100, 0, 0},
                                        {K::MmaIssue, 100, 160, 0, 0},
                                        {K::Release, 160, 165, 0, 0},
                                        {K::WaitData, 165, 270, 1, 0},
                                        {K::MmaIssue, 270, 330, 1, 0},
                                        {K::Release, 330, 335, 1, 0},
                                        {K::WaitData, 335, 440, 2, 0},
                                        {K::MmaIssue, 440, 500, 2, 0},
                                        {K::Release, 500, 505, 2, 0},
                                        {K::Store, 505, 540}}));
    t.lanes.push_back(wstest::makeLane(1, 4, 1, WarpRole::Consumer,
                                       {{K::WaitData, 0, 100, 0, 0},
                                        {K::MmaIssue, 100, 120, 0, 0},
                                        {K::Release, 120, 125, 0, 0},
                                        {K::WaitData, 125, 270, 1, 0},
                                        {K::MmaIssue, 270, 290, 1, 0},
                                        {K::Release, 290, 295, 1, 0},
                                        {K::WaitData, 295, 440, 2, 0},
                                        {K::MmaIssue, 440, 460, 2, 0},
                                        {K::Release, 460, 465, 2, 0},
                                        {K::Store, 465, 600}}));
    return t;
}

// Two persistent CTAs on two SMs, one consumer warp each, two tiles each: CTA 0 computes tiles (0,0) and (0,1) of
// 100 ns each, CTA 1 tiles (1,0) and (1,1) of 10 ns each, after a 5 ns setup; the kernel ends 5 ns after CTA 0.
KernelTrace tileTrace()
{
    KernelTrace t;
    t.run.id = 1;
    t.run.variant = "hand_made_tiles";
    t.launch.id = 1;
    t.launch.traced = true;
    t.launch.start = 0;
    t.launch.end = 210;
    t.ctas.push_back(wstest::makeCta(0, 0, 0, 205));
    t.ctas.push_back(wstest::makeCta(1, 1, 0, 25));
    t.lanes.push_back(wstest::makeLane(0, 4, 1, WarpRole::Consumer,
                                       {{K::Setup, 0, 5}, {K::Compute, 5, 105, 0}, {K::Compute, 105, 205, 1}}));
    t.lanes.push_back(wstest::makeLane(1, 4, 1, WarpRole::Consumer,
                                       {{K::Setup, 0, 5}, {K::Compute, 5, 15, 0}, {K::Compute, 15, 25, 1}}));
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
    tile(0, 0, 0, 5, 105);
    tile(0, 0, 1, 105, 205);
    tile(1, 1, 0, 5, 15);
    tile(1, 1, 1, 15, 25);
    return t;
}

bool hasNote(const WhatIfResult& r, const char* text)
{
    for (const std::string& n : r.notes)
        if (n.find(text) != std::string::npos)
            return true;
    return false;
}

}  // namespace

class TestWhatIfCluster : public QObject {
    Q_OBJECT

private slots:
    void unchangedPairReplaysExactly()
    {
        const KernelTrace t = clusterTrace();
        const WhatIfModel model = WhatIfModel::build(t);
        QCOMPARE(model.summary().clusterPairs, 1);
        // 2 slot waits per producer (fills 1, 2) and 3 fills per CTA wait for the partner's load too.
        QCOMPARE(model.summary().clusterEdges, std::int64_t(2 * 2 + 2 * 3));
        QCOMPARE(model.summary().unexplainedWaits, std::int64_t(0));
        const WhatIfResult r = model.predict(WhatIfParams{});
        QCOMPARE(r.predictedNs, TimeNs(610));
        for (std::size_t l = 0; l < t.lanes.size(); ++l) {
            QCOMPARE(r.predicted.lanes[l].size(), t.lanes[l].size());
            for (std::size_t i = 0; i < t.lanes[l].size(); ++i) {
                QCOMPARE(r.predicted.lanes[l].start[i], t.lanes[l].start[i]);
                QCOMPARE(r.predicted.lanes[l].duration[i], t.lanes[l].duration[i]);
            }
        }
    }

    void slotWaitsForThePartnersRelease()
    {
        // --mma 0.5: CTA 0's MMA 30 ns, CTA 1's 10 ns. Fill 0 ready at 100; releases at 130 (CTA 0) and 110;
        // both producers issue fill 1 at 130 + 10 = 140, ready 240; releases 270 and 250; fill 2 issued at 280,
        // ready 380; CTA 1: MMA 380-390, release 390-395, store 395-530; the kernel ends 10 ns later: 540.
        // (Run independently, CTA 1's producer would wait for its own release only: 110 + its recorded lag
        // behind it, 50 ns, = 160.)
        const KernelTrace t = clusterTrace();
        WhatIfParams p;
        p.mma = 0.5;
        p.sharedResources = false;
        const WhatIfResult r = whatIf(t, p);
        QCOMPARE(r.predictedNs, TimeNs(540));
        for (int lane : {0, 1}) {  // the producers of CTA 0 and CTA 1
            const Lane& prod = r.predicted.lanes[std::size_t(lane)];
            std::vector<TimeNs> issues;
            for (std::size_t i = 0; i < prod.size(); ++i)
                if (prod.kind[i] == K::IssueLoad)
                    issues.push_back(prod.start[i]);
            QCOMPARE(issues, (std::vector<TimeNs>{0, 140, 280}));
        }
        // The path ends in CTA 1 and crosses to CTA 0 where its release freed the slot of fill 2: CTA 0's MMA of
        // fill 1 (240-270), which ended where that release began.
        bool crossed = false;
        for (const PathStep& s : r.path.steps)
            crossed = crossed || (s.ctaIndex == 0 && s.lane == 2 && s.kstep == 1 && s.start == 240 && s.end == 270);
        QVERIFY(crossed);
        double total = 0;
        for (double v : r.path.attributionNs)
            total += v;
        QCOMPARE(total, 540.0);
    }

    void slotWaitBeforeThePartnersRecordedRelease()
    {
        // Session 10 (lce rung 4's 391 slot waits): CTA 1's consumer is recorded releasing fill 1 at 345, after
        // CTA 0's producer ended its wait for fill 2 at 340 -- which the shared ring does not allow (the empty
        // barrier counts both CTAs' releases), so the two SMs' clocks disagree there. That wait keeps its own
        // CTA's release (330, lag 10) instead of becoming unexplained; every other cross-CTA edge stays.
        KernelTrace t = clusterTrace();
        t.lanes[1] = wstest::makeLane(1, 0, 0, WarpRole::Producer,
                                      {{K::IssueLoad, 0, 10, 0, 0},
                                       {K::WaitSlot, 10, 170, 1, 0},
                                       {K::IssueLoad, 170, 180, 1, 0},
                                       {K::WaitSlot, 180, 350, 2, 0},
                                       {K::IssueLoad, 350, 360, 2, 0}});
        for (LoadTransfer& ld : t.loads)
            if (ld.ctaId == 1 && ld.kstep == 2)
                ld.issue = 350, ld.ready = 450;
        t.lanes[3] = wstest::makeLane(1, 4, 1, WarpRole::Consumer,
                                      {{K::WaitData, 0, 100, 0, 0},
                                       {K::MmaIssue, 100, 120, 0, 0},
                                       {K::Release, 120, 125, 0, 0},
                                       {K::WaitData, 125, 270, 1, 0},
                                       {K::MmaIssue, 270, 345, 1, 0},
                                       {K::Release, 345, 350, 1, 0},
                                       {K::WaitData, 350, 450, 2, 0},
                                       {K::MmaIssue, 450, 470, 2, 0},
                                       {K::Release, 470, 475, 2, 0},
                                       {K::Store, 475, 600}});
        const WhatIfModel model = WhatIfModel::build(t);
        QCOMPARE(model.summary().unexplainedWaits, std::int64_t(0));
        QCOMPARE(model.summary().uncoupledSlotWaits, std::int64_t(1));
        QCOMPARE(model.summary().clockSkewNs, std::int64_t(5));
        QCOMPARE(model.summary().slotEdges, std::int64_t(4));
        QCOMPARE(model.summary().clusterEdges, std::int64_t(3 + 6));  // 3 coupled slot waits, 6 coupled fills
        QVERIFY(!model.summary().reduced);
        const WhatIfResult r = model.predict(WhatIfParams{});
        QCOMPARE(r.predictedNs, TimeNs(610));
        for (std::size_t l = 0; l < t.lanes.size(); ++l)
            for (std::size_t i = 0; i < t.lanes[l].size(); ++i) {
                QCOMPARE(r.predicted.lanes[l].start[i], t.lanes[l].start[i]);
                QCOMPARE(r.predicted.lanes[l].duration[i], t.lanes[l].duration[i]);
            }
        // --mma 0.5 on CTA 0 alone would not show it; the replay with the partner's release ignored for that
        // wait: CTA 0's producer issues fill 2 at its own release of fill 1 + 10, wherever CTA 1's falls.
        WhatIfParams p;
        p.mma = 0.5;
        p.sharedResources = false;
        const WhatIfResult h = model.predict(p);
        const Lane& prod0 = h.predicted.lanes[0];
        const Lane& cons0 = h.predicted.lanes[2];
        TimeNs issue2 = -1, release1 = -1;
        for (std::size_t i = 0; i < prod0.size(); ++i)
            if (prod0.kind[i] == K::IssueLoad && prod0.kstep[i] == 2)
                issue2 = prod0.start[i];
        for (std::size_t i = 0; i < cons0.size(); ++i)
            if (cons0.kind[i] == K::Release && cons0.kstep[i] == 1)
                release1 = cons0.start[i];
        QVERIFY(release1 > 0);
        QCOMPARE(issue2, release1 + 10);
    }

    void fillWaitsForThePartnersLoad()
    {
        // One fill per CTA; CTA 1's producer issues its part 40 ns after CTA 0's, and both consumers see the fill
        // at 140: a flight of 100 ns after the later issue (CTA 0's own load was recorded as a 140 ns flight).
        // --load-latency 0.5: data at 40 + 50 = 90 in both CTAs (CTA 0 on its own would see it at 0 + 70).
        KernelTrace t;
        t.run.id = 1;
        t.launch.id = 1;
        t.launch.traced = true;
        t.launch.start = 0;
        t.launch.end = 170;
        t.launch.grid[0] = 2;
        t.launch.cluster[0] = 2;
        t.ctas.push_back(wstest::makeCta(0, 0, 0, 165));
        t.ctas.push_back(wstest::makeCta(1, 1, 0, 165));
        t.lanes.push_back(wstest::makeLane(0, 0, 0, WarpRole::Producer, {{K::IssueLoad, 0, 10, 0, 0}}));
        t.lanes.push_back(wstest::makeLane(1, 0, 0, WarpRole::Producer,
                                           {{K::Setup, 0, 40}, {K::IssueLoad, 40, 50, 0, 0}}));
        for (int c = 0; c < 2; ++c) {
            t.lanes.push_back(wstest::makeLane(c, 4, 1, WarpRole::Consumer,
                                               {{K::WaitData, 0, 140, 0, 0},
                                                {K::MmaIssue, 140, 160, 0, 0},
                                                {K::Release, 160, 165, 0, 0}}));
            LoadTransfer ld;
            ld.ctaId = c;
            ld.kstep = 0;
            ld.slot = 0;
            ld.issue = c == 0 ? 0 : 40;
            ld.ready = 140;
            t.loads.push_back(ld);
        }
        const WhatIfModel model = WhatIfModel::build(t);
        QCOMPARE(model.predict(WhatIfParams{}).predictedNs, TimeNs(170));
        WhatIfParams p;
        p.loadLatency = 0.5;
        p.sharedResources = false;
        const WhatIfResult r = model.predict(p);
        for (int lane : {2, 3}) {
            const Lane& c = r.predicted.lanes[std::size_t(lane)];
            QCOMPARE(c.kind[1], K::MmaIssue);
            QCOMPARE(c.start[1], TimeNs(90));
        }
        QCOMPARE(r.predictedNs, TimeNs(120));
        // The path's load flight starts at CTA 1's issue (the later one).
        bool fromPartner = false;
        for (const PathStep& s : r.path.steps)
            fromPartner = fromPartner || (s.what == PathStep::What::LoadFlight && s.ctaIndex == 1 && s.start == 40);
        QVERIFY(fromPartner);
    }

    void epilogueWarpWaitsForTheHandoff()
    {
        // A dedicated epilogue warp (lce rungs): its WaitData n (slot = consumer warpgroup 0) ends 40 ns after the
        // consumers began their Epilogue n (the add into the staging, then the hand-off). --mma 0.5: the
        // consumers' Compute halves: Epilogue 0 at 50-80, Epilogue 1 at 130-160; the epilogue warp's waits end at
        // 90 and 170, its stores at 120 and 200; the kernel ends 5 ns after the CTA: 205.
        KernelTrace t;
        t.run.id = 1;
        t.launch.id = 1;
        t.launch.traced = true;
        t.launch.start = 0;
        t.launch.end = 305;
        t.ctas.push_back(wstest::makeCta(0, 0, 0, 300));
        t.lanes.push_back(wstest::makeLane(0, 4, 1, WarpRole::Consumer,
                                           {{K::Compute, 0, 100},
                                            {K::Epilogue, 100, 130, 0},
                                            {K::Compute, 130, 230},
                                            {K::Epilogue, 230, 260, 1}}));
        t.lanes.push_back(wstest::makeLane(0, 1, 0, WarpRole::Epilogue,
                                           {{K::WaitData, 0, 140, 0, 0},
                                            {K::Store, 140, 170, 0, 0},
                                            {K::WaitData, 170, 270, 1, 0},
                                            {K::Store, 270, 300, 1, 0}}));
        const WhatIfModel model = WhatIfModel::build(t);
        QCOMPARE(model.summary().handoffEdges, std::int64_t(2));
        QCOMPARE(model.summary().unexplainedWaits, std::int64_t(0));
        QCOMPARE(model.predict(WhatIfParams{}).predictedNs, TimeNs(305));
        WhatIfParams p;
        p.mma = 0.5;
        p.sharedResources = false;
        const WhatIfResult r = model.predict(p);
        QCOMPARE(r.predictedNs, TimeNs(205));
        const Lane& epi = r.predicted.lanes[1];
        QCOMPARE(epi.end(0), TimeNs(90));
        QCOMPARE(epi.end(2), TimeNs(170));
        // The path: the last store <- the wait's 40 ns after the hand-off (epilogue work) <- the consumers.
        bool handoff = false, consumer = false;
        for (const PathStep& s : r.path.steps) {
            handoff = handoff || (s.lane == 1 && s.start == 130 && s.end == 170 && s.cause == Cause::Epilogue);
            consumer = consumer || (s.lane == 0 && s.cause == Cause::MmaThroughput);
        }
        QVERIFY(handoff);
        QVERIFY(consumer);
    }

    void tileOrderDealsTiles_data()
    {
        QTest::addColumn<int>("order");
        QTest::addColumn<qint64>("predicted");
        // Units by block: CTA 0, CTA 1; tile q goes to unit q mod 2. recorded: 210.
        // row (0,0) (0,1) (1,0) (1,1): CTA 0 gets 100 + 10, CTA 1 100 + 10: 5 + 110 + 5 = 120.
        QTest::newRow("row") << int(TileOrder::Row) << qint64(120);
        // column (0,0) (1,0) (0,1) (1,1): CTA 0 gets both 100 ns tiles again: 210.
        QTest::newRow("column") << int(TileOrder::Column) << qint64(210);
        // reverse of the recorded order (0,0)@5 (1,0)@5 (1,1)@15 (0,1)@105: (0,1) (1,1) (1,0) (0,0): 120.
        QTest::newRow("reverse") << int(TileOrder::Reverse) << qint64(120);
        // longest first: (0,0) (0,1) then the 10 ns tiles: 120.
        QTest::newRow("longest-first") << int(TileOrder::LongestFirst) << qint64(120);
        QTest::newRow("recorded") << int(TileOrder::Recorded) << qint64(210);
    }
    void tileOrderDealsTiles()
    {
        QFETCH(int, order);
        QFETCH(qint64, predicted);
        const KernelTrace t = tileTrace();
        const WhatIfModel model = WhatIfModel::build(t);
        QVERIFY(model.summary().persistent);
        QCOMPARE(model.summary().tiles, 4);
        WhatIfParams p;
        p.tileOrder = TileOrder(order);
        const WhatIfResult r = model.predict(p);
        QCOMPARE(r.measuredNs, TimeNs(210));
        QCOMPARE(r.predictedNs, TimeNs(predicted));
        QCOMPARE(hasNote(r, "predicted time only"), TileOrder(order) != TileOrder::Recorded);
    }

    void tileOrderCtaWideTiles()
    {
        // Tiles recorded CTA-wide (warp 0: no warp of their own) go on the CTA's consumer lane: the same deal.
        KernelTrace t = tileTrace();
        for (TileSpan& ts : t.tiles)
            ts.warpId = 0;
        WhatIfParams p;
        p.tileOrder = TileOrder::LongestFirst;
        const WhatIfModel model = WhatIfModel::build(t);
        QCOMPARE(model.summary().tiles, 4);
        QCOMPARE(model.predict(p).predictedNs, TimeNs(120));
    }

    void tileOrderNotForOneTileCtas()
    {
        WhatIfParams p;
        p.tileOrder = TileOrder::LongestFirst;
        const WhatIfResult r = whatIf(wstest::pipelineTrace(), p);
        QCOMPARE(r.predictedNs, r.measuredNs);
        QVERIFY(hasNote(r, "not persistent"));
        QVERIFY(!p.isDefault());
    }

    void tileOrderNames()
    {
        for (TileOrder o : {TileOrder::Recorded, TileOrder::Row, TileOrder::Column, TileOrder::Reverse,
                            TileOrder::LongestFirst}) {
            TileOrder back = TileOrder::Recorded;
            QVERIFY(tileOrderFromName(tileOrderName(o), &back));
            QCOMPARE(back, o);
        }
        TileOrder x = TileOrder::Row;
        QVERIFY(!tileOrderFromName("diagonal", &x));
        QCOMPARE(x, TileOrder::Row);
    }
};

QTEST_GUILESS_MAIN(TestWhatIfCluster)
#include "tst_whatif_cluster.moc"
