// Runs & kernels tree: one top-level row per run, its kernel launches below.
#pragma once

#include "tracedocument.h"

#include <QAbstractItemModel>

namespace ws::ui {

class RunsModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { ColName, ColRung, ColDuration, ColTflops, ColOverlap, ColShape, ColDevice, ColumnCount };
    enum Role { KernelIdRole = Qt::UserRole + 1, RunIdRole, RungRole, TracedRole, SortRole };

    explicit RunsModel(QObject* parent = nullptr);

    void setContents(const FileContents* contents);  // nullptr clears; the pointer must outlive the model's use
    QModelIndex indexOfKernel(qint64 kernelId, int column = 0) const;

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
    const FileContents* m_contents = nullptr;
};

QString shapeText(const ws::RunInfo& info);

}  // namespace ws::ui
