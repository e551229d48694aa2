// Runs & kernels tree: one top-level row per run, its kernel launches below. A file that holds runs of more
// than one family (the GEMM ladder, the linear-compression family `lce`, users' programs: core/runfamily.h)
// gets one header row per family on top, its runs below it.
#pragma once

#include "tracedocument.h"

#include <QAbstractItemModel>

namespace ws::ui {

class RunsModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { ColName, ColRung, ColDuration, ColTflops, ColOverlap, ColShape, ColDevice, ColumnCount };
    enum Role { KernelIdRole = Qt::UserRole + 1, RunIdRole, RungRole, TracedRole, SortRole, FamilyRole };

    explicit RunsModel(QObject* parent = nullptr);

    void setContents(const FileContents* contents);  // nullptr clears; the pointer must outlive the model's use
    QModelIndex indexOfKernel(qint64 kernelId, int column = 0) const;
    QModelIndex indexOfRun(qint64 runId, int column = 0) const;
    bool grouped() const { return m_groups.size() > 1; }  // family header rows on top

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

private:
    QVariant runData(const RunEntry& r, int column, int role) const;
    QVariant kernelData(const RunEntry& r, const KernelEntry& k, int column, int role) const;
    QVariant groupData(int group, int column, int role) const;
    int runRowOf(const QModelIndex& index) const;  // index into m_contents->runs of a run row, else -1
    QModelIndex runIndex(size_t run, int column) const;
    struct Group {
        QString key, title;
        std::vector<size_t> runs;  // indices into m_contents->runs, in file order
    };
    const FileContents* m_contents = nullptr;
    std::vector<Group> m_groups;
    std::vector<int> m_groupOfRun, m_rowInGroup;
};

QString shapeText(const ws::RunInfo& info);

}  // namespace ws::ui
