// MainWindow: opening files (the bundled sample, a file of the user's, drag and drop), what happens when a
// file opens or fails to (a newer or older schema, a migrated copy), and the recent-files menu.
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

QStringList findSampleTraces()
{
    // Relative to the executable first (installed: bin/../share/warpstage/samples), so an installed copy never
    // opens the build tree it was made from; then the build's own samples folder (resources/samples, or the
    // build's migrated copies when the committed samples are older than the code: resources/CMakeLists.txt). Not
    // a guessed <build>/samples: a folder left there by an older build holds stale files.
    const QString app = QCoreApplication::applicationDirPath();
    QStringList dirs{app + QStringLiteral("/../share/warpstage/samples"), app + QStringLiteral("/samples")};
#ifdef WARPSTAGE_SAMPLES_DIR
    dirs << QStringLiteral(WARPSTAGE_SAMPLES_DIR);
#endif
    const QString env = qEnvironmentVariable("WARPSTAGE_SAMPLES");
    if (!env.isEmpty())
        dirs = QStringList{env};  // explicit override: only there
    for (const QString& d : dirs) {
        const QFileInfoList files = QDir(d).entryInfoList(
            {QStringLiteral("*.wstrace"), QStringLiteral("*.warpstage"), QStringLiteral("*.sqlite"), QStringLiteral("*.db")}, QDir::Files, QDir::Name);
        if (!files.isEmpty()) {
            QStringList out;
            for (const QFileInfo& f : files) out << f.absoluteFilePath();
            return out;
        }
    }
    return {};
}

QString findSampleTrace()
{
    // The default document is the kernel ladder (the guided tour walks it); any other sample otherwise.
    const QStringList all = findSampleTraces();
    for (const QString& f : all)
        if (QFileInfo(f).fileName().startsWith(QStringLiteral("ladder-")))
            return f;
    return all.isEmpty() ? QString() : all.first();
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

}  // namespace ws::ui
