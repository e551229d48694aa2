#include "whatifengine.h"

#include <warpstage/critpath.h>
#include <warpstage/whatif.h>

#include <QStringList>

#include <algorithm>
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

QString notesOf(const std::vector<std::string>& notes)
{
    QStringList l;
    for (const std::string& n : notes)
        l << QString::fromStdString(n);
    return l.join(QLatin1Char('\n'));
}

}  // namespace

std::shared_ptr<const CriticalPathView> analyzeCriticalPath(const KernelTrace& trace)
{
    try {
        const ws::CriticalPath p = ws::criticalPath(trace);
        auto v = std::make_shared<CriticalPathView>();
        v->segments = segmentsOf(p);
        v->attribution = attributionOf(p);
        v->measuredNs = trace.launch.end - trace.launch.start;
        if (p.graph.reduced)
            v->note = QStringLiteral("Reduced analysis: ") + notesOf(p.graph.missing);
        return v;
    } catch (const ws::WhatIfError&) {
        return nullptr;
    }
}

std::function<Prediction(const WhatIfParams&, bool)> makePredictor(std::shared_ptr<const KernelTrace> trace)
{
    // the graph is built once, by the first replay, on the worker thread that runs it
    struct State {
        std::mutex mutex;
        std::optional<ws::WhatIfModel> model;
        QString buildError;
        bool built = false;
    };
    auto state = std::make_shared<State>();
    return [trace, state](const WhatIfParams& gp, bool withTimeline) {
        Prediction out;
        out.params = gp;
        out.measuredNs = trace->launch.end - trace->launch.start;
        std::lock_guard<std::mutex> lock(state->mutex);
        if (!state->built) {
            state->built = true;
            try {
                state->model.emplace(ws::WhatIfModel::build(*trace));
            } catch (const ws::WhatIfError& e) {
                state->buildError = QString::fromStdString(e.what());
            }
        }
        if (!state->model) {
            out.error = state->buildError.isEmpty() ? QStringLiteral("This kernel cannot be replayed.") : state->buildError;
            return out;
        }
        ws::WhatIfParams p;
        p.stages = gp.stages;
        p.loadLatency = gp.loadLatency;
        p.mma = gp.mmaTime;
        p.epilogue = gp.epilogueTime;
        p.overlapEpilogue = gp.epilogueOverlapped;
        p.persistent = gp.persistent;
        p.sms = gp.sms;
        try {
            ws::WhatIfResult r = state->model->predict(p, withTimeline);
            out.measuredNs = r.measuredNs;
            out.predictedNs = r.predictedNs;
            out.attribution = attributionOf(r.path);
            out.note = notesOf(r.notes);
            if (withTimeline && r.predicted.lanes.size() == trace->lanes.size()) {
                auto g = std::make_shared<GhostLanes>();
                g->lanes = std::move(r.predicted.lanes);
                g->start = r.path.kernelStart;
                g->end = r.path.kernelEnd;
                g->buildIndex();
                out.ghost = std::move(g);
            }
        } catch (const ws::WhatIfError& e) {
            out.error = QString::fromStdString(e.what());
        }
        return out;
    };
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
