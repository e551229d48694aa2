#include "viewdrag.h"

#include "timemapping.h"

#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cstdlib>

void ViewDrag::press(QPoint pos, Range view, int scroll)
{
    m_pressPos = pos;
    m_pressView = view;
    m_pressScroll = scroll;
    m_moved = false;
    m_mode = Mode::None;
}

void ViewDrag::begin(Qt::MouseButton button, Qt::KeyboardModifiers modifiers)
{
    if (button == Qt::RightButton)
        m_mode = Mode::ZoomBand;
    else if (button == Qt::LeftButton && (modifiers & Qt::ControlModifier))
        m_mode = Mode::Ruler;
    else if (button == Qt::LeftButton && (modifiers & Qt::ShiftModifier))
        m_mode = Mode::RangeSelect;
    else if (button == Qt::LeftButton || button == Qt::MiddleButton)
        m_mode = Mode::Pan;
    else
        m_mode = Mode::None;
}

bool ViewDrag::move(QPoint pos)
{
    m_lastMouse = pos;
    if (m_mode != Mode::None && (pos - m_pressPos).manhattanLength() >= kMovePx)
        m_moved = true;
    return m_mode != Mode::None;
}

ViewDrag::Mode ViewDrag::release()
{
    const Mode m = m_mode;
    m_mode = Mode::None;
    return m;
}

ViewDrag::Range ViewDrag::pannedView(QPoint pos, int lanesWidth) const
{
    const double nsPerPx = (m_pressView.second - m_pressView.first) / std::max(1, lanesWidth);
    return timemap::pan(m_pressView.first, m_pressView.second, -(pos.x() - m_pressPos.x()) * nsPerPx);
}

bool ViewDrag::bandWideEnough(QPoint pos) const
{
    return m_moved && std::abs(pos.x() - m_pressPos.x()) >= kZoomBandPx;
}

std::optional<int> ViewDrag::wheelRowScroll(const QWheelEvent* e, int lanesLeft, int rowHeight)
{
    if (!(e->modifiers() & Qt::ShiftModifier) && e->position().x() >= lanesLeft)
        return std::nullopt;
    const QPoint delta = e->angleDelta();
    const int dy = delta.y() != 0 ? delta.y() : delta.x();
    return -(dy * rowHeight * 3 / 120);
}

void ViewDrag::showTip(const QString& tip, QPoint globalPos, QWidget* over)
{
    if (tip.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(globalPos, tip, over);
}
