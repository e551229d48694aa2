#include "programplottable.h"

#include "timelinepalette.h"
#include "timemapping.h"

#include <warpstage/program.h>

#include <QElapsedTimer>

#include <cmath>
#include <string_view>
#include <unordered_map>

using ws::TimeNs;

ProgramPlottable::ProgramPlottable(QCPAxis *keyAxis, QCPAxis *valueAxis) : QCPAbstractPlottable(keyAxis, valueAxis) {}

void ProgramPlottable::setProgram(std::shared_ptr<const ws::ProgramTrace> program, const ProgramLayout *layout)
{
    m_program = std::move(program);
    m_layout = layout;
    m_families.clear();
    if (m_program) {
        // one kernelFamily() per distinct name (a run has thousands of launches of a few dozen names)
        std::unordered_map<std::string_view, std::size_t> index;
        std::vector<std::string> distinct;
        m_families.reserve(m_program->kernels.size());
        for (const auto &k : m_program->kernels) {
            auto [it, fresh] = index.try_emplace(k.name, distinct.size());
            if (fresh)
                distinct.push_back(ws::kernelFamily(k.name));
            m_families.push_back(distinct[it->second]);
        }
    }
    m_selRow = m_selItem = m_hoverRow = m_hoverItem = -1;
}

QRect ProgramPlottable::lanesRect() const { return mKeyAxis ? mKeyAxis->axisRect()->rect() : QRect(); }

QRect ProgramPlottable::clipRect() const
{
    const QRect ar = lanesRect();
    return QRect(ar.left() - kLabelWidth, ar.top(), ar.width() + kLabelWidth, ar.height());
}

QCPRange ProgramPlottable::getKeyRange(bool &foundRange, QCP::SignDomain) const
{
    foundRange = m_program != nullptr;
    if (!m_program)
        return QCPRange(0, 1);
    return QCPRange(double(m_program->firstStart() - m_origin), double(m_program->lastEnd() - m_origin));
}

QCPRange ProgramPlottable::getValueRange(bool &foundRange, QCP::SignDomain, const QCPRange &) const
{
    foundRange = true;
    return QCPRange(0, 1);
}

QColor ProgramPlottable::itemColor(const ProgramItem &it) const
{
    switch (it.kind) {
    case ProgramItem::Kernel: return programpalette::familyColor(m_families[std::size_t(it.index)]);
    case ProgramItem::MemOp: return programpalette::memOpColor(m_program->memOps[std::size_t(it.index)].kind);
    case ProgramItem::Nvtx: return programpalette::nvtxColor(m_program->nvtx[std::size_t(it.index)]);
    case ProgramItem::Api: return programpalette::apiColor();
    }
    return Qt::gray;
}

QString ProgramPlottable::itemText(const ProgramItem &it) const
{
    switch (it.kind) {
    case ProgramItem::Kernel: return QString::fromStdString(m_families[std::size_t(it.index)]);
    case ProgramItem::MemOp: return programpalette::memOpLabel(m_program->memOps[std::size_t(it.index)].kind);
    case ProgramItem::Nvtx: return QString::fromStdString(m_program->nvtx[std::size_t(it.index)].name);
    case ProgramItem::Api: return QString::fromStdString(m_program->apiSpans[std::size_t(it.index)].name);
    }
    return {};
}

bool ProgramPlottable::faded(const ProgramItem &it) const
{
    if (m_highlight.empty())
        return false;
    return it.kind != ProgramItem::Kernel || m_program->kernels[std::size_t(it.index)].name != m_highlight;
}

void ProgramPlottable::drawRow(QCPPainter *p, const ProgramRow &row, const QRect &rr, double t0, double t1, const QRect &ar)
{
    const double scale = ar.width() / (t1 - t0);
    auto xOf = [&](TimeNs t) { return ar.left() + (double(t - m_origin) - t0) * scale; };
    const TimeNs a0 = m_origin + TimeNs(std::floor(t0));
    const TimeNs a1 = m_origin + TimeNs(std::ceil(t1));
    const auto &items = row.items;
    const std::size_t n = items.size();
    const int pad = row.type == ProgramRow::Stream ? 3 : 1;
    const int y = rr.top() + pad, h = std::max(1, rr.height() - 2 * pad);
    int lastCol = std::numeric_limits<int>::min();  // last pixel column painted
    QFont f = p->font();
    f.setPixelSize(row.type == ProgramRow::Stream ? 11 : 10);
    p->setFont(f);
    const QFontMetrics fm(f);
    for (std::size_t i = row.firstVisible(a0); i < n && items[i].start < a1;) {
        ++m_lastVisited;
        const ProgramItem &it = items[i];
        const double x0 = xOf(it.start), x1 = xOf(it.end);
        if (int(std::floor(x1)) <= lastCol) {
            // inside a column painted already: skip every record that starts and ends before the next column
            const TimeNs tNext = m_origin + TimeNs(std::ceil(t0 + (lastCol + 1 - ar.left()) / scale));
            const auto j = std::size_t(std::lower_bound(items.begin() + std::ptrdiff_t(i), items.end(), tNext,
                                                        [](const ProgramItem &a, TimeNs t) { return a.start < t; }) -
                                       items.begin());
            // items i..j-2 end inside this column if their running maximum end does (item j-1 may cross
            // into the next column: it is looked at next)
            if (j >= i + 2 && row.maxEnd[j - 2] <= tNext)
                i = j - 1;
            else
                ++i;
            continue;
        }
        const int c0 = std::max(int(std::floor(x0)), ar.left() - 1);
        const int c1 = std::min(std::max(int(std::floor(x0)) + 1, int(std::ceil(x1))), ar.right() + 2);
        QColor c = itemColor(it);
        if (faded(it))
            c = tlpalette::faded(c, 0.8);
        const QRect r(c0, y, std::max(1, c1 - c0), h);
        p->fillRect(r, c);
        if (it.kind == ProgramItem::MemOp)
            p->fillRect(r, QBrush(QColor(255, 255, 255, 150), Qt::BDiagPattern));
        if (r.width() > 36) {
            const QString text = fm.elidedText(itemText(it), Qt::ElideRight, r.width() - 6);
            if (!text.isEmpty() && text != QStringLiteral("…")) {
                p->setPen(c.lightness() < 140 ? QColor(Qt::white) : tlpalette::labelText());
                p->drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
            }
        }
        ++m_lastDrawn;
        lastCol = c1 - 1;
        ++i;
    }
}

void ProgramPlottable::draw(QCPPainter *painter)
{
    QElapsedTimer timer;
    timer.start();
    m_lastVisited = m_lastDrawn = 0;
    const QRect ar = lanesRect();
    const QRect clip = clipRect();
    painter->save();
    painter->setClipRect(clip);
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->fillRect(clip, tlpalette::background());
    if (!m_program || !m_layout || m_layout->rows().empty()) {
        painter->setPen(tlpalette::labelText());
        painter->drawText(ar, Qt::AlignCenter, m_program ? QStringLiteral("This run has no launches, copies or NVTX ranges")
                                                         : QStringLiteral("No program loaded"));
        painter->restore();
        return;
    }
    const double t0 = mKeyAxis->range().lower, t1 = mKeyAxis->range().upper;
    const auto &rows = m_layout->rows();
    const int top = ar.top() - m_scrollY;
    const int first = std::max(0, m_layout->rowAt(m_scrollY));
    QFont base = painter->font();
    for (int r = first; r < int(rows.size()); ++r) {
        const ProgramRow &row = rows[std::size_t(r)];
        const QRect rr(ar.left(), top + row.top, ar.width(), row.height);
        if (rr.top() > ar.bottom())
            break;
        const QRect lr(ar.left() - kLabelWidth, rr.top(), kLabelWidth, rr.height());
        if (row.type == ProgramRow::DeviceHeader) {
            painter->fillRect(QRect(lr.left(), rr.top(), lr.width() + rr.width(), rr.height()), tlpalette::headerBackground());
        } else if (r % 2 == 1) {
            painter->fillRect(rr, tlpalette::rowShade());
        }
        painter->setClipRect(rr.intersected(ar));
        if (row.type == ProgramRow::DeviceHeader || row.type == ProgramRow::Stream)
            drawGaps(painter, row, rr, t0, t1);
        if (row.type != ProgramRow::DeviceHeader)
            drawRow(painter, row, rr, t0, t1, ar);
        if (r == m_selRow && m_selItem >= 0) {
            painter->setPen(QPen(tlpalette::labelText(), 2));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(itemRect(r, m_selItem).adjusted(-1, -1, 1, 1));
        }
        if (r == m_hoverRow && m_hoverItem >= 0 && !(r == m_selRow && m_hoverItem == m_selItem)) {
            painter->setPen(QPen(QColor(0x20, 0x24, 0x2A, 160), 1));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(itemRect(r, m_hoverItem));
        }
        // label column
        painter->setClipRect(lr.intersected(clip));
        if (row.type != ProgramRow::DeviceHeader)
            painter->fillRect(lr, tlpalette::background());
        QFont f = base;
        f.setPixelSize(row.type == ProgramRow::Stream ? 11 : 10);
        f.setBold(row.type == ProgramRow::DeviceHeader);
        painter->setFont(f);
        painter->setPen(row.type == ProgramRow::Nvtx || row.type == ProgramRow::Api ? QColor(0x60, 0x66, 0x70) : tlpalette::labelText());
        painter->drawText(lr.adjusted(6, 0, -4, 0), Qt::AlignVCenter | Qt::AlignLeft,
                          QFontMetrics(f).elidedText(row.label, Qt::ElideRight, lr.width() - 10));
        painter->setClipRect(clip);
    }
    painter->setFont(base);
    painter->setClipRect(ar);
    drawArrows(painter, t0, t1, ar);
    auto px = [&](double t) { return mKeyAxis->coordToPixel(t); };
    if (m_range) {
        const double a = px(std::min(m_range->first, m_range->second)), b = px(std::max(m_range->first, m_range->second));
        painter->fillRect(QRectF(a, ar.top(), std::max(1.0, b - a), ar.height()), QColor(0x33, 0x66, 0xAA, 40));
        painter->setPen(QColor(0x33, 0x66, 0xAA));
        painter->drawText(QRectF(a + 4, ar.top() + 2, 300, 16), Qt::AlignLeft | Qt::AlignTop,
                          QStringLiteral("Δt %1").arg(timemap::formatDuration(std::abs(m_range->second - m_range->first))));
    }
    if (m_zoomBand) {
        const double a = px(std::min(m_zoomBand->first, m_zoomBand->second)), b = px(std::max(m_zoomBand->first, m_zoomBand->second));
        painter->fillRect(QRectF(a, ar.top(), std::max(1.0, b - a), ar.height()), QColor(0x80, 0x80, 0x80, 50));
    }
    if (m_ruler) {
        const double a = px(m_ruler->first), b = px(m_ruler->second);
        painter->setPen(QPen(QColor(0xCC, 0x33, 0x11), 1, Qt::DashLine));
        painter->drawLine(QPointF(a, ar.top()), QPointF(a, ar.bottom()));
        painter->drawLine(QPointF(b, ar.top()), QPointF(b, ar.bottom()));
        painter->setPen(QColor(0xCC, 0x33, 0x11));
        painter->drawText(QRectF(std::min(a, b) + 4, ar.top() + 18, 300, 16), Qt::AlignLeft | Qt::AlignTop,
                          QStringLiteral("Δt %1").arg(timemap::formatDuration(std::abs(m_ruler->second - m_ruler->first))));
    }
    painter->restore();
    m_lastDrawMs = double(timer.nsecsElapsed()) / 1e6;
}

QRectF ProgramPlottable::itemRect(int row, int item) const
{
    if (!m_layout || row < 0 || row >= int(m_layout->rows().size()))
        return {};
    const ProgramRow &r = m_layout->rows()[std::size_t(row)];
    if (item < 0 || item >= int(r.items.size()))
        return {};
    const QRect ar = lanesRect();
    const ProgramItem &it = r.items[std::size_t(item)];
    const double x0 = mKeyAxis->coordToPixel(double(it.start - m_origin));
    const double x1 = std::max(x0 + 1, mKeyAxis->coordToPixel(double(it.end - m_origin)));
    const int pad = r.type == ProgramRow::Stream ? 3 : 1;
    return QRectF(x0, ar.top() - m_scrollY + r.top + pad, x1 - x0, r.height - 2 * pad);
}

ProgramPlottable::Hit ProgramPlottable::hitTest(const QPointF &pos) const
{
    Hit h;
    if (!m_layout || !m_program)
        return h;
    const QRect ar = lanesRect();
    if (pos.y() < ar.top() || pos.y() > ar.bottom())
        return h;
    h.row = m_layout->rowAt(int(pos.y()) - ar.top() + m_scrollY);
    h.t = mKeyAxis->pixelToCoord(pos.x());
    h.inLabels = pos.x() < ar.left();
    if (h.row < 0 || h.inLabels)
        return h;
    const ProgramRow &row = m_layout->rows()[std::size_t(h.row)];
    // a record under the cursor, within 2 px; the narrowest wins (an instant launch among long ranges)
    const double tol = 2.0 * (mKeyAxis->range().size() / std::max(1, ar.width()));
    const TimeNs lo = m_origin + TimeNs(std::floor(h.t - tol)), hi = m_origin + TimeNs(std::ceil(h.t + tol));
    TimeNs best = std::numeric_limits<TimeNs>::max();
    double bestDist = 1e300;
    for (std::size_t i = row.firstVisible(lo); i < row.items.size() && row.items[i].start <= hi; ++i) {
        const ProgramItem &it = row.items[i];
        if (it.end < lo)
            continue;
        const double mid = double((it.start + it.end) / 2 - m_origin);
        const bool inside = double(it.start - m_origin) <= h.t && h.t <= double(it.end - m_origin);
        const double dist = inside ? 0 : std::abs(mid - h.t);
        const TimeNs len = it.end - it.start;
        if (dist < bestDist || (dist == bestDist && len < best)) {
            bestDist = dist;
            best = len;
            h.item = int(i);
        }
    }
    return h;
}

void ProgramPlottable::drawGaps(QCPPainter *p, const ProgramRow &row, const QRect &rr, double t0, double t1)
{
    if (!m_gaps || m_gaps->empty())
        return;
    const TimeNs a0 = m_origin + TimeNs(std::floor(t0)), a1 = m_origin + TimeNs(std::ceil(t1));
    // gaps are disjoint and in time order: the first that ends after the view's start
    auto it = std::upper_bound(m_gaps->begin(), m_gaps->end(), a0, [](TimeNs t, const GapInfo &g) { return t < g.gap.end; });
    const bool header = row.type == ProgramRow::DeviceHeader;
    QFont f = p->font();
    f.setPixelSize(10);
    p->setFont(f);
    const QFontMetrics fm(f);
    for (; it != m_gaps->end() && it->gap.start < a1; ++it) {
        const double x0 = mKeyAxis->coordToPixel(double(it->gap.start - m_origin));
        const double x1 = mKeyAxis->coordToPixel(double(it->gap.end - m_origin));
        const QRectF r(x0, rr.top(), std::max(1.0, x1 - x0), rr.height());
        p->fillRect(r, programpalette::idleGapColor());
        p->fillRect(r, QBrush(programpalette::idleGapHatch(), Qt::FDiagPattern));  // the other way round from copies
        if (header && r.width() > 60) {
            const QString text = fm.elidedText(QStringLiteral("idle %1").arg(timemap::formatDuration(double(it->length()))),
                                               Qt::ElideRight, int(r.width()) - 6);
            p->setPen(programpalette::idleGapText());
            p->drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignHCenter, text);
        }
    }
}

int ProgramPlottable::gapAt(const QPointF &pos) const
{
    if (!m_gaps || m_gaps->empty() || !m_layout)
        return -1;
    const QRect ar = lanesRect();
    if (pos.x() < ar.left() || pos.y() < ar.top() || pos.y() > ar.bottom())
        return -1;
    const int r = m_layout->rowAt(int(pos.y()) - ar.top() + m_scrollY);
    if (r < 0)
        return -1;
    const auto type = m_layout->rows()[std::size_t(r)].type;
    if (type != ProgramRow::Stream && type != ProgramRow::DeviceHeader)
        return -1;
    const double t = mKeyAxis->pixelToCoord(pos.x());
    const TimeNs a = m_origin + TimeNs(std::floor(t));
    auto it = std::upper_bound(m_gaps->begin(), m_gaps->end(), a, [](TimeNs v, const GapInfo &g) { return v < g.gap.end; });
    if (it == m_gaps->end() || double(it->gap.start - m_origin) > t)
        return -1;
    return int(it - m_gaps->begin());
}

bool ProgramPlottable::arrowFor(int api, LaunchRef launch, bool focus, Arrow &out) const
{
    const auto [ra, ia] = m_layout->rowOf(ProgramItem::Api, api);
    const auto [rl, il] = m_layout->rowOf(launch.kind, launch.index);
    if (ra < 0 || rl < 0)
        return false;
    const QRectF from = itemRect(ra, ia), to = itemRect(rl, il);
    out.api = api;
    out.launch = launch;
    out.line = QLineF(from.left(), from.bottom(), to.left(), to.top());
    out.focus = focus;
    return true;
}

void ProgramPlottable::addArrowsOf(int row, int item, bool focus, std::vector<Arrow> &out)
{
    if (!m_links || row < 0 || item < 0 || row >= int(m_layout->rows().size()))
        return;
    const ProgramRow &r = m_layout->rows()[std::size_t(row)];
    if (item >= int(r.items.size()))
        return;
    const ProgramItem &it = r.items[std::size_t(item)];
    Arrow a;
    if (it.kind == ProgramItem::Api) {
        for (const LaunchRef &l : m_links->launchesOf(it.index))
            if (arrowFor(it.index, l, focus, a)) {
                out.push_back(a);
                m_partners.push_back(m_layout->rowOf(l.kind, l.index));
            }
    } else if (it.kind == ProgramItem::Kernel || it.kind == ProgramItem::MemOp) {
        const LaunchRef l{it.kind, it.index};
        const int api = m_links->apiOf(l);
        if (api >= 0 && arrowFor(api, l, focus, a)) {
            out.push_back(a);
            m_partners.push_back(m_layout->rowOf(ProgramItem::Api, api));
        }
    }
}

void ProgramPlottable::drawArrows(QCPPainter *p, double t0, double t1, const QRect &ar)
{
    m_arrows.clear();
    m_partners.clear();
    if (!m_links || !m_layout)
        return;
    bool apiRows = false;
    for (const ProgramRow &r : m_layout->rows())
        apiRows = apiRows || r.type == ProgramRow::Api;
    if (!apiRows)
        return;
    addArrowsOf(m_selRow, m_selItem, true, m_arrows);
    if (!(m_hoverRow == m_selRow && m_hoverItem == m_selItem))
        addArrowsOf(m_hoverRow, m_hoverItem, true, m_arrows);
    // every launch that starts in view, when few enough do to stay readable (at most cap + 1 records are
    // looked at, whatever the zoom); only those whose call starts in view too get an arrow: arrows from
    // off-screen calls (a CPU far ahead of the GPU) only add clutter
    const int cap = std::min(kMaxAllArrows, ar.width() / 16);
    const TimeNs a0 = m_origin + TimeNs(std::floor(t0)), a1 = m_origin + TimeNs(std::ceil(t1));
    std::vector<Arrow> all;
    int inView = 0;
    bool tooMany = false;
    for (const ProgramRow &row : m_layout->rows()) {
        if (row.type != ProgramRow::Stream)
            continue;
        auto first = std::lower_bound(row.items.begin(), row.items.end(), a0, [](const ProgramItem &x, TimeNs t) { return x.start < t; });
        for (auto it = first; it != row.items.end() && it->start < a1; ++it) {
            if (++inView > cap) {
                tooMany = true;
                break;
            }
            const LaunchRef l{it->kind, it->index};
            const int api = m_links->apiOf(l);
            if (api < 0)
                continue;
            const TimeNs callStart = m_program->apiSpans[std::size_t(api)].start;
            Arrow arrow;
            if (callStart >= a0 && callStart <= a1 && arrowFor(api, l, false, arrow))
                all.push_back(arrow);
        }
        if (tooMany)
            break;
    }
    if (!tooMany)
        for (const Arrow &a : all) {
            const bool dup = std::any_of(m_arrows.begin(), m_arrows.end(),
                                         [&](const Arrow &f) { return f.api == a.api && f.launch == a.launch; });
            if (!dup)
                m_arrows.insert(m_arrows.begin(), a);  // under the focused ones
        }
    p->setClipRect(ar);
    p->setRenderHint(QPainter::Antialiasing, true);
    for (const Arrow &a : m_arrows) {
        const QColor c = a.focus ? programpalette::arrowColor() : programpalette::arrowColorFaint();
        p->setPen(QPen(c, a.focus ? 1.6 : 1.0));
        p->drawLine(a.line);
        // head at the launch end
        const double len = a.line.length();
        if (len < 1)
            continue;
        const QPointF tip = a.line.p2();
        const QPointF u = (a.line.p2() - a.line.p1()) / len, n(-u.y(), u.x());
        const double hl = a.focus ? 7 : 5, hw = a.focus ? 3.5 : 2.5;
        const QPointF poly[3] = {tip, tip - u * hl + n * hw, tip - u * hl - n * hw};
        p->setPen(Qt::NoPen);
        p->setBrush(c);
        p->drawPolygon(poly, 3);
    }
    // the partner of the selected / hovered record: outlined
    p->setBrush(Qt::NoBrush);
    p->setPen(QPen(programpalette::arrowColor(), 2));
    for (const auto &[r, i] : m_partners)
        if (r >= 0)
            p->drawRect(itemRect(r, i).adjusted(-1, -1, 1, 1));
    p->setRenderHint(QPainter::Antialiasing, false);
}
