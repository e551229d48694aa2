#include "metricspanel.h"

#include "attributionbar.h"
#include "metricsmodel.h"
#include "timemapping.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableView>
#include <QVBoxLayout>

namespace ws::ui {

MetricsPanel::MetricsPanel(QWidget* parent) : QWidget(parent)
{
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(4, 4, 4, 4);
    m_scope = new QLabel;
    m_scope->setObjectName(QStringLiteral("metricsScope"));
    m_scope->setWordWrap(true);
    m_scope->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    QFont bf = m_scope->font();
    bf.setBold(true);
    m_scope->setFont(bf);
    lay->addWidget(m_scope);
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Warpgroup:")));
    m_wg = new QComboBox;
    row->addWidget(m_wg);
    row->addStretch(1);
    m_reset = new QPushButton(tr("Whole kernel"));
    m_reset->setToolTip(tr("Clear the CTA / warpgroup / time-range selection"));
    row->addWidget(m_reset);
    lay->addLayout(row);
    m_pathLabel = new QLabel;
    m_pathLabel->setObjectName(QStringLiteral("criticalPathLabel"));
    m_pathLabel->setWordWrap(true);
    m_pathLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    lay->addWidget(m_pathLabel);
    m_bar = new AttributionBar;
    m_bar->setToolTip(tr("The critical path's length by cause: click a cause to highlight it on the timeline"));
    lay->addWidget(m_bar);
    connect(m_bar, &AttributionBar::causeClicked, this, &MetricsPanel::causeClicked);
    m_model = new MetricsModel(this);
    m_view = new QTableView;
    m_view->setModel(m_model);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4);
    m_view->setAlternatingRowColors(true);
    m_view->setShowGrid(false);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->horizontalHeader()->setSectionResizeMode(MetricsModel::ColMetric, QHeaderView::Stretch);
    m_view->horizontalHeader()->setSectionResizeMode(MetricsModel::ColValue, QHeaderView::ResizeToContents);
    m_view->setColumnHidden(MetricsModel::ColKey, true);
    lay->addWidget(m_view, 1);

    connect(m_wg, &QComboBox::currentIndexChanged, this, [this](int i) { emit warpgroupChanged(i - 1); });
    connect(m_reset, &QPushButton::clicked, this, &MetricsPanel::resetRequested);
    clear();
}

void MetricsPanel::setKernel(int warpgroups)
{
    QSignalBlocker b(m_wg);
    m_wg->clear();
    m_wg->addItem(tr("All"));
    for (int i = 0; i < warpgroups; ++i)
        m_wg->addItem(tr("WG %1").arg(i));
    m_wg->setEnabled(warpgroups > 0);
}

void MetricsPanel::setWarpgroup(int wg)
{
    QSignalBlocker b(m_wg);
    m_wg->setCurrentIndex(wg + 1);
}

void MetricsPanel::setMetrics(const QString& scope, std::shared_ptr<const ws::KernelMetrics> metrics)
{
    m_scope->setText(scope);
    m_model->setMetrics(std::move(metrics));
}

void MetricsPanel::setPending(const QString& scope)
{
    m_scope->setText(tr("%1 (computing…)").arg(scope));
}

void MetricsPanel::setCriticalPath(std::shared_ptr<const CriticalPathView> path)
{
    if (!path) {
        m_pathLabel->setText(tr("Critical path: —"));
        m_bar->clear();
        return;
    }
    const double len = path->attribution.total();
    QString t = tr("Critical path: %1 (kernel %2), %L3 segments")
                    .arg(timemap::formatDuration(len), timemap::formatDuration(double(path->measuredNs)))
                    .arg(qint64(path->segments.size()));
    if (!path->note.isEmpty())
        t += QStringLiteral("\n") + path->note;
    m_pathLabel->setText(t);
    m_bar->setSelectedCause(-1);
    m_bar->setAttribution(path->attribution);
}

QString MetricsPanel::pathText() const { return m_pathLabel->text(); }

void MetricsPanel::clear()
{
    setCriticalPath(nullptr);
    m_scope->setText(tr("No kernel selected"));
    m_model->clear();
    setKernel(0);
}

QString MetricsPanel::scopeText() const
{
    return m_scope->text();
}

}  // namespace ws::ui
