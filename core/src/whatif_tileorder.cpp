// --tile-order (docs/whatif.md, "Tile order"): a persistent kernel's CTAs walk tiles; the order in which the tiles
// are dealt decides which CTA gets which tile, and when tiles cost different times (partial tiles, stream-K units,
// user tiles before candidate tiles, a last wave), which CTA ends last. After the replay, every CTA's tile lane is
// cut at its tiles' starts; each tile keeps its replayed cost (next tile's start - its start; the last one: to the
// end of its last phase), each CTA its prologue (start -> first tile) and its end (last tile -> CTA end). The tiles
// are then dealt in the new order, statically (tile q to unit q mod units, as the kernels' walks do), a unit being
// a CTA or a 2-CTA cluster (whose two halves of a tile stay together). Not modelled: what an order changes in the
// tiles' own costs (which A/B blocks share L2 at the same time: the trace has no per-load hit/miss).
#include "whatif_impl.h"

#include <algorithm>
#include <numeric>

namespace ws {

std::string_view tileOrderName(TileOrder o)
{
    switch (o) {
    case TileOrder::Recorded: return "recorded";
    case TileOrder::Row: return "row";
    case TileOrder::Column: return "column";
    case TileOrder::Reverse: return "reverse";
    case TileOrder::LongestFirst: return "longest-first";
    }
    return "recorded";
}

bool tileOrderFromName(std::string_view name, TileOrder* out)
{
    for (TileOrder o : {TileOrder::Recorded, TileOrder::Row, TileOrder::Column, TileOrder::Reverse,
                        TileOrder::LongestFirst}) {
        if (tileOrderName(o) == name) {
            *out = o;
            return true;
        }
    }
    return false;
}

void buildTiles(WhatIfModel::Impl& g, const std::vector<std::int64_t>& mst)
{
    const KernelTrace& t = g.trace;
    const int nCta = int(t.ctas.size());
    g.tileBegin.assign(std::size_t(nCta) + 1, 0);
    g.tileItem.clear();
    g.tileM.clear();
    g.tileN.clear();
    g.tileLastItem.assign(nCta, -1);
    // Per CTA: its tile lane, the consumer (else any) warp that recorded the most tiles (the lowest lane on a tie).
    std::vector<std::vector<const TileSpan*>> spans(t.lanes.size()), ctaWide(t.ctas.size());
    {
        std::vector<std::pair<RowId, int>> byWarp;
        for (std::size_t l = 0; l < t.lanes.size(); ++l)
            byWarp.push_back({t.lanes[l].warpId, int(l)});
        std::sort(byWarp.begin(), byWarp.end());
        for (const TileSpan& ts : t.tiles) {
            const auto it = std::lower_bound(byWarp.begin(), byWarp.end(), std::pair<RowId, int>{ts.warpId, -1});
            if (it != byWarp.end() && it->first == ts.warpId && t.lanes[it->second].ctaIndex == ts.ctaId)
                spans[it->second].push_back(&ts);
            else if (ts.ctaId >= 0 && ts.ctaId < nCta)
                ctaWide[std::size_t(ts.ctaId)].push_back(&ts);  // a CTA-wide tile (no warp recorded)
        }
    }
    for (int c = 0; c < nCta; ++c) {
        g.tileBegin[c] = std::int32_t(g.tileItem.size());
        int best = -1;
        for (int li = g.ctaLaneBegin[c]; li < g.ctaLaneEnd[c]; ++li) {
            const int l = g.ctaLanes[li];
            auto better = [&](int a) {
                if (best < 0)
                    return !spans[a].empty();
                const bool ca = t.lanes[a].role == WarpRole::Consumer, cb = t.lanes[best].role == WarpRole::Consumer;
                if (ca != cb)
                    return ca && !spans[a].empty();
                return spans[a].size() > spans[best].size();
            };
            if (better(l))
                best = l;
        }
        if (best < 0 && !ctaWide[c].empty()) {  // CTA-wide tiles: on the first consumer lane (else the first lane)
            for (int li = g.ctaLaneBegin[c]; li < g.ctaLaneEnd[c]; ++li) {
                const int l = g.ctaLanes[li];
                if (g.laneBegin[l] < g.laneEnd[l] && (best < 0 || (t.lanes[l].role == WarpRole::Consumer
                                                                   && t.lanes[best].role != WarpRole::Consumer)))
                    best = l;
            }
            if (best >= 0)
                spans[best] = ctaWide[c];
        }
        if (best < 0)
            continue;
        std::vector<const TileSpan*>& v = spans[best];
        std::stable_sort(v.begin(), v.end(), [](const TileSpan* a, const TileSpan* b) { return a->start < b->start; });
        const TimeNs c0 = t.ctas[c].start;
        std::int32_t from = g.laneBegin[best];
        for (const TileSpan* ts : v) {
            // the tile's first phase: the first item of the lane that starts at or after the tile's start
            while (from < g.laneEnd[best] && mst[from] < ts->start - c0)
                ++from;
            if (from >= g.laneEnd[best])
                break;
            if (!g.tileItem.empty() && std::int32_t(g.tileItem.size()) > g.tileBegin[c] && g.tileItem.back() == from)
                continue;  // an empty tile (no phase of its own): its cost stays with the tile before
            g.tileItem.push_back(from);
            g.tileM.push_back(ts->tileM);
            g.tileN.push_back(ts->tileN);
        }
        if (std::int32_t(g.tileItem.size()) > g.tileBegin[c]) {
            std::int32_t last = g.laneBegin[best];
            for (std::int32_t i = g.laneBegin[best]; i < g.laneEnd[best]; ++i)
                if (mst[i] < v.back()->end - c0)
                    last = i;
            g.tileLastItem[c] = std::max(last, g.tileItem.back());
        }
    }
    g.tileBegin[nCta] = std::int32_t(g.tileItem.size());
    if (g.summary.persistent)
        g.summary.tiles = int(g.tileItem.size());
}

std::int64_t tileOrderEnd(const WhatIfModel::Impl& m, const WhatIfParams& p, const Replay& r,
                          std::vector<std::string>* notes)
{
    const std::string opt = "--tile-order " + std::string(tileOrderName(p.tileOrder)) + ": ";
    if (!m.summary.persistent) {
        notes->push_back(opt + "the kernel is not persistent (each CTA computes one tile and the hardware deals the "
                               "CTAs to the SMs): no change");
        return r.kernelEnd;
    }
    const int nCta = int(m.trace.ctas.size());
    // Units: a CTA, or the lead of a 2-CTA cluster with its partner.
    std::vector<int> units;
    for (int c = 0; c < nCta; ++c) {
        const bool follower = !m.ctaPartner.empty() && m.ctaPartner[c] >= 0 && !m.ctaClusterLead[c];
        if (!follower && m.tileBegin[c + 1] > m.tileBegin[c])
            units.push_back(c);
    }
    if (units.empty()) {
        notes->push_back(opt + "no tiles recorded (TileBegin/TileEnd): no change");
        return r.kernelEnd;
    }
    std::sort(units.begin(), units.end(),
              [&](int a, int b) { return m.trace.ctas[a].blockLinear < m.trace.ctas[b].blockLinear; });
    auto partnerOf = [&](int c) { return m.ctaPartner.empty() ? -1 : m.ctaPartner[c]; };
    auto count = [&](int c) { return c < 0 ? 0 : m.tileBegin[c + 1] - m.tileBegin[c]; };
    auto at = [&](int c, std::int32_t i) { return r.ctaStart[c] + r.st[i]; };
    // The replayed cost of tile j of CTA c.
    auto cost = [&](int c, std::int32_t j) -> std::int64_t {
        if (c < 0 || j >= count(c))
            return 0;
        const std::int32_t b = m.tileBegin[c] + j;
        const std::int64_t s = at(c, m.tileItem[b]);
        if (j + 1 < count(c))
            return at(c, m.tileItem[b + 1]) - s;
        return r.ctaStart[c] + r.en[m.tileLastItem[c]] - s;
    };
    struct Tile {
        int unit;             // index into units
        std::int32_t j;       // position in the unit's recorded walk
        std::int64_t start;   // replayed start (recorded order key)
        std::int64_t cost;    // the longer of the unit's halves
        int tm, tn;
    };
    std::vector<Tile> tiles;
    for (std::size_t u = 0; u < units.size(); ++u) {
        const int c = units[u];
        for (std::int32_t j = 0; j < count(c); ++j) {
            const std::int32_t b = m.tileBegin[c] + j;
            tiles.push_back({int(u), j, at(c, m.tileItem[b]), std::max(cost(c, j), cost(partnerOf(c), j)),
                             m.tileM[b], m.tileN[b]});
        }
    }
    std::stable_sort(tiles.begin(), tiles.end(), [](const Tile& a, const Tile& b) {
        return a.start != b.start ? a.start < b.start : a.unit < b.unit;
    });
    switch (p.tileOrder) {
    case TileOrder::Recorded:
        return r.kernelEnd;
    case TileOrder::Row:
        std::stable_sort(tiles.begin(), tiles.end(), [](const Tile& a, const Tile& b) {
            return a.tm != b.tm ? a.tm < b.tm : a.tn < b.tn;
        });
        break;
    case TileOrder::Column:
        std::stable_sort(tiles.begin(), tiles.end(), [](const Tile& a, const Tile& b) {
            return a.tn != b.tn ? a.tn < b.tn : a.tm < b.tm;
        });
        break;
    case TileOrder::Reverse:
        std::reverse(tiles.begin(), tiles.end());
        break;
    case TileOrder::LongestFirst:
        std::stable_sort(tiles.begin(), tiles.end(), [](const Tile& a, const Tile& b) { return a.cost > b.cost; });
        break;
    }
    // Deal: tile q to unit q mod units; each CTA of the unit adds its own half's cost of that tile.
    const std::size_t nu = units.size();
    std::vector<std::int64_t> sum(std::size_t(nCta), 0);
    for (std::size_t q = 0; q < tiles.size(); ++q) {
        const int lead = units[q % nu];
        const int src = units[std::size_t(tiles[q].unit)];
        sum[lead] += cost(src, tiles[q].j);
        const int pl = partnerOf(lead), ps = partnerOf(src);
        if (pl >= 0)
            sum[pl] += ps >= 0 ? cost(ps, tiles[q].j) : cost(src, tiles[q].j);
    }
    std::int64_t lastEnd = INT64_MIN;
    for (int c = 0; c < nCta; ++c) {
        if (count(c) == 0) {
            lastEnd = std::max(lastEnd, r.ctaEnd[c]);
            continue;
        }
        const std::int64_t prologue = at(c, m.tileItem[m.tileBegin[c]]) - r.ctaStart[c];
        const std::int64_t after = r.ctaEnd[c] - (r.ctaStart[c] + r.en[m.tileLastItem[c]]);
        lastEnd = std::max(lastEnd, r.ctaStart[c] + prologue + sum[c] + after);
    }
    notes->push_back(opt + "predicted time only: the tiles dealt in the new order, each with its replayed cost; the "
                           "timeline and the critical path show the recorded deal");
    return lastEnd + m.kernelEndGap;
}

}  // namespace ws
