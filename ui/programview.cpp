#include "programview.h"

#include "plotexport.h"
#include "programplottable.h"
#include "timelinepalette.h"
#include "timelineticker.h"
#include "timemapping.h"
#include "timenavigator.h"
#include "viewdrag.h"

#include <warpstage/program.h>

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QScrollBar>

#include <cmath>

using ws::TimeNs;
using Range = TimeNavigator::Range;

struct ProgramView::Private {
    ProgramView *q = nullptr;
    QCustomPlot *plot = nullptr;
    QScrollBar *vscroll = nullptr;
    ProgramPlottable *pl = nullptr;
    QCPTextElement *title = nullptr;
    std::shared_ptr<const ws::ProgramTrace> program;
    ProgramLayout layout;
    ProgramLayoutOptions options;
    TimeNavigator nav;
    TimeNs origin = 0, firstStart = 0, lastEnd = 1;
    QString highlight;
    int selKernel = -1;
    ProgramLinks links;
    std::vector<GapInfo> gaps;
    TimeNs gapThreshold = ProgramView::kDefaultIdleGapNs;

    ViewDrag drag;  // the mouse gesture (pan, zoom band, range selection, ruler) and the last mouse position

    double dataLo() const { return double(firstStart - origin); }
    double dataHi() const { return std::max(double(lastEnd - origin), dataLo() + 1); }
    Range apply(Range r, bool emitSignal = true)
    {
        if (program)
            r = timemap::clampToData(r.first, r.second, dataLo(), dataHi());
        plot->xAxis->setRange(r.first, r.second);
        plot->xAxis2->setRange(r.first, r.second);
        nav.setViewQuiet(r);
        if (emitSignal)
            emit q->visibleRangeChanged(origin + TimeNs(std::llround(r.first)), origin + TimeNs(std::llround(r.second)));
        return r;
    }
    void replot() { plot->replot(QCustomPlot::rpQueuedReplot); }
    void relayout()
    {
        layout.build(program.get(), options);
        pl->setProgram(program, &layout);
        pl->setHighlightName(highlight.toStdString());
        updateScrollRange();
        if (selKernel >= 0) {
            const auto [r, i] = layout.rowOfKernel(selKernel);
            pl->setSelected(r, i);
        }
    }
    void updateScrollRange()
    {
        const int visible = std::max(1, plot->axisRect()->height());
        vscroll->setRange(0, std::max(0, layout.totalHeight() - visible));
        vscroll->setPageStep(visible);
        vscroll->setSingleStep(ProgramLayout::kStreamHeight);
        pl->setScrollY(vscroll->value());
    }
    // The kernel under a hit; on an API span, the first kernel that call launched.
    int kernelAt(const ProgramPlottable::Hit &h) const
    {
        if (h.row < 0 || h.item < 0)
            return -1;
        const ProgramItem &it = layout.rows()[std::size_t(h.row)].items[std::size_t(h.item)];
        if (it.kind == ProgramItem::Api)
            for (const LaunchRef &l : links.launchesOf(it.index))
                if (l.kind == ProgramItem::Kernel)
                    return l.index;
        return it.kind == ProgramItem::Kernel ? it.index : -1;
    }
    QString tooltip(const ProgramPlottable::Hit &h, int gap) const;
    QString launchLine(LaunchRef l) const;
    QString gapTooltip(int gap) const;
};

QString ProgramView::drillDownHint(const ws::KernelLaunch &k)
{
    if (k.traced)
        return QStringLiteral("Double-click (or Enter) opens the per-warp timeline of this launch");
    return QStringLiteral("No per-warp timeline: record the program again with warpstage-record --kernels REGEX "
                          "(a regex that matches this kernel) and build the kernel with the per-warp trace header");
}

// "launched by cudaLaunchKernel (thread 5) · latency 4.2 µs, 1.0 µs of it queued behind earlier work on the stream"
QString ProgramView::Private::launchLine(LaunchRef l) const
{
    const int a = links.apiOf(l);
    if (a < 0)
        return QStringLiteral("<br>no CUDA API call recorded for it (correlation id %1)")
            .arg(l.kind == ProgramItem::Kernel ? program->kernels[std::size_t(l.index)].correlationId
                                               : program->memOps[std::size_t(l.index)].correlationId);
    const ws::ApiSpan &api = program->apiSpans[std::size_t(a)];
    const LaunchTiming t = links.timing(l);
    QString s = QStringLiteral("<br>launched by %1 (thread %2)").arg(QString::fromStdString(api.name).toHtmlEscaped()).arg(api.threadId);
    s += QStringLiteral("<br>launch latency %1 (start − API call start)").arg(timemap::formatDuration(double(t.latencyNs)));
    if (t.queuedNs > 0)
        s += QStringLiteral("<br>queued %1 behind earlier work on the stream").arg(timemap::formatDuration(double(t.queuedNs)));
    return s;
}

QString ProgramView::Private::gapTooltip(int g) const
{
    if (g < 0 || g >= int(gaps.size()))
        return {};
    const GapInfo &gi = gaps[std::size_t(g)];
    auto rel = [&](TimeNs t) { return timemap::formatDuration(double(t - origin)); };
    return QStringLiteral("<b>GPU idle %1</b><br>device %2 ran no kernel and no copy from %3 to %4"
                          "<br>last before it: %5<br>first after it: %6")
        .arg(timemap::formatDuration(double(gi.length())))
        .arg(gi.gap.deviceOrdinal)
        .arg(rel(gi.gap.start), rel(gi.gap.end), programtext::launchName(*program, gi.before).toHtmlEscaped(),
             programtext::launchName(*program, gi.after).toHtmlEscaped());
}

QString ProgramView::Private::tooltip(const ProgramPlottable::Hit &h, int gap) const
{
    if (!program || h.row < 0 || h.inLabels)
        return {};
    if (h.item < 0)
        return gapTooltip(gap);
    const ProgramItem &it = layout.rows()[std::size_t(h.row)].items[std::size_t(h.item)];
    auto rel = [&](TimeNs t) { return timemap::formatDuration(double(t - origin)); };
    auto esc = [](const std::string &s) { return QString::fromStdString(s).toHtmlEscaped(); };
    switch (it.kind) {
    case ProgramItem::Kernel: {
        const ws::KernelLaunch &k = program->kernels[std::size_t(it.index)];
        QString s = QStringLiteral("<b>%1</b>").arg(esc(ws::kernelFamily(k.name)));
        if (ws::kernelFamily(k.name) != k.name)
            s += QStringLiteral("<br><small>%1</small>").arg(esc(k.name.size() > 300 ? k.name.substr(0, 300) + "…" : k.name));
        s += QStringLiteral("<br>grid (%1, %2, %3) · block (%4, %5, %6)")
                 .arg(k.grid[0]).arg(k.grid[1]).arg(k.grid[2]).arg(k.block[0]).arg(k.block[1]).arg(k.block[2]);
        s += QStringLiteral("<br>stream %1 · correlation id %2").arg(k.streamId).arg(k.correlationId);
        s += QStringLiteral("<br>start %1 · duration %2").arg(rel(k.start), timemap::formatDuration(double(k.end - k.start)));
        s += launchLine({ProgramItem::Kernel, it.index});
        s += QStringLiteral("<br><i>%1</i>").arg(drillDownHint(k).toHtmlEscaped());
        return s;
    }
    case ProgramItem::MemOp: {
        const ws::MemOp &m = program->memOps[std::size_t(it.index)];
        return QStringLiteral("<b>%1</b><br>%2 bytes · stream %3 · correlation id %4<br>start %5 · duration %6")
                   .arg(programpalette::memOpLabel(m.kind)).arg(m.bytes).arg(m.streamId).arg(m.correlationId)
                   .arg(rel(m.start), timemap::formatDuration(double(m.end - m.start))) +
               launchLine({ProgramItem::MemOp, it.index});
    }
    case ProgramItem::Nvtx: {
        const ws::NvtxRange &r = program->nvtx[std::size_t(it.index)];
        QString s = QStringLiteral("<b>%1</b><br>NVTX %2%3 · thread %4 · depth %5")
                        .arg(esc(r.name), r.domain.empty() ? QString() : esc(r.domain) + QStringLiteral(" · "),
                             r.kind == ws::NvtxKind::StartEnd ? QStringLiteral("start/end") : r.kind == ws::NvtxKind::Mark ? QStringLiteral("mark") : QStringLiteral("push/pop"))
                        .arg(r.threadId).arg(r.depth);
        s += QStringLiteral("<br>start %1 · duration %2%3").arg(rel(r.start), timemap::formatDuration(double(r.end - r.start)),
                                                              r.closed ? QString() : QStringLiteral(" (still open when recording ended)"));
        return s;
    }
    case ProgramItem::Api: {
        const ws::ApiSpan &a = program->apiSpans[std::size_t(it.index)];
        QString s = QStringLiteral("<b>%1</b><br>thread %2 · correlation id %3 · result %4<br>start %5 · duration %6")
                        .arg(esc(a.name)).arg(a.threadId).arg(a.correlationId).arg(a.result)
                        .arg(rel(a.start), timemap::formatDuration(double(a.end - a.start)));
        const auto &launched = links.launchesOf(it.index);
        for (std::size_t i = 0; i < launched.size() && i < 8; ++i) {
            const LaunchRef l = launched[i];
            const TimeNs st = l.kind == ProgramItem::Kernel ? program->kernels[std::size_t(l.index)].start
                                                            : program->memOps[std::size_t(l.index)].start;
            const LaunchTiming t = links.timing(l);
            s += QStringLiteral("<br>launched <b>%1</b> at %2 · latency %3")
                     .arg(programtext::launchName(*program, l).toHtmlEscaped(), rel(st), timemap::formatDuration(double(t.latencyNs)));
            if (t.queuedNs > 0)
                s += QStringLiteral(" (queued %1)").arg(timemap::formatDuration(double(t.queuedNs)));
        }
        if (launched.size() > 8)
            s += QStringLiteral("<br>… and %1 more").arg(launched.size() - 8);
        return s;
    }
    }
    return {};
}

ProgramView::ProgramView(QWidget *parent) : QWidget(parent), d(std::make_unique<Private>())
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
    d->plot->setInteractions({});
    if (QCPLayer *overlay = d->plot->layer(QStringLiteral("overlay")))
        overlay->setMode(QCPLayer::lmLogical);
    d->plot->setBackground(tlpalette::background());
    QCPAxisRect *ar = d->plot->axisRect();
    ar->setAutoMargins(QCP::msTop | QCP::msBottom | QCP::msRight);
    ar->setMargins(QMargins(ProgramPlottable::kLabelWidth, 0, 0, 0));
    ar->setMinimumMargins(QMargins(ProgramPlottable::kLabelWidth, 0, 12, 0));
    d->plot->yAxis->setVisible(false);
    d->plot->yAxis->setRange(0, 1);
    auto ticker = QSharedPointer<TimelineTicker>(new TimelineTicker(d->plot->xAxis));
    for (QCPAxis *ax : {d->plot->xAxis, d->plot->xAxis2}) {
        ax->setVisible(true);
        ax->setTicker(ticker);
        ax->grid()->setVisible(false);
        ax->setBasePen(QPen(QColor(0x90, 0x96, 0xA0)));
        ax->setTickPen(QPen(QColor(0x90, 0x96, 0xA0)));
        ax->setSubTickPen(QPen(QColor(0xB0, 0xB4, 0xBA)));
        ax->setTickLabelColor(tlpalette::labelText());
        QFont f = ax->tickLabelFont();
        f.setPixelSize(11);
        ax->setTickLabelFont(f);
    }
    d->plot->xAxis2->setTickLabels(true);
    d->plot->xAxis->setLabel(QStringLiteral("time since the first record of the run"));
    QFont lf = d->plot->xAxis->labelFont();
    lf.setPixelSize(11);
    d->plot->xAxis->setLabelFont(lf);
    d->plot->xAxis->setLabelColor(QColor(0x60, 0x66, 0x70));
    d->pl = new ProgramPlottable(d->plot->xAxis, d->plot->yAxis);

    d->nav.apply = [this](Range r) { return d->apply(r); };
    d->nav.replot = [this]() { d->replot(); };
    d->nav.fullRange = [this]() {
        const double lo = d->dataLo(), hi = d->dataHi(), m = (hi - lo) * 0.01;
        return Range{lo - m, hi + m};
    };
    connect(d->vscroll, &QScrollBar::valueChanged, this, [this](int v) {
        d->pl->setScrollY(v);
        d->replot();
    });
    d->plot->installEventFilter(this);
    d->apply({0, 1000}, false);
}

ProgramView::~ProgramView() = default;

void ProgramView::setProgram(std::shared_ptr<const ws::ProgramTrace> program)
{
    d->program = std::move(program);
    d->firstStart = d->program ? d->program->firstStart() : 0;
    d->lastEnd = d->program ? std::max(d->program->lastEnd(), d->firstStart + 1) : 1;
    d->origin = d->firstStart;
    d->pl->setOrigin(d->origin);
    d->links.build(d->program.get());
    d->pl->setLinks(&d->links);
    d->gaps = d->links.gaps(d->gapThreshold);
    d->pl->setGaps(&d->gaps);
    d->selKernel = -1;
    d->highlight.clear();
    d->pl->setSelected(-1, -1);
    d->pl->setRangeSelection(std::nullopt);
    d->pl->setRuler(std::nullopt);
    d->vscroll->setValue(0);
    d->relayout();
    d->nav.clearHistory();
    if (d->program)
        resetZoom();
    else
        d->replot();
    emit idleGapsChanged();
}

const ProgramLinks &ProgramView::links() const { return d->links; }
void ProgramView::setIdleGapThreshold(ws::TimeNs minGapNs)
{
    d->gapThreshold = std::max<TimeNs>(1, minGapNs);
    d->gaps = d->links.gaps(d->gapThreshold);
    d->replot();
    emit idleGapsChanged();
}
ws::TimeNs ProgramView::idleGapThreshold() const { return d->gapThreshold; }
const std::vector<GapInfo> &ProgramView::idleGaps() const { return d->gaps; }
void ProgramView::zoomToGap(int g)
{
    if (g < 0 || g >= int(d->gaps.size()))
        return;
    const GapInfo &gi = d->gaps[std::size_t(g)];
    const double a = double(gi.gap.start - d->origin), b = double(gi.gap.end - d->origin), m = (b - a) * 0.5;
    d->nav.navigate({a - m, b + m});
}

std::shared_ptr<const ws::ProgramTrace> ProgramView::program() const { return d->program; }
void ProgramView::setLayoutOptions(const ProgramLayoutOptions &options)
{
    d->options = options;
    d->relayout();
    d->replot();
}
ProgramLayoutOptions ProgramView::layoutOptions() const { return d->options; }
const ProgramLayout &ProgramView::programLayout() const { return d->layout; }
ws::TimeNs ProgramView::timeOrigin() const { return d->origin; }

void ProgramView::setVisibleRange(ws::TimeNs t0, ws::TimeNs t1)
{
    if (t1 < t0)
        std::swap(t0, t1);
    d->nav.navigate({double(t0 - d->origin), double(t1 - d->origin)});
}
QPair<ws::TimeNs, ws::TimeNs> ProgramView::visibleRange() const
{
    const Range v = d->nav.view();
    return {d->origin + TimeNs(std::llround(v.first)), d->origin + TimeNs(std::llround(v.second))};
}
void ProgramView::resetZoom()
{
    if (d->program)
        d->nav.reset();
}
bool ProgramView::canGoBack() const { return d->nav.canGoBack(); }
bool ProgramView::canGoForward() const { return d->nav.canGoForward(); }
void ProgramView::historyBack() { d->nav.back(); }
void ProgramView::historyForward() { d->nav.forward(); }

void ProgramView::highlightKernel(const QString &name)
{
    d->highlight = name;
    d->pl->setHighlightName(name.toStdString());
    d->replot();
}
QString ProgramView::highlightedKernel() const { return d->highlight; }

bool ProgramView::zoomToKernel(const QString &name)
{
    if (!d->program)
        return false;
    const std::string n = name.toStdString();
    TimeNs a = 0, b = 0;
    bool any = false;
    for (const auto &k : d->program->kernels)
        if (k.name == n) {
            a = any ? std::min(a, k.start) : k.start;
            b = any ? std::max(b, k.end) : k.end;
            any = true;
        }
    if (!any)
        return false;
    zoomToSpan(a, b);
    return true;
}

void ProgramView::zoomToSpan(TimeNs t0, TimeNs t1)
{
    const double lo = double(t0 - d->origin), hi = double(t1 - d->origin), m = std::max((hi - lo) * 0.02, 50.0);
    d->nav.navigate({lo - m, hi + m});
}

void ProgramView::selectLaunch(int k)
{
    d->selKernel = d->program && k >= 0 && k < int(d->program->kernels.size()) ? k : -1;
    const auto [r, i] = d->layout.rowOfKernel(d->selKernel);
    d->pl->setSelected(r, i);
    if (r >= 0) {
        const ProgramRow &row = d->layout.rows()[std::size_t(r)];
        const int h = d->plot->axisRect()->height();
        if (row.top < d->vscroll->value() || row.top + row.height > d->vscroll->value() + h)
            d->vscroll->setValue(std::max(0, row.top - h / 3));
    }
    d->replot();
}
int ProgramView::selectedLaunch() const { return d->selKernel; }

QString ProgramView::tooltipAt(const QPoint &plotPos) const { return d->tooltip(d->pl->hitTest(plotPos), d->pl->gapAt(plotPos)); }

QCustomPlot *ProgramView::plot() const { return d->plot; }
ProgramPlottable *ProgramView::plottable() const { return d->pl; }

void ProgramView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    d->plot->replot(QCustomPlot::rpImmediateRefresh);
    d->updateScrollRange();
    d->replot();
}

bool ProgramView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched != d->plot)
        return QWidget::eventFilter(watched, event);
    const QRect ar = d->pl->lanesRect();
    auto timeAt = [&](double x) { return d->plot->xAxis->pixelToCoord(x); };
    switch (event->type()) {
    case QEvent::Wheel: {
        auto *e = static_cast<QWheelEvent *>(event);
        if (!d->program)
            return true;
        if (const auto rows = ViewDrag::wheelRowScroll(e, ar.left(), ProgramLayout::kStreamHeight)) {
            d->vscroll->setValue(d->vscroll->value() + *rows);
            return true;
        }
        d->nav.handleWheel(e, timeAt(e->position().x()));
        return true;
    }
    case QEvent::MouseButtonPress: {
        auto *e = static_cast<QMouseEvent *>(event);
        d->plot->setFocus();
        d->drag.press(e->position().toPoint(), d->nav.view(), d->vscroll->value());
        if (!d->program || e->position().x() < ar.left())
            return true;
        d->drag.begin(e->button(), e->modifiers());
        return true;
    }
    case QEvent::MouseMove: {
        auto *e = static_cast<QMouseEvent *>(event);
        const QPoint pos = e->position().toPoint();
        if (d->drag.move(pos)) {
            if (!d->drag.moved())
                return true;
            const double tPress = timeAt(d->drag.pressPos().x());
            if (d->drag.mode() == ViewDrag::Mode::Pan) {
                d->apply(d->drag.pannedView(pos, ar.width()));
                d->vscroll->setValue(d->drag.pannedScroll(pos));
            } else if (d->drag.mode() == ViewDrag::Mode::ZoomBand) {
                d->pl->setZoomBand(Range{tPress, timeAt(pos.x())});
            } else if (d->drag.mode() == ViewDrag::Mode::RangeSelect) {
                d->pl->setRangeSelection(Range{tPress, timeAt(pos.x())});
            } else {
                d->pl->setRuler(Range{tPress, timeAt(pos.x())});
            }
            d->replot();
            return true;
        }
        const auto hit = d->pl->hitTest(e->position());
        d->pl->setHover(hit.item >= 0 ? hit.row : -1, hit.item);
        ViewDrag::showTip(d->tooltip(hit, hit.item < 0 ? d->pl->gapAt(e->position()) : -1), e->globalPosition().toPoint(),
                          d->plot);
        d->replot();
        return true;
    }
    case QEvent::MouseButtonRelease: {
        auto *e = static_cast<QMouseEvent *>(event);
        const auto drag = d->drag.release();
        if (!d->program)
            return true;
        const QPoint pos = e->position().toPoint();
        const double tPress = timeAt(d->drag.pressPos().x()), tNow = timeAt(pos.x());
        if (drag == ViewDrag::Mode::Pan && d->drag.moved()) {
            d->nav.commitGesture();
            emit visibleRangeChanged(visibleRange().first, visibleRange().second);
            return true;
        }
        if (drag == ViewDrag::Mode::ZoomBand) {
            d->pl->setZoomBand(std::nullopt);
            if (d->drag.bandWideEnough(pos))
                d->nav.navigate({std::min(tPress, tNow), std::max(tPress, tNow)});
            d->replot();
            return true;
        }
        if (drag == ViewDrag::Mode::RangeSelect && d->drag.moved()) {
            const double a = std::min(tPress, tNow), b = std::max(tPress, tNow);
            d->pl->setRangeSelection(Range{a, b});
            emit timeRangeSelected(d->origin + TimeNs(std::llround(a)), d->origin + TimeNs(std::llround(b)));
            d->replot();
            return true;
        }
        if (drag == ViewDrag::Mode::Pan && e->button() == Qt::LeftButton) {  // click: select a launch
            const auto hit = d->pl->hitTest(e->position());
            d->pl->setRuler(std::nullopt);
            const int k = d->kernelAt(hit);
            d->selKernel = k;
            d->pl->setSelected(hit.item >= 0 ? hit.row : -1, hit.item);
            if (k >= 0) {
                // the status bar: the launch latency first (Nsight's "latency" of a launch), then how to open it
                const LaunchTiming t = d->links.timing({ProgramItem::Kernel, k});
                QString text = drillDownHint(d->program->kernels[std::size_t(k)]);
                if (t.hasApi)
                    text = tr("Launch latency %1%2 · %3")
                               .arg(timemap::formatDuration(double(t.latencyNs)),
                                    t.queuedNs > 0 ? tr(" (queued %1)").arg(timemap::formatDuration(double(t.queuedNs))) : QString(), text);
                emit hint(text);
            }
            emit launchSelected(k);
            d->replot();
        }
        return true;
    }
    case QEvent::MouseButtonDblClick: {
        auto *e = static_cast<QMouseEvent *>(event);
        const int k = d->kernelAt(d->pl->hitTest(e->position()));
        if (k >= 0)
            emit launchActivated(k);
        return true;
    }
    case QEvent::Leave:
        d->pl->setHover(-1, -1);
        d->drag.leave();
        d->replot();
        break;
    case QEvent::KeyPress: {
        auto *e = static_cast<QKeyEvent *>(event);
        if (!d->program)
            break;
        const Range v = d->nav.view();
        if (d->nav.handleKey(e, d->drag.mouseOver(ar) ? timeAt(d->drag.lastMouse().x()) : (v.first + v.second) / 2))
            return true;
        switch (e->key()) {
        case Qt::Key_Return:
        case Qt::Key_Enter:
            if (d->selKernel >= 0)
                emit launchActivated(d->selKernel);
            return true;
        case Qt::Key_F:
            if (auto r = d->pl->rangeSelection()) {
                d->nav.navigate({std::min(r->first, r->second), std::max(r->first, r->second)});
            } else if (d->selKernel >= 0) {
                const auto &k = d->program->kernels[std::size_t(d->selKernel)];
                const double a = double(k.start - d->origin), b = double(k.end - d->origin), m = std::max((b - a) * 0.5, 20.0);
                d->nav.navigate({a - m, b + m});
            }
            return true;
        case Qt::Key_Up:
        case Qt::Key_Down:
            d->vscroll->setValue(d->vscroll->value() + (e->key() == Qt::Key_Up ? -1 : 1) * ProgramLayout::kStreamHeight);
            return true;
        case Qt::Key_PageUp:
        case Qt::Key_PageDown:
            d->vscroll->setValue(d->vscroll->value() + (e->key() == Qt::Key_PageUp ? -1 : 1) * d->vscroll->pageStep());
            return true;
        case Qt::Key_Escape:
            d->pl->setRuler(std::nullopt);
            d->pl->setRangeSelection(std::nullopt);
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

namespace {
// A fresh, never-shown view in the same state as `src`, laid out at `logical` (export).
std::unique_ptr<ProgramView> cloneView(const ProgramView &src, QSize logical, const QString &title)
{
    auto w = std::make_unique<ProgramView>();
    w->setAttribute(Qt::WA_DontShowOnScreen);
    w->setLayoutOptions(src.layoutOptions());
    w->setIdleGapThreshold(src.idleGapThreshold());
    w->setProgram(src.program());
    w->highlightKernel(src.highlightedKernel());
    w->selectLaunch(src.selectedLaunch());
    w->plottable()->setRangeSelection(src.plottable()->rangeSelection());
    w->findChild<QScrollBar *>()->hide();
    if (!title.isEmpty()) {
        w->plot()->plotLayout()->insertRow(0);
        auto *t = new QCPTextElement(w->plot(), title);
        QFont f = t->font();
        f.setPixelSize(15);
        f.setBold(true);
        t->setFont(f);
        t->setTextColor(tlpalette::labelText());
        w->plot()->plotLayout()->addElement(0, 0, t);
        w->plot()->plotLayout()->setRowStretchFactor(0, 0.001);
    }
    w->resize(logical);
    w->plot()->resize(logical);
    w->plot()->setViewport(QRect(QPoint(0, 0), logical));
    const auto r = src.visibleRange();
    w->setVisibleRange(r.first, r.second);
    w->plot()->replot(QCustomPlot::rpImmediateRefresh);
    w->plottable()->setScrollY(src.plottable()->scrollY());
    return w;
}
}  // namespace

QImage ProgramView::renderImage(QSize sizePx, double dpi, const QString &title) const
{
    auto w = cloneView(*this, plotexport::logicalSize(sizePx, dpi), title);
    return plotexport::render(w->plot(), sizePx, dpi);
}

bool ProgramView::exportImage(const QString &path, QSize sizePx, double dpi, const QString &title, QString *error) const
{
    std::unique_ptr<ProgramView> keep;
    return plotexport::write(path, sizePx, dpi, title, [&](QSize logical) {
        keep = cloneView(*this, logical, title);
        return keep->plot();
    }, error);
}
