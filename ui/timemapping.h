// Pure time <-> pixel maths and time-axis ticks for the timeline (no widgets).
// Times here are double nanoseconds relative to the timeline's origin (the
// kernel start); absolute CUPTI timestamps do not fit a double exactly.
#pragma once

#include <QPair>
#include <QString>
#include <QStringList>
#include <QVector>

namespace timemap {

struct Mapping {
    double t0 = 0, t1 = 1;  // visible time range, ns (relative)
    double x0 = 0, x1 = 1;  // pixel range it maps to (left and right edge)
    double nsPerPixel() const { return (t1 - t0) / (x1 - x0); }
    double toPixel(double t) const { return x0 + (t - t0) * (x1 - x0) / (t1 - t0); }
    double toTime(double px) const { return t0 + (px - x0) * (t1 - t0) / (x1 - x0); }
};

// Smallest span the view may show (ns): 4 ns across the plot.
inline constexpr double kMinSpanNs = 4.0;

// Zoom [t0,t1] by factor (< 1 zooms in) keeping `anchor` at the same place.
QPair<double, double> zoomAbout(double t0, double t1, double anchor, double factor, double minSpan = kMinSpanNs);
// Shift by dt.
QPair<double, double> pan(double t0, double t1, double dt);
// Keep the range inside [lo - margin, hi + margin] with margin = 5% of (hi-lo), span >= minSpan,
// span <= (hi-lo) + 2*margin; shifts rather than shrinks where possible.
QPair<double, double> clampToData(double t0, double t1, double lo, double hi, double minSpan = kMinSpanNs);

// 1-2-5 step not smaller than `rough`.
double niceStep(double rough);

struct Ticks {
    double step = 0;          // major step, ns
    QVector<double> major;    // tick positions, ns (multiples of step inside [t0,t1])
    QVector<double> minor;    // sub ticks
    QStringList labels;       // one per major tick
    QString unit;             // unit of the labels: "ns", "µs", "ms" or "s"
};
// Ticks for [t0,t1] drawn over widthPx pixels, labels at least minSpacingPx apart.
Ticks ticks(double t0, double t1, double widthPx, double minSpacingPx = 90);

// Unit for labels of times up to |magnitude| ns at resolution `step` ns.
QString unitFor(double magnitude);
double unitScale(const QString &unit);  // ns per unit
// "1.25 µs" style label of t (ns) with enough decimals for `step`.
QString formatTime(double t, double step, const QString &unit);
// Duration for tooltips and the ruler: unit chosen by size, 4 significant digits ("12.35 µs", "830 ns").
QString formatDuration(double ns);

}  // namespace timemap
