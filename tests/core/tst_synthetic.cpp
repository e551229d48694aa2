// The synthetic generator: deterministic, says it is synthetic, structurally valid, sized as
// asked, and its rungs order as the ladder intends (overlap rises from sync to warp-specialized).
#include "warpstage/analysis.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <QTemporaryDir>
#include <QtTest>

#include <set>

using namespace ws;

namespace {

SyntheticParams params(SyntheticPattern p)
{
    SyntheticParams s;
    s.pattern = p;
    s.ctas = 12;
    s.smCount = 8;
    s.tilesPerCta = 2;
    s.kstepsPerTile = 16;
    return s;
}

KernelTrace loadBack(const RunRecord& rec, const QString& dir, const char* name)
{
    const auto path = (dir + "/" + name).toStdString();
    {
        auto st = TraceStore::openForWriting(path);
        st.writeRun(rec);
    }
    auto st = TraceStore::openReadOnly(path);
    for (const KernelLaunch& k : st.kernels(st.runs()[0].id))
        if (k.traced)
            return st.loadKernel(k.id);
    return {};
}

}  // namespace

class TestSynthetic : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void deterministic()
    {
        const RunRecord a = generateSynthetic(params(SyntheticPattern::Pingpong));
        const RunRecord b = generateSynthetic(params(SyntheticPattern::Pingpong));
        QCOMPARE(a.kernels[0].intervals.size(), b.kernels[0].intervals.size());
        for (std::size_t i = 0; i < a.kernels[0].intervals.size(); ++i) {
            const Interval &x = a.kernels[0].intervals[i], &y = b.kernels[0].intervals[i];
            QVERIFY(x.start == y.start && x.duration == y.duration && x.kind == y.kind && x.warpId == y.warpId);
        }
        SyntheticParams p = params(SyntheticPattern::Pingpong);
        p.seed = 2;
        const RunRecord c = generateSynthetic(p);
        bool differs = c.kernels[0].intervals.size() != a.kernels[0].intervals.size();
        for (std::size_t i = 0; !differs && i < a.kernels[0].intervals.size(); ++i)
            differs = a.kernels[0].intervals[i].start != c.kernels[0].intervals[i].start;
        QVERIFY(differs);
    }

    void saysSynthetic()
    {
        const RunRecord r = generateSynthetic(params(SyntheticPattern::Sync));
        QVERIFY(r.info.synthetic);
        QVERIFY(r.info.notes.rfind("SYNTHETIC", 0) == 0);
        QVERIFY(r.info.device.name.find("Synthetic") != std::string::npos);
        QCOMPARE(r.info.variant, std::string("sync"));
    }

    void structure_data()
    {
        QTest::addColumn<int>("pattern");
        QTest::newRow("sync") << int(SyntheticPattern::Sync);
        QTest::newRow("multistage") << int(SyntheticPattern::Multistage);
        QTest::newRow("warp_specialized") << int(SyntheticPattern::WarpSpecialized);
        QTest::newRow("pingpong") << int(SyntheticPattern::Pingpong);
    }
    void structure()
    {
        QFETCH(int, pattern);
        const auto pat = static_cast<SyntheticPattern>(pattern);
        const RunRecord r = generateSynthetic(params(pat));
        QCOMPARE(r.kernels.size(), std::size_t(2));  // traced + untraced with stall samples
        const KernelRecord& k = r.kernels[0];
        QVERIFY(k.launch.traced);
        QVERIFY(!r.kernels[1].launch.traced);
        QCOMPARE(r.kernels[1].launch.variant, k.launch.variant);
        QVERIFY(!r.kernels[1].stalls.empty());
        QCOMPARE(k.ctas.size(), std::size_t(12));
        std::set<IntervalKind> kinds;
        std::set<WarpRole> roles;
        for (const Warp& w : k.warps)
            roles.insert(w.role);
        for (const Interval& iv : k.intervals) {
            QVERIFY(iv.duration >= 0);
            QVERIFY(iv.warpId >= 0 && iv.warpId < RowId(k.warps.size()));
            const Cta& c = k.ctas[std::size_t(k.warps[std::size_t(iv.warpId)].ctaId)];
            QVERIFY(iv.start >= c.start && iv.start + iv.duration <= c.end);
            kinds.insert(iv.kind);
        }
        for (const Cta& c : k.ctas)
            QVERIFY(c.start >= k.launch.start && c.end <= k.launch.end);
        for (const LoadTransfer& l : k.loads)
            QVERIFY(l.ready >= l.issue);
        QVERIFY(!k.tiles.empty());
        const bool specialized = pat == SyntheticPattern::WarpSpecialized || pat == SyntheticPattern::Pingpong;
        if (specialized) {
            QVERIFY(roles.count(WarpRole::Producer) && roles.count(WarpRole::Consumer) && roles.count(WarpRole::Idle));
            for (IntervalKind x : {IntervalKind::WaitSlot, IntervalKind::IssueLoad, IntervalKind::WaitData,
                                   IntervalKind::MmaIssue, IntervalKind::MmaWait, IntervalKind::Release,
                                   IntervalKind::Epilogue, IntervalKind::Store})
                QVERIFY2(kinds.count(x), intervalKindName(x).data());
            if (pat == SyntheticPattern::Pingpong)
                QVERIFY(kinds.count(IntervalKind::WaitOrder));
        } else {
            QCOMPARE(roles, std::set<WarpRole>{WarpRole::Worker});
            QVERIFY(kinds.count(IntervalKind::Sync));
            QVERIFY(kinds.count(pat == SyntheticPattern::Sync ? IntervalKind::Load : IntervalKind::WaitData));
        }
        // More CTAs than SMs: later waves start after the SM's previous CTA ended.
        for (std::size_t i = 8; i < k.ctas.size(); ++i)
            QVERIFY(k.ctas[i].start >= k.ctas[i - 8].end);
    }

    void targetIntervalCount()
    {
        SyntheticParams p;
        p.targetIntervals = 300'000;
        p.ctas = 20;
        p.smCount = 20;
        const RunRecord r = generateSynthetic(p);
        const double n = static_cast<double>(r.kernels[0].intervals.size());
        QVERIFY2(n > 0.9 * 300'000 && n < 1.15 * 300'000, qPrintable(QString::number(n)));
    }

    void ladderOrdering()
    {
        // The analysis sees what the rungs are meant to show.
        QVERIFY(m_dir.isValid());
        const auto m = [&](SyntheticPattern p, const char* name) {
            return analyze(loadBack(generateSynthetic(params(p)), m_dir.path(), name));
        };
        const KernelMetrics sync = m(SyntheticPattern::Sync, "s.db");
        const KernelMetrics multi = m(SyntheticPattern::Multistage, "m.db");
        const KernelMetrics ws = m(SyntheticPattern::WarpSpecialized, "w.db");
        const KernelMetrics pp = m(SyntheticPattern::Pingpong, "p.db");
        // Loads hide better and better under compute, and consumers wait less and less for data.
        QCOMPARE(sync.total.computeOverlapShare, 0.0);
        QCOMPARE(sync.total.loadHiddenShare, 0.0);
        QVERIFY(multi.total.computeOverlapShare > 0.5);
        QVERIFY(multi.total.loadHiddenShare < ws.total.loadHiddenShare);
        QVERIFY(ws.total.loadHiddenShare < pp.total.loadHiddenShare);
        QVERIFY(sync.total.exposedLoadWaitShare > multi.total.exposedLoadWaitShare);
        QVERIFY(multi.total.exposedLoadWaitShare > ws.total.exposedLoadWaitShare);
        QVERIFY(ws.total.backPressureShare > 0.3);             // compute-bound: the producer waits for slots
        QVERIFY(pp.total.bubbleShare < ws.total.bubbleShare);  // ping-pong hides the epilogue
        QVERIFY(sync.achievedTflops < multi.achievedTflops);
        QVERIFY(multi.achievedTflops < ws.achievedTflops);
        QVERIFY(ws.achievedTflops < pp.achievedTflops);
        for (const KernelMetrics* x : {&sync, &multi, &ws, &pp}) {
            QVERIFY(x->stallSamples > 100'000);
            QVERIFY(x->smsUsed == 8);
            QVERIFY(x->tailNs > 0);
            QVERIFY(x->total.meanSlotsOccupied >= x->total.meanLoadsInFlight);
        }
    }
};

QTEST_GUILESS_MAIN(TestSynthetic)
#include "tst_synthetic.moc"
