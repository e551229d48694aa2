#include "timelinewidget.h"

#include "plotexport.h"

#include "timelinelayout.h"
#include "timelinepalette.h"
#include "timelineplottable.h"
#include "timelineticker.h"
#include "timemapping.h"

#include <warpstage/lod.h>

#include <qcustomplot.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QFile>
#include <QPdfWriter>
#include <QScrollBar>
#include <QToolTip>
#include <QtConcurrent>

#include <atomic>
#include <cmath>

using ws::TimeNs;

namespace {

// A legend entry: colour swatch (hatched for stalls) + label.
class SwatchLegendItem : public QCPAbstractLegendItem {
public:
    SwatchLegendItem(QCPLegend *parent, QColor color, QColor hatch, QString text)
        : QCPAbstractLegendItem(parent), m_color(color), m_hatch(hatch), m_text(std::move(text))
    {
        setSelectable(false);
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

using Range = QPair<double, double>;  // relative ns

}  // namespace

struct TimelineWidget::Private {
    TimelineWidget *q = nullptr;
    QCustomPlot *plot = nullptr;
    QScrollBar *vscroll = nullptr;
    TimelinePlottable *tl = nullptr;
    QCPLegend *legend = nullptr;
    QCPTextElement *title = nullptr;
    QSharedPointer<TimelineTicker> ticker;

    std::shared_ptr<const ws::KernelTrace> trace;
    std::shared_ptr<const ws::lod::TraceIndex> index;
    std::shared_ptr<std::atomic<bool>> cancel;
    QFutureWatcher<std::shared_ptr<const ws::lod::TraceIndex>> *watcher = nullptr;
    quint64 generation = 0;

    TimelineLayout layout;
    LaneFilter filter;
    QString filterText;
    QSet<int> collapsedCtas, collapsedSms;
    std::optional<QPair<ws::WarpRole, ws::IntervalKind>> highlight;
    int selLane = -1;
    qsizetype selIndex = -1;

    TimeNs origin = 0;
    bool originSet = false;
    Range view{0, 1};
    // history: entries and the current position; continuous gestures replace the current entry
    std::vector<Range> history;
    int historyPos = -1;
    QElapsedTimer lastContinuous;
    bool continuousOpen = false;

    enum class Drag { None, Pan, ZoomBand, RangeSelect, Ruler } drag = Drag::None;
    QPoint pressPos;
    Range pressView;
    int pressScroll = 0;
    bool moved = false;
    QPoint lastMouse{-1, -1};

    TimeNs firstStart = 0, lastEnd = 1;  // of the trace, cached (KernelTrace computes them by walking the lanes)
    double dataLo() const { return trace ? double(firstStart - origin) : 0.0; }
    double dataHi() const { return trace ? double(lastEnd - origin) : 1.0; }

    void applyView(Range r, bool emitSignal = true)
    {
        if (trace)
            r = timemap::clampToData(r.first, r.second, dataLo(), std::max(dataHi(), dataLo() + 1));
        view = r;
        plot->xAxis->setRange(r.first, r.second);
        plot->xAxis2->setRange(r.first, r.second);
        if (emitSignal)
            emit q->visibleRangeChanged(origin + TimeNs(std::llround(r.first)), origin + TimeNs(std::llround(r.second)));
    }
    // discrete navigation: new history entry
    void navigate(Range r)
    {
        continuousOpen = false;
        applyView(r);
        pushHistory();
        replot();
    }
    // continuous navigation (wheel, keys, drag): one history entry per gesture
    void navigateContinuous(Range r)
    {
        if (!continuousOpen || !lastContinuous.isValid() || lastContinuous.elapsed() > 700) {
            continuousOpen = true;
            applyView(r);
            pushHistory();
        } else {
            applyView(r);
            if (historyPos >= 0)
                history[std::size_t(historyPos)] = view;
        }
        lastContinuous.restart();
        replot();
    }
    void pushHistory()
    {
        if (historyPos >= 0 && history[std::size_t(historyPos)] == view)
            return;
        history.resize(std::size_t(historyPos + 1));
        history.push_back(view);
        historyPos = int(history.size()) - 1;
        if (history.size() > 200) {
            history.erase(history.begin());
            --historyPos;
        }
    }
    void replot() { plot->replot(QCustomPlot::rpQueuedReplot); }

    void relayout()
    {
        const int keepTop = vscroll->value();
        layout.build(trace.get(), filter, collapsedSms, collapsedCtas);
        tl->invalidateRaster();
        updateScrollRange();
        vscroll->setValue(std::min(keepTop, vscroll->maximum()));
        tl->setScrollY(vscroll->value());
    }
    void updateScrollRange()
    {
        const int visible = std::max(1, plot->axisRect()->height());
        vscroll->setRange(0, std::max(0, layout.totalHeight() - visible));
        vscroll->setPageStep(visible);
        vscroll->setSingleStep(TimelineLayout::kWarpHeight * 3);
    }
    void rebuildLegend()
    {
        legend->clearItems();
        std::array<bool, ws::kIntervalKindCount> present{};
        if (trace)
            for (const auto &l : trace->lanes)
                for (auto k : l.kind)
                    present[std::size_t(k) < present.size() ? std::size_t(k) : 0] = true;
        // starvation and back-pressure first
        const ws::IntervalKind order[] = {ws::IntervalKind::WaitData, ws::IntervalKind::WaitSlot, ws::IntervalKind::WaitOrder,
                                          ws::IntervalKind::Sync,     ws::IntervalKind::IssueLoad, ws::IntervalKind::Load,
                                          ws::IntervalKind::MmaIssue, ws::IntervalKind::MmaWait, ws::IntervalKind::Compute,
                                          ws::IntervalKind::Release,  ws::IntervalKind::Epilogue, ws::IntervalKind::Store,
                                          ws::IntervalKind::Setup,    ws::IntervalKind::Other};
        for (auto k : order) {
            if (!present[std::size_t(k)])
                continue;
            legend->addItem(new SwatchLegendItem(legend, tlpalette::kindColor(k),
                                                 tlpalette::kindHatched(k) ? tlpalette::hatchColor(k) : QColor(),
                                                 tlpalette::kindLabel(k)));
        }
        for (int s : {3, 1, 2})
            legend->addItem(new SwatchLegendItem(legend, tlpalette::overlapColor(s), QColor(), tlpalette::overlapLabel(s)));
        legend->addItem(new SwatchLegendItem(legend, tlpalette::loadsColor(2), QColor(), QStringLiteral("Loads in flight (darker = more)")));
        updateLegendWrap();
    }
    void updateLegendWrap()
    {
        // as many columns as fit the width
        int widest = 1;
        for (int i = 0; i < legend->elementCount(); ++i)
            if (QCPLayoutElement *e = legend->elementAt(i))
                widest = std::max(widest, e->minimumOuterSizeHint().width());
        const int cols = std::max(1, (plot->width() - 20) / (widest + 12));
        legend->setWrap(cols);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }

    void startIndex()
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

    static std::unique_ptr<TimelineWidget> clone(const TimelineWidget &src, QSize logical, const QString &title);

    QString tooltipFor(const TimelinePlottable::Hit &h) const
    {
        if (!trace || h.row < 0 || h.inLabels)
            return {};
        auto rel = [&](TimeNs t) { return timemap::formatDuration(double(t - origin)); };
        const auto &rows = layout.rows();
        const TimelineRow &row = rows[std::size_t(h.row)];
        if (row.type == TimelineRow::Warp && h.index >= 0) {
            const ws::Lane &l = trace->lanes[std::size_t(h.lane)];
            const auto i = std::size_t(h.index);
            const ws::Cta &c = trace->ctas[std::size_t(l.ctaIndex)];
            QString s = QStringLiteral("<b>%1</b>").arg(tlpalette::kindLabel(l.kind[i]).toHtmlEscaped());
            if (l.kstep[i] >= 0)
                s += QStringLiteral("<br>k-step %1").arg(l.kstep[i]);
            if (l.slot[i] >= 0)
                s += QStringLiteral("%1slot %2").arg(l.kstep[i] >= 0 ? QStringLiteral(" · ") : QStringLiteral("<br>")).arg(l.slot[i]);
            s += QStringLiteral("<br>start %1 · duration %2").arg(rel(l.start[i]), timemap::formatDuration(l.duration[i]));
            const QString role = l.roleName.empty() ? QString::fromUtf8(ws::warpRoleName(l.role).data()) : QString::fromStdString(l.roleName);
            s += QStringLiteral("<br>warp %1 (%2) · CTA %3 · SM %4").arg(l.warpIndex).arg(role.toHtmlEscaped()).arg(c.blockLinear).arg(c.smId);
            return s;
        }
        if (row.type == TimelineRow::Loads && index) {
            const QString n = h.category >= ws::lod::kMaxLoadsCategory ? QStringLiteral("%1 or more").arg(ws::lod::kMaxLoadsCategory)
                                                                       : QString::number(std::max(0, h.category));
            QString s = QStringLiteral("<b>Loads in flight: %1</b>").arg(n);
            if (h.category > 0)
                s += QStringLiteral("<br>%1 … %2 (%3)").arg(rel(h.segStart), rel(h.segEnd), timemap::formatDuration(double(h.segEnd - h.segStart)));
            return s + QStringLiteral("<br>CTA %1").arg(trace->ctas[std::size_t(row.cta)].blockLinear);
        }
        if (row.type == TimelineRow::CtaHeader && index) {
            const ws::Cta &c = trace->ctas[std::size_t(row.cta)];
            QString s = QStringLiteral("<b>%1</b>").arg(tlpalette::overlapLabel(h.category));
            if (h.category > 0)
                s += QStringLiteral("<br>%1 … %2 (%3)").arg(rel(h.segStart), rel(h.segEnd), timemap::formatDuration(double(h.segEnd - h.segStart)));
            s += QStringLiteral("<br>CTA %1 · SM %2 · %3 … %4").arg(c.blockLinear).arg(c.smId).arg(rel(c.start), rel(c.end));
            return s;
        }
        return {};
    }
};

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

void TimelineWidget::setTrace(std::shared_ptr<const ws::KernelTrace> trace)
{
    d->trace = std::move(trace);
    if (d->trace) {
        d->firstStart = d->trace->firstStart();
        d->lastEnd = d->trace->lastEnd();
        const ws::KernelLaunch &L = d->trace->launch;
        if (L.end > L.start && L.start > 0 && d->trace->intervalCount() > 0) {  // the kernel's own span too
            d->firstStart = std::min(d->firstStart, L.start);
            d->lastEnd = std::max(d->lastEnd, L.end);
        } else if (d->trace->intervalCount() == 0 && L.end > L.start) {
            d->firstStart = L.start;
            d->lastEnd = L.end;
        }
    }
    d->index.reset();
    d->selLane = -1;
    d->selIndex = -1;
    d->collapsedCtas.clear();
    d->collapsedSms.clear();
    d->history.clear();
    d->historyPos = -1;
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
    const TimeNs a0 = d->origin + TimeNs(std::llround(d->view.first));
    const TimeNs a1 = d->origin + TimeNs(std::llround(d->view.second));
    d->origin = origin;
    d->originSet = !d->trace;  // before setTrace: keep it for the next trace
    d->tl->setOrigin(origin);
    for (auto &h : d->history) {
        h.first -= double(origin - (d->origin));
    }
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
    return {d->origin + TimeNs(std::llround(d->view.first)), d->origin + TimeNs(std::llround(d->view.second))};
}

void TimelineWidget::resetZoom()
{
    if (!d->trace)
        return;
    const double lo = d->dataLo(), hi = std::max(d->dataHi(), lo + 1);
    const double m = (hi - lo) * 0.01;
    d->navigate({lo - m, hi + m});
}

bool TimelineWidget::canGoBack() const { return d->historyPos > 0; }
bool TimelineWidget::canGoForward() const { return d->historyPos + 1 < int(d->history.size()); }

void TimelineWidget::historyBack()
{
    if (!canGoBack())
        return;
    d->continuousOpen = false;
    --d->historyPos;
    d->applyView(d->history[std::size_t(d->historyPos)]);
    d->replot();
}

void TimelineWidget::historyForward()
{
    if (!canGoForward())
        return;
    d->continuousOpen = false;
    ++d->historyPos;
    d->applyView(d->history[std::size_t(d->historyPos)]);
    d->replot();
}

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

bool TimelineWidget::eventFilter(QObject *watched, QEvent *event)
{
    if (watched != d->plot)
        return QWidget::eventFilter(watched, event);
    const QRect ar = d->tl->lanesRect();
    auto timeAt = [&](double x) { return d->plot->xAxis->pixelToCoord(x); };
    switch (event->type()) {
    case QEvent::Wheel: {
        auto *e = static_cast<QWheelEvent *>(event);
        const QPointF pos = e->position();
        const QPoint delta = e->angleDelta();
        if (!d->trace)
            return true;
        if ((e->modifiers() & Qt::ShiftModifier) || pos.x() < ar.left()) {
            const int dy = delta.y() != 0 ? delta.y() : delta.x();
            d->vscroll->setValue(d->vscroll->value() - dy * TimelineLayout::kWarpHeight * 3 / 120);
            return true;
        }
        if (delta.x() != 0 && std::abs(delta.x()) > std::abs(delta.y())) {  // horizontal wheel/trackpad: pan
            const double span = d->view.second - d->view.first;
            d->navigateContinuous(timemap::pan(d->view.first, d->view.second, -delta.x() / 120.0 * span * 0.1));
            return true;
        }
        const double factor = std::pow(0.85, delta.y() / 120.0);
        d->navigateContinuous(timemap::zoomAbout(d->view.first, d->view.second, timeAt(pos.x()), factor));
        return true;
    }
    case QEvent::MouseButtonPress: {
        auto *e = static_cast<QMouseEvent *>(event);
        d->plot->setFocus();
        d->pressPos = e->position().toPoint();
        d->pressView = d->view;
        d->pressScroll = d->vscroll->value();
        d->moved = false;
        d->drag = Private::Drag::None;
        if (!d->trace)
            return true;
        const auto hit = d->tl->hitTest(e->position());
        if (hit.inLabels) {
            if (e->button() == Qt::LeftButton && hit.row >= 0) {
                const TimelineRow &row = d->layout.rows()[std::size_t(hit.row)];
                if (row.type == TimelineRow::SmHeader) {
                    if (d->collapsedSms.contains(row.sm))
                        d->collapsedSms.remove(row.sm);
                    else
                        d->collapsedSms.insert(row.sm);
                    d->relayout();
                    d->replot();
                } else if (row.type == TimelineRow::CtaHeader) {
                    setCtaCollapsed(row.cta, !d->collapsedCtas.contains(row.cta));
                    emit ctaSelected(row.cta);
                }
            }
            return true;
        }
        if (e->button() == Qt::RightButton)
            d->drag = Private::Drag::ZoomBand;
        else if (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ControlModifier))
            d->drag = Private::Drag::Ruler;
        else if (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier))
            d->drag = Private::Drag::RangeSelect;
        else if (e->button() == Qt::LeftButton || e->button() == Qt::MiddleButton)
            d->drag = Private::Drag::Pan;
        return true;
    }
    case QEvent::MouseMove: {
        auto *e = static_cast<QMouseEvent *>(event);
        const QPoint pos = e->position().toPoint();
        d->lastMouse = pos;
        if (d->drag != Private::Drag::None && (pos - d->pressPos).manhattanLength() >= 3)
            d->moved = true;
        const double tPress = d->plot->xAxis->pixelToCoord(d->pressPos.x());
        switch (d->drag) {
        case Private::Drag::Pan:
            if (d->moved) {
                const double nsPerPx = (d->pressView.second - d->pressView.first) / std::max(1, ar.width());
                const double dt = -(pos.x() - d->pressPos.x()) * nsPerPx;
                d->continuousOpen = true;
                d->lastContinuous.restart();
                if (d->historyPos >= 0 && d->history[std::size_t(d->historyPos)] == d->pressView && d->view == d->pressView)
                    ;  // first move of the drag: the gesture gets its own entry below
                d->applyView(timemap::pan(d->pressView.first, d->pressView.second, dt));
                d->vscroll->setValue(d->pressScroll - (pos.y() - d->pressPos.y()));
                d->replot();
            }
            return true;
        case Private::Drag::ZoomBand:
            if (d->moved) {
                d->tl->setZoomBand(Range{tPress, timeAt(pos.x())});
                d->replot();
            }
            return true;
        case Private::Drag::RangeSelect:
            if (d->moved) {
                d->tl->setRangeSelection(Range{tPress, timeAt(pos.x())});
                d->replot();
            }
            return true;
        case Private::Drag::Ruler:
            if (d->moved) {
                d->tl->setRuler(TimelinePlottable::Ruler{tPress, timeAt(pos.x()), double(d->pressPos.y()), double(pos.y())});
                d->replot();
            }
            return true;
        case Private::Drag::None:
            break;
        }
        // hover
        const auto hit = d->tl->hitTest(e->position());
        const int lane = hit.type == TimelineRow::Warp && hit.index >= 0 && !hit.inLabels ? hit.lane : -1;
        const qsizetype idx = lane >= 0 ? hit.index : -1;
        d->tl->setHoverInterval(lane, idx);
        const QString tip = d->tooltipFor(hit);
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), tip, d->plot);
        d->replot();
        return true;
    }
    case QEvent::MouseButtonRelease: {
        auto *e = static_cast<QMouseEvent *>(event);
        const auto drag = d->drag;
        d->drag = Private::Drag::None;
        if (!d->trace)
            return true;
        const QPoint pos = e->position().toPoint();
        const double tPress = d->plot->xAxis->pixelToCoord(d->pressPos.x());
        const double tNow = timeAt(pos.x());
        if (drag == Private::Drag::Pan && d->moved) {
            // one history entry per drag
            d->continuousOpen = false;
            d->pushHistory();
            return true;
        }
        if (drag == Private::Drag::ZoomBand) {
            d->tl->setZoomBand(std::nullopt);
            if (d->moved && std::abs(pos.x() - d->pressPos.x()) >= 4)
                d->navigate({std::min(tPress, tNow), std::max(tPress, tNow)});
            else
                d->replot();
            return true;
        }
        if (drag == Private::Drag::RangeSelect) {
            if (d->moved) {
                const double a = std::min(tPress, tNow), b = std::max(tPress, tNow);
                d->tl->setRangeSelection(Range{a, b});
                emit timeRangeSelected(d->origin + TimeNs(std::llround(a)), d->origin + TimeNs(std::llround(b)));
            }
            d->replot();
            return true;
        }
        if (drag == Private::Drag::Ruler) {
            d->replot();
            return true;
        }
        if (drag == Private::Drag::Pan && !d->moved && e->button() == Qt::LeftButton) {
            // click: select an interval, or a CTA header
            const auto hit = d->tl->hitTest(e->position());
            d->tl->setRuler(std::nullopt);
            if (hit.row >= 0 && hit.type == TimelineRow::Warp && hit.index >= 0) {
                d->selLane = hit.lane;
                d->selIndex = hit.index;
                d->tl->setSelectedInterval(hit.lane, hit.index);
                emit intervalSelected(hit.lane, hit.index);
            } else if (hit.row >= 0 && hit.type == TimelineRow::CtaHeader) {
                emit ctaSelected(hit.cta);
            } else {
                d->selLane = -1;
                d->selIndex = -1;
                d->tl->setSelectedInterval(-1, -1);
                d->tl->setRangeSelection(std::nullopt);
            }
            d->replot();
        }
        return true;
    }
    case QEvent::MouseButtonDblClick: {
        auto *e = static_cast<QMouseEvent *>(event);
        const auto hit = d->tl->hitTest(e->position());
        if (hit.row >= 0 && hit.type == TimelineRow::CtaHeader && !hit.inLabels)
            setCtaCollapsed(hit.cta, !d->collapsedCtas.contains(hit.cta));
        return true;
    }
    case QEvent::Leave:
        d->tl->setHoverInterval(-1, -1);
        d->lastMouse = QPoint(-1, -1);
        d->replot();
        break;
    case QEvent::KeyPress: {
        auto *e = static_cast<QKeyEvent *>(event);
        if (!d->trace)
            break;
        const double span = d->view.second - d->view.first;
        const bool mouseIn = d->lastMouse.x() >= ar.left() && d->lastMouse.x() <= ar.right();
        const double anchor = mouseIn ? timeAt(d->lastMouse.x()) : (d->view.first + d->view.second) / 2;
        const bool alt = e->modifiers() & Qt::AltModifier;
        switch (e->key()) {
        case Qt::Key_W:
        case Qt::Key_Plus:
        case Qt::Key_Equal:
            d->navigateContinuous(timemap::zoomAbout(d->view.first, d->view.second, anchor, 0.8));
            return true;
        case Qt::Key_S:
        case Qt::Key_Minus:
            d->navigateContinuous(timemap::zoomAbout(d->view.first, d->view.second, anchor, 1.25));
            return true;
        case Qt::Key_A:
            d->navigateContinuous(timemap::pan(d->view.first, d->view.second, -0.15 * span));
            return true;
        case Qt::Key_D:
            d->navigateContinuous(timemap::pan(d->view.first, d->view.second, 0.15 * span));
            return true;
        case Qt::Key_Left:
            if (alt)
                historyBack();
            else
                d->navigateContinuous(timemap::pan(d->view.first, d->view.second, -0.15 * span));
            return true;
        case Qt::Key_Right:
            if (alt)
                historyForward();
            else
                d->navigateContinuous(timemap::pan(d->view.first, d->view.second, 0.15 * span));
            return true;
        case Qt::Key_Backspace:
            historyBack();
            return true;
        case Qt::Key_Home:
        case Qt::Key_0:
            resetZoom();
            return true;
        case Qt::Key_F:  // frame the selection (interval or range)
            if (auto r = d->tl->rangeSelection()) {
                d->navigate({std::min(r->first, r->second), std::max(r->first, r->second)});
            } else if (d->selLane >= 0) {
                const ws::Lane &l = d->trace->lanes[std::size_t(d->selLane)];
                const double a = double(l.start[std::size_t(d->selIndex)] - d->origin);
                const double b = double(l.end(std::size_t(d->selIndex)) - d->origin);
                const double m = std::max((b - a) * 0.5, 20.0);
                d->navigate({a - m, b + m});
            }
            return true;
        case Qt::Key_Up:
            d->vscroll->setValue(d->vscroll->value() - TimelineLayout::kWarpHeight * 2);
            return true;
        case Qt::Key_Down:
            d->vscroll->setValue(d->vscroll->value() + TimelineLayout::kWarpHeight * 2);
            return true;
        case Qt::Key_PageUp:
            d->vscroll->setValue(d->vscroll->value() - d->vscroll->pageStep());
            return true;
        case Qt::Key_PageDown:
            d->vscroll->setValue(d->vscroll->value() + d->vscroll->pageStep());
            return true;
        case Qt::Key_Escape:
            d->tl->setRuler(std::nullopt);
            d->tl->setRangeSelection(std::nullopt);
            d->selLane = -1;
            d->selIndex = -1;
            d->tl->setSelectedInterval(-1, -1);
            d->replot();
            return true;
        default:
            break;
        }
        break;
    }
    default:
        break;
    }
    return QWidget::eventFilter(watched, event);
}

// A fresh, never-shown widget in the same state as `src`, laid out at `logical` size (export).

QImage TimelineWidget::renderImage(QSize sizePx, double dpi, const QString &title, QRect *lanesRectPx) const
{
    const QSize logical = plotexport::logicalSize(sizePx, dpi);
    auto w = Private::clone(*this, logical, title);
    QImage img = plotexport::render(w->plot(), sizePx, dpi);
    if (lanesRectPx) {  // known only once the plot has been drawn
        const QRect r = w->plottable()->lanesRect();
        const double sx = double(sizePx.width()) / logical.width(), sy = double(sizePx.height()) / logical.height();
        *lanesRectPx = QRect(QPoint(int(std::lround(r.left() * sx)), int(std::lround(r.top() * sy))),
                             QSize(int(std::lround(r.width() * sx)), int(std::lround(r.height() * sy))));
    }
    return img;
}

std::unique_ptr<TimelineWidget> TimelineWidget::Private::clone(const TimelineWidget &src, QSize logical, const QString &title)
{
    const Private *d = src.d.get();
    auto holder = std::make_unique<TimelineWidget>();
    TimelineWidget &w = *holder;
    w.setAttribute(Qt::WA_DontShowOnScreen);
    w.d->originSet = true;
    w.d->origin = d->origin;
    w.setTrace(d->trace);
    if (d->index) {  // reuse the finished index
        if (w.d->cancel)
            *w.d->cancel = true;
        w.d->watcher->waitForFinished();
        w.d->index = d->index;
        w.d->tl->setIndex(d->index);
    } else if (d->trace) {
        w.waitForIndex();
    }
    w.d->filter = d->filter;
    w.d->filterText = d->filterText;
    w.d->collapsedCtas = d->collapsedCtas;
    w.d->collapsedSms = d->collapsedSms;
    w.d->highlight = d->highlight;
    w.d->tl->setHighlight(d->highlight);
    w.d->tl->setSelectedInterval(d->selLane, d->selIndex);
    w.d->tl->setRangeSelection(d->tl->rangeSelection());
    w.d->vscroll->hide();
    if (!title.isEmpty()) {
        w.d->plot->plotLayout()->insertRow(0);
        auto *t = new QCPTextElement(w.d->plot, title);
        QFont f = t->font();
        f.setPixelSize(15);
        f.setBold(true);
        t->setFont(f);
        t->setTextColor(tlpalette::labelText());
        w.d->plot->plotLayout()->addElement(0, 0, t);
        w.d->plot->plotLayout()->setRowStretchFactor(0, 0.001);
    }
    w.resize(logical);
    w.d->plot->resize(logical);
    w.d->plot->setViewport(QRect(QPoint(0, 0), logical));  // never shown: no resize event
    w.d->applyView(d->view, false);
    w.d->updateLegendWrap();
    w.d->plot->replot(QCustomPlot::rpImmediateRefresh);  // lays out: the axis rect gets its height
    w.d->relayout();
    w.d->vscroll->setValue(std::min(d->vscroll->value(), w.d->vscroll->maximum()));
    w.d->tl->setScrollY(w.d->vscroll->value());
    return holder;
}


bool TimelineWidget::exportImage(const QString &path, QSize sizePx, double dpi, const QString &title, QString *error) const
{
    // Vector formats: axis, labels and legend as vectors; the lanes are one embedded raster.
    std::unique_ptr<TimelineWidget> w;
    return plotexport::write(path, sizePx, dpi, title, [&](QSize logical) {
        w = Private::clone(*this, logical, title);
        return w->plot();
    }, error);
}
