#include "kernelsummarymodel.h"

#include "tracedocument.h"

void KernelSummaryModel::setProgram(const ws::ProgramTrace *program)
{
    beginResetModel();
    m_stats = program ? ws::kernelStats(*program) : std::vector<ws::KernelStats>{};
    endResetModel();
}

int KernelSummaryModel::rowOfName(const std::string &name) const
{
    for (int i = 0; i < int(m_stats.size()); ++i)
        if (m_stats[std::size_t(i)].name == name)
            return i;
    return -1;
}

int KernelSummaryModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_stats.size()); }
int KernelSummaryModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant KernelSummaryModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_stats.size()))
        return {};
    const ws::KernelStats &s = m_stats[std::size_t(index.row())];
    if (role == NameRole)
        return QString::fromStdString(s.name);
    if (role == Qt::ToolTipRole && index.column() == Name)
        return QString::fromStdString(s.name);
    if (role == Qt::TextAlignmentRole)
        return index.column() == Name ? int(Qt::AlignLeft | Qt::AlignVCenter) : int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == SortRole) {
        switch (index.column()) {
        case Name: return QString::fromStdString(s.family + " " + s.name);
        case Launches: return qlonglong(s.launches);
        case Total: return qlonglong(s.totalNs);
        case Mean: return s.meanNs;
        case Min: return qlonglong(s.minNs);
        case Max: return qlonglong(s.maxNs);
        case Share: return s.share;
        case Traced: return qlonglong(s.tracedLaunches);
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name: return QString::fromStdString(s.family);
        case Launches: return QString::number(s.launches);
        case Total: return ws::ui::formatDuration(double(s.totalNs));
        case Mean: return ws::ui::formatDuration(s.meanNs);
        case Min: return ws::ui::formatDuration(double(s.minNs));
        case Max: return ws::ui::formatDuration(double(s.maxNs));
        case Share: return QStringLiteral("%1 %").arg(s.share * 100.0, 0, 'f', 1);
        case Traced: return s.tracedLaunches > 0 ? QString::number(s.tracedLaunches) : QStringLiteral("—");
        }
    }
    return {};
}

QVariant KernelSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        static const char *names[] = {"Kernel", "Launches", "Total", "Mean", "Min", "Max", "Share", "Per-warp"};
        return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
    }
    if (role == Qt::ToolTipRole) {
        if (section == Share)
            return QStringLiteral("This kernel's time over the time of every kernel of the run");
        if (section == Traced)
            return QStringLiteral("Launches with a per-warp timeline");
    }
    return {};
}

KernelSummaryProxy::KernelSummaryProxy(QObject *parent) : QSortFilterProxyModel(parent)
{
    setSortRole(KernelSummaryModel::SortRole);
}

void KernelSummaryProxy::setNameFilter(const QString &text)
{
    m_filter = text.trimmed();
    invalidateRowsFilter();
}

bool KernelSummaryProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (m_filter.isEmpty())
        return true;
    const QModelIndex i = sourceModel()->index(sourceRow, KernelSummaryModel::Name, sourceParent);
    return i.data(KernelSummaryModel::NameRole).toString().contains(m_filter, Qt::CaseInsensitive);
}
