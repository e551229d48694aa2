#include "whatifengine.h"

#include <warpstage/critpath.h>
#include <warpstage/whatif.h>

#include <QStringList>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>

namespace ws::ui {

namespace {

PathCause fromCore(ws::Cause c)
{
    // the GUI's causes are core's, in core's order (whatifdata.h / critpath.h)
    const int i = int(c);
    return i >= 0 && i < kPathCauseCount ? PathCause(i) : PathCause::Other;
}

Attribution attributionOf(const ws::CriticalPath& p)
{
    Attribution a;
    for (int i = 0; i < ws::kCauseCount; ++i)
        a.ns[std::size_t(fromCore(ws::Cause(i)))] += p.attributionNs[std::size_t(i)];
    return a;
}

std::vector<PathSegment> segmentsOf(const ws::CriticalPath& p)
{
    std::vector<PathSegment> out;
    out.reserve(p.steps.size());
    for (const ws::PathStep& s : p.steps) {
        if (s.end <= s.start)
            continue;
        // a load in flight is drawn on the producer lane that issued it; CTA and kernel gaps are on no lane
        const bool onLane = s.what != ws::PathStep::What::CtaGap && s.what != ws::PathStep::What::KernelGap &&
                            s.what != ws::PathStep::What::CtaEnd;
        out.push_back({onLane ? s.lane : -1, s.start, s.end, fromCore(s.cause)});
    }
    return out;
}

double msSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

QString notesOf(const std::vector<std::string>& notes)
{
    QStringList l;
    for (const std::string& n : notes)
        l << QString::fromStdString(n);
    return l.join(QLatin1Char('\n'));
}

}  // namespace

struct WhatIfKernel::State {
    std::mutex mutex;
    std::optional<ws::WhatIfModel> model;
    QString buildError;
    bool built = false;
    Timing timing;

    // Builds the graph on the first call; false (and buildError) when the kernel cannot be analysed. cancel: a
    // build stopped by it keeps nothing and returns false with *cancelled set; the next call builds again.
    bool ensureModel(const KernelTrace& trace, const std::atomic<bool>* cancel = nullptr, bool* cancelled = nullptr)
    {
        if (!built) {
            const auto t0 = std::chrono::steady_clock::now();
            try {
                model.emplace(ws::WhatIfModel::build(trace, cancel));
                built = true;
            } catch (const ws::WhatIfCancelled&) {
                if (cancelled)
                    *cancelled = true;
            } catch (const ws::WhatIfError& e) {
                built = true;
                buildError = QString::fromStdString(e.what());
            }
            timing.buildMs = msSince(t0);
        }
        return model.has_value();
    }
};

WhatIfKernel::WhatIfKernel(std::shared_ptr<const KernelTrace> trace) : m_trace(std::move(trace)), m(std::make_unique<State>()) {}
WhatIfKernel::~WhatIfKernel() = default;

WhatIfKernel::Timing WhatIfKernel::lastTiming() const
{
    std::lock_guard<std::mutex> lock(m->mutex);
    return m->timing;
}

std::shared_ptr<const CriticalPathView> WhatIfKernel::criticalPath()
{
    std::lock_guard<std::mutex> lock(m->mutex);
    if (!m_trace || !m->ensureModel(*m_trace))
        return nullptr;
    try {
        // the unchanged replay's path is the measured kernel's (critpath.cpp: criticalPath())
        const ws::CriticalPath p = m->model->predict(ws::WhatIfParams{}, false).path;
        auto v = std::make_shared<CriticalPathView>();
        v->segments = segmentsOf(p);
        v->attribution = attributionOf(p);
        v->measuredNs = m_trace->launch.end - m_trace->launch.start;
        if (p.graph.reduced)
            v->note = QStringLiteral("Reduced analysis: ") + notesOf(p.graph.missing);
        return v;
    } catch (const ws::WhatIfError&) {
        return nullptr;
    }
}

Prediction WhatIfKernel::predict(const WhatIfParams& gp, bool withTimeline, const std::atomic<bool>* cancel)
{
    ws::WhatIfParams p;
    p.stages = gp.stages;
    p.loadLatency = gp.loadLatency;
    p.mma = gp.mmaTime;
    p.epilogue = gp.epilogueTime;
    p.overlapEpilogue = gp.epilogueOverlapped;
    p.persistent = gp.persistent;
    p.sms = gp.sms;
    p.dropCtaSync = gp.noSync;
    p.slotsPerSm = gp.ctasPerSm;
    p.producerWarp = gp.producerWarp;
    p.sharedResources = gp.sharedResources;
    p.loadBandwidth = gp.loadBandwidth;
    p.tileOrder = static_cast<ws::TileOrder>(gp.tileOrder);
    Prediction out = predict(p, withTimeline, cancel);
    out.params = gp;
    return out;
}

Prediction WhatIfKernel::predict(const ws::WhatIfParams& p, bool withTimeline, const std::atomic<bool>* cancel)
{
    Prediction out;
    std::lock_guard<std::mutex> lock(m->mutex);
    if (!m_trace) {
        out.error = QStringLiteral("This kernel cannot be replayed.");
        return out;
    }
    out.measuredNs = m_trace->launch.end - m_trace->launch.start;
    bool cancelled = false;
    if (!m->ensureModel(*m_trace, cancel, &cancelled)) {
        out.error = cancelled ? QString::fromStdString(ws::WhatIfCancelled().what())
            : m->buildError.isEmpty() ? QStringLiteral("This kernel cannot be replayed.") : m->buildError;
        return out;
    }
    try {
        ws::WhatIfResult r = m->model->predict(p, withTimeline, cancel);
        m->timing.replayMs = r.timing.replayMs;
        m->timing.pathMs = r.timing.pathMs;
        m->timing.timelineMs = r.timing.timelineMs;
        m->timing.ghostMs = 0;
        out.measuredNs = r.measuredNs;
        out.predictedNs = r.predictedNs;
        out.attribution = attributionOf(r.path);
        out.note = notesOf(r.notes);
        if (r.path.graph.reduced)  // what the trace lacks, as `warpstage whatif` prints it (session 10)
            out.note = (out.note.isEmpty() ? QString() : out.note + QLatin1Char('\n'))
                + QStringLiteral("Reduced analysis: ") + notesOf(r.path.graph.missing);
        if (withTimeline && r.predicted.lanes.size() == m_trace->lanes.size()) {
            const auto t0 = std::chrono::steady_clock::now();
            auto g = std::make_shared<GhostLanes>();
            g->lanes = std::move(r.predicted.lanes);
            g->start = r.path.kernelStart;
            g->end = r.path.kernelEnd;
            g->resetIndex();  // each lane's index is built when it is first drawn (the visible lanes only)
            out.ghost = std::move(g);
            m->timing.ghostMs = msSince(t0);
        }
    } catch (const ws::WhatIfError& e) {
        out.error = QString::fromStdString(e.what());
    }
    return out;
}

std::shared_ptr<const CriticalPathView> analyzeCriticalPath(const KernelTrace& trace)
{
    // borrowed for the call: the WhatIfKernel does not outlive `trace`
    return WhatIfKernel(std::shared_ptr<const KernelTrace>(&trace, [](const KernelTrace*) {})).criticalPath();
}

WhatIfPredictor makePredictor(std::shared_ptr<WhatIfKernel> kernel)
{
    return [kernel](const WhatIfParams& p, bool withTimeline, const std::atomic<bool>* cancel) {
        return kernel->predict(p, withTimeline, cancel);
    };
}

WhatIfPredictor makePredictor(std::shared_ptr<const KernelTrace> trace)
{
    return makePredictor(std::make_shared<WhatIfKernel>(std::move(trace)));
}

int recordedStages(const KernelTrace& trace)
{
    int ring = 0;
    for (const Lane& l : trace.lanes)
        for (auto s : l.slot)
            ring = std::max(ring, int(s) + 1);
    return std::max(1, ring);
}

int recordedSms(const KernelTrace& trace)
{
    std::set<int> sms;
    for (const Cta& c : trace.ctas)
        sms.insert(c.smId);
    return std::max(1, int(sms.size()));
}

}  // namespace ws::ui
