// MainWindow's program view (issue #9): the Program tab, loading a run's ProgramTrace, drill-down from a
// launch into its per-warp timeline and Back to the program view where it was.
#include "mainwindow.h"

#include "programload.h"
#include "programpanel.h"
#include "programview.h"
#include "rungcatalog.h"
#include "runsmodel.h"
#include "teachingpanel.h"
#include "timelinewidget.h"

#include <QAction>
#include <QFutureWatcher>
#include <QStatusBar>
#include <QTabWidget>
#include <QTreeView>
#include <QtConcurrent>

namespace ws::ui {

void MainWindow::setupProgramView()
{
    m_programPanel = new ProgramPanel;
    m_programPanel->setObjectName(QStringLiteral("programPanel"));
    m_centralTabs->insertTab(1, m_programPanel, QIcon(QStringLiteral(":/icons/runs.svg")), tr("Program"));
    connect(m_programPanel, &ProgramPanel::openLaunch, this, [this](qint64 kernelId, int) {
        m_returnToProgram = true;
        m_centralTabs->setCurrentIndex(0);
        selectKernel(kernelId);
        statusBar()->showMessage(tr("Per-warp timeline of launch %1 · Back (Alt+←) returns to the program view").arg(kernelId), 8000);
        updateActions();
    });
    connect(m_programPanel, &ProgramPanel::hint, this, [this](const QString& text) { statusBar()->showMessage(text, 12000); });
    connect(m_programPanel->view(), &ProgramView::visibleRangeChanged, this, [this] { updateActions(); });
    connect(m_centralTabs, &QTabWidget::currentChanged, this, [this] { updateActions(); });
    // a run row: double-click opens its program view; a program run opens it when selected
    connect(m_runsView, &QTreeView::doubleClicked, this, [this](const QModelIndex& idx) {
        if (idx.data(RunsModel::KernelIdRole).toLongLong() == 0 && idx.data(RunsModel::RunIdRole).toLongLong() > 0)
            showProgramOfRun(idx.data(RunsModel::RunIdRole).toLongLong());
    });
    connect(m_runsView->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
        const qint64 run = cur.data(RunsModel::RunIdRole).toLongLong();
        if (const qint64 kernel = cur.data(RunsModel::KernelIdRole).toLongLong(); kernel != 0) {
            // a kernel row: the Program tab follows to the kernel's run (it never shows another run than the
            // selected kernel's), without leaving the tab the user is on
            const RunEntry* r = m_doc->findRunOfKernel(kernel);
            const qint64 kernelRun = r ? qint64(r->summary.info.id) : 0;
            const bool tabInUse = m_programWantedRunId != 0 || (r && r->summary.info.kind == ws::RunKind::Program);
            if (kernelRun > 0 && kernelRun != m_programWantedRunId && tabInUse)
                showProgramOfRun(kernelRun, false);
            return;
        }
        if (run <= 0)
            return;
        for (const auto& r : m_doc->contents().runs)
            if (qint64(r.summary.info.id) == run && r.summary.info.kind == ws::RunKind::Program)
                showProgramOfRun(run);
    });
    connect(m_doc, &TraceDocument::opened, this, [this] {
        m_programRunId = 0;
        m_programWantedRunId = 0;
        m_programActivate = false;
        m_returnToProgram = false;
        m_programPanel->setProgram(nullptr);
        // a file of program runs opens on the program view of the first one
        for (const auto& r : m_doc->contents().runs)
            if (r.summary.info.kind == ws::RunKind::Program) {
                showProgramOfRun(qint64(r.summary.info.id));
                break;
            }
    });
}

bool MainWindow::programTabCurrent() const { return m_programPanel && m_centralTabs->currentWidget() == m_programPanel; }

void MainWindow::showProgramOfRun(qint64 runId, bool activate)
{
    const auto store = m_doc->contents().store;
    if (!store)
        return;
    const quint64 gen = ++m_programGen;
    m_programWantedRunId = runId;
    m_programActivate = m_programActivate || activate;  // a load that supersedes an activating one activates too
    onBusy(true, tr("Loading the program view of run %1…").arg(runId));
    auto* w = new QFutureWatcher<LoadedProgram>(this);
    connect(w, &QFutureWatcher<LoadedProgram>::finished, this, [this, w, gen, runId] {
        const LoadedProgram r = w->result();
        w->deleteLater();
        onBusy(false, {});
        if (gen != m_programGen)
            return;
        const bool activate = std::exchange(m_programActivate, false);
        if (!r.program) {
            showBanner(tr("<b>Could not load the program view of run %1.</b> %2").arg(runId).arg(r.error.toHtmlEscaped()), true);
            return;
        }
        m_programRunId = runId;
        m_returnToProgram = false;
        m_programPanel->setProgram(r.program);
        if (activate)
            m_centralTabs->setCurrentWidget(m_programPanel);
        // a family rung's run (lce_padded, ...): its teaching text
        if (const QString v = QString::fromStdString(r.program->run.variant); activate && findRungText(v))
            m_teaching->setRung(v);
        statusBar()->showMessage(tr("Program view of run %1: %L2 launches, %L3 memory operations")
                                     .arg(runId).arg(qint64(r.program->kernels.size())).arg(qint64(r.program->memOps.size())),
                                 6000);
        updateActions();
        emit programShown(runId);
    });
    w->setFuture(QtConcurrent::run([store, runId] { return loadProgramNow(*store, runId); }));
}

bool MainWindow::canGoBack() const
{
    if (programTabCurrent())
        return m_programPanel->view()->canGoBack();
    return (m_trace && m_timeline->canGoBack()) || (m_returnToProgram && m_programPanel->program());
}

void MainWindow::goBack()
{
    if (programTabCurrent()) {
        m_programPanel->view()->historyBack();
    } else if (m_trace && m_timeline->canGoBack()) {
        m_timeline->historyBack();
    } else if (m_returnToProgram && m_programPanel->program()) {
        m_returnToProgram = false;
        m_centralTabs->setCurrentWidget(m_programPanel);  // the same widget: the same place
        m_programPanel->view()->setFocus();
    }
    updateActions();
}

}  // namespace ws::ui
