#include "timemapping.h"

#include <algorithm>
#include <cmath>

namespace timemap {

QPair<double, double> zoomAbout(double t0, double t1, double anchor, double factor, double minSpan)
{
    const double span = t1 - t0;
    double ns = std::max(span * factor, minSpan);
    if (span <= 0)
        return {anchor - ns / 2, anchor + ns / 2};
    const double f = (anchor - t0) / span;  // anchor keeps its fraction of the view
    const double a = anchor - f * ns;
    return {a, a + ns};
}

QPair<double, double> pan(double t0, double t1, double dt) { return {t0 + dt, t1 + dt}; }

QPair<double, double> clampToData(double t0, double t1, double lo, double hi, double minSpan)
{
    if (hi < lo)
        std::swap(hi, lo);
    const double margin = std::max((hi - lo) * 0.05, minSpan);
    const double L = lo - margin, H = hi + margin;
    double span = std::clamp(t1 - t0, minSpan, H - L);
    double a = t0;
    if (t1 - t0 != span)  // keep the centre when the span changes
        a = (t0 + t1) / 2 - span / 2;
    if (a < L)
        a = L;
    if (a + span > H)
        a = H - span;
    return {a, a + span};
}

double niceStep(double rough)
{
    if (!(rough > 0) || !std::isfinite(rough))
        return 1;
    const double p = std::pow(10.0, std::floor(std::log10(rough)));
    const double m = rough / p;
    double n;
    if (m <= 1.0 + 1e-9)
        n = 1;
    else if (m <= 2.0 + 1e-9)
        n = 2;
    else if (m <= 5.0 + 1e-9)
        n = 5;
    else
        n = 10;
    return n * p;
}

QString unitFor(double magnitude)
{
    magnitude = std::abs(magnitude);
    if (magnitude < 1e3)
        return QStringLiteral("ns");
    if (magnitude < 1e6)
        return QStringLiteral("µs");
    if (magnitude < 1e9)
        return QStringLiteral("ms");
    return QStringLiteral("s");
}

double unitScale(const QString &unit)
{
    if (unit == QStringLiteral("µs") || unit == QLatin1String("us"))
        return 1e3;
    if (unit == QLatin1String("ms"))
        return 1e6;
    if (unit == QLatin1String("s"))
        return 1e9;
    return 1;
}

QString formatTime(double t, double step, const QString &unit)
{
    const double scale = unitScale(unit);
    int decimals = 0;
    if (step > 0)
        decimals = std::clamp(int(std::ceil(-std::log10(step / scale) - 1e-9)), 0, 9);
    double v = t / scale;
    if (std::abs(v) < 0.5 * std::pow(10.0, -decimals))
        v = 0;  // no "-0"
    return QString::number(v, 'f', decimals) + QLatin1Char(' ') + unit;
}

QString formatDuration(double ns)
{
    const double a = std::abs(ns);
    QString unit = unitFor(a);
    if (a < 1e3)
        unit = QStringLiteral("ns");
    const double v = ns / unitScale(unit);
    const double av = std::abs(v);
    int decimals = av >= 100 ? 1 : av >= 10 ? 2 : 3;
    if (unit == QLatin1String("ns"))
        decimals = av >= 100 || av == std::floor(av) ? 0 : 1;
    QString s = QString::number(v, 'f', decimals);
    if (s.contains(QLatin1Char('.'))) {  // trim trailing zeros
        while (s.endsWith(QLatin1Char('0')))
            s.chop(1);
        if (s.endsWith(QLatin1Char('.')))
            s.chop(1);
    }
    return s + QLatin1Char(' ') + unit;
}

Ticks ticks(double t0, double t1, double widthPx, double minSpacingPx)
{
    Ticks out;
    if (!(t1 > t0) || !(widthPx > 0))
        return out;
    const double maxTicks = std::max(1.0, widthPx / std::max(1.0, minSpacingPx));
    out.step = niceStep((t1 - t0) / maxTicks);
    out.unit = unitFor(std::max(std::abs(t0), std::abs(t1)));
    if (std::max(std::abs(t0), std::abs(t1)) >= 1e3 && out.step < 1)
        out.unit = unitFor(std::max(std::abs(t0), std::abs(t1)));
    const double first = std::ceil(t0 / out.step - 1e-9);
    const double last = std::floor(t1 / out.step + 1e-9);
    // sub ticks: 5 per step for 1 and 10 mantissas, 4 for 2, 5 for 5
    const double mant = out.step / std::pow(10.0, std::floor(std::log10(out.step) + 1e-9));
    const int subdiv = std::abs(mant - 2) < 1e-6 ? 4 : 5;
    for (double i = first - 1; i <= last; i += 1) {
        const double t = i * out.step;
        if (i >= first) {
            out.major.push_back(t);
            out.labels.push_back(formatTime(t, out.step, out.unit));
        }
        for (int s = 1; s < subdiv; ++s) {
            const double st = t + s * out.step / subdiv;
            if (st >= t0 && st <= t1)
                out.minor.push_back(st);
        }
    }
    return out;
}

}  // namespace timemap
