// TimelineWidget's input: wheel, mouse (pan, zoom band, range selection, ruler, clicks), keys, tooltips.
// Zoom, pan and history go through TimeNavigator (timenavigator.h), the drag gestures' state through ViewDrag
// (viewdrag.h), as in the program view.
#include "timelinewidget_p.h"

#include "timelinepalette.h"
#include "warpstage/tilegeom.h"

#include <QKeyEvent>

using ws::TimeNs;
using Range = TimeNavigator::Range;

namespace {
// "tile (3, 5) = rows 384-511, cols 640-767 of C, 128x128 block, 6 stages" from the run's tile configuration
// (core/tilegeom.h), or "tile (3, 5) (configuration not recorded)" for a file without one.
QString tileLine(const ws::KernelTrace &trace, int tileM, int tileN)
{
    return QStringLiteral("<br>") + QString::fromStdString(ws::tileText(ws::tileGeometryOf(trace.run), tileM, tileN,
                                                                        trace.run.m, trace.run.n)).toHtmlEscaped();
}

// The tile a warp was working on at time t (its own TileBegin..TileEnd, else its CTA's CTA-wide one); nullptr if none.
const ws::TileSpan *tileAt(const ws::KernelTrace &trace, const ws::Lane &lane, TimeNs t)
{
    const ws::TileSpan *ctaWide = nullptr;
    for (const ws::TileSpan &ts : trace.tiles) {
        if (ts.ctaId != lane.ctaIndex || t < ts.start || t >= ts.end)
            continue;
        if (ts.warpId == lane.warpId)
            return &ts;
        if (ts.warpId == 0)
            ctaWide = &ts;
    }
    return ctaWide;
}
}  // namespace

QString TimelineWidget::Private::tooltipFor(const TimelinePlottable::Hit &h) const
{
    if (!trace || h.row < 0 || h.inLabels)
        return {};
    auto rel = [&](TimeNs t) { return timemap::formatDuration(double(t - origin)); };
    const auto &rows = layout.rows();
    const TimelineRow &row = rows[std::size_t(h.row)];
    if (row.type == TimelineRow::Brackets && h.index >= 0 && std::size_t(h.index) < trace->scopes.size()) {
        const ws::ScopeSpan &sc = trace->scopes[std::size_t(h.index)];
        const ws::Lane &l = trace->lanes[std::size_t(h.lane)];
        return QStringLiteral("<b>%1</b><br>scope, depth %2 · warp %3<br>start %4 · duration %5")
            .arg(QString::fromStdString(sc.name).toHtmlEscaped())
            .arg(sc.depth)
            .arg(l.warpIndex)
            .arg(rel(sc.start), timemap::formatDuration(double(sc.end - sc.start)));
    }
    if (row.type == TimelineRow::Ghost && h.index >= 0 && ghost && std::size_t(h.lane) < ghost->lanes.size()) {
        const ws::Lane &l = ghost->lanes[std::size_t(h.lane)];
        const auto i = std::size_t(h.index);
        if (i < l.size())
            return QStringLiteral("<b>Predicted: %1</b><br>start %2 · duration %3<br>warp %4 (what-if replay)")
                .arg(tlpalette::kindLabel(l.kind[i], *trace).toHtmlEscaped(), rel(l.start[i]),
                     timemap::formatDuration(l.duration[i]))
                .arg(l.warpIndex);
    }
    if (row.type == TimelineRow::Warp && h.index >= 0) {
        const ws::Lane &l = trace->lanes[std::size_t(h.lane)];
        const auto i = std::size_t(h.index);
        const ws::Cta &c = trace->ctas[std::size_t(l.ctaIndex)];
        QString s = QStringLiteral("<b>%1</b>").arg(tlpalette::kindLabel(l.kind[i], *trace).toHtmlEscaped());
        if (l.kstep[i] >= 0)
            s += QStringLiteral("<br>k-step %1").arg(l.kstep[i]);
        if (l.slot[i] >= 0)
            s += QStringLiteral("%1slot %2").arg(l.kstep[i] >= 0 ? QStringLiteral(" · ") : QStringLiteral("<br>")).arg(l.slot[i]);
        s += QStringLiteral("<br>start %1 · duration %2").arg(rel(l.start[i]), timemap::formatDuration(l.duration[i]));
        const QString role = l.roleName.empty() ? QString::fromUtf8(ws::warpRoleName(l.role).data()) : QString::fromStdString(l.roleName);
        s += QStringLiteral("<br>warp %1 (%2) · CTA %3 · SM %4").arg(l.warpIndex).arg(role.toHtmlEscaped()).arg(c.blockLinear).arg(c.smId);
        if (const ws::TileSpan *ts = tileAt(*trace, l, l.start[i]))
            s += tileLine(*trace, ts->tileM, ts->tileN);
        return s;
    }
    if (row.type == TimelineRow::Loads && index) {
        const QString n = h.category >= ws::lod::kMaxLoadsCategory ? QStringLiteral("%1 or more").arg(ws::lod::kMaxLoadsCategory)
                                                                   : QString::number(std::max(0, h.category));
        QString s = QStringLiteral("<b>Loads in flight: %1</b>").arg(n);
        if (h.category > 0)
            s += QStringLiteral("<br>%1 … %2 (%3)").arg(rel(h.segStart), rel(h.segEnd), timemap::formatDuration(double(h.segEnd - h.segStart)));
        return s + QStringLiteral("<br>CTA %1").arg(trace->ctas[std::size_t(row.cta)].blockLinear);
    }
    if (row.type == TimelineRow::CtaHeader && index) {
        const ws::Cta &c = trace->ctas[std::size_t(row.cta)];
        QString s = QStringLiteral("<b>%1</b>").arg(tlpalette::overlapLabel(h.category));
        if (h.category > 0)
            s += QStringLiteral("<br>%1 … %2 (%3)").arg(rel(h.segStart), rel(h.segEnd), timemap::formatDuration(double(h.segEnd - h.segStart)));
        s += QStringLiteral("<br>CTA %1 · SM %2 · %3 … %4").arg(c.blockLinear).arg(c.smId).arg(rel(c.start), rel(c.end));
        if (c.tileM >= 0)
            s += QStringLiteral("<br>first ") + tileLine(*trace, c.tileM, c.tileN).mid(4);
        return s;
    }
    return {};
}

bool TimelineWidget::eventFilter(QObject *watched, QEvent *event)
{
    if (watched != d->plot)
        return QWidget::eventFilter(watched, event);
    const QRect ar = d->tl->lanesRect();
    auto timeAt = [&](double x) { return d->plot->xAxis->pixelToCoord(x); };
    switch (event->type()) {
    case QEvent::Wheel: {
        auto *e = static_cast<QWheelEvent *>(event);
        if (!d->trace)
            return true;
        if (const auto rows = ViewDrag::wheelRowScroll(e, ar.left(), TimelineLayout::kWarpHeight)) {
            d->vscroll->setValue(d->vscroll->value() + *rows);
            return true;
        }
        d->nav.handleWheel(e, timeAt(e->position().x()));  // zoom about the cursor; a horizontal wheel pans
        return true;
    }
    case QEvent::MouseButtonPress: {
        auto *e = static_cast<QMouseEvent *>(event);
        d->plot->setFocus();
        d->drag.press(e->position().toPoint(), d->view(), d->vscroll->value());
        if (!d->trace)
            return true;
        const auto hit = d->tl->hitTest(e->position());
        if (hit.inLabels) {
            if (e->button() == Qt::LeftButton && hit.row >= 0) {
                const TimelineRow &row = d->layout.rows()[std::size_t(hit.row)];
                if (row.type == TimelineRow::SmHeader) {
                    if (d->collapsedSms.contains(row.sm))
                        d->collapsedSms.remove(row.sm);
                    else
                        d->collapsedSms.insert(row.sm);
                    d->relayout();
                    d->replot();
                } else if (row.type == TimelineRow::CtaHeader) {
                    setCtaCollapsed(row.cta, !d->collapsedCtas.contains(row.cta));
                    emit ctaSelected(row.cta);
                }
            }
            return true;
        }
        d->drag.begin(e->button(), e->modifiers());
        return true;
    }
    case QEvent::MouseMove: {
        auto *e = static_cast<QMouseEvent *>(event);
        const QPoint pos = e->position().toPoint();
        if (d->drag.move(pos)) {
            if (!d->drag.moved())
                return true;
            const QPoint p0 = d->drag.pressPos();
            const double tPress = timeAt(p0.x());
            switch (d->drag.mode()) {
            case ViewDrag::Mode::Pan:
                d->applyView(d->drag.pannedView(pos, ar.width()));
                d->vscroll->setValue(d->drag.pannedScroll(pos));
                break;
            case ViewDrag::Mode::ZoomBand:
                d->tl->setZoomBand(Range{tPress, timeAt(pos.x())});
                break;
            case ViewDrag::Mode::RangeSelect:
                d->tl->setRangeSelection(Range{tPress, timeAt(pos.x())});
                break;
            case ViewDrag::Mode::Ruler:
                d->tl->setRuler(TimelinePlottable::Ruler{tPress, timeAt(pos.x()), double(p0.y()), double(pos.y())});
                break;
            case ViewDrag::Mode::None:  // move() said a gesture is active
                break;
            }
            d->replot();
            return true;
        }
        // hover
        const auto hit = d->tl->hitTest(e->position());
        const int lane = hit.type == TimelineRow::Warp && hit.index >= 0 && !hit.inLabels ? hit.lane : -1;
        const qsizetype idx = lane >= 0 ? hit.index : -1;
        d->tl->setHoverInterval(lane, idx);
        ViewDrag::showTip(d->tooltipFor(hit), e->globalPosition().toPoint(), d->plot);
        d->replot();
        return true;
    }
    case QEvent::MouseButtonRelease: {
        auto *e = static_cast<QMouseEvent *>(event);
        const auto drag = d->drag.release();
        if (!d->trace)
            return true;
        const QPoint pos = e->position().toPoint();
        const double tPress = timeAt(d->drag.pressPos().x());
        const double tNow = timeAt(pos.x());
        if (drag == ViewDrag::Mode::Pan && d->drag.moved()) {
            d->nav.commitGesture();  // one history entry per drag
            return true;
        }
        if (drag == ViewDrag::Mode::ZoomBand) {
            d->tl->setZoomBand(std::nullopt);
            if (d->drag.bandWideEnough(pos))
                d->navigate({std::min(tPress, tNow), std::max(tPress, tNow)});
            else
                d->replot();
            return true;
        }
        if (drag == ViewDrag::Mode::RangeSelect) {
            if (d->drag.moved()) {
                const double a = std::min(tPress, tNow), b = std::max(tPress, tNow);
                d->tl->setRangeSelection(Range{a, b});
                emit timeRangeSelected(d->origin + TimeNs(std::llround(a)), d->origin + TimeNs(std::llround(b)));
            }
            d->replot();
            return true;
        }
        if (drag == ViewDrag::Mode::Ruler) {
            d->replot();
            return true;
        }
        if (drag == ViewDrag::Mode::Pan && !d->drag.moved() && e->button() == Qt::LeftButton) {
            // click: select an interval, or a CTA header
            const auto hit = d->tl->hitTest(e->position());
            d->tl->setRuler(std::nullopt);
            if (hit.row >= 0 && hit.type == TimelineRow::Warp && hit.index >= 0) {
                d->selLane = hit.lane;
                d->selIndex = hit.index;
                d->tl->setSelectedInterval(hit.lane, hit.index);
                emit intervalSelected(hit.lane, hit.index);
            } else if (hit.row >= 0 && hit.type == TimelineRow::CtaHeader) {
                emit ctaSelected(hit.cta);
            } else {
                d->selLane = -1;
                d->selIndex = -1;
                d->tl->setSelectedInterval(-1, -1);
                d->tl->setRangeSelection(std::nullopt);
            }
            d->replot();
        }
        return true;
    }
    case QEvent::MouseButtonDblClick: {
        auto *e = static_cast<QMouseEvent *>(event);
        const auto hit = d->tl->hitTest(e->position());
        if (hit.row >= 0 && hit.type == TimelineRow::CtaHeader && !hit.inLabels)
            setCtaCollapsed(hit.cta, !d->collapsedCtas.contains(hit.cta));
        return true;
    }
    case QEvent::Leave:
        d->tl->setHoverInterval(-1, -1);
        d->drag.leave();
        d->replot();
        break;
    case QEvent::KeyPress: {
        auto *e = static_cast<QKeyEvent *>(event);
        if (!d->trace)
            break;
        const Range v = d->view();
        // W/S zoom, A/D and arrows pan, Alt+Left/Right and Backspace history, Home/0 reset: shared with the program view
        if (d->nav.handleKey(e, d->drag.mouseOver(ar) ? timeAt(d->drag.lastMouse().x()) : (v.first + v.second) / 2))
            return true;
        switch (e->key()) {
        case Qt::Key_F:  // frame the selection (interval or range)
            if (auto r = d->tl->rangeSelection()) {
                d->navigate({std::min(r->first, r->second), std::max(r->first, r->second)});
            } else if (d->selLane >= 0) {
                const ws::Lane &l = d->trace->lanes[std::size_t(d->selLane)];
                const double a = double(l.start[std::size_t(d->selIndex)] - d->origin);
                const double b = double(l.end(std::size_t(d->selIndex)) - d->origin);
                const double m = std::max((b - a) * 0.5, 20.0);
                d->navigate({a - m, b + m});
            }
            return true;
        case Qt::Key_Up:
            d->vscroll->setValue(d->vscroll->value() - TimelineLayout::kWarpHeight * 2);
            return true;
        case Qt::Key_Down:
            d->vscroll->setValue(d->vscroll->value() + TimelineLayout::kWarpHeight * 2);
            return true;
        case Qt::Key_PageUp:
            d->vscroll->setValue(d->vscroll->value() - d->vscroll->pageStep());
            return true;
        case Qt::Key_PageDown:
            d->vscroll->setValue(d->vscroll->value() + d->vscroll->pageStep());
            return true;
        case Qt::Key_Escape:
            d->tl->setRuler(std::nullopt);
            d->tl->setRangeSelection(std::nullopt);
            d->selLane = -1;
            d->selIndex = -1;
            d->tl->setSelectedInterval(-1, -1);
            d->replot();
            return true;
        default:
            break;
        }
        break;
    }
    default:
        break;
    }
    return QWidget::eventFilter(watched, event);
}

