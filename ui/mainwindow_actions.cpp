// MainWindow: the menus, toolbar and actions, and what they run (record, export, compare, the tour).
#include "mainwindow.h"

#include <QFileInfo>

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
#include "warpstage/traceexport.h"

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
    QMenu* samples = file->addMenu(tr("Bundled sa&mples"));
    samples->setObjectName(QStringLiteral("samplesMenu"));
    connect(samples, &QMenu::aboutToShow, this, [this, samples] {
        samples->clear();
        const QStringList all = findSampleTraces();
        for (const QString& f : all)
            samples->addAction(QFileInfo(f).fileName(), this, [this, f] { openFile(f); });
        if (all.isEmpty())
            samples->addAction(tr("(none found)"))->setEnabled(false);
    });
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
    if (ws::traceFormatForPath(path.toStdString())) {
        // A trace for other tools: the whole kernel, every warp (the CLI takes --range and --lanes).
        try {
            ws::exportKernelTrace(*m_trace, {}, path.toStdString());
            return true;
        } catch (const std::exception& e) {
            if (error)
                *error = QString::fromStdString(e.what());
            return false;
        }
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

void MainWindow::onTourRung(const QString& rung)
{
    const qint64 id = m_doc->firstKernelOfRung(rung);
    if (id > 0) {
        selectKernel(id);
        statusBar()->showMessage(tr("Guided tour: %1").arg(findRungText(rung) ? findRungText(rung)->title : rung), 6000);
    } else {
        // A family rung without a traced launch (lce rungs 0-2: cuBLAS): its run's program view.
        for (const auto& r : m_doc->contents().runs)
            if (QString::fromStdString(r.summary.info.variant) == rung && r.summary.info.kind == ws::RunKind::Program) {
                showProgramOfRun(qint64(r.summary.info.id));
                statusBar()->showMessage(tr("Guided tour: %1").arg(findRungText(rung) ? findRungText(rung)->title : rung), 6000);
                return;
            }
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

}  // namespace ws::ui
