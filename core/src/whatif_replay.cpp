// The what-if replay (docs/whatif.md, "Replay"): each CTA's items in dependency order relative to the CTA's
// start, then the CTAs on their SM slots (as recorded, or re-placed for --sms / --persistent).
#include "whatif_impl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <queue>

namespace ws {

namespace {

constexpr std::int64_t kUnset = INT64_MIN;

std::int64_t scaled(std::int64_t v, double f)
{
    return f == 1.0 ? v : std::int64_t(std::llround(double(v) * f));
}

bool goodFactor(double f) { return std::isfinite(f) && f > 0 && f <= 1000; }

}  // namespace

bool WhatIfParams::isDefault() const
{
    return stages == 0 && loadLatency == 1.0 && mma == 1.0 && epilogue == 1.0 && !overlapEpilogue && !persistent
        && sms == 0 && !dropCtaSync && slotsPerSm == 0 && sharedResources && !producerWarp
        && tileOrder == TileOrder::Recorded;
}

namespace {

inline double mmaScale(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i)
{
    if (!r.mmaFactor.empty() && m.itemMmaGroup[std::size_t(i)] >= 0)
        return r.fMma * r.mmaFactor[std::size_t(m.itemMmaGroup[std::size_t(i)])];
    return r.fMma;
}

// Inline copies for the replay's inner loop (the exported ones below are for the critical path walk).
inline std::int64_t lagNow(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i)
{
    if (m.itemDep[i] == DepKind::Collective)
        return scaled(m.itemLag[i], mmaScale(m, r, i));
    return m.itemLag[i];
}

inline std::int64_t durationNow(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i)
{
    const IntervalKind k = m.itemKind[i];
    const std::int64_t d = m.itemDur[i];
    if (isMmaLike(k))
        return scaled(d, mmaScale(m, r, i));
    if (k == IntervalKind::IssueLoad && r.producerWarp)
        return 0;
    if (isEpilogueKind(k))
        return scaled(d, r.fEpi);
    if (k == IntervalKind::Load)
        return scaled(d, r.fLoad);
    if (k == IntervalKind::Sync && r.dropSync)
        return 0;
    return d;
}

}  // namespace

std::int64_t itemLagNow(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i) { return lagNow(m, r, i); }

std::int64_t itemDuration(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i) { return durationNow(m, r, i); }

std::int32_t dataIssueItem(const WhatIfModel::Impl& m, const Replay& r, std::int32_t cta, std::int32_t k)
{
    const std::int32_t kmin = m.ctaKmin[cta];
    const std::int32_t own = m.kIssue[m.ctaKbase[cta] + k - kmin];
    if (r.issueShift <= 0)
        return own;
    const std::int32_t e = std::max(kmin, k - r.issueShift);
    const std::int32_t moved = m.kIssue[m.ctaKbase[cta] + e - kmin];
    return moved >= 0 ? moved : own;
}

void runReplay(const WhatIfModel::Impl& m, const WhatIfParams& p, std::vector<std::string>* notes, Replay& r,
               const std::vector<std::uint8_t>* redo)
{
    if (!goodFactor(p.loadLatency) || !goodFactor(p.mma) || !goodFactor(p.epilogue))
        throw WhatIfError("factors must be finite numbers > 0 and <= 1000");
    if (p.stages < 0 || p.stages > 64)
        throw WhatIfError("stages must be between 1 and 64");
    if (p.sms < 0 || p.sms > 4096)
        throw WhatIfError("sms must be between 1 and 4096");
    if (p.slotsPerSm < 0 || p.slotsPerSm > 64)
        throw WhatIfError("CTAs per SM must be between 1 and 64");
    const GraphSummary& s = m.summary;
    r.stages = 0;
    r.issueShift = 0;
    r.kernelEnd = 0;
    r.fLoad = p.loadLatency;
    r.fMma = p.mma;
    r.fEpi = p.epilogue;
    r.overlapEpilogue = p.overlapEpilogue;
    r.dropSync = p.dropCtaSync;
    r.stages = s.stages;
    if (p.stages > 0) {
        if (s.stages <= 0) {
            notes->push_back("--stages: the kernel records no ring slots (no loads with a slot): ignored");
        } else if (s.hasProducer) {
            r.stages = p.stages;
        } else if (p.stages >= s.stages) {
            r.issueShift = p.stages - s.stages;  // worker kernels: loads issued earlier in program order
        } else {
            notes->push_back("--stages: fewer stages than recorded cannot be replayed on a worker kernel "
                             "(its issue order is in its program): ignored");
        }
    }
    r.producerWarp = p.producerWarp && !s.hasProducer;
    if (p.producerWarp && s.hasProducer)
        notes->push_back("--producer-warp: the kernel has a producer warp already: nothing to move");
    if (p.dropCtaSync && s.syncEdges == 0)
        notes->push_back("--no-sync: the kernel has no CTA barriers (Sync) between its warps: nothing to drop");

    const std::size_t n = m.itemLane.size();
    const int nCta = int(m.ctaLaneBegin.size());
    // redo: re-simulate only these CTAs; the others keep the previous run's items (same parameters, same MMA
    // stretch: a CTA's own timeline depends on nothing outside it).
    if (!redo) {
        r.st.assign(n, kUnset);
        r.en.assign(n, kUnset);
        r.bound.assign(n, 0);
        r.clockFrom.assign(n, -1);
        r.ctaMainStart.assign(nCta, 0);
        r.ctaMainEnd.assign(nCta, 0);
        r.ctaDur.assign(nCta, 0);
        r.ctaFirstFlight.assign(nCta, 0);
    }
    r.ctaStart.assign(nCta, 0);
    r.ctaEnd.assign(nCta, 0);
    std::vector<std::int32_t> cursor, clockItem;
    std::vector<std::int64_t> clock;

    for (int c = 0; c < nCta; ++c) {
        if (!m.ctaPartner.empty() && m.ctaPartner[std::size_t(c)] >= 0) {  // a 2-CTA cluster: whatif_cluster.cpp
            const int b = m.ctaPartner[std::size_t(c)];
            if (c < b && (!redo || (*redo)[std::size_t(c)] || (*redo)[std::size_t(b)]))
                replayClusterPair(m, r, c, b);
            continue;
        }
        if (redo && !(*redo)[std::size_t(c)])
            continue;
        const int lb = m.ctaLaneBegin[c], le = m.ctaLaneEnd[c];
        if (redo) {
            for (int li = lb; li < le; ++li) {
                const int l = m.ctaLanes[li];
                for (std::int32_t i = m.laneBegin[l]; i < m.laneEnd[l]; ++i) {
                    r.st[i] = kUnset;
                    r.en[i] = kUnset;
                    r.bound[i] = 0;
                    r.clockFrom[i] = -1;
                }
            }
        }
        cursor.assign(le - lb, 0);
        clock.assign(le - lb, 0);
        clockItem.assign(le - lb, -1);
        for (int li = lb; li < le; ++li)
            cursor[li - lb] = m.laneBegin[m.ctaLanes[li]];
        int left = 0;
        for (int li = lb; li < le; ++li)
            left += cursor[li - lb] < m.laneEnd[m.ctaLanes[li]];
        while (left > 0) {
            bool progress = false;
            for (int li = lb; li < le; ++li) {
                const int l = m.ctaLanes[li];
                std::int32_t& i = cursor[li - lb];
                std::int64_t& cur = clock[li - lb];
                const std::int32_t iEnd = m.laneEnd[l];
                while (i < iEnd) {
                    if (r.st[i] == kUnset) {
                        r.st[i] = cur + m.itemGap[i];
                        r.clockFrom[i] = clockItem[li - lb];
                    }
                    const std::int64_t st = r.st[i];
                    std::int64_t dep = kUnset;
                    bool ready = true;
                    switch (m.itemDep[i]) {
                    case DepKind::None:
                        break;
                    case DepKind::Data: {
                        const std::int32_t k = m.itemKstep[i];
                        const std::int32_t iss = dataIssueItem(m, r, c, k);
                        if (iss < 0 || r.st[iss] == kUnset) {
                            ready = iss < 0;
                            break;
                        }
                        dep = r.st[iss] + scaled(m.kFlight[m.ctaKbase[c] + k - m.ctaKmin[c]], r.fLoad);
                        break;
                    }
                    case DepKind::Slot: {
                        const std::int32_t k = m.itemKstep[i] - r.stages;
                        if (k < m.ctaKmin[c] || k >= m.ctaKmin[c] + m.ctaKcount[c])
                            break;
                        const std::int32_t x = m.ctaKbase[c] + k - m.ctaKmin[c];
                        for (std::int32_t j = m.kRelBegin[x]; j < m.kRelEnd[x]; ++j) {
                            const std::int64_t e = r.st[m.relItems[j]];  // the arrive: Release's start
                            if (e == kUnset) {
                                ready = false;
                                break;
                            }
                            dep = std::max(dep, e);
                        }
                        break;
                    }
                    case DepKind::Sync:
                    case DepKind::Collective: {
                        if (r.dropSync && m.itemDep[i] == DepKind::Sync)
                            break;
                        const std::int32_t g = m.itemDepArg[i];
                        for (std::int32_t j = m.syncBegin[g]; j < m.syncEnd[g]; ++j) {
                            const std::int64_t s2 = r.st[m.syncItems[j]];
                            if (s2 == kUnset) {
                                ready = false;
                                break;
                            }
                            dep = std::max(dep, s2);
                        }
                        break;
                    }
                    case DepKind::Handoff: {  // whatif_epiwarp.cpp: the start of the consumers' Epilogue
                        const std::int64_t e = r.st[m.itemDepArg[i]];
                        if (e == kUnset)
                            ready = false;
                        else
                            dep = e;
                        break;
                    }
                    case DepKind::Order: {
                        const std::int64_t e = r.en[m.itemDepArg[i]];
                        if (e == kUnset)
                            ready = false;
                        else
                            dep = e;
                        break;
                    }
                    }
                    if (!ready)
                        break;
                    std::int64_t en;
                    if (m.itemDep[i] == DepKind::None || (m.itemDep[i] == DepKind::Sync && r.dropSync)) {
                        en = st + durationNow(m, r, i);
                    } else if (dep == kUnset) {
                        en = st + m.itemMinDur[i];  // the dependency does not exist in this replay (more stages)
                    } else {
                        const std::int64_t byDep = dep + lagNow(m, r, i);
                        const std::int64_t own = st + m.itemMinDur[i];
                        en = std::max(own, byDep);
                        r.bound[i] = byDep > own;
                    }
                    r.en[i] = en;
                    // The lane goes on after the latest end so far (phases may overlap in a recording); an
                    // epilogue that overlaps the next main loop does not hold the lane.
                    const bool aside = r.overlapEpilogue && isEpilogueKind(m.itemKind[i]) && m.itemLaterMma[i];
                    if (!aside && (clockItem[li - lb] < 0 || en >= cur)) {
                        cur = en;
                        clockItem[li - lb] = i;
                    }
                    ++i;
                    progress = true;
                    if (i == iEnd)
                        --left;
                }
            }
            if (!progress)
                throw WhatIfError("the replay cannot go on: the edited parameters make warps wait for each other "
                                  "in a cycle (CTA " + std::to_string(m.trace.ctas[c].blockLinear) + ")");
        }
        std::int64_t last = 0, mainS = kUnset, mainE = 0;
        for (int li = lb; li < le; ++li) {
            const int l = m.ctaLanes[li];
            for (std::int32_t i = m.laneBegin[l]; i < m.laneEnd[l]; ++i) {
                last = std::max(last, r.en[i]);
                if (isMmaLike(m.itemKind[i])) {
                    mainS = mainS == kUnset ? r.st[i] : std::min(mainS, r.st[i]);
                    mainE = std::max(mainE, r.en[i]);
                }
            }
        }
        r.ctaDur[c] = last + m.ctaEndGap[c];
        r.ctaMainStart[c] = mainS == kUnset ? 0 : mainS;
        r.ctaMainEnd[c] = mainS == kUnset ? last : mainE;
        if (m.ctaKcount[c] > 0 && m.kFlight[m.ctaKbase[c]] >= 0)
            r.ctaFirstFlight[c] = scaled(m.kFlight[m.ctaKbase[c]], r.fLoad);
    }

    // CTAs on their SM slots.
    r.ctaPred.assign(nCta, -1);
    r.ctaPersistentChain.assign(nCta, 0);
    r.ctaStartBase.assign(nCta, m.launchStart);
    r.ctaSm.assign(nCta, 0);
    for (int c = 0; c < nCta; ++c)
        r.ctaSm[c] = m.trace.ctas[c].smId;
    const bool makePersistent = p.persistent && !s.persistent;
    const bool reslot = p.slotsPerSm > 0 && !s.persistent;
    const int slotsPerSm = reslot ? p.slotsPerSm : std::max(1, s.slotsPerSm);
    if (p.slotsPerSm > 0 && s.persistent)
        notes->push_back("--ctas-per-sm: a persistent kernel's grid is sized to the SMs (its CTAs walk the tiles): "
                         "ignored");
    if (p.persistent && s.persistent)
        notes->push_back("--persistent: the kernel is persistent already (its CTAs walk several tiles): no change");
    if (p.sms > 0 && s.persistent)
        notes->push_back("--sms: a persistent kernel's CTAs are placed on the new SMs as recorded (the grid, and the "
                         "tiles each CTA walks, are not re-sized)");
    auto absMain = [&](int c, bool end) { return r.ctaStart[c] + (end ? r.ctaMainEnd[c] : r.ctaMainStart[c]); };
    if (p.sms == 0 && !makePersistent && !reslot) {
        for (int c : m.ctaOrder) {
            const int pred = m.ctaPred[c];
            r.ctaPred[c] = pred;
            r.ctaStartBase[c] = pred >= 0 ? r.ctaEnd[pred] : m.launchStart;
            r.ctaStart[c] = r.ctaStartBase[c] + m.ctaLag[c];
            placeClusterPartner(m, r, c);
            r.ctaEnd[c] = r.ctaStart[c] + r.ctaDur[c];
        }
    } else {
        std::vector<std::int64_t> firstLags, nextLags;
        for (int c = 0; c < nCta; ++c)
            (m.ctaPred[c] < 0 ? firstLags : nextLags).push_back(m.ctaLag[c]);
        const std::int64_t lagFirst = median(firstLags), lagNext = median(nextLags);
        const int sms = p.sms > 0 ? p.sms : std::max(1, s.smsUsed);
        const int nSlots = sms * slotsPerSm;
        using Slot = std::pair<std::int64_t, int>;  // (free time, slot)
        std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> free;
        std::vector<int> lastOf(nSlots, -1);
        for (int j = 0; j < nSlots; ++j)
            free.push({m.launchStart, j});
        for (int c : m.ctaOrder) {
            const auto [t, j] = free.top();
            free.pop();
            const int prev = lastOf[j];
            r.ctaPred[c] = prev;
            if (prev < 0) {
                r.ctaStartBase[c] = m.launchStart;
                r.ctaStart[c] = m.launchStart + lagFirst;
            } else if (makePersistent) {
                const std::int64_t x = r.overlapEpilogue ? absMain(prev, true) : r.ctaEnd[prev];
                const std::int64_t mainAt = std::max(x, absMain(prev, true) + r.ctaFirstFlight[c]);
                r.ctaStart[c] = std::max(r.ctaStart[prev], mainAt - r.ctaMainStart[c]);
                r.ctaStartBase[c] = r.ctaStart[c];
                r.ctaPersistentChain[c] = 1;
            } else {
                r.ctaStartBase[c] = r.ctaEnd[prev];
                r.ctaStart[c] = r.ctaEnd[prev] + lagNext;
            }
            placeClusterPartner(m, r, c);
            r.ctaEnd[c] = r.ctaStart[c] + r.ctaDur[c];
            r.ctaSm[c] = j / slotsPerSm;
            lastOf[j] = c;
            const std::int64_t next = makePersistent
                ? (r.overlapEpilogue ? absMain(c, true) : r.ctaEnd[c]) : r.ctaEnd[c];
            (void)t;
            free.push({next, j});
        }
    }
    std::int64_t lastEnd = INT64_MIN;
    for (int c = 0; c < nCta; ++c)
        lastEnd = std::max(lastEnd, r.ctaEnd[c]);
    r.kernelEnd = lastEnd + m.kernelEndGap;
}

WhatIfResult WhatIfModel::predict(const WhatIfParams& params, bool withTimeline) const
{
    WhatIfResult out;
    const Impl& g = *m;
    const std::lock_guard<std::mutex> lock(g.scratchLock);
    Replay& r = g.scratch;
    using Clock = std::chrono::steady_clock;
    auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    const Clock::time_point t0 = Clock::now();
    replayWithResources(g, params, &out.notes, r);
    out.measuredNs = g.launchEnd - g.launchStart;
    out.predictedNs = (params.tileOrder == TileOrder::Recorded ? r.kernelEnd : tileOrderEnd(g, params, r, &out.notes))
        - g.launchStart;
    const Clock::time_point t1 = Clock::now();
    out.path = walkCriticalPath(g, r);
    const Clock::time_point t2 = Clock::now();
    out.timing.replayMs = ms(t0, t1);
    out.timing.pathMs = ms(t1, t2);
    if (!withTimeline) {
        for (PathStep& st : out.path.steps)
            if (st.lane >= 0 && st.interval >= 0)
                st.interval = g.itemInterval[std::size_t(st.interval)];
        return out;
    }

    // The predicted timeline: the same lanes and CTAs, intervals at their replayed times. Inserted slot waits
    // appear where they last longer than 0.
    KernelTrace& pt = out.predicted;
    pt.run = g.trace.run;
    pt.launch = g.trace.launch;
    pt.launch.start = g.launchStart;
    pt.launch.end = r.kernelEnd;
    pt.ctas = g.trace.ctas;
    pt.phaseNames = g.trace.phaseNames;
    for (std::size_t c = 0; c < pt.ctas.size(); ++c) {
        pt.ctas[c].start = r.ctaStart[c];
        pt.ctas[c].end = r.ctaEnd[c];
    }
    std::vector<std::int32_t> newIndex(g.itemLane.size(), -1);
    pt.lanes.resize(g.trace.lanes.size());
    for (std::size_t l = 0; l < g.trace.lanes.size(); ++l) {
        const Lane& src = g.trace.lanes[l];
        Lane& dst = pt.lanes[l];
        dst.warpId = src.warpId;
        dst.ctaIndex = src.ctaIndex;
        dst.warpIndex = src.warpIndex;
        dst.warpgroup = src.warpgroup;
        dst.role = src.role;
        dst.roleName = src.roleName;
        const std::int64_t c0 = r.ctaStart[src.ctaIndex];
        const std::size_t cap = std::size_t(g.laneEnd[l] - g.laneBegin[l]);
        dst.start.reserve(cap);
        dst.duration.reserve(cap);
        dst.kind.reserve(cap);
        dst.slot.reserve(cap);
        dst.kstep.reserve(cap);
        for (std::int32_t i = g.laneBegin[l]; i < g.laneEnd[l]; ++i) {
            const std::int64_t d = r.en[i] - r.st[i];
            if (g.itemInterval[i] < 0 && d <= 0)
                continue;
            newIndex[i] = std::int32_t(dst.start.size());
            dst.start.push_back(c0 + r.st[i]);
            dst.duration.push_back(std::int32_t(std::min<std::int64_t>(d, INT32_MAX)));
            dst.kind.push_back(g.itemKind[i]);
            dst.slot.push_back(g.itemInterval[i] >= 0 ? src.slot[std::size_t(g.itemInterval[i])]
                                                      : std::int16_t(r.stages > 0 ? g.itemKstep[i] % r.stages : -1));
            dst.kstep.push_back(g.itemKstep[i]);
        }
    }
    // Loads: issue at the replayed IssueLoad, ready after the (scaled) flight.
    for (std::size_t c = 0; c < pt.ctas.size(); ++c) {
        for (std::int32_t k = 0; k < g.ctaKcount[c]; ++k) {
            const std::int32_t x = g.ctaKbase[c] + k;
            const std::int32_t iss = dataIssueItem(g, r, std::int32_t(c), g.ctaKmin[c] + k);
            if (iss < 0 || g.kFlight[x] < 0)
                continue;
            LoadTransfer ld;
            ld.ctaId = RowId(c);
            ld.kstep = g.ctaKmin[c] + k;
            ld.slot = std::int16_t(r.stages > 0 ? ld.kstep % r.stages : -1);
            ld.issue = r.ctaStart[c] + r.st[iss];
            ld.ready = ld.issue + std::int64_t(std::llround(double(g.kFlight[x]) * r.fLoad));
            pt.loads.push_back(ld);
        }
    }
    std::sort(pt.loads.begin(), pt.loads.end(), [](const LoadTransfer& a, const LoadTransfer& b) {
        return a.issue < b.issue;
    });
    for (PathStep& st : out.path.steps)
        if (st.lane >= 0 && st.interval >= 0)
            st.interval = newIndex[std::size_t(st.interval)];
    for (std::size_t c = 0; c < pt.ctas.size(); ++c)
        pt.ctas[c].smId = r.ctaSm[c];
    out.timing.timelineMs = ms(t2, Clock::now());
    return out;
}

WhatIfResult whatIf(const KernelTrace& trace, const WhatIfParams& params)
{
    return WhatIfModel::build(trace).predict(params);
}

}  // namespace ws
