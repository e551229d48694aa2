// TimelinePlottable's bracket rows: the outer scopes of a warp (KernelTrace::scopes, e.g. Proton's nested
// scopes), one thin level per depth above the warp's lane; the name inside when the span is wide, and on hover.
#include "timelineplottable.h"

#include "timelinepalette.h"

#include <algorithm>
#include <cmath>
#include <utility>

void TimelinePlottable::rasterBrackets(const TimelineRow &row, int y0, int y1, int width, double t0, double t1,
                                       double scale, std::vector<TextItem> &texts, const QRect &ar) const
{
    const auto range = m_layout->scopesOfLane(row.lane);
    if (range.empty() || row.levels <= 0 || t1 <= t0)
        return;
    QImage &img = const_cast<QImage &>(m_image);  // rows write disjoint scan lines
    QRgb *const bits = reinterpret_cast<QRgb *>(const_cast<uchar *>(std::as_const(img).bits()));
    const qsizetype stride = img.bytesPerLine() / qsizetype(sizeof(QRgb));
    const double pxPerNs = width / (t1 - t0);
    const double levelH = double(y1 - y0) / row.levels;
    for (const int *p = range.begin; p != range.end; ++p) {
        const ws::ScopeSpan &s = m_trace->scopes[std::size_t(*p)];
        const double rs = double(s.start - m_origin), re = double(s.end - m_origin);
        if (re < t0 || rs > t1 || s.depth >= row.levels)
            continue;
        const int ly0 = y0 + int(std::floor(s.depth * levelH));
        const int ly1 = std::max(ly0 + 1, y0 + int(std::floor((s.depth + 1) * levelH)) - (levelH >= 3 ? 1 : 0));
        const int xs = int(std::floor((std::max(rs, t0) - t0) * pxPerNs));
        const int xe = std::min(width, std::max(xs + 1, int(std::ceil((std::min(re, t1) - t0) * pxPerNs))));
        if (xs >= width || xe <= 0)
            continue;
        const QRgb fill = tlpalette::bracketFill(s.depth).rgb(), edge = tlpalette::bracketEdge(s.depth).rgb();
        for (int y = ly0; y < ly1; ++y) {
            QRgb *line = bits + std::size_t(y) * std::size_t(stride);
            const bool bottom = y == ly1 - 1;
            for (int x = std::max(0, xs); x < xe; ++x)
                line[x] = bottom ? edge : fill;
            // the bracket's ends, where they are in view
            if (rs >= t0)
                line[std::max(0, xs)] = edge;
            if (re <= t1)
                line[xe - 1] = edge;
        }
        const double wpx = (xe - xs) / scale;  // logical px
        if (m_intervalLabels && wpx >= 40 && (ly1 - ly0) / scale >= 5) {
            texts.push_back({QRectF(ar.left() + xs / scale + 3, ar.top() + ly0 / scale, wpx - 6, (ly1 - ly0) / scale),
                             QString::fromStdString(s.name), QColor(0x20, 0x26, 0x30)});
        }
    }
}

int TimelinePlottable::bracketAt(const TimelineRow &row, double yInRow, double t) const
{
    if (!m_trace || !m_layout || row.type != TimelineRow::Brackets || row.levels <= 0 || row.height <= 0)
        return -1;
    const int depth = std::clamp(int(yInRow * row.levels / row.height), 0, row.levels - 1);
    const auto range = m_layout->scopesOfLane(row.lane);
    int best = -1;
    for (const int *p = range.begin; p != range.end; ++p) {
        const ws::ScopeSpan &s = m_trace->scopes[std::size_t(*p)];
        if (s.depth == depth && double(s.start - m_origin) <= t && t <= double(s.end - m_origin))
            best = *p;  // the latest-starting one wins
    }
    return best;
}
