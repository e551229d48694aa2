// What-if replay (issue 13, docs/whatif.md): the unchanged replay reproduces recorded kernels exactly (hand-made
// and synthetic ones of every pattern), edited parameters move time where the model says, the predicted timeline
// has the model's types, and bad parameters are refused.
#include "warpstage/whatif.h"

#include "whatif_testutil.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>

using namespace ws;
using K = IntervalKind;

class TestWhatIf : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    static void compareTimelines(const KernelTrace& a, const KernelTrace& b)
    {
        QCOMPARE(a.lanes.size(), b.lanes.size());
        for (std::size_t l = 0; l < a.lanes.size(); ++l) {
            QCOMPARE(a.lanes[l].size(), b.lanes[l].size());
            for (std::size_t i = 0; i < a.lanes[l].size(); ++i) {
                QCOMPARE(a.lanes[l].start[i], b.lanes[l].start[i]);
                QCOMPARE(a.lanes[l].duration[i], b.lanes[l].duration[i]);
                QCOMPARE(a.lanes[l].kind[i], b.lanes[l].kind[i]);
            }
        }
        QCOMPARE(a.ctas.size(), b.ctas.size());
        for (std::size_t c = 0; c < a.ctas.size(); ++c) {
            QCOMPARE(a.ctas[c].start, b.ctas[c].start);
            QCOMPARE(a.ctas[c].end, b.ctas[c].end);
        }
    }

private slots:
    void unchangedReplayReproducesHandMade()
    {
        const KernelTrace t = wstest::pipelineTrace();
        const WhatIfResult r = whatIf(t, WhatIfParams{});
        QCOMPARE(r.measuredNs, TimeNs(415));
        QCOMPARE(r.predictedNs, TimeNs(415));
        compareTimelines(r.predicted, t);
        QCOMPARE(r.predicted.loads.size(), t.loads.size());
        for (std::size_t i = 0; i < t.loads.size(); ++i) {
            QCOMPARE(r.predicted.loads[i].issue, t.loads[i].issue);
            QCOMPARE(r.predicted.loads[i].ready, t.loads[i].ready);
        }
        QVERIFY(r.notes.empty());
    }

    void unchangedReplayReproducesSynthetic_data()
    {
        QTest::addColumn<int>("pattern");
        QTest::newRow("sync") << int(SyntheticPattern::Sync);
        QTest::newRow("multistage") << int(SyntheticPattern::Multistage);
        QTest::newRow("warp_specialized") << int(SyntheticPattern::WarpSpecialized);
        QTest::newRow("pingpong") << int(SyntheticPattern::Pingpong);
    }
    void unchangedReplayReproducesSynthetic()
    {
        QFETCH(int, pattern);
        SyntheticParams sp;
        sp.pattern = SyntheticPattern(pattern);
        sp.ctas = 20;
        sp.smCount = 8;
        sp.tilesPerCta = 2;
        sp.kstepsPerTile = 16;
        const KernelTrace t = wstest::syntheticTrace(sp, m_dir.filePath(QStringLiteral("syn%1.wstrace").arg(pattern)));
        QVERIFY(t.intervalCount() > 0);
        const WhatIfModel model = WhatIfModel::build(t);
        const WhatIfResult r = model.predict(WhatIfParams{});
        QCOMPARE(r.predictedNs, r.measuredNs);
        compareTimelines(r.predicted, t);
        double total = 0;
        for (double v : r.path.attributionNs)
            total += v;
        QCOMPARE(total, double(r.measuredNs));
    }

    // --stages 3 on the hand-made pipeline: fill 2 no longer waits for a slot (issued at 30, ready 130), fill 3
    // waits for the release of fill 0 (140) + its wake-up 10 -> issued 150, ready 250; WaitData k3 ends at
    // 250 + its wake-up 10, MMA 260..290, Release ..300, Store ..355; CTA end 355, kernel end 365; from -5: 370 ns
    // (was 415).
    void moreStagesRemoveBackPressure()
    {
        const KernelTrace t = wstest::pipelineTrace();
        WhatIfParams p;
        p.stages = 3;
        const WhatIfResult r = whatIf(t, p);
        QCOMPARE(r.predictedNs, TimeNs(370));
        QCOMPARE(r.predicted.lanes[0].kind[3], K::WaitSlot);  // fill 2's wait for a slot is gone
        QCOMPARE(r.predicted.lanes[0].kstep[3], 2);
        QCOMPARE(r.predicted.lanes[0].duration[3], 0);
        QCOMPARE(r.path.attributionNs[int(Cause::BackPressure)], 10.0);  // fill 3 still waits for fill 0's slot
        // fewer stages than fills in flight: slower
        p.stages = 1;
        const WhatIfResult one = whatIf(t, p);
        QVERIFY2(one.predictedNs > 415, qPrintable(QString::number(one.predictedNs)));
    }

    void factorsScaleTheirPhases()
    {
        const KernelTrace t = wstest::pipelineTrace();
        const WhatIfModel m = WhatIfModel::build(t);
        WhatIfParams p;
        p.epilogue = 2.0;
        QCOMPARE(m.predict(p).predictedNs, TimeNs(415 + 55));  // the Store is the last phase
        p = {};
        p.loadLatency = 0.5;
        const TimeNs faster = m.predict(p).predictedNs;
        QVERIFY2(faster < 415, qPrintable(QString::number(faster)));
        p.loadLatency = 2.0;
        QVERIFY(m.predict(p).predictedNs > 415);
        p = {};
        p.mma = 2.0;
        QVERIFY(m.predict(p).predictedNs >= 415 + 4 * 30 - 100);  // 4 MMAs, some of them hide a load
    }

    // Two CTAs one after the other on one SM (one slot): --persistent lets the second one's prologue (Setup +
    // first load) run inside the first one's epilogue; --sms 2 runs them side by side.
    void persistentAndSms()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 200;
        t.ctas = {wstest::makeCta(0, 0, 0, 100), wstest::makeCta(1, 0, 100, 200)};
        for (int c = 0; c < 2; ++c) {
            const TimeNs b = 100 * c;
            t.lanes.push_back(wstest::makeLane(c, 0, 0, WarpRole::Consumer,
                                               {{K::Setup, b, b + 10}, {K::MmaIssue, b + 10, b + 70, 0},
                                                {K::Store, b + 70, b + 100}}));
        }
        const WhatIfModel m = WhatIfModel::build(t);
        QCOMPARE(m.summary().slotsPerSm, 1);
        QCOMPARE(m.predict({}).predictedNs, TimeNs(200));
        WhatIfParams p;
        p.persistent = true;
        const WhatIfResult per = m.predict(p);
        QCOMPARE(per.predictedNs, TimeNs(190));  // CTA 1's main loop starts at CTA 0's end: its Setup hides
        // The path crosses from CTA 1's start into CTA 0 (at its MMA's end, the last phase before CTA 1 began) and
        // still sums to the predicted time.
        double sum = 0;
        for (double v : per.path.attributionNs)
            sum += v;
        QCOMPARE(sum, 190.0);
        QCOMPARE(per.path.attributionNs[int(Cause::MmaThroughput)], 120.0);
        QCOMPARE(per.path.attributionNs[int(Cause::Epilogue)], 30.0);  // only CTA 1's Store
        p.overlapEpilogue = true;
        QCOMPARE(m.predict(p).predictedNs, TimeNs(160));  // ... at CTA 0's main loop end: 10+60+60+30
        p = {};
        p.sms = 2;
        QCOMPARE(m.predict(p).predictedNs, TimeNs(100));
    }

    // The epilogue of one tile overlaps the next tile's main loop; the last one stays.
    void overlapEpilogueKeepsTheLast()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 200;
        t.ctas = {wstest::makeCta(0, 0, 0, 200)};
        t.lanes.push_back(wstest::makeLane(0, 4, 1, WarpRole::Consumer,
                                           {{K::MmaIssue, 0, 60, 0}, {K::Store, 60, 100},
                                            {K::MmaIssue, 100, 160, 1}, {K::Store, 160, 200}}));
        WhatIfParams p;
        p.overlapEpilogue = true;
        const WhatIfResult r = whatIf(t, p);
        QCOMPARE(r.predictedNs, TimeNs(160));
        // the overlapped Store is still drawn, beside the next main loop
        QCOMPARE(r.predicted.lanes[0].size(), std::size_t(4));
        QCOMPARE(r.predicted.lanes[0].start[1], TimeNs(60));
        QCOMPARE(r.predicted.lanes[0].duration[1], 40);
        QCOMPARE(r.predicted.lanes[0].start[2], TimeNs(60));
    }

    void notesForParametersThatDoNotApply()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 50;
        t.ctas = {wstest::makeCta(0, 0, 0, 50)};
        t.lanes.push_back(wstest::makeLane(0, 0, 0, WarpRole::Worker, {{K::Compute, 0, 50, 0}}));
        WhatIfParams p;
        p.stages = 4;
        p.dropCtaSync = true;
        const WhatIfResult r = whatIf(t, p);
        QCOMPARE(r.predictedNs, TimeNs(50));
        QCOMPARE(r.notes.size(), std::size_t(2));
    }

    void badParametersRefused()
    {
        const WhatIfModel m = WhatIfModel::build(wstest::pipelineTrace());
        WhatIfParams p;
        p.mma = 0;
        QVERIFY_THROWS_EXCEPTION(WhatIfError, m.predict(p));
        p.mma = std::numeric_limits<double>::quiet_NaN();
        QVERIFY_THROWS_EXCEPTION(WhatIfError, m.predict(p));
        p = {};
        p.loadLatency = -1;
        QVERIFY_THROWS_EXCEPTION(WhatIfError, m.predict(p));
        p = {};
        p.stages = 65;
        QVERIFY_THROWS_EXCEPTION(WhatIfError, m.predict(p));
        p = {};
        p.sms = -2;
        QVERIFY_THROWS_EXCEPTION(WhatIfError, m.predict(p));
    }
};

QTEST_GUILESS_MAIN(TestWhatIf)
#include "tst_whatif.moc"
