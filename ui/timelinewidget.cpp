#include "timelinewidget_p.h"

#include "timelinepalette.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QtConcurrent>

using ws::TimeNs;
using Range = TimeNavigator::Range;

namespace {

// A legend entry: colour swatch (hatched for stalls) + label.
class SwatchLegendItem : public QCPAbstractLegendItem {
public:
    SwatchLegendItem(QCPLegend *parent, QColor color, QColor hatch, QString text)
        : QCPAbstractLegendItem(parent), m_color(color), m_hatch(hatch), m_text(std::move(text))
    {
        setSelectable(false);
        setObjectName(m_text);  // what the entry says, for tests and accessibility tools
    }
    void draw(QCPPainter *painter) override
    {
        const QRect r = mRect;
        QFont f = mParentLegend->font();
        painter->setFont(f);
        const QFontMetrics fm(f);
        const int sw = fm.height() - 2;
        const QRect swatch(r.left(), r.top() + (r.height() - sw) / 2, sw + 4, sw);
        painter->setPen(Qt::NoPen);
        painter->setBrush(m_color);
        painter->drawRect(swatch);
        if (m_hatch.isValid()) {
            painter->setBrush(QBrush(m_hatch, Qt::BDiagPattern));
            painter->drawRect(swatch);
        }
        painter->setPen(QColor(0x30, 0x30, 0x30));
        painter->drawText(QRect(swatch.right() + 5, r.top(), r.width() - swatch.width() - 5, r.height()),
                          Qt::AlignVCenter | Qt::AlignLeft, m_text);
    }
    QSize minimumOuterSizeHint() const override
    {
        const QFontMetrics fm(mParentLegend->font());
        return QSize(fm.height() + 9 + fm.horizontalAdvance(m_text), fm.height()) +
               QSize(mMargins.left() + mMargins.right(), mMargins.top() + mMargins.bottom());
    }

private:
    QColor m_color, m_hatch;
    QString m_text;
};

}  // namespace

void TimelineWidget::Private::rebuildLegend()
{
    legend->clearItems();
    std::array<bool, 256> present{};
    if (trace && facts)
        present = facts->kinds;  // found on the loader's worker: no pass over the intervals here
    for (std::size_t c = ws::kIntervalKindCount; c < present.size(); ++c)  // reserved kinds are drawn as "other"
        if (present[c] && !ws::isUserPhase(ws::IntervalKind(c)))
            present[std::size_t(ws::IntervalKind::Other)] = true;
    // starvation and back-pressure first
    const ws::IntervalKind order[] = {ws::IntervalKind::WaitData, ws::IntervalKind::WaitSlot, ws::IntervalKind::WaitOrder,
                                      ws::IntervalKind::WaitPartial,
                                      ws::IntervalKind::Sync,     ws::IntervalKind::IssueLoad, ws::IntervalKind::Load,
                                      ws::IntervalKind::MmaIssue, ws::IntervalKind::MmaWait, ws::IntervalKind::Compute,
                                      ws::IntervalKind::Release,  ws::IntervalKind::Epilogue, ws::IntervalKind::Store,
                                      ws::IntervalKind::Fixup,
                                      ws::IntervalKind::Setup,    ws::IntervalKind::Other};
    for (auto k : order) {
        if (!present[std::size_t(k)])
            continue;
        legend->addItem(new SwatchLegendItem(legend, tlpalette::kindColor(k),
                                             tlpalette::kindHatched(k) ? tlpalette::hatchColor(k) : QColor(),
                                             tlpalette::kindLabel(k)));
    }
    // user-named phases (<warpstage/trace.cuh>), by their recorded names, in kind order
    for (int c = ws::kUserPhaseBase; c < ws::kUserPhaseBase + ws::kMaxUserPhases; ++c)
        if (present[std::size_t(c)])
            legend->addItem(new SwatchLegendItem(legend, tlpalette::kindColor(ws::IntervalKind(c)), QColor(),
                                                 tlpalette::kindLabel(ws::IntervalKind(c), *trace)));
    for (int s : {3, 1, 2})
        legend->addItem(new SwatchLegendItem(legend, tlpalette::overlapColor(s), QColor(), tlpalette::overlapLabel(s)));
    legend->addItem(new SwatchLegendItem(legend, tlpalette::loadsColor(2), QColor(), QStringLiteral("Loads in flight (darker = more)")));
    updateLegendWrap();
}

void TimelineWidget::Private::startIndex()
{
    if (cancel)
        *cancel = true;
    index.reset();
    tl->setIndex(nullptr);
    if (!trace)
        return;
    cancel = std::make_shared<std::atomic<bool>>(false);
    const quint64 gen = ++generation;
    auto tr = trace;
    auto flag = cancel;
    QPointer<TimelineWidget> self(q);
    watcher->setFuture(QtConcurrent::run([tr, flag, self, gen]() -> std::shared_ptr<const ws::lod::TraceIndex> {
        ws::lod::BuildOptions opt;
        opt.progress = [flag, self, gen](int pct) {
            if (self)
                QMetaObject::invokeMethod(
                    self.data(),
                    [self, gen, pct]() {
                        if (self && self->d->generation == gen) {
                            self->d->tl->setIndexProgress(pct);
                            emit self->indexProgress(pct);
                        }
                    },
                    Qt::QueuedConnection);
            return !flag->load();
        };
        return std::shared_ptr<const ws::lod::TraceIndex>(ws::lod::TraceIndex::build(*tr, opt));
    }));
    watcher->setProperty("generation", gen);
}



TimelineWidget::TimelineWidget(QWidget *parent) : QWidget(parent), d(std::make_unique<Private>())
{
    d->q = this;
    auto *lay = new QHBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(0);
    d->plot = new QCustomPlot(this);
    d->vscroll = new QScrollBar(Qt::Vertical, this);
    lay->addWidget(d->plot, 1);
    lay->addWidget(d->vscroll);
    setFocusProxy(d->plot);
    d->plot->setFocusPolicy(Qt::StrongFocus);
    d->plot->setMouseTracking(true);
    d->plot->setAutoAddPlottableToLegend(false);
    d->plot->setNoAntialiasingOnDrag(true);
    d->plot->setPlottingHint(QCP::phCacheLabels, true);
    d->plot->setInteractions({});
    // one paint buffer: the default buffered "overlay" layer would add a second full-size buffer to clear and blend per frame
    if (QCPLayer *overlay = d->plot->layer(QStringLiteral("overlay")))
        overlay->setMode(QCPLayer::lmLogical);
    d->plot->setBackground(tlpalette::background());

    QCPAxisRect *ar = d->plot->axisRect();
    ar->setAutoMargins(QCP::msTop | QCP::msBottom | QCP::msRight);
    ar->setMargins(QMargins(190, 0, 0, 0));
    ar->setMinimumMargins(QMargins(190, 0, 12, 0));
    d->plot->yAxis->setVisible(false);
    d->plot->yAxis->setRange(0, 1);
    d->ticker = QSharedPointer<TimelineTicker>(new TimelineTicker(d->plot->xAxis));
    for (QCPAxis *ax : {d->plot->xAxis, d->plot->xAxis2}) {
        ax->setVisible(true);
        ax->setTicker(d->ticker);
        ax->grid()->setVisible(false);
        ax->setTickLabels(true);
        ax->setBasePen(QPen(QColor(0x90, 0x96, 0xA0)));
        ax->setTickPen(QPen(QColor(0x90, 0x96, 0xA0)));
        ax->setSubTickPen(QPen(QColor(0xB0, 0xB4, 0xBA)));
        ax->setTickLabelColor(tlpalette::labelText());
        QFont f = ax->tickLabelFont();
        f.setPixelSize(11);
        ax->setTickLabelFont(f);
    }
    d->plot->xAxis->setLabel(QStringLiteral("time since kernel start"));
    QFont lf = d->plot->xAxis->labelFont();
    lf.setPixelSize(11);
    d->plot->xAxis->setLabelFont(lf);
    d->plot->xAxis->setLabelColor(QColor(0x60, 0x66, 0x70));

    // legend in its own row above the axis rect
    d->legend = new QCPLegend;
    d->plot->plotLayout()->insertRow(0);
    d->plot->plotLayout()->addElement(0, 0, d->legend);
    d->legend->setLayer(QStringLiteral("legend"));
    d->legend->setBorderPen(Qt::NoPen);
    d->legend->setBrush(Qt::NoBrush);
    QFont legendFont = d->legend->font();
    legendFont.setPixelSize(11);
    d->legend->setFont(legendFont);
    d->legend->setMargins(QMargins(190, 4, 8, 2));
    d->legend->setRowSpacing(1);
    d->legend->setColumnSpacing(12);
    d->plot->plotLayout()->setRowStretchFactor(0, 0.001);
    d->plot->plotLayout()->setRowSpacing(0);

    d->tl = new TimelinePlottable(d->plot->xAxis, d->plot->yAxis);
    d->watcher = new QFutureWatcher<std::shared_ptr<const ws::lod::TraceIndex>>(this);
    connect(d->watcher, &QFutureWatcherBase::finished, this, [this]() {
        if (d->watcher->property("generation").toULongLong() != d->generation || d->watcher->isCanceled())
            return;
        auto idx = d->watcher->result();
        if (!idx)
            return;
        d->index = idx;
        d->tl->setIndex(idx);
        emit indexProgress(100);
        emit indexReadyChanged(true);
        d->replot();
    });
    connect(d->vscroll, &QScrollBar::valueChanged, this, [this](int v) {
        d->tl->setScrollY(v);
        d->replot();
    });
    d->nav.apply = [this](Range r) { return d->applyView(r); };
    d->nav.replot = [this]() { d->replot(); };
    d->nav.fullRange = [this]() { return d->fullRange(); };
    d->plot->installEventFilter(this);
    d->applyView({0, 1000}, false);
    d->rebuildLegend();
}

TimelineWidget::~TimelineWidget()
{
    if (d->cancel)
        *d->cancel = true;
    d->watcher->waitForFinished();
}

void TimelineWidget::setTrace(std::shared_ptr<const ws::KernelTrace> trace, std::shared_ptr<const ws::ui::TraceFacts> facts)
{
    d->trace = std::move(trace);
    d->facts = d->trace ? (facts ? std::move(facts) : ws::ui::makeTraceFacts(*d->trace)) : nullptr;
    if (d->trace) {
        d->firstStart = d->facts->firstStart;
        d->lastEnd = d->facts->lastEnd;
        const ws::KernelLaunch &L = d->trace->launch;
        if (L.end > L.start && L.start > 0 && d->trace->intervalCount() > 0) {  // the kernel's own span too
            d->firstStart = std::min(d->firstStart, L.start);
            d->lastEnd = std::max(d->lastEnd, L.end);
        } else if (d->trace->intervalCount() == 0 && L.end > L.start) {
            d->firstStart = L.start;
            d->lastEnd = L.end;
        }
    }
    d->traceFirst = d->firstStart;
    d->traceLast = d->lastEnd;
    d->path.reset();  // the what-if overlays belonged to the previous kernel
    d->ghost.reset();
    d->tl->setCriticalPath(nullptr);
    d->tl->setGhost(nullptr, false);
    d->layout.setGhostRows(false);
    d->index.reset();
    d->selLane = -1;
    d->selIndex = -1;
    d->collapsedCtas.clear();
    d->collapsedSms.clear();
    d->nav.clearHistory();
    d->tl->setTrace(d->trace, &d->layout);
    if (!d->originSet || !d->trace)
        d->origin = d->trace ? d->trace->launch.start : 0;
    d->originSet = false;
    d->tl->setOrigin(d->origin);
    d->vscroll->setValue(0);
    d->relayout();
    d->rebuildLegend();
    emit indexReadyChanged(false);
    d->startIndex();
    if (d->trace)
        resetZoom();
    else
        d->replot();
}

std::shared_ptr<const ws::KernelTrace> TimelineWidget::trace() const { return d->trace; }
std::shared_ptr<const ws::ui::TraceFacts> TimelineWidget::traceFacts() const { return d->facts; }

bool TimelineWidget::waitForIndex(int timeoutMs)
{
    if (!d->trace)
        return false;
    QElapsedTimer t;
    t.start();
    while (!d->index && t.elapsed() < timeoutMs) {
        d->watcher->waitForFinished();
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    }
    return d->index != nullptr;
}

bool TimelineWidget::indexReady() const { return d->index != nullptr; }

void TimelineWidget::setTimeOrigin(ws::TimeNs origin)
{
    const Range v = d->view();
    const TimeNs a0 = d->origin + TimeNs(std::llround(v.first));
    const TimeNs a1 = d->origin + TimeNs(std::llround(v.second));
    const double shift = double(d->origin - origin);  // relative times grow by this much
    d->origin = origin;
    d->originSet = !d->trace;  // before setTrace: keep it for the next trace
    d->tl->setOrigin(origin);
    d->nav.shiftHistory(shift);  // the history keeps pointing at the same absolute times
    d->applyView({double(a0 - origin), double(a1 - origin)}, false);
    d->replot();
}

ws::TimeNs TimelineWidget::timeOrigin() const { return d->origin; }

void TimelineWidget::setVisibleRange(ws::TimeNs t0, ws::TimeNs t1)
{
    if (t1 < t0)
        std::swap(t0, t1);
    d->navigate({double(t0 - d->origin), double(t1 - d->origin)});
}

QPair<ws::TimeNs, ws::TimeNs> TimelineWidget::visibleRange() const
{
    const Range v = d->view();
    return {d->origin + TimeNs(std::llround(v.first)), d->origin + TimeNs(std::llround(v.second))};
}

void TimelineWidget::resetZoom()
{
    if (!d->trace)
        return;
    d->nav.reset();
}

bool TimelineWidget::canGoBack() const { return d->nav.canGoBack(); }
bool TimelineWidget::canGoForward() const { return d->nav.canGoForward(); }
void TimelineWidget::historyBack() { d->nav.back(); }
void TimelineWidget::historyForward() { d->nav.forward(); }

void TimelineWidget::highlightStage(ws::WarpRole role, ws::IntervalKind kind)
{
    d->highlight = qMakePair(role, kind);
    d->tl->setHighlight(d->highlight);
    d->replot();
}

void TimelineWidget::clearHighlight()
{
    d->highlight.reset();
    d->tl->setHighlight(std::nullopt);
    d->replot();
}

void TimelineWidget::setLaneFilter(const QString &filter)
{
    QString err;
    auto f = LaneFilter::parse(filter, &err);
    if (!f) {
        qWarning("%s", qPrintable(err));
        return;
    }
    d->filter = *f;
    d->filterText = filter;
    d->relayout();
    d->replot();
}

QString TimelineWidget::laneFilter() const { return d->filterText; }

void TimelineWidget::setCtaCollapsed(int ctaIndex, bool collapsed)
{
    if (collapsed)
        d->collapsedCtas.insert(ctaIndex);
    else
        d->collapsedCtas.remove(ctaIndex);
    d->relayout();
    d->replot();
}

void TimelineWidget::setAllCollapsed(bool collapsed)
{
    d->collapsedCtas.clear();
    if (collapsed && d->trace)
        for (int c = 0; c < int(d->trace->ctas.size()); ++c)
            d->collapsedCtas.insert(c);
    d->relayout();
    d->replot();
}

void TimelineWidget::selectInterval(int lane, qsizetype index)
{
    d->selLane = index >= 0 ? lane : -1;
    d->selIndex = index >= 0 ? index : -1;
    d->tl->setSelectedInterval(d->selLane, d->selIndex);
    // scroll the lane into view
    const int r = d->layout.rowOfLane(d->selLane);
    if (r >= 0) {
        const TimelineRow &row = d->layout.rows()[std::size_t(r)];
        const int h = d->plot->axisRect()->height();
        if (row.top < d->vscroll->value() || row.top + row.height > d->vscroll->value() + h)
            d->vscroll->setValue(std::max(0, row.top - h / 3));
    }
    d->replot();
}

QPair<int, qsizetype> TimelineWidget::selectedInterval() const { return {d->selLane, d->selIndex}; }

QCustomPlot *TimelineWidget::plot() const { return d->plot; }
TimelinePlottable *TimelineWidget::plottable() const { return d->tl; }

void TimelineWidget::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    d->updateLegendWrap();
    d->plot->plotLayout()->simplify();
    d->plot->replot(QCustomPlot::rpImmediateRefresh);  // lay out first so the axis rect height is right
    d->updateScrollRange();
    d->replot();
}

