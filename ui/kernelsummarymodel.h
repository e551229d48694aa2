// KernelSummaryModel: the kernel summary table of a program run (ws::kernelStats): name, launches,
// total / mean / min / max time, share of GPU kernel time, traced launches. Qt::DisplayRole gives text,
// Qt::UserRole the number to sort by (KernelSummaryProxy sorts on it and filters on the name).
#pragma once

#include <warpstage/program.h>

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

class KernelSummaryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Launches, Total, Mean, Min, Max, Share, Traced, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int NameRole = Qt::UserRole + 1;  // the full demangled name

    using QAbstractTableModel::QAbstractTableModel;
    void setProgram(const ws::ProgramTrace *program);  // nullptr clears
    const std::vector<ws::KernelStats> &stats() const { return m_stats; }
    int rowOfName(const std::string &name) const;      // -1 if none

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<ws::KernelStats> m_stats;
};

class KernelSummaryProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit KernelSummaryProxy(QObject *parent = nullptr);
    // Case-insensitive substring of the name (or family); "" shows all.
    void setNameFilter(const QString &text);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    QString m_filter;
};
