// whatif_ui_bench: how fast the what-if panel re-predicts (issue 13: <= 100 ms for a 1M-interval kernel).
//
//   QT_QPA_PLATFORM=offscreen whatif_ui_bench [--intervals 1000000] [--changes 40]
//   QT_QPA_PLATFORM=offscreen whatif_ui_bench --file ladder.wstrace [--rung warp_specialized] [--changes 40]
//
// On a synthetic warp-specialized kernel of that many intervals (or the first traced kernel of a rung in a
// file), in the real WhatIfPanel bound to the real predictor (ui/whatifengine.cpp over core's WhatIfModel):
//   * first prediction: setKernel() -> result shown (includes building the dependency graph);
//   * re-predict: one control moved (stages 2..8, load latency, MMA ×) -> result shown, as the panel measures
//     it (WhatIfPanel::lastLatencyMs: the change's time to the shown result), without and with the predicted
//     timeline (ghost lanes: the predicted lanes and their LOD index are built too).
// The replay's CPU time (the worker thread's) is printed too: on a shared machine the wall clock mostly
// measures the other processes. Prints median / p95 / max per case (docs/benchmarks.md, "What-if panel").
#include "timelinesynthetic.h"
#include "whatifengine.h"
#include "whatifpanel.h"

#include <warpstage/store.h>

#include <QApplication>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QSpinBox>
#include <QTimer>

#include <algorithm>
#include <cstdio>
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

bool waitShown(ws::ui::WhatIfPanel& panel, int before, int timeoutMs = 60000)
{
    QEventLoop loop;
    QTimer timeout;
    timeout.setSingleShot(true);
    QObject::connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
    QObject::connect(&panel, &ws::ui::WhatIfPanel::predicted, &loop, [&] {
        if (panel.predictionsRun() > before && !panel.busy())
            loop.quit();
    });
    timeout.start(timeoutMs);
    if (!(panel.predictionsRun() > before && !panel.busy()))
        loop.exec();
    return panel.predictionsRun() > before;
}

}  // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    const QStringList args = app.arguments();
    qint64 intervals = 1'000'000;
    int changes = 40;
    QString file, rung = QStringLiteral("warp_specialized");
    for (int i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--intervals"))
            intervals = args[++i].toLongLong();
        else if (args[i] == QLatin1String("--changes"))
            changes = args[++i].toInt();
        else if (args[i] == QLatin1String("--file"))
            file = args[++i];
        else if (args[i] == QLatin1String("--rung"))
            rung = args[++i];
    }
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
    std::printf("kernel: %s, %zu intervals, %zu lanes, %zu CTAs\n", trace->launch.variant.c_str(), trace->intervalCount(),
                trace->lanes.size(), trace->ctas.size());

    ws::ui::WhatIfPanel panel;
    panel.resize(420, 600);
    panel.show();
    QElapsedTimer t;
    t.start();
    panel.setKernel(ws::ui::makePredictor(trace), trace->launch.end - trace->launch.start, ws::ui::recordedStages(*trace),
                    ws::ui::recordedSms(*trace));
    if (!waitShown(panel, 0)) {
        std::fprintf(stderr, "whatif_ui_bench: no first prediction\n");
        return 1;
    }
    const double first = double(t.nsecsElapsed()) / 1e6;
    if (const auto p = panel.prediction(); p && !p->error.isEmpty()) {
        std::fprintf(stderr, "whatif_ui_bench: the replay refused: %s\n", qPrintable(p->error));
        return 1;
    }
    std::printf("first prediction (graph build + replay): %.1f ms; as recorded: measured %lld ns, predicted %lld ns\n",
                first, (long long)panel.prediction()->measuredNs, (long long)panel.prediction()->predictedNs);

    auto run = [&](bool ghost) {
        panel.setGhostMode(ghost ? ws::ui::GhostMode::Beside : ws::ui::GhostMode::Off);
        waitShown(panel, panel.predictionsRun() - 1);
        std::vector<double> latency, replay, cpu;
        for (int i = 0; i < changes; ++i) {
            const int before = panel.predictionsRun();
            switch (i % 3) {
            case 0: panel.stagesBox()->setValue(2 + (i / 3) % 7); break;
            case 1: panel.loadLatencyBox()->setValue(0.5 + 0.1 * ((i / 3) % 10)); break;
            default: panel.mmaBox()->setValue(0.6 + 0.1 * ((i / 3) % 8)); break;
            }
            if (!waitShown(panel, before))
                break;
            latency.push_back(panel.lastLatencyMs());
            replay.push_back(panel.prediction()->computeMs);
            cpu.push_back(panel.prediction()->computeCpuMs);
        }
        const Stats l = stats(latency), r = stats(replay), c = stats(cpu);
        std::printf("| %s | %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", ghost ? "with ghost lanes" : "without ghost lanes",
                    latency.size(), l.median, l.p95, l.max, r.median, c.median, c.p95);
    };
    std::printf("| re-predict | changes | median ms | p95 ms | max ms | replay wall median ms | replay CPU median ms | replay CPU p95 ms |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    run(false);
    run(true);
    return 0;
}
