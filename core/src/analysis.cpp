// Analysis of one kernel trace. Definitions: docs/metrics.md (keep in sync).
#include "warpstage/analysis.h"

#include "warpstage/store.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

namespace ws {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Span {
    TimeNs s, e;
};
using Spans = std::vector<Span>;  // sorted, disjoint, non-empty

TimeNs measure(const Spans& x)
{
    TimeNs m = 0;
    for (const Span& p : x)
        m += p.e - p.s;
    return m;
}

// Appends [s, e) clipped to [a, b) to a list being built in start order, merging.
inline void addSorted(Spans& out, TimeNs s, TimeNs e, TimeNs a, TimeNs b)
{
    s = std::max(s, a);
    e = std::min(e, b);
    if (e <= s)
        return;
    if (!out.empty() && s <= out.back().e) {
        out.back().e = std::max(out.back().e, e);
        return;
    }
    out.push_back({s, e});
}

// Union of arbitrary spans (any order).
Spans unionOf(Spans v)
{
    std::sort(v.begin(), v.end(), [](const Span& x, const Span& y) { return x.s < y.s; });
    Spans out;
    out.reserve(v.size());
    for (const Span& p : v) {
        if (p.e <= p.s)
            continue;
        if (!out.empty() && p.s <= out.back().e)
            out.back().e = std::max(out.back().e, p.e);
        else
            out.push_back(p);
    }
    return out;
}

TimeNs intersectMeasure(const Spans& x, const Spans& y)
{
    TimeNs m = 0;
    std::size_t i = 0, j = 0;
    while (i < x.size() && j < y.size()) {
        const TimeNs s = std::max(x[i].s, y[j].s), e = std::min(x[i].e, y[j].e);
        if (e > s)
            m += e - s;
        if (x[i].e < y[j].e)
            ++i;
        else
            ++j;
    }
    return m;
}

template <class Pred>
Spans laneUnion(const Lane& l, Pred pred, TimeNs a, TimeNs b)
{
    // Lanes are sorted by start, so a single merging pass suffices.
    Spans out;
    for (std::size_t i = 0; i < l.size(); ++i) {
        if (l.start[i] >= b)
            break;
        if (pred(l.kind[i]))
            addSorted(out, l.start[i], l.end(i), a, b);
    }
    return out;
}

inline double share(double num, double den) { return den > 0 ? num / den : kNaN; }

// Additive partial sums of one CTA for one lane subset.
struct Partial {
    std::int64_t computeLanes = 0, producerLanes = 0;
    double computeLaneNs = 0, producerLaneNs = 0, computeNs = 0, computeWithLoadNs = 0, loadInFlightNs = 0,
           loadHiddenNs = 0, exposedNs = 0, backPressureNs = 0, bubbleNs = 0, longestBubbleNs = 0, computeSpanNs = 0,
           rampNs = 0, loadsIntegral = 0, slotsIntegral = 0, liveCtaNs = 0;
    std::int64_t bubbleCount = 0, loadCount = 0;

    void add(const Partial& o)
    {
        computeLanes += o.computeLanes;
        producerLanes += o.producerLanes;
        computeLaneNs += o.computeLaneNs;
        producerLaneNs += o.producerLaneNs;
        computeNs += o.computeNs;
        computeWithLoadNs += o.computeWithLoadNs;
        loadInFlightNs += o.loadInFlightNs;
        loadHiddenNs += o.loadHiddenNs;
        exposedNs += o.exposedNs;
        backPressureNs += o.backPressureNs;
        bubbleNs += o.bubbleNs;
        longestBubbleNs = std::max(longestBubbleNs, o.longestBubbleNs);
        computeSpanNs += o.computeSpanNs;
        rampNs += o.rampNs;
        loadsIntegral += o.loadsIntegral;
        slotsIntegral += o.slotsIntegral;
        liveCtaNs += o.liveCtaNs;
        bubbleCount += o.bubbleCount;
        loadCount += o.loadCount;
    }

    GroupMetrics finish() const
    {
        GroupMetrics g;
        g.computeLanes = computeLanes;
        g.producerLanes = producerLanes;
        g.computeLaneNs = computeLaneNs;
        g.producerLaneNs = producerLaneNs;
        g.computeNs = computeNs;
        g.computeWithLoadNs = computeWithLoadNs;
        g.computeOverlapShare = share(computeWithLoadNs, computeNs);
        g.loadInFlightNs = loadInFlightNs;
        g.loadHiddenNs = loadHiddenNs;
        g.loadHiddenShare = share(loadHiddenNs, loadInFlightNs);
        g.exposedLoadWaitNs = exposedNs;
        g.exposedLoadWaitShare = share(exposedNs, computeLaneNs);
        g.backPressureNs = backPressureNs;
        g.backPressureShare = share(backPressureNs, producerLaneNs);
        g.consumerBusyShare = share(computeNs, computeLaneNs);
        g.bubbleCount = bubbleCount;
        g.bubbleNs = bubbleNs;
        g.longestBubbleNs = longestBubbleNs;
        g.bubbleShare = share(bubbleNs, computeSpanNs);
        g.rampNs = rampNs;
        g.meanLoadsInFlight = share(loadsIntegral, liveCtaNs);
        g.meanSlotsOccupied = share(slotsIntegral, liveCtaNs);
        g.loadCount = loadCount;
        return g;
    }
};

struct CtaCtx {
    Span live{0, 0};          // clipped to the window
    Spans loadsInFlight;      // L_c
    double loadsIntegral = 0; // Σ |[issue, ready) ∩ W|
    double slotsIntegral = 0;
    std::int64_t loadCount = 0;
    std::vector<std::size_t> lanes;  // all lanes of the CTA
};

bool isComputeLane(const Lane& l) { return l.role == WarpRole::Consumer || l.role == WarpRole::Worker; }

Partial ctaPartial(const KernelTrace& t, const CtaCtx& c, const std::vector<std::size_t>& lanes, TimeNs a, TimeNs b)
{
    Partial p;
    const TimeNs liveNs = std::max<TimeNs>(0, c.live.e - c.live.s);
    p.liveCtaNs = static_cast<double>(liveNs);
    p.loadInFlightNs = static_cast<double>(measure(c.loadsInFlight));
    p.loadsIntegral = c.loadsIntegral;
    p.slotsIntegral = c.slotsIntegral;
    p.loadCount = c.loadCount;
    Spans all;  // A_c, collected
    for (std::size_t li : lanes) {
        const Lane& l = t.lanes[li];
        if (isComputeLane(l)) {
            ++p.computeLanes;
            p.computeLaneNs += static_cast<double>(liveNs);
            Spans cw = laneUnion(l, isComputeKind, a, b);
            p.computeNs += static_cast<double>(measure(cw));
            p.computeWithLoadNs += static_cast<double>(intersectMeasure(cw, c.loadsInFlight));
            const bool worker = l.role == WarpRole::Worker;
            Spans wait = laneUnion(
                l, [worker](IntervalKind k) { return k == IntervalKind::WaitData || (worker && k == IntervalKind::Load); },
                a, b);
            p.exposedNs += static_cast<double>(measure(wait));
            all.insert(all.end(), cw.begin(), cw.end());
        } else if (l.role == WarpRole::Producer) {
            ++p.producerLanes;
            p.producerLaneNs += static_cast<double>(liveNs);
            p.backPressureNs += static_cast<double>(
                measure(laneUnion(l, [](IntervalKind k) { return k == IntervalKind::WaitSlot; }, a, b)));
        }
    }
    const Spans ac = unionOf(std::move(all));
    p.loadHiddenNs = static_cast<double>(intersectMeasure(c.loadsInFlight, ac));
    if (!ac.empty()) {
        const TimeNs spanNs = ac.back().e - ac.front().s;
        p.computeSpanNs = static_cast<double>(spanNs);
        for (std::size_t i = 1; i < ac.size(); ++i) {
            const double gap = static_cast<double>(ac[i].s - ac[i - 1].e);
            ++p.bubbleCount;
            p.bubbleNs += gap;
            p.longestBubbleNs = std::max(p.longestBubbleNs, gap);
        }
        p.rampNs = static_cast<double>(std::max<TimeNs>(0, liveNs - spanNs));
    } else {
        p.rampNs = static_cast<double>(liveNs);
    }
    return p;
}

std::vector<StepPoint> stepSeries(std::vector<std::pair<TimeNs, int>>& ev, std::int64_t& maxValue)
{
    std::sort(ev.begin(), ev.end());
    std::vector<StepPoint> out;
    std::int64_t v = 0;
    maxValue = 0;
    for (std::size_t i = 0; i < ev.size();) {
        const TimeNs t = ev[i].first;
        while (i < ev.size() && ev[i].first == t)
            v += ev[i++].second;
        maxValue = std::max(maxValue, v);
        if (!out.empty() && out.back().value == static_cast<double>(v))
            continue;
        if (!out.empty() && out.back().t == t)
            out.back().value = static_cast<double>(v);
        else
            out.push_back({t, static_cast<double>(v)});
    }
    return out;
}

std::vector<StallBucket> buckets(const std::map<std::string, std::pair<std::int64_t, std::string>>& m, std::int64_t total)
{
    std::vector<StallBucket> out;
    for (const auto& [key, v] : m)
        out.push_back({key, v.second.empty() ? key : v.second, v.first, share(static_cast<double>(v.first), static_cast<double>(total))});
    std::stable_sort(out.begin(), out.end(), [](const StallBucket& x, const StallBucket& y) { return x.samples > y.samples; });
    return out;
}

}  // namespace

KernelMetrics analyze(const KernelTrace& t, const Selection& sel)
{
    KernelMetrics km;
    // Window
    TimeNs a, b;
    bool anyData = false;
    TimeNs dataStart = 0, dataEnd = 0;
    for (const Lane& l : t.lanes)
        for (std::size_t i = 0; i < l.size(); ++i) {
            dataStart = anyData ? std::min(dataStart, l.start[i]) : l.start[i];
            dataEnd = anyData ? std::max(dataEnd, l.end(i)) : l.end(i);
            anyData = true;
        }
    if (t.launch.end > t.launch.start) {
        a = anyData ? std::min(t.launch.start, dataStart) : t.launch.start;
        b = anyData ? std::max(t.launch.end, dataEnd) : t.launch.end;
    } else {
        a = dataStart;
        b = dataEnd;
    }
    if (sel.t0)
        a = std::max(a, *sel.t0);
    if (sel.t1)
        b = std::min(b, *sel.t1);
    if (b < a)
        b = a;
    km.windowStart = a;
    km.windowEnd = b;

    // Throughput (selection-independent)
    km.flop = 2.0 * t.run.m * static_cast<double>(t.run.n) * t.run.k;
    km.kernelNs = static_cast<double>(t.launch.end - t.launch.start);
    km.achievedTflops = (km.flop > 0 && km.kernelNs > 0) ? km.flop / km.kernelNs / 1000.0 : kNaN;

    // Stalls
    {
        std::map<std::string, std::pair<std::int64_t, std::string>> byReason, byStage;
        for (const StallSample& s : t.stalls) {
            km.stallSamples += s.count;
            auto& r = byReason[s.reason];
            r.first += s.count;
            if (r.second.empty())
                r.second = s.reasonLabel;
            byStage[std::string(warpRoleName(s.role)) + "/" + (s.stage.empty() ? "unknown" : s.stage)].first += s.count;
        }
        km.stallsByReason = buckets(byReason, km.stallSamples);
        km.stallsByRoleStage = buckets(byStage, km.stallSamples);
    }

    // Tail effect: all CTAs, clipped to the window.
    {
        std::map<int, TimeNs> lastEnd;
        for (const Cta& c : t.ctas) {
            if (c.smId < 0)
                continue;
            const TimeNs e = std::clamp(c.end, a, b);
            auto [it, fresh] = lastEnd.emplace(c.smId, e);
            if (!fresh)
                it->second = std::max(it->second, e);
        }
        km.smsUsed = static_cast<int>(lastEnd.size());
        if (!lastEnd.empty()) {
            TimeNs E = std::numeric_limits<TimeNs>::min(), first = std::numeric_limits<TimeNs>::max();
            for (const auto& [sm, e] : lastEnd) {
                E = std::max(E, e);
                first = std::min(first, e);
            }
            km.tailNs = static_cast<double>(E - first);
            for (const auto& [sm, e] : lastEnd)
                km.tailIdleSmNs += static_cast<double>(E - e);
            // SMs of the device that never ran a CTA idle for the whole span (when the run knows its SM count)
            const int sms = std::max(km.smsUsed, t.run.device.smCount);
            km.tailIdleSmNs += static_cast<double>(sms - km.smsUsed) * static_cast<double>(E - a);
            km.tailIdleShare = share(km.tailIdleSmNs, static_cast<double>(sms) * static_cast<double>(E - a));
        } else {
            km.tailIdleShare = kNaN;
        }
    }

    // Per-CTA context
    const std::size_t nc = t.ctas.size();
    std::vector<CtaCtx> ctx(nc);
    for (std::size_t li = 0; li < t.lanes.size(); ++li) {
        const auto ci = t.lanes[li].ctaIndex;
        if (ci >= 0 && static_cast<std::size_t>(ci) < nc)
            ctx[static_cast<std::size_t>(ci)].lanes.push_back(li);
    }
    std::vector<bool> ctaSelected(nc, false);
    for (std::size_t c = 0; c < nc; ++c)
        ctaSelected[c] = !sel.ctaIndex || static_cast<std::size_t>(*sel.ctaIndex) == c;
    if (sel.ctaIndex && (*sel.ctaIndex < 0 || static_cast<std::size_t>(*sel.ctaIndex) >= nc))
        std::fill(ctaSelected.begin(), ctaSelected.end(), false);

    std::vector<std::vector<std::size_t>> loadsOf(nc);
    for (std::size_t i = 0; i < t.loads.size(); ++i) {
        const auto ci = t.loads[i].ctaId;
        if (ci >= 0 && static_cast<std::size_t>(ci) < nc)
            loadsOf[static_cast<std::size_t>(ci)].push_back(i);
    }

    std::vector<std::pair<TimeNs, int>> loadEv, slotEv;
    for (std::size_t c = 0; c < nc; ++c) {
        if (!ctaSelected[c])
            continue;
        CtaCtx& cc = ctx[c];
        const Cta& cta = t.ctas[c];
        TimeNs ls = cta.start, le = cta.end;
        if (le <= ls) {  // no CTA span: extent of its lanes
            bool any = false;
            for (std::size_t li : cc.lanes) {
                const Lane& l = t.lanes[li];
                for (std::size_t i = 0; i < l.size(); ++i) {
                    ls = any ? std::min(ls, l.start[i]) : l.start[i];
                    le = any ? std::max(le, l.end(i)) : l.end(i);
                    any = true;
                }
            }
            if (!any)
                ls = le = a;
        }
        cc.live = {std::clamp(ls, a, b), std::clamp(le, a, b)};

        // Release time per k-step (slot occupancy)
        std::unordered_map<std::int32_t, TimeNs> rel, comp;
        if (!loadsOf[c].empty()) {
            for (std::size_t li : cc.lanes) {
                const Lane& l = t.lanes[li];
                for (std::size_t i = 0; i < l.size(); ++i) {
                    if (l.kstep[i] < 0)
                        continue;
                    if (l.kind[i] == IntervalKind::Release) {
                        auto& r = rel[l.kstep[i]];
                        r = std::max(r, l.end(i));
                    } else if (isComputeKind(l.kind[i])) {
                        auto& r = comp[l.kstep[i]];
                        r = std::max(r, l.end(i));
                    }
                }
            }
        }
        Spans inflight;
        inflight.reserve(loadsOf[c].size());
        for (std::size_t i : loadsOf[c]) {
            const LoadTransfer& ld = t.loads[i];
            TimeNs release = ld.ready;
            if (auto it = rel.find(ld.kstep); it != rel.end())
                release = std::max(release, it->second);
            else if (auto it2 = comp.find(ld.kstep); it2 != comp.end())
                release = std::max(release, it2->second);
            const TimeNs s = std::max(ld.issue, a);
            const TimeNs e = std::min(ld.ready, b);
            const TimeNs se = std::min(release, b);
            if (ld.issue < b && std::max(ld.ready, ld.issue + 1) > a)
                ++cc.loadCount;
            if (e > s) {
                inflight.push_back({s, e});
                cc.loadsIntegral += static_cast<double>(e - s);
                loadEv.push_back({s, +1});
                loadEv.push_back({e, -1});
            }
            if (se > s) {
                cc.slotsIntegral += static_cast<double>(se - s);
                slotEv.push_back({s, +1});
                slotEv.push_back({se, -1});
            }
        }
        cc.loadsInFlight = unionOf(std::move(inflight));
    }
    km.loadsInFlight = stepSeries(loadEv, km.maxLoadsInFlight);
    km.slotsOccupied = stepSeries(slotEv, km.maxSlotsOccupied);

    // Totals and per CTA (selected lanes), per warpgroup (lanes of that warpgroup).
    Partial total;
    std::map<int, Partial> perWg;
    std::vector<std::size_t> subset;
    for (std::size_t c = 0; c < nc; ++c) {
        if (!ctaSelected[c])
            continue;
        const CtaCtx& cc = ctx[c];
        subset.clear();
        std::map<int, std::vector<std::size_t>> wgLanes;
        for (std::size_t li : cc.lanes) {
            const Lane& l = t.lanes[li];
            if (sel.warpgroup && l.warpgroup != *sel.warpgroup)
                continue;
            subset.push_back(li);
            wgLanes[l.warpgroup].push_back(li);
        }
        const Partial p = ctaPartial(t, cc, subset, a, b);
        total.add(p);
        CtaMetrics cm;
        cm.ctaIndex = static_cast<int>(c);
        cm.blockLinear = t.ctas[c].blockLinear;
        cm.smId = t.ctas[c].smId;
        cm.m = p.finish();
        km.perCta.push_back(std::move(cm));
        for (const auto& [g, lanes] : wgLanes)
            perWg[g].add(ctaPartial(t, cc, lanes, a, b));
    }
    km.total = total.finish();
    for (const auto& [g, p] : perWg)
        km.perWarpgroup.push_back({g, p.finish()});
    return km;
}

std::vector<Metric> toMetrics(const KernelMetrics& km, RowId runId, RowId kernelId)
{
    std::vector<Metric> out;
    auto add = [&](const std::string& scope, const char* name, double v, const char* unit) {
        if (std::isnan(v))
            return;
        out.push_back({runId, kernelId, scope, name, v, unit});
    };
    auto group = [&](const std::string& scope, const GroupMetrics& g) {
        add(scope, "compute_lanes", static_cast<double>(g.computeLanes), "count");
        add(scope, "producer_lanes", static_cast<double>(g.producerLanes), "count");
        add(scope, "compute_lane_ns", g.computeLaneNs, "ns");
        add(scope, "producer_lane_ns", g.producerLaneNs, "ns");
        add(scope, "compute_ns", g.computeNs, "ns");
        add(scope, "compute_with_load_ns", g.computeWithLoadNs, "ns");
        add(scope, "compute_overlap_share", g.computeOverlapShare, "ratio");
        add(scope, "load_in_flight_ns", g.loadInFlightNs, "ns");
        add(scope, "load_hidden_ns", g.loadHiddenNs, "ns");
        add(scope, "load_hidden_share", g.loadHiddenShare, "ratio");
        add(scope, "exposed_load_wait_ns", g.exposedLoadWaitNs, "ns");
        add(scope, "exposed_load_wait_share", g.exposedLoadWaitShare, "ratio");
        add(scope, "back_pressure_ns", g.backPressureNs, "ns");
        add(scope, "back_pressure_share", g.backPressureShare, "ratio");
        add(scope, "consumer_busy_share", g.consumerBusyShare, "ratio");
        add(scope, "bubble_count", static_cast<double>(g.bubbleCount), "count");
        add(scope, "bubble_ns", g.bubbleNs, "ns");
        add(scope, "longest_bubble_ns", g.longestBubbleNs, "ns");
        add(scope, "bubble_share", g.bubbleShare, "ratio");
        add(scope, "ramp_ns", g.rampNs, "ns");
        add(scope, "mean_loads_in_flight", g.meanLoadsInFlight, "count");
        add(scope, "mean_slots_occupied", g.meanSlotsOccupied, "count");
        add(scope, "load_count", static_cast<double>(g.loadCount), "count");
    };
    group("kernel", km.total);
    add("kernel", "window_start_ns", static_cast<double>(km.windowStart), "ns");
    add("kernel", "window_end_ns", static_cast<double>(km.windowEnd), "ns");
    add("kernel", "max_loads_in_flight", static_cast<double>(km.maxLoadsInFlight), "count");
    add("kernel", "max_slots_occupied", static_cast<double>(km.maxSlotsOccupied), "count");
    add("kernel", "sms_used", km.smsUsed, "count");
    add("kernel", "tail_ns", km.tailNs, "ns");
    add("kernel", "tail_idle_sm_ns", km.tailIdleSmNs, "SM-ns");
    add("kernel", "tail_idle_share", km.tailIdleShare, "ratio");
    add("kernel", "kernel_ns", km.kernelNs, "ns");
    add("kernel", "achieved_tflops", km.achievedTflops, "TFLOP/s");
    add("kernel", "stall_samples", static_cast<double>(km.stallSamples), "count");
    for (const StallBucket& s : km.stallsByReason) {
        add("stall_reason:" + s.key, "samples", static_cast<double>(s.samples), "count");
        add("stall_reason:" + s.key, "share", s.share, "ratio");
    }
    for (const StallBucket& s : km.stallsByRoleStage) {
        add("stall_stage:" + s.key, "samples", static_cast<double>(s.samples), "count");
        add("stall_stage:" + s.key, "share", s.share, "ratio");
    }
    for (const CtaMetrics& c : km.perCta)
        group("cta:" + std::to_string(c.blockLinear), c.m);
    for (const WarpgroupMetrics& w : km.perWarpgroup)
        group("wg:" + std::to_string(w.warpgroup), w.m);
    return out;
}

std::vector<Metric> computeRunMetrics(const TraceStore& store, RowId runId)
{
    std::vector<Metric> out;
    for (const KernelLaunch& k : store.kernels(runId)) {
        if (!k.traced)
            continue;
        const KernelTrace t = store.loadKernel(k.id);
        auto m = toMetrics(analyze(t), runId, k.id);
        out.insert(out.end(), std::make_move_iterator(m.begin()), std::make_move_iterator(m.end()));
    }
    return out;
}

}  // namespace ws
