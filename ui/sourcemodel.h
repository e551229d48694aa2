// The rung's bundled CUDA source with per-line stall-sample heat.
#pragma once

#include "warpstage/model.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <optional>
#include <vector>

namespace ws::ui {

class SourceModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ColLine, ColSamples, ColStage, ColCode, ColumnCount };
    enum Role { SamplesRole = Qt::UserRole + 1, HeatRole, RoleRole, KindRole };

    explicit SourceModel(QObject* parent = nullptr);

    // `fileName` is matched against StallSample::sourceFile by base name
    // ("pingpong.cu" matches ".../kernels/src/pingpong.cu").
    void setSource(const QString& fileName, const QString& text, const std::vector<ws::StallSample>& samples);
    void clear();
    QString fileName() const { return m_fileName; }

    // Stall samples attributed to lines of this file; total samples of the rung.
    qint64 attributedSamples() const { return m_attributed; }
    qint64 totalSamples() const { return m_total; }
    // 0-based row of the hottest line, -1 if none.
    int hottestRow() const;

    // The dominant (role, stage) of a line's samples, if any sample has a known stage.
    struct Stage {
        ws::WarpRole role = ws::WarpRole::Unknown;
        ws::IntervalKind kind = ws::IntervalKind::Other;
        QString name;  // "consumer/wait_data"
    };
    std::optional<Stage> stageOfRow(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Line {
        QString code;
        qint64 samples = 0;
        std::optional<Stage> stage;
        QString reasons;  // tooltip: top reasons
    };
    std::vector<Line> m_lines;
    QString m_fileName;
    qint64 m_max = 0, m_attributed = 0, m_total = 0;
};

}  // namespace ws::ui
