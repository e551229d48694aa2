// Time-axis ticker: clean 1-2-5 ticks in ns/µs/ms relative to the timeline origin (timemap::ticks).
#pragma once

#include <qcustomplot.h>

class TimelineTicker : public QCPAxisTicker {
public:
    explicit TimelineTicker(QCPAxis *axis) : m_axis(axis) {}
    void generate(const QCPRange &range, const QLocale &locale, QChar formatChar, int precision,
                  QVector<double> &ticks, QVector<double> *subTicks, QVector<QString> *tickLabels) override;

private:
    QCPAxis *m_axis;
};
