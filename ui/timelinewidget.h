// TimelineWidget: the per-warp timeline of one kernel launch.
//
// One QCustomPlot whose axis rect holds a single custom plottable
// (TimelinePlottable) that draws every lane from the trace's columnar arrays
// through the level-of-detail index in core (ws::lod::TraceIndex). Lanes are
// grouped SM > CTA > warp; each CTA has a header row (its overlap band: loads vs
// compute) and a "loads in flight" sub-lane. See docs/viewer.md.
#pragma once

#include "tracefacts.h"
#include "whatifdata.h"

#include <warpstage/model.h>

#include <QPair>
#include <QPointer>
#include <QSize>
#include <QString>
#include <QWidget>

#include <memory>

class QCustomPlot;
class QScrollBar;
class QMouseEvent;
class QWheelEvent;
class QKeyEvent;

namespace ws::lod {
class TraceIndex;
}

class TimelinePlottable;
class TimelineTicker;

class TimelineWidget : public QWidget {
    Q_OBJECT
public:
    explicit TimelineWidget(QWidget *parent = nullptr);
    ~TimelineWidget() override;

    // null clears; builds the LOD index off the GUI thread, paints as soon as possible. `facts` (tracefacts.h),
    // computed on the loader's worker, spares the GUI thread the pass over every interval; without them
    // setTrace computes them here (fine for small traces, tests and exports).
    void setTrace(std::shared_ptr<const ws::KernelTrace> trace,
                  std::shared_ptr<const ws::ui::TraceFacts> facts = {});
    std::shared_ptr<const ws::KernelTrace> trace() const;
    std::shared_ptr<const ws::ui::TraceFacts> traceFacts() const;  // of trace(); null without one
    // Blocks until the LOD index of the current trace is built (tests, export). True if there is one.
    bool waitForIndex(int timeoutMs = 30000);
    bool indexReady() const;

    void setTimeOrigin(ws::TimeNs origin);          // axis shows time relative to this (default: launch.start)
    ws::TimeNs timeOrigin() const;
    void setVisibleRange(ws::TimeNs t0, ws::TimeNs t1);  // absolute ns
    QPair<ws::TimeNs, ws::TimeNs> visibleRange() const;
    void resetZoom();
    // Zoom history (Alt+Left / Alt+Right / Backspace).
    bool canGoBack() const;
    bool canGoForward() const;
    void historyBack();
    void historyForward();

    void highlightStage(ws::WarpRole role, ws::IntervalKind kind);  // e.g. from the stall source view
    void clearHighlight();
    void setLaneFilter(const QString &filter);       // "", "sm:0-3", "cta:0-7,12", "role:producer", "warp:0-3"; terms joined by ';' are ANDed
    QString laneFilter() const;
    void setCtaCollapsed(int ctaIndex, bool collapsed);
    void setAllCollapsed(bool collapsed);
    void selectInterval(int lane, qsizetype index);  // programmatic selection (no signal); -1 clears
    QPair<int, qsizetype> selectedInterval() const;

    // What-if (issue 13; timelinewhatif.cpp). The critical path as an overlay on the lanes it runs through
    // (shown while visible), one cause of it emphasised (-1: none), and the predicted timeline as ghost lanes.
    void setCriticalPath(std::vector<ws::ui::PathSegment> segments);
    const std::vector<ws::ui::PathSegment> &criticalPath() const;
    void setCriticalPathVisible(bool on);
    bool criticalPathVisible() const;
    void setPathCause(int cause);
    void setGhostLanes(std::shared_ptr<const ws::ui::GhostLanes> ghost, ws::ui::GhostMode mode);
    ws::ui::GhostMode ghostMode() const;
    void scrollToLane(int lane);  // scrolls vertically so the lane's row is in view (nothing if hidden)

    QCustomPlot *plot() const;
    TimelinePlottable *plottable() const;

    // Export the current view (title, axis, legend) to PNG/SVG/PDF chosen by extension.
    bool exportImage(const QString &path, QSize sizePx, double dpi, const QString &title, QString *error) const;
    // Render the current view (with title and legend) into an image of sizePx (used by exportImage for PNG).
    // lanesRectPx: where the lanes area landed in the image (tests).
    QImage renderImage(QSize sizePx, double dpi, const QString &title, QRect *lanesRectPx = nullptr) const;

signals:
    void visibleRangeChanged(ws::TimeNs t0, ws::TimeNs t1);   // absolute ns
    void timeRangeSelected(ws::TimeNs t0, ws::TimeNs t1);     // user selected a range (metrics for a range)
    void intervalSelected(int lane, qsizetype index);          // click; lane index into trace()->lanes
    void ctaSelected(int ctaIndex);                            // clicked a CTA group header
    void indexProgress(int percent);                           // LOD build progress
    void indexReadyChanged(bool ready);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    struct Private;
    std::unique_ptr<Private> d;
    friend struct Private;
};
