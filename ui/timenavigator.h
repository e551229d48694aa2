// TimeNavigator: the time-axis navigation shared by the timelines (warp view, program view): the visible
// range, zoom/pan steps, the history of views (Back / Forward) in which a continuous gesture (wheel, keys,
// a drag) is one entry, and the keyboard map (W/S zoom, A/D and arrows pan, Alt+Left/Right and Backspace
// history, Home/0 reset). Widget-free: the owner supplies how to clamp and apply a range.
#pragma once

#include <QElapsedTimer>
#include <QPair>

#include <functional>
#include <vector>

class QKeyEvent;
class QWheelEvent;

class TimeNavigator {
public:
    using Range = QPair<double, double>;  // relative ns

    // apply: clamp, show and announce the range; returns the range actually shown.
    // replot: schedule a repaint. reset: the "whole data" range (Home).
    std::function<Range(Range)> apply;
    std::function<void()> replot;
    std::function<Range()> fullRange;

    Range view() const { return m_view; }
    void setViewQuiet(Range r) { m_view = r; }    // no history, no signal (e.g. after apply by the owner)
    void clearHistory();
    // The time origin moved: every entry (and the view) shifts by delta ns, pointing at the same moments.
    void shiftHistory(double delta);

    void navigate(Range r);            // discrete: a new history entry
    void navigateContinuous(Range r);  // continuous: one history entry per gesture
    void endGesture();                 // the gesture is over (mouse released): the next step is a new entry
    void commitGesture();              // a drag ended: its range becomes one entry
    void reset();
    bool canGoBack() const { return m_pos > 0; }
    bool canGoForward() const { return m_pos + 1 < int(m_history.size()); }
    void back();
    void forward();
    int historySize() const { return int(m_history.size()); }

    // The shared keys; anchor = time under the cursor (or the centre). True if handled.
    bool handleKey(QKeyEvent *e, double anchor);
    // Wheel over the lanes: zoom about `anchor`, or pan on a horizontal wheel. True if handled.
    bool handleWheel(QWheelEvent *e, double anchor);

private:
    void push();
    Range m_view{0, 1};
    std::vector<Range> m_history;
    int m_pos = -1;
    QElapsedTimer m_lastContinuous;
    bool m_continuousOpen = false;
};
