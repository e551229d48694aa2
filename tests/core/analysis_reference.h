// Brute-force reference of ws::analyze for the tests (header-only, test code only).
//
// Written from docs/metrics.md alone and deliberately naive: every interval, load and
// occupied slot is painted nanosecond by nanosecond onto boolean / counter arrays, and
// every metric is read off those arrays over the window. It shares no helper with
// core/src/analysis.cpp (no span lists, no clipping functions, no event sweep), so a
// clipping or union bug in the code cannot hide behind the same bug here. Meant for
// traces a few thousand ns long.
#pragma once

#include "warpstage/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace wsref {

using ws::TimeNs;

struct Group {
    double computeLanes = 0, producerLanes = 0, computeLaneNs = 0, producerLaneNs = 0, computeNs = 0,
           computeWithLoadNs = 0, loadInFlightNs = 0, loadHiddenNs = 0, exposedNs = 0, backPressureNs = 0,
           bubbleCount = 0, bubbleNs = 0, longestBubbleNs = 0, computeSpanNs = 0, rampNs = 0, loadsNs = 0,
           slotsNs = 0, liveCtaNs = 0, loadCount = 0;
    void add(const Group& o)
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
        bubbleCount += o.bubbleCount;
        bubbleNs += o.bubbleNs;
        longestBubbleNs = std::max(longestBubbleNs, o.longestBubbleNs);
        computeSpanNs += o.computeSpanNs;
        rampNs += o.rampNs;
        loadsNs += o.loadsNs;
        slotsNs += o.slotsNs;
        liveCtaNs += o.liveCtaNs;
        loadCount += o.loadCount;
    }
};

inline double ratio(double num, double den)
{
    return den > 0 ? num / den : std::numeric_limits<double>::quiet_NaN();
}

struct Result {
    TimeNs a = 0, b = 0;
    Group total;
    std::vector<Group> perCta;                 // selected CTAs, in trace order
    std::vector<int> perCtaIndex;
    std::map<int, Group> perWarpgroup;
    std::vector<int> loadsAt, slotsAt;         // per ns of [a, b), summed over selected CTAs
    double maxLoads = 0, maxSlots = 0;
    double smsUsed = 0, tailNs = 0, tailIdleSmNs = 0, tailIdleShare = 0;
};

inline bool isCompute(ws::IntervalKind k)
{
    return k == ws::IntervalKind::MmaIssue || k == ws::IntervalKind::MmaWait || k == ws::IntervalKind::Compute;
}

inline Result analyze(const ws::KernelTrace& t, const ws::Selection& sel)
{
    using ws::IntervalKind;
    using ws::WarpRole;
    Result r;
    // Window W = [a, b)
    bool any = false;
    TimeNs lo = 0, hi = 0;
    for (const ws::Lane& l : t.lanes)
        for (std::size_t i = 0; i < l.start.size(); ++i) {
            const TimeNs s = l.start[i], e = l.start[i] + l.duration[i];
            lo = any ? std::min(lo, s) : s;
            hi = any ? std::max(hi, e) : e;
            any = true;
        }
    TimeNs a = lo, b = hi;
    if (t.launch.end > t.launch.start) {
        a = any ? std::min(lo, t.launch.start) : t.launch.start;
        b = any ? std::max(hi, t.launch.end) : t.launch.end;
    }
    if (sel.t0 && *sel.t0 > a)
        a = *sel.t0;
    if (sel.t1 && *sel.t1 < b)
        b = *sel.t1;
    if (b < a)
        b = a;
    r.a = a;
    r.b = b;
    const std::size_t n = static_cast<std::size_t>(b - a);
    r.loadsAt.assign(n, 0);
    r.slotsAt.assign(n, 0);
    auto inW = [&](TimeNs x) { return x >= a && x < b; };

    // Tail (all CTAs)
    std::map<int, TimeNs> last;
    for (const ws::Cta& c : t.ctas) {
        if (c.smId < 0)
            continue;
        const TimeNs e = c.end < a ? a : (c.end > b ? b : c.end);
        if (!last.count(c.smId) || last[c.smId] < e)
            last[c.smId] = e;
    }
    r.smsUsed = static_cast<double>(last.size());
    if (!last.empty()) {
        TimeNs E = last.begin()->second, F = E;
        for (const auto& [sm, e] : last) {
            E = std::max(E, e);
            F = std::min(F, e);
        }
        r.tailNs = static_cast<double>(E - F);
        for (const auto& [sm, e] : last)
            r.tailIdleSmNs += static_cast<double>(E - e);
        // the device's SMs that ran no CTA: idle from a to E
        const double idle = t.run.device.smCount > r.smsUsed ? t.run.device.smCount - r.smsUsed : 0.0;
        r.tailIdleSmNs += idle * static_cast<double>(E - a);
        r.tailIdleShare = ratio(r.tailIdleSmNs, (r.smsUsed + idle) * static_cast<double>(E - a));
    } else {
        r.tailIdleShare = std::numeric_limits<double>::quiet_NaN();
    }

    const int nc = static_cast<int>(t.ctas.size());
    for (int c = 0; c < nc; ++c) {
        if (sel.ctaIndex && *sel.ctaIndex != c)
            continue;
        const ws::Cta& cta = t.ctas[static_cast<std::size_t>(c)];
        std::vector<std::size_t> lanesOfCta;
        for (std::size_t li = 0; li < t.lanes.size(); ++li)
            if (t.lanes[li].ctaIndex == c)
                lanesOfCta.push_back(li);
        // live span
        TimeNs ls = cta.start, le = cta.end;
        if (le <= ls) {
            bool anyI = false;
            for (std::size_t li : lanesOfCta) {
                const ws::Lane& l = t.lanes[li];
                for (std::size_t i = 0; i < l.start.size(); ++i) {
                    ls = anyI ? std::min(ls, l.start[i]) : l.start[i];
                    le = anyI ? std::max(le, l.start[i] + l.duration[i]) : l.start[i] + l.duration[i];
                    anyI = true;
                }
            }
            if (!anyI)
                ls = le = a;
        }
        std::vector<char> live(n, 0), inFlight(n, 0);
        double liveNs = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const TimeNs x = a + static_cast<TimeNs>(k);
            live[k] = x >= ls && x < le;
            liveNs += live[k];
        }
        // loads of the CTA: in flight [issue, ready), occupied [issue, max(ready, release))
        Group loadPart;
        for (const ws::LoadTransfer& ld : t.loads) {
            if (ld.ctaId != c)
                continue;
            TimeNs release = ld.ready;
            bool haveRelease = false;
            TimeNs relEnd = std::numeric_limits<TimeNs>::min(), compEnd = std::numeric_limits<TimeNs>::min();
            bool haveComp = false;
            for (std::size_t li : lanesOfCta) {
                const ws::Lane& l = t.lanes[li];
                for (std::size_t i = 0; i < l.start.size(); ++i) {
                    if (l.kstep[i] != ld.kstep || ld.kstep < 0)
                        continue;
                    if (l.kind[i] == IntervalKind::Release) {
                        haveRelease = true;
                        relEnd = std::max(relEnd, l.start[i] + l.duration[i]);
                    } else if (isCompute(l.kind[i])) {
                        haveComp = true;
                        compEnd = std::max(compEnd, l.start[i] + l.duration[i]);
                    }
                }
            }
            if (haveRelease)
                release = relEnd;
            else if (haveComp)
                release = compEnd;
            const TimeNs occEnd = std::max(ld.ready, release);
            for (TimeNs x = ld.issue; x < ld.ready; ++x)
                if (inW(x)) {
                    inFlight[static_cast<std::size_t>(x - a)] = 1;
                    ++r.loadsAt[static_cast<std::size_t>(x - a)];
                    loadPart.loadsNs += 1;
                }
            for (TimeNs x = ld.issue; x < occEnd; ++x)
                if (inW(x)) {
                    ++r.slotsAt[static_cast<std::size_t>(x - a)];
                    loadPart.slotsNs += 1;
                }
            // [issue, max(ready, issue + 1)) meets W
            if (ld.issue < b && std::max(ld.ready, ld.issue + 1) > a)
                loadPart.loadCount += 1;
        }
        double inFlightNs = 0;
        for (char f : inFlight)
            inFlightNs += f;

        // One lane subset of the CTA -> its group metrics.
        auto groupOf = [&](const std::vector<std::size_t>& lanes) {
            Group g = loadPart;
            g.liveCtaNs = liveNs;
            g.loadInFlightNs = inFlightNs;
            std::vector<char> anyCompute(n, 0);
            for (std::size_t li : lanes) {
                const ws::Lane& l = t.lanes[li];
                const bool computeLane = l.role == WarpRole::Consumer || l.role == WarpRole::Worker;
                const bool producer = l.role == WarpRole::Producer;
                if (!computeLane && !producer)
                    continue;
                std::vector<char> comp(n, 0), wait(n, 0), slotWait(n, 0);
                for (std::size_t i = 0; i < l.start.size(); ++i) {
                    const IntervalKind k = l.kind[i];
                    for (TimeNs x = l.start[i]; x < l.start[i] + l.duration[i]; ++x) {
                        if (!inW(x))
                            continue;
                        const auto q = static_cast<std::size_t>(x - a);
                        if (isCompute(k))
                            comp[q] = 1;
                        if (k == IntervalKind::WaitData || (l.role == WarpRole::Worker && k == IntervalKind::Load))
                            wait[q] = 1;
                        if (k == IntervalKind::WaitSlot)
                            slotWait[q] = 1;
                    }
                }
                if (computeLane) {
                    g.computeLanes += 1;
                    g.computeLaneNs += liveNs;
                    for (std::size_t q = 0; q < n; ++q) {
                        g.computeNs += comp[q];
                        g.computeWithLoadNs += comp[q] && inFlight[q];
                        g.exposedNs += wait[q];
                        if (comp[q])
                            anyCompute[q] = 1;
                    }
                } else {
                    g.producerLanes += 1;
                    g.producerLaneNs += liveNs;
                    for (std::size_t q = 0; q < n; ++q)
                        g.backPressureNs += slotWait[q];
                }
            }
            for (std::size_t q = 0; q < n; ++q)
                g.loadHiddenNs += inFlight[q] && anyCompute[q];
            // compute span and bubbles
            std::ptrdiff_t first = -1, lastQ = -1;
            for (std::size_t q = 0; q < n; ++q)
                if (anyCompute[q]) {
                    if (first < 0)
                        first = static_cast<std::ptrdiff_t>(q);
                    lastQ = static_cast<std::ptrdiff_t>(q);
                }
            if (first >= 0) {
                g.computeSpanNs = static_cast<double>(lastQ - first + 1);
                double run = 0;
                for (std::ptrdiff_t q = first; q <= lastQ; ++q) {
                    if (!anyCompute[static_cast<std::size_t>(q)]) {
                        run += 1;
                        continue;
                    }
                    if (run > 0) {
                        g.bubbleCount += 1;
                        g.bubbleNs += run;
                        g.longestBubbleNs = std::max(g.longestBubbleNs, run);
                    }
                    run = 0;
                }
            }
            g.rampNs = std::max(0.0, liveNs - g.computeSpanNs);
            return g;
        };

        std::vector<std::size_t> selected;
        std::map<int, std::vector<std::size_t>> byWg;
        for (std::size_t li : lanesOfCta) {
            if (sel.warpgroup && t.lanes[li].warpgroup != *sel.warpgroup)
                continue;
            selected.push_back(li);
            byWg[t.lanes[li].warpgroup].push_back(li);
        }
        const Group g = groupOf(selected);
        r.total.add(g);
        r.perCta.push_back(g);
        r.perCtaIndex.push_back(c);
        for (const auto& [wg, lanes] : byWg)
            r.perWarpgroup[wg].add(groupOf(lanes));
    }
    for (int v : r.loadsAt)
        r.maxLoads = std::max(r.maxLoads, double(v));
    for (int v : r.slotsAt)
        r.maxSlots = std::max(r.maxSlots, double(v));
    return r;
}

}  // namespace wsref
