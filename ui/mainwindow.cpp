#include "mainwindow.h"

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

namespace ws::ui {

static const int kMaxRecent = 8;

QString findSampleTrace()
{
    // Relative to the executable first (installed: bin/../share/warpstage/samples; build tree:
    // app/warpstage/../../samples), so an installed copy never opens the build tree it was made from.
    const QString app = QCoreApplication::applicationDirPath();
    QStringList dirs{app + QStringLiteral("/../share/warpstage/samples"), app + QStringLiteral("/samples"),
                     app + QStringLiteral("/../../samples")};
#ifdef WARPSTAGE_SAMPLES_DIR
    dirs << QStringLiteral(WARPSTAGE_SAMPLES_DIR);
#endif
    const QString env = qEnvironmentVariable("WARPSTAGE_SAMPLES");
    if (!env.isEmpty())
        dirs = QStringList{env};  // explicit override: only there
    for (const QString& d : dirs) {
        const QFileInfoList files = QDir(d).entryInfoList(
            {QStringLiteral("*.wstrace"), QStringLiteral("*.warpstage"), QStringLiteral("*.sqlite"), QStringLiteral("*.db")}, QDir::Files, QDir::Name);
        if (!files.isEmpty())
            return files.first().absoluteFilePath();
    }
    return {};
}

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

}

void MainWindow::buildActions()
{
    auto icon = [](const char* n) { return QIcon(QStringLiteral(":/icons/%1.svg").arg(QLatin1String(n))); };
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_actOpen = file->addAction(icon("open"), tr("&Open…"), this, [this] {
        QSettings s;
        const QString f = QFileDialog::getOpenFileName(this, tr("Open trace"), s.value(QStringLiteral("lastDir")).toString(),
                                                       tr("Warpstage traces (*.wstrace *.warpstage *.sqlite *.db);;All files (*)"));
        if (!f.isEmpty()) {
            s.setValue(QStringLiteral("lastDir"), QFileInfo(f).absolutePath());
            openFile(f);
        }
    });
    m_actOpen->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    file->addAction(tr("Open &bundled sample"), this, &MainWindow::openDefault);
    file->addSeparator();
    m_actExport = file->addAction(icon("export"), tr("&Export image…"), this, &MainWindow::onExport);
    m_actExport->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    m_actReset = view->addAction(icon("zoom-reset"), tr("&Reset zoom"), this, [this] {
        if (programTabCurrent())
            programPanel()->view()->resetZoom();
        else
            m_timeline->resetZoom();
    });
    m_actReset->setShortcut(QKeySequence(Qt::Key_Home));
    m_actBack = view->addAction(icon("back"), tr("&Back"), this, [this] { goBack(); });
    m_actBack->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
    m_actForward = view->addAction(icon("forward"), tr("Zoom &forward"), this, [this] {
        if (programTabCurrent())
            programPanel()->view()->historyForward();
        else
            m_timeline->historyForward();
        updateActions();
    });
    m_actForward->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Right));
    QAction* clearHl = view->addAction(tr("Clear &highlight"), this, [this] { m_timeline->clearHighlight(); });
    clearHl->setShortcut(QKeySequence(Qt::Key_Escape));
    view->addSeparator();
    m_actCompare = view->addAction(icon("compare"), tr("&Compare with the rung below"), this, [this] { compareKernels(); });
    m_actCompare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    view->addSeparator();
    QMenu* panels = view->addMenu(tr("&Panels"));
    for (QDockWidget* d : findChildren<QDockWidget*>())
        panels->addAction(d->toggleViewAction());

    QMenu* tools = menuBar()->addMenu(tr("&Tools"));
    m_actRecord = tools->addAction(icon("record"), tr("&Record…"), this, &MainWindow::onRecord);
    const QString why = recordUnavailableReason();
    if (!why.isEmpty()) {
        m_actRecord->setEnabled(false);
        m_actRecord->setToolTip(tr("Recording is unavailable: %1").arg(why));
        m_actRecord->setStatusTip(tr("Recording is unavailable: %1").arg(why));
        m_actRecord->setText(tr("&Record… (unavailable: no GPU)"));
    } else {
        m_actRecord->setToolTip(tr("Run the ladder under CUPTI with warpstage-record"));
    }
    tools->addAction(icon("tour-next"), tr("Guided &tour: next rung"), this, [this] { m_teaching->next(); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_BracketRight));
    tools->addAction(icon("tour-prev"), tr("Guided tour: &previous rung"), this, [this] { m_teaching->previous(); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_BracketLeft));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard and mouse"), this, [this] {
        QMessageBox::information(this, tr("Keyboard and mouse"),
                                 tr("<table>"
                                    "<tr><td><b>Wheel</b></td><td>zoom about the cursor</td></tr>"
                                    "<tr><td><b>Drag</b></td><td>pan</td></tr>"
                                    "<tr><td><b>W / S</b></td><td>zoom in / out</td></tr>"
                                    "<tr><td><b>A / D</b></td><td>pan left / right</td></tr>"
                                    "<tr><td><b>Home</b></td><td>reset zoom</td></tr>"
                                    "<tr><td><b>Alt+Left / Alt+Right</b></td><td>zoom history</td></tr>"
                                    "<tr><td><b>Esc</b></td><td>clear the stage highlight</td></tr>"
                                    "<tr><td><b>Ctrl+K</b></td><td>compare with the rung below</td></tr>"
                                    "<tr><td><b>Ctrl+] / Ctrl+[</b></td><td>guided tour: next / previous rung</td></tr>"
                                    "</table>"));
    });
    help->addAction(tr("&About Warpstage"), this, [this] {
        QMessageBox::about(this, tr("About Warpstage"),
                           tr("<h3>Warpstage %1</h3><p>Per-warp producer/consumer timelines for GPU kernels: "
                              "does my load hide behind my compute, and where do my warps wait?</p>")
                               .arg(QCoreApplication::applicationVersion()));
    });

    QToolBar* tb = addToolBar(tr("Main"));
    tb->setObjectName(QStringLiteral("mainToolbar"));
    tb->setIconSize(QSize(20, 20));
    tb->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    tb->addAction(m_actOpen);
    tb->addAction(m_actRecord);
    tb->addAction(m_actExport);
    tb->addSeparator();
    QAction* zin = tb->addAction(icon("zoom-in"), tr("Zoom in"), this, [this] {
        const auto r = m_timeline->visibleRange();
        const ws::TimeNs c = (r.first + r.second) / 2, h = std::max<ws::TimeNs>(1, (r.second - r.first) / 4);
        m_timeline->setVisibleRange(c - h, c + h);
    });
    QAction* zout = tb->addAction(icon("zoom-out"), tr("Zoom out"), this, [this] {
        const auto r = m_timeline->visibleRange();
        const ws::TimeNs c = (r.first + r.second) / 2, h = std::max<ws::TimeNs>(1, r.second - r.first);
        m_timeline->setVisibleRange(c - h, c + h);
    });
    for (QAction* a : {zin, zout})
        tb->widgetForAction(a)->setProperty("iconOnly", true);
    tb->addAction(m_actReset);
    tb->addAction(m_actBack);
    tb->addAction(m_actForward);
    for (QAction* a : {zin, zout, m_actReset, m_actBack, m_actForward})
        if (auto* w = tb->widgetForAction(a))
            if (auto* b = qobject_cast<QToolButton*>(w))
                b->setToolButtonStyle(Qt::ToolButtonIconOnly);
    tb->addSeparator();
    auto* fl = new QLabel(tr(" Lanes: "));
    tb->addWidget(fl);
    m_laneFilter = new QLineEdit;
    m_laneFilter->setObjectName(QStringLiteral("laneFilter"));
    m_laneFilter->setPlaceholderText(tr("all   (e.g. sm:0-3; role:consumer)"));
    m_laneFilter->setToolTip(tr("Lane filter: sm:0-3, cta:0-7,12, role:producer, warp:0-3; terms joined by ';' are ANDed"));
    m_laneFilter->setClearButtonEnabled(true);
    m_laneFilter->setMaximumWidth(260);
    connect(m_laneFilter, &QLineEdit::editingFinished, this, [this] { m_timeline->setLaneFilter(m_laneFilter->text()); });
    tb->addWidget(m_laneFilter);
    tb->addSeparator();
    tb->addAction(m_actCompare);
    auto* prev = tb->addAction(icon("tour-prev"), tr("Previous rung"), this, [this] { m_teaching->previous(); });
    auto* next = tb->addAction(icon("tour-next"), tr("Next rung"), this, [this] { m_teaching->next(); });
    if (auto* b = qobject_cast<QToolButton*>(tb->widgetForAction(prev)))
        b->setToolButtonStyle(Qt::ToolButtonIconOnly);
    Q_UNUSED(next);
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

void MainWindow::openFile(const QString& path)
{
    statusBar()->showMessage(tr("Opening %1…").arg(path));
    m_doc->open(path);
}

void MainWindow::openDefault()
{
    const QString sample = findSampleTrace();
    if (!sample.isEmpty()) {
        openFile(sample);
        return;
    }
    if (!m_tempDir)
        m_tempDir = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/warpstage-XXXXXX"));
    static int n = 0;
    const QString path = m_tempDir->filePath(QStringLiteral("synthetic-ladder-%1.warpstage").arg(++n));
    statusBar()->showMessage(tr("No bundled sample trace found: generating a synthetic ladder…"));
    m_doc->openSynthetic(path);
}

void MainWindow::onOpened()
{
    const FileContents& fc = m_doc->contents();
    m_path = fc.path;
    m_kernelId = 0;
    m_trace.reset();
    m_kernelMetrics.reset();
    m_selection = {};
    m_runsModel->setContents(&fc);
    m_runsView->expandAll();
    m_compare->setContents(&fc);
    if (m_timeline->trace())
        m_timeline->setTrace(nullptr);
    m_stalls->clear();
    m_metrics->clear();
    setWindowFilePath(fc.path);
    setWindowTitle(tr("%1 — Warpstage").arg(QFileInfo(fc.path).fileName()));
    m_statusFile->setText(tr("%1 · %n run(s)", nullptr, int(fc.runs.size())).arg(QFileInfo(fc.path).fileName()));
    if (fc.synthetic)
        showBanner(tr("<b>SYNTHETIC TRACE</b> — generated, not recorded on a GPU. No bundled sample trace was found; "
                      "open a recording with File ▸ Open, or record one with Tools ▸ Record on a GPU machine."),
                   false);
    else
        hideBanner();
    if (!fc.path.contains(QStringLiteral("/warpstage-")) || !fc.synthetic)
        addRecent(fc.path);
    statusBar()->showMessage(tr("Opened %1").arg(fc.path), 5000);
    emit fileOpened(fc.path);
    // show the first traced kernel (after a recording: of the newest run)
    const bool newest = std::exchange(m_showNewestRun, false);
    auto showFirstTraced = [this](const RunEntry& r) {
        for (const auto& k : r.kernels)
            if (k.summary.launch.traced) {
                selectKernel(k.summary.launch.id);
                return true;
            }
        return false;
    };
    if (newest) {
        for (auto it = fc.runs.rbegin(); it != fc.runs.rend(); ++it)
            if (showFirstTraced(*it))
                return;
    }
    for (const auto& r : fc.runs)
        if (showFirstTraced(r))
            return;
    if (fc.runs.empty())
        showBanner(tr("<b>%1</b> holds no runs yet.").arg(fc.path.toHtmlEscaped()), false);
}

void MainWindow::onOpenFailed(const QString& path, const QString& message, bool needsMigration)
{
    if (needsMigration) {
        QFileInfo fi(path);
        QString dst = fi.absolutePath() + QLatin1Char('/') + fi.completeBaseName() +
                      QStringLiteral(".v%1.warpstage").arg(ws::kSchemaVersion);
        if (!QFileInfo(fi.absolutePath()).isWritable())
            dst = QDir::tempPath() + QLatin1Char('/') + QFileInfo(dst).fileName();
        // never over an earlier copy (migrateCopy refuses an existing file): NAME.v2-2.warpstage, -3, ...
        const QString stem = dst.chopped(int(QStringLiteral(".warpstage").size()));
        for (int n = 2; QFileInfo::exists(dst); ++n)
            dst = stem + QStringLiteral("-%1.warpstage").arg(n);
        showBanner(tr("<b>%1</b><br>The file was made by an older Warpstage. It is left unchanged.").arg(message.toHtmlEscaped()),
                   true);
        bool migrate = false;
        if (m_migrationPrompt)
            migrate = m_migrationPrompt(message, dst);
        else
            migrate = !qEnvironmentVariableIsSet("WARPSTAGE_NO_DIALOGS") &&
                      QMessageBox::question(this, tr("Older trace file"),
                                            tr("%1\n\nMigrate a copy to %2 and open it? The original stays unchanged.")
                                                .arg(message, dst)) == QMessageBox::Yes;
        if (migrate) {
            try {
                QApplication::setOverrideCursor(Qt::WaitCursor);
                ws::TraceStore::migrateCopy(path.toStdString(), dst.toStdString());
                QApplication::restoreOverrideCursor();
                openFile(dst);
            } catch (const std::exception& e) {
                QApplication::restoreOverrideCursor();
                showBanner(tr("<b>Migration failed:</b> %1").arg(QString::fromStdString(e.what()).toHtmlEscaped()), true);
            }
        }
        emit fileOpenFailed(path, message);
        return;
    }
    showBanner(tr("<b>Could not open the file.</b> %1").arg(message.toHtmlEscaped()), true);
    statusBar()->showMessage(tr("Could not open %1").arg(path), 8000);
    emit fileOpenFailed(path, message);
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
                                std::shared_ptr<const ws::KernelMetrics> metrics)
{
    if (id != m_kernelId)
        return;
    m_trace = trace;
    m_kernelMetrics = metrics;
    m_selection = {};
    if (!m_banner->isHidden() && m_banner->styleSheet().contains(QStringLiteral("fdecea")))
        hideBanner();  // an old error no longer applies
    m_timeline->setTrace(trace);
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
                                .arg(shapeText(trace->run))
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
    const QString kernel = tr("Kernel %1 (%2)").arg(m_trace->launch.id).arg(QString::fromStdString(m_trace->launch.variant));
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

QStringList MainWindow::recentFiles() const
{
    return QSettings().value(QStringLiteral("recentFiles")).toStringList();
}

void MainWindow::addRecent(const QString& path)
{
    QSettings s;
    QStringList l = s.value(QStringLiteral("recentFiles")).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    l.removeAll(abs);
    l.prepend(abs);
    while (l.size() > kMaxRecent)
        l.removeLast();
    s.setValue(QStringLiteral("recentFiles"), l);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList l = recentFiles();
    for (const QString& f : l)
        m_recentMenu->addAction(QFileInfo(f).fileName(), this, [this, f] { openFile(f); })->setToolTip(f);
    if (l.isEmpty())
        m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
    else {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear list"), this, [this] {
            QSettings().remove(QStringLiteral("recentFiles"));
            rebuildRecentMenu();
        });
    }
    m_recentMenu->setToolTipsVisible(true);
}

void MainWindow::onRecord()
{
    const QString why = recordUnavailableReason();
    if (!why.isEmpty()) {
        statusBar()->showMessage(tr("Recording is unavailable: %1").arg(why), 8000);
        return;
    }
    const QString def = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation) +
                        QStringLiteral("/warpstage-ladder.warpstage");
    auto* dlg = new RecordDialog(def, this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    connect(dlg, &RecordDialog::recorded, this, [this](const QString& file) {
        m_showNewestRun = true;
        openFile(file);
    });
    dlg->open();
}

bool MainWindow::exportCurrentView(const QString& path, QSize sizePx, double dpi, const QString& title, QString* error) const
{
    if (!m_trace) {
        if (error)
            *error = tr("No kernel is shown: nothing to export.");
        return false;
    }
    return m_timeline->exportImage(path, sizePx, dpi, title, error);
}

void MainWindow::onExport()
{
    if (!m_trace) {
        statusBar()->showMessage(tr("Open a trace and select a kernel first."), 5000);
        return;
    }
    const QString def = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation) +
                        QStringLiteral("/warpstage-%1.png").arg(QString::fromStdString(m_trace->launch.variant));
    const QString title = tr("%1 %2 · kernel %3").arg(QString::fromStdString(m_trace->launch.variant), shapeText(m_trace->run))
                              .arg(m_trace->launch.id);
    ExportDialog dlg(def, title, this);
    if (dlg.exec() != QDialog::Accepted)
        return;
    QString err;
    if (exportCurrentView(dlg.path(), dlg.sizePx(), dlg.dpi(), dlg.title(), &err))
        statusBar()->showMessage(tr("Exported %1").arg(dlg.path()), 6000);
    else
        showBanner(tr("<b>Export failed:</b> %1").arg(err.toHtmlEscaped()), true);
}

void MainWindow::compareKernels(qint64 a, qint64 b)
{
    if (a == 0)
        a = m_kernelId;
    if (b == 0 && m_trace) {
        // the rung below (or above, at the bottom) of the current one
        const int i = rungIndex(QString::fromStdString(m_trace->launch.variant));
        const auto& cat = rungCatalog();
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

void MainWindow::onTourRung(const QString& rung)
{
    const qint64 id = m_doc->firstKernelOfRung(rung);
    if (id > 0) {
        selectKernel(id);
        statusBar()->showMessage(tr("Guided tour: %1").arg(findRungText(rung) ? findRungText(rung)->title : rung), 6000);
    } else {
        statusBar()->showMessage(tr("This file has no kernel of rung \"%1\"; showing its explanation only.").arg(rung), 6000);
    }
}

void MainWindow::updateActions()
{
    const bool has = m_trace != nullptr;
    m_actExport->setEnabled(has);
    m_actCompare->setEnabled(has);
    m_actBack->setEnabled(canGoBack());
    m_actForward->setEnabled(programTabCurrent() ? m_programPanel->view()->canGoForward() : has && m_timeline->canGoForward());
    m_actReset->setEnabled(has || programTabCurrent());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e)
{
    if (e->mimeData()->hasUrls() && !e->mimeData()->urls().isEmpty() && e->mimeData()->urls().first().isLocalFile())
        e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e)
{
    const auto urls = e->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile()) {
        openFile(urls.first().toLocalFile());
        e->acceptProposedAction();
    }
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
