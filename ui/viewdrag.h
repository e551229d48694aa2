// ViewDrag: the mouse gesture state shared by the warp timeline (timelinewidget_input.cpp) and the program view
// (programview.cpp): which drag a press starts (right: zoom band; Ctrl+left: ruler; Shift+left: range selection;
// left or middle: pan), when the mouse has moved far enough to make it a drag rather than a click, where a pan
// puts the view and the vertical scroll, whether a zoom band is wide enough, the last mouse position (the anchor
// of the zoom keys), a wheel that scrolls rows instead of time, and the hover tooltip. Each view keeps what its
// gestures do to its own plottable (band, ruler, selection, clicks). Time navigation itself is TimeNavigator's.
#pragma once

#include "timenavigator.h"

#include <QPoint>
#include <QRect>

#include <optional>

class QString;
class QWheelEvent;
class QWidget;

class ViewDrag {
public:
    using Range = TimeNavigator::Range;  // relative ns
    enum class Mode { None, Pan, ZoomBand, RangeSelect, Ruler };
    static constexpr int kMovePx = 3;      // a press becomes a drag once the mouse is this far (Manhattan) away
    static constexpr int kZoomBandPx = 4;  // a narrower zoom band zooms nothing

    // A button went down at pos on the view showing `view` scrolled to `scroll`: no gesture yet (begin()).
    void press(QPoint pos, Range view, int scroll);
    // The gesture the press starts, from its button and modifiers (None for any other button).
    void begin(Qt::MouseButton button, Qt::KeyboardModifiers modifiers);
    // The mouse is at pos: remembered (lastMouse), and a gesture that went far enough is moved().
    // True while a gesture is active (the view then draws the gesture instead of hovering).
    bool move(QPoint pos);
    // The button went up: the gesture that ended (None after it).
    Mode release();
    void leave() { m_lastMouse = QPoint(-1, -1); }

    Mode mode() const { return m_mode; }
    bool moved() const { return m_moved; }
    QPoint pressPos() const { return m_pressPos; }
    QPoint lastMouse() const { return m_lastMouse; }
    // The last mouse position is over the lanes (x within them): the zoom keys zoom about it.
    bool mouseOver(const QRect& lanes) const { return m_lastMouse.x() >= lanes.left() && m_lastMouse.x() <= lanes.right(); }

    // A pan with the mouse at pos: the content follows the mouse, in time over lanes `lanesWidth` pixels wide
    // (unclamped: the view clamps it) and in rows.
    Range pannedView(QPoint pos, int lanesWidth) const;
    int pannedScroll(QPoint pos) const { return m_pressScroll - (pos.y() - m_pressPos.y()); }
    // The zoom band from the press to pos is wide enough to zoom into.
    bool bandWideEnough(QPoint pos) const;

    // A wheel with Shift, or over the labels (left of lanesLeft), scrolls rows: how far (pixels, to add to the
    // scroll bar's value) for rows `rowHeight` high; nullopt when the wheel is the time navigator's.
    static std::optional<int> wheelRowScroll(const QWheelEvent* e, int lanesLeft, int rowHeight);
    // Shows the hover tooltip at the global position (hides it when tip is empty).
    static void showTip(const QString& tip, QPoint globalPos, QWidget* over);

private:
    Mode m_mode = Mode::None;
    QPoint m_pressPos;
    Range m_pressView;
    int m_pressScroll = 0;
    bool m_moved = false;
    QPoint m_lastMouse{-1, -1};
};
