// whatif_ui_bench: how fast the what-if panel re-predicts (issue 13: <= 100 ms for a 1M-interval kernel).
//
//   QT_QPA_PLATFORM=offscreen whatif_ui_bench [--intervals 1150000] [--changes 40] [--drags 10]
//   QT_QPA_PLATFORM=offscreen whatif_ui_bench --file ladder.wstrace [--rung warp_specialized] [--changes 40]
//
// On a synthetic warp-specialized kernel of that many intervals (or the first traced kernel of a rung in a
// file), in the real WhatIfPanel bound to the real predictor (ui/whatifengine.cpp over core's WhatIfModel) and
// wired to a real TimelineWidget (1400x900, offscreen) as the main window wires them:
//   * first prediction: setKernel() -> result shown (includes building the dependency graph);
//   * re-predict: one control moved (stages 2..8, load latency, MMA ×) -> ghost lanes drawn (the timeline's
//     replot after the prediction arrived), without and with the predicted timeline, split into the worker's
//     replay / critical path / predicted timeline (core) / ghost lanes (model-to-view) and the GUI thread's
//     hand-over (setGhostLanes) and repaint (the replot that rasterizes the lanes);
//   * drag: a slider dragged over 12 values at 60 Hz (one move per 16 ms) -> how many replays ran (the panel
//     coalesces: a move made while one runs waits, only the newest runs next) and the time from the last move
//     to its ghost lanes drawn.
// The worker thread's CPU time is printed too: on a shared machine the wall clock mostly measures the other
// processes. Prints median / p95 / max per case (docs/benchmarks.md, "What-if panel").
#include "timelineplottable.h"
#include "timelinesynthetic.h"
#include "timelinewidget.h"
#include "whatifengine.h"
#include "whatifpanel.h"

#include <warpstage/store.h>

#include <qcustomplot.h>

#include <QApplication>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QSpinBox>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <vector>

namespace {

struct Stats {
    double median = 0, p95 = 0, max = 0;
};
Stats stats(std::vector<double> v)
{
    Stats s;
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    s.median = v[v.size() / 2];
    s.p95 = v[std::min(v.size() - 1, v.size() * 95 / 100)];
    s.max = v.back();
    return s;
}

double loadAverage()
{
    std::ifstream f("/proc/loadavg");
    double l = -1;
    f >> l;
    return l;
}

// The main window's wiring (mainwindow_whatif.cpp) plus clocks: a prediction shown -> setGhostLanes -> the
// queued replot that draws it.
struct Rig {
    ws::ui::WhatIfPanel* panel = nullptr;
    TimelineWidget* tl = nullptr;
    QElapsedTimer clock;          // since the last control move
    bool waiting = false;         // a prediction was shown, its replot not seen yet
    int drawn = 0;                // replots after a prediction
    double shownMs = 0, handMs = 0, drawnMs = 0, rasterMs = 0;
};

bool waitDrawn(Rig& rig, int before, int timeoutMs = 60000)
{
    QEventLoop loop;
    QTimer timeout;
    timeout.setSingleShot(true);
    QObject::connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (rig.drawn > before && !rig.panel->busy())
            loop.quit();
    });
    poll.start(1);
    timeout.start(timeoutMs);
    loop.exec();
    return rig.drawn > before;
}

}  // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    const QStringList args = app.arguments();
    qint64 intervals = 1'150'000;
    int changes = 40, drags = 10;
    QString file, rung = QStringLiteral("warp_specialized");
    for (int i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--intervals"))
            intervals = args[++i].toLongLong();
        else if (args[i] == QLatin1String("--changes"))
            changes = args[++i].toInt();
        else if (args[i] == QLatin1String("--drags"))
            drags = args[++i].toInt();
        else if (args[i] == QLatin1String("--file"))
            file = args[++i];
        else if (args[i] == QLatin1String("--rung"))
            rung = args[++i];
    }
    // --eager-index: every ghost lane's index built on the worker with the prediction (what the viewer did before
    // session 7) instead of when a lane is first drawn
    const bool eager = args.contains(QLatin1String("--eager-index"));
    std::shared_ptr<ws::KernelTrace> trace;
    if (!file.isEmpty()) {
        const ws::TraceStore store = ws::TraceStore::openReadOnly(file.toStdString());
        for (const ws::RunInfo& r : store.runs()) {
            for (const ws::KernelLaunch& k : store.kernels(r.id))
                if (k.traced && QString::fromStdString(k.variant) == rung) {
                    trace = std::make_shared<ws::KernelTrace>(store.loadKernel(k.id));
                    break;
                }
            if (trace)
                break;
        }
        if (!trace) {
            std::fprintf(stderr, "whatif_ui_bench: no traced kernel of rung %s in %s\n", qPrintable(rung), qPrintable(file));
            return 2;
        }
    } else {
        ws::SyntheticParams p;
        p.pattern = ws::SyntheticPattern::WarpSpecialized;
        p.targetIntervals = intervals;
        p.stallSamples = false;
        trace = syntheticKernelTrace(p);
    }
    std::printf("kernel: %s, %zu intervals, %zu lanes, %zu CTAs; load average %.1f\n", trace->launch.variant.c_str(),
                trace->intervalCount(), trace->lanes.size(), trace->ctas.size(), loadAverage());

    TimelineWidget tl;
    tl.resize(1400, 900);
    tl.show();
    tl.setTrace(trace);
    if (!tl.waitForIndex(120000)) {
        std::fprintf(stderr, "whatif_ui_bench: the timeline's index did not finish\n");
        return 1;
    }
    ws::ui::WhatIfPanel panel;
    panel.resize(420, 600);
    panel.show();
    Rig rig;
    rig.panel = &panel;
    rig.tl = &tl;
    QObject::connect(&panel, &ws::ui::WhatIfPanel::predicted, &tl, [&](std::shared_ptr<const ws::ui::Prediction> p) {
        rig.shownMs = double(rig.clock.nsecsElapsed()) / 1e6;
        QElapsedTimer h;
        h.start();
        tl.setGhostLanes(p ? p->ghost : nullptr, panel.ghostMode());
        rig.handMs = double(h.nsecsElapsed()) / 1e6;
        rig.waiting = true;
    });
    QObject::connect(tl.plot(), &QCustomPlot::afterReplot, &tl, [&] {
        if (!rig.waiting)
            return;
        rig.waiting = false;
        rig.drawnMs = double(rig.clock.nsecsElapsed()) / 1e6;
        rig.rasterMs = tl.plottable()->lastRasterMs();
        ++rig.drawn;
    });

    auto kernel = std::make_shared<ws::ui::WhatIfKernel>(trace);
    rig.clock.start();
    auto predictor = ws::ui::makePredictor(kernel);
    std::vector<double> eagerMs;
    if (eager)
        predictor = [predictor, &eagerMs](const ws::ui::WhatIfParams& p, bool timeline, const std::atomic<bool>* cancel) {
            ws::ui::Prediction out = predictor(p, timeline, cancel);
            if (out.ghost) {
                QElapsedTimer t;
                t.start();
                std::const_pointer_cast<ws::ui::GhostLanes>(out.ghost)->buildIndex();
                eagerMs.push_back(double(t.nsecsElapsed()) / 1e6);
            }
            return out;
        };
    panel.setKernel(predictor, trace->launch.end - trace->launch.start, ws::ui::recordedStages(*trace),
                    ws::ui::recordedSms(*trace));
    if (!waitDrawn(rig, 0)) {
        std::fprintf(stderr, "whatif_ui_bench: no first prediction\n");
        return 1;
    }
    if (const auto p = panel.prediction(); p && !p->error.isEmpty()) {
        std::fprintf(stderr, "whatif_ui_bench: the replay refused: %s\n", qPrintable(p->error));
        return 1;
    }
    std::printf("first prediction (graph build %.0f ms + replay): %.1f ms to shown; as recorded: measured %lld ns, "
                "predicted %lld ns\n",
                kernel->lastTiming().buildMs, rig.shownMs, (long long)panel.prediction()->measuredNs,
                (long long)panel.prediction()->predictedNs);

    auto move = [&](int i) {
        switch (i % 3) {
        case 0: panel.stagesBox()->setValue(2 + (i / 3) % 7); break;
        case 1: panel.loadLatencyBox()->setValue(0.5 + 0.1 * ((i / 3) % 10)); break;
        default: panel.mmaBox()->setValue(0.6 + 0.1 * ((i / 3) % 8)); break;
        }
    };
    std::printf("\n| re-predict (%s) | changes | to drawn p50 ms | p95 | max | to shown p50 | replay p50 | path p50 | "
                "timeline p50 | ghost p50 | hand-over p50 | repaint p50 | repaint p95 | worker CPU p50 | CPU p95 |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                trace->launch.variant.c_str());
    auto run = [&](bool ghost) {
        panel.setGhostMode(ghost ? ws::ui::GhostMode::Beside : ws::ui::GhostMode::Off);
        waitDrawn(rig, rig.drawn - 1, 60000);  // the shown prediction made with its timeline, if it lacked one
        std::vector<double> drawn, shown, replay, path, timeline, ghostMs, hand, raster, cpu;
        for (int i = 0; i < changes; ++i) {
            const int before = rig.drawn;
            rig.clock.start();
            move(i);
            if (!waitDrawn(rig, before))
                break;
            const ws::ui::WhatIfKernel::Timing t = kernel->lastTiming();
            drawn.push_back(rig.drawnMs);
            shown.push_back(rig.shownMs);
            replay.push_back(t.replayMs);
            path.push_back(t.pathMs);
            timeline.push_back(t.timelineMs);
            ghostMs.push_back(t.ghostMs);
            hand.push_back(rig.handMs);
            raster.push_back(rig.drawnMs - rig.shownMs - rig.handMs);
            cpu.push_back(panel.prediction()->computeCpuMs);
        }
        const Stats d = stats(drawn), r = stats(raster), c = stats(cpu);
        std::printf("| %s | %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
                    ghost ? "with ghost lanes" : "without ghost lanes", drawn.size(), d.median, d.p95, d.max,
                    stats(shown).median, stats(replay).median, stats(path).median, stats(timeline).median,
                    stats(ghostMs).median, stats(hand).median, r.median, r.p95, c.median, c.p95);
    };
    run(false);
    run(true);
    if (eager)
        std::printf("(--eager-index: every ghost lane indexed on the worker, median %.1f ms)\n", stats(eagerMs).median);

    // Drags: 12 moves of the load-latency slider, one per 16 ms, ghost lanes on.
    std::vector<double> lastToDrawn, runsPerDrag;
    for (int dIdx = 0; dIdx < drags; ++dIdx) {
        const int runsBefore = panel.predictionsRun();
        const int drawnBefore = rig.drawn;
        for (int k = 0; k < 12; ++k) {
            const double v = 0.5 + 0.05 * ((dIdx * 12 + k) % 30);
            if (k == 11)
                rig.clock.start();
            (dIdx % 2 ? panel.mmaBox() : panel.loadLatencyBox())->setValue(v);
            if (k < 11) {
                QEventLoop l;
                QTimer::singleShot(16, &l, &QEventLoop::quit);
                l.exec();
            }
        }
        // wait until the newest parameters are drawn
        const ws::ui::WhatIfParams want = panel.params();
        QElapsedTimer guard;
        guard.start();
        while (guard.elapsed() < 60000) {
            if (rig.drawn > drawnBefore && panel.prediction() && panel.prediction()->params == want && !panel.busy()
                && !rig.waiting)
                break;
            waitDrawn(rig, rig.drawn, 5000);
        }
        lastToDrawn.push_back(rig.drawnMs);
        runsPerDrag.push_back(double(panel.predictionsRun() - runsBefore));
    }
    const Stats l = stats(lastToDrawn), rr = stats(runsPerDrag);
    std::printf("\ndrag (12 moves at 60 Hz, ghost lanes on), %d drags: predictions shown per drag median %.0f (max %.0f); "
                "last move -> drawn p50 %.1f ms, p95 %.1f ms, max %.1f ms; load average %.1f\n",
                drags, rr.median, rr.max, l.median, l.p95, l.max, loadAverage());
    return 0;
}
