// Temporary skeleton so the shell can link against the interface; the real implementation follows.
#include "timelinewidget.h"

#include <qcustomplot.h>

#include <QVBoxLayout>

struct TimelineWidget::Private {
    QCustomPlot *plot = nullptr;
    std::shared_ptr<const ws::KernelTrace> trace;
    ws::TimeNs origin = 0, t0 = 0, t1 = 1;
    QString filter;
};

TimelineWidget::TimelineWidget(QWidget *parent) : QWidget(parent), d(std::make_unique<Private>())
{
    auto *lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    d->plot = new QCustomPlot(this);
    lay->addWidget(d->plot);
}
TimelineWidget::~TimelineWidget() = default;
void TimelineWidget::setTrace(std::shared_ptr<const ws::KernelTrace> trace)
{
    d->trace = std::move(trace);
    if (d->trace) {
        d->origin = d->trace->launch.start;
        resetZoom();
    }
}
std::shared_ptr<const ws::KernelTrace> TimelineWidget::trace() const { return d->trace; }
bool TimelineWidget::waitForIndex(int) { return d->trace != nullptr; }
bool TimelineWidget::indexReady() const { return d->trace != nullptr; }
void TimelineWidget::setTimeOrigin(ws::TimeNs origin) { d->origin = origin; }
ws::TimeNs TimelineWidget::timeOrigin() const { return d->origin; }
void TimelineWidget::setVisibleRange(ws::TimeNs t0, ws::TimeNs t1)
{
    d->t0 = t0;
    d->t1 = t1;
    emit visibleRangeChanged(t0, t1);
}
QPair<ws::TimeNs, ws::TimeNs> TimelineWidget::visibleRange() const { return {d->t0, d->t1}; }
void TimelineWidget::resetZoom()
{
    if (d->trace)
        setVisibleRange(d->trace->firstStart(), d->trace->lastEnd());
}
bool TimelineWidget::canGoBack() const { return false; }
bool TimelineWidget::canGoForward() const { return false; }
void TimelineWidget::historyBack() {}
void TimelineWidget::historyForward() {}
void TimelineWidget::highlightStage(ws::WarpRole, ws::IntervalKind) {}
void TimelineWidget::clearHighlight() {}
void TimelineWidget::setLaneFilter(const QString &filter) { d->filter = filter; }
QString TimelineWidget::laneFilter() const { return d->filter; }
void TimelineWidget::setCtaCollapsed(int, bool) {}
void TimelineWidget::setAllCollapsed(bool) {}
void TimelineWidget::selectInterval(int, qsizetype) {}
QPair<int, qsizetype> TimelineWidget::selectedInterval() const { return {-1, -1}; }
QCustomPlot *TimelineWidget::plot() const { return d->plot; }
TimelinePlottable *TimelineWidget::plottable() const { return nullptr; }
bool TimelineWidget::exportImage(const QString &path, QSize sizePx, double, const QString &, QString *error) const
{
    if (!d->plot->savePng(path, sizePx.width(), sizePx.height())) {
        if (error)
            *error = path + QStringLiteral(": could not write the image");
        return false;
    }
    return true;
}
QImage TimelineWidget::renderImage(QSize sizePx, double, const QString &) const
{
    return d->plot->toPixmap(sizePx.width(), sizePx.height()).toImage();
}
bool TimelineWidget::eventFilter(QObject *watched, QEvent *event) { return QWidget::eventFilter(watched, event); }
void TimelineWidget::resizeEvent(QResizeEvent *event) { QWidget::resizeEvent(event); }
