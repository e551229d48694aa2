// tst_programview: the program view (ProgramLayout, ProgramPlottable, ProgramView), the kernel summary
// table (KernelSummaryModel / KernelSummaryProxy) and their two-way link (ProgramPanel), on in-memory
// ws::ProgramTrace objects: a small hand-made program and the synthetic PyTorch-like one.
#include "comparepickers.h"
#include "kernelsummarymodel.h"
#include "mainwindow.h"
#include "runsmodel.h"
#include "timelinewidget.h"
#include "tracedocument.h"
#include "programlayout.h"
#include "programpanel.h"
#include "programplottable.h"
#include "programview.h"
#include "timelinepalette.h"

#include "common/machine_clock.h"

#include <warpstage/program.h>
#include <warpstage/synthetic.h>

#include <qcustomplot.h>

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>
#include <QAction>
#include <QTabWidget>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

using ws::TimeNs;

namespace {

// CPU budget of one replot of 10^5 launches (tst_programview::denseFrameSkipsSubpixelRecords); a sanitizer build runs
// the same code several times slower.
#if defined(__SANITIZE_ADDRESS__)
constexpr double kDenseFrameCpuMs = 1000;
#else
constexpr double kDenseFrameCpuMs = 200;
#endif

const char *kGemm = "void cutlass::device_kernel<cutlass::gemm::Gemm<float, 128> >(cutlass::gemm::Gemm<float, 128>::Params)";
const char *kAdd = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int, float*)";

// Stream 7: gemm [0,40us) add [50,60us) gemm(traced) [100,140us); stream 8: add [20,30us), memcpy HtoD [70,90us);
// NVTX "step" [0,150us) depth 0 with "fwd" [0,60us) depth 1 on thread 11.
std::shared_ptr<ws::ProgramTrace> smallProgram()
{
    auto p = std::make_shared<ws::ProgramTrace>();
    p->run.deviceOrdinal = 0;
    auto k = [&](const char *name, TimeNs a, TimeNs b, std::uint32_t stream, bool traced, ws::RowId id) {
        ws::KernelLaunch L;
        L.id = id;
        L.name = name;
        L.start = 1'000'000 + a;
        L.end = 1'000'000 + b;
        L.streamId = stream;
        L.traced = traced;
        L.grid[0] = 132;
        L.block[0] = 384;
        L.correlationId = std::uint32_t(100 + id);
        p->kernels.push_back(L);
    };
    k(kGemm, 0, 40000, 7, false, 1);
    k(kAdd, 20000, 30000, 8, false, 2);
    k(kAdd, 50000, 60000, 7, false, 3);
    k(kGemm, 100000, 140000, 7, true, 4);
    ws::MemOp m;
    m.kind = ws::MemOpKind::HtoD;
    m.start = 1'070'000;
    m.end = 1'090'000;
    m.streamId = 8;
    m.bytes = 1 << 20;
    p->memOps.push_back(m);
    ws::NvtxRange r;
    r.name = "step";
    r.start = 1'000'000;
    r.end = 1'150'000;
    r.threadId = 11;
    p->nvtx.push_back(r);
    r.name = "fwd";
    r.end = 1'060'000;
    r.depth = 1;
    p->nvtx.push_back(r);
    return p;
}

QColor pixelAtCentre(ProgramView &v, int row, int item)
{
    v.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const QImage img = v.plot()->toPixmap().toImage();
    const QRectF r = v.plottable()->itemRect(row, item);
    return img.pixelColor(QPoint(int(r.left() + 2), int(r.top() + 2)));
}

void sendMouse(QWidget *t, QEvent::Type type, QPoint pos, Qt::MouseButton b, Qt::MouseButtons bs,
               Qt::KeyboardModifiers m = Qt::NoModifier)
{
    QMouseEvent e(type, QPointF(pos), t->mapToGlobal(QPointF(pos)), b, bs, m);
    QCoreApplication::sendEvent(t, &e);
}

void dragOn(QWidget *t, QPoint from, QPoint to, Qt::MouseButton b, Qt::KeyboardModifiers m = Qt::NoModifier)
{
    sendMouse(t, QEvent::MouseButtonPress, from, b, b, m);
    sendMouse(t, QEvent::MouseMove, (from + to) / 2, Qt::NoButton, b, m);
    sendMouse(t, QEvent::MouseMove, to, Qt::NoButton, b, m);
    sendMouse(t, QEvent::MouseButtonRelease, to, b, Qt::NoButton, m);
}

void wheelOn(QWidget *t, QPoint pos, int dy, Qt::KeyboardModifiers m = Qt::NoModifier)
{
    QWheelEvent e(QPointF(pos), t->mapToGlobal(QPointF(pos)), QPoint(), QPoint(0, dy), Qt::NoButton, m,
                  Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(t, &e);
}

// With WARPSTAGE_SCREENSHOT_DIR set, saves the widget's picture there (to look at a gesture's effect).
void shot(QWidget *w, const QString &name)
{
    const QString dir = qEnvironmentVariable("WARPSTAGE_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        w->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
}

int rowOfStream(const ProgramLayout &l, std::uint32_t stream)
{
    for (int i = 0; i < int(l.rows().size()); ++i)
        if (l.rows()[std::size_t(i)].type == ProgramRow::Stream && l.rows()[std::size_t(i)].streamId == stream)
            return i;
    return -1;
}

}  // namespace

class TstProgramView : public QObject {
    Q_OBJECT
private slots:
    void layoutRows()
    {
        auto p = smallProgram();
        ProgramLayout l;
        l.build(p.get(), {});
        const auto &rows = l.rows();
        // NVTX depth 0, NVTX depth 1, Device 0 header, stream 7, stream 8
        QCOMPARE(rows.size(), std::size_t(5));
        QCOMPARE(rows[0].type, ProgramRow::Nvtx);
        QCOMPARE(rows[0].depth, 0);
        QCOMPARE(rows[1].depth, 1);
        QCOMPARE(rows[2].type, ProgramRow::DeviceHeader);
        QVERIFY(rows[2].label.startsWith(QStringLiteral("Device 0")));
        const int s7 = rowOfStream(l, 7), s8 = rowOfStream(l, 8);
        QCOMPARE(s7, 3);
        QCOMPARE(s8, 4);
        QCOMPARE(rows[3].items.size(), std::size_t(3));
        // stream 8 holds its kernel and its memory operation, in time order
        QCOMPARE(rows[4].items.size(), std::size_t(2));
        QCOMPARE(rows[4].items[0].kind, ProgramItem::Kernel);
        QCOMPARE(rows[4].items[1].kind, ProgramItem::MemOp);
        // launch 3 (index into kernels) is the third item of stream 7
        QCOMPARE(l.rowOfKernel(3), std::make_pair(3, 2));
        QCOMPARE(l.rowOfKernel(1), std::make_pair(4, 0));
        // rows stack without gaps
        for (std::size_t i = 1; i < rows.size(); ++i)
            QCOMPARE(rows[i].top, rows[i - 1].top + rows[i - 1].height);
        QCOMPARE(l.rowAt(rows[3].top + 1), 3);
        QCOMPARE(l.rowAt(l.totalHeight()), -1);
        // options: no NVTX rows; API rows when asked
        ProgramLayoutOptions o;
        o.showNvtx = false;
        l.build(p.get(), o);
        QCOMPARE(l.rows().size(), std::size_t(3));
        ws::ApiSpan a;
        a.threadId = 11;
        a.start = 1'000'000;
        a.end = 1'001'000;
        p->apiSpans.push_back(a);
        o.showApi = true;
        l.build(p.get(), o);
        QCOMPARE(l.rows().size(), std::size_t(4));
        QCOMPARE(l.rows()[0].type, ProgramRow::Api);
    }
    void firstVisibleMatchesScan()
    {
        ws::SyntheticProgramParams sp;
        sp.steps = 2;
        sp.launchesPerStep = 300;
        const auto p = ws::generateSyntheticProgram(sp);
        ProgramLayout l;
        l.build(&p, {});
        for (const auto &row : l.rows()) {
            if (row.items.empty())
                continue;
            const TimeNs lo = row.items.front().start, hi = row.maxEnd.back();
            for (int s = 0; s <= 40; ++s) {
                const TimeNs t = lo + (hi - lo) * s / 40;
                std::size_t expect = row.items.size();
                for (std::size_t i = 0; i < row.items.size(); ++i) {
                    TimeNs m = 0;
                    for (std::size_t j = 0; j <= i; ++j)
                        m = std::max(m, row.items[j].end);
                    if (m > t) {
                        expect = i;
                        break;
                    }
                }
                QCOMPARE(row.firstVisible(t), expect);
                if (s > 2)
                    break;  // the scan above is quadratic: a few points per row suffice
            }
        }
    }
    void familyColoursStable()
    {
        QCOMPARE(programpalette::familyColor("at::native::vectorized_elementwise_kernel"),
                 programpalette::familyColor("at::native::vectorized_elementwise_kernel"));
        QVERIFY(programpalette::memOpColor(ws::MemOpKind::HtoD) != programpalette::memOpColor(ws::MemOpKind::DtoH));
    }
    void drawsKernelsMemopsAndHighlight()
    {
        ProgramView v;
        v.resize(1200, 400);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        auto p = smallProgram();
        v.setProgram(p);
        const ProgramLayout &l = v.programLayout();
        const int s7 = rowOfStream(l, 7), s8 = rowOfStream(l, 8);
        const QColor gemm = programpalette::familyColor(ws::kernelFamily(kGemm));
        const QColor add = programpalette::familyColor(ws::kernelFamily(kAdd));
        QCOMPARE(pixelAtCentre(v, s7, 0), gemm);
        QCOMPARE(pixelAtCentre(v, s7, 1), add);
        // the memory operation is drawn, in its direction's colour (hatch stripes are lighter)
        const QColor mem = programpalette::memOpColor(ws::MemOpKind::HtoD);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QImage img = v.plot()->toPixmap().toImage();
        const QRect mr = v.plottable()->itemRect(s8, 1).toRect().adjusted(1, 1, -1, -1);
        int memPixels = 0;
        for (int y = mr.top(); y <= mr.bottom(); ++y)
            for (int x = mr.left(); x <= mr.right(); ++x)
                memPixels += img.pixelColor(x, y) == mem;
        QVERIFY2(memPixels > mr.width() * mr.height() / 4, qPrintable(QString::number(memPixels)));
        // highlight the add kernel: its launches stay, the GEMM fades
        v.highlightKernel(QString::fromLatin1(kAdd));
        QCOMPARE(pixelAtCentre(v, s7, 1), add);
        QCOMPARE(pixelAtCentre(v, s7, 0), tlpalette::faded(gemm, 0.8));
        v.highlightKernel({});
        QCOMPARE(pixelAtCentre(v, s7, 0), gemm);
    }
    void denseFrameSkipsSubpixelRecords()
    {
        ws::SyntheticProgramParams sp;
        sp.steps = 10;
        sp.launchesPerStep = 10000;  // 10^5 launches
        auto p = std::make_shared<ws::ProgramTrace>(ws::generateSyntheticProgram(sp));
        QCOMPARE(p->kernels.size(), std::size_t(100000));
        ProgramView v;
        v.resize(1200, 500);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.setProgram(p);
        // The frame's cost is the GUI thread's CPU time for the whole replot (docs/testing.md, "Tests and the machine
        // they run on"): the plottable's own wall-clock lastDrawMs() also counts the time the thread waited for a CPU
        // (ctest -j2, a sanitizer build beside it) and is only printed.
        const double cpu0 = wstest::threadCpuMs();
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const double frameCpuMs = wstest::threadCpuMs() - cpu0;
        // every visible record is either drawn or jumped over; far fewer visited than exist
        QVERIFY2(v.plottable()->lastItemsVisited() < 30000, qPrintable(QString::number(v.plottable()->lastItemsVisited())));
        QVERIFY(v.plottable()->lastItemsDrawn() > 100);
        qInfo("dense frame: %.1f ms of CPU for the replot, draw() %.1f ms wall", frameCpuMs, v.plottable()->lastDrawMs());
        QVERIFY2(frameCpuMs < kDenseFrameCpuMs, qPrintable(QString::number(frameCpuMs)));
    }
    void tooltipSaysWhatItIs()
    {
        ProgramView v;
        v.resize(1200, 400);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.setProgram(smallProgram());
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const int s7 = rowOfStream(v.programLayout(), 7);
        const QString tip = v.tooltipAt(v.plottable()->itemRect(s7, 0).center().toPoint());
        QVERIFY2(tip.contains(QStringLiteral("cutlass::device_kernel")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("grid (132, 1, 1) · block (384, 1, 1)")));
        QVERIFY(tip.contains(QStringLiteral("stream 7 · correlation id 101")));
        QVERIFY(tip.contains(QStringLiteral("duration 40")));
        QVERIFY(tip.contains(QStringLiteral("--kernels")));  // untraced: what it takes
        const QString tipTraced = v.tooltipAt(v.plottable()->itemRect(s7, 2).center().toPoint());
        QVERIFY(tipTraced.contains(QStringLiteral("opens the per-warp timeline")));
        const QString tipMem = v.tooltipAt(v.plottable()->itemRect(rowOfStream(v.programLayout(), 8), 1).center().toPoint());
        QVERIFY2(tipMem.contains(QStringLiteral("host → device")) && tipMem.contains(QStringLiteral("1048576 bytes")), qPrintable(tipMem));
    }
    void navigationAndHistory()
    {
        ProgramView v;
        v.resize(1000, 300);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.setProgram(smallProgram());
        const auto full = v.visibleRange();
        QTest::keyClick(v.plot(), Qt::Key_W);
        const auto in = v.visibleRange();
        QVERIFY(in.second - in.first < full.second - full.first);
        v.setVisibleRange(1'100'000, 1'140'000);
        QCOMPARE(v.visibleRange().first, TimeNs(1'100'000));
        QTest::keyClick(v.plot(), Qt::Key_Left, Qt::AltModifier);
        QCOMPARE(v.visibleRange(), in);
        QTest::keyClick(v.plot(), Qt::Key_Right, Qt::AltModifier);
        QCOMPARE(v.visibleRange().second, TimeNs(1'140'000));
        QTest::keyClick(v.plot(), Qt::Key_Backspace);
        QCOMPARE(v.visibleRange(), in);
        QTest::keyClick(v.plot(), Qt::Key_Home);
        QCOMPARE(v.visibleRange(), full);
        QVERIFY(v.zoomToKernel(QString::fromLatin1(kAdd)));  // [20us, 60us) plus margins
        QVERIFY(v.visibleRange().first <= 1'020'000 && v.visibleRange().first > 1'010'000);
        QVERIFY(v.visibleRange().second >= 1'060'000 && v.visibleRange().second < 1'070'000);
        QVERIFY(!v.zoomToKernel(QStringLiteral("nope")));
    }
    void summaryModelSortFilter()
    {
        auto p = smallProgram();
        KernelSummaryModel m;
        m.setProgram(p.get());
        QCOMPARE(m.rowCount(), 2);
        // gemm: 2 launches, 80 us of 100 us kernel time
        QCOMPARE(m.index(0, KernelSummaryModel::Name).data().toString(), QStringLiteral("cutlass::device_kernel"));
        QCOMPARE(m.index(0, KernelSummaryModel::Launches).data().toString(), QStringLiteral("2"));
        QCOMPARE(m.index(0, KernelSummaryModel::Share).data().toString(), QStringLiteral("80.0 %"));
        QCOMPARE(m.index(0, KernelSummaryModel::Share).data(KernelSummaryModel::SortRole).toDouble(), 0.8);
        QCOMPARE(m.index(0, KernelSummaryModel::Traced).data().toString(), QStringLiteral("1"));
        QCOMPARE(m.index(1, KernelSummaryModel::Share).data().toString(), QStringLiteral("20.0 %"));
        QCOMPARE(m.index(1, KernelSummaryModel::Traced).data().toString(), QStringLiteral("—"));
        KernelSummaryProxy proxy;
        proxy.setSourceModel(&m);
        proxy.sort(KernelSummaryModel::Total, Qt::AscendingOrder);
        QCOMPARE(proxy.index(0, 0).data(KernelSummaryModel::NameRole).toString(), QString::fromLatin1(kAdd));
        proxy.setNameFilter(QStringLiteral("CUTLASS"));
        QCOMPARE(proxy.rowCount(), 1);
        QCOMPARE(proxy.index(0, 0).data(KernelSummaryModel::NameRole).toString(), QString::fromLatin1(kGemm));
        proxy.setNameFilter(QString());
        QCOMPARE(proxy.rowCount(), 2);
    }
    // A run whose GPU work is one burst inside long host time (the bundled lce runs: set-up, ~0.5 s of start-up, the
    // timed iterations) opens on that burst (ws::busiestBurst), with a margin; Back and Reset zoom show the whole run.
    // A run busy throughout opens whole, with no history entry.
    void panelOpensOnTheBusiestBurst()
    {
        ProgramPanel panel;
        panel.resize(1200, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto p = smallProgram();  // GPU work in [1'000'000, 1'140'000)
        ws::ApiSpan api;          // host time after it: the run spans [1'000'000, 3'000'000)
        api.start = 1'000'000;
        api.end = 3'000'000;
        p->apiSpans.push_back(api);
        panel.setProgram(p);
        ProgramView *v = panel.view();
        const auto r = v->visibleRange();
        // the burst [1'000'000, 1'140'000) with 140'000 / 50 = 2'800 either side
        QCOMPARE(r.first, TimeNs(1'000'000 - 2'800));
        QCOMPARE(r.second, TimeNs(1'140'000 + 2'800));
        QVERIFY(v->canGoBack());
        v->historyBack();
        const auto whole = v->visibleRange();
        QVERIFY(whole.first <= TimeNs(1'000'000) && whole.second >= TimeNs(3'000'000));
        v->historyForward();
        v->resetZoom();
        QCOMPARE(v->visibleRange(), whole);
        // the same GPU work without the host tail: busy over most of its span, whole, nothing to go back to
        panel.setProgram(smallProgram());
        QVERIFY(!v->canGoBack());
        const auto r2 = v->visibleRange();
        QVERIFY(r2.first <= TimeNs(1'000'000) && r2.second >= TimeNs(1'140'000));
        v->resetZoom();
        QCOMPARE(v->visibleRange(), r2);
    }
    void panelLinksBothWays()
    {
        ProgramPanel panel;
        panel.resize(1200, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setProgram(smallProgram());
        ProgramView *v = panel.view();
        v->plot()->replot(QCustomPlot::rpImmediateRefresh);
        // row -> timeline
        panel.selectKernelName(QString::fromLatin1(kAdd));
        QCOMPARE(v->highlightedKernel(), QString::fromLatin1(kAdd));
        QCOMPARE(panel.selectedKernel(), QString::fromLatin1(kAdd));
        // timeline -> row: click the first GEMM launch
        const int s7 = rowOfStream(v->programLayout(), 7);
        QSignalSpy hints(&panel, &ProgramPanel::hint);
        QTest::mouseClick(v->plot(), Qt::LeftButton, {}, v->plottable()->itemRect(s7, 0).center().toPoint());
        QCOMPARE(v->selectedLaunch(), 0);
        QCOMPARE(panel.selectedKernel(), QString::fromLatin1(kGemm));
        QCOMPARE(v->highlightedKernel(), QString::fromLatin1(kGemm));
        QVERIFY(!hints.isEmpty() && hints.last().at(0).toString().contains(QStringLiteral("--kernels")));
        // a filtered-out row is brought back when its launch is clicked
        panel.filterBox()->setText(QStringLiteral("elementwise"));
        QCOMPARE(panel.proxy()->rowCount(), 1);
        QTest::mouseClick(v->plot(), Qt::LeftButton, {}, v->plottable()->itemRect(s7, 2).center().toPoint());
        QCOMPARE(panel.selectedKernel(), QString::fromLatin1(kGemm));
        // opening: the traced launch (id 4) opens, the untraced one says what it would take
        QSignalSpy opens(&panel, &ProgramPanel::openLaunch);
        QTest::mouseDClick(v->plot(), Qt::LeftButton, {}, v->plottable()->itemRect(s7, 2).center().toPoint());
        QCOMPARE(opens.size(), 1);
        QCOMPARE(opens.at(0).at(0).toLongLong(), 4);
        QTest::mouseDClick(v->plot(), Qt::LeftButton, {}, v->plottable()->itemRect(s7, 0).center().toPoint());
        QCOMPARE(opens.size(), 1);
        QVERIFY(hints.last().at(0).toString().contains(QStringLiteral("warpstage-record --kernels")));
    }
    void exportDeterministic()
    {
        QTemporaryDir dir;
        ProgramView v;
        v.resize(900, 400);
        v.setProgram(smallProgram());
        v.highlightKernel(QString::fromLatin1(kGemm));
        QString err;
        const QString a = dir.filePath(QStringLiteral("a.png")), b = dir.filePath(QStringLiteral("b.png"));
        QVERIFY2(v.exportImage(a, QSize(800, 360), 96, QStringLiteral("program"), &err), qPrintable(err));
        QVERIFY2(v.exportImage(b, QSize(800, 360), 96, QStringLiteral("program"), &err), qPrintable(err));
        QFile fa(a), fb(b);
        QVERIFY(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
        QCOMPARE(fa.readAll(), fb.readAll());
        const QImage img(a);
        QCOMPARE(img.size(), QSize(800, 360));
        QVERIFY(!v.exportImage(dir.filePath(QStringLiteral("x.bmp")), QSize(800, 360), 96, {}, &err));
        QVERIFY(err.contains(QStringLiteral("unknown image type")));
    }

    void mainWindowDrillDownAndBack()
    {
        qputenv("WARPSTAGE_NO_DIALOGS", "1");
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ladder.warpstage"));
        QString err;
        QVERIFY2(ws::ui::writeSyntheticLadder(path, &err, 8, 8), qPrintable(err));
        ws::ui::MainWindow w;
        w.resize(1400, 900);
        w.show();
        QSignalSpy opened(&w, &ws::ui::MainWindow::fileOpened);
        QSignalSpy shown(&w, &ws::ui::MainWindow::kernelShown);
        w.openFile(path);
        QVERIFY(opened.wait(20000));
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 20000);
        // a ladder run is a small program too: its launches in the program view
        const qint64 run = w.document()->contents().runs.back().summary.info.id;  // not the run shown on opening
        QSignalSpy programShown(&w, &ws::ui::MainWindow::programShown);
        w.showProgramOfRun(run);
        QTRY_VERIFY_WITH_TIMEOUT(!programShown.isEmpty(), 20000);
        QCOMPARE(w.centralTabs()->currentWidget(), static_cast<QWidget *>(w.programPanel()));
        const auto program = w.programPanel()->program();
        QVERIFY(program && !program->kernels.empty());
        QCOMPARE(program->kernels.size(), std::size_t(w.document()->contents().runs.back().kernels.size()));
        ProgramView *v = w.programPanel()->view();
        int traced = -1;
        for (int k = 0; k < int(program->kernels.size()); ++k)
            if (program->kernels[std::size_t(k)].traced)
                traced = k;  // the last one: not the kernel the window showed on opening
        QVERIFY(traced >= 0);
        QVERIFY(qint64(program->kernels[std::size_t(traced)].id) != w.currentKernel());
        // zoom somewhere, open the traced launch: its warp view
        v->zoomToKernel(QString::fromStdString(program->kernels[std::size_t(traced)].name));
        const auto where = v->visibleRange();
        shown.clear();
        v->selectLaunch(traced);
        v->setFocus();
        QTest::keyClick(v->plot(), Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 20000);
        QCOMPARE(shown.last().at(0).toLongLong(), qint64(program->kernels[std::size_t(traced)].id));
        QCOMPARE(w.centralTabs()->currentIndex(), 0);
        QVERIFY(w.canGoBack());
        // Back: the program view, where it was
        w.goBack();
        QCOMPARE(w.centralTabs()->currentWidget(), static_cast<QWidget *>(w.programPanel()));
        QCOMPARE(v->visibleRange(), where);
        QCOMPARE(v->selectedLaunch(), traced);
    }

    // The Program tab follows the kernel selected in the Runs panel: it never shows another run than the
    // selected kernel's, and following does not leave the tab the user is on.
    void programViewFollowsTheRunsSelection()
    {
        qputenv("WARPSTAGE_NO_DIALOGS", "1");
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ladder.warpstage"));
        QString err;
        QVERIFY2(ws::ui::writeSyntheticLadder(path, &err, 8, 8), qPrintable(err));
        ws::ui::MainWindow w;
        w.resize(1400, 900);
        w.show();
        QSignalSpy opened(&w, &ws::ui::MainWindow::fileOpened);
        QSignalSpy shown(&w, &ws::ui::MainWindow::kernelShown);
        w.openFile(path);
        QVERIFY(opened.wait(20000));
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 20000);
        const auto &runs = w.document()->contents().runs;
        QVERIFY(runs.size() >= 2);
        const qint64 last = runs.back().summary.info.id;
        QSignalSpy programShown(&w, &ws::ui::MainWindow::programShown);
        w.showProgramOfRun(last);
        QTRY_VERIFY_WITH_TIMEOUT(!programShown.isEmpty(), 20000);
        QCOMPARE(w.programRun(), last);
        auto tracedOf = [](const ws::ui::RunEntry &r) {
            for (const auto &k : r.kernels)
                if (k.summary.launch.traced)
                    return qint64(k.summary.launch.id);
            return qint64(0);
        };
        const qint64 kFirst = tracedOf(runs.front()), kLast = tracedOf(runs.back());
        QVERIFY(kFirst > 0 && kLast > 0);
        // back on the timeline, a kernel of the run shown already: nothing reloads
        w.centralTabs()->setCurrentIndex(0);
        programShown.clear();
        w.selectKernel(kLast);
        QTRY_COMPARE_WITH_TIMEOUT(w.currentKernel(), kLast, 20000);
        QTest::qWait(200);
        QVERIFY(programShown.isEmpty());
        // a kernel of the first run: the Program tab now holds the first run, the timeline stays in front
        w.selectKernel(kFirst);
        QTRY_VERIFY_WITH_TIMEOUT(!programShown.isEmpty(), 20000);
        QCOMPARE(programShown.last().at(0).toLongLong(), qint64(runs.front().summary.info.id));
        QCOMPARE(w.programRun(), qint64(runs.front().summary.info.id));
        QCOMPARE(w.programPanel()->program()->run.id, runs.front().summary.info.id);
        QCOMPARE(w.centralTabs()->currentIndex(), 0);
    }

    // The synthetic PyTorch-like program in the panel: 20 kernel names in the table, the GEMM families on
    // top; with WARPSTAGE_SCREENSHOT_DIR set, the panel is saved there (docs/user-guide/program-view.png).
    void syntheticProgramPanel()
    {
        ws::SyntheticProgramParams sp;
        sp.steps = 3;
        sp.launchesPerStep = 400;
        sp.tracedName = "warpspecialized_gemm";
        auto p = std::make_shared<ws::ProgramTrace>(ws::generateSyntheticProgram(sp));
        ProgramPanel panel;
        panel.resize(1500, 820);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setProgram(p);
        QCOMPARE(panel.model()->rowCount(), 20);
        double shares = 0;
        for (const auto &s : panel.model()->stats())
            shares += s.share;
        QVERIFY(std::abs(shares - 1.0) < 1e-9);
        ProgramView *v = panel.view();
        // one step, the way a user looks at it
        const auto &step = p->nvtx.front();
        QCOMPARE(QString::fromStdString(step.name), QStringLiteral("step 0"));
        v->setVisibleRange(step.start, step.end + 200000);
        panel.selectKernelName(QString::fromStdString(p->kernels[0].name));
        for (const auto &k : p->kernels)
            if (k.name.find("flash_fwd") != std::string::npos) {
                panel.selectKernelName(QString::fromStdString(k.name));
                break;
            }
        QVERIFY(panel.selectedKernel().contains(QStringLiteral("flash_fwd")));
        const QString dir = qEnvironmentVariable("WARPSTAGE_SCREENSHOT_DIR");
        if (!dir.isEmpty()) {
            QApplication::processEvents();
            v->plot()->replot(QCustomPlot::rpImmediateRefresh);
            QVERIFY(panel.grab().save(dir + QStringLiteral("/program-view.png")));
            panel.selectKernelName({});
            v->resetZoom();
            v->plot()->replot(QCustomPlot::rpImmediateRefresh);
            QVERIFY(panel.grab().save(dir + QStringLiteral("/program-view-whole.png")));
            // the CPU launch spans with their arrows, zoomed on a few launches of the first step
            panel.apiBox()->setChecked(true);
            const auto &k = p->kernels[40];
            v->setVisibleRange(k.start - 150'000, k.end + 150'000);
            v->selectLaunch(40);
            v->plot()->replot(QCustomPlot::rpImmediateRefresh);
            QVERIFY(panel.grab().save(dir + QStringLiteral("/program-view-arrows.png")));
        }
    }

    // The mouse gestures (through ViewDrag, shared with the warp view): a left drag pans time and rows, a click
    // does not pan, a right drag zooms into the band, a narrow band zooms nothing, Shift+drag selects a range,
    // the wheel zooms about the cursor and Shift+wheel scrolls rows.
    void mouseGesturesPanAndZoom()
    {
        ProgramView v;
        v.resize(1000, 100);  // short: the rows (94 px) scroll
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.setProgram(smallProgram());
        v.setVisibleRange(1'040'000, 1'080'000);  // 40 us
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        shot(&v, QStringLiteral("programview-0-start"));
        const QRect ar = v.plottable()->lanesRect();
        const auto r0 = v.visibleRange();
        const double nsPerPx = double(r0.second - r0.first) / ar.width();
        const int y = ar.top() + 10;
        // a 2 px wiggle is a click: no pan
        dragOn(v.plot(), QPoint(ar.left() + 400, y), QPoint(ar.left() + 402, y), Qt::LeftButton);
        QCOMPARE(v.visibleRange(), r0);
        // drag 100 px to the left: 100 px later in time
        QSignalSpy ranges(&v, &ProgramView::visibleRangeChanged);
        dragOn(v.plot(), QPoint(ar.left() + 400, y), QPoint(ar.left() + 300, y), Qt::LeftButton);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        shot(&v, QStringLiteral("programview-1-panned"));
        const auto r1 = v.visibleRange();
        QVERIFY2(std::abs(double(r1.first - r0.first) - 100 * nsPerPx) <= 2 * nsPerPx,
                 qPrintable(QStringLiteral("%1 -> %2").arg(r0.first).arg(r1.first)));
        QCOMPARE(r1.second - r1.first, r0.second - r0.first);
        QVERIFY(!ranges.isEmpty());
        // Back undoes the whole drag in one step
        v.historyBack();
        QCOMPARE(v.visibleRange(), r0);
        // a right drag zooms into the band; a band narrower than 4 px zooms nothing
        dragOn(v.plot(), QPoint(ar.left() + 200, y), QPoint(ar.left() + 202, y + 5), Qt::RightButton);
        QCOMPARE(v.visibleRange(), r0);
        dragOn(v.plot(), QPoint(ar.left() + 200, y), QPoint(ar.left() + 400, y), Qt::RightButton);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        shot(&v, QStringLiteral("programview-2-zoomed"));
        const auto r2 = v.visibleRange();
        QVERIFY2(std::abs(double(r2.second - r2.first) - 200 * nsPerPx) <= 3 * nsPerPx,
                 qPrintable(QStringLiteral("%1 ns").arg(r2.second - r2.first)));
        QVERIFY(std::abs(double(r2.first - r0.first) - 200 * nsPerPx) <= 3 * nsPerPx);
        // Shift+drag selects a range and says so
        QSignalSpy sel(&v, &ProgramView::timeRangeSelected);
        dragOn(v.plot(), QPoint(ar.left() + 100, y), QPoint(ar.left() + 300, y), Qt::LeftButton, Qt::ShiftModifier);
        QCOMPARE(sel.size(), 1);
        QCOMPARE(v.visibleRange(), r2);
        // the wheel zooms in about the cursor, which stays at the same time
        const QPoint at(ar.left() + ar.width() / 4, y);
        const double tAt = v.plot()->xAxis->pixelToCoord(at.x());
        wheelOn(v.plot(), at, 120);
        const auto r3 = v.visibleRange();
        QVERIFY(r3.second - r3.first < r2.second - r2.first);
        QVERIFY(std::abs(v.plot()->xAxis->pixelToCoord(at.x()) - tAt) <= 2 * nsPerPx);
        // Shift+wheel scrolls the rows instead, time stays
        auto *bar = v.findChild<QScrollBar *>();
        QVERIFY(bar && bar->maximum() > 0);
        bar->setValue(0);
        wheelOn(v.plot(), at, -120, Qt::ShiftModifier);
        QCOMPARE(bar->value(), std::min(bar->maximum(), 3 * ProgramLayout::kStreamHeight));
        QCOMPARE(v.visibleRange(), r3);
        // a vertical drag scrolls the rows back
        dragOn(v.plot(), QPoint(ar.left() + 300, y + 10), QPoint(ar.left() + 300, y + 10 + bar->value()), Qt::LeftButton);
        QCOMPARE(bar->value(), 0);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        shot(&v, QStringLiteral("programview-3-wheel"));
    }


    // A long launch right after a thousand sub-pixel ones (same pixel column) is still drawn: the
    // plottable jumps over records that end inside a painted column, never over one that leaves it.
    void longLaunchAfterDenseOnesIsDrawn()
    {
        auto p = std::make_shared<ws::ProgramTrace>();
        auto add = [&](const char *name, TimeNs a, TimeNs b) {
            ws::KernelLaunch L;
            L.id = ws::RowId(p->kernels.size() + 1);
            L.name = name;
            L.start = a;
            L.end = b;
            L.streamId = 7;
            p->kernels.push_back(L);
        };
        for (int i = 0; i < 1000; ++i)
            add("tiny", 10'000 + i * 2, 10'000 + i * 2 + 1);  // 1000 launches in 2 us
        add("long", 12'000, 1'000'000);                         // starts in the same column, ~1 ms
        ProgramView v;
        v.resize(1000, 200);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.setProgram(p);
        const int s7 = rowOfStream(v.programLayout(), 7);
        QCOMPARE(pixelAtCentre(v, s7, 1000), programpalette::familyColor("long"));
        // its middle too
        const QRectF r = v.plottable()->itemRect(s7, 1000);
        const QImage img = v.plot()->toPixmap().toImage();
        QCOMPARE(img.pixelColor(QPoint(int(r.center().x()), int(r.center().y()))), programpalette::familyColor("long"));
        QVERIFY(v.plottable()->lastItemsVisited() < 200);  // and the tiny ones were jumped over
    }
    // The Compare pages' shared picker loop (comparepickers.h: ComparePanel and ProgramCompare): moving a picker
    // loads through its signal, a picker already on the id loads only when that side has not requested it, an id
    // the picker lacks leaves the side alone, and "(none)" (0) is how a side is emptied.
    void comparePickersChooseAPair()
    {
        QWidget host;
        auto *grid = new QGridLayout(&host);
        QComboBox *pick[2] = {};
        QLabel *label[2] = {};
        QList<std::pair<int, qint64>> loads;
        const auto load = [&](int side, qint64 id) { loads.append({side, id}); };
        for (int s = 0; s < 2; ++s) {
            ws::ui::addComparePickerRow(grid, s, &host, pick[s], label[s], load, QStringLiteral("pick"));
            ws::ui::resetComparePicker(pick[s]);
            pick[s]->addItem(QStringLiteral("seven"), qint64(7));
            pick[s]->addItem(QStringLiteral("nine"), qint64(9));
        }
        QCOMPARE(pick[1]->objectName(), QStringLiteral("pickB"));
        QCOMPARE(pick[0]->count(), 3);
        QVERIFY(loads.isEmpty());  // resetting and filling loads nothing
        qint64 requested[2] = {0, 0};
        ws::ui::selectComparePair(pick, requested, 7, 9, load);
        QCOMPARE(loads, (QList<std::pair<int, qint64>>{{0, 7}, {1, 9}}));
        QCOMPARE(pick[0]->currentData().toLongLong(), 7);
        QCOMPARE(pick[1]->currentData().toLongLong(), 9);
        // already chosen and requested: nothing; already chosen but not requested (e.g. a side reset without
        // moving its picker): loaded directly
        loads.clear();
        requested[0] = 7;
        requested[1] = 0;
        ws::ui::selectComparePair(pick, requested, 7, 9, load);
        QCOMPARE(loads, (QList<std::pair<int, qint64>>{{1, 9}}));
        // an unknown id leaves its side alone; 0 picks "(none)"
        loads.clear();
        requested[1] = 9;
        ws::ui::selectComparePair(pick, requested, 42, 0, load);
        QCOMPARE(loads, (QList<std::pair<int, qint64>>{{1, 0}}));
        QCOMPARE(pick[0]->currentData().toLongLong(), 7);
        QCOMPARE(pick[1]->currentIndex(), 0);
        QCOMPARE(pick[1]->itemText(0), QStringLiteral("(none)"));
        // a reset picker holds only "(none)" and says nothing
        loads.clear();
        ws::ui::resetComparePicker(pick[0]);
        QCOMPARE(pick[0]->count(), 1);
        QVERIFY(loads.isEmpty());
    }
};

QTEST_MAIN(TstProgramView)
#include "tst_programview.moc"
