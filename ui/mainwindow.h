// The Warpstage main window: the timeline in the centre, docks around it
// (Runs & kernels, Metrics, Stalls + source, Compare, Teaching), File / View /
// Tools / Help menus, a toolbar and a status bar with a progress bar.
#pragma once

#include "tracedocument.h"

#include <QMainWindow>
#include <QPointer>
#include <QTemporaryDir>

#include <functional>
#include <memory>

class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QTabWidget;
class QTreeView;
class QSortFilterProxyModel;
class TimelineWidget;
class ProgramPanel;

namespace ws::ui {

class ComparePanel;
class MetricsPanel;
class RunsModel;
class StallsPanel;
class TeachingPanel;
class WhatIfPanel;
struct CriticalPathView;

// Bundled sample trace: ../share/warpstage/samples of the executable (installed), then samples/ and
// ../../samples (build tree), then WARPSTAGE_SAMPLES_DIR; $WARPSTAGE_SAMPLES alone when set. Empty if none.
QString findSampleTrace();        // the default bundled sample (the kernel ladder), "" if none
QStringList findSampleTraces();   // every bundled sample, by file name (File ▸ Bundled samples)

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens `path` on a worker thread; errors are shown in the window.
    void openFile(const QString& path);
    // The bundled sample, or a generated synthetic ladder (with a banner) when none is bundled.
    void openDefault();
    void selectKernel(qint64 kernelId);
    bool exportCurrentView(const QString& path, QSize sizePx, double dpi, const QString& title, QString* error) const;
    // Compare the given kernels (or the current one and the rung below it when 0).
    void compareKernels(qint64 a = 0, qint64 b = 0);
    // The program view of a run (mainwindow_program.cpp): loads it on a worker, shows the Program tab
    // (`activate` false: loads it into the tab without switching to it).
    void showProgramOfRun(qint64 runId, bool activate = true);
    // Back: the current view's zoom history; from a warp view opened out of the program view, with no
    // zoom step left, back to the program view where it was.
    void goBack();
    bool canGoBack() const;
    ProgramPanel* programPanel() const { return m_programPanel; }
    qint64 programRun() const { return m_programRunId; }
    // Asked when a file of an older schema is opened: migrate a copy to `copyPath` and open it?
    // Default (empty): a question box, or "no" when WARPSTAGE_NO_DIALOGS is set. Tests inject the answer.
    using MigrationPrompt = std::function<bool(const QString& message, const QString& copyPath)>;
    void setMigrationPrompt(MigrationPrompt prompt) { m_migrationPrompt = std::move(prompt); }

    TraceDocument* document() const { return m_doc; }
    TimelineWidget* timeline() const { return m_timeline; }
    RunsModel* runsModel() const { return m_runsModel; }
    QTreeView* runsView() const { return m_runsView; }
    MetricsPanel* metricsPanel() const { return m_metrics; }
    StallsPanel* stallsPanel() const { return m_stalls; }
    ComparePanel* comparePanel() const { return m_compare; }
    TeachingPanel* teachingPanel() const { return m_teaching; }
    WhatIfPanel* whatIfPanel() const { return m_whatIf; }                // mainwindow_whatif.cpp
    QAction* criticalPathAction() const { return m_actCriticalPath; }
    std::shared_ptr<const CriticalPathView> criticalPath() const { return m_criticalPath; }
    QAction* recordAction() const { return m_actRecord; }
    QTabWidget* centralTabs() const { return m_centralTabs; }
    QString bannerText() const;
    qint64 currentKernel() const { return m_kernelId; }
    std::shared_ptr<const ws::KernelTrace> currentTrace() const { return m_trace; }
    QStringList recentFiles() const;

signals:
    void fileOpened(const QString& path);
    void fileOpenFailed(const QString& path, const QString& message);
    void kernelShown(qint64 kernelId);
    void programShown(qint64 runId);
    void selectionMetricsShown();
    void criticalPathShown();  // the current kernel's critical path is in the metrics panel and on the timeline

protected:
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;
    void closeEvent(QCloseEvent* e) override;
    void showEvent(QShowEvent* e) override;

private:
    void buildActions();
    void buildDocks();
    void buildWhatIfDock();   // mainwindow_whatif.cpp: the What-if dock (from buildDocks)
    void setupWhatIf();       // its actions and connections (after buildActions)
    void whatIfKernel();      // a kernel was shown: its critical path (worker) and the panel's predictor
    void revealCriticalPath();  // scroll the timeline to the path's busiest lane
    void setupProgramView();
    bool programTabCurrent() const;
    void showBanner(const QString& html, bool error);
    void hideBanner();
    void onOpened();
    void onOpenFailed(const QString& path, const QString& message, bool needsMigration);
    void onKernelLoaded(qint64 id, std::shared_ptr<const ws::KernelTrace> trace,
                        std::shared_ptr<const ws::KernelMetrics> metrics, std::shared_ptr<const ws::ui::TraceFacts> facts);
    void onBusy(bool busy, const QString& what);
    void updateSelectionMetrics();
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    void onRecord();
    void onExport();
    void onTourRung(const QString& rung);
    void updateActions();
    QString selectionScope() const;

    TraceDocument* m_doc = nullptr;
    TimelineWidget* m_timeline = nullptr;
    ProgramPanel* m_programPanel = nullptr;
    qint64 m_programRunId = 0;
    qint64 m_programWantedRunId = 0;  // the run shown or being loaded into the Program tab
    bool m_programActivate = false;   // the pending load shows the tab when it arrives
    quint64 m_programGen = 0;
    bool m_returnToProgram = false;  // the warp view was opened from the program view
    QLabel* m_banner = nullptr;
    QLabel* m_kernelHeader = nullptr;
    RunsModel* m_runsModel = nullptr;
    QSortFilterProxyModel* m_runsProxy = nullptr;
    QTreeView* m_runsView = nullptr;
    MetricsPanel* m_metrics = nullptr;
    StallsPanel* m_stalls = nullptr;
    ComparePanel* m_compare = nullptr;
    TeachingPanel* m_teaching = nullptr;
    QTabWidget* m_centralTabs = nullptr;
    QDockWidget* m_stallsDock = nullptr;
    QLineEdit* m_laneFilter = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_statusFile = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_actOpen = nullptr;
    QAction* m_actRecord = nullptr;
    QAction* m_actExport = nullptr;
    QAction* m_actCompare = nullptr;
    QAction* m_actBack = nullptr;
    QAction* m_actForward = nullptr;
    QAction* m_actReset = nullptr;

    std::unique_ptr<QTemporaryDir> m_tempDir;
    QString m_path;
    qint64 m_kernelId = 0;
    std::shared_ptr<const ws::KernelTrace> m_trace;
    std::shared_ptr<const ws::KernelMetrics> m_kernelMetrics;
    ws::Selection m_selection;
    int m_busy = 0;
    bool m_layoutRestored = false;  // saved dock layout restored: keep it
    bool m_layoutDone = false;
    bool m_stallsHiddenForCompare = false;
    bool m_showNewestRun = false;  // after recording: show the run just added
    MigrationPrompt m_migrationPrompt;
    WhatIfPanel* m_whatIf = nullptr;
    QDockWidget* m_whatIfDock = nullptr;
    QAction* m_actCriticalPath = nullptr;
    quint64 m_pathGen = 0;
    bool m_fitNextPrediction = false;  // a tour step asked for a prediction: show it whole
    std::shared_ptr<const CriticalPathView> m_criticalPath;
};

}  // namespace ws::ui
