// Issue 13's last items in the viewer (session 10, docs/whatif.md "Issue 13 checklist"), offscreen: the lce
// family's traced rungs have a tour step "what if" (drag the stage count) like every rung of the GEMM ladder, the
// untraced cuBLAS rungs none; and a kernel that does not mark its loads gets the reduced analysis in the What-if
// panel with the sentence that says what is missing, as `warpstage whatif` prints it.
#include "timelinetestdata.h"

#include "rungcatalog.h"
#include "teachingpanel.h"
#include "whatifengine.h"
#include "whatifpanel.h"

#include <QLabel>
#include <QSignalSpy>
#include <QToolButton>
#include <QtTest>

class TestWhatIfTour : public QObject {
    Q_OBJECT
private slots:
    void lceTracedRungsHaveAWhatIfStep();
    void lceUntracedRungsHaveNone();
    void tourShowsTheLceStep();
    void reducedAnalysisInThePanel();
};

void TestWhatIfTour::lceTracedRungsHaveAWhatIfStep()
{
    // rungs 3-4 are our own TMA + wgmma kernels with a 3-stage ring: the step suggests a 4th stage
    for (const char *rung : {"lce_fused_epilogue", "lce_persistent"}) {
        const auto st = ws::ui::whatIfStep(QString::fromLatin1(rung));
        QVERIFY2(!st.markdown.isEmpty(), rung);
        QVERIFY2(st.markdown.startsWith(QStringLiteral("# What if")), rung);
        QVERIFY2(!st.markdown.contains(QStringLiteral("<!--")), rung);
        QVERIFY2(st.markdown.contains(QStringLiteral("bubbles")), rung);
        QCOMPARE(st.params.stages, 4);
        QVERIFY2(!st.params.unchanged(), rung);
        QVERIFY2(ws::ui::findRungText(QString::fromLatin1(rung)), rung);  // a rung of the lce tour
    }
}

void TestWhatIfTour::lceUntracedRungsHaveNone()
{
    // rungs 0-2 are cuBLAS calls with no per-warp timeline: nothing to replay, so no step and the button is off
    ws::ui::TeachingPanel tp;
    auto *button = tp.findChild<QToolButton *>(QStringLiteral("tourWhatIf"));
    QVERIFY(button);
    for (const char *rung : {"lce_original", "lce_decomposed", "lce_padded"}) {
        QVERIFY2(ws::ui::whatIfStep(QString::fromLatin1(rung)).markdown.isEmpty(), rung);
        tp.setRung(QString::fromLatin1(rung));
        QVERIFY2(!button->isEnabled(), rung);
        QVERIFY2(!tp.showWhatIf(), rung);
    }
    tp.setRung(QStringLiteral("lce_fused_epilogue"));
    QVERIFY(button->isEnabled());
}

void TestWhatIfTour::tourShowsTheLceStep()
{
    ws::ui::TeachingPanel tp;
    QSignalSpy spy(&tp, &ws::ui::TeachingPanel::whatIfRequested);
    tp.setRung(QStringLiteral("lce_fused_epilogue"));
    QVERIFY(tp.showWhatIf());
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.last().at(0).toString(), QStringLiteral("lce_fused_epilogue"));
    QCOMPARE(spy.last().at(1).value<ws::ui::WhatIfParams>().stages, 4);
    QVERIFY(tp.text().contains(QStringLiteral("Ring stages")));
    tp.next();  // the lce tour goes on to rung 4, whose step is there too
    QCOMPARE(tp.rung(), QStringLiteral("lce_persistent"));
    QVERIFY(!tp.whatIfShown());
    QVERIFY(tp.showWhatIf());
    QCOMPARE(spy.count(), 2);
    QVERIFY(tp.text().contains(QStringLiteral("ready flags")));
}

void TestWhatIfTour::reducedAnalysisInThePanel()
{
    // the hand-made producer/consumer kernel without its load marks (a user's kernel that records no
    // loadIssue / loadReady): it still replays as recorded, and the panel says what is missing
    auto tr = tltest::makeTrace(20);
    tr->loads.clear();
    const auto predict = ws::ui::makePredictor(tr);
    const ws::ui::Prediction same = predict(ws::ui::WhatIfParams{}, false, nullptr);
    QVERIFY2(same.error.isEmpty(), qPrintable(same.error));
    QCOMPARE(same.predictedNs, same.measuredNs);
    QVERIFY2(same.note.startsWith(QStringLiteral("Reduced analysis: ")), qPrintable(same.note));
    QVERIFY2(same.note.contains(QStringLiteral("no loads recorded")), qPrintable(same.note));
    // a parameter's own note stays, the reduced analysis comes after it
    ws::ui::WhatIfParams noSync;
    noSync.noSync = true;
    const QString both = predict(noSync, false, nullptr).note;
    QVERIFY2(both.contains(QStringLiteral("--no-sync")) && both.contains(QStringLiteral("no loads recorded")),
             qPrintable(both));
    // the same kernel with its loads does not miss them
    const QString full = ws::ui::makePredictor(tltest::makeTrace(20))(ws::ui::WhatIfParams{}, false, nullptr).note;
    QVERIFY2(!full.contains(QStringLiteral("no loads recorded")), qPrintable(full));

    ws::ui::WhatIfPanel panel;
    QSignalSpy spy(&panel, &ws::ui::WhatIfPanel::predicted);
    panel.setKernel(predict, tr->launch.end - tr->launch.start, 4, 2);
    QVERIFY(QTest::qWaitFor([&] { return spy.count() > 0 && !panel.busy(); }, 10000));
    bool shown = false;
    for (const QLabel *l : panel.findChildren<QLabel *>())
        shown = shown || (!l->isHidden() && l->text().contains(QStringLiteral("no loads recorded")));
    QVERIFY2(shown, "the What-if panel shows the reduced analysis");
}

QTEST_MAIN(TestWhatIfTour)
#include "tst_whatiftour.moc"
