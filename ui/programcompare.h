// Program views side by side (Compare ▸ Program view): two program runs, each in its own ProgramView, stacked
// with synchronised time axes aligned at each run's rung start (a family rung: the first timed iteration, from
// its [ws-rung] tag; any other run: its first launch), and each side's kernel count, idle gaps and, for a
// family rung, its roofline line. For the lce family it opens (when first shown) on rung 0 beside rung 4
// (issue 11: the gather + GEMM with their gap against one kernel).
#pragma once

#include "tracedocument.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class ProgramView;

namespace ws::ui {

class ProgramCompare : public QWidget {
    Q_OBJECT
public:
    explicit ProgramCompare(QWidget* parent = nullptr);

    // Fills the run pickers with the file's program runs; for an lce file picks rung 0 (A) and rung 4 (B).
    void setContents(const FileContents* contents);
    void compare(qint64 runA, qint64 runB);  // 0 leaves a side empty
    qint64 runA() const { return m_requested[0]; }
    qint64 runB() const { return m_requested[1]; }
    bool isLoaded() const;

    ProgramView* viewA() const { return m_view[0]; }
    ProgramView* viewB() const { return m_view[1]; }
    QString labelText(int side) const;  // plain text of a side's summary line (tests)
    // Where a side's time axis is aligned (absolute ns): the rung's first timed iteration, else the first launch.
    static ws::TimeNs alignmentPoint(const ws::ProgramTrace& program);

    qint64 defaultRunA() const { return m_defaultA; }  // lce rung 0 (0 if the file has no lce rungs 0 and 4)
    qint64 defaultRunB() const { return m_defaultB; }  // lce rung 4

signals:
    void loaded();
    void busyChanged(bool busy, const QString& what);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void load(int side, qint64 runId);
    void onSideLoaded(int side);
    void syncFrom(int side, ws::TimeNs t0, ws::TimeNs t1);

    const FileContents* m_contents = nullptr;
    QComboBox* m_pick[2] = {};
    QLabel* m_label[2] = {};
    ProgramView* m_view[2] = {};
    std::shared_ptr<const ws::ProgramTrace> m_program[2];
    qint64 m_requested[2] = {0, 0};
    quint64 m_gen[2] = {0, 0};
    bool m_syncing = false;
    qint64 m_defaultA = 0, m_defaultB = 0;
};

}  // namespace ws::ui
