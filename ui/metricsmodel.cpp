#include "metricsmodel.h"

#include "tracedocument.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <cmath>

namespace ws::ui {

std::vector<MetricRow> metricRows(const ws::KernelMetrics& m)
{
    const ws::GroupMetrics& g = m.total;
    using U = MetricUnit;
    std::vector<MetricRow> r = {
        {"achieved_tflops", QObject::tr("Achieved TFLOP/s"), m.achievedTflops, U::Tflops,
         QObject::tr("2·M·N·K / CUPTI kernel duration (whole kernel)"), true},
        {"kernel_ns", QObject::tr("Kernel duration"), m.kernelNs, U::Ns, QObject::tr("CUPTI end − start"), false},
        {"compute_overlap_share", QObject::tr("Compute overlap"), g.computeOverlapShare, U::Share,
         QObject::tr("compute time during which ≥1 load of the same CTA is in flight / compute time"), true},
        {"load_hidden_share", QObject::tr("Load latency hidden"), g.loadHiddenShare, U::Share,
         QObject::tr("load-in-flight time while the CTA computes / load-in-flight time"), true},
        {"exposed_load_wait_share", QObject::tr("Starvation (exposed wait)"), g.exposedLoadWaitShare, U::Share,
         QObject::tr("WaitData (+ Load on worker lanes) / compute-lane live time"), false},
        {"back_pressure_share", QObject::tr("Back-pressure"), g.backPressureShare, U::Share,
         QObject::tr("WaitSlot on producer lanes / producer-lane live time (high = producer ahead)"), true},
        {"consumer_busy_share", QObject::tr("Compute-lane busy"), g.consumerBusyShare, U::Share,
         QObject::tr("compute time / compute-lane live time"), true},
        {"bubble_share", QObject::tr("Compute bubbles"), g.bubbleShare, U::Share,
         QObject::tr("time no compute lane of a CTA computes, within its compute span"), false},
        {"bubble_count", QObject::tr("Bubble count"), double(g.bubbleCount), U::Count, {}, false},
        {"longest_bubble_ns", QObject::tr("Longest bubble"), g.longestBubbleNs, U::Ns, {}, false},
        {"mean_loads_in_flight", QObject::tr("Loads in flight (mean)"), g.meanLoadsInFlight, U::Plain,
         QObject::tr("time-weighted over the window"), true},
        {"mean_slots_occupied", QObject::tr("Slots occupied (mean)"), g.meanSlotsOccupied, U::Plain, {}, true},
        {"compute_ns", QObject::tr("Compute time Σ"), g.computeNs, U::Ns, {}, true},
        {"exposed_load_wait_ns", QObject::tr("Exposed wait Σ"), g.exposedLoadWaitNs, U::Ns, {}, false},
        {"back_pressure_ns", QObject::tr("Back-pressure Σ"), g.backPressureNs, U::Ns, {}, true},
        {"ramp_ns", QObject::tr("Ramp (prologue + drain)"), g.rampNs, U::Ns, {}, false},
        {"load_count", QObject::tr("Loads"), double(g.loadCount), U::Count, {}, true},
        {"tail_idle_share", QObject::tr("Tail idle SMs"), m.tailIdleShare, U::Share,
         QObject::tr("Σ over SMs of (end − SM's last CTA end) / (SMs × window); the device's SMs that ran no CTA idle the whole window"), false},
        {"tail_ns", QObject::tr("Tail"), m.tailNs, U::Ns, {}, false},
        {"sms_used", QObject::tr("SMs used"), double(m.smsUsed), U::Count, {}, true},
        {"stall_samples", QObject::tr("Stall samples"), double(m.stallSamples), U::Count, {}, true},
    };
    return r;
}

QString formatMetric(double v, MetricUnit unit)
{
    if (std::isnan(v))
        return QStringLiteral("—");
    switch (unit) {
    case MetricUnit::Ns: return formatDuration(v);
    case MetricUnit::Share: return QStringLiteral("%1 %").arg(v * 100.0, 0, 'f', 1);
    case MetricUnit::Count: return QString::number(qint64(std::llround(v)));
    case MetricUnit::Tflops: return QStringLiteral("%1 TFLOP/s").arg(v, 0, 'f', 1);
    case MetricUnit::Plain: return QString::number(v, 'f', 2);
    }
    return QString::number(v);
}

MetricsModel::MetricsModel(QObject* parent) : QAbstractTableModel(parent) {}

void MetricsModel::setMetrics(std::shared_ptr<const ws::KernelMetrics> metrics)
{
    beginResetModel();
    m_rows = metrics ? metricRows(*metrics) : std::vector<MetricRow>{};
    endResetModel();
}

void MetricsModel::clear()
{
    setMetrics(nullptr);
}

int MetricsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int MetricsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MetricsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const MetricRow& r = m_rows[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case ColMetric: return r.label;
        case ColValue: return formatMetric(r.value, r.unit);
        case ColKey: return r.key;
        }
        return {};
    case Qt::ToolTipRole: return r.help.isEmpty() ? r.key : r.key + QStringLiteral(": ") + r.help;
    case Qt::TextAlignmentRole:
        return index.column() == ColValue ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    case Qt::ForegroundRole:
        return index.column() == ColKey ? QVariant(QBrush(QColor(0x78, 0x90, 0x9c))) : QVariant();
    case ValueRole: return r.value;
    case KeyRole: return r.key;
    }
    return {};
}

QVariant MetricsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ColMetric: return tr("Metric");
    case ColValue: return tr("Value");
    case ColKey: return tr("Name");
    }
    return {};
}

// --- deltas

MetricDeltaModel::MetricDeltaModel(QObject* parent) : QAbstractTableModel(parent) {}

void MetricDeltaModel::setLabels(const QString& a, const QString& b)
{
    m_labelA = a;
    m_labelB = b;
    emit headerDataChanged(Qt::Horizontal, ColA, ColB);
}

void MetricDeltaModel::setMetrics(std::shared_ptr<const ws::KernelMetrics> a, std::shared_ptr<const ws::KernelMetrics> b)
{
    beginResetModel();
    m_rows.clear();
    if (a || b) {
        const auto ra = a ? metricRows(*a) : std::vector<MetricRow>{};
        const auto rb = b ? metricRows(*b) : std::vector<MetricRow>{};
        const auto& base = a ? ra : rb;
        for (size_t i = 0; i < base.size(); ++i) {
            Row row;
            row.a = base[i];
            row.hasA = bool(a);
            row.hasB = bool(b);
            if (!a)
                row.a.value = std::numeric_limits<double>::quiet_NaN();
            row.b = b ? rb[i].value : std::numeric_limits<double>::quiet_NaN();
            m_rows.push_back(row);
        }
    }
    endResetModel();
}

int MetricDeltaModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int MetricDeltaModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MetricDeltaModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& r = m_rows[size_t(index.row())];
    const double d = r.b - r.a.value;
    const double pct = (r.a.value != 0 && !std::isnan(d)) ? d / std::abs(r.a.value) * 100.0
                                                          : std::numeric_limits<double>::quiet_NaN();
    switch (role) {
    case DeltaRole: return d;
    case Qt::DisplayRole:
        switch (index.column()) {
        case ColMetric: return r.a.label;
        case ColA: return formatMetric(r.a.value, r.a.unit);
        case ColB: return formatMetric(r.b, r.a.unit);
        case ColDelta: {
            if (std::isnan(d))
                return QStringLiteral("—");
            QString s = r.a.unit == MetricUnit::Share ? QStringLiteral("%1 pp").arg(d * 100.0, 0, 'f', 1)
                                                      : formatMetric(d, r.a.unit);
            if (d > 0 && !s.startsWith(QLatin1Char('+')))
                s.prepend(QLatin1Char('+'));
            return s;
        }
        case ColDeltaPct:
            return std::isnan(pct) ? QStringLiteral("—") : QStringLiteral("%1%2 %").arg(pct > 0 ? "+" : "").arg(pct, 0, 'f', 1);
        }
        return {};
    case Qt::ForegroundRole:
        if ((index.column() == ColDelta || index.column() == ColDeltaPct) && !std::isnan(d) && std::abs(d) > 1e-12) {
            const bool better = (d > 0) == r.a.higherIsBetter;
            return QBrush(better ? QColor(0x2e, 0x7d, 0x32) : QColor(0xc6, 0x28, 0x28));
        }
        return {};
    case Qt::TextAlignmentRole:
        return index.column() == ColMetric ? QVariant() : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ToolTipRole: return r.a.key;
    }
    return {};
}

QVariant MetricDeltaModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ColMetric: return tr("Metric");
    case ColA: return m_labelA;
    case ColB: return m_labelB;
    case ColDelta: return tr("Δ (B − A)");
    case ColDeltaPct: return tr("Δ %");
    }
    return {};
}

}  // namespace ws::ui
