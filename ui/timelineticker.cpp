#include "timelineticker.h"

#include "timemapping.h"

void TimelineTicker::generate(const QCPRange &range, const QLocale &, QChar, int, QVector<double> &ticks,
                              QVector<double> *subTicks, QVector<QString> *tickLabels)
{
    const double width = m_axis && m_axis->axisRect() ? m_axis->axisRect()->width() : 800;
    const timemap::Ticks t = timemap::ticks(range.lower, range.upper, width, 110);
    ticks = t.major;
    if (subTicks)
        *subTicks = t.minor;
    if (tickLabels)
        *tickLabels = QVector<QString>(t.labels.begin(), t.labels.end());
}
