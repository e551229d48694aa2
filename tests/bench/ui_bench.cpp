// ui_bench: timeline speed and memory on a synthetic trace (issue 5 "Speed").
//
//   QT_QPA_PLATFORM=offscreen ui_bench [--intervals 10000000] [--ctas 132] [--frames 60] [--size 1600x900]
//
// Measures, on the real TimelineWidget (offscreen):
//   * RAM per interval: trace (columnar lanes) + LOD index, by accounting (vector capacities) and by RSS delta;
//   * first paint: setTrace() -> first finished replot (the index builds in the background meanwhile);
//   * full index: setTrace() -> index ready; and TraceIndex::build alone;
//   * pan/zoom repaint at zoom levels from the whole kernel down to ~50 ns: median and p95 of
//     setVisibleRange() + replot, alternating pans and zooms; expanded lanes and all-collapsed (overview).
// Prints a Markdown table (pasted into docs/benchmarks.md).
//
//   QT_QPA_PLATFORM=offscreen ui_bench --program 10000 [--frames 60] [--size 1600x900]
//
// The program view instead (issue #9): a synthetic PyTorch-like program run (ws::generateSyntheticProgram, 10
// steps) of that many launches in a real ProgramPanel (view + kernel summary table): first paint =
// setProgram() (layout, kernel summary) -> first finished replot; then pan/zoom repaint from the whole
// program down to ~one kernel.
#include "programload.h"
#include "programpanel.h"
#include "programplottable.h"
#include "programview.h"
#include "timelineplottable.h"
#include "timelinesynthetic.h"
#include "timelinewidget.h"

#include <warpstage/lod.h>
#include <warpstage/store.h>
#include <warpstage/synthetic.h>

#include <qcustomplot.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QScrollBar>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <malloc.h>
#include <unistd.h>

namespace {

double rssMiB()
{
    QFile f(QStringLiteral("/proc/self/statm"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> parts = f.readAll().split(' ');
    return parts.size() > 1 ? parts[1].toDouble() * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0) : 0;
}

std::size_t traceBytes(const ws::KernelTrace &t)
{
    std::size_t b = sizeof(t);
    for (const auto &l : t.lanes)
        b += sizeof(l) + l.start.capacity() * 8 + l.duration.capacity() * 4 + l.kind.capacity() + l.slot.capacity() * 2 +
             l.kstep.capacity() * 4 + l.roleName.capacity();
    b += t.ctas.capacity() * sizeof(ws::Cta) + t.loads.capacity() * sizeof(ws::LoadTransfer) +
         t.tiles.capacity() * sizeof(ws::TileSpan);
    return b;
}

double cpuMs()  // CPU time of the whole process (all threads)
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

struct Stats {
    double median, p95, max;
};
Stats stats(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    auto at = [&](double q) { return v[std::min(v.size() - 1, std::size_t(q * double(v.size() - 1) + 0.5))]; };
    return {at(0.5), at(0.95), v.back()};
}

int programBench(int launches, int frames, QSize size)
{
    ws::SyntheticProgramParams sp;
    sp.steps = 10;
    sp.launchesPerStep = std::max(1, launches / sp.steps);
    QElapsedTimer timer;
    timer.start();
    auto program = std::make_shared<const ws::ProgramTrace>(ws::generateSyntheticProgram(sp));
    std::printf("synthetic program: %zu launches, %zu memory operations, %zu NVTX ranges, %zu API spans (generated in %lld ms)\n",
                program->kernels.size(), program->memOps.size(), program->nvtx.size(), program->apiSpans.size(),
                qint64(timer.elapsed()));
    ProgramPanel panel;
    panel.resize(size);
    panel.show();
    QCoreApplication::processEvents();
    ProgramView *v = panel.view();
    timer.restart();
    panel.setProgram(program);
    v->plot()->replot(QCustomPlot::rpImmediateRefresh);
    const double firstPaintMs = double(timer.nsecsElapsed()) / 1e6;
    QCoreApplication::processEvents();
    std::printf("\n| measure | value |\n|---|---|\n");
    std::printf("| launches | %zu |\n", program->kernels.size());
    std::printf("| first paint after setProgram (layout + kernel summary + first replot) | **%.1f ms** |\n", firstPaintMs);
    // from a file: TraceStore::loadProgram + setProgram + first replot (what opening a recording costs)
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("program.warpstage")).toStdString();
        {
            ws::TraceStore store = ws::TraceStore::openForWriting(path);
            ws::writeSyntheticProgram(store, sp);
        }
        ProgramPanel fresh;
        fresh.resize(size);
        fresh.show();
        QCoreApplication::processEvents();
        timer.restart();
        const ws::TraceStore store = ws::TraceStore::openReadOnly(path);
        const auto loaded = ws::ui::loadProgramNow(store, 1);
        const double loadMs = double(timer.nsecsElapsed()) / 1e6;
        fresh.setProgram(loaded.program);
        fresh.view()->plot()->replot(QCustomPlot::rpImmediateRefresh);
        const double fileMs = double(timer.nsecsElapsed()) / 1e6;
        std::printf("| first paint from the file (open + loadProgram %.1f ms + setProgram + replot) | **%.1f ms** |\n", loadMs, fileMs);
    }
    const auto full = v->visibleRange();
    const double span = double(full.second - full.first);
    const double kernelSpan = 50'000;  // ~one GEMM
    std::printf("\n| zoom level | visible span | wall median | wall p95 | records visited (median) | plottable draw (median) |\n|---|---|---|---|---|---|\n");
    for (double fraction : {1.0, 0.1, 0.01, kernelSpan / span}) {
        const ws::TimeNs w = std::max<ws::TimeNs>(100, ws::TimeNs(span * fraction));
        ws::TimeNs c = full.first + ws::TimeNs(span * 0.47);
        std::vector<double> wall, draw, visited;
        for (int f = 0; f < frames; ++f) {
            const ws::TimeNs dx = (f % 2 ? -1 : 1) * w / 10;
            c += dx;
            timer.restart();
            v->setVisibleRange(c - w / 2, c + w / 2);
            v->plot()->replot(QCustomPlot::rpImmediateRefresh);
            wall.push_back(double(timer.nsecsElapsed()) / 1e6);
            draw.push_back(v->plottable()->lastDrawMs());
            visited.push_back(double(v->plottable()->lastItemsVisited()));
        }
        const Stats sw = stats(wall), sd = stats(draw), sv = stats(visited);
        std::printf("| %s | %.0f µs | %.2f ms | %.2f ms | %.0f | %.2f ms |\n",
                    fraction >= 1 ? "whole program" : fraction >= 0.1 ? "1/10" : fraction >= 0.01 ? "1/100" : "~one kernel",
                    double(w) / 1e3, sw.median, sw.p95, sv.median, sd.median);
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    {
        const QStringList a = app.arguments();
        const int pi = int(a.indexOf(QStringLiteral("--program")));
        if (pi > 0 && pi + 1 < a.size()) {
            int frames = 40;
            QSize size(1600, 900);
            for (int i = 1; i + 1 < a.size(); ++i) {
                if (a[i] == QLatin1String("--frames"))
                    frames = a[i + 1].toInt();
                else if (a[i] == QLatin1String("--size")) {
                    const QStringList wh = a[i + 1].split(QLatin1Char('x'));
                    size = QSize(wh.value(0).toInt(), wh.value(1).toInt());
                }
            }
            return programBench(a[pi + 1].toInt(), frames, size);
        }
    }
    std::int64_t target = 10'000'000;
    int ctas = 132, frames = 60;
    QSize size(1600, 900);
    const QStringList args = app.arguments();
    for (int i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--intervals"))
            target = args[++i].toLongLong();
        else if (args[i] == QLatin1String("--ctas"))
            ctas = args[++i].toInt();
        else if (args[i] == QLatin1String("--frames"))
            frames = args[++i].toInt();
        else if (args[i] == QLatin1String("--size")) {
            const QStringList wh = args[++i].split(QLatin1Char('x'));
            size = QSize(wh.value(0).toInt(), wh.value(1).toInt());
        }
    }

    TimelineWidget w;
    w.resize(size);
    w.show();
    QCoreApplication::processEvents();
    malloc_trim(0);
    const double rss0 = rssMiB();

    QElapsedTimer timer;
    timer.start();
    ws::SyntheticParams p;
    p.pattern = ws::SyntheticPattern::WarpSpecialized;
    p.ctas = ctas;
    p.smCount = 132;
    p.consumerWarpgroups = 2;
    p.targetIntervals = target;
    p.stallSamples = false;
    std::shared_ptr<const ws::KernelTrace> trace = syntheticKernelTrace(p);
    malloc_trim(0);
    const double genMs = double(timer.elapsed());
    const std::size_t n = trace->intervalCount();
    const double rssTrace = rssMiB();
    std::printf("synthetic trace: %zu intervals, %zu lanes, %zu CTAs, %zu loads (generated + converted in %.0f ms)\n", n,
                trace->lanes.size(), trace->ctas.size(), trace->loads.size(), genMs);

    // index alone (single thread, nothing else running)
    timer.restart();
    auto standalone = ws::lod::TraceIndex::build(*trace);
    const double indexAloneMs = double(timer.elapsed());
    const std::size_t indexBytes = standalone->memoryBytes();
    standalone.reset();
    malloc_trim(0);

    // open: first paint and full index
    timer.restart();
    w.setTrace(trace);
    w.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const double firstPaintMs = double(timer.elapsed());
    w.waitForIndex(60000);
    const double fullIndexMs = double(timer.elapsed());
    QCoreApplication::processEvents();
    malloc_trim(0);
    const double rssAll = rssMiB();
    const std::size_t tb = traceBytes(*trace);

    std::printf("\n| measure | value |\n|---|---|\n");
    std::printf("| intervals / lanes / CTAs | %zu / %zu / %zu |\n", n, trace->lanes.size(), trace->ctas.size());
    std::printf("| trace (columnar lanes), accounted | %.1f bytes/interval |\n", double(tb) / double(n));
    std::printf("| LOD index, accounted | %.2f bytes/interval |\n", double(indexBytes) / double(n));
    std::printf("| trace + index, accounted | **%.1f bytes/interval** |\n", double(tb + indexBytes) / double(n));
    std::printf("| trace + index, RSS delta (malloc_trim'd) | **%.1f bytes/interval** (trace alone %.1f) |\n",
                (rssAll - rss0) * 1048576.0 / double(n), (rssTrace - rss0) * 1048576.0 / double(n));
    std::printf("| first paint after setTrace | **%.0f ms** |\n", firstPaintMs);
    std::printf("| full index after setTrace (background thread) | **%.0f ms** |\n", fullIndexMs);
    std::printf("| TraceIndex::build alone | %.0f ms |\n", indexAloneMs);

    // repaint at zoom levels
    const auto full = w.visibleRange();
    const double span = double(full.second - full.first);
    const ws::TimeNs mid = full.first + ws::TimeNs(span * 0.47);
    struct Level {
        const char *name;
        double fraction;
    };
    const Level levels[] = {{"whole kernel", 1.0},  {"1/10", 0.1},       {"1/100", 1e-2},
                            {"1/1000", 1e-3},      {"1/10000", 1e-4},   {"~50 ns", 50.0 / span}};
    auto *vs = w.findChild<QScrollBar *>();
    std::printf("\n| zoom level (expanded: SM > CTA > warps) | visible span | rows drawn | wall median | wall p95 | wall max | CPU median / p95 | plottable draw (median) | LOD + raster (median) |\n|---|---|---|---|---|---|---|---|---|\n");
    std::vector<double> all, allCpu;
    auto runLevels = [&](const char *mode) {
        for (const Level &lv : levels) {
            const double s = std::max(10.0, span * lv.fraction);
            ws::TimeNs a = mid - ws::TimeNs(s / 2), b = a + ws::TimeNs(s);
            w.setVisibleRange(a, b);
            w.plot()->replot(QCustomPlot::rpImmediateRefresh);  // warm
            std::vector<double> ms, drawMs, rasterMs, cpu;
            for (int f = 0; f < frames; ++f) {
                // alternate: pan right, pan left, zoom in, zoom out (about the centre)
                const ws::TimeNs cur = b - a;
                switch (f % 4) {
                case 0: a += cur / 20; b += cur / 20; break;
                case 1: a -= cur / 20; b -= cur / 20; break;
                case 2: a += cur / 10; b -= cur / 10; break;
                default: { const ws::TimeNs c = (a + b) / 2; a = c - ws::TimeNs(s / 2); b = a + ws::TimeNs(s); } break;
                }
                timer.restart();
                const double c0 = cpuMs();
                w.setVisibleRange(a, b);
                w.plot()->replot(QCustomPlot::rpImmediateRefresh);
                ms.push_back(double(timer.nsecsElapsed()) / 1e6);
                cpu.push_back(cpuMs() - c0);
                drawMs.push_back(w.plottable()->lastDrawMs());
                rasterMs.push_back(w.plottable()->lastRasterMs());
            }
            const Stats st = stats(ms);
            all.insert(all.end(), ms.begin(), ms.end());
            const Stats sc = stats(cpu);
            allCpu.insert(allCpu.end(), cpu.begin(), cpu.end());
            std::printf("| %s %s | %.0f ns | %d | %.2f ms | %.2f ms | %.2f ms | %.2f / %.2f ms | %.2f ms | %.2f ms |\n", lv.name, mode, s,
                        w.plottable()->lastVisibleRows(), st.median, st.p95, st.max, sc.median, sc.p95, stats(drawMs).median, stats(rasterMs).median);
        }
    };
    if (vs)
        vs->setValue(vs->maximum() / 2);
    runLevels("");
    w.setAllCollapsed(true);
    if (vs)
        vs->setValue(0);
    runLevels("(all CTAs collapsed: overlap bands)");
    const Stats st = stats(all);
    // a repaint that changes no lane pixel (hover outline, selection, ruler): the lane image is reused
    w.setAllCollapsed(false);
    w.resetZoom();
    w.plot()->replot(QCustomPlot::rpImmediateRefresh);
    std::vector<double> hover;
    for (int f = 0; f < frames; ++f) {
        w.plottable()->setHoverInterval(int(f % trace->lanes.size()), 10);
        timer.restart();
        w.plot()->replot(QCustomPlot::rpImmediateRefresh);
        hover.push_back(double(timer.nsecsElapsed()) / 1e6);
    }
    const Stats sh = stats(hover);
    std::printf("| hover repaint (whole kernel, lane pixels reused: %s) | | | %.2f ms | %.2f ms | %.2f ms | | | |\n",
                w.plottable()->lastFrameReused() ? "yes" : "no", sh.median, sh.p95, sh.max);
    const Stats sc = stats(allCpu);
    std::printf("| **all frames** | | | **%.2f ms** | **%.2f ms** | %.2f ms | %.2f / %.2f ms | | |\n", st.median, st.p95, st.max, sc.median, sc.p95);
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) > 0)
        std::printf("\nload average at the end: %.2f %.2f %.2f (2 cores)\n", load[0], load[1], load[2]);
    return 0;
}
