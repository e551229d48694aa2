// The hand-off to a dedicated epilogue warp in the what-if graph (docs/whatif.md, "The graph"): the lce rungs'
// epilogue warp (kernels/src/common/epilogue_warp.cuh) records WaitData n with slot cw while it waits until consumer
// warpgroup cw handed over its n-th tile; the consumers record that hand-off as their Epilogue n (add the
// accumulators into the staging, then arrive). Its kstep counts tiles, not ring fills: it is no load's wait.
#include "whatif_impl.h"

namespace ws {

std::int32_t handoffItem(const WhatIfModel::Impl& g, const std::vector<std::int64_t>& mst, int c, std::int32_t it)
{
    const KernelTrace& t = g.trace;
    const Lane& lane = t.lanes[std::size_t(g.itemLane[std::size_t(it)])];
    if (lane.role != WarpRole::Epilogue || g.itemInterval[std::size_t(it)] < 0)
        return -1;
    const int cw = lane.slot[std::size_t(g.itemInterval[std::size_t(it)])];
    const std::int32_t n = g.itemKstep[std::size_t(it)];
    if (cw < 0 || n < 0)
        return -1;
    // The consumer warpgroups of the CTA in warpgroup order; the cw-th one handed over.
    int lowest = -1, second = -1;
    for (int li = g.ctaLaneBegin[c]; li < g.ctaLaneEnd[c]; ++li) {
        const Lane& o = t.lanes[std::size_t(g.ctaLanes[li])];
        if (o.role != WarpRole::Consumer)
            continue;
        if (lowest < 0 || o.warpgroup < lowest) {
            if (lowest >= 0 && lowest != o.warpgroup)
                second = lowest;
            lowest = o.warpgroup;
        } else if (o.warpgroup != lowest && (second < 0 || o.warpgroup < second)) {
            second = o.warpgroup;
        }
    }
    const int wg = cw == 0 ? lowest : cw == 1 ? second : -1;
    if (wg < 0)
        return -1;
    // The last warp of that warpgroup to begin its Epilogue n that began before the wait ended.
    const std::int64_t waitEnd = mst[std::size_t(it)] + g.itemDur[std::size_t(it)];
    std::int32_t best = -1;
    for (int li = g.ctaLaneBegin[c]; li < g.ctaLaneEnd[c]; ++li) {
        const int l = g.ctaLanes[li];
        if (t.lanes[std::size_t(l)].role != WarpRole::Consumer || t.lanes[std::size_t(l)].warpgroup != wg)
            continue;
        for (std::int32_t j = g.laneBegin[l]; j < g.laneEnd[l]; ++j)
            if (g.itemKind[std::size_t(j)] == IntervalKind::Epilogue && g.itemKstep[std::size_t(j)] == n
                && mst[std::size_t(j)] <= waitEnd && (best < 0 || mst[std::size_t(j)] > mst[std::size_t(best)]))
                best = j;
    }
    return best;
}

}  // namespace ws
