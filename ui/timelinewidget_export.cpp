// TimelineWidget's export: a fresh, never-shown copy in the same state, rendered to an image or written
// to PNG / SVG / PDF (plotexport.h).
#include "timelinewidget_p.h"

#include "plotexport.h"
#include "timelinepalette.h"

// A fresh, never-shown widget in the same state as `src`, laid out at `logical` size (export).

QImage TimelineWidget::renderImage(QSize sizePx, double dpi, const QString &title, QRect *lanesRectPx) const
{
    const QSize logical = plotexport::logicalSize(sizePx, dpi);
    auto w = Private::clone(*this, logical, title);
    QImage img = plotexport::render(w->plot(), sizePx, dpi);
    if (lanesRectPx) {  // known only once the plot has been drawn
        const QRect r = w->plottable()->lanesRect();
        const double sx = double(sizePx.width()) / logical.width(), sy = double(sizePx.height()) / logical.height();
        *lanesRectPx = QRect(QPoint(int(std::lround(r.left() * sx)), int(std::lround(r.top() * sy))),
                             QSize(int(std::lround(r.width() * sx)), int(std::lround(r.height() * sy))));
    }
    return img;
}

std::unique_ptr<TimelineWidget> TimelineWidget::Private::clone(const TimelineWidget &src, QSize logical, const QString &title)
{
    const Private *d = src.d.get();
    auto holder = std::make_unique<TimelineWidget>();
    TimelineWidget &w = *holder;
    w.setAttribute(Qt::WA_DontShowOnScreen);
    w.d->originSet = true;
    w.d->origin = d->origin;
    w.setTrace(d->trace, d->facts);
    if (d->index) {  // reuse the finished index
        if (w.d->cancel)
            *w.d->cancel = true;
        w.d->watcher->waitForFinished();
        w.d->index = d->index;
        w.d->tl->setIndex(d->index);
    } else if (d->trace) {
        w.waitForIndex();
    }
    w.d->filter = d->filter;
    w.d->filterText = d->filterText;
    w.d->collapsedCtas = d->collapsedCtas;
    w.d->collapsedSms = d->collapsedSms;
    w.d->highlight = d->highlight;
    w.d->tl->setHighlight(d->highlight);
    w.d->tl->setSelectedInterval(d->selLane, d->selIndex);
    w.d->tl->setRangeSelection(d->tl->rangeSelection());
    // what the user sees of the what-if work goes into the figure too: the critical path (with its emphasised
    // cause) and the predicted timeline's ghost rows or frames (they also widen the data range)
    w.d->path = d->path;
    w.d->tl->setCriticalPath(d->path);
    w.d->tl->setPathVisible(d->tl->pathVisible());
    w.d->tl->setPathCause(d->tl->pathCause());
    if (d->ghost && d->ghostMode != ws::ui::GhostMode::Off)
        w.setGhostLanes(d->ghost, d->ghostMode);
    w.d->vscroll->hide();
    if (!title.isEmpty()) {
        w.d->plot->plotLayout()->insertRow(0);
        auto *t = new QCPTextElement(w.d->plot, title);
        QFont f = t->font();
        f.setPixelSize(15);
        f.setBold(true);
        t->setFont(f);
        t->setTextColor(tlpalette::labelText());
        w.d->plot->plotLayout()->addElement(0, 0, t);
        w.d->plot->plotLayout()->setRowStretchFactor(0, 0.001);
    }
    w.resize(logical);
    w.d->plot->resize(logical);
    w.d->plot->setViewport(QRect(QPoint(0, 0), logical));  // never shown: no resize event
    w.d->applyView(d->view(), false);
    w.d->updateLegendWrap();
    w.d->plot->replot(QCustomPlot::rpImmediateRefresh);  // lays out: the axis rect gets its height
    w.d->relayout();
    w.d->vscroll->setValue(std::min(d->vscroll->value(), w.d->vscroll->maximum()));
    w.d->tl->setScrollY(w.d->vscroll->value());
    return holder;
}


bool TimelineWidget::exportImage(const QString &path, QSize sizePx, double dpi, const QString &title, QString *error) const
{
    // Vector formats: axis, labels and legend as vectors; the lanes are one embedded raster.
    std::unique_ptr<TimelineWidget> w;
    return plotexport::write(path, sizePx, dpi, title, [&](QSize logical) {
        w = Private::clone(*this, logical, title);
        return w->plot();
    }, error);
}

