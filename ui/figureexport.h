// Headless figure export: open a Warpstage file, pick a run and a kernel, and
// write the timeline of a time range and a lane selection to PNG/SVG/PDF.
// Works without a display (QT_QPA_PLATFORM=offscreen) and is deterministic:
// the same input gives the same picture (no clock, host or date in it).
#pragma once

#include <warpstage/model.h>
#include <warpstage/whatif.h>

#include <QPair>
#include <QSize>
#include <QString>

#include <memory>
#include <optional>

struct FigureOptions {
    enum class View { Warp, Program };
    View view = View::Warp;       // Program: the program view of the run (kernel and lanes do not apply)
    QString file;                 // .warpstage (SQLite) file
    qint64 runId = 0;             // 0: the newest run in the file
    qint64 kernelId = 0;          // 0: the first traced kernel of the run
    std::optional<QPair<ws::TimeNs, ws::TimeNs>> range;  // relative to kernel start (program view: to the run's first record)
    QString lanes;                // filter, e.g. "sm:0-3" or "cta:0-7" or "role:producer"
    QString out;                  // .png, .svg or .pdf
    QSize size{1600, 900};
    double dpi = 96;
    QString title;                // empty: "<variant> <m>x<n>x<k> · <kernel>"
    // What-if (issue 13, docs/whatif.md), warp view only: the kernel's critical path outlined on the lanes it runs
    // through, and the predicted timeline of a replay with whatIfParams as a ghost row under each warp (or, with
    // ghostOver, as a frame over each lane), as the viewer draws them. The default title then names the replay.
    bool criticalPath = false;
    bool whatIf = false;
    ws::WhatIfParams whatIfParams;
    bool ghostOver = false;
};

// Writes opt.out; on failure returns false and sets *error to a message that names the file and the problem.
bool exportFigure(const FigureOptions &opt, QString *error);
// Same, from a trace already in memory (the file fields of opt are ignored).
bool exportFigure(std::shared_ptr<const ws::KernelTrace> trace, const FigureOptions &opt, QString *error);

// The program view of a run (FigureOptions::View::Program), from a file or from a program in memory.
bool exportProgramFigure(const FigureOptions &opt, QString *error);
bool exportProgramFigure(std::shared_ptr<const ws::ProgramTrace> program, const FigureOptions &opt, QString *error);
