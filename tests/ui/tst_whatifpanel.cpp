// The what-if GUI (issue 13), offscreen: the what-if panel re-predicts when a parameter changes (and only the
// newest parameters are shown), the predicted timeline's ghost rows appear and disappear with their toggle
// and paint the predicted intervals, the critical path overlay outlines the path's segments on their lanes
// (one cause emphasised on request), the attribution bar's clicks, and the tour's what-if steps.
#include "timelinetestdata.h"

#include "attributionbar.h"
#include "teachingpanel.h"
#include "timelinepalette.h"
#include "timelineplottable.h"
#include "timelinesynthetic.h"
#include "timelinewidget.h"
#include "whatifengine.h"
#include "whatifpanel.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <warpstage/store.h>
#include <warpstage/synthetic.h>

#include "common/machine_clock.h"
#include <warpstage/whatif.h>

#include <atomic>
#include <thread>

using namespace tltest;
using ws::ui::GhostMode;
using ws::ui::PathCause;

namespace {

// A predictor whose answer is a known function of the parameters: fewer stages are slower, load latency and
// MMA scale their shares. Counts its calls; can be slowed down to test coalescing.
struct FakeReplay {
    std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
    int sleepMs = 0;
    ws::TimeNs measured = 10'000;
    ws::ui::Prediction operator()(const ws::ui::WhatIfParams &p, bool, const std::atomic<bool> * = nullptr) const
    {
        ++*calls;
        if (sleepMs)
            std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
        ws::ui::Prediction out;
        out.measuredNs = measured;
        const int stages = p.stages > 0 ? p.stages : 4;
        const double load = 3000 * p.loadLatency * 4.0 / stages, mma = 6000 * p.mmaTime, epi = 1000 * p.epilogueTime;
        out.predictedNs = ws::TimeNs(load + mma + epi);
        out.attribution.ns[std::size_t(PathCause::LoadLatency)] = load;
        out.attribution.ns[std::size_t(PathCause::Mma)] = mma;
        out.attribution.ns[std::size_t(PathCause::Epilogue)] = epi;
        return out;
    }
};

// The traced kernel of a synthetic multistage run (a worker kernel, one tile per CTA: not persistent), stored and
// read back as the viewer would.
std::shared_ptr<ws::KernelTrace> storedMultistageKernel(const QTemporaryDir &dir, int kstepsPerTile)
{
    const std::string path = dir.filePath(QStringLiteral("syn.wstrace")).toStdString();
    {
        ws::SyntheticParams sp;
        sp.pattern = ws::SyntheticPattern::Multistage;
        sp.ctas = 24;
        sp.smCount = 8;
        sp.kstepsPerTile = kstepsPerTile;
        sp.stallSamples = false;
        auto w = ws::TraceStore::openForWriting(path);
        w.writeRun(ws::generateSynthetic(sp));
    }
    auto trace = std::make_shared<ws::KernelTrace>();
    const auto r = ws::TraceStore::openReadOnly(path);
    for (const ws::KernelLaunch &k : r.kernels(r.runs()[0].id))
        if (k.traced)
            *trace = r.loadKernel(k.id);
    return trace;
}

std::shared_ptr<const ws::ui::Prediction> waitPrediction(ws::ui::WhatIfPanel &panel, QSignalSpy &spy, int before)
{
    if (!QTest::qWaitFor([&] { return spy.count() > before && !panel.busy(); }, 10000))
        return nullptr;  // the callers' QVERIFY(p) fails
    return panel.prediction();
}

// The measured trace's intervals shifted by `shift` ns and stretched by `scale`, one vector per lane.
std::vector<std::vector<ws::Interval>> shifted(const ws::KernelTrace &tr, ws::TimeNs shift, double scale)
{
    std::vector<std::vector<ws::Interval>> out(tr.lanes.size());
    for (std::size_t l = 0; l < tr.lanes.size(); ++l) {
        const ws::Lane &lane = tr.lanes[l];
        for (std::size_t i = 0; i < lane.size(); ++i) {
            ws::Interval iv;
            iv.kind = lane.kind[i];
            iv.start = kStart + shift + ws::TimeNs(double(lane.start[i] - kStart) * scale);
            iv.duration = ws::TimeNs(lane.duration[i] * scale);
            iv.slot = lane.slot[i];
            iv.kstep = lane.kstep[i];
            out[l].push_back(iv);
        }
    }
    return out;
}

int rowsOfType(const TimelineWidget &w, TimelineRow::Type t)
{
    int n = 0;
    for (const TimelineRow &r : w.plottable()->layout()->rows())
        n += r.type == t;
    return n;
}

}  // namespace

class TestWhatIfPanel : public QObject {
    Q_OBJECT
private slots:
    void panelPredictsAsRecordedFirst();
    void panelRepredictsOnChange();
    void panelShowsOnlyTheNewestOfQuickChanges();
    void panelRefusalAndUnavailable();
    void ghostRowsAppearAndDisappear();
    void ghostOverFramesTheLanes();
    void criticalPathOverlayHasThePathsSegments();
    void attributionBarClicks();
    void tourWhatIfSteps();
    void engineOnTheHandMadeKernel();
    void engineSharesOneGraph();
    void ghostIndexOnlyForTheDrawnLanes();
    void exportCarriesPathAndGhostLanes();
    void panelCloseDoesNotWaitForTheReplay();
    void panelHasEveryWhatIfOption();
    void panelTileOrderReachesTheReplay();

private:
    QImage render(TimelineWidget &w) const
    {
        w.plot()->replot(QCustomPlot::rpImmediateRefresh);
        return w.plot()->toPixmap(w.plot()->width(), w.plot()->height(), 1.0).toImage().convertToFormat(QImage::Format_RGB32);
    }
};

void TestWhatIfPanel::panelPredictsAsRecordedFirst()
{
    ws::ui::WhatIfPanel panel;
    QSignalSpy spy(&panel, &ws::ui::WhatIfPanel::predicted);
    FakeReplay fake;
    panel.setKernel(fake, fake.measured, 4, 132);
    const auto p = waitPrediction(panel, spy, 0);
    QVERIFY(p);
    QVERIFY(p->params.unchanged());  // the recorded stage and SM counts read as "as recorded"
    QCOMPARE(panel.stagesBox()->value(), 4);
    QCOMPARE(panel.smsBox()->value(), 132);
    QCOMPARE(p->predictedNs, ws::TimeNs(10'000));
    QVERIFY2(panel.resultText().contains(QStringLiteral("predicted")), qPrintable(panel.resultText()));
    QCOMPARE(panel.attributionBar()->attribution().total(), 10'000.0);
}

void TestWhatIfPanel::panelRepredictsOnChange()
{
    ws::ui::WhatIfPanel panel;
    panel.show();
    QSignalSpy spy(&panel, &ws::ui::WhatIfPanel::predicted);
    FakeReplay fake;
    panel.setKernel(fake, fake.measured, 4, 132);
    QVERIFY(waitPrediction(panel, spy, 0));
    const int calls = *fake.calls;

    // the stage slider, like a user's drag to 2 stages: slower (load latency doubles)
    int before = int(spy.count());
    panel.stagesSlider()->setValue(2);
    auto p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QCOMPARE(p->params.stages, 2);
    QCOMPARE(p->predictedNs, ws::TimeNs(6000 + 6000 + 1000));
    QCOMPARE(panel.attributionBar()->attribution().ns[std::size_t(PathCause::LoadLatency)], 6000.0);
    QVERIFY(*fake.calls > calls);

    // each control re-predicts with its own parameter
    before = int(spy.count());
    panel.mmaBox()->setValue(0.5);
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QCOMPARE(p->params.mmaTime, 0.5);
    QCOMPARE(p->predictedNs, ws::TimeNs(6000 + 3000 + 1000));
    before = int(spy.count());
    panel.loadLatencyBox()->setValue(0.5);
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QCOMPARE(p->predictedNs, ws::TimeNs(3000 + 3000 + 1000));
    before = int(spy.count());
    panel.overlapBox()->setChecked(true);
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QVERIFY(p->params.epilogueOverlapped);
    before = int(spy.count());
    panel.smsBox()->setValue(66);
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QCOMPARE(p->params.sms, 66);
    QVERIFY2(panel.resultText().contains(QStringLiteral("-30.0 %")), qPrintable(panel.resultText()));
    QVERIFY(panel.lastLatencyMs() >= 0);

    // back to as recorded: the unchanged replay again
    before = int(spy.count());
    panel.reset();
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QVERIFY(p->params.unchanged());
    QCOMPARE(p->predictedNs, ws::TimeNs(10'000));
}

void TestWhatIfPanel::panelShowsOnlyTheNewestOfQuickChanges()
{
    ws::ui::WhatIfPanel panel;
    QSignalSpy spy(&panel, &ws::ui::WhatIfPanel::predicted);
    FakeReplay fake;
    fake.sleepMs = 60;
    panel.setKernel(fake, fake.measured, 4, 132);
    // a drag across the slider while the first replay runs
    for (int s = 5; s <= 12; ++s)
        panel.stagesSlider()->setValue(s);
    QTRY_VERIFY_WITH_TIMEOUT(!panel.busy() && panel.prediction() && panel.prediction()->params.stages == 12, 10000);
    QTest::qWait(150);  // nothing else arrives later
    QCOMPARE(panel.prediction()->params.stages, 12);
    // the changes made while a replay ran were coalesced: far fewer replays than changes
    QVERIFY2(*fake.calls <= 3, qPrintable(QStringLiteral("%1 replays for 9 parameter sets").arg(int(*fake.calls))));
    // a result for parameters already superseded is never shown: the first replay (as recorded) finished
    // after the drag, so the only prediction shown is the newest one
    QVERIFY(spy.count() >= 1);
    for (const QList<QVariant> &args : spy)
        QCOMPARE(args.at(0).value<std::shared_ptr<const ws::ui::Prediction>>()->params.stages, 12);
}

void TestWhatIfPanel::panelRefusalAndUnavailable()
{
    ws::ui::WhatIfPanel panel;
    QSignalSpy spy(&panel, &ws::ui::WhatIfPanel::predicted);
    panel.setKernel(
        [](const ws::ui::WhatIfParams &, bool, const std::atomic<bool> *) {
            ws::ui::Prediction p;
            p.error = QStringLiteral("this kernel records no loads: no ring to replay");
            return p;
        },
        1000, 1, 1);
    QVERIFY(waitPrediction(panel, spy, 0));
    QVERIFY(panel.resultText().contains(QStringLiteral("no ring to replay")));
    QCOMPARE(panel.attributionBar()->attribution().total(), 0.0);
    panel.setUnavailable(QStringLiteral("no timeline"));
    QVERIFY(!panel.stagesBox()->isEnabled());
    QVERIFY(!panel.prediction());
}

void TestWhatIfPanel::ghostRowsAppearAndDisappear()
{
    TimelineWidget w;
    w.resize(1200, 700);
    w.show();
    auto tr = makeTrace(20);
    w.setTrace(tr);
    QVERIFY(w.waitForIndex());
    w.plottable()->setIntervalLabels(false);
    const QRect lane1Before = w.plottable()->laneRowRect(1), lane2Before = w.plottable()->laneRowRect(2);
    QCOMPARE(rowsOfType(w, TimelineRow::Ghost), 0);

    // the prediction: every interval 100 ns later, so the ghost is told apart from a copy of the lane
    auto ghost = ws::ui::GhostLanes::fromIntervals(*tr, shifted(*tr, 100, 1.0));
    QCOMPARE(ghost->lanes.size(), tr->lanes.size());
    QCOMPARE(ghost->end, tr->lastEnd() + 100);
    w.setGhostLanes(ghost, GhostMode::Beside);
    QCOMPARE(rowsOfType(w, TimelineRow::Ghost), 4);  // one under each of the 4 warp lanes
    // the ghost row sits right under its warp's row, and moves the rows below it down
    const auto &rows = w.plottable()->layout()->rows();
    const int r1 = w.plottable()->layout()->rowOfLane(1);
    QCOMPARE(rows[std::size_t(r1) + 1].type, TimelineRow::Ghost);
    QCOMPARE(rows[std::size_t(r1) + 1].lane, 1);
    QVERIFY(w.plottable()->laneRowRect(2).top() > lane1Before.bottom() + TimelineLayout::kGhostHeight);
    // the visible range grows to the prediction's end
    w.resetZoom();
    QVERIFY(w.visibleRange().second >= ghost->end);

    // pixels: the ghost row of the consumer (lane 1) paints a lighter MmaWait where the prediction has one
    w.setVisibleRange(kStart + 100, kStart + 1500);
    QImage img = render(w);
    const QRect ar = w.plottable()->lanesRect();
    const QRect laneRow = w.plottable()->laneRowRect(1);
    const TimelineRow &g = rows[std::size_t(r1) + 1];
    const int gy = ar.top() + g.top - 0 + g.height / 2;  // scroll is 0
    // predicted k-step 0 of the consumer: MmaWait at rel 200..280 + 100 = 300..380 (measured: WaitData there)
    const int x = int(std::lround(w.plot()->xAxis->coordToPixel(340)));
    const QColor mma = tlpalette::kindColor(ws::IntervalKind::MmaWait);
    const QColor got = img.pixelColor(x, gy);
    QVERIFY2(got != tlpalette::background() && got.lightness() > mma.lightness() && std::abs(got.hue() - mma.hue()) < 12,
             qPrintable(QStringLiteral("ghost pixel %1 for MmaWait %2").arg(got.name(), mma.name())));
    // where the measured lane has MmaWait (rel 200..280) the prediction has WaitData (rel 200..260)
    const int xm = int(std::lround(w.plot()->xAxis->coordToPixel(240)));
    QVERIFY(img.pixelColor(xm, laneRow.center().y()) == mma);
    QVERIFY(img.pixelColor(xm, gy) != img.pixelColor(x, gy));
    // a hover on the ghost row names the predicted interval
    const auto hit = w.plottable()->hitTest(QPointF(x, gy));
    QCOMPARE(hit.type, TimelineRow::Ghost);
    QVERIFY(hit.index >= 0);
    QCOMPARE(ghost->lanes[1].kind[std::size_t(hit.index)], ws::IntervalKind::MmaWait);

    // off: the rows go, the lanes are back where they were
    w.setGhostLanes(ghost, GhostMode::Off);
    QCOMPARE(rowsOfType(w, TimelineRow::Ghost), 0);
    QCOMPARE(w.plottable()->laneRowRect(1).top(), lane1Before.top());
    QCOMPARE(w.plottable()->laneRowRect(2).top(), lane2Before.top());
    // a new kernel drops the old prediction
    w.setGhostLanes(ghost, GhostMode::Beside);
    w.setTrace(makeTrace(10));
    QCOMPARE(rowsOfType(w, TimelineRow::Ghost), 0);
}

void TestWhatIfPanel::ghostOverFramesTheLanes()
{
    TimelineWidget w;
    w.resize(1200, 700);
    w.show();
    auto tr = makeTrace(20);
    w.setTrace(tr);
    QVERIFY(w.waitForIndex());
    w.plottable()->setIntervalLabels(false);
    w.setVisibleRange(kStart + 100, kStart + 1500);
    const QImage plain = render(w);
    auto ghost = ws::ui::GhostLanes::fromIntervals(*tr, shifted(*tr, 100, 1.0));
    w.setGhostLanes(ghost, GhostMode::Over);
    QCOMPARE(rowsOfType(w, TimelineRow::Ghost), 0);  // over: no extra rows
    const QImage over = render(w);
    const QRect row = w.plottable()->laneRowRect(1);
    const int x = int(std::lround(w.plot()->xAxis->coordToPixel(340)));  // predicted MmaWait, measured WaitData
    const QColor mma = tlpalette::kindColor(ws::IntervalKind::MmaWait);
    // the lane's top edge carries the predicted kind; its middle stays the measured one
    int framed = 0;
    for (int y = row.top(); y < row.top() + 5; ++y)
        framed += over.pixelColor(x, y) == mma;
    QVERIFY2(framed >= 2, qPrintable(QStringLiteral("%1 px of the predicted kind on the lane's top edge").arg(framed)));
    QCOMPARE(over.pixelColor(x, row.center().y()), plain.pixelColor(x, row.center().y()));
    QVERIFY(over.pixelColor(x, row.top() + 2) != plain.pixelColor(x, row.top() + 2));
}

void TestWhatIfPanel::criticalPathOverlayHasThePathsSegments()
{
    TimelineWidget w;
    w.resize(1200, 700);
    w.show();
    auto tr = makeTrace(20);
    w.setTrace(tr);
    QVERIFY(w.waitForIndex());
    w.setVisibleRange(kStart, kStart + 2000);
    // a path: CTA 0's consumer waits for data, computes, then the producer's slot wait, then CTA 1's consumer
    std::vector<ws::ui::PathSegment> path = {
        {1, kStart + 100, kStart + 160, PathCause::LoadLatency},
        {1, kStart + 160, kStart + 280, PathCause::Mma},
        {0, kStart + 300, kStart + 400, PathCause::BackPressure},
        {3, kStart + 500, kStart + 560, PathCause::LoadLatency},
        {3, kStart + 560, kStart + 680, PathCause::Mma},
        {3, kStart + 50'000, kStart + 50'100, PathCause::Mma},  // out of view
    };
    w.setCriticalPath(path);
    render(w);
    QVERIFY(w.plottable()->lastPathMarks().empty());  // hidden until toggled on
    w.setCriticalPathVisible(true);
    QImage img = render(w);
    const auto &marks = w.plottable()->lastPathMarks();
    QCOMPARE(int(marks.size()), 5);
    for (const auto &m : marks) {
        const ws::ui::PathSegment &s = w.criticalPath()[std::size_t(m.segment)];
        const QRect row = w.plottable()->laneRowRect(s.lane);
        QVERIFY(m.emphasised);
        QVERIFY2(m.rect.top() >= row.top() && m.rect.bottom() <= row.bottom() + 1,
                 qPrintable(QStringLiteral("segment %1 drawn outside its lane's row").arg(m.segment)));
        const double x0 = w.plot()->xAxis->coordToPixel(double(s.start - kStart));
        const double x1 = w.plot()->xAxis->coordToPixel(double(s.end - kStart));
        QVERIFY2(std::abs(m.rect.left() - x0) <= 1.5 && std::abs(m.rect.right() - x1) <= 1.5,
                 qPrintable(QStringLiteral("segment %1 at %2..%3 px, expected %4..%5")
                                .arg(m.segment).arg(m.rect.left()).arg(m.rect.right()).arg(x0).arg(x1)));
    }
    // the outline is drawn: dark pixels on the segment's left edge of lane 0's row
    const QRect row0 = w.plottable()->laneRowRect(0);
    const int xl = int(std::lround(w.plot()->xAxis->coordToPixel(300)));
    int dark = 0;
    for (int y = row0.top(); y <= row0.bottom(); ++y)
        dark += qGray(img.pixel(xl, y)) < 60 || qGray(img.pixel(xl + 1, y)) < 60;
    QVERIFY2(dark >= row0.height() / 2, qPrintable(QStringLiteral("%1 dark px on the outline's edge").arg(dark)));

    // one cause: its segments emphasised, the others dimmed
    w.setPathCause(int(PathCause::LoadLatency));
    render(w);
    int emph = 0;
    for (const auto &m : w.plottable()->lastPathMarks()) {
        const bool isLoad = w.criticalPath()[std::size_t(m.segment)].cause == PathCause::LoadLatency;
        QCOMPARE(m.emphasised, isLoad);
        emph += m.emphasised;
    }
    QCOMPARE(emph, 2);
    w.setPathCause(-1);
    w.setCriticalPathVisible(false);
    render(w);
    QVERIFY(w.plottable()->lastPathMarks().empty());
}

void TestWhatIfPanel::attributionBarClicks()
{
    ws::ui::AttributionBar bar;
    bar.resize(400, bar.sizeHint().height());
    bar.show();
    ws::ui::Attribution a;
    a.ns[std::size_t(PathCause::LoadLatency)] = 250;
    a.ns[std::size_t(PathCause::Mma)] = 500;
    a.ns[std::size_t(PathCause::Tail)] = 250;
    bar.setAttribution(a);
    QCOMPARE(a.share(PathCause::Mma), 0.5);
    // widths in proportion, in the cause order
    const QRect load = bar.segmentRect(PathCause::LoadLatency), mma = bar.segmentRect(PathCause::Mma),
                tail = bar.segmentRect(PathCause::Tail);
    QVERIFY(bar.segmentRect(PathCause::Epilogue).isEmpty());
    QVERIFY(load.right() < mma.left() && mma.right() < tail.left());
    QVERIFY(std::abs(mma.width() - 2 * load.width()) <= 2);
    QSignalSpy spy(&bar, &ws::ui::AttributionBar::causeClicked);
    QTest::mouseClick(&bar, Qt::LeftButton, {}, mma.center());
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.last().at(0).toInt(), int(PathCause::Mma));
    QCOMPARE(bar.selectedCause(), int(PathCause::Mma));
    QTest::mouseClick(&bar, Qt::LeftButton, {}, tail.center());
    QCOMPARE(spy.last().at(0).toInt(), int(PathCause::Tail));
    QTest::mouseClick(&bar, Qt::LeftButton, {}, tail.center());  // again: cleared
    QCOMPARE(spy.last().at(0).toInt(), -1);
    QCOMPARE(bar.selectedCause(), -1);
}

void TestWhatIfPanel::tourWhatIfSteps()
{
    // every rung of the ladder has a what-if step that suggests a change
    for (const char *rung : {"sync", "tma_sync", "multistage", "warp_specialized", "cooperative", "pingpong"}) {
        const auto st = ws::ui::whatIfStep(QString::fromLatin1(rung));
        QVERIFY2(!st.markdown.isEmpty(), rung);
        QVERIFY2(!st.params.unchanged(), rung);
        QVERIFY2(!st.markdown.contains(QStringLiteral("<!--")), rung);  // the parameter line is not shown
        QVERIFY2(st.markdown.startsWith(QStringLiteral("# What if")), rung);
    }
    // more stages than the 4 recorded: a worker kernel's replay cannot issue its loads later, only earlier
    QCOMPARE(ws::ui::whatIfStep(QStringLiteral("multistage")).params.stages, 6);
    QCOMPARE(ws::ui::whatIfStep(QStringLiteral("sync")).params.loadLatency, 0.5);
    QVERIFY(ws::ui::whatIfStep(QStringLiteral("cooperative")).params.epilogueOverlapped);
    QVERIFY(ws::ui::whatIfStep(QStringLiteral("no_such_rung")).markdown.isEmpty());

    ws::ui::TeachingPanel tp;
    QSignalSpy spy(&tp, &ws::ui::TeachingPanel::whatIfRequested);
    tp.setRung(QStringLiteral("warp_specialized"));
    QVERIFY(tp.showWhatIf());
    QVERIFY(tp.whatIfShown());
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.last().at(0).toString(), QStringLiteral("warp_specialized"));
    QCOMPARE(spy.last().at(1).value<ws::ui::WhatIfParams>().stages, 2);
    QVERIFY(tp.text().contains(QStringLiteral("bubbles")));
    tp.next();  // the tour goes on to the next rung, with its own text
    QVERIFY(!tp.whatIfShown());
    QCOMPARE(tp.rung(), QStringLiteral("cooperative"));
    tp.setRung(QStringLiteral("not_a_rung"));
    QVERIFY(!tp.showWhatIf());
    QCOMPARE(spy.count(), 1);
}

void TestWhatIfPanel::engineOnTheHandMadeKernel()
{
    // the real bridge to core (whatifengine.cpp) on the hand-made kernel: the path lies on its lanes, its
    // attribution adds up to the kernel time, and the unchanged replay reproduces it with a ghost lane per lane
    auto tr = makeTrace(20);
    const auto path = ws::ui::analyzeCriticalPath(*tr);
    QVERIFY(path);
    QVERIFY(!path->segments.empty());
    const double kernelNs = double(tr->launch.end - tr->launch.start);
    QCOMPARE(path->measuredNs, tr->launch.end - tr->launch.start);
    QVERIFY2(std::abs(path->attribution.total() - kernelNs) < 1.0,
             qPrintable(QStringLiteral("attribution %1 ns for a %2 ns kernel").arg(path->attribution.total()).arg(kernelNs)));
    for (const auto &s : path->segments) {
        QVERIFY(s.lane >= -1 && s.lane < int(tr->lanes.size()));
        QVERIFY(s.end > s.start);
        QVERIFY(s.start >= tr->launch.start && s.end <= tr->launch.end);
    }
    QCOMPARE(ws::ui::recordedStages(*tr), 4);
    QCOMPARE(ws::ui::recordedSms(*tr), 2);

    const auto predict = ws::ui::makePredictor(tr);
    const ws::ui::Prediction same = predict(ws::ui::WhatIfParams{}, true, nullptr);
    QVERIFY2(same.error.isEmpty(), qPrintable(same.error));
    QCOMPARE(same.predictedNs, same.measuredNs);
    QVERIFY(same.ghost);
    QCOMPARE(same.ghost->lanes.size(), tr->lanes.size());
    QCOMPARE(same.ghost->lanes[1].size(), tr->lanes[1].size());
    QCOMPARE(same.ghost->indexedLanes(), std::size_t(0));  // each lane's index waits until it is drawn
    // without the timeline, no ghost lanes are made
    QVERIFY(!predict(ws::ui::WhatIfParams{}, false, nullptr).ghost);
    // bad parameters are refused with core's message, not a crash
    ws::ui::WhatIfParams bad;
    bad.stages = 1000;
    QVERIFY(!predict(bad, false, nullptr).error.isEmpty());
}

void TestWhatIfPanel::panelTileOrderReachesTheReplay()
{
    // --tile-order (s8-wimodel) as a control: the panel sends the chosen order, "As recorded" takes it back
    ws::ui::WhatIfPanel panel;
    QSignalSpy spy(&panel, &ws::ui::WhatIfPanel::predicted);
    FakeReplay fake;
    panel.setKernel(fake, fake.measured, 4, 132);
    QVERIFY(waitPrediction(panel, spy, 0));
    QCOMPARE(panel.tileOrderBox()->count(), 5);
    QCOMPARE(panel.tileOrderBox()->currentText(), QStringLiteral("recorded"));
    int before = int(spy.count());
    panel.tileOrderBox()->setCurrentIndex(panel.tileOrderBox()->findText(QStringLiteral("longest-first")));
    auto p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QCOMPARE(p->params.tileOrder, int(ws::TileOrder::LongestFirst));
    QVERIFY(!p->params.unchanged());
    before = int(spy.count());
    panel.reset();
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QVERIFY(p->params.unchanged());
    QCOMPARE(panel.tileOrderBox()->currentText(), QStringLiteral("recorded"));

    // the engine hands it to core: on a kernel that is not persistent core answers with its note, as the CLI does
    QTemporaryDir dir;
    const auto trace = storedMultistageKernel(dir, 8);  // one tile per CTA: not persistent
    QVERIFY(trace->intervalCount() > 0);
    ws::ui::WhatIfKernel kernel(trace);
    ws::ui::WhatIfParams u;
    QVERIFY2(!kernel.predict(u, false).note.contains(QStringLiteral("--tile-order")),
             qPrintable(kernel.predict(u, false).note));
    u.tileOrder = int(ws::TileOrder::Reverse);
    const QString note = kernel.predict(u, false).note;
    QVERIFY2(note.contains(QStringLiteral("--tile-order")) && note.contains(QStringLiteral("not persistent")),
             qPrintable(note));
}

QTEST_MAIN(TestWhatIfPanel)
#include "tst_whatifpanel.moc"

void TestWhatIfPanel::engineSharesOneGraph()
{
    // the main window asks one WhatIfKernel for the critical path and for the panel's replays: the path it
    // gives after replays with other parameters (the model's scratch arrays reused) is the measured kernel's,
    // the same as a fresh model's
    auto tr = makeTrace(20);
    auto kernel = std::make_shared<ws::ui::WhatIfKernel>(tr);
    ws::ui::WhatIfParams two;
    two.stages = 2;
    two.mmaTime = 2.0;
    const ws::ui::Prediction slower = kernel->predict(two, true);
    QVERIFY2(slower.error.isEmpty(), qPrintable(slower.error));
    QVERIFY(slower.predictedNs > slower.measuredNs);
    const auto path = kernel->criticalPath();
    const auto fresh = ws::ui::analyzeCriticalPath(*tr);
    QVERIFY(path && fresh);
    QCOMPARE(path->segments.size(), fresh->segments.size());
    for (std::size_t i = 0; i < path->segments.size(); ++i) {
        QCOMPARE(path->segments[i].lane, fresh->segments[i].lane);
        QCOMPARE(path->segments[i].start, fresh->segments[i].start);
        QCOMPARE(path->segments[i].end, fresh->segments[i].end);
        QCOMPARE(path->segments[i].cause, fresh->segments[i].cause);
    }
    QCOMPARE(path->attribution.total(), fresh->attribution.total());
    // and a replay after the path gives what it gave before
    QCOMPARE(kernel->predict(two, false).predictedNs, slower.predictedNs);
    const auto t = kernel->lastTiming();
    QVERIFY(t.replayMs >= 0 && t.pathMs >= 0 && t.buildMs > 0);
}

void TestWhatIfPanel::ghostIndexOnlyForTheDrawnLanes()
{
    // a prediction hands over every lane; only the lanes drawn get their index (on the first draw), and the
    // pixels are the same as with every lane's index built up front
    ws::SyntheticParams sp;
    sp.pattern = ws::SyntheticPattern::WarpSpecialized;
    sp.targetIntervals = 60'000;
    sp.stallSamples = false;
    auto tr = syntheticKernelTrace(sp);
    QVERIFY(tr->lanes.size() > 100);
    TimelineWidget w;
    w.resize(1200, 600);
    w.show();
    w.setTrace(tr);
    QVERIFY(w.waitForIndex());
    w.plottable()->setIntervalLabels(false);
    ws::ui::WhatIfKernel kernel(tr);
    ws::ui::WhatIfParams p;
    p.loadLatency = 1.6;
    const ws::ui::Prediction pred = kernel.predict(p, true);
    QVERIFY2(pred.error.isEmpty() && pred.ghost, qPrintable(pred.error));
    QCOMPARE(pred.ghost->indexedLanes(), std::size_t(0));
    w.setGhostLanes(pred.ghost, GhostMode::Beside);
    const QImage lazy = render(w);
    const std::size_t built = pred.ghost->indexedLanes();
    QVERIFY2(built > 0 && built * 4 < tr->lanes.size(),
             qPrintable(QStringLiteral("%1 of %2 lanes indexed").arg(built).arg(tr->lanes.size())));

    auto full = std::make_shared<ws::ui::GhostLanes>();
    full->lanes = pred.ghost->lanes;
    full->start = pred.ghost->start;
    full->end = pred.ghost->end;
    full->buildIndex();
    QCOMPARE(full->indexedLanes(), tr->lanes.size());
    w.setGhostLanes(full, GhostMode::Beside);
    const QImage eager = render(w);
    QCOMPARE(lazy.size(), eager.size());
    QVERIFY(lazy == eager);
    // zoomed in on a part: the same pixels again
    w.setVisibleRange(tr->launch.start + 2000, tr->launch.start + 6000);
    const QImage eagerZoom = render(w);
    w.setGhostLanes(pred.ghost, GhostMode::Beside);
    QVERIFY(render(w) == eagerZoom);
}

void TestWhatIfPanel::exportCarriesPathAndGhostLanes()
{
    // File > Export image draws what the timeline shows: the ghost rows and the critical path go into the
    // PNG / SVG too (a fresh, never-shown copy of the widget is what gets drawn)
    TimelineWidget w;
    w.resize(1200, 700);
    w.show();
    auto tr = makeTrace(20);
    w.setTrace(tr);
    QVERIFY(w.waitForIndex());
    w.setVisibleRange(kStart, kStart + 2000);
    const QSize size(1200, 700);
    const QImage plain = w.renderImage(size, 96, QString());
    auto gold = [](const QImage &img) {
        int n = 0;
        const QImage rgb = img.convertToFormat(QImage::Format_RGB32);
        for (int y = 0; y < rgb.height(); ++y)
            for (int x = 0; x < rgb.width(); ++x)
                n += (rgb.pixel(x, y) & 0xFFFFFF) == 0xFFC800;
        return n;
    };
    QCOMPARE(gold(plain), 0);
    w.setCriticalPath({{1, kStart + 100, kStart + 160, PathCause::LoadLatency}, {1, kStart + 160, kStart + 280, PathCause::Mma}});
    w.setCriticalPathVisible(true);
    const QImage withPath = w.renderImage(size, 96, QString());
    QVERIFY2(gold(withPath) > 50, qPrintable(QStringLiteral("%1 px of the path's band").arg(gold(withPath))));

    QTemporaryDir dir;
    auto predictedRows = [&](const QString &name) {
        const QString svg = dir.filePath(name);
        QString err;
        if (!w.exportImage(svg, size, 96, QStringLiteral("t"), &err))
            return -1;
        QFile f(svg);
        if (!f.open(QIODevice::ReadOnly))
            return -1;
        return int(f.readAll().count(">predicted<"));
    };
    QCOMPARE(predictedRows(QStringLiteral("none.svg")), 0);
    auto ghost = ws::ui::GhostLanes::fromIntervals(*tr, shifted(*tr, 100, 1.0));
    w.setGhostLanes(ghost, GhostMode::Beside);
    QCOMPARE(rowsOfType(w, TimelineRow::Ghost), 4);
    QCOMPARE(predictedRows(QStringLiteral("beside.svg")), 4);  // a labelled ghost row under each warp
    const QImage both = w.renderImage(size, 96, QString());
    QVERIFY(gold(both) > 50);
    QVERIFY(both != withPath);
    w.setGhostLanes(ghost, GhostMode::Over);
    QCOMPARE(predictedRows(QStringLiteral("over.svg")), 0);
    QVERIFY(w.renderImage(size, 96, QString()) != withPath);  // the frames over the lanes
}

void TestWhatIfPanel::panelCloseDoesNotWaitForTheReplay()
{
    // A replay that sees its cancel flag but goes on for 2 s anyway (like a long model build): closing the panel
    // while it runs returns at once (it used to wait 11-22 s for the sync rung) and tells the replay to stop.
    struct State {
        std::atomic<bool> started{false}, sawCancel{false}, done{false};
    };
    auto st = std::make_shared<State>();
    auto *panel = new ws::ui::WhatIfPanel;
    panel->setKernel(
        [st](const ws::ui::WhatIfParams &, bool, const std::atomic<bool> *cancel) {
            st->started = true;
            QElapsedTimer t;
            t.start();
            while (t.elapsed() < 2000) {
                if (cancel && cancel->load())
                    st->sawCancel = true;
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            st->done = true;
            return ws::ui::Prediction{};
        },
        1000, 4, 132);
    QTRY_VERIFY_WITH_TIMEOUT(st->started.load(), 10000);
    QVERIFY(panel->busy());
    // wall time less the GUI thread's wait for a CPU (Linux schedstat; 0 elsewhere): the close itself, busy or
    // blocked, whatever the machine's load
    const double waited0 = std::max(0.0, wstest::runQueueWaitMs());
    QElapsedTimer t;
    t.start();
    delete panel;
    const double closeMs = double(t.nsecsElapsed()) / 1e6 - (std::max(0.0, wstest::runQueueWaitMs()) - waited0);
    QVERIFY2(closeMs < 500, qPrintable(QStringLiteral("closing the panel took %1 ms").arg(closeMs)));
    QTRY_VERIFY_WITH_TIMEOUT(st->sawCancel.load(), 1500);  // the running replay was told to stop
    QTRY_VERIFY_WITH_TIMEOUT(st->done.load(), 10000);      // it ends on its own (the pool is free for the next test)

    // the real engine: a cancelled replay stops with an error instead of an answer
    auto kernel = std::make_shared<ws::ui::WhatIfKernel>(makeTrace(20));
    const std::atomic<bool> cancelled{true};
    const ws::ui::Prediction p = kernel->predict(ws::ui::WhatIfParams{}, true, &cancelled);
    QVERIFY2(p.error.contains(QStringLiteral("cancelled")), qPrintable(p.error));
    QVERIFY(!p.ghost);
    QVERIFY(kernel->predict(ws::ui::WhatIfParams{}, false).error.isEmpty());  // the next one answers
}

void TestWhatIfPanel::panelHasEveryWhatIfOption()
{
    // the options of `warpstage whatif` the panel lacked: --ctas-per-sm, --no-sync, --producer-warp and
    // --no-shared-resources, each a control that re-predicts with it, back to as recorded with "As recorded"
    ws::ui::WhatIfPanel panel;
    QSignalSpy spy(&panel, &ws::ui::WhatIfPanel::predicted);
    FakeReplay fake;
    panel.setKernel(fake, fake.measured, 4, 132);
    QVERIFY(waitPrediction(panel, spy, 0));
    QVERIFY(panel.sharedResourcesBox()->isChecked());
    QCOMPARE(panel.ctasPerSmBox()->value(), 0);
    QVERIFY(!panel.noSyncBox()->isChecked() && !panel.producerWarpBox()->isChecked());
    int before = int(spy.count());
    panel.sharedResourcesBox()->setChecked(false);
    auto p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QVERIFY(!p->params.sharedResources);
    QVERIFY(!p->params.unchanged());
    before = int(spy.count());
    panel.ctasPerSmBox()->setValue(2);
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QCOMPARE(p->params.ctasPerSm, 2);
    before = int(spy.count());
    panel.noSyncBox()->setChecked(true);
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QVERIFY(p->params.noSync);
    before = int(spy.count());
    panel.producerWarpBox()->setChecked(true);
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QVERIFY(p->params.producerWarp);
    // the load-bandwidth model is opt-in (session 9): unticked by default, ticking it is `--load-bandwidth`
    QVERIFY(!ws::ui::WhatIfParams{}.loadBandwidth);
    QVERIFY(!panel.loadBandwidthBox()->isChecked());
    QVERIFY(panel.loadBandwidthBox()->toolTip().contains(QStringLiteral("--load-bandwidth")));
    before = int(spy.count());
    panel.loadBandwidthBox()->setChecked(true);
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QVERIFY(p->params.loadBandwidth);
    before = int(spy.count());
    panel.reset();
    p = waitPrediction(panel, spy, before);
    QVERIFY(p);
    QVERIFY(p->params.unchanged());
    QVERIFY(panel.sharedResourcesBox()->isChecked() && !panel.noSyncBox()->isChecked()
            && !panel.producerWarpBox()->isChecked() && panel.ctasPerSmBox()->value() == 0
            && !panel.loadBandwidthBox()->isChecked());

    // the engine hands each one to core: the same answer as core's replay with the CLI's option
    QTemporaryDir dir;
    const auto trace = storedMultistageKernel(dir, 16);  // a worker kernel: --no-sync and --producer-warp apply
    QVERIFY(trace->intervalCount() > 0);
    const ws::WhatIfModel core = ws::WhatIfModel::build(*trace);
    ws::ui::WhatIfKernel kernel(trace);
    ws::WhatIfParams c;
    ws::ui::WhatIfParams u;
    c.mma = u.mmaTime = 0.5;
    c.slotsPerSm = u.ctasPerSm = 3;
    const ws::TimeNs withResources = core.predict(c, false).predictedNs;
    QCOMPARE(kernel.predict(u, false).predictedNs, withResources);
    c.sharedResources = u.sharedResources = false;
    QVERIFY(core.predict(c, false).predictedNs != withResources);  // the option matters on this kernel
    QCOMPARE(kernel.predict(u, false).predictedNs, core.predict(c, false).predictedNs);
    c.dropCtaSync = u.noSync = true;
    QCOMPARE(kernel.predict(u, false).predictedNs, core.predict(c, false).predictedNs);
    c.producerWarp = u.producerWarp = true;
    QCOMPARE(kernel.predict(u, false).predictedNs, core.predict(c, false).predictedNs);
    ws::WhatIfParams c2 = c;
    c2.dropCtaSync = false;
    c2.producerWarp = false;
    QVERIFY(core.predict(c, false).predictedNs != core.predict(c2, false).predictedNs);
}
