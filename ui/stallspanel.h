// Stalls panel: stall-sample breakdown (by pipeline role/stage or by reason) as
// a QCustomPlot bar chart, and the rung's bundled CUDA source with per-line heat.
#pragma once

#include "warpstage/analysis.h"
#include "warpstage/model.h"

#include <QWidget>

#include <memory>

class QCustomPlot;
class QCPBars;
class QComboBox;
class QLabel;
class QTableView;

namespace ws::ui {

class SourceModel;

class StallsPanel : public QWidget {
    Q_OBJECT
public:
    explicit StallsPanel(QWidget* parent = nullptr);

    void setKernel(std::shared_ptr<const ws::KernelTrace> trace, std::shared_ptr<const ws::KernelMetrics> metrics);
    void clear();

    QCustomPlot* chart() const { return m_plot; }
    QTableView* sourceView() const { return m_sourceView; }
    SourceModel* sourceModel() const { return m_source; }
    QComboBox* sourceFileBox() const { return m_file; }
    // Shows `fileName` (a bundled kernel source: "pingpong.cu", "hopper.cuh") in the source view.
    void showSourceFile(const QString& fileName);
    int barCount() const;

signals:
    void stageRequested(ws::WarpRole role, ws::IntervalKind kind);

private:
    // The text of a source file: as recorded in the trace (recorded = true), else the build's bundled copy, else "".
    QString sourceText(const QString& fileName, bool* recorded = nullptr) const;
    void rebuildChart();
    void onSourceClicked(const QModelIndex& index);

    QComboBox* m_groupBy = nullptr;
    QComboBox* m_file = nullptr;
    QLabel* m_summary = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPBars* m_bars = nullptr;
    QTableView* m_sourceView = nullptr;
    int m_scrollGeneration = 0;  // bumped by every new source: stale scroll requests drop out
    int m_autoScrollValue = 0;   // scroll position our last automatic scroll left
    SourceModel* m_source = nullptr;
    std::shared_ptr<const ws::KernelTrace> m_trace;
    std::shared_ptr<const ws::KernelMetrics> m_metrics;
    std::vector<std::string> m_barKeys;
};

}  // namespace ws::ui
