#include "timelinesynthetic.h"

#include <algorithm>
#include <numeric>

std::shared_ptr<ws::KernelTrace> kernelTraceFromRecord(const ws::RunInfo &run, const ws::KernelRecord &k)
{
    auto tr = std::make_shared<ws::KernelTrace>();
    tr->run = run;
    tr->launch = k.launch;
    // CTA order
    std::vector<std::size_t> order(k.ctas.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto &x = k.ctas[a], &y = k.ctas[b];
        return std::tie(x.smId, x.start, x.blockLinear) < std::tie(y.smId, y.start, y.blockLinear);
    });
    std::vector<std::int32_t> newIndexOfCta(k.ctas.size(), -1);
    for (std::size_t i = 0; i < order.size(); ++i) {
        newIndexOfCta[order[i]] = std::int32_t(i);
        tr->ctas.push_back(k.ctas[order[i]]);
    }
    // warps: local id -> lane
    std::vector<std::size_t> warpOrder(k.warps.size());
    std::iota(warpOrder.begin(), warpOrder.end(), 0);
    auto ctaOf = [&](const ws::Warp &w) {
        return w.ctaId >= 0 && std::size_t(w.ctaId) < newIndexOfCta.size() ? newIndexOfCta[std::size_t(w.ctaId)] : -1;
    };
    std::stable_sort(warpOrder.begin(), warpOrder.end(), [&](std::size_t a, std::size_t b) {
        return std::make_pair(ctaOf(k.warps[a]), k.warps[a].warpIndex) < std::make_pair(ctaOf(k.warps[b]), k.warps[b].warpIndex);
    });
    // Interval::warpId is the local warp index = position in KernelRecord::warps
    std::vector<std::int64_t> laneOfWarpId(k.warps.size(), -1);
    for (std::size_t wi : warpOrder) {
        const ws::Warp &w = k.warps[wi];
        if (ctaOf(w) < 0)
            continue;
        ws::Lane lane;
        lane.warpId = ws::RowId(wi);
        lane.ctaIndex = ctaOf(w);
        lane.warpIndex = w.warpIndex;
        lane.warpgroup = w.warpgroup;
        lane.role = w.role;
        lane.roleName = w.roleName;
        laneOfWarpId[wi] = std::int64_t(tr->lanes.size());
        tr->lanes.push_back(std::move(lane));
    }
    // count, reserve exactly, fill
    std::vector<std::size_t> counts(tr->lanes.size(), 0);
    for (const auto &iv : k.intervals)
        if (iv.warpId >= 0 && std::size_t(iv.warpId) < laneOfWarpId.size() && laneOfWarpId[std::size_t(iv.warpId)] >= 0)
            ++counts[std::size_t(laneOfWarpId[std::size_t(iv.warpId)])];
    for (std::size_t i = 0; i < tr->lanes.size(); ++i) {
        auto &l = tr->lanes[i];
        l.start.reserve(counts[i]);
        l.duration.reserve(counts[i]);
        l.kind.reserve(counts[i]);
        l.slot.reserve(counts[i]);
        l.kstep.reserve(counts[i]);
    }
    for (const auto &iv : k.intervals) {
        if (iv.warpId < 0 || std::size_t(iv.warpId) >= laneOfWarpId.size() || laneOfWarpId[std::size_t(iv.warpId)] < 0)
            continue;
        auto &l = tr->lanes[std::size_t(laneOfWarpId[std::size_t(iv.warpId)])];
        l.start.push_back(iv.start);
        l.duration.push_back(std::int32_t(std::clamp<std::int64_t>(iv.duration, 0, INT32_MAX)));
        l.kind.push_back(iv.kind);
        l.slot.push_back(iv.slot);
        l.kstep.push_back(iv.kstep);
    }
    for (auto &l : tr->lanes) {
        if (std::is_sorted(l.start.begin(), l.start.end()))
            continue;
        std::vector<std::size_t> p(l.size());
        std::iota(p.begin(), p.end(), 0);
        std::stable_sort(p.begin(), p.end(), [&](std::size_t a, std::size_t b) { return l.start[a] < l.start[b]; });
        auto perm = [&](auto &v) {
            auto copy = v;
            for (std::size_t i = 0; i < p.size(); ++i)
                v[i] = copy[p[i]];
        };
        perm(l.start);
        perm(l.duration);
        perm(l.kind);
        perm(l.slot);
        perm(l.kstep);
    }
    tr->loads.reserve(k.loads.size());
    for (auto ld : k.loads) {
        if (ld.ctaId < 0 || std::size_t(ld.ctaId) >= newIndexOfCta.size())
            continue;
        ld.ctaId = newIndexOfCta[std::size_t(ld.ctaId)];
        tr->loads.push_back(ld);
    }
    std::stable_sort(tr->loads.begin(), tr->loads.end(), [](const auto &a, const auto &b) { return a.issue < b.issue; });
    for (auto t : k.tiles) {
        if (t.ctaId >= 0 && std::size_t(t.ctaId) < newIndexOfCta.size())
            t.ctaId = newIndexOfCta[std::size_t(t.ctaId)];
        tr->tiles.push_back(t);
    }
    tr->stalls = k.stalls;
    return tr;
}

std::shared_ptr<ws::KernelTrace> syntheticKernelTrace(const ws::SyntheticParams &params)
{
    ws::RunRecord rec = ws::generateSynthetic(params);
    for (auto &k : rec.kernels)
        if (k.launch.traced)
            return kernelTraceFromRecord(rec.info, k);
    if (!rec.kernels.empty())
        return kernelTraceFromRecord(rec.info, rec.kernels.front());
    auto tr = std::make_shared<ws::KernelTrace>();
    tr->run = rec.info;
    return tr;
}
