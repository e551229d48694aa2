// The viewer and the linear-compression family (issue 11) on a synthetic file with every family
// (tests/common/lce_fixture.h): the runs panel grouped by family, the teaching texts and the lce tour, the
// roofline line of a family rung's program view, and both comparisons the issue asks for: the program view of
// rung 0 beside rung 4 and the warp view of rung 3 beside rung 4. With WARPSTAGE_SCREENSHOT_DIR set it also
// saves pictures of the comparisons there (scripts/ or by hand under xvfb).
#include "common/lce_fixture.h"
#include "comparepanel.h"
#include "metricsmodel.h"
#include "programcompare.h"
#include "programload.h"
#include "programpanel.h"
#include "programview.h"
#include "rungcatalog.h"
#include "runsmodel.h"
#include "teachingpanel.h"
#include "timelinewidget.h"
#include "tracedocument.h"

#include <QDir>
#include <QLabel>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace ws::ui;

class TestLceFamily : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_path;
    FileContents m_fc;

    const RunEntry* runOf(const char* variant) const
    {
        for (const auto& r : m_fc.runs)
            if (r.summary.info.variant == variant)
                return &r;
        return nullptr;
    }
    qint64 tracedKernelOf(const char* variant) const
    {
        if (const RunEntry* r = runOf(variant))
            for (const auto& k : r->kernels)
                if (k.summary.launch.traced)
                    return k.summary.launch.id;
        return 0;
    }
    static QString shotDir() { return qEnvironmentVariable("WARPSTAGE_SCREENSHOT_DIR"); }

private slots:
    void initTestCase()
    {
        initResources();
        m_path = m_dir.filePath(QStringLiteral("lce-fixture.wstrace"));
        ws::testing::writeLceFixture(m_path.toStdString());
        m_fc = readFileContents(m_path);
        QCOMPARE(m_fc.runs.size(), std::size_t(5));
        if (!shotDir().isEmpty())
            QFile::copy(m_path, QDir(shotDir()).filePath(QStringLiteral("lce-fixture.wstrace")));
    }

    // Three families: one header row each, in a fixed order, their runs below, kernels below the runs.
    void runsGroupedByFamily()
    {
        RunsModel model;
        model.setContents(&m_fc);
        QVERIFY(model.grouped());
        QCOMPARE(model.rowCount(), 3);
        const QStringList titles = {QStringLiteral("GEMM ladder"), QStringLiteral("Linear compression (lce)"), QStringLiteral("Programs")};
        const QStringList keys = {QStringLiteral("gemm"), QStringLiteral("lce"), QStringLiteral("program")};
        const int runs[] = {1, 3, 1};
        for (int g = 0; g < 3; ++g) {
            const QModelIndex gi = model.index(g, RunsModel::ColName);
            QCOMPARE(gi.data().toString(), titles[g]);
            QCOMPARE(gi.data(RunsModel::FamilyRole).toString(), keys[g]);
            QCOMPARE(gi.data(RunsModel::RunIdRole).toLongLong(), 0LL);  // a header selects nothing
            QCOMPARE(model.rowCount(gi), runs[g]);
            QVERIFY(!model.parent(gi).isValid());
            for (int r = 0; r < model.rowCount(gi); ++r) {
                const QModelIndex ri = model.index(r, 0, gi);
                QCOMPARE(model.parent(ri), gi);
                QCOMPARE(ri.data(RunsModel::FamilyRole).toString(), keys[g]);
                const qint64 id = ri.data(RunsModel::RunIdRole).toLongLong();
                QVERIFY(id > 0);
                QCOMPARE(model.indexOfRun(id), ri);
                QVERIFY(model.rowCount(ri) > 0);
                const QModelIndex ki = model.index(0, 0, ri);
                QCOMPARE(model.parent(ki), ri);
                QCOMPARE(model.indexOfKernel(ki.data(RunsModel::KernelIdRole).toLongLong()), ki);
            }
        }
        const QModelIndex lce = model.index(1, 0);
        const QStringList rungs = {QStringLiteral("lce_original"), QStringLiteral("lce_fused_epilogue"), QStringLiteral("lce_persistent")};
        for (int r = 0; r < 3; ++r)
            QCOMPARE(model.index(r, RunsModel::ColRung, lce).data().toString(), rungs[r]);
        // one family only: no headers (a plain ladder file looks as before)
        FileContents one = m_fc;
        one.runs.erase(one.runs.begin() + 1, one.runs.end());
        model.setContents(&one);
        QVERIFY(!model.grouped());
        QCOMPARE(model.rowCount(), 1);
        QVERIFY(model.index(0, 0).data(RunsModel::RunIdRole).toLongLong() > 0);
        model.setContents(nullptr);
    }

    // The family of a file recorded before the tag: `warpstage-record -- lce --rung 2` (variant "lce").
    void familyWithoutTag()
    {
        FileContents fc = m_fc;
        ws::RunInfo& info = fc.runs[1].summary.info;
        info.notes.clear();
        info.variant = "lce";
        info.commandLine = "warpstage-record -o x.wstrace -- ./lce --rung 2 --time";
        RunsModel model;
        model.setContents(&fc);
        QCOMPARE(model.index(1, 0).data().toString(), QStringLiteral("Linear compression (lce)"));
        QCOMPARE(model.rowCount(model.index(1, 0)), 3);
    }

    void teaching()
    {
        QCOMPARE(lceCatalog().size(), 5);
        for (const RungText& r : lceCatalog()) {
            QVERIFY2(r.markdown.size() > 500, qPrintable(r.name));
            QVERIFY2(r.title.startsWith(QStringLiteral("lce %1").arg(r.level)), qPrintable(r.title));
            QVERIFY(r.markdown.contains(QLatin1String("## What changed")) || r.level == 0);
            QVERIFY(r.markdown.contains(QLatin1String("## Which metric proves it")));
            QCOMPARE(catalogOf(r.name), &lceCatalog());
        }
        QCOMPARE(catalogOf(QStringLiteral("pingpong")), &rungCatalog());
        QCOMPARE(rungIndex(QStringLiteral("lce_padded")), 2);
        QVERIFY(findRungText(QStringLiteral("lce_padded"))->markdown.contains(QLatin1String("kernel name CUPTI reports")));
        TeachingPanel p;
        p.setRung(QStringLiteral("lce_fused_epilogue"));
        QVERIFY(p.text().contains(QLatin1String("epilogue warp")));
        QSignalSpy req(&p, &TeachingPanel::rungRequested);
        p.next();  // the tour stays in the family
        QCOMPARE(p.rung(), QStringLiteral("lce_persistent"));
        QCOMPARE(req.takeFirst().at(0).toString(), QStringLiteral("lce_persistent"));
        p.next();  // the top: stays
        QCOMPARE(p.rung(), QStringLiteral("lce_persistent"));
        p.previous();
        p.previous();
        QCOMPARE(p.rung(), QStringLiteral("lce_padded"));
        p.setRung(QStringLiteral("cooperative"));
        p.next();
        QCOMPARE(p.rung(), QStringLiteral("pingpong"));
    }

    // The program view of a family rung says how many kernels an iteration takes and where it stands.
    void rooflineLine()
    {
        ProgramPanel panel;
        for (const auto& [variant, want] : {std::pair{"lce_original", "2 launches per iteration"}, std::pair{"lce_persistent", "1 launch per iteration"}}) {
            const RunEntry* r = runOf(variant);
            QVERIFY(r);
            const LoadedProgram lp = loadProgramNow(*m_fc.store, qint64(r->summary.info.id));
            QVERIFY(lp.program);
            panel.setProgram(lp.program);
            QVERIFY(!panel.rooflineLabel()->isHidden());
            const QString t = panel.rooflineLabel()->text();
            QVERIFY2(t.contains(QLatin1String(want)), qPrintable(t));
            QVERIFY2(t.contains(QLatin1String(variant == std::string("lce_original") ? "memory-bound" : "compute-bound")), qPrintable(t));
        }
        // rung 4: 0.452 ms per iteration, 200.51 GFLOP -> 443.6 TFLOP/s
        QVERIFY2(panel.rooflineLabel()->text().contains(QLatin1String("0.4520 ms per iteration (median of 12): 443.6 TFLOP/s")),
                 qPrintable(panel.rooflineLabel()->text()));
        const RunEntry* user = m_fc.runs.back().summary.info.variant == "lce_persistent" ? nullptr : &m_fc.runs.back();
        QVERIFY(user);
        panel.setProgram(loadProgramNow(*m_fc.store, qint64(user->summary.info.id)).program);
        QVERIFY(panel.rooflineLabel()->isHidden());  // not a family rung
    }

    // Rung 0 beside rung 4: aligned at each one's first timed iteration, the same length, scrolled together.
    void programCompare()
    {
        ComparePanel cp;
        cp.resize(1600, 900);
        cp.setContents(&m_fc);
        ProgramCompare* pc = cp.programCompare();
        QCOMPARE(pc->defaultRunA(), qint64(runOf("lce_original")->summary.info.id));
        QCOMPARE(pc->defaultRunB(), qint64(runOf("lce_persistent")->summary.info.id));
        QCOMPARE(pc->runA(), 0LL);  // nothing loaded before the page is shown
        cp.show();
        cp.modes()->setCurrentWidget(pc);
        QTRY_VERIFY_WITH_TIMEOUT(pc->runA() != 0 && pc->isLoaded(), 20000);
        QVERIFY2(pc->labelText(0).contains(QLatin1String("2 kernels per iteration")), qPrintable(pc->labelText(0)));
        QVERIFY2(pc->labelText(1).contains(QLatin1String("1 kernel per iteration")), qPrintable(pc->labelText(1)));
        auto rel = [pc](int s) {
            ProgramView* v = s == 0 ? pc->viewA() : pc->viewB();
            const ws::TimeNs a = ProgramCompare::alignmentPoint(*v->program());
            return qMakePair(v->visibleRange().first - a, v->visibleRange().second - a);
        };
        QTRY_COMPARE_WITH_TIMEOUT(rel(0), rel(1), 20000);  // returns when equal; 20 s for a loaded sanitizer run
        QVERIFY(rel(0).second - rel(0).first >= 2 * 2'460'000);  // two iterations of rung 0 (the slower)
        QVERIFY(rel(0).first < 0 && rel(0).first > -200'000);
        // rung 0's first timed iteration starts with its gather kernel
        const auto& k0 = pc->viewA()->program()->kernels;
        ws::TimeNs firstGather = 0;
        int gathers = 0;
        for (const auto& k : k0)
            if (k.name.find("gatherConcat") != std::string::npos && ++gathers == 2)
                firstGather = k.start;
        QCOMPARE(ProgramCompare::alignmentPoint(*pc->viewA()->program()), firstGather);
        const auto r0 = pc->viewA()->visibleRange();
        pc->viewA()->setVisibleRange(r0.first + 500'000, r0.second + 500'000);  // B follows
        QTRY_COMPARE_WITH_TIMEOUT(rel(1), rel(0), 20000);
        if (!shotDir().isEmpty())
            QVERIFY(cp.grab().save(QDir(shotDir()).filePath(QStringLiteral("lce-compare-program.png"))));
    }

    // Rung 3 beside rung 4 in the warp view: their traced launches, labelled by their runs' rungs.
    void warpCompare()
    {
        ComparePanel cp;
        cp.resize(1600, 900);
        cp.setContents(&m_fc);
        cp.show();
        const qint64 k3 = tracedKernelOf("lce_fused_epilogue"), k4 = tracedKernelOf("lce_persistent");
        QVERIFY(k3 && k4);
        QSignalSpy loaded(&cp, &ComparePanel::loaded);
        cp.compare(k3, k4);
        QTRY_VERIFY_WITH_TIMEOUT(cp.isLoaded() && cp.timelineA()->trace() && cp.timelineB()->trace(), 20000);
        QCOMPARE(qint64(cp.timelineA()->trace()->launch.id), k3);
        QCOMPARE(cp.deltaModel()->headerData(1, Qt::Horizontal).toString(), QStringLiteral("A: lce_fused_epilogue"));
        QCOMPARE(cp.deltaModel()->headerData(2, Qt::Horizontal).toString(), QStringLiteral("B: lce_persistent"));
        if (!shotDir().isEmpty()) {
            QTest::qWait(500);
            QVERIFY(cp.grab().save(QDir(shotDir()).filePath(QStringLiteral("lce-compare-warp.png"))));
        }
    }
};

QTEST_MAIN(TestLceFamily)
#include "tst_lcefamily.moc"
