#include "attributionbar.h"

#include "timemapping.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <cmath>

namespace ws::ui {

namespace {
constexpr int kBarHeight = 20;
constexpr int kLegendRow = 16;
}  // namespace

AttributionBar::AttributionBar(QWidget* parent) : QWidget(parent), m_empty(tr("No critical path"))
{
    setObjectName(QStringLiteral("attributionBar"));
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setCursor(Qt::PointingHandCursor);
}

void AttributionBar::setAttribution(const Attribution& a)
{
    m_attr = a;
    if (m_selected >= 0 && m_attr.ns[std::size_t(m_selected)] <= 0)
        m_selected = -1;
    updateGeometry();
    update();
}

void AttributionBar::clear()
{
    m_attr = {};
    m_selected = -1;
    update();
}

void AttributionBar::setEmptyText(const QString& text)
{
    m_empty = text;
    update();
}

void AttributionBar::setSelectedCause(int cause)
{
    m_selected = cause >= 0 && cause < kPathCauseCount ? cause : -1;
    update();
}

QRect AttributionBar::barRect() const { return QRect(2, 2, std::max(1, width() - 4), kBarHeight); }

QRect AttributionBar::segmentRect(PathCause c) const
{
    const double total = m_attr.total();
    if (total <= 0 || m_attr.ns[std::size_t(c)] <= 0)
        return {};
    const QRect b = barRect();
    double acc = 0;
    for (int i = 0; i < kPathCauseCount; ++i) {
        const double v = m_attr.ns[std::size_t(i)];
        const int x0 = b.left() + int(std::lround(acc / total * b.width()));
        acc += v;
        const int x1 = b.left() + int(std::lround(acc / total * b.width()));
        if (i == int(c))
            return QRect(x0, b.top(), std::max(1, x1 - x0), b.height());  // at least 1 px to click
    }
    return {};
}

int AttributionBar::causeAt(const QPoint& pos) const
{
    for (int i = 0; i < kPathCauseCount; ++i) {
        const QRect r = segmentRect(PathCause(i));
        if (!r.isEmpty() && r.adjusted(0, 0, 0, 0).contains(pos))
            return i;
    }
    // the legend entries select too
    const int cols = 2;
    const int colW = std::max(1, (width() - 4) / cols);
    int n = 0;
    for (int i = 0; i < kPathCauseCount; ++i) {
        if (m_attr.ns[std::size_t(i)] <= 0)
            continue;
        const QRect r(2 + (n % cols) * colW, kBarHeight + 6 + (n / cols) * kLegendRow, colW, kLegendRow);
        if (r.contains(pos))
            return i;
        ++n;
    }
    return -1;
}

QSize AttributionBar::sizeHint() const
{
    int n = 0;
    for (double v : m_attr.ns)
        n += v > 0 ? 1 : 0;
    return QSize(260, kBarHeight + 8 + ((std::max(n, 1) + 1) / 2) * kLegendRow);
}

QSize AttributionBar::minimumSizeHint() const { return QSize(120, sizeHint().height()); }

void AttributionBar::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, false);
    const QRect b = barRect();
    const double total = m_attr.total();
    if (total <= 0) {
        p.setPen(QColor(0xC8, 0xCC, 0xD2));
        p.setBrush(QColor(0xF4, 0xF5, 0xF7));
        p.drawRect(b.adjusted(0, 0, -1, -1));
        p.setPen(QColor(0x70, 0x76, 0x80));
        p.drawText(b, Qt::AlignCenter, m_empty);
        return;
    }
    for (int i = 0; i < kPathCauseCount; ++i) {
        const QRect r = segmentRect(PathCause(i));
        if (r.isEmpty())
            continue;
        QColor c = pathCauseColor(PathCause(i));
        if (m_selected >= 0 && m_selected != i)
            c = QColor::fromRgbF(c.redF() * 0.25 + 0.75, c.greenF() * 0.25 + 0.75, c.blueF() * 0.25 + 0.75);
        p.fillRect(r, c);
        p.setPen(QColor(255, 255, 255));
        if (r.left() > b.left())
            p.drawLine(r.topLeft(), r.bottomLeft());
        const QString pct = QStringLiteral("%1%").arg(std::lround(100 * m_attr.ns[std::size_t(i)] / total));
        if (r.width() > p.fontMetrics().horizontalAdvance(pct) + 6) {
            p.setPen(c.lightness() < 150 ? Qt::white : QColor(0x20, 0x20, 0x20));
            p.drawText(r, Qt::AlignCenter, pct);
        }
    }
    if (m_selected >= 0) {
        const QRect r = segmentRect(PathCause(m_selected));
        p.setPen(QPen(Qt::black, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r.adjusted(1, 1, -1, -1));
    }
    // legend: two columns, causes with time only
    QFont f = font();
    f.setPixelSize(11);
    p.setFont(f);
    const int cols = 2;
    const int colW = std::max(1, (width() - 4) / cols);
    int n = 0;
    for (int i = 0; i < kPathCauseCount; ++i) {
        const double v = m_attr.ns[std::size_t(i)];
        if (v <= 0)
            continue;
        const QRect r(2 + (n % cols) * colW, kBarHeight + 6 + (n / cols) * kLegendRow, colW, kLegendRow);
        ++n;
        p.fillRect(QRect(r.left(), r.top() + 3, 10, 10), pathCauseColor(PathCause(i)));
        QFont lf = f;
        lf.setBold(i == m_selected);
        p.setFont(lf);
        p.setPen(QColor(0x30, 0x30, 0x30));
        p.drawText(r.adjusted(14, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   QStringLiteral("%1 %2%").arg(pathCauseLabel(PathCause(i))).arg(100 * v / total, 0, 'f', 1));
    }
}

void AttributionBar::mousePressEvent(QMouseEvent* e)
{
    if (e->button() != Qt::LeftButton)
        return QWidget::mousePressEvent(e);
    const int c = causeAt(e->position().toPoint());
    m_selected = c == m_selected ? -1 : c;
    update();
    emit causeClicked(m_selected);
}

bool AttributionBar::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const int c = causeAt(he->pos());
        if (c < 0) {
            QToolTip::hideText();
            e->ignore();
            return true;
        }
        const double v = m_attr.ns[std::size_t(c)];
        QToolTip::showText(he->globalPos(),
                           tr("<b>%1</b>: %2 of the critical path (%3 %)<br>Click to highlight it on the timeline.")
                               .arg(pathCauseLabel(PathCause(c)), timemap::formatDuration(v))
                               .arg(100 * v / m_attr.total(), 0, 'f', 1),
                           this);
        return true;
    }
    return QWidget::event(e);
}

}  // namespace ws::ui
