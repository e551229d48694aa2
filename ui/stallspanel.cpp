#include "stallspanel.h"

#include "rungcatalog.h"
#include "sourcemodel.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <map>
#include <set>

namespace ws::ui {

StallsPanel::StallsPanel(QWidget* parent) : QWidget(parent)
{
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(4, 4, 4, 4);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Group by:")));
    m_groupBy = new QComboBox;
    m_groupBy->addItem(tr("Pipeline role ▸ stage"));
    m_groupBy->addItem(tr("Stall reason"));
    top->addWidget(m_groupBy);
    m_summary = new QLabel;
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    top->addWidget(m_summary, 1);
    top->addWidget(new QLabel(tr("Source:")));
    m_file = new QComboBox;
    m_file->setObjectName(QStringLiteral("sourceFile"));
    m_file->setToolTip(tr("Source file shown on the right: the rung's own .cu, or a helper header whose inlined "
                          "code holds samples (waits, wgmma, TMA)"));
    m_file->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    top->addWidget(m_file);
    lay->addLayout(top);

    auto* split = new QSplitter(Qt::Horizontal);
    m_plot = new QCustomPlot;
    m_plot->setMinimumHeight(140);
    m_plot->setMinimumWidth(260);
    m_plot->setObjectName(QStringLiteral("stallChart"));
    m_bars = new QCPBars(m_plot->yAxis, m_plot->xAxis);
    m_bars->setWidth(0.7);
    m_bars->setPen(Qt::NoPen);
    m_bars->setBrush(QColor(0xef, 0x6c, 0x00));
    m_plot->xAxis->setLabel(tr("share of stall samples (%)"));
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    m_plot->yAxis->setRangeReversed(true);
    m_plot->yAxis->grid()->setVisible(false);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_plot->xAxis->setTickLabelFont(small);
    m_plot->yAxis->setTickLabelFont(small);
    split->addWidget(m_plot);

    m_source = new SourceModel(this);
    m_sourceView = new QTableView;
    m_sourceView->setObjectName(QStringLiteral("sourceView"));
    m_sourceView->setModel(m_source);
    m_sourceView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_sourceView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_sourceView->verticalHeader()->hide();
    m_sourceView->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 2);
    m_sourceView->setShowGrid(false);
    m_sourceView->setWordWrap(false);
    m_sourceView->horizontalHeader()->setStretchLastSection(false);
    m_sourceView->setTextElideMode(Qt::ElideNone);
    m_sourceView->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_sourceView->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_sourceView->setColumnWidth(SourceModel::ColLine, 44);
    m_sourceView->setColumnWidth(SourceModel::ColSamples, 64);
    m_sourceView->setColumnWidth(SourceModel::ColStage, 136);
    split->addWidget(m_sourceView);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({340, 660});
    lay->addWidget(split, 1);

    connect(m_groupBy, &QComboBox::currentIndexChanged, this, [this] { rebuildChart(); });
    connect(m_file, &QComboBox::activated, this, [this](int index) {
        showSourceFile(m_file->itemData(index).toString());
    });
    connect(m_sourceView, &QTableView::clicked, this, &StallsPanel::onSourceClicked);
    connect(m_plot, &QCustomPlot::plottableClick, this, [this](QCPAbstractPlottable*, int dataIndex, QMouseEvent*) {
        if (m_groupBy->currentIndex() != 0 || dataIndex < 0 || size_t(dataIndex) >= m_barKeys.size())
            return;
        const std::string& key = m_barKeys[size_t(dataIndex)];  // "<role>/<stage>"
        const auto slash = key.find('/');
        if (slash == std::string::npos)
            return;
        auto role = ws::warpRoleFromName(key.substr(0, slash));
        auto kind = ws::intervalKindFromName(key.substr(slash + 1));
        if (role && kind)
            emit stageRequested(*role, *kind);
    });
    clear();
}

int StallsPanel::barCount() const
{
    return m_bars->data()->size();
}

void StallsPanel::clear()
{
    m_trace.reset();
    m_metrics.reset();
    m_source->clear();
    m_file->clear();
    m_file->setEnabled(false);
    rebuildChart();
}

void StallsPanel::setKernel(std::shared_ptr<const ws::KernelTrace> trace, std::shared_ptr<const ws::KernelMetrics> metrics)
{
    m_trace = std::move(trace);
    m_metrics = std::move(metrics);
    if (!m_trace) {
        m_source->clear();
        m_file->clear();
        m_file->setEnabled(false);
        rebuildChart();
        return;
    }
    QString rung = QString::fromStdString(m_trace->launch.variant);
    if (rung.isEmpty())
        rung = QString::fromStdString(m_trace->run.variant);
    // The files that hold samples and are bundled: the rung's own .cu first, then the helper
    // headers (hopper.cuh, ...) by their number of samples.
    std::map<QString, qint64> perFile;
    qint64 total = 0;
    std::set<QString> instrumentation;  // Warpstage's own headers (<warpstage/trace.cuh>, ...), inlined into the kernel
    for (const ws::StallSample& smp : m_trace->stalls) {
        total += smp.count;
        if (smp.line > 0 && !smp.sourceFile.empty()) {
            const QString name = QFileInfo(QString::fromStdString(smp.sourceFile)).fileName();
            perFile[name] += smp.count;
            if (smp.sourceFile.find("/warpstage/") != std::string::npos) instrumentation.insert(name);
        }
    }
    // The kernel's own file: the rung's .cu for the ladder; for a user's kernel, the first recorded source (the
    // recorder stores the instrumented kernel's file first) or else the file with the most samples.
    // (A program run's variant names its family rung, e.g. lce_fused_epilogue: no such file; then the rules below.)
    QString rungFile;
    if (!rung.isEmpty()) {
        const QString f = rung + QStringLiteral(".cu");
        if (perFile.count(f) || !sourceText(f).isEmpty())
            rungFile = f;
    }
    if (rungFile.isEmpty() && !m_trace->sources.empty())
        rungFile = QFileInfo(QString::fromStdString(m_trace->sources.front().path)).fileName();
    // ... unless few samples land there (under a tenth of the attributed ones): a kernel whose body lives in a header
    // (the lce rungs' lce_body.cuh) would open on its entry point's few lines; then the file with the most samples
    // whose text is known, Warpstage's own instrumentation headers aside (a sampled instruction right after a wait is
    // often the trace's clock read: bundled lce-h200.wstrace, rung 4, 30 % of the samples in trace.cuh).
    qint64 attributed = 0;
    for (const auto& [name, n] : perFile) attributed += n;
    const qint64 own = perFile.count(rungFile) ? perFile[rungFile] : 0;
    if (rungFile.isEmpty() || (attributed > 0 && own * 10 < attributed)) {
        qint64 best = -1;
        QString pick;
        for (const auto& [name, n] : perFile)
            if (n > best && !instrumentation.count(name) && (!sourceText(name).isEmpty() || rungFile.isEmpty()))
                best = n, pick = name;
        if (!pick.isEmpty()) rungFile = pick;
    }
    std::vector<std::pair<qint64, QString>> files;
    for (const auto& [name, n] : perFile)
        if (name != rungFile && !sourceText(name).isEmpty())
            files.emplace_back(n, name);
    std::sort(files.begin(), files.end(), std::greater<>());
    files.insert(files.begin(), {perFile.count(rungFile) ? perFile[rungFile] : 0, rungFile});
    {
        const QSignalBlocker block(m_file);
        m_file->clear();
        for (const auto& [n, name] : files)
            m_file->addItem(total > 0 ? tr("%1 (%2 %)").arg(name).arg(100.0 * double(n) / double(total), 0, 'f', 0) : name,
                            name);
        m_file->setCurrentIndex(0);
    }
    m_file->setEnabled(files.size() > 1);
    showSourceFile(rungFile);
}

QString StallsPanel::sourceText(const QString& fileName, bool* recorded) const
{
    // The text recorded with the trace first (issue 10: the source as it was), then the build's bundled copy.
    if (recorded) *recorded = false;
    if (m_trace)
        for (const ws::SourceFile& f : m_trace->sources)
            if (QFileInfo(QString::fromStdString(f.path)).fileName() == fileName) {
                if (recorded) *recorded = true;
                return QString::fromStdString(f.text);
            }
    return kernelSourceText(fileName);
}

void StallsPanel::showSourceFile(const QString& fileName)
{
    if (!m_trace)
        return;
    const int item = m_file->findData(fileName);
    if (item >= 0 && item != m_file->currentIndex()) {
        const QSignalBlocker block(m_file);
        m_file->setCurrentIndex(item);
    }
    bool recorded = false;
    const QString text = sourceText(fileName, &recorded);
    if (text.isEmpty()) {
        m_source->setSource(QString(), tr("// The source \"%1\" is neither stored in this trace nor bundled in this build.").arg(fileName),
                            m_trace->stalls);
        m_file->setToolTip(QString());
        rebuildChart();
        return;
    }
    m_file->setToolTip(recorded ? tr("%1: the text stored in the trace when it was recorded").arg(fileName)
                                : tr("%1: the copy bundled with this build of Warpstage (the trace holds no text of it; "
                                     "it may differ from what was recorded)").arg(fileName));
    m_source->setSource(fileName, text, m_trace->stalls);
    m_sourceView->resizeColumnToContents(SourceModel::ColCode);
    rebuildChart();
    // Scroll to the new source's hottest line (the view keeps the previous rung's
    // position otherwise) once the view has its final geometry; the first layout of
    // the window can still move it, so try again shortly after unless the user has
    // scrolled in between. A newer source cancels both attempts.
    m_sourceView->scrollToTop();
    const int generation = ++m_scrollGeneration;
    auto scrollHot = [this, generation](bool retry) {
        if (generation != m_scrollGeneration)
            return;
        const int hot = m_source->hottestRow();
        if (hot < 0)
            return;
        if (retry && m_sourceView->verticalScrollBar()->value() != m_autoScrollValue)
            return;  // the user scrolled: leave the view where they put it
        m_sourceView->scrollTo(m_source->index(hot, SourceModel::ColSamples), QAbstractItemView::PositionAtCenter);
        m_autoScrollValue = m_sourceView->verticalScrollBar()->value();
    };
    m_autoScrollValue = m_sourceView->verticalScrollBar()->value();
    QTimer::singleShot(0, this, [scrollHot] { scrollHot(false); });
    QTimer::singleShot(300, this, [scrollHot] { scrollHot(true); });
}

void StallsPanel::rebuildChart()
{
    auto ticker = qSharedPointerCast<QCPAxisTickerText>(m_plot->yAxis->ticker());
    ticker->clear();
    m_bars->data()->clear();
    m_barKeys.clear();
    if (!m_metrics || m_metrics->stallSamples == 0) {
        m_summary->setText(m_trace ? tr("No stall samples for this kernel (the recording has no stall pass, or it "
                                        "was skipped — see the run's notes).")
                                   : tr("No kernel selected."));
        m_plot->yAxis->setRange(-0.5, 0.5);
        m_plot->xAxis->setRange(0, 100);
        m_plot->replot();
        return;
    }
    const auto& buckets = m_groupBy->currentIndex() == 0 ? m_metrics->stallsByRoleStage : m_metrics->stallsByReason;
    // as many bars as fit with readable labels (at most 12)
    const int fit = std::max(4, (m_plot->height() - 50) / std::max(12, fontMetrics().height()));
    const int n = int(std::min<size_t>(buckets.size(), size_t(std::min(12, fit))));
    QVector<double> keys, values;
    for (int i = 0; i < n; ++i) {
        const auto& b = buckets[size_t(i)];
        keys << i;
        values << b.share * 100.0;
        QString label = QString::fromStdString(b.label.empty() ? b.key : b.label);
        if (label.size() > 38)
            label = label.left(36) + QStringLiteral("…");
        ticker->addTick(i, label);
        m_barKeys.push_back(b.key);
    }
    m_bars->setData(keys, values, true);
    m_plot->yAxis->setRange(-0.6, std::max(n, 1) - 0.4);
    double maxv = 0;
    for (double v : values)
        maxv = std::max(maxv, v);
    m_plot->xAxis->setRange(0, std::max(5.0, maxv * 1.1));
    m_summary->setText(tr("%L1 stall samples · %2 attributed to lines of %3")
                           .arg(m_metrics->stallSamples)
                           .arg(m_source->attributedSamples() > 0
                                    ? QStringLiteral("%1 %").arg(100.0 * double(m_source->attributedSamples()) /
                                                                     double(std::max<qint64>(1, m_source->totalSamples())),
                                                                 0, 'f', 0)
                                    : tr("no"))
                           .arg(m_source->fileName().isEmpty() ? tr("the source") : m_source->fileName()));
    m_plot->replot();
}

void StallsPanel::onSourceClicked(const QModelIndex& index)
{
    if (auto st = m_source->stageOfRow(index.row()))
        emit stageRequested(st->role, st->kind);
}

}  // namespace ws::ui
