#include "whatifpanel.h"

#include "attributionbar.h"
#include "timemapping.h"

#include "warpstage/whatif.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QTextDocumentFragment>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>
#include <ctime>

namespace ws::ui {

namespace {
constexpr int kMaxStages = 16;
}

WhatIfPanel::WhatIfPanel(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("whatIfPanel"));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(6, 6, 6, 6);
    m_header = new QLabel;
    m_header->setWordWrap(true);
    m_header->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    lay->addWidget(m_header);

    auto* grid = new QGridLayout;
    grid->setColumnStretch(1, 1);
    int row = 0;
    grid->addWidget(new QLabel(tr("Ring stages")), row, 0);
    m_stagesSlider = new QSlider(Qt::Horizontal);
    m_stagesSlider->setRange(1, kMaxStages);
    m_stages = new QSpinBox;
    m_stages->setRange(1, kMaxStages);
    m_stages->setToolTip(tr("Slots of the shared-memory ring between the producer and the consumers"));
    m_stagesSlider->setToolTip(m_stages->toolTip());
    grid->addWidget(m_stagesSlider, row, 1);
    grid->addWidget(m_stages, row, 2);
    connect(m_stagesSlider, &QSlider::valueChanged, m_stages, &QSpinBox::setValue);
    connect(m_stages, &QSpinBox::valueChanged, m_stagesSlider, &QSlider::setValue);
    connect(m_stages, &QSpinBox::valueChanged, this, [this] { changed(); });
    ++row;
    m_load = factorRow(grid, row++, tr("Load latency ×"), tr("Scale every load's issue → ready time"), &m_loadSlider);
    m_mma = factorRow(grid, row++, tr("MMA time ×"), tr("Scale the tensor-core time of every k-step"), &m_mmaSlider);
    m_epi = factorRow(grid, row++, tr("Epilogue ×"), tr("Scale the epilogue and store of every tile"), &m_epiSlider);
    m_overlap = new QCheckBox(tr("Epilogue overlapped with the next tile's main loop"));
    grid->addWidget(m_overlap, row++, 0, 1, 3);
    m_persistent = new QCheckBox(tr("Persistent CTAs (one per SM, walking the tiles)"));
    grid->addWidget(m_persistent, row++, 0, 1, 3);
    grid->addWidget(new QLabel(tr("SMs")), row, 0);
    m_sms = new QSpinBox;
    m_sms->setRange(1, 1024);
    m_sms->setToolTip(tr("Number of SMs the CTAs are spread over"));
    grid->addWidget(m_sms, row, 2);
    m_reset = new QPushButton(tr("As recorded"));
    m_reset->setToolTip(tr("Every parameter back to the recorded kernel's"));
    grid->addWidget(m_reset, row++, 1, Qt::AlignLeft);
    // the other options of `warpstage whatif` (docs/whatif.md)
    grid->addWidget(new QLabel(tr("CTAs per SM")), row, 0);
    m_ctasPerSm = new QSpinBox;
    m_ctasPerSm->setRange(0, 64);
    m_ctasPerSm->setSpecialValueText(tr("as recorded"));
    m_ctasPerSm->setToolTip(tr("CTAs resident at once per SM, as the shared-memory budget would allow "
                               "(--ctas-per-sm; not for persistent kernels)"));
    grid->addWidget(m_ctasPerSm, row++, 2);
    m_noSync = new QCheckBox(tr("No CTA barrier per k-step (warp specialization of a worker kernel)"));
    m_noSync->setToolTip(tr("--no-sync: the warps of a CTA no longer meet at a barrier every k-step"));
    grid->addWidget(m_noSync, row++, 0, 1, 3);
    m_producerWarp = new QCheckBox(tr("Loads issued by a producer warp (worker kernels)"));
    m_producerWarp->setToolTip(tr("--producer-warp: issuing a load no longer holds the warp that computes"));
    grid->addWidget(m_producerWarp, row++, 0, 1, 3);
    m_sharedResources = new QCheckBox(tr("Tensor cores shared by the CTAs of an SM"));
    m_sharedResources->setToolTip(tr("Off: --no-shared-resources, every MMA keeps its recorded speed however many "
                                     "CTAs share the SM"));
    grid->addWidget(m_sharedResources, row++, 0, 1, 3);
    m_loadBandwidth = new QCheckBox(tr("Load bandwidth shared by the loads of an SM"));
    m_loadBandwidth->setToolTip(tr("On: --load-bandwidth, a load's flight stretches when more bytes are in flight on "
                                   "its SM than the SM takes (closer predictions for kernels that fill the SM's load "
                                   "bandwidth, e.g. more stages), but each re-predict takes 2-3x as long. Off (the "
                                   "default): every load keeps its recorded flight"));
    m_loadBandwidth->setChecked(false);
    grid->addWidget(m_loadBandwidth, row++, 0, 1, 3);
    grid->addWidget(new QLabel(tr("Tile order")), row, 0);
    m_tileOrder = new QComboBox;
    for (auto o : {ws::TileOrder::Recorded, ws::TileOrder::Row, ws::TileOrder::Column, ws::TileOrder::Reverse,
                   ws::TileOrder::LongestFirst})
        m_tileOrder->addItem(QString::fromUtf8(ws::tileOrderName(o).data(), qsizetype(ws::tileOrderName(o).size())),
                             int(o));
    m_tileOrder->setToolTip(tr("--tile-order: the order a persistent kernel deals its tiles to its CTAs, each tile "
                               "keeping its replayed cost (what an order does to L2 is not modelled)"));
    grid->addWidget(m_tileOrder, row++, 1, 1, 2);
    lay->addLayout(grid);
    for (QCheckBox* b : {m_overlap, m_persistent, m_noSync, m_producerWarp, m_sharedResources, m_loadBandwidth})
        connect(b, &QCheckBox::toggled, this, [this] { changed(); });
    connect(m_sms, &QSpinBox::valueChanged, this, [this] { changed(); });
    connect(m_ctasPerSm, &QSpinBox::valueChanged, this, [this] { changed(); });
    connect(m_tileOrder, &QComboBox::currentIndexChanged, this, [this] { changed(); });
    connect(m_reset, &QPushButton::clicked, this, &WhatIfPanel::reset);

    m_result = new QLabel;
    m_result->setObjectName(QStringLiteral("whatIfResult"));
    m_result->setWordWrap(true);
    m_result->setTextFormat(Qt::RichText);
    m_result->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    lay->addWidget(m_result);
    m_bar = new AttributionBar;
    m_bar->setEmptyText(tr("No prediction yet"));
    lay->addWidget(m_bar);
    connect(m_bar, &AttributionBar::causeClicked, this, &WhatIfPanel::causeClicked);
    m_note = new QLabel;
    m_note->setWordWrap(true);
    m_note->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_note->setStyleSheet(QStringLiteral("color: #5d4200;"));
    lay->addWidget(m_note);
    m_timing = new QLabel;
    m_timing->setStyleSheet(QStringLiteral("color: #707680;"));
    lay->addWidget(m_timing);

    auto* ghostRow = new QHBoxLayout;
    m_ghost = new QCheckBox(tr("Predicted timeline"));
    m_ghost->setToolTip(tr("Draw the predicted timeline as ghost lanes (lighter, outlined) on the timeline"));
    m_ghostWhere = new QComboBox;
    m_ghostWhere->addItem(tr("beside the measured lanes"));
    m_ghostWhere->addItem(tr("over the measured lanes"));
    ghostRow->addWidget(m_ghost);
    ghostRow->addWidget(m_ghostWhere, 1);
    lay->addLayout(ghostRow);
    connect(m_ghost, &QCheckBox::toggled, this, [this](bool on) {
        emit ghostModeChanged(ghostMode());
        if (on && m_shown && !m_shown->ghost && m_shown->error.isEmpty())
            changed();  // the shown prediction was made without its timeline
    });
    connect(m_ghostWhere, &QComboBox::currentIndexChanged, this, [this] {
        if (m_ghost->isChecked())
            emit ghostModeChanged(ghostMode());
    });
    lay->addStretch(1);

    m_watcher = new QFutureWatcher<std::shared_ptr<const Prediction>>(this);
    connect(m_watcher, &QFutureWatcherBase::finished, this, &WhatIfPanel::onFinished);
    clear();
}

WhatIfPanel::~WhatIfPanel()
{
    // No wait: a running replay is told to stop and finishes on its own (its task holds the predictor, and through
    // it the kernel, and the cancel flag); its result goes nowhere.
    if (m_cancel)
        m_cancel->store(true);
    m_watcher->disconnect(this);
}

QDoubleSpinBox* WhatIfPanel::factorRow(QGridLayout* grid, int row, const QString& label, const QString& tip,
                                       QSlider** slider)
{
    grid->addWidget(new QLabel(label), row, 0);
    auto* s = new QSlider(Qt::Horizontal);
    s->setRange(10, 400);  // percent
    s->setValue(100);
    s->setToolTip(tip);
    auto* b = new QDoubleSpinBox;
    b->setRange(0.10, 4.00);
    b->setSingleStep(0.05);
    b->setDecimals(2);
    b->setValue(1.0);
    b->setToolTip(tip);
    grid->addWidget(s, row, 1);
    grid->addWidget(b, row, 2);
    connect(s, &QSlider::valueChanged, b, [b](int v) {
        if (std::lround(b->value() * 100) != v)
            b->setValue(v / 100.0);
    });
    connect(b, &QDoubleSpinBox::valueChanged, s, [s](double v) {
        QSignalBlocker bl(s);
        s->setValue(int(std::lround(v * 100)));
    });
    connect(b, &QDoubleSpinBox::valueChanged, this, [this] { changed(); });
    *slider = s;
    return b;
}

void WhatIfPanel::setKernel(Predictor predictor, TimeNs measuredNs, int recordedStages, int recordedSms)
{
    if (!predictor)
        return setUnavailable(tr("No replay for this kernel."));
    if (m_running && m_cancel)
        m_cancel->store(true);  // the running replay is of the previous kernel: its result is dropped anyway
    m_predictor = std::move(predictor);
    m_measuredNs = measuredNs;
    m_recordedStages = std::clamp(recordedStages, 1, kMaxStages);
    m_recordedSms = std::max(1, recordedSms);
    ++m_kernelGen;
    m_shown.reset();
    m_header->setText(tr("Replay this kernel with other parameters. Recorded: %1 ring stage(s), %2 SM(s), %3.")
                          .arg(recordedStages)
                          .arg(recordedSms)
                          .arg(timemap::formatDuration(double(measuredNs))));
    setControlsEnabled(true);
    reset();
}

void WhatIfPanel::setUnavailable(const QString& why)
{
    if (m_running && m_cancel)
        m_cancel->store(true);
    m_predictor = {};
    ++m_kernelGen;
    m_pending = false;
    m_shown.reset();
    m_header->setText(why);
    m_result->clear();
    m_note->clear();
    m_timing->clear();
    m_bar->clear();
    setControlsEnabled(false);
    emit predicted(nullptr);
}

void WhatIfPanel::clear() { setUnavailable(tr("Select a traced kernel to replay it with other parameters.")); }

void WhatIfPanel::setControlsEnabled(bool on)
{
    for (QWidget* w : std::initializer_list<QWidget*>{m_stages, m_stagesSlider, m_load, m_loadSlider, m_mma, m_mmaSlider,
                                                      m_epi, m_epiSlider, m_overlap, m_persistent, m_sms, m_reset,
                                                      m_ctasPerSm, m_noSync, m_producerWarp, m_sharedResources,
                                                      m_loadBandwidth, m_tileOrder})
        w->setEnabled(on);
}

WhatIfParams WhatIfPanel::params() const
{
    WhatIfParams p;
    p.stages = m_stages->value() == m_recordedStages ? 0 : m_stages->value();
    p.loadLatency = m_load->value();
    p.mmaTime = m_mma->value();
    p.epilogueTime = m_epi->value();
    p.epilogueOverlapped = m_overlap->isChecked();
    p.persistent = m_persistent->isChecked();
    p.sms = m_sms->value() == m_recordedSms ? 0 : m_sms->value();
    p.ctasPerSm = m_ctasPerSm->value();
    p.noSync = m_noSync->isChecked();
    p.producerWarp = m_producerWarp->isChecked();
    p.sharedResources = m_sharedResources->isChecked();
    p.loadBandwidth = m_loadBandwidth->isChecked();
    p.tileOrder = m_tileOrder->currentData().toInt();
    return p;
}

void WhatIfPanel::setParams(const WhatIfParams& p)
{
    m_updating = true;
    m_stages->setValue(p.stages > 0 ? p.stages : m_recordedStages);
    m_load->setValue(p.loadLatency);
    m_mma->setValue(p.mmaTime);
    m_epi->setValue(p.epilogueTime);
    m_overlap->setChecked(p.epilogueOverlapped);
    m_persistent->setChecked(p.persistent);
    m_sms->setValue(p.sms > 0 ? p.sms : m_recordedSms);
    m_ctasPerSm->setValue(p.ctasPerSm);
    m_noSync->setChecked(p.noSync);
    m_producerWarp->setChecked(p.producerWarp);
    m_sharedResources->setChecked(p.sharedResources);
    m_loadBandwidth->setChecked(p.loadBandwidth);
    m_tileOrder->setCurrentIndex(std::max(0, m_tileOrder->findData(p.tileOrder)));
    m_updating = false;
    changed();
}

void WhatIfPanel::reset() { setParams(WhatIfParams{}); }

WhatIfPanel::GhostMode WhatIfPanel::ghostMode() const
{
    if (!m_ghost->isChecked())
        return GhostMode::Off;
    return m_ghostWhere->currentIndex() == 1 ? GhostMode::Over : GhostMode::Beside;
}

void WhatIfPanel::setGhostMode(GhostMode m)
{
    {
        QSignalBlocker b(m_ghostWhere);
        if (m != GhostMode::Off)
            m_ghostWhere->setCurrentIndex(m == GhostMode::Over ? 1 : 0);
    }
    if (m_ghost->isChecked() != (m != GhostMode::Off))
        m_ghost->setChecked(m != GhostMode::Off);  // emits
    else
        emit ghostModeChanged(ghostMode());
}

void WhatIfPanel::changed()
{
    if (m_updating || !m_predictor)
        return;
    if (!m_changeOpen) {
        m_changeOpen = true;
        m_sinceChange.start();
    }
    if (m_running) {
        m_pending = true;  // run the newest parameters when this one is done
        return;
    }
    startNext();
}

void WhatIfPanel::startNext()
{
    m_pending = false;
    m_running = true;
    m_runningGen = m_kernelGen;
    m_timing->setText(tr("predicting…"));
    const Predictor pred = m_predictor;
    const WhatIfParams p = params();
    const bool timeline = ghostMode() != GhostMode::Off;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    const std::shared_ptr<std::atomic<bool>> cancel = m_cancel;
    m_watcher->setFuture(QtConcurrent::run(whatIfPool(), [pred, p, timeline, cancel]() -> std::shared_ptr<const Prediction> {
        if (cancel->load())
            return nullptr;  // not wanted any more (the panel closed or moved on before this started)
        QElapsedTimer t;
        t.start();
        timespec c0{}, c1{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        auto out = std::make_shared<Prediction>(pred(p, timeline, cancel.get()));
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        out->params = p;
        out->computeMs = double(t.nsecsElapsed()) / 1e6;
        out->computeCpuMs = double(c1.tv_sec - c0.tv_sec) * 1e3 + double(c1.tv_nsec - c0.tv_nsec) / 1e6;
        return out;
    }));
}

void WhatIfPanel::onFinished()
{
    m_running = false;
    std::shared_ptr<const Prediction> p = m_watcher->result();
    if (m_runningGen != m_kernelGen)
        p.reset();  // another kernel since
    if (m_pending && m_predictor) {
        startNext();  // newer parameters waited: this result is already stale
        return;
    }
    if (!p || !m_predictor)
        return;
    m_lastLatencyMs = m_changeOpen ? double(m_sinceChange.nsecsElapsed()) / 1e6 : p->computeMs;
    m_changeOpen = false;
    ++m_runs;
    showPrediction(std::move(p));
}

void WhatIfPanel::showPrediction(std::shared_ptr<const Prediction> p)
{
    m_shown = p;
    if (!p->error.isEmpty()) {
        m_result->setText(tr("<span style='color:#8a1c13'>%1</span>").arg(p->error.toHtmlEscaped()));
        m_bar->clear();
    } else {
        const double measured = double(p->measuredNs ? p->measuredNs : m_measuredNs);
        const double predicted = double(p->predictedNs);
        const double delta = measured > 0 ? 100.0 * (predicted - measured) / measured : 0.0;
        const QString colour = delta < -0.5 ? QStringLiteral("#1b7837") : delta > 0.5 ? QStringLiteral("#8a1c13")
                                                                                       : QStringLiteral("#303030");
        m_result->setText(tr("Measured <b>%1</b> → predicted <b>%2</b> <span style='color:%3'>(%4%5 %)</span>")
                              .arg(timemap::formatDuration(measured), timemap::formatDuration(predicted), colour)
                              .arg(delta >= 0 ? QStringLiteral("+") : QString())
                              .arg(delta, 0, 'f', 1));
        m_bar->setAttribution(p->attribution);
    }
    m_note->setText(p->note);
    m_note->setVisible(!p->note.isEmpty());
    m_timing->setText(tr("re-predicted in %1 ms (replay %2 ms)").arg(m_lastLatencyMs, 0, 'f', 1).arg(p->computeMs, 0, 'f', 1));
    emit predicted(p);
}

QString WhatIfPanel::resultText() const
{
    return QTextDocumentFragment::fromHtml(m_result->text()).toPlainText();
}

}  // namespace ws::ui
