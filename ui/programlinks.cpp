#include "programlinks.h"

#include <algorithm>
#include <map>
#include <unordered_map>

void ProgramLinks::build(const ws::ProgramTrace *p)
{
    m_program = p;
    m_apiOfKernel.clear();
    m_apiOfMemOp.clear();
    m_launchesOfApi.clear();
    m_prevEndKernel.clear();
    m_prevEndMemOp.clear();
    if (!p)
        return;
    // correlation id -> API span (0 means "not known": never matched)
    std::unordered_map<std::uint32_t, int> apiOfCorr;
    apiOfCorr.reserve(p->apiSpans.size());
    for (int i = 0; i < int(p->apiSpans.size()); ++i)
        apiOfCorr.emplace(p->apiSpans[std::size_t(i)].correlationId, i);
    m_launchesOfApi.assign(p->apiSpans.size(), {});
    auto link = [&](std::uint32_t corr, LaunchRef ref) {
        if (corr == 0)  // unknown: the records that lack one must not pair up
            return -1;
        const auto it = apiOfCorr.find(corr);
        if (it == apiOfCorr.end())
            return -1;
        m_launchesOfApi[std::size_t(it->second)].push_back(ref);
        return it->second;
    };
    m_apiOfKernel.resize(p->kernels.size());
    for (int k = 0; k < int(p->kernels.size()); ++k)
        m_apiOfKernel[std::size_t(k)] = link(p->kernels[std::size_t(k)].correlationId, {ProgramItem::Kernel, k});
    m_apiOfMemOp.resize(p->memOps.size());
    for (int m = 0; m < int(p->memOps.size()); ++m)
        m_apiOfMemOp[std::size_t(m)] = link(p->memOps[std::size_t(m)].correlationId, {ProgramItem::MemOp, m});

    // the end of the work that ran before each record on its stream (for the queueing time)
    struct Rec {
        ws::TimeNs start, end;
        LaunchRef ref;
    };
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Rec>> streams;
    for (int k = 0; k < int(p->kernels.size()); ++k) {
        const auto &L = p->kernels[std::size_t(k)];
        streams[{L.contextId, L.streamId}].push_back({L.start, L.end, {ProgramItem::Kernel, k}});
    }
    for (int m = 0; m < int(p->memOps.size()); ++m) {
        const auto &M = p->memOps[std::size_t(m)];
        streams[{M.contextId, M.streamId}].push_back({M.start, M.end, {ProgramItem::MemOp, m}});
    }
    m_prevEndKernel.assign(p->kernels.size(), std::numeric_limits<ws::TimeNs>::min());
    m_prevEndMemOp.assign(p->memOps.size(), std::numeric_limits<ws::TimeNs>::min());
    for (auto &[key, recs] : streams) {
        std::stable_sort(recs.begin(), recs.end(), [](const Rec &a, const Rec &b) { return a.start < b.start; });
        ws::TimeNs prev = std::numeric_limits<ws::TimeNs>::min();
        for (const Rec &r : recs) {
            (r.ref.kind == ProgramItem::Kernel ? m_prevEndKernel : m_prevEndMemOp)[std::size_t(r.ref.index)] = prev;
            prev = std::max(prev, r.end);
        }
    }
}

int ProgramLinks::apiOf(LaunchRef r) const
{
    const auto &v = r.kind == ProgramItem::Kernel ? m_apiOfKernel : m_apiOfMemOp;
    if (r.kind != ProgramItem::Kernel && r.kind != ProgramItem::MemOp)
        return -1;
    return r.index >= 0 && r.index < int(v.size()) ? v[std::size_t(r.index)] : -1;
}

const std::vector<LaunchRef> &ProgramLinks::launchesOf(int api) const
{
    static const std::vector<LaunchRef> none;
    return api >= 0 && api < int(m_launchesOfApi.size()) ? m_launchesOfApi[std::size_t(api)] : none;
}

LaunchTiming ProgramLinks::timing(LaunchRef r) const
{
    LaunchTiming t;
    const int a = apiOf(r);
    if (a < 0 || !m_program)
        return t;
    const ws::ApiSpan &api = m_program->apiSpans[std::size_t(a)];
    const bool kernel = r.kind == ProgramItem::Kernel;
    const ws::TimeNs start = kernel ? m_program->kernels[std::size_t(r.index)].start : m_program->memOps[std::size_t(r.index)].start;
    const ws::TimeNs prevEnd = (kernel ? m_prevEndKernel : m_prevEndMemOp)[std::size_t(r.index)];
    t.hasApi = true;
    t.latencyNs = start - api.start;
    // queued: from the moment the call returned until the stream's previous work ended (at most until the start)
    const ws::TimeNs streamFree = std::min(prevEnd, start);  // prevEnd is the lowest TimeNs when nothing ran before
    t.queuedNs = streamFree > api.end ? streamFree - api.end : 0;
    return t;
}

std::vector<GapInfo> ProgramLinks::gaps(ws::TimeNs minGapNs) const
{
    std::vector<GapInfo> out;
    if (!m_program)
        return out;
    const auto gaps = ws::idleGaps(*m_program, minGapNs);
    out.reserve(gaps.size());
    std::unordered_map<ws::TimeNs, std::size_t> byStart, byEnd;
    for (const auto &g : gaps) {
        byStart.emplace(g.start, out.size());
        byEnd.emplace(g.end, out.size());
        out.push_back({g, {}, {}});
    }
    if (out.empty())
        return out;
    // a gap starts where a busy stretch ends (the end of a record) and ends where the next record starts
    auto visit = [&](LaunchRef ref, ws::TimeNs start, ws::TimeNs end) {
        if (auto it = byStart.find(end); it != byStart.end()) {
            LaunchRef &b = out[it->second].before;
            if (!b.valid())
                b = ref;
        }
        if (auto it = byEnd.find(start); it != byEnd.end()) {
            LaunchRef &a = out[it->second].after;
            if (!a.valid())
                a = ref;
        }
    };
    for (int k = 0; k < int(m_program->kernels.size()); ++k)
        visit({ProgramItem::Kernel, k}, m_program->kernels[std::size_t(k)].start, m_program->kernels[std::size_t(k)].end);
    for (int m = 0; m < int(m_program->memOps.size()); ++m)
        visit({ProgramItem::MemOp, m}, m_program->memOps[std::size_t(m)].start, m_program->memOps[std::size_t(m)].end);
    return out;
}

namespace programtext {
QString launchName(const ws::ProgramTrace &p, LaunchRef r)
{
    if (!r.valid())
        return QStringLiteral("nothing");
    if (r.kind == ProgramItem::Kernel)
        return QString::fromStdString(ws::kernelFamily(p.kernels[std::size_t(r.index)].name));
    return programpalette::memOpLabel(p.memOps[std::size_t(r.index)].kind);
}
}  // namespace programtext
