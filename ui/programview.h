// ProgramView: the program-level timeline of one run (issue #9): NVTX rows above, optional CPU API
// rows, then Device N ▸ stream S rows with kernels (coloured by family) and memory operations. One
// QCustomPlot with one custom plottable (ProgramPlottable) draws every row; navigation is the warp
// view's (TimeNavigator: wheel / WASD / drag / right-drag / Shift+drag / Ctrl+drag ruler / history).
// See docs/viewer.md ("Program view").
#pragma once

#include "programlayout.h"
#include "programlinks.h"

#include <warpstage/model.h>

#include <QPair>
#include <QWidget>

#include <memory>

class QCustomPlot;
class ProgramPlottable;

class ProgramView : public QWidget {
    Q_OBJECT
public:
    explicit ProgramView(QWidget *parent = nullptr);
    ~ProgramView() override;

    void setProgram(std::shared_ptr<const ws::ProgramTrace> program);
    std::shared_ptr<const ws::ProgramTrace> program() const;
    void setLayoutOptions(const ProgramLayoutOptions &options);
    ProgramLayoutOptions layoutOptions() const;
    const ProgramLayout &programLayout() const;

    ws::TimeNs timeOrigin() const;                         // the axis shows time since this (first record)
    void setVisibleRange(ws::TimeNs t0, ws::TimeNs t1);    // absolute ns; a history entry
    QPair<ws::TimeNs, ws::TimeNs> visibleRange() const;
    void resetZoom();
    bool canGoBack() const;
    bool canGoForward() const;
    void historyBack();
    void historyForward();

    // Launches of this kernel name are drawn in full colour, everything else faded; "" clears.
    void highlightKernel(const QString &name);
    QString highlightedKernel() const;
    // Zoom to fit every launch of `name` (a history entry). False if there is none.
    bool zoomToKernel(const QString &name);
    // Fits [t0, t1) (absolute ns) with 2 % (at least 50 ns) either side: what zoomToKernel does with its launches' span.
    void zoomToSpan(ws::TimeNs t0, ws::TimeNs t1);
    // Select launch k (index into program()->kernels; -1 clears), no signal; scrolls its row into view.
    void selectLaunch(int k);
    int selectedLaunch() const;

    // Launch -> run links (correlation ids), launch latency and queueing, idle gaps with their neighbours.
    const ProgramLinks &links() const;
    // GPU idle gaps of at least this length are drawn (a hatched band over the device's rows) and listed.
    static constexpr ws::TimeNs kDefaultIdleGapNs = 100'000;
    void setIdleGapThreshold(ws::TimeNs minGapNs);
    ws::TimeNs idleGapThreshold() const;
    const std::vector<GapInfo> &idleGaps() const;  // in time order
    void zoomToGap(int gap);                        // a history entry with some context either side

    // The tooltip text at a widget position of the plot ("" if nothing there); the status-bar hint
    // for launch k (what it takes to get a per-warp timeline, or how to open it).
    QString tooltipAt(const QPoint &plotPos) const;
    static QString drillDownHint(const ws::KernelLaunch &launch);

    QCustomPlot *plot() const;
    ProgramPlottable *plottable() const;

    QImage renderImage(QSize sizePx, double dpi, const QString &title) const;
    bool exportImage(const QString &path, QSize sizePx, double dpi, const QString &title, QString *error) const;

signals:
    void visibleRangeChanged(ws::TimeNs t0, ws::TimeNs t1);
    void timeRangeSelected(ws::TimeNs t0, ws::TimeNs t1);
    void launchSelected(int kernelIndex);   // click on a launch (-1: cleared)
    void launchActivated(int kernelIndex);  // double-click or Enter on a launch: open its warp view
    void hint(const QString &text);         // for the status bar
    void idleGapsChanged();                 // a new program or threshold

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    struct Private;
    std::unique_ptr<Private> d;
};
