// The dependency graph of a traced kernel (docs/whatif.md, "The graph"): items, their dependencies and the
// lag recorded behind each, CTA slots on the SMs.
#include "whatif_impl.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace ws {

namespace {

constexpr std::int64_t kNone = -1;

}  // namespace

WhatIfModel::WhatIfModel(std::unique_ptr<Impl> impl) : m(std::move(impl)) {}
WhatIfModel::WhatIfModel(WhatIfModel&&) noexcept = default;
WhatIfModel& WhatIfModel::operator=(WhatIfModel&&) noexcept = default;
WhatIfModel::~WhatIfModel() = default;
const GraphSummary& WhatIfModel::summary() const { return m->summary; }

WhatIfModel WhatIfModel::build(const KernelTrace& trace, const std::atomic<bool>* cancel)
{
    if (trace.ctas.empty())
        throw WhatIfError("the kernel has no CTAs recorded (an untraced launch?): nothing to analyse");
    if (trace.intervalCount() == 0)
        throw WhatIfError("the kernel has no per-warp phases recorded (an untraced launch?): nothing to analyse");

    auto impl = std::make_unique<Impl>();
    Impl& g = *impl;
    g.buildCancel = cancel;  // checkBuildCancelled(g) between passes and CTAs; a throw frees the half-built impl
    checkBuildCancelled(g);
    // The model keeps what the graph, the replay and the predicted timeline read: not the stall samples, source
    // texts and scopes a viewer's trace carries (copying them made the build slower and the model bigger).
    g.trace.run = trace.run;
    g.trace.launch = trace.launch;
    g.trace.ctas = trace.ctas;
    g.trace.lanes.reserve(trace.lanes.size());  // lane by lane: a 1 M-interval copy is a cancellable while
    for (const Lane& l : trace.lanes) {
        if ((g.trace.lanes.size() & 63) == 0)
            checkBuildCancelled(g);
        g.trace.lanes.push_back(l);
    }
    g.trace.tiles = trace.tiles;
    g.trace.loads = trace.loads;
    g.trace.phaseNames = trace.phaseNames;
    const KernelTrace& t = g.trace;
    checkBuildCancelled(g);
    const int nCta = int(t.ctas.size());
    const int nLane = int(t.lanes.size());
    GraphSummary& s = g.summary;
    s.ctas = nCta;
    s.lanes = nLane;
    g.launchStart = t.launch.start;
    g.launchEnd = t.launch.end;
    if (g.launchEnd <= g.launchStart) {  // no CUPTI record: the traced span stands in for the launch
        g.launchStart = std::min(t.firstStart(), t.ctas.front().start);
        g.launchEnd = t.lastEnd();
        for (const Cta& c : t.ctas)
            g.launchStart = std::min(g.launchStart, c.start), g.launchEnd = std::max(g.launchEnd, c.end);
    }

    // Lanes grouped per CTA.
    g.ctaLaneBegin.assign(nCta, 0);
    g.ctaLaneEnd.assign(nCta, 0);
    {
        std::vector<std::int32_t> count(nCta, 0);
        for (const Lane& l : t.lanes) {
            if (l.ctaIndex < 0 || l.ctaIndex >= nCta)
                throw WhatIfError("a warp refers to a CTA that is not in the kernel (corrupt trace)");
            ++count[l.ctaIndex];
        }
        int acc = 0;
        for (int c = 0; c < nCta; ++c) {
            g.ctaLaneBegin[c] = acc;
            acc += count[c];
            g.ctaLaneEnd[c] = g.ctaLaneBegin[c];
        }
        g.ctaLanes.assign(nLane, 0);
        for (int l = 0; l < nLane; ++l)
            g.ctaLanes[g.ctaLaneEnd[t.lanes[l].ctaIndex]++] = l;
    }

    bool anyRole = false;
    for (const Lane& l : t.lanes) {
        anyRole = anyRole || l.role != WarpRole::Unknown;
        s.hasProducer = s.hasProducer || l.role == WarpRole::Producer;
    }
    for (const LoadTransfer& ld : t.loads)
        s.stages = std::max(s.stages, int(ld.slot) + 1);

    // Items.
    g.laneBegin.assign(nLane, 0);
    g.laneEnd.assign(nLane, 0);
    const std::size_t reserve = t.intervalCount() + t.intervalCount() / 8 + 16;
    // Reserve every item array: growing ten 1 M-element arrays by doubling cost more (copies, page faults) than
    // filling them.
    g.itemLane.reserve(reserve);
    g.itemInterval.reserve(reserve);
    g.itemKind.reserve(reserve);
    g.itemKstep.reserve(reserve);
    g.itemGap.reserve(reserve);
    g.itemDur.reserve(reserve);
    g.itemDep.reserve(reserve);
    g.itemDepArg.reserve(reserve);
    g.itemLag.reserve(reserve);
    g.itemMinDur.reserve(reserve);
    g.itemLaterMma.reserve(reserve);
    auto push = [&](int lane, int iv, IntervalKind k, std::int32_t kstep, std::int64_t gap, std::int64_t dur) {
        g.itemLane.push_back(lane);
        g.itemInterval.push_back(iv);
        g.itemKind.push_back(k);
        g.itemKstep.push_back(kstep);
        g.itemGap.push_back(gap);
        g.itemDur.push_back(dur);
        g.itemDep.push_back(DepKind::None);
        g.itemDepArg.push_back(-1);
        g.itemLag.push_back(0);
        g.itemMinDur.push_back(0);
        g.itemLaterMma.push_back(0);
        return std::int32_t(g.itemLane.size() - 1);
    };
    std::vector<std::int64_t> mst;  // recorded start of each item relative to its CTA start
    mst.reserve(reserve);
    for (int c = 0; c < nCta; ++c) {
        const TimeNs c0 = t.ctas[c].start;
        for (int li = g.ctaLaneBegin[c]; li < g.ctaLaneEnd[c]; ++li) {
            checkBuildCancelled(g);
            const int l = g.ctaLanes[li];
            const Lane& lane = t.lanes[l];
            g.laneBegin[l] = std::int32_t(g.itemLane.size());
            TimeNs prevEnd = c0;
            bool prevWaitSlot = false;
            for (std::size_t i = 0; i < lane.size(); ++i) {
                const IntervalKind k = lane.kind[i];
                const std::int64_t gap = lane.start[i] - prevEnd;
                std::int64_t gapReal = gap;
                if (k == IntervalKind::IssueLoad && lane.role == WarpRole::Producer && !prevWaitSlot) {
                    push(l, -1, IntervalKind::WaitSlot, lane.kstep[i], gap, 0);
                    mst.push_back(lane.start[i] - c0);
                    gapReal = 0;
                }
                push(l, int(i), k, lane.kstep[i], gapReal, lane.duration[i]);
                mst.push_back(lane.start[i] - c0);
                prevEnd = std::max(prevEnd, lane.end(i));
                prevWaitSlot = k == IntervalKind::WaitSlot;
            }
            g.laneEnd[l] = std::int32_t(g.itemLane.size());
            bool later = false;
            for (std::int32_t it = g.laneEnd[l] - 1; it >= g.laneBegin[l]; --it) {
                g.itemLaterMma[it] = later;
                later = later || isMmaLike(g.itemKind[it]);
            }
        }
    }
    const std::int64_t nItem = std::int64_t(g.itemLane.size());
    s.nodes = nItem;
    auto mend = [&](std::int32_t it) { return mst[it] + g.itemDur[it]; };

    // Per-CTA kstep tables.
    checkBuildCancelled(g);
    g.ctaKmin.assign(nCta, 0);
    g.ctaKcount.assign(nCta, 0);
    g.ctaKbase.assign(nCta, 0);
    {
        std::vector<std::int32_t> kmax(nCta, -1);
        std::vector<std::int32_t> kmin(nCta, INT32_MAX);
        for (std::int64_t it = 0; it < nItem; ++it) {
            const std::int32_t k = g.itemKstep[it];
            if (k < 0)
                continue;
            const int c = t.lanes[g.itemLane[it]].ctaIndex;
            kmin[c] = std::min(kmin[c], k);
            kmax[c] = std::max(kmax[c], k);
        }
        for (const LoadTransfer& ld : t.loads) {
            if (ld.kstep < 0 || ld.ctaId < 0 || ld.ctaId >= nCta)
                continue;
            kmin[ld.ctaId] = std::min(kmin[ld.ctaId], ld.kstep);
            kmax[ld.ctaId] = std::max(kmax[ld.ctaId], ld.kstep);
        }
        std::int32_t acc = 0;
        for (int c = 0; c < nCta; ++c) {
            g.ctaKmin[c] = kmax[c] < 0 ? 0 : kmin[c];
            g.ctaKcount[c] = kmax[c] < 0 ? 0 : kmax[c] - kmin[c] + 1;
            g.ctaKbase[c] = acc;
            acc += g.ctaKcount[c];
        }
        g.kIssue.assign(acc, -1);
        g.kFlight.assign(acc, kNone);
        g.kRelBegin.assign(acc, 0);
        g.kRelEnd.assign(acc, 0);
    }
    auto kidx = [&](int c, std::int32_t k) -> std::int32_t {
        if (k < g.ctaKmin[c] || k >= g.ctaKmin[c] + g.ctaKcount[c])
            return -1;
        return g.ctaKbase[c] + k - g.ctaKmin[c];
    };
    for (const LoadTransfer& ld : t.loads) {
        if (ld.ctaId < 0 || ld.ctaId >= nCta)
            continue;
        const std::int32_t x = kidx(ld.ctaId, ld.kstep);
        if (x >= 0)
            g.kFlight[x] = std::max<std::int64_t>(g.kFlight[x], ld.ready - ld.issue);
    }
    checkBuildCancelled(g);
    {
        std::vector<std::int32_t> relCount(g.kIssue.size(), 0);
        for (std::int64_t it = 0; it < nItem; ++it) {
            const int c = t.lanes[g.itemLane[it]].ctaIndex;
            const std::int32_t x = kidx(c, g.itemKstep[it]);
            if (x < 0)
                continue;
            if (g.itemKind[it] == IntervalKind::IssueLoad && g.kIssue[x] < 0)
                g.kIssue[x] = std::int32_t(it);
            if (g.itemKind[it] == IntervalKind::Release)
                ++relCount[x];
        }
        std::int32_t acc = 0;
        for (std::size_t x = 0; x < relCount.size(); ++x) {
            g.kRelBegin[x] = acc;
            g.kRelEnd[x] = acc;
            acc += relCount[x];
        }
        g.relItems.assign(acc, 0);
        for (std::int64_t it = 0; it < nItem; ++it) {
            if (g.itemKind[it] != IntervalKind::Release)
                continue;
            const std::int32_t x = kidx(t.lanes[g.itemLane[it]].ctaIndex, g.itemKstep[it]);
            if (x >= 0)
                g.relItems[g.kRelEnd[x]++] = std::int32_t(it);
        }
    }

    // Censored flights: a load's ready is the earliest end of a WaitData of its fill (docs/recording.md). When that
    // wait did not wait (it lasted no longer than a pass: at most twice the kernel's fastest WaitData), the data
    // was there before the consumer came, and the recorded flight is only an upper bound. Such a load gets the
    // median flight of the loads whose consumer did wait (never more than its recorded one).
    checkBuildCancelled(g);
    {
        std::vector<std::int64_t> readyAbs(g.kFlight.size(), kNone);
        for (const LoadTransfer& ld : t.loads) {
            if (ld.ctaId < 0 || ld.ctaId >= nCta)
                continue;
            const std::int32_t x = kidx(ld.ctaId, ld.kstep);
            if (x >= 0 && ld.ready - ld.issue == g.kFlight[x])
                readyAbs[x] = ld.ready;
        }
        std::int64_t fastest = INT64_MAX;
        std::vector<std::int64_t> obsEnd(g.kFlight.size(), INT64_MAX), obsDur(g.kFlight.size(), 0);
        for (std::int64_t it = 0; it < nItem; ++it) {
            if (g.itemKind[it] != IntervalKind::WaitData || g.itemInterval[it] < 0
                || t.lanes[g.itemLane[it]].role == WarpRole::Epilogue)  // a hand-off, not a load's wait
                continue;
            fastest = std::min(fastest, g.itemDur[it]);
            const int c = t.lanes[g.itemLane[it]].ctaIndex;
            const std::int32_t x = kidx(c, g.itemKstep[it]);
            if (x < 0)
                continue;
            const std::int64_t e = t.ctas[c].start + mend(std::int32_t(it));
            if (e < obsEnd[x])
                obsEnd[x] = e, obsDur[x] = g.itemDur[it];
        }
        std::vector<std::uint8_t> censored(g.kFlight.size(), 0);
        std::vector<std::int64_t> observed;
        for (std::size_t x = 0; x < g.kFlight.size(); ++x) {
            if (g.kFlight[x] < 0)
                continue;
            censored[x] = readyAbs[x] != kNone && obsEnd[x] == readyAbs[x] && obsDur[x] <= 2 * fastest;
            if (!censored[x])
                observed.push_back(g.kFlight[x]);
        }
        const std::int64_t med = median(std::move(observed));
        if (med > 0) {
            for (std::size_t x = 0; x < g.kFlight.size(); ++x) {
                if (censored[x] && med < g.kFlight[x]) {
                    g.kFlight[x] = med;
                    ++s.censoredFlights;
                }
            }
        }
    }

    checkBuildCancelled(g);
    buildClusters(g, mst);  // 2-CTA clusters: partners and their shared fills (whatif_cluster.cpp)
    g.kPartnerSlot.assign(g.kIssue.size(), 1);
    buildFlags(g, mst);     // waits on another CTA's ready flag and their publishers (whatif_flags.cpp)

    // Dependencies and their recorded lags. A wait that began before its dependency was met (binding) ends
    // `lag` after it: its recorded wake-up. One that began after it cost its recorded duration (minDur), and
    // its wake-up is not seen: it gets the median wake-up of the binding waits of its kind, capped so that
    // the unchanged replay ends it where it was recorded.
    std::vector<std::int32_t> unboundWaits;
    auto setDep = [&](std::int32_t it, DepKind kind, std::int32_t arg, std::int64_t dep) {
        if (mend(it) < dep)
            return false;  // the wait ended before its dependency: not the dependency it waited for
        g.itemDep[it] = kind;
        g.itemDepArg[it] = arg;
        if (dep >= mst[it]) {
            g.itemLag[it] = mend(it) - dep;
            g.itemMinDur[it] = 0;
        } else {
            g.itemLag[it] = mend(it) - dep;  // an upper bound, replaced below
            g.itemMinDur[it] = g.itemDur[it];
            unboundWaits.push_back(it);
        }
        return true;
    };
    auto markUnexplained = [&](std::int32_t) { ++s.unexplainedWaits; };
    std::int64_t waitData = 0, waitSlot = 0, waitOrder = 0;
    for (int c = 0; c < nCta; ++c) {
        checkBuildCancelled(g);
        // Sync groups: the n-th Sync of every lane that has Syncs.
        std::vector<std::vector<std::int32_t>> syncs;
        for (int li = g.ctaLaneBegin[c]; li < g.ctaLaneEnd[c]; ++li) {
            const int l = g.ctaLanes[li];
            std::vector<std::int32_t> mine;
            for (std::int32_t it = g.laneBegin[l]; it < g.laneEnd[l]; ++it)
                if (g.itemKind[it] == IntervalKind::Sync)
                    mine.push_back(it);
            if (!mine.empty())
                syncs.push_back(std::move(mine));
        }
        if (!syncs.empty()) {
            std::size_t n = syncs.front().size();
            bool same = true;
            for (const auto& v : syncs)
                same = same && v.size() == n;
            if (!same) {
                for (const auto& v : syncs)
                    s.unexplainedWaits += std::int64_t(v.size());
            } else {
                for (std::size_t j = 0; j < n; ++j) {
                    std::int64_t arrive = INT64_MIN;
                    for (const auto& v : syncs)
                        arrive = std::max(arrive, mst[v[j]]);
                    bool ok = true;
                    for (const auto& v : syncs)
                        ok = ok && mend(v[j]) >= arrive;
                    if (!ok) {
                        for (const auto& v : syncs)
                            markUnexplained(v[j]);
                        continue;
                    }
                    const std::int32_t grp = std::int32_t(g.syncBegin.size());
                    g.syncBegin.push_back(std::int32_t(g.syncItems.size()));
                    for (const auto& v : syncs) {
                        g.syncItems.push_back(v[j]);
                        setDep(v[j], DepKind::Sync, grp, arrive);
                        ++s.syncEdges;
                    }
                    g.syncEnd.push_back(std::int32_t(g.syncItems.size()));
                }
            }
        }

        // Collective groups: wgmma is warpgroup-collective, so a warp's MmaIssue of fill k ends after the last
        // warp of its warpgroup entered its own (recorded: warps 1-3 of multistage's warpgroup 0 wait there for
        // warp 0, which issued the loads first). Only where every warp has one MmaIssue of the fill and none
        // ended before the last arrival.
        {
            std::map<std::pair<int, std::int32_t>, std::vector<std::int32_t>> coll;  // (warpgroup, fill) -> items
            for (int li = g.ctaLaneBegin[c]; li < g.ctaLaneEnd[c]; ++li) {
                const int l = g.ctaLanes[li];
                for (std::int32_t it = g.laneBegin[l]; it < g.laneEnd[l]; ++it)
                    if (g.itemKind[it] == IntervalKind::MmaIssue && g.itemKstep[it] >= 0)
                        coll[{t.lanes[l].warpgroup, g.itemKstep[it]}].push_back(it);
            }
            for (const auto& [key, items] : coll) {
                if (items.size() < 2)
                    continue;
                std::int64_t arrive = INT64_MIN;
                bool ok = true;
                for (std::size_t j = 0; j < items.size(); ++j) {
                    arrive = std::max(arrive, mst[items[j]]);
                    ok = ok && (j == 0 || g.itemLane[items[j]] != g.itemLane[items[j - 1]]);
                }
                for (const std::int32_t it : items)
                    ok = ok && mend(it) >= arrive;
                if (!ok)
                    continue;
                const std::int32_t grp = std::int32_t(g.syncBegin.size());
                g.syncBegin.push_back(std::int32_t(g.syncItems.size()));
                for (const std::int32_t it : items) {
                    g.syncItems.push_back(it);
                    setDep(it, DepKind::Collective, grp, arrive);
                    ++s.collectiveEdges;
                }
                g.syncEnd.push_back(std::int32_t(g.syncItems.size()));
            }
        }

        for (int li = g.ctaLaneBegin[c]; li < g.ctaLaneEnd[c]; ++li) {
            const int l = g.ctaLanes[li];
            for (std::int32_t it = g.laneBegin[l]; it < g.laneEnd[l]; ++it) {
                const IntervalKind k = g.itemKind[it];
                if (k == IntervalKind::WaitData && t.lanes[l].role == WarpRole::Epilogue) {
                    // an epilogue warp's wait for a consumer warpgroup's hand-off (whatif_epiwarp.cpp)
                    const std::int32_t h = handoffItem(g, mst, c, it);
                    if (h < 0 || !setDep(it, DepKind::Handoff, h, mst[h])) {
                        markUnexplained(it);
                        continue;
                    }
                    ++s.handoffEdges;
                } else if (k == IntervalKind::WaitData) {
                    ++waitData;
                    const std::int32_t x = kidx(c, g.itemKstep[it]);
                    if (x < 0 || g.kIssue[x] < 0 || g.kFlight[x] < 0) {
                        markUnexplained(it);
                        continue;
                    }
                    if (!setDep(it, DepKind::Data, -1, recordedDataDep(g, mst, c, x))) {
                        markUnexplained(it);
                        continue;
                    }
                    ++s.dataEdges;
                    s.clusterEdges += g.kPartnerData[x];
                } else if (k == IntervalKind::WaitSlot) {
                    if (g.itemInterval[it] >= 0)
                        ++waitSlot;
                    if (s.stages <= 0)
                        continue;
                    const std::int32_t x = kidx(c, g.itemKstep[it] - s.stages);
                    if (x < 0 || g.kRelBegin[x] == g.kRelEnd[x]) {
                        if (g.itemInterval[it] >= 0 && g.itemKstep[it] - s.stages >= g.ctaKmin[c]) {
                            markUnexplained(it);  // a release should exist but none was recorded
                            continue;
                        }
                        // No release to wait for: only a replay with fewer stages binds it.
                        g.itemDep[it] = DepKind::Slot;
                        g.itemMinDur[it] = g.itemDur[it];
                        g.itemLag[it] = INT64_MAX / 4;
                        unboundWaits.push_back(it);
                        continue;
                    }
                    // The slot is free once the last consumer warp arrived: at the start of its Release phase.
                    // (and, in a 2-CTA cluster, the partner's last one: whatif_cluster.cpp)
                    std::int64_t rel = recordedSlotDep(g, mst, c, g.itemKstep[it] - s.stages);
                    if (rel > mend(it) && g.ctaPartner[c] >= 0) {
                        // The partner's recorded release comes after this wait ended, which the ring does not
                        // allow (its empty barrier counts both CTAs' consumers): the two SMs' clocks disagree
                        // by more than the wake-up. This wait keeps its own CTA's release only (session 10).
                        g.kPartnerSlot[std::size_t(x)] = 0;
                        const std::int64_t own = recordedSlotDep(g, mst, c, g.itemKstep[it] - s.stages);
                        s.clockSkewNs = std::max(s.clockSkewNs, rel - mend(it));
                        if (own <= mend(it) && g.itemInterval[it] >= 0)
                            ++s.uncoupledSlotWaits;
                        rel = own;
                    }
                    if (!setDep(it, DepKind::Slot, -1, rel)) {
                        markUnexplained(it);
                        continue;
                    }
                    if (g.itemInterval[it] >= 0)
                        ++s.slotEdges;
                    if (g.itemInterval[it] >= 0 && g.ctaPartner[c] >= 0 && g.kPartnerSlot[std::size_t(x)])
                        ++s.clusterEdges;
                } else if (k == IntervalKind::WaitOrder && t.lanes[l].role == WarpRole::Epilogue
                           && flagEdgeOf(g, it) >= 0) {
                    const std::int32_t e = flagEdgeOf(g, it);  // another CTA's ready flag (whatif_flags.cpp)
                    if (!setDep(it, DepKind::Flag, e, g.flagRecDep[std::size_t(e)])) {
                        markUnexplained(it);
                        continue;
                    }
                    ++s.flagEdges;
                } else if (k == IntervalKind::WaitOrder) {
                    ++waitOrder;
                    const int wg = t.lanes[l].warpgroup;
                    const std::int64_t wend = mend(it);
                    std::int32_t best = -1;
                    std::int64_t bestEnd = INT64_MIN;
                    for (int lj = g.ctaLaneBegin[c]; lj < g.ctaLaneEnd[c]; ++lj) {
                        const int o = g.ctaLanes[lj];
                        if (t.lanes[o].warpgroup == wg || t.lanes[o].role != t.lanes[l].role)
                            continue;
                        // last item of o that ends at or before the wait's end
                        std::int32_t lo = g.laneBegin[o], hi = g.laneEnd[o];
                        while (lo < hi) {
                            const std::int32_t mid = lo + (hi - lo) / 2;
                            if (mst[mid] <= wend) lo = mid + 1; else hi = mid;
                        }
                        for (std::int32_t j = lo - 1; j >= g.laneBegin[o] && j >= lo - 4; --j) {
                            if (g.itemKind[j] == IntervalKind::WaitOrder || mend(j) > wend)
                                continue;
                            if (mend(j) > bestEnd)
                                bestEnd = mend(j), best = j;
                            break;
                        }
                    }
                    if (best < 0) {
                        markUnexplained(it);
                        continue;
                    }
                    setDep(it, DepKind::Order, best, bestEnd);
                    ++s.orderEdges;
                }
            }
        }
    }

    {
        // per kind; hand-off waits (their wake-up includes the consumers' add) in a bucket of their own
        const int kHandoff = kIntervalKindCount, kFlag = kIntervalKindCount + 1;  // flag waits: their own too
        auto bucket = [&](std::int64_t it) {
            return g.itemDep[it] == DepKind::Handoff ? kHandoff : g.itemDep[it] == DepKind::Flag ? kFlag
                                                                                                 : int(g.itemKind[it]);
        };
        std::vector<std::vector<std::int64_t>> wakes(kIntervalKindCount + 2);
        for (std::int64_t it = 0; it < nItem; ++it)
            if (g.itemDep[it] != DepKind::None && g.itemMinDur[it] == 0 && g.itemInterval[it] >= 0
                && bucket(it) <= kFlag)
                wakes[bucket(it)].push_back(g.itemLag[it]);
        std::vector<std::int64_t> med(kIntervalKindCount + 2, 0);
        for (int k = 0; k <= kFlag; ++k)
            med[k] = median(std::move(wakes[k]));
        for (std::int32_t it : unboundWaits) {
            const int k = bucket(it);
            g.itemLag[it] = std::min(g.itemLag[it], k <= kFlag ? med[k] : 0);
        }
    }

    // CTA ends, tiles, SM slots.
    checkBuildCancelled(g);
    g.ctaEndGap.assign(nCta, 0);
    g.ctaTiles.assign(nCta, 0);
    for (int c = 0; c < nCta; ++c) {
        std::int64_t last = 0;
        bool any = false;
        for (int li = g.ctaLaneBegin[c]; li < g.ctaLaneEnd[c]; ++li) {
            const int l = g.ctaLanes[li];
            for (std::int32_t it = g.laneBegin[l]; it < g.laneEnd[l]; ++it)
                last = any ? std::max(last, mend(it)) : mend(it), any = true;
        }
        g.ctaEndGap[c] = (t.ctas[c].end - t.ctas[c].start) - last;
    }
    {
        std::map<std::pair<int, int>, int> perWarpTiles;  // (cta, lane warp) -> tiles
        for (const TileSpan& ts : t.tiles)
            if (ts.ctaId >= 0 && ts.ctaId < nCta)
                ++perWarpTiles[{int(ts.ctaId), int(ts.warpId)}];
        for (const auto& [key, n] : perWarpTiles)
            g.ctaTiles[key.first] = std::max(g.ctaTiles[key.first], n);
        for (int c = 0; c < nCta; ++c) {
            g.ctaTiles[c] = std::max(1, g.ctaTiles[c]);
            s.persistent = s.persistent || g.ctaTiles[c] > 1;
        }
    }
    g.ctaOrder.resize(nCta);
    std::iota(g.ctaOrder.begin(), g.ctaOrder.end(), 0);
    std::stable_sort(g.ctaOrder.begin(), g.ctaOrder.end(), [&](int a, int b) {
        if (t.ctas[a].start != t.ctas[b].start)
            return t.ctas[a].start < t.ctas[b].start;
        return t.ctas[a].blockLinear < t.ctas[b].blockLinear;
    });
    g.ctaPred.assign(nCta, -1);
    g.ctaLag.assign(nCta, 0);
    {
        std::map<int, std::vector<int>> slotsOfSm;  // SM -> the last CTA of each slot
        for (int c : g.ctaOrder) {
            auto& slots = slotsOfSm[t.ctas[c].smId];
            int best = -1;
            for (std::size_t j = 0; j < slots.size(); ++j)
                if (t.ctas[slots[j]].end <= t.ctas[c].start && (best < 0 || t.ctas[slots[j]].end > t.ctas[slots[best]].end))
                    best = int(j);
            if (best < 0) {
                slots.push_back(c);
                g.ctaLag[c] = t.ctas[c].start - g.launchStart;
            } else {
                g.ctaPred[c] = slots[best];
                g.ctaLag[c] = t.ctas[c].start - t.ctas[slots[best]].end;
                slots[best] = c;
            }
        }
        s.smsUsed = int(slotsOfSm.size());
        for (const auto& [sm, slots] : slotsOfSm)
            s.slotsPerSm = std::max(s.slotsPerSm, int(slots.size()));
    }
    std::int64_t lastEnd = INT64_MIN;
    for (const Cta& c : t.ctas)
        lastEnd = std::max(lastEnd, c.end);
    g.kernelEndGap = g.launchEnd - lastEnd;

    // What is missing for a full analysis.
    if (!anyRole)
        s.missing.push_back("no warp roles recorded: producer/consumer structure unknown, --stages cannot move "
                            "a producer's issue");
    if (t.loads.empty())
        s.missing.push_back("no loads recorded: waits for data are replayed with their recorded duration "
                            "(--load-latency scales only synchronous Load phases); a kernel that marks its loads "
                            "(w.loadIssue / w.loadReady, <warpstage/trace.cuh>) gets the load edges");
    if (!t.loads.empty() && s.stages <= 0)
        s.missing.push_back("loads recorded without a ring slot (e.g. a Proton import): the ring's depth is unknown, so "
                            + std::to_string(waitSlot) + " slot waits have no release edge (replayed with their "
                            "recorded duration) and --stages cannot act");
    if (waitData == 0 && !t.loads.empty())
        s.missing.push_back("loads recorded but no WaitData phases: load latency is off the replayed path");
    if (s.unexplainedWaits > 0)
        s.missing.push_back(std::to_string(s.unexplainedWaits)
                            + " waits whose dependency is not in the trace: replayed with their recorded duration");
    (void)waitOrder;
    s.reduced = !s.missing.empty();
    checkBuildCancelled(g);
    buildResources(g, mst);
    checkBuildCancelled(g);
    buildBandwidth(g, mst);  // the SMs' load bandwidth (whatif_bandwidth.cpp)
    checkBuildCancelled(g);
    buildTiles(g, mst);
    checkBuildCancelled(g);
    prepareReplay(g);
    checkBuildCancelled(g);
    g.buildCancel = nullptr;  // the caller's flag is not the model's
    return WhatIfModel(std::move(impl));
}

}  // namespace ws
