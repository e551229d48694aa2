// exportProgramFigure (figureexport.h): the program view of a run, headless and deterministic.
#include "figureexport.h"
#include "programload.h"
#include "programview.h"

#include <warpstage/store.h>

#include <QFileInfo>

#include <algorithm>

bool exportProgramFigure(std::shared_ptr<const ws::ProgramTrace> program, const FigureOptions &opt, QString *error)
{
    auto fail = [&](const QString &why) {
        if (error)
            *error = why;
        return false;
    };
    if (!program)
        return fail(QStringLiteral("export: no program to draw"));
    ProgramView v;
    v.setAttribute(Qt::WA_DontShowOnScreen);
    v.setProgram(program);
    if (opt.range) {
        const auto [a, b] = *opt.range;
        const ws::TimeNs span = program->lastEnd() - program->firstStart();
        if (b <= a)
            return fail(QStringLiteral("--range %1..%2: the end must be after the start").arg(a).arg(b));
        if (a >= span || b <= 0)
            return fail(QStringLiteral("--range %1..%2 ns: empty, the run spans 0..%3 ns from its first record").arg(a).arg(b).arg(span));
        v.setVisibleRange(v.timeOrigin() + a, v.timeOrigin() + b);
    }
    QString title = opt.title;
    if (title.isEmpty()) {
        const ws::RunInfo &r = program->run;
        title = QStringLiteral("run %1  ·  %2  ·  %L3 launches, %L4 memory operations")
                    .arg(r.id)
                    .arg(r.kind == ws::RunKind::Program ? QString::fromStdString(r.program.empty() ? r.commandLine : r.program)
                                                        : QStringLiteral("ladder"))
                    .arg(qint64(program->kernels.size()))
                    .arg(qint64(program->memOps.size()));
        if (r.synthetic)
            title += QStringLiteral("  (synthetic)");
    }
    return v.exportImage(opt.out, opt.size, opt.dpi, title, error);
}

bool exportProgramFigure(const FigureOptions &opt, QString *error)
{
    auto fail = [&](const QString &why) {
        if (error)
            *error = why;
        return false;
    };
    if (opt.file.isEmpty())
        return fail(QStringLiteral("export: no input file given"));
    if (!QFileInfo::exists(opt.file))
        return fail(QStringLiteral("%1: no such file").arg(opt.file));
    ws::ui::LoadedProgram loaded;
    try {
        const ws::TraceStore store = ws::TraceStore::openReadOnly(opt.file.toStdString());
        ws::RowId runId = opt.runId;
        const auto runs = store.runs();
        if (runs.empty())
            return fail(QStringLiteral("%1: the file holds no run").arg(opt.file));
        if (runId == 0)
            runId = std::max_element(runs.begin(), runs.end(), [](const auto &a, const auto &b) { return a.id < b.id; })->id;
        else if (std::none_of(runs.begin(), runs.end(), [&](const auto &r) { return r.id == runId; }))
            return fail(QStringLiteral("%1: run %2 does not exist").arg(opt.file).arg(runId));
        loaded = ws::ui::loadProgramNow(store, runId);
    } catch (const std::exception &e) {
        return fail(QString::fromStdString(e.what()));
    }
    if (!loaded.program)
        return fail(QStringLiteral("%1: %2").arg(opt.file, loaded.error));
    return exportProgramFigure(loaded.program, opt, error);
}
