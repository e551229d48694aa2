#include "programpanel.h"

#include "tracedocument.h"

#include <warpstage/program.h>

#include <QCheckBox>
#include <QComboBox>
#include <QTreeWidget>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>

#include "warpstage/runfamily.h"
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

ProgramPanel::ProgramPanel(QWidget *parent) : QWidget(parent)
{
    auto *lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    auto *split = new QSplitter(Qt::Vertical, this);
    m_view = new ProgramView(split);
    auto *bottom = new QWidget(split);
    auto *bl = new QVBoxLayout(bottom);
    bl->setContentsMargins(4, 2, 4, 2);
    auto *bar = new QHBoxLayout;
    m_filter = new QLineEdit(bottom);
    m_filter->setPlaceholderText(tr("Filter kernels by name"));
    m_filter->setClearButtonEnabled(true);
    auto *zoom = new QPushButton(tr("Zoom to kernel"), bottom);
    zoom->setToolTip(tr("Fit every launch of the selected kernel in the view"));
    m_nvtx = new QCheckBox(tr("NVTX"), bottom);
    m_nvtx->setChecked(true);
    m_api = new QCheckBox(tr("CPU launch spans"), bottom);
    m_api->setToolTip(tr("Rows of CUDA API calls per CPU thread, with arrows from each call to the kernel or copy it launched"));
    m_gapThreshold = new QComboBox(bottom);
    for (const auto &[label, ns] : {std::pair{tr("idle ≥ 10 µs"), qint64(10'000)}, std::pair{tr("idle ≥ 100 µs"), qint64(100'000)},
                                    std::pair{tr("idle ≥ 1 ms"), qint64(1'000'000)}, std::pair{tr("idle ≥ 10 ms"), qint64(10'000'000)}})
        m_gapThreshold->addItem(label, ns);
    m_gapThreshold->setCurrentIndex(m_gapThreshold->findData(qint64(ProgramView::kDefaultIdleGapNs)));
    m_gapThreshold->setToolTip(tr("GPU idle gaps at least this long are hatched on the device's rows and listed"));
    m_summary = new QLabel(bottom);
    bar->addWidget(m_filter, 1);
    bar->addWidget(zoom);
    bar->addWidget(m_nvtx);
    bar->addWidget(m_api);
    bar->addWidget(m_gapThreshold);
    bar->addWidget(m_summary);
    bl->addLayout(bar);
    // A family rung (warpstage-record --rungs lce:...): its iterations and where they stand on the roofline.
    m_roofline = new QLabel(bottom);
    m_roofline->setObjectName(QStringLiteral("rooflineLabel"));
    m_roofline->setWordWrap(true);
    m_roofline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_roofline->hide();
    bl->addWidget(m_roofline);
    m_model = new KernelSummaryModel(this);
    m_proxy = new KernelSummaryProxy(this);
    m_proxy->setSourceModel(m_model);
    m_table = new QTableView(bottom);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(KernelSummaryModel::Total, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(20);
    // the numbers take what they need, the kernel's name the rest (it was squeezed to a few letters)
    for (int c = 0; c < KernelSummaryModel::ColumnCount; ++c)
        m_table->horizontalHeader()->setSectionResizeMode(
            c, c == KernelSummaryModel::Name ? QHeaderView::Stretch : QHeaderView::ResizeToContents);
    m_table->setWordWrap(false);
    m_gaps = new QTreeWidget(bottom);
    m_gaps->setColumnCount(4);
    m_gaps->setHeaderLabels({tr("GPU idle"), tr("at"), tr("last before"), tr("first after")});
    m_gaps->setRootIsDecorated(false);
    m_gaps->setUniformRowHeights(true);
    m_gaps->setToolTip(tr("The longest GPU idle gaps; click one to zoom there"));
    auto *tables = new QSplitter(Qt::Horizontal, bottom);
    tables->addWidget(m_table);
    tables->addWidget(m_gaps);
    tables->setStretchFactor(0, 3);
    tables->setStretchFactor(1, 1);
    bl->addWidget(tables, 1);
    split->addWidget(m_view);
    split->addWidget(bottom);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    lay->addWidget(split);

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &KernelSummaryProxy::setNameFilter);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] { onRowChanged(); });
    connect(m_table, &QTableView::doubleClicked, this, [this] { m_view->zoomToKernel(selectedKernel()); });
    connect(zoom, &QPushButton::clicked, this, [this] { m_view->zoomToKernel(selectedKernel()); });
    auto relayout = [this] {
        ProgramLayoutOptions o;
        o.showNvtx = m_nvtx->isChecked();
        o.showApi = m_api->isChecked();
        m_view->setLayoutOptions(o);
    };
    connect(m_nvtx, &QCheckBox::toggled, this, relayout);
    connect(m_api, &QCheckBox::toggled, this, relayout);
    connect(m_view, &ProgramView::hint, this, &ProgramPanel::hint);
    connect(m_view, &ProgramView::idleGapsChanged, this, &ProgramPanel::fillGaps);
    connect(m_gapThreshold, &QComboBox::currentIndexChanged, this,
            [this] { m_view->setIdleGapThreshold(m_gapThreshold->currentData().toLongLong()); });
    connect(m_gaps, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem *cur) {
        if (cur)
            m_view->zoomToGap(cur->data(0, Qt::UserRole).toInt());
    });
    connect(m_view, &ProgramView::launchSelected, this, [this](int k) {
        if (k < 0 || !m_view->program())
            return;
        selectKernelName(QString::fromStdString(m_view->program()->kernels[std::size_t(k)].name));
    });
    connect(m_view, &ProgramView::launchActivated, this, [this](int k) {
        const auto p = m_view->program();
        if (!p || k < 0 || k >= int(p->kernels.size()))
            return;
        const ws::KernelLaunch &L = p->kernels[std::size_t(k)];
        if (L.traced)
            emit openLaunch(L.id, k);
        else
            emit hint(ProgramView::drillDownHint(L));
    });
}

void ProgramPanel::setProgram(std::shared_ptr<const ws::ProgramTrace> program)
{
    m_model->setProgram(program.get());
    m_view->setProgram(program);
    if (program) {
        // A run whose GPU work is a burst between long host stretches (start-up, allocation, a compile) opens on its
        // busiest burst rather than on slivers; Home (Reset zoom) or Back shows the whole run (ws::busiestBurst).
        if (const auto burst = ws::busiestBurst(*program))
            m_view->zoomToSpan(burst->start, burst->end);
        const ws::TimeNs busy = ws::gpuBusyNs(*program);
        const ws::TimeNs span = program->lastEnd() - program->firstStart();
        m_summary->setText(tr("%1 launches · %2 kernels · GPU busy %3 of %4")
                               .arg(program->kernels.size())
                               .arg(m_model->rowCount())
                               .arg(ws::ui::formatDuration(double(busy)), ws::ui::formatDuration(double(span))));
    } else {
        m_summary->clear();
    }
    const ws::RungReport rr = program ? ws::rungReport(program->run, program->kernels) : ws::RungReport{};
    m_roofline->setVisible(rr.tagged);
    if (rr.tagged) {
        const QString tip = tr("Useful FLOPs %1 GFLOP and bytes moved %2 MB per iteration, stored with the run by the recorder "
                               "(kernels/lce/lce_shape.cpp); roofline of the %3")
                                .arg(rr.tag.usefulFlops * 1e-9, 0, 'f', 1)
                                .arg(rr.tag.bytesMoved * 1e-6, 0, 'f', 0)
                                .arg(QString::fromStdString(ws::RooflineLimits{}.name));
        m_roofline->setText(tr("<b>Roofline</b> · %1").arg(QString::fromStdString(rr.text).toHtmlEscaped()));
        m_roofline->setToolTip(tip);
    } else {
        m_roofline->clear();
    }
}

QString ProgramPanel::selectedKernel() const
{
    const QModelIndex cur = m_table->selectionModel()->currentIndex();
    if (!cur.isValid() || !m_table->selectionModel()->isRowSelected(cur.row(), {}))
        return {};
    return cur.siblingAtColumn(KernelSummaryModel::Name).data(KernelSummaryModel::NameRole).toString();
}

void ProgramPanel::selectKernelName(const QString &name)
{
    const int src = m_model->rowOfName(name.toStdString());
    QModelIndex idx = src >= 0 ? m_proxy->mapFromSource(m_model->index(src, 0)) : QModelIndex();
    if (src >= 0 && !idx.isValid()) {  // filtered out: clear the filter so the row can show
        m_filter->clear();
        idx = m_proxy->mapFromSource(m_model->index(src, 0));
    }
    m_syncing = true;
    if (idx.isValid()) {
        m_table->selectionModel()->setCurrentIndex(idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_table->scrollTo(idx);
    } else {
        m_table->selectionModel()->clearSelection();
    }
    m_syncing = false;
    m_view->highlightKernel(idx.isValid() ? name : QString());
}

void ProgramPanel::onRowChanged()
{
    if (m_syncing)
        return;
    m_view->highlightKernel(selectedKernel());
}

void ProgramPanel::fillGaps()
{
    m_gaps->clear();
    const auto p = m_view->program();
    const auto &gaps = m_view->idleGaps();
    if (!p)
        return;
    std::vector<int> order(gaps.size());
    for (int i = 0; i < int(order.size()); ++i)
        order[std::size_t(i)] = i;
    const std::size_t n = std::min<std::size_t>(order.size(), kMaxListedGaps);
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(n), order.end(), [&](int a, int b) {
        const auto la = gaps[std::size_t(a)].length(), lb = gaps[std::size_t(b)].length();
        return la != lb ? la > lb : a < b;  // longest first; ties in time order
    });
    const ws::TimeNs origin = m_view->timeOrigin();
    for (std::size_t i = 0; i < n; ++i) {
        const GapInfo &g = gaps[std::size_t(order[i])];
        auto *item = new QTreeWidgetItem(m_gaps);
        item->setText(0, ws::ui::formatDuration(double(g.length())));
        item->setText(1, ws::ui::formatDuration(double(g.gap.start - origin)));
        item->setText(2, programtext::launchName(*p, g.before));  // what ran last before the gap
        item->setText(3, programtext::launchName(*p, g.after));   // what ended it
        item->setToolTip(2, item->text(2));
        item->setToolTip(3, item->text(3));
        item->setData(0, Qt::UserRole, order[i]);
        item->setTextAlignment(0, Qt::AlignRight | Qt::AlignVCenter);
    }
    m_gaps->resizeColumnToContents(0);
    m_gaps->resizeColumnToContents(1);
    m_gaps->headerItem()->setText(0, gaps.size() > n ? tr("GPU idle (%1 longest of %2)").arg(n).arg(gaps.size()) : tr("GPU idle"));
}
