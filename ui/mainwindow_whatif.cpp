// The main window's what-if part (issue 13): the What-if dock, the critical path toggle (View menu and
// toolbar), the critical path of each shown kernel (computed on a worker), the attribution bar's clicks, the
// predicted timeline's ghost lanes and the guided tour's what-if steps.
#include "mainwindow.h"

#include "attributionbar.h"
#include "metricspanel.h"
#include "teachingpanel.h"
#include "timelinewidget.h"
#include "whatifengine.h"
#include "whatifpanel.h"

#include <QAction>
#include <QDockWidget>
#include <QFutureWatcher>
#include <QMenuBar>
#include <QStatusBar>
#include <QToolBar>
#include <QtConcurrent>

#include <algorithm>
#include <map>

namespace ws::ui {

void MainWindow::buildWhatIfDock()
{
    m_whatIf = new WhatIfPanel;
    m_whatIfDock = new QDockWidget(tr("What if"), this);
    m_whatIfDock->setObjectName(QStringLiteral("whatIfDock"));
    m_whatIfDock->setWidget(m_whatIf);
    m_whatIfDock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                              QDockWidget::DockWidgetFloatable);
    m_whatIfDock->toggleViewAction()->setIcon(QIcon(QStringLiteral(":/icons/whatif.svg")));
    addDockWidget(Qt::RightDockWidgetArea, m_whatIfDock);
    if (auto* metrics = findChild<QDockWidget*>(QStringLiteral("metricsDock")))
        splitDockWidget(metrics, m_whatIfDock, Qt::Vertical);
}

void MainWindow::setupWhatIf()
{
    m_actCriticalPath = new QAction(QIcon(QStringLiteral(":/icons/critical-path.svg")), tr("Critical &path"), this);
    m_actCriticalPath->setObjectName(QStringLiteral("actCriticalPath"));
    m_actCriticalPath->setCheckable(true);
    m_actCriticalPath->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    m_actCriticalPath->setToolTip(tr("Outline the kernel's critical path on the warp lanes (Ctrl+P)"));
    connect(m_actCriticalPath, &QAction::toggled, this, [this](bool on) {
        m_timeline->setCriticalPathVisible(on);
        if (on)
            revealCriticalPath();
    });
    for (QAction* a : menuBar()->actions()) {
        if (a->menu() && a->text() == tr("&View")) {
            a->menu()->addSeparator();
            a->menu()->addAction(m_actCriticalPath);
            break;
        }
    }
    if (auto* tb = findChild<QToolBar*>(QStringLiteral("mainToolbar"))) {
        tb->addSeparator();
        tb->addAction(m_actCriticalPath);
        tb->addAction(m_whatIfDock->toggleViewAction());
    }

    connect(this, &MainWindow::kernelShown, this, [this] { whatIfKernel(); });
    auto highlightCause = [this](int cause) {
        m_timeline->setPathCause(cause);
        if (cause >= 0 && !m_actCriticalPath->isChecked())
            m_actCriticalPath->setChecked(true);
        if (cause >= 0)
            statusBar()->showMessage(tr("Critical path: %1 highlighted (click it again to clear)")
                                         .arg(pathCauseLabel(PathCause(cause))), 5000);
    };
    connect(m_metrics, &MetricsPanel::causeClicked, this, highlightCause);
    connect(m_whatIf, &WhatIfPanel::causeClicked, this, [this, highlightCause](int cause) {
        // the prediction's causes are the measured path's words too: highlight the measured path's parts
        m_metrics->attributionBar()->setSelectedCause(cause);
        highlightCause(cause);
    });
    connect(m_whatIf, &WhatIfPanel::predicted, this, [this](std::shared_ptr<const Prediction> p) {
        m_timeline->setGhostLanes(p ? p->ghost : nullptr, m_whatIf->ghostMode());
        if (m_fitNextPrediction && p && p->ghost) {
            m_fitNextPrediction = false;
            m_timeline->resetZoom();  // the measured kernel and the prediction, whole
            revealCriticalPath();
        }
    });
    connect(m_whatIf, &WhatIfPanel::ghostModeChanged, this, [this](GhostMode mode) {
        const auto p = m_whatIf->prediction();
        m_timeline->setGhostLanes(p ? p->ghost : nullptr, mode);
    });
    connect(m_teaching, &TeachingPanel::whatIfRequested, this, [this](const QString&, const WhatIfParams& suggested) {
        m_whatIfDock->show();
        m_whatIfDock->raise();
        m_actCriticalPath->setChecked(true);
        if (m_whatIf->ghostMode() == GhostMode::Off)
            m_whatIf->setGhostMode(GhostMode::Beside);
        m_fitNextPrediction = true;
        m_whatIf->setParams(suggested);
    });
}

void MainWindow::whatIfKernel()
{
    const quint64 gen = ++m_pathGen;  // a result for an earlier kernel is dropped
    if (!m_timeline->indexReady()) {
        // the lanes' index first (the kernel's first paint needs it); then the critical path and the replay
        const quint64 id = quint64(m_kernelId);
        connect(m_timeline, &TimelineWidget::indexReadyChanged, this, [this, id](bool ready) {
            if (ready && quint64(m_kernelId) == id)
                whatIfKernel();
        }, Qt::SingleShotConnection);
        m_metrics->setCriticalPath(nullptr);
        m_whatIf->setUnavailable(tr("Waiting for the lanes' index…"));
        return;
    }
    m_criticalPath.reset();
    m_metrics->setCriticalPath(nullptr);
    const auto trace = m_trace;
    if (!trace || trace->intervalCount() == 0) {
        m_whatIf->setUnavailable(tr("This kernel has no per-warp timeline to replay."));
        return;
    }
    // one dependency graph for the critical path and the panel's replays (built once, by whichever runs first);
    // the ring depth from the loader's TraceFacts: recordedStages() walks every interval (GUI thread)
    auto kernel = std::make_shared<WhatIfKernel>(trace);
    const auto facts = m_timeline->trace() == trace ? m_timeline->traceFacts() : nullptr;
    m_whatIf->setKernel(makePredictor(kernel), trace->launch.end - trace->launch.start,
                        facts ? facts->ringDepth : recordedStages(*trace), recordedSms(*trace));
    auto* watcher = new QFutureWatcher<std::shared_ptr<const CriticalPathView>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, gen] {
        watcher->deleteLater();
        if (gen != m_pathGen)
            return;  // another kernel since
        m_criticalPath = watcher->result();
        m_metrics->setCriticalPath(m_criticalPath);
        m_timeline->setCriticalPath(m_criticalPath ? m_criticalPath->segments : std::vector<PathSegment>{});
        if (m_actCriticalPath->isChecked())
            revealCriticalPath();
        emit criticalPathShown();
    });
    watcher->setFuture(QtConcurrent::run(whatIfPool(), [kernel] { return kernel->criticalPath(); }));
}

void MainWindow::revealCriticalPath()
{
    // scroll to the warp lane the path spends the most time on (it may run through CTAs far below)
    if (!m_criticalPath || m_criticalPath->segments.empty())
        return;
    std::map<int, TimeNs> perLane;
    for (const PathSegment& s : m_criticalPath->segments)
        if (s.lane >= 0)
            perLane[s.lane] += s.end - s.start;
    const auto best = std::max_element(perLane.begin(), perLane.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    if (best != perLane.end())
        m_timeline->scrollToLane(best->first);
}

}  // namespace ws::ui
