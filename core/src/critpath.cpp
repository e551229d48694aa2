// The critical path of a replayed kernel and its attribution to causes (docs/whatif.md, "Critical path").
// The walk starts at the kernel's end and follows, from every node, the dependency that set its time.
#include "whatif_impl.h"

#include <algorithm>

namespace ws {

std::string_view causeName(Cause c)
{
    switch (c) {
    case Cause::LoadLatency: return "load_latency";
    case Cause::MmaThroughput: return "mma_throughput";
    case Cause::BackPressure: return "back_pressure";
    case Cause::Epilogue: return "epilogue";
    case Cause::Ordering: return "ordering";
    case Cause::Prologue: return "prologue";
    case Cause::Tail: return "tail";
    case Cause::Launch: return "launch";
    case Cause::Other: return "other";
    case Cause::Count_: break;
    }
    return "other";
}

std::string_view causeLabel(Cause c)
{
    switch (c) {
    case Cause::LoadLatency: return "load latency";
    case Cause::MmaThroughput: return "MMA throughput";
    case Cause::BackPressure: return "back-pressure (ring full)";
    case Cause::Epilogue: return "epilogue";
    case Cause::Ordering: return "ordering waits and barriers";
    case Cause::Prologue: return "prologue";
    case Cause::Tail: return "tail (last wave)";
    case Cause::Launch: return "launch and CTA scheduling";
    case Cause::Other: return "other (gaps, unnamed phases)";
    case Cause::Count_: break;
    }
    return "other";
}

namespace {

Cause causeOf(IntervalKind k)
{
    switch (k) {
    case IntervalKind::MmaIssue:
    case IntervalKind::MmaWait:
    case IntervalKind::Compute:
    case IntervalKind::Release:
        return Cause::MmaThroughput;
    case IntervalKind::IssueLoad:
    case IntervalKind::Load:
    case IntervalKind::WaitData:
        return Cause::LoadLatency;
    case IntervalKind::WaitSlot:
        return Cause::BackPressure;
    case IntervalKind::WaitOrder:
    case IntervalKind::Sync:
    case IntervalKind::WaitPartial:  // stream-K: waiting for another CTA's partial sums
        return Cause::Ordering;
    case IntervalKind::Epilogue:
    case IntervalKind::Store:
    case IntervalKind::Fixup:  // stream-K: partial sums written / read and added
        return Cause::Epilogue;
    case IntervalKind::Setup:
        return Cause::Prologue;
    default:
        return Cause::Other;
    }
}

}  // namespace

CriticalPath walkCriticalPath(const WhatIfModel::Impl& m, const Replay& r)
{
    CriticalPath cp;
    cp.graph = m.summary;
    cp.kernelStart = m.launchStart;
    cp.kernelEnd = r.kernelEnd;
    const int nCta = int(r.ctaStart.size());
    std::vector<PathStep> rev;
    auto seg = [&](PathStep::What w, TimeNs a, TimeNs b, Cause cause, int lane, int item, int cta, std::int32_t k) {
        PathStep s;
        s.what = w;
        s.start = a;
        s.end = b;
        s.cause = cause;
        s.lane = lane;
        s.interval = item;
        s.ctaIndex = cta;
        s.kstep = k;
        rev.push_back(s);
    };
    auto ctaOf = [&](std::int32_t i) { return m.trace.lanes[m.itemLane[i]].ctaIndex; };

    enum class N { KernelEnd, CtaEnd, CtaStart, ItemEnd, ItemStart, Done };
    N node = N::KernelEnd;
    std::int32_t at = -1;
    std::int64_t guard = std::int64_t(m.itemLane.size()) * 4 + std::int64_t(nCta) * 4 + 16;
    while (node != N::Done && guard-- > 0) {
        switch (node) {
        case N::KernelEnd: {
            int last = 0;
            for (int c = 1; c < nCta; ++c)
                if (r.ctaEnd[c] > r.ctaEnd[last])
                    last = c;
            seg(PathStep::What::KernelGap, r.ctaEnd[last], r.kernelEnd, Cause::Launch, -1, -1, last, -1);
            node = N::CtaEnd;
            at = last;
            break;
        }
        case N::CtaEnd: {
            const int c = at;
            std::int32_t best = -1;
            for (int li = m.ctaLaneBegin[c]; li < m.ctaLaneEnd[c]; ++li) {
                const int l = m.ctaLanes[li];
                for (std::int32_t i = m.laneBegin[l]; i < m.laneEnd[l]; ++i)
                    if (best < 0 || r.en[i] > r.en[best])
                        best = i;
            }
            if (best < 0) {
                seg(PathStep::What::CtaGap, r.ctaStart[c], r.ctaEnd[c], Cause::Other, -1, -1, c, -1);
                node = N::CtaStart;
                break;
            }
            seg(PathStep::What::CtaEnd, r.ctaStart[c] + r.en[best], r.ctaEnd[c], Cause::Other, -1, -1, c, -1);
            node = N::ItemEnd;
            at = best;
            break;
        }
        case N::CtaStart: {
            const int c = at;
            const int pred = r.ctaPred[c];
            if (pred < 0) {
                seg(PathStep::What::CtaGap, m.launchStart, r.ctaStart[c], Cause::Launch, -1, -1, c, -1);
                node = N::Done;
            } else if (r.ctaPersistentChain[c]) {
                // The chained CTA started inside its predecessor: continue at the predecessor's phase that
                // ended last before this start.
                std::int32_t best = -1;
                const TimeNs t = r.ctaStart[c];
                for (int li = m.ctaLaneBegin[pred]; li < m.ctaLaneEnd[pred]; ++li) {
                    const int l = m.ctaLanes[li];
                    for (std::int32_t i = m.laneBegin[l]; i < m.laneEnd[l]; ++i)
                        if (r.ctaStart[pred] + r.en[i] <= t && (best < 0 || r.en[i] > r.en[best]))
                            best = i;
                }
                if (best < 0) {
                    seg(PathStep::What::CtaGap, r.ctaStart[pred], t, Cause::Launch, -1, -1, c, -1);
                    node = N::CtaStart;
                    at = pred;
                } else {
                    seg(PathStep::What::CtaGap, r.ctaStart[pred] + r.en[best], t, Cause::Launch, -1, -1, c, -1);
                    node = N::ItemEnd;
                    at = best;
                }
            } else {
                seg(PathStep::What::CtaGap, r.ctaEnd[pred], r.ctaStart[c], Cause::Launch, -1, -1, c, -1);
                node = N::CtaEnd;
                at = pred;
            }
            break;
        }
        case N::ItemEnd: {
            const std::int32_t i = at;
            const int c = ctaOf(i);
            const TimeNs c0 = r.ctaStart[c];
            const int lane = m.itemLane[i];
            if (!r.bound[i]) {
                seg(PathStep::What::Interval, c0 + r.st[i], c0 + r.en[i],
                    m.itemDep[i] == DepKind::Handoff ? Cause::Epilogue : causeOf(m.itemKind[i]), lane, i, c,
                    m.itemKstep[i]);
                node = N::ItemStart;
                break;
            }
            const std::int64_t dep = r.en[i] - itemLagNow(m, r, i);
            // an epilogue warp's wait for the hand-off: the consumers' add into the staging (epilogue work)
            const Cause waitCause = m.itemDep[i] == DepKind::Handoff ? Cause::Epilogue : causeOf(m.itemKind[i]);
            seg(PathStep::What::Interval, c0 + dep, c0 + r.en[i], waitCause, lane, i, c, m.itemKstep[i]);
            switch (m.itemDep[i]) {
            case DepKind::Data: {
                std::int32_t iss = dataIssueItem(m, r, c, m.itemKstep[i]);
                const std::int32_t pss = partnerDataIssue(m, r, c, m.itemKstep[i]);  // a cluster partner's load
                if (pss >= 0)
                    iss = pss;
                const TimeNs i0 = r.ctaStart[ctaOf(iss)];
                seg(PathStep::What::LoadFlight, i0 + r.st[iss], c0 + dep, Cause::LoadLatency, m.itemLane[iss], iss,
                    ctaOf(iss), m.itemKstep[i]);
                node = N::ItemStart;
                at = iss;
                break;
            }
            case DepKind::Slot: {
                const std::int32_t k = m.itemKstep[i] - r.stages;
                const std::int32_t x = m.ctaKbase[c] + k - m.ctaKmin[c];
                std::int32_t best = m.relItems[m.kRelBegin[x]];
                for (std::int32_t j = m.kRelBegin[x]; j < m.kRelEnd[x]; ++j)
                    if (r.st[m.relItems[j]] > r.st[best])
                        best = m.relItems[j];
                const std::int32_t other = partnerSlotRelease(m, r, c, k);  // a cluster partner released it later
                if (other >= 0)
                    best = other;
                node = N::ItemStart;
                at = best;
                break;
            }
            case DepKind::Sync:
            case DepKind::Collective: {
                const std::int32_t g = m.itemDepArg[i];
                std::int32_t best = m.syncItems[m.syncBegin[g]];
                for (std::int32_t j = m.syncBegin[g]; j < m.syncEnd[g]; ++j)
                    if (r.st[m.syncItems[j]] > r.st[best])
                        best = m.syncItems[j];
                node = N::ItemStart;
                at = best;
                break;
            }
            case DepKind::Order:
                node = N::ItemEnd;
                at = m.itemDepArg[i];
                break;
            case DepKind::Flag:  // another CTA's Store released the flag: go on from its end there
                node = N::ItemEnd;
                at = m.flagPubItem[std::size_t(m.itemDepArg[i])];
                break;
            case DepKind::Handoff:  // the consumers' Epilogue began: go on from its start
                node = N::ItemStart;
                at = m.itemDepArg[i];
                break;
            case DepKind::None:
                node = N::ItemStart;
                break;
            }
            break;
        }
        case N::ItemStart: {
            const std::int32_t i = at;
            const int c = ctaOf(i);
            const TimeNs c0 = r.ctaStart[c];
            const int lane = m.itemLane[i];
            const std::int32_t prev = r.clockFrom[i];
            if (prev < 0) {
                seg(PathStep::What::Gap, c0, c0 + r.st[i], Cause::Prologue, lane, -1, c, -1);
                node = N::CtaStart;
                at = c;
                break;
            }
            seg(PathStep::What::Gap, c0 + r.en[prev], c0 + r.st[i], Cause::Other, lane, -1, c, -1);
            node = N::ItemEnd;
            at = prev;
            break;
        }
        case N::Done:
            break;
        }
    }
    if (node != N::Done)
        throw WhatIfError("internal error: the critical path walk did not reach the launch");

    // Attribution (every segment, in time order) and the tail.
    std::reverse(rev.begin(), rev.end());
    std::vector<TimeNs> smLast;
    {
        std::vector<std::pair<int, TimeNs>> v;
        for (int c = 0; c < nCta; ++c)
            v.push_back({r.ctaSm[c], r.ctaEnd[c]});
        std::sort(v.begin(), v.end());
        TimeNs tail = r.kernelEnd;
        for (std::size_t j = 0; j < v.size(); ++j)
            if (j + 1 == v.size() || v[j + 1].first != v[j].first)
                tail = std::min(tail, v[j].second);
        cp.tailStart = tail;
    }
    for (const PathStep& s : rev) {
        const double len = double(s.end - s.start);
        if (s.what != PathStep::What::KernelGap && s.end > cp.tailStart) {
            const double inTail = double(s.end - std::max(s.start, cp.tailStart));
            cp.attributionNs[int(Cause::Tail)] += inTail;
            cp.attributionNs[int(s.cause)] += len - inTail;
        } else {
            cp.attributionNs[int(s.cause)] += len;
        }
        if (s.end != s.start)
            cp.steps.push_back(s);
    }
    return cp;
}

CriticalPath criticalPath(const KernelTrace& trace)
{
    return WhatIfModel::build(trace).predict(WhatIfParams{}, false).path;
}

}  // namespace ws
