#include "whatifdata.h"

#include "timelinepalette.h"

#include <QThreadPool>

#include <algorithm>
#include <numeric>

namespace ws::ui {

QString pathCauseLabel(PathCause c)
{
    switch (c) {
    case PathCause::LoadLatency: return QStringLiteral("Load latency");
    case PathCause::Mma: return QStringLiteral("MMA");
    case PathCause::BackPressure: return QStringLiteral("Back-pressure");
    case PathCause::Epilogue: return QStringLiteral("Epilogue");
    case PathCause::Ordering: return QStringLiteral("Ordering");
    case PathCause::Prologue: return QStringLiteral("Prologue");
    case PathCause::Tail: return QStringLiteral("Tail");
    case PathCause::Launch: return QStringLiteral("Launch");
    case PathCause::Other: return QStringLiteral("Other");
    case PathCause::Count_: break;
    }
    return QStringLiteral("?");
}

QString pathCauseKey(PathCause c)
{
    switch (c) {
    case PathCause::LoadLatency: return QStringLiteral("load_latency");
    case PathCause::Mma: return QStringLiteral("mma");
    case PathCause::BackPressure: return QStringLiteral("back_pressure");
    case PathCause::Epilogue: return QStringLiteral("epilogue");
    case PathCause::Ordering: return QStringLiteral("ordering");
    case PathCause::Prologue: return QStringLiteral("prologue");
    case PathCause::Tail: return QStringLiteral("tail");
    case PathCause::Launch: return QStringLiteral("launch");
    case PathCause::Other: return QStringLiteral("other");
    case PathCause::Count_: break;
    }
    return QStringLiteral("?");
}

QColor pathCauseColor(PathCause c)
{
    using K = ws::IntervalKind;
    switch (c) {
    case PathCause::LoadLatency: return tlpalette::kindColor(K::WaitData);
    case PathCause::Mma: return tlpalette::kindColor(K::MmaIssue);
    case PathCause::BackPressure: return tlpalette::kindColor(K::WaitSlot);
    case PathCause::Epilogue: return tlpalette::kindColor(K::Epilogue);
    case PathCause::Ordering: return tlpalette::kindColor(K::WaitOrder);
    case PathCause::Prologue: return tlpalette::kindColor(K::Sync);
    case PathCause::Tail: return QColor(0x88, 0x88, 0x88);
    case PathCause::Launch: return QColor(0x44, 0x44, 0x44);
    case PathCause::Other: return QColor(0xBB, 0xBB, 0xBB);
    case PathCause::Count_: break;
    }
    return Qt::black;
}

double Attribution::total() const { return std::accumulate(ns.begin(), ns.end(), 0.0); }

double Attribution::share(PathCause c) const
{
    const double t = total();
    return t > 0 ? ns[std::size_t(c)] / t : 0.0;
}

std::shared_ptr<GhostLanes> GhostLanes::fromIntervals(const KernelTrace& measured,
                                                      std::vector<std::vector<Interval>> perLane)
{
    auto g = std::make_shared<GhostLanes>();
    g->lanes.resize(measured.lanes.size());
    bool any = false;
    for (std::size_t i = 0; i < g->lanes.size(); ++i) {
        Lane& l = g->lanes[i];
        const Lane& m = measured.lanes[i];
        l.warpId = m.warpId;
        l.ctaIndex = m.ctaIndex;
        l.warpIndex = m.warpIndex;
        l.warpgroup = m.warpgroup;
        l.role = m.role;
        l.roleName = m.roleName;
        if (i >= perLane.size())
            continue;
        auto& v = perLane[i];
        std::stable_sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
        l.start.reserve(v.size());
        for (const Interval& iv : v) {
            l.start.push_back(iv.start);
            l.duration.push_back(std::int32_t(std::clamp<TimeNs>(iv.duration, 0, 0x7fffffff)));
            l.kind.push_back(iv.kind);
            l.slot.push_back(iv.slot);
            l.kstep.push_back(iv.kstep);
            g->start = any ? std::min(g->start, iv.start) : iv.start;
            g->end = any ? std::max(g->end, iv.start + iv.duration) : iv.start + iv.duration;
            any = true;
        }
    }
    g->resetIndex();
    return g;
}

QThreadPool* whatIfPool()
{
    static QThreadPool* pool = [] {
        auto* p = new QThreadPool;  // lives as long as the process (workers are joined at exit by Qt)
        p->setMaxThreadCount(1);
        p->setObjectName(QStringLiteral("whatif"));
        return p;
    }();
    return pool;
}

void GhostLanes::resetIndex()
{
    m_index.assign(lanes.size(), lod::SeriesIndex{});
    m_once = std::make_unique<std::once_flag[]>(lanes.size());
}

const lod::SeriesIndex& GhostLanes::laneIndex(std::size_t i) const
{
    if (m_index.size() != lanes.size() || !m_once) {
        static const lod::SeriesIndex unbuilt;  // resetIndex() not called: answers by walking the spans
        return unbuilt;
    }
    std::call_once(m_once[i], [&] { m_index[i].build(lod::laneRef(lanes[i])); });
    return m_index[i];
}

void GhostLanes::buildIndex()
{
    resetIndex();
    for (std::size_t i = 0; i < lanes.size(); ++i)
        laneIndex(i);
}

std::size_t GhostLanes::indexedLanes() const
{
    std::size_t n = 0;
    for (const lod::SeriesIndex& x : m_index)
        n += x.built();
    return n;
}

}  // namespace ws::ui
