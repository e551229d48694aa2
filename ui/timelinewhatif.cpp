// TimelinePlottable's what-if drawing (issue 13): the predicted timeline as ghost rows (a lighter copy of the
// palette with darker edges, under each warp) or as a frame over each measured lane (the predicted kind on
// the lane's top and bottom edges), and the critical path's outline over the lanes it runs through.
#include "timelineplottable.h"

#include "timelinepalette.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace {
inline QRgb mix(QRgb bg, QRgb fg, float a)
{
    const float b = 1.0f - a;
    return qRgb(int(qRed(bg) * b + qRed(fg) * a + 0.5f), int(qGreen(bg) * b + qGreen(fg) * a + 0.5f),
                int(qBlue(bg) * b + qBlue(fg) * a + 0.5f));
}
}  // namespace

void TimelinePlottable::setGhost(std::shared_ptr<const ws::ui::GhostLanes> ghost, bool overLanes)
{
    m_ghost = std::move(ghost);
    m_ghostOver = overLanes;
}

void TimelinePlottable::rasterGhost(int laneIndex, int y0, int y1, int width, double t0, double t1, bool frame,
                                    ws::lod::BucketMix &bm) const
{
    if (!m_ghost || laneIndex < 0 || std::size_t(laneIndex) >= m_ghost->lanes.size() || y1 <= y0)
        return;
    const ws::Lane &lane = m_ghost->lanes[std::size_t(laneIndex)];
    const ws::lod::SeriesRef ref = ws::lod::laneRef(lane);
    if (ref.n == 0)
        return;
    const int buckets = width * 2;
    m_ghost->laneIndex(std::size_t(laneIndex)).query(ref, m_origin, t0, t1, buckets, bm);
    const int ncat = bm.categories;
    QImage &img = const_cast<QImage &>(m_image);  // rows write disjoint scan lines
    QRgb *const bits = reinterpret_cast<QRgb *>(const_cast<uchar *>(std::as_const(img).bits()));
    const qsizetype stride = img.bytesPerLine() / qsizetype(sizeof(QRgb));
    const QRgb bg = tlpalette::background().rgb();
    QRgb col[ws::lod::kMaxCategories], light[ws::lod::kMaxCategories];
    bool hatched[ws::lod::kMaxCategories];
    for (int c = 0; c < ncat; ++c) {
        const auto k = ws::IntervalKind(bm.category[c]);
        col[c] = tlpalette::kindColor(k).rgb();
        light[c] = mix(bg, col[c], 0.42f);  // the ghost: lighter, same hue
        hatched[c] = tlpalette::kindHatched(k);
    }
    // intervals wider than ~4 px get a darker start column (as on the measured lanes); zoomed out, the ghost is
    // its light fill between full-colour top and bottom edges
    long totalStarts = 0;
    for (int b = 0; b < buckets; ++b)
        totalStarts += bm.starts[std::size_t(b)];
    const bool ticks = totalStarts * 4 < width;
    const int edgeH = frame ? std::max(2, (y1 - y0) / 5) : 1;
    int prevDominant = -1;
    for (int x = 0; x < width; ++x) {
        const float *a = bm.cover.data() + std::size_t(2 * x) * ncat;
        const float *b = a + ncat;
        int best = -1;
        float bestCov = 0, total = 0;
        for (int c = 0; c < ncat; ++c) {
            const float v = a[c] + b[c];
            total += v;
            if (v > bestCov) {
                bestCov = v;
                best = c;
            }
        }
        if (best < 0 || total < 0.2f) {  // less than a tenth of the column covered: leave it
            prevDominant = -1;
            continue;
        }
        // an interval starts here (or the kind changes): a darker tick, so the ghost reads as outlined boxes
        const bool tick = ticks && (prevDominant != best || (bm.starts[std::size_t(2 * x)] + bm.starts[std::size_t(2 * x + 1)]) > 0);
        prevDominant = best;
        QRgb *dst = bits + std::size_t(y0) * std::size_t(stride) + x;
        for (int y = y0; y < y1; ++y, dst += stride) {
            const bool edge = y - y0 < edgeH || y1 - 1 - y < edgeH;
            if (frame) {
                if (edge)
                    *dst = col[best];
                continue;
            }
            if (edge || tick)
                *dst = col[best];
            else if (hatched[best] && (x + y) % 7 < 2)
                *dst = mix(bg, col[best], 0.7f);
            else
                *dst = light[best];
        }
    }
}

void TimelinePlottable::drawPath(QCPPainter *painter, const QRect &ar)
{
    m_pathMarks.clear();
    if (!m_pathVisible || !m_path || m_path->empty() || !m_trace || !m_layout)
        return;
    const auto &segs = *m_path;
    const double t0 = mKeyAxis->range().lower, t1 = mKeyAxis->range().upper;
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, false);
    const QColor ink(0x10, 0x10, 0x10);
    const QColor gold(0xFF, 0xC8, 0x00);
    QPointF prevEnd;
    bool havePrev = false;
    double lastX1 = -1e9;
    int lastRowTop = INT_MIN;
    for (std::size_t i = 0; i < segs.size(); ++i) {
        const ws::ui::PathSegment &s = segs[i];
        const double rs = double(s.start - m_origin), re = double(s.end - m_origin);
        if (re < t0 || rs > t1 || s.lane < 0) {
            havePrev = false;
            continue;
        }
        const QRect row = laneRowRect(s.lane);
        if (row.isNull() || row.bottom() < ar.top() || row.top() > ar.bottom()) {
            havePrev = false;
            continue;
        }
        double x0 = mKeyAxis->coordToPixel(std::max(rs, t0)), x1 = mKeyAxis->coordToPixel(std::min(re, t1));
        if (x1 - x0 < 2) {
            const double c = (x0 + x1) / 2;
            x0 = c - 1;
            x1 = c + 1;
        }
        const bool emph = m_pathCause < 0 || int(s.cause) == m_pathCause;
        // segments in the same pixels of the same row as the previous one merge (a zoomed-out path of thousands)
        if (row.top() == lastRowTop && x1 <= lastX1 + 0.5 && !m_pathMarks.empty() && m_pathMarks.back().emphasised == emph) {
            havePrev = true;
            prevEnd = QPointF(lastX1, row.center().y());
            continue;
        }
        const QRectF r(x0, row.top() + 0.5, x1 - x0, row.height() - 1.0);
        if (havePrev && std::abs(prevEnd.y() - r.center().y()) > 1) {
            // the path moves to another warp: a thin connector from where it left to where it continues
            painter->setPen(QPen(ink, 1, Qt::DotLine));
            painter->drawLine(prevEnd, QPointF(r.left(), r.center().y()));
        }
        if (emph) {
            painter->setPen(QPen(ink, 2));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
            const QColor band = m_pathCause < 0 ? gold : ws::ui::pathCauseColor(s.cause);
            painter->fillRect(QRectF(r.left(), r.top(), r.width(), 3), band);
        } else {
            painter->setPen(QPen(QColor(0x90, 0x90, 0x90), 1));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(r.adjusted(0, 0, -1, -1));
        }
        m_pathMarks.push_back({r, int(i), emph});
        prevEnd = QPointF(r.right(), r.center().y());
        havePrev = true;
        lastX1 = r.right();
        lastRowTop = row.top();
    }
    painter->restore();
}

// ---------------------------------------------------------------------------------------------------------
// TimelineWidget's what-if API

#include "timelinewidget_p.h"

void TimelineWidget::setCriticalPath(std::vector<ws::ui::PathSegment> segments)
{
    std::sort(segments.begin(), segments.end(),
              [](const ws::ui::PathSegment &a, const ws::ui::PathSegment &b) { return a.start < b.start; });
    d->path = std::make_shared<const std::vector<ws::ui::PathSegment>>(std::move(segments));
    d->tl->setCriticalPath(d->path);
    d->replot();
}

const std::vector<ws::ui::PathSegment> &TimelineWidget::criticalPath() const
{
    static const std::vector<ws::ui::PathSegment> none;
    return d->path ? *d->path : none;
}

void TimelineWidget::setCriticalPathVisible(bool on)
{
    d->tl->setPathVisible(on);
    d->replot();
}

bool TimelineWidget::criticalPathVisible() const { return d->tl->pathVisible(); }

void TimelineWidget::setPathCause(int cause)
{
    d->tl->setPathCause(cause);
    d->replot();
}

void TimelineWidget::setGhostLanes(std::shared_ptr<const ws::ui::GhostLanes> ghost, ws::ui::GhostMode mode)
{
    if (ghost && d->trace && ghost->lanes.size() != d->trace->lanes.size())
        ghost.reset();  // not a prediction of this kernel's lanes
    d->ghost = std::move(ghost);
    d->ghostMode = mode;
    const bool shown = d->ghost && mode != ws::ui::GhostMode::Off;
    d->tl->setGhost(shown ? d->ghost : nullptr, mode == ws::ui::GhostMode::Over);
    // the data range covers the prediction too (a slower prediction ends after the measured kernel)
    d->firstStart = d->traceFirst;
    d->lastEnd = d->traceLast;
    if (shown && d->ghost->end > d->ghost->start) {
        d->firstStart = std::min(d->firstStart, d->ghost->start);
        d->lastEnd = std::max(d->lastEnd, d->ghost->end);
    }
    const bool rows = shown && mode == ws::ui::GhostMode::Beside;
    if (rows != d->layout.ghostRows()) {
        // keep the warp lane at the top of the view where it was: ghost rows move every row below them
        int anchorLane = -1, offset = 0;
        const auto &before = d->layout.rows();
        for (int r = d->layout.firstRowBelow(d->vscroll->value()); r < int(before.size()); ++r)
            if (before[std::size_t(r)].type == TimelineRow::Warp) {
                anchorLane = before[std::size_t(r)].lane;
                offset = before[std::size_t(r)].top - d->vscroll->value();
                break;
            }
        d->layout.setGhostRows(rows);
        d->relayout();
        if (const int r = d->layout.rowOfLane(anchorLane); r >= 0)
            d->vscroll->setValue(std::max(0, d->layout.rows()[std::size_t(r)].top - offset));
    }
    d->tl->invalidateRaster();
    d->replot();
}

ws::ui::GhostMode TimelineWidget::ghostMode() const { return d->ghostMode; }

void TimelineWidget::scrollToLane(int lane)
{
    const int r = d->layout.rowOfLane(lane);
    if (r < 0)
        return;
    const TimelineRow &row = d->layout.rows()[std::size_t(r)];
    const int visible = d->plot->axisRect()->height();
    if (row.top >= d->vscroll->value() && row.top + row.height <= d->vscroll->value() + visible)
        return;  // already in view
    d->vscroll->setValue(std::max(0, row.top - visible / 3));
}
