// Host side of the ping-pong body's k-step observers (session 15, stream-K; pingpong_body.cuh's Observe,
// trace_format.h's kEventObsStamp): rebuilds the consumer warps' k-step events of one CTA from the observers' stamps.
// Plain C++ (no CUDA, no Qt), for every reader of raw records (the decoder, the tests' checkTrace, gpu_ladder_trace's
// signature), after forEachEvent has expanded each region's packed records.
//
// What a consumer warp of warpgroup g recorded itself, per unit of fills f0..fe: TileBegin, [WaitOrder], WaitData(f0),
// [WaitOrder(f) where warpgroup 0 lets warpgroup 1 start], MmaWait(fe) and Release(fe) (the drain), the hook's phases,
// Store, TileEnd. What the observer of g stamped, per fill f: D(f) its data arrived, I(f) the warpgroup's last warp
// arrived after its wgmma issue of f, R(f) it released f's slot. The body's k-loop runs, for each fill f of the unit:
// wait for data (WaitData f), issue (MmaIssue f), [WaitOrder], then for f > f0: wait for f - 1's wgmmas (MmaWait f - 1)
// and release it (Release f - 1). So the rebuilt events, for f = f0..fe, are:
//   MmaIssue(f)       at D(f), or at WaitData(f)'s start when that is later or when the data was there before the
//                     observer looked (its stamp is then only a bound: the warp did not wait);
//   MmaWait(f - 1)    at I(f)    (f > f0);
//   Release(f - 1)    at R(f - 1) (f > f0; the release's arrivals are the phase, so it lasts until the next event);
//   WaitData(f + 1)   at I(f0) for f = f0, else at R(f - 1) (f < fe);
// each clamped between the warp's previous event and its drain's MmaWait(fe). The four warps of a warpgroup get the same
// k-step times (the observer sees a warpgroup's last arrival); their own per-unit events stay theirs. The kinds, k-steps
// and slots are the consumer's own recording's (sessions 11-14), event for event; the stamps leave the observer's region.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "warpstage/trace_format.h"

namespace ws::trace {

struct ObservedMerge {
    std::uint32_t stamps = 0;         // kEventObsStamp records taken out of the observers' regions
    std::uint32_t rebuiltKSteps = 0;  // consumer k-steps (per warp) rebuilt from them
    std::uint32_t missingKSteps = 0;  // k-steps of units left as recorded (a stamp missing: an observer's overflow)
};

// regions[w]: warp w's events in order (forEachEvent's); role[w], roleIndex[w]: its WarpRegionHeader's fields (the
// consumer warps of warpgroup g are role 2 with roleIndex g). Changes regions in place; a CTA without stamps is left as
// it was.
inline ObservedMerge mergeObserved(std::vector<std::vector<TraceEvent>>& regions, const std::vector<std::uint8_t>& role,
                                   const std::vector<std::uint8_t>& roleIndex)
{
    constexpr std::uint8_t kWaitData = 4, kMmaIssue = 5, kMmaWait = 6, kRelease = 7, kConsumer = 2;
    struct Fill {
        std::uint64_t t[3] = {0, 0, 0};
        bool have[3] = {false, false, false};
        bool already[3] = {false, false, false};
    };
    std::map<std::int32_t, Fill> obs[2];
    std::uint32_t stages = 0;
    ObservedMerge res;
    for (auto& r : regions) {
        std::vector<TraceEvent> kept;
        std::uint64_t prev = 0;  // the region's previous event's clock (a pair record's: its Issued)
        for (const TraceEvent& e : r) {
            if (e.kind != kEventObsStamp) {
                kept.push_back(e);
                prev = e.clock;
                continue;
            }
            ++res.stamps;
            const unsigned what = (e.slot >> 4) & 3u;
            const bool already = (e.slot & 0x40u) != 0;
            stages = e.slot & 0xFu;
            auto put = [&](int g, unsigned w, std::uint64_t t) {
                Fill& f = obs[g][e.kstep];
                f.t[w] = t;
                f.have[w] = true;
                f.already[w] = already;
            };
            if (what == kObsIssuedReleased) {
                const std::uint32_t lo = std::uint32_t(e.clock);
                const std::uint64_t ti = prev + std::uint32_t(lo - std::uint32_t(prev));
                if (e.aux >= 0 && e.aux < 2) {
                    put(e.aux, kObsIssued, ti);
                    put(e.aux, kObsReleased, ti + (e.clock >> 32));
                }
                prev = ti;
                continue;
            }
            for (int g = 0; g < 2; ++g)  // aux 2: both warpgroups' (the fill's data)
                if (e.aux == g || e.aux == 2) put(g, what, e.clock);
            prev = e.clock;
        }
        r.swap(kept);
    }
    if (res.stamps == 0) return res;
    auto slotOf = [stages](std::int32_t k) {
        return stages == 0 || k < 0 ? std::uint8_t(0xFF) : std::uint8_t(std::uint32_t(k) % stages);
    };
    for (std::size_t w = 0; w < regions.size(); ++w) {
        if (w >= role.size() || role[w] != kConsumer || roleIndex[w] >= 2) continue;  // (no stamps of its warpgroup:
                                                                                      //  every unit counts as missing)
        const auto& ob = obs[roleIndex[w]];
        auto at = [&ob](std::int32_t f) -> const Fill* {
            auto it = ob.find(f);
            return it == ob.end() ? nullptr : &it->second;
        };
        const std::vector<TraceEvent>& own = regions[w];
        std::vector<TraceEvent> out;
        out.reserve(own.size() * 4);
        for (std::size_t i = 0; i < own.size(); ++i) {
            const TraceEvent& e = own[i];
            std::size_t j = i + 1;  // the unit's drain: its MmaWait
            if (e.kind == kWaitData)
                while (j < own.size() && own[j].kind != kMmaWait) ++j;
            bool whole = e.kind == kWaitData && j < own.size() && own[j].kstep >= e.kstep;
            const std::int32_t f0 = e.kstep, fe = whole ? own[j].kstep : f0;
            for (std::int32_t f = f0; whole && f <= fe; ++f) {
                const Fill* F = at(f);
                const Fill* P = f > f0 ? at(f - 1) : nullptr;
                whole = F && F->have[kObsData] && F->have[kObsIssued] && (f == f0 || (P && P->have[kObsReleased]));
            }
            out.push_back(e);
            if (!whole) {
                if (e.kind == kWaitData && j < own.size()) res.missingKSteps += std::uint32_t(own[j].kstep - f0 + 1);
                continue;
            }
            const std::uint64_t hi = own[j].clock;
            std::uint64_t last = e.clock;
            auto push = [&](std::uint64_t c, std::int32_t k, std::uint8_t kind) {
                c = std::min(std::max(c, last), std::max(hi, last));
                out.push_back(TraceEvent{c, k, 0, slotOf(k), kind});
                last = c;
            };
            std::size_t o = i + 1;  // the warp's own events inside the unit (WaitOrder)
            std::uint64_t wd = e.clock;
            for (std::int32_t f = f0; f <= fe; ++f) {
                const Fill& F = *at(f);
                push(F.already[kObsData] ? wd : std::max(wd, F.t[kObsData]), f, kMmaIssue);
                while (o < j && own[o].kstep <= f) {
                    out.push_back(own[o]);
                    last = std::max(last, own[o].clock);
                    ++o;
                }
                if (f > f0) {
                    const Fill& P = *at(f - 1);
                    push(F.t[kObsIssued], f - 1, kMmaWait);
                    push(P.t[kObsReleased], f - 1, kRelease);
                }
                if (f < fe) {
                    push(f == f0 ? F.t[kObsIssued] : at(f - 1)->t[kObsReleased], f + 1, kWaitData);
                    wd = last;
                }
                ++res.rebuiltKSteps;
            }
            while (o < j) out.push_back(own[o++]);
            i = j - 1;  // on with the drain's MmaWait
        }
        regions[w].swap(out);
    }
    return res;
}

}  // namespace ws::trace
