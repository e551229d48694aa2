#include "timenavigator.h"

#include "timemapping.h"

#include <QKeyEvent>
#include <QWheelEvent>

#include <cmath>

void TimeNavigator::clearHistory()
{
    m_history.clear();
    m_pos = -1;
    m_continuousOpen = false;
}

void TimeNavigator::shiftHistory(double delta)
{
    for (Range &r : m_history)
        r = {r.first + delta, r.second + delta};
    m_view = {m_view.first + delta, m_view.second + delta};
}

void TimeNavigator::push()
{
    if (m_pos >= 0 && m_history[std::size_t(m_pos)] == m_view)
        return;
    m_history.resize(std::size_t(m_pos + 1));
    m_history.push_back(m_view);
    m_pos = int(m_history.size()) - 1;
    if (m_history.size() > 200) {
        m_history.erase(m_history.begin());
        --m_pos;
    }
}

void TimeNavigator::navigate(Range r)
{
    m_continuousOpen = false;
    m_view = apply(r);
    push();
    replot();
}

void TimeNavigator::navigateContinuous(Range r)
{
    if (!m_continuousOpen || !m_lastContinuous.isValid() || m_lastContinuous.elapsed() > 700) {
        m_continuousOpen = true;
        m_view = apply(r);
        push();
    } else {
        m_view = apply(r);
        if (m_pos >= 0)
            m_history[std::size_t(m_pos)] = m_view;
    }
    m_lastContinuous.restart();
    replot();
}

void TimeNavigator::endGesture() { m_continuousOpen = false; }

void TimeNavigator::commitGesture()
{
    m_continuousOpen = false;
    push();
}

void TimeNavigator::reset() { navigate(fullRange()); }

void TimeNavigator::back()
{
    if (!canGoBack())
        return;
    m_continuousOpen = false;
    --m_pos;
    m_view = apply(m_history[std::size_t(m_pos)]);
    replot();
}

void TimeNavigator::forward()
{
    if (!canGoForward())
        return;
    m_continuousOpen = false;
    ++m_pos;
    m_view = apply(m_history[std::size_t(m_pos)]);
    replot();
}

bool TimeNavigator::handleKey(QKeyEvent *e, double anchor)
{
    const double span = m_view.second - m_view.first;
    const bool alt = e->modifiers() & Qt::AltModifier;
    switch (e->key()) {
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        navigateContinuous(timemap::zoomAbout(m_view.first, m_view.second, anchor, 0.8));
        return true;
    case Qt::Key_S:
    case Qt::Key_Minus:
        navigateContinuous(timemap::zoomAbout(m_view.first, m_view.second, anchor, 1.25));
        return true;
    case Qt::Key_A:
        navigateContinuous(timemap::pan(m_view.first, m_view.second, -0.15 * span));
        return true;
    case Qt::Key_D:
        navigateContinuous(timemap::pan(m_view.first, m_view.second, 0.15 * span));
        return true;
    case Qt::Key_Left:
        if (alt)
            back();
        else
            navigateContinuous(timemap::pan(m_view.first, m_view.second, -0.15 * span));
        return true;
    case Qt::Key_Right:
        if (alt)
            forward();
        else
            navigateContinuous(timemap::pan(m_view.first, m_view.second, 0.15 * span));
        return true;
    case Qt::Key_Backspace:
        back();
        return true;
    case Qt::Key_Home:
    case Qt::Key_0:
        reset();
        return true;
    default:
        return false;
    }
}

bool TimeNavigator::handleWheel(QWheelEvent *e, double anchor)
{
    const QPoint delta = e->angleDelta();
    if (delta.x() != 0 && std::abs(delta.x()) > std::abs(delta.y())) {  // horizontal wheel/trackpad: pan
        const double span = m_view.second - m_view.first;
        navigateContinuous(timemap::pan(m_view.first, m_view.second, -delta.x() / 120.0 * span * 0.1));
        return true;
    }
    if (delta.y() == 0)
        return false;
    navigateContinuous(timemap::zoomAbout(m_view.first, m_view.second, anchor, std::pow(0.85, delta.y() / 120.0)));
    return true;
}
