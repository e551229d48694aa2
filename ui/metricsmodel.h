// Metrics of the current selection (kernel, CTA, warpgroup, time range) as a
// table, and the row list shared with the Compare panel's delta table.
#pragma once

#include "warpstage/analysis.h"

#include <QAbstractTableModel>
#include <QString>

#include <memory>
#include <vector>

namespace ws::ui {

enum class MetricUnit { Ns, Share, Count, Tflops, Plain };

struct MetricRow {
    QString key;     // store name, e.g. "compute_overlap_share"
    QString label;   // "Compute overlapped with loads"
    double value = 0;
    MetricUnit unit = MetricUnit::Plain;
    QString help;    // one-line definition (docs/metrics.md)
    bool higherIsBetter = true;
};

// The rows the viewer shows for one analysis result, in display order.
std::vector<MetricRow> metricRows(const ws::KernelMetrics& m);
QString formatMetric(double value, MetricUnit unit);

class MetricsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ColMetric, ColValue, ColKey, ColumnCount };
    enum Role { ValueRole = Qt::UserRole + 1, KeyRole };

    explicit MetricsModel(QObject* parent = nullptr);
    void setMetrics(std::shared_ptr<const ws::KernelMetrics> metrics);
    void clear();
    const std::vector<MetricRow>& rows() const { return m_rows; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<MetricRow> m_rows;
};

// Compare panel: metric | A | B | Δ | Δ %.
class MetricDeltaModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ColMetric, ColA, ColB, ColDelta, ColDeltaPct, ColumnCount };
    enum Role { DeltaRole = Qt::UserRole + 1 };

    explicit MetricDeltaModel(QObject* parent = nullptr);
    void setMetrics(std::shared_ptr<const ws::KernelMetrics> a, std::shared_ptr<const ws::KernelMetrics> b);
    void setLabels(const QString& a, const QString& b);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        MetricRow a;
        double b = 0;
        bool hasA = false, hasB = false;
    };
    std::vector<Row> m_rows;
    QString m_labelA = QStringLiteral("A"), m_labelB = QStringLiteral("B");
};

}  // namespace ws::ui
