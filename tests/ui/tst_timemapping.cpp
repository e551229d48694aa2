// Time <-> pixel mapping, zoom/pan maths and time-axis ticks (data-driven); the drag gestures' state shared by
// the warp timeline and the program view (ViewDrag).
#include "timemapping.h"
#include "viewdrag.h"

#include <QWheelEvent>
#include <QtTest>

#include <cmath>

class TestTimeMapping : public QObject {
    Q_OBJECT
private slots:
    void roundTrip_data();
    void roundTrip();
    void zoomKeepsAnchor_data();
    void zoomKeepsAnchor();
    void clampToData_data();
    void clampToData();
    void niceStep_data();
    void niceStep();
    void ticks_data();
    void ticks();
    void formatTime_data();
    void formatTime();
    void formatDuration_data();
    void formatDuration();
    void viewDragGestures();
    void viewDragPanAndBand();
    void viewDragWheelScrollsRows();
};

void TestTimeMapping::roundTrip_data()
{
    QTest::addColumn<double>("t0");
    QTest::addColumn<double>("t1");
    QTest::addColumn<double>("x0");
    QTest::addColumn<double>("x1");
    QTest::addColumn<double>("t");
    QTest::addColumn<double>("px");
    QTest::newRow("identity-ish") << 0.0 << 1000.0 << 0.0 << 1000.0 << 250.0 << 250.0;
    QTest::newRow("offset plot") << 0.0 << 1000.0 << 190.0 << 1190.0 << 500.0 << 690.0;
    QTest::newRow("ms range") << 2e6 << 4e6 << 0.0 << 800.0 << 3e6 << 400.0;
    QTest::newRow("sub-ns per px") << 100.0 << 110.0 << 0.0 << 1000.0 << 101.5 << 150.0;
    QTest::newRow("negative times") << -500.0 << 500.0 << 10.0 << 110.0 << 0.0 << 60.0;
    QTest::newRow("outside the view") << 0.0 << 100.0 << 0.0 << 100.0 << 250.0 << 250.0;
}

void TestTimeMapping::roundTrip()
{
    QFETCH(double, t0);
    QFETCH(double, t1);
    QFETCH(double, x0);
    QFETCH(double, x1);
    QFETCH(double, t);
    QFETCH(double, px);
    const timemap::Mapping m{t0, t1, x0, x1};
    QVERIFY(std::abs(m.toPixel(t) - px) < 1e-9);
    QVERIFY(std::abs(m.toTime(px) - t) < 1e-9 * std::max(1.0, std::abs(t)));
    QVERIFY(std::abs(m.nsPerPixel() - (t1 - t0) / (x1 - x0)) < 1e-12);
}

void TestTimeMapping::zoomKeepsAnchor_data()
{
    QTest::addColumn<double>("t0");
    QTest::addColumn<double>("t1");
    QTest::addColumn<double>("anchor");
    QTest::addColumn<double>("factor");
    QTest::addColumn<double>("expectedSpan");
    QTest::newRow("zoom in at centre") << 0.0 << 1000.0 << 500.0 << 0.5 << 500.0;
    QTest::newRow("zoom in at left edge") << 0.0 << 1000.0 << 0.0 << 0.1 << 100.0;
    QTest::newRow("zoom out at 3/4") << 0.0 << 1000.0 << 750.0 << 2.0 << 2000.0;
    QTest::newRow("clamped to the minimum span") << 0.0 << 10.0 << 5.0 << 0.01 << timemap::kMinSpanNs;
}

void TestTimeMapping::zoomKeepsAnchor()
{
    QFETCH(double, t0);
    QFETCH(double, t1);
    QFETCH(double, anchor);
    QFETCH(double, factor);
    QFETCH(double, expectedSpan);
    const auto r = timemap::zoomAbout(t0, t1, anchor, factor);
    QVERIFY(std::abs((r.second - r.first) - expectedSpan) < 1e-9);
    // the anchor stays at the same pixel
    const timemap::Mapping before{t0, t1, 0, 1000}, after{r.first, r.second, 0, 1000};
    QVERIFY(std::abs(before.toPixel(anchor) - after.toPixel(anchor)) < 1e-6);
}

void TestTimeMapping::clampToData_data()
{
    QTest::addColumn<double>("t0");
    QTest::addColumn<double>("t1");
    QTest::addColumn<double>("e0");
    QTest::addColumn<double>("e1");
    // data [0, 1000]: margin 50
    QTest::newRow("inside: unchanged") << 100.0 << 200.0 << 100.0 << 200.0;
    QTest::newRow("panned past the left end") << -500.0 << -400.0 << -50.0 << 50.0;
    QTest::newRow("panned past the right end") << 2000.0 << 2100.0 << 950.0 << 1050.0;
    QTest::newRow("zoomed out too far") << -5000.0 << 5000.0 << -50.0 << 1050.0;
}

void TestTimeMapping::clampToData()
{
    QFETCH(double, t0);
    QFETCH(double, t1);
    QFETCH(double, e0);
    QFETCH(double, e1);
    const auto r = timemap::clampToData(t0, t1, 0, 1000);
    QVERIFY2(std::abs(r.first - e0) < 1e-9 && std::abs(r.second - e1) < 1e-9,
             qPrintable(QStringLiteral("got %1..%2").arg(r.first).arg(r.second)));
}

void TestTimeMapping::niceStep_data()
{
    QTest::addColumn<double>("rough");
    QTest::addColumn<double>("step");
    QTest::newRow("1") << 1.0 << 1.0;
    QTest::newRow("1.1 -> 2") << 1.1 << 2.0;
    QTest::newRow("3 -> 5") << 3.0 << 5.0;
    QTest::newRow("7 -> 10") << 7.0 << 10.0;
    QTest::newRow("0.03 -> 0.05") << 0.03 << 0.05;
    QTest::newRow("1234 -> 2000") << 1234.0 << 2000.0;
    QTest::newRow("4.9e6 -> 5e6") << 4.9e6 << 5e6;
    QTest::newRow("bad input") << -3.0 << 1.0;
    // exact mantissas stay (the 1e-9 tolerance)
    QTest::newRow("2 -> 2") << 2.0 << 2.0;
    QTest::newRow("5 -> 5") << 5.0 << 5.0;
    QTest::newRow("500 -> 500") << 500.0 << 500.0;
    QTest::newRow("5.01 -> 10") << 5.01 << 10.0;
}

void TestTimeMapping::niceStep()
{
    QFETCH(double, rough);
    QFETCH(double, step);
    QCOMPARE(timemap::niceStep(rough), step);
}

void TestTimeMapping::ticks_data()
{
    QTest::addColumn<double>("t0");
    QTest::addColumn<double>("t1");
    QTest::addColumn<double>("width");
    QTest::addColumn<double>("step");
    QTest::addColumn<QString>("firstLabel");
    QTest::newRow("50 µs kernel") << 0.0 << 50000.0 << 1100.0 << 5000.0 << QStringLiteral("0 µs");
    QTest::newRow("deep zoom, ns") << 120.0 << 180.0 << 1100.0 << 5.0 << QStringLiteral("120 ns");
    QTest::newRow("deep zoom far from origin") << 1234500.0 << 1234600.0 << 1000.0 << 10.0 << QStringLiteral("1.23450 ms");
    QTest::newRow("ms") << 0.0 << 3.2e6 << 800.0 << 5e5 << QStringLiteral("0.0 ms");
    QTest::newRow("negative start") << -2000.0 << 8000.0 << 1000.0 << 1000.0 << QStringLiteral("-2 µs");
    // a start that is not a multiple of the step: the first tick is the next multiple, not the one before
    QTest::newRow("start between ticks") << 130.0 << 1130.0 << 1000.0 << 100.0 << QStringLiteral("0.2 µs");
    QTest::newRow("µs start between ticks") << 10300.0 << 19700.0 << 1000.0 << 1000.0 << QStringLiteral("11 µs");
}

void TestTimeMapping::ticks()
{
    QFETCH(double, t0);
    QFETCH(double, t1);
    QFETCH(double, width);
    QFETCH(double, step);
    QFETCH(QString, firstLabel);
    const auto tk = timemap::ticks(t0, t1, width, 90);
    QCOMPARE(tk.step, step);
    QVERIFY(!tk.major.isEmpty());
    QCOMPARE(tk.major.size(), tk.labels.size());
    QCOMPARE(tk.labels.first(), firstLabel);
    QVERIFY(tk.major.size() <= int(width / 90) + 1);  // labels never closer than 90 px
    for (double t : tk.major) {
        QVERIFY(t >= t0 - 1e-9 && t <= t1 + 1e-9);
        const double k = t / step;
        QVERIFY(std::abs(k - std::round(k)) < 1e-6);  // multiples of the step
    }
    // no tick missing at either end
    QVERIFY2(tk.major.first() - t0 < step - 1e-9, qPrintable(QString::number(tk.major.first())));
    QVERIFY2(t1 - tk.major.last() < step - 1e-9, qPrintable(QString::number(tk.major.last())));
    for (double t : tk.minor)
        QVERIFY(t >= t0 && t <= t1);
    QVERIFY(!tk.minor.isEmpty());
    // labels distinct
    QCOMPARE(QSet<QString>(tk.labels.begin(), tk.labels.end()).size(), tk.labels.size());
}

void TestTimeMapping::formatTime_data()
{
    QTest::addColumn<double>("t");
    QTest::addColumn<double>("step");
    QTest::addColumn<QString>("unit");
    QTest::addColumn<QString>("label");
    QTest::newRow("ns") << 120.0 << 10.0 << QStringLiteral("ns") << QStringLiteral("120 ns");
    QTest::newRow("µs whole") << 5000.0 << 1000.0 << QStringLiteral("µs") << QStringLiteral("5 µs");
    QTest::newRow("µs with decimals") << 5200.0 << 200.0 << QStringLiteral("µs") << QStringLiteral("5.2 µs");
    QTest::newRow("ms fine step") << 1234560.0 << 10.0 << QStringLiteral("ms") << QStringLiteral("1.23456 ms");
    QTest::newRow("sub-ns step") << 12.5 << 0.5 << QStringLiteral("ns") << QStringLiteral("12.5 ns");
    QTest::newRow("zero has no sign") << -1e-12 << 100.0 << QStringLiteral("ns") << QStringLiteral("0 ns");
}

void TestTimeMapping::formatTime()
{
    QFETCH(double, t);
    QFETCH(double, step);
    QFETCH(QString, unit);
    QFETCH(QString, label);
    QCOMPARE(timemap::formatTime(t, step, unit), label);
}

void TestTimeMapping::formatDuration_data()
{
    QTest::addColumn<double>("ns");
    QTest::addColumn<QString>("text");
    QTest::newRow("ns") << 830.0 << QStringLiteral("830 ns");
    QTest::newRow("fraction ns") << 2.5 << QStringLiteral("2.5 ns");
    QTest::newRow("µs") << 12345.0 << QStringLiteral("12.35 µs");
    QTest::newRow("ms") << 1.5e6 << QStringLiteral("1.5 ms");
    QTest::newRow("s") << 2.25e9 << QStringLiteral("2.25 s");
    // unit boundaries
    QTest::newRow("1 µs exactly") << 1000.0 << QStringLiteral("1 µs");
    QTest::newRow("999 ns") << 999.0 << QStringLiteral("999 ns");
    QTest::newRow("1 ms exactly") << 1e6 << QStringLiteral("1 ms");
}

void TestTimeMapping::formatDuration()
{
    QFETCH(double, ns);
    QFETCH(QString, text);
    QCOMPARE(timemap::formatDuration(ns), text);
}

// Which gesture a press starts, and when a press becomes a drag (3 px, Manhattan).
void TestTimeMapping::viewDragGestures()
{
    ViewDrag g;
    const struct {
        Qt::MouseButton button;
        Qt::KeyboardModifiers mods;
        ViewDrag::Mode mode;
    } cases[] = {
        {Qt::RightButton, Qt::NoModifier, ViewDrag::Mode::ZoomBand},
        {Qt::LeftButton, Qt::ControlModifier, ViewDrag::Mode::Ruler},
        {Qt::LeftButton, Qt::ControlModifier | Qt::ShiftModifier, ViewDrag::Mode::Ruler},
        {Qt::LeftButton, Qt::ShiftModifier, ViewDrag::Mode::RangeSelect},
        {Qt::LeftButton, Qt::NoModifier, ViewDrag::Mode::Pan},
        {Qt::MiddleButton, Qt::ShiftModifier, ViewDrag::Mode::Pan},
        {Qt::BackButton, Qt::NoModifier, ViewDrag::Mode::None},
    };
    for (const auto &c : cases) {
        g.press(QPoint(100, 50), {0, 1}, 0);
        QCOMPARE(g.mode(), ViewDrag::Mode::None);
        g.begin(c.button, c.mods);
        QCOMPARE(g.mode(), c.mode);
    }
    g.press(QPoint(100, 50), {0, 1}, 0);
    g.begin(Qt::LeftButton, Qt::NoModifier);
    QVERIFY(g.move(QPoint(101, 51)));  // 2 px: still a click
    QVERIFY(!g.moved());
    QCOMPARE(g.lastMouse(), QPoint(101, 51));
    QVERIFY(g.move(QPoint(100, 47)));  // 3 px
    QVERIFY(g.moved());
    QVERIFY(g.move(QPoint(100, 50)));  // back at the press: still a drag
    QVERIFY(g.moved());
    QCOMPARE(g.release(), ViewDrag::Mode::Pan);
    QCOMPARE(g.mode(), ViewDrag::Mode::None);
    QVERIFY(g.moved());  // the release handler still asks whether it moved
    // no gesture: the mouse only hovers (and is remembered for the zoom keys)
    g.press(QPoint(10, 10), {0, 1}, 0);
    QVERIFY(!g.move(QPoint(200, 10)));
    QVERIFY(!g.moved());
    const QRect lanes(150, 0, 100, 40);  // x 150..249
    QVERIFY(g.mouseOver(lanes));
    g.move(QPoint(249, 10));
    QVERIFY(g.mouseOver(lanes));
    g.move(QPoint(250, 10));
    QVERIFY(!g.mouseOver(lanes));
    g.move(QPoint(150, 10));
    QVERIFY(g.mouseOver(lanes));
    g.leave();
    QCOMPARE(g.lastMouse(), QPoint(-1, -1));
    QVERIFY(!g.mouseOver(lanes));
}

// A pan follows the mouse in time (ns per pixel of the view at the press) and in rows; a zoom band must be
// 4 px wide.
void TestTimeMapping::viewDragPanAndBand()
{
    ViewDrag g;
    g.press(QPoint(100, 50), {1000.0, 2000.0}, 40);
    g.begin(Qt::LeftButton, Qt::NoModifier);
    g.move(QPoint(120, 65));
    const auto v = g.pannedView(QPoint(120, 65), 100);  // 10 ns/px, 20 px right: 200 ns earlier
    QCOMPARE(v.first, 800.0);
    QCOMPARE(v.second, 1800.0);
    const auto w = g.pannedView(QPoint(90, 50), 200);  // 5 ns/px, 10 px left
    QCOMPARE(w.first, 1050.0);
    QCOMPARE(w.second, 2050.0);
    QCOMPARE(g.pannedScroll(QPoint(120, 65)), 25);
    QCOMPARE(g.pannedScroll(QPoint(120, 30)), 60);
    QCOMPARE(g.pannedView(QPoint(110, 50), 0).first, -9000.0);  // no width: taken as 1 px, no division by zero
    g.release();
    g.press(QPoint(100, 50), {0, 1}, 0);
    g.begin(Qt::RightButton, Qt::NoModifier);
    QVERIFY(!g.bandWideEnough(QPoint(110, 50)));  // not moved yet
    g.move(QPoint(100, 60));                       // moved, but only vertically
    QVERIFY(g.moved());
    QVERIFY(!g.bandWideEnough(QPoint(103, 60)));
    QVERIFY(g.bandWideEnough(QPoint(104, 60)));
    QVERIFY(g.bandWideEnough(QPoint(96, 60)));
}

// Shift+wheel, or a wheel over the labels, scrolls rows (3 rows per notch; a horizontal-only wheel too);
// any other wheel is the time navigator's.
void TestTimeMapping::viewDragWheelScrollsRows()
{
    auto wheel = [](QPointF pos, QPoint angle, Qt::KeyboardModifiers mods) {
        return QWheelEvent(pos, pos, QPoint(), angle, Qt::NoButton, mods, Qt::NoScrollPhase, false);
    };
    const QWheelEvent overLanes = wheel({200, 10}, {0, 120}, Qt::NoModifier);
    QVERIFY(!ViewDrag::wheelRowScroll(&overLanes, 150, 20).has_value());
    const QWheelEvent shifted = wheel({200, 10}, {0, 120}, Qt::ShiftModifier);
    QCOMPARE(ViewDrag::wheelRowScroll(&shifted, 150, 20), std::optional<int>(-60));
    const QWheelEvent labelsDown = wheel({149, 10}, {0, -240}, Qt::NoModifier);
    QCOMPARE(ViewDrag::wheelRowScroll(&labelsDown, 150, 20), std::optional<int>(120));
    const QWheelEvent sideways = wheel({20, 10}, {120, 0}, Qt::NoModifier);
    QCOMPARE(ViewDrag::wheelRowScroll(&sideways, 150, 16), std::optional<int>(-48));
    const QWheelEvent edge = wheel({150, 10}, {0, 120}, Qt::NoModifier);  // the lanes' first pixel
    QVERIFY(!ViewDrag::wheelRowScroll(&edge, 150, 20).has_value());
}

QTEST_GUILESS_MAIN(TestTimeMapping)
#include "tst_timemapping.moc"
