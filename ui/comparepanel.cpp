#include "comparepanel.h"

#include "comparepickers.h"
#include "metricsmodel.h"
#include "programcompare.h"
#include "runsmodel.h"
#include "timelinewidget.h"

#include <QComboBox>
#include <QFutureWatcher>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace ws::ui {

ComparePanel::ComparePanel(QWidget* parent) : QWidget(parent)
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    m_modes = new QTabWidget;
    m_modes->setObjectName(QStringLiteral("compareModes"));
    m_modes->setDocumentMode(true);
    outer->addWidget(m_modes);
    auto* warpPage = new QWidget;
    auto* lay = new QVBoxLayout(warpPage);
    lay->setContentsMargins(0, 4, 0, 0);
    auto* grid = new QGridLayout;
    for (int s = 0; s < 2; ++s)
        addComparePickerRow(grid, s, this, m_pick[s], m_label[s], [this](int side, qint64 id) { load(side, id); },
                            QString());
    grid->setColumnStretch(2, 1);
    lay->addLayout(grid);

    auto* split = new QSplitter(Qt::Vertical);
    m_tlA = new TimelineWidget;
    m_tlB = new TimelineWidget;
    m_tlA->setObjectName(QStringLiteral("compareTimelineA"));
    m_tlB->setObjectName(QStringLiteral("compareTimelineB"));
    split->addWidget(m_tlA);
    split->addWidget(m_tlB);
    m_delta = new MetricDeltaModel(this);
    m_deltaView = new QTableView;
    m_deltaView->setModel(m_delta);
    m_deltaView->verticalHeader()->hide();
    m_deltaView->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4);
    m_deltaView->setAlternatingRowColors(true);
    m_deltaView->setShowGrid(false);
    m_deltaView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_deltaView->horizontalHeader()->setSectionResizeMode(MetricDeltaModel::ColMetric, QHeaderView::Stretch);
    split->addWidget(m_deltaView);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 2);
    lay->addWidget(split, 1);
    m_modes->addTab(warpPage, tr("Warp view"));
    m_programCompare = new ProgramCompare;
    m_modes->addTab(m_programCompare, tr("Program view"));
    connect(m_programCompare, &ProgramCompare::busyChanged, this, &ComparePanel::busyChanged);

    connect(m_tlA, &TimelineWidget::visibleRangeChanged, this,
            [this](ws::TimeNs t0, ws::TimeNs t1) { syncFrom(0, t0, t1); });
    connect(m_tlB, &TimelineWidget::visibleRangeChanged, this,
            [this](ws::TimeNs t0, ws::TimeNs t1) { syncFrom(1, t0, t1); });
}

void ComparePanel::setContents(const FileContents* contents)
{
    m_contents = contents;
    m_programCompare->setContents(contents);
    for (int s = 0; s < 2; ++s) {
        resetComparePicker(m_pick[s]);
        if (contents)
            for (const auto& r : contents->runs)
                for (const auto& k : r.kernels) {
                    if (!k.summary.launch.traced)
                        continue;
                    m_pick[s]->addItem(tr("Run %1 · %2 · %3")
                                           .arg(r.summary.info.id)
                                           .arg(QString::fromStdString(k.summary.launch.variant.empty()
                                                                           ? r.summary.info.variant
                                                                           : k.summary.launch.variant),
                                                shapeText(r.summary.info)),
                                       qint64(k.summary.launch.id));
                }
        m_side[s] = {};
        m_requested[s] = 0;
        ++m_gen[s];
        m_label[s]->clear();
    }
    for (TimelineWidget* tl : {m_tlA, m_tlB})
        if (tl->trace())
            tl->setTrace(nullptr);
    m_delta->setMetrics(nullptr, nullptr);
}

qint64 ComparePanel::kernelA() const
{
    return m_requested[0];
}

qint64 ComparePanel::kernelB() const
{
    return m_requested[1];
}

bool ComparePanel::isLoaded() const
{
    for (int s = 0; s < 2; ++s)
        if (m_requested[s] != 0 && (!m_side[s].trace || qint64(m_side[s].trace->launch.id) != m_requested[s]))
            return false;
    return true;
}

void ComparePanel::compare(qint64 a, qint64 b)
{
    selectComparePair(m_pick, m_requested, a, b, [this](int side, qint64 id) { load(side, id); });
}

void ComparePanel::load(int side, qint64 kernelId)
{
    const quint64 gen = ++m_gen[side];
    m_requested[side] = kernelId;
    TimelineWidget* tl = side == 0 ? m_tlA : m_tlB;
    if (kernelId == 0 || !m_contents || !m_contents->store) {
        m_side[side] = {};
        if (tl->trace())
            tl->setTrace(nullptr);
        m_label[side]->clear();
        updateDeltas();
        return;
    }
    m_label[side]->setText(tr("loading…"));
    emit busyChanged(true, tr("Loading kernel %1 for comparison…").arg(kernelId));
    auto store = m_contents->store;
    auto* w = new QFutureWatcher<LoadedKernel>(this);
    connect(w, &QFutureWatcher<LoadedKernel>::finished, this, [this, w, gen, side, tl] {
        LoadedKernel r = w->result();
        w->deleteLater();
        emit busyChanged(false, QString());
        if (gen != m_gen[side])
            return;  // superseded
        m_side[side] = r;
        if (!r.trace) {
            m_label[side]->setText(tr("<span style='color:#c62828'>%1</span>").arg(r.error.toHtmlEscaped()));
            if (tl->trace())
                tl->setTrace(nullptr);
        } else {
            const auto& t = *r.trace;
            m_label[side]->setText(tr("%1 · %2 · %L3 intervals · %4")
                                       .arg(QString::fromStdString(t.launch.variant.empty() ? t.run.variant : t.launch.variant),
                                            shapeText(t.run))
                                       .arg(qint64(t.intervalCount()))
                                       .arg(formatDuration(double(t.launch.end - t.launch.start))));
            tl->setTrace(r.trace, r.facts);
            tl->setTimeOrigin(t.launch.start);
            // align with the other side's relative view, or show the longer of the two kernels from its start
            const TimelineWidget* other = side == 0 ? m_tlB : m_tlA;
            const auto& o = m_side[1 - side];
            if (o.trace) {
                const auto vr = other->visibleRange();
                const ws::TimeNs rel0 = vr.first - o.trace->launch.start, rel1 = vr.second - o.trace->launch.start;
                const ws::TimeNs len = std::max(t.launch.end - t.launch.start, o.trace->launch.end - o.trace->launch.start);
                const bool otherIsFull = rel0 <= 0 && rel1 >= (o.trace->launch.end - o.trace->launch.start);
                m_syncing = true;
                if (otherIsFull) {
                    m_tlA->setVisibleRange(m_side[0].trace->launch.start, m_side[0].trace->launch.start + len);
                    m_tlB->setVisibleRange(m_side[1].trace->launch.start, m_side[1].trace->launch.start + len);
                } else {
                    tl->setVisibleRange(t.launch.start + rel0, t.launch.start + rel1);
                }
                m_syncing = false;
            }
        }
        updateDeltas();
        if (isLoaded())
            emit loaded();
    });
    w->setFuture(QtConcurrent::run([store, kernelId] { return loadKernelNow(*store, kernelId); }));
}

void ComparePanel::syncFrom(int side, ws::TimeNs t0, ws::TimeNs t1)
{
    if (m_syncing || !m_side[0].trace || !m_side[1].trace)
        return;
    const ws::TimeNs o = m_side[side].trace->launch.start;
    const ws::TimeNs p = m_side[1 - side].trace->launch.start;
    m_syncing = true;
    (side == 0 ? m_tlB : m_tlA)->setVisibleRange(p + (t0 - o), p + (t1 - o));
    m_syncing = false;
}

void ComparePanel::showProgramCompare(qint64 runA, qint64 runB)
{
    m_modes->setCurrentWidget(m_programCompare);
    m_programCompare->compare(runA, runB);
}

void ComparePanel::updateDeltas()
{
    auto name = [](const ws::KernelTrace& t) { return QString::fromStdString(t.launch.variant.empty() ? t.run.variant : t.launch.variant); };
    m_delta->setLabels(m_side[0].trace ? tr("A: %1").arg(name(*m_side[0].trace)) : tr("A"),
                       m_side[1].trace ? tr("B: %1").arg(name(*m_side[1].trace)) : tr("B"));
    m_delta->setMetrics(m_side[0].metrics, m_side[1].metrics);
}

}  // namespace ws::ui
