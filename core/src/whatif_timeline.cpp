// The predicted timeline of a what-if prediction (docs/whatif.md, "Predicted timeline"): the recorded kernel's lanes
// and CTAs with the replayed times, the ghost lanes the viewer draws. Filled on the replay's threads (the lanes are
// independent: each thread fills a contiguous run of them, balanced by items), so the answer does not depend on the
// thread count; the loads are then gathered in CTA order and sorted by issue exactly as a single thread would.
#include "whatif_impl.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <system_error>
#include <thread>

namespace ws {

namespace {

// Lanes [l0, l1): their intervals at the replayed times; inserted slot waits where they last longer than 0.
// newIndex[i]: item i's index in its predicted lane (-1: dropped).
void fillLanes(const WhatIfModel::Impl& g, const Replay& r, KernelTrace& pt, std::int32_t* newIndex, std::size_t l0,
               std::size_t l1)
{
    for (std::size_t l = l0; l < l1; ++l) {
        const Lane& src = g.trace.lanes[l];
        Lane& dst = pt.lanes[l];
        dst.warpId = src.warpId;
        dst.ctaIndex = src.ctaIndex;
        dst.warpIndex = src.warpIndex;
        dst.warpgroup = src.warpgroup;
        dst.role = src.role;
        dst.roleName = src.roleName;
        const std::int64_t c0 = r.ctaStart[std::size_t(src.ctaIndex)];
        const std::int32_t b = g.laneBegin[l], e = g.laneEnd[l];
        const std::size_t cap = std::size_t(e - b);
        // Sized once and written by index (no per-interval capacity checks), then cut to the kept count: the
        // capacity stays what reserve(cap) gave.
        dst.start.resize(cap);
        dst.duration.resize(cap);
        dst.kind.resize(cap);
        dst.slot.resize(cap);
        dst.kstep.resize(cap);
        TimeNs* os = dst.start.data();
        std::int32_t* od = dst.duration.data();
        IntervalKind* ok = dst.kind.data();
        std::int16_t* osl = dst.slot.data();
        std::int32_t* ok2 = dst.kstep.data();
        const std::int16_t* srcSlot = src.slot.data();
        const std::int64_t* st = r.st.data();
        const std::int64_t* en = r.en.data();
        const std::int32_t* itv = g.itemInterval.data();
        const std::int32_t* ks = g.itemKstep.data();
        const IntervalKind* kd = g.itemKind.data();
        const int stages = r.stages;
        std::int32_t n = 0;
        for (std::int32_t i = b; i < e; ++i) {
            const std::int64_t d = en[i] - st[i];
            const std::int32_t iv = itv[i];
            if (iv < 0 && d <= 0) {
                newIndex[i] = -1;
                continue;
            }
            newIndex[i] = n;
            os[n] = c0 + st[i];
            od[n] = std::int32_t(std::min<std::int64_t>(d, INT32_MAX));
            ok[n] = kd[i];
            osl[n] = iv >= 0 ? srcSlot[std::size_t(iv)] : std::int16_t(stages > 0 ? ks[i] % stages : -1);
            ok2[n] = ks[i];
            ++n;
        }
        dst.start.resize(std::size_t(n));
        dst.duration.resize(std::size_t(n));
        dst.kind.resize(std::size_t(n));
        dst.slot.resize(std::size_t(n));
        dst.kstep.resize(std::size_t(n));
    }
}

// CTAs [c0, c1)'s loads, in CTA and kstep order: issue at the replayed IssueLoad, ready after the (scaled) flight.
void collectLoads(const WhatIfModel::Impl& g, const Replay& r, std::vector<LoadTransfer>& out, std::size_t c0,
                  std::size_t c1)
{
    for (std::size_t c = c0; c < c1; ++c) {
        for (std::int32_t k = 0; k < g.ctaKcount[c]; ++k) {
            const std::int32_t x = g.ctaKbase[c] + k;
            const std::int32_t iss = dataIssueItem(g, r, std::int32_t(c), g.ctaKmin[c] + k);
            if (iss < 0 || g.kFlight[std::size_t(x)] < 0)
                continue;
            LoadTransfer ld;
            ld.ctaId = RowId(c);
            ld.kstep = g.ctaKmin[c] + k;
            ld.slot = std::int16_t(r.stages > 0 ? ld.kstep % r.stages : -1);
            ld.issue = r.ctaStart[c] + r.st[std::size_t(iss)];
            ld.ready = ld.issue + std::int64_t(std::llround(double(g.kFlight[std::size_t(x)]) * flightFactor(r, x)));
            out.push_back(ld);
        }
    }
}

}  // namespace

void fillPredictedTimeline(const WhatIfModel::Impl& g, Replay& r, WhatIfResult& out)
{
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
    const std::size_t nLanes = g.trace.lanes.size(), nCta = pt.ctas.size();
    const std::size_t nItems = g.itemLane.size();
    // Every item is written by its lane's thread: no fill needed (sized once, kept in the replay's scratch).
    r.timelineIndex.resize(nItems);
    std::int32_t* newIndex = r.timelineIndex.data();
    pt.lanes.resize(nLanes);

    const int nThreads = int(std::min<std::size_t>(std::size_t(replayThreads(std::int64_t(nItems))),
                                                   std::max<std::size_t>(1, nLanes)));
    // chunk t: lanes [laneCut[t], laneCut[t + 1]), CTAs [ctaCut[t], ctaCut[t + 1]) (lanes balanced by items, CTAs by count).
    std::vector<std::size_t> laneCut(std::size_t(nThreads) + 1, nLanes), ctaCut(std::size_t(nThreads) + 1, nCta);
    laneCut[0] = ctaCut[0] = 0;
    {
        std::int64_t acc = 0;
        int t = 1;
        for (std::size_t l = 0; l < nLanes && t < nThreads; ++l) {
            acc += g.laneEnd[l] - g.laneBegin[l];
            while (t < nThreads && acc * nThreads >= std::int64_t(nItems) * t)
                laneCut[std::size_t(t++)] = l + 1;
        }
        for (int u = 1; u < nThreads; ++u)
            ctaCut[std::size_t(u)] = nCta * std::size_t(u) / std::size_t(nThreads);
    }
    std::vector<std::vector<LoadTransfer>>& loads = r.timelineLoads;
    if (loads.size() < std::size_t(nThreads))
        loads.resize(std::size_t(nThreads));
    std::vector<std::exception_ptr> thrown(static_cast<std::size_t>(nThreads));  // e.g. bad_alloc
    auto work = [&](int t) noexcept {
        try {
            const std::size_t u = std::size_t(t);
            fillLanes(g, r, pt, newIndex, laneCut[u], laneCut[u + 1]);
            loads[u].clear();
            collectLoads(g, r, loads[u], ctaCut[u], ctaCut[u + 1]);
        } catch (...) {
            thrown[std::size_t(t)] = std::current_exception();
        }
    };
    if (nThreads == 1) {
        work(0);
    } else {
        std::vector<std::thread> pool;
        pool.reserve(std::size_t(nThreads - 1));
        try {
            for (int t = 1; t < nThreads; ++t)
                pool.emplace_back(work, t);
        } catch (const std::system_error&) {
            // no more threads: the chunks without one run here
        }
        work(0);
        for (int t = 1 + int(pool.size()); t < nThreads; ++t)
            work(t);
        for (std::thread& th : pool)
            th.join();
    }
    for (const std::exception_ptr& e : thrown)
        if (e)
            std::rethrow_exception(e);
    std::size_t nLoads = 0;
    for (int t = 0; t < nThreads; ++t)
        nLoads += loads[std::size_t(t)].size();
    pt.loads.reserve(nLoads);
    for (int t = 0; t < nThreads; ++t)
        pt.loads.insert(pt.loads.end(), loads[std::size_t(t)].begin(), loads[std::size_t(t)].end());
    // The same sequence as one thread's, so the same order for equal issue times.
    std::sort(pt.loads.begin(), pt.loads.end(), [](const LoadTransfer& a, const LoadTransfer& b) {
        return a.issue < b.issue;
    });
    for (PathStep& st : out.path.steps)
        if (st.lane >= 0 && st.interval >= 0)
            st.interval = newIndex[st.interval];
    for (std::size_t c = 0; c < nCta; ++c)
        pt.ctas[c].smId = r.ctaSm[c];
}

}  // namespace ws
