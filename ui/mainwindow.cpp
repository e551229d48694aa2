#include "mainwindow.h"
#include "warpstage/program.h"
#include "warpstage/tilegeom.h"

#include "comparepanel.h"
#include "exportdialog.h"
#include "metricspanel.h"
#include "programpanel.h"
#include "recorddialog.h"
#include "rungcatalog.h"
#include "runsmodel.h"
#include "stallspanel.h"
#include "teachingpanel.h"
#include "timelinewidget.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QScreen>
#include <QSettings>
#include <QShowEvent>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

#include <cmath>

// The kernel's tile configuration for the header (core/tilegeom.h: the recorder's [ws-tiles] tag): shown where
// the run has one, or where a ladder kernel recorded tiles without one (a file recorded before session 9).
static QString tileHeaderText(const ws::KernelTrace &trace)
{
    const auto g = ws::tileGeometryOf(trace.run);
    if (!g && (trace.tiles.empty() || trace.run.kind != ws::RunKind::Ladder))
        return {};
    const QString text = QString::fromStdString(ws::tileGeometryShort(g)).toHtmlEscaped();
    return g ? QStringLiteral(" &nbsp;·&nbsp; %1").arg(text)
             : QStringLiteral(" &nbsp;·&nbsp; <span style='color:#707680'>%1</span>").arg(text);
}

namespace ws::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    initResources();
    setWindowTitle(QStringLiteral("Warpstage"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/warpstage.svg")));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);
    // side docks run the full height; the stalls dock sits under the timeline only
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    setDocumentMode(true);

    m_doc = new TraceDocument(this);

    auto* central = new QWidget;
    auto* cl = new QVBoxLayout(central);
    cl->setContentsMargins(0, 0, 0, 0);
    cl->setSpacing(0);
    m_banner = new QLabel;
    m_banner->setObjectName(QStringLiteral("banner"));
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->hide();
    cl->addWidget(m_banner);
    m_kernelHeader = new QLabel;
    m_kernelHeader->setObjectName(QStringLiteral("kernelHeader"));
    m_kernelHeader->setContentsMargins(8, 4, 8, 4);
    m_kernelHeader->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_kernelHeader->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_banner->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_timeline = new TimelineWidget;
    m_timeline->setObjectName(QStringLiteral("mainTimeline"));
    auto* timelinePage = new QWidget;
    auto* tpl = new QVBoxLayout(timelinePage);
    tpl->setContentsMargins(0, 0, 0, 0);
    tpl->setSpacing(0);
    tpl->addWidget(m_kernelHeader);
    tpl->addWidget(m_timeline, 1);
    m_compare = new ComparePanel;
    m_centralTabs = new QTabWidget;
    m_centralTabs->setDocumentMode(true);
    m_centralTabs->addTab(timelinePage, QIcon(QStringLiteral(":/icons/runs.svg")), tr("Timeline"));
    m_centralTabs->addTab(m_compare, QIcon(QStringLiteral(":/icons/compare.svg")), tr("Compare"));
    cl->addWidget(m_centralTabs, 1);
    setCentralWidget(central);

    buildDocks();
    buildActions();
    setupWhatIf();
    setupProgramView();
    // Compare needs the height: the stalls dock steps aside while the Compare tab is shown
    connect(m_centralTabs, &QTabWidget::currentChanged, this, [this](int) {
        const bool comparing = m_centralTabs->currentWidget() == m_compare;
        if (comparing && m_stallsDock->isVisible()) {
            m_stallsHiddenForCompare = true;
            m_stallsDock->hide();
        } else if (!comparing && m_stallsHiddenForCompare) {
            m_stallsHiddenForCompare = false;
            m_stallsDock->show();
        }
    });

    m_progress = new QProgressBar;
    m_progress->setMaximumWidth(180);
    m_progress->setMaximumHeight(14);
    m_progress->setTextVisible(false);
    m_progress->hide();
    m_statusFile = new QLabel;
    statusBar()->addPermanentWidget(m_statusFile);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->showMessage(tr("Ready"));

    connect(m_doc, &TraceDocument::opened, this, &MainWindow::onOpened);
    connect(m_doc, &TraceDocument::openFailed, this, &MainWindow::onOpenFailed);
    connect(m_doc, &TraceDocument::kernelLoaded, this, &MainWindow::onKernelLoaded);
    connect(m_doc, &TraceDocument::kernelLoadFailed, this, [this](qint64 id, const QString& msg) {
        showBanner(tr("<b>Could not load kernel %1.</b> %2").arg(id).arg(msg.toHtmlEscaped()), true);
    });
    connect(m_doc, &TraceDocument::busyChanged, this, &MainWindow::onBusy);
    connect(m_doc, &TraceDocument::analysisReady, this,
            [this](int, const ws::Selection&, std::shared_ptr<const ws::KernelMetrics> m) {
                m_metrics->setMetrics(selectionScope(), std::move(m));
                emit selectionMetricsShown();
            });
    connect(m_compare, &ComparePanel::busyChanged, this, &MainWindow::onBusy);

    connect(m_timeline, &TimelineWidget::ctaSelected, this, [this](int cta) {
        m_selection.ctaIndex = cta;
        updateSelectionMetrics();
    });
    connect(m_timeline, &TimelineWidget::timeRangeSelected, this, [this](ws::TimeNs t0, ws::TimeNs t1) {
        m_selection.t0 = std::min(t0, t1);
        m_selection.t1 = std::max(t0, t1);
        updateSelectionMetrics();
    });
    connect(m_timeline, &TimelineWidget::intervalSelected, this, [this](int lane, qsizetype index) {
        if (!m_trace || lane < 0 || size_t(lane) >= m_trace->lanes.size())
            return;
        const ws::Lane& L = m_trace->lanes[size_t(lane)];
        if (index < 0 || size_t(index) >= L.size())
            return;
        const auto kind = L.kind[size_t(index)];
        const auto kn = ws::intervalKindLabel(kind);
        statusBar()->showMessage(tr("%1 · CTA %2 warp %3 (%4) · k-step %5 · slot %6 · start %7 · duration %8")
                                     .arg(QString::fromUtf8(kn.data(), qsizetype(kn.size())))
                                     .arg(m_trace->ctas[size_t(L.ctaIndex)].blockLinear)
                                     .arg(L.warpIndex)
                                     .arg(QString::fromStdString(L.roleName))
                                     .arg(L.kstep[size_t(index)])
                                     .arg(L.slot[size_t(index)])
                                     .arg(formatDuration(double(L.start[size_t(index)] - m_trace->launch.start)))
                                     .arg(formatDuration(double(L.duration[size_t(index)]))));
    });
    connect(m_timeline, &TimelineWidget::indexProgress, this, [this](int pct) {
        if (pct >= 100) {
            if (m_busy == 0)
                m_progress->hide();
            statusBar()->showMessage(tr("Lane index ready"), 2000);
            return;
        }
        m_progress->show();
        m_progress->setRange(0, 100);
        m_progress->setValue(pct);
        statusBar()->showMessage(tr("Indexing lanes… %1 %").arg(pct));
    });
    connect(m_timeline, &TimelineWidget::visibleRangeChanged, this, [this] { updateActions(); });
    connect(m_stalls, &StallsPanel::stageRequested, this, [this](ws::WarpRole role, ws::IntervalKind kind) {
        m_timeline->highlightStage(role, kind);
        const auto rn = ws::warpRoleName(role);
        const auto kn = ws::intervalKindLabel(kind);
        statusBar()->showMessage(tr("Highlighting %1 · %2 on the timeline (Esc clears)")
                                     .arg(QString::fromUtf8(rn.data(), qsizetype(rn.size())),
                                          QString::fromUtf8(kn.data(), qsizetype(kn.size()))));
    });
    connect(m_metrics, &MetricsPanel::warpgroupChanged, this, [this](int wg) {
        if (wg < 0)
            m_selection.warpgroup.reset();
        else
            m_selection.warpgroup = wg;
        updateSelectionMetrics();
    });
    connect(m_metrics, &MetricsPanel::resetRequested, this, [this] {
        m_selection = {};
        m_metrics->setWarpgroup(-1);
        updateSelectionMetrics();
    });
    connect(m_teaching, &TeachingPanel::rungRequested, this, &MainWindow::onTourRung);

    QSettings s;
    restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
    m_layoutRestored = restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    if (!m_layoutRestored) {
        // first start: most of the screen (a timeline wants width)
        const QRect avail = screen() ? screen()->availableGeometry() : QRect(0, 0, 1600, 1000);
        resize(std::max(1200, avail.width() * 92 / 100), std::max(760, avail.height() * 90 / 100));
    }
    rebuildRecentMenu();
    updateActions();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildDocks()
{
    auto mkDock = [this](QString title, const QString& name, QWidget* w, const QString& icon) {
        auto* d = new QDockWidget(title.replace(QStringLiteral("&&"), QStringLiteral("&")), this);
        d->setObjectName(name);
        d->setWidget(w);
        d->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
        d->toggleViewAction()->setIcon(QIcon(icon));
        d->toggleViewAction()->setText(QString(title).replace(QStringLiteral("&"), QStringLiteral("&&")));
        return d;
    };

    m_runsModel = new RunsModel(this);
    m_runsProxy = new QSortFilterProxyModel(this);
    m_runsProxy->setSourceModel(m_runsModel);
    m_runsProxy->setSortRole(RunsModel::SortRole);
    m_runsView = new QTreeView;
    m_runsView->setObjectName(QStringLiteral("runsView"));
    m_runsView->setModel(m_runsProxy);
    m_runsView->setUniformRowHeights(true);
    m_runsView->setAlternatingRowColors(true);
    m_runsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_runsView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_runsView->setSortingEnabled(true);
    m_runsView->sortByColumn(-1, Qt::AscendingOrder);
    m_runsView->header()->setStretchLastSection(false);
    m_runsView->header()->setSectionResizeMode(QHeaderView::Interactive);
    m_runsView->setColumnWidth(RunsModel::ColName, 142);
    m_runsView->setColumnWidth(RunsModel::ColRung, 110);
    m_runsView->setColumnWidth(RunsModel::ColShape, 112);
    m_runsView->setColumnWidth(RunsModel::ColDuration, 72);
    m_runsView->setColumnWidth(RunsModel::ColTflops, 62);
    m_runsView->setColumnWidth(RunsModel::ColOverlap, 62);
    m_runsView->setColumnWidth(RunsModel::ColDevice, 160);
    connect(m_runsView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& cur) {
                const qint64 id = cur.data(RunsModel::KernelIdRole).toLongLong();
                if (id > 0 && id != m_kernelId) {
                    m_kernelId = id;
                    m_doc->loadKernel(id);
                }
            });
    auto* runsDock = mkDock(tr("Runs && kernels"), QStringLiteral("runsDock"), m_runsView, QStringLiteral(":/icons/runs.svg"));
    addDockWidget(Qt::LeftDockWidgetArea, runsDock);

    m_teaching = new TeachingPanel;
    auto* teachDock = mkDock(tr("Teaching"), QStringLiteral("teachingDock"), m_teaching, QStringLiteral(":/icons/teaching.svg"));
    addDockWidget(Qt::LeftDockWidgetArea, teachDock);
    splitDockWidget(runsDock, teachDock, Qt::Vertical);

    m_metrics = new MetricsPanel;
    auto* metricsDock = mkDock(tr("Metrics"), QStringLiteral("metricsDock"), m_metrics, QStringLiteral(":/icons/metrics.svg"));
    addDockWidget(Qt::RightDockWidgetArea, metricsDock);

    m_stalls = new StallsPanel;
    m_stallsDock = mkDock(tr("Stalls && source"), QStringLiteral("stallsDock"), m_stalls, QStringLiteral(":/icons/stalls.svg"));
    addDockWidget(Qt::BottomDockWidgetArea, m_stallsDock);
    buildWhatIfDock();

}

void MainWindow::showBanner(const QString& html, bool error)
{
    m_banner->setText(html);
    m_banner->setStyleSheet(error ? QStringLiteral("QLabel#banner { background: #fdecea; color: #8a1c13; "
                                                   "border-bottom: 1px solid #f5c2c0; padding: 6px 10px; }")
                                  : QStringLiteral("QLabel#banner { background: #fff8e1; color: #5d4200; "
                                                   "border-bottom: 1px solid #ffe08a; padding: 6px 10px; }"));
    m_banner->show();
}

void MainWindow::hideBanner()
{
    m_banner->hide();
    m_banner->clear();
}

QString MainWindow::bannerText() const
{
    return m_banner->isHidden() ? QString() : m_banner->text();
}

void MainWindow::selectKernel(qint64 kernelId)
{
    const QModelIndex src = m_runsModel->indexOfKernel(kernelId);
    if (!src.isValid())
        return;
    const QModelIndex idx = m_runsProxy->mapFromSource(src);
    m_runsView->scrollTo(idx);
    m_runsView->selectionModel()->setCurrentIndex(idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    if (m_kernelId != kernelId) {  // selection signal did not fire (already current)
        m_kernelId = kernelId;
        m_doc->loadKernel(kernelId);
    }
}

void MainWindow::onKernelLoaded(qint64 id, std::shared_ptr<const ws::KernelTrace> trace,
                                std::shared_ptr<const ws::KernelMetrics> metrics, std::shared_ptr<const ws::ui::TraceFacts> facts)
{
    if (id != m_kernelId)
        return;
    m_trace = trace;
    m_kernelMetrics = metrics;
    m_selection = {};
    if (!m_banner->isHidden() && m_banner->styleSheet().contains(QStringLiteral("fdecea")))
        hideBanner();  // an old error no longer applies
    m_timeline->setTrace(trace, std::move(facts));  // facts from the loader's worker: no pass over the intervals here
    m_timeline->setTimeOrigin(trace->launch.start);
    if (!m_laneFilter->text().isEmpty())
        m_timeline->setLaneFilter(m_laneFilter->text());
    int wgs = 0;
    for (const auto& l : trace->lanes)
        wgs = std::max(wgs, l.warpgroup + 1);
    m_metrics->setKernel(wgs);
    m_metrics->setMetrics(selectionScope(), metrics);
    m_stalls->setKernel(trace, metrics);
    const QString rung = QString::fromStdString(trace->launch.variant.empty() ? trace->run.variant : trace->launch.variant);
    m_teaching->setRung(rung);
    const auto* rt = findRungText(rung);
    m_kernelHeader->setText(tr("<b>%1</b> &nbsp;·&nbsp; run %2 &nbsp;·&nbsp; %3 &nbsp;·&nbsp; %4 &nbsp;·&nbsp; %L5 CTAs, "
                               "%L6 lanes, %L7 intervals &nbsp;·&nbsp; %8%9")
                                .arg(rt ? rt->title.toHtmlEscaped() : rung.toHtmlEscaped())
                                .arg(trace->run.id)
                                .arg(shapeText(trace->run) + tileHeaderText(*trace))  // the tile configuration
                                .arg(formatDuration(double(trace->launch.end - trace->launch.start)))
                                .arg(qint64(trace->ctas.size()))
                                .arg(qint64(trace->lanes.size()))
                                .arg(qint64(trace->intervalCount()))
                                .arg(QString::fromStdString(trace->run.device.name).toHtmlEscaped())
                                .arg(trace->run.synthetic ? tr(" &nbsp;<span style='color:#b26a00'>(synthetic)</span>")
                                                          : QString()));
    statusBar()->showMessage(tr("Kernel %1 loaded: %L2 intervals").arg(id).arg(qint64(trace->intervalCount())), 5000);
    updateActions();
    emit kernelShown(id);
}

QString MainWindow::selectionScope() const
{
    if (!m_trace)
        return tr("No kernel selected");
    const std::string label = m_trace->launch.variant.empty() ? ws::kernelFamily(m_trace->launch.name)
                                                                : m_trace->launch.variant;
    const QString kernel = tr("Kernel %1 (%2)").arg(m_trace->launch.id).arg(QString::fromStdString(label));
    QStringList parts;
    if (m_selection.ctaIndex && size_t(*m_selection.ctaIndex) < m_trace->ctas.size()) {
        const auto& c = m_trace->ctas[size_t(*m_selection.ctaIndex)];
        parts << tr("CTA %1 (SM %2)").arg(c.blockLinear).arg(c.smId);
    }
    if (m_selection.warpgroup)
        parts << tr("WG %1").arg(*m_selection.warpgroup);
    if (m_selection.t0 && m_selection.t1)
        parts << tr("%1 … %2").arg(formatDuration(double(*m_selection.t0 - m_trace->launch.start)),
                                   formatDuration(double(*m_selection.t1 - m_trace->launch.start)));
    return parts.isEmpty() ? kernel : kernel + QStringLiteral("\n▸ ") + parts.join(QStringLiteral(" ▸ "));
}

void MainWindow::updateSelectionMetrics()
{
    if (!m_trace)
        return;
    if (!m_selection.ctaIndex && !m_selection.warpgroup && !m_selection.t0) {
        m_metrics->setMetrics(selectionScope(), m_kernelMetrics);
        emit selectionMetricsShown();
        return;
    }
    m_metrics->setPending(selectionScope());
    m_doc->analyze(m_trace, m_selection);
}

void MainWindow::onBusy(bool busy, const QString& what)
{
    m_busy = std::max(0, m_busy + (busy ? 1 : -1));
    if (m_busy > 0) {
        m_progress->setRange(0, 0);  // indeterminate: store reads report no progress
        m_progress->show();
        if (!what.isEmpty())
            statusBar()->showMessage(what);
    } else {
        m_progress->hide();
        statusBar()->clearMessage();
    }
}

void MainWindow::compareKernels(qint64 a, qint64 b)
{
    if (a == 0)
        a = m_kernelId;
    if (b == 0 && m_trace) {
        // the rung below (or above, at the bottom) of the current one
        const QString cur = QString::fromStdString(m_trace->launch.variant.empty() ? m_trace->run.variant : m_trace->launch.variant);
        const int i = rungIndex(cur);
        const auto& cat = catalogOf(cur) ? *catalogOf(cur) : rungCatalog();  // the GEMM ladder or lce
        for (int step : {-1, +1}) {
            for (int j = i + step; i >= 0 && j >= 0 && j < cat.size() && b == 0; j += step)
                b = m_doc->firstKernelOfRung(cat[j].name);
            if (b)
                break;
        }
    }
    m_centralTabs->setCurrentWidget(m_compare);
    m_compare->compare(b ? b : a, b ? a : 0);  // A = lower rung, B = current
}

void MainWindow::showEvent(QShowEvent* e)
{
    QMainWindow::showEvent(e);
    if (m_layoutRestored || m_layoutDone)
        return;
    m_layoutDone = true;
    // first start: proportions for the actual window size (side docks narrow, timeline wide)
    const int w = width(), h = height();
    auto* runs = findChild<QDockWidget*>(QStringLiteral("runsDock"));
    auto* teach = findChild<QDockWidget*>(QStringLiteral("teachingDock"));
    auto* metrics = findChild<QDockWidget*>(QStringLiteral("metricsDock"));
    resizeDocks({runs, metrics}, {std::clamp(w * 26 / 100, 330, 520), std::clamp(w * 18 / 100, 260, 380)}, Qt::Horizontal);
    resizeDocks({runs, teach}, {h * 30 / 100, h * 70 / 100}, Qt::Vertical);
    resizeDocks({m_stallsDock}, {std::clamp(h * 28 / 100, 200, 360)}, Qt::Vertical);
}

void MainWindow::closeEvent(QCloseEvent* e)
{
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(e);
}

}  // namespace ws::ui
