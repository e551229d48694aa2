// Smoke test of the real MainWindow (offscreen): opens a synthetic ladder,
// shows a kernel, zooms, selects a CTA and a time range, steps the guided tour,
// compares two rungs with synchronized axes, clicks a stall source line,
// exports PNG/SVG, and survives a bad file. Screenshots go to
// $WARPSTAGE_SCREENSHOT_DIR when it is set.
#include "comparepanel.h"
#include "mainwindow.h"
#include "metricsmodel.h"
#include "metricspanel.h"
#include "programpanel.h"
#include "rungcatalog.h"
#include "runsmodel.h"
#include "stallspanel.h"
#include "sourcemodel.h"
#include "teachingpanel.h"
#include "timelinewidget.h"
#include "tracedocument.h"

#include "common/machine_clock.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QFileInfo>
#include <QImage>
#include <QMenu>
#include <QMimeData>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>
#include <QComboBox>
#include <QtTest>

using namespace ws::ui;

class TestSmoke : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void opensAndShowsKernel();
    void zoomAndSelect();
    void tourAndTeaching();
    void compare();
    void stallSourceClick();
    void exportImage();
    void badFileKeepsRunning();
    void dropOpensFile();
    void recordWithoutGpu();
    void syntheticFallback();
    void staysResponsiveWhileLoading();
    void bundledSampleTour();
    void bundledSamplesMenu();

private:
    void shot(const QString& name);
    QTemporaryDir m_dir;
    QString m_file;
    std::unique_ptr<MainWindow> m_w;
};

void TestSmoke::shot(const QString& name)
{
    const QString dir = qEnvironmentVariable("WARPSTAGE_SCREENSHOT_DIR");
    if (dir.isEmpty())
        return;
    QApplication::processEvents();
    m_w->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
}

void TestSmoke::initTestCase()
{
    QCoreApplication::setOrganizationName("WarpstageTest");
    QCoreApplication::setApplicationName("tst_smoke");
    qputenv("WARPSTAGE_NO_DIALOGS", "1");
    QVERIFY(m_dir.isValid());
    m_file = m_dir.filePath("ladder.warpstage");
    QString err;
    QVERIFY2(writeSyntheticLadder(m_file, &err, 16, 16), qPrintable(err));
    m_w = std::make_unique<MainWindow>();
    m_w->resize(1600, 1000);
    m_w->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_w.get()));
}

void TestSmoke::opensAndShowsKernel()
{
    QSignalSpy opened(m_w.get(), &MainWindow::fileOpened);
    QSignalSpy shown(m_w.get(), &MainWindow::kernelShown);
    m_w->openFile(m_file);
    QVERIFY(opened.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(shown.size() >= 1, 30000);
    QAbstractItemModelTester tester(m_w->runsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(m_w->runsModel()->rowCount(), 4);
    QVERIFY(m_w->currentTrace());
    QCOMPARE(m_w->timeline()->trace(), m_w->currentTrace());
    QCOMPARE(m_w->teachingPanel()->rung(), QString::fromStdString(m_w->currentTrace()->launch.variant));
    QVERIFY(m_w->metricsPanel()->model()->rowCount() > 0);
    QVERIFY(m_w->bannerText().contains("SYNTHETIC"));
    QVERIFY(m_w->recentFiles().contains(QFileInfo(m_file).absoluteFilePath()));
    QVERIFY(m_w->timeline()->waitForIndex(30000));
    shot("smoke-opened");

    // selecting another kernel in the tree loads it
    const qint64 pp = m_w->document()->firstKernelOfRung("pingpong");
    QVERIFY(pp > 0);
    m_w->selectKernel(pp);
    QTRY_COMPARE_WITH_TIMEOUT(m_w->currentTrace() ? qint64(m_w->currentTrace()->launch.id) : 0, pp, 30000);
    QVERIFY(m_w->runsView()->currentIndex().data(RunsModel::KernelIdRole).toLongLong() == pp);
    QCOMPARE(m_w->teachingPanel()->rung(), QStringLiteral("pingpong"));
}

void TestSmoke::zoomAndSelect()
{
    auto t = m_w->currentTrace();
    QVERIFY(t);
    TimelineWidget* tl = m_w->timeline();
    const ws::TimeNs s = t->launch.start, len = t->launch.end - t->launch.start;
    tl->setVisibleRange(s + len / 4, s + len / 2);
    const auto vr = tl->visibleRange();
    QVERIFY(qAbs(vr.first - (s + len / 4)) <= len / 100);
    QVERIFY(qAbs(vr.second - (s + len / 2)) <= len / 100);

    // CTA selection -> metrics for that CTA
    QSignalSpy shown(m_w.get(), &MainWindow::selectionMetricsShown);
    emit tl->ctaSelected(0);
    QVERIFY(shown.wait(20000));
    QVERIFY2(m_w->metricsPanel()->scopeText().contains("CTA"), qPrintable(m_w->metricsPanel()->scopeText()));
    // time range -> metrics of the range
    emit tl->timeRangeSelected(s + len / 4, s + len / 2);
    QVERIFY(shown.wait(20000));
    QVERIFY(m_w->metricsPanel()->scopeText().contains("…"));
    shot("smoke-selection");
    emit m_w->metricsPanel()->resetRequested();
    QVERIFY(!m_w->metricsPanel()->scopeText().contains("CTA"));
    tl->resetZoom();
}

void TestSmoke::tourAndTeaching()
{
    TeachingPanel* tp = m_w->teachingPanel();
    tp->setRung("sync");
    QSignalSpy shown(m_w.get(), &MainWindow::kernelShown);
    tp->next();  // tma_sync: not in the synthetic file -> text only
    QCOMPARE(tp->rung(), QStringLiteral("tma_sync"));
    QVERIFY(tp->text().contains("TMA"));
    tp->next();  // multistage: present -> its kernel is shown
    QCOMPARE(tp->rung(), QStringLiteral("multistage"));
    QTRY_VERIFY_WITH_TIMEOUT(m_w->currentTrace() && m_w->currentTrace()->launch.variant == "multistage", 30000);
    QVERIFY(tp->text().contains("What to look for"));
    tp->previous();
    QCOMPARE(tp->rung(), QStringLiteral("tma_sync"));
    QVERIFY(m_w->currentTrace()->launch.variant == "multistage");  // no tma_sync kernel: unchanged
}

void TestSmoke::compare()
{
    const qint64 ws = m_w->document()->firstKernelOfRung("warp_specialized");
    m_w->selectKernel(ws);
    QTRY_VERIFY_WITH_TIMEOUT(m_w->currentTrace() && qint64(m_w->currentTrace()->launch.id) == ws, 30000);
    ComparePanel* cp = m_w->comparePanel();
    QSignalSpy loaded(cp, &ComparePanel::loaded);
    m_w->compareKernels();  // current (B) vs the rung below it in the file (A = multistage)
    QTRY_VERIFY_WITH_TIMEOUT(cp->isLoaded() && cp->timelineA()->trace() && cp->timelineB()->trace(), 30000);
    QCOMPARE(cp->kernelB(), ws);
    QCOMPARE(cp->kernelA(), m_w->document()->firstKernelOfRung("multistage"));
    QAbstractItemModelTester tester(cp->deltaModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(cp->deltaModel()->rowCount() > 10);

    // synchronized axes, aligned at kernel start
    auto a = cp->timelineA()->trace(), b = cp->timelineB()->trace();
    const ws::TimeNs len = std::min(a->launch.end - a->launch.start, b->launch.end - b->launch.start);
    QVERIFY(len > 100);
    const ws::TimeNs tol = std::max<ws::TimeNs>(2, len / 500);
    cp->timelineA()->setVisibleRange(a->launch.start + len / 10, a->launch.start + len / 2);
    const auto vb = cp->timelineB()->visibleRange();
    QVERIFY2(qAbs(vb.first - (b->launch.start + len / 10)) <= tol && qAbs(vb.second - (b->launch.start + len / 2)) <= tol,
             qPrintable(QString("%1 %2 (len %3)").arg(vb.first - b->launch.start).arg(vb.second - b->launch.start).arg(len)));
    cp->timelineB()->setVisibleRange(b->launch.start + len / 5, b->launch.start + len / 3);
    const auto va = cp->timelineA()->visibleRange();
    QVERIFY(qAbs(va.first - (a->launch.start + len / 5)) <= tol && qAbs(va.second - (a->launch.start + len / 3)) <= tol);
    QCOMPARE(m_w->centralTabs()->currentWidget(), cp);
    cp->timelineA()->resetZoom();
    shot("smoke-compare");
    m_w->centralTabs()->setCurrentIndex(0);
}

void TestSmoke::stallSourceClick()
{
    StallsPanel* sp = m_w->stallsPanel();
    auto m = m_w->currentTrace();
    QVERIFY(m);
    if (m->stalls.empty())
        QSKIP("the synthetic generator produced no stall samples for this kernel");
    QVERIFY(sp->barCount() > 0);
    // a synthetic source line with a stage: emit through the view as a click would
    SourceModel* src = sp->sourceModel();
    int row = -1;
    for (int r = 0; r < src->rowCount() && row < 0; ++r)
        if (src->stageOfRow(r))
            row = r;
    if (row < 0)
        QSKIP("no stall sample maps to a line of the bundled source in this build");
    QSignalSpy req(sp, &StallsPanel::stageRequested);
    emit sp->sourceView()->clicked(src->index(row, SourceModel::ColCode));
    QCOMPARE(req.size(), 1);
    QCOMPARE(req.first().at(1).value<ws::IntervalKind>(), src->stageOfRow(row)->kind);
}

void TestSmoke::exportImage()
{
    const QString png = m_dir.filePath("view.png");
    QString err;
    QVERIFY2(m_w->exportCurrentView(png, QSize(1200, 700), 144, "smoke export", &err), qPrintable(err));
    QImage img(png);
    QCOMPARE(img.size(), QSize(1200, 700));
    const QString svg = m_dir.filePath("view.svg");
    QVERIFY2(m_w->exportCurrentView(svg, QSize(1200, 700), 96, "smoke export", &err), qPrintable(err));
    QVERIFY(QFileInfo(svg).size() > 1000);
    // The same action writes the trace formats for other tools (the whole kernel; docs/interop.md).
    const QString json = m_dir.filePath("view.json"), pf = m_dir.filePath("view.perfetto-trace");
    QVERIFY2(m_w->exportCurrentView(json, QSize(1200, 700), 96, QString(), &err), qPrintable(err));
    QFile jf(json);
    QVERIFY(jf.open(QIODevice::ReadOnly));
    QVERIFY(jf.read(40).startsWith("{\"displayTimeUnit\":\"ns\""));
    QVERIFY2(m_w->exportCurrentView(pf, QSize(1200, 700), 96, QString(), &err), qPrintable(err));
    QVERIFY(QFileInfo(pf).size() > 1000);
}

void TestSmoke::badFileKeepsRunning()
{
    const QString bad = m_dir.filePath("garbage.warpstage");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(4096, 'x'));
    f.close();
    QSignalSpy failed(m_w.get(), &MainWindow::fileOpenFailed);
    m_w->openFile(bad);
    QVERIFY(failed.wait(20000));
    QVERIFY2(m_w->bannerText().contains("garbage.warpstage"), qPrintable(m_w->bannerText()));
    QVERIFY(m_w->isVisible());
    QVERIFY(m_w->currentTrace());  // the previous document is still shown
    shot("smoke-badfile");
    // and a good file opens again afterwards
    QSignalSpy opened(m_w.get(), &MainWindow::fileOpened);
    m_w->openFile(m_file);
    QVERIFY(opened.wait(30000));
}

void TestSmoke::dropOpensFile()
{
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(m_file)});
    const QPoint pos = m_w->rect().center();
    QDragEnterEvent enter(pos, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_w.get(), &enter);
    QVERIFY(enter.isAccepted());
    QSignalSpy opened(m_w.get(), &MainWindow::fileOpened);
    QDropEvent drop(pos, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_w.get(), &drop);
    QVERIFY(opened.wait(30000));
    QCOMPARE(opened.first().at(0).toString(), m_file);
    // non-file drops are refused
    QMimeData text;
    text.setText("hello");
    QDragEnterEvent enter2(pos, Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
    enter2.setAccepted(false);
    QApplication::sendEvent(m_w.get(), &enter2);
    QVERIFY(!enter2.isAccepted());
}

void TestSmoke::recordWithoutGpu()
{
    const bool gpu = QFileInfo::exists("/dev/nvidiactl") || QFileInfo::exists("/dev/nvidia0");
    if (gpu)
        QSKIP("this machine has a GPU");
    QVERIFY(!m_w->recordAction()->isEnabled());
    QVERIFY(m_w->recordAction()->toolTip().contains("GPU"));
}

void TestSmoke::syntheticFallback()
{
    qputenv("WARPSTAGE_SAMPLES", m_dir.filePath("empty").toUtf8());
    if (!findSampleTrace().isEmpty())
        QSKIP("a bundled sample trace exists in this build: the synthetic fallback is not used");
    MainWindow w;
    QSignalSpy opened(&w, &MainWindow::fileOpened);
    w.openDefault();
    QVERIFY(opened.wait(60000));
    QVERIFY(w.bannerText().contains("SYNTHETIC"));
    QVERIFY(w.runsModel()->rowCount() >= 4);
}

void TestSmoke::staysResponsiveWhileLoading()
{
    // a 3M-interval kernel: open, load and analyse it while the GUI thread keeps ticking
    const QString big = m_dir.filePath("big.warpstage");
    {
        ws::SyntheticParams p;
        p.pattern = ws::SyntheticPattern::WarpSpecialized;
        p.targetIntervals = 3'000'000;
        p.stallSamples = false;
        ws::RunRecord rec = ws::generateSynthetic(p);
        ws::TraceStore st = ws::TraceStore::openForWriting(big.toStdString());
        st.writeRun(rec);
    }
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    // A gap between two ticks is measured in wall time less the time the GUI thread waited for a CPU (Linux
    // schedstat): what is left is the time it was busy or blocked (on a lock, a join, I/O), which is what this test
    // forbids. The raw wall gap also counts the waits for a CPU, which grow with the machine's load: it failed at
    // 667 ms under ctest -j2 on the loaded 2-core VM (2026-12-01) and reached 2.3 s under ASan there, with the GUI
    // thread's own work unchanged. Without schedstat the GUI thread's CPU time stands in (it misses blocking).
    QElapsedTimer clock;
    const bool schedstat = wstest::runQueueWaitMs() >= 0;
    qint64 last = 0, worstWall = 0;
    double lastWaited = 0, lastCpu = 0, worst = 0, worstEnd = 0, worstCpu = 0;
    QTimer tick;
    tick.setInterval(5);
    connect(&tick, &QTimer::timeout, this, [&] {
        const qint64 now = clock.elapsed();
        const double waited = schedstat ? wstest::runQueueWaitMs() : 0, cpu = wstest::threadCpuMs();
        const double gap = schedstat ? double(now - last) - (waited - lastWaited) : cpu - lastCpu;
        if (gap > worst) {
            worst = gap;
            worstCpu = cpu - lastCpu;  // of which the GUI thread ran (the rest: blocked)
            worstEnd = double(now);  // where it happened: compare with "kernel shown" / "index ready" below
        }
        worstWall = std::max(worstWall, now - last);
        last = now;
        lastWaited = waited;
        lastCpu = cpu;
    });
    QSignalSpy shown(&w, &MainWindow::kernelShown);
    clock.start();
    lastWaited = schedstat ? wstest::runQueueWaitMs() : 0;
    lastCpu = wstest::threadCpuMs();
    tick.start();
    w.openFile(big);
    // (120 s: waits for an event, which cost nothing when it comes; the ASan build beside 4 busy loops showed the
    // kernel after 24-36 s and had its index after 32-46 s, 2026-12-01)
    QTRY_VERIFY_WITH_TIMEOUT(shown.size() == 1, 120000);
    const qint64 shownAt = clock.elapsed();
    QTRY_VERIFY_WITH_TIMEOUT(w.timeline()->indexReady(), 120000);
    tick.stop();
    qInfo("3M intervals: kernel shown after %lld ms, index ready after %lld ms, longest GUI-thread gap %.0f ms %s "
          "(%.0f ms of it on a CPU; ending at %.0f ms); longest wall-time gap with the waits for a CPU %lld ms",
          shownAt, clock.elapsed(), worst, schedstat ? "busy or blocked" : "of CPU", worstCpu, worstEnd, worstWall);
    QVERIFY(w.currentTrace()->intervalCount() > 2'000'000);
    // the GUI thread only sets the trace and the tables; loading, analysis and indexing run on workers.
    // 600 ms; x2 in the ASan+UBSan preset (Debug, every instruction checked: -fsanitize=address defines
    // __SANITIZE_ADDRESS__), where the first paints after the kernel is shown take that much longer
    // (docs/benchmarks.md, "GUI-thread gaps while a 3M-interval kernel loads").
#if defined(__SANITIZE_ADDRESS__)
    constexpr double kSanitizerFactor = 2;
#else
    constexpr double kSanitizerFactor = 1;
#endif
    const double limit = 600 * kSanitizerFactor;
    QVERIFY2(worst < limit, qPrintable(QString("GUI thread busy or blocked for %1 ms (limit %2 ms)").arg(worst).arg(limit)));
}

// File ▸ Bundled samples lists every sample; the default stays the ladder; the PyTorch program sample opens
// in the program view with what it was recorded with (launches, NVTX ranges, the stall pass's samples).
void TestSmoke::bundledSamplesMenu()
{
    qunsetenv("WARPSTAGE_SAMPLES");
    const QStringList all = findSampleTraces();
    if (all.isEmpty())
        QSKIP("no bundled sample trace in this build");
    QString program;
    for (const QString& f : all)
        if (QFileInfo(f).fileName().startsWith(QStringLiteral("transformer-block")))
            program = f;
    QVERIFY2(!program.isEmpty(), qPrintable(all.join(QStringLiteral(", "))));
    QVERIFY(QFileInfo(findSampleTrace()).fileName().startsWith(QStringLiteral("ladder-")));
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* menu = w.findChild<QMenu*>(QStringLiteral("samplesMenu"));
    QVERIFY(menu);
    QMetaObject::invokeMethod(menu, "aboutToShow");
    QAction* open = nullptr;
    for (QAction* a : menu->actions())
        if (a->text() == QFileInfo(program).fileName())
            open = a;
    QCOMPARE(menu->actions().size(), all.size());
    QVERIFY(open);
    QSignalSpy opened(&w, &MainWindow::fileOpened);
    open->trigger();
    QVERIFY(opened.wait(60000));
    QCOMPARE(opened.first().at(0).toString(), program);
    QTRY_VERIFY_WITH_TIMEOUT(w.programPanel()->program() != nullptr, 30000);
    const auto p = w.programPanel()->program();
    QVERIFY(p->kernels.size() >= 200);
    QVERIFY(p->nvtx.size() >= 100);
    QCOMPARE(p->run.kind, ws::RunKind::Program);
}

void TestSmoke::bundledSampleTour()
{
    qunsetenv("WARPSTAGE_SAMPLES");
    const QString sample = findSampleTrace();
    if (sample.isEmpty())
        QSKIP("no bundled sample trace in this build");
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy opened(&w, &MainWindow::fileOpened);
    QSignalSpy shown(&w, &MainWindow::kernelShown);
    w.openDefault();
    QVERIFY(opened.wait(60000));
    QCOMPARE(opened.first().at(0).toString(), sample);
    QVERIFY2(!w.bannerText().contains("SYNTHETIC"), qPrintable(w.bannerText()));
    QTRY_VERIFY_WITH_TIMEOUT(shown.size() >= 1, 60000);
    QVERIFY(!w.currentTrace()->run.synthetic);
    // the guided tour walks the whole ladder, each rung's kernel from the sample
    w.teachingPanel()->setRung("sync");
    for (const char* rung : {"tma_sync", "multistage", "warp_specialized", "cooperative", "pingpong"}) {
        w.teachingPanel()->next();
        QCOMPARE(w.teachingPanel()->rung(), QString::fromLatin1(rung));
        QTRY_VERIFY_WITH_TIMEOUT(w.currentTrace() && w.currentTrace()->launch.variant == rung, 60000);
        QVERIFY(w.currentTrace()->intervalCount() > 0);
        QVERIFY(w.metricsPanel()->model()->rowCount() > 0);
    }
    QVERIFY(w.timeline()->waitForIndex(60000));
    QVERIFY(w.stallsPanel()->barCount() > 0);  // the sample has the stall pass
    QVERIFY(w.stallsPanel()->sourceModel()->attributedSamples() > 0);
    {  // after the tour moved from rung to rung, the source view shows this rung's hottest line
        const int hot = w.stallsPanel()->sourceModel()->hottestRow();
        QVERIFY(hot > 0);
        QTableView* view = w.stallsPanel()->sourceView();
        const QModelIndex idx = w.stallsPanel()->sourceModel()->index(hot, 0);
        // (QTRY returns as soon as it holds: the long timeout only spares a loaded sanitizer run, CI's ctest -j2)
        QTRY_VERIFY_WITH_TIMEOUT(view->viewport()->rect().intersects(view->visualRect(idx)), 20000);
        // the helper header with pingpong's waits and wgmma is one choice away
        QComboBox* files = w.stallsPanel()->sourceFileBox();
        QCOMPARE(files->itemData(0).toString(), QStringLiteral("pingpong.cu"));
        const int hopper = files->findData(QStringLiteral("hopper.cuh"));
        QVERIFY(hopper > 0);
        const qint64 inRung = w.stallsPanel()->sourceModel()->attributedSamples();
        w.stallsPanel()->showSourceFile(QStringLiteral("hopper.cuh"));
        QCOMPARE(files->currentIndex(), hopper);
        QCOMPARE(w.stallsPanel()->sourceModel()->fileName(), QStringLiteral("hopper.cuh"));
        QVERIFY(w.stallsPanel()->sourceModel()->attributedSamples() > inRung);  // most samples are in inlined helpers
        const int hotHelper = w.stallsPanel()->sourceModel()->hottestRow();
        QVERIFY(hotHelper > 0);
        QTRY_VERIFY_WITH_TIMEOUT(
            view->viewport()->rect().intersects(view->visualRect(w.stallsPanel()->sourceModel()->index(hotHelper, 0))),
            20000);
        w.stallsPanel()->showSourceFile(QStringLiteral("pingpong.cu"));
        QCOMPARE(w.stallsPanel()->sourceModel()->attributedSamples(), inRung);
    }
    const QString dir = qEnvironmentVariable("WARPSTAGE_SCREENSHOT_DIR");
    if (!dir.isEmpty()) {
        QTest::qWait(300);
        w.grab().save(dir + "/sample-pingpong.png");
    }
    // compare pingpong with the rung below (cooperative)
    w.compareKernels();
    QTRY_VERIFY_WITH_TIMEOUT(w.comparePanel()->isLoaded() && w.comparePanel()->timelineA()->trace(), 60000);
    QCOMPARE(w.comparePanel()->timelineA()->trace()->launch.variant, std::string("cooperative"));
    if (!dir.isEmpty()) {
        w.comparePanel()->timelineA()->waitForIndex(60000);
        w.comparePanel()->timelineB()->waitForIndex(60000);
        QTest::qWait(300);
        w.grab().save(dir + "/sample-compare.png");
    }
}

QTEST_MAIN(TestSmoke)
#include "tst_smoke.moc"
