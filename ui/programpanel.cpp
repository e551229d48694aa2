#include "programpanel.h"

#include "tracedocument.h"

#include <warpstage/program.h>

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
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
    m_summary = new QLabel(bottom);
    bar->addWidget(m_filter, 1);
    bar->addWidget(zoom);
    bar->addWidget(m_nvtx);
    bar->addWidget(m_api);
    bar->addWidget(m_summary);
    bl->addLayout(bar);
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
    m_table->horizontalHeader()->setSectionResizeMode(KernelSummaryModel::Name, QHeaderView::Stretch);
    m_table->setWordWrap(false);
    bl->addWidget(m_table, 1);
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
        const ws::TimeNs busy = ws::gpuBusyNs(*program);
        const ws::TimeNs span = program->lastEnd() - program->firstStart();
        m_summary->setText(tr("%1 launches · %2 kernels · GPU busy %3 of %4")
                               .arg(program->kernels.size())
                               .arg(m_model->rowCount())
                               .arg(ws::ui::formatDuration(double(busy)), ws::ui::formatDuration(double(span))));
    } else {
        m_summary->clear();
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
