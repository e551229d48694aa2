// AttributionBar: the critical path's length split by cause (load latency, MMA, back-pressure, epilogue,
// ordering, prologue, tail, launch) as one stacked horizontal bar with a legend of shares below it. Clicking a
// segment selects that cause (causeClicked; clicking it again, or outside, clears); the metrics panel shows
// the measured kernel's, the what-if panel the prediction's.
#pragma once

#include "whatifdata.h"

#include <QWidget>

namespace ws::ui {

class AttributionBar : public QWidget {
    Q_OBJECT
public:
    explicit AttributionBar(QWidget* parent = nullptr);

    void setAttribution(const Attribution& a);  // all zero: "no critical path"
    void clear();
    const Attribution& attribution() const { return m_attr; }
    void setEmptyText(const QString& text);
    // Selected cause, -1 for none (no signal).
    void setSelectedCause(int cause);
    int selectedCause() const { return m_selected; }
    // The bar's segment of a cause in widget coordinates (empty if the cause has no time): tests, tooltips.
    QRect segmentRect(PathCause c) const;
    int causeAt(const QPoint& pos) const;  // -1 if none

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void causeClicked(int cause);  // -1: cleared

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent* e) override;
    bool event(QEvent* e) override;  // tooltips

private:
    QRect barRect() const;
    Attribution m_attr;
    QString m_empty;
    int m_selected = -1;
};

}  // namespace ws::ui
