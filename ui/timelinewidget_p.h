// TimelineWidget's private state, shared by its three files: timelinewidget.cpp (set-up, trace, lanes,
// legend, LOD index), timelinewidget_input.cpp (mouse, wheel, keys, tooltips) and timelinewidget_export.cpp
// (render and export a copy). Navigation (zoom, pan, history, the shared keys) is TimeNavigator's.
#pragma once

#include "timelinewidget.h"

#include "timelinelayout.h"
#include "timelineplottable.h"
#include "timelineticker.h"
#include "timemapping.h"
#include "timenavigator.h"
#include "viewdrag.h"

#include <warpstage/lod.h>

#include <qcustomplot.h>

#include <QFutureWatcher>
#include <QScrollBar>
#include <QSet>

#include <atomic>
#include <cmath>
#include <optional>

struct TimelineWidget::Private {
    using Range = TimeNavigator::Range;  // relative ns
    using TimeNs = ws::TimeNs;

    TimelineWidget *q = nullptr;
    QCustomPlot *plot = nullptr;
    QScrollBar *vscroll = nullptr;
    TimelinePlottable *tl = nullptr;
    QCPLegend *legend = nullptr;
    QCPTextElement *title = nullptr;
    QSharedPointer<TimelineTicker> ticker;

    std::shared_ptr<const ws::KernelTrace> trace;
    std::shared_ptr<const ws::ui::TraceFacts> facts;  // of `trace` (extent, kinds present), never walked here
    std::shared_ptr<const ws::lod::TraceIndex> index;
    std::shared_ptr<std::atomic<bool>> cancel;
    QFutureWatcher<std::shared_ptr<const ws::lod::TraceIndex>> *watcher = nullptr;
    quint64 generation = 0;

    TimelineLayout layout;
    LaneFilter filter;
    QString filterText;
    QSet<int> collapsedCtas, collapsedSms;
    std::optional<QPair<ws::WarpRole, ws::IntervalKind>> highlight;
    int selLane = -1;
    qsizetype selIndex = -1;

    TimeNs origin = 0;
    bool originSet = false;
    TimeNavigator nav;  // the visible range and its history

    ViewDrag drag;  // the mouse gesture (pan, zoom band, range selection, ruler) and the last mouse position

    std::shared_ptr<const std::vector<ws::ui::PathSegment>> path;
    std::shared_ptr<const ws::ui::GhostLanes> ghost;
    ws::ui::GhostMode ghostMode = ws::ui::GhostMode::Off;
    TimeNs traceFirst = 0, traceLast = 1;  // the measured trace's; firstStart/lastEnd also cover the ghost lanes
    TimeNs firstStart = 0, lastEnd = 1;  // of the trace, cached (KernelTrace computes them by walking the lanes)
    double dataLo() const { return trace ? double(firstStart - origin) : 0.0; }
    double dataHi() const { return trace ? double(lastEnd - origin) : 1.0; }
    Range view() const { return nav.view(); }

    // Clamp to the data, show, announce; returns what is shown. TimeNavigator's apply.
    Range applyView(Range r, bool emitSignal = true)
    {
        if (trace)
            r = timemap::clampToData(r.first, r.second, dataLo(), std::max(dataHi(), dataLo() + 1));
        nav.setViewQuiet(r);
        plot->xAxis->setRange(r.first, r.second);
        plot->xAxis2->setRange(r.first, r.second);
        if (emitSignal)
            emit q->visibleRangeChanged(origin + TimeNs(std::llround(r.first)), origin + TimeNs(std::llround(r.second)));
        return r;
    }
    void navigate(Range r) { nav.navigate(r); }  // discrete: a new history entry
    Range fullRange() const
    {
        const double lo = dataLo(), hi = std::max(dataHi(), lo + 1);
        const double m = (hi - lo) * 0.01;
        return {lo - m, hi + m};
    }
    void replot() { plot->replot(QCustomPlot::rpQueuedReplot); }

    void relayout()
    {
        const int keepTop = vscroll->value();
        layout.build(trace.get(), filter, collapsedSms, collapsedCtas);
        tl->invalidateRaster();
        updateScrollRange();
        vscroll->setValue(std::min(keepTop, vscroll->maximum()));
        tl->setScrollY(vscroll->value());
    }
    void updateScrollRange()
    {
        const int visible = std::max(1, plot->axisRect()->height());
        vscroll->setRange(0, std::max(0, layout.totalHeight() - visible));
        vscroll->setPageStep(visible);
        vscroll->setSingleStep(TimelineLayout::kWarpHeight * 3);
    }
    void rebuildLegend();     // timelinewidget.cpp
    void updateLegendWrap()
    {
        // as many columns as fit the width
        int widest = 1;
        for (int i = 0; i < legend->elementCount(); ++i)
            if (QCPLayoutElement *e = legend->elementAt(i))
                widest = std::max(widest, e->minimumOuterSizeHint().width());
        const int cols = std::max(1, (plot->width() - 20) / (widest + 12));
        legend->setWrap(cols);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }

    void startIndex();        // timelinewidget.cpp

    static std::unique_ptr<TimelineWidget> clone(const TimelineWidget &src, QSize logical, const QString &title);  // _export.cpp
    QString tooltipFor(const TimelinePlottable::Hit &h) const;                                                  // _input.cpp
};
