// Cross-CTA ready flags in the what-if graph and replay (docs/whatif.md, "Cross-CTA flags"): lce rung 4
// (kernels/lce/epiwarp_kernel.cuh, `lceUserFirst`) computes the user tiles first; the epilogue warp of the CTA that
// computed one TMA-stores each half into U, waits until the stores are complete and releases the half's ready flag
// (`storeHalfPublish`: phase Store n, slot = half); the epilogue warp of a candidate tile spins on the flag of its
// user's tile before it loads that half of U (`waitOrderFlag`: phase WaitOrder n, slot = half). The wait's
// dependency is the end of the publisher's Store, in another CTA: an edge that the per-CTA replay cannot close
// alone, so the replay runs again for the CTAs whose publisher moved (whatif_replay.cpp, runReplay) until no
// flag's time changes.
//
// Which flag a wait reads is not recorded in the phase (its kstep is the epilogue warp's tile count n, its slot the
// half). What the trace does carry: the tile of every phase (the epilogue warp's TileBegin spans, tileM = b x
// mTiles + tm, tileN = tn, + 1000 for a user tile) and the run's shape tag (B candidates, P candidates per user,
// the mapping u(b) = b / P unless shuffled). From those: a candidate tile (b, tm, tn)'s half cw waits for the flag
// (u(b), tm, tn, cw), which the Store of the user tile (u(b), tm, tn)'s half cw publishes. A shuffled mapping (its
// permutation is not in the trace) or another kernel's flags are not paired: their waits keep their recorded
// durations and graph.missing says what the kernel would have to record.
#include "whatif_impl.h"

#include "warpstage/runfamily.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

namespace ws {

namespace {

constexpr int kUserTileN = 1000;  // epiwarp_kernel.cuh: tileBegin(b * mTiles + tm, tn + (user ? 1000 : 0))

// "MxNxKuxKcxBxP" (+ "s"): B and P; false for a shuffled mapping or another format.
bool lceMapping(const std::string& shape, int* b, int* perUser)
{
    std::vector<int> v;
    std::size_t i = 0;
    while (i < shape.size()) {
        int x = 0;
        const auto [ptr, ec] = std::from_chars(shape.data() + i, shape.data() + shape.size(), x);
        if (ec != std::errc() || x <= 0)
            return false;
        v.push_back(x);
        i = std::size_t(ptr - shape.data());
        if (i < shape.size() && shape[i] != 'x')
            return false;  // "s": shuffled
        ++i;
    }
    if (v.size() != 6)
        return false;
    *b = v[4];
    *perUser = v[5];
    return true;
}

std::int64_t flagKey(std::int64_t tileM, std::int64_t tn, int cw)
{
    return (tileM << 24) | ((tn & 0x7fffff) << 1) | (cw & 1);
}

}  // namespace

std::int32_t flagEdgeOf(const WhatIfModel::Impl& m, std::int32_t item)
{
    const auto it = std::lower_bound(m.flagWaitItem.begin(), m.flagWaitItem.end(), item);
    return it != m.flagWaitItem.end() && *it == item ? std::int32_t(it - m.flagWaitItem.begin()) : -1;
}

void buildFlags(WhatIfModel::Impl& g, const std::vector<std::int64_t>& mst)
{
    const KernelTrace& t = g.trace;
    g.flagWaitItem.clear();
    g.flagPubItem.clear();
    g.flagRecDep.clear();
    // The epilogue warps' WaitOrder phases: flag waits (a consumer's WaitOrder is the ordering barrier).
    std::int64_t waits = 0;
    for (std::size_t l = 0; l < t.lanes.size(); ++l) {
        if (t.lanes[l].role != WarpRole::Epilogue)
            continue;
        for (std::int32_t it = g.laneBegin[l]; it < g.laneEnd[l]; ++it)
            waits += g.itemKind[std::size_t(it)] == IntervalKind::WaitOrder;
    }
    if (waits == 0)
        return;
    const auto tag = parseRungTag(t.run.notes);
    int nB = 0, perUser = 0;
    if (!tag || tag->family != "lce" || tag->rung != 4 || !lceMapping(tag->shape, &nB, &perUser)) {
        g.summary.missing.push_back(
            std::to_string(waits) + " epilogue-warp waits on a ready flag that another CTA publishes are not paired "
            "with their publisher: the phase does not say which flag it reads (the pairing is known for lce rung 4 "
            "with the unshuffled user mapping only); recording the flag's index in the WaitOrder and in the "
            "publishing Store would let the replay move them");
        return;
    }
    // Tiles per (CTA, warp), in start order.
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const TileSpan*>> spans;
    int maxCandM = -1;
    for (const TileSpan& ts : t.tiles) {
        spans[{std::int64_t(ts.ctaId), std::int64_t(ts.warpId)}].push_back(&ts);
        if (ts.tileN < kUserTileN)
            maxCandM = std::max(maxCandM, ts.tileM);
    }
    if (maxCandM < 0 || (maxCandM + 1) % nB != 0) {
        g.summary.missing.push_back(std::to_string(waits) + " ready-flag waits not paired: the candidate tiles' M "
                                    "indices do not match the run's " + std::to_string(nB) + " candidates");
        return;
    }
    const int mTiles = (maxCandM + 1) / nB;
    for (auto& [key, v] : spans)
        std::stable_sort(v.begin(), v.end(), [](const TileSpan* a, const TileSpan* b) { return a->start < b->start; });

    struct Wait {
        std::int32_t item;
        std::int64_t key;
    };
    std::vector<Wait> waitList;
    std::unordered_map<std::int64_t, std::int32_t> publisher;  // flag key -> Store item
    for (std::size_t l = 0; l < t.lanes.size(); ++l) {
        const Lane& lane = t.lanes[l];
        if (lane.role != WarpRole::Epilogue)
            continue;
        const auto sp = spans.find({std::int64_t(lane.ctaIndex), std::int64_t(lane.warpId)});
        if (sp == spans.end())
            continue;
        const std::vector<const TileSpan*>& v = sp->second;
        const TimeNs c0 = t.ctas[std::size_t(lane.ctaIndex)].start;
        auto tileAt = [&](std::int32_t it) -> const TileSpan* {
            const TimeNs at = c0 + mst[std::size_t(it)];
            auto u = std::upper_bound(v.begin(), v.end(), at, [](TimeNs a, const TileSpan* s) { return a < s->start; });
            return u == v.begin() ? nullptr : *(u - 1);
        };
        // n -> tile per half: the Load n (loadStaging / loadStagingEmpty) lies in tile n's span.
        std::map<std::pair<int, std::int32_t>, const TileSpan*> tileOfN;
        for (std::int32_t it = g.laneBegin[l]; it < g.laneEnd[l]; ++it) {
            const std::int32_t iv = g.itemInterval[std::size_t(it)];
            if (iv < 0 || g.itemKind[std::size_t(it)] != IntervalKind::Load)
                continue;
            if (const TileSpan* ts = tileAt(it))
                tileOfN[{int(lane.slot[std::size_t(iv)]), g.itemKstep[std::size_t(it)]}] = ts;
        }
        for (std::int32_t it = g.laneBegin[l]; it < g.laneEnd[l]; ++it) {
            const std::int32_t iv = g.itemInterval[std::size_t(it)];
            if (iv < 0)
                continue;
            const int cw = lane.slot[std::size_t(iv)];
            if (cw < 0 || cw > 1)
                continue;
            const IntervalKind k = g.itemKind[std::size_t(it)];
            if (k == IntervalKind::Store) {  // publishes when its tile n is a user tile
                const auto f = tileOfN.find({cw, g.itemKstep[std::size_t(it)]});
                if (f != tileOfN.end() && f->second->tileN >= kUserTileN)
                    publisher.try_emplace(flagKey(f->second->tileM, f->second->tileN - kUserTileN, cw), it);
            } else if (k == IntervalKind::WaitOrder) {
                const TileSpan* ts = tileAt(it);
                if (!ts || ts->tileN >= kUserTileN)
                    continue;
                const int b = ts->tileM / mTiles, tm = ts->tileM % mTiles;
                waitList.push_back({it, flagKey(std::int64_t(b / perUser) * mTiles + tm, ts->tileN, cw)});
            }
        }
    }
    std::sort(waitList.begin(), waitList.end(), [](const Wait& a, const Wait& b) { return a.item < b.item; });
    auto ctaOf = [&](std::int32_t it) { return t.lanes[std::size_t(g.itemLane[std::size_t(it)])].ctaIndex; };
    for (const Wait& w : waitList) {
        const auto p = publisher.find(w.key);
        if (p == publisher.end())
            continue;
        const int wc = ctaOf(w.item), pc = ctaOf(p->second);
        g.flagWaitItem.push_back(w.item);
        g.flagPubItem.push_back(p->second);
        g.flagRecDep.push_back(t.ctas[std::size_t(pc)].start + mst[std::size_t(p->second)]
                               + g.itemDur[std::size_t(p->second)] - t.ctas[std::size_t(wc)].start);
    }
    if (std::int64_t(g.flagWaitItem.size()) < waits)
        g.summary.missing.push_back(std::to_string(waits - std::int64_t(g.flagWaitItem.size()))
                                    + " ready-flag waits whose publishing Store was not found in the trace");
}

bool updateFlagDeps(const WhatIfModel::Impl& m, Replay& r, std::vector<std::uint8_t>& redo)
{
    bool any = false;
    const std::size_t n = m.flagWaitItem.size();
    if (r.flagDep.size() != n)
        r.flagDep = m.flagRecDep;
    for (std::size_t e = 0; e < n; ++e) {
        const std::int32_t w = m.flagWaitItem[e], p = m.flagPubItem[e];
        const int wc = m.trace.lanes[std::size_t(m.itemLane[std::size_t(w)])].ctaIndex;
        const int pc = m.trace.lanes[std::size_t(m.itemLane[std::size_t(p)])].ctaIndex;
        const std::int64_t dep = r.ctaStart[std::size_t(pc)] + r.en[std::size_t(p)] - r.ctaStart[std::size_t(wc)];
        if (dep != r.flagDep[e]) {
            r.flagDep[e] = dep;
            redo[std::size_t(wc)] = 1;
            any = true;
        }
    }
    return any;
}

}  // namespace ws
