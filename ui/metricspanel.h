// Metrics panel: core's analysis of the current selection (kernel, CTA,
// warpgroup or time range) as a table.
#pragma once

#include "warpstage/analysis.h"
#include "whatifdata.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QPushButton;
class QTableView;

namespace ws::ui {

class AttributionBar;
class MetricsModel;

class MetricsPanel : public QWidget {
    Q_OBJECT
public:
    explicit MetricsPanel(QWidget* parent = nullptr);

    // `warpgroups`: how many warpgroups the kernel has (for the picker).
    void setKernel(int warpgroups);
    void setMetrics(const QString& scope, std::shared_ptr<const ws::KernelMetrics> metrics);
    void setPending(const QString& scope);
    void clear();
    // Selects the warpgroup in the picker without emitting (-1 = all).
    void setWarpgroup(int wg);

    // The kernel's critical path attribution (issue 13), null clears; clicking a cause emits causeClicked.
    void setCriticalPath(std::shared_ptr<const CriticalPathView> path);
    AttributionBar* attributionBar() const { return m_bar; }
    QString pathText() const;

    MetricsModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    QString scopeText() const;

signals:
    void warpgroupChanged(int warpgroup);  // -1 = all
    void resetRequested();
    void causeClicked(int cause);  // -1: cleared

private:
    QLabel* m_scope = nullptr;
    QComboBox* m_wg = nullptr;
    QPushButton* m_reset = nullptr;
    QTableView* m_view = nullptr;
    MetricsModel* m_model = nullptr;
    QLabel* m_pathLabel = nullptr;
    AttributionBar* m_bar = nullptr;
};

}  // namespace ws::ui
