// What-if on users' kernels (issue 13: "the same on users' kernels"; docs/whatif.md "Reduced analysis"): the real
// Proton traces of tests/fixtures/proton, imported as a user would, get a critical path and an unchanged replay
// that reproduce their time, and a reduced analysis that names what their trace does not hold: no loads (the Triton
// add), loads without ring slots (the Gluon kernels: Proton has no slot), so --stages cannot act.
#include "warpstage/store.h"
#include "warpstage/traceimport.h"
#include "warpstage/whatif.h"

#include <QTemporaryDir>
#include <QtTest>

#include <string>

using namespace ws;

namespace {

KernelTrace importFirstKernel(const QString& fixture, const QString& out)
{
    importTraces({(QStringLiteral(WARPSTAGE_PROTON_FIXTURES "/") + fixture).toStdString()}, out.toStdString());
    const TraceStore st = TraceStore::openReadOnly(out.toStdString());
    for (const RunInfo& r : st.runs())
        for (const KernelLaunch& k : st.kernels(r.id))
            if (k.traced)
                return st.loadKernel(k.id);
    return {};
}

bool mentions(const std::vector<std::string>& v, const char* text)
{
    for (const std::string& s : v)
        if (s.find(text) != std::string::npos)
            return true;
    return false;
}

}  // namespace

class TestWhatIfUsers : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void protonKernelsGetAReducedAnalysis_data()
    {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("missing");
        QTest::newRow("triton_add") << QStringLiteral("triton_add.chrome_trace") << QStringLiteral("no loads recorded");
        QTest::newRow("gluon_ws") << QStringLiteral("gluon_ws.chrome_trace")
                                  << QStringLiteral("loads recorded without a ring slot");
        QTest::newRow("gluon_pipelined") << QStringLiteral("gluon_pipelined.chrome_trace")
                                         << QStringLiteral("loads recorded without a ring slot");
    }
    void protonKernelsGetAReducedAnalysis()
    {
        QFETCH(QString, fixture);
        QFETCH(QString, missing);
        const KernelTrace t = importFirstKernel(fixture, m_dir.filePath(fixture + QStringLiteral(".wstrace")));
        QVERIFY(t.intervalCount() > 0);
        const WhatIfModel m = WhatIfModel::build(t);
        QVERIFY(m.summary().reduced);
        QVERIFY2(mentions(m.summary().missing, missing.toStdString().c_str()), qPrintable(missing));
        const WhatIfResult u = m.predict(WhatIfParams{});
        QCOMPARE(u.predictedNs, u.measuredNs);
        double total = 0;
        for (double v : u.path.attributionNs)
            total += v;
        QCOMPARE(total, double(u.measuredNs));
        // --stages cannot act without slots: a note, and the time unchanged.
        WhatIfParams p;
        p.stages = 6;
        const WhatIfResult s = m.predict(p, false);
        QCOMPARE(s.predictedNs, u.predictedNs);
        QVERIFY(mentions(s.notes, "--stages: the kernel records no ring slots"));
    }
};

QTEST_GUILESS_MAIN(TestWhatIfUsers)
#include "tst_whatif_users.moc"
