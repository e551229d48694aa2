// What-if replay with shared resources (issue 13, docs/whatif.md "Shared resources"): the tensor cores of an SM
// are shared by its resident CTAs. Hand-made traces whose answer is known: an SM of 4096 flop/ns (sm_90 at a
// recorded 1 GHz), MMA phases of known work; --ctas-per-sm puts CTAs recorded one after another on one SM side by
// side, and the replay serializes their MMA at the SM's throughput. Also the graph's other mechanisms of session 7:
// the warpgroup-collective MMA issue (--producer-warp) and censored load flights.
#include "warpstage/whatif.h"

#include "whatif_testutil.h"

#include <QtTest>

using namespace ws;
using K = IntervalKind;

namespace {

// n CTAs on SM 0, each one MmaIssue of fill 0 lasting `mmaNs`, run one after another (one CTA resident at a
// time) or all at once (`together`). The shape gives each fill `flopPerFill` (2 M N K / n).
KernelTrace smTrace(int n, TimeNs mmaNs, bool together, int m, int nn, int k)
{
    KernelTrace t;
    t.run.id = 1;
    t.run.variant = "hand_made_sm";
    t.run.m = m;
    t.run.n = nn;
    t.run.k = k;
    t.run.device.computeMajor = 9;
    t.run.device.smClockKHz = 1000000;  // 1 GHz: 4096 flop/ns per SM
    t.launch.id = 1;
    t.launch.traced = true;
    t.launch.start = 0;
    t.launch.end = together ? mmaNs : n * mmaNs;
    for (int c = 0; c < n; ++c) {
        const TimeNs b = together ? 0 : c * mmaNs;
        t.ctas.push_back(wstest::makeCta(c, 0, b, b + mmaNs));
        t.lanes.push_back(wstest::makeLane(c, 0, 0, WarpRole::Worker, {{K::MmaIssue, b, b + mmaNs, 0}}));
    }
    return t;
}

}  // namespace

class TestWhatIfResources : public QObject {
    Q_OBJECT

private slots:
    // The capacity and the work of a fill come from the recorded clock and shape.
    void capacityFromTheTrace()
    {
        // 2 * 80 * 80 * 96 / 3 fills = 409600 flop = 100 ns of one SM's 4096 flop/ns
        const WhatIfModel m = WhatIfModel::build(smTrace(3, 100, false, 80, 80, 96));
        QCOMPARE(m.summary().mmaGroups, std::int64_t(3));
        QCOMPARE(m.summary().mmaFlopPerNsPerSm, 4096.0);
        QCOMPARE(m.summary().mmaFlopPerFill, 409600.0);
        QVERIFY2(m.summary().resources.find("4096 flop/ns per SM") != std::string::npos,
                 m.summary().resources.c_str());
    }

    // Three CTAs recorded one after another, each asking for the whole SM (409600 flop in 100 ns): resident
    // together they share the tensor cores and all end at 300 ns, as recorded. Without the shared resource they
    // would end at 100 ns.
    void coResidentCtasShareTheTensorCores()
    {
        const WhatIfModel m = WhatIfModel::build(smTrace(3, 100, false, 80, 80, 96));
        QCOMPARE(m.predict({}).predictedNs, TimeNs(300));
        WhatIfParams p;
        p.slotsPerSm = 3;
        const WhatIfResult r = m.predict(p);
        QCOMPARE(r.predictedNs, TimeNs(300));
        for (int c = 0; c < 3; ++c) {
            QCOMPARE(r.predicted.ctas[c].start, TimeNs(0));
            QCOMPARE(r.predicted.ctas[c].end, TimeNs(300));
            QCOMPARE(r.predicted.lanes[c].duration[0], 300);
        }
        p.sharedResources = false;
        QCOMPARE(m.predict(p).predictedNs, TimeNs(100));
    }

    // The resource rounds replay only the CTAs whose stretch changed (s7-whatifspeed): a CTA replayed again must
    // start from scratch, so the phase after its stretched MMA follows the new MMA end, not the last round's.
    void roundsReplayAChangedCtaFromScratch()
    {
        KernelTrace t = smTrace(3, 100, false, 80, 80, 96);
        t.launch.end = 3 * 150;
        for (int c = 0; c < 3; ++c) {
            const TimeNs b = c * 150;
            t.ctas[std::size_t(c)] = wstest::makeCta(c, 0, b, b + 150);
            t.lanes[std::size_t(c)] = wstest::makeLane(c, 0, 0, WarpRole::Worker,
                                                       {{K::MmaIssue, b, b + 100, 0}, {K::Epilogue, b + 100, b + 150, 0}});
        }
        const WhatIfModel m = WhatIfModel::build(t);
        QCOMPARE(m.predict({}).predictedNs, TimeNs(450));
        WhatIfParams p;
        p.slotsPerSm = 3;  // three whole-SM MMAs side by side: 300 ns each, then the 50 ns epilogue
        const WhatIfResult r = m.predict(p);
        QCOMPARE(r.predictedNs, TimeNs(350));
        for (int c = 0; c < 3; ++c) {
            const Lane& l = r.predicted.lanes[std::size_t(c)];
            QCOMPARE(l.duration[0], 300);
            QCOMPARE(l.start[1], l.start[0] + 300);
            QCOMPARE(r.predicted.ctas[std::size_t(c)].end, l.start[1] + 50);
        }
        p.sharedResources = false;
        QCOMPARE(m.predict(p).predictedNs, TimeNs(150));
    }

    // Each asking for half the SM (204800 flop in 100 ns): three at once ask for 1.5 SMs -> 150 ns; two at once
    // fit (1.0 SM) -> no stretch, 100 + 100 for the third.
    void partialDemandStretchesByTheExcess()
    {
        // 2 * 40 * 80 * 96 / 3 = 204800 flop per fill
        const WhatIfModel m = WhatIfModel::build(smTrace(3, 100, false, 40, 80, 96));
        WhatIfParams p;
        p.slotsPerSm = 3;
        QCOMPARE(m.predict(p).predictedNs, TimeNs(150));
        p.slotsPerSm = 2;
        QCOMPARE(m.predict(p).predictedNs, TimeNs(200));
    }

    // Recorded under contention: two CTAs side by side, each asking for the whole SM over its 200 ns, ran at half
    // speed. One at a time (--ctas-per-sm 1) each runs at full speed: 100 ns each, 200 ns in all.
    void recordedContentionIsTakenOut()
    {
        // 2 * 80 * 80 * 128 / 2 = 819200 flop per fill = 4096 flop/ns over 200 ns
        const WhatIfModel m = WhatIfModel::build(smTrace(2, 200, true, 80, 80, 128));
        QCOMPARE(m.summary().slotsPerSm, 2);
        QCOMPARE(m.predict({}).predictedNs, TimeNs(200));
        WhatIfParams p;
        p.slotsPerSm = 1;
        const WhatIfResult r = m.predict(p);
        QCOMPARE(r.predictedNs, TimeNs(200));
        QCOMPARE(r.predicted.lanes[0].duration[0], 100);
        QCOMPARE(r.predicted.lanes[1].duration[0], 100);
        p.sharedResources = false;
        QCOMPARE(m.predict(p).predictedNs, TimeNs(400));  // each keeps its contended 200 ns
    }

    // A parameter that changes nothing on this kernel runs the resource model and must still reproduce the
    // recorded (contended) kernel exactly.
    void noOpParameterKeepsTheRecording()
    {
        const KernelTrace t = smTrace(2, 200, true, 80, 80, 128);
        WhatIfParams p;
        p.epilogue = 2.0;  // no epilogue phases
        const WhatIfResult r = whatIf(t, p);
        QCOMPARE(r.predictedNs, TimeNs(200));
        QCOMPARE(r.predicted.lanes[0].duration[0], 200);
        QCOMPARE(r.predicted.lanes[1].duration[0], 200);
    }

    // Without a shape (a user's program) or on another architecture the resource is not modelled, and says why.
    void notModelledWithoutShapeOrSm90()
    {
        KernelTrace t = smTrace(3, 100, false, 0, 0, 0);
        WhatIfModel m = WhatIfModel::build(t);
        QCOMPARE(m.summary().mmaFlopPerNsPerSm, 0.0);
        QVERIFY2(m.summary().resources.find("no GEMM shape") != std::string::npos, m.summary().resources.c_str());
        WhatIfParams p;
        p.slotsPerSm = 3;
        QCOMPARE(m.predict(p).predictedNs, TimeNs(100));
        t = smTrace(3, 100, false, 80, 80, 96);
        t.run.device.computeMajor = 8;
        m = WhatIfModel::build(t);
        QCOMPARE(m.summary().mmaFlopPerNsPerSm, 0.0);
        QCOMPARE(m.predict(p).predictedNs, TimeNs(100));
    }

    void ctasPerSmRefusedOutOfRangeAndOnPersistent()
    {
        const WhatIfModel m = WhatIfModel::build(smTrace(3, 100, false, 80, 80, 96));
        WhatIfParams p;
        p.slotsPerSm = 65;
        QVERIFY_THROWS_EXCEPTION(WhatIfError, m.predict(p));
        p.slotsPerSm = -1;
        QVERIFY_THROWS_EXCEPTION(WhatIfError, m.predict(p));
        // a persistent kernel (a CTA walked two tiles): ignored, with a note
        KernelTrace t = smTrace(1, 100, false, 80, 80, 96);
        for (int j = 0; j < 2; ++j) {
            TileSpan ts;
            ts.ctaId = 0;
            ts.warpId = 1;
            ts.tileM = j;
            ts.start = 50 * j;
            ts.end = 50 * j + 50;
            t.tiles.push_back(ts);
        }
        p.slotsPerSm = 2;
        const WhatIfResult r = whatIf(t, p);
        QCOMPARE(r.predictedNs, TimeNs(100));
        QCOMPARE(r.notes.size(), std::size_t(1));
        QVERIFY(r.notes[0].find("--ctas-per-sm") != std::string::npos);
    }

    // wgmma is warpgroup-collective: warp 1 waits inside its MmaIssue of fill 0 until warp 0 (which issued a load
    // first) arrives. --producer-warp moves the issue off warp 0, and both warps' MMA issue starts at once:
    // the kernel ends at 50 ns instead of 100.
    void collectiveIssueAndProducerWarp()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 100;
        t.ctas = {wstest::makeCta(0, 0, 0, 100)};
        t.lanes.push_back(wstest::makeLane(0, 0, 0, WarpRole::Worker,
                                           {{K::IssueLoad, 0, 50, 1}, {K::MmaIssue, 50, 80, 0}, {K::MmaWait, 80, 100, 0}}));
        t.lanes.push_back(wstest::makeLane(0, 1, 0, WarpRole::Worker, {{K::MmaIssue, 0, 80, 0}, {K::MmaWait, 80, 100, 0}}));
        const WhatIfModel m = WhatIfModel::build(t);
        QCOMPARE(m.summary().collectiveEdges, std::int64_t(2));
        QCOMPARE(m.predict({}).predictedNs, TimeNs(100));
        WhatIfParams p;
        p.producerWarp = true;
        const WhatIfResult r = m.predict(p);
        QCOMPARE(r.predictedNs, TimeNs(50));
        QCOMPARE(r.predicted.lanes[1].duration[0], 30);  // warp 1 no longer waits for warp 0
        QVERIFY(r.notes.empty());
        double sum = 0;
        for (double v : r.path.attributionNs)
            sum += v;
        QCOMPARE(sum, 50.0);
    }

    // A load whose consumer found it ready (a 5 ns WaitData: no longer than twice the fastest, itself) has only an
    // upper bound for its flight (395 ns); it gets the median observed flight (110 ns). With the MMA 10x faster
    // the consumer reaches fill 1 at 139 ns and finds it there: 147 ns, not 408.
    void censoredFlightGetsTheObservedMedian()
    {
        KernelTrace t;
        t.launch.start = 0;
        t.launch.end = 435;
        t.ctas = {wstest::makeCta(0, 0, 0, 435)};
        t.lanes.push_back(wstest::makeLane(0, 0, 0, WarpRole::Producer,
                                           {{K::IssueLoad, 0, 10, 0, 0}, {K::IssueLoad, 10, 20, 1, 1}}));
        t.lanes.push_back(wstest::makeLane(0, 4, 1, WarpRole::Consumer,
                                           {{K::WaitData, 10, 110, 0, 0}, {K::MmaIssue, 110, 400, 0, 0},
                                            {K::WaitData, 400, 405, 1, 1}, {K::MmaIssue, 405, 435, 1, 1}}));
        for (int k = 0; k < 2; ++k) {
            LoadTransfer ld;
            ld.ctaId = 0;
            ld.kstep = k;
            ld.slot = std::int16_t(k);
            ld.issue = 10 * k;
            ld.ready = k == 0 ? 110 : 405;
            t.loads.push_back(ld);
        }
        const WhatIfModel m = WhatIfModel::build(t);
        QCOMPARE(m.summary().censoredFlights, std::int64_t(1));
        const WhatIfResult same = m.predict({});
        QCOMPARE(same.predictedNs, TimeNs(435));
        QCOMPARE(same.predicted.lanes[1].start[2], TimeNs(400));
        QCOMPARE(same.predicted.lanes[1].duration[2], 5);
        WhatIfParams p;
        p.mma = 0.1;
        QCOMPARE(m.predict(p).predictedNs, TimeNs(147));
    }
};

QTEST_GUILESS_MAIN(TestWhatIfResources)
#include "tst_whatif_resources.moc"
