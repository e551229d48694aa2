// Compare: two kernels (two rungs, or the same rung in two runs) stacked with
// synchronized time axes aligned at kernel start, and a table of metric deltas ("Warp view");
// and two program runs' program views side by side ("Program view", programcompare.h).
#pragma once

#include "tracedocument.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QTableView;
class QTabWidget;
class TimelineWidget;

namespace ws::ui {

class MetricDeltaModel;
class ProgramCompare;

class ComparePanel : public QWidget {
    Q_OBJECT
public:
    explicit ComparePanel(QWidget* parent = nullptr);

    void setContents(const FileContents* contents);
    // Chooses the two kernels (0 leaves a side empty) and loads them.
    void compare(qint64 kernelA, qint64 kernelB);
    qint64 kernelA() const;
    qint64 kernelB() const;

    TimelineWidget* timelineA() const { return m_tlA; }
    TimelineWidget* timelineB() const { return m_tlB; }
    MetricDeltaModel* deltaModel() const { return m_delta; }
    QTableView* deltaView() const { return m_deltaView; }
    ProgramCompare* programCompare() const { return m_programCompare; }
    QTabWidget* modes() const { return m_modes; }  // "Warp view" (page 0), "Program view" (page 1)
    void showProgramCompare(qint64 runA, qint64 runB);
    // Both requested sides are loaded (tests).
    bool isLoaded() const;

signals:
    void loaded();
    void busyChanged(bool busy, const QString& what);

private:
    void load(int side, qint64 kernelId);
    void syncFrom(int side, ws::TimeNs t0, ws::TimeNs t1);
    void updateDeltas();

    const FileContents* m_contents = nullptr;
    QComboBox* m_pick[2] = {};
    QLabel* m_label[2] = {};
    TimelineWidget* m_tlA = nullptr;
    TimelineWidget* m_tlB = nullptr;
    MetricDeltaModel* m_delta = nullptr;
    QTableView* m_deltaView = nullptr;
    LoadedKernel m_side[2];
    qint64 m_requested[2] = {0, 0};
    quint64 m_gen[2] = {0, 0};
    bool m_syncing = false;
    QTabWidget* m_modes = nullptr;
    ProgramCompare* m_programCompare = nullptr;
};

}  // namespace ws::ui
