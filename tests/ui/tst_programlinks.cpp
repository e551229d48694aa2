// tst_programlinks: what the program view draws between its rows (issue #9, "Viewer"): launch arrows from
// a CUDA API call span to the kernel / copy it launched (matched by correlation id, a launch whose API span
// is missing, a call that launched two kernels, latency and queueing), the selection that goes both ways,
// and the GPU idle gaps (drawn as a band, listed in the panel, the same as core's ws::idleGaps).
#include "programlinks.h"
#include "programpanel.h"
#include "programplottable.h"
#include "programview.h"

#include <warpstage/program.h>
#include <warpstage/synthetic.h>

#include <qcustomplot.h>

#include <QComboBox>
#include <QSignalSpy>
#include <QTreeWidget>
#include <QtTest>

#include <set>

using ws::TimeNs;

namespace {

constexpr TimeNs kT0 = 5'000'000;
const char *kGemm = "void cutlass::device_kernel<cutlass::gemm::Gemm<float, 128> >(cutlass::gemm::Gemm<float, 128>::Params)";
const char *kAdd = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int, float*)";

// Thread 3 calls (µs since kT0):
//   api 0  cudaLaunchKernel   [0, 5)    corr 11 -> kernel 0 gemm, stream 7, [10, 40)
//   api 1  cudaLaunchKernel   [6, 9)    corr 12 -> kernel 1 add,  stream 7, [50, 60): queued behind the gemm
//   api 2  cudaMemcpyAsync    [20, 22)  corr 13 -> memop 0 HtoD,  stream 8, [30, 45)
//   api 3  cudaStreamSynchronize [23, 300) corr 14 -> nothing
//   api 4  cudaGraphLaunch    [310, 315) corr 15 -> kernels 3 and 4 (stream 8, [400, 420) and [430, 450))
//   kernel 2 add, stream 7, [250, 260), correlation id 16: its API span was not recorded
// GPU busy [10, 60), [250, 260), [400, 420), [430, 450): idle 190 µs, 140 µs, 10 µs.
std::shared_ptr<ws::ProgramTrace> linkedProgram()
{
    auto p = std::make_shared<ws::ProgramTrace>();
    p->run.deviceOrdinal = 1;
    auto us = [](double v) { return kT0 + TimeNs(v * 1000); };
    auto api = [&](const char *name, double a, double b, std::uint32_t corr) {
        ws::ApiSpan s;
        s.name = name;
        s.start = us(a);
        s.end = us(b);
        s.threadId = 3;
        s.correlationId = corr;
        p->apiSpans.push_back(s);
    };
    auto kernel = [&](const char *name, double a, double b, std::uint32_t stream, std::uint32_t corr) {
        ws::KernelLaunch k;
        k.id = ws::RowId(p->kernels.size() + 1);
        k.name = name;
        k.start = us(a);
        k.end = us(b);
        k.streamId = stream;
        k.correlationId = corr;
        p->kernels.push_back(k);
    };
    api("cudaLaunchKernel", 0, 5, 11);
    api("cudaLaunchKernel", 6, 9, 12);
    api("cudaMemcpyAsync", 20, 22, 13);
    api("cudaStreamSynchronize", 23, 300, 14);
    api("cudaGraphLaunch", 310, 315, 15);
    kernel(kGemm, 10, 40, 7, 11);
    kernel(kAdd, 50, 60, 7, 12);
    kernel(kAdd, 250, 260, 7, 16);
    kernel(kAdd, 400, 420, 8, 15);
    kernel(kGemm, 430, 450, 8, 15);
    ws::MemOp m;
    m.kind = ws::MemOpKind::HtoD;
    m.bytes = 4096;
    m.start = us(30);
    m.end = us(45);
    m.streamId = 8;
    m.correlationId = 13;
    p->memOps.push_back(m);
    return p;
}

LaunchRef K(int k) { return {ProgramItem::Kernel, k}; }

ProgramLayoutOptions withApi()
{
    ProgramLayoutOptions o;
    o.showApi = true;
    return o;
}

bool hasArrow(const ProgramPlottable *pl, int api, LaunchRef l, bool focus)
{
    for (const auto &a : pl->lastArrows())
        if (a.api == api && a.launch == l && a.focus == focus)
            return true;
    return false;
}

}  // namespace

class TstProgramLinks : public QObject {
    Q_OBJECT
private slots:
    void linksByCorrelationId()
    {
        const auto p = linkedProgram();
        ProgramLinks links;
        links.build(p.get());
        QCOMPARE(links.apiOf(K(0)), 0);
        QCOMPARE(links.apiOf(K(1)), 1);
        QCOMPARE(links.apiOf(K(2)), -1);  // no API span with correlation id 16
        QCOMPARE(links.apiOf(K(3)), 4);
        QCOMPARE(links.apiOf(K(4)), 4);
        QCOMPARE(links.apiOf({ProgramItem::MemOp, 0}), 2);
        QCOMPARE(links.launchesOf(0), std::vector<LaunchRef>{K(0)});
        QCOMPARE(links.launchesOf(2), (std::vector<LaunchRef>{LaunchRef{ProgramItem::MemOp, 0}}));
        QVERIFY(links.launchesOf(3).empty());  // a synchronize launches nothing
        QCOMPARE(links.launchesOf(4), (std::vector<LaunchRef>{K(3), K(4)}));
        QVERIFY(links.launchesOf(99).empty());
        // a correlation id of 0 is "unknown": never linked, even to an API span of id 0
        auto q = std::make_shared<ws::ProgramTrace>(*p);
        q->apiSpans[3].correlationId = 0;
        q->kernels[2].correlationId = 0;
        links.build(q.get());
        QCOMPARE(links.apiOf(K(2)), -1);
        QVERIFY(links.launchesOf(3).empty());
    }
    void latencyAndQueueing()
    {
        const auto p = linkedProgram();
        ProgramLinks links;
        links.build(p.get());
        // gemm: called at 0, ran at 10, the stream was free: 10 µs latency, no queueing
        LaunchTiming t = links.timing(K(0));
        QVERIFY(t.hasApi);
        QCOMPARE(t.latencyNs, TimeNs(10'000));
        QCOMPARE(t.queuedNs, TimeNs(0));
        // add: called at 6 (returned at 9), ran at 50 behind the gemm that ended at 40: 31 µs queued
        t = links.timing(K(1));
        QCOMPARE(t.latencyNs, TimeNs(44'000));
        QCOMPARE(t.queuedNs, TimeNs(31'000));
        // the copy: stream 8 was free
        t = links.timing({ProgramItem::MemOp, 0});
        QCOMPARE(t.latencyNs, TimeNs(10'000));
        QCOMPARE(t.queuedNs, TimeNs(0));
        // the graph's second kernel waited for its first (ended at 420, call returned at 315)
        t = links.timing(K(4));
        QCOMPARE(t.latencyNs, TimeNs(120'000));
        QCOMPARE(t.queuedNs, TimeNs(105'000));
        QVERIFY(!links.timing(K(2)).hasApi);
    }
    void arrowsOfTheSelectionGoBothWays()
    {
        ProgramView v;
        v.resize(1200, 400);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.setLayoutOptions(withApi());
        v.setProgram(linkedProgram());
        v.setVisibleRange(kT0, kT0 + 480'000);
        ProgramPlottable *pl = v.plottable();
        const ProgramLayout &l = v.programLayout();
        // select the add kernel: one focused arrow from api 1, api 1 outlined as its partner
        v.selectLaunch(1);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(hasArrow(pl, 1, K(1), true));
        QCOMPARE(pl->lastPartners(), (std::vector<std::pair<int, int>>{l.rowOf(ProgramItem::Api, 1)}));
        // the arrow runs from the API span's start to the kernel's start, and is painted there
        const auto [ra, ia] = l.rowOf(ProgramItem::Api, 1);
        const auto [rk, ik] = l.rowOfKernel(1);
        const QRectF from = pl->itemRect(ra, ia), to = pl->itemRect(rk, ik);
        for (const auto &a : pl->lastArrows())
            if (a.focus) {
                QCOMPARE(a.line.p1(), QPointF(from.left(), from.bottom()));
                QCOMPARE(a.line.p2(), QPointF(to.left(), to.top()));
                const QImage img = v.plot()->toPixmap().toImage();
                const QPointF mid = a.line.pointAt(0.5);
                bool painted = false;  // the line is antialiased: look at the pixels around its middle
                for (int dx = -1; dx <= 1; ++dx)
                    for (int dy = -1; dy <= 1; ++dy) {
                        const QColor c = img.pixelColor(int(mid.x()) + dx, int(mid.y()) + dy);
                        painted = painted || (c.red() > 150 && c.green() < 120 && c.blue() < 80);
                    }
                QVERIFY2(painted, "the focused arrow is painted in the arrow colour");
            }
        // the launch whose API span is missing: no focused arrow, no partner; its tooltip says so
        v.selectLaunch(2);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        for (const auto &a : pl->lastArrows())
            QVERIFY(!a.focus);
        QVERIFY(pl->lastPartners().empty());
        const auto [r2, i2] = l.rowOfKernel(2);
        const QString tip = v.tooltipAt(pl->itemRect(r2, i2).center().toPoint());
        QVERIFY2(tip.contains(QStringLiteral("no CUDA API call recorded")) && tip.contains(QStringLiteral("correlation id 16")), qPrintable(tip));
        // a kernel's tooltip: who launched it, the latency, the queueing
        const QString tip1 = v.tooltipAt(pl->itemRect(rk, ik).center().toPoint());
        QVERIFY2(tip1.contains(QStringLiteral("launched by cudaLaunchKernel (thread 3)")), qPrintable(tip1));
        QVERIFY2(tip1.contains(QStringLiteral("launch latency 44")) && tip1.contains(QStringLiteral("queued 31")), qPrintable(tip1));
        // click the graph launch's API span: both kernels get an arrow, the first is the selected launch
        QSignalSpy sel(&v, &ProgramView::launchSelected);
        QSignalSpy hints(&v, &ProgramView::hint);
        const auto [rg, ig] = l.rowOf(ProgramItem::Api, 4);
        QTest::mouseClick(v.plot(), Qt::LeftButton, {}, pl->itemRect(rg, ig).center().toPoint());
        QCOMPARE(v.selectedLaunch(), 3);
        QCOMPARE(sel.last().at(0).toInt(), 3);
        // the status bar gets the launch latency of kernel 3 (graph call at 310 µs, kernel at 400 µs)
        QVERIFY(!hints.isEmpty());
        QVERIFY2(hints.last().at(0).toString().startsWith(QStringLiteral("Launch latency 90")), qPrintable(hints.last().at(0).toString()));
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(hasArrow(pl, 4, K(3), true));
        QVERIFY(hasArrow(pl, 4, K(4), true));
        QCOMPARE(pl->lastPartners().size(), std::size_t(2));
        const QString tipApi = v.tooltipAt(pl->itemRect(rg, ig).center().toPoint());
        QVERIFY2(tipApi.contains(QStringLiteral("launched <b>at::native::vectorized_elementwise_kernel</b>")), qPrintable(tipApi));
        // without the API rows there is nothing to point from
        v.setLayoutOptions({});
        v.selectLaunch(1);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(pl->lastArrows().empty());
    }
    void everyVisibleLaunchWhenFewEnough()
    {
        ProgramView v;
        v.resize(1200, 400);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.setLayoutOptions(withApi());
        v.setProgram(linkedProgram());
        // zoomed on the first 100 µs: the gemm, the add, the copy each get a (faint) arrow; nothing selected
        v.setVisibleRange(kT0, kT0 + 100'000);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        ProgramPlottable *pl = v.plottable();
        QCOMPARE(pl->lastArrows().size(), std::size_t(3));
        QVERIFY(hasArrow(pl, 0, K(0), false));
        QVERIFY(hasArrow(pl, 1, K(1), false));
        QVERIFY(hasArrow(pl, 2, LaunchRef{ProgramItem::MemOp, 0}, false));
        // the whole program: every linked launch (the one without an API span has none)
        v.resetZoom();
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(pl->lastArrows().size(), std::size_t(5));
        // thousands in view: none but the selection's
        ws::SyntheticProgramParams sp;
        sp.steps = 2;
        sp.launchesPerStep = 400;
        auto big = std::make_shared<ws::ProgramTrace>(ws::generateSyntheticProgram(sp));
        v.setProgram(big);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(pl->lastArrows().empty());
        v.selectLaunch(100);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(pl->lastArrows().size(), std::size_t(1));
        QVERIFY(pl->lastArrows().front().focus);
        QCOMPARE(pl->lastArrows().front().launch, K(100));
        // the synthetic program's API span of launch 100 has its correlation id
        QCOMPARE(big->apiSpans[std::size_t(pl->lastArrows().front().api)].correlationId, big->kernels[100].correlationId);
        // zoomed on the first launches (the CPU is not ahead of the GPU yet): every launch whose start and whose
        // call's start are both in view gets its arrow, the same set a brute-force scan over correlation ids finds
        v.selectLaunch(-1);
        const TimeNs a0 = big->kernels[1].start - 30'000, a1 = big->kernels[4].end + 1;
        v.setVisibleRange(a0, a1);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        std::set<std::pair<int, int>> expect;  // (api, kernel)
        int startInView = 0;
        for (const auto &m : big->memOps)
            startInView += m.start >= a0 && m.start < a1;
        for (int k = 0; k < int(big->kernels.size()); ++k) {
            const auto &L = big->kernels[std::size_t(k)];
            if (L.start < a0 || L.start >= a1)
                continue;
            ++startInView;
            for (int a = 0; a < int(big->apiSpans.size()); ++a)
                if (big->apiSpans[std::size_t(a)].correlationId == L.correlationId && big->apiSpans[std::size_t(a)].start >= a0 &&
                    big->apiSpans[std::size_t(a)].start <= a1)
                    expect.insert({a, k});
        }
        std::set<std::pair<int, int>> got;
        for (const auto &a : pl->lastArrows()) {
            QVERIFY(!a.focus);
            if (a.launch.kind == ProgramItem::Kernel)
                got.insert({a.api, a.launch.index});
        }
        QVERIFY2(expect.size() >= 3, qPrintable(QString::number(expect.size())));
        QVERIFY(startInView <= ProgramPlottable::kMaxAllArrows);
        QCOMPARE(got, expect);
    }
    void idleGapsMatchCore()
    {
        const auto p = linkedProgram();
        ProgramView v;
        v.resize(1200, 400);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.setIdleGapThreshold(100'000);
        v.setProgram(p);
        const auto core = ws::idleGaps(*p, 100'000);
        QCOMPARE(core.size(), std::size_t(2));
        QCOMPARE(v.idleGaps().size(), core.size());
        for (std::size_t i = 0; i < core.size(); ++i) {
            QCOMPARE(v.idleGaps()[i].gap.start, core[i].start);
            QCOMPARE(v.idleGaps()[i].gap.end, core[i].end);
            QCOMPARE(v.idleGaps()[i].gap.deviceOrdinal, 1);
        }
        // what ran before and after: the add at 50-60 µs, the add at 250 µs; then the graph's first kernel
        QCOMPARE(v.idleGaps()[0].before, K(1));
        QCOMPARE(v.idleGaps()[0].after, K(2));
        QCOMPARE(v.idleGaps()[1].before, K(2));
        QCOMPARE(v.idleGaps()[1].after, K(3));
        // a lower threshold: the 10 µs gap too, the same as core's
        v.setIdleGapThreshold(10'000);
        QCOMPARE(v.idleGaps().size(), ws::idleGaps(*p, 10'000).size());
        QCOMPARE(v.idleGaps().size(), std::size_t(3));
        v.setIdleGapThreshold(100'000);
        // drawn: the middle of the first gap on the stream row is tinted, outside it is not
        v.setVisibleRange(kT0, kT0 + 480'000);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QImage img = v.plot()->toPixmap().toImage();
        ProgramPlottable *pl = v.plottable();
        int s7 = -1;
        for (int r = 0; r < int(v.programLayout().rows().size()); ++r)
            if (v.programLayout().rows()[std::size_t(r)].type == ProgramRow::Stream && v.programLayout().rows()[std::size_t(r)].streamId == 7)
                s7 = r;
        QVERIFY(s7 >= 0);
        const auto &row = v.programLayout().rows()[std::size_t(s7)];
        const int y = pl->lanesRect().top() + row.top + row.height / 2;
        auto xOf = [&](TimeNs t) { return int(v.plot()->xAxis->coordToPixel(double(t - v.timeOrigin()))); };
        // at 42 µs stream 7 runs nothing but the copy on stream 8 keeps the device busy: plain background
        const QColor plain = img.pixelColor(xOf(kT0 + 42'000), y);
        int tinted = 0;
        for (int dx = 0; dx < 8; ++dx) {  // a few pixels: the hatch lines cross the band
            const QColor c = img.pixelColor(xOf(kT0 + 150'000) + dx, y);
            tinted += c != plain && c.red() > c.blue();
        }
        QVERIFY2(tinted >= 6, qPrintable(QString::number(tinted) + QLatin1Char(' ') + plain.name()));
        // ... and it is not a gap of the list either
        QCOMPARE(pl->gapAt(QPointF(xOf(kT0 + 42'000), y)), -1);
        // hovering the gap tells its length and its neighbours
        const QString tip = v.tooltipAt(QPoint(xOf(kT0 + 150'000), y));
        QVERIFY2(tip.contains(QStringLiteral("GPU idle 190")) && tip.contains(QStringLiteral("last before it: at::native::vectorized_elementwise_kernel")),
                 qPrintable(tip));
        QCOMPARE(pl->gapAt(QPointF(xOf(kT0 + 150'000), y)), 0);
        QCOMPARE(pl->gapAt(QPointF(xOf(kT0 + 30'000), y)), -1);
        QCOMPARE(pl->gapAt(QPointF(xOf(kT0 + 300'000), y)), 1);
    }
    void panelListsTheLongestGaps()
    {
        ProgramPanel panel;
        panel.resize(1400, 800);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.gapThresholdBox()->setCurrentIndex(panel.gapThresholdBox()->findData(qint64(10'000)));
        QCOMPARE(panel.view()->idleGapThreshold(), TimeNs(10'000));
        panel.setProgram(linkedProgram());
        QTreeWidget *list = panel.gapsList();
        QVERIFY(!list->currentItem());          // filling the list zooms nowhere
        QVERIFY(!panel.view()->canGoBack());
        // gaps in time order: 190 µs, 140 µs, 10 µs; listed longest first
        QCOMPARE(list->topLevelItemCount(), 3);
        QCOMPARE(list->topLevelItem(0)->data(0, Qt::UserRole).toInt(), 0);
        QCOMPARE(list->topLevelItem(1)->data(0, Qt::UserRole).toInt(), 1);
        QCOMPARE(list->topLevelItem(2)->data(0, Qt::UserRole).toInt(), 2);
        QCOMPARE(list->topLevelItem(0)->text(0), QStringLiteral("190.0 µs"));
        QCOMPARE(list->topLevelItem(1)->text(2), QStringLiteral("at::native::vectorized_elementwise_kernel"));  // last before
        QCOMPARE(list->topLevelItem(2)->text(3), QStringLiteral("cutlass::device_kernel"));                     // first after
        // click: the view zooms onto the gap (140 µs from 260 µs), with some context, a history entry
        list->setCurrentItem(list->topLevelItem(1));
        const auto r = panel.view()->visibleRange();
        QVERIFY(r.first <= kT0 + 260'000 && r.second >= kT0 + 400'000);
        QVERIFY(r.second - r.first <= 3 * 140'000);
        QVERIFY(panel.view()->canGoBack());
        // a higher threshold: only the 190 µs one
        panel.gapThresholdBox()->setCurrentIndex(panel.gapThresholdBox()->findData(qint64(1'000'000)));
        QCOMPARE(list->topLevelItemCount(), 0);
        panel.gapThresholdBox()->setCurrentIndex(panel.gapThresholdBox()->findData(qint64(100'000)));
        QCOMPARE(list->topLevelItemCount(), 2);

        // many gaps: the list stops at kMaxListedGaps, the view keeps them all (core's)
        ws::SyntheticProgramParams sp;
        sp.steps = 30;
        sp.launchesPerStep = 20;
        auto p = std::make_shared<ws::ProgramTrace>(ws::generateSyntheticProgram(sp));
        panel.gapThresholdBox()->setCurrentIndex(panel.gapThresholdBox()->findData(qint64(10'000)));
        panel.setProgram(p);
        const auto core = ws::idleGaps(*p, 10'000);
        QVERIFY2(int(core.size()) > ProgramPanel::kMaxListedGaps, qPrintable(QString::number(core.size())));
        QCOMPARE(panel.view()->idleGaps().size(), core.size());
        QCOMPARE(list->topLevelItemCount(), ProgramPanel::kMaxListedGaps);
        TimeNs longest = 0;
        for (const auto &g : core)
            longest = std::max(longest, g.end - g.start);
        QCOMPARE(panel.view()->idleGaps()[std::size_t(list->topLevelItem(0)->data(0, Qt::UserRole).toInt())].length(), longest);
    }
};

QTEST_MAIN(TstProgramLinks)
#include "tst_programlinks.moc"
