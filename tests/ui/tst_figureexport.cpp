// Image export: size and DPI, legend present, the colours of known intervals at known pixels,
// deterministic output, SVG/PDF, the headless exportFigure() from a file, and clear errors.
#include "timelinetestdata.h"

#include "figureexport.h"
#include "timelinepalette.h"
#include "timelineplottable.h"
#include "timelinewidget.h"

#include <warpstage/lod.h>
#include <warpstage/store.h>
#include <warpstage/synthetic.h>

#include <QCryptographicHash>
#include <QTemporaryDir>
#include <QtTest>

using namespace tltest;

class TestFigureExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void sizeAndDpi_data();
    void sizeAndDpi();
    void legendPresent();
    void knownColoursAtKnownPixels_data();
    void knownColoursAtKnownPixels();
    void intervalEdgesAtExactPixels_data();
    void intervalEdgesAtExactPixels();
    void deterministic();
    void svgAndPdf();
    void fromFile();
    void errors();

private:
    QTemporaryDir m_dir;
    QString path(const QString &name) const { return m_dir.filePath(name); }
};

void TestFigureExport::initTestCase() { QVERIFY(m_dir.isValid()); }

void TestFigureExport::sizeAndDpi_data()
{
    QTest::addColumn<QSize>("size");
    QTest::addColumn<double>("dpi");
    QTest::newRow("1600x900 @96") << QSize(1600, 900) << 96.0;
    QTest::newRow("800x450 @192 (hi-dpi)") << QSize(800, 450) << 192.0;
    QTest::newRow("3000x1200 @300") << QSize(3000, 1200) << 300.0;
}

void TestFigureExport::sizeAndDpi()
{
    QFETCH(QSize, size);
    QFETCH(double, dpi);
    TimelineWidget w;
    w.resize(1000, 600);
    w.setTrace(makeTrace());
    QVERIFY(w.waitForIndex());
    const QString file = path(QStringLiteral("size.png"));
    QString err;
    QVERIFY2(w.exportImage(file, size, dpi, QStringLiteral("size test"), &err), qPrintable(err));
    const QImage img(file);
    QCOMPARE(img.size(), size);
    QVERIFY(std::abs(img.dotsPerMeterX() - dpi / 0.0254) < 2);
}

void TestFigureExport::legendPresent()
{
    TimelineWidget w;
    w.setTrace(makeTrace());
    QVERIFY(w.waitForIndex());
    QRect lanes;
    const QImage img = w.renderImage(QSize(1600, 900), 96, QStringLiteral("legend"), &lanes).convertToFormat(QImage::Format_RGB32);
    QVERIFY(lanes.top() > 20);
    // swatches of the kinds in the trace sit above the lanes (legend row), one swatch = many pixels
    for (auto k : {ws::IntervalKind::WaitData, ws::IntervalKind::MmaIssue, ws::IntervalKind::Release, ws::IntervalKind::IssueLoad}) {
        const QRgb c = tlpalette::kindColor(k).rgb();
        int n = 0;
        for (int y = 0; y < lanes.top() - 15; ++y)  // above the top axis
            for (int x = 0; x < img.width(); ++x)
                n += img.pixel(x, y) == c;
        QVERIFY2(n >= 20, qPrintable(QStringLiteral("legend swatch of %1: %2 pixels").arg(tlpalette::kindLabel(k)).arg(n)));
    }
    // a kind absent from the trace has no swatch
    int n = 0;
    const QRgb epi = tlpalette::kindColor(ws::IntervalKind::Epilogue).rgb();
    for (int y = 0; y < lanes.top(); ++y)
        for (int x = 0; x < img.width(); ++x)
            n += img.pixel(x, y) == epi;
    QCOMPARE(n, 0);
}

void TestFigureExport::knownColoursAtKnownPixels_data()
{
    QTest::addColumn<double>("dpi");
    QTest::newRow("96 dpi") << 96.0;
    QTest::newRow("192 dpi") << 192.0;
}

void TestFigureExport::knownColoursAtKnownPixels()
{
    QFETCH(double, dpi);
    // one CTA: rows are SM header 18, CTA header (overlap band) 14, loads 10, w0 15, w4 15 (logical px)
    TimelineWidget w;
    w.setTrace(makeTrace());
    QVERIFY(w.waitForIndex());
    w.setLaneFilter(QStringLiteral("cta:0"));
    w.setVisibleRange(kStart + 1100, kStart + 1300);  // k-step 5
    QRect lanes;
    const QSize size(1600, 900);
    const QImage img = w.renderImage(size, dpi, QString(), &lanes).convertToFormat(QImage::Format_RGB32);
    const double s = dpi / 96.0;
    auto X = [&](double relNs) { return lanes.left() + int((relNs - 1100) / 200.0 * lanes.width()); };
    auto Y = [&](double rowTop, double rowH) { return lanes.top() + int((rowTop + rowH / 2) * s); };
    const int yOverlap = Y(18, 14), yProducer = Y(18 + 14 + 10, 15), yConsumer = Y(18 + 14 + 10 + 15, 15);
    struct Probe {
        double t;
        int y;
        QColor expected;
        const char *what;
    };
    // points near the right end of each interval: the k-step labels are drawn at the left
    const Probe probes[] = {
        {1195, yConsumer, tlpalette::kindColor(ws::IntervalKind::MmaIssue), "consumer MmaIssue [1160,1200)"},
        {1272, yConsumer, tlpalette::kindColor(ws::IntervalKind::MmaWait), "consumer MmaWait [1200,1280)"},
        {1296, yConsumer, tlpalette::kindColor(ws::IntervalKind::Release), "consumer Release [1280,1300)"},
        {1245, yProducer, tlpalette::kindColor(ws::IntervalKind::IssueLoad), "producer IssueLoad [1200,1250)"},
        {1240, yOverlap, tlpalette::overlapColor(int(ws::lod::OverlapState::Both)), "load k5 in flight during MMA"},
        {1212, yOverlap, tlpalette::overlapColor(int(ws::lod::OverlapState::ComputeOnly)), "MMA, no load in flight"},
        {1290, yOverlap, tlpalette::overlapColor(int(ws::lod::OverlapState::LoadOnly)), "load in flight, no compute"},
    };
    for (const Probe &p : probes) {
        const QRgb got = img.pixel(X(p.t), p.y);
        QVERIFY2(got == p.expected.rgb(), qPrintable(QStringLiteral("%1 at (%2,%3): expected %4, got %5")
                                                         .arg(QString::fromLatin1(p.what)).arg(X(p.t)).arg(p.y)
                                                         .arg(p.expected.rgb(), 0, 16).arg(got, 0, 16)));
    }
    // WaitData [1100,1160) is hatched: base and hatch colours both appear along the lane
    int base = 0, hatch = 0;
    for (int x = X(1120); x < X(1158); ++x)
        for (int dy = -3; dy <= 3; ++dy) {
            const QRgb c = img.pixel(x, yConsumer + dy);
            base += c == tlpalette::kindColor(ws::IntervalKind::WaitData).rgb();
            hatch += c == tlpalette::hatchColor(ws::IntervalKind::WaitData).rgb();
        }
    QVERIFY(base > 20 && hatch > 10);
}

void TestFigureExport::intervalEdgesAtExactPixels_data()
{
    QTest::addColumn<QSize>("size");
    QTest::newRow("1600x900") << QSize(1600, 900);
    QTest::newRow("1237x700") << QSize(1237, 700);
}

void TestFigureExport::intervalEdgesAtExactPixels()
{
    // At 1 ns per pixel (the range is as many ns as the lane area is wide) an interval edge at
    // relative time t is the left edge of pixel column lanes.left() + (t - t0): the column before
    // still has the earlier kind, the column itself the later one (or its darker start marker).
    // A time<->pixel mapping off by one pixel turns this red.
    QFETCH(QSize, size);
    TimelineWidget w;
    w.setTrace(makeTrace());
    QVERIFY(w.waitForIndex());
    w.setLaneFilter(QStringLiteral("cta:0"));
    const double t0 = 1100;
    QRect lanes;
    w.setVisibleRange(kStart + ws::TimeNs(t0), kStart + ws::TimeNs(t0) + 200);
    (void)w.renderImage(size, 96, QString(), &lanes);
    const int W = lanes.width();
    QVERIFY(W > 400);
    w.setVisibleRange(kStart + ws::TimeNs(t0), kStart + ws::TimeNs(t0) + W);
    QRect lanes2;
    const QImage img = w.renderImage(size, 96, QString(), &lanes2).convertToFormat(QImage::Format_RGB32);
    QCOMPARE(lanes2, lanes);
    const int yConsumer = lanes.top() + 18 + 14 + 10 + 15 + 3;  // near the top of the consumer row, above any label
    const int yProducer = lanes.top() + 18 + 14 + 10 + 3;
    auto shade = [](QRgb c) { return qRgb(int(qRed(c) * 0.62f), int(qGreen(c) * 0.62f), int(qBlue(c) * 0.62f)); };
    auto is = [&](QRgb got, ws::IntervalKind k, bool allowStart) {
        const QRgb c = tlpalette::kindColor(k).rgb(), h = tlpalette::hatchColor(k).rgb();
        return got == c || got == h || (allowStart && (got == shade(c) || got == shade(h)));
    };
    struct Edge {
        double t;
        int y;
        ws::IntervalKind before, after;
    };
    const Edge edges[] = {
        {1160, yConsumer, ws::IntervalKind::WaitData, ws::IntervalKind::MmaIssue},
        {1200, yConsumer, ws::IntervalKind::MmaIssue, ws::IntervalKind::MmaWait},
        {1280, yConsumer, ws::IntervalKind::MmaWait, ws::IntervalKind::Release},
        {1300, yConsumer, ws::IntervalKind::Release, ws::IntervalKind::WaitData},
        {1400, yProducer, ws::IntervalKind::WaitSlot, ws::IntervalKind::IssueLoad},
    };
    for (const Edge &e : edges) {
        const int x = lanes.left() + int(e.t - t0);
        const QRgb left = img.pixel(x - 1, e.y), right = img.pixel(x, e.y);
        QVERIFY2(is(left, e.before, false) && is(right, e.after, true),
                 qPrintable(QStringLiteral("edge at %1 ns (x %2): left %3 right %4, expected %5 | %6")
                                .arg(e.t).arg(x).arg(left, 0, 16).arg(right, 0, 16)
                                .arg(tlpalette::kindLabel(e.before), tlpalette::kindLabel(e.after))));
    }
    // the producer is idle in [1450, 1500): IssueLoad ends and WaitSlot starts at exact columns too
    const QRgb bg = img.pixel(lanes.left() + 1475 - int(t0), yProducer);
    QVERIFY(!is(bg, ws::IntervalKind::IssueLoad, true) && !is(bg, ws::IntervalKind::WaitSlot, true));
    QVERIFY(is(img.pixel(lanes.left() + 1450 - int(t0) - 1, yProducer), ws::IntervalKind::IssueLoad, false));
    QCOMPARE(img.pixel(lanes.left() + 1450 - int(t0), yProducer), bg);
    QCOMPARE(img.pixel(lanes.left() + 1500 - int(t0) - 1, yProducer), bg);
    QVERIFY(is(img.pixel(lanes.left() + 1500 - int(t0), yProducer), ws::IntervalKind::WaitSlot, true));
}

void TestFigureExport::deterministic()
{
    auto trace = makeTrace();
    FigureOptions o;
    o.size = QSize(1200, 700);
    o.range = qMakePair(ws::TimeNs(0), ws::TimeNs(4000));
    QByteArray h[2];
    for (int i = 0; i < 2; ++i) {
        o.out = path(QStringLiteral("det%1.png").arg(i));
        QString err;
        QVERIFY2(exportFigure(trace, o, &err), qPrintable(err));
        QFile f(o.out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        h[i] = QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
    }
    QCOMPARE(h[0], h[1]);
}

void TestFigureExport::svgAndPdf()
{
    auto trace = makeTrace();
    for (const QString ext : {QStringLiteral("svg"), QStringLiteral("pdf")}) {
        FigureOptions o;
        o.out = path(QStringLiteral("fig.") + ext);
        QString err;
        QVERIFY2(exportFigure(trace, o, &err), qPrintable(err));
        QFile f(o.out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray head = f.read(4096);
        if (ext == QLatin1String("svg")) {
            QVERIFY(head.contains("<svg"));
            QVERIFY(f.size() > 10000);
        } else {
            QVERIFY(head.startsWith("%PDF"));
        }
    }
}

void TestFigureExport::fromFile()
{
    const QString db = path(QStringLiteral("runs.warpstage"));
    ws::SyntheticParams p;
    p.ctas = 8;
    p.smCount = 8;
    p.kstepsPerTile = 16;
    ws::RowId runId = 0;
    {
        auto store = ws::TraceStore::openForWriting(db.toStdString());
        runId = store.writeRun(ws::generateSynthetic(p));
    }
    FigureOptions o;
    o.file = db;
    o.out = path(QStringLiteral("file.png"));
    o.size = QSize(1000, 600);
    o.lanes = QStringLiteral("sm:0-3");
    o.range = qMakePair(ws::TimeNs(0), ws::TimeNs(20000));
    QString err;
    QVERIFY2(exportFigure(o, &err), qPrintable(err));
    QCOMPARE(QImage(o.out).size(), QSize(1000, 600));
    o.runId = runId + 100;
    QVERIFY(!exportFigure(o, &err));
    QVERIFY2(err.contains(db) && err.contains(QString::number(runId + 100)), qPrintable(err));
}

void TestFigureExport::errors()
{
    auto trace = makeTrace();
    QString err;
    FigureOptions o;
    o.out = path(QStringLiteral("fig.bmpx"));
    QVERIFY(!exportFigure(trace, o, &err));
    QVERIFY2(err.contains(QStringLiteral("fig.bmpx")) && err.contains(QStringLiteral(".png")), qPrintable(err));
    o.out = path(QStringLiteral("no/such/dir/fig.png"));
    QVERIFY(!exportFigure(trace, o, &err));
    QVERIFY2(err.contains(QStringLiteral("no/such/dir/fig.png")), qPrintable(err));
    o.out = path(QStringLiteral("ok.png"));
    o.lanes = QStringLiteral("sm:1-x");
    QVERIFY(!exportFigure(trace, o, &err));
    QVERIFY2(err.contains(QStringLiteral("sm:1-x")), qPrintable(err));
    o.lanes.clear();
    o.range = qMakePair(ws::TimeNs(500), ws::TimeNs(100));
    QVERIFY(!exportFigure(trace, o, &err));
    QVERIFY2(err.contains(QStringLiteral("range")), qPrintable(err));
    o.range.reset();
    o.size = QSize(5, 5);
    QVERIFY(!exportFigure(trace, o, &err));
    QVERIFY2(err.contains(QStringLiteral("5x5")), qPrintable(err));
    FigureOptions f;
    f.file = path(QStringLiteral("missing.warpstage"));
    f.out = path(QStringLiteral("x.png"));
    QVERIFY(!exportFigure(f, &err));
    QVERIFY2(err.contains(QStringLiteral("missing.warpstage")), qPrintable(err));
    // not a Warpstage file: the store's message, naming the file
    const QString junk = path(QStringLiteral("junk.warpstage"));
    QFile j(junk);
    QVERIFY(j.open(QIODevice::WriteOnly));
    j.write("this is not sqlite");
    j.close();
    f.file = junk;
    QVERIFY(!exportFigure(f, &err));
    QVERIFY2(err.contains(QStringLiteral("junk.warpstage")), qPrintable(err));
}

QTEST_MAIN(TestFigureExport)
#include "tst_figureexport.moc"
