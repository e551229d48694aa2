// The shared tensor cores' rounds (docs/whatif.md, "Shared resources"; session 10, s10-wispeed): each round steps
// every MMA group's stretch by its secant weight towards the fixed point f = T(f) and the rounds stop once the
// kernel's end moves by less than 0.2%. A wrong shortcut (stopping early, stepping past the target, a slope of the
// wrong sign) lands away from the fixed point; so the answer is compared with the fixed point itself
// (WARPSTAGE_WHATIF_ROUNDS=N: up to N rounds without the 0.2% rule) on synthetic kernels whose rounds need many
// steps (the fixed point after 60 rounds: 64.5 and 65.9 us, reached within 0.02% after about 10), and the
// unchanged replay must stay exact with no round at all.
#include "warpstage/whatif.h"

#include "whatif_testutil.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstdlib>

using namespace ws;

namespace {

// The prediction with up to `rounds` rounds and no settling rule (0: the default rounds).
WhatIfResult predictWith(const WhatIfModel& m, const WhatIfParams& p, int rounds)
{
    if (rounds > 0)
        qputenv("WARPSTAGE_WHATIF_ROUNDS", QByteArray::number(rounds));
    else
        qunsetenv("WARPSTAGE_WHATIF_ROUNDS");
    WhatIfResult r = m.predict(p, false);
    qunsetenv("WARPSTAGE_WHATIF_ROUNDS");
    return r;
}

struct Case {
    const char* name;
    WhatIfParams p;
};

std::vector<Case> cases()
{
    std::vector<Case> v;
    WhatIfParams a;  // two CTAs per SM and a deeper ring: the co-resident CTAs' MMAs overlap more than recorded
    a.slotsPerSm = 2;
    a.stages = 4;
    v.push_back({"ctas-per-sm 2, stages 4", a});
    WhatIfParams b;  // loads hidden and faster MMAs: the demand rises on every SM
    b.stages = 6;
    b.mma = 0.8;
    b.loadLatency = 0.5;
    v.push_back({"stages 6, mma 0.8, load 0.5", b});
    WhatIfParams c;
    c.mma = 1.5;
    v.push_back({"mma 1.5", c});
    return v;
}

}  // namespace

class TestWhatIfRounds : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::vector<KernelTrace> m_traces;

private slots:
    void initTestCase()
    {
        int n = 0;
        for (SyntheticPattern pat : {SyntheticPattern::WarpSpecialized, SyntheticPattern::Multistage}) {
            SyntheticParams sp;
            sp.pattern = pat;
            sp.ctas = 64;
            sp.smCount = 16;
            sp.tilesPerCta = 1;
            sp.kstepsPerTile = 48;
            sp.stallSamples = false;
            m_traces.push_back(wstest::syntheticTrace(sp, m_dir.filePath(QStringLiteral("r%1.wstrace").arg(n++))));
        }
    }

    void unchangedReplayIsExactWithoutRounds()
    {
        for (const KernelTrace& t : m_traces) {
            const WhatIfModel m = WhatIfModel::build(t);
            const WhatIfResult r = predictWith(m, WhatIfParams{}, 0);
            QCOMPARE(r.predictedNs, t.launch.end - t.launch.start);
            QCOMPARE(r.timing.resourceRounds, 0);
        }
    }

    void roundsLandOnTheFixedPoint()
    {
        int needMore = 0;
        for (const KernelTrace& t : m_traces) {
            const WhatIfModel m = WhatIfModel::build(t);
            QVERIFY(m.summary().mmaFlopPerNsPerSm > 0);  // the shared tensor cores are modelled
            for (const Case& c : cases()) {
                const WhatIfResult def = predictWith(m, c.p, 0);
                const WhatIfResult fix = predictWith(m, c.p, 60);
                const double err = double(def.predictedNs - fix.predictedNs) / double(fix.predictedNs);
                qInfo("%s: default %lld ns after %d rounds, fixed point %lld ns after %d rounds (%+.3f%%)", c.name,
                      (long long)def.predictedNs, def.timing.resourceRounds, (long long)fix.predictedNs,
                      fix.timing.resourceRounds, 100 * err);
                QVERIFY(def.timing.resourceRounds <= 4);
                // Within 1% of the fixed point: on these kernels the first round alone is 3% short of it, and the
                // fixed point itself still moves by about 0.02% from round to round (flipping groups).
                QVERIFY2(std::fabs(err) <= 0.01, c.name);
                needMore += def.timing.resourceRounds >= 1 && fix.timing.resourceRounds > def.timing.resourceRounds + 4;
            }
        }
        QVERIFY2(needMore >= 2, "the synthetic kernels' rounds should need more steps than the default takes");
    }
};

QTEST_MAIN(TestWhatIfRounds)
#include "tst_whatif_rounds.moc"
