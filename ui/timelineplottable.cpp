#include "timelineplottable.h"

#include <QThread>

#include "timelinepalette.h"
#include "timemapping.h"

#include <QElapsedTimer>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>

using ws::IntervalKind;
using ws::TimeNs;

namespace {

inline QRgb blend(QRgb bg, QRgb fg, float a)
{
    const float b = 1.0f - a;
    return qRgb(int(qRed(bg) * b + qRed(fg) * a + 0.5f), int(qGreen(bg) * b + qGreen(fg) * a + 0.5f),
                int(qBlue(bg) * b + qBlue(fg) * a + 0.5f));
}
inline QRgb darker(QRgb c, float f) { return qRgb(int(qRed(c) * f), int(qGreen(c) * f), int(qBlue(c) * f)); }

double deviceScale(const QCPPainter *painter)
{
    double s = 1.0;
    const QTransform t = painter->transform();
    if (t.m11() > 0)
        s = t.m11();
    if (painter->device())
        s *= painter->device()->devicePixelRatioF();
    return s;
}

QString roleLabel(const ws::Lane &lane)
{
    if (!lane.roleName.empty())
        return QString::fromStdString(lane.roleName);
    const auto n = ws::warpRoleName(lane.role);
    return QString::fromUtf8(n.data(), qsizetype(n.size()));
}

}  // namespace

TimelinePlottable::TimelinePlottable(QCPAxis *keyAxis, QCPAxis *valueAxis) : QCPAbstractPlottable(keyAxis, valueAxis)
{
    setAntialiased(false);
    setSelectable(QCP::stNone);
}

void TimelinePlottable::setTrace(std::shared_ptr<const ws::KernelTrace> trace, const TimelineLayout *layout)
{
    m_trace = std::move(trace);
    m_layout = layout;
    m_index.reset();
    m_selLane = m_hoverLane = -1;
    m_selIndex = m_hoverIndex = -1;
    m_range.reset();
    m_zoomBand.reset();
    m_ruler.reset();
    m_progress = 0;
}

void TimelinePlottable::setIndex(std::shared_ptr<const ws::lod::TraceIndex> index) { m_index = std::move(index); }

QRect TimelinePlottable::clipRect() const
{
    return mParentPlot ? mParentPlot->viewport() : QCPAbstractPlottable::clipRect();
}

QRect TimelinePlottable::lanesRect() const { return mKeyAxis ? mKeyAxis->axisRect()->rect() : QRect(); }

QRect TimelinePlottable::labelRect() const
{
    const QRect ar = lanesRect();
    const QRect outer = mKeyAxis ? mKeyAxis->axisRect()->outerRect() : QRect();
    return QRect(QPoint(outer.left(), ar.top()), QPoint(ar.left() - 1, ar.bottom()));
}

QRect TimelinePlottable::laneRowRect(int lane) const
{
    if (!m_layout)
        return {};
    const int r = m_layout->rowOfLane(lane);
    if (r < 0)
        return {};
    const TimelineRow &row = m_layout->rows()[std::size_t(r)];
    const QRect ar = lanesRect();
    return QRect(ar.left(), ar.top() + row.top - m_scrollY, ar.width(), row.height);
}

QCPRange TimelinePlottable::getKeyRange(bool &foundRange, QCP::SignDomain) const
{
    foundRange = m_trace && m_trace->intervalCount() > 0;
    if (!foundRange)
        return QCPRange(0, 1);
    return QCPRange(double(m_trace->firstStart() - m_origin), double(m_trace->lastEnd() - m_origin));
}

QCPRange TimelinePlottable::getValueRange(bool &foundRange, QCP::SignDomain, const QCPRange &) const
{
    foundRange = false;
    return QCPRange(0, 1);
}

void TimelinePlottable::rasterRow(const TimelineRow &row, int y0, int y1, int width, double t0, double t1,
                                  double scale, std::vector<TextItem> &texts, const QRect &ar, ws::lod::BucketMix &m_mix) const
{
    const ws::KernelTrace &tr = *m_trace;
    ws::lod::SeriesRef ref;
    const ws::lod::SeriesIndex *idx = nullptr;
    QImage &m_image = const_cast<QImage &>(this->m_image);  // rows write disjoint scan lines
    enum { Kinds, Loads, Overlap } mode = Kinds;
    const ws::Lane *lane = nullptr;
    if (row.type == TimelineRow::Brackets) {
        rasterBrackets(row, y0, y1, width, t0, t1, scale, texts, ar);
        return;
    }
    if (row.type == TimelineRow::Ghost) {
        rasterGhost(row.lane, y0, y1, width, t0, t1, false, m_mix);
        return;
    }
    if (row.type == TimelineRow::Warp) {
        lane = &tr.lanes[std::size_t(row.lane)];
        ref = ws::lod::laneRef(*lane);
        idx = m_index ? &m_index->lane(std::size_t(row.lane)) : &m_raw;
    } else if (row.type == TimelineRow::Loads && m_index) {
        ref = m_index->ctaLoads(std::size_t(row.cta)).ref();
        idx = &m_index->ctaLoads(std::size_t(row.cta)).index;
        mode = Loads;
    } else if (row.type == TimelineRow::CtaHeader && m_index) {
        ref = m_index->ctaOverlap(std::size_t(row.cta)).ref();
        idx = &m_index->ctaOverlap(std::size_t(row.cta)).index;
        mode = Overlap;
    } else {
        return;
    }
    if (ref.n == 0)
        return;
    const int buckets = width * 2;  // about two buckets per device pixel
    idx->query(ref, m_origin, t0, t1, buckets, m_mix);
    const int ncat = m_mix.categories;

    // colours per compact category
    QRgb col[ws::lod::kMaxCategories], hatch[ws::lod::kMaxCategories];
    bool hatched[ws::lod::kMaxCategories];
    const bool laneMatchesRole =
        !m_highlight || !lane || m_highlight->first == ws::WarpRole::Unknown || lane->role == m_highlight->first;
    for (int c = 0; c < ncat; ++c) {
        const int code = m_mix.category[c];
        QColor q, h;
        hatched[c] = false;
        if (mode == Kinds) {
            const auto k = IntervalKind(code);
            q = tlpalette::kindColor(k);
            hatched[c] = tlpalette::kindHatched(k);
            h = tlpalette::hatchColor(k);
            if (m_highlight && !(laneMatchesRole && k == m_highlight->second)) {
                q = tlpalette::faded(q);
                h = tlpalette::faded(h);
            }
        } else if (mode == Loads) {
            q = tlpalette::loadsColor(code);
        } else {
            q = tlpalette::overlapColor(code);
        }
        col[c] = q.rgb();
        hatch[c] = h.isValid() ? h.rgb() : q.rgb();
    }

    const int ys = y0, ye = y1;  // content rows [ys, ye)
    const int hh = ye - ys;
    if (hh <= 0)
        return;
    // spans wider than ~4 px: mark their starts so neighbours of the same kind stay distinct
    long totalStarts = 0;
    for (int b = 0; b < buckets; ++b)
        totalStarts += m_mix.starts[std::size_t(b)];
    const bool edges = mode == Kinds && totalStarts * 4 < width;
    QRgb *const bits = reinterpret_cast<QRgb *>(const_cast<uchar *>(std::as_const(m_image).bits()));  // no detach from a worker thread
    const qsizetype stride = m_image.bytesPerLine() / qsizetype(sizeof(QRgb));
    const QRgb bgRow = bits[std::size_t(std::min(ys, m_image.height() - 1)) * std::size_t(stride)];
    float cov[ws::lod::kMaxCategories];
    int heights[ws::lod::kMaxCategories];
    bool prevCovered = false;
    for (int x = 0; x < width; ++x) {
        const float *a = m_mix.cover.data() + std::size_t(2 * x) * ncat;
        const float *b = a + ncat;
        float total = 0;
        int biggest = 0;
        for (int c = 0; c < ncat; ++c) {
            cov[c] = 0.5f * (a[c] + b[c]);
            total += cov[c];
            if (cov[c] > cov[biggest])
                biggest = c;
        }
        if (total <= 1e-6f) {
            prevCovered = false;
            continue;
        }
        if (cov[biggest] >= 0.98f * total) {
            // one kind fills the column (the common case): no stacking
            std::fill_n(heights, ncat, 0);
            heights[biggest] = hh;
        } else {
            // stacked mix: heights proportional to each kind's share, at least 1 px for a visible share
            int used = 0;
            const float k = float(hh) / total;
            for (int c = 0; c < ncat; ++c) {
                int hpx = int(cov[c] * k + 0.5f);
                if (hpx == 0 && cov[c] > 0.02f * total && hh >= 6)
                    hpx = 1;
                heights[c] = hpx;
                used += hpx;
            }
            heights[biggest] += hh - used;  // rounding goes to the dominant kind
            if (heights[biggest] < 0) {
                // too many 1-px minimums: fall back to the dominant kind only
                std::fill_n(heights, ncat, 0);
                heights[biggest] = hh;
            }
        }
        const float alpha = total >= 0.98f ? 1.0f : std::min(1.0f, 0.35f + 0.65f * total);
        const bool edge = edges && prevCovered && (m_mix.starts[std::size_t(2 * x)] + m_mix.starts[std::size_t(2 * x + 1)]) > 0;
        int y = ys;
        QRgb *dst = bits + std::size_t(ys) * std::size_t(stride) + x;
        for (int c = 0; c < ncat; ++c) {
            if (heights[c] <= 0)
                continue;
            QRgb base = col[c], hb = hatch[c];
            if (edge) {
                base = darker(base, 0.62f);
                hb = darker(hb, 0.62f);
            }
            if (alpha < 1.0f) {
                base = blend(bgRow, base, alpha);
                hb = blend(bgRow, hb, alpha);
            }
            if (!hatched[c]) {
                for (int k = 0; k < heights[c]; ++k, ++y, dst += stride)
                    *dst = base;
            } else {
                int phase = (x + y) % 7;
                for (int k = 0; k < heights[c]; ++k, ++y, dst += stride) {
                    *dst = phase < 2 ? hb : base;
                    if (++phase == 7)
                        phase = 0;
                }
            }
        }
        prevCovered = true;
    }

    // k-step labels inside wide intervals
    if (m_intervalLabels && mode == Kinds && edges && hh >= int(10 * scale)) {
        const double nsPerPx = (t1 - t0) / ar.width();
        std::ptrdiff_t i = ws::lod::findAt(ref, m_origin, t0, 0);
        if (i < 0) {
            i = 0;
            while (std::size_t(i) < ref.n && double(ref.start[i] - m_origin) < t0)
                ++i;
        }
        for (; std::size_t(i) < ref.n; ++i) {
            const double s = double(ref.start[i] - m_origin), e = double(ref.end(std::size_t(i)) - m_origin);
            if (s > t1)
                break;
            const double x0 = std::max(s, t0), x1 = std::min(e, t1);
            const double wpx = (x1 - x0) / nsPerPx;
            if (wpx < 34)
                continue;
            const auto k = lane->kind[std::size_t(i)];
            QString text;
            const int ks = lane->kstep[std::size_t(i)];
            const int sl = lane->slot[std::size_t(i)];
            if (ks >= 0)
                text = QStringLiteral("k%1").arg(ks);
            if (sl >= 0 && wpx > 70)
                text += (text.isEmpty() ? QString() : QStringLiteral(" ")) + QStringLiteral("s%1").arg(sl);
            if (wpx > 150) {
                text = tlpalette::kindName(k, m_trace.get()) + (text.isEmpty() ? QString() : QStringLiteral("  ") + text);
            }
            if (text.isEmpty())
                continue;
            const QColor c = tlpalette::kindColor(k);
            const bool dark = c.lightness() < 140;
            texts.push_back({QRectF(ar.left() + (x0 - t0) / nsPerPx + 2, ar.top() + ys / scale, wpx - 4, hh / scale),
                             text, dark ? QColor(Qt::white) : QColor(0x20, 0x20, 0x20)});
        }
    }
}

void TimelinePlottable::draw(QCPPainter *painter)
{
    QElapsedTimer clock;
    clock.start();
    const QRect ar = lanesRect();
    if (ar.width() <= 0 || ar.height() <= 0)
        return;
    const double scale = deviceScale(painter);
    const int W = std::max(1, int(std::ceil(ar.width() * scale)));
    const int H = std::max(1, int(std::ceil(ar.height() * scale)));
    const double t0 = mKeyAxis->range().lower, t1 = mKeyAxis->range().upper;
    RasterKey key;
    key.t0 = t0;
    key.t1 = t1;
    key.scale = scale;
    key.scrollY = m_scrollY;
    key.w = W;
    key.h = H;
    key.top = ar.top();
    key.left = ar.left();
    key.trace = m_trace.get();
    key.index = m_index.get();
    key.version = m_rasterVersion;
    key.hlRole = m_highlight ? int(m_highlight->first) : -1;
    key.hlKind = m_highlight ? int(m_highlight->second) : -1;
    key.labels = m_intervalLabels;
    key.ghost = m_ghost.get();
    key.ghostOver = m_ghostOver;
    std::vector<TextItem> texts;
    m_lastReused = key == m_lastKey && m_image.width() == W && m_image.height() == H;
    if (m_lastReused) {
        // nothing that changes the lane pixels changed (hover, selection, ruler, range band): reuse them
        for (const CachedText &c : m_lastTexts)
            texts.push_back({c.rect, c.text, c.color});
    } else {
    if (m_image.width() != W || m_image.height() != H)
        m_image = QImage(W, H, QImage::Format_RGB32);
    m_image.fill(tlpalette::background());
    m_lastRows = 0;
    m_lastBuckets = 0;
    if (m_trace && m_layout) {
        const auto &rows = m_layout->rows();
        const QRgb shade = tlpalette::rowShade().rgb();
        const QRgb header = tlpalette::headerBackground().rgb();
        // row backgrounds: alternate CTA groups, SM headers
        for (int r = m_layout->firstRowBelow(m_scrollY); r < int(rows.size()); ++r) {
            const TimelineRow &row = rows[std::size_t(r)];
            if (row.top - m_scrollY >= ar.height())
                break;
            const int y0 = std::max(0, int(std::floor((row.top - m_scrollY) * scale)));
            const int y1 = std::min(H, int(std::floor((row.top + row.height - m_scrollY) * scale)));
            QRgb fill = 0;
            if (row.type == TimelineRow::SmHeader)
                fill = header;
            else if (row.cta % 2 == 1)
                fill = shade;
            if (fill)
                for (int y = y0; y < y1; ++y)
                    std::fill_n(reinterpret_cast<QRgb *>(m_image.bits() + qsizetype(y) * m_image.bytesPerLine()), W, fill);
        }
        // grid lines at the major ticks
        const QRgb grid = tlpalette::gridLine().rgb();
        for (double tick : mKeyAxis->tickVector()) {
            const int x = int(std::floor((mKeyAxis->coordToPixel(tick) - ar.left()) * scale));
            if (x >= 0 && x < W) {
                uchar *b = m_image.bits();
                for (int y = 0; y < H; ++y)
                    reinterpret_cast<QRgb *>(b + qsizetype(y) * m_image.bytesPerLine())[x] = grid;
            }
        }
        struct Job {
            const TimelineRow *row;
            int y0, y1;
            qint64 cost;
        };
        std::vector<Job> jobs;
        qint64 totalCost = 0;
        for (int r = m_layout->firstRowBelow(m_scrollY); r < int(rows.size()); ++r) {
            const TimelineRow &row = rows[std::size_t(r)];
            if (row.top - m_scrollY >= ar.height())
                break;
            ++m_lastRows;
            if (row.type == TimelineRow::SmHeader)
                continue;
            const int pad = std::max(1, int(scale + 0.5));
            int y0 = int(std::floor((row.top - m_scrollY) * scale)) + pad;
            int y1 = int(std::floor((row.top + row.height - m_scrollY) * scale)) - pad;
            if (row.type == TimelineRow::CtaHeader)
                y0 += pad;
            y0 = std::max(0, y0);
            y1 = std::min(H, y1);
            if (y1 <= y0)
                continue;
            const qint64 cost = 2 * W + qint64(W) * (y1 - y0) / 4;  // buckets + pixels, roughly
            jobs.push_back({&row, y0, y1, cost});
            totalCost += cost;
            m_lastBuckets += 2 * W;
        }
        m_image.detach();  // before the worker writes through bits()
        // two halves of about equal cost: one on a worker thread, one here
        std::size_t split = 0;
        for (qint64 acc = 0; split < jobs.size() && acc * 2 < totalCost; ++split)
            acc += jobs[split].cost;
        std::vector<TextItem> texts2;
        auto runJobs = [&](std::size_t from, std::size_t to, std::vector<TextItem> &out, ws::lod::BucketMix &mix) {
            for (std::size_t j = from; j < to; ++j) {
                rasterRow(*jobs[j].row, jobs[j].y0, jobs[j].y1, W, t0, t1, scale, out, ar, mix);
                if (m_ghost && m_ghostOver && jobs[j].row->type == TimelineRow::Warp)
                    rasterGhost(jobs[j].row->lane, jobs[j].y0, jobs[j].y1, W, t0, t1, true, mix);
            }
        };
        // Two raster threads when the machine has two cores or more (WARPSTAGE_TIMELINE_THREADS=1 turns it
        // off). Measured on the 2-core build machine, idle: the whole-kernel frame of the 10M-interval bench
        // went from 17.2 to 11.2 ms median; under a saturated machine it gains nothing (docs/benchmarks.md).
        // If the pool is busy, waitForFinished() runs the queued half on this thread (no stall).
        static const bool parallel = qEnvironmentVariableIsSet("WARPSTAGE_TIMELINE_THREADS")
            ? qEnvironmentVariableIntValue("WARPSTAGE_TIMELINE_THREADS") >= 2
            : QThread::idealThreadCount() >= 2;
        if (parallel && jobs.size() >= 8) {
            QFuture<void> f = QtConcurrent::run([&]() { runJobs(split, jobs.size(), texts2, m_mix[1]); });
            runJobs(0, split, texts, m_mix[0]);
            f.waitForFinished();
            texts.insert(texts.end(), texts2.begin(), texts2.end());
        } else {
            runJobs(0, jobs.size(), texts, m_mix[0]);
        }
    }
        m_lastKey = key;
        m_lastTexts.clear();
        for (const TextItem &t : texts)
            m_lastTexts.push_back({t.rect, t.text, t.color});
    }
    m_lastRasterMs = double(clock.nsecsElapsed()) / 1e6;
    m_image.setDevicePixelRatio(scale);
    painter->save();
    painter->setClipRect(ar);
    painter->drawImage(QPointF(ar.topLeft()), m_image);
    if (!texts.empty()) {
        QFont f = painter->font();
        f.setPixelSize(9);
        painter->setFont(f);
        for (const TextItem &t : texts) {
            painter->setPen(t.color);
            drawCached(painter, t.rect, t.text);
        }
    }
    drawPath(painter, ar);
    drawOverlays(painter, ar);
    painter->restore();
    drawLabels(painter, ar);
    m_lastDrawMs = double(clock.nsecsElapsed()) / 1e6;
}

QRectF TimelinePlottable::intervalRect(int lane, qsizetype index, const QRect &ar) const
{
    if (!m_trace || !m_layout || lane < 0 || std::size_t(lane) >= m_trace->lanes.size())
        return {};
    const ws::Lane &l = m_trace->lanes[std::size_t(lane)];
    if (index < 0 || std::size_t(index) >= l.size())
        return {};
    const int r = m_layout->rowOfLane(lane);
    if (r < 0)
        return {};
    const TimelineRow &row = m_layout->rows()[std::size_t(r)];
    double x0 = mKeyAxis->coordToPixel(double(l.start[std::size_t(index)] - m_origin));
    double x1 = mKeyAxis->coordToPixel(double(l.end(std::size_t(index)) - m_origin));
    if (x1 - x0 < 3) {
        const double c = (x0 + x1) / 2;
        x0 = c - 1.5;
        x1 = c + 1.5;
    }
    const double y = ar.top() + row.top - m_scrollY;
    return QRectF(x0, y + 0.5, x1 - x0, row.height - 1.0);
}

void TimelinePlottable::drawOverlays(QCPPainter *painter, const QRect &ar)
{
    painter->setRenderHint(QPainter::Antialiasing, false);
    // hover and selection outlines
    if (m_hoverLane >= 0 && !(m_hoverLane == m_selLane && m_hoverIndex == m_selIndex)) {
        const QRectF r = intervalRect(m_hoverLane, m_hoverIndex, ar);
        if (r.isValid()) {
            painter->setPen(QPen(QColor(0x30, 0x30, 0x30), 1));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(r.adjusted(0, 0, -1, -1));
        }
    }
    if (m_selLane >= 0) {
        const QRectF r = intervalRect(m_selLane, m_selIndex, ar);
        if (r.isValid()) {
            painter->setPen(QPen(QColor(0x00, 0x00, 0x00), 2));
            painter->setBrush(QColor(255, 255, 255, 60));
            painter->drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
        }
    }
    QFont f = painter->font();
    f.setPixelSize(11);
    painter->setFont(f);
    const QFontMetrics fm(f);
    auto tag = [&](const QPointF &at, const QString &text, const QColor &bg) {
        const QRectF box(at.x() - fm.horizontalAdvance(text) / 2.0 - 5, at.y(), fm.horizontalAdvance(text) + 10,
                         fm.height() + 4);
        QRectF b = box;
        if (b.left() < ar.left())
            b.moveLeft(ar.left() + 2);
        if (b.right() > ar.right())
            b.moveRight(ar.right() - 2);
        painter->setPen(Qt::NoPen);
        painter->setBrush(bg);
        painter->drawRoundedRect(b, 3, 3);
        painter->setPen(Qt::white);
        painter->drawText(b, Qt::AlignCenter, text);
    };
    auto band = [&](const QPair<double, double> &r, const QColor &fill, const QColor &edge, bool label) {
        const double x0 = mKeyAxis->coordToPixel(std::min(r.first, r.second));
        const double x1 = mKeyAxis->coordToPixel(std::max(r.first, r.second));
        painter->setPen(Qt::NoPen);
        painter->setBrush(fill);
        painter->drawRect(QRectF(x0, ar.top(), x1 - x0, ar.height()));
        painter->setPen(QPen(edge, 1));
        painter->drawLine(QPointF(x0, ar.top()), QPointF(x0, ar.bottom()));
        painter->drawLine(QPointF(x1, ar.top()), QPointF(x1, ar.bottom()));
        if (label)
            tag(QPointF((x0 + x1) / 2, ar.top() + 4), QStringLiteral("Δt %1").arg(timemap::formatDuration(std::abs(r.second - r.first))), edge);
    };
    if (m_range)
        band(*m_range, QColor(0x33, 0x66, 0xCC, 40), QColor(0x33, 0x66, 0xCC), true);
    if (m_zoomBand)
        band(*m_zoomBand, QColor(0x80, 0x80, 0x80, 50), QColor(0x50, 0x50, 0x50), true);
    if (m_ruler) {
        const double x0 = mKeyAxis->coordToPixel(m_ruler->t0), x1 = mKeyAxis->coordToPixel(m_ruler->t1);
        const QColor c(0xD0, 0x30, 0x90);
        painter->setRenderHint(QPainter::Antialiasing, true);
        painter->setPen(QPen(c, 1, Qt::DashLine));
        painter->drawLine(QPointF(x0, ar.top()), QPointF(x0, ar.bottom()));
        painter->drawLine(QPointF(x1, ar.top()), QPointF(x1, ar.bottom()));
        painter->setPen(QPen(c, 2));
        const double y = m_ruler->y0;
        painter->drawLine(QPointF(x0, y), QPointF(x1, y));
        painter->drawLine(QPointF(x0, y - 5), QPointF(x0, y + 5));
        painter->drawLine(QPointF(x1, y - 5), QPointF(x1, y + 5));
        tag(QPointF((x0 + x1) / 2, y + 6), QStringLiteral("Δt %1").arg(timemap::formatDuration(std::abs(m_ruler->t1 - m_ruler->t0))), c);
        painter->setRenderHint(QPainter::Antialiasing, false);
    }
    if (m_trace && !m_index) {
        const QString text = QStringLiteral("indexing… %1%").arg(m_progress);
        tag(QPointF(ar.right() - fm.horizontalAdvance(text) / 2.0 - 12, ar.bottom() - fm.height() - 10), text, QColor(0x60, 0x60, 0x60));
    }
}

void TimelinePlottable::drawLabels(QCPPainter *painter, const QRect &ar)
{
    const QRect lr = labelRect();
    if (lr.width() <= 4)
        return;
    painter->save();
    painter->setClipRect(lr);
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->fillRect(lr, tlpalette::background());
    if (m_trace && m_layout) {
        QFont base = painter->font();
        base.setPixelSize(11);
        QFont bold = base;
        bold.setBold(true);
        QFont small = base;
        small.setPixelSize(10);
        const auto &rows = m_layout->rows();
        for (int r = m_layout->firstRowBelow(m_scrollY); r < int(rows.size()); ++r) {
            const TimelineRow &row = rows[std::size_t(r)];
            const int y = ar.top() + row.top - m_scrollY;
            if (y >= ar.bottom())
                break;
            const QRect rr(lr.left(), y, lr.width(), row.height);
            if (row.type == TimelineRow::SmHeader)
                painter->fillRect(rr, tlpalette::headerBackground());
            else if (row.cta % 2 == 1)
                painter->fillRect(rr, tlpalette::rowShade());
            painter->setPen(tlpalette::labelText());
            auto arrow = [&](int x, bool collapsed) {
                const int cy = y + row.height / 2;
                QPolygonF p;
                if (collapsed)
                    p << QPointF(x, cy - 4) << QPointF(x + 5, cy) << QPointF(x, cy + 4);
                else
                    p << QPointF(x - 1, cy - 2) << QPointF(x + 7, cy - 2) << QPointF(x + 3, cy + 3);
                painter->setBrush(QColor(0x55, 0x5B, 0x66));
                painter->setPen(Qt::NoPen);
                painter->drawPolygon(p);
                painter->setPen(tlpalette::labelText());
            };
            const ws::Cta *cta = row.cta >= 0 ? &m_trace->ctas[std::size_t(row.cta)] : nullptr;
            switch (row.type) {
            case TimelineRow::SmHeader: {
                arrow(lr.left() + 5, row.collapsed);
                painter->setFont(bold);
                drawCached(painter, rr.adjusted(16, 0, -4, 0), QStringLiteral("SM %1").arg(row.sm));
                break;
            }
            case TimelineRow::CtaHeader: {
                arrow(lr.left() + 15, row.collapsed);
                painter->setFont(base);
                QString t = QStringLiteral("CTA %1").arg(cta->blockLinear);
                if (cta->tileM >= 0)
                    t += QStringLiteral("  tile %1,%2").arg(cta->tileM).arg(cta->tileN);
                drawCached(painter, rr.adjusted(26, 0, -4, 0), t);
                painter->setFont(small);
                painter->setPen(QColor(0x70, 0x76, 0x80));
                drawCached(painter, rr.adjusted(26, 0, -6, 0), QStringLiteral("overlap"), true);
                break;
            }
            case TimelineRow::Loads: {
                painter->setFont(small);
                painter->setPen(QColor(0x50, 0x60, 0x80));
                QString t = QStringLiteral("loads in flight");
                if (m_index)
                    t += QStringLiteral(" (max %1)").arg(m_index->maxLoadsInFlight(std::size_t(row.cta)));
                drawCached(painter, rr.adjusted(36, 0, -6, 0), t);
                break;
            }
            case TimelineRow::Brackets: break;  // the warp's label below names it
            case TimelineRow::Ghost: {
                QFont it = small;
                it.setItalic(true);
                it.setPixelSize(std::min(10, std::max(6, row.height - 2)));
                painter->setFont(it);
                painter->setPen(QColor(0x70, 0x76, 0x80));
                drawCached(painter, rr.adjusted(38, 0, -4, 0), QStringLiteral("predicted"));
                break;
            }
            case TimelineRow::Warp: {
                const ws::Lane &lane = m_trace->lanes[std::size_t(row.lane)];
                painter->fillRect(QRect(lr.left() + 30, y + 2, 3, row.height - 4), tlpalette::roleColor(lane.role));
                QFont tiny = small;
                tiny.setPixelSize(std::max(6, row.height - 1));
                painter->setFont(row.height >= 13 ? base : row.height >= 10 ? small : tiny);
                painter->setPen(lane.size() == 0 ? QColor(0x99, 0x99, 0x99) : tlpalette::labelText());
                const QString t = QStringLiteral("w%1  %2").arg(lane.warpIndex).arg(roleLabel(lane));
                const QRect tr = rr.adjusted(38, 0, -4, 0);
                drawCached(painter, tr, t);
                break;
            }
            }
        }
    }
    painter->setPen(QColor(0xC8, 0xCC, 0xD2));
    painter->drawLine(QLineF(lr.right(), lr.top(), lr.right(), lr.bottom()));
    painter->restore();
}

void TimelinePlottable::drawCached(QCPPainter *painter, const QRectF &rect, const QString &text, bool alignRight)
{
    const QFont &f = painter->font();
    const int wq = int(rect.width()) / 6 * 6;  // width quantised: elision changes in 6 px steps
    const QString key = QString::number(f.pixelSize()) + (f.bold() ? u'b' : u'n') + (f.italic() ? u'i' : u'r') +
                        QString::number(wq) + u'|' + text;
    auto it = m_textCache.find(key);
    if (it == m_textCache.end()) {
        if (m_textCache.size() > 4000)
            m_textCache.clear();
        const QFontMetrics fm(f);
        QStaticText st(fm.horizontalAdvance(text) <= wq ? text : fm.elidedText(text, Qt::ElideRight, wq));
        st.setTextFormat(Qt::PlainText);
        st.prepare(QTransform(), f);
        it = m_textCache.insert(key, st);
    }
    const QSizeF sz = it->size();
    if (sz.width() <= 0)
        return;
    const double x = alignRight ? rect.right() - sz.width() : rect.left();
    painter->drawStaticText(QPointF(x, rect.top() + (rect.height() - sz.height()) / 2.0), *it);
}

TimelinePlottable::Hit TimelinePlottable::hitTest(const QPointF &pos) const
{
    Hit h;
    const QRect ar = lanesRect();
    if (!m_trace || !m_layout || pos.y() < ar.top() || pos.y() > ar.bottom() || pos.x() > ar.right())
        return h;
    h.inLabels = pos.x() < ar.left();
    h.t = mKeyAxis->pixelToCoord(pos.x());
    h.row = m_layout->rowAt(int(pos.y()) - ar.top() + m_scrollY);
    if (h.row < 0)
        return h;
    const TimelineRow &row = m_layout->rows()[std::size_t(h.row)];
    h.type = row.type;
    h.cta = row.cta;
    h.sm = row.sm;
    h.lane = row.lane;
    if (h.inLabels) {
        h.onArrow = row.type == TimelineRow::SmHeader || row.type == TimelineRow::CtaHeader;
        return h;
    }
    const double slack = 3.0 * std::abs(mKeyAxis->pixelToCoord(1) - mKeyAxis->pixelToCoord(0));
    if (row.type == TimelineRow::Brackets) {
        h.index = bracketAt(row, pos.y() - ar.top() + m_scrollY - row.top, h.t);
    } else if (row.type == TimelineRow::Ghost) {
        if (m_ghost && std::size_t(row.lane) < m_ghost->lanes.size())
            h.index = ws::lod::findAt(ws::lod::laneRef(m_ghost->lanes[std::size_t(row.lane)]), m_origin, h.t, slack);
    } else if (row.type == TimelineRow::Warp) {
        h.index = ws::lod::findAt(ws::lod::laneRef(m_trace->lanes[std::size_t(row.lane)]), m_origin, h.t, slack);
    } else if (m_index && (row.type == TimelineRow::Loads || row.type == TimelineRow::CtaHeader)) {
        const ws::lod::OwnedSeries &s = row.type == TimelineRow::Loads ? m_index->ctaLoads(std::size_t(row.cta))
                                                                       : m_index->ctaOverlap(std::size_t(row.cta));
        const auto i = ws::lod::findAt(s.ref(), m_origin, h.t, 0);
        if (i >= 0) {
            h.category = s.cat[std::size_t(i)];
            h.segStart = s.start[std::size_t(i)];
            h.segEnd = s.start[std::size_t(i)] + s.duration[std::size_t(i)];
        } else {
            h.category = 0;
        }
    }
    return h;
}
