// TimelineWidget behaviour (offscreen): the pixels each lane paints vs the intervals it covers at several
// zoom levels, wheel zoom about the cursor, drag pan, WASD, rubber-band zoom, history, reset, click selection,
// range selection, CTA collapse, lane filter, stage highlight.
#include "timelinetestdata.h"

#include "timelinepalette.h"
#include "timelineplottable.h"
#include "timelinewidget.h"

#include <qcustomplot.h>

#include <QMap>
#include <QSet>
#include <QSignalSpy>
#include <QtTest>

using namespace tltest;

namespace {

void mouse(QWidget *t, QEvent::Type type, QPoint pos, Qt::MouseButton b, Qt::MouseButtons bs,
           Qt::KeyboardModifiers m = Qt::NoModifier)
{
    QMouseEvent e(type, QPointF(pos), t->mapToGlobal(QPointF(pos)), b, bs, m);
    QCoreApplication::sendEvent(t, &e);
}

void drag(QWidget *t, QPoint from, QPoint to, Qt::MouseButton b, Qt::KeyboardModifiers m = Qt::NoModifier)
{
    mouse(t, QEvent::MouseButtonPress, from, b, b, m);
    mouse(t, QEvent::MouseMove, (from + to) / 2, Qt::NoButton, b, m);
    mouse(t, QEvent::MouseMove, to, Qt::NoButton, b, m);
    mouse(t, QEvent::MouseButtonRelease, to, b, Qt::NoButton, m);
}

void wheel(QWidget *t, QPoint pos, int dy, Qt::KeyboardModifiers m = Qt::NoModifier)
{
    QWheelEvent e(QPointF(pos), t->mapToGlobal(QPointF(pos)), QPoint(), QPoint(0, dy), Qt::NoButton, m,
                  Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(t, &e);
}

double rel(ws::TimeNs t) { return double(t - kStart); }

// With WARPSTAGE_SCREENSHOT_DIR set, saves the widget's picture there (to look at a gesture's effect).
void shot(QWidget *w, const QString &name)
{
    const QString dir = qEnvironmentVariable("WARPSTAGE_SCREENSHOT_DIR");
    if (dir.isEmpty())
        return;
    if (auto *plot = w->findChild<QCustomPlot *>())
        plot->replot(QCustomPlot::rpImmediateRefresh);
    w->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
}

QRgb darker(QRgb c) { return qRgb(int(qRed(c) * 0.62f), int(qGreen(c) * 0.62f), int(qBlue(c) * 0.62f)); }

}  // namespace

class TestTimeline : public QObject {
    Q_OBJECT
private slots:
    // A user-named phase shows its recorded name on hover (issue 10); standard kinds keep their labels.
    void userPhaseLabel()
    {
        ws::KernelTrace t;
        t.phaseNames = {"load row", "", "reduce"};
        const auto user = [](int i) { return static_cast<ws::IntervalKind>(ws::kUserPhaseBase + i); };
        QCOMPARE(tlpalette::kindLabel(user(0), t), QStringLiteral("load row (user phase)"));
        QCOMPARE(tlpalette::kindLabel(user(2), t), QStringLiteral("reduce (user phase)"));
        QCOMPARE(tlpalette::kindLabel(user(1), t), QStringLiteral("user phase 1"));
        QCOMPARE(tlpalette::kindLabel(user(7), t), QStringLiteral("user phase 7"));
        QCOMPARE(tlpalette::kindLabel(ws::IntervalKind::WaitData, t), tlpalette::kindLabel(ws::IntervalKind::WaitData));
    }

    // User phases get stable colours of their own, distinct from every standard kind's (issue 10).
    void userPhaseColours()
    {
        const auto user = [](int i) { return static_cast<ws::IntervalKind>(ws::kUserPhaseBase + i); };
        QSet<QRgb> seen;
        for (int k = 0; k < ws::kIntervalKindCount; ++k) seen.insert(tlpalette::kindColor(ws::IntervalKind(k)).rgb());
        for (int i = 0; i < 30; ++i) {
            QCOMPARE(tlpalette::kindColor(user(i)), tlpalette::userPhaseColor(i));
            const QRgb c = tlpalette::userPhaseColor(i).rgb();
            QVERIFY2(!seen.contains(c), qPrintable(QStringLiteral("user phase %1: colour %2 taken").arg(i).arg(c, 0, 16)));
            seen.insert(c);
            QVERIFY(!tlpalette::kindHatched(user(i)));
        }
        ws::KernelTrace t;
        t.phaseNames = {"reduce"};
        QCOMPARE(tlpalette::kindName(user(0), &t), QStringLiteral("reduce"));
        QCOMPARE(tlpalette::kindName(user(4), &t), QStringLiteral("user_4"));
        QCOMPARE(tlpalette::kindName(ws::IntervalKind::WaitData, &t), QStringLiteral("wait_data"));
    }
    // User phases are drawn in their colours in full detail and zoomed out (the LOD keeps them apart), and
    // the legend names them by their recorded names.
    void userPhasesDrawnAndInTheLegend_data();
    void userPhasesDrawnAndInTheLegend();

    void init();
    void cleanup();
    void emptyAndNull();
    void lanePixelsMatchIntervals_data();
    void lanePixelsMatchIntervals();
    void wheelZoomKeepsTimeUnderCursor();
    void dragPans();
    void keysAndHistory();
    void dragIsOneHistoryEntryAndOriginKeepsIt();
    void rubberBandZoom();
    void clickSelectsInterval();
    void shiftDragSelectsRange();
    void ctaHeaderCollapses();
    void laneFilter();
    void highlightFadesOtherKinds();
    void rasterCacheOnlyWhenUnchanged();
    void bracketRowAboveWarpWithScopes();
    // The GUI thread never walks a trace's intervals: setTrace takes the extent and the legend's kinds from the
    // TraceFacts its loader found on a worker (tracefacts.h), and traceFacts() finds what the trace holds.
    void setTraceTrustsTheLoadersFacts();

private:
    std::unique_ptr<TimelineWidget> w;
    std::shared_ptr<ws::KernelTrace> m_tr;
    QImage render() const
    {
        w->plot()->replot(QCustomPlot::rpImmediateRefresh);
        return w->plot()->toPixmap(w->plot()->width(), w->plot()->height(), 1.0).toImage().convertToFormat(QImage::Format_RGB32);
    }
    double timeAtPx(double x) const { return w->plot()->xAxis->pixelToCoord(x); }
    int pxAtRel(double t) const { return int(std::lround(w->plot()->xAxis->coordToPixel(t))); }
};

void TestTimeline::init()
{
    w = std::make_unique<TimelineWidget>();
    w->resize(1200, 700);
    w->show();
    m_tr = makeTrace(40);
    w->setTrace(m_tr);
    QVERIFY(w->waitForIndex());
    w->plot()->replot(QCustomPlot::rpImmediateRefresh);
}

void TestTimeline::cleanup() { w.reset(); }

void TestTimeline::emptyAndNull()
{
    w->setTrace(nullptr);
    QVERIFY(!w->trace());
    render();  // no crash
    wheel(w->plot(), QPoint(600, 300), 120);
    QTest::keyClick(w->plot(), Qt::Key_W);
    auto empty = std::make_shared<ws::KernelTrace>();
    empty->launch.start = 5000;
    empty->launch.end = 9000;
    w->setTrace(empty);
    QVERIFY(w->waitForIndex());
    render();
    const auto r = w->visibleRange();
    QVERIFY(r.first <= 5000 && r.second >= 9000);
}

void TestTimeline::userPhasesDrawnAndInTheLegend_data()
{
    QTest::addColumn<int>("ksteps");
    QTest::newRow("40 k-steps: whole intervals of a few px") << 40;
    QTest::newRow("4000 k-steps: several intervals per px (LOD)") << 4000;
}

void TestTimeline::userPhasesDrawnAndInTheLegend()
{
    QFETCH(int, ksteps);
    const auto user = [](int i) { return static_cast<ws::IntervalKind>(ws::kUserPhaseBase + i); };
    m_tr = makeTrace(ksteps);
    m_tr->phaseNames = {"reduce", "", "load row"};
    for (auto &k : m_tr->lanes[1].kind) {  // CTA 0's consumer: MmaWait -> "reduce", WaitData -> "load row"
        if (k == ws::IntervalKind::MmaWait) k = user(0);
        if (k == ws::IntervalKind::WaitData) k = user(2);
    }
    w->setTrace(m_tr);
    QVERIFY(w->waitForIndex());
    w->resetZoom();
    w->plottable()->setIntervalLabels(false);
    const QImage img = render();
    const QRect row = w->plottable()->laneRowRect(1);
    const QRect ar = w->plottable()->lanesRect();
    QMap<QRgb, int> count;
    for (int x = ar.left(); x <= ar.right(); ++x)
        for (int y = row.top(); y <= row.bottom(); ++y) ++count[img.pixel(x, y)];
    auto px = [&](QColor c) { return count.value(c.rgb()) + count.value(darker(c.rgb())); };
    const int reduce = px(tlpalette::userPhaseColor(0)), loadRow = px(tlpalette::userPhaseColor(2));
    const int other = px(tlpalette::kindColor(ws::IntervalKind::Other));
    const int mmaWait = px(tlpalette::kindColor(ws::IntervalKind::MmaWait)), waitData = px(tlpalette::kindColor(ws::IntervalKind::WaitData));
    const QString got = QStringLiteral("reduce %1 px, load row %2 px, other %3 px, mma wait %4, wait data %5")
                            .arg(reduce).arg(loadRow).arg(other).arg(mmaWait).arg(waitData);
    QVERIFY2(reduce > 500 && loadRow > 300, qPrintable(got));
    QVERIFY2(reduce > loadRow, qPrintable(got));  // 80 ns against 60 ns per k-step
    QVERIFY2(other == 0 && mmaWait == 0 && waitData == 0, qPrintable(got));
    // The legend: both user phases by name, in kind order, after the standard kinds.
    auto *legend = qobject_cast<QCPLegend *>(w->plot()->plotLayout()->element(0, 0));
    QVERIFY(legend);
    QStringList names;
    for (int i = 0; i < legend->elementCount(); ++i)  // a wrapped grid: some cells are empty
        if (QCPLayoutElement *e = legend->elementAt(i))
            names << e->objectName();
    const int a = int(names.indexOf(QStringLiteral("reduce (user phase)"))), b = int(names.indexOf(QStringLiteral("load row (user phase)")));
    QVERIFY2(a >= 0 && b == a + 1, qPrintable(names.join(QStringLiteral(", "))));
    QVERIFY2(names.indexOf(tlpalette::kindLabel(ws::IntervalKind::MmaIssue)) < a, qPrintable(names.join(QStringLiteral(", "))));
    QVERIFY2(!names.contains(tlpalette::kindLabel(ws::IntervalKind::Other)), qPrintable(names.join(QStringLiteral(", "))));
    // The exported image (warpstage export, File > Export) draws them the same way, legend included.
    QRect lanesPx;
    const QImage out = w->renderImage(QSize(1600, 900), 96, QStringLiteral("user phases"), &lanesPx);
    if (const QByteArray dir = qgetenv("WARPSTAGE_TEST_EXPORT_DIR"); !dir.isEmpty())  // to look at it
        out.save(QString::fromLocal8Bit(dir) + QStringLiteral("/user_phases_%1.png").arg(ksteps));
    int inLanes = 0, inLegend = 0;
    const QRgb r0 = tlpalette::userPhaseColor(0).rgb(), r2 = tlpalette::userPhaseColor(2).rgb();
    for (int y = 0; y < out.height(); ++y)
        for (int x = 0; x < out.width(); ++x) {
            const QRgb p = out.pixel(x, y) | 0xff000000u;
            if (p != r0 && p != r2 && p != darker(r0) && p != darker(r2))
                continue;
            (lanesPx.contains(x, y) ? inLanes : inLegend) += 1;
        }
    QVERIFY2(inLanes > 1000 && inLegend > 20, qPrintable(QStringLiteral("exported: %1 px in the lanes, %2 in the legend").arg(inLanes).arg(inLegend)));
}

void TestTimeline::lanePixelsMatchIntervals_data()
{
    QTest::addColumn<int>("ksteps");
    QTest::addColumn<double>("from");  // relative ns
    QTest::addColumn<double>("to");
    QTest::addColumn<bool>("expectPure");  // whole columns of one kind expected
    QTest::newRow("whole kernel, 40 k-steps (~7 ns/px)") << 40 << 0.0 << 8200.0 << true;
    QTest::newRow("one k-step (sub-ns per px)") << 40 << 1100.0 << 1300.0 << true;
    QTest::newRow("whole kernel, 4000 k-steps (sub-pixel intervals)") << 4000 << 0.0 << 800200.0 << false;
    QTest::newRow("1/20 of 4000 k-steps") << 4000 << 100000.0 << 140000.0 << true;
}

void TestTimeline::lanePixelsMatchIntervals()
{
    QFETCH(int, ksteps);
    QFETCH(double, from);
    QFETCH(double, to);
    QFETCH(bool, expectPure);
    m_tr = makeTrace(ksteps);
    w->setTrace(m_tr);
    QVERIFY(w->waitForIndex());
    w->setVisibleRange(kStart + ws::TimeNs(from), kStart + ws::TimeNs(to));
    w->plottable()->setIntervalLabels(false);  // text inside wide intervals would cover the pixels checked
    const QImage img = render();
    const QRect ar = w->plottable()->lanesRect();
    const double t0 = w->plot()->xAxis->range().lower, t1 = w->plot()->xAxis->range().upper;
    const double nsPerPx = (t1 - t0) / ar.width();
    int pure = 0, empty = 0, covered = 0;
    for (int laneIdx : {0, 1, 3}) {
        const ws::Lane &lane = m_tr->lanes[std::size_t(laneIdx)];
        const QRect row = w->plottable()->laneRowRect(laneIdx);
        QVERIFY(row.isValid() && row.top() >= ar.top() && row.bottom() <= ar.bottom());
        const int y = row.center().y();
        for (int x = 0; x < ar.width(); ++x) {
            const QRgb bg = img.pixel(ar.left() + x, row.top());  // the row's background (the 1 px gap above the lane)
            const double a = t0 + x * nsPerPx, b = a + nsPerPx;
            // brute force: time per kind in this pixel column
            std::array<double, ws::kIntervalKindCount> cov{};
            double total = 0;
            for (std::size_t i = 0; i < lane.size(); ++i) {
                const double s = rel(lane.start[i]), e = rel(lane.end(i));
                const double o = std::min(e, b) - std::max(s, a);
                if (o > 0) {
                    cov[std::size_t(lane.kind[i])] += o;
                    total += o;
                }
            }
            const QRgb px = img.pixel(ar.left() + x, y);
            const QString where = QStringLiteral("lane %1 column %2 (t %3..%4 ns)").arg(laneIdx).arg(x).arg(a).arg(b);
            if (total <= 0) {
                const bool ok = px == bg || px == tlpalette::gridLine().rgb();
                QVERIFY2(ok, qPrintable(where + QStringLiteral(": painted %1 where no interval is (background %2)").arg(px, 0, 16).arg(bg, 0, 16)));
                ++empty;
                continue;
            }
            if (total > 0.02 * nsPerPx) {
                QVERIFY2(px != bg, qPrintable(where + QStringLiteral(": blank where intervals cover %1 ns").arg(total)));
                ++covered;
            }
            for (int k = 0; k < ws::kIntervalKindCount; ++k) {
                if (cov[std::size_t(k)] >= 0.999 * nsPerPx) {  // one kind fills the column
                    const auto kind = ws::IntervalKind(k);
                    const QRgb base = tlpalette::kindColor(kind).rgb(), hatch = tlpalette::hatchColor(kind).rgb();
                    const bool ok = px == base || px == darker(base) ||
                                    (tlpalette::kindHatched(kind) && (px == hatch || px == darker(hatch)));
                    QVERIFY2(ok, qPrintable(where + QStringLiteral(": %1 expected for %2, got %3 (column: %4 %5 %6 %7)")
                                                        .arg(base, 0, 16).arg(tlpalette::kindLabel(kind)).arg(px, 0, 16)
                                                        .arg(img.pixel(ar.left() + x, y - 2), 0, 16).arg(img.pixel(ar.left() + x, y - 1), 0, 16)
                                                        .arg(img.pixel(ar.left() + x, y + 1), 0, 16).arg(img.pixel(ar.left() + x + 1, y), 0, 16)));
                    ++pure;
                }
            }
        }
    }
    QVERIFY(covered > 100);
    // with labels on, wide intervals carry text (dark pixels on the lane)
    if (expectPure && nsPerPx < 1) {
        w->plottable()->setIntervalLabels(true);
        const QImage withText = render();
        const QRect row = w->plottable()->laneRowRect(1);
        int changed = 0;
        for (int x = 0; x < ar.width(); ++x)
            for (int y = row.top(); y <= row.bottom(); ++y)
                changed += withText.pixel(ar.left() + x, y) != img.pixel(ar.left() + x, y);
        QVERIFY2(changed > 50, qPrintable(QStringLiteral("%1 pixels of label text").arg(changed)));
    }
    if (expectPure)
        QVERIFY2(pure > 200, qPrintable(QStringLiteral("only %1 single-kind columns").arg(pure)));
    qInfo("%d single-kind columns, %d covered, %d empty checked", pure, covered, empty);
}

void TestTimeline::wheelZoomKeepsTimeUnderCursor()
{
    QSignalSpy spy(w.get(), &TimelineWidget::visibleRangeChanged);
    const QRect ar = w->plottable()->lanesRect();
    const QPoint at(ar.left() + ar.width() / 3, ar.top() + 40);
    const double tBefore = timeAtPx(at.x());
    const auto r0 = w->visibleRange();
    wheel(w->plot(), at, 120);
    const auto r1 = w->visibleRange();
    QVERIFY(r1.second - r1.first < r0.second - r0.first);
    QVERIFY(std::abs(timeAtPx(at.x()) - tBefore) < 2.0);  // ns: the time under the cursor stays
    QVERIFY(spy.count() >= 1);
    wheel(w->plot(), at, -120);
    const auto r2 = w->visibleRange();
    QVERIFY(std::abs(double(r2.second - r2.first) - double(r0.second - r0.first)) < 3);
}

void TestTimeline::dragPans()
{
    w->setVisibleRange(kStart + 1000, kStart + 3000);
    const QRect ar = w->plottable()->lanesRect();
    const double nsPerPx = 2000.0 / ar.width();
    const QPoint from(ar.left() + 600, ar.top() + 50);
    shot(w.get(), QStringLiteral("timeline-1-before-pan"));
    drag(w->plot(), from, from + QPoint(-100, 0), Qt::LeftButton);
    shot(w.get(), QStringLiteral("timeline-2-panned"));
    const auto r = w->visibleRange();
    QVERIFY2(std::abs(double(r.first - (kStart + 1000)) - 100 * nsPerPx) < 2, qPrintable(QString::number(r.first - kStart)));
    QCOMPARE(r.second - r.first, ws::TimeNs(2000));
    QVERIFY(w->canGoBack());
}

void TestTimeline::keysAndHistory()
{
    w->setVisibleRange(kStart + 2000, kStart + 4000);
    const auto a = w->visibleRange();
    QTest::keyClick(w->plot(), Qt::Key_D);  // pan right 15 %
    const auto b = w->visibleRange();
    QCOMPARE(b.first - a.first, ws::TimeNs(300));
    QTest::keyClick(w->plot(), Qt::Key_A);
    QTest::keyClick(w->plot(), Qt::Key_W);  // zoom in
    const auto c = w->visibleRange();
    QVERIFY(c.second - c.first < 2000);
    QTest::keyClick(w->plot(), Qt::Key_S);
    QTest::keyClick(w->plot(), Qt::Key_S);
    const auto d = w->visibleRange();
    QVERIFY(d.second - d.first > 2000);
    // keys in one gesture share one history entry; setVisibleRange made its own
    w->setVisibleRange(kStart + 500, kStart + 700);
    QTest::keyClick(w->plot(), Qt::Key_Backspace);
    const auto back = w->visibleRange();
    QCOMPARE(back, d);
    QTest::keyClick(w->plot(), Qt::Key_Right, Qt::AltModifier);
    QCOMPARE(w->visibleRange(), qMakePair(kStart + 500, kStart + 700));
    QTest::keyClick(w->plot(), Qt::Key_Left, Qt::AltModifier);
    QCOMPARE(w->visibleRange(), d);
    QTest::keyClick(w->plot(), Qt::Key_Home);
    const auto home = w->visibleRange();
    QVERIFY(home.first <= m_tr->firstStart() && home.second >= m_tr->lastEnd());
    QTest::keyClick(w->plot(), Qt::Key_Backspace);
    QCOMPARE(w->visibleRange(), d);
}

// A drag pan is one history entry however many moves it has; moving the time origin keeps the history
// pointing at the same moments (both through TimeNavigator, shared with the program view).
void TestTimeline::dragIsOneHistoryEntryAndOriginKeepsIt()
{
    w->setVisibleRange(kStart + 1000, kStart + 3000);
    const auto before = w->visibleRange();
    const QRect ar = w->plottable()->lanesRect();
    const QPoint from(ar.left() + 600, ar.top() + 50);
    mouse(w->plot(), QEvent::MouseButtonPress, from, Qt::LeftButton, Qt::LeftButton);
    for (int dx = 10; dx <= 200; dx += 10)
        mouse(w->plot(), QEvent::MouseMove, from - QPoint(dx, 0), Qt::NoButton, Qt::LeftButton);
    mouse(w->plot(), QEvent::MouseButtonRelease, from - QPoint(200, 0), Qt::LeftButton, Qt::NoButton);
    const auto after = w->visibleRange();
    QVERIFY(after.first > before.first);
    QVERIFY(!w->canGoForward());
    w->historyBack();
    QCOMPARE(w->visibleRange(), before);  // one step back undoes the whole drag
    w->historyForward();
    QCOMPARE(w->visibleRange(), after);
    // a new origin: the axis counts from elsewhere, the history still holds the same absolute ranges
    w->setTimeOrigin(kStart - 5000);
    QCOMPARE(w->visibleRange(), after);
    w->historyBack();
    QCOMPARE(w->visibleRange(), before);
}

void TestTimeline::rubberBandZoom()
{
    const QRect ar = w->plottable()->lanesRect();
    const int x0 = ar.left() + 200, x1 = ar.left() + 500;
    const double ta = timeAtPx(x0), tb = timeAtPx(x1);
    shot(w.get(), QStringLiteral("timeline-3-before-band"));
    drag(w->plot(), QPoint(x0, ar.top() + 60), QPoint(x1, ar.top() + 80), Qt::RightButton);
    shot(w.get(), QStringLiteral("timeline-4-band-zoomed"));
    const auto r = w->visibleRange();
    QVERIFY(std::abs(rel(r.first) - ta) < 2);
    QVERIFY(std::abs(rel(r.second) - tb) < 2);
    w->historyBack();
    QVERIFY(w->visibleRange().second - w->visibleRange().first > r.second - r.first);
}

void TestTimeline::clickSelectsInterval()
{
    w->setVisibleRange(kStart + 1000, kStart + 1600);
    QSignalSpy spy(w.get(), &TimelineWidget::intervalSelected);
    // consumer of CTA 0 is lane 1; k-step 5's MmaWait is [1100+180... : t = 100 + 5*200 + 100 .. +80 relative
    const double mid = 100 + 5 * 200 + 140;
    const QRect row = w->plottable()->laneRowRect(1);
    const QPoint p(pxAtRel(mid), row.center().y());
    mouse(w->plot(), QEvent::MouseButtonPress, p, Qt::LeftButton, Qt::LeftButton);
    mouse(w->plot(), QEvent::MouseButtonRelease, p, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(spy.count(), 1);
    const int lane = spy.at(0).at(0).toInt();
    const qsizetype idx = spy.at(0).at(1).value<qsizetype>();
    QCOMPARE(lane, 1);
    QCOMPARE(m_tr->lanes[1].kind[std::size_t(idx)], ws::IntervalKind::MmaWait);
    QCOMPARE(m_tr->lanes[1].kstep[std::size_t(idx)], 5);
    QCOMPARE(w->selectedInterval(), qMakePair(1, idx));
    // clicking empty space clears it
    const QRect ar = w->plottable()->lanesRect();
    const QPoint emptyP(ar.left() + 10, ar.bottom() - 5);
    mouse(w->plot(), QEvent::MouseButtonPress, emptyP, Qt::LeftButton, Qt::LeftButton);
    mouse(w->plot(), QEvent::MouseButtonRelease, emptyP, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(w->selectedInterval().first, -1);
    QCOMPARE(spy.count(), 1);
}

void TestTimeline::shiftDragSelectsRange()
{
    QSignalSpy spy(w.get(), &TimelineWidget::timeRangeSelected);
    const QRect ar = w->plottable()->lanesRect();
    const int x0 = ar.left() + 100, x1 = ar.left() + 400;
    const double ta = timeAtPx(x0), tb = timeAtPx(x1);
    const auto before = w->visibleRange();
    drag(w->plot(), QPoint(x1, ar.top() + 30), QPoint(x0, ar.top() + 30), Qt::LeftButton, Qt::ShiftModifier);
    QCOMPARE(spy.count(), 1);
    QVERIFY(std::abs(rel(spy.at(0).at(0).value<ws::TimeNs>()) - ta) < 2);
    QVERIFY(std::abs(rel(spy.at(0).at(1).value<ws::TimeNs>()) - tb) < 2);
    QCOMPARE(w->visibleRange(), before);  // selecting does not zoom
    QTest::keyClick(w->plot(), Qt::Key_F);  // F frames the selection
    QVERIFY(std::abs(rel(w->visibleRange().first) - ta) < 2);
}

void TestTimeline::ctaHeaderCollapses()
{
    QSignalSpy spy(w.get(), &TimelineWidget::ctaSelected);
    const QRect lanes1 = w->plottable()->laneRowRect(1);
    QVERIFY(lanes1.isValid());
    // the CTA 0 header row is just above its loads row and lanes: find it through the label column
    const QRect lr = w->plottable()->labelRect();
    int headerY = -1;
    for (int y = lr.top(); y < lanes1.top(); ++y) {
        const auto hit = w->plottable()->hitTest(QPointF(lr.left() + 20, y));
        if (hit.row >= 0 && hit.type == TimelineRow::CtaHeader && hit.cta == 0) {
            headerY = y;
            break;
        }
    }
    QVERIFY(headerY >= 0);
    const QPoint p(lr.left() + 20, headerY + 2);
    mouse(w->plot(), QEvent::MouseButtonPress, p, Qt::LeftButton, Qt::LeftButton);
    mouse(w->plot(), QEvent::MouseButtonRelease, p, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toInt(), 0);
    QVERIFY(!w->plottable()->laneRowRect(1).isValid());  // collapsed: lanes hidden
    QVERIFY(w->plottable()->laneRowRect(3).isValid());   // CTA 1 still open
    w->setCtaCollapsed(0, false);
    QVERIFY(w->plottable()->laneRowRect(1).isValid());
}

void TestTimeline::laneFilter()
{
    w->setLaneFilter(QStringLiteral("role:producer"));
    QVERIFY(w->plottable()->laneRowRect(0).isValid());
    QVERIFY(!w->plottable()->laneRowRect(1).isValid());
    w->setLaneFilter(QStringLiteral("sm:1"));
    QVERIFY(!w->plottable()->laneRowRect(0).isValid());
    QVERIFY(w->plottable()->laneRowRect(2).isValid());
    w->setLaneFilter(QStringLiteral("cta:0; warp:4"));
    QVERIFY(w->plottable()->laneRowRect(1).isValid());
    QVERIFY(!w->plottable()->laneRowRect(0).isValid());
    QVERIFY(!w->plottable()->laneRowRect(3).isValid());
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("lane filter 'sm:x'"));
    w->setLaneFilter(QStringLiteral("sm:x"));  // bad: kept the previous one
    QCOMPARE(w->laneFilter(), QStringLiteral("cta:0; warp:4"));
    w->setLaneFilter(QString());
    QVERIFY(w->plottable()->laneRowRect(0).isValid());
}

void TestTimeline::highlightFadesOtherKinds()
{
    w->setVisibleRange(kStart + 1100, kStart + 1300);  // one k-step
    const QRect row = w->plottable()->laneRowRect(1);
    const int xWait = pxAtRel(1100 + 140);  // MmaWait
    const int xIssue = pxAtRel(1100 + 80);  // MmaIssue
    QImage img = render();
    QCOMPARE(img.pixel(xWait, row.center().y()), tlpalette::kindColor(ws::IntervalKind::MmaWait).rgb());
    w->highlightStage(ws::WarpRole::Consumer, ws::IntervalKind::MmaIssue);
    img = render();
    QCOMPARE(img.pixel(xIssue, row.center().y()), tlpalette::kindColor(ws::IntervalKind::MmaIssue).rgb());
    QCOMPARE(img.pixel(xWait, row.center().y()), tlpalette::faded(tlpalette::kindColor(ws::IntervalKind::MmaWait)).rgb());
    w->clearHighlight();
    img = render();
    QCOMPARE(img.pixel(xWait, row.center().y()), tlpalette::kindColor(ws::IntervalKind::MmaWait).rgb());
}

void TestTimeline::rasterCacheOnlyWhenUnchanged()
{
    auto replotReused = [&]() {
        w->plot()->replot(QCustomPlot::rpImmediateRefresh);
        return w->plottable()->lastFrameReused();
    };
    const QImage a = render();
    w->plottable()->setHoverInterval(1, 3);
    QVERIFY(replotReused());  // hover: lane pixels reused
    QVERIFY(render() != a);   // ... but the hover outline is drawn
    w->setVisibleRange(kStart + 1000, kStart + 2000);
    QVERIFY(!replotReused());
    QVERIFY(replotReused());
    const QRect row = w->plottable()->laneRowRect(1);
    const QImage before = render();
    w->setCtaCollapsed(0, true);  // layout change: must repaint the lanes
    QVERIFY(!replotReused());
    QVERIFY(before.copy(row) != render().copy(row));
    w->highlightStage(ws::WarpRole::Consumer, ws::IntervalKind::WaitData);
    QVERIFY(!replotReused());
    w->plottable()->setScrollY(5);
    QVERIFY(!replotReused());
}

// Outer scopes (KernelTrace::scopes, schema 6) give a thin bracket row right above their warp: one level per depth,
// each level painted only over its scope's time, hover finds the scope; warps without scopes get no such row.
void TestTimeline::bracketRowAboveWarpWithScopes()
{
    m_tr = makeTrace(40);
    for (std::size_t i = 0; i < m_tr->lanes.size(); ++i)
        m_tr->lanes[i].warpId = ws::RowId(100 + i);  // as the store gives them: warps.id, one per lane
    const ws::Lane &l1 = m_tr->lanes[1];
    const ws::TimeNs a = l1.start.front(), b = l1.start.back() + l1.duration.back();
    const ws::TimeNs ma = a + (b - a) / 3, mb = a + 2 * (b - a) / 3;
    m_tr->scopes = {{l1.warpId, 1, "mainloop", ma, mb}, {l1.warpId, 0, "kernel", a, b}};
    w->setTrace(m_tr);
    QVERIFY(w->waitForIndex());
    w->resetZoom();
    w->plottable()->setIntervalLabels(false);
    const QImage img = render();
    const QRect ar = w->plottable()->lanesRect();
    const QRect lane1 = w->plottable()->laneRowRect(1);
    QVERIFY(lane1.isValid());
    // the rows right above lane 1 are its bracket row (2 levels of 7 px)
    int top = lane1.top();
    while (top > ar.top()) {
        const auto hit = w->plottable()->hitTest(QPointF(ar.left() + ar.width() / 2, top - 1));
        if (hit.type != TimelineRow::Brackets)
            break;
        QCOMPARE(hit.lane, 1);
        --top;
    }
    QCOMPARE(lane1.top() - top, 2 * TimelineLayout::kBracketLevelHeight);
    // no other lane has one: the row above lane 0 and lane 3 is not a bracket row
    for (int other : {0, 3}) {
        const QRect r = w->plottable()->laneRowRect(other);
        QVERIFY(r.isValid());
        QVERIFY(w->plottable()->hitTest(QPointF(ar.left() + ar.width() / 2, r.top() - 1)).type != TimelineRow::Brackets);
    }
    const int xa = pxAtRel(rel(a)), xb = pxAtRel(rel(b)), xma = pxAtRel(rel(ma)), xmb = pxAtRel(rel(mb));
    QVERIFY(xb - xa > 300);
    const int y0 = top + TimelineLayout::kBracketLevelHeight / 2;      // level 0 (kernel)
    const int y1 = y0 + TimelineLayout::kBracketLevelHeight;           // level 1 (mainloop)
    const QRgb f0 = tlpalette::bracketFill(0).rgb(), f1 = tlpalette::bracketFill(1).rgb();
    int k0 = 0, k1 = 0, k1Outside = 0;
    for (int x = xa + 2; x < xb - 2; ++x) {
        k0 += img.pixel(x, y0) == f0;
        const bool filled = img.pixel(x, y1) == f1;
        if (x > xma + 2 && x < xmb - 2)
            k1 += filled;
        else if (x < xma - 2 || x > xmb + 2)  // (the edges' pixels are rounded either way)
            k1Outside += filled;
    }
    const QString got = QStringLiteral("kernel %1 px of %2, mainloop %3 px of %4, mainloop outside its span %5 px")
                            .arg(k0).arg(xb - xa - 4).arg(k1).arg(xmb - xma - 4).arg(k1Outside);
    QVERIFY2(k0 >= (xb - xa - 4) * 9 / 10, qPrintable(got));
    QVERIFY2(k1 >= (xmb - xma - 4) * 9 / 10, qPrintable(got));
    QVERIFY2(k1Outside == 0, qPrintable(got));
    // before the scopes start nothing is drawn on the bracket row
    QVERIFY(img.pixel(xa - 5, y0) != f0);
    // hover: the scope under the cursor, by level
    const auto h1 = w->plottable()->hitTest(QPointF((xma + xmb) / 2, y1));
    QCOMPARE(h1.type, TimelineRow::Brackets);
    QCOMPARE(h1.index, qsizetype(0));  // "mainloop"
    const auto h0 = w->plottable()->hitTest(QPointF(xa + 5, y0));
    QCOMPARE(h0.index, qsizetype(1));  // "kernel"
    QCOMPARE(w->plottable()->hitTest(QPointF(xa + 5, y1)).index, qsizetype(-1));  // level 1, outside mainloop
    // with labels, the wide scopes carry their names (dark text pixels on the level)
    w->plottable()->setIntervalLabels(true);
    const QImage withText = render();
    int dark = 0;
    for (int x = xa; x < xb; ++x)
        for (int y = top; y < lane1.top(); ++y)
            dark += qGray(withText.pixel(x, y)) < 90 && qGray(img.pixel(x, y)) >= 90;
    QVERIFY2(dark > 20, qPrintable(QStringLiteral("%1 px of scope names").arg(dark)));
}

void TestTimeline::setTraceTrustsTheLoadersFacts()
{
    // what traceFacts() finds is what the trace holds
    const ws::ui::TraceFacts f = ws::ui::traceFacts(*m_tr);
    QCOMPARE(f.firstStart, m_tr->firstStart());
    QCOMPARE(f.lastEnd, m_tr->lastEnd());
    int ring = 0;
    std::array<bool, 256> kinds{};
    for (const auto &l : m_tr->lanes) {
        for (auto k : l.kind) kinds[std::size_t(k)] = true;
        for (auto s : l.slot) ring = std::max(ring, int(s) + 1);
    }
    QCOMPARE(f.ringDepth, std::max(1, ring));
    QVERIFY(f.kinds == kinds);
    QCOMPARE(w->traceFacts()->lastEnd, f.lastEnd);  // setTrace without facts finds them itself
    ws::KernelTrace empty;
    empty.launch.end = 777;
    QCOMPARE(ws::ui::traceFacts(empty).lastEnd, ws::TimeNs(777));
    QCOMPARE(ws::ui::traceFacts(empty).ringDepth, 1);

    // given facts are used as they are (a loader's worker found them): a later end and one kind only
    auto given = std::make_shared<ws::ui::TraceFacts>(f);
    given->lastEnd = f.lastEnd + 1'000'000;
    given->kinds = {};
    given->kinds[std::size_t(ws::IntervalKind::WaitData)] = true;
    w->setTrace(m_tr, given);
    QVERIFY(w->traceFacts() == given);
    w->resetZoom();
    QVERIFY2(w->visibleRange().second >= given->lastEnd,
             qPrintable(QStringLiteral("full range ends at %1, the facts at %2").arg(w->visibleRange().second).arg(given->lastEnd)));
    auto *legend = qobject_cast<QCPLegend *>(w->plot()->plotLayout()->element(0, 0));
    QVERIFY(legend);
    QStringList names;
    for (int i = 0; i < legend->elementCount(); ++i)
        if (QCPLayoutElement *e = legend->elementAt(i))
            names << e->objectName();
    QVERIFY2(names.contains(tlpalette::kindLabel(ws::IntervalKind::WaitData)), qPrintable(names.join(QStringLiteral(", "))));
    QVERIFY2(!names.contains(tlpalette::kindLabel(ws::IntervalKind::MmaWait)), qPrintable(names.join(QStringLiteral(", "))));
    QVERIFY(w->waitForIndex());
    render();  // no crash
}

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
