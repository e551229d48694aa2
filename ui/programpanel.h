// ProgramPanel: the program view (ProgramView) above the kernel summary table (KernelSummaryModel behind
// a filter box), linked both ways: selecting a row highlights that kernel's launches (others faded),
// "Zoom to kernel" (or double-clicking the row) fits them; clicking a launch selects its row.
// Opening a launch (double-click / Enter) emits openLaunch when it has a per-warp timeline, else a hint.
// Beside the table, the longest GPU idle gaps (at least the threshold chosen in the bar); clicking one
// zooms the view there.
#pragma once

#include "kernelsummarymodel.h"
#include "programview.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QTreeWidget;
class QLabel;
class QLineEdit;
class QTableView;

class ProgramPanel : public QWidget {
    Q_OBJECT
public:
    explicit ProgramPanel(QWidget *parent = nullptr);

    void setProgram(std::shared_ptr<const ws::ProgramTrace> program);
    std::shared_ptr<const ws::ProgramTrace> program() const { return m_view->program(); }
    ProgramView *view() const { return m_view; }
    QTableView *table() const { return m_table; }
    KernelSummaryModel *model() const { return m_model; }
    KernelSummaryProxy *proxy() const { return m_proxy; }
    QLineEdit *filterBox() const { return m_filter; }
    QTreeWidget *gapsList() const { return m_gaps; }       // the longest idle gaps, longest first
    QComboBox *gapThresholdBox() const { return m_gapThreshold; }
    QCheckBox *apiBox() const { return m_api; }            // "CPU launch spans": the API rows and launch arrows
    QLabel *rooflineLabel() const { return m_roofline; }   // a family rung's iterations and roofline (hidden otherwise)
    static constexpr int kMaxListedGaps = 20;
    QString selectedKernel() const;             // name of the selected table row ("" if none)
    void selectKernelName(const QString &name); // selects its row (and highlights); "" clears

signals:
    void openLaunch(qint64 kernelId, int kernelIndex);  // a launch with a per-warp timeline was opened
    void hint(const QString &text);                     // status-bar text

private:
    void onRowChanged();
    void fillGaps();
    ProgramView *m_view = nullptr;
    QTableView *m_table = nullptr;
    KernelSummaryModel *m_model = nullptr;
    KernelSummaryProxy *m_proxy = nullptr;
    QLineEdit *m_filter = nullptr;
    QLabel *m_summary = nullptr;
    QLabel *m_roofline = nullptr;
    QCheckBox *m_nvtx = nullptr, *m_api = nullptr;
    QTreeWidget *m_gaps = nullptr;
    QComboBox *m_gapThreshold = nullptr;
    bool m_syncing = false;
};
