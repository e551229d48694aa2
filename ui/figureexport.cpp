#include "figureexport.h"

#include "timelinelayout.h"
#include "timelinewidget.h"
#include "timemapping.h"
#include "whatifengine.h"

#include <warpstage/store.h>
#include <warpstage/tilegeom.h>

#include <QFileInfo>

#include <algorithm>

namespace {
bool fail(QString *error, const QString &msg)
{
    if (error)
        *error = msg;
    return false;
}

// The replay's parameters as `warpstage whatif` options ("--stages 6 --load-latency 0.5"; "as recorded").
QString whatIfOptionsText(const ws::WhatIfParams &p)
{
    QStringList o;
    if (p.stages > 0)
        o << QStringLiteral("--stages %1").arg(p.stages);
    const struct {
        double v;
        const char *name;
    } factors[] = {{p.loadLatency, "--load-latency"}, {p.mma, "--mma"}, {p.epilogue, "--epilogue"}};
    for (const auto &f : factors)
        if (f.v != 1.0)
            o << QStringLiteral("%1 %2").arg(QLatin1String(f.name)).arg(f.v, 0, 'g', 6);
    if (p.overlapEpilogue)
        o << QStringLiteral("--overlap-epilogue");
    if (p.persistent)
        o << QStringLiteral("--persistent");
    if (p.sms > 0)
        o << QStringLiteral("--sms %1").arg(p.sms);
    if (p.dropCtaSync)
        o << QStringLiteral("--no-sync");
    if (p.slotsPerSm > 0)
        o << QStringLiteral("--ctas-per-sm %1").arg(p.slotsPerSm);
    if (p.producerWarp)
        o << QStringLiteral("--producer-warp");
    if (!p.sharedResources)
        o << QStringLiteral("--no-shared-resources");
    if (p.loadBandwidth)
        o << QStringLiteral("--load-bandwidth");
    return o.isEmpty() ? QStringLiteral("as recorded") : o.join(QLatin1Char(' '));
}

// Draws the critical path and / or the predicted timeline on `w`; the title's what-if part in *titleNote.
bool addWhatIf(TimelineWidget &w, std::shared_ptr<const ws::KernelTrace> trace, const FigureOptions &opt,
               QString *titleNote, QString *error)
{
    if (!opt.criticalPath && !opt.whatIf)
        return true;
    ws::ui::WhatIfKernel kernel(trace);  // one dependency graph for both
    if (opt.criticalPath) {
        const auto path = kernel.criticalPath();
        if (!path)
            return fail(error, QStringLiteral("%1: --critical-path: the kernel has no per-warp timeline to analyse").arg(opt.out));
        w.setCriticalPath(path->segments);
        w.setCriticalPathVisible(true);
    }
    if (opt.whatIf) {
        const ws::WhatIfParams &c = opt.whatIfParams;
        const ws::ui::Prediction pred = kernel.predict(c, true);
        if (!pred.error.isEmpty())
            return fail(error, QStringLiteral("%1: --what-if: %2").arg(opt.out, pred.error));
        if (!pred.ghost)
            return fail(error, QStringLiteral("%1: --what-if: the replay gave no predicted timeline").arg(opt.out));
        w.setGhostLanes(pred.ghost, opt.ghostOver ? ws::ui::GhostMode::Over : ws::ui::GhostMode::Beside);
        w.resetZoom();  // the measured kernel and the prediction, whole (a --range given later wins)
        // a line of its own: a kernel's name can fill the first line, whose ends are clipped when it is too long
        *titleNote = QStringLiteral("\nwhat-if %1: predicted %2, measured %3")
                         .arg(whatIfOptionsText(c), timemap::formatDuration(double(pred.predictedNs)),
                              timemap::formatDuration(double(pred.measuredNs)));
    }
    return true;
}
}  // namespace

bool exportFigure(std::shared_ptr<const ws::KernelTrace> trace, const FigureOptions &opt, QString *error)
{
    if (!trace)
        return fail(error, QStringLiteral("%1: no kernel to draw").arg(opt.out));
    if (opt.out.isEmpty())
        return fail(error, QStringLiteral("export: no output file given (--out fig.png)"));
    const QString ext = QFileInfo(opt.out).suffix().toLower();
    if (ext != QLatin1String("png") && ext != QLatin1String("svg") && ext != QLatin1String("pdf"))
        return fail(error, QStringLiteral("%1: unknown image type '.%2' (use .png, .svg or .pdf)").arg(opt.out, ext));
    TimelineWidget w;
    w.setAttribute(Qt::WA_DontShowOnScreen);
    w.setTrace(trace);
    if (!w.waitForIndex(120000))
        return fail(error, QStringLiteral("%1: could not index the kernel's timeline").arg(opt.out));
    QString whatIfNote;
    if (!addWhatIf(w, trace, opt, &whatIfNote, error))
        return false;
    if (!opt.lanes.isEmpty()) {
        QString ferr;
        if (!LaneFilter::parse(opt.lanes, &ferr))
            return fail(error, ferr);
        w.setLaneFilter(opt.lanes);
    }
    if (opt.range) {
        const auto [a, b] = *opt.range;
        if (!(b > a))
            return fail(error, QStringLiteral("--range %1..%2: the end must be after the start").arg(a).arg(b));
        // The view is kept on the data: a range that misses the kernel altogether would silently
        // show another one. What there is: the CUPTI window and every interval, from the kernel start.
        ws::TimeNs lo = 0, hi = trace->launch.end - trace->launch.start;
        for (const ws::Lane &l : trace->lanes)
            if (l.size()) {
                lo = std::min(lo, l.start.front() - trace->launch.start);
                for (std::size_t i = 0; i < l.size(); ++i)
                    hi = std::max(hi, l.end(i) - trace->launch.start);
            }
        if (b <= lo || a >= hi)
            return fail(error, QStringLiteral("--range %1..%2 ns: empty, the kernel spans %3..%4 ns from its start")
                                   .arg(a).arg(b).arg(lo).arg(hi));
        w.setVisibleRange(trace->launch.start + a, trace->launch.start + b);
    }
    QString title = opt.title;
    if (title.isEmpty()) {
        const ws::RunInfo &r = trace->run;
        // a ladder rung: "pingpong  4096x4096x4096 · kernel"; a program's kernel has no GEMM shape
        const QString shape = r.m > 0 ? QStringLiteral("  %1x%2x%3").arg(r.m).arg(r.n).arg(r.k) : QString();
        title = QStringLiteral("%1%2  ·  %3")
                    .arg(QString::fromStdString(trace->launch.variant.empty() ? r.variant : trace->launch.variant), shape,
                         QString::fromStdString(trace->launch.name));
        if (const auto g = ws::tileGeometryOf(r))  // the tile configuration that ran (core/tilegeom.h), where recorded
            title += QStringLiteral("  ·  ") + QString::fromStdString(ws::tileGeometryShort(g));
        if (r.synthetic)
            title += QStringLiteral("  (synthetic)");
        title += whatIfNote;
    }
    return w.exportImage(opt.out, opt.size, opt.dpi, title, error);
}

bool exportFigure(const FigureOptions &opt, QString *error)
{
    if (opt.view == FigureOptions::View::Program)
        return exportProgramFigure(opt, error);
    if (opt.file.isEmpty())
        return fail(error, QStringLiteral("export: no input file given"));
    if (!QFileInfo::exists(opt.file))
        return fail(error, QStringLiteral("%1: no such file").arg(opt.file));
    std::shared_ptr<ws::KernelTrace> trace;
    try {
        const ws::TraceStore store = ws::TraceStore::openReadOnly(opt.file.toStdString());
        ws::RowId runId = opt.runId;
        if (runId == 0) {
            const auto runs = store.runs();
            if (runs.empty())
                return fail(error, QStringLiteral("%1: the file holds no run").arg(opt.file));
            runId = std::max_element(runs.begin(), runs.end(), [](const auto &a, const auto &b) { return a.id < b.id; })->id;
        }
        const auto kernels = store.kernels(runId);
        if (kernels.empty())
            return fail(error, QStringLiteral("%1: run %2 does not exist or holds no kernel").arg(opt.file).arg(runId));
        ws::RowId kernelId = opt.kernelId;
        if (kernelId == 0) {
            auto it = std::find_if(kernels.begin(), kernels.end(), [](const auto &k) { return k.traced; });
            if (it == kernels.end())
                return fail(error, QStringLiteral("%1: run %2 has no traced kernel (no timeline to draw)").arg(opt.file).arg(runId));
            kernelId = it->id;
        } else if (std::none_of(kernels.begin(), kernels.end(), [&](const auto &k) { return k.id == kernelId; })) {
            return fail(error, QStringLiteral("%1: kernel %2 is not in run %3").arg(opt.file).arg(kernelId).arg(runId));
        }
        trace = std::make_shared<ws::KernelTrace>(store.loadKernel(kernelId));
    } catch (const std::exception &e) {
        return fail(error, QString::fromStdString(e.what()));
    }
    return exportFigure(std::move(trace), opt, error);
}
